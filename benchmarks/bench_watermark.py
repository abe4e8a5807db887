"""Watermarks on the packaged SmolLM2 (issue #37): detection, cost, and the attacks that scrub them.

Offline: ``--n`` demo prompts (the first 30 words of distinct demo human texts; the human side is the
rest of each text) are continued by SmolLM2-135M-Instruct for ``--tokens`` new tokens, sampled at
temperature 0.7 / top-p 0.95 with one seed per prompt, exactly ``--tokens`` tokens (no stop before,
as Kirchenbauer et al. 2023 §6): with KGW (gamma 0.25, delta 2, LeftHash), with
SynthID (depth 30, 5-grams, top-k 40), and without a watermark (the same model, decoding and seeds).
It prints

- generation cost: seconds and new tokens per second for each (first run; a rerun reads the content
  cache and says so); ``--cost-n K`` times the three generators side by side on K prompts, twice each,
  uncached (the ratio to unwatermarked is the figure to read: the machine is shared);
- detection: TPR at 1% FPR (threshold: the empirical 99% quantile of the negatives, RAID's rule;
  and the analytic one, z > 2.326 for KGW) against the human texts and against the unwatermarked
  machine texts, with AUROC, for KGW and SynthID (Mean score), and as a function of the number of
  tokens scored (5 to 200, with 95% bootstrap intervals);
- detection cost: texts per second of each detector on 2,000 texts after a warm-up;
- scrubbing the KGW texts (``--attacks``), each over the θ grid ``--rates`` on the first ``--attack-n`` texts:
  SIRA (``self_info_rewrite``, Gemma-3-270M scores self-information, SmolLM2 refills) against random
  replacement at the same edit rate (their difference paired on the same texts), the stealing attack
  (green lists learned from the other half of the watermarked texts), copy-paste dilution and, on
  ``--emoji-n`` texts over ``--emoji-rates``, the emoji attack run through the watermarked generator itself;
  for each, TPR at 1% FPR (threshold from the human texts) and mean z with 95% bootstrap intervals (humans and
  attacked texts resampled, each replicate recalibrating its threshold), and the runner's quality meters
  beside them (``--meters``: perplexity, MiniLM cosine, ROUGE-L, word edit rate, WordNet validity of swaps;
  ``--entailment``: NLI). ``--figures DIR`` writes ``watermark_attacks_theta.png`` (TPR, mean z and meaning
  kept against θ) and ``watermark_tokens_tpr.png``; ``--save`` keeps each attack's row and z-scores as it
  finishes, ``--replot`` prints the table and redraws the figure from them.

    OMP_NUM_THREADS=1 nice .venv/bin/python benchmarks/bench_watermark.py --n 100 --tokens 200 --attack-n 20 \
        --rates 0.3 0.5 0.7 0.1 --emoji-n 4 --emoji-rates 0.5 1.0 --figures docs/_static/watermarks --save rows.jsonl
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

KEY = "bench-watermark-key"


def tpr(pos, neg, fpr=0.01) -> float:
    from humanize.benchmarks.evaluation.metrics import TPRAtFPR

    scores = np.concatenate([pos, neg])
    labels = np.r_[np.ones(len(pos)), np.zeros(len(neg))].astype(int)
    r = TPRAtFPR(fpr=fpr, per_domain=False)(scores, labels)
    return r.tpr_at_achieved_fpr


def mean(values) -> float:
    """The mean of the finite values (NaN when none: a meter with nothing to measure, e.g. no word swap)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if len(v) else float("nan")


def auroc(pos, neg) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(np.r_[np.ones(len(pos)), np.zeros(len(neg))], np.concatenate([pos, neg])))


def generate(gen, requests, label):
    from humanize.benchmarks.data.watermark import _cached_generate
    from humanize.models.loading import load_causal_lm

    load_causal_lm(gen.model)  # warm-up outside the timed block
    t = time.perf_counter()
    texts = _cached_generate(gen, requests, cache=True)
    seconds = time.perf_counter() - t
    tok = load_causal_lm(gen.model).tokenizer
    n_tok = sum(len(tok(x, add_special_tokens=False)["input_ids"]) for x in texts)
    cached = " (content cache: not a generation cost)" if seconds < 0.01 * len(texts) else ""
    print(f"  {label:<14} {len(texts)} texts, {n_tok / len(texts):.0f} tokens each, {seconds:7.1f} s, "
          f"{n_tok / max(seconds, 1e-9):7.1f} tokens/s{cached}")
    return texts


