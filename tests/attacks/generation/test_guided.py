"""AdversarialParaphrase (Cheng et al. 2025): rerank mode on a scripted generator, token mode on a tiny random
Llama (plumbing only: its text is noise), guides that count a string (FunctionDetector)."""
import re

import pytest

from humanize import detectors
from humanize.attacks import apply_edits, get
from humanize.attacks.generation.guided import AdversarialParaphrase
from humanize.detectors.target import Target
from humanize.exceptions import InvalidParameterError
from humanize.generation import Generation, Generator, Request
from humanize.generation.base import chat
from humanize.generation.local import LocalChat

DOCS = ["The committee met on Tuesday. Several members raised concerns. The chair promised a report. "
        "Rain is expected later.",
        "She walked to the market and bought bread. Then she went home."]


def count_zz(texts):
    return [float(t.count("zz")) for t in texts]


class Scripted(Generator):
    """A chat generator whose answer is the chunk behind ``seed % 4`` copies of "zz" (so each candidate's
    guide score is known); records every request."""

    name = "scripted"

    def __init__(self):
        self.seen = []

    def generate(self, requests):
        out = []
        for r in requests:
            chunk = r.messages[-1][1].split("\n\n", 1)[1]
            text = "zz " * (r.seed % 4) + "Reworded: " + chunk.lower()
            self.seen.append((chunk, r.seed, text))
            out.append(Generation(text, 10, 5))
        return out


def _guide(fn=count_zz):
    return detectors.get("function", fn=fn)


@pytest.fixture(scope="module")
def tiny_chat(tmp_path_factory):
    from ...detectors.conftest import _save_tiny_llama, _train_tokenizer

    path = _save_tiny_llama(tmp_path_factory.mktemp("guided_lm") / "a", _train_tokenizer(300), seed=0)
    return LocalChat(model=path, max_new_tokens=6, temperature=0)


# -- rerank ---------------------------------------------------------------------------
def test_rerank_keeps_the_lowest_scored_candidate_and_counts():
    gen = Scripted()
    attack = AdversarialParaphrase(paraphraser=gen, guide=_guide(), mode="rerank", n_candidates=4, chunk_sentences=2,
                                   seed=5)
    res = attack.batch(DOCS)
    by_chunk = {}
    for chunk, _, text in gen.seen:
        by_chunk.setdefault(chunk, []).append(text)
    assert [len(v) for v in by_chunk.values()] == [4, 4, 4]  # 2 + 1 chunks, 4 candidates each
    for r in res:
        assert apply_edits(r.original, r.edits) == r.text
        n_chunks = r.info["chunks"]
        assert r.info["llm_queries"] == r.info["guide_queries"] == 4 * n_chunks
        assert r.info["candidates_per_chunk"] == [4] * n_chunks
        assert r.info["detector_queries"] == 4 * n_chunks + 2
    for chunk, texts in by_chunk.items():
        best = min(texts, key=lambda t: t.count("zz"))
        assert any(best in r.text for r in res)
        assert all(t not in r.text for r in res for t in texts if t.count("zz") > best.count("zz"))
    # the scripted seeds spread: some chunk had a worse candidate than the one kept
    assert any(len({t.count("zz") for t in texts}) > 1 for texts in by_chunk.values())
    assert [r.info["guide_score_before"] for r in res] == [0.0, 0.0]
    # deterministic whatever the batch
    again = [attack.batch([d])[0] for d in reversed(DOCS)][::-1]
    assert [(r.text, r.info) for r in again] == [(r.text, r.info) for r in res]


# -- token mode -----------------------------------------------------------------------
def test_token_mode_top1_is_greedy_decoding(tiny_chat):
    reqs = [Request(chat("Paraphrase: the committee met."), 1), Request(chat("Rain."), 2)]
    plain = tiny_chat.generate(reqs)
    gens, counts = tiny_chat.generate_guided(reqs, lambda p, c, r: [0] * len(c), top_k=1)
    assert gens == plain
    assert counts == [[1] * g.tokens_out for g in plain]


