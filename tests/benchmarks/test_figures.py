"""Figures for a paper (issue #24 §2): every figure in PNG, SVG and PDF, labelled axes with units, fonts of at
least 7 pt at a paper's width, a caption each, the scatter's Pareto front and its blind-meter markers."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from matplotlib.text import Text

from humanize.benchmarks.evaluation import evaluate
from humanize.benchmarks.reporting import plots
from humanize.benchmarks.reporting._figstyle import MIN_FONT_PT, PAGE_WIDTH_IN
from humanize.benchmarks.reporting._meaning import meaning_by_attack
from humanize.benchmarks.reporting.report import build_report, export_report
from humanize.benchmarks.reporting.scatter import pareto_front, scatter_points

matplotlib.use("Agg")

#: attack -> how much it lowers a machine score, its mean cosine (None: case flips, cosine 1 on changed text),
#: seconds per document
ATTACKS = {"upper_lower": (0.2, None, 1e-4), "homoglyph": (0.8, 0.7, 1e-3), "x@0.1": (0.1, 0.97, 1e-2),
           "x@0.5": (0.6, 0.8, 1e-1)}


@pytest.fixture(scope="module")
def tables():
    """Two detectors, two domains of 8 human texts each (too few for FPR 0.05: TPR there is underpowered),
    a θ sweep of x, a quality table whose cosine cannot see upper_lower, and costs over three decades."""
    rng = np.random.default_rng(0)
    rows, quality, cost = [], [], []
    for det, shift in (("d", 1.5), ("e", 1.0)):
        for dom in "AB":
            rows += [dict(id=f"h{dom}{i}", label="human", domain=dom, attack="none", detector=det,
                          score=rng.normal()) for i in range(8)]
            for i in range(6):
                clean = rng.normal(shift, 1.0)
                rows.append(dict(id=f"m{dom}{i}", label="machine", domain=dom, attack="none", detector=det,
                                 score=clean))
                rows += [dict(id=f"m{dom}{i}", label="machine", domain=dom, attack=a, detector=det,
                              score=clean - drop + 0.2 * rng.normal()) for a, (drop, _, _) in ATTACKS.items()]
    for a, (_, cos, sec) in ATTACKS.items():
        for i in range(12):
            quality.append(dict(attack=a, cosine=1.0 if cos is None else cos + 0.02 * rng.normal(),
                                char_edit_rate=0.1))
            cost.append(dict(attack=a, wall_s=sec, rate=float(a.split("@")[1]) if "@" in a else 0.2,
                             words_in=100 + 40 * i))
    metrics = evaluate(pd.DataFrame(rows), fprs=(0.05,), nan_policy="omit", n_boot=100, seed=0)
    return {"metrics": metrics, "scores": pd.DataFrame(rows), "quality": pd.DataFrame(quality),
            "cost": pd.DataFrame(cost)}


def _texts(fig) -> list[Text]:
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def _few(tables, detector="d", attacks=("none", "upper_lower", "x@0.1", "x@0.5")) -> dict:
    """The tables cut to one detector and three attacks: the smallest run that draws every figure."""
    out = {}
    for name, t in tables.items():
        keep = t["attack"].isin(attacks) & (t["detector"] == detector if "detector" in t else True)
        out[name] = t[keep].reset_index(drop=True)
    return out


def test_every_figure_is_written_as_png_svg_and_pdf_with_a_caption_each(tables, tmp_path):
    tables = _few(tables)
    paths = plots.plot_all(tables, tmp_path)
    stems = ["scatter", "triangle", "heatmap_auroc", "heatmap_tpr", "intervals_auroc", "intervals_tpr",
             "theta_sweep", "cost_vs_length", "roc", "det"]
    assert [p.name for p in paths] == [f"{s}.{f}" for s in stems for f in ("png", "svg", "pdf")] + ["captions.md"]
    magic = {"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF"}
    for p in paths[:-1]:
        assert p.read_bytes().startswith(magic[p.suffix[1:]]), p.name
    captions = plots.figure_captions(tables)
    assert list(captions) == stems
    listing = (tmp_path / "captions.md").read_text()
    assert all(f"- `{s}`: " in listing for s in stems)
    # the TPR figures at an FPR the sample cannot resolve say so, in the caption and on the panel
    assert "Underpowered: n_human = 8 in a domain, fewer than the 20 needed for FPR 0.05" in captions["heatmap_tpr"]
    assert "underpowered" in (tmp_path / "intervals_tpr.svg").read_text()
    # the report carries one caption line per figure
    export_report(build_report({"metrics": tables["metrics"]}), tmp_path / "report", figures=captions)
    md = (tmp_path / "report" / "report.md").read_text()
    assert md.count("\n- `") == len(stems) and "## figures" in md and "Dotted lines (upper_lower)" in md
    with pytest.raises(ValueError, match="unknown plot format 'gif'"):
        plots.plot_theta_sweep(tables, tmp_path, formats=("gif",))


def test_the_scatter_has_real_axes_a_log_colour_bar_and_the_pareto_front(tables):
    points = scatter_points(tables)
    x = points[points["detector"] == "e"].set_index("attack")
    assert x.loc["homoglyph", "change"] == pytest.approx(
        tables["metrics"].query("detector == 'e' and attack == 'homoglyph' and metric == 'auroc'")["change"].iloc[0])
    assert x.loc["homoglyph", "meaning_lo"] < x.loc["homoglyph", "meaning"] < x.loc["homoglyph", "meaning_hi"]
    assert not x.loc["upper_lower", "measured"] and not x.loc["upper_lower", "pareto"]  # blind meter: off the front
    assert x.loc["x@0.1", "seconds_per_doc"] == pytest.approx(1e-2)
    fig = plots.scatter_figure(tables, points=points)
    try:
        assert fig.get_supxlabel().startswith("meaning preserved (cosine")
        assert fig.get_supylabel() == "change in AUROC (attacked − clean; asinh scale)"
        panels = [ax for ax in fig.axes if ax.get_title()]
        assert [ax.get_title().split(" (")[0] for ax in panels] == ["d", "e"]
        (bar,) = [ax for ax in fig.axes if ax.get_ylabel().startswith("wall time")]
        assert bar.get_ylabel() == "wall time per document (s, log scale)" and bar.get_yscale() == "log"
        fronts = [line for ax in panels for line in ax.get_lines() if line.get_label() == "Pareto front"]
        assert len(fronts) == 2 and fronts[0].get_color() == "tab:red"
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert legend == ["Pareto front (attacker)", "attack", "no measurable effect (interval includes 0)",
                          "meaning not measured (meter blind to the change)"]
        # fixed scales, whatever the run: x from -0.1 to 1, y from -1 to 1, colour from 1 µs to 10 s
        assert panels[0].get_xlim()[0] == pytest.approx(-0.1) and panels[0].get_ylim() == pytest.approx((-1.05, 1.05))
        assert (bar.get_ylim()[0], bar.get_ylim()[1]) == pytest.approx((1e-6, 10.0))
        # upper_lower's meaning is not measured: no point at a guessed meaning, a dotted line at its change
        from matplotlib.collections import PathCollection

        offsets = np.vstack([c.get_offsets() for ax in panels for c in ax.collections
                             if isinstance(c, PathCollection) and len(c.get_offsets())])
        assert len(offsets) == 2 * 3  # three attacks with a measured meaning per panel
        dotted = [line for ax in panels for line in ax.get_lines() if line.get_linestyle() == ":"]
        assert sorted(line.get_ydata()[0] for line in dotted) == pytest.approx(
            sorted(points.loc[points["attack"] == "upper_lower", "change"]))
        assert fig.get_size_inches()[0] <= PAGE_WIDTH_IN
        assert min(t.get_fontsize() for t in _texts(fig)) >= MIN_FONT_PT
    finally:
        matplotlib.pyplot.close(fig)
    assert "Dotted lines (upper_lower)" in plots.figure_captions(tables)["scatter"]
    assert pareto_front([0.9, 0.8, 0.95, np.nan], [-0.1, -0.2, 0.0, -1.0]).tolist() == [True, True, True, False]
    assert pareto_front([0.9, 0.9], [-0.1, 0.0]).tolist() == [True, False]


def test_the_other_figures_carry_units_distinct_lines_and_readable_fonts(tables):
    figs = {"theta": plots.theta_sweep_figure(tables), "triangle": plots.triangle_figure(tables),
            "heatmap": plots.heatmap_figure(tables, "tpr"), "intervals": plots.intervals_figure(tables, "tpr"),
            "cost": plots.cost_vs_length_figure(tables)}
    try:
        top, bottom = figs["theta"].axes
        assert top.get_ylabel() == "AUROC (0–1, 95% interval)"
        assert bottom.get_xlabel().startswith("θ (attack rate") and bottom.get_ylabel().startswith(
            "meaning preserved\n(cosine")
        sweeps = [c for c in top.containers if c.get_label().startswith("x · ")]
        assert len(sweeps) == 2 and {c.lines[0].get_marker() for c in sweeps} == {"o", "s"}  # a marker per detector
        assert len({to_hex(line.get_color()) for line in bottom.get_lines()}) == len(bottom.get_lines())
        assert [t.get_text() for t in figs["theta"].legends[0].get_texts()] == ["x · d", "x · e", "x: meaning"]
        assert "wall time" in " ".join(t.get_text() for t in _texts(figs["triangle"]))
        assert "ms/doc" in " ".join(t.get_text() for t in _texts(figs["triangle"]))  # raw values on the radar
        assert "µs/doc" in " ".join(t.get_text() for t in _texts(figs["triangle"]))  # 100 µs, not 0.000
        heat = figs["heatmap"].axes
        assert heat[0].get_xlabel() == "detector" and heat[1].get_ylabel() == "TPR at FPR 0.05 (0–1)"
        boxed = [t.get_text() for t in _texts(figs["heatmap"]) if t.get_text().startswith("underpowered")]
        assert boxed == ["underpowered:\nn_human = 8 in a domain\n< 20 needed for FPR 0.05"]
        assert figs["intervals"].axes[0].get_xlabel() == "TPR at FPR 0.05 (0–1; 95% bootstrap interval)"
        cost = figs["cost"]
        assert cost.get_supylabel() == "wall time per document (s, log scale)"
        assert cost.get_supxlabel() == "input length (words)"  # the unit on the length axis
        panels = [ax for ax in cost.axes if ax.get_visible()]
        assert [ax.get_title() for ax in panels] == sorted(ATTACKS)  # one panel per attack, not 4 lines in one
        ticks = {t.get_text() for ax in panels for t in ax.get_yticklabels() if t.get_text()}
        assert {"1 ms", "100 µs"} <= ticks and not any("mathdefault" in t for t in ticks)
        for name, fig in figs.items():
            assert fig.get_size_inches()[0] <= PAGE_WIDTH_IN, name
            assert min(t.get_fontsize() for t in _texts(fig)) >= MIN_FONT_PT, name
    finally:
        for fig in figs.values():
            matplotlib.pyplot.close(fig)
    assert plots.theta_sweep_figure({**tables, "cost": tables["cost"][tables["cost"]["attack"] != "x@0.5"]}) is None


def test_a_meter_that_reads_no_loss_on_changed_text_is_not_measuring():
    q = pd.DataFrame({"attack": ["a", "a", "b", "b", "c"], "cosine": [1.0, 1.0, 1.0, 0.9, 1.0],
                      "char_edit_rate": [0.1, 0.2, 0.1, 0.1, 0.0]})
    m = meaning_by_attack(q, n_boot=50)
    assert m["measured"].to_dict() == {"a": False, "b": True, "c": True}  # c changed nothing: nothing to miss
    assert m.loc["b", "meaning"] == pytest.approx(0.95) and m.loc["b", "lo"] <= 0.95 <= m.loc["b", "hi"]
    assert meaning_by_attack(q, n_boot=50).equals(m)  # the interval's draws are seeded


def test_the_triangle_scales_are_fixed_and_a_weak_run_draws_its_attacks_weak(tables):
    scores = plots.triangle_scores(tables)
    # a fall of 0.5 in AUROC reaches the rim; a run's weakest attack is not stretched to it
    assert scores.loc["x@0.1", "effectiveness"] == pytest.approx(-scores.loc["x@0.1", "auroc_change"] / 0.5)
    assert scores["effectiveness"].max() < 1
    # meaning on the meter's own scale, not min-max; not measured where the meter is blind
    assert scores.loc["x@0.5", "quality"] == pytest.approx(scores.loc["x@0.5", "similarity"])
    assert np.isnan(scores.loc["upper_lower", "quality"])
    # cost: log seconds from 10 s (0) to 1 µs (1): 1 ms is 4/7 of the way
    assert scores.loc["homoglyph", "cost"] == pytest.approx(4 / 7)
    # the same attack scores the same radii in a run with other attacks
    alone = plots.triangle_scores({k: t[t["attack"].isin(["none", "x@0.1"])] for k, t in tables.items()})
    assert alone.loc["x@0.1", ["effectiveness", "quality", "cost"]].tolist() == pytest.approx(
        scores.loc["x@0.1", ["effectiveness", "quality", "cost"]].tolist())


def _no_effect(tables) -> dict:
    """The fixture's run with every attacked score set to its clean score: no attack changes anything."""
    rows = tables["scores"].copy()
    clean = rows[rows["attack"] == "none"].set_index(["detector", "id"])["score"]
    keys = pd.MultiIndex.from_frame(rows[["detector", "id"]])
    rows["score"] = clean.reindex(keys).to_numpy()
    metrics = evaluate(rows, fprs=(0.05,), nan_policy="omit", n_boot=100, seed=0)
    return {**tables, "metrics": metrics, "scores": rows}


