"""Demo machine texts of a fixed length, shared by the generation benchmarks (bench_toblend, bench_guided)."""
from __future__ import annotations


def demo_machine_texts(n: int, words: int) -> list[str]:
    """The first ``n`` demo machine texts with at least ``words`` words, each cut to its first ``words`` (0: whole)."""
    from humanize.benchmarks.data import load_demo

    gen = load_demo().query("label == 'machine'")["generation"].tolist()
    long_enough = [t for t in gen if len(t.split()) >= words]
    if len(long_enough) < n:
        raise SystemExit(f"only {len(long_enough)} demo machine texts have {words} words; lower --words or --docs")
    return [" ".join(t.split()[:words]) if words else t for t in long_enough[:n]]
