"""Perplexity under a causal LM (TH-Bench Section 3.3: fluency, "PPL computed by GPT-2").

Offline the default model is ``smollm2-135m-instruct``; pass ``lm="gpt2"`` for
the paper's setting when the hub is reachable. Long texts are scored with
strided windows and all windows are batched by length
(:func:`humanize.models.sequence_logprobs`).

Cost bound: at most ``max_windows`` windows per text (default
:data:`MAX_WINDOWS`, i.e. the first ``max_length + (max_windows - 1) * stride``
ids = 4,608 with the default 1,024-token window, BOS included) go through the model, and
only a prefix holding them through the tokenizer
(:func:`humanize.models.text.token_prefix`), so the cost stops growing with the
text; a longer text gets the perplexity of that prefix and a note. Texts enter the tokenizer
through :func:`humanize.models.text.model_input` (lone surrogates -> U+FFFD).

One forward pass serves the metric detectors and perplexity (issue #13): the
first window of a text starts, like the detectors' pass, at the text's start, so
when the detectors already scored at least that window's tokens under the same
model (:mod:`humanize.detectors.lm_stats`, the same ids) its log-probabilities
come from their cache instead of a second pass
(:func:`humanize.models.scoring.shared_logprobs`); a text that fits one window
costs no pass at all. By causality the values are the window's own, up to the
float rounding of a different batch; the later windows are computed as before.
"""
from __future__ import annotations

import math
from numbers import Integral
from typing import Optional, Union

import numpy as np

from humanize.validation import MODEL, Interval, check_texts, validate_parameter_constraints
from humanize.exceptions import InvalidParameterError
from humanize.models import DEFAULT_CAUSAL_LM, LoadedModel, load_causal_lm
from humanize.models.scoring import _window_params, encode_for_scoring, sequence_logprobs, shared_logprobs
from humanize.models.text import model_input

from ._common import check_pairs
from .custom import PairMeter, notes_of

__all__ = ["Perplexity", "perplexity", "perplexity_with_notes", "get_lm", "MAX_WINDOWS", "check_max_windows"]

#: Default cap on the scoring windows per text.
MAX_WINDOWS = 8


#: The perplexity arguments' constraints (:mod:`humanize.validation`), shared with :class:`QualityMeter`.
WINDOW_CONSTRAINTS = {
    "batch_size": [Interval(Integral, 1, None)],
    "max_length": [Interval(Integral, 2, None), None],  # tokens per window
    "stride": [Interval(Integral, 1, None), None],
    "max_windows": [Interval(Integral, 1, None)],
}


def check_max_windows(max_windows, owner: str = "perplexity") -> int:
    """``max_windows`` as an int >= 1; :class:`~humanize.exceptions.InvalidParameterError` naming the value
    otherwise."""
    validate_parameter_constraints(owner, WINDOW_CONSTRAINTS, {"max_windows": max_windows})
    return int(max_windows)


def check_window_args(batch_size, max_length, stride, owner: str = "perplexity") -> None:
    """Type and range of perplexity's batching and window arguments, checked before any model loads.

    ``batch_size`` an int >= 1; ``max_length`` None or an int >= 2; ``stride`` None or an int >= 1,
    below ``max_length`` when both are given (the model's context length is checked when it loads).
    """
    validate_parameter_constraints(owner, WINDOW_CONSTRAINTS,
                                   {"batch_size": batch_size, "max_length": max_length, "stride": stride})
    check_stride(stride, max_length, owner)


def check_stride(stride, max_length, owner: str) -> None:
    """The cross-argument rule: ``stride <= max_length - 1`` when both are given."""
    if max_length is not None and stride is not None and stride > max_length - 1:
        raise InvalidParameterError(f"{owner}: stride must be in [1, max_length-1] = [1, {max_length - 1}], "
                                    f"got {stride!r}")


def get_lm(lm: Union[str, LoadedModel], device=None, dtype=None) -> LoadedModel:
    """The causal LM ``lm`` names (``dtype``: as :func:`~humanize.models.resolve_dtype`), or ``lm`` loaded."""
    if isinstance(lm, LoadedModel):
        if lm.kind != "causal_lm":
            raise ValueError(f"perplexity needs a causal LM, got a {lm.kind} ({lm.resolved})")
        return lm
    return load_causal_lm(lm, device=device, dtype=dtype)


