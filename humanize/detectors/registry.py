"""Detectors by name, so configs and the CLI can build them.

Adding a detector is one new module plus one line in ``_REGISTRY`` (an import
path, resolved on first use).
"""

from __future__ import annotations

import importlib

from .base import Detector

_REGISTRY: dict[str, "str | type[Detector]"] = {
    # metric-based, from a causal LM (one shared forward pass per text: lm_stats.py)
    "log_likelihood": "humanize.detectors.metric:LogLikelihood",
    "rank": "humanize.detectors.metric:Rank",
    "log_rank": "humanize.detectors.metric:LogRank",
    "entropy": "humanize.detectors.metric:Entropy",
    "gltr": "humanize.detectors.metric:GLTR",
    "lrr": "humanize.detectors.metric:LRR",
    "fast_detectgpt": "humanize.detectors.fast_detectgpt:FastDetectGPT",
    "binoculars": "humanize.detectors.binoculars:Binoculars",
    "metric_lr": "humanize.detectors.metric_lr:MetricFeaturesLR",
    # model-based: Hugging Face sequence classifiers (hf_classifier.py) and learned detectors
    "hf_classifier": "humanize.detectors.hf_classifier:HFClassifier",
    "roberta_openai": "humanize.detectors.hf_classifier:RobertaOpenAIDetector",
    "chatgpt_roberta": "humanize.detectors.hf_classifier:ChatGPTRobertaDetector",
    "radar": "humanize.detectors.hf_classifier:RadarDetector",
    "lm_d": "humanize.detectors.lm_d:LMDetector",
    "tfidf_lr": "humanize.detectors.tfidf:TfidfLogReg",
    "surface_probe": "humanize.detectors.surface:SurfaceProbe",
}


def register(name: str, target: "str | type[Detector]") -> None:
    if not isinstance(name, str) or not name:
        raise TypeError(f"detector name must be a non-empty str, got {name!r}")
    if not isinstance(target, str):
        if not (isinstance(target, type) and issubclass(target, Detector)):
            raise TypeError(f"register expects a Detector subclass or 'module:Class', got {target!r}")
    _REGISTRY[name] = target


def available() -> list[str]:
    return sorted(_REGISTRY)


def resolve(name: str) -> type[Detector]:
    if not isinstance(name, str):
        raise TypeError(f"detector name must be a str, got {type(name).__name__}")
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown detector {name!r}; available: {', '.join(available())}") from None
    if isinstance(target, type):
        return target
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)


def get(name: str, **params) -> Detector:
    cls = resolve(name)
    valid = cls._param_names()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(f"detector {name!r} has no parameter(s) {', '.join(unknown)}; valid: {', '.join(valid)}")
    return cls(**params)
