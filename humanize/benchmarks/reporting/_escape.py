"""Text from the data and labels from a config, made safe for every output format (issue #22).

A label (an attack's, a detector's, a defense's, a dataset's) and a text may hold anything:
HTML (``<script>``, ``<img onerror=...>``), a Markdown table pipe, or characters that cannot be
seen or that reorder what is shown (bidirectional overrides and isolates, zero-width and other
format characters, controls). Every writer passes them through one of these:

- :func:`html_text`: HTML-escaped, each invisible or bidi character replaced by a visible marker
  (``<span class="inv" title="U+202E RIGHT-TO-LEFT OVERRIDE">U+202E</span>``); the documents page's
  marking, now used for labels on every HTML page too;
- :func:`md_text`: for Markdown, ``&``, ``<`` and ``>`` written as entities (so no raw HTML and no
  ``<...>`` autolink reaches a renderer), ``](`` and ``][`` written with the bracket's partner
  backslash-escaped (CommonMark §2.4: no link ``[x](javascript:...)`` and no remote image
  ``![x](http://...)`` can form, while an interval ``[0.78, 0.99]`` reads as it is),
  ``|`` escaped (a table cell stays one cell), line breaks as spaces, and each invisible or bidi
  character written as ``⟨U+202E⟩``;
- :func:`plain_text`: for a terminal or a plain-text table, the same ``⟨U+202E⟩`` marking only:
  an escape sequence (``ESC [ ...``), a carriage return or a bell never reaches a terminal raw;
  :func:`terminal_text` is the same on one line (line breaks marked too);
- :func:`figure_text`: for figures (PNG, SVG, PDF), the ``⟨U+001B⟩`` marking (a control character
  would make an SVG invalid XML); every text of a figure goes through it when the figure is saved
  (:func:`._figstyle.escape_figure_text`), and the figure style turns matplotlib's mathtext off
  (``text.parse_math``) and writes SVG text as paths, so a label is drawn as the text it is.

File names made from labels come from :func:`humanize.benchmarks.reporting._files.file_stem`
(a slug plus a short digest: unique, bounded, stable).

Line breaks and tabs count as visible in HTML and plain text.
"""
from __future__ import annotations

import html
import unicodedata

__all__ = ["INVISIBLE", "char_name", "figure_text", "html_text", "is_invisible", "marker", "md_text", "plain_text",
           "terminal_text"]

#: short visible names of invisible characters an attack may insert
INVISIBLE = {"\u200b": "ZWSP", "\u200c": "ZWNJ", "\u200d": "ZWJ", "\u2060": "WJ", "\ufeff": "BOM",
             "\u00a0": "NBSP", "\u00ad": "SHY", "\u180e": "MVS", "\u202f": "NNBSP", "\u2009": "THSP",
             "\u200a": "HSP", "\u3000": "IDSP"}


def char_name(ch: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``."""
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}"


def is_invisible(ch: str) -> bool:
    """A character that shows nothing or changes how its neighbours show: format characters (bidi
    overrides, isolates and marks, zero-width characters), controls, surrogates, private-use and
    unassigned code points, line/paragraph separators and spaces other than U+0020."""
    cat = unicodedata.category(ch)
    return ch in INVISIBLE or cat in ("Cf", "Cc", "Cs", "Co", "Cn", "Zl", "Zp") or (cat == "Zs" and ch != " ")


def char_label(ch: str) -> str:
    """An invisible character's short name (``ZWSP``), or its code point (``U+202E``)."""
    return INVISIBLE.get(ch) or f"U+{ord(ch):04X}"


def marker(ch: str) -> str:
    """The HTML marker of one invisible character: its short name, its code point as a tooltip."""
    return f'<span class="inv" title="{html.escape(char_name(ch))}">{char_label(ch)}</span>'


def html_text(text) -> str:
    """``text`` (any value, as ``str``) HTML-escaped, invisible characters (not line breaks and tabs) marked."""
    return "".join(html.escape(c) if c in "\n\t" or not is_invisible(c) else marker(c) for c in str(text))


def plain_text(text) -> str:
    """``text`` with each invisible character (not line breaks and tabs) written ``⟨U+202E⟩``."""
    return "".join(c if c in "\n\t" or not is_invisible(c) else f"\u27e8{char_label(c)}\u27e9" for c in str(text))


_MD = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "\n": " ", "\r": " ", "\t": " "}


def md_text(text) -> str:
    """``text`` for Markdown: no raw HTML, no table-breaking pipe or line break, invisible characters marked."""
    out = []
    for c in str(text):
        if c in _MD:
            out.append(_MD[c])
        elif is_invisible(c):
            out.append(f"\u27e8{char_label(c)}\u27e9")
        else:
            out.append(c)
    # a link or an image needs "](" (inline) or "][" (reference) with nothing between: "]\(" is text
    # (CommonMark §2.4: a backslash-escaped punctuation character is literal)
    return "".join(out).replace("](", "]\\(").replace("][", "]\\[")


def terminal_text(text) -> str:
    """``text`` on one line for a terminal: every invisible or control character (line breaks, tabs and
    escape sequences included) written ``⟨U+001B⟩``, so nothing a label holds is run by the terminal."""
    return "".join(c if not is_invisible(c) else f"\u27e8{char_label(c)}\u27e9" for c in str(text))


def figure_text(text) -> str:
    """``text`` for a figure: as :func:`plain_text` (line breaks and tabs kept, every other invisible or
    control character written ``⟨U+001B⟩``)."""
    return plain_text(text)
