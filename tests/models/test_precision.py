"""The precision rule (dtype="auto"), its place in fingerprints, and that bfloat16 scores rank the demo texts
as float32 does (issue #38)."""
import numpy as np
import pytest
import torch

from humanize.models import precision, resolve_dtype


def test_the_cpu_flags_are_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse avx512f avx512_vnni avx512_bf16\n"
                    "processor\t: 1\nflags\t\t: fpu sse avx512f avx512_vnni avx512_bf16\n")
    assert precision.cpu_bf16_flags(str(info)) == ("avx512_bf16",)
    (tmp_path / "old").write_text("flags\t\t: fpu sse avx2\n")
    assert precision.cpu_bf16_flags(str(tmp_path / "old")) == ()
    assert precision.cpu_bf16_flags(str(tmp_path / "absent")) == ()


@pytest.mark.parametrize("native, expected", [(True, torch.bfloat16), (False, torch.float32)])
def test_auto_is_bfloat16_only_where_the_cpu_has_it(monkeypatch, native, expected):
    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: native)
    cpu = torch.device("cpu")
    assert resolve_dtype("auto", cpu) == expected == precision.auto_dtype(cpu)
    assert resolve_dtype(None, cpu) == torch.float32  # None stays float32; the scoring models default to "auto"


def test_a_fingerprint_records_the_precision_auto_resolves_to(monkeypatch):
    from humanize.detectors.metric import LogLikelihood

    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: True)
    auto = LogLikelihood(device="cpu", dtype="auto")
    assert auto.fingerprint() == LogLikelihood(device="cpu", dtype="bfloat16").fingerprint()
    assert auto.fingerprint() != LogLikelihood(device="cpu", dtype="float32").fingerprint()
    assert auto.provenance()["runtime"]["dtype"] == "torch.bfloat16"
    from humanize import detectors
    from humanize.benchmarks.runner.manifest import component_entry

    entry = component_entry(auto, name="log_likelihood", registry=detectors)  # what a run's manifest records
    assert entry["runtime"] == {"device_type": "cpu", "dtype": "torch.bfloat16"}
    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: False)
    assert auto.fingerprint() == LogLikelihood(device="cpu", dtype="float32").fingerprint()
    assert component_entry(auto, name="log_likelihood", registry=detectors)["runtime"]["dtype"] == "torch.float32"


def test_bfloat16_scores_rank_the_demo_texts_as_float32(smollm):
    """Spearman >= 0.99 between the two precisions' log-likelihood scores of demo texts (their first 128 tokens)."""
    from scipy.stats import spearmanr

    from humanize.benchmarks.data import load_demo
    from humanize.detectors.lm_stats import LMStatistics
    from humanize.models import load_causal_lm

    texts = load_demo(n=12, seed=0)["generation"].tolist()
    half = load_causal_lm("smollm2-135m-instruct", dtype="bfloat16")
    assert next(half.model.parameters()).dtype == torch.bfloat16 and half.identity_key != smollm.identity_key

    def mean_logprob(lm):
        return np.array([s.logprob.mean() for s in LMStatistics(lm, max_tokens=128, cache=False)(texts)])

    full, reduced = mean_logprob(smollm), mean_logprob(half)
    assert len(set(np.round(full, 6))) == len(texts)  # distinct scores: a ranking to compare
    assert spearmanr(full, reduced).statistic >= 0.99
    assert np.max(np.abs(full - reduced)) < 0.05  # nats per token


@pytest.mark.parametrize("native, expected", [(True, "torch.bfloat16"), (False, "torch.float32")])
def test_the_scoring_defaults_resolve_auto_and_agree(monkeypatch, native, expected):
    """The metric detectors and the quality meter's perplexity default to dtype="auto" and record what it resolves
    to; they resolve alike, so perplexity reads the detectors' pass (one model identity, issue #38)."""
    from humanize import detectors
    from humanize.quality import QualityMeter
    from humanize.quality.perplexity import Perplexity

    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: native)
    monkeypatch.setenv("HUMANIZE_DEVICE", "cpu")
    for name in ("log_likelihood", "log_rank", "entropy", "gltr", "lrr", "fast_detectgpt", "metric_lr"):
        det = detectors.get(name)
        assert det.dtype == "auto" and det.provenance()["runtime"]["dtype"] == expected, name
    for meter in (QualityMeter(), Perplexity()):
        assert meter.dtype == "auto" and meter.provenance()["runtime"]["dtype"] == expected
    assert [m.dtype for m in QualityMeter().members() if m.name in ("perplexity", "validity")] == ["auto", "auto"]
    pinned = QualityMeter(dtype="float32")
    assert pinned.provenance()["runtime"]["dtype"] == "torch.float32"
    assert (pinned.fingerprint() == QualityMeter().fingerprint()) == (not native)


