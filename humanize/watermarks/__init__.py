"""Text watermarks: the schemes a generator embeds and a detector tests for (issue #37).

A scheme is a configured object (:class:`~humanize.params.ParamsMixin`) holding its key and its
parameters; the same object drives the logits of a local model at generation time
(:class:`humanize.generation.WatermarkedChat`) and the statistic of its detector
(:mod:`humanize.detectors.watermark`):

- :class:`KGW`: the green list of Kirchenbauer et al. (ICML 2023, Algorithm 2 "LeftHash" and the
  "SelfHash" of their reliability study, 2023), exactly as ``transformers.WatermarkLogitsProcessor``
  draws it, so text watermarked by ``model.generate(watermarking_config=...)`` is detected too;
- :class:`Unigram`: one fixed green list for every position (Zhao et al., ICLR 2024);
- :class:`SynthID`: tournament sampling over g-values (Dathathri et al., Nature 2024), through
  ``transformers.SynthIDTextWatermarkLogitsProcessor``'s hashing.

The key is the watermarking party's secret: it is shown, stored and fingerprinted only as a digest
(:func:`humanize._secrets.redact` hides a secret-named parameter, numbers included).
"""
from __future__ import annotations

from humanize._lazy import lazy_getattr

_CLASSES = {"Watermark": "base", "KGW": "kgw", "Unigram": "unigram", "SynthID": "synthid"}
SCHEMES = {"kgw": "KGW", "unigram": "Unigram", "synthid": "SynthID"}

__all__ = [*_CLASSES, "SCHEMES", "resolve_watermark"]


def resolve_watermark(spec):
    """A scheme from a scheme object, its name (``"kgw"``, ``"unigram"``, ``"synthid"``) or a dict
    ``{"scheme": name, **parameters}``."""
    from humanize.exceptions import InvalidParameterError

    from .base import Watermark

    if isinstance(spec, Watermark):
        return spec
    params = {}
    if isinstance(spec, dict):
        params = dict(spec)
        spec = params.pop("scheme", None)
    if not isinstance(spec, str) or spec.lower() not in SCHEMES:
        raise InvalidParameterError(f"watermark must be a scheme object, one of {sorted(SCHEMES)} or a dict "
                                    f"{{'scheme': name, ...}}, got {type(spec).__name__} {str(spec)[:40]!r}")
    import importlib

    name = spec.lower()
    cls = getattr(importlib.import_module(f"{__name__}.{name}"), SCHEMES[name])
    return cls(**params)


__getattr__ = lazy_getattr(__name__, _CLASSES)
