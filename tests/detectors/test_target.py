"""Target: what a guided attack queries (counted queries, one lazy fit on a copy, provenance without texts)."""
import json
import pickle

import numpy as np
import pytest

from humanize.detectors import Detector, Target, TfidfLogReg, is_fitted

HUMAN = ["the cat sat on the mat and purred", "we walked home in the rain last night",
         "my brother fixed the old bike today", "she laughed when the dog stole her hat"]
MACHINE = ["furthermore it is crucial to utilize comprehensive approaches",
           "additionally robust methods facilitate notable outcomes",
           "moreover this essential framework enhances various results",
           "in conclusion numerous studies demonstrate significant benefits"]
TEXTS = HUMAN + MACHINE
LABELS = ["human"] * 4 + ["machine"] * 4
PROBES = ["it is crucial to utilize robust methods", "the dog ran home in the rain", ""]


class CountingTfidf(TfidfLogReg):
    """TF-IDF + LR that records each fit (class-wide, so clones count too)."""

    fits: list = []

    def fit(self, texts, labels):
        CountingTfidf.fits.append(len(texts))
        return super().fit(texts, labels)


class Lengths(Detector):
    """A zero-shot detector: the number of words; counts its calls."""

    name = "lengths_test"

    def __init__(self, scale: float = 1.0):
        self.scale = scale
        self.seen = []

    def score(self, texts):
        self.seen.append(list(texts))
        return np.array([self.scale * len(t.split()) for t in texts], dtype=float)


@pytest.fixture(autouse=True)
def _reset_fits():
    CountingTfidf.fits = []


def test_queries_and_calls_are_counted_and_reset():
    t = Target(Lengths())
    assert t.name == "lengths_test" and not t.learnable
    assert list(t.score(PROBES)) == [7.0, 7.0, 0.0]
    t.score(("one two",))
    assert (t.queries, t.calls) == (4, 2)
    t.reset_counts()
    assert (t.queries, t.calls) == (0, 0)
    assert t.fitted_detector() is t.detector  # zero-shot: the caller's object is the one queried
    assert t.detector.seen == [PROBES, ["one two"]]


def test_a_learnable_detector_is_fit_lazily_once_on_a_copy():
    mine = CountingTfidf(min_df=1)
    before = dict(vars(mine))
    t = Target(mine, (TEXTS, LABELS))
    assert t.learnable and not t.fitted and CountingTfidf.fits == []  # nothing fitted at construction
    first = t.score(PROBES)
    second = t.score(PROBES)
    assert CountingTfidf.fits == [8] and t.fitted
    assert np.array_equal(first, second)
    fitted = t.fitted_detector()
    assert fitted is t.fitted_detector() and fitted is not mine and is_fitted(fitted)
    assert vars(mine) == before and not is_fitted(mine)  # the caller's detector is untouched
    independent = TfidfLogReg(min_df=1).fit(TEXTS, LABELS).score(PROBES)
    assert np.array_equal(first, independent)  # the fit is the detector's own, deterministic
    assert first[0] > first[1]  # and it learned something: the machine-worded probe scores higher


def test_a_fitted_detector_is_used_as_is_and_train_only_records_it():
    fitted = CountingTfidf(min_df=1).fit(TEXTS, LABELS)
    t = Target(fitted, (TEXTS, LABELS))
    t.score(PROBES)
    assert t.fitted_detector() is fitted and CountingTfidf.fits == [8]  # no refit
    bare = Target(fitted)
    assert np.array_equal(bare.score(PROBES), t.score(PROBES))
    with pytest.raises(TypeError, match="was fitted outside the Target and train is None"):
        bare.fingerprint()  # nothing records what it learned: no fingerprint rather than a wrong one
    assert bare == bare and bare != Target(CountingTfidf(min_df=1).fit(TEXTS, LABELS))