def test_token_mode_avoids_the_penalised_token(tiny_chat):
    doc = [DOCS[1]]
    plain = AdversarialParaphrase(paraphraser=tiny_chat, guide=_guide(), mode="token", top_k=1,
                                  chunk_sentences=1).batch(doc)[0]
    words = re.findall(r"[A-Za-z]{2,}", plain.text)
    assert words, plain.text  # greedy decoding emits this string; the guide below penalises it
    bad = words[0]

    def count_bad(texts, bad=bad):
        return [float(t.count(bad)) for t in texts]

    target = Target(_guide(count_bad))
    attack = AdversarialParaphrase(paraphraser=tiny_chat, guide=target, mode="token", top_k=5, chunk_sentences=1)
    res = attack.batch(doc)[0]
    assert bad in plain.text and bad not in res.text
    assert apply_edits(res.original, res.edits) == res.text
    info = res.info
    assert info["chunks"] == 2 and info["guide_steps"] == info["llm_tokens_out"]
    assert 1 < info["candidates_per_step"] <= 5
    assert target.queries == info["detector_queries"] == info["guide_queries"] + 2
    # one guide call per step, plus one for the before/after scores
    one = Target(_guide(count_bad))
    single = AdversarialParaphrase(paraphraser=tiny_chat, guide=one, mode="token", top_k=5).batch(doc)[0]
    assert single.info["chunks"] == 1 and one.calls == single.info["guide_steps"] + 1
    # deterministic, and the same one by one as in a batch
    both = attack.batch([DOCS[0], DOCS[1]])
    assert both[1].text == res.text and both[1].info == info
    assert attack.batch([DOCS[0]])[0].text == both[0].text


def _shortest(partials, candidates, rows):
    """A chooser that prefers the shortest non-blank text: the unfinished answer (a stop token) when it can."""
    return [min(range(len(row)), key=lambda j: (len(row[j]) if row[j].strip() else 1e9, j)) for row in candidates]


def test_min_new_tokens_keeps_the_guide_from_ending_the_answer(tiny_chat):
    reqs = [Request(chat("Paraphrase: the committee met."), 1), Request(chat("Rain."), 2),
            Request(chat("Cats and dogs ran."), 3)]
    free, _ = tiny_chat.generate_guided(reqs, _shortest, top_k=300, top_p=1.0)
    assert any(g.finish_reason == "stop" and g.tokens_out < 3 for g in free)  # the guide ends an answer early
    held, counts = tiny_chat.generate_guided(reqs, _shortest, top_k=300, top_p=1.0, min_new_tokens=3)
    assert all(g.finish_reason == "length" or g.tokens_out > 3 for g in held)
    # per request: [0, 3, 0] holds back the first only
    mixed, _ = tiny_chat.generate_guided(reqs, _shortest, top_k=300, top_p=1.0, min_new_tokens=[3, 0, 0])
    assert mixed[0] == held[0] and mixed[1:] == free[1:]
    with pytest.raises(ValueError, match="min_new_tokens must be an int >= 0 or one per request"):
        tiny_chat.generate_guided(reqs, _shortest, min_new_tokens=[1, 2])


