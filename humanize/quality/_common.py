"""Input checks shared by the quality meters."""
from __future__ import annotations

from typing import Any

from humanize.validation import check_texts

__all__ = ["check_pairs", "check_text", "one_or_many_pairs"]


def check_text(text: Any, what: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, got {type(text).__name__}")
    return text


def check_pairs(owner: str, method: str, originals: Any, attacked: Any) -> tuple[list[str], list[str]]:
    """Two batches of equal length (:func:`humanize.validation.check_texts`, the one batch rule: a str,
    a dict, a set, None or a number is refused), named ``owner.method(originals)`` / ``(attacked)``."""
    originals = check_texts(originals, owner, f"{method}(originals)")
    attacked = check_texts(attacked, owner, f"{method}(attacked)")
    if len(originals) != len(attacked):
        raise ValueError(f"{owner}.{method}: originals and attacked differ in length: {len(originals)} != "
                         f"{len(attacked)}")
    return originals, attacked


def one_or_many_pairs(what: str, originals: Any, attacked: Any) -> tuple[Any, Any, bool]:
    """The two arguments of a pair metric (two str, or two sequences of str) as two sequences, and whether
    they were a single pair (the metric then returns a float, not an array)."""
    if isinstance(originals, str) != isinstance(attacked, str):
        raise TypeError(f"{what} takes two str or two sequences of str, got "
                        f"{type(originals).__name__} and {type(attacked).__name__}")
    if isinstance(originals, str):
        return [originals], [attacked], True
    return originals, attacked, False
