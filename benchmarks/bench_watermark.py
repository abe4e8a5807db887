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
  tokens scored (25, 50, 100, 200);
- detection cost: texts per second of each detector on 2,000 texts after a warm-up;
- scrubbing the KGW texts: SIRA (``self_info_rewrite``, Gemma-3-270M scores self-information,
  SmolLM2 refills) against random replacement at the same edit rate, copy-paste dilution over θ,
  the stealing attack (green lists learned from the other half of the watermarked texts) and, on
  ``--emoji-n`` texts, the emoji attack run through the watermarked generator itself; for each, TPR at
  1% FPR (threshold from the human texts), mean z, and the runner's quality meters beside them
  (perplexity, MiniLM cosine, ROUGE-L, word edit rate, WordNet validity of swaps; ``--entailment``: NLI).

    OMP_NUM_THREADS=1 nice .venv/bin/python benchmarks/bench_watermark.py --n 100 --tokens 200
"""
from __future__ import annotations

import argparse
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


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--tokens", type=int, default=200)
    p.add_argument("--repetition-penalty", type=float, default=1.2,
                   help="Keskar et al.'s penalty on both sides (RAID's 1.2; 1.0: none, and forced-length text loops)")
    p.add_argument("--attack-n", type=int, default=None, help="texts the SIRA/random comparison runs on")
    p.add_argument("--rates", type=float, nargs="+", default=[0.1, 0.2, 0.3])
    p.add_argument("--emoji-n", type=int, default=10)
    p.add_argument("--skip-synthid", action="store_true")
    p.add_argument("--cost-n", type=int, default=0, help="prompts of the side-by-side generation timing")
    p.add_argument("--cost-only", action="store_true", help="stop after the side-by-side generation timing")
    p.add_argument("--skip-attacks", action="store_true", help="stop after detection and its cost")
    p.add_argument("--entailment", action="store_true",
                   help="add the NLI entailment meter (its hub model, cross-encoder/nli-deberta-v3-base, must be cached)")
    args = p.parse_args(argv)

    from humanize import attacks, detectors
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
    plain = generate(WatermarkedChat(model, watermark=None, **decoding), requests, "unwatermarked")
    marked = generate(WatermarkedChat(model, watermark=kgw, **decoding), requests, "KGW")
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
    print("\ndetection vs tokens scored (TPR at 1% FPR vs human | vs unwatermarked; max_tokens=T)")
    for t in (25, 50, 100, 200):
        if t > args.tokens:
            break
        line = f"  T={t:<4}"
        for name, d, texts in dets:
            cut = d.set_params(max_tokens=t)
            pos, neg_h, neg_p = cut.score(texts), cut.score(human), cut.score(plain)
            line += f"  {name} {tpr(pos, neg_h):.3f} | {tpr(pos, neg_p):.3f}"
            cut.set_params(max_tokens=None)
        print(line)
    udet = detectors.UnigramDetector(key=KEY)
    dets.append(("unigram", udet, marked))
    print("\ndetection cost (2 cores, 2,000 texts after a warm-up)")
    for name, d, texts in dets:
        print(f"  {name:<8} {detection_cost(d, texts):8.0f} texts/s")

    if args.skip_attacks:
        return
    n_att = args.attack_n or len(marked)
    base = marked[:n_att]
    z0 = kdet.score(base)
    print(f"\nscrubbing KGW ({n_att} texts; TPR at 1% FPR with the threshold from the {len(kh)} human texts; "
          f"clean: TPR {tpr(z0, kh):.3f}, mean z {z0.mean():.2f})")

    from humanize.quality import QualityMeter

    meters = ["perplexity", "cosine", "rouge_l", "edit_rate", "validity"] + (["entailment"] if args.entailment else [])
    meter = QualityMeter(meters=meters)  # the runner's meters: perplexity under SmolLM2 (also the generator)
    print(f"  quality beside each attack, as the runner's quality stage scores it (QualityMeter {meters}): perplexity "
          f"of the attacked text under SmolLM2-135M (clean KGW text: see the first line), MiniLM cosine and ROUGE-L "
          f"to the original, word edit rate, valid share of word swaps (WordNet)"
          + (", NLI entailment" if args.entailment else ""))
    q0 = meter.score(base, base)
    print(f"  {'clean KGW texts':<34} ppl {mean(q0['perplexity_attacked']):6.1f}")

    def report(label, results, t):
        texts = [r.text for r in results]
        z = kdet.score(texts)
        q = meter.score(results)
        extra = f"  entail {mean(q['entailment']):.3f}" if "entailment" in q else ""
        print(f"  {label:<34} TPR {tpr(z, kh):.3f}  mean z {z.mean():6.2f}  ppl {mean(q['perplexity_attacked']):6.1f}"
              f"  cosine {mean(q['cosine']):.3f}  rouge_l {mean(q['rouge_l']):.3f}  word edits "
              f"{mean(q['word_edit_rate']):.3f}  valid swaps {mean(q['valid_share']):.2f}{extra}  "
              f"{t / len(results):6.2f} s/text")

    for rate in args.rates:
        for select in ("self_information", "random"):
            a = attacks.get("self_info_rewrite", rate=rate, select=select, seed=0)
            a.batch(base[:1])  # warm-up: both models loaded
            t = time.perf_counter()
            res = a.batch(base)
            report(f"SIRA {select} θ={rate}", res, time.perf_counter() - t)
    for rate in (0.5, 0.25, 0.1):
        a = attacks.get("copy_paste", rate=rate, seed=0, human_texts=human[n_att // 2:] or human)
        t = time.perf_counter()
        report(f"copy_paste θ={rate} (machine share)", a.batch(base), time.perf_counter() - t)
    half = len(marked) // 2
    for rate in (0.5, 1.0):
        a = attacks.get("watermark_stealing", watermarked=marked[half:], rate=rate, seed=0)
        a.batch(base[:1])
        t = time.perf_counter()
        res = a.batch(marked[:half])
        report(f"watermark_stealing θ={rate} (held-out half)", res, time.perf_counter() - t)
    if args.emoji_n:
        gen = WatermarkedChat(model, watermark=kgw, temperature=0.7, top_p=0.95, max_new_tokens=2 * args.tokens,
                              repetition_penalty=args.repetition_penalty)
        gen.set_params(batch_size=args.emoji_n)
        a = attacks.get("emoji_attack", generator=gen, rate=1.0, seed=0)
        t = time.perf_counter()
        res = a.batch(base[: args.emoji_n])
        z_before = kdet.score(base[: args.emoji_n])
        print(f"  (emoji attack: {args.emoji_n} texts, clean mean z {z_before.mean():.2f})")
        report("emoji_attack θ=1.0 (KGW generator)", res, time.perf_counter() - t)


if __name__ == "__main__":
    main()
