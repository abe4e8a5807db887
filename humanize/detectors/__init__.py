"""Detectors of machine-generated text: ``score(texts)``, higher = more machine-like.

Classes are imported on first access (``humanize.detectors.FastDetectGPT``) so that
``import humanize.detectors`` does not import torch.
"""

from humanize._lazy import lazy_getattr

from .base import Detector, NotFittedError, check_labels, check_texts
from .registry import available, get, register, resolve

_CLASSES = {
    "LogLikelihood": "metric",
    "Rank": "metric",
    "LogRank": "metric",
    "Entropy": "metric",
    "GLTR": "metric",
    "LRR": "metric",
    "MetricFeaturesLR": "metric_lr",
    "FastDetectGPT": "fast_detectgpt",
    "Binoculars": "binoculars",
}

__all__ = ["Detector", "NotFittedError", "available", "check_labels", "check_texts", "get", "register", "resolve",
           *_CLASSES]


__getattr__ = lazy_getattr(__name__, _CLASSES)
