"""Blend (TH-Bench App. H): one attack per sentence, exact edits, seeded policies, greedy selection."""
import math

import numpy as np
import pytest

from humanize.attacks import Attack, Homoglyph, UpperLower, apply_edits, check_edits
from humanize.attacks.blend import LOSS_FLOOR, Blend
from humanize.text import sentence_spans

TEXT = "  The cat sat on the mat. It was happy there.  Dogs bark at night!\n\nBirds sing in spring. Fish swim. "
UPPER = UpperLower(rate=1.0, seed=1)  # flips the case of every word's first letter
HOMO = Homoglyph(rate=1.0, seed=2)  # swaps every swappable letter for a look-alike


def sentences(text):
    return [text[a:b] for a, b in sentence_spans(text)]


def exact(result):
    check_edits(result.original, result.edits)
    assert apply_edits(result.original, result.edits) == result.text


def test_alternate_applies_one_attack_per_sentence_in_turn():
    r = Blend([UPPER, HOMO]).apply(TEXT)
    exact(r)
    orig, spans = sentences(TEXT), sentence_spans(TEXT)
    assert r.info["per_sentence"] == ["upper_lower", "homoglyph"] * 2 + ["upper_lower"]
    pos, out = 0, []
    for i, ((a, b), s) in enumerate(zip(spans, orig)):
        out += [TEXT[pos:a], (UPPER if i % 2 == 0 else HOMO)(s)]
        pos = b
    assert r.text == "".join(out) + TEXT[pos:]  # each sentence got exactly its own attack, gaps kept
    assert r.text.startswith("  the Cat")
    assert r.text.endswith(". ") and "!\n\n" in r.text
    assert Blend(["upper_lower"]).apply(TEXT).info["per_sentence"] == ["upper_lower"] * 5


def test_batch_equals_apply_and_blank_texts_pass():
    blend = Blend([UPPER, HOMO])
    docs = ["", "   \n ", TEXT, "Один. Два три. 😀 ok."]
    rs = blend.batch(docs)
    for d, r in zip(docs, rs):
        exact(r)
        assert r == blend.apply(d)
    assert rs[0].text == "" and rs[1].text == "   \n " and rs[0].edits == [] and rs[1].info["per_sentence"] == []
    assert rs[3].info["per_sentence"] == ["upper_lower", "homoglyph"][: len(sentence_spans(docs[3]))]
    assert len(sentence_spans(docs[3])) >= 2


def test_random_policy_is_seeded_per_document():
    many = " ".join(f"Sentence number {w} is here." for w in "one two three four five six seven eight nine ten".split())
    a = Blend([UPPER, HOMO], policy="random", seed=5)
    first = a.apply(many)
    exact(first)
    assert first.info["per_sentence"] == a.apply(many).info["per_sentence"]
    assert a.batch(["x y.", many])[1].text == first.text  # independent of the batch
    picks = {tuple(Blend([UPPER, HOMO], policy="random", seed=s).apply(many).info["per_sentence"]) for s in range(6)}
    assert len(picks) > 1  # different seeds, different draws
    assert set(first.info["per_sentence"]) == {"upper_lower", "homoglyph"}
    # the sub-attacks keep their own seeds: Blend's seed changes only which attack a sentence gets
    b = Blend([HOMO, Homoglyph(rate=1.0, seed=2)], policy="random", seed=9).apply(many)
    assert b.text == HOMO(many)


def test_edits_exact_on_touching_sentences_and_tricky_texts():
    # blingfire returns touching spans here: insertions at a shared boundary must merge
    class Tail(Attack):
        name = "tail"
        has_rate = False

        def __init__(self, seed: int = 0):
            self.seed = seed
            self._validate()

        def propose(self, text, rng):
            from humanize.attacks import Edit

            return [Edit(0, 0, "<"), Edit(len(text), len(text), ">")]

    for text in ["Hi.There. And more.", TEXT, "Emoji 😀👍🏽 party. 🎉 Next one!", "x" * 3000 + ". End.",
                 "日本語の文です。次の文。", "Lone \ud800 surrogate. Next sentence \udfff here.", "a"]:
        r = Blend([Tail(), UPPER]).apply(text)
        exact(r)


