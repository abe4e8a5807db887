"""FunctionDetector: any callable texts -> scores (or a subclass with predict) as a detector."""

from __future__ import annotations

import copy
import functools
import importlib
import pickle
import sys

import numpy as np
import pytest
from sklearn.base import clone

from humanize import detectors
from humanize.detectors import FunctionDetector

HERE = __name__  # the import path of this module, e.g. tests.detectors.test_function_detector
TEXTS = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g"]
CALLS: list[list[str]] = []


def length_score(texts):
    """A module-level scorer: the length of each text (recorded, so tests see the batches)."""
    CALLS.append(list(texts))
    return [len(t) / 10 for t in texts]


def vowel_score(texts, weight=2.0):
    return np.array([weight * sum(c in "aeiou" for c in t) for t in texts])


class Scorer:
    def __init__(self, offset):
        self.offset = offset

    def __call__(self, texts):
        return [self.offset + len(t) for t in texts]

    def method(self, texts):
        return [self.offset for _ in texts]


class Thresholded(FunctionDetector):
    """The subclass form: its own parameter, predict instead of fn."""

    name = "thresholded_test"

    def __init__(self, threshold: int = 3, batch_size: int = 64, fn_version=None):
        self.threshold = threshold
        super().__init__(batch_size=batch_size, fn_version=fn_version)

    def predict(self, texts):
        return [float(len(t) > self.threshold) for t in texts]


@pytest.fixture(autouse=True)
def _fresh_calls():
    CALLS.clear()
    yield
    CALLS.clear()


# -- scoring -----------------------------------------------------------------------------------
def test_scores_in_input_order_in_batches():
    det = FunctionDetector(length_score, batch_size=3)
    scores = det.score(TEXTS)
    assert scores.dtype == np.float64 and scores.shape == (7,)
    np.testing.assert_allclose(scores, [len(t) / 10 for t in TEXTS])
    assert [len(c) for c in CALLS] == [3, 3, 1] and sum(CALLS, []) == TEXTS
    CALLS.clear()
    assert det.score([]).shape == (0,) and CALLS == []  # nothing to score: no call
    np.testing.assert_allclose(FunctionDetector(length_score, batch_size=1).score(TEXTS), scores)
    assert len(CALLS) == 7


def test_arrays_ints_and_bools_are_scores():
    np.testing.assert_allclose(FunctionDetector(vowel_score).score(["aei", "xyz"]), [6.0, 0.0])
    np.testing.assert_allclose(FunctionDetector(lambda t: [len(x) > 1 for x in t]).score(["a", "ab"]), [0.0, 1.0])
    np.testing.assert_allclose(FunctionDetector(lambda t: (np.float32(0.5),) * len(t)).score(["a"]), [0.5])


@pytest.mark.parametrize("output, match", [
    (lambda t: [0.5] * (len(t) - 1), r"returned 1 scores for a batch of 2 texts"),
    (lambda t: np.zeros((len(t), 2)), r"shape \(2, 2\).*proba\[:, 1\]"),
    (lambda t: None, r"returned None for a batch of 2 texts"),
    (lambda t: 0.7, r"returned a float \(0.7\)"),
    (lambda t: "0.5 0.5", r"returned a str"),
    (lambda t: {"scores": [1, 2]}, r"returned a dict"),
    (lambda t: (x for x in [1, 2]), r"returned a generator"),
    (lambda t: [0.1, "high"], r"returned a str \('high'\) as the score of text 1"),
    (lambda t: [0.1, None], r"returned None as the score of text 1"),
    (lambda t: [0.1, float("nan")], r"returned nan as the score of text 1 \(1 non-finite"),
    (lambda t: [float("inf"), 1.0], r"returned inf as the score of text 0"),
    (lambda t: [1j, 2j], r"returned a complex"),
])
def test_bad_output_is_a_clear_error(output, match):
    det = FunctionDetector(output, name="my_api")
    with pytest.raises(ValueError, match=match) as info:
        det.score(["one", "two"])
    msg = str(info.value)
    assert "'my_api'" in msg and "<lambda>" in msg and "one finite number per text" in msg and "\n" not in msg