def test_a_run_whose_attacks_do_nothing_draws_and_names_no_attack_as_effective(tables):
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Polygon

    from humanize.benchmarks.reporting.summary import summary_table

    nothing = _no_effect(tables)
    scores = plots.triangle_scores(nothing)
    assert (scores["effect"] == "none").all() and (scores["effectiveness"] == 0).all()
    fig = plots.triangle_figure(nothing)
    try:
        filled = [p for ax in fig.axes for p in ax.patches if isinstance(p, Polygon)]
        filled += [c for ax in fig.axes for c in ax.collections if isinstance(c, PolyCollection)]
        assert not filled  # no attack's triangle is filled as an effective one
        titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()][1:]
        assert len(titles) == 4 and all(t.endswith("(no measurable effect)") for t in titles)
    finally:
        matplotlib.pyplot.close(fig)
    points = scatter_points(nothing)
    assert not points["effect"].any() and not points["pareto"].any()
    s = summary_table(nothing)
    assert s["fooled_most_by"].isna().all()
    assert [line.split(":")[0] for line in s.attrs["lines"] if "no attack had a measurable effect on" in line] == [
        "- **d**", "- **e**"]


def test_roc_and_det_curves_per_detector_and_attack_agree_with_the_tables(tables):
    from sklearn.metrics import auc

    from humanize.benchmarks.reporting.curves import curve_pairs, curves_figure

    pairs = curve_pairs(tables["scores"])
    assert list(pairs) == ["d", "e"] and list(pairs["d"]) == ["none", *sorted(ATTACKS)]
    fig = curves_figure(tables, "roc")
    try:
        panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
        assert [ax.get_title() for ax in panels] == ["d", "e"]
        # each curve's area is the run's AUROC for that detector and attack (the humanize protocol's pairing)
        curves = [line for line in panels[1].get_lines() if line.get_label().startswith("x@0.5 ")]
        (line,) = curves
        area = auc(line.get_xdata(), line.get_ydata())
        want = tables["metrics"].query("detector == 'e' and attack == 'x@0.5' and metric == 'auroc'")["value"].iloc[0]
        assert area == pytest.approx(want)
        assert panels[0].get_xlabel() == "FPR (clean human texts)"
    finally:
        matplotlib.pyplot.close(fig)
    det = curves_figure(tables, "det")
    try:
        assert [ax.get_ylabel() for ax in det.axes if ax.get_visible() and ax.get_title()][0] == \
            "FNR (machine texts missed)"
    finally:
        matplotlib.pyplot.close(det)
    assert curves_figure({"metrics": tables["metrics"]}, "roc") is None  # no scores: not drawn


