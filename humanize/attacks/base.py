"""The Attack API: edits, results and the base class every attack derives from.

An attack proposes *edits* over the original text; applying them gives the
attacked text. Edits are the single source of truth, so they are exact by
construction: ``apply_edits(result.original, result.edits) == result.text``.
"""

from __future__ import annotations

import functools
import hashlib
from numbers import Real
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np

from humanize.params import EqualByParams, ParamsMixin
from humanize.validation import Interval, check_text, check_texts

from ._stream import DocumentRandom, document_digest, document_digest_head

_blake2b = hashlib.blake2b

__all__ = [
    "Edit",
    "AttackResult",
    "Attack",
    "apply_edits",
    "check_edits",
    "document_random",
    "document_rng",
    "document_seed",
    "SiteAttack",
    "BatchAttack",
]


class Edit(NamedTuple):
    """Replace ``original[start:end]`` by ``replacement`` (an insertion when start == end)."""

    start: int
    end: int
    replacement: str


#: (start, end, replacement) -> Edit without NamedTuple's Python-level __new__.
_as_edit = functools.partial(tuple.__new__, Edit)


def check_edits(text: str, edits: Sequence[Edit]) -> None:
    """Raise ``ValueError`` unless ``edits`` are sorted, in range and non-overlapping.

    Two edits may touch (``a.end == b.start``); an insertion may precede an edit
    that starts at the same position, but two insertions at one position must be
    merged into one.
    """
    prev_end = 0
    prev_insert_at = -1
    for e in edits:
        s, t = e[0], e[1]
        if not (0 <= s <= t <= len(text)):
            raise ValueError(f"edit {tuple(e)!r} is out of range for a text of length {len(text)}")
        if s < prev_end:
            raise ValueError(f"edit {tuple(e)!r} overlaps or is out of order (previous edit ends at {prev_end})")
        if s == t:
            if s == prev_insert_at:
                raise ValueError(f"two insertions at position {s}: merge them into one edit")
            prev_insert_at = s
        prev_end = t


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply sorted, non-overlapping edits to ``text`` in one linear pass."""
    parts = []
    pos = 0
    for s, t, r in edits:
        parts.append(text[pos:s])
        parts.append(r)
        pos = t
    parts.append(text[pos:])
    return "".join(parts)


def document_seed(seed: int, attack: str, text: str) -> int:
    """A 128-bit integer seed private to one (seed, attack, document).

    Derived from the same stable BLAKE2b digest as :func:`document_random`, never
    from global state or Python's salted ``hash``, so a document gets the same
    randomness whatever the batch, its order or the process.
    """
    return int.from_bytes(document_digest(seed, attack, text)[:16], "little")


def document_rng(seed: int, attack: str, text: str) -> np.random.Generator:
    """A numpy generator private to one (seed, attack, document), for vectorised draws."""
    return np.random.default_rng(document_seed(seed, attack, text))


def document_random(seed: int, attack: str, text: str) -> DocumentRandom:
    """A ``random.Random`` private to one (seed, attack, document).

    A :class:`~humanize.attacks._stream.DocumentRandom`: BLAKE2b in counter mode,
    seeded by the digest of the document itself. The rule-based attacks draw a
    handful of numbers per document, and seeding a Mersenne Twister or a numpy
    generator would cost more than their whole work on a short text.
    """
    return DocumentRandom.from_digest(document_digest(seed, attack, text))


@dataclass(frozen=True)
class AttackResult:
    """What an attack did to one document.

    ``edits`` are spans over ``original``; ``apply_edits(original, edits) == text``.
    ``info`` carries attack-reported costs (model queries, tokens) and notes; when ``text`` is
    ``original``, ``info["unchanged"]`` says why (:meth:`Attack.unchanged_reason`), the one key
    every attack uses for it (and only then).
    """

    original: str
    text: str
    attack: str
    params: dict
    _edits: Any = field(repr=False, compare=False)
    info: dict = field(default_factory=dict, compare=False)

    @property
    def edits(self) -> list[Edit]:
        """The exact edits, materialised on first access (cheap attacks defer them)."""
        e = self._edits
        if callable(e):
            e = list(map(_as_edit, e()))
            object.__setattr__(self, "_edits", e)
        return e

    def __getstate__(self) -> dict:
        # Deferred edits are a closure: materialise them so that a result pickles
        # (multiprocessing, caches).
        state = dict(self.__dict__)
        state["_edits"] = self.edits
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    @property
    def n_edits(self) -> int:
        return len(self.edits)

    @property
    def changed(self) -> bool:
        return self.text != self.original

    def __repr__(self) -> str:
        def short(s: str) -> str:
            return repr(s if len(s) <= 40 else s[:37] + "...")

        return f"AttackResult(attack={self.attack!r}, original={short(self.original)}, text={short(self.text)})"


_new = object.__new__
#: Parameter values an attack's cached parameters may hold: immutable, so the cache cannot go stale.
_IMMUTABLE = frozenset({str, int, float, bool, type(None), bytes})


class Attack(EqualByParams, ParamsMixin):
    """Base class: a seeded, rate-controlled transformation of one document.

    Subclasses set ``name`` (the registry key) and implement ``propose(text, rng)``
    returning sorted, non-overlapping :class:`Edit` s over ``text``. Attacks that
    compute their output more cheaply as a string can override ``_run`` instead
    and return ``(text, edits_or_callable)``.

    Constructor arguments are the parameters (scikit-learn style): subclasses
    store every ``__init__`` argument under its own name and call
    ``self._validate()``; ``get_params`` and ``repr`` read them back.
    """

    name: str = "attack"
    #: The outputs' version for given parameters: caches (the runner's results store) key
    #: attack outputs by name, parameters and this, so bump it when the same parameters
    #: start giving other outputs. "2": per-document draws from DocumentRandom.
    version: str = "2"
    #: Whether the attack has a rate θ, a fraction in [0, 1] (all RAID attacks). Read from the
    #: constructor when a class does not say (a ``rate`` parameter: True); a class that declares
    #: True without a ``rate`` parameter is refused when it is defined. Attacks whose rate means
    #: something else set False (or override ``_validate``).
    has_rate: bool = True
    #: Whether the attack loads a model: the runner schedules model work on long-lived workers
    #: (actor pools) and model-free work as plain tasks. Declared by each class; the default
    #: assumes a model, which is always correct, only slower to schedule.
    needs_model: bool = True
    #: Whether ``batch`` works a batch out together (one model call for many documents), so that a batch
    #: costs less than its documents one at a time: the runner then times the batch as one call and gives
    #: each document its share (issue #24). False: ``batch`` is ``apply`` per document, timed per document.
    batches: bool = False
    #: The class ``a | b`` builds: :class:`~humanize.attacks.pipeline.Pipeline`, which sets it when its module is
    #: imported (the package imports it), so this module imports nothing above it.
    _pipeline_class: type | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("has_rate")
        if isinstance(declared, property):
            return
        takes_rate = "rate" in cls._param_tuple()
        cls._declares_has_rate = declared is not None
        if declared is None:  # a False declared by a base class (its rate means something else) holds
            inherited = next((k.__dict__["has_rate"] for k in cls.__mro__[1:]
                              if k.__dict__.get("_declares_has_rate")), None)
            cls.has_rate = takes_rate if inherited is None else (inherited and takes_rate)
        elif declared is True and not takes_rate:
            raise TypeError(f"{cls.__qualname__} declares has_rate = True but its __init__ takes no rate; add a "
                            f"rate parameter or set has_rate = False")

    # -- parameters (get_params, set_params, repr, fingerprint: humanize.params.ParamsMixin) --------
    #: The declared parameter constraints (:mod:`humanize.validation`), merged along the MRO. ``rate``
    #: applies where ``has_rate`` is True; a class whose rate means something else declares its own entry.
    _parameter_constraints = {
        "seed": ["seed"],
        "rate": [Interval(Real, 0, 1, closed="both")],
    }

    @classmethod
    def _merged_constraints(cls) -> dict:
        merged = super()._merged_constraints()
        if "rate" in merged and cls.has_rate is False and not any(
                "rate" in k.__dict__.get("_parameter_constraints", {}) for k in cls.__mro__ if k is not Attack):
            merged = {k: v for k, v in merged.items() if k != "rate"}
            cls._merged_constraints_cache = merged
        return merged

    # -- running --------------------------------------------------------------------
    def rng(self, text: str) -> np.random.Generator:
        """This attack's numpy generator for ``text`` (see :func:`document_rng`)."""
        return document_rng(getattr(self, "seed", 0), self.name, text)

    def random(self, text: str) -> DocumentRandom:
        """This attack's ``random.Random`` for ``text`` (see :func:`document_random`)."""
        head = (self._params_cache or self._cache())[1]
        return DocumentRandom.from_digest(_blake2b(head + text.encode("utf-8", "surrogatepass")).digest())

    # Per-instance cache of (parameters, digest head), built on the first document: on a
    # short text rebuilding them cost as much as a cheap attack's own work. Setting a
    # public attribute (a parameter) drops it; so does ``set_params``.
    _params_cache: tuple | None = None

    def _cache(self) -> tuple:
        params = self.get_params()
        # Only immutable values are cached: a nested object's parameters may change behind our back.
        stable = all(type(v) in _IMMUTABLE for v in params.values())
        head = document_digest_head(getattr(self, "seed", 0), self.name)
        cache = (params if stable else None, head)
        self.__dict__["_params_cache"] = cache
        return cache

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name[:1] != "_":
            self.__dict__.pop("_params_cache", None)
            self.__dict__.pop("_components", None)

    def propose(self, text: str, rng: np.random.Generator) -> list[Edit]:
        raise NotImplementedError(f"{type(self).__name__} must implement propose() or _run()")

    def _run(self, text: str) -> tuple:
        """Return ``(text, edits)`` or ``(text, edits, info)``; ``edits`` may be a callable."""
        edits = self.propose(text, self.rng(text))
        return apply_edits(text, edits), edits

    def apply(self, text: str) -> AttackResult:
        """Attack one document and return the text with its exact edits."""
        if type(text) is not str:
            check_text(text, type(self).__name__, "apply")
        return self._result(text, self._run(text))

    def _result(self, text: str, out: tuple) -> AttackResult:
        """The result of ``text`` from what ``_run`` returned for it (``(text, edits)`` or ``(text, edits, info)``)."""
        params = (self._params_cache or self._cache())[0]
        # Built without the frozen dataclass's __init__ (a tenth of a cheap attack's cost on a short text)
        r = _new(AttackResult)
        d = r.__dict__
        d["original"] = text
        d["text"] = out[0]
        d["attack"] = self.name
        d["params"] = self.get_params() if params is None else params.copy()
        d["_edits"] = out[1]
        info = out[2] if len(out) > 2 else {}
        if out[0] == text and "unchanged" not in info:  # a string only when nothing changed
            info = {**info, "unchanged": self.unchanged_reason(text, info)}
        d["info"] = info
        return r

    def unchanged_reason(self, text: str, info: dict) -> str:
        """Why this attack left ``text`` as it was (``info``: what it reported), for ``info["unchanged"]``.

        Asked only for a document that came back unchanged; subclasses say more (:class:`SiteAttack`:
        no sites, or none drawn at the rate).
        """
        return "no edit proposed"

    def __call__(self, text: str) -> str:
        """Attack one document and return only the text."""
        check_text(text, type(self).__name__, "__call__")
        return self._run(text)[0]

    def batch(self, texts: Sequence[str]) -> list[AttackResult]:
        """Attack many documents; each output depends only on its own document."""
        apply = self.apply
        return [apply(t) for t in check_texts(texts, type(self).__name__, "batch")]

    # -- composition ----------------------------------------------------------------
    def __or__(self, other: "Attack") -> "Attack":
        """``a | b``: a :class:`~humanize.attacks.pipeline.Pipeline` running ``a``, then ``b``."""
        return Attack._pipeline_class([self, other])