@pytest.fixture(scope="module")
def tiny_llama_dir(save_tiny_llama):
    return save_tiny_llama("tiny-llama-precision", max_positions=256)


@pytest.mark.parametrize("dtype, one_row", [("float32", False), ("bfloat16", True)])
def test_every_batched_pass_runs_one_row_per_batch_in_reduced_precision(tiny_llama_dir, dtype, one_row):
    """A document's values must not depend on the rows batched with it: in bfloat16 the perplexity windows and
    the context check's rows are each run alone, as the detectors' statistics are (counted, not timed)."""
    from humanize.models import load_causal_lm
    from humanize.models.scoring import STATISTICS_CACHE, encode_for_scoring, one_row_per_batch, sequence_logprobs
    from humanize.quality.context import context_deltas

    lm = load_causal_lm(str(tiny_llama_dir), dtype=dtype)
    assert one_row_per_batch(lm) is one_row
    texts = ["The cat sat on the mat today.", "A short one.", "Rain fell on the quiet town all night long."]
    STATISTICS_CACHE.clear()
    sequence_logprobs(lm, encode_for_scoring(lm, texts)[0], batch_size=8)
    items = [(t, 4, 7, "dog") for t in texts]
    context_deltas(items, lm, packed=True)
    context_deltas(items, lm, packed=False)
    passes = STATISTICS_CACHE.passes
    for who in ("sequence", "context"):
        count = passes[who]
        assert (count["batches"] == count["rows"]) is one_row, (who, count)


@pytest.mark.parametrize("dtype, hooked", [("float32", False), ("bfloat16", True)])
def test_a_reduced_precision_head_gets_its_input_folded_not_its_weight_copied(tiny_llama_dir, dtype, hooked):
    """Asked for its last positions' logits, a bfloat16 model slices its hidden states; the output head then gets
    an input whose batch stride is the whole sequence's and torch.matmul expanded and copied the head's weight on
    every pass. The loader re-views that input (no copy): counted in the profiler's matrix products, not timed;
    the logits are those of the full pass."""
    from torch.profiler import ProfilerActivity, profile

    from humanize.models import load_causal_lm

    lm = load_causal_lm(str(tiny_llama_dir), dtype=dtype)
    net, vocab = lm.model, lm.model.config.vocab_size
    assert bool(net.get_output_embeddings()._forward_pre_hooks) is hooked
    ids = torch.tensor([[5, 17, 42, 9, 88, 31, 7, 64]])
    with torch.inference_mode():
        full = net(input_ids=ids).logits[:, -3:]
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            kept = net(input_ids=ids, logits_to_keep=3).logits
    assert torch.equal(kept, full) or torch.allclose(kept.float(), full.float(), atol=0.05)
    batched_head = [e for e in prof.events() if e.name == "aten::bmm" and any(vocab in s for s in e.input_shapes if s)]
    if hooked:
        assert not batched_head


def test_bfloat16_cosines_of_demo_pairs_agree_with_float32(minilm):
    """The cosine meter's encoder defaults to dtype="auto": on demo pairs (a text against an attacked copy and
    against another text) its bfloat16 cosines are within 0.01 of float32's (0.003 measured) and do not depend on
    the texts embedded with them, and the meter embeds a text once: a second call on the same pairs embeds
    nothing (counted)."""
    from humanize.attacks import registry
    from humanize.benchmarks.data import load_demo
    from humanize.models import load_sentence_encoder
    from humanize.quality.similarity import Cosine, semantic_similarity

    texts = load_demo(n=8, seed=0)["generation"].tolist()
    attacked = registry.get("misspelling", rate=0.2, seed=0).batch(texts)
    originals = texts + texts
    others = [a.text for a in attacked] + texts[1:] + texts[:1]
    full = semantic_similarity(originals, others, minilm)
    half_model = load_sentence_encoder("all-minilm-l6-v2", dtype="bfloat16")
    half = semantic_similarity(originals, others, half_model)
    assert np.max(np.abs(full - half)) < 0.01
    assert np.ptp(full) > 0.1  # pairs that differ: an agreement to check
    # one text per batch in bfloat16: a pair's cosine is the same alone as among the others (exactly)
    assert semantic_similarity(originals[3:4], others[3:4], half_model)[0] == half[3]

    meter = Cosine(encoder=half_model)
    calls = []
    real = half_model.model.encode
    half_model.model.encode = lambda texts, **kw: calls.append(len(texts)) or real(texts, **kw)
    try:
        first = meter.measure(originals, others)[0]["cosine"]
        again = meter.measure(originals, others)[0]["cosine"]
    finally:
        del half_model.model.encode
    assert calls == [len(set(originals + others))]  # each text once, none again
    assert np.array_equal(first, again) and np.allclose(first, half)


