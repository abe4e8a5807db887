"""Normalize: the one-line defense that undoes the character-level attacks (issue #12 §3).

RAID's homoglyph and zero-width-space attacks (Dugan et al. 2024, §3.6) change a
text's bytes but not what a reader sees; folding look-alikes, deleting invisible
characters and collapsing whitespace gives the detector back the text it was
trained on. Each step is a switch, and the result carries exact edits over the
original, like an attack's.
"""

from __future__ import annotations

from functools import lru_cache

from humanize.validation import Options
from humanize.attacks.base import apply_edits

from . import _steps
from ._edits import chain_edits
from ._confusables import CONFUSABLES_PACKAGE, confusables_source, fold
from .base import Defense

__all__ = ["Normalize"]

_SWITCHES = ("homoglyphs", "invisible", "whitespace", "quotes", "dashes", "nfkc")


@lru_cache(maxsize=1)
def _installed_confusables() -> str | None:
    """The confusables data found once per process (``"auto"`` resolves to it)."""
    return confusables_source()


class Normalize(Defense):
    """Undo character-level disguises, each step a switch; the steps run in this order.

    - ``invisible``: delete format characters (Unicode Cf: zero-width space and joiners,
      word joiner, BOM, soft hyphen, bidi controls), except a ZWJ inside an emoji sequence
      (👨‍👩‍👧), ZWJ/ZWNJ between letters of scripts that need them (Persian, Indic) and
      the tags of a subdivision flag;
    - ``homoglyphs``: fold Cyrillic/Greek look-alikes to their Latin letters in
      mixed-script words and in all-look-alike words among Latin ones; a word of a
      Greek or Cyrillic text stays (rule: :mod:`humanize.defenses._confusables`).
      ``confusables``: also use Unicode's confusables data from the optional package
      ``confusable-homoglyphs`` — ``"auto"`` where installed, ``True`` required, ``False``
      RAID's table only;
    - ``nfkc``: Unicode NFKC (full-width and mathematical letters, ligatures, NBSP, "…"),
      after the folding, so that a folded letter composes with its accent as the original did;
    - ``quotes``: curly quotes to ASCII ``'`` and ``"`` (guillemets stay);
    - ``dashes``: hyphens, en dash and minus to ``-``, em dash to ``--``;
    - ``whitespace``: collapse runs of spaces and tabs between words to one space
      (undoes RAID's whitespace attack), delete them at a line's end, turn odd spaces
      (NBSP, thin space) into spaces. Line breaks and indentation stay: paragraphs,
      lists and code are structure that detectors and the format counterfactuals use
      (the ``strip_format`` counterfactual is what removes them).

    Letter case is not touched, so RAID's upper_lower attack is not undone.
    """

    name = "normalize"
    _parameter_constraints = {**{switch: ["boolean"] for switch in _SWITCHES},
                              "confusables": ["boolean", Options(str, ["auto"])]}

    def __init__(self, homoglyphs: bool = True, invisible: bool = True, whitespace: bool = True,
                 quotes: bool = True, dashes: bool = True, nfkc: bool = True, confusables="auto"):
        self._init_params(locals())

    def _check(self) -> None:
        c = self.confusables
        if not isinstance(c, str) and c and self.homoglyphs and _installed_confusables() is None:
            raise ImportError(
                f"Normalize: confusables=True needs Unicode's confusables data from the optional package "
                f"{CONFUSABLES_PACKAGE} (pip install {CONFUSABLES_PACKAGE}); or pass confusables='auto' or False"
            )

    def _unicode_confusables(self) -> bool:
        c = self.confusables
        return (not isinstance(c, str) and bool(c)) or (c == "auto" and _installed_confusables() is not None)

    def provenance(self) -> dict:
        """The parameters plus the confusables data actually used ("auto" depends on what is installed)."""
        out = super().provenance()
        if self.homoglyphs:
            out["data"] = {"confusables": _installed_confusables() if self._unicode_confusables() else None}
        return out

    def _steps(self) -> list:
        steps = []
        if self.invisible:
            steps.append(_steps.invisible_edits)
        if self.homoglyphs:  # before NFKC, which would compose a Cyrillic е with an accent out of reach
            unicode = self._unicode_confusables()
            steps.append(lambda t: fold(t, unicode))
        if self.nfkc:
            steps.append(_steps.nfkc_edits)
        table = {**(_steps.QUOTES if self.quotes else {}), **(_steps.DASHES if self.dashes else {})}
        if table:
            steps.append(lambda t: _steps.punct_edits(t, table))
        if self.whitespace:
            steps.append(_steps.whitespace_edits)
        return steps

    def _run(self, text: str):
        # Each step's edits are over the previous step's output; they are composed into
        # edits over the original only when read.
        stages = []
        out = text
        for step in self._steps():
            found = step(out)
            if not found:
                continue
            if isinstance(found, tuple):  # (new text, edits or a callable giving them)
                new, edits = found
            else:
                new, edits = apply_edits(out, found), found
            stages.append(edits)
            out = new
        return out, lambda: _compose(text, out, stages)


def _compose(original: str, final: str, stages: list) -> list:
    stages = [edits() if callable(edits) else edits for edits in stages]
    if not stages:
        return []
    return stages[0] if len(stages) == 1 else chain_edits(original, final, stages)
