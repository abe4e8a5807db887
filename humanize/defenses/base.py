"""The Defense API: a deterministic, parameterised rewrite applied to a text *before* a detector scores it.

A defense is the mirror of an attack (``humanize.attacks``): it takes a text and
returns an :class:`~humanize.attacks.AttackResult` whose exact edits over the
original show what it changed, so the runner, the reports and the documents page
treat attacked and defended texts alike. Unlike an attack it has no rate and no
seed: it is a pure function of its parameters and the text (issue #12 §3).
"""

from __future__ import annotations

from typing import Sequence

from humanize.params import EqualByParams, ParamsMixin
from humanize.validation import check_text, check_texts
from humanize.attacks.base import AttackResult, Edit

__all__ = ["Defense"]

_new = object.__new__


class Defense(EqualByParams, ParamsMixin):
    """Base class: subclasses set ``name`` (the registry key) and implement ``_run(text) -> (text, edits)``.

    ``edits`` are sorted, non-overlapping :class:`~humanize.attacks.Edit` s over
    ``text`` with ``apply_edits(text, edits) == output``, or a callable giving them (read
    only when a caller asks for ``result.edits``). Constructor arguments are the
    parameters (scikit-learn style), declared in ``_parameter_constraints`` (cross-parameter
    rules in ``_check()``).
    """

    name: str = "defense"
    #: Bump when the same parameters start giving other outputs (caches key on the fingerprint).
    version: str = "1"

    def _run(self, text: str) -> tuple[str, list[Edit]]:
        raise NotImplementedError(f"{type(self).__name__} must implement _run()")

    def apply(self, text: str) -> AttackResult:
        """Defend one document: the rewritten text with its exact edits over ``text``."""
        out, edits = self._run(check_text(text, type(self).__name__, "apply"))
        r = _new(AttackResult)
        d = r.__dict__
        d["original"] = text
        d["text"] = out
        d["attack"] = self.name
        d["params"] = self.get_params(deep=False)
        d["_edits"] = edits
        d["info"] = {}
        return r

    def __call__(self, text: str) -> str:
        """Defend one document and return only the text."""
        return self._run(check_text(text, type(self).__name__, "__call__"))[0]

    def batch(self, texts: Sequence[str]) -> list[AttackResult]:
        """Defend many documents; each output depends only on its own document."""
        return [self.apply(t) for t in check_texts(texts, type(self).__name__, "batch")]