def test_the_cosine_meter_records_its_encoders_precision(monkeypatch):
    """The cosine member's dtype is the quality meter's ("auto" by default) and its provenance says what that
    resolves to, so a bfloat16 cosine and a float32 one never share a cache entry."""
    from humanize.quality import QualityMeter

    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: True)
    monkeypatch.setenv("HUMANIZE_DEVICE", "cpu")
    cosine = next(m for m in QualityMeter().members() if m.name == "cosine")
    assert cosine.dtype == "auto" and cosine.provenance()["runtime"]["dtype"] == "torch.bfloat16"
    pinned = next(m for m in QualityMeter(dtype="float32").members() if m.name == "cosine")
    assert pinned.provenance()["runtime"]["dtype"] == "torch.float32"
    assert "cosine" in QualityMeter().provenance().get("members", {})


def test_the_synonym_attacks_models_take_its_dtype():
    """Synonym's dtype reaches its ranking model and both context checks (the demo runs it in "auto")."""
    from humanize.attacks import registry
    from humanize.attacks.wordsub.context import ContextFit
    from humanize.benchmarks.runner.config import demo_model_attacks

    attack = registry.get("synonym", dtype="bfloat16")
    engine = attack.assemble()
    checks = [c for c in engine.constraints if isinstance(c, ContextFit)]
    assert len(checks) == 2 and {c.dtype for c in checks} == {"bfloat16"} and engine.scorer.dtype == "bfloat16"
    assert registry.get("synonym").assemble().scorer.dtype is None  # float32 unless asked
    assert attack.fingerprint() != registry.get("synonym").fingerprint()
    demo = {spec.label: spec for spec in demo_model_attacks()}
    assert demo["synonym@0.1"].params["dtype"] == "auto"


def test_in_reduced_precision_a_documents_windows_share_a_pass_and_keep_their_values(tiny_llama_dir):
    """bfloat16 runs a pass per row; the context check then lays a document's windows end to end in one sequence
    (each its own block of the mask, its own positions). The deltas are those of every variant run whole, to
    bfloat16 rounding; a document's deltas are exactly the same whatever other documents or order the call has;
    and its windows take fewer passes than one per window (counted)."""
    import random

    from humanize.models import load_causal_lm
    from humanize.models.scoring import STATISTICS_CACHE
    from humanize.quality.context import context_deltas

    lm = load_causal_lm(str(tiny_llama_dir), dtype="bfloat16")
    doc_a = ("The cat sat on the mat today. It was warm and the sun was out. Birds sang in the old tree. "
             "Later the rain came and everyone went home.")
    doc_b = "Rain fell on the quiet town all night long. By morning the river had risen over the road."

    def swaps(text, words):
        out = []
        for word, repl in words:
            start = text.index(word)
            out.append((text, start, start + len(word), repl))
        return out

    items_a = swaps(doc_a, [("cat", "dog"), ("warm", "hot"), ("sang", "sung"), ("tree", "oak"), ("rain", "snow")])
    items_b = swaps(doc_b, [("quiet", "calm"), ("river", "stream"), ("road", "street")])
    STATISTICS_CACHE.clear()
    alone = context_deltas(items_a, lm, packed=True)
    merged_passes = STATISTICS_CACHE.passes["context"]["batches"]
    whole = context_deltas(items_a, lm, packed=False)
    assert np.all(np.isfinite(alone)) and np.max(np.abs(alone - whole)) < 0.25  # nats, bfloat16 rounding
    assert merged_passes < 4  # 4 windows (the last two swaps share one): one sequence here

    mixed = items_b[:1] + items_a[:2] + items_b[1:] + items_a[2:]
    with_b = context_deltas(mixed, lm, packed=True)
    assert np.array_equal(with_b[[1, 2, 5, 6, 7]], alone)
    shuffled = list(range(len(items_a)))
    random.Random(0).shuffle(shuffled)
    again = context_deltas([items_a[k] for k in shuffled], lm, packed=True)
    assert np.array_equal(again, alone[shuffled])
