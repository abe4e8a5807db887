"""Meaning preserved, by natural language inference: does the rewrite entail the original, and back?

Two texts say the same thing when each entails the other: bidirectional entailment is the
semantic-equivalence test of Kuhn et al. (2023, "Semantic Uncertainty", ICLR, Section 3.2,
with DeBERTa-large-MNLI) and the "mutual implication" of Nighojkar & Licato (2021, ACL,
Section 3). Morris et al. (2020, "Reevaluating Adversarial Examples in Natural Language",
Section 4) show that word swaps passing an embedding-cosine check still change meaning;
NLI catches antonyms and contradictions that a cosine keeps high.

Both texts are split into sentences (blingfire). Equal counts pair by position. Otherwise each
attacked sentence goes with the original sentence it shares most words with (Jaccard of
lower-cased words; ties: the nearer relative position) and the attacked sentences that chose
the same original are joined, so a split sentence is compared as a whole; when an attacked
sentence shares no word with any original, or an original sentence is chosen by none (merged
or deleted), the whole texts are compared instead (cut to the model's input length), with a
note. Each pair is scored in both directions (premise original -> hypothesis attacked, and
back), every pair of every document in length-sorted batches under ``torch.inference_mode``;
an unchanged pair (identical text) scores entailment 1 and contradiction 0 without a model call.

Per document: ``entailment`` = mean over pairs of ``min(P(entail | o -> a), P(entail | a -> o))``,
``entailment_min`` = the worst pair's, ``contradiction`` = the largest contradiction probability
of any pair in either direction. The entailment and contradiction outputs are found in the
model's ``config.id2label`` (a label starting with "entail" / "contradict", any case).
"""
from __future__ import annotations

import math
import os
import re
from numbers import Integral
from typing import Any, Union

import numpy as np

from humanize.validation import MODEL, Interval, validate_parameter_constraints
from humanize.models import LoadedModel, load_sequence_classifier
from humanize.models.classify import softmax_in_batches
from humanize.models.text import model_input, repair_text, token_prefix

from ._common import check_pairs, one_or_many_pairs
from .custom import PairMeter, notes_of

__all__ = ["Entailment", "DEFAULT_NLI_MODEL", "entailment", "entailment_with_notes", "get_nli_model", "nli_labels",
           "sentence_pairs", "split_sentences"]

#: A three-way NLI cross-encoder (SNLI + MultiNLI), 184M parameters; ``microsoft/deberta-large-mnli`` works too.
DEFAULT_NLI_MODEL = "cross-encoder/nli-deberta-v3-base"
_WORD = re.compile(r"\w+")


# -- the model ---------------------------------------------------------------------------------
def get_nli_model(model: Union[str, os.PathLike, LoadedModel] = DEFAULT_NLI_MODEL, device=None) -> LoadedModel:
    """A loaded sequence classifier (fp32) from a hub id, a directory or a loaded model."""
    if isinstance(model, LoadedModel):
        if model.kind != "sequence_classifier":
            raise ValueError(f"entailment needs an NLI sequence classifier, got a {model.kind} ({model.resolved})")
        return model
    validate_parameter_constraints("humanize.quality.get_nli_model", {"nli_model": [MODEL]}, {"nli_model": model})
    return load_sequence_classifier(model, device=device, dtype="float32")


def nli_labels(loaded: LoadedModel) -> tuple[int, int]:
    """``(entailment index, contradiction index)`` from ``config.id2label``, or a ValueError naming the labels."""
    id2label = getattr(loaded.model.config, "id2label", None) or {}
    names = {int(k): str(v) for k, v in id2label.items()}

    def find(stem: str) -> int:
        hits = [i for i, n in sorted(names.items()) if n.strip().lower().startswith(stem)]
        if len(hits) != 1:
            raise ValueError(f"NLI model {loaded.resolved!r} has labels {names}; entailment needs exactly one "
                             f"label starting with {stem!r} (any case) and one starting with 'contradict'; "
                             f"use a 3-way NLI model such as {DEFAULT_NLI_MODEL} or microsoft/deberta-large-mnli")
        return hits[0]

    return find("entail"), find("contradict")


