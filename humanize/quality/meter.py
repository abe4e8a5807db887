"""One call that scores (original, attacked) pairs on every quality meter (TH-Bench Table 2)."""
from __future__ import annotations

from numbers import Real
from typing import Optional, Sequence, Union

import pandas as pd

from humanize.params import ParamsMixin

from humanize.validation import MODEL, InstanceOf, Interval
from humanize.exceptions import InvalidParameterError
from humanize.models import DEFAULT_CAUSAL_LM, DEFAULT_SENTENCE_ENCODER, LoadedModel

from ._common import check_pairs
from .as_read import AsRead
from .context import CONTEXT_THRESHOLD
from .custom import PairMeter, builtin_meters, merge_columns
from .entailment import DEFAULT_NLI_MODEL
from .judge import MeaningJudge
from .lexical import MAX_CHARS, MAX_CHARS_CONSTRAINT
from .perplexity import MAX_WINDOWS, WINDOW_CONSTRAINTS, check_stride
from .validity import summarize_validity

__all__ = ["QualityMeter", "METERS", "OPTIONAL_METERS", "summarize"]

#: The built-in meters computed by default (registered :class:`~humanize.quality.custom.PairMeter` s whose
#: ``default`` is True), in column order.
METERS = tuple(name for name, cls in builtin_meters().items() if cls.default)
#: Meters computed only when named in ``meters``: they need a hub NLI model / an LLM judge.
OPTIONAL_METERS = tuple(name for name, cls in builtin_meters().items() if not cls.default)

#: The built-in members (name -> version) that the quality meter's ``version`` "3" stands for: their parameters
#: are the quality meter's own, already in its fingerprint. Any other active member (a member whose version was
#: bumped, a built-in meter added later) adds its provenance under ``members``, so its figures are recomputed.
_COVERED = {"perplexity": "1", "cosine": "1", "rouge_l": "1", "flesch": "1", "edit_rate": "1", "validity": "1",
            "entailment": "1", "judge": "1"}


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
    dtype : precision of ``lm`` and ``encoder`` (``"auto"``: bfloat16 on a CPU with bfloat16 instructions, else
        float32; :mod:`humanize.models.precision`), the metric detectors' default too, so perplexity reads their
        pass
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
    _derived_state = ("_members_cache", "_custom_cache", "_judge_cache")
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
                 context_threshold: Optional[float] = CONTEXT_THRESHOLD, dtype="auto"):
        self._init_params(locals())

    def _check(self) -> None:
        self._active()
        check_stride(self.stride, self.max_length, "QualityMeter")
        self._check_meaning_meters()
        self._custom()
        self.members()

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

    def members(self) -> list[PairMeter]:
        """The active built-in meters (:data:`METERS` and the named :data:`OPTIONAL_METERS`), in column order, each
        configured by this meter's parameters (:meth:`PairMeter.from_quality_params`); built once per parameter
        values, loading nothing. :meth:`score` runs them, then the ``custom`` ones."""
        params = self.get_params(deep=False)
        key = tuple((k, id(v)) for k, v in params.items())
        cached = self.__dict__.get("_members_cache")
        if cached is None or cached[0] != key:
            if self.judge is not None:
                params["judge"] = self._judge()
            classes = builtin_meters()
            cached = (key, [classes[name].from_quality_params(params) for name in self._active()])
            self.__dict__["_members_cache"] = cached
        return list(cached[1])

    def read_again(self, reader) -> Optional[AsRead]:
        """The active members whose ``as_read`` trait is set (cosine, ROUGE-L, Flesch, edit rates), again on both
        texts as ``reader`` gives them (:class:`~humanize.quality.as_read.AsRead`); None when none is active."""
        members = [m for m in self.members() if m.as_read]
        return AsRead(reader, members) if members else None

    def _fingerprint_models(self) -> dict:
        # the models the active members name: ROUGE-L alone does not depend on the LM
        out = {}
        for member in self.members():
            out.update((k, v) for k, v in member._fingerprint_models().items() if k in self._model_params)
        return out

    def provenance(self) -> dict:
        """As every component's; an active judge is its resolved generator and prompt version, else None; an
        active member that the version does not stand for (:data:`_COVERED`) adds its own under ``members``."""
        out = super().provenance()
        members = self.members()
        out["params"]["judge"] = next((m.provenance() for m in members if m.name == "judge"), None)
        if self.custom is None:  # the fingerprints of meters without custom ones stay as they were
            out["params"].pop("custom", None)
        else:
            out["params"]["custom"] = [m.provenance() for m in self._custom()]
        extra = {m.name: m.provenance() for m in members if _COVERED.get(m.name) != str(m.version)}
        if extra:
            out["members"] = extra
        return out

    def _active(self) -> tuple[str, ...]:
        """The names of the active built-in meters, in column order (the registry's)."""
        if self.meters is None:
            return METERS
        if isinstance(self.meters, (str, bytes, dict)) or not hasattr(self.meters, "__iter__"):
            raise TypeError(f"QualityMeter: meters must be a sequence of names or None, got "
                            f"{type(self.meters).__name__}")
        builtin = builtin_meters()
        unknown = [m for m in self.meters if m not in builtin]
        if unknown:
            raise ValueError(f"QualityMeter: unknown meters {unknown}; allowed: {list(METERS + OPTIONAL_METERS)}")
        return tuple(name for name in builtin if name in self.meters)

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
        n = len(originals)
        cols: dict = {}
        notes: list[list[str]] = [[] for _ in range(n)]
        for member in self.members() + self._custom():  # the built-in ones, then the user's
            out, why = member.measure(originals, attacked)
            merge_columns(member, out, cols, n)
            for i, w in enumerate(why):
                if w:
                    notes[i].append(w)
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
