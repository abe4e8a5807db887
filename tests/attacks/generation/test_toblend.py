"""TOBLEND and its QPA variant on the packaged SmolLM2 + Gemma 3 pair (real models, few tokens), and the default
Qwen2.5-Coder-0.5B + Gemma 3 pair."""
import math
import re

import numpy as np
import pytest

from humanize.attacks import apply_edits
from humanize.attacks.generation._toblend_state import Stream, sample_token, segment_starts, token_table
from humanize.attacks.generation.toblend import DEFAULT_MODELS, QPA_TOBLEND, SMOLLM2_GEMMA, TOBLEND

DOCS = [
    "The committee met on Tuesday to discuss the new budget, and several members raised concerns about rising costs.",
    "Rain is expected later this week across the region, and temperatures will drop sharply by Friday evening.",
    "Researchers found that the new model improves accuracy on most benchmarks. However, the results need more study.",
]
PREFIX = 8
#: the plumbing tests blend the two smallest packaged models; the default pair is checked on its own below
PAIR = SMOLLM2_GEMMA
FAST = dict(models=PAIR, prefix_words=PREFIX, max_new_tokens=8)
TRICKY = ("Le comité 😀 s'est réuni mardi à Genève. 委员会周二开会。 "
          "Комитет собрался во вторник, naïve café.")


@pytest.fixture(scope="module")
def gemma():
    from humanize.models import load_causal_lm

    return load_causal_lm("gemma-3-270m")


@pytest.fixture(scope="module")
def plain(smollm, gemma):
    """Every DOC blended once (both models loaded through the session cache)."""
    return TOBLEND(**FAST).batch(DOCS)


def _head(text, n):
    return text[: list(re.finditer(r"\S+", text))[n - 1].end()]


def test_blends_tokens_from_both_models_and_keeps_the_prefix(plain):
    totals = np.sum([r.info["tokens_per_model"] for r in plain], axis=0)
    assert totals[0] > 0 and totals[1] > 0, totals
    for doc, r in zip(DOCS, plain):
        assert r.text.startswith(_head(doc, PREFIX))
        assert r.text != doc
        assert apply_edits(doc, r.edits) == r.text
        assert all(e.start >= len(_head(doc, PREFIX)) for e in r.edits)
        info = r.info
        appended = sum(info["tokens_per_model"])
        skipped = info["dropped_partial_characters"] + info["prefix_joins"]
        assert info["steps"] - 1 - skipped <= appended <= info["steps"] <= 8
        assert info["stopped"] in {"length", "eos", "max_new_tokens"}
        assert info["llm_queries"] >= info["steps"] and info["llm_tokens_out"] >= info["steps"]
        assert "\ufffd" not in r.text


def test_same_seed_same_output_in_a_batch_or_alone_and_other_seeds_differ(plain):
    again = TOBLEND(**FAST).batch([DOCS[2], DOCS[0]])
    assert [r.text for r in again] == [plain[2].text, plain[0].text]
    assert TOBLEND(**FAST).apply(DOCS[1]).text == plain[1].text
    assert TOBLEND(seed=7, **FAST).apply(DOCS[0]).text != plain[0].text


def test_incremental_cache_gives_the_tokens_of_the_from_scratch_reference(plain):
    ref = TOBLEND(incremental=False, **FAST).batch(DOCS)
    for a, b in zip(plain, ref):
        assert a.text == b.text
        assert a.info["tokens_per_model"] == b.info["tokens_per_model"]
        assert a.info["llm_tokens_in"] < b.info["llm_tokens_in"]


def test_stops_at_the_original_word_count(smollm, gemma):
    doc = DOCS[0]
    r = TOBLEND(models=PAIR, prefix_words=PREFIX, max_new_tokens=40, temperature=0.0).apply(doc)
    n = len(doc.split())
    assert len(r.text.split()) <= n
    if r.info["stopped"] == "length":
        assert len(r.text.split()) == n


@pytest.mark.parametrize("doc", ["", "   \n ", "Three words only.", "😀 日本語 Привет мир",
                                 "one two three four five six seven eight"])
