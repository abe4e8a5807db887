"""Exact, canonical JSON of parameter values: what a fingerprint hashes.

:func:`canonical` turns a parameter value into JSON-ready data that identifies
it exactly, or raises ``TypeError``; it never falls back to ``repr`` (which
rounds, e.g. a profile's rates) or to an object's address (which changes per
process). Numbers keep their exact value (an integral float is written as the
int it equals, so ``1 == 1.0`` share a key as they share outputs; any other
float is written by ``json`` as its shortest round-tripping repr), numpy
scalars and arrays become their values, objects serialise through an explicit
method: ``provenance()`` (attacks, detectors, meters), ``to_dict()`` (e.g.
:class:`~humanize.attacks.format_profile.FormatProfile`, fitted fields at full
precision), a loaded model's ``identity``, or an unfitted scikit-learn
estimator's ``get_params``.
"""

from __future__ import annotations

import enum
import hashlib
import json
import math
import os
from typing import Any

__all__ = ["canonical", "canonical_json", "digest"]

_PLAIN = (str, bool, type(None))


def _qualname(obj_type: type) -> str:
    return f"{obj_type.__module__}.{obj_type.__qualname__}"


def _fail(where: str, value: Any, why: str = "") -> TypeError:
    return TypeError(
        f"{where}: cannot fingerprint a value of type {_qualname(type(value))}{why}; parameters must be "
        f"str, int, float, bool, None, lists/tuples/dicts of those, numpy scalars or arrays, a loaded model, "
        f"or objects with to_dict() or provenance() (no repr or memory-address fallback, so cached results "
        f"can never be matched to the wrong configuration)")


def _number(value: float, where: str) -> Any:
    if math.isfinite(value) and value.is_integer():
        return int(value)
    return value  # json writes floats as their shortest exact repr ('NaN'/'Infinity' included)


def canonical(value: Any, where: str = "value") -> Any:
    """``value`` as canonical JSON-ready data (exact), or ``TypeError`` naming ``where``."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _number(float(value), where)
    if isinstance(value, (list, tuple)):
        return [canonical(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _fail(f"{where} key {k!r}", k, " (dict keys must be str)")
            out[k] = canonical(v, f"{where}[{k!r}]")
        return out
    if isinstance(value, (set, frozenset)):
        items = [canonical(v, f"{where}{{...}}") for v in value]
        return {"__set__": sorted(items, key=lambda x: json.dumps(x, sort_keys=True))}
    module = type(value).__module__
    if module == "numpy":
        return _numpy(value, where)
    if module == "torch" and type(value).__name__ in ("dtype", "device"):
        return {"__torch__": str(value)}
    if isinstance(value, enum.Enum):
        return {"__enum__": _qualname(type(value)), "value": canonical(value.value, where)}
    if isinstance(value, type):
        return {"__type__": _qualname(value)}
    if isinstance(value, os.PathLike):
        return {"__path__": os.fspath(value)}
    if callable(getattr(value, "provenance", None)):
        return value.provenance()
    if hasattr(value, "identity") and hasattr(value, "model") and hasattr(value, "resolved"):
        return {"__model__": value.identity}
    if callable(getattr(value, "to_dict", None)):
        return {"__class__": _qualname(type(value)), "to_dict": canonical(value.to_dict(), f"{where}.to_dict()")}
    if callable(getattr(value, "get_params", None)):
        fitted = sorted(k for k in vars(value) if k.endswith("_") and not k.startswith("_"))
        if fitted:
            raise _fail(where, value, f" (a fitted estimator: its state {fitted[:3]} is not in its parameters)")
        return {"__class__": _qualname(type(value)),
                "params": canonical(value.get_params(deep=False), f"{where}.get_params()")}
    raise _fail(where, value)


def _numpy(value: Any, where: str) -> Any:
    import numpy as np

    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        as_float = float(value)
        if value.dtype.itemsize > 8 and np.longdouble(as_float) != value:
            raise _fail(where, value, " (more precision than a float64 holds)")
        return _number(as_float, where)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise _fail(where, value, f" (an array of dtype {value.dtype})")
        return {"__ndarray__": str(value.dtype), "shape": list(value.shape),
                "data": canonical(value.ravel().tolist(), where)}
    raise _fail(where, value)


def canonical_json(value: Any, where: str = "value") -> str:
    """Sorted, compact JSON of :func:`canonical` (the bytes a fingerprint hashes)."""
    return json.dumps(canonical(value, where), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: Any, where: str = "value", size: int = 16) -> str:
    """Hex BLAKE2b of :func:`canonical_json`."""
    data = canonical_json(value, where).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=size).hexdigest()
