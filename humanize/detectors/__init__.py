"""Detectors of machine-generated text: ``score(texts)``, higher = more machine-like.

Classes are imported on first access (``humanize.detectors.FastDetectGPT``) so that
``import humanize.detectors`` does not import torch.
"""

from humanize._lazy import lazy_getattr, registry_exports

from humanize.exceptions import NotFittedError

from .base import Detector, check_labels
from .registry import _REGISTRY, available, get, origin, register, resolve

#: Every registered detector class under its class name (derived from the registry, so adding
#: a detector is one module and one registry line).
_CLASSES = registry_exports(_REGISTRY)
#: What an attack queries (not a registered detector): a detector, its training set, query counts.
_EXTRAS = {"Target": "target", "is_fitted": "target"}

__all__ = ["Detector", "NotFittedError", "available", "check_labels", "get", "origin", "register",
           "resolve", *_EXTRAS, *_CLASSES]


__getattr__ = lazy_getattr(__name__, {**_CLASSES, **_EXTRAS}, _REGISTRY)


def __dir__():
    return sorted(set(globals()) | set(_CLASSES) | set(_EXTRAS) | set(registry_exports(_REGISTRY)))