def test_documents_not_longer_than_the_prefix_are_returned_unchanged(doc):
    r = TOBLEND(models=PAIR, prefix_words=PREFIX).apply(doc)
    assert r.text == doc and r.edits == []
    assert r.info.get("skipped")


def test_non_latin_and_emoji_text_never_gains_replacement_characters(smollm, gemma):
    for seed in (0, 1):
        r = TOBLEND(models=PAIR, prefix_words=6, max_new_tokens=12, seed=seed).apply(TRICKY)
        assert "\ufffd" not in r.text
        assert r.text.startswith(_head(TRICKY, 6))
        assert apply_edits(TRICKY, r.edits) == r.text


def test_lone_surrogates_are_repaired_for_the_models_and_kept_in_the_prefix(smollm, gemma):
    from humanize.models.text import TextRepairWarning

    doc = "The \ud800 committee met on Tuesday to discuss the new budget and several costs."
    with pytest.warns(TextRepairWarning):
        r = TOBLEND(models=PAIR, prefix_words=6, max_new_tokens=3).apply(doc)
    assert r.text.startswith(_head(doc, 6)) and apply_edits(doc, r.edits) == r.text


def test_token_bytes_rebuild_the_text_exactly(smollm, gemma, qwen):
    for lm in (smollm, gemma, qwen):
        table, banned = token_table(lm.tokenizer)
        ids = lm.tokenizer(TRICKY, add_special_tokens=False)["input_ids"]
        assert b"".join(table[i] for i in ids).decode("utf-8") == TRICKY
        assert lm.tokenizer.eos_token_id not in banned
        assert lm.tokenizer.bos_token_id in banned or lm.tokenizer.bos_token_id is None  # Qwen: no BOS


def test_tail_retokenisation_matches_tokenising_the_whole_text(smollm, gemma, qwen):
    rng = np.random.default_rng(0)
    texts = DOCS + [TRICKY, "a  b\n\n  c\t-- (x) don't 3.14159 >  </b> end..."]
    for lm in (smollm, gemma, qwen):
        head = [lm.tokenizer.bos_token_id] if lm.tokenizer.bos_token_id is not None else []
        for text in texts:
            s = Stream(lm)
            cut = 0
            while cut < len(text):
                cut = min(len(text), cut + int(rng.integers(1, 6)))
                s.ids, s.seg_chars, s.seg_toks = s._tokens_for(text[:cut])
                whole = lm.tokenizer(text[:cut], add_special_tokens=False)["input_ids"]
                assert s.ids == head + list(whole), (lm.resolved, text[:cut])
    assert segment_starts("ab cd  ef") == [0, 2, 5]


def test_sampling_rules():
    logits = np.array([0.0, 3.0, 1.0, 2.0, 5.0])
    assert sample_token(logits, 0.9, temperature=0.0, top_k=0, top_p=1.0, banned=frozenset(), vocab=5) == 4
    assert sample_token(logits, 0.99, temperature=1.0, top_k=1, top_p=1.0, banned=frozenset(), vocab=5) == 4
    assert sample_token(logits, 0.99, temperature=1.0, top_k=0, top_p=0.5, banned=frozenset(), vocab=5) == 4
    assert sample_token(logits, 0.0, temperature=1.0, top_k=0, top_p=1.0, banned=frozenset({4}), vocab=5) == 1
    assert sample_token(logits, 0.999, temperature=1.0, top_k=0, top_p=1.0, banned=frozenset(), vocab=4) != 4
    draws = {sample_token(logits, u, temperature=1.0, top_k=2, top_p=1.0, banned=frozenset(), vocab=5)
             for u in np.linspace(0, 0.999, 50)}
    assert draws == {1, 4}


