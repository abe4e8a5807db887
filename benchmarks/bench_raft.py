"""RAFT's detector scoring: a position's k candidates in ONE batched detector call vs one call each.

Issue 10's floor: scoring the candidates of a position in one batched call of
the target detector is >= 5x faster than scoring them one by one, same
detector (log-likelihood under SmolLM2-135M), same texts (demo machine texts).

Both runs execute the same search (:class:`DetectorGreedy`, ``batch=True`` vs
``batch=False``) on the SAME candidates, computed once per document before
timing, with the detector's statistics cache cleared before each run, and must
keep the same swaps (asserted). Two candidate sets:

- ``k15``: 15 candidates at every position (the 15 nearest GloVe neighbours,
  standing in for a capable LLM's list of k = 15), the case the floor is about;
- ``llm``: what the offline LLM (Qwen2.5-Coder-0.5B-Instruct, the default since issue #19;
  SmolLM2-135M-Instruct before) actually proposes
  (POS filter off; its lists are short, so each call holds fewer texts).

Then RAFT at its defaults on ``--raft-docs`` texts: seconds and detector
queries per document (model loading excluded: one warm-up document first).

    python benchmarks/bench_raft.py                        # 5 docs, first 120 words each
    python benchmarks/bench_raft.py --docs 10 --words 0    # whole texts
"""
from __future__ import annotations

import argparse
import statistics
import time


def _timed_select(search, doc_cands):
    """Run ``search`` over prepared ``(doc, cands, order)`` triples; seconds, kept swaps, detector calls/queries."""
    from humanize.attacks.wordsub import Doc
    from humanize.detectors.lm_stats import clear_cache

    clear_cache()  # neither run may reuse the other's per-text statistics
    kept, calls, queries = [], 0, 0
    t0 = time.perf_counter()
    for text, cands, order in doc_cands:
        doc = Doc.parse(text)
        chosen = search.select(doc, cands, len(order), [], order=order)
        kept.append(sorted((c.word, c.text) for c in chosen))
        calls += doc.cost["detector_calls"]
        queries += doc.cost["detector_queries"]
    return time.perf_counter() - t0, kept, calls, queries


def _prepare(attack, texts):
    """Each text's ranked words and candidates (the LLM / neighbour work, outside the timed part)."""
    from humanize.attacks.wordsub import Doc

    out = []
    for t in texts:
        doc = Doc.parse(t)
        parts = attack._parts()
        eligible = attack.eligible(doc)
        k = max(1, round(attack.rate * len(eligible)))
        order = parts.ranker.rank(doc, eligible)[:k]
        _, cands = attack.candidates_for(doc, order)
        out.append((t, cands, order))
    return out


def compare(label, doc_cands, target, floor=None) -> bool:
    from humanize.attacks.wordsub import DetectorGreedy

    fast, slow = DetectorGreedy(target, batch=True), DetectorGreedy(target, batch=False)
    fast.ready().score(["warm-up text for the detector."])
    s_slow, kept_slow, c_slow, q_slow = _timed_select(slow, doc_cands)
    s_fast, kept_fast, c_fast, q_fast = _timed_select(fast, doc_cands)
    assert kept_fast == kept_slow, f"{label}: batched and one-by-one scoring kept different swaps"
    assert q_fast == q_slow
    n = len(doc_cands)
    per_call = q_fast / max(1, c_fast)
    ratio = s_slow / s_fast
    print(f"[{label}] {n} docs, {q_fast / n:.1f} detector queries/doc, {per_call:.1f} texts per batched call")
    print(f"  batched   : {n / s_fast:8.3f} docs/s  {s_fast / n:7.2f} s/doc  {c_fast / n:6.1f} calls/doc")
    print(f"  one by one: {n / s_slow:8.3f} docs/s  {s_slow / n:7.2f} s/doc  {c_slow / n:6.1f} calls/doc")
    print(f"  ratio {ratio:.2f}x; same swaps kept: yes")
    if floor is None:
        return True
    ok = ratio >= floor
    print(f"[{'PASS' if ok else 'FAIL'}] batched detector scoring >= {floor:g}x one by one ({label}): {ratio:.2f}x")
    return ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5, help="demo machine texts (default 5)")
    parser.add_argument("--words", type=int, default=120, help="cut texts after W words (0: whole; default 120)")
    parser.add_argument("--raft-docs", type=int, default=5, help="texts for RAFT at its defaults (default 5)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    args = parser.parse_args(argv)

    import torch

    from humanize.attacks.wordsub import (RAFT, NotStopword, ProposalOrder, VectorNeighbours, WordSubstitution)
    from humanize.benchmarks.data import load_demo

    if args.threads:
        torch.set_num_threads(args.threads)
    texts = load_demo().query("label == 'machine'")["generation"].tolist()
    if args.words:
        texts = [" ".join(t.split(" ")[: args.words]) for t in texts]
    warm, pool = texts[0], texts[1:]
    target = "log_likelihood"
    raft = RAFT()
    ranker = raft._parts().ranker
    k15 = WordSubstitution([VectorNeighbours(k=15)], [NotStopword()], ProposalOrder(), rate=raft.rate,
                           seed=raft.seed, ranker=ranker)
    llm = RAFT(pos=False)
    print(f"torch threads: {torch.get_num_threads()}; target {target} (SmolLM2-135M); "
          f"{args.docs} demo machine texts, {statistics.mean(len(t.split()) for t in pool[: args.docs]):.0f} words")
    ok = compare("k15", _prepare(k15, pool[: args.docs]), target, floor=5.0)
    compare("llm", _prepare(llm, pool[: args.docs]), target)

    raft.apply(warm)  # loads every model; not timed
    docs = pool[: args.raft_docs]
    t0 = time.perf_counter()
    res = raft.batch(docs)
    sec = time.perf_counter() - t0
    print(f"[raft defaults] {len(docs)} docs: {sec / len(docs):.2f} s/doc, "
          f"{statistics.mean(r.info.get('detector_queries', 0) for r in res):.1f} detector queries/doc, "
          f"{statistics.mean(r.n_edits for r in res):.1f} swaps/doc, "
          f"{statistics.mean(r.info['target_swaps'] for r in res):.1f} words tried/doc, "
          f"{statistics.mean(r.info.get('llm_tokens_out', 0) for r in res):.0f} LLM tokens out/doc")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
