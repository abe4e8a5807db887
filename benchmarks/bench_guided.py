"""Detector-guided paraphrase: token mode with incremental guide scoring vs re-scoring full texts; rerank's cost.

Issue #23's floor: in token mode with a causal-LM guide, scoring each step's candidates as short
extensions of the guide's key/value cache over the committed answer (``incremental=True``,
:mod:`humanize.detectors.lm_incremental`) is >= 5x faster than re-scoring every candidate's whole
text (``incremental=False``), on ~200-token outputs, with the SAME outputs (asserted).

Paraphraser and guide are different offline models: by default Qwen2.5-Coder-0.5B-Instruct
paraphrases (the library's default chat model) and Fast-DetectGPT on SmolLM2-135M-Instruct guides
(its own tokenizer: the guide re-tokenises every text). Each document (a demo machine text cut to
``--words`` words) is ONE chunk, so each output is one answer of up to ``--tokens`` tokens. Models
are loaded by a warm-up call that is not timed; the statistics cache is cleared before each run.

Prints, per mode: seconds, output tokens per second, guide queries (candidate texts scored) per
output token, guide forward passes and token positions through the guide's model (counted by a
forward hook), and the speed ratio; then rerank mode (sampled paraphrases, the guide's lowest kept)
for each ``--rerank`` n: seconds and guide queries per document.

The re-scoring reference costs about (candidates per step) x (answer length so far) guide positions
per step, quadratic in the answer's length; the incremental path one guide pass of a few positions per
step (one pass per model: the committed token rides in the candidates' pass). Measured on an idle 2-core
machine, one 150-word text, 200 output tokens, top-k 50 (the paper's), 33 candidates per step: 39.9 s
incremental vs 971.8 s re-scoring, 24.4x end to end, 43x on all but the paraphraser's forward passes,
identical outputs. glibc's heap is trimmed after every guide pass in both modes (see
``_trim_after_each_pass``).

    OMP_NUM_THREADS=2 python benchmarks/bench_guided.py --docs 1 --top-k 50 --rerank --replay-tokens 0
    python benchmarks/bench_guided.py --docs 3 --top-k 20 --rerank 4 8
"""
from __future__ import annotations

import argparse
import os
import time

from _demo_texts import demo_machine_texts


class _Hook:
    """Forward passes, input token positions and seconds inside a torch module's forward."""

    def __init__(self, module):
        self.passes = self.positions = 0
        self.seconds = 0.0
        self._t0 = None
        self._pre = module.register_forward_pre_hook(self._start)
        self._h = module.register_forward_hook(self._on, with_kwargs=True)

    def _start(self, module, args):
        self._t0 = time.perf_counter()

    def _on(self, module, args, kwargs, output):
        ids = kwargs.get("input_ids", args[0] if args else None)
        self.passes += 1
        self.positions += int(ids.numel())
        if self._t0 is not None:
            self.seconds += time.perf_counter() - self._t0
            self._t0 = None

    def remove(self):
        self._pre.remove()
        self._h.remove()


def _trim_after_each_pass(module):
    """glibc's ``malloc_trim(0)`` after every forward pass of ``module`` (a no-op elsewhere), in both modes.

    Re-scoring candidates that grow by a token each step allocates activations of a new size every pass,
    and glibc's heap fragments: the re-scoring reference reached 23 GB of RSS (killed by the kernel) on a
    200-token decode at top-k 50, against 3.3 GB with this trim, at the same speed (measured: 40 tokens,
    29.9 s without, 30.6 s with). The incremental path pays it too (7.8 s vs 8.6 s), so the ratio is, if
    anything, understated."""
    import ctypes

    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    return module.register_forward_hook(lambda *args: (trim(0), None)[1])


