"""Text constraints that veto a guided paraphrase's candidates (issue #23 §3: QPA's constraints on a guided rewrite).

The constraints are QPA's own objects (:class:`~humanize.attacks.text_constraints.TextConstraint`:
perplexity and Flesch change, MiniLM similarity, entailment, or a user's subclass), each comparing
the original chunk with a candidate rewrite of it, all pairs of a batch at once. ``"qpa"`` names
TH-Bench's three (:func:`~humanize.attacks.text_constraints.sentence_constraints`: QPA's without the
swap-validity check, which judges word swaps, not a paraphrase). A pair is checked constraint by
constraint, in order, and only while it still passes, so a veto is counted once, under the first
constraint that refused it (its class name).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..text_constraints import TextConstraint, sentence_constraints
from .paraphrase import clean_answer
from .rewrite import Ask, add_usage

__all__ = ["resolve_constraints", "veto", "add_vetoes", "veto_token_chunks"]


def is_candidate_constraint(c: Any) -> bool:
    """Whether ``c`` filters word swaps (a word-level attack's ``CandidateConstraint``: ``word_ok`` and ``allows``)."""
    return not isinstance(c, TextConstraint) and all(callable(getattr(c, m, None)) for m in ("word_ok", "allows"))


def resolve_constraints(owner: str, constraints: Any) -> list:
    """The constraint objects of a ``constraints=`` value (None: none; ``"qpa"``: TH-Bench's three)."""
    if constraints is None:
        return []
    if isinstance(constraints, str):
        return sentence_constraints()  # TH-Bench's three: a paraphrase has no word swaps
    out = list(constraints)
    for c in out:
        if is_candidate_constraint(c):
            raise ValueError(f"{owner}: {type(c).__name__} is a CandidateConstraint, which filters word swaps; a "
                             "paraphrase is checked with TextConstraints (e.g. sentence_constraints(), "
                             "or constraints='qpa')")
        if not isinstance(c, TextConstraint):
            raise TypeError(f"{owner}: constraints must be TextConstraint objects, got {type(c).__name__}")
    return out


def veto(constraints: Sequence, originals: list[str], variants: list[str]) -> tuple[np.ndarray, list]:
    """Whether each ``(original, variant)`` pair passes every constraint, and for each pair the class name
    of the constraint that vetoed it (None: it passed)."""
    ok = np.ones(len(variants), dtype=bool)
    by: list = [None] * len(variants)
    for c in constraints:
        todo = np.flatnonzero(ok)
        if not len(todo):
            break
        passed = np.asarray(c.check([originals[i] for i in todo], [variants[i] for i in todo]), dtype=bool)
        if passed.shape != (len(todo),):
            raise RuntimeError(f"{type(c).__name__}.check returned {passed.shape} values for {len(todo)} pairs")
        for i, p in zip(todo.tolist(), passed.tolist()):
            if not p:
                ok[i], by[i] = False, type(c).__name__
    return ok, by


def add_vetoes(info: dict, names: Sequence) -> None:
    """Count the vetoes ``names`` (class names, None for a pass) in ``info["vetoed"]`` and ``info["vetoes"]``."""
    bad = [n for n in names if n is not None]
    info["vetoed"] = info.get("vetoed", 0) + len(bad)
    per = info.setdefault("vetoes", {})
    for n in bad:
        per[n] = per.get(n, 0) + 1


def veto_token_chunks(attack, texts: list[str], chunks: list, answers: list, infos: list[dict]) -> list:
    """The token-mode chunk results of an :class:`~.guided.AdversarialParaphrase` ``attack`` checked against its
    constraints at chunk end: a vetoed one falls back to a plain (unguided, sampled, seeded per chunk)
    paraphrase of the chunk, checked too; vetoed again, the chunk keeps its text. ``info``: ``vetoed`` /
    ``vetoes`` (per constraint), ``fallback_chunks``, ``vetoed_chunks``; the fallback's usage is added."""
    cons = attack._constraint_objects()
    done = [i for i, a in enumerate(answers) if a is not None]
    ok, by = veto(cons, [chunks[i][2] for i in done], [answers[i] for i in done])
    failed = [i for i, keep in zip(done, ok.tolist()) if not keep]
    for info in infos:
        info.setdefault("vetoed", 0)
        info.setdefault("vetoes", {})
        info.setdefault("fallback_chunks", 0)
        info.setdefault("vetoed_chunks", 0)
    for i, b in zip(done, by):
        add_vetoes(infos[chunks[i][0]], [b])
    if not failed:
        return answers
    asks = [Ask(chunks[i][2], attack._prompt(chunks[i][2]),
                (lambda attempt, t=texts[chunks[i][0]], k=chunks[i][1]:
                 attack.request_seed(t, (1 << 40) | k, attempt))) for i in failed]
    plain = attack.ask_chunks(attack.generator(), asks, clean_answer)
    got = [j for j, a in enumerate(plain) if a.text is not None]
    ok2, by2 = veto(cons, [asks[j].chunk for j in got], [plain[j].text for j in got]) if got else ([], [])
    passed = {j for j, keep in zip(got, list(ok2)) if keep}
    out = list(answers)
    for j, i in enumerate(failed):
        info = infos[chunks[i][0]]
        add_usage(info, plain[j].generations)
        if j in passed:
            out[i] = plain[j].text
            info["fallback_chunks"] += 1
        else:
            out[i] = None
            info["kept_chunks"] += 1
            info["vetoed_chunks"] += 1
    for j, b in zip(got, by2):
        add_vetoes(infos[chunks[failed[j]][0]], [b])
    return out
