"""
A run's AUROC with 95% intervals
================================

A small run (RAID's homoglyph, whitespace and upper-lower attacks against the two learned baselines
on the demo set, no model download) and the report's interval figure: each AUROC with its
bootstrap interval next to its change versus clean with the paired interval.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from humanize.benchmarks import AttackSpec, DetectorSpec, RunConfig, run
from humanize.benchmarks.reporting.plots import plot_intervals

out = Path(tempfile.mkdtemp())
cfg = RunConfig(dataset="demo", n=30, seed=0, quality=False, n_boot=200, db=str(out / "run.sqlite"),
                attacks=[AttackSpec("homoglyph"), AttackSpec("whitespace"), AttackSpec("upper_lower")],
                detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe")])
result = run(cfg, progress=False)
print(result.metrics.query("metric == 'auroc'")[["detector", "attack", "value", "value_lo", "value_hi"]].round(3))

# the report's figure, as ``humanize-bench plot`` writes it (PNG here; SVG too by default)
paths = plot_intervals(result.tables, out, metric="auroc", formats=("png",))
image = mpimg.imread(paths[0])
height, width = image.shape[:2]
fig = plt.figure(figsize=(width / 100, height / 100), dpi=100)
fig.figimage(image)
plt.show()
