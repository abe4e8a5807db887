"""DIPPER back end (tiny random T5: plumbing only), Paraphrase and Recursion (SmolLM2 and the tiny T5)."""
import math

import pytest

from humanize.attacks import apply_edits
from humanize.attacks.generation.paraphrase import MAX_CHUNK_CHARS, Paraphrase, Recursion, clean_answer
from humanize.generation import Request
from humanize.generation.dipper import Dipper, dipper_prompt, window_seed
from humanize.generation.local import LocalChat
from humanize.models import ModelUnavailable
from humanize.text import sentence_spans

SEVEN = ("The committee met on Tuesday. Several members raised concerns. The chair promised a report. "
         "Rain is expected later.  Temperatures will drop.\n\nShe walked to the market. She returned home.")
TWO = "Researchers found that the model improves accuracy. However, the results need more study."
NON_LATIN = "Le comité s'est réuni mardi 😀. 委员会周二开会。 Комитет собрался во вторник."


def _sentences(text):
    return [" ".join(text[a:b].split()) for a, b in sentence_spans(text)]


class RecordingDipper(Dipper):
    """The real Dipper, recording the prompts of each generate() call."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = []

    def generate(self, requests):
        out = super().generate(requests)
        self.calls.append([(r.messages, r.seed, g) for r, g in zip(requests, out)])
        return out


class RecordingChat(LocalChat):
    """The real LocalChat on SmolLM2, recording each generate() call's requests and answers."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls, self.answers = [], []

    def generate(self, requests):
        self.calls.append(list(requests))
        out = super().generate(requests)
        self.answers.append(out)
        return out


class EmptyEveryOther(LocalChat):
    """The real LocalChat, whose even-numbered answers are then blanked (an empty answer from the model)."""

    def generate(self, requests):
        out = super().generate(requests)
        return [g._replace(text="") if i % 2 == 0 else g for i, g in enumerate(out)]


# -- DIPPER -------------------------------------------------------------------------------
def test_dipper_prompts_windows_and_context(tiny_t5_dir):
    d = RecordingDipper(model=tiny_t5_dir, tokenizer=None, max_new_tokens=5, device="cpu")
    assert d.codes == (40, 100)
    (text, gens), (text2, gens2) = d.paraphrase_documents([SEVEN, TWO], [11, 12])
    sents = _sentences(SEVEN)
    assert len(sents) == 7
    # window i of both documents in one call, then window i + 1: the second document has one window
    assert [len(c) for c in d.calls] == [2, 1, 1]
    # windows of 3 sentences that never span a line break: [0, 1, 2], [3, 4] | [5, 6]
    windows = [" ".join(sents[:3]), " ".join(sents[3:5]), " ".join(sents[5:])]
    prompts = [c[0][0] for c in d.calls]
    outs = [" ".join(c[0][2].text.split()) or windows[i] for i, c in enumerate(d.calls)]
    assert prompts[0] == f"lexical = 40, order = 100 <sent> {windows[0]} </sent>"
    assert prompts[1] == f"lexical = 40, order = 100 {outs[0]} <sent> {windows[1]} </sent>"
    assert prompts[2] == f"lexical = 40, order = 100 {outs[0]} {outs[1]} <sent> {windows[2]} </sent>"
    assert d.calls[0][1][0] == f"lexical = 40, order = 100 <sent> {' '.join(_sentences(TWO))} </sent>"
    # what reaches the model: the prompt's own tokens; seeds per window from the document's seed
    tok = d.loaded().tokenizer
    for call in d.calls:
        for prompt, seed, g in call:
            assert g.tokens_in == len(tok(prompt)["input_ids"])
            assert 0 <= g.tokens_out <= 5
    assert [c[0][1] for c in d.calls] == [window_seed(11, i) for i in range(3)]
    assert len(gens) == 3 and len(gens2) == 1
    # the outputs joined by the original whitespace between the windows
    assert text == outs[0] + " " + outs[1] + "\n\n" + outs[2]


def test_dipper_codes_and_bad_diversity(tiny_t5_dir):
    d = Dipper(model=tiny_t5_dir, tokenizer=None, lex_diversity=20, order_diversity=40)
    assert d.codes == (80, 60)
    assert dipper_prompt(80, 60, "A b.", "Ctx.") == "lexical = 80, order = 60 Ctx. <sent> A b. </sent>"
    with pytest.raises(ValueError, match="lex_diversity.*multiple of 20"):
        Dipper(lex_diversity=50)
    with pytest.raises(ValueError, match="order_diversity"):
        Dipper(order_diversity=120)
    with pytest.raises(TypeError, match="lex_diversity"):
        Dipper(lex_diversity=60.0)
    with pytest.raises(ValueError, match="sent_interval"):
        Dipper(sent_interval=0)
    with pytest.raises(ValueError, match="top_p"):
        Dipper(top_p=0)
    with pytest.raises(TypeError, match="model"):
        Dipper(model=3)
    with pytest.raises(ValueError, match="lex_diversity"):
        d.set_params(lex_diversity=30)
    assert d.lex_diversity == 20  # restored