def _max_tokens(loaded: LoadedModel) -> int:
    """The longest input (special tokens included) the model takes: tokenizer and position-table limits."""
    from humanize.models.classify import input_limit

    return input_limit(loaded) or 512


# -- sentences and pairs -----------------------------------------------------------------------
def split_sentences(text: str) -> list[str]:
    """The text's sentences (blingfire), stripped; ``[]`` for empty or whitespace-only text."""
    if not text.strip():
        return []
    import blingfire

    clean, _ = repair_text(text)  # blingfire cannot encode lone surrogates; same length, offsets hold
    try:
        _, offsets = blingfire.text_to_sentences_and_offsets(clean)
    except AssertionError:  # blingfire on text without any sentence
        offsets = []
    out = [text[a:b].strip() for a, b in offsets if b > a]
    return [s for s in out if s] or [text.strip()]


def _words(sentence: str) -> set:
    return set(_WORD.findall(sentence.lower()))


def sentence_pairs(original: str, attacked: str) -> tuple[list[tuple[str, str]], str]:
    """``(pairs of (original part, attacked part), rule)``; rule is ``index``, ``overlap``, ``whole`` or ``empty``.

    See the module docstring for the rules.
    """
    a, b = split_sentences(original), split_sentences(attacked)
    if not a or not b:
        return [], "empty"
    if len(a) == len(b):
        return list(zip(a, b)), "index"
    words_a = [_words(s) for s in a]
    chosen: dict[int, list[str]] = {}
    for j, sentence in enumerate(b):
        wb = _words(sentence)
        where = j / max(len(b) - 1, 1)
        scores = [(len(wb & wa) / len(wb | wa) if wb | wa else 0.0, -abs(i / max(len(a) - 1, 1) - where), -i)
                  for i, wa in enumerate(words_a)]
        best = max(range(len(a)), key=lambda i: scores[i])
        if scores[best][0] == 0.0:
            return [(original.strip(), attacked.strip())], "whole"
        chosen.setdefault(best, []).append(sentence)
    if len(chosen) < len(a):
        return [(original.strip(), attacked.strip())], "whole"
    return [(a[i], " ".join(chosen[i])) for i in range(len(a))], "overlap"


# -- the model pass ----------------------------------------------------------------------------
def _nli_probabilities(loaded: LoadedModel, pairs: list[tuple[str, str]], batch_size: int
                       ) -> tuple[np.ndarray, list[bool]]:
    """Softmax rows for ``(premise, hypothesis)`` pairs and whether each pair was cut to fit the model."""
    tok, model = loaded.tokenizer, loaded.model
    limit = _max_tokens(loaded)
    texts = sorted({t for p in pairs for t in p})
    clean, _ = model_input(texts, where=f"NLI model {loaded.resolved}")
    counts: dict[str, int] = {}

    def count(prefix: str) -> int:
        return len(tok(prefix, add_special_tokens=False)["input_ids"])

    prefix = {}
    for t, c in zip(texts, clean):
        prefix[t] = token_prefix(c, limit, count)  # the rest would be cut anyway
        counts[t] = count(prefix[t])
    special = tok.num_special_tokens_to_add(pair=True)
    truncated = [counts[p] + counts[h] + special > limit for p, h in pairs]
    encoded = tok([prefix[p] for p, _ in pairs], [prefix[h] for _, h in pairs], truncation=True,
                  max_length=limit, padding=False)
    out = softmax_in_batches(model, tok, encoded, batch_size, can_pad=tok.pad_token_id is not None)
    return out, truncated


def _check_batch_size(batch_size: Any) -> int:
    validate_parameter_constraints("humanize.quality.entailment_with_notes",
                                   {"batch_size": [Interval(Integral, 1, None)]}, {"batch_size": batch_size})
    return int(batch_size)