def test_a_backfiring_attack_is_never_on_the_attackers_front(tables):
    # x@0.5 lowers every score in the fixture; make it raise them for detector e instead (a backfire)
    rows = tables["scores"].copy()
    up = (rows["attack"] == "x@0.5") & (rows["detector"] == "e")
    rows.loc[up, "score"] += 3.0
    metrics = evaluate(rows, fprs=(0.05,), nan_policy="omit", n_boot=100, seed=0)
    points = scatter_points({**tables, "metrics": metrics, "scores": rows}).set_index(["detector", "attack"])
    assert points.loc[("e", "x@0.5"), "change"] > 0 and points.loc[("e", "x@0.5"), "effect"]
    assert not points.loc[("e", "x@0.5"), "pareto"] and points.loc[("d", "x@0.5"), "pareto"]


def test_a_run_without_fpr_005_draws_its_tpr_figures_at_its_own_fpr(tables, tmp_path):
    """plot_all used to draw the TPR heatmap and interval figures at FPR 0.05 whatever the run measured: a run
    with fprs=(0.01,) had no row there and the interval figure failed (a legend of no column)."""
    few = _few(tables)
    few["metrics"] = evaluate(few["scores"], fprs=(0.01,), nan_policy="omit", n_boot=50, seed=0)
    assert plots.figure_fpr(few) == 0.01 and plots.figure_fpr(tables) == 0.05
    paths = plots.plot_all(few, tmp_path, formats=("svg",))
    assert {"heatmap_tpr.svg", "intervals_tpr.svg"} <= {p.name for p in paths}
    assert "TPR at FPR 0.01" in (tmp_path / "heatmap_tpr.svg").read_text()
    assert "TPR at FPR 0.01" in (tmp_path / "intervals_tpr.svg").read_text()
    captions = plots.figure_captions(few)
    assert "TPR at FPR 0.01" in captions["heatmap_tpr"] and "0.05" not in captions["intervals_tpr"]
    with pytest.raises(ValueError, match=r"no TPR at FPR 0.05; its FPRs are 0.01"):
        plots.heatmap_figure(few, "tpr", fpr=0.05)