def test_dipper_seeded_output_independent_of_batch(tiny_t5_dir, tiny_dipper):
    reqs = [Request(dipper_prompt(40, 100, s), seed=i) for i, s in enumerate(_sentences(SEVEN))]
    one = Dipper(model=tiny_t5_dir, tokenizer=None, max_new_tokens=6, batch_size=1)
    batched = tiny_dipper.generate(reqs)
    assert one.generate(reqs) == batched
    assert tiny_dipper.generate(reqs[::-1]) == batched[::-1]
    assert len({g.text for g in batched}) > 1
    docs = [SEVEN, TWO, NON_LATIN]
    together = tiny_dipper.paraphrase_documents(docs, [1, 2, 3])
    alone = [one.paraphrase_documents([t], [s])[0] for t, s in zip(docs, [1, 2, 3])]
    assert [t for t, _ in together] == [t for t, _ in alone]
    # another seed gives another sample
    assert tiny_dipper.paraphrase_documents([SEVEN], [99])[0][0] != together[0][0]


def test_dipper_prompts_fit_the_input(tiny_dipper):
    lm = tiny_dipper.loaded()
    count = lambda s: len(lm.tokenizer(s)["input_ids"])  # noqa: E731
    window = "The committee met on Tuesday."
    long_context = " ".join(["Several members raised concerns."] * 400)
    prompt = tiny_dipper._prompt(lm, window, long_context)
    assert count(prompt) <= 512 and prompt.endswith(f"<sent> {window} </sent>")
    assert "concerns." in prompt  # the context is cut from the left, not dropped
    # one overlong sentence is cut into windows that each fit, and nothing is lost
    huge = " ".join(["members raised concerns"] * 300) + "."
    spans = tiny_dipper.windows(huge)
    assert len(spans) > 1
    assert all(count(dipper_prompt(40, 100, huge[a:b])) <= 512 for a, b in spans)
    assert " ".join(huge[a:b] for a, b in spans) == huge


def test_dipper_unavailable_model_says_hub_and_gpu(tmp_path):
    d = Dipper(model=str(tmp_path / "no-such-model"))
    with pytest.raises(ModelUnavailable, match="(?s)hub.*GPU"):
        d.generate([Request("lexical = 40, order = 100 <sent> A. </sent>")])
    with pytest.raises(TypeError, match="plain prompt"):
        d.generate([Request((("user", "hi"),))])


def test_paraphrase_with_dipper(tiny_dipper):
    attack = Paraphrase(tiny_dipper, seed=3)
    docs = [SEVEN, "", " \n ", NON_LATIN, TWO]
    results = attack.batch(docs)
    for r in results:
        assert apply_edits(r.original, r.edits) == r.text
    assert results[1].text == "" and results[2].text == " \n "
    assert results[1].info == {"skipped": "blank", "unchanged": "blank document"}
    assert results[0].info["chunks"] == 3 and results[0].info["llm_queries"] == 3
    assert results[0].info["llm_tokens_in"] > 0 and "kept_chunks" in results[0].info
    assert results[0].text != SEVEN
    assert [attack.apply(d).text for d in docs] == [r.text for r in results]


# -- Paraphrase with a chat model -----------------------------------------------------------
def test_clean_answer_strips_chat_noise_only():
    assert clean_answer("Here is the paraphrased text:\n\nThe cat sat.") == "The cat sat."
    assert clean_answer("Sure! Here's a rewrite: The cat sat.") == "The cat sat."
    assert clean_answer("Paraphrased text: The cat sat.") == "The cat sat."
    assert clean_answer('"The cat sat."', "The cat sat down.") == "The cat sat."
    assert clean_answer("“The cat sat.”") == "The cat sat."
    assert clean_answer('"The cat sat."', '"A cat sat," she said.') == '"The cat sat."'
    assert clean_answer('"Hi," he said, "bye."') == '"Hi," he said, "bye."'
    assert clean_answer("Here is a cat that sat.") == "Here is a cat that sat."
    assert clean_answer("Here is the text:") == "Here is the text:"
    assert clean_answer("  \n ") == ""


