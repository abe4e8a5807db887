"""The base of every attack that rewrites a document with a generator (TH-Bench §2.2).

Subclasses implement :meth:`RewriteAttack.rewrite`: a list of documents in, a list of
``(new_text, info)`` out, so a whole batch of documents goes to the generator together
(left-padded, length-sorted batches on a local model; concurrent requests on an
endpoint). Each document's sampling seed comes from the attack's seed and the document
itself (:meth:`RewriteAttack.request_seed`), so an output does not depend on the batch.
Empty and whitespace-only documents are returned unchanged without a model call.
Edits are the word-level diff of the original and the rewrite (:mod:`.diff`), so
``apply_edits(original, edits) == text`` holds as for every other attack.
"""
from __future__ import annotations

from typing import Any, Sequence

from humanize._validation import InstanceOf
from humanize.models.loading import NONBLANK_STR

from ..base import AttackResult, BatchAttack, document_seed
from .diff import word_edits

__all__ = ["RewriteAttack", "resolve_paraphraser", "add_usage", "GENERATOR_SPEC"]

#: The parameter constraint of a generator spec (see :func:`humanize.generation.resolve_generator`): a model
#: name, ``"endpoint:<model>"`` or ``"dipper"`` (not blank), a Generator, or a dict with ``"backend"``.
#: Which name or dict resolves is checked when the generator is built, not here.
GENERATOR_SPEC = [NONBLANK_STR, InstanceOf("humanize.generation.base:Generator", name="a Generator"),
                  InstanceOf(dict, name="a dict with 'backend'")]

#: Counts a rewrite reports in ``AttackResult.info``: generator calls and their prompt / completion tokens.
USAGE_KEYS = ("llm_queries", "llm_tokens_in", "llm_tokens_out")


def add_usage(info: dict, generations) -> dict:
    """Add a list of :class:`~humanize.generation.Generation` to ``info``'s usage counts (in place)."""
    info["llm_queries"] = info.get("llm_queries", 0) + len(generations)
    info["llm_tokens_in"] = info.get("llm_tokens_in", 0) + sum(g.tokens_in for g in generations)
    info["llm_tokens_out"] = info.get("llm_tokens_out", 0) + sum(g.tokens_out for g in generations)
    return info


def resolve_paraphraser(owner: str, value: Any):
    """A generator from a parameter value (see :func:`humanize.generation.resolve_generator`), errors named."""
    from humanize.generation import resolve_generator

    try:
        return resolve_generator(value)
    except TypeError as exc:
        raise TypeError(f"{owner}: {exc}") from None


class RewriteAttack(BatchAttack):
    """An attack whose output is a model's rewrite of the document; ``rewrite`` does the work."""

    has_rate = False
    version = "1"

    def request_seed(self, text: str, step: int = 0) -> int:
        """The sampling seed of ``text``'s ``step``-th generation (a 63-bit int, private to the document)."""
        return document_seed(int(getattr(self, "seed", 0)), f"{self.name}/{step}", text) & ((1 << 63) - 1)

    def rewrite(self, texts: list[str]) -> list[tuple[str, dict]]:
        """``(rewritten text, info)`` for each non-blank document, in order."""
        raise NotImplementedError(f"{type(self).__name__} must implement rewrite()")

    def _results(self, texts: Sequence[str]) -> list[AttackResult]:
        todo = [i for i, t in enumerate(texts) if t.strip()]
        done = dict(zip(todo, self.rewrite([texts[i] for i in todo]))) if todo else {}
        params = self.get_params()
        out = []
        for i, t in enumerate(texts):
            new, info = done.get(i, (t, {"skipped": "blank"}))
            out.append(AttackResult(original=t, text=new, attack=self.name, params=dict(params),
                                    _edits=(lambda t=t, new=new: word_edits(t, new)), info=dict(info)))
        return out