def test_params_nested_like_pipeline():
    homo = Homoglyph(rate=1.0, seed=2)
    b = Blend(["upper_lower", homo], policy="alternate", seed=3)
    p = b.get_params()
    assert p["upper_lower__rate"] == UpperLower().rate and p["homoglyph__seed"] == 2 and p["policy"] == "alternate"
    b.set_params(upper_lower__rate=1.0)  # a step given by name becomes the object whose parameter is set
    assert isinstance(b.attacks[0], UpperLower) and b.attacks[0].rate == 1.0
    assert b.apply("The cat sat. It was happy.").text == "the Cat Sat. " + homo("It was happy.")
    f = b.fingerprint()
    assert f == Blend([UpperLower(rate=1.0), Homoglyph(rate=1.0, seed=2)], seed=3).fingerprint()
    assert f != b.set_params(homoglyph__seed=4).fingerprint() and homo.seed == 4
    assert f != Blend([UpperLower(rate=1.0), Homoglyph(rate=1.0, seed=2)], seed=3, policy="random").fingerprint()
    assert Blend(["upper_lower"]).fingerprint() == Blend([UpperLower()]).fingerprint()
    assert b.set_params(homoglyph=UPPER).attacks[1] is UPPER
    with pytest.raises(ValueError, match="no parameter or step 'nope'"):
        b.set_params(nope=1)
    with pytest.raises(ValueError, match="policy"):
        b.set_params(policy="nope")
    assert b.policy == "alternate"  # restored after the failed validation


@pytest.mark.parametrize("kwargs, err, match", [
    ({"attacks": []}, ValueError, r"^Blend: attacks must be a non-empty list of Attack objects, names or tables, got \[\] \(list\)$"),
    ({"attacks": UPPER}, TypeError, "^Blend: attacks must be a non-empty list of Attack objects, names or tables, got UpperLower"),
    ({"attacks": [UPPER, 3]}, TypeError, r"^Blend: attacks must be .*, got \[UpperLower.*, 3\] \(list\)$"),
    ({"attacks": ["no_such_attack"]}, ValueError, "unknown attack"),
    ({"attacks": [UPPER], "policy": "best"}, ValueError, "^Blend: policy must be one of 'alternate', 'random', 'greedy', got 'best'"),
    ({"attacks": [UPPER], "policy": "greedy"}, ValueError, "needs a detector"),
    ({"attacks": [UPPER], "detector": 3}, TypeError, r"^Blend: detector must be a str or a Detector or None, got 3 \(int\)$"),
    ({"attacks": [UPPER], "detector": "no_such_detector"}, ValueError, "unknown detector"),
    ({"attacks": [UPPER], "meter": "bleu"}, ValueError, "^Blend: meter must be one of 'cosine', 'rouge_l', 'edit_rate' or a callable or None, got 'bleu'"),
    ({"attacks": [UPPER], "seed": 1.5}, TypeError, r"^Blend: seed must be an int seed, got 1.5 \(float\)$"),
])
def test_bad_params_raise(kwargs, err, match):
    with pytest.raises(err, match=match):
        Blend(**kwargs)


def test_bad_input_raises():
    b = Blend([UPPER])
    with pytest.raises(TypeError):
        b.apply(b"bytes")
    with pytest.raises(TypeError):
        b.batch("a single string")


@pytest.fixture(scope="module")
def detector(smollm):
    from humanize.detectors import get

    return get("log_likelihood", model=smollm)


GREEDY_TEXT = "The committee approved the new budget today. Prices rose sharply in March."


