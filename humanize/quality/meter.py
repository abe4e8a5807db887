"""One call that scores (original, attacked) pairs on every quality meter (TH-Bench Table 2)."""
from __future__ import annotations

from numbers import Real
from typing import Optional, Sequence, Union

import numpy as np
import pandas as pd

from humanize._params import ParamsMixin

from humanize._validation import MODEL, InstanceOf, Interval
from humanize.exceptions import InvalidParameterError
from humanize.models import DEFAULT_CAUSAL_LM, DEFAULT_SENTENCE_ENCODER, LoadedModel

from ._common import check_pairs
from .entailment import DEFAULT_NLI_MODEL, entailment_with_notes
from .judge import MeaningJudge
from .lexical import MAX_CHARS, MAX_CHARS_CONSTRAINT, edit_rate_with_note, flesch_with_note, rouge_l_with_note
from .perplexity import MAX_WINDOWS, WINDOW_CONSTRAINTS, check_stride, perplexity_with_notes
from .similarity import similarity_with_notes
from .context import CONTEXT_THRESHOLD
from .validity import swap_validity_with_note, summarize_validity

__all__ = ["QualityMeter", "METERS", "OPTIONAL_METERS", "summarize"]

METERS = ("perplexity", "cosine", "rouge_l", "flesch", "edit_rate", "validity")
#: Meters computed only when named in ``meters``: they need a hub NLI model / an LLM judge.
OPTIONAL_METERS = ("entailment", "judge")


