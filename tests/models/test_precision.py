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
