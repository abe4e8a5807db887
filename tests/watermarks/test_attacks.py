"""The scrubbing attacks (issue #37): what each changes, at its rate, with exact edits."""
import re

import numpy as np
import pytest

from humanize import attacks, detectors
from humanize.attacks import apply_edits
from humanize.generation import Generation, Generator, LocalChat, Request, WatermarkedChat, chat
from humanize.watermarks import KGW, Unigram

TEXT = ("The river rose quickly after the storm, and the villagers carried their furniture up the hill "
        "while the children watched the brown water cover the fields.")


def test_copy_paste_dilution_embeds_the_text_at_its_machine_share():
    human = ["one two three four five six seven eight nine ten eleven twelve"] * 2
    for rate, segments in ((0.5, 1), (0.25, 3), (0.1, 2)):
        r = attacks.get("copy_paste", rate=rate, segments=segments, human_texts=human, seed=1).apply(TEXT)
        assert apply_edits(TEXT, r.edits) == r.text and all(e.start == e.end for e in r.edits)
        n, total = len(TEXT.split()), len(r.text.split())
        assert n / total == pytest.approx(rate, abs=0.02)
        assert [w for w in r.text.split() if w in TEXT.split()] == TEXT.split()  # the machine words, in order
    assert attacks.get("copy_paste", rate=1.0).apply(TEXT).text == TEXT


def test_copy_paste_lowers_the_kgw_z_score(wm_models):
    scheme = KGW(key="cp", delta=4.0)
    text = WatermarkedChat(wm_models["flat"], watermark=scheme, temperature=1.0,
                           max_new_tokens=200).generate([Request(chat("hi"), seed=3)])[0].text
    det = detectors.KGWDetector.for_watermark(scheme, tokenizer=wm_models["tokenizer"])
    diluted = attacks.get("copy_paste", rate=0.25, seed=0).apply(text).text
    z, z_diluted = det.score([text, diluted])
    assert z > 3 and z_diluted < 0.75 * z  # about z * sqrt(theta) when the human text is as long in tokens


class EmojiEcho(Generator):
    """A stand-in chat model that does what the emoji prompt asks: the chunk, an emoji after every word."""

    name = "emoji_echo"

    def __init__(self, emoji: str = "😀"):
        self._init_params(locals())

    def generate(self, requests):
        out = []
        for r in requests:
            chunk = r.messages[-1][1].split("\n\n", 1)[1]
            out.append(Generation(" ".join(f"{w} {self.emoji}" for w in chunk.upper().split()), 5, 9))
        return out


def test_emoji_attack_rewrites_the_chosen_sentences_and_deletes_the_emojis():
    text = "First sentence here. Second one there. Third is last."
    r = attacks.get("emoji_attack", generator=EmojiEcho(), rate=1.0).apply(text)
    assert r.text == "FIRST SENTENCE HERE. SECOND ONE THERE. THIRD IS LAST." and "😀" not in r.text
    assert apply_edits(text, r.edits) == r.text and r.info["rewritten_sentences"] == 3
    part = attacks.get("emoji_attack", generator=EmojiEcho(), rate=0.34, seed=2).apply(text)
    assert part.info["rewritten_sentences"] == 1 and sum(s.isupper() for s in part.text.split(". ")) == 1


def test_emoji_attack_runs_the_watermarked_generator(wm_models):
    gen = WatermarkedChat(wm_models["peaked"], watermark=KGW(key="e"), max_new_tokens=6)
    r = attacks.get("emoji_attack", generator=gen, seed=1).apply(TEXT)
    assert apply_edits(TEXT, r.edits) == r.text and r.info["llm_queries"] == 1 and "😀" not in r.text


def test_self_information_rewrite_masks_the_most_surprising_words_and_random_the_same_number(wm_models):
    from humanize.models import load_causal_lm, token_logprobs
    from humanize.text import word_spans

    kw = dict(scorer=wm_models["peaked"], refill=wm_models["flat"], rate=0.3, top_k=50)
    sira = attacks.get("self_info_rewrite", **kw, seed=0)
    words = [(s, e) for s, e in word_spans(TEXT) if TEXT[s:e].isalpha()]
    k = round(0.3 * len(words))
    offsets, lps = token_logprobs(load_causal_lm(wm_models["peaked"]), TEXT)
    si = [np.nansum(-lps[(offsets[:, 0] < e) & (offsets[:, 1] > s)]) for s, e in words]
    want = sorted(np.argsort(-np.array(si), kind="stable")[:k].tolist())
    assert sira._masked(TEXT, words, np.random.default_rng(0)) == want
    r = sira.apply(TEXT)
    assert r.info["masked"] == k and 0 < r.info["refilled"] <= k and apply_edits(TEXT, r.edits) == r.text
    assert all(re.fullmatch(r"[^\W\d_]+", e.replacement) for e in r.edits)
    rand = attacks.get("self_info_rewrite", **kw, select="random", seed=0).apply(TEXT)
    assert rand.info["masked"] == k and {e.start for e in rand.edits} != {e.start for e in r.edits}


def test_watermark_stealing_finds_the_green_list_from_watermarked_text_alone(wm_models):
    scheme = Unigram(key="steal-me", delta=4.0)
    gen = WatermarkedChat(wm_models["flat"], watermark=scheme, temperature=1.0, max_new_tokens=80)
    marked = [g.text for g in gen.generate([Request(chat(f"topic {i}"), seed=i) for i in range(8)])]
    plain = [g.text for g in LocalChat(wm_models["flat"], temperature=1.0, max_new_tokens=80).generate(
        [Request(chat(f"other {i}"), seed=100 + i) for i in range(8)])]
    thief = attacks.get("watermark_stealing", watermarked=marked, base=plain, tokenizer=wm_models["tokenizer"],
                        context="none")
    mask = scheme.logits_processor(300).mask
    seen = sorted(set(t for ids in detectors.UnigramDetector(tokenizer=wm_models["tokenizer"]).token_ids(marked)
                      for t in ids))
    likely = [t for t in seen if thief.green_score(None, t) > 1]
    assert len(likely) > 20 and mask[likely].mean() > 0.8 > 0.5 == scheme.gamma  # well above chance


def test_watermark_stealing_swaps_likely_green_words_for_likely_red_synonyms(wm_models):
    marked = ["The big dog ran quickly to the big house."] * 10
    base = ["The large dog ran fast to the large house."] * 10
    thief = attacks.get("watermark_stealing", watermarked=marked, base=base, tokenizer=wm_models["tokenizer"],
                        context="none", rate=1.0)
    from humanize.models import load_wordnet

    r = thief.apply("A big storm hit the town.")
    assert apply_edits("A big storm hit the town.", r.edits) == r.text and len(r.edits) == 1
    new = r.edits[0].replacement
    assert new in {l.name() for syn in load_wordnet().synsets("big") for l in syn.lemmas()}
    tok = thief._tok()
    assert r.info["likely_green"] >= 1 and thief.green_score(None, tok(" " + new)["input_ids"][0]) < 1
    assert attacks.get("watermark_stealing").apply(TEXT).text == TEXT  # nothing learned, nothing swapped
