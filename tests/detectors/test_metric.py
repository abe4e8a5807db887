"""Metric detectors (log-likelihood, rank, log-rank, entropy, GLTR, LRR) and MetricFeaturesLR.

Scores are checked against formulas computed by hand, with plain torch, from a
tiny random model's logits; the shared-pass, batching and truncation behaviour
against forward-call counts and one-by-one runs.
"""
import math

import numpy as np
import pytest
import torch

from humanize.detectors import NotFittedError, get, lm_stats
from humanize.detectors.fast_detectgpt import FastDetectGPT
from humanize.detectors.metric import GLTR, LRR, Entropy, LogLikelihood, LogRank, Rank
from humanize.detectors.metric_lr import MetricFeaturesLR
from humanize.models import resolve_dtype

TEXTS = [
    "The cat sat on the mat.",
    "Machine text uses likely words, human text is more surprising and varied in form.",
    "Привет мир 🎉 — naïve café, 你好",
    "   ",
    "42",
]
ALL_ONE_PASS = [LogLikelihood, Rank, LogRank, Entropy, GLTR, LRR, FastDetectGPT]


def hand_scores(lm, hand, text, max_tokens=None):
    """Every metric by its formula, from plain-torch float64 logits (no padding, no cache)."""
    logits, target = hand.logits(lm, hand.ids(lm, text, max_tokens))
    logp = torch.log_softmax(logits, -1)
    lp = logp.gather(-1, target[:, None]).squeeze(-1)
    order = logits.argsort(-1, descending=True)
    rank = (order == target[:, None]).nonzero()[:, 1].double() + 1  # 1-based, via sorting
    p = logp.exp()
    ent = -(p * logp).sum(-1)
    mu = (p * logp).sum(-1)
    var = (p * logp ** 2).sum(-1) - mu ** 2
    buckets = torch.tensor([(rank <= 10).sum(), ((rank > 10) & (rank <= 100)).sum(),
                            ((rank > 100) & (rank <= 1000)).sum(), (rank > 1000).sum()]).double() / len(rank)
    return {
        LogLikelihood: lp.mean().item(),
        Rank: -rank.mean().item(),
        LogRank: -rank.log().mean().item(),
        Entropy: -ent.mean().item(),
        GLTR: buckets[0].item(),
        LRR: (-lp.mean() / rank.log().mean()).item(),
        FastDetectGPT: ((lp.sum() - mu.sum()) / var.sum().sqrt()).item(),
        "gltr_features": buckets.numpy(),
        "n": len(lp),
    }


@pytest.mark.parametrize("cls", ALL_ONE_PASS, ids=lambda c: c.__name__)
def test_scores_equal_hand_formulas(tiny_lm, hand, cls):
    got = cls(tiny_lm).score(TEXTS)
    want = [hand_scores(tiny_lm, hand, t)[cls] for t in TEXTS]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_gltr_features_are_the_four_bucket_fractions(tiny_lm, hand):
    X = GLTR(tiny_lm).feature_matrix(TEXTS)
    assert X.shape == (len(TEXTS), 4)
    np.testing.assert_allclose(X, [hand_scores(tiny_lm, hand, t)["gltr_features"] for t in TEXTS], atol=1e-12)
    np.testing.assert_allclose(X.sum(1), 1.0)


def test_gltr_uses_all_buckets_on_a_real_vocabulary(smollm):
    text = "The quick brown fox jumps over the lazy dog. Zebras quantum marmalade xylophone syzygy."
    X = GLTR(smollm, max_tokens=64).feature_matrix([text])[0]
    assert X[0] > 0 and X[3] > 0 and math.isclose(X.sum(), 1.0)


def test_all_metric_detectors_share_one_forward_pass(tiny_lm, count_forward):
    c = count_forward(tiny_lm)
    texts = TEXTS + [TEXTS[0]]  # a duplicate is computed once
    scores = {cls.__name__: cls(tiny_lm).score(texts) for cls in ALL_ONE_PASS}
    gltr4 = GLTR(tiny_lm).feature_matrix(texts)
    lr = MetricFeaturesLR(model=tiny_lm).fit(texts[:4], ["human", "machine", "human", "machine"])
    lr.score(texts)
    assert c.rows == len(set(texts))  # each distinct text went through the model exactly once
    assert c.calls == 1               # in one length-sorted batch
    assert all(np.isfinite(s).all() for s in scores.values()) and np.isfinite(gltr4).all()
    lm_stats.clear_cache()
    LogLikelihood(tiny_lm).score(texts)
    assert c.rows == 2 * len(set(texts))  # with the cache cleared, the model runs again


