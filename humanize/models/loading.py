"""Load a model by name: packaged offline alias, local directory or Hugging Face hub id.

One instance per (kind, model, device, dtype, options) per process; see cache.py.
Every route that fails ends in one :class:`ModelUnavailable` naming what was tried.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from numbers import Integral

from humanize.validation import InstanceOf, Interval, describe_value, validate_parameter_constraints
from humanize.exceptions import InvalidParameterError, ModelUnavailable

from .cache import cache_dir, get_or_load
from .gguf import convert_gguf, converted_dir, is_converted
from .registry import DEFAULT_CAUSAL_LM, DEFAULT_SENTENCE_ENCODER, PACKAGED, get_alias, looks_like_path

__all__ = [
    "LoadedModel", "load_causal_lm", "load_masked_lm", "load_seq2seq", "load_sequence_classifier",
    "load_sentence_encoder", "resolve_device", "resolve_dtype", "add_load_listener",
    "remove_load_listener",
]

_LOAD_LISTENERS: list[Callable[[dict], None]] = []
_DTYPES = {
    "float32": "float32", "fp32": "float32", "float": "float32",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float16": "float16", "fp16": "float16", "half": "float16",
}
_AUTO_CLASSES = {
    "causal_lm": "AutoModelForCausalLM",
    "masked_lm": "AutoModelForMaskedLM",
    "seq2seq": "AutoModelForSeq2SeqLM",
    "sequence_classifier": "AutoModelForSequenceClassification",
}


@dataclass(eq=False)
class LoadedModel:
    """A loaded model and what produced it.

    ``name`` is what the caller asked for; ``resolved`` what was actually
    loaded (packaged alias, hub id or absolute path) -- record it next to
    every figure the model produces. ``source`` says which route was taken.
    """

    name: str
    resolved: str
    model: Any = field(repr=False)
    tokenizer: Any = field(repr=False)
    device: Any
    dtype: Any
    kind: str
    load_seconds: float
    source: str = ""

    @property
    def identity(self) -> dict:
        """Which weights these are (package version, hub commit or contents digest), kind, device type, dtype.

        Computed once per instance (see :mod:`humanize.models.identity`); fingerprints and
        the statistics cache key on it, never on the object's address or load time.
        """
        found = self.__dict__.get("_identity")
        if found is None:
            from .identity import loaded_identity

            found = self.__dict__["_identity"] = loaded_identity(self)
        return found

    @property
    def identity_key(self) -> str:
        """A short hex digest of :attr:`identity` (for in-process cache keys)."""
        found = self.__dict__.get("_identity_key")
        if found is None:
            from .identity import identity_key

            found = self.__dict__["_identity_key"] = identity_key(self)
        return found

    @property
    def context_length(self) -> Optional[int]:
        """Longest input the model accepts (None when it does not say)."""
        cfg = getattr(self.model, "config", None)
        for attr in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"):
            value = getattr(cfg, attr, None) if cfg is not None else None
            if isinstance(value, int) and value > 0:
                return value
        tmax = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(tmax, int) and 0 < tmax < 10**7:
            return tmax
        return None


def add_load_listener(fn: Callable[[dict], None]) -> None:
    """Call ``fn(event)`` after every actual model load (cache misses only).

    ``event`` has ``name, resolved, kind, seconds, cpu_seconds``. The cost meter
    uses this to keep load time out of an attack's per-document time.
    """
    if fn not in _LOAD_LISTENERS:
        _LOAD_LISTENERS.append(fn)


def remove_load_listener(fn: Callable[[dict], None]) -> None:
    if fn in _LOAD_LISTENERS:
        _LOAD_LISTENERS.remove(fn)


def _notify(event: dict) -> None:
    for fn in list(_LOAD_LISTENERS):
        fn(event)
    # humanize.cost keeps load time out of per-document time; looked up, never imported
    cost = sys.modules.get("humanize.cost.meter")
    if cost is not None and hasattr(cost, "record_model_load"):
        cost.record_model_load(event)


def resolve_device(device: Any = None):
    """``None`` -> ``$HUMANIZE_DEVICE``, else CUDA when present, else CPU."""
    import torch

    if device is None:
        device = os.environ.get("HUMANIZE_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    validate_parameter_constraints("resolve_device", {"device": [
        "str", Interval(Integral, 0, None), InstanceOf(torch.device, name="a torch.device")]}, {"device": device})
    if isinstance(device, Integral):  # a CUDA index (numpy integers too)
        resolved = torch.device("cuda", int(device))
    elif isinstance(device, str):
        try:
            resolved = torch.device(device)
        except RuntimeError as exc:
            raise ValueError(f"unknown device {device!r}: {exc}") from None
    else:
        resolved = device
    _check_available(resolved, device)
    return resolved


def _check_available(resolved, given) -> None:
    """A device the user asked for that this machine lacks is a ValueError naming ``device``,
    not a failed model load (which would suggest installing the model)."""
    import torch

    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device={given!r} asks for CUDA, but torch here has no usable CUDA device "
                             f"(torch {torch.__version__}, built {'with' if torch.version.cuda else 'without'} CUDA); "
                             "use device='cpu' or None")
        count = torch.cuda.device_count()
        if resolved.index is not None and resolved.index >= count:
            raise ValueError(f"device={given!r} asks for CUDA device {resolved.index}, but this machine has {count}")
    elif resolved.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ValueError(f"device={given!r} asks for Apple MPS, which is not available here; use device='cpu' or None")


def resolve_dtype(dtype: Any, device) -> Any:
    """``None`` -> bf16 on CUDA (fp16 where bf16 is unsupported), fp32 elsewhere; ``"auto"`` -> the
    fastest precision the device runs natively (bf16 on a CPU with bf16 instructions; the rule:
    :mod:`humanize.models.precision`)."""
    import torch

    if dtype is None:
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if isinstance(dtype, str) and dtype.strip().lower() == "auto":
        from .precision import auto_dtype

        return auto_dtype(device)
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str) and dtype.lower() in _DTYPES:
        return getattr(torch, _DTYPES[dtype.lower()])
    allowed = ", ".join(map(repr, sorted([*_DTYPES, "auto"])))
    raise InvalidParameterError(f"resolve_dtype: dtype must be one of {allowed} (any case) or a torch.dtype or None, "
                                f"got {describe_value('dtype', dtype)}")


def _hub_offline() -> bool:
    return any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on")
               for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HUMANIZE_OFFLINE"))


#: seconds the reachability probe of the hub waits (``HUMANIZE_HUB_TIMEOUT`` overrides it)
HUB_PROBE_TIMEOUT = 3.0
_HUB_PROBES: dict[str, tuple[float, Optional[str]]] = {}  # endpoint -> (when, why unreachable or None)


def _hub_endpoint() -> str:
    endpoint = os.environ.get("HF_ENDPOINT", "").strip()
    if not endpoint:
        try:
            from huggingface_hub import constants

            endpoint = constants.ENDPOINT
        except ImportError:  # pragma: no cover - a dependency of transformers
            endpoint = "https://huggingface.co"
    return endpoint.rstrip("/")


def _probe_timeout() -> float:
    try:
        value = float(os.environ.get("HUMANIZE_HUB_TIMEOUT", HUB_PROBE_TIMEOUT))
    except ValueError:
        return HUB_PROBE_TIMEOUT
    return value if value > 0 else HUB_PROBE_TIMEOUT


def hub_unreachable() -> Optional[str]:
    """Why the Hugging Face hub cannot be reached (one line), or None when it answers.

    One request with a short timeout and no retry (any HTTP answer counts as reachable), so an
    unreachable hub costs seconds, not the minute of retries transformers spends on each file;
    the answer is kept for a minute per endpoint."""
    endpoint = _hub_endpoint()
    now = time.monotonic()
    cached = _HUB_PROBES.get(endpoint)
    if cached is not None and now - cached[0] < 60.0:
        return cached[1]
    why: Optional[str] = None
    try:
        import httpx

        with httpx.Client(timeout=_probe_timeout(), follow_redirects=False, trust_env=True) as client:
            client.head(f"{endpoint}/api/models")
    except ImportError:  # pragma: no cover - httpx comes with huggingface_hub
        why = None
    except Exception as exc:  # noqa: BLE001 - a refused, reset, timed out or unresolvable connection
        why = _short(exc)
    _HUB_PROBES[endpoint] = (now, why)
    return why


def _hub_options(name: str) -> dict:
    """``from_pretrained`` options for a hub id: the local cache only when offline or when the hub
    cannot be reached (then a model missing from the cache fails at once, saying so)."""
    if _hub_offline():
        return {"local_files_only": True}
    why = hub_unreachable()
    if why is None:
        return {}
    return {"local_files_only": True, "_unreachable": why}


def _hub_build(name: str, build: Callable[[dict], Any]):
    """``build(options)`` for a hub id, with :func:`_hub_options`; when the hub was unreachable and
    the model is not in the local cache, the error says so, with the offline hint."""
    opts = _hub_options(name)
    why = opts.pop("_unreachable", None)
    try:
        return build(opts)
    except Exception as exc:  # noqa: BLE001 - re-raised with the reason the cache was all there was
        if why is None:
            raise
        raise OSError(f"the Hugging Face hub at {_hub_endpoint()} cannot be reached ({why}) and {name!r} is not in "
                      "the local cache; without a network set HF_HUB_OFFLINE=1 and use an offline alias or a local "
                      "model directory") from exc


def _check_name(name: Any) -> str:
    validate_parameter_constraints("load", {"model name": [InstanceOf(str, os.PathLike, name="a str or path"),
                                                           ]}, {"model name": name})
    if isinstance(name, os.PathLike):
        return os.fspath(name)
    if not name.strip():
        raise InvalidParameterError(f"load: model name must be a non-blank str or path, got {name!r} (str)")
    return name


def _hub_command(hub_id: str) -> str:
    return f"needs the Hugging Face hub: `hf download {hub_id}` (or run once with internet access)"


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}"


def _routes(name: str, tried: list[str]) -> tuple[list[tuple[str, str, Callable[[], tuple[str, Optional[str]]]]], str]:
    """Candidate (resolved, source, locate) routes for ``name`` and the install hint."""
    local = Path(name).expanduser()
    if local.is_dir():
        resolved = str(local.resolve())
        return [(resolved, "local", lambda: (resolved, None))], f"check the directory {resolved}"
    if looks_like_path(name):
        state = "is not a directory" if local.exists() else "does not exist"
        tried.append(f"local directory {name}: {state}")
        return [], "pass an existing model directory"
    alias = get_alias(name)
    if alias is None:
        return [(name, "hub", lambda: (name, None))], _hub_command(name) + (
            f"; offline aliases: {', '.join(sorted(PACKAGED))}")
    routes = []

    def packaged():
        if not alias.installed:
            raise LookupError(f"package {alias.distribution} is not installed")
        return _packaged_dir(alias)

    routes.append((alias.alias, "packaged", packaged))
    install = alias.install
    if alias.hub_id:
        routes.append((alias.hub_id, "hub", lambda: (alias.hub_id, None)))
        install += f"   (or, with the hub: `hf download {alias.hub_id}`)"
    return routes, install


def _packaged_dir(alias) -> tuple[str, Optional[str]]:
    """Directory holding a Hugging Face copy of a packaged model (converting GGUF once)."""
    target = converted_dir(alias.alias, alias.version)
    if is_converted(target):
        return str(target), "converted-cache"
    from filelock import FileLock

    # One process at a time assembles, converts and cleans up one model (test workers, Ray workers and
    # concurrent runs share the cache): a second waits, then finds the converted copy.
    with FileLock(str(target.parent / f".{target.name}.lock")):
        if is_converted(target):
            return str(target), "converted-cache"
        return _convert_packaged(alias, target)


def _convert_packaged(alias, target: Path) -> tuple[str, Optional[str]]:
    located = alias.locate(cache_dir("gguf"))
    if located is None:
        raise LookupError(f"package {alias.distribution} is installed but its files were not found")
    directory, gguf_file = located
    if gguf_file is None:
        return str(directory), "packaged"
    convert_gguf(Path(directory), gguf_file, target, alias=alias.alias, version=alias.version)
    if Path(directory).resolve() == cache_dir("gguf").resolve():  # a file assembled from parts: an intermediate
        for leftover in (gguf_file, gguf_file + ".sha256"):
            try:
                (Path(directory) / leftover).unlink()
            except OSError:
                pass
    return str(target), "converted-from-gguf"


def _load(name: str, kind: str, key_extra: tuple, device, build: Callable[[str, str], tuple[Any, Any]],
          dtype=None) -> LoadedModel:
    """Resolve ``name``, then build the model once per process for this key."""
    tried: list[str] = []
    routes, install = _routes(name, tried)
    if not routes:
        raise ModelUnavailable(name, tried, install)
    canonical = routes[0][0]
    key = (kind, canonical, str(device), str(dtype), key_extra)

    def loader() -> LoadedModel:
        for resolved, source, locate in routes:
            start, cpu0 = time.perf_counter(), time.process_time()
            try:
                path, how = locate()
                model, tokenizer = build(path, source)
            except Exception as exc:  # noqa: BLE001 - every failure becomes one clear error
                where = {"local": "local directory", "hub": "hub id", "packaged": "packaged alias"}[source]
                tried.append(f"{where} {resolved!r}: {_short(exc)}")
                continue
            seconds = time.perf_counter() - start
            event = {"name": name, "resolved": resolved, "kind": kind, "seconds": seconds,
                     "cpu_seconds": time.process_time() - cpu0}
            _notify(event)
            return LoadedModel(name=name, resolved=resolved, model=model, tokenizer=tokenizer,
                               device=device, dtype=dtype, kind=kind, load_seconds=seconds,
                               source=how or source)
        raise ModelUnavailable(name, tried, install)

    return get_or_load(key, loader)


def _canonical_strides(module, args):
    """The output head's input with the strides of a fresh tensor of its shape (a forward pre-hook)."""
    x = args[0]
    if x.dim() < 3 or not x.is_contiguous():
        return None
    return (x.view(-1, x.shape[-1]).view(x.shape), *args[1:])


