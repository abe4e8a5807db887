"""The scoring model's speed in float32, bfloat16 and dynamic int8, next to the machine's matrix products.

Side by side in one run (the variants interleaved, ``--repeats`` rounds, medians and spreads), on demo texts
cut to ``--words`` words and scored the way the metric detectors score them (:class:`LMStatistics`, no cache):

1. seconds per text in each precision and the ratio to ``float32-before``: float32 with the vocabulary
   statistics computed the way they were before issue #38 (a full-batch log-softmax,
   ``lm_stats._own_stats_softmax``), i.e. today's scoring before this change; ``--no-baseline`` skips it;
2. the model's achieved GFLOP/s (its FLOPs counted by ``torch.utils.flop_counter`` on the same batches)
   next to a plain matrix product of the model's own shapes (tokens x hidden by hidden x intermediate) in
   the same precision: the model's fraction of what the hardware does on its largest product;
3. where the time goes: ``torch.profiler``'s self CPU time by op over one pass of the texts, per precision,
   and the share of the float32 statistics over the vocabulary that follow the model (log-probability,
   rank, entropy over 49k tokens per position); ``--no-profile`` skips it.

Absolute times depend on the machine and its load; read the ratios. The flags of the CPU that decide
whether bfloat16 has native instructions (``avx512_bf16``, ``amx_bf16``) are printed first. On a machine
shared with other work, ``--threads 1`` gives the steadier per-core figures: two OpenMP threads that are
descheduled in turn wait for each other at every operation, which hits many small operations (the
element-wise ones, the chunked statistics) much harder than a few large matrix products.

    python benchmarks/bench_scoring.py --texts 8 --words 200 --repeats 3
    python benchmarks/bench_scoring.py --texts 4 --repeats 3 --no-int8 --no-profile --threads 1
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


MATMUL_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::matmul", "aten::linear", "quantized::linear_dynamic",
              "aten::_scaled_dot_product_flash_attention_for_cpu"}


def _median_spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} [{min(values):.3f}-{max(values):.3f}]"


BASELINE = "float32-before"


def _softmax_stats(logits, target):
    """The statistics as computed before issue #38: the whole text's logits to float32, then a log-softmax."""
    import humanize.detectors.lm_stats as lm_stats

    return lm_stats._own_stats_softmax(logits.float(), target)


def _score_seconds(lm, texts, max_tokens: int, before: bool = False) -> float:
    import humanize.detectors.lm_stats as lm_stats

    stats = lm_stats.LMStatistics(lm, max_tokens=max_tokens, cache=False)
    fused = lm_stats._own_stats
    if before:
        lm_stats._own_stats = _softmax_stats  # the old computation, for the before/after ratio only
    try:
        start = time.perf_counter()
        stats.compute(texts)
        return time.perf_counter() - start
    finally:
        lm_stats._own_stats = fused