def entailment_with_notes(originals, attacked, model: Union[str, os.PathLike, LoadedModel] = DEFAULT_NLI_MODEL, *,
                          batch_size: int = 16, device=None) -> tuple[dict, list[str], str]:
    """Per-document NLI figures, a note per document and the resolved model name.

    The figures are arrays under ``entailment``, ``entailment_min``, ``contradiction`` (NaN where
    a text is empty or whitespace-only, with the reason in the note), ``pairs`` (sentence pairs
    compared) and ``unchanged`` (pairs of identical text, scored without the model).
    """
    originals, attacked = check_pairs("humanize.quality", "entailment_with_notes", originals, attacked)
    batch_size = _check_batch_size(batch_size)
    loaded = get_nli_model(model, device)
    entail, contra = nli_labels(loaded)
    plans = [sentence_pairs(o, a) for o, a in zip(originals, attacked)]
    directed = sorted({d for pairs, _ in plans for p, h in pairs if p != h for d in ((p, h), (h, p))})
    probs, cut = (_nli_probabilities(loaded, directed, batch_size) if directed
                  else (np.zeros((0, 2)), []))
    row = {d: i for i, d in enumerate(directed)}
    limit = _max_tokens(loaded)
    n = len(originals)
    cols = {k: np.full(n, math.nan) for k in ("entailment", "entailment_min", "contradiction")}
    cols["pairs"] = np.zeros(n, dtype=np.int64)
    cols["unchanged"] = np.zeros(n, dtype=np.int64)
    notes = []
    for d, ((pairs, rule), o, a) in enumerate(zip(plans, originals, attacked)):
        if rule == "empty":
            notes.append("empty original" if not o.strip() else "empty attacked text")
            continue
        ents, cons, n_cut = [], [], 0
        for p, h in pairs:
            if p == h:
                ents.append(1.0)
                cons.append(0.0)
                cols["unchanged"][d] += 1
                continue
            fwd, bwd = row[(p, h)], row[(h, p)]
            ents.append(min(probs[fwd, entail], probs[bwd, entail]))
            cons.append(max(probs[fwd, contra], probs[bwd, contra]))
            n_cut += cut[fwd] or cut[bwd]
        cols["entailment"][d] = float(np.mean(ents))
        cols["entailment_min"][d] = float(np.min(ents))
        cols["contradiction"][d] = float(np.max(cons))
        cols["pairs"][d] = len(pairs)
        why = []
        if rule == "whole":
            why.append(f"whole texts compared ({len(split_sentences(o))} and {len(split_sentences(a))} "
                       f"sentences could not be paired)")
        if n_cut:
            why.append(f"{n_cut} pair(s) cut to the model's {limit} tokens")
        notes.append("; ".join(why))
    return cols, notes, str(loaded.resolved)


def entailment(originals, attacked, model: Union[str, os.PathLike, LoadedModel] = DEFAULT_NLI_MODEL, *,
               batch_size: int = 16, device=None):
    """Bidirectional entailment (mean over sentence pairs): a float for two str, an array for two sequences.

    NaN when either text is empty or whitespace-only.
    """
    originals, attacked, single = one_or_many_pairs("entailment", originals, attacked)
    cols, _, _ = entailment_with_notes(originals, attacked, model, batch_size=batch_size, device=device)
    return float(cols["entailment"][0]) if single else cols["entailment"]


class Entailment(PairMeter):
    """Meaning kept (opt-in): bidirectional NLI entailment over aligned sentence pairs.

    :func:`entailment_with_notes`; columns ``entailment``, ``entailment_min``, ``contradiction`` and ``entailment_model`` (the resolved model).

    nli_model : the NLI classifier (hub id, directory or loaded model)
    batch_size : sentence pairs per forward pass
    """

    name = "entailment"
    columns = ("entailment", "entailment_min", "contradiction", "entailment_model")
    _model_params = ("nli_model",)
    _parameter_constraints = {"nli_model": [MODEL], "batch_size": [Interval(Integral, 1, None)]}

    def __init__(self, nli_model: Union[str, os.PathLike, LoadedModel] = DEFAULT_NLI_MODEL, batch_size: int = 16,
                 device=None):
        self._init_params(locals())

    def measure(self, originals, attacked) -> tuple[dict, list[str]]:
        ent, why, model = entailment_with_notes(originals, attacked, self.nli_model, batch_size=self.batch_size,
                                                device=self.device)
        cols = {c: ent[c] for c in ("entailment", "entailment_min", "contradiction")}
        cols["entailment_model"] = [model] * len(why)
        return cols, notes_of({"entailment": why})