def perplexity_with_notes(texts, lm: Union[str, LoadedModel] = DEFAULT_CAUSAL_LM, *, batch_size: int = 8,
                          max_length: Optional[int] = None, stride: Optional[int] = None,
                          max_windows: int = MAX_WINDOWS, device=None,
                          dtype=None) -> tuple[np.ndarray, list[str], str]:
    """Perplexities, a reason for every NaN or truncation ("" otherwise) and the resolved model name."""
    texts = check_texts(texts, "humanize.quality", "perplexity")
    check_window_args(batch_size, max_length, stride)
    max_windows = check_max_windows(max_windows)
    model = get_lm(lm, device, dtype)
    length, step = _window_params(model, max_length, stride)
    cap = length + (max_windows - 1) * step  # ids (BOS included) that max_windows windows cover
    unique = list(dict.fromkeys(texts))
    nonempty = [t for t in unique if t]
    inputs, _ = model_input(nonempty, where=f"tokenizer of {model.resolved}")
    ids, _, has_bos = encode_for_scoring(model, inputs, max_tokens=cap)
    notes = {t: f"scored the first {cap - has_bos} tokens of a longer text (max_windows={max_windows})"
             for t, seq in zip(nonempty, ids) if len(seq) > cap}
    ids = [seq[:cap] for seq in ids]
    # the first window's context starts at the text's start, as the detectors' pass does: take it from
    # their cache when that pass covered it (the whole text when it fits one window)
    known = shared_logprobs(model, inputs, ids, need=[min(len(seq), length) - 1 for seq in ids])
    lps = sequence_logprobs(model, ids, max_length=length, stride=step, batch_size=batch_size, known=known)
    by_text: dict[str, tuple[float, str]] = {"": (math.nan, "empty text")}
    for t, lp in zip(nonempty, lps):
        if len(lp) == 0:
            by_text[t] = (math.nan, "fewer than 2 tokens (the tokenizer has no BOS)")
        else:
            by_text[t] = (float(np.exp(-np.mean(lp))), notes.get(t, ""))
    values = np.array([by_text[t][0] for t in texts], dtype=float)
    return values, [by_text[t][1] for t in texts], model.resolved


def perplexity(texts, lm: Union[str, LoadedModel] = DEFAULT_CAUSAL_LM, *, batch_size: int = 8,
               max_length: Optional[int] = None, stride: Optional[int] = None, max_windows: int = MAX_WINDOWS,
               device=None, dtype=None):
    """``exp(-mean log p(token | prefix))`` per text: a float for a str, an array for a sequence.

    The first token is conditioned on the tokenizer's BOS when it has one.
    Empty text gives NaN. ``max_length``/``stride`` set the window (default
    ``min(context, 1024)`` and half of it); at most ``max_windows`` windows
    (the text's first tokens) are scored per text. ``dtype``: the model's precision when ``lm`` is a name
    (None: float32 on a CPU; ``"auto"``: :mod:`humanize.models.precision`'s rule).
    """
    single = isinstance(texts, str)
    values, _, _ = perplexity_with_notes([texts] if single else texts, lm, batch_size=batch_size,
                                         max_length=max_length, stride=stride, max_windows=max_windows,
                                         device=device, dtype=dtype)
    return float(values[0]) if single else values


class Perplexity(PairMeter):
    """Fluency: perplexity of both texts under a causal LM, and its change (TH-Bench Section 3.3).

    Columns ``perplexity_original``, ``perplexity_attacked``, ``perplexity_delta`` and
    ``perplexity_model`` (the resolved model). Parameters as :func:`perplexity`'s; ``dtype`` ``"auto"``, as
    the metric detectors', so that perplexity reads their pass (:func:`~humanize.models.scoring.shared_logprobs`
    serves only the same model in the same precision)."""

    name = "perplexity"
    default = True
    columns = ("perplexity_original", "perplexity_attacked", "perplexity_delta", "perplexity_model")
    _model_params = ("lm",)
    likelihood_params = ("lm",)  # an attack writing with this LM lowers its perplexity: the run warns
    _parameter_constraints = {"lm": [MODEL], **WINDOW_CONSTRAINTS}

    def __init__(self, lm: Union[str, LoadedModel] = DEFAULT_CAUSAL_LM, batch_size: int = 8,
                 max_length: Optional[int] = None, stride: Optional[int] = None, max_windows: int = MAX_WINDOWS,
                 device=None, dtype="auto"):
        self._init_params(locals())

    def _check(self) -> None:
        check_stride(self.stride, self.max_length, type(self).__name__)

    def measure(self, originals, attacked) -> tuple[dict, list[str]]:
        originals, attacked = check_pairs(type(self).__name__, "measure", originals, attacked)
        n = len(originals)
        ppl, why, model = perplexity_with_notes(
            originals + attacked, self.lm, batch_size=self.batch_size, max_length=self.max_length,
            stride=self.stride, max_windows=int(self.max_windows), device=self.device,
            dtype=self.dtype)
        cols = {"perplexity_original": ppl[:n], "perplexity_attacked": ppl[n:],
                "perplexity_delta": ppl[n:] - ppl[:n], "perplexity_model": [model] * n}
        return cols, notes_of({"perplexity_original": why[:n], "perplexity_attacked": why[n:]})