def test_pickle_carries_the_fitted_detector_and_counts():
    t = Target(CountingTfidf(min_df=1), (TEXTS, LABELS))
    scores = t.score(PROBES)
    back = pickle.loads(pickle.dumps(t))
    assert back.fitted and (back.queries, back.calls) == (3, 1)
    assert np.array_equal(back.score(PROBES), scores)
    assert CountingTfidf.fits == [8]  # the copy did not refit
    assert back == t and hash(back) == hash(t) and back.fingerprint() == t.fingerprint()
    fresh = pickle.loads(pickle.dumps(Target(CountingTfidf(min_df=1), (TEXTS, LABELS))))
    assert not fresh.fitted and np.array_equal(fresh.score(PROBES), scores)  # unfitted: fits on arrival


def test_fingerprint_follows_the_training_set_and_never_holds_its_texts():
    base = Target(TfidfLogReg(min_df=1), (TEXTS, LABELS))
    same = Target(TfidfLogReg(min_df=1), (tuple(TEXTS), [0] * 4 + [1] * 4))  # same set, other spelling
    assert base.fingerprint() == same.fingerprint() and base == same and hash(base) == hash(same)
    as_array = Target(TfidfLogReg(min_df=1), (np.array(TEXTS), np.array(LABELS)))
    assert as_array == base and np.array_equal(as_array.score(PROBES), base.score(PROBES))
    flipped = Target(TfidfLogReg(min_df=1), (TEXTS, LABELS[:3] + ["machine", "human"] + LABELS[5:]))
    fewer = Target(TfidfLogReg(min_df=1), (TEXTS[1:], LABELS[1:]))
    other_params = Target(TfidfLogReg(min_df=2), (TEXTS, LABELS))
    prints = {t.fingerprint() for t in (base, flipped, fewer, other_params)}
    assert len(prints) == 4 and base != flipped and base != other_params
    prov = base.provenance()
    assert prov["class"] == "humanize.detectors.target.Target" and prov["version"] == Target.version
    assert prov["detector"] == TfidfLogReg(min_df=1).provenance()
    assert prov["train"]["n"] == 8 and prov["train"]["n_machine"] == 4
    dumped = json.dumps(prov) + repr(base)
    assert not any(word in dumped for word in ("purred", "furthermore", "crucial"))
    assert Target(Lengths(2.0)) == Target(Lengths(2.0)) != Target(Lengths(3.0))
    assert Target(Lengths(2.0)).fingerprint() != Target(Lengths(3.0)).fingerprint()


def test_changing_the_training_set_drops_the_fit():
    t = Target(CountingTfidf(min_df=1), (TEXTS, LABELS))
    t.score(PROBES)
    t.set_params(train=(TEXTS[1:], LABELS[1:]))
    assert not t.fitted
    t.score(PROBES)
    assert CountingTfidf.fits == [8, 7]


@pytest.mark.parametrize("args, exc, match", [
    (("tfidf_lr",), TypeError, "detector must be a Detector object"),
    ((Lengths(), (TEXTS, LABELS)), ValueError, "does not learn \\(zero-shot\\), so train must be None"),
    ((TfidfLogReg(),), ValueError, "learns and is not fitted, so it needs train=\\(texts, labels\\)"),
    ((TfidfLogReg(), TEXTS), TypeError, "train must be None or a \\(texts, labels\\) pair"),
    ((TfidfLogReg(), ("abc", "h")), TypeError, "train texts must be a sequence of str"),
    ((TfidfLogReg(), (TEXTS[:2] + [3], LABELS[:3])), TypeError, "train text 2 is int"),
    ((TfidfLogReg(), (TEXTS, LABELS[:-1])), ValueError, "got 7 labels for 8 texts"),
    ((TfidfLogReg(), (TEXTS, ["robot"] * 8)), ValueError, "label 0 is 'robot'"),
    ((TfidfLogReg(), (HUMAN, ["human"] * 4)), ValueError, "needs both human and machine texts"),
])
def test_bad_arguments_are_named(args, exc, match):
    with pytest.raises(exc, match=match):
        Target(*args)


def test_score_takes_a_sequence_of_texts():
    t = Target(Lengths())
    with pytest.raises(TypeError, match=r"Target.score expects a sequence of str .*got a single str: wrap it in a list"):
        t.score("one text")
    assert (t.queries, t.calls) == (0, 0)  # a refused call is not counted
