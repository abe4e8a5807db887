"""Formatting profiles: the θ of the format counterfactuals (artifact-reliance paper, Section 5.1, Appendix).

A :class:`FormatProfile` is measured from one class of documents (human or
machine) and holds what ``impose(·; θ)`` re-applies: the empirical line-length
distribution, the share of line breaks that are paragraph breaks, the
double-space rate at sentence boundaries, and the curly-quote and en/em-dash
rates. The paper's four formatting features (Section 4.1: newline, whitespace
run, curly quote and fancy dash rates) are the ones these sites move.

The rates are shares of *sites*, which is what an operator can impose on a
text: curly quotes among all quote characters, en/em dashes among all dash
sites (``--``, a spaced ``-``, ``–``, ``—``), double spaces among the sentence
boundaries that sit on one line.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable

import numpy as np

from humanize.validation import validate_parameter_constraints
from humanize.text import sentence_spans


__all__ = ["FormatProfile", "UNBROKEN", "sentence_gaps"]

#: Line boundaries as :meth:`str.splitlines` knows them (``\r\n`` is one break).
LINE_BREAK_RE = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
#: A maximal whitespace run; ``re``'s ``\s`` is exactly :meth:`str.isspace`.
WS_RUN_RE = re.compile(r"\s+")
CURLY_SINGLE = "‘’‚‛"
CURLY_DOUBLE = "“”„‟"
EN_DASH, EM_DASH = "\u2013", "\u2014"
#: What ``strip`` folds each typographic character to.
FOLD = {**{c: "'" for c in CURLY_SINGLE}, **{c: '"' for c in CURLY_DOUBLE}, EN_DASH: "-", EM_DASH: "--"}
_CURLY_RE = re.compile(f"[{CURLY_SINGLE}{CURLY_DOUBLE}]")
STRAIGHT_QUOTE_RE = re.compile("['\"]")
#: Dash sites written in ASCII: a double hyphen, or a hyphen with whitespace on both sides.
PLAIN_DASH_RE = re.compile(r"(?<!-)--(?!-)|(?<=\s)-(?=\s)")
_SENTENCE_END = ".!?…。！？‼⁇⁈⁉"
_CLOSERS = "\"')]}’”»›"
_SURROGATE_RE = re.compile("[\ud800-\udfff]")

#: A drawn line length meaning "do not break this line".
UNBROKEN = np.iinfo(np.int64).max

_RATES = ("paragraph_break_rate", "double_space_rate", "curly_quote_rate", "dash_rate", "em_dash_share")
_COUNTS = ("n_documents", "n_line_breaks", "n_sentence_gaps", "n_quotes", "n_dash_sites", "n_fancy_dashes")


def sentence_gaps(text: str) -> list[tuple[int, int]]:
    """Whitespace gaps ``(start, end)`` that follow a sentence end (``.!?…`` before closing quotes/brackets).

    Sentences come from blingfire (:func:`humanize.text.sentence_spans`);
    only gaps made purely of whitespace are returned, so editing them can never
    touch a word.
    """
    if _SURROGATE_RE.search(text):  # blingfire cannot encode lone surrogates; same length stand-in
        text = _SURROGATE_RE.sub("\ufffd", text)
    spans = sentence_spans(text)
    out = []
    for (a, b), (c, _) in zip(spans, spans[1:]):
        if c <= b or not text[b:c].isspace():
            continue
        k = b - 1
        while k > a and text[k] in _CLOSERS:
            k -= 1
        if text[k] in _SENTENCE_END:
            out.append((b, c))
    return out


def _measure(text: str) -> dict:
    """Formatting counts of one document (summed over documents by :meth:`FormatProfile.fit`)."""
    lengths = [len(line) for line in text.splitlines() if line.strip()]
    n_breaks = n_para = 0
    for m in WS_RUN_RE.finditer(text):
        if 0 < m.start() and m.end() < len(text):
            k = len(LINE_BREAK_RE.findall(m.group()))
            if k:
                n_breaks += 1
                n_para += k >= 2
    n_gaps = n_double = 0
    for s, e in sentence_gaps(text):
        if not LINE_BREAK_RE.search(text, s, e):
            n_gaps += 1
            n_double += e - s >= 2
    n_curly = len(_CURLY_RE.findall(text))
    n_en, n_em = text.count(EN_DASH), text.count(EM_DASH)
    return {
        "lengths": lengths,
        "n_line_breaks": n_breaks,
        "n_paragraph_breaks": n_para,
        "n_sentence_gaps": n_gaps,
        "n_double": n_double,
        "n_quotes": n_curly + len(STRAIGHT_QUOTE_RE.findall(text)),
        "n_curly": n_curly,
        "n_dash_sites": n_en + n_em + len(PLAIN_DASH_RE.findall(text)),
        "n_fancy_dashes": n_en + n_em,
        "n_em": n_em,
    }


def _share(num: int, den: int) -> float:
    return float(num) / den if den else 0.0


def _not_fitted(what: str) -> Exception:
    from sklearn.exceptions import NotFittedError  # imported here: sklearn is slow to import

    return NotFittedError(f"{what}: this FormatProfile is not fitted yet; call FormatProfile().fit(texts)")


class FormatProfile:
    """A class's formatting, measured from its documents (the paper's θ_H / θ_M, Section 5.1).

    ``FormatProfile().fit(texts)`` returns the fitted profile.

    Parameters
    ----------
    censor_last_line : bool, default True
        How :meth:`sample_line_lengths` treats a document's last line, which ends
        because the document does, not because it was wrapped. ``True``: it is a
        right-censored observation and line lengths are drawn from the
        Kaplan-Meier estimate, so a class whose documents are never wrapped
        yields no line breaks. ``False``: every line is a plain sample of the
        empirical distribution, the paper's literal operator (an unwrapped
        document then counts as one line as long as the document).

    Fitted attributes:

    - ``line_length_values_``, ``line_length_counts_``: the lengths (characters) of
      non-blank lines and how many lines have each; ``line_break_counts_``: how many
      of those lines ended in a line break (all but each document's last).
    - ``paragraph_break_rate_``: share of line breaks that leave a blank line.
    - ``double_space_rate_``: share of one-line sentence boundaries holding 2+ spaces.
    - ``curly_quote_rate_``: share of quote characters that are curly (‘’“”).
    - ``dash_rate_``: share of dash sites written as en/em dashes; ``em_dash_share_``:
      share of those that are em dashes.
    - ``n_documents_``, ``n_line_breaks_``, ``n_sentence_gaps_``, ``n_quotes_``,
      ``n_dash_sites_``, ``n_fancy_dashes_``: the evidence behind the rates
      (a rate with no evidence is 0).
    """

    def __init__(self, censor_last_line: bool = True):
        self.censor_last_line = censor_last_line

    def get_params(self, deep: bool = True) -> dict:
        """The constructor arguments as given (scikit-learn style)."""
        return {"censor_last_line": self.censor_last_line}

    def set_params(self, **params) -> "FormatProfile":
        """Set ``censor_last_line`` (scikit-learn style; the fitted measurements are kept)."""
        unknown = sorted(set(params) - {"censor_last_line"})
        if unknown:
            raise ValueError(f"FormatProfile has no parameter {unknown[0]!r}; valid: censor_last_line")
        old = self.censor_last_line
        self.censor_last_line = params.get("censor_last_line", old)
        try:
            self._validate()
        except TypeError:
            self.censor_last_line = old
            raise
        return self

    def __sklearn_clone__(self) -> "FormatProfile":
        # A fitted profile is data (the θ an attack imposes), not a model to refit:
        # cloning an attack that holds one copies the measurements too.
        import copy

        return copy.deepcopy(self)

    _parameter_constraints = {"censor_last_line": ["boolean"]}

    def _validate(self) -> None:
        validate_parameter_constraints("FormatProfile", self._parameter_constraints, self.get_params())

    def fit(self, texts: Iterable[str], y: Any = None) -> "FormatProfile":
        """Measure the formatting of ``texts`` (an iterable of str: list, tuple, pandas Series)."""
        if isinstance(texts, (str, bytes)):
            got = type(texts).__name__
            raise TypeError(f"FormatProfile.fit expects an iterable of str, got a single {got}")
        try:
            items = list(texts)
        except TypeError:
            got = type(texts).__name__
            raise TypeError(f"FormatProfile.fit expects an iterable of str, got {got}") from None
        if not items:
            raise ValueError("FormatProfile.fit needs at least one text, got an empty collection")
        self._validate()
        lengths: Counter = Counter()
        ended: Counter = Counter()
        totals: Counter = Counter()
        for i, t in enumerate(items):
            if not isinstance(t, str):
                got = type(t).__name__
                raise TypeError(f"FormatProfile.fit expects str texts, got {got} at position {i}")
            m = _measure(t)
            doc_lengths = m.pop("lengths")
            lengths.update(doc_lengths)
            ended.update(doc_lengths[:-1])
            totals.update(m)
        values = np.array(sorted(lengths), dtype=np.int64)
        self.line_length_values_ = values
        self.line_length_counts_ = np.array([lengths[v] for v in values], dtype=np.int64)
        self.line_break_counts_ = np.array([ended[v] for v in values], dtype=np.int64)
        self.paragraph_break_rate_ = _share(totals["n_paragraph_breaks"], totals["n_line_breaks"])
        self.double_space_rate_ = _share(totals["n_double"], totals["n_sentence_gaps"])
        self.curly_quote_rate_ = _share(totals["n_curly"], totals["n_quotes"])
        self.dash_rate_ = _share(totals["n_fancy_dashes"], totals["n_dash_sites"])
        self.em_dash_share_ = _share(totals["n_em"], totals["n_fancy_dashes"])
        self.n_documents_ = len(items)
        for k in _COUNTS[1:]:
            setattr(self, k + "_", int(totals[k]))
        return self

    # -- reading a fitted profile ----------------------------------------------------
    @property
    def is_fitted(self) -> bool:
        return hasattr(self, "line_length_values_")

    def check_fitted(self, what: str = "FormatProfile") -> None:
        """Raise sklearn's ``NotFittedError`` (a ``ValueError``) unless fitted."""
        if not self.is_fitted:
            raise _not_fitted(what)

    @property
    def n_lines_(self) -> int:
        self.check_fitted("n_lines_")
        return int(self.line_length_counts_.sum())

    @property
    def median_line_length_(self) -> float:
        """Median length of a non-blank line (nan when the profile saw no text)."""
        self.check_fitted("median_line_length_")
        if not len(self.line_length_values_):
            return float("nan")
        return float(np.median(np.repeat(self.line_length_values_, self.line_length_counts_)))

    def line_length_distribution(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(values, probabilities, p_unbroken)``: what :meth:`sample_line_lengths` draws from.

        ``p_unbroken`` is the probability mass beyond the longest line seen (only
        with ``censor_last_line``): the line never breaks.
        """
        self.check_fitted("line_length_distribution")
        values, counts = self.line_length_values_, self.line_length_counts_.astype(float)
        if not len(values):
            return values, counts, 1.0
        if not self.censor_last_line:
            return values, counts / counts.sum(), 0.0
        at_risk = np.cumsum(counts[::-1])[::-1]  # lines at least this long
        survive = np.cumprod(1.0 - self.line_break_counts_ / at_risk)  # Kaplan-Meier
        before = np.concatenate(([1.0], survive[:-1]))
        return values, before - survive, float(survive[-1])

    def sample_line_lengths(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` line lengths from :meth:`line_length_distribution`; ``UNBROKEN`` means "no break"."""
        values, probs, p_unbroken = self.line_length_distribution()
        u = rng.random(size)
        if not len(values):
            return np.full(size, UNBROKEN, dtype=np.int64)
        cdf = np.cumsum(probs)
        idx = np.searchsorted(cdf, u, side="right")
        if p_unbroken == 0.0:
            idx = np.minimum(idx, len(values) - 1)  # float rounding must not invent unbroken lines
        return np.where(idx < len(values), values[np.minimum(idx, len(values) - 1)], UNBROKEN)

    # -- (de)serialisation -----------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-ready dict (runner configs carry profiles this way); see :meth:`from_dict`.

        Every fitted field at full precision (rates as Python floats, never rounded), so it is
        also what an attack's fingerprint hashes for its profile.
        """
        self.check_fitted("to_dict")
        d: dict = {
            "censor_last_line": bool(self.censor_last_line),
            "line_length_values": [int(v) for v in self.line_length_values_],
            "line_length_counts": [int(c) for c in self.line_length_counts_],
            "line_break_counts": [int(c) for c in self.line_break_counts_],
        }
        d.update({k: float(getattr(self, k + "_")) for k in _RATES})
        d.update({k: int(getattr(self, k + "_")) for k in _COUNTS})
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "FormatProfile":
        """Rebuild a fitted profile from :meth:`to_dict`'s output.

        ``censor_last_line`` (default True), ``line_break_counts`` (default: every
        line ended in a break) and the ``n_*`` evidence counts (default 0) may be
        left out, so a profile can be written by hand.
        """
        if not isinstance(d, dict):
            raise TypeError(f"FormatProfile.from_dict expects a dict, got {type(d).__name__}")
        required = ("line_length_values", "line_length_counts", *_RATES)
        valid = (*required, "censor_last_line", "line_break_counts", *_COUNTS)
        missing = [k for k in required if k not in d]
        unknown = sorted(set(d) - set(valid))
        if missing or unknown:
            raise ValueError(
                f"FormatProfile.from_dict: missing keys {missing}, unknown keys {unknown}; "
                f"valid keys: {', '.join(valid)}"
            )
        values = _int_array(d["line_length_values"], "line_length_values", minimum=1)
        counts = _int_array(d["line_length_counts"], "line_length_counts", minimum=1)
        if len(values) != len(counts):
            raise ValueError(
                f"FormatProfile.from_dict: line_length_values ({len(values)}) and line_length_counts "
                f"({len(counts)}) must have the same length"
            )
        if len(values) and np.any(np.diff(values) <= 0):
            raise ValueError("FormatProfile.from_dict: line_length_values must be strictly increasing")
        ended = _int_array(d.get("line_break_counts", counts), "line_break_counts", minimum=0)
        if len(ended) != len(values) or np.any(ended > counts):
            raise ValueError(
                "FormatProfile.from_dict: line_break_counts must have one entry per line length, "
                "each at most the matching line_length_counts entry"
            )
        self = cls(censor_last_line=d.get("censor_last_line", True))
        self._validate()
        self.line_length_values_, self.line_length_counts_, self.line_break_counts_ = values, counts, ended
        for k in _RATES:
            v = d[k]
            number = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
            if not number or not 0 <= v <= 1:
                raise ValueError(f"FormatProfile.from_dict: {k} must be a number in [0, 1], got {v!r}")
            setattr(self, k + "_", float(v))
        for k in _COUNTS:
            v = d.get(k, 0)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"FormatProfile.from_dict: {k} must be an int >= 0, got {v!r}")
            setattr(self, k + "_", int(v))
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FormatProfile):
            return NotImplemented
        if not (self.is_fitted and other.is_fitted):
            return self.is_fitted == other.is_fitted and self.get_params() == other.get_params()
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable (fit), like an estimator

    def __repr__(self) -> str:
        param = "" if self.censor_last_line is True else f"censor_last_line={self.censor_last_line!r}"
        if not self.is_fitted:
            return f"FormatProfile({param})"
        return (
            f"FormatProfile({param + ', ' if param else ''}n_documents_={self.n_documents_}, "
            f"median_line_length_={self.median_line_length_:g}, "
            f"paragraph_break_rate_={self.paragraph_break_rate_:.3g}, "
            f"double_space_rate_={self.double_space_rate_:.3g}, "
            f"curly_quote_rate_={self.curly_quote_rate_:.3g}, dash_rate_={self.dash_rate_:.3g})"
        )


def _int_array(x: Any, key: str, minimum: int) -> np.ndarray:
    if isinstance(x, (str, bytes)) or not hasattr(x, "__iter__"):
        raise TypeError(f"FormatProfile.from_dict: {key} must be a list of int, got {type(x).__name__}")
    xs = list(x)
    for v in xs:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
            raise ValueError(f"FormatProfile.from_dict: {key} must hold ints >= {minimum}, got {v!r}")
    return np.array(xs, dtype=np.int64)