def _flat_output_head(model, device, dtype) -> None:
    """On a CPU in reduced precision, give the output head (the vocabulary projection) an input with
    canonical strides.

    A model asked for its last positions' logits (``logits_to_keep``: the context check, generation) slices its
    hidden states; the slice is contiguous but its batch stride is the whole sequence's. ``torch.matmul`` then
    does not fold the batch into one matrix product: it expands the head's weight to a batch and copies it, the
    whole vocabulary x hidden matrix on every forward pass (SmolLM2: 56 MB, 45 ms of a 70-token pass of 150 ms
    in bfloat16; float32 takes a strided path without the copy). Re-viewing the slice (no copy) restores the one
    matrix product, the same arithmetic (``tests/models/test_precision.py`` counts the batched products)."""
    import torch

    if getattr(device, "type", str(device)) != "cpu" or dtype in (None, torch.float32, torch.float64):
        return
    head = model.get_output_embeddings() if callable(getattr(model, "get_output_embeddings", None)) else None
    if isinstance(head, torch.nn.Module):
        head.register_forward_pre_hook(_canonical_strides)


def _load_transformers(kind: str, name, device, dtype, trust_remote_code: bool, kwargs: dict) -> LoadedModel:
    import transformers

    name = _check_name(name)
    device = resolve_device(device)
    dtype = resolve_dtype(dtype, device)
    auto = getattr(transformers, _AUTO_CLASSES[kind])
    alias = get_alias(name)

    def build(path: str, source: str):
        if source == "hub":
            return _hub_build(path, lambda hub: build_with(path, source, hub))
        return build_with(path, source, {})

    def build_with(path: str, source: str, hub: dict):
        opts = {"trust_remote_code": bool(trust_remote_code), **hub}
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, **opts)
        if source == "packaged" and alias is not None and alias.no_bos:
            # Qwen's GGUF metadata names <|endoftext|> as BOS, which upstream Qwen never prepends (and the
            # scoring code and TOBLEND prepend any BOS a tokenizer names): as a first token it raises the
            # 0.5B's perplexity on demo texts 1.5-5x (measured on six human demo texts).
            tokenizer.bos_token = None
        model = auto.from_pretrained(path, dtype=dtype, **opts, **kwargs)
        model.to(device)
        model.eval()
        model.requires_grad_(False)
        _flat_output_head(model, device, dtype)
        if getattr(tokenizer, "pad_token_id", None) is None and getattr(tokenizer, "eos_token", None):
            tokenizer.pad_token = tokenizer.eos_token
        return model, tokenizer

    extra = (bool(trust_remote_code), tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
    return _load(name, kind, extra, device, build, dtype=dtype)


def load_tokenizer(name: str = DEFAULT_CAUSAL_LM, *, trust_remote_code: bool = False) -> LoadedModel:
    """A model's tokenizer alone (``model`` is None): what an LM-free scorer such as a watermark detector
    needs. The same routes as the models (packaged alias, directory, hub id), loaded once per process."""
    import transformers

    name = _check_name(name)
    alias = get_alias(name)

    def build(path: str, source: str):
        def with_options(hub: dict):
            tokenizer = transformers.AutoTokenizer.from_pretrained(path, trust_remote_code=bool(trust_remote_code),
                                                                   **hub)
            if source == "packaged" and alias is not None and alias.no_bos:
                tokenizer.bos_token = None  # as load_causal_lm does
            return None, tokenizer

        return _hub_build(path, with_options) if source == "hub" else with_options({})

    return _load(name, "tokenizer", (bool(trust_remote_code),), "cpu", build)


def load_causal_lm(name: str = DEFAULT_CAUSAL_LM, *, device=None, dtype=None, trust_remote_code: bool = False,
                   **kwargs) -> LoadedModel:
    """A causal LM (``AutoModelForCausalLM``) and its tokenizer, in eval mode."""
    return _load_transformers("causal_lm", name, device, dtype, trust_remote_code, kwargs)


def load_masked_lm(name: str, *, device=None, dtype=None, trust_remote_code: bool = False, **kwargs) -> LoadedModel:
    """A masked LM (``AutoModelForMaskedLM``), e.g. ``roberta-base`` for fill-mask attacks."""
    return _load_transformers("masked_lm", name, device, dtype, trust_remote_code, kwargs)


def load_seq2seq(name: str, *, device=None, dtype=None, trust_remote_code: bool = False, **kwargs) -> LoadedModel:
    """A sequence-to-sequence LM (``AutoModelForSeq2SeqLM``), e.g. the DIPPER paraphraser."""
    return _load_transformers("seq2seq", name, device, dtype, trust_remote_code, kwargs)


def load_sequence_classifier(name: str, *, device=None, dtype=None, trust_remote_code: bool = False,
                             **kwargs) -> LoadedModel:
    """A sequence classifier (``AutoModelForSequenceClassification``), e.g. a RoBERTa AI-text detector."""
    return _load_transformers("sequence_classifier", name, device, dtype, trust_remote_code, kwargs)


def load_sentence_encoder(name: str = DEFAULT_SENTENCE_ENCODER, *, device=None, dtype=None,
                          trust_remote_code: bool = False) -> LoadedModel:
    """A ``SentenceTransformer`` (``.tokenizer`` is None; fp32 unless ``dtype`` is given)."""
    import torch

    name = _check_name(name)
    device = resolve_device(device)
    dtype = torch.float32 if dtype is None else resolve_dtype(dtype, device)

    def build(path: str, source: str):
        if source == "hub":
            return _hub_build(path, lambda hub: build_with(path, hub))
        return build_with(path, {})

    def build_with(path: str, hub: dict):
        from sentence_transformers import SentenceTransformer

        opts = {"trust_remote_code": bool(trust_remote_code), **hub}
        model = SentenceTransformer(path, device=str(device), **opts)
        if dtype != torch.float32:
            model = model.to(dtype)
        model.eval()
        return model, None

    return _load(name, "sentence_encoder", (bool(trust_remote_code),), device, build, dtype=dtype)