def test_paraphrase_chat_batch_edits_seeds_and_info(smollm):
    gen = RecordingChat(model=smollm, max_new_tokens=8)
    attack = Paraphrase(gen, seed=5, chunk_sentences=3)
    docs = [SEVEN, "", TWO, NON_LATIN, "   "]
    results = attack.batch(docs)
    assert len(gen.calls) == 1  # every document's chunks in one generate() call
    reqs = gen.calls[0]
    n_chunks = [3, 1, math.ceil(len(sentence_spans(NON_LATIN)) / 3)]
    assert len(reqs) == sum(n_chunks)
    assert len({r.seed for r in reqs}) == len(reqs)
    first = reqs[0].messages[-1][1]
    assert first.startswith(attack.instruction) and first.endswith(SEVEN[:SEVEN.index("Rain") - 1])
    for r in results:
        assert apply_edits(r.original, r.edits) == r.text
    assert results[1].text == "" and results[4].text == "   "
    assert [r.info.get("chunks") for r in results] == [n_chunks[0], None, n_chunks[1], n_chunks[2], None]
    assert results[0].info["llm_queries"] == n_chunks[0] and results[0].info["llm_tokens_out"] > 0
    assert results[0].text != SEVEN and results[3].text.strip()
    # the same seed gives the same output whatever the batch: reversed, and one by one
    again = Paraphrase(gen, seed=5).batch(docs[::-1])
    assert [r.text for r in again] == [r.text for r in results][::-1]
    assert Paraphrase(gen, seed=5).apply(TWO).text == results[2].text


def test_paraphrase_huge_document_is_chunked(smollm):
    gen = RecordingChat(model=smollm, max_new_tokens=2)
    doc = " ".join(f"It rained on day {i}." for i in range(10))
    doc += " " + " ".join(["word"] * 820)  # one overlong sentence without punctuation
    r = Paraphrase(gen, chunk_sentences=3).apply(doc)
    reqs = gen.calls[-1]
    instruction = Paraphrase().instruction
    chunks = [q.messages[-1][1][len(instruction) + 2:] for q in reqs]
    assert all(len(c) <= MAX_CHUNK_CHARS for c in chunks)
    assert all(len(sentence_spans(c)) <= 3 for c in chunks)
    assert len(chunks) >= math.ceil(10 / 3) + 2  # the 4,100-character sentence alone needs 3 pieces
    assert " ".join(chunks).split() == doc.split()  # nothing lost or repeated
    assert apply_edits(doc, r.edits) == r.text
    assert r.info["truncated_chunks"] == sum(g.finish_reason == "length" for g in gen.answers[-1]) > 0


def test_empty_answer_keeps_the_original_chunk(smollm):
    attack = Paraphrase(EmptyEveryOther(model=smollm, max_new_tokens=6), seed=1)
    r = attack.apply(SEVEN)
    assert r.info["chunks"] == 3 and r.info["kept_chunks"] == 2
    assert r.text.startswith("The committee met on Tuesday. Several members raised concerns. "
                             "The chair promised a report. ")  # chunk 0 kept as it was
    assert r.text.endswith("\n\nShe walked to the market. She returned home.")  # chunk 2 kept
    assert "Rain is expected later." not in r.text  # chunk 1 paraphrased
    assert apply_edits(SEVEN, r.edits) == r.text


def test_bad_params_raise_clear_errors():
    with pytest.raises(TypeError, match="paraphraser"):
        Paraphrase(paraphraser=3)
    with pytest.raises(ValueError, match="chunk_sentences"):
        Paraphrase(chunk_sentences=0)
    with pytest.raises(TypeError, match="chunk_sentences"):
        Paraphrase(chunk_sentences=2.0)
    with pytest.raises(ValueError, match="instruction"):
        Paraphrase(instruction="  ")
    with pytest.raises(TypeError, match="seed"):
        Paraphrase(seed="1")
    with pytest.raises(ValueError, match="depth"):
        Recursion(depth=0)
    with pytest.raises(TypeError, match="depth"):
        Recursion(depth=2.0)
    with pytest.raises(TypeError, match="paraphraser"):
        Recursion(paraphraser=3)
    p = Paraphrase()
    with pytest.raises(ValueError, match="chunk_sentences"):
        p.set_params(chunk_sentences=-1)
    assert p.chunk_sentences == 3
    # names resolve to back ends without loading anything
    assert isinstance(Paraphrase("dipper").generator(), Dipper)
    assert isinstance(Recursion().paraphrase_attack().generator(), Dipper)
    assert Recursion().depth == 5


# -- Recursion --------------------------------------------------------------------------------
class RecordingParaphrase(Paraphrase):
    """A real Paraphrase that records what each rewrite() call received."""

    def __init__(self, paraphraser="smollm2-135m-instruct", seed=0, chunk_sentences=3, instruction=None):
        super().__init__(paraphraser, seed, chunk_sentences, instruction or Paraphrase().instruction)
        self.calls = []

    def rewrite(self, texts, step=0):
        out = super().rewrite(texts, step=step)
        self.calls.append((list(texts), step, [t for t, _ in out]))
        return out


