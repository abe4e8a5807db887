"""On a demo run's own scores: how far our protocol's TPR at 5% FPR and AUROC are from RAID's evaluator's,
and that protocol="raid" gives RAID's exactly (issue #32).

Runs the demo's rule-based attacks against offline detectors (default: the two model-free ones, seconds),
then hands each detector's scores of the run to RAID's ``run_evaluation`` (raid-bench) and to
``evaluate(protocol="humanize")`` and ``evaluate(protocol="raid")``, and prints, per protocol, the number
of detector x attack cells whose TPR or AUROC differs from RAID's by more than 1e-9, and the largest
difference. Thresholds per domain (RAID's default) or, with ``--pooled``, one global threshold.

    OMP_NUM_THREADS=2 python benchmarks/bench_raid_parity_demo.py [--n 40] [--detectors tfidf_lr surface_probe]
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np
import pandas as pd


def main() -> None:
    from raid import run_evaluation

    from humanize.attacks import RULE_BASED
    from humanize.benchmarks import AttackSpec, DetectorSpec, RunConfig, run
    from humanize.benchmarks.evaluation import evaluate

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--detectors", nargs="+", default=["tfidf_lr", "surface_probe"])
    ap.add_argument("--pooled", action="store_true", help="one global threshold (RAID's per_domain_tuning=False)")
    args = ap.parse_args()
    per_domain = not args.pooled
    with tempfile.TemporaryDirectory() as tmp:
        cfg = RunConfig(dataset="demo", n=args.n, seed=0, quality=False, n_boot=0, fprs=(0.05,),
                        per_domain=per_domain, attacks=[AttackSpec(a) for a in RULE_BASED],
                        detectors=[DetectorSpec(d) for d in args.detectors], db=f"{tmp}/r.sqlite")
        scores = run(cfg, progress=False).tables["scores"]
    scores = scores[scores["defense"] == "none"].drop(columns=["defense"])
    ours = {p: evaluate(scores, [0.05], per_domain=per_domain, n_boot=0, protocol=p, nan_policy="omit")
            for p in ("humanize", "raid")}
    diffs = {p: {"tpr": [], "auroc": []} for p in ours}
    cells = 0
    for det, part in scores.groupby("detector"):
        # RAID's frame: each row its own id (an attacked row of ours shares its source's id)
        frame = part.assign(id=part["attack"] + "/" + part["id"].astype(str),
                            model=np.where(part["label"] == "human", "human", "machine"))
        theirs = run_evaluation(frame[["id", "score"]].to_dict(orient="records"), frame.drop(columns=["score"]),
                                target_fpr=0.05, per_domain_tuning=per_domain)
        for rec in theirs["scores"]:
            if not (rec["domain"] == rec["model"] == rec["decoding"] == rec["repetition_penalty"] == "all") \
                    or rec["attack"] == "all":
                continue
            cells += 1
            for p, table in ours.items():
                rows = table[(table["detector"] == det) & (table["attack"] == rec["attack"])]
                auc = rows[rows["metric"] == "auroc"]["value"].iloc[0]
                tpr = rows[(rows["metric"] == "tpr")]
                mine = tpr["value"].iloc[0] if p == "raid" else tpr["value_at_achieved_fpr"].iloc[0]
                acc = rec["accuracy"]["0.05"]
                ref = np.nan if acc is None else acc["accuracy"]
                diffs[p]["auroc"].append(abs(auc - rec["auroc"]))
                same_null = np.isnan(ref) and np.isnan(mine)
                diffs[p]["tpr"].append(0.0 if same_null else (np.inf if np.isnan(ref) != np.isnan(mine)
                                                               else abs(mine - ref)))
    print(f"demo, n={args.n}, detectors {', '.join(args.detectors)}, thresholds "
          f"{'per domain' if per_domain else 'global'}: {cells} detector x attack cells")
    for p, d in diffs.items():
        for fig in ("tpr", "auroc"):
            arr = np.array(d[fig])
            off = int((arr > 1e-9).sum())
            finite = arr[np.isfinite(arr)]
            print(f"  protocol={p:9s} {fig:5s}@5%: {off:3d} of {len(arr)} cells differ from RAID's evaluator"
                  f" (largest {finite.max() if len(finite) else 0:.3f}; {int(np.isinf(arr).sum())} where one is null)"
                  if fig == "tpr" else
                  f"  protocol={p:9s} {fig:5s}   : {off:3d} of {len(arr)} cells differ (largest {arr.max():.2e})")


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    main()
