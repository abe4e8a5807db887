"""Format counterfactuals: strip a text's formatting or impose a measured profile on it.

Artifact-reliance paper, Section 5.1 (operators) and Appendix ("Format
counterfactuals and ARS"). Both operators are *admissible*: they change
whitespace, quotes and dashes, never a word, so the text is character-identical
to its source once non-alphanumeric characters are removed. :func:`is_admissible`
checks that, and both attacks verify it on every output.

- :class:`StripFormat` collapses whitespace runs and line breaks to single spaces
  (trimming both ends) and folds curly quotes to ``'``/``"``, en dashes to ``-`` and
  em dashes to ``--``.
- :class:`ImposeFormat` strips, then re-applies a :class:`FormatProfile`: straight
  quotes become curly, ``--`` and spaced ``-`` become en/em dashes, single spaces
  after sentence ends become double, each at the profile's rate; then lines are
  re-wrapped at lengths drawn from the profile's line-length distribution.

Impose only re-types whitespace, quotes and dashes that strip folds back, so
``strip(impose(x)) == strip(x)`` up to the number of hyphens in a dash (``--``
imposed as an en dash strips back to ``-``).
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from ._sampling import choose_sites
from .base import Attack, Edit, apply_edits
from .format_profile import (
    EM_DASH,
    EN_DASH,
    FOLD,
    LINE_BREAK_RE,
    PLAIN_DASH_RE,
    WS_RUN_RE,
    FormatProfile,
    STRAIGHT_QUOTE_RE,
    sentence_gaps,
)
from .pipeline import compose_edits
from humanize.params import ComponentParam
from humanize.validation import InstanceOf
from humanize.exceptions import InadmissibleTransform

__all__ = ["ImposeFormat", "StripFormat", "is_admissible"]


def _alnum(text: str) -> str:
    return "".join(filter(str.isalnum, text))


def is_admissible(original: str, transformed: str) -> bool:
    """True when both texts are identical once every non-alphanumeric character is removed (Section 5.1)."""
    for name, t in (("original", original), ("transformed", transformed)):
        if not isinstance(t, str):
            raise TypeError(f"is_admissible expects str texts, got {type(t).__name__} for {name}")
    return _alnum(original) == _alnum(transformed)


def _assert_admissible(attack: Attack, original: str, transformed: str) -> None:
    if not is_admissible(original, transformed):
        raise InadmissibleTransform(
            f"{attack!r} changed alphanumeric content (a bug: format operators may only touch "
            f"whitespace, quotes and dashes); input starts {original[:60]!r}"
        )


_STRIP_RE = re.compile(WS_RUN_RE.pattern + "|[" + "".join(FOLD) + "]")


def _strip_edits(text: str) -> list[Edit]:
    """Every edit ``strip`` makes, over ``text``, sorted."""
    n = len(text)
    out = []
    for m in _STRIP_RE.finditer(text):
        s, e = m.span()
        g = m.group()
        fold = FOLD.get(g)
        if fold is not None:
            out.append(Edit(s, e, fold))
        elif s == 0 or e == n:
            out.append(Edit(s, e, ""))
        elif g != " ":
            out.append(Edit(s, e, " "))
    return out


class StripFormat(Attack):
    """``strip``: normalise whitespace to single spaces and fold curly quotes and en/em dashes to ASCII.

    θ is the fraction of formatting sites (non-canonical whitespace runs, curly
    quotes, en/em dashes) normalised; at θ = 1 the output is
    ``" ".join(folded.split())``.
    """

    name = "strip_format"
    needs_model = False  # rule-based: scheduled as plain tasks

    def __init__(self, rate: float = 1.0, seed: int = 0):
        self._init_params(locals())

    def _run(self, text: str) -> tuple:
        edits = _strip_edits(text)
        if float(self.rate) < 1.0:
            rng = self.rng(text)
            edits = [edits[i] for i in choose_sites(len(edits), float(self.rate), rng)]
        out = apply_edits(text, edits)
        _assert_admissible(self, text, out)
        return out, edits


_OPENERS = "([{<-‐–—/'\"‘“"


def _curly(text: str, i: int) -> str:
    """The curly form of the straight quote at ``text[i]``: opening after a space, bracket or start."""
    prev = text[i - 1] if i else ""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    after_opener = prev in _OPENERS and prev != text[i]  # "" is an empty quote, not two openers
    opens = (not prev or prev.isspace() or after_opener) and bool(nxt) and not nxt.isspace()
    if text[i] == '"':
        return "“" if opens else "”"
    if prev.isalnum() and nxt.isalnum():  # apostrophe: don't, rock'n'roll
        return "’"
    return "‘" if opens and not nxt.isdigit() else "’"  # '90s takes an apostrophe


def _pick(n: int, p: float, theta: float, rng: np.random.Generator) -> np.ndarray:
    """Sites the profile changes (each with probability ``p``), then θ of those."""
    chosen = np.flatnonzero(rng.random(n) < p)
    return chosen[choose_sites(len(chosen), theta, rng)]


def _shift(positions: Sequence[int], edits: Sequence[Edit]) -> list[int]:
    """Map sorted positions of a text to the text after ``edits`` (no edit may straddle a position)."""
    out, j, delta = [], 0, 0
    for p in positions:
        while j < len(edits) and edits[j][0] < p:
            delta += len(edits[j][2]) - (edits[j][1] - edits[j][0])
            j += 1
        out.append(p + delta)
    return out


class _Draws:
    """Line lengths and paragraph-break coin flips, drawn in chunks from the document's generator."""

    def __init__(self, profile: FormatProfile, rng: np.random.Generator, chunk: int = 256):
        self.profile, self.rng, self.chunk = profile, rng, chunk
        self.lengths: list = []
        self.coins: list = []
        self.k = 0

    def next(self) -> tuple[int, float]:
        if self.k == len(self.lengths):
            self.lengths = self.profile.sample_line_lengths(self.chunk, self.rng).tolist()
            self.coins = self.rng.random(self.chunk).tolist()
            self.k = 0
        self.k += 1
        return self.lengths[self.k - 1], self.coins[self.k - 1]