def test_min_length_ratio_is_the_least_answer_length(tiny_chat):
    def length(texts):
        return [float(len(t)) for t in texts]

    doc = [DOCS[1]]
    kw = dict(paraphraser=tiny_chat, mode="token", top_k=300, top_p=1.0, chunk_sentences=1)
    free = AdversarialParaphrase(guide=_guide(length), min_length_ratio=0.0, **kw).batch(doc)[0]
    held = AdversarialParaphrase(guide=_guide(length), **kw).batch(doc)[0]
    budget = tiny_chat.max_new_tokens
    assert free.info["llm_tokens_out"] < held.info["llm_tokens_out"]
    # each chunk's answer runs to at least 0.75 of its tokens, capped by the budget less one
    tok = tiny_chat.loaded().tokenizer
    floors = [min(-(-3 * len(tok(c, add_special_tokens=False)["input_ids"]) // 4), budget - 1)
              for c in ("She walked to the market and bought bread.", " Then she went home.")]
    assert held.info["llm_tokens_out"] >= sum(floors)
    with pytest.raises(InvalidParameterError, match="min_length_ratio"):
        AdversarialParaphrase(guide=_guide(length), min_length_ratio=1.5, **kw)


# -- parameters ----------------------------------------------------------------------
def test_guide_and_paraphraser_models_are_disjoint(tiny_chat):
    same = {"name": "log_likelihood", "model": tiny_chat.model}
    with pytest.raises(ValueError, match=r"^AdversarialParaphrase: the guide scores with the paraphraser's own "
                                         r"model \(guide log_likelihood\.model .*allow_shared_model=True$"):
        AdversarialParaphrase(paraphraser=tiny_chat, guide=same)
    ok = AdversarialParaphrase(paraphraser=tiny_chat, guide=same, allow_shared_model=True)
    assert ok.guide == same


@pytest.mark.parametrize("kwargs, pattern", [
    ({"mode": "beam"}, r"^AdversarialParaphrase: mode must be one of .*, got 'beam' \(str\)"),
    ({"top_k": 0}, r"^AdversarialParaphrase: top_k must be .*, got 0 \(int\)"),
    ({"top_p": 1.5}, r"^AdversarialParaphrase: top_p must be .*, got 1\.5 \(float\)"),
    ({"n_candidates": 0}, r"^AdversarialParaphrase: n_candidates must be .*, got 0 \(int\)"),
])
def test_bad_parameters_name_themselves(kwargs, pattern):
    with pytest.raises(InvalidParameterError, match=pattern):
        AdversarialParaphrase(paraphraser=Scripted(), guide=_guide(), mode=kwargs.pop("mode", "rerank"), **kwargs)


def test_token_mode_needs_a_local_model_and_a_learnable_guide_needs_train():
    with pytest.raises(ValueError, match=r"^AdversarialParaphrase: mode='token' decodes inside a local model .*"
                                         r"use mode='rerank'$"):
        AdversarialParaphrase(paraphraser=Scripted(), guide=_guide(), mode="token")
    with pytest.raises(ValueError, match=r"^AdversarialParaphrase: guide 'tfidf_lr' learns, so it needs train="):
        get("adversarial_paraphrase", paraphraser=Scripted(), guide="tfidf_lr", mode="rerank")


def test_generate_guided_checks_its_chooser(tiny_chat):
    reqs = [Request(chat("Rain."), 2)]
    with pytest.raises(ValueError, match=r"^LocalChat\.generate_guided: choose returned 9 for row 0, which has "):
        tiny_chat.generate_guided(reqs, lambda p, c, r: [9], top_k=3)
    with pytest.raises(TypeError, match=r"^LocalChat\.generate_guided: choose must be callable"):
        tiny_chat.generate_guided(reqs, None)


# -- incremental scoring of a causal-LM guide -------------------------------------------------
def test_token_mode_incremental_guide_equals_full_rescoring(tiny_chat, tmp_path_factory):
    """A Fast-DetectGPT guide on a tiny Llama with ITS OWN tokenizer (not the paraphraser's): the KV-cached
    scoring picks the same tokens as re-scoring whole texts, counts the same queries, and runs far fewer
    token positions through the guide."""
    from humanize.detectors.fast_detectgpt import FastDetectGPT
    from humanize.models import load_causal_lm

    from ...detectors.conftest import _save_tiny_llama, _train_tokenizer

    guide_lm = load_causal_lm(_save_tiny_llama(tmp_path_factory.mktemp("guided_guide") / "g", _train_tokenizer(320),
                                               seed=7))
    assert guide_lm.tokenizer.get_vocab() != tiny_chat.loaded().tokenizer.get_vocab()
    runs = {}
    for incremental in (True, False):
        target = Target(FastDetectGPT(guide_lm))
        attack = AdversarialParaphrase(paraphraser=tiny_chat, guide=target, mode="token", top_k=6, chunk_sentences=1,
                                       incremental=incremental)
        runs[incremental] = (attack.batch(DOCS), target.queries, attack.provenance()["params"])
    (inc, inc_q, inc_p), (full, full_q, full_p) = runs[True], runs[False]
    assert [r.text for r in inc] == [r.text for r in full]
    assert inc_q == full_q
    assert inc_p["incremental"] is True and full_p["incremental"] is False
    for a, b in zip(inc, full):
        assert a.info["guide_queries"] == b.info["guide_queries"] > a.info["guide_steps"]
        assert a.info["guide_scoring"] == "incremental" and b.info["guide_scoring"] == "texts"
        assert "guide_forward_passes" not in b.info
        # at most a few passes per step (the committed token, the candidates), a few positions per candidate
        assert 0 < a.info["guide_forward_passes"] <= 2 * a.info["guide_steps"] + a.info["chunks"], a.info
        assert a.info["guide_forward_tokens"] <= 4 * a.info["guide_queries"]
    # deterministic whatever the batch
    again = AdversarialParaphrase(paraphraser=tiny_chat, guide=Target(FastDetectGPT(guide_lm)), mode="token",
                                  top_k=6, chunk_sentences=1).batch([DOCS[1]])[0]
    assert again.text == inc[1].text and again.info == inc[1].info


def test_token_mode_takes_a_lone_surrogate(tiny_chat):
    """#35: a text with a lone surrogate (U+D800-U+DFFF, e.g. from a badly decoded file) is rewritten in
    token mode like any other (the paraphraser reads it as U+FFFD), not a crash."""
    doc = "She walked to the market \ud83d and bought bread. Then she went home."
    attack = AdversarialParaphrase(paraphraser=tiny_chat, guide=_guide(), mode="token", top_k=2, chunk_sentences=1)
    from humanize.models.text import TextRepairWarning

    with pytest.warns(TextRepairWarning, match="lone surrogates"):  # said once, by the paraphraser's prompt
        res = attack.batch([doc])[0]
    assert res.original == doc and apply_edits(res.original, res.edits) == res.text
    assert res.info["chunks"] == 2
