"""How every figure looks and is written: a paper's widths and fonts, PNG + SVG + PDF, atomically.

Figures are drawn at their printed size (:data:`COLUMN_WIDTH_IN` for one column, :data:`PAGE_WIDTH_IN`
for two), with no text below :data:`MIN_FONT_PT` points at that size, so they can go into a paper
without scaling. :func:`save` writes each requested format through :func:`._files.atomic_write`.
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from ._files import atomic_write

__all__ = ["COLUMN_WIDTH_IN", "PAGE_WIDTH_IN", "MIN_FONT_PT", "FORMATS", "STYLE", "pyplot", "style", "save",
           "check_formats"]

#: a single column of a two-column paper, and the full text width, in inches
COLUMN_WIDTH_IN = 3.3
PAGE_WIDTH_IN = 6.9
#: the smallest font (points) on any figure at its printed size
MIN_FONT_PT = 7
#: raster for screens and the report, vector for papers
FORMATS = ("png", "svg", "pdf")
STYLE = {"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
         "legend.fontsize": 7, "legend.title_fontsize": 7, "figure.titlesize": 8, "axes.linewidth": 0.6,
         "lines.linewidth": 1.0, "lines.markersize": 4, "pdf.fonttype": 42, "svg.fonttype": "path",
         "savefig.dpi": 200,
         # the SVG's clip-path and marker ids from a fixed salt, not a random one per process: the same figure
         # writes the same SVG in every process
         "svg.hashsalt": "humanize-bench",
         # a label is drawn as the text it is: no mathtext ("$\\x$" neither rendered nor a parse error), no TeX
         "text.parse_math": False, "text.usetex": False}
#: no creation date in the vector files: the same run draws the same bytes
_METADATA = {"svg": {"Date": None}, "pdf": {"CreationDate": None}, "png": {}}


def pyplot():
    """matplotlib.pyplot on the Agg back end (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def style():
    """The paper style for the figures drawn inside the block."""
    plt = pyplot()
    with plt.rc_context(STYLE):
        yield plt


def check_formats(formats) -> tuple[str, ...]:
    formats = (formats,) if isinstance(formats, str) else tuple(formats)
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise ValueError(f"unknown plot format {(bad or [formats])[0]!r}; choose from {list(FORMATS)}")
    return formats


def escape_figure_text(fig) -> None:
    """Every text of ``fig`` (titles, labels, legends, annotations, tick labels) through
    :func:`._escape.figure_text`: a control or invisible character in a label is drawn as ``⟨U+001B⟩``
    (it would make the SVG invalid XML, and a lone surrogate unwritable). Figures whose texts need
    nothing are left as they are (no extra draw)."""
    from matplotlib.text import Text

    from ._escape import figure_text

    def category_labels(axis) -> list:
        mapping = getattr(getattr(axis, "units", None), "_mapping", None)
        return [str(k) for k in mapping] if isinstance(mapping, dict) else []

    axes = [(ax.xaxis, ax.yaxis) for ax in fig.axes]
    texts = fig.findobj(Text)
    if all(figure_text(t.get_text()) == t.get_text() for t in texts) and all(
            figure_text(lab) == lab for pair in axes for axis in pair for lab in category_labels(axis)):
        return
    import warnings

    with warnings.catch_warnings():  # the raw characters' missing glyphs: drawn escaped below
        warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)
        fig.draw_without_rendering()  # tick labels exist once drawn
    for pair in axes:
        for axis in pair:
            labels = [t.get_text() for t in axis.get_ticklabels()]
            safe = [figure_text(lab) for lab in labels]
            if safe != labels:
                axis.set_ticks(axis.get_ticklocs(), labels=safe)
    for t in fig.findobj(Text):
        shown = figure_text(t.get_text())
        if shown != t.get_text():
            t.set_text(shown)


def _freeze_layout(fig) -> None:
    """Keep ``fig``'s axes where its layout engine last put them, with no engine left: ``savefig`` then draws the
    next formats once each. An engine set to ``"none"`` leaves a placeholder, for which ``savefig`` still runs a
    whole draw without rendering before the one that renders (a third of the figures' drawing time, issue #38)."""
    with pyplot().rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)  # with neither rc setting, None means no engine at all


def save(fig, out_dir, name: str, formats=FORMATS, close: bool = True) -> list[Path]:
    """Write ``fig`` as ``out_dir/name.<fmt>`` for each format; closes the figure unless ``close=False``."""
    formats = check_formats(formats)
    out = Path(out_dir)
    paths = []
    try:
        with pyplot().rc_context(STYLE):
            escape_figure_text(fig)
            bbox = "tight"
            for fmt in formats:
                paths.append(atomic_write(out / f"{name}.{fmt}", lambda tmp, fmt=fmt, bbox=bbox: fig.savefig(
                    tmp, format=fmt, bbox_inches=bbox, pad_inches=0.02, metadata=_METADATA[fmt])))
                if bbox == "tight":  # laid out and cropped once: every format gets the same page, drawn once
                    _freeze_layout(fig)
                    bbox = fig.get_tightbbox().padded(0.02)
    finally:
        if close:
            pyplot().close(fig)
    return paths
