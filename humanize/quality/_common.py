"""Input checks shared by the quality meters."""
from __future__ import annotations

from typing import Any

from humanize._validation import check_texts

__all__ = ["check_pairs", "check_text"]


def check_text(text: Any, what: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, got {type(text).__name__}")
    return text


def check_pairs(owner: str, method: str, originals: Any, attacked: Any) -> tuple[list[str], list[str]]:
    """Two batches of equal length (:func:`humanize._validation.check_texts`, the one batch rule: a str,
    a dict, a set, None or a number is refused), named ``owner.method(originals)`` / ``(attacked)``."""
    originals = check_texts(originals, owner, f"{method}(originals)")
    attacked = check_texts(attacked, owner, f"{method}(attacked)")
    if len(originals) != len(attacked):
        raise ValueError(f"{owner}.{method}: originals and attacked differ in length: {len(originals)} != "
                         f"{len(attacked)}")
    return originals, attacked