def test_bad_output_names_the_global_text_index():
    det = FunctionDetector(lambda t: [float("nan") if x == "bad" else 0.0 for x in t], batch_size=2)
    with pytest.raises(ValueError, match="score of text 4"):
        det.score(["a", "b", "c", "d", "bad"])


def test_bad_arguments():
    with pytest.raises(TypeError, match=r"give fn= .*or subclass FunctionDetector and define predict"):
        FunctionDetector()
    with pytest.raises(TypeError, match=r"FunctionDetector: fn must be a callable or a str or None, got 3 \(int\)"):
        FunctionDetector(3)
    with pytest.raises(ValueError, match="import path 'package.module:function'"):
        FunctionDetector("not a path")
    with pytest.raises(ValueError, match="no module named 'no_such_module_xyz'"):
        FunctionDetector("no_such_module_xyz:score")
    with pytest.raises(ValueError, match="has no attribute 'nope'"):
        FunctionDetector(f"{HERE}:nope")
    with pytest.raises(TypeError, match="fn must be callable.*from 'tests"):
        FunctionDetector(f"{HERE}:TEXTS")
    for bad in ("", "  ", 3):
        with pytest.raises(TypeError, match="name must be a non-blank str or None, got "):
            FunctionDetector(length_score, name=bad)
    with pytest.raises(ValueError, match=r"batch_size must be an int in \[1, inf\), got 0 \(int\)"):
        FunctionDetector(length_score, batch_size=0)
    with pytest.raises(TypeError, match=r"batch_size must be an int in \[1, inf\), got True \(bool\)"):
        FunctionDetector(length_score, batch_size=True)
    with pytest.raises(TypeError, match=r"fn_version must be a non-blank str or None, got 2 \(int\)"):
        FunctionDetector(length_score, fn_version=2)
    with pytest.raises(TypeError, match="Thresholded defines predict.*not both"):
        bare = Thresholded.__new__(Thresholded)
        bare.threshold = 3  # its own parameter is set before FunctionDetector.__init__ validates them all
        FunctionDetector.__init__(bare, fn=length_score)
    det = FunctionDetector(length_score)
    with pytest.raises(TypeError, match="single str"):
        det.score("one text")
    with pytest.raises(ValueError, match="batch_size"):
        det.set_params(batch_size=-1)
    assert det.batch_size == 64  # rolled back


# -- naming it: import path, registry, subclass ---------------------------------------------------
def test_import_path_and_registry():
    by_path = detectors.get("function", fn=f"{HERE}:length_score", batch_size=4).set_params(name="lengths")
    by_object = FunctionDetector(length_score, name="lengths", batch_size=4)
    assert isinstance(by_path, FunctionDetector) and by_path.name == "lengths"
    np.testing.assert_allclose(by_path.score(TEXTS), by_object.score(TEXTS))
    assert by_path.fingerprint() == by_object.fingerprint()  # one function, however it is named
    assert by_path.provenance()["function"]["path"] == f"{HERE}:length_score"
    assert FunctionDetector(length_score).name == "function" and detectors.resolve("function") is FunctionDetector
    assert by_path.needs_model is False


def test_subclass_with_predict(monkeypatch):
    det = Thresholded(threshold=2, batch_size=2)
    assert det.name == "thresholded_test" and det.fn is None
    np.testing.assert_allclose(det.score(["a", "abc", "abcd"]), [0.0, 1.0, 1.0])
    assert det.get_params() == {"threshold": 2, "batch_size": 2, "fn_version": None}
    prov = det.provenance()
    assert prov["class"] == f"{HERE}.Thresholded" and prov["params"]["threshold"] == 2
    assert prov["function"]["path"] == f"{HERE}:Thresholded" and len(prov["function"]["source"]) == 1
    assert Thresholded(threshold=2, batch_size=2).fingerprint() == det.fingerprint()
    assert Thresholded(threshold=3, batch_size=2).fingerprint() != det.fingerprint()
    monkeypatch.setitem(detectors.registry._REGISTRY, "thresholded_test", Thresholded)
    built = detectors.get("thresholded_test", threshold=2, batch_size=2)
    assert built.fingerprint() == det.fingerprint()

    class Local(FunctionDetector):
        def predict(self, texts):
            return [0.0] * len(texts)

    with pytest.raises(TypeError, match=r"Local is defined inside a function.*pass fn_version="):
        Local().fingerprint()
    assert Local(fn_version="local-1").fingerprint() != Local(fn_version="local-2").fingerprint()


