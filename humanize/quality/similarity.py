"""Semantic similarity: cosine of sentence embeddings (TH-Bench Section 3.3, "CS").

TH-Bench embeds the original and the attacked text with all-MiniLM-L6-v2
and reports their cosine; the packaged alias ``all-minilm-l6-v2`` is that model.
The encoder reads a text's first ``max_seq_length`` (256) tokens; only a prefix
holding them is tokenised, so the cost stops growing with the text's length.

The :class:`Cosine` meter runs the encoder in ``dtype`` (``"auto"``: bfloat16 on a CPU with bfloat16
instructions, :mod:`humanize.models.precision`; on the demo's pairs its cosines differ from float32's by at
most 0.003, ``tests/models/test_precision.py``) and embeds each distinct text once per meter: the original
of eleven attacks, and a text the reader leaves as it is (:class:`~humanize.quality.as_read.AsRead`), is not
embedded again.
"""
from __future__ import annotations

import math
from numbers import Integral
from typing import Union

import numpy as np

from humanize.validation import MODEL, Interval, validate_parameter_constraints
from humanize.models import DEFAULT_SENTENCE_ENCODER, LoadedModel, load_sentence_encoder
from humanize.models.scoring import one_row_per_batch
from humanize.models.text import model_input, token_prefix

from ._common import check_pairs, one_or_many_pairs
from .custom import PairMeter, notes_of

__all__ = ["Cosine", "semantic_similarity", "similarity_with_notes", "get_encoder"]


def get_encoder(encoder: Union[str, LoadedModel], device=None, dtype=None) -> LoadedModel:
    if isinstance(encoder, LoadedModel):
        if encoder.kind != "sentence_encoder":
            raise ValueError(f"semantic similarity needs a sentence encoder, got a {encoder.kind}")
        return encoder
    return load_sentence_encoder(encoder, device=device, dtype=dtype)


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
                          batch_size: int = 32, device=None, dtype=None,
                          embedded: "dict | None" = None) -> tuple[np.ndarray, list[str], str]:
    """Cosines, a reason for every NaN and the resolved encoder name. ``dtype``: the encoder's precision when
    ``encoder`` is a name (None: float32 on a CPU). ``embedded``: a dict of the embeddings computed so far
    (text -> unit vector), read and added to, so that a text is embedded once across calls."""
    originals, attacked = check_pairs("humanize.quality", "similarity_with_notes", originals, attacked)
    validate_parameter_constraints("humanize.quality.similarity_with_notes",
                                   {"batch_size": [Interval(Integral, 1, None)]}, {"batch_size": batch_size})
    enc = get_encoder(encoder, device, dtype)
    emb = {} if embedded is None else embedded
    unique = [t for t in dict.fromkeys(originals + attacked) if t and t not in emb]
    if unique:
        clean, _ = model_input(unique, where=f"sentence encoder {enc.resolved}")
        clean = _encoder_prefixes(enc, clean)
        # in reduced precision a text's embedding would depend on the texts padded with it: one text per batch (as
        # the causal LMs score, humanize.models.scoring.one_row_per_batch); on a CPU it costs no time
        size = 1 if one_row_per_batch(enc) else int(batch_size)
        vecs = enc.model.encode(clean, batch_size=size, convert_to_numpy=True, normalize_embeddings=True,
                                show_progress_bar=False)
        vecs = np.asarray(vecs, dtype=np.float64)  # unit length again in float64: a bfloat16 norm is off by 1e-3
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        emb.update(zip(unique, vecs))
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

    Columns ``cosine`` and ``cosine_model`` (the resolved encoder).

    encoder : the sentence encoder (a name or a loaded model)
    device : its device (None: CUDA when present)
    dtype : its precision when ``encoder`` is a name (``"auto"``: bfloat16 on a CPU with bfloat16 instructions,
        else float32; :mod:`humanize.models.precision`); a text is embedded once per meter object
    """

    name = "cosine"
    default = True
    columns = ("cosine", "cosine_model")
    as_read = True
    #: 2: the encoder runs in ``dtype``, by default "auto" (bfloat16 on a CPU with bfloat16 instructions; issue #38)
    version = "2"
    _model_params = ("encoder",)
    _parameter_constraints = {"encoder": [MODEL]}
    _derived_state = ("_embedded",)
    #: at most this many embeddings are kept for reuse (384 float64 each: 3 KiB); the oldest go first
    _KEEP = 4096

    def __init__(self, encoder: Union[str, LoadedModel] = DEFAULT_SENTENCE_ENCODER, device=None, dtype="auto"):
        self._init_params(locals())

    def measure(self, originals, attacked) -> tuple[dict, list[str]]:
        embedded = self.__dict__.setdefault("_embedded", {})
        while len(embedded) > self._KEEP:
            embedded.pop(next(iter(embedded)))
        cos, why, model = similarity_with_notes(originals, attacked, self.encoder, device=self.device,
                                                dtype=self.dtype, embedded=embedded)
        return {"cosine": cos, "cosine_model": [model] * len(cos)}, notes_of({"cosine": why})

