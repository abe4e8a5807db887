"""Counted work, for the tests that check a cost stays linear in the input's size.

A wall-clock ratio depends on what else the machine runs (a 1 ms run against a 49 ms one on a
loaded CI box); these counts do not. :func:`count_work` runs a function under the interpreter's
trace and profile hooks and counts, deterministically:

* ``lines``: Python lines executed (a loop inside a loop over the sites shows here),
* ``calls``: Python and C function calls,
* ``touched``: the size of the object each scanning C method is called on (``text.split()``,
  ``text.replace(...)``, ``text.encode()``, ``pieces.insert(0, ...)``, ``sites.remove(x)``: a method
  re-reading the whole text or list at every site shows here; see :data:`SCANS`),
* ``allocated``: for each executed line, the most memory it allocated at once (tracemalloc's
  peak within the line): ``out = out[:s] + r + out[e:]`` at every site, or shifting a growing
  integer at every draw, allocates a copy of the whole each time and shows here.

:func:`assert_linear` measures a function on inputs of size n, 2n and 8n (one block repeated) and
asserts that a block added between 2n and 8n costs no more than one added between n and 2n: the
cost per block of linear work is constant, that of quadratic work grows with the input. The
timing figures themselves are in benchmarks/bench_scaling.py.
"""

from __future__ import annotations

import sys
import tracemalloc

KINDS = ("lines", "calls", "touched", "allocated")

#: Methods of str, bytes and int whose cost is the size of the object they are called on
#: (``startswith``, ``join``... are not: they do not read the whole). ``find``, ``count`` and ``index``
#: are left out: they take a range the hook cannot see (``text.count("\\n", a, b)`` reads b - a
#: characters), so a ``text.find(x)`` from 0 at every site is not counted here.
SCANS = frozenset("""
    replace split rsplit splitlines partition rpartition translate encode decode lower upper casefold
    title capitalize swapcase strip lstrip rstrip expandtabs isalpha isdigit isalnum isspace isupper
    islower isascii isnumeric isdecimal isprintable istitle zfill center ljust rjust to_bytes hex
""".split())
#: Methods of list and tuple that read or move the whole (``append`` and ``pop()`` do not).
SEQUENCE_SCANS = frozenset("index count insert remove copy sort reverse".split())


def count_work(fn) -> dict:
    """The work ``fn()`` does, as counts (see the module's documentation)."""
    counts = dict.fromkeys(KINDS, 0)
    state = {"current": 0}
    get_traced, reset_peak = tracemalloc.get_traced_memory, tracemalloc.reset_peak

    def sample():
        # How much memory was allocated at once since the last event: tracemalloc's peak over the
        # size then. Read at every line and every C call, so that a slice, a concatenation or a
        # shift made at each pass of a one-line comprehension counts at each pass.
        current, peak = get_traced()
        counts["allocated"] += peak - state["current"]
        reset_peak()  # the peak is now the current size
        state["current"] = current

    def local(frame, event, arg):
        if event == "line":
            counts["lines"] += 1
            sample()
        return local

    def trace(frame, event, arg):
        counts["calls"] += 1
        return local

    def profile(frame, event, arg):
        if event == "c_call":
            sample()
            counts["calls"] += 1
            owner = getattr(arg, "__self__", None)
            if isinstance(owner, (str, bytes, bytearray)):
                if arg.__name__ in SCANS:
                    counts["touched"] += len(owner)
            elif isinstance(owner, (list, tuple)):
                if arg.__name__ in SEQUENCE_SCANS:
                    counts["touched"] += len(owner)
            elif type(owner) is int and arg.__name__ in SCANS:
                counts["touched"] += owner.bit_length() // 8
        elif event == "c_return":
            sample()

    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    old_trace, old_profile = sys.gettrace(), sys.getprofile()
    reset_peak()
    state["current"] = get_traced()[0]
    sys.setprofile(profile)
    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(old_trace)
        sys.setprofile(old_profile)
        if started:
            tracemalloc.stop()
    return counts


def assert_linear(run, sizes=(1, 2, 8), tolerance=0.25, floor=100):
    """``run(k)`` does the work for an input k times the base size (the same block repeated):
    assert the work each added block costs does not grow with the input.

    Linear work is a + b·k: each block added between sizes 2 and 8 costs what one added between 1
    and 2 did (within ``tolerance``, and ``floor`` counts per block for the random draws that vary
    with the text); quadratic work a + b·k + c·k² costs b + 10c a block there against b + 3c.
    ``run(sizes[0])`` is run once untraced first, so that caches filled on a first call (compiled
    patterns, lru_cache, lazy tables) are not counted as work that grows. Returns the counts per size.
    """
    run(sizes[0])
    measured = {k: count_work(lambda k=k: run(k)) for k in sizes}
    for kind in KINDS:
        per_block = [(measured[b][kind] - measured[a][kind]) / (b - a) for a, b in zip(sizes, sizes[1:])]
        for (a, b), cost in zip(zip(sizes[1:], sizes[2:]), per_block[1:]):
            assert cost <= (1 + tolerance) * per_block[0] + floor, (
                f"{kind}: a block added between {a}x and {b}x the input costs {cost:.0f}, "
                f"{cost / max(per_block[0], 1):.2f}x one added between {sizes[0]}x and {sizes[1]}x "
                f"({per_block[0]:.0f}): the work grows faster than the input: {measured}")
    return measured