def test_qpa_keeps_only_candidates_above_the_similarity_floor(smollm, gemma, minilm):
    doc = DOCS[2]
    r = QPA_TOBLEND(models=PAIR, prefix_words=PREFIX, max_new_tokens=6).apply(doc)
    info = r.info
    assert info["qpa_steps"] == info["steps"] > 0
    assert info["qpa_candidates"] >= info["steps"]
    if info["qpa_min_chosen_similarity"] is not None:
        assert info["qpa_min_chosen_similarity"] > 0.7
    assert apply_edits(doc, r.edits) == r.text and r.text.startswith(_head(doc, PREFIX))
    none = QPA_TOBLEND(models=PAIR, prefix_words=PREFIX, max_new_tokens=4, min_similarity=1.0).apply(doc).info
    assert none["qpa_fallbacks"] == none["qpa_steps"] > 0 and none["qpa_kept"] == 0
    assert none["qpa_min_chosen_similarity"] is None
    every = QPA_TOBLEND(models=PAIR, prefix_words=PREFIX, max_new_tokens=4, min_similarity=-1.0).apply(doc).info
    assert every["qpa_kept"] == every["qpa_candidates"] > 0


def test_qpa_is_reproducible_and_matches_its_from_scratch_reference(smollm, gemma, minilm):
    a = QPA_TOBLEND(models=PAIR, prefix_words=PREFIX, max_new_tokens=5).apply(DOCS[0])
    b = TOBLEND(models=PAIR, qpa=True, prefix_words=PREFIX, max_new_tokens=5).apply(DOCS[0])
    c = QPA_TOBLEND(models=PAIR, prefix_words=PREFIX, max_new_tokens=5, incremental=False).apply(DOCS[0])
    assert a.text == c.text and a.info["tokens_per_model"] == c.info["tokens_per_model"]
    assert b.info["qpa_steps"] == b.info["steps"]  # the flag on TOBLEND runs the same ranking


@pytest.mark.parametrize("kwargs, exc", [
    (dict(models=()), ValueError), (dict(models="gemma-3-270m"), TypeError), (dict(models=("",)), TypeError),
    (dict(prefix_words=0), ValueError), (dict(prefix_words=2.5), TypeError), (dict(min_similarity=2), ValueError),
    (dict(min_similarity=math.nan), TypeError), (dict(top_p=0.0), ValueError), (dict(top_p=1.5), ValueError),
    (dict(temperature=-0.1), ValueError), (dict(top_k=-1), ValueError), (dict(max_new_tokens=0), ValueError),
    (dict(qpa="yes"), TypeError), (dict(incremental=1), TypeError), (dict(seed="a"), TypeError),
])
def test_bad_parameters_raise_naming_the_parameter(kwargs, exc):
    name = next(iter(kwargs))
    with pytest.raises(exc, match=rf"^TOBLEND: {name} must be .*, got {re.escape(repr(kwargs[name]))} \("):
        TOBLEND(**kwargs)


def test_parameters_round_trip_and_qpa_class_needs_qpa():
    a = TOBLEND(models=["gemma-3-270m"], top_k=0, seed=3)
    assert a.get_params()["models"] == ["gemma-3-270m"] and a.get_params()["top_k"] == 0
    assert TOBLEND(**a.get_params()) == a
    assert TOBLEND(incremental=False).fingerprint() == TOBLEND().fingerprint() != TOBLEND(seed=1).fingerprint()
    assert QPA_TOBLEND().qpa is True and QPA_TOBLEND.name == "qpa_toblend" and TOBLEND.name == "toblend"
    with pytest.raises(ValueError, match=r"^QPA_TOBLEND: qpa must be one of True, got False \(bool\)$"):
        QPA_TOBLEND(qpa=False)


def test_batched_candidate_scoring_matches_one_by_one_and_the_library_scorer(smollm):
    from humanize.models import token_logprobs

    base = DOCS[0][:60]
    cands = [base + " and", base + " the new", base + "ly"]
    s = Stream(smollm, scores=True)
    s.sync(base)
    many = s.nll_many(cands)
    ref = Stream(smollm, scores=True, incremental=False)
    ref.sync(base)
    for c, (a, n) in zip(cands, many):
        b, m = ref.nll(c)
        lib = -float(np.nansum(token_logprobs(smollm, c)[1]))
        assert n == m and a == pytest.approx(b, abs=2e-3) and b == pytest.approx(lib, abs=2e-3)
    s.sync(cands[1])  # after scoring, the stream still follows the text it is given
    fresh = Stream(smollm)
    fresh.sync(cands[1])
    np.testing.assert_allclose(s.next_logits, fresh.next_logits, atol=2e-3)