def _timed(attack, texts, guide_lm, para_lm=None):
    """Seconds, results, the guide's hook and (with ``para_lm``) the paraphraser's hook of one run."""
    from humanize.detectors import lm_stats

    lm_stats.clear_cache()
    hook = _Hook(guide_lm.model)
    para = _Hook(para_lm.model) if para_lm is not None else None
    try:
        t0 = time.perf_counter()
        results = attack.batch(texts)
        seconds = time.perf_counter() - t0
    finally:
        hook.remove()
        if para is not None:
            para.remove()
    if para is not None:
        hook.para = para
    return seconds, results, hook


def _replay(guide_lm, para_lm, text: str, n_tokens: int, k: int) -> float:
    """The guide's side of a token-mode decode, replayed on a fixed ``n_tokens``-token answer (the paraphraser's
    tokens of ``text``): at step i the answer so far is committed and k candidates are scored, the answer's own
    next token and k - 1 common tokens, once incrementally and once by re-scoring each candidate's whole text
    (both with the Fast-DetectGPT guide of the attack); the scores must agree. The paraphraser's decoding,
    the same in both modes, is left out, so the ratio is the guide scoring's at that length."""
    import numpy as np

    from humanize.detectors import Target, lm_stats
    from humanize.detectors.fast_detectgpt import FastDetectGPT

    tok = para_lm.tokenizer
    ids = tok(text, add_special_tokens=False)["input_ids"][:n_tokens]
    common = [i for i in tok(" the and of to a in", add_special_tokens=False)["input_ids"]][:k - 1]
    steps = [(tok.decode(ids[:i]), [tok.decode(ids[:i] + [c]) for c in [ids[i], *common]]) for i in range(len(ids))]
    full_guide = Target(FastDetectGPT(guide_lm))
    lm_stats.clear_cache()
    t0 = time.perf_counter()
    full = [np.asarray(full_guide.score(cands), dtype=float) for _, cands in steps]
    full_s = time.perf_counter() - t0
    scorer = Target(FastDetectGPT(guide_lm)).incremental_scorer()
    scorer.start([0])
    t0 = time.perf_counter()
    inc = []
    for partial, cands in steps:
        scorer.commit(0, partial)
        inc.append(np.asarray(scorer.score_candidates(0, cands), dtype=float))
    inc_s = time.perf_counter() - t0
    # relative to the score's size, absolute near 0 (a Fast-DetectGPT criterion crosses 0)
    worst = max(float(np.max(np.abs(a - b) / np.maximum(np.abs(a), 1.0))) for a, b in zip(full, inc))
    print(f"guide scoring replayed on a {len(ids)}-token answer, {k} candidates per step: full re-scoring "
          f"{full_s:.2f} s, incremental {inc_s:.2f} s, ratio {full_s / inc_s:.1f}x (floor 5x); largest score "
          f"difference {worst:.1e} (relative, absolute below 1); incremental counts {scorer.counts(0)}", flush=True)
    assert worst < 1e-4, f"incremental and full scores differ ({worst:.2e})"
    return full_s / inc_s


