"""Text generation back ends for the rewriting attacks: local transformers models, OpenAI-compatible
endpoints and the DIPPER paraphraser, behind one :class:`Generator` interface.

>>> from humanize.generation import resolve_generator
>>> resolve_generator("smollm2-135m-instruct")                     # doctest: +SKIP
>>> resolve_generator({"backend": "endpoint", "model": "gpt-4o-mini"})  # doctest: +SKIP
"""
from __future__ import annotations

from typing import Any

from humanize._lazy import lazy_getattr
from humanize._lazy import registry_exports as _registry_exports
from humanize._registry import Registry

from .base import Generation, Generator, Request, chat, check_requests, report_usage

_REGISTRY: dict = {
    "local": "humanize.generation.local:LocalChat",          # a transformers causal (chat) LM, batched
    "endpoint": "humanize.generation.endpoint:EndpointChat",  # any OpenAI-compatible chat-completions server
    "dipper": "humanize.generation.dipper:Dipper",            # Krishna et al. 2023, the T5-XXL paraphraser
    "preset": "humanize.generation.presets:PresetChat",       # a released rewriter (AuthorMist, StealthRL)
    "watermarked": "humanize.generation.watermarked:WatermarkedChat",  # a local LM with a watermark (issue #37)
}
_registry = Registry("generator back end", Generator, _REGISTRY)
available = _registry.available
_CLASSES = _registry_exports(_REGISTRY)

__all__ = ["Generation", "Generator", "Request", "chat", "check_requests", "report_usage", "resolve_generator",
           "available", *_CLASSES]

#: Model names that mean DIPPER (the hub id of the released model, and a short alias).
DIPPER_NAMES = ("dipper", "kalpeshk2011/dipper-paraphraser-xxl")
#: Names of the released rewriters' presets (humanize.generation.presets.PRESETS; kept here so that
#: resolving a plain model name imports nothing more).
PRESET_NAMES = ("authormist", "stealthrl")


def resolve_generator(spec: Any) -> Generator:
    """A :class:`Generator` from what a user or a config gives.

    - a ``Generator``: itself;
    - ``"endpoint:<model>"``: that model on the OpenAI-compatible endpoint named by
      ``OPENAI_BASE_URL`` (or OpenAI's), key from ``OPENAI_API_KEY``;
    - ``"dipper"`` or DIPPER's hub id: :class:`~humanize.generation.dipper.Dipper`;
    - a preset's name (``"authormist"``, ``"stealthrl"``: :data:`~humanize.generation.presets.PRESETS`):
      :class:`~humanize.generation.presets.PresetChat`, the model with its trained prompt and decoding;
    - any other string: a local chat model (packaged alias, directory or hub id);
    - a dict: ``{"backend": "local" | "endpoint" | "dipper" | "preset", **parameters}``.
    """
    if isinstance(spec, Generator):
        return spec
    if isinstance(spec, str):
        name = spec.strip()
        if not name:
            raise ValueError("a generator name must not be empty; give a model name, 'endpoint:<model>' or 'dipper'")
        if name.lower().startswith("endpoint:"):
            return _registry.get("endpoint", model=name.split(":", 1)[1])
        if name.lower() in DIPPER_NAMES:
            return _registry.get("dipper")
        if name.lower() in PRESET_NAMES:
            return _registry.get("preset", preset=name.lower())
        return _registry.get("local", model=name)
    if isinstance(spec, dict):
        params = dict(spec)
        backend = params.pop("backend", "local")
        return _registry.get(backend, **params)
    raise TypeError(f"a generator must be a Generator, a model name or a dict with 'backend', "
                    f"got {type(spec).__name__}")


__getattr__ = lazy_getattr(__name__, _CLASSES, _REGISTRY)