def test_running_cost_meters_get_the_forward_passes(smollm, gemma):
    from humanize.cost import CostMeter

    meter = CostMeter()
    with meter.measure(doc_id="d0", attack="toblend"):
        r = TOBLEND(models=PAIR, prefix_words=PREFIX, max_new_tokens=3).apply(DOCS[1])
    rec = meter.records[0]
    assert rec["queries"] == r.info["llm_queries"] >= 3
    assert rec["api_tokens_out"] == r.info["llm_tokens_out"] and rec["api_tokens_in"] == r.info["llm_tokens_in"]


def test_the_prompt_last_word_is_never_extended(smollm, gemma):
    doc = "We talked about the new budg and then went home after the long meeting ended today."
    r = TOBLEND(models=PAIR, prefix_words=6, max_new_tokens=4, temperature=0.0).apply(doc)
    head = _head(doc, 6)
    assert r.info["prefix_joins"] > 0  # both models, greedy, want to finish "budg"
    assert r.text.startswith(head) and all(e.start >= len(head) for e in r.edits)
    assert r.text == head or not re.match(r"\w", r.text[len(head)])


def test_a_token_ending_inside_a_character_keeps_the_turn_until_it_is_complete(smollm):
    tok = smollm.tokenizer
    partial = tok.convert_tokens_to_ids("ĠðŁĺ")  # " " and the first three bytes of an emoji
    s = Stream(smollm)
    s.sync("She smiled and sent a")
    forced = np.full_like(s.next_logits, -np.inf)
    forced[partial] = 0.0
    s.next_logits = forced
    text, drawn = s.propose(np.random.default_rng(0), {"temperature": 1.0, "top_k": 50, "top_p": 1.0})
    assert drawn >= 2 and s.dirty
    assert "\ufffd" not in text
    assert text.startswith(" ") and len(text.encode("utf-8")) >= 5  # the model finishes the emoji


def test_the_default_pair_is_qwen_and_gemma_and_blends_both(qwen, gemma):
    from humanize.models import DEFAULT_CAUSAL_LM, DEFAULT_CHAT_LM

    assert TOBLEND().models == QPA_TOBLEND().models == DEFAULT_MODELS == (DEFAULT_CHAT_LM, "gemma-3-270m")
    assert DEFAULT_CAUSAL_LM not in DEFAULT_MODELS  # the default detectors' scoring model writes nothing
    r = TOBLEND(prefix_words=PREFIX, max_new_tokens=8, seed=1).apply(DOCS[0])
    assert r.info["models_resolved"] == [qwen.resolved, gemma.resolved]
    assert r.text.startswith(_head(DOCS[0], PREFIX)) and r.text != DOCS[0] and "\ufffd" not in r.text
    assert apply_edits(DOCS[0], r.edits) == r.text


def test_one_model_blended_greedily_continues_as_its_own_greedy_decoding(qwen):
    import torch

    from humanize.models import DEFAULT_CHAT_LM

    # Qwen prepends no BOS (its GGUF names <|endoftext|>, which upstream never prepends): the stream must not either
    assert qwen.tokenizer.bos_token_id is None
    head = _head(DOCS[0], PREFIX)
    r = TOBLEND(models=[DEFAULT_CHAT_LM], prefix_words=PREFIX, max_new_tokens=6, temperature=0.0).apply(DOCS[0])
    ids = qwen.tokenizer(head, return_tensors="pt", add_special_tokens=False).input_ids
    out = qwen.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=6, do_sample=False)
    assert r.text == head + qwen.tokenizer.decode(out[0, ids.shape[1]:])