def detection_cost(det, texts, n=2000):
    batch = (texts * (n // len(texts) + 1))[:n]
    det.score(batch[:200])  # warm-up: tokenizer, green lists
    t = time.perf_counter()
    det.score(batch)
    return n / (time.perf_counter() - t)


N_BOOT = 2000


def _replicates(n: int, seed: int, n_boot: int | None = None) -> np.ndarray:
    """``(n_boot, n)`` bootstrap draw counts of ``n`` documents (the library's resampler, one stratum)."""
    from humanize.benchmarks.evaluation.bootstrap import stratified_counts

    return stratified_counts(np.random.default_rng(seed), np.zeros(n, dtype=int), n_boot or N_BOOT)


def _tpr_reps(pos, neg, pos_w, neg_w, fpr=0.01) -> np.ndarray:
    """TPR at ``fpr`` per replicate: each replicate's threshold recalibrated on its own resampled negatives
    (the (k+1)-th largest, RAID's empirical rule), a positive counted past it (strictly)."""
    from humanize.benchmarks.evaluation.bootstrap import weighted_thresholds

    t = weighted_thresholds(np.asarray(neg, float), neg_w, fpr)
    hit = np.asarray(pos, float)[None, :] > t[:, None]
    return (hit * pos_w).sum(axis=1) / pos_w.sum(axis=1)


def _ci(reps) -> tuple[float, float]:
    from humanize.benchmarks.evaluation.bootstrap import percentile_interval

    return percentile_interval(np.asarray(reps, float), 0.95)


def boot_tpr(pos, neg, seed=0) -> tuple[float, float, float]:
    """TPR at 1% FPR (threshold from ``neg``) and its 95% percentile interval, positives and negatives both
    resampled (the threshold's own uncertainty included)."""
    pos_w, neg_w = _replicates(len(pos), seed), _replicates(len(neg), seed + 1)
    return (tpr(pos, neg), *_ci(_tpr_reps(pos, neg, pos_w, neg_w)))


def boot_mean(values, seed=0) -> tuple[float, float, float]:
    v = np.asarray(values, float)
    w = _replicates(len(v), seed)
    return float(v.mean()), *_ci((w * v).sum(axis=1) / w.sum(axis=1))


def fmt_ci(value, lo, hi, digits=3) -> str:
    return f"{value:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


#: the attacks' θ as each reads it (the figures' x axis)
THETA = {"SIRA self-info": "share of words masked", "SIRA random": "share of words masked",
         "copy_paste": "machine share of the document", "watermark_stealing": "share of green-looking words swapped",
         "emoji_attack": "share of sentences rewritten"}


def theta_figure(rows, out_dir, tokens: int) -> str:
    """TPR at 1% FPR, mean z and meaning kept (MiniLM cosine) against θ, one line per attack, 95% intervals."""
    from pathlib import Path

    from humanize.benchmarks.reporting._figstyle import PAGE_WIDTH_IN, save, style

    with style() as plt:
        fig, axes = plt.subplots(1, 3, figsize=(PAGE_WIDTH_IN, 2.5), layout="constrained")
        cmap = plt.get_cmap("tab10")
        attacks = list(dict.fromkeys(r["attack"] for r in rows))
        for k, name in enumerate(attacks):
            rs = sorted((r for r in rows if r["attack"] == name), key=lambda r: r["theta"])
            x = np.array([r["theta"] for r in rs])
            for ax, key in zip(axes, ("tpr", "z", "cosine")):
                y = np.array([r[key] for r in rs], float)
                err = np.nan_to_num(np.vstack([y - [r[key + "_lo"] for r in rs], [r[key + "_hi"] for r in rs] - y]),
                                    nan=0.0).clip(min=0)
                ax.errorbar(x + (k - len(attacks) / 2) * 0.006, y, yerr=err, fmt="o-", ms=3, lw=0.9, capsize=1.5,
                            color=cmap(k), label=f"{name} (n={rs[0]['n']})")
        clean = rows[0]["clean_z"]
        axes[0].set_ylabel("TPR at 1% FPR (KGW z)")
        axes[0].set_ylim(-0.03, 1.03)
        axes[1].set_ylabel("mean KGW z")
        axes[1].axhline(clean, color="grey", lw=0.6, ls=":")
        axes[1].axhline(2.326, color="tab:red", lw=0.6, ls="--")
        axes[1].text(0.02, 2.326, "z = 2.326", color="tab:red", fontsize=6, va="bottom",
                     transform=axes[1].get_yaxis_transform())
        axes[1].text(0.02, clean, f"clean {clean:.1f}", color="grey", fontsize=6, va="bottom",
                     transform=axes[1].get_yaxis_transform())
        axes[2].set_ylabel("meaning kept (MiniLM cosine)")
        axes[2].set_ylim(-0.03, 1.03)
        for ax in axes:
            ax.set_xlabel("θ (each attack's own rate)")
            ax.set_xlim(0, 1.05)
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3, frameon=False,
                   fontsize=7)
        fig.suptitle(f"Scrubbing KGW on SmolLM2-135M, {tokens}-token texts (95% bootstrap intervals)", fontsize=8)
    return str(save(fig, Path(out_dir), "watermark_attacks_theta", formats=("png",))[0])


def tokens_figure(rows, out_dir) -> str:
    """TPR at 1% FPR against the number of tokens scored, per detector, against human and unwatermarked text."""
    from pathlib import Path

    from humanize.benchmarks.reporting._figstyle import COLUMN_WIDTH_IN, save, style

    with style() as plt:
        fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, 2.3), layout="constrained")
        cmap = plt.get_cmap("tab10")
        for k, (det, against) in enumerate(dict.fromkeys((r["detector"], r["against"]) for r in rows)):
            rs = [r for r in rows if r["detector"] == det and r["against"] == against]
            x = np.array([r["tokens"] for r in rs]) * (1 + 0.03 * (k - 1.5))
            y = np.array([r["tpr"] for r in rs])
            err = np.vstack([y - [r["tpr_lo"] for r in rs], [r["tpr_hi"] for r in rs] - y]).clip(min=0)
            ax.errorbar(x, y, yerr=err, fmt="o-" if against == "human" else "s--", ms=3, lw=0.9, capsize=1.5,
                        color=cmap(k // 2), label=f"{det} vs {against}")
        ax.set_xscale("log")
        ticks = sorted({r["tokens"] for r in rows})
        ax.set_xticks(ticks, labels=[str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("tokens scored (max_tokens)")
        ax.set_ylabel("TPR at 1% FPR")
        ax.set_ylim(-0.03, 1.03)
        ax.legend(fontsize=6, frameon=False, loc="lower right")
    return str(save(fig, Path(out_dir), "watermark_tokens_tpr", formats=("png",))[0])


def scrub(args, marked, human, kgw, model) -> list:
    """The scrubbing table: each attack over its θ grid on the first ``--attack-n`` KGW texts, TPR at 1% FPR
    (threshold from the human texts) and mean z with 95% bootstrap intervals, the runner's quality meters
    beside; SIRA against random selection paired on the same texts; the figures with ``--figures``."""
    from humanize import attacks, detectors
    from humanize.generation import WatermarkedChat
    from humanize.quality import QualityMeter

    kdet = detectors.KGWDetector.for_watermark(kgw)
    kh = kdet.score(human)
    half = len(marked) // 2
    n_att = min(args.attack_n or len(marked), len(marked))
    base = marked[:n_att]
    z0 = kdet.score(base)
    print(f"\nscrubbing KGW ({n_att} texts; TPR at 1% FPR with the threshold from the {len(kh)} human texts, "
          f"[95% bootstrap interval, {N_BOOT} replicates, humans and texts resampled]; clean: TPR "
          f"{fmt_ci(*boot_tpr(z0, kh))}, mean z {fmt_ci(*boot_mean(z0), digits=2)})")
    meters = list(args.meters) + (["entailment"] if args.entailment else [])
    meter = QualityMeter(meters=meters)  # the runner's meters: perplexity under SmolLM2 (also the generator)
    print(f"  quality beside each attack, as the runner's quality stage scores it (QualityMeter {meters}): perplexity "
          f"of the attacked text under SmolLM2-135M, MiniLM cosine and ROUGE-L to the original, word edit rate, "
          f"valid share of word swaps (WordNet)" + (", NLI entailment" if args.entailment else ""))
    if "perplexity" in meters:
        q0 = meter.score(base, base)
        print(f"  {'clean KGW texts':<40} ppl {mean(q0['perplexity_attacked']):6.1f}")
    rows, zs = [], {}

    def report(attack, theta, results, seconds, originals):
        texts = [r.text for r in results]
        z = kdet.score(texts)
        q = meter.score(results)
        t, tl, th = boot_tpr(z, kh)
        m, ml, mh = boot_mean(z)
        c, cl, ch = boot_mean(np.nan_to_num(np.asarray(q["cosine"], float), nan=0.0))
        row = {"attack": attack, "theta": theta, "n": len(texts), "tpr": t, "tpr_lo": tl, "tpr_hi": th, "z": m,
               "z_lo": ml, "z_hi": mh, "cosine": c, "cosine_lo": cl, "cosine_hi": ch,
               "ppl": mean(q["perplexity_attacked"]) if "perplexity_attacked" in q else float("nan"),
               "rouge_l": mean(q["rouge_l"]),
               "edits": mean(q["word_edit_rate"]), "valid": mean(q["valid_share"]), "clean_z": float(z0.mean()),
               "s_per_text": seconds / len(results)}
        extra = f"  entail {mean(q['entailment']):.3f}" if "entailment" in q else ""
        print(f"  {attack + f' θ={theta:g}':<40} TPR {fmt_ci(t, tl, th)}  mean z {fmt_ci(m, ml, mh, 2)}  "
              f"ppl {row['ppl']:6.1f}  cosine {c:.3f}  rouge_l {row['rouge_l']:.3f}  word edits {row['edits']:.3f}  "
              f"valid swaps {row['valid']:.2f}{extra}  {row['s_per_text']:6.2f} s/text", flush=True)
        rows.append(row)
        zs[(attack, theta)] = z
        if args.save:  # one JSON line per attack and θ: --replot redraws the table and figures from them
            with open(args.save, "a", encoding="utf-8") as f:
                f.write(json.dumps({**row, "z_texts": z.tolist(), "z_human": kh.tolist()}) + "\n")

    def timed(attack, texts):
        t = time.perf_counter()
        res = attack.batch(texts)
        return res, time.perf_counter() - t

    # SIRA against random first (the comparison; its summary and figure are printed before the rest),
    # then the stealing attack, copy-paste (whose long documents make the quality meters slow) and the emoji
    # attack (the slowest: it generates); each row is saved as it finishes (--save)
    if "sira" in args.attacks:
        attacks.get("self_info_rewrite", rate=0.5, seed=0).batch(base[:1])  # warm-up: both models loaded
        for rate in args.rates:
            for select, label in (("self_information", "SIRA self-info"), ("random", "SIRA random")):
                a = attacks.get("self_info_rewrite", rate=rate, select=select, seed=0)
                report(label, rate, *timed(a, base), base)
        sira_summary(rows, zs, kh, args.rates)
        if args.figures:
            print(f"  figure: {theta_figure(rows, args.figures, args.tokens)}")
    stolen = marked[: min(n_att, half)]
    for rate in args.rates if "stealing" in args.attacks else ():
        a = attacks.get("watermark_stealing", watermarked=marked[half:], rate=rate, seed=0)
        a.batch(stolen[:1])  # warm-up: the green-list statistics of the other half
        report("watermark_stealing", rate, *timed(a, stolen), stolen)
    for rate in args.rates if "copy_paste" in args.attacks else ():
        a = attacks.get("copy_paste", rate=rate, seed=0, human_texts=human[n_att // 2:] or human)
        report("copy_paste", rate, *timed(a, base), base)
    if args.emoji_n and "emoji" in args.attacks:
        gen = WatermarkedChat(model, watermark=kgw, temperature=0.7, top_p=0.95, max_new_tokens=160,
                              repetition_penalty=args.repetition_penalty, batch_size=16)
        few = base[: args.emoji_n]
        print(f"\n  (emoji attack through the KGW generator: {len(few)} texts, clean mean z "
              f"{kdet.score(few).mean():.2f}; at most 160 new tokens per rewritten sentence)")
        for rate in args.emoji_rates:
            a = attacks.get("emoji_attack", generator=gen, rate=rate, seed=0)
            report("emoji_attack", rate, *timed(a, few), few)
    if args.figures and rows:
        print(f"  figure: {theta_figure(rows, args.figures, args.tokens)}")
    return rows


def sira_summary(rows, zs, kh, rates) -> None:
    """SIRA minus random selection at each θ, paired on the same texts (the same bootstrap draws for both)."""
    print("\nSIRA (self-information) minus random selection at the same θ, paired on the same texts "
          "(95% bootstrap interval; negative: self-information scrubs more)")
    for rate in rates:
        if ("SIRA self-info", rate) not in zs or ("SIRA random", rate) not in zs:
            continue
        zi, zr = np.asarray(zs[("SIRA self-info", rate)]), np.asarray(zs[("SIRA random", rate)])
        w, neg_w = _replicates(len(zi), 7), _replicates(len(kh), 8)
        d_tpr = _tpr_reps(zi, kh, w, neg_w) - _tpr_reps(zr, kh, w, neg_w)
        d_z = (w * (zi - zr)).sum(axis=1) / w.sum(axis=1)
        ri = next(r for r in rows if r["attack"] == "SIRA self-info" and r["theta"] == rate)
        rr = next(r for r in rows if r["attack"] == "SIRA random" and r["theta"] == rate)
        print(f"  θ={rate:g}: ΔTPR {ri['tpr'] - rr['tpr']:+.3f} [{_ci(d_tpr)[0]:+.3f}, {_ci(d_tpr)[1]:+.3f}]   "
              f"Δ mean z {float(np.mean(zi - zr)):+.2f} [{_ci(d_z)[0]:+.2f}, {_ci(d_z)[1]:+.2f}]   "
              f"word edits {ri['edits']:.3f} vs {rr['edits']:.3f}   cosine {ri['cosine']:.3f} vs {rr['cosine']:.3f}")


def replot(args) -> None:
    """The scrubbing table, the SIRA-random comparison and the θ figure again, from a --save file."""
    rows, zs, kh = [], {}, None
    for path in args.replot:
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                zs[(r["attack"], r["theta"])], kh = np.asarray(r.pop("z_texts")), np.asarray(r.pop("z_human"))
                rows.append(r)
    print(f"scrubbing KGW, from {', '.join(args.replot)} (clean mean z {rows[0]['clean_z']:.2f})")
    for r in rows:
        label = f"{r['attack']} θ={r['theta']:g}"
        print(f"  {label:<40} "
              f"n={r['n']:<3} TPR {fmt_ci(r['tpr'], r['tpr_lo'], r['tpr_hi'])}  mean z "
              f"{fmt_ci(r['z'], r['z_lo'], r['z_hi'], 2)}  ppl {r['ppl']:6.1f}  cosine {r['cosine']:.3f}  rouge_l "
              f"{r['rouge_l']:.3f}  word edits {r['edits']:.3f}  valid swaps {r['valid']:.2f}  "
              f"{r['s_per_text']:6.2f} s/text")
    sira_summary(rows, zs, kh, sorted({r["theta"] for r in rows if r["attack"].startswith("SIRA")}))
    if args.figures:
        print(f"  figure: {theta_figure(rows, args.figures, args.tokens)}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--tokens", type=int, default=200)
    p.add_argument("--repetition-penalty", type=float, default=1.2,
                   help="Keskar et al.'s penalty on both sides (RAID's 1.2; 1.0: none, and forced-length text loops)")
    p.add_argument("--attack-n", type=int, default=None,
                   help="texts each attack runs on (default all; watermark_stealing: at most half, learning on the "
                        "other half)")
    p.add_argument("--rates", type=float, nargs="+", default=[0.1, 0.3, 0.5, 0.7],
                   help="the θ grid of every attack (copy_paste: the machine share; emoji: --emoji-rates)")
    p.add_argument("--emoji-n", type=int, default=4, help="texts the emoji attack runs on (0: skip it)")
    p.add_argument("--emoji-rates", type=float, nargs="+", default=[0.5, 1.0])
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap replicates of each interval")
    p.add_argument("--figures", default=None, help="folder for the PNG figures (TPR, mean z and meaning vs θ; "
                                                   "TPR vs tokens scored)")
    p.add_argument("--attacks", nargs="+", default=["sira", "stealing", "copy_paste", "emoji"],
                   choices=["sira", "stealing", "copy_paste", "emoji"], help="which scrubbing attacks run")
    p.add_argument("--meters", nargs="+", default=["perplexity", "cosine", "rouge_l", "edit_rate", "validity"],
                   help="the quality meters beside each attack (perplexity is the slow one: an LM pass per text)")
    p.add_argument("--save", default=None, help="append each attack's row and z-scores to this JSON-lines file")
    p.add_argument("--replot", nargs="+", default=None, help="print the scrubbing table and draw its figure from --save "
                                                             "files (nothing generated or attacked)")
    p.add_argument("--skip-synthid", action="store_true")
    p.add_argument("--cost-n", type=int, default=0, help="prompts of the side-by-side generation timing")
    p.add_argument("--cost-only", action="store_true", help="stop after the side-by-side generation timing")
    p.add_argument("--skip-attacks", action="store_true", help="stop after detection and its cost")
    p.add_argument("--attacks-only", action="store_true",
                   help="generate (or read from the cache) the KGW texts only and run the scrubbing table")
    p.add_argument("--entailment", action="store_true",
                   help="add the NLI entailment meter (its hub model, cross-encoder/nli-deberta-v3-base, must be cached)")
    args = p.parse_args(argv)
    if args.figures:
        from pathlib import Path

        Path(args.figures).mkdir(parents=True, exist_ok=True)
    global N_BOOT
    N_BOOT = args.n_boot
    if args.replot:
        return replot(args)

    from humanize import detectors
    from humanize.benchmarks.data import demo_prompts
    from humanize.benchmarks.data.watermark import CONTINUE, _request_seed
    from humanize.generation import Request, WatermarkedChat, chat
    from humanize.watermarks import KGW, SynthID

    prompts = demo_prompts(n=args.n, prefix_words=30, seed=0)
    human = list(prompts["human"])
    requests = [Request(chat(CONTINUE.format(prefix=x)), _request_seed(0, x), answer_start=x + " ")
                for x in prompts["prompt"]]
    model = "smollm2-135m-instruct"
    decoding = dict(temperature=0.7, top_p=0.95, max_new_tokens=args.tokens, min_new_tokens=args.tokens,
                    repetition_penalty=args.repetition_penalty)
    kgw, synthid = KGW(key=KEY, gamma=0.25, delta=2.0), SynthID(key=KEY, ngram_len=5, depth=30, top_k=40)
    print(f"generation: SmolLM2-135M-Instruct, {len(requests)} demo prompts, {args.tokens} new tokens, "
          f"T=0.7, top-p 0.95, repetition penalty {args.repetition_penalty:g}, batch 16")
    # KGW first: the attacks need only its texts and the human ones (--attacks-only)
    marked = generate(WatermarkedChat(model, watermark=kgw, **decoding), requests, "KGW")
    if args.attacks_only:
        return scrub(args, marked, human, kgw, model)
    plain = generate(WatermarkedChat(model, watermark=None, **decoding), requests, "unwatermarked")
    sid = None if args.skip_synthid else generate(WatermarkedChat(model, watermark=synthid, **decoding), requests,
                                                  "SynthID")

    if args.cost_n:
        print(f"\ngeneration cost side by side ({args.cost_n} prompts, no cache, order plain/KGW/SynthID twice; "
              f"seconds per run)")
        gens = {"unwatermarked": WatermarkedChat(model, watermark=None, **decoding),
                "KGW": WatermarkedChat(model, watermark=kgw, **decoding),
                "SynthID": WatermarkedChat(model, watermark=synthid, **decoding)}
        reqs = requests[: args.cost_n]
        times = {k: [] for k in gens}
        for _ in range(2):
            for label, gen in gens.items():
                t = time.perf_counter()
                gen.generate(reqs)
                times[label].append(time.perf_counter() - t)
        for label, ts in times.items():
            print(f"  {label:<14} {' '.join(f'{t:6.1f}' for t in ts)} s  (x{min(ts) / min(times['unwatermarked']):.2f} "
                  f"of unwatermarked, best of 2)")
        if args.cost_only:
            return

    print("\ndetection (TPR at 1% FPR: empirical threshold on the negatives | AUROC)")
    kdet = detectors.KGWDetector.for_watermark(kgw)
    kh, kp, km = kdet.score(human), kdet.score(plain), kdet.score(marked)
    print(f"  KGW z      vs human {tpr(km, kh):.3f} | {auroc(km, kh):.3f}   vs unwatermarked {tpr(km, kp):.3f} | "
          f"{auroc(km, kp):.3f}   analytic z > 2.326: TPR {np.mean(km > 2.326):.3f}, FPR human "
          f"{np.mean(kh > 2.326):.3f}, unwatermarked {np.mean(kp > 2.326):.3f}; median z {np.median(km):.2f}")
    once = detectors.KGWDetector.for_watermark(kgw, ignore_repeated_ngrams=True)
    oh, op, om = once.score(human), once.score(plain), once.score(marked)
    print(f"  KGW z, each (context, token) once (ignore_repeated_ngrams): vs human {tpr(om, oh):.3f} | "
          f"{auroc(om, oh):.3f}   vs unwatermarked {tpr(om, op):.3f} | {auroc(om, op):.3f}   analytic z > 2.326: "
          f"TPR {np.mean(om > 2.326):.3f}, FPR human {np.mean(oh > 2.326):.3f}, unwatermarked "
          f"{np.mean(op > 2.326):.3f}")
    dets = [("kgw", kdet, marked)]
    if sid is not None:
        sdet = detectors.SynthIDDetector.for_watermark(synthid)
        for agg in ("mean", "weighted_mean"):
            d = sdet.set_params(aggregation=agg)
            sh, sp, sm = d.score(human), d.score(plain), d.score(sid)
            print(f"  SynthID {agg:<13} vs human {tpr(sm, sh):.3f} | {auroc(sm, sh):.3f}   vs unwatermarked "
                  f"{tpr(sm, sp):.3f} | {auroc(sm, sp):.3f}; median {np.median(sm):.3f} (unwatermarked "
                  f"{np.median(sp):.3f})")
        dets.append(("synthid", sdet.set_params(aggregation="mean"), sid))
    print("\ndetection vs tokens scored (TPR at 1% FPR [95% bootstrap interval] vs human | vs unwatermarked; "
          "max_tokens=T)")
    token_rows = []
    for t in (5, 10, 25, 50, 100, 200):
        if t > args.tokens:
            break
        line = f"  T={t:<4}"
        for name, d, texts in dets:
            cut = d.set_params(max_tokens=t)
            pos, neg_h, neg_p = cut.score(texts), cut.score(human), cut.score(plain)
            for against, neg in (("human", neg_h), ("unwatermarked", neg_p)):
                token_rows.append({"detector": name, "tokens": t, "against": against,
                                   **dict(zip(("tpr", "tpr_lo", "tpr_hi"), boot_tpr(pos, neg)))})
            line += f"  {name} {fmt_ci(*boot_tpr(pos, neg_h))} | {fmt_ci(*boot_tpr(pos, neg_p))}"
            cut.set_params(max_tokens=None)
        print(line)
    udet = detectors.UnigramDetector(key=KEY)
    dets.append(("unigram", udet, marked))
    print("\ndetection cost (2 cores, 2,000 texts after a warm-up)")
    for name, d, texts in dets:
        print(f"  {name:<8} {detection_cost(d, texts):8.0f} texts/s")

    if args.figures and token_rows:
        print(f"  figure: {tokens_figure(token_rows, args.figures)}")
    if args.skip_attacks:
        return
    scrub(args, marked, human, kgw, model)

if __name__ == "__main__":
    main()
