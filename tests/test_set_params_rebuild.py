"""A component whose parameters change after construction describes, fingerprints and runs the same
configuration as one built with them (issue #22): nothing built from the old parameters survives set_params.

Every registered attack and detector changes one parameter with ``set_params`` and is compared with a
freshly constructed object: fingerprints always; outputs where nothing loads a model (rule attacks,
composites of them, the model-free detectors); the assembled engine of a word-substitution attack
without running it.
"""
from __future__ import annotations

import pytest

from humanize import attacks, detectors

TEXT = "The quick brown fox jumps over the lazy dog. It was definitely not amused, so it left at 9."
#: Parameters tried in order; the first one a component takes is changed, to a value of its kind.
CHANGES = ("seed", "rate", "max_tokens", "features", "C", "invert", "fn_version", "depth")


def _word_count(texts):
    return [float(len(t.split())) for t in texts]


def _attack_kwargs(name):
    if name in ("blend", "pipeline"):
        return {"attacks": ["homoglyph", "whitespace"]}
    if name == "impose_format":
        from humanize.attacks.format_profile import FormatProfile

        return {"profile": FormatProfile().fit(["A text.\n\nAnother one -- here."])}
    return {}


def _detector_kwargs(name):
    return {"function": {"fn": _word_count, "name": "words"},
            "endpoint": {"url": "http://127.0.0.1:9/score"},
            "hf_classifier": {"model": "org/some-detector", "machine_label": "Fake"}}.get(name, {})


def _new_value(name, value):
    if name == "seed":
        return (value or 0) + 1
    if name == "rate":
        return 0.3 if value != 0.3 else 0.4
    if name == "max_tokens":
        return 48 if value != 48 else 64
    if name == "features":
        return "formatting" if value != "formatting" else "all"
    if name == "C":
        return 2.5
    if name == "invert":
        return not value
    if name == "fn_version":
        return "changed"
    return value + 1


def _change(obj):
    """(key, value) of the one parameter to change: a composite's step's rate, else the first of CHANGES."""
    params = obj.get_params(deep=False)
    if "attacks" in params:
        return "homoglyph__rate", 0.3
    key = next(k for k in CHANGES if k in params)
    return key, _new_value(key, params[key])


def _engine(obj):
    """The word-substitution engine an attack runs (assembled, not run), or None."""
    if callable(getattr(obj, "built_engine", None)):
        return obj.built_engine()
    if callable(getattr(obj, "_build", None)) and callable(getattr(obj, "assemble", None)):
        return obj._build()
    return None


@pytest.mark.parametrize("name", attacks.available())
def test_attack_after_set_params_is_a_fresh_one(name):
    kwargs = _attack_kwargs(name)
    obj = attacks.get(name, **kwargs)
    key, value = _change(obj)
    before = obj.fingerprint()
    runs = not obj.needs_model
    if runs:
        obj.apply(TEXT)  # whatever a first document builds or caches
    if _engine(obj) is not None:
        _engine(obj)  # assembled for the old parameters
    obj.set_params(**{key: value})
    if key == "homoglyph__rate":
        fresh = attacks.get(name, **{**kwargs, "attacks": [attacks.Homoglyph(rate=value), "whitespace"]})
    else:
        fresh = attacks.get(name, **{**kwargs, key: value})
    assert obj.fingerprint() == fresh.fingerprint() != before
    assert obj.provenance() == fresh.provenance()
    if runs:
        assert obj.apply(TEXT).text == fresh.apply(TEXT).text
        assert obj.apply(TEXT).params == fresh.apply(TEXT).params
    engine = _engine(obj)
    if engine is not None:
        assert engine.fingerprint() == _engine(fresh).fingerprint()
        if key in ("seed", "rate"):
            assert getattr(engine, key) == value


def test_qpa_nested_set_params_rebuilds_its_engine():
    from humanize.attacks.wordsub.presets import QPA, Synonym

    qpa = QPA(Synonym(seed=1))
    assert qpa.built_engine().seed == 1
    qpa.set_params(attack__seed=5, attack__rate=0.25)
    assert (qpa.built_engine().seed, qpa.built_engine().rate) == (5, 0.25)
    assert qpa.built_engine().fingerprint() == QPA(Synonym(seed=5, rate=0.25)).built_engine().fingerprint()
    with pytest.raises(ValueError):
        qpa.set_params(rate=2.0)  # refused, restored, and the engine is the one of the restored parameters
    assert qpa.built_engine().fingerprint() == QPA(Synonym(seed=5, rate=0.25)).built_engine().fingerprint()


@pytest.mark.parametrize("name", detectors.available())
def test_detector_after_set_params_is_a_fresh_one(name):
    kwargs = _detector_kwargs(name)
    obj = detectors.get(name, **kwargs)
    key, value = _change(obj)
    before = obj.fingerprint()
    obj.set_params(**{key: value})
    fresh = detectors.get(name, **{**kwargs, key: value})
    assert obj.fingerprint() == fresh.fingerprint() != before
    if name in ("function", "tfidf_lr"):
        train = (["a human wrote this, slowly.", "Machine text: it is clear.", "ok then", "Indeed it is. Yes."],
                 ["human", "machine", "human", "machine"])
        if obj.learnable:
            obj.fit(*train)
            fresh.fit(*train)
        assert list(obj.score([TEXT])) == list(fresh.score([TEXT]))
