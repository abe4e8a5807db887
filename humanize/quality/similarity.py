"""Semantic similarity: cosine of sentence embeddings (TH-Bench Section 3.3, "CS").

TH-Bench embeds the original and the attacked text with all-MiniLM-L6-v2
and reports their cosine; the packaged alias ``all-minilm-l6-v2`` is that model.
The encoder reads a text's first ``max_seq_length`` (256) tokens; only a prefix
holding them is tokenised, so the cost stops growing with the text's length.
"""
from __future__ import annotations

import math
from numbers import Integral
from typing import Union

import numpy as np

from humanize.validation import MODEL, Interval, validate_parameter_constraints
from humanize.models import DEFAULT_SENTENCE_ENCODER, LoadedModel, load_sentence_encoder
from humanize.models.text import model_input, token_prefix

from ._common import check_pairs, one_or_many_pairs
from .custom import PairMeter, notes_of

__all__ = ["Cosine", "semantic_similarity", "similarity_with_notes", "get_encoder"]


def get_encoder(encoder: Union[str, LoadedModel], device=None) -> LoadedModel:
    if isinstance(encoder, LoadedModel):
        if encoder.kind != "sentence_encoder":
            raise ValueError(f"semantic similarity needs a sentence encoder, got a {encoder.kind}")
        return encoder
    return load_sentence_encoder(encoder, device=device)


def _encoder_prefixes(enc: LoadedModel, texts: list[str]) -> list[str]:
    """Each text cut to a prefix holding the tokens the encoder reads (it truncates at ``max_seq_length``)."""
    model = enc.model
    limit, tok = getattr(model, "max_seq_length", None), getattr(model, "tokenizer", None)
    if not isinstance(limit, int) or tok is None:
        return texts

    def count(prefix: str) -> int:
        return len(tok(prefix, add_special_tokens=False, return_attention_mask=False)["input_ids"])

    return [token_prefix(t, limit, count) for t in texts]


def similarity_with_notes(originals, attacked, encoder: Union[str, LoadedModel] = DEFAULT_SENTENCE_ENCODER, *,
                          batch_size: int = 32, device=None) -> tuple[np.ndarray, list[str], str]:
    """Cosines, a reason for every NaN and the resolved encoder name."""
    originals, attacked = check_pairs("humanize.quality", "similarity_with_notes", originals, attacked)
    validate_parameter_constraints("humanize.quality.similarity_with_notes",
                                   {"batch_size": [Interval(Integral, 1, None)]}, {"batch_size": batch_size})
    enc = get_encoder(encoder, device)
    unique = [t for t in dict.fromkeys(originals + attacked) if t]
    emb = {}
    if unique:
        clean, _ = model_input(unique, where=f"sentence encoder {enc.resolved}")
        clean = _encoder_prefixes(enc, clean)
        vecs = enc.model.encode(clean, batch_size=int(batch_size), convert_to_numpy=True,
                                normalize_embeddings=True, show_progress_bar=False)
        emb = dict(zip(unique, np.asarray(vecs, dtype=np.float64)))
    values, notes = [], []
    for a, b in zip(originals, attacked):
        if not a or not b:
            values.append(math.nan)
            notes.append("empty original" if not a else "empty attacked text")
        else:
            values.append(float(np.clip(emb[a] @ emb[b], -1.0, 1.0)))
            notes.append("")
    return np.array(values, dtype=float), notes, enc.resolved


def semantic_similarity(originals, attacked, encoder: Union[str, LoadedModel] = DEFAULT_SENTENCE_ENCODER, *,
                        batch_size: int = 32, device=None):
    """Cosine similarity of embeddings: a float for two str, an array for two sequences.

    NaN when either text is empty. Lone surrogates are embedded as U+FFFD (with a
    :class:`~humanize.models.TextRepairWarning`).
    """
    originals, attacked, single = one_or_many_pairs("semantic_similarity", originals, attacked)
    values, _, _ = similarity_with_notes(originals, attacked, encoder, batch_size=batch_size, device=device)
    return float(values[0]) if single else values


class Cosine(PairMeter):
    """Semantic consistency: cosine of the two texts' sentence embeddings (TH-Bench Section 3.3, "CS").

    Columns ``cosine`` and ``cosine_model`` (the resolved encoder)."""

    name = "cosine"
    default = True
    columns = ("cosine", "cosine_model")
    as_read = True
    _model_params = ("encoder",)
    _parameter_constraints = {"encoder": [MODEL]}

    def __init__(self, encoder: Union[str, LoadedModel] = DEFAULT_SENTENCE_ENCODER, device=None):
        self._init_params(locals())

    def measure(self, originals, attacked) -> tuple[dict, list[str]]:
        cos, why, model = similarity_with_notes(originals, attacked, self.encoder, device=self.device)
        return {"cosine": cos, "cosine_model": [model] * len(cos)}, notes_of({"cosine": why})

