"""Declared parameter constraints (humanize.validation, issue #21 §1): the framework and every attack's use of it."""

import inspect
import math
from numbers import Integral, Real

import numpy as np
import pytest

from humanize import attacks
from humanize.params import ParamsMixin
from humanize.validation import (HasMethods, InstanceOf, Interval, Options, SequenceOf, check_text, check_texts,
                                  make_constraint, validate_parameter_constraints)
from humanize.exceptions import InvalidParameterError


# -- constraints -------------------------------------------------------------------------------
def test_integral_interval_takes_ints_and_numpy_ints_never_bools_or_floats():
    c = Interval(Integral, 1, None)
    assert c.describe() == "an int in [1, inf)"
    for ok in (1, 7, np.int64(3), np.int8(1), 10**30):
        assert c.is_satisfied_by(ok), ok
    for bad in (0, -1, True, np.bool_(True), 1.0, np.float64(2), "2", None, math.inf):
        assert not c.is_satisfied_by(bad), bad


def test_real_interval_bounds_and_closure():
    c = Interval(Real, 0, 1, closed="right")
    assert c.describe() == "a number in (0, 1]"
    assert c.is_satisfied_by(1) and c.is_satisfied_by(np.float32(0.5)) and c.is_satisfied_by(np.int64(1))
    for bad in (0, 0.0, 1.0001, -0.1, True, False, float("nan"), np.float64("nan"), "0.5", None):
        assert not c.is_satisfied_by(bad), bad
    assert Interval(Real, 0, 1, closed="neither").describe() == "a number in (0, 1)"
    assert Interval(Real, 0, 1, closed="left").is_satisfied_by(0) and not Interval(Real, 0, 1, closed="left").is_satisfied_by(1)
    assert not Interval(Real, 0, None).is_satisfied_by(math.inf)  # an unbounded side is open
    assert Interval(Real, 0, math.inf).is_satisfied_by(math.inf)  # a closed infinite bound takes it
    assert Interval(Real, None, None).describe() == "a number"
    with pytest.raises(ValueError):
        Interval(Real, 1, 0)
    with pytest.raises(ValueError):
        Interval(Real, 0, 1, closed="open")
    with pytest.raises(TypeError):
        Interval(str, 0, 1)


def test_options_instance_of_has_methods_sequence_of():
    o = Options(str, ("alternate", "random"))
    assert o.describe() == "one of 'alternate', 'random'"
    assert o.is_satisfied_by("random") and not o.is_satisfied_by("greedy") and not o.is_satisfied_by(["random"])
    assert not Options(int, (0, 1)).is_satisfied_by(True)  # a bool is no int option
    i = InstanceOf(int, float)
    assert i.describe() == "an int or a float" and i.is_satisfied_by(2.0) and not i.is_satisfied_by(True)
    lazy = InstanceOf("humanize.attacks.base:Attack", name="an Attack")
    assert lazy.describe() == "an Attack" and lazy.is_satisfied_by(attacks.Homoglyph()) and not lazy.is_satisfied_by(3)
    h = HasMethods("score", "fit")
    assert h.describe() == "an object with .score(), .fit()"

    class Both:
        def score(self): ...

        def fit(self): ...

    assert h.is_satisfied_by(Both()) and not h.is_satisfied_by(Both) and not h.is_satisfied_by(object())
    s = SequenceOf("str", nonempty=True)
    assert s.is_satisfied_by(["a"]) and s.is_satisfied_by(("a", "b"))
    assert not s.is_satisfied_by([]) and not s.is_satisfied_by("ab") and not s.is_satisfied_by(["a", 1])


@pytest.mark.parametrize("spec, good, bad", [
    ("boolean", [True, False, np.bool_(True)], [1, 0, "yes", None]),
    ("str", ["", "a"], [b"a", 1, None]),
    ("nonempty str", ["a"], ["", b"a", None]),
    ("seed", [0, -3, np.int32(5), 2**70], [1.0, True, np.bool_(False), "1", None]),
    ("callable", [len, lambda: 1], [1, "len"]),
    ("model", ["gpt2", __import__("pathlib").Path("m")], [3, None, object(), "", "  "]),
    ("sequence of str", [[], ["a"], ("a", "b")], ["a", ["a", 1], {"a"}]),
    (None, [None], [0, ""]),
])
def test_string_shorthands(spec, good, bad):
    c = make_constraint(spec)
    for v in good:
        assert c.is_satisfied_by(v), (spec, v)
    for v in bad:
        assert not c.is_satisfied_by(v), (spec, v)