def test_figures_drawn_from_the_same_tables_are_not_drawn_again(tables, tmp_path):
    # issue #38: a cached rerun of the demo spent most of its time redrawing the figures it had drawn
    from humanize.benchmarks.reporting import _reuse

    few, key = _few(tables), str(tmp_path)
    first = plots.plot_all(few, tmp_path, formats=("svg",))
    assert _reuse.DRAWS[key] == 1 and (tmp_path / _reuse.RECORD).is_file()
    before = {p.name: p.read_bytes() for p in first}
    again = plots.plot_all({k: t.copy() for k, t in few.items()}, tmp_path, formats=("svg",))  # equal values
    assert _reuse.DRAWS[key] == 1 and again == first and {p.name: p.read_bytes() for p in again} == before

    changed = {k: t.copy() for k, t in few.items()}
    changed["metrics"].loc[0, "auroc"] = 0.123  # one value: drawn again
    plots.plot_all(changed, tmp_path, formats=("svg",))
    assert _reuse.DRAWS[key] == 2
    plots.plot_all(changed, tmp_path, formats=("svg", "png"))  # other formats: drawn again
    assert _reuse.DRAWS[key] == 3
    (tmp_path / "triangle.svg").write_text("edited")  # a file changed since: drawn again
    plots.plot_all(changed, tmp_path, formats=("svg", "png"))
    assert _reuse.DRAWS[key] == 4 and (tmp_path / "triangle.svg").read_text().startswith("<?xml")
    (tmp_path / "roc.png").unlink()  # a file gone: drawn again
    plots.plot_all(changed, tmp_path, formats=("svg", "png"))
    assert _reuse.DRAWS[key] == 5 and (tmp_path / "roc.png").is_file()
    plots.plot_all(changed, tmp_path, formats=("svg", "png"))
    assert _reuse.DRAWS[key] == 5


