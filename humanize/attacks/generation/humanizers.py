"""The RL-trained humanizers as attacks: a plain rewrite with AuthorMist or StealthRL (issue #23 §2).

Both are chat models fine-tuned with detector feedback (GRPO); at inference they are plain
paraphrasers, so each attack here is :class:`~.paraphrase.Paraphrase` with the model's preset
(:mod:`humanize.generation.presets`): its weights, the prompt it was trained with and its
recommended decoding, the document sent ``chunk_sentences`` sentences at a time like every chat
paraphrase, answers cleaned and classified the same way. The same presets are paraphrasers for
any attack that takes one: ``Paraphrase(paraphraser="authormist")``,
``AdversarialParaphrase(paraphraser="stealthrl", mode="rerank", ...)``.

- :class:`AuthorMist`: ``authormist/authormist-originality`` (Qwen2.5-3B-Instruct; David & Gervais
  2025, arXiv 2503.08716).
- :class:`StealthRL`: Qwen3-4B-Instruct-2507 plus the StealthRL LoRA adapter (arXiv 2602.08934). The
  adapter has no published hub id: pass ``adapter=`` (a directory or hub id); loading it needs peft
  (``pip install 'humanize-bench[lora]'``).

``model=`` points the attack at another copy of the weights (a directory; for StealthRL the base
model); ``via="endpoint"`` with ``base_url=`` asks an OpenAI-compatible server for the model by
name instead of loading it.
"""
from __future__ import annotations

from numbers import Integral
from typing import Any, Optional

from humanize.validation import MODEL, NONBLANK_STR, Interval, Options
from humanize.generation.base import Generator

from .paraphrase import DEFAULT_INSTRUCTION, Paraphrase

__all__ = ["AuthorMist", "StealthRL", "RLHumanizer"]


class RLHumanizer(Paraphrase):
    """A plain rewrite with a released humanizer's preset (:data:`~humanize.generation.presets.PRESETS`)."""

    preset = ""
    version = "1"
    _model_params = ("model",)
    #: Paraphrase's instruction, so its chunks get the preset's own prompt (see ``chunk_prompt``).
    instruction = DEFAULT_INSTRUCTION
    _parameter_constraints = {
        "model": [MODEL, None],
        "adapter": [NONBLANK_STR, None],
        "via": [Options(str, {"local", "endpoint"})],
        "base_url": [NONBLANK_STR, None],
        "max_new_tokens": [Interval(Integral, 1, None), None],
        "max_chunks": [Interval(Integral, 1, None), None],
    }

    def generator(self) -> Generator:
        """The preset as a :class:`~humanize.generation.presets.PresetChat` (built once per parameter values)."""
        from humanize.generation.presets import PresetChat

        params = {k: getattr(self, k, None) for k in ("model", "adapter", "via", "base_url", "max_new_tokens",
                                                      "device", "dtype")}
        key = repr(sorted((k, repr(v)) for k, v in params.items()))
        found = self.__dict__.get("_preset_gen")
        if found is not None and found[0] == key:
            return found[1]
        gen = PresetChat(preset=self.preset, **params)
        self.__dict__["_preset_gen"] = (key, gen)
        return gen

    def provenance(self) -> dict:
        """As every attack's, plus the preset generator's (weights' identity, prompt, decoding)."""
        out = super().provenance()
        out["params"]["generator"] = self.generator().provenance()
        return out


class AuthorMist(RLHumanizer):
    """AuthorMist (``authormist/authormist-originality``) rewriting each document (module docstring)."""

    name = "authormist"
    preset = "authormist"

    def __init__(self, model: Any = None, seed: int = 0, chunk_sentences: int = 3, on_bad_answer: str = "keep",
                 max_retries: int = 2, max_new_tokens: Optional[int] = None, via: str = "local",
                 base_url: Optional[str] = None, device: Any = None, dtype: Any = None,
                 max_chunks: Optional[int] = None):
        self._init_params(locals())

    adapter = None


class StealthRL(RLHumanizer):
    """StealthRL (Qwen3-4B-Instruct-2507 + its LoRA adapter, given as ``adapter=``) rewriting each document."""

    name = "stealthrl"
    preset = "stealthrl"

    def __init__(self, adapter: Optional[str] = None, model: Any = None, seed: int = 0, chunk_sentences: int = 3,
                 on_bad_answer: str = "keep", max_retries: int = 2, max_new_tokens: Optional[int] = None,
                 via: str = "local", base_url: Optional[str] = None, device: Any = None, dtype: Any = None,
                 max_chunks: Optional[int] = None):
        self._init_params(locals())