def test_a_loaded_model_is_a_model():
    class Loaded:
        model = object()
        resolved = "org/model"

    assert make_constraint("model").is_satisfied_by(Loaded())


def test_one_model_name_rule():
    """The ``"model"`` shorthand is :data:`MODEL` itself (issue #36: a blank name was accepted by one, refused by the other)."""
    from humanize.validation import MODEL
    from humanize.exceptions import InvalidParameterError

    assert make_constraint("model") is MODEL
    with pytest.raises(InvalidParameterError, match=r"X: lm must be a model name or path \(not blank\), or a loaded "
                                                    r"model, got '' \(str\)"):
        validate_parameter_constraints("X", {"lm": ["model"]}, {"lm": ""})


def test_unknown_shorthand_is_refused():
    with pytest.raises(ValueError, match="unknown parameter constraint 'integer'"):
        make_constraint("integer")


# -- the message -------------------------------------------------------------------------------
def test_one_message_format():
    cons = {"n": [Interval(Integral, 1, None), None], "mode": [Options(str, ("a", "b"))]}
    with pytest.raises(InvalidParameterError) as info:
        validate_parameter_constraints("Thing", cons, {"n": 0, "mode": "a"})
    assert str(info.value) == "Thing: n must be an int in [1, inf) or None, got 0 (int)"
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    with pytest.raises(InvalidParameterError, match=r"^Thing: mode must be one of 'a', 'b', got 'c' \(str\)$"):
        validate_parameter_constraints("Thing", cons, {"n": 1, "mode": "c"})
    validate_parameter_constraints("Thing", cons, {"n": None, "mode": "b", "other": object()})  # others unchecked


def test_a_long_value_is_cut():
    with pytest.raises(InvalidParameterError) as info:
        validate_parameter_constraints("Thing", {"name": ["nonempty str"]}, {"name": list(range(1000))})
    msg = str(info.value)
    assert msg.startswith("Thing: name must be a non-empty str, got [0, 1, 2") and msg.endswith("... (list)")
    assert len(msg) < 160


@pytest.mark.parametrize("name", ["api_key", "token", "hf_token", "client_secret", "password"])
def test_secrets_are_never_printed(name):
    with pytest.raises(InvalidParameterError) as info:
        validate_parameter_constraints("Endpoint", {name: ["nonempty str", None]}, {name: 12345678})
    assert "12345678" not in str(info.value)
    assert str(info.value) == f"Endpoint: {name} must be a non-empty str or None, got <hidden> (int)"


# -- ParamsMixin: merged along the MRO, applied to __init__'s parameters ---------------------
class _Base(ParamsMixin):
    _parameter_constraints = {"n": [Interval(Integral, 1, None)], "flag": ["boolean"], "gone": ["str"]}

    def __init__(self, n=1, flag=False):
        self.n, self.flag = n, flag
        self._validate()


class _Child(_Base):
    _parameter_constraints = {"n": [Interval(Integral, 0, None), None]}
    checked = 0

    def _check(self):
        type(self).checked += 1
        if self.n == 5 and self.flag:
            raise InvalidParameterError("_Child: n=5 needs flag=False")


def test_constraints_merge_along_the_mro():
    assert set(_Base._merged_constraints()) == {"n", "flag"}  # "gone" is no parameter of __init__
    _Child(0)
    _Child(None)
    with pytest.raises(InvalidParameterError, match=r"^_Base: n must be an int in \[1, inf\), got 0 \(int\)$"):
        _Base(0)
    with pytest.raises(InvalidParameterError, match=r"^_Child: flag must be a bool, got 1 \(int\)$"):
        _Child(flag=1)