# -- the fingerprint rule ------------------------------------------------------------------------
def test_fingerprint_needs_identifiable_code_or_an_explicit_version(monkeypatch):
    namespace: dict = {}
    exec("def generated(texts):\n    return [0.0] * len(texts)\n", namespace)  # no source file to read
    generated = namespace["generated"]
    generated.__module__ = HERE
    monkeypatch.setattr(sys.modules[HERE], "generated", generated, raising=False)

    def make(k):
        def scorer(texts):
            return [k] * len(texts)
        return scorer

    cases = {
        "is a lambda": lambda t: [0] * len(t),
        "is defined inside a function": make(1),
        "is a bound method": Scorer(1).method,
        "is a Scorer object": Scorer(1),
        "is a partial object": functools.partial(vowel_score, weight=1.0),
        "has no readable source code": generated,
        "is a builtin_function_or_method object": len,
    }
    for why, fn in cases.items():
        with pytest.raises(TypeError, match=rf"needs a module-level function.*{why}.*pass fn_version='...'"):
            FunctionDetector(fn, name="x").fingerprint()
        vouched = FunctionDetector(fn, name="x", fn_version="2024-06")
        assert vouched.fingerprint() != FunctionDetector(fn, name="x", fn_version="2024-07").fingerprint()
        assert "0x" not in repr(vouched.provenance())  # no memory address: stable across processes
    # closures over different (serialisable) values never share a key, even under one version
    one, two = (FunctionDetector(make(k), fn_version="v").fingerprint() for k in (1, 2))
    assert one != two and one == FunctionDetector(make(1), fn_version="v").fingerprint()
    # default values are part of it too
    assert FunctionDetector(vowel_score).provenance()["function"]["defaults"] == [2]


def test_fingerprint_changes_with_the_source(tmp_path, monkeypatch):
    module = tmp_path / "user_scorer_fp.py"
    module.write_text("def score(texts):\n    return [1.0 for t in texts]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("user_scorer_fp")
    try:
        before = FunctionDetector("user_scorer_fp:score")
        fp1 = before.fingerprint()
        assert FunctionDetector(mod.score).fingerprint() == fp1
        module.write_text("def score(texts):\n    return [float(len(t)) for t in texts]\n")
        importlib.reload(mod)
        after = FunctionDetector("user_scorer_fp:score")
        assert after.score(["abc"])[0] == 3.0
        assert after.fingerprint() != fp1  # other code: no cached score of the old function is reused
    finally:
        sys.modules.pop("user_scorer_fp", None)


def test_params_differ_in_the_fingerprint():
    base = FunctionDetector(length_score).fingerprint()
    assert FunctionDetector(length_score, name="other").fingerprint() != base
    assert FunctionDetector(length_score, fn_version="2").fingerprint() != base
    assert FunctionDetector(length_score).version == "1"  # the outputs' version, a str as for every detector

    class Bumped(Thresholded):
        version = "2"  # a subclass bumps its own version, as any detector does

    assert Bumped(fn_version="t").provenance()["version"] == "2"
    assert Bumped(fn_version="t").fingerprint() != Thresholded(fn_version="t").fingerprint()
    assert FunctionDetector(vowel_score).fingerprint() != base


# -- copies ----------------------------------------------------------------------------------
def test_pickle_copy_and_clone():
    for det in (FunctionDetector(length_score, name="l", batch_size=2), FunctionDetector(f"{HERE}:vowel_score"),
                Thresholded(threshold=1)):
        twin = pickle.loads(pickle.dumps(det))
        np.testing.assert_allclose(twin.score(TEXTS), det.score(TEXTS))
        assert twin.fingerprint() == det.fingerprint() == clone(det).fingerprint() == copy.deepcopy(det).fingerprint()
        assert repr(twin) == repr(det)
    assert "vowel_score" in FunctionDetector(vowel_score).describe()["function"]
