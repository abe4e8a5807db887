"""Token counting for the cost meter and the length sweep.

Default: GPT-2's BPE as shipped inside the ``blingfire`` wheel -- the tokenizer
of TH-Bench's reference model, needing no model download and about a
microsecond per token. Any Hugging Face tokenizer (or a ``LoadedModel``) works too.
Texts that cannot be encoded as UTF-8 (lone surrogates) are counted as if each
surrogate were U+FFFD (:func:`humanize.models.text.model_input`, with a warning);
spans stay in the caller's character offsets. Cost: linear in the text length.
"""
from __future__ import annotations

import functools
import os
from typing import Any, Callable

import numpy as np

__all__ = ["resolve_tokenizer", "Tokenizer"]

# A tokenizer here is a function text -> (n, 2) int array of character spans.
Tokenizer = Callable[[str], np.ndarray]


@functools.lru_cache(maxsize=1)
def _blingfire_gpt2():
    import blingfire

    return blingfire, blingfire.load_model(os.path.join(os.path.dirname(blingfire.__file__), "gpt2.bin"))


def _model_text(text: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"token counting needs a str, got {type(text).__name__}")
    from humanize.models.text import model_input  # lazy: the cost layer does not import the model layer

    return model_input([text], where="token counter")[0][0]


def gpt2_spans(text: str) -> np.ndarray:
    """Character spans of GPT-2 BPE tokens (blingfire)."""
    bf, handle = _blingfire_gpt2()
    text = _model_text(text)
    data = text.encode("utf-8")
    if not data:
        return np.zeros((0, 2), dtype=np.int64)
    _, _, ends = bf.utf8text_to_ids_with_offsets(handle, data, len(data) + 8, 0, True)
    # blingfire's byte ends for tokens it makes from nothing but whitespace are not reliable: -1 here,
    # past the end of the text on other machines (seen in CI for " "). Keep them inside the text, in order.
    ends = np.maximum.accumulate(np.clip(np.asarray(ends, dtype=np.int64), -1, len(data) - 1))
    # byte offsets (inclusive ends) -> character offsets
    cp = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    width = 1 + (cp >= 0x80).astype(np.int64) + (cp >= 0x800) + (cp >= 0x10000)  # UTF-8 bytes per char
    char_at = np.concatenate([[0], np.cumsum(width)])
    end_chars = np.searchsorted(char_at, ends + 1, side="left")
    starts = np.concatenate([[0], end_chars[:-1]])
    return np.stack([starts, end_chars], axis=1).astype(np.int64)


def _hf_spans(tokenizer) -> Tokenizer:
    def spans(text: str) -> np.ndarray:
        enc = tokenizer(_model_text(text), add_special_tokens=False, return_offsets_mapping=True)
        return np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)
    return spans


def resolve_tokenizer(tokenizer: Any) -> Tokenizer:
    """``"gpt2"`` (blingfire), a Hugging Face tokenizer, an object with ``.tokenizer``, or a spans function."""
    if tokenizer is None or (isinstance(tokenizer, str) and tokenizer.lower() == "gpt2"):
        return gpt2_spans
    if isinstance(tokenizer, str):
        raise ValueError(f"unknown tokenizer {tokenizer!r}; pass 'gpt2', a tokenizer object or a function")
    inner = getattr(tokenizer, "tokenizer", None)
    if inner is None:  # a LoadedModel of a sentence encoder keeps its tokenizer on the model
        inner = getattr(getattr(tokenizer, "model", None), "tokenizer", None)
    if inner is not None and callable(inner):
        return _hf_spans(inner)
    if hasattr(tokenizer, "convert_ids_to_tokens") and callable(tokenizer):
        return _hf_spans(tokenizer)
    if callable(tokenizer):
        return tokenizer
    raise TypeError(f"tokenizer must be 'gpt2', a tokenizer or a function, got {type(tokenizer).__name__}")