def test_check_runs_after_the_constraints_and_set_params_validates():
    before = _Child.checked
    c = _Child(5)
    assert _Child.checked == before + 1
    with pytest.raises(InvalidParameterError, match="needs flag=False"):
        c.set_params(flag=True)
    assert c.flag is False  # restored
    with pytest.raises(InvalidParameterError, match=r"^_Child: n must be"):
        c.set_params(n=-1)
    assert c.n == 5


# -- check_texts: the one batch-input rule ----------------------------------------------------
PREFIX = r"^X\.batch expects a sequence of str \(one per document\)"


def test_check_texts_takes_any_one_dimensional_sequence_of_str():
    import pandas as pd

    texts = ["a", "b"]
    for batch in (texts, tuple(texts), iter(texts), (t for t in texts), np.array(texts), pd.Series(texts)):
        out = check_texts(batch, "X")
        assert out == texts and type(out) is list and all(type(t) is str for t in out)
    assert check_texts(texts, "X") is not texts  # a copy
    assert check_texts([], "X") == []


@pytest.mark.parametrize("bad, got", [
    (b"ab", "bytes"), (bytearray(b"ab"), "bytearray"), (None, "NoneType"), ({"a": 1}, "dict"), ({"a"}, "set"),
    (frozenset({"a"}), "frozenset"), (3, "int"), (2.5, "float"), (np.int64(2), "int64"), (object(), "object"),
])
def test_check_texts_refuses_what_is_no_batch(bad, got):
    with pytest.raises(InvalidParameterError, match=PREFIX + f", got {got}$"):
        check_texts(bad, "X")


def test_check_texts_single_str_arrays_frames_and_items():
    import pandas as pd

    with pytest.raises(InvalidParameterError, match=PREFIX + ", got a single str: wrap it in a list$"):
        check_texts("one document", "X")
    with pytest.raises(InvalidParameterError, match=PREFIX + ", got a 2-D ndarray$"):
        check_texts(np.array([["a", "b"]]), "X")
    with pytest.raises(InvalidParameterError, match=PREFIX + ", got a 2-D DataFrame$"):
        check_texts(pd.DataFrame({"text": ["a"]}), "X")
    with pytest.raises(InvalidParameterError, match=PREFIX + ": item 1 is NoneType, not str$"):
        check_texts(["a", None], "X")
    with pytest.raises(InvalidParameterError, match=r"^X\.score expects a sequence of str \(one per document\): item 0 is bytes"):
        check_texts([b"a"], "X", "score")


def test_check_text():
    assert check_text("a", "X") == "a"
    with pytest.raises(InvalidParameterError, match=r"^X\.apply expects a str \(one document\), got list: pass one str"):
        check_text(["a"], "X")


# -- generated inputs: every registered attack ------------------------------------------------
def _build(kind, name):
    """A registered component with default (or minimal) arguments; None where that would load a model."""
    mod = {"attack": attacks}[kind]
    if kind == "attack" and name in ("blend", "pipeline"):
        return mod.get(name, attacks=["homoglyph"])
    if kind == "attack" and name == "impose_format":
        from humanize.attacks.format_profile import FormatProfile

        return mod.get(name, profile=FormatProfile().fit(["A text.\n\nAnother one -- here."]))
    return mod.get(name)


class _WrongType:
    """A value no declared constraint takes (not a str, number, bool, sequence, mapping or callable)."""

    def __repr__(self):
        return "<wrong>"


def _constrained(obj):
    return sorted(type(obj)._merged_constraints())


ATTACK_PARAMS = [(n, p) for n in attacks.available() for p in _constrained(_build("attack", n))]


@pytest.mark.parametrize("name, param", ATTACK_PARAMS)
def test_every_declared_attack_parameter_refuses_a_wrong_type(name, param):
    obj = _build("attack", name)
    cls = type(obj).__name__
    params_before = obj.get_params(deep=False)
    params = dict(params_before, **{param: _WrongType()})
    with pytest.raises(InvalidParameterError, match=rf"^{cls}: {param} must be .*, got <wrong> \(_WrongType\)$"):
        type(obj)(**params)
    with pytest.raises(InvalidParameterError, match=rf"^{cls}: {param} must be "):
        obj.set_params(**{param: _WrongType()})
    assert obj.get_params(deep=False)[param] is params_before[param]  # restored after the failed set_params


