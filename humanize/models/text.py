"""The one door through which texts enter model code (tokenizers, LMs, encoders, token counters).

A Python ``str`` may hold lone surrogates (U+D800..U+DFFF, e.g. from
``"\\ud800"`` literals, ``surrogateescape`` decoding or a JSON string with an
unpaired ``\\uD83D``). Such a text cannot be encoded as UTF-8, so every fast
tokenizer rejects it and, passed in a batch, it sinks the whole batch. Policy:
:func:`model_input` replaces each surrogate code point with U+FFFD (the
Unicode replacement character), one for one, so lengths and character offsets
are unchanged, and emits one :class:`TextRepairWarning` per call saying how
many texts were repaired. Every other text passes through untouched, so a
batch scores exactly like its texts one by one.

Models read only a text's first tokens (a window, a truncation length);
:func:`token_prefix` gives a prefix that holds them, so a 10 MB text costs the
tokenizer about as much as the part the model reads.
"""
from __future__ import annotations

import os
import re
import sys
import warnings
from typing import Callable, Iterable

__all__ = ["HumanizeWarning", "TextRepairWarning", "model_input", "repair_text", "token_prefix"]

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class HumanizeWarning(UserWarning):
    """Base class of the warnings humanize emits about its inputs."""


class TextRepairWarning(HumanizeWarning, UnicodeWarning):
    """Some texts were not valid Unicode for a model and were repaired before model input."""


def repair_text(text: str) -> tuple[str, bool]:
    """``(text with lone surrogates -> U+FFFD, whether anything changed)``; same length as ``text``."""
    try:
        text.encode("utf-8")
        return text, False
    except UnicodeEncodeError:
        return _SURROGATE.sub(REPLACEMENT, text), True


def _caller_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside the humanize package (the user's call)."""
    frame, level = sys._getframe(2), 2  # 1 = the function that warns
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def model_input(texts: Iterable[str], *, where: str = "model input", warn: bool = True) -> tuple[list[str], int]:
    """``(texts ready for a tokenizer, how many were repaired)``.

    ``texts`` must already be str (callers validate types and say what was
    wrong); ``where`` names the consumer in the warning.
    """
    out, repaired = [], 0
    for text in texts:
        clean, changed = repair_text(text)
        out.append(clean)
        repaired += changed
    if repaired and warn:
        warnings.warn(f"{where}: {repaired} of {len(out)} text(s) contain lone surrogates (U+D800-U+DFFF) that "
                      f"cannot be encoded as UTF-8; each was replaced with U+FFFD", TextRepairWarning,
                      stacklevel=_caller_stacklevel())
    return out, repaired


def _whitespace_cut(text: str, limit: int) -> int:
    """The last position <= ``limit`` where a run of spaces/newlines starts after a non-space (0 if none)."""
    i = max(text.rfind(" ", 0, limit + 1), text.rfind("\n", 0, limit + 1))
    while i > 0 and text[i - 1].isspace():
        i -= 1
    return max(i, 0)


def token_prefix(text: str, n_tokens: int, count: Callable[[str], int], chars_per_token: int = 8) -> str:
    """A prefix of ``text`` whose tokens are the full text's first tokens, more than ``n_tokens`` of them.

    The prefix ends where a run of whitespace starts: BPE, WordPiece and
    SentencePiece tokenizers all pre-split there, so its tokens equal the first
    tokens of the whole text. ``count(prefix)`` is the number of tokens. Tries
    ``n_tokens * chars_per_token`` characters, then four times more, and so on;
    returns ``text`` itself when it is shorter or has no such cut (tokenizer work
    is then linear in the text, otherwise at most about 4/3 of the prefix).
    """
    limit = max(1024, int(n_tokens) * chars_per_token)
    while limit < len(text):
        cut = _whitespace_cut(text, limit)
        if cut > 0 and count(text[:cut]) > n_tokens:
            return text[:cut]
        limit *= 4
    return text