def test_a_cached_rerun_draws_nothing_and_no_figure_reads_the_columns_it_changes(tables, tmp_path):
    # A run's cached rerun has the same tables but for where each figure came from (cost_source 'cached',
    # texts_cached); the figures do not read those columns, so the rerun reuses the figures.
    from pathlib import Path

    from humanize.benchmarks.reporting import _reuse

    few = _few(tables)
    cached = {k: t.copy() for k, t in few.items()}
    cached["cost"]["cost_source"] = "cached"
    assert _reuse.inputs_digest(few, ("svg",)) == _reuse.inputs_digest(cached, ("svg",))
    cached["cost"]["wall_s"] = cached["cost"]["wall_s"] * 2
    assert _reuse.inputs_digest(few, ("svg",)) != _reuse.inputs_digest(cached, ("svg",))
    folder = Path(plots.__file__).parent
    drawing = ["plots.py", "scatter.py", "curves.py", "_meaning.py", "selection.py", "watermark.py", "_figstyle.py"]
    for name in drawing:
        source = (folder / name).read_text()
        assert not any(c in source for cols in _reuse.NOT_DRAWN.values() for c in cols), name


def test_a_figure_is_laid_out_once_and_drawn_once_per_format(tables, tmp_path, monkeypatch):
    # issue #38: after its first format a figure kept a placeholder layout engine, and savefig ran a whole draw
    # without rendering before each format's rendering draw (six draws for three formats)
    from matplotlib.figure import Figure

    from humanize.benchmarks.reporting._figstyle import FORMATS, save

    draws, engines = [], []
    real = Figure.draw

    def counted(fig, renderer):
        draws.append(type(renderer).__name__)
        engines.append(type(fig.get_layout_engine()).__name__)
        return real(fig, renderer)

    monkeypatch.setattr(Figure, "draw", counted)
    fig = plots.triangle_figure(_few(tables))
    assert type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    paths = save(fig, tmp_path, "triangle")
    assert [p.suffix for p in paths] == [f".{f}" for f in FORMATS]
    # the first format: a draw that lays out and crops, then its rendering; each other format: its rendering
    assert len(draws) == len(FORMATS) + 1
    assert engines[0] == "ConstrainedLayoutEngine" and set(engines[2:]) == {"NoneType"}  # laid out once


def test_the_same_figure_writes_the_same_svg_bytes_in_every_process(tables, tmp_path):
    # matplotlib names a SVG's clip paths and markers by a hash salted with a random value per process unless
    # svg.hashsalt is set; the figure style sets it, so a figure's SVG does not depend on the process
    import subprocess
    import sys

    few = _few(tables)
    pd.to_pickle(few, tmp_path / "tables.pkl")
    code = ("import sys, pandas as pd; from humanize.benchmarks.reporting import plots; "
            "plots.plot_triangle(pd.read_pickle(sys.argv[1]), sys.argv[2], formats=('svg',))")
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        subprocess.run([sys.executable, "-c", code, str(tmp_path / "tables.pkl"), str(tmp_path / name)], check=True)
    first = (tmp_path / "a" / "triangle.svg").read_bytes()
    assert b"clip-path=" in first and first == (tmp_path / "b" / "triangle.svg").read_bytes()