class QualityMeter(ParamsMixin):
    """Score attacked texts against their originals on fluency, similarity and complexity.

    Parameters are stored as given; models load on the first :meth:`score`
    (once per process, shared with every other user of the same model).

    lm : causal LM for perplexity (TH-Bench: GPT-2; offline default ``smollm2-135m-instruct``)
    encoder : sentence encoder for cosine (TH-Bench: all-MiniLM-L6-v2)
    meters : names from ``METERS`` and ``OPTIONAL_METERS`` to compute; None = ``METERS``
    batch_size, max_length, stride : perplexity batching and windows
    max_windows : perplexity scores at most this many windows per text (its first tokens; noted when cut)
    max_chars : ROUGE-L and edit rates give NaN (with a note) for a pair where a text is longer than this
        (their cost grows with the product of the lengths)
    (the ``validity`` meter, offline: :func:`~humanize.quality.validity.swap_validity`'s columns, the WordNet
    class of every word swap; NaN with a note where WordNet is not installed)
    context_threshold : the validity meter also scores every swap in its sentence under ``lm``
        (:mod:`humanize.quality.context`; a model no attack uses by default) and counts the swaps below this
        many nats as not fitting; the valid swaps are WordNet-valid *and* fitting (issue #33). None: the
        WordNet classes alone (the figures before issue #33)
    device : device for the models (None = CUDA when present)
    nli_model : NLI classifier for the opt-in ``"entailment"`` meter (hub id, directory or loaded model;
        columns ``entailment``, ``entailment_min``, ``contradiction``, ``entailment_model``; batches of ``batch_size``)
    judge : the LLM judge of the opt-in ``"judge"`` meter: a chat model name, ``"endpoint:<model>"``, a dict
        with ``backend``, a Generator or a :class:`~humanize.quality.judge.MeaningJudge` (columns
        ``judge_score`` 1-5, ``judge_meaning`` in [0, 1], ``judge_model``); required when ``"judge"`` is named
    custom : meters of your own (:class:`~humanize.quality.custom.PairMeter` objects, registered names, import
        paths ``"package.module:Class"`` or entry points of group ``humanize.meters``), computed after the others;
        their columns join the row

    Cost bounds per pair (measured by ``python benchmarks/bench_meter_bounds.py``): perplexity,
    cosine and Flesch are linear in the length (perplexity's model work capped by ``max_windows``,
    the encoder's by its 256-token input); ROUGE-L and edit rates are ``O(n m / 64)`` up to
    ``max_chars`` and constant above it.

    ``fingerprint()`` identifies what the figures depend on: the active meters'
    parameters and the identity of the models they resolve (a change of the
    default model changes it), for the runner's quality cache.
    """

    #: The figures' version for given parameters and models: bump it when they change.
    # 3: the validity meter scores every swap in its sentence under ``lm`` (issue #33); 2: the validity meter
    version = "3"
    _model_params = ("lm", "encoder", "nli_model")
    _library_version = True
    _repr_changed_only = True
    _parameter_constraints = {
        "lm": [MODEL],
        "encoder": [MODEL],
        "nli_model": [MODEL],
        **WINDOW_CONSTRAINTS,  # batch_size, max_length, stride, max_windows
        "max_chars": MAX_CHARS_CONSTRAINT,
        "custom": [InstanceOf(list, tuple, name="a list of quality meters (PairMeter objects, names or tables)"), None],
        "context_threshold": [Interval(Real, None, None), None],
    }

    def __init__(self, lm: Union[str, LoadedModel] = DEFAULT_CAUSAL_LM,
                 encoder: Union[str, LoadedModel] = DEFAULT_SENTENCE_ENCODER,
                 meters: Optional[Sequence[str]] = None, batch_size: int = 8,
                 max_length: Optional[int] = None, stride: Optional[int] = None,
                 max_windows: int = MAX_WINDOWS, max_chars: int = MAX_CHARS, device=None,
                 nli_model: Union[str, LoadedModel] = DEFAULT_NLI_MODEL, judge=None, custom=None,
                 context_threshold: Optional[float] = CONTEXT_THRESHOLD):
        self._init_params(locals())

    def _check(self) -> None:
        self._active()
        check_stride(self.stride, self.max_length, "QualityMeter")
        self._check_meaning_meters()
        self._custom()

    def _custom(self) -> list:
        """The custom meters as objects (built once per ``custom`` value; loads nothing)."""
        from .custom import build_meters

        cached = self.__dict__.get("_custom_cache")
        if cached is None or cached[0] is not self.custom:
            cached = (self.custom, build_meters(self.custom))
            self.__dict__["_custom_cache"] = cached
        return cached[1]

    def _check_meaning_meters(self) -> None:
        if self.judge is None and "judge" in self._active():
            raise ValueError("meters names 'judge' but judge is None; give judge='endpoint:<model>', a local "
                             "chat model name, a dict with 'backend' or a Generator")
        if self.judge is not None:
            self._judge()

    def _judge(self) -> MeaningJudge:
        """The judge as a :class:`MeaningJudge` (built once per ``judge`` value; loads nothing)."""
        if isinstance(self.judge, MeaningJudge):
            return self.judge
        cached = self.__dict__.get("_judge_cache")
        if cached is None or cached[0] is not self.judge:
            cached = (self.judge, MeaningJudge(self.judge))
            self.__dict__["_judge_cache"] = cached
        return cached[1]

    def _fingerprint_models(self) -> dict:
        # only the models of the meters that run: ROUGE-L alone does not depend on the LM
        active = self._active()
        out = {k: getattr(self, k) for k, meter in (("lm", "perplexity"), ("encoder", "cosine"),
                                                    ("nli_model", "entailment")) if meter in active}
        if "validity" in active and self.context_threshold is not None:
            out["lm"] = self.lm  # the context part of the validity meter scores with it
        return out

    def provenance(self) -> dict:
        """As every component's; an active judge is its resolved generator and prompt version, else None."""
        out = super().provenance()
        out["params"]["judge"] = self._judge().provenance() if "judge" in self._active() else None
        if self.custom is None:  # the fingerprints of meters without custom ones stay as they were
            out["params"].pop("custom", None)
        else:
            out["params"]["custom"] = [m.provenance() for m in self._custom()]
        return out

    def _active(self) -> tuple[str, ...]:
        if self.meters is None:
            return METERS
        if isinstance(self.meters, (str, bytes, dict)) or not hasattr(self.meters, "__iter__"):
            raise TypeError(f"QualityMeter: meters must be a sequence of names or None, got "
                            f"{type(self.meters).__name__}")
        unknown = [m for m in self.meters if m not in METERS + OPTIONAL_METERS]
        if unknown:
            raise ValueError(f"QualityMeter: unknown meters {unknown}; allowed: {list(METERS + OPTIONAL_METERS)}")
        return tuple(m for m in METERS + OPTIONAL_METERS if m in self.meters)

    def score(self, originals, attacked=None) -> pd.DataFrame:
        """One row per pair; NaN figures carry their reason in ``note``.

        ``originals`` and ``attacked`` are sequences of str of equal length, or
        ``originals`` is a sequence of attack results (objects with ``.original``
        and ``.text``) and ``attacked`` is omitted.
        """
        if originals is None and attacked is None:
            raise InvalidParameterError("QualityMeter.score expects a sequence of str (one per document), got NoneType "
                                        "(or a sequence of attack results, with attacked omitted)")
        if attacked is None:
            results = list(originals) if hasattr(originals, "__iter__") and not isinstance(originals, str) \
                else originals
            if not isinstance(results, list) or not all(hasattr(r, "original") and hasattr(r, "text")
                                                        for r in results):
                raise TypeError("score(results) needs objects with .original and .text; "
                                "or call score(originals, attacked) with two sequences of str")
            originals, attacked = [r.original for r in results], [r.text for r in results]
        originals, attacked = check_pairs("QualityMeter", "score", originals, attacked)
        active = self._active()
        max_chars, max_windows = int(self.max_chars), int(self.max_windows)
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
                stride=self.stride, max_windows=max_windows, device=self.device)
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
            pairs = [rouge_l_with_note(a, b, max_chars) for a, b in zip(originals, attacked)]
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
            er = [edit_rate_with_note(a, b, max_chars) for a, b in zip(originals, attacked)]
            cols["word_edit_rate"] = [e[0] for e in er]
            cols["char_edit_rate"] = [e[1] for e in er]
            note("edit_rate", [e[2] for e in er])
        if "validity" in active:
            ctx_lm = None if self.context_threshold is None else self.lm
            valid, why = swap_validity_with_note(originals, attacked, ctx_lm,
                                                 context_threshold=self.context_threshold, device=self.device)
            for column in valid.columns:
                cols[column] = valid[column].to_numpy()
            note("validity", [why] * n)
        if "entailment" in active:
            ent, why, model = entailment_with_notes(originals, attacked, self.nli_model,
                                                    batch_size=self.batch_size, device=self.device)
            for column in ("entailment", "entailment_min", "contradiction"):
                cols[column] = ent[column]
            cols["entailment_model"] = [model] * n
            note("entailment", why)
        if "judge" in active:
            judged, why, model = self._judge().score_with_notes(originals, attacked)
            cols["judge_score"], cols["judge_meaning"] = judged["judge_score"], judged["judge_meaning"]
            cols["judge_model"] = [model] * n
            note("judge", why)
        if self.custom:
            from .custom import score_custom

            extra, _ = score_custom(self._custom(), originals, attacked, set(cols))
            cols.update(extra)
        frame = pd.DataFrame(cols, index=pd.RangeIndex(n))
        frame["note"] = ["; ".join(x) for x in notes]
        return frame


def summarize(frame: pd.DataFrame) -> pd.Series:
    """Means of the numeric columns (NaN skipped), the per-attack line of TH-Bench Table 2."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    out = frame.select_dtypes("number").mean(skipna=True)
    if "swaps" in frame.columns:  # validity shares pooled over the swaps, not averaged over documents
        out = out.drop(["valid_share", "invalid_share", "valid_in_context_share"], errors="ignore")
        out = pd.concat([out, summarize_validity(frame).drop(["swaps"])])
    return out