def test_recursion_paraphrases_the_previous_output_depth_times(tiny_dipper):
    para = RecordingParaphrase(tiny_dipper, seed=2)
    attack = Recursion(para, depth=3)
    docs = [SEVEN, "", TWO]
    results = attack.batch(docs)
    assert [c[1] for c in para.calls] == [0, 1, 2]
    assert para.calls[0][0] == [SEVEN, TWO]
    for (_, _, out), (inputs, _, _) in zip(para.calls, para.calls[1:]):
        assert inputs == out  # each step takes the previous step's output
    assert [r.text for r in results] == [para.calls[-1][2][0], "", para.calls[-1][2][1]]
    for r in results:
        assert apply_edits(r.original, r.edits) == r.text
    info = results[0].info
    assert len(info["steps"]) == 3 and info["steps"][-1]["chars"] == len(results[0].text)
    assert info["llm_queries"] == sum(s["llm_queries"] for s in info["steps"]) >= 3
    # same seed, same output, whatever the batch
    assert Recursion(Paraphrase(tiny_dipper, seed=2), depth=3).apply(TWO).text == results[2].text


def test_recursion_with_chat_uses_new_seeds_each_step(smollm):
    gen = RecordingChat(model=smollm, max_new_tokens=8)
    attack = Recursion(gen, depth=2, seed=4)
    r = attack.apply(TWO)
    assert len(gen.calls) == 2
    seeds = [[q.seed for q in call] for call in gen.calls]
    assert not set(seeds[0]) & set(seeds[1])
    # step 2 paraphrases step 1's output
    step1 = Paraphrase(gen, seed=4).rewrite([TWO])[0][0]
    assert gen.calls[1][0].messages[-1][1].endswith(_chunk_of(step1))
    assert apply_edits(TWO, r.edits) == r.text
    assert len(r.info["steps"]) == 2


def _chunk_of(text):
    spans = sentence_spans(text)
    return text[spans[0][0]:spans[min(2, len(spans) - 1)][1]]


def test_fingerprints_follow_the_back_end(tiny_dipper):
    from sklearn.base import clone

    by_name = Paraphrase("dipper")
    assert by_name.fingerprint() == Paraphrase({"backend": "dipper"}).fingerprint()
    assert by_name.fingerprint() != Paraphrase({"backend": "dipper", "lex_diversity": 20}).fingerprint()
    assert Recursion("dipper", depth=2).fingerprint() != Recursion("dipper", depth=3).fingerprint()
    for attack in (Paraphrase(tiny_dipper, seed=1), Recursion(Paraphrase(tiny_dipper), depth=2)):
        assert clone(attack).fingerprint() == attack.fingerprint()


def test_groups_keep_lines_and_cover_every_sentence():
    from humanize.generation.dipper import sentence_groups

    text = "The chair promised a\n\nA vote is planned.  B is here. C is there. D.\nE is new.\n"
    groups = [text[a:b] for a, b in sentence_groups(text, 3)]
    assert groups == ["The chair promised a", "A vote is planned.  B is here. C is there.", "D.", "E is new."]
    assert sentence_groups("   ", 3) == [] and sentence_groups("x", 2) == [(0, 1)]
    pieces = sentence_groups("aaaa bbbb cccc dddd", 3, lambda s: len(s) <= 9)
    assert [("aaaa bbbb cccc dddd")[a:b] for a, b in pieces] == ["aaaa bbbb", "cccc dddd"]


def test_dipper_rejects_a_causal_lm(smollm):
    with pytest.raises(TypeError, match="encoder-decoder"):
        Dipper(model=smollm).generate([Request("lexical = 40, order = 100 <sent> A. </sent>")])


def test_the_default_paraphraser_is_qwen_not_the_detectors_scoring_model_and_it_rewrites(qwen, minilm):
    from humanize.models import DEFAULT_CAUSAL_LM, DEFAULT_CHAT_LM
    from humanize.quality.similarity import semantic_similarity

    attack = Paraphrase()
    assert attack.paraphraser == DEFAULT_CHAT_LM != DEFAULT_CAUSAL_LM
    assert attack.generator().loaded() is qwen
    docs = ["The committee met on Tuesday to discuss the new budget. Several members raised concerns about costs.",
            "Researchers found that the new model improves accuracy on most benchmarks. However, the results need "
            "more study."]
    results = attack.batch(docs)
    for r in results:
        assert r.text.strip() and r.info["kept_chunks"] == 0 and r.info["truncated_chunks"] == 0
    # a 0.5B model copies some short chunks as they are (the first one here, at seed 0): at least one rewritten
    assert any(r.text != d for r, d in zip(results, docs))
    assert min(semantic_similarity(docs, [r.text for r in results], minilm)) > 0.6