def _nearest(cands: list[int], starts: Sequence[int], target: int) -> int | None:
    best = None
    for c in cands:
        if best is None or abs(starts[c] - target) < abs(starts[best] - target):
            best = c
    return best


def _wrap(text: str, sentence_starts: set, profile: FormatProfile, rng: np.random.Generator) -> list[Edit]:
    """Line breaks that re-wrap ``text`` at lengths drawn from ``profile`` (one linear sweep).

    Each line's target length is drawn from the profile; the break goes at the
    whitespace run nearest that length, so no word is ever split. A break drawn
    as a paragraph break (``\\n\\n``) goes at the nearest sentence boundary when the
    line has one. Existing line breaks end a line and are kept.
    """
    n = len(text)
    soft, hard = [], []
    for m in WS_RUN_RE.finditer(text):
        s, e = m.span()
        if LINE_BREAK_RE.search(text, s, e):
            hard.append((s, e))
        elif 0 < s and e < n:
            soft.append((s, e))
    starts = [s for s, _ in soft]
    sent = [k for k, s in enumerate(starts) if s in sentence_starts]
    draws = _Draws(profile, rng)
    para_rate = profile.paragraph_break_rate_
    breaks: list[Edit] = []
    i = si = 0
    seg = 0
    for hs, he in [*hard, (n, n)]:
        p = seg
        while True:
            while i < len(soft) and starts[i] < p:
                i += 1
            if i >= len(soft) or starts[i] >= hs:
                break
            length, coin = draws.next()
            if hs - p <= length:
                break
            target = p + length
            para = coin < para_rate
            k = None
            if para:
                while si < len(sent) and starts[sent[si]] < p:
                    si += 1
                kk = si
                while kk < len(sent) and starts[sent[kk]] <= target and starts[sent[kk]] < hs:
                    kk += 1
                cands = [sent[kk - 1]] if kk > si else []
                if kk < len(sent) and starts[sent[kk]] < hs:
                    cands.append(sent[kk])
                k = _nearest(cands, starts, target)
            if k is None:
                kk = i
                while kk < len(soft) and starts[kk] <= target and starts[kk] < hs:
                    kk += 1
                cands = [kk - 1] if kk > i else []
                if kk < len(soft) and starts[kk] < hs:
                    cands.append(kk)
                k = _nearest(cands, starts, target)
            s, e = soft[k]
            breaks.append(Edit(s, e, "\n\n" if para else "\n"))
            p, i = e, k + 1
        seg = he
    return breaks