def test_every_attack_declares_seed_and_its_rate():
    for name in attacks.available():
        obj = _build("attack", name)
        declared = type(obj)._merged_constraints()
        sig = inspect.signature(type(obj).__init__).parameters
        if "seed" in sig:
            assert "seed" in declared, name
        if getattr(obj, "has_rate", False):
            assert "rate" in declared, name


@pytest.mark.parametrize("name", attacks.available())
@pytest.mark.parametrize("bad, got", [("a str", "a single str: wrap it in a list"), ({"a": 1}, "dict"),
                                      (None, "NoneType"), (3, "int")])
def test_every_attack_batch_refuses_what_is_no_batch_before_any_model(name, bad, got):
    obj = _build("attack", name)
    cls = type(obj).__name__
    with pytest.raises(InvalidParameterError, match=rf"^{cls}\.batch expects a sequence of str \(one per document\), "
                                                    rf"got {got}$"):
        obj.batch(bad)


# -- generated inputs: every registered detector and defense, and the quality meter ------------
from humanize import defenses, detectors  # noqa: E402
from humanize.quality import QualityMeter  # noqa: E402

#: Registered detectors that need arguments to be built (as tests/test_params.py builds them).
DETECTOR_ARGS = {"hf_classifier": {"model": "some-org/some-detector", "machine_label": "Fake"},
                 "function": {"fn": "numpy:mean", "fn_version": "numpy-mean"},
                 "endpoint": {"url": "http://127.0.0.1:9/score"}}


def _component(kind, name):
    if kind == "detector":
        return detectors.get(name, **DETECTOR_ARGS.get(name, {}))
    if kind == "defense":
        return defenses.get(name)
    return QualityMeter()


COMPONENTS = ([("detector", n) for n in detectors.available()] + [("defense", n) for n in defenses.available()]
              + [("quality", "QualityMeter")])
COMPONENT_PARAMS = [(k, n, p) for k, n in COMPONENTS for p in _constrained(_component(k, n))]


def test_every_component_declares_constraints_for_its_parameters():
    for kind, name in COMPONENTS:
        obj = _component(kind, name)
        assert _constrained(obj), f"{kind} {name!r} declares no parameter constraints"


@pytest.mark.parametrize("kind, name, param", COMPONENT_PARAMS)
def test_every_declared_component_parameter_refuses_a_wrong_type(kind, name, param):
    obj = _component(kind, name)
    cls = type(obj).__name__
    params = dict(obj.get_params(deep=False), **{param: _WrongType()})
    from humanize._secrets import is_secret_name

    shown = "<hidden>" if is_secret_name(param) else "<wrong>"  # a watermark's key is never shown
    with pytest.raises(InvalidParameterError, match=rf"^{cls}: {param} must be .*, got {shown} \(_WrongType\)$"):
        type(obj)(**params)


@pytest.mark.parametrize("kind, name", COMPONENTS)
@pytest.mark.parametrize("bad, got", [("a str", "a single str: wrap it in a list"), ({"a": 1}, "dict"),
                                      (None, "NoneType"), (3, "int")])
def test_every_component_batch_refuses_what_is_no_batch_before_any_model(kind, name, bad, got):
    """One rule and one message shape for a batch in every layer: a detector's ``score``, a
    defense's ``batch``, the quality meter's ``score`` (originals and attacked)."""
    obj = _component(kind, name)
    method = {"detector": "score", "defense": "batch", "quality": "score"}[kind]
    call = getattr(obj, method)
    if kind == "detector" and getattr(obj, "learnable", False):
        pytest.raises(Exception, call, ["x"])  # not fitted: the batch rule is still checked first below
    pattern = rf"^{type(obj).__name__}\.{method}(\(\w+\))? expects a sequence of str \(one per document\), got {got}$"
    with pytest.raises(InvalidParameterError, match=pattern):
        call(bad) if kind != "quality" else call(bad, ["a"])
