"""Detectors by name, so configs and the CLI can build them.

Adding a detector is one new module plus one line in ``_REGISTRY`` (an import
path, resolved on first use).
"""

from __future__ import annotations

from humanize._registry import Registry

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
    "binoculars_qwen": "humanize.detectors.binoculars_qwen:BinocularsQwen",  # offline pair (opt-in Qwen extras)
    "metric_lr": "humanize.detectors.metric_lr:MetricFeaturesLR",
    # model-based: Hugging Face sequence classifiers (hf_classifier.py) and learned detectors
    "hf_classifier": "humanize.detectors.hf_classifier:HFClassifier",
    "roberta_openai": "humanize.detectors.hf_classifier:RobertaOpenAIDetector",
    "chatgpt_roberta": "humanize.detectors.hf_classifier:ChatGPTRobertaDetector",
    "radar": "humanize.detectors.hf_classifier:RadarDetector",
    "lm_d": "humanize.detectors.lm_d:LMDetector",
    "tfidf_lr": "humanize.detectors.tfidf:TfidfLogReg",
    "surface_probe": "humanize.detectors.surface:SurfaceProbe",
    # watermark detectors (humanize.watermarks): a scheme's statistic from the tokenizer and the key, no LM
    "kgw": "humanize.detectors.watermark:KGWDetector",  # Kirchenbauer et al. 2023
    "unigram": "humanize.detectors.watermark:UnigramDetector",  # Zhao et al. 2024
    "synthid": "humanize.detectors.watermark:SynthIDDetector",  # Dathathri et al. 2024
    # detectors people already have: a Python function (by import path, fn="pkg.mod:score") or an HTTP service
    "function": "humanize.detectors.function:FunctionDetector",
    "endpoint": "humanize.detectors.endpoint:EndpointDetector",
}

_registry = Registry("detector", Detector, _REGISTRY, group="humanize.detectors")
register, available, resolve, get, origin = _registry.functions()
