"""Binoculars with an offline observer/performer pair: Qwen2.5-Coder-0.5B-Instruct and -1.5B-Instruct.

The paper's pair (Falcon-7B / Falcon-7B-instruct, Hans et al. 2024) needs the hub and a
GPU. The two Qwen2.5-Coder-Instruct models install from the package index (opt-in
extras ``qwen-0-5b`` and ``qwen-1-5b``, see :mod:`humanize.models.split_gguf`) and share
one tokenizer, which is what Binoculars needs: the smaller one observes, the larger one
performs, as in MODELS.md's check. Both are instruction-tuned (the paper's observer is a
base model), so this is a stand-in for the method, not the paper's detector.
"""
from __future__ import annotations

from .binoculars import Binoculars
from .lm_stats import DEFAULT_MAX_TOKENS

__all__ = ["BinocularsQwen"]


class BinocularsQwen(Binoculars):
    """:class:`Binoculars` whose default pair is the packaged Qwen2.5-Coder 0.5B (observer) / 1.5B (performer)."""

    name = "binoculars_qwen"

    def __init__(self, observer="qwen2.5-coder-0.5b-instruct", performer="qwen2.5-coder-1.5b-instruct", *,
                 max_tokens: int = DEFAULT_MAX_TOKENS, batch_tokens=None, device=None, dtype=None):
        super().__init__(observer, performer, max_tokens=max_tokens, batch_tokens=batch_tokens, device=device,
                         dtype=dtype)
