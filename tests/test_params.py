"""One parameter protocol (humanize.params.ParamsMixin) for attacks, detectors, quality meters and pipelines."""

import numpy as np
import pytest
from sklearn.base import clone

from humanize import attacks, defenses, detectors, generation
from humanize.params import ParamsMixin
from humanize.attacks import Attack
from humanize.attacks.format import ImposeFormat
from humanize.attacks.format_profile import FormatProfile
from humanize.attacks.pipeline import Pipeline
from humanize.quality import QualityMeter

# detectors whose constructor needs arguments, with valid ones (no model is loaded)
_DETECTOR_ARGS = {"hf_classifier": {"model": "some-org/some-detector", "machine_label": "Fake"},
                  "function": {"fn": "numpy:mean", "fn_version": "numpy-mean"},
                  "endpoint": {"url": "http://127.0.0.1:9/score"}}

TEXTS = ["Formal  text -- with \"quotes\" and\na short line.", "Another document.  Two spaces after it."]


def _profile():
    return FormatProfile().fit(TEXTS)


def _every_object():
    objs = [attacks.get(n, seed=5) for n in attacks.available() if n not in ("impose_format", "pipeline", "blend")]
    objs += [ImposeFormat(_profile(), rate=0.5), Pipeline([attacks.Homoglyph(rate=0.1), attacks.Whitespace()])]
    objs += [attacks.Blend([attacks.Homoglyph(rate=0.1), "upper_lower"], seed=5)]
    objs += [generation.resolve_generator(g) for g in
             ("smollm2-135m-instruct", "dipper", {"backend": "endpoint", "base_url": "http://127.0.0.1:9/v1"})]
    objs += [detectors.get(n, **_DETECTOR_ARGS.get(n, {})) for n in detectors.available()]
    objs += [QualityMeter(), QualityMeter(meters=["rouge_l"], batch_size=2)]
    objs += [defenses.get(n) for n in defenses.available()] + [defenses.get("normalize", quotes=False)]
    return objs


@pytest.mark.parametrize("obj", _every_object(), ids=lambda o: type(o).__name__)
def test_every_configured_object_shares_the_protocol_and_clones(obj):
    assert isinstance(obj, ParamsMixin)
    shallow = obj.get_params(deep=False)
    assert list(shallow) == obj._param_names()
    assert all(shallow[k] is getattr(obj, k) for k in shallow)  # stored as given
    twin = clone(obj)  # scikit-learn's clone: get_params(deep=False) -> constructor -> identity check
    assert type(twin) is type(obj) and twin is not obj
    assert twin.fingerprint() == obj.fingerprint()
    assert repr(twin) == repr(obj) and repr(obj).startswith(type(obj).__name__ + "(")
    with pytest.raises(ValueError, match=r"no parameter .*'no_such_param'.*valid: "):
        obj.set_params(no_such_param=1)


def test_set_params_validates_and_restores_the_previous_value_on_error():
    det = detectors.get("tfidf_lr")
    with pytest.raises(ValueError, match=r"TfidfLogReg: C must be a number in \(0, inf\), got -1.0 \(float\)"):
        det.set_params(C=-1.0)
    assert det.C == 1.0  # rolled back: the object stays valid
    assert det.set_params(C=0.5, max_iter=10) is det and (det.C, det.max_iter) == (0.5, 10)
    probe = detectors.get("surface_probe")
    with pytest.raises(ValueError, match=r"SurfaceProbe: max_iter must be an int in \[1, inf\), got 0 \(int\)"):
        probe.set_params(max_iter=0)
    with pytest.raises(ValueError, match="unknown surface feature"):
        probe.set_params(features=["no_such_feature"])
    assert probe.features is None and probe.max_iter == 5000
    a = attacks.Homoglyph(rate=0.2)
    with pytest.raises(ValueError, match=r"^Homoglyph: rate must be a number in \[0, 1\], got 2 \(int\)$"):
        a.set_params(rate=2)
    assert a.rate == 0.2
    with pytest.raises(ValueError, match="unknown meters"):
        QualityMeter(meters=["fluency"])  # validated on construction, like every other object


def test_set_params_never_leaves_a_stale_cache_behind():
    text = "A short text with some letters to swap and a second sentence. " * 3
    a = attacks.Homoglyph(rate=0.2)
    a.apply(text)  # whatever the hot path caches per instance, it is built now
    a.set_params(rate=0.6, seed=4)
    fresh = attacks.Homoglyph(rate=0.6, seed=4).apply(text)
    got = a.apply(text)
    assert got.params == fresh.params == {"rate": 0.6, "seed": 4} and got.text == fresh.text
    profile = FormatProfile().fit(TEXTS)
    imp = ImposeFormat(profile, rate=1.0, seed=1)
    imp.apply(text)
    imp.set_params(profile__censor_last_line=False, rate=0.5)
    assert imp.apply(text).text == ImposeFormat(clone(profile), rate=0.5, seed=1).apply(text).text


def test_nested_params_as_scikit_learn():
    profile = _profile()
    imp = ImposeFormat(profile, rate=0.5)
    deep = imp.get_params()
    assert deep["profile"] is profile and deep["profile__censor_last_line"] is True
    assert "profile__censor_last_line" not in imp.get_params(deep=False)
    imp.set_params(profile__censor_last_line=False)
    assert profile.censor_last_line is False
    with pytest.raises(ValueError, match="no parameter 'profil'"):
        imp.set_params(profil__censor_last_line=False)
    with pytest.raises(ValueError, match="'rate' is a float, which has no parameters"):
        imp.set_params(rate__x=1)


