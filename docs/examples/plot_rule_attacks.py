"""
What each rule-based attack changes
====================================

RAID's nine rule-based attacks at their default rate θ on the embedded demo set: the share of
characters each one rewrites, read from the exact edits every attack reports.
"""

import matplotlib.pyplot as plt

from humanize import attacks
from humanize.attacks.registry import RULE_BASED
from humanize.benchmarks.data import load_demo

texts = load_demo(n=20, seed=0).query("label == 'machine'")["generation"].tolist()
share = {}
for name in RULE_BASED:
    attack = attacks.get(name, seed=0)
    results = attack.batch(texts)
    changed = sum(sum(end - start + len(rep) for start, end, rep in r.edits) for r in results)
    share[name] = 100 * changed / sum(len(t) for t in texts)
    print(f"{name:22s} rate={attack.rate:<5} {share[name]:6.2f}% of characters in edits")

fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
order = sorted(share, key=share.get)
ax.barh(order, [share[n] for n in order], color="#4c72b0")
ax.set_xscale("log")
ax.set_xlabel("characters in edits (% of the text, log scale)")
ax.set_title("RAID rule-based attacks at their default θ, demo set")
plt.show()
