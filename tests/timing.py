"""Timing for the tests that check cost stays linear in text length (ratios measured side by side)."""

import gc
import time


def best_time(fn, repeats=2):
    """Best wall time of ``fn``, with the cyclic GC paused: a full collection walks every object of
    the test process (torch, transformers...), which would time the process, not the code under test."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
    finally:
        gc.enable()
    return best