def test_greedy_picks_best_drop_per_quality_loss(detector, minilm):
    from humanize.quality import semantic_similarity

    identity = UpperLower(rate=0.0)  # changes nothing: drop 0, loss 0
    attacks = [identity, UPPER, HOMO]
    blend = Blend(attacks, policy="greedy", detector=detector)
    names = [n for n, _ in blend.named_attacks()]
    assert names == ["upper_lower-1", "upper_lower-2", "homoglyph"]
    r = blend.apply(GREEDY_TEXT)
    exact(r)
    expected, drops = [], []
    for s in sentences(GREEDY_TEXT):
        outs = [a(s) for a in attacks]
        sc = detector.score([s] + outs)
        cos = semantic_similarity([s] * len(outs), outs)
        ratios = [(sc[0] - sc[k + 1]) / max(1 - cos[k], LOSS_FLOOR) for k in range(len(outs))]
        expected.append(names[int(np.argmax(ratios))])
        drops.append(sc[0] - sc[int(np.argmax(ratios)) + 1])
    assert r.info["per_sentence"] == expected
    assert np.allclose(r.info["drop"], drops) and len(r.info["quality_loss"]) == 2
    assert all(d > 0 for d in r.info["drop"])  # some attack lowers each sentence's score: it was chosen


def test_greedy_sign_meter_and_ties(detector):
    identity = UpperLower(rate=0.0)
    s0 = sentences(GREEDY_TEXT)[0]
    orig, homo, upper = detector.score([s0, HOMO(s0), UPPER(s0)])
    # premise, measured on smollm2: homoglyphs make the sentence MORE likely, case flips less likely
    assert homo > orig > upper
    # an attack that raises the machine score loses to changing nothing
    keep = Blend([HOMO, identity], policy="greedy", detector=detector).apply(GREEDY_TEXT)
    assert keep.info["per_sentence"][0] == "upper_lower" and keep.text.startswith(s0)
    # a meter that makes every change costly: a positive drop still beats no change
    costly = Blend([identity, UPPER], policy="greedy", detector=detector,
                   meter=lambda o, a: [0.0 if x == y else 100.0 for x, y in zip(o, a)]).apply(GREEDY_TEXT)
    assert costly.info["per_sentence"] == ["upper_lower-2", "upper_lower-2"]
    assert costly.info["quality_loss"] == [100.0, 100.0]
    assert costly.info["drop"][0] == pytest.approx(orig - upper, abs=1e-5)
    # ties (two attacks that change nothing) go to the earlier attack
    tie = Blend([identity, UpperLower(rate=0.0, seed=7)], policy="greedy", detector=detector).apply(GREEDY_TEXT)
    assert tie.info["per_sentence"] == ["upper_lower-1", "upper_lower-1"] and tie.text == GREEDY_TEXT
    assert tie.info["drop"] == [0.0, 0.0]
    # a meter that returns the wrong number of values is an error, not a silent misalignment
    with pytest.raises(ValueError, match="meter returned"):
        Blend([identity], policy="greedy", detector=detector, meter=lambda o, a: [0.0]).apply(GREEDY_TEXT)
    blank = Blend([identity, UPPER], policy="greedy", detector=detector).batch(["", "  "])
    assert [r.text for r in blank] == ["", "  "] and blank[0].info["per_sentence"] == []
    lexical = Blend([identity, UPPER], policy="greedy", detector=detector, meter="edit_rate").apply(GREEDY_TEXT)
    assert lexical.info["per_sentence"] == ["upper_lower-2", "upper_lower-2"]
    assert all(0 < x <= 1 and not math.isnan(x) for x in lexical.info["quality_loss"])


def test_alternate_with_a_generation_attack(smollm):
    from humanize.attacks.generation.prompt import Prompt
    from humanize.generation.local import LocalChat

    prompt = Prompt(llm=LocalChat(model=smollm, max_new_tokens=6), seed=1)
    text = "The cat sat on the mat. It was happy there. Dogs bark at night."
    blend = Blend([UPPER, prompt])
    docs = [text, "Rain falls. Sun shines."]
    rs = blend.batch(docs)
    for r in rs:
        exact(r)
    a, b, c = sentences(text)
    assert rs[0].info["per_sentence"] == ["upper_lower", "prompt", "upper_lower"]
    assert rs[0].text == f"{UPPER(a)} {prompt(b)} {UPPER(c)}"  # the rewrite depends on its sentence only
    assert rs[0].info["llm_queries"] == 1 and 0 < rs[0].info["llm_tokens_out"] <= 6
    assert rs[1].info["llm_queries"] == 1 and rs[1].text == blend.apply(docs[1]).text
