import dataclasses

import numpy as np
import pytest
import torch

import humanize.models as hm
from humanize.models import ModelUnavailable, load_causal_lm, token_logprobs
from humanize.models import registry

FLUENT = ("The children walked to school in the morning. After class, they played football in the park "
          "and then went home for dinner with their parents.")


def shuffled(text, seed=0):
    words = text.split()
    return " ".join(np.random.default_rng(seed).permutation(words))


def test_device_and_dtype_resolution():
    assert hm.resolve_device("cpu") == torch.device("cpu")
    assert hm.resolve_dtype(None, torch.device("cpu")) == torch.float32
    assert hm.resolve_dtype("bf16", torch.device("cpu")) == torch.bfloat16
    assert hm.resolve_dtype(torch.float16, torch.device("cpu")) == torch.float16
    with pytest.raises(TypeError, match="list"):
        hm.resolve_device(["cpu"])
    with pytest.raises(ValueError, match="float8"):
        hm.resolve_dtype("float8", torch.device("cpu"))


@pytest.mark.slow
def test_packaged_causal_lm_is_shared(smollm):
    assert smollm.resolved == "smollm2-135m-instruct" and smollm.kind == "causal_lm"
    assert smollm.device == torch.device("cpu") and smollm.dtype == torch.float32
    assert smollm.source in {"converted-cache", "converted-from-gguf"}
    assert load_causal_lm() is smollm          # the default is the same alias, same instance
    assert load_causal_lm("SmolLM2-135M-Instruct", device="cpu") is smollm
    assert "model=" not in repr(smollm)         # repr stays readable


@pytest.mark.slow
def test_token_logprobs_spans_and_fluency(smollm):
    offsets, lps = token_logprobs(smollm, FLUENT)
    assert offsets.shape == (len(lps), 2) and offsets.dtype.kind == "i"
    assert "".join(FLUENT[a:b] for a, b in offsets) == FLUENT   # spans tile the text
    assert np.all(np.isfinite(lps)) and np.all(lps <= 0)
    _, lps_shuffled = token_logprobs(smollm, shuffled(FLUENT))
    assert np.exp(-lps.mean()) * 10 < np.exp(-lps_shuffled.mean())
    off5, lp5 = token_logprobs(smollm, FLUENT, max_tokens=5)
    assert len(lp5) == 5 and np.allclose(lp5, lps[:5], atol=1e-4)


@pytest.mark.slow
def test_strided_windows_match_full_context(smollm):
    text = " ".join([FLUENT, shuffled(FLUENT, 1), FLUENT])
    _, full = token_logprobs(smollm, text)
    _, strided = token_logprobs(smollm, text, max_length=32, stride=16)
    assert len(full) == len(strided) > 64 and np.all(np.isfinite(strided))
    # tokens inside the first window see the same context
    assert np.allclose(full[:31], strided[:31], atol=1e-3)
    # later tokens see less context, so they differ somewhere
    assert not np.allclose(full[32:], strided[32:], atol=1e-3)
    with pytest.raises(ValueError, match="stride"):
        token_logprobs(smollm, text, max_length=32, stride=32)


def test_token_logprobs_rejects_non_text(smollm):
    with pytest.raises(TypeError, match="bytes"):
        token_logprobs(smollm, b"abc")


def test_unreachable_hub_id_gives_one_clear_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable) as info:
        load_causal_lm("gpt2-xl")
    err = info.value
    assert err.name == "gpt2-xl" and "hub id 'gpt2-xl'" in str(err)
    assert "hf download gpt2-xl" in str(err) and "smollm2-135m-instruct" in str(err)
    assert len(err.tried) == 1


def test_missing_local_directory(tmp_path):
    with pytest.raises(ModelUnavailable, match="does not exist"):
        load_causal_lm(str(tmp_path / "nope" / "model"))


def test_uninstalled_alias_names_install_command(monkeypatch):
    fake = dataclasses.replace(registry.PACKAGED["smollm2-135m-instruct"], alias="fake-lm",
                               module="humanize_no_such_module_xyz", distribution="fake-lm-dist",
                               install="pip install fake-lm-dist==9", hub_id=None)
    monkeypatch.setitem(registry.PACKAGED, "fake-lm", fake)
    with pytest.raises(ModelUnavailable) as info:
        load_causal_lm("fake-lm")
    assert "fake-lm-dist is not installed" in str(info.value)
    assert info.value.install == "pip install fake-lm-dist==9"


def test_bad_name_type():
    with pytest.raises(TypeError, match=r"model name must be a str or path, got 3 \(int\)"):
        load_causal_lm(3)
    with pytest.raises(ValueError, match=r"model name must be a non-blank str or path, got '  '"):
        load_causal_lm("  ")


def test_error_is_picklable():
    import pickle

    err = ModelUnavailable("x", ["a: b"], "pip install x")
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and again.tried == ["a: b"]


def test_device_dtype_and_name_errors_take_the_one_format():
    import numpy as np

    from humanize.exceptions import InvalidParameterError
    from humanize.models import resolve_device, resolve_dtype
    from humanize.models.loading import _check_name
    from humanize.validation import MODEL, NONBLANK_STR

    for bad in (1.5, True, -1):
        with pytest.raises(InvalidParameterError, match=r"resolve_device: device must be a str or an int in \[0, inf\) "
                                                         r"or a torch.device, got "):
            resolve_device(bad)
    with pytest.raises(ValueError, match=r"resolve_dtype: dtype must be one of .*'fp32'.* got 'fp7' \(str\)"):
        resolve_dtype("fp7", resolve_device("cpu"))
    with pytest.raises(TypeError, match=r"load: model name must be a str or path, got 3 \(int\)"):
        _check_name(3)
    with pytest.raises(ValueError, match=r"load: model name must be a non-blank str or path, got '  ' \(str\)"):
        _check_name("  ")
    assert MODEL.is_satisfied_by("smollm2-135m-instruct") and not MODEL.is_satisfied_by(" ")
    assert not MODEL.is_satisfied_by(np.int64(3)) and NONBLANK_STR.is_satisfied_by("m") and not NONBLANK_STR.is_satisfied_by("")


def test_one_process_at_a_time_converts_a_packaged_model(tmp_path, monkeypatch):
    """Concurrent loads (test or Ray workers sharing the cache) convert a GGUF model once: the second waits on
    the per-model lock, then finds the converted copy instead of reading files the first is assembling."""
    import threading

    from filelock import FileLock

    from humanize.models import loading

    target = tmp_path / "converted" / "m-1"
    target.parent.mkdir(parents=True)
    monkeypatch.setattr(loading, "converted_dir", lambda alias, version: target)
    monkeypatch.setattr(loading, "is_converted", lambda path: (path / "done").is_file())
    calls = []

    def convert(alias, path):
        calls.append(path)
        path.mkdir()
        (path / "done").write_text("1")
        return str(path), "converted-from-gguf"

    monkeypatch.setattr(loading, "_convert_packaged", convert)
    alias = type("Alias", (), {"alias": "m", "version": "1"})()
    held = FileLock(str(target.parent / ".m-1.lock"))
    held.acquire()
    out = []
    worker = threading.Thread(target=lambda: out.append(loading._packaged_dir(alias)))
    worker.start()
    worker.join(0.5)
    assert worker.is_alive() and calls == []  # waiting on the lock another process holds
    convert(alias, target)  # "the other process" converts, then releases
    held.release()
    worker.join(10)
    assert out == [(str(target), "converted-cache")] and len(calls) == 1  # found, not converted again
