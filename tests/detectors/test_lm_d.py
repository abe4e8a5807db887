"""LM-D: fine-tuning the packaged MiniLM encoder with a classification head (TH-Bench 2.1, Task 1).
Fits are kept tiny (a few optimiser steps at 32-48 tokens) so the file runs in well under a minute."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

from humanize.detectors import NotFittedError, get
from humanize.detectors.lm_d import LMDetector, encode_labels

from ._learned_helpers import ODD_TEXTS, demo_split

SMALL = dict(max_tokens=32, batch_size=8)


@pytest.fixture(scope="module")
def sample():
    train, test = demo_split()
    train = train.sample(24, random_state=1)
    # demo machine texts continue the opening words of their human pair: sample across pairs
    return train.generation.tolist(), train.label.tolist(), test.sample(16, random_state=1).generation.tolist()


@pytest.fixture(scope="module")
def fitted(sample):
    texts, labels, _ = sample
    return LMDetector(seed=3, **SMALL).fit(texts, labels)


def test_fit_score_shape_and_range(fitted, sample):
    _, _, held_out = sample
    scores = fitted.score(held_out + ODD_TEXTS)
    assert scores.shape == (len(held_out) + len(ODD_TEXTS),) and scores.dtype == np.float64
    assert np.all((scores >= 0) & (scores <= 1))
    assert list(fitted.classes_) == ["human", "machine"]
    np.testing.assert_allclose(scores, fitted.predict_proba(held_out + ODD_TEXTS)[:, 1], atol=1e-6)
    assert fitted.n_train_ == 24 and len(fitted.train_losses_) == 3  # 24 texts / batch 8, 1 epoch
    assert fitted.score([]).shape == (0,)
    info = fitted.describe()
    assert info["detector"] == "lm_d" and info["classes"] == ["human", "machine"]


def test_same_seed_same_model_and_global_rng_untouched(fitted, sample):
    texts, labels, held_out = sample
    before = torch.random.get_rng_state()
    again = LMDetector(seed=3, **SMALL).fit(texts, labels)
    assert torch.equal(before, torch.random.get_rng_state())
    np.testing.assert_array_equal(again.train_losses_, fitted.train_losses_)
    np.testing.assert_allclose(again.score(held_out), fitted.score(held_out), atol=1e-6)
    other = LMDetector(seed=4, **SMALL).fit(texts, labels)
    assert not np.allclose(other.score(held_out), fitted.score(held_out), atol=1e-4)


def test_learns_a_separable_task():
    # two registers that an encoder tells apart at once; 3 short epochs must separate held-out examples
    animals = ["cat", "dog", "horse", "rabbit", "goat", "duck", "mouse", "sheep", "pony", "hen"]
    markets = ["shares", "bonds", "revenue", "profits", "exports", "futures", "margins", "yields", "sales", "dividends"]
    human = [f"my little {a} played happily in the sunny garden all afternoon" for a in animals]
    machine = [f"quarterly {m} rose sharply as investors priced in higher interest rates" for m in markets]
    texts = human[:7] + machine[:7]
    labels = ["human"] * 7 + ["machine"] * 7
    det = LMDetector(epochs=3, lr=3e-4, batch_size=7, max_tokens=16, seed=0).fit(texts, labels)
    scores = det.score(human[7:] + machine[7:])
    assert roc_auc_score([0, 0, 0, 1, 1, 1], scores) == 1.0
    assert det.train_losses_[-3:].mean() < det.train_losses_[:3].mean()


def test_multiclass_attribution(sample):
    train, _ = demo_split()
    rows = train.sample(24, random_state=2)
    labels = rows.model.tolist()  # "human" or the generator's name (TH-Bench Task 1)
    det = LMDetector(seed=0, **SMALL).fit(rows.generation.tolist(), labels)
    assert list(det.classes_) == sorted(set(labels))
    texts = sample[2][:6] + ODD_TEXTS
    proba = det.predict_proba(texts)
    assert proba.shape == (len(texts), len(det.classes_))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    assert set(det.predict(texts)) <= set(det.classes_)
    human = list(det.classes_).index("human")
    np.testing.assert_allclose(det.score(texts), 1 - proba[:, human], atol=1e-6)  # P(any generator)


def test_errors():
    det = get("lm_d", epochs=1)
    assert isinstance(det, LMDetector) and det.learnable
    with pytest.raises(NotFittedError, match="call fit"):
        det.score(["x"])
    with pytest.raises(NotFittedError):
        det.predict_proba(["x"])
    with pytest.raises(ValueError, match="two classes"):
        det.fit(["a", "b"], ["human", "human"])
    with pytest.raises(TypeError, match="mix"):
        encode_labels(["human", 1], 2)
    with pytest.raises(ValueError, match="3 labels for 2 texts"):
        encode_labels(["human", "machine", "human"], 2)
    with pytest.raises(ValueError, match=r"LMDetector: epochs must be an int in \[1, inf\), got 0 \(int\)"):
        LMDetector(epochs=0)
    with pytest.raises(ValueError, match="warmup_ratio"):
        LMDetector(warmup_ratio=1.0)
    with pytest.raises(ValueError, match="GGUF causal LM"):
        LMDetector(model="smollm2-135m-instruct")._model_dir()
    assert encode_labels([0, 1, 1], 3)[1].tolist() == [0, 1, 1]
    assert list(encode_labels(["gpt-4", "human", "davinci"], 3)[0]) == ["davinci", "gpt-4", "human"]


def test_attribution_without_human_class_needs_predict():
    texts = ["alpha beta gamma", "delta epsilon", "zeta eta theta", "iota kappa"]
    det = LMDetector(seed=0, max_tokens=8, batch_size=4).fit(texts, ["gpt-4", "davinci", "gpt-4", "davinci"])
    assert list(det.classes_) == ["davinci", "gpt-4"]
    with pytest.raises(ValueError, match="needs a 'human' class.*predict_proba"):
        det.score(["text"])
    assert det.predict(["text", ""])[0] in det.classes_
