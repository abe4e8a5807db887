"""Detectors of machine-generated text: ``score(texts)``, higher = more machine-like."""

from .base import Detector, NotFittedError, check_labels, check_texts
from .registry import available, get, register, resolve

__all__ = ["Detector", "NotFittedError", "available", "check_labels", "check_texts", "get", "register", "resolve"]
