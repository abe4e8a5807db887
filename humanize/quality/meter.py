"""One call that scores (original, attacked) pairs on every quality meter (TH-Bench Table 2)."""
from __future__ import annotations

import inspect
from typing import Optional, Sequence, Union

import numpy as np
import pandas as pd

from humanize.models import DEFAULT_CAUSAL_LM, DEFAULT_SENTENCE_ENCODER, LoadedModel

from ._common import as_text_list
from .lexical import edit_rate_with_note, flesch_with_note, rouge_l_with_note
from .perplexity import perplexity_with_notes
from .similarity import similarity_with_notes

__all__ = ["QualityMeter", "METERS", "summarize"]

METERS = ("perplexity", "cosine", "rouge_l", "flesch", "edit_rate")


class QualityMeter:
    """Score attacked texts against their originals on fluency, similarity and complexity.

    Parameters are stored as given; models load on the first :meth:`score`
    (once per process, shared with every other user of the same model).

    lm : causal LM for perplexity (TH-Bench: GPT-2; offline default ``smollm2-135m-instruct``)
    encoder : sentence encoder for cosine (TH-Bench: all-MiniLM-L6-v2)
    meters : subset of ``METERS`` to compute; None = all
    batch_size, max_length, stride : perplexity batching and windows
    device : device for both models (None = CUDA when present)
    """

    def __init__(self, lm: Union[str, LoadedModel] = DEFAULT_CAUSAL_LM,
                 encoder: Union[str, LoadedModel] = DEFAULT_SENTENCE_ENCODER,
                 meters: Optional[Sequence[str]] = None, batch_size: int = 8,
                 max_length: Optional[int] = None, stride: Optional[int] = None, device=None):
        self.lm = lm
        self.encoder = encoder
        self.meters = meters
        self.batch_size = batch_size
        self.max_length = max_length
        self.stride = stride
        self.device = device

    def __repr__(self) -> str:
        params = inspect.signature(type(self).__init__).parameters
        shown = []
        for name in list(params)[1:]:
            value = getattr(self, name)
            if value is not params[name].default and value != params[name].default:
                shown.append(f"{name}={getattr(value, 'resolved', value)!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def _active(self) -> tuple[str, ...]:
        if self.meters is None:
            return METERS
        if isinstance(self.meters, str) or not hasattr(self.meters, "__iter__"):
            raise TypeError(f"meters must be a sequence of names or None, got {type(self.meters).__name__}")
        unknown = [m for m in self.meters if m not in METERS]
        if unknown:
            raise ValueError(f"unknown meters {unknown}; allowed: {list(METERS)}")
        return tuple(m for m in METERS if m in self.meters)

    def score(self, originals, attacked=None) -> pd.DataFrame:
        """One row per pair; NaN figures carry their reason in ``note``.

        ``originals`` and ``attacked`` are sequences of str of equal length, or
        ``originals`` is a sequence of attack results (objects with ``.original``
        and ``.text``) and ``attacked`` is omitted.
        """
        if attacked is None:
            results = list(originals) if hasattr(originals, "__iter__") and not isinstance(originals, str) \
                else originals
            if not isinstance(results, list) or not all(hasattr(r, "original") and hasattr(r, "text")
                                                        for r in results):
                raise TypeError("score(results) needs objects with .original and .text; "
                                "or call score(originals, attacked) with two sequences of str")
            originals, attacked = [r.original for r in results], [r.text for r in results]
        originals = as_text_list(originals, "originals")
        attacked = as_text_list(attacked, "attacked")
        if len(originals) != len(attacked):
            raise ValueError(f"originals and attacked differ in length: {len(originals)} != {len(attacked)}")
        active = self._active()
        n = len(originals)
        cols: dict[str, list] = {}
        notes: list[list[str]] = [[] for _ in range(n)]

        def note(column: str, values: Sequence[str]) -> None:
            for i, v in enumerate(values):
                if v:
                    notes[i].append(f"{column}: {v}")

        if "perplexity" in active:
            ppl, why, model = perplexity_with_notes(
                originals + attacked, self.lm, batch_size=self.batch_size, max_length=self.max_length,
                stride=self.stride, device=self.device)
            cols["perplexity_original"], cols["perplexity_attacked"] = ppl[:n], ppl[n:]
            cols["perplexity_delta"] = ppl[n:] - ppl[:n]
            cols["perplexity_model"] = [model] * n
            note("perplexity_original", why[:n])
            note("perplexity_attacked", why[n:])
        if "cosine" in active:
            cos, why, model = similarity_with_notes(originals, attacked, self.encoder, device=self.device)
            cols["cosine"], cols["cosine_model"] = cos, [model] * n
            note("cosine", why)
        if "rouge_l" in active:
            pairs = [rouge_l_with_note(a, b) for a, b in zip(originals, attacked)]
            cols["rouge_l"] = [p[0] for p in pairs]
            note("rouge_l", [p[1] for p in pairs])
        if "flesch" in active:
            fa = [flesch_with_note(t) for t in originals]
            fb = [flesch_with_note(t) for t in attacked]
            cols["flesch_original"] = [f[0] for f in fa]
            cols["flesch_attacked"] = [f[0] for f in fb]
            cols["flesch_delta"] = np.array(cols["flesch_attacked"]) - np.array(cols["flesch_original"])
            note("flesch_original", [f[1] for f in fa])
            note("flesch_attacked", [f[1] for f in fb])
        if "edit_rate" in active:
            er = [edit_rate_with_note(a, b) for a, b in zip(originals, attacked)]
            cols["word_edit_rate"] = [e[0] for e in er]
            cols["char_edit_rate"] = [e[1] for e in er]
            note("edit_rate", [e[2] for e in er])
        frame = pd.DataFrame(cols, index=pd.RangeIndex(n))
        frame["note"] = ["; ".join(x) for x in notes]
        return frame


def summarize(frame: pd.DataFrame) -> pd.Series:
    """Means of the numeric columns (NaN skipped), the per-attack line of TH-Bench Table 2."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    return frame.select_dtypes("number").mean(skipna=True)