def _model_flops(lm, texts, max_tokens: int) -> float:
    """FLOPs of one scoring pass over ``texts`` (forward only), counted by torch's FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        _score_seconds(lm, texts, max_tokens)
    return float(counter.get_total_flops())


def _gemm_gflops(m: int, k: int, n: int, dtype, repeats: int) -> list[float]:
    import torch

    a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
    torch.matmul(a, b)  # warm-up
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(5):
            torch.matmul(a, b)
        out.append(2 * m * k * n * 5 / (time.perf_counter() - start) / 1e9)
    return out


VOCAB = "vocabulary statistics"


def _profile(lm, texts, max_tokens: int, top: int, before: bool = False) -> tuple[list[tuple[str, float]], float]:
    """The ``top`` ops by share of self CPU time over one pass, and the share of the float32 statistics over
    the vocabulary that follow the model (log-prob, rank, entropy: ``lm_stats._own_stats``)."""
    import humanize.detectors.lm_stats as lm_stats
    from torch.profiler import ProfilerActivity, profile, record_function

    inner = _softmax_stats if before else lm_stats._own_stats
    fused = lm_stats._own_stats

    def labelled(*args, **kwargs):
        with record_function(VOCAB):
            return inner(*args, **kwargs)

    lm_stats._own_stats = labelled  # a label for the profiler only; the computation is the same
    try:
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            stats = lm_stats.LMStatistics(lm, max_tokens=max_tokens, cache=False)
            stats.compute(texts)
    finally:
        lm_stats._own_stats = fused
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events) or 1.0
    vocab = sum(e.cpu_time_total for e in events if e.key == VOCAB) / total
    rows = sorted(((e.key, e.self_cpu_time_total / total) for e in events if e.key != VOCAB), key=lambda r: -r[1])
    return rows[:top], vocab


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--texts", type=int, default=8, help="demo machine texts [8]")
    ap.add_argument("--words", type=int, default=200, help="words per text [200]")
    ap.add_argument("--max-tokens", type=int, default=512, help="tokens scored per text, as the detectors [512]")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved rounds [3]")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    ap.add_argument("--no-int8", action="store_true", help="skip the dynamic int8 variant")
    ap.add_argument("--no-baseline", action="store_true", help=f"skip {BASELINE} (the statistics before issue #38)")
    ap.add_argument("--no-profile", action="store_true", help="skip the per-op profiles")
    ap.add_argument("--top", type=int, default=10, help="ops listed per precision in the profile [10]")
    args = ap.parse_args(argv)

    import torch

    from _demo_texts import demo_machine_texts
    from humanize.models import load_causal_lm
    from humanize.models.precision import cpu_bf16_flags, quantize_dynamic_int8

    if args.threads:
        torch.set_num_threads(args.threads)
    texts = demo_machine_texts(args.texts, args.words)
    print(f"CPU flags: {', '.join(cpu_bf16_flags()) or 'none of avx512_bf16/amx_bf16'}; torch "
          f"{torch.__version__}, {torch.get_num_threads()} threads, CPU capability "
          f"{torch.backends.cpu.get_cpu_capability()}; load average {os.getloadavg()[0]:.2f}")
    fp32 = load_causal_lm(dtype="float32")
    variants = {BASELINE: fp32} if not args.no_baseline else {}
    variants.update({"float32": fp32, "bfloat16": load_causal_lm(dtype="bfloat16")})
    if not args.no_int8:
        variants["int8"] = quantize_dynamic_int8(fp32)
    for name, lm in variants.items():  # warm-up (one-time kernel choice, allocator)
        _score_seconds(lm, texts[:1], args.max_tokens, before=name == BASELINE)
    tokens = sum(len(lm_ids) for lm_ids in variants["float32"].tokenizer(texts)["input_ids"])
    flops = _model_flops(variants["float32"], texts, args.max_tokens)

    cfg = variants["float32"].model.config
    shape = (tokens // len(texts), cfg.hidden_size, cfg.intermediate_size)
    names = list(variants)
    seconds = {n: [] for n in names}
    gemm = {"float32": [], "bfloat16": []}
    for r in range(args.repeats):  # interleaved, the order rotated each round
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            seconds[name].append(_score_seconds(variants[name], texts, args.max_tokens, before=name == BASELINE)
                                 / len(texts))
        for dt in gemm:
            gemm[dt].extend(_gemm_gflops(*shape, getattr(torch, dt), 1))
    print(f"\n{len(texts)} texts, {tokens / len(texts):.0f} tokens each on average; one pass "
          f"{flops / len(texts) / 1e9:.1f} GFLOP per text; GEMM shape {shape[0]}x{shape[1]} @ {shape[1]}x{shape[2]}")
    print(f"load average after: {os.getloadavg()[0]:.2f} (the machine is shared: read the ratios)\n")
    reference = BASELINE if BASELINE in seconds else "float32"
    base = statistics.median(seconds[reference])
    print(f"{'variant':<15} {'s/text median [min-max]':<28} {'texts/s':>8} {'vs ' + reference:>19} "
          f"{'model GFLOP/s':>14} {'GEMM GFLOP/s':>13} {'model/GEMM':>11}")
    for name in names:
        med = statistics.median(seconds[name])
        model_rate = flops / len(texts) / med / 1e9
        dt = "float32" if name == BASELINE else name
        g = statistics.median(gemm[dt]) if dt in gemm else float("nan")
        print(f"{name:<15} {_median_spread(seconds[name]):<28} {1 / med:>8.3f} {base / med:>18.2f}x "
              f"{model_rate:>14.1f} {g:>13.1f} {model_rate / g:>10.0%}")
    for name in ([] if args.no_profile else names):
        ops, vocab = _profile(variants[name], texts, args.max_tokens, args.top, before=name == BASELINE)
        matmul = sum(share for op, share in ops if op in MATMUL_OPS)
        print(f"\nprofile, {name}: share of self CPU time by op (matrix products {matmul:.1%}; of all the time, "
              f"{vocab:.1%} in the {VOCAB} after the model)")
        for op, share in ops:
            print(f"  {share:>6.1%}  {op}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
