"""Incremental (key/value-cached) scoring of growing texts equals full re-scoring, on tiny random Llamas
(plumbing only: their scores mean nothing), with and without a reference model and a BOS token."""
import warnings

import numpy as np
import pytest

from humanize.detectors import Target
from humanize.detectors.binoculars import Binoculars
from humanize.detectors.fast_detectgpt import FastDetectGPT
from humanize.detectors.lm_incremental import IncrementalStatistics
from humanize.detectors.metric import GLTR, LogRank
from humanize.detectors.metric_lr import MetricFeaturesLR
from humanize.exceptions import InvalidParameterError

from .conftest import _CORPUS, _save_tiny_llama, _train_tokenizer

# committed texts, one per step: words grow letter by letter (BPE re-merges at the end), then a rewrite
STEPS = ["", "T", "The", "The c", "The cat", "The cat sat", "The cat sat on the mat.", "The cat sat on the mat. Mach",
         "The cat sat on the mat. Machine-gen", "Numbers like 42", "Numbers like 42, 3.14 and"]
TAILS = ["", "e", " dog", "ine", ".", " 2024!", "é", " the"]
#: The two paths agree to float32 rounding (rtol 1e-4); the detectors' default, dtype="auto", is bfloat16 on a
#: CPU with bfloat16 instructions, where they agree only to bfloat16 rounding (about 1e-3): pinned here.
F32 = "float32"


def _walk(det, scorer, row=0):
    """Commit each step's text, score its candidates both ways; the largest relative difference."""
    scorer.start([row])
    worst = 0.0
    for text in STEPS:
        scorer.commit(row, text)
        cands = [text + t for t in TAILS if (text + t).strip()]
        inc = scorer.score_candidates(row, cands)
        with warnings.catch_warnings():  # an undefined score warns on the full path
            warnings.simplefilter("ignore", RuntimeWarning)
            full = det.score(cands)
        assert np.array_equal(np.isfinite(inc), np.isfinite(full)), (text, inc, full)
        ok = np.isfinite(full)
        np.testing.assert_allclose(inc[ok], full[ok], rtol=1e-4, atol=1e-6, err_msg=text)
        worst = max([worst] + (np.abs(inc[ok] - full[ok]) / np.maximum(np.abs(full[ok]), 1e-6)).tolist())
    return worst


@pytest.mark.parametrize("make", [
    lambda d: FastDetectGPT(d["a"], dtype=F32),
    lambda d: FastDetectGPT(d["a"], reference_model=d["b"], dtype=F32),
    lambda d: LogRank(d["a"], dtype=F32),
    lambda d: GLTR(d["a"], max_tokens=6, dtype=F32),  # the cap: tokens past the 6th change nothing
    lambda d: Binoculars(observer=d["a"], performer=d["b"]),
], ids=["fast_detectgpt", "fast_detectgpt_ref", "log_rank", "gltr_max6", "binoculars"])
def test_incremental_scores_equal_full_rescoring(tiny_dirs, make):
    det = make(tiny_dirs)
    scorer = det.incremental_scorer()
    _walk(det, scorer)
    counts = scorer.counts(0)
    assert counts["texts"] == sum(bool((s + t).strip()) for s in STEPS for t in TAILS)
    # short tails only: far fewer token positions than the candidates' own tokens (what re-scoring runs)
    full_tokens = sum(len(det._statistics_models()[0].tokenizer(s + t)["input_ids"]) + 1
                      for s in STEPS for t in TAILS if (s + t).strip()) if not isinstance(det, Binoculars) else None
    n_models = 2 if isinstance(det, Binoculars) or getattr(det, "reference_model", None) else 1
    if full_tokens is not None:
        assert counts["forward_tokens"] < full_tokens * n_models / 2
    assert counts["rescored"] < counts["texts"] / 4  # the rewrite step (and the first texts) only


