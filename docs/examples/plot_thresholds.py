"""
Thresholds at a fixed FPR, per domain, with intervals
=====================================================

The RAID protocol on synthetic scores: a threshold per domain at 5% false positives on the human
texts, the TPR it gives, and every figure's 95% bootstrap interval (``evaluate``). The attack lowers
the machine scores; the paired interval of the change says whether the drop is real.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from humanize.benchmarks.evaluation import evaluate, threshold_at_fpr

rng = np.random.default_rng(0)
rows = []
for i in range(200):
    domain = "news" if i % 2 else "reddit"
    shift = 0.0 if domain == "news" else 0.7
    rows.append(dict(id=f"h{i}", label="human", domain=domain, attack="none", detector="d",
                     score=rng.normal(shift, 1)))
    clean = rng.normal(2 + shift, 1)
    rows.append(dict(id=f"m{i}", label="machine", domain=domain, attack="none", detector="d", score=clean))
    rows.append(dict(id=f"m{i}", label="machine", domain=domain, attack="homoglyph", detector="d",
                     score=clean - 1.2))
scores = pd.DataFrame(rows)
table = evaluate(scores, fprs=(0.05,), n_boot=200, seed=0)
print(table.query("metric in ('auroc', 'tpr')")[["attack", "metric", "value", "value_lo", "value_hi"]].round(3))

fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.2), layout="constrained", sharey=True)
for ax, domain in zip(axes, ("news", "reddit")):
    part = scores[scores["domain"] == domain]
    human = part.query("label == 'human'")["score"]
    t = threshold_at_fpr(human.to_numpy(), fpr=0.05).threshold
    bins = np.linspace(-3, 6, 40)
    ax.hist(human, bins=bins, alpha=0.6, label="human")
    ax.hist(part.query("label == 'machine' and attack == 'none'")["score"], bins=bins, alpha=0.6, label="machine")
    ax.hist(part.query("attack == 'homoglyph'")["score"], bins=bins, alpha=0.6, label="machine, attacked")
    ax.axvline(t, color="k", ls="--", lw=1)
    ax.set_title(f"{domain}: threshold {t:.2f} at FPR 5%")
    ax.set_xlabel("detector score (higher = more machine-like)")
axes[0].set_ylabel("texts")
axes[0].legend(fontsize=8)
plt.show()