class ImposeFormat(Attack):
    """``impose(·; θ)``: give a text the formatting of a measured :class:`FormatProfile`.

    With ``normalize=True`` (the paper's operator) the text is first stripped
    (:class:`StripFormat`), so the output's formatting comes from the profile
    alone; with ``normalize=False`` the profile is imposed on top of the existing
    formatting. Then, on the profile's rates: straight quotes become curly, ``--``
    and spaced ``-`` become en/em dashes, single spaces after sentence ends become
    double; finally lines are re-wrapped at lengths drawn from the profile's
    empirical distribution, breaking only at whitespace.

    ``rate`` θ is the fraction of those profile-chosen sites actually changed:
    θ = 1 imposes the full profile, θ = 0 only normalises (or, with
    ``normalize=False``, changes nothing).
    """

    name = "impose_format"
    needs_model = False  # rule-based: scheduled as plain tasks

    def __init__(self, profile: FormatProfile, rate: float = 1.0, seed: int = 0, normalize: bool = True):
        self._init_params(locals())

    _component_params = {"profile": ComponentParam("format_profile")}
    _parameter_constraints = {
        "profile": [InstanceOf(FormatProfile, name="a fitted FormatProfile (FormatProfile.from_dict(d) builds one)")],
        "normalize": ["boolean"],
    }

    def _check(self) -> None:
        self.profile.check_fitted("ImposeFormat(profile=...)")

    def _run(self, text: str) -> tuple:
        prof, theta = self.profile, float(self.rate)
        strip = _strip_edits(text) if self.normalize else []
        text1 = apply_edits(text, strip)
        rng = self.rng(text)

        quotes = [m.start() for m in STRAIGHT_QUOTE_RE.finditer(text1)]
        chosen = _pick(len(quotes), prof.curly_quote_rate_, theta, rng)
        chars = [Edit(quotes[j], quotes[j] + 1, _curly(text1, quotes[j])) for j in chosen]
        dashes = [m.span() for m in PLAIN_DASH_RE.finditer(text1)]
        chosen = _pick(len(dashes), prof.dash_rate_, theta, rng)
        em = rng.random(len(chosen)) < prof.em_dash_share_
        chars += [Edit(*dashes[j], EM_DASH if is_em else EN_DASH) for j, is_em in zip(chosen, em)]
        gaps = sentence_gaps(text1)
        singles = [s for s, e in gaps if text1[s:e] == " "]
        chosen = _pick(len(singles), prof.double_space_rate_, theta, rng)
        chars += [Edit(singles[j], singles[j] + 1, "  ") for j in chosen]
        chars.sort()
        text2 = apply_edits(text1, chars)

        wraps = _wrap(text2, set(_shift([s for s, _ in gaps], chars)), prof, rng)
        wraps = [wraps[j] for j in choose_sites(len(wraps), theta, rng)]
        out = apply_edits(text2, wraps)
        _assert_admissible(self, text, out)

        def edits() -> list[Edit]:
            return compose_edits(text, compose_edits(text, strip, chars), wraps)

        return out, edits