def test_without_bos_and_a_fitted_learner(tiny_dirs, tmp_path):
    from humanize.models import load_causal_lm

    tok = _train_tokenizer(300)
    tok.bos_token = None
    lm = load_causal_lm(_save_tiny_llama(tmp_path / "nobos", tok, seed=4))
    assert lm.tokenizer.bos_token_id is None
    _walk(FastDetectGPT(lm), FastDetectGPT(lm).incremental_scorer())
    lr = MetricFeaturesLR(features=["log_rank", "entropy"], model=tiny_dirs["a"], dtype=F32).fit(_CORPUS * 2, [0, 1] * 4)
    target = Target(lr)
    scorer = target.incremental_scorer()
    _walk(lr, scorer)
    assert target.queries == scorer.counts(0)["texts"] and target.calls == len(STEPS)


def test_rows_are_independent_and_checked(tiny_dirs):
    det = FastDetectGPT(tiny_dirs["a"], dtype=F32)
    one = det.incremental_scorer()
    one.start(["x"])
    one.commit("x", "The cat sat")
    alone = one.score_candidates("x", ["The cat sat on", "The cat sat."])
    two = det.incremental_scorer()
    two.start(["y", "x"])
    two.commit("y", "Numbers like 42")
    two.extend("x", "The cat")
    two.extend("x", " sat")
    got = two.score_steps([("y", ["Numbers like 42,"]), ("x", ["The cat sat on", "The cat sat."])])
    np.testing.assert_allclose(got[1], alone, rtol=1e-6)
    with pytest.raises(KeyError, match="row 'z' was not started"):
        two.commit("z", "a")
    with pytest.raises(InvalidParameterError, match="hold must be"):
        IncrementalStatistics(det._scoring_lm(), hold=-1)
    assert Target(det).incremental_scorer() is not None


@pytest.mark.parametrize("make", [lambda d: FastDetectGPT(d["a"], dtype=F32),
                                  lambda d: Binoculars(observer=d["a"], performer=d["b"])],
                         ids=["one_model", "two_models"])
def test_one_forward_pass_per_model_per_step(tiny_dirs, make):
    """A decode that only appends: the committed text's new stable tokens ride along in the candidates' pass,
    so each step costs ONE pass per model (issue #23: two passes per step were the token mode's overhead)."""
    det = make(tiny_dirs)
    n_models = 2 if isinstance(det, Binoculars) else 1
    scorer = det.incremental_scorer()
    scorer.start([0])
    words = "The cat sat on the mat and then the dog sat on the cat while numbers like 42 went by".split()
    text, worst = "", 0.0
    for w in words:
        text = (text + " " + w).strip()
        scorer.commit(0, text)
        cands = [text + t for t in (" the", ".", " and", ",")]
        inc = scorer.score_candidates(0, cands)
        np.testing.assert_allclose(inc, det.score(cands), rtol=1e-4, atol=1e-6, err_msg=text)
    counts = scorer.counts(0)
    assert counts["rescored"] == 0
    # the first commit runs its tokens alone (nothing cached yet), then one pass per model per step
    assert counts["forward_passes"] == (len(words) + 1) * n_models, counts


def test_a_cache_that_cannot_be_cut_back_runs_the_committed_tokens_alone(tiny_dirs, monkeypatch):
    """A sliding-window or recurrent cache cannot be cut back to the stable tokens: the committed tokens then run in
    a pass of their own before the candidates' (two passes per step), with the same scores."""
    from humanize.detectors import lm_incremental

    monkeypatch.setattr(lm_incremental, "_croppable", lambda cache: False)
    det = FastDetectGPT(tiny_dirs["a"], dtype=F32)
    scorer = det.incremental_scorer()
    scorer.start([0])
    words = "The cat sat on the mat and then the dog".split()
    text = ""
    for w in words:
        text = (text + " " + w).strip()
        scorer.commit(0, text)
        cands = [text + t for t in (" the", ".")]
        np.testing.assert_allclose(scorer.score_candidates(0, cands), det.score(cands), rtol=1e-4, atol=1e-6)
    assert scorer.counts(0)["forward_passes"] > len(words) + 1
