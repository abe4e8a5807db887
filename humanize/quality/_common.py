"""Input checks shared by the quality meters."""
from __future__ import annotations

from typing import Any

__all__ = ["as_text_list", "check_text"]


def check_text(text: Any, what: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, got {type(text).__name__}")
    return text


def as_text_list(texts: Any, what: str = "texts") -> list[str]:
    """A list of str from a list/tuple/Series/array of str; TypeError naming the bad type otherwise."""
    if isinstance(texts, (str, bytes)) or texts is None or not hasattr(texts, "__iter__"):
        raise TypeError(f"{what} must be a sequence of str, got {type(texts).__name__}")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"{what}[{i}] must be a str, got {type(t).__name__}")
    return out