def main(argv=None) -> float:
    from humanize.attacks.generation.guided import AdversarialParaphrase
    from humanize.detectors import Target
    from humanize.detectors.fast_detectgpt import FastDetectGPT
    from humanize.generation.local import LocalChat
    from humanize.models import DEFAULT_CHAT_LM, load_causal_lm

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=2)
    ap.add_argument("--words", type=int, default=150, help="words of each demo text (one chunk each)")
    ap.add_argument("--tokens", type=int, default=200, help="max_new_tokens of each answer")
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--top-p", type=float, default=0.99)
    ap.add_argument("--paraphraser", default=DEFAULT_CHAT_LM)
    ap.add_argument("--guide-model", default="smollm2-135m-instruct")
    ap.add_argument("--rerank", type=int, nargs="*", default=[4, 8], help="n_candidates of rerank mode to time")
    ap.add_argument("--replay-tokens", type=int, default=200,
                    help="also replay the guide's scoring of a decode this long on a fixed answer (0: skip); the "
                         "guided decode itself may stop early (the guide can prefer ending the answer)")
    args = ap.parse_args(argv)
    texts = demo_machine_texts(args.docs, args.words)
    para_lm, guide_lm = load_causal_lm(args.paraphraser), load_causal_lm(args.guide_model)
    _trim_after_each_pass(guide_lm.model)
    chat = LocalChat(model=para_lm, max_new_tokens=args.tokens, temperature=0.7, batch_size=16)
    print(f"paraphraser {args.paraphraser}, guide fast_detectgpt on {args.guide_model}; {len(texts)} demo machine "
          f"texts of {args.words} words, one chunk each, up to {args.tokens} tokens per answer; top_k={args.top_k}, "
          f"top_p={args.top_p}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)

    def attack(**kw):
        return AdversarialParaphrase(paraphraser=chat, guide=Target(FastDetectGPT(guide_lm)), chunk_sentences=1000,
                                     top_k=args.top_k, top_p=args.top_p, **kw)

    AdversarialParaphrase(paraphraser=LocalChat(model=para_lm, max_new_tokens=4), guide=Target(FastDetectGPT(guide_lm)),
                          top_k=3).batch(texts[:1])  # warm-up (not timed)
    if args.replay_tokens:
        long_text = demo_machine_texts(1, max(args.words, args.replay_tokens))[0]
        _replay(guide_lm, para_lm, long_text, args.replay_tokens, args.top_k)
    print("token mode:", flush=True)
    rows = {}
    for label, inc in (("incremental", True), ("full re-scoring", False)):
        rows[label] = sec, results, hook = _timed(attack(mode="token", incremental=inc), texts, guide_lm, para_lm)
        out = sum(r.info["llm_tokens_out"] for r in results)
        queries = sum(r.info["guide_queries"] for r in results)
        print(f"  {label:>15}: {sec:8.2f} s  {out / sec:6.2f} output tokens/s  {out} output tokens  "
              f"{queries / out:5.2f} guide queries/output token  {hook.passes} guide forward passes  "
              f"{hook.positions} guide token positions ({hook.positions / out:.1f}/output token); inside the "
              f"paraphraser's forward {hook.para.seconds:.2f} s, the guide's {hook.seconds:.2f} s, the rest "
              f"(candidate texts, tokenizing, statistics) {sec - hook.para.seconds - hook.seconds:.2f} s", flush=True)
    same = [r.text for r in rows["incremental"][1]] == [r.text for r in rows["full re-scoring"][1]]
    assert same, "incremental and full re-scoring outputs differ"
    inc = rows["incremental"][1]
    print(f"  incremental info: candidates_per_step {[r.info['candidates_per_step'] for r in inc]}, "
          f"guide_rescored {[r.info['guide_rescored'] for r in inc]}")
    ratio = rows["full re-scoring"][0] / rows["incremental"][0]
    # the guided part: everything but the paraphraser's own forward passes (the same work in both modes)
    guided = [sec - hook.para.seconds for sec, _, hook in (rows["full re-scoring"], rows["incremental"])]
    print(f"  speed ratio end to end: {ratio:.1f}x (floor 5x); of the guided part (all but the paraphraser's "
          f"forward passes): {guided[0] / guided[1]:.1f}x; same outputs: {same}")
    for n in args.rerank:
        sec, results, hook = _timed(attack(mode="rerank", n_candidates=n, seed=0), texts, guide_lm)
        per = sum(r.info["guide_queries"] for r in results) / len(results)
        llm = sum(r.info["llm_queries"] for r in results) / len(results)
        out = sum(r.info["llm_tokens_out"] for r in results) / len(results)
        print(f"rerank n_candidates={n}: {sec:8.2f} s ({sec / len(results):.2f} s/document)  {per:.1f} guide "
              f"queries/document  {llm:.1f} LLM queries/document  {out:.0f} LLM tokens out/document  "
              f"{hook.passes} guide forward passes", flush=True)
    return ratio


if __name__ == "__main__":
    main()