class SiteAttack(Attack):
    """An attack that changes a fraction θ of a text's candidate sites (RAID Appendix E.4).

    Subclasses implement ``sites(text)`` (the candidates, in text order) and
    ``edit(text, site, rnd)`` (the edit for one chosen site); ``choose`` picks
    θ of the sites without replacement (stochastically rounded count, see
    :mod:`._sampling`). A text without sites never builds its generator.
    """

    def sites(self, text: str) -> list:
        raise NotImplementedError

    def edit(self, text: str, site, rnd: DocumentRandom) -> Edit:
        raise NotImplementedError

    def choose(self, text: str, sites: list, rnd: DocumentRandom) -> list[Edit]:
        from ._sampling import choose_sites

        return [self.edit(text, sites[j], rnd) for j in choose_sites(len(sites), self.rate, rnd)]

    def propose(self, text: str, rng=None) -> list[Edit]:
        sites = self.sites(text)
        return self.choose(text, sites, self.random(text)) if sites else []

    def _run(self, text: str) -> tuple:
        edits = self.propose(text)
        return apply_edits(text, edits), edits

    def unchanged_reason(self, text: str, info: dict) -> str:
        """``"no sites"`` (nothing this attack can change), else no site drawn at the rate, else edits
        that left the text as it was."""
        if not self.sites(text):
            return "no sites"
        if not self.propose(text):
            return f"no site drawn at rate={self.rate:g}"
        return "edits left the text as it was"


class BatchAttack(Attack):
    """An attack that works out a whole batch of documents at once (a model call per batch, not per document).

    Subclasses implement ``_results(texts) -> list[AttackResult]`` (one per document, in order, each
    depending on its own document only); ``apply``, ``__call__`` and ``batch`` all go through it.
    The rewriting attacks (:mod:`humanize.attacks.generation`) and :class:`~humanize.attacks.blend.Blend` are ones.
    """

    batches = True

    def _results(self, texts: Sequence[str]) -> list[AttackResult]:
        raise NotImplementedError(f"{type(self).__name__} must implement _results()")

    def apply(self, text: str) -> AttackResult:
        check_text(text, type(self).__name__, "apply")
        return self._results([text])[0]

    def _run(self, text: str) -> tuple:
        r = self.apply(text)
        return r.text, r.edits, r.info

    def __call__(self, text: str) -> str:
        return self.apply(text).text

    def batch(self, texts: Sequence[str]) -> list[AttackResult]:
        """Attack many documents in one pass; each output depends only on its own document."""
        return self._results(check_texts(texts, type(self).__name__, "batch"))