def test_pipeline_steps_by_name_get_set_replace_and_clone():
    h, w1, w2 = attacks.Homoglyph(rate=0.1), attacks.Whitespace(rate=0.2), attacks.Whitespace(rate=0.3)
    pipe = Pipeline([h, w1, w2])
    assert [n for n, _ in pipe.named_attacks()] == ["homoglyph", "whitespace-1", "whitespace-2"]
    deep = pipe.get_params()
    assert deep["homoglyph"] is h and deep["whitespace-2__rate"] == 0.3
    assert pipe.get_params(deep=False) == {"attacks": [h, w1, w2]}
    pipe.set_params(homoglyph__rate=0.4, **{"whitespace-1__seed": 9})
    assert h.rate == 0.4 and w1.seed == 9
    z = attacks.ZeroWidthSpace(rate=0.5)
    pipe.set_params(homoglyph=z)
    assert pipe.attacks[0] is z and isinstance(pipe.attacks, list)
    with pytest.raises(ValueError, match="no parameter or step 'typo'; valid: attacks, zero_width_space"):
        pipe.set_params(typo__rate=0.1)
    with pytest.raises(TypeError, match=r"^Pipeline: attacks must be a list of Attack objects, names or tables, "
                                        r"got \[ZeroWidthSpace\(.*, 3\] \(list\)$"):
        pipe.set_params(attacks=[z, 3])
    assert pipe.attacks == [z, w1, w2]  # restored
    twin = clone(pipe)
    assert all(a is not b and a == b for a, b in zip(twin.attacks, pipe.attacks))  # steps are cloned too
    text = "A test of the pipeline's clone -- it should attack alike."
    assert twin(text) == pipe(text)
    assert twin.fingerprint() == pipe.fingerprint()


def test_validation_idiom_is_one_method_called_by_init_and_set_params():
    for cls in (detectors.resolve("tfidf_lr"), detectors.resolve("hf_classifier"), detectors.resolve("lm_d"),
                detectors.resolve("surface_probe"), detectors.resolve("log_rank"), QualityMeter, attacks.Homoglyph):
        assert "_validate_params" not in vars(cls)
        assert callable(cls._validate)
    hf = detectors.get("hf_classifier", model="org/x", machine_label=1)
    with pytest.raises(ValueError, match=r"HFClassifier: batch_size must be an int in \[1, inf\), got 0 \(int\)"):
        hf.set_params(batch_size=0)
    hf.set_params(model="org/y")
    assert hf._loaded is None  # a new model loads on the next score


def test_equal_attacks_hash_equal_and_numbers_compare_by_value():
    a, b = attacks.Homoglyph(rate=1, seed=2), attacks.Homoglyph(rate=1.0, seed=np.int64(2))
    assert a == b and hash(a) == hash(b) and a.fingerprint() == b.fingerprint()
    assert len({a, b, attacks.Homoglyph(rate=0.5)}) == 2


def test_quality_meter_repr_shows_changed_parameters_only():
    assert repr(QualityMeter()) == "QualityMeter()"
    assert repr(QualityMeter(meters=["rouge_l"], batch_size=2)) == "QualityMeter(meters=['rouge_l'], batch_size=2)"


def test_attack_get_params_stays_flat_for_plain_attacks():
    a = attacks.Whitespace(rate=0.25, seed=7)
    assert a.get_params() == a.get_params(deep=False) == {"rate": 0.25, "seed": 7}
    assert isinstance(a, Attack) and a._param_tuple() is type(a)._param_tuple()  # read once per class


# -- component parameters (issue #36): declared once, resolved once, fingerprinted as what they resolve to --------
class _Part(ParamsMixin):
    def __init__(self, size: int = 1):
        self._init_params(locals())


_RESOLVED = []


def _resolve_part(owner, value):
    _RESOLVED.append(value)
    return value if isinstance(value, _Part) else _Part(size={"small": 1, "big": 9}[value] + owner.offset)


class _Owner(ParamsMixin):
    from humanize.params import ComponentParam as _CP

    _component_params = {"part": _CP("generator", _resolve_part, depends=("offset",)),
                         "parts": _CP("attack", _resolve_part, many=True),
                         "guide": _CP("detector", train="train")}

    def __init__(self, part="small", parts=("small", "big"), guide="tfidf_lr", train=None, offset=0):
        self._init_params(locals())


def test_a_component_parameter_is_resolved_once_per_value_and_fingerprinted_as_what_it_resolves_to():
    _RESOLVED.clear()
    owner = _Owner()
    assert owner.component("part") is owner.component("part") and _RESOLVED == ["small"]
    assert owner.component("part").size == 1
    # a name and the object it names are one configuration; the raw name is not what is hashed
    assert owner.fingerprint() == _Owner(part=_Part(1)).fingerprint()
    assert owner.provenance()["params"]["part"] == _Part(1).provenance()
    assert [p.size for p in owner.component("parts")] == [1, 9]
    # a declared detector without a resolver is fingerprinted as given (its name)
    assert owner.provenance()["params"]["guide"] == "tfidf_lr"
    # set_params, a direct assignment and a parameter the component depends on all resolve it again
    owner.set_params(part="big")
    assert owner.component("part").size == 9
    owner.offset = 1
    assert owner.component("part").size == 10
    assert owner.fingerprint() != _Owner(part="big").fingerprint()
    _RESOLVED.clear()
    fresh = _Owner()
    fresh.component("parts"), fresh.component("parts")  # members given by name are built once
    assert _RESOLVED == ["small", "big"]
    assert set(_Owner.component_params()) == {"part", "parts", "guide"}


def test_the_resolvers_errors_are_the_components_own():
    with pytest.raises(KeyError):
        _Owner(part="medium").component("part")
