"""Where converted models and language resources live, and the per-process instance cache.

The on-disk cache is ``$HUMANIZE_CACHE`` if set, else ``$XDG_CACHE_HOME/humanize``,
else ``~/.cache/humanize``. The in-memory cache keeps one instance per
(kind, model, device, dtype, options) so every detector, meter and attack shares it.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable, Hashable

__all__ = ["cache_dir", "get_or_load", "loaded_models", "loaded_keys", "release", "clear_loaded"]

_INSTANCES: dict[Hashable, Any] = {}
_LOCKS: dict[Hashable, threading.Lock] = {}
_GLOBAL_LOCK = threading.Lock()


def cache_dir(*parts: str, create: bool = True) -> Path:
    """Return the humanize cache directory (or a sub-directory of it)."""
    root = os.environ.get("HUMANIZE_CACHE")
    if root:
        base = Path(root).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "humanize"
    path = base.joinpath(*parts)
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def get_or_load(key: Hashable, loader: Callable[[], Any]) -> Any:
    """Return the cached instance for ``key``, calling ``loader`` once if absent.

    Loads of different keys may run concurrently; the same key loads once.
    """
    inst = _INSTANCES.get(key)
    if inst is not None:
        return inst
    with _GLOBAL_LOCK:
        lock = _LOCKS.setdefault(key, threading.Lock())
    with lock:
        inst = _INSTANCES.get(key)
        if inst is None:
            inst = loader()
            _INSTANCES[key] = inst
        return inst


def loaded_models() -> list[Any]:
    """The instances loaded so far in this process."""
    return list(_INSTANCES.values())


def loaded_keys() -> list[Hashable]:
    """The cache keys of the instances loaded so far in this process."""
    return list(_INSTANCES)


def release(keys) -> list[Any]:
    """Forget the instances of ``keys`` (memory is freed once callers drop theirs; a later load loads again).
    Returns the instances forgotten."""
    with _GLOBAL_LOCK:
        out = [_INSTANCES.pop(k) for k in list(keys) if k in _INSTANCES]
        for k in keys:
            _LOCKS.pop(k, None)
    return out


def clear_loaded() -> None:
    """Forget every loaded instance (memory is freed once callers drop theirs)."""
    with _GLOBAL_LOCK:
        _INSTANCES.clear()
        _LOCKS.clear()