def test_all_metric_detectors_share_one_pass_on_smollm(smollm, count_forward):
    c = count_forward(smollm)
    texts = ["The cat sat on the mat.", "A second, rather longer sentence about detectors of generated text."]
    for cls in ALL_ONE_PASS:
        cls(smollm, max_tokens=32).score(texts)
    assert c.rows == 2


def test_batched_padded_sorted_equals_one_by_one(tiny_lm, count_forward):
    texts = [t * k for t, k in zip(TEXTS, (3, 1, 2, 5, 4))]  # different lengths, unsorted
    c = count_forward(tiny_lm)
    batched = {cls: cls(tiny_lm, batch_tokens=10_000).score(texts) for cls in ALL_ONE_PASS}
    assert c.calls == 1
    lm_stats.clear_cache()
    single = {cls: np.array([cls(tiny_lm).score([t])[0] for t in texts]) for cls in ALL_ONE_PASS}
    lm_stats.clear_cache()
    c.calls = 0
    tiny_batches = {cls: cls(tiny_lm, batch_tokens=1).score(texts) for cls in ALL_ONE_PASS}
    assert c.calls == len(texts)
    for cls in ALL_ONE_PASS:
        np.testing.assert_allclose(batched[cls], single[cls], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(tiny_batches[cls], single[cls], rtol=1e-5, atol=1e-5)


def test_max_tokens_truncates(tiny_lm, hand):
    text = "The cat sat on the mat. " * 20
    stats = lm_stats.LMStatistics(tiny_lm, max_tokens=7).compute([text, "cat"])
    assert stats[0].n_tokens == 7 and stats[0].truncated
    assert not stats[1].truncated and stats[1].n_tokens == len(hand.ids(tiny_lm, "cat")) - 1
    for cls in (LogLikelihood, LRR, FastDetectGPT):
        got = cls(tiny_lm, max_tokens=7).score([text])[0]
        assert got == pytest.approx(hand_scores(tiny_lm, hand, text, max_tokens=7)[cls], rel=2e-5, abs=1e-6)
    assert LogLikelihood(tiny_lm, max_tokens=7).score([text])[0] != pytest.approx(
        LogLikelihood(tiny_lm, max_tokens=64).score([text])[0], rel=1e-4)


def test_odd_but_valid_texts(tiny_lm):
    huge = "word " * 40_000 + "🎉" * 1000
    with pytest.warns(RuntimeWarning, match="1 of 5 texts have no token to score"):
        s = LogLikelihood(tiny_lm, max_tokens=16).score(["", " ", "\n\t", "🎉🙂", huge])
    assert np.isnan(s[0]) and np.isfinite(s[1:]).all()


def test_empty_batch_gives_empty_array(tiny_lm):
    assert LogLikelihood(tiny_lm).score([]).shape == (0,)


def test_cache_is_bounded(tiny_lm):
    lm_stats.set_cache_size(2)
    try:
        lm_stats.LMStatistics(tiny_lm).compute(["a", "b", "c"])
        assert lm_stats.cache_info()["size"] == 2
    finally:
        lm_stats.set_cache_size(lm_stats.DEFAULT_CACHE_SIZE)
    with pytest.raises(ValueError, match=r"set_cache_size: maxsize must be an int in \[0, inf\), got -1"):
        lm_stats.set_cache_size(-1)


def test_bad_inputs_raise_clear_errors(tiny_lm):
    det = LogLikelihood(tiny_lm)
    with pytest.raises(TypeError, match="single str"):
        det.score("just one text")
    with pytest.raises(TypeError, match="item 1 is int"):
        det.score(["ok", 3])
    with pytest.raises(TypeError, match="got NoneType"):
        det.score(None)
    with pytest.raises(ValueError, match=r"LogLikelihood: max_tokens must be an int in \[1, inf\), got .* \(int\)"):
        LogLikelihood(tiny_lm, max_tokens=0)
    with pytest.raises(TypeError, match=r"Rank: max_tokens must be an int in \[1, inf\), got .* \(str\)"):
        Rank(tiny_lm, max_tokens="512")
    with pytest.raises(TypeError, match=r"GLTR: batch_tokens must be an int in \[1, inf\) or None, got .* \(float\)"):
        GLTR(tiny_lm, batch_tokens=1.5)
    with pytest.raises(TypeError, match=r"Entropy: model must be a model name or path \(not blank\), or a loaded model, got 3 \(int\)"):
        Entropy(3)
    with pytest.raises(ValueError, match=r"Entropy: model must be a model name or path \(not blank\), or a loaded model, got ' ' \(str\)"):
        Entropy(" ")
    with pytest.raises(ValueError, match="unknown detector 'perplexity'; available: .*log_likelihood"):
        get("perplexity")


def test_registry_builds_every_metric_detector(tiny_lm):
    names = {"log_likelihood": LogLikelihood, "rank": Rank, "log_rank": LogRank, "entropy": Entropy,
             "gltr": GLTR, "lrr": LRR, "fast_detectgpt": FastDetectGPT, "metric_lr": MetricFeaturesLR}
    for key, cls in names.items():
        det = get(key, model=tiny_lm, max_tokens=8)
        assert type(det) is cls and det.name == key and det.get_params()["max_tokens"] == 8
    assert get("binoculars").name == "binoculars"
    with pytest.raises(ValueError, match="has no parameter.*temperature"):
        get("gltr", temperature=2)


def test_params_repr_and_describe_record_the_model(tiny_lm, tiny_dirs):
    det = LogRank(tiny_dirs["a"], max_tokens=100)
    assert det.get_params() == {"model": tiny_dirs["a"], "max_tokens": 100, "batch_tokens": None,
                                "device": None, "dtype": "auto"}
    assert repr(det).startswith("LogRank(model=") and "max_tokens=100" in repr(det)
    assert det.describe()["scoring_model"]["loaded"] is False
    det.score(["hello"])
    info = det.describe()
    assert info["detector"] == "log_rank" and info["scoring_model"]["resolved"] == tiny_lm.resolved
    # "auto": the precision this CPU runs natively (humanize.models.precision), recorded as resolved
    assert info["scoring_model"]["dtype"] == str(resolve_dtype("auto", torch.device("cpu")))


def test_fluent_text_scores_more_machine_like_than_shuffled_words(smollm):
    fluent = "The committee met on Tuesday to discuss the new budget, and most members agreed with the plan."
    rng = np.random.default_rng(0)
    words = fluent.split()
    shuffled = " ".join(rng.permutation(words))
    for cls in (LogLikelihood, LogRank, FastDetectGPT, GLTR):
        s = cls(smollm, max_tokens=64).score([fluent, shuffled])
        assert s[0] > s[1], cls.__name__


# -- MetricFeaturesLR: the trained protocol ----------------------------------------------------------------


def test_metric_lr_equals_sklearn_on_hand_features(tiny_lm, hand):
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    train = [f"{w} sat on the mat number {i}." for i, w in enumerate(["cat", "dog", "bird", "cow", "hen", "fox"])]
    y = np.array([0, 1, 0, 1, 0, 1])
    feats = ["log_likelihood", "gltr", "lrr"]
    det = MetricFeaturesLR(features=feats, model=tiny_lm, C=0.5).fit(train, y)
    assert det.feature_names_ == ["log_likelihood", "gltr_rank_le_10", "gltr_rank_le_100", "gltr_rank_le_1000",
                                  "gltr_rank_gt_1000", "lrr"]

    def row(t):
        h = hand_scores(tiny_lm, hand, t)
        return np.concatenate([[h[LogLikelihood]], h["gltr_features"], [h[LRR]]])

    X = np.array([row(t) for t in train])
    scaler = StandardScaler().fit(X)
    ref = LogisticRegression(C=0.5, max_iter=1000).fit(scaler.transform(X), y)
    test = TEXTS[:3]
    want = ref.predict_proba(scaler.transform(np.array([row(t) for t in test])))[:, 1]
    np.testing.assert_allclose(det.score(test), want, rtol=1e-4, atol=1e-6)


def test_metric_lr_learns_on_real_texts(smollm):
    """Trained protocol on demo pairs (split by pair: a machine text continues its human text's first words)."""
    from sklearn.metrics import roc_auc_score

    from humanize.benchmarks.data import load_demo

    df = load_demo(n=20, seed=0)
    keys = list(zip(df["generator"], df["domain"], df["pair"]))
    train_keys = set(sorted(set(keys))[::2])
    tr = np.array([k in train_keys for k in keys])
    texts = np.array(df["generation"].tolist(), dtype=object)
    y = (df["label"] == "machine").to_numpy()
    train, test = list(texts[tr]), list(texts[~tr])
    one = MetricFeaturesLR(features=["log_likelihood"], model=smollm, max_tokens=64).fit(train, y[tr])
    assert one.classifier_[-1].coef_[0, 0] > 0  # the data agree: higher log-likelihood = machine
    zero_shot = roc_auc_score(y[~tr], LogLikelihood(smollm, max_tokens=64).score(test))
    assert roc_auc_score(y[~tr], one.score(test)) == pytest.approx(zero_shot)  # monotone in the one feature
    full = MetricFeaturesLR(model=smollm, max_tokens=64).fit(train, y[tr])
    assert len(full.feature_names_) == 10 and roc_auc_score(y[~tr], full.score(test)) > 0.6


def test_metric_lr_errors(tiny_lm):
    det = MetricFeaturesLR(model=tiny_lm)
    with pytest.raises(NotFittedError, match="must be fit"):
        det.score(["a"])
    with pytest.raises(ValueError, match="unknown metric feature 'perplexity'; available: log_likelihood"):
        MetricFeaturesLR(features=["perplexity"])
    with pytest.raises(TypeError, match="wrap it in a list"):
        MetricFeaturesLR(features="gltr")
    with pytest.raises(ValueError, match="features is empty"):
        MetricFeaturesLR(features=[])
    with pytest.raises(ValueError, match=r"MetricFeaturesLR: C must be a number in \(0, inf\), got 0 \(int\)"):
        MetricFeaturesLR(C=0)
    with pytest.raises(ValueError, match="both human and machine"):
        det.fit(["a", "b"], ["human", "human"])
    with pytest.raises(ValueError, match="got 1 labels for 2 texts"):
        det.fit(["a", "b"], ["human"])
    with pytest.raises(ValueError, match=r"empty or unscorable texts at indices \[1\]"):
        det.fit(["a", "", "c"], [0, 1, 1])
    det.fit(["a b", "c d", "e f"], [0, 1, 1])
    with pytest.warns(RuntimeWarning, match="no finite features"):
        s = det.score(["", "x y"])
    assert np.isnan(s[0]) and 0 <= s[1] <= 1


def test_reducers_on_handmade_statistics():
    from humanize.detectors.metric import LRR_MIN_LOG_RANK, reduce_statistics

    rank = np.array([1, 10, 11, 100, 101, 1000, 1001, 50_000])
    lp = -np.arange(1.0, 9.0)
    s = lm_stats.TextStatistics(token_ids=np.arange(8), logprob=lp, rank=rank, entropy=np.full(8, 2.0),
                                expected_logprob=np.full(8, -3.0), logprob_var=np.full(8, 0.5), truncated=False)
    X = reduce_statistics([s], ["log_likelihood", "rank", "log_rank", "entropy", "gltr", "lrr", "fast_detectgpt"])[0]
    np.testing.assert_allclose(X[:4], [-4.5, -rank.mean(), -np.log(rank).mean(), -2.0])
    np.testing.assert_allclose(X[4:8], [2 / 8, 2 / 8, 2 / 8, 2 / 8])  # bucket bounds are inclusive
    np.testing.assert_allclose(X[8], 4.5 / np.log(rank).mean())
    np.testing.assert_allclose(X[9], (lp.sum() + 24.0) / np.sqrt(4.0))
    all_top = lm_stats.TextStatistics(token_ids=np.arange(2), logprob=np.array([-0.1, -0.3]), rank=np.ones(2, int),
                                      entropy=np.ones(2), expected_logprob=-np.ones(2), logprob_var=np.zeros(2),
                                      truncated=False)
    lrr, fdg = reduce_statistics([all_top], ["lrr", "fast_detectgpt"])[0]
    assert lrr == pytest.approx(0.2 / LRR_MIN_LOG_RANK) and np.isnan(fdg)  # zero variance: undefined
