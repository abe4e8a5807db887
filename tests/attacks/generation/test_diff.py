"""The rewrite diff (issue #22 §1): exact for any pair of texts, the old edits on short texts, and work that
grows linearly with the document (counted: the tokens handed to the inner SequenceMatcher)."""
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from humanize.attacks.base import apply_edits, check_edits
from humanize.attacks.generation import diff

from ...text_strategies import any_text, blank, mixed_scripts

_settings = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _edited(draw_ops, text: str) -> str:
    """``text`` with a few word-level insertions, deletions and replacements (hypothesis-drawn)."""
    parts = diff.tokens(text)
    for where, op, new in draw_ops:
        if not parts and op != "insert":
            continue
        k = where % (len(parts) + 1)
        if op == "insert":
            parts.insert(k, new)
        elif k < len(parts):
            if op == "delete":
                del parts[k]
            else:
                parts[k] = new
    return "".join(parts)


_new = st.sampled_from(["x", " ", "😀", "\n\n", "the", "Привет", ".", "\u200b", ""])
_ops = st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(["insert", "delete", "replace"]), _new),
                max_size=6)
_pairs = st.one_of(
    st.tuples(any_text, any_text),
    st.tuples(st.one_of(mixed_scripts, blank), _ops).map(lambda p: (p[0], _edited(p[1], p[0]))),
    st.tuples(mixed_scripts, mixed_scripts).map(lambda p: (p[0] + p[1], p[1] + p[0])),
)


def _check(a: str, b: str) -> list:
    edits = diff.word_edits(a, b)
    check_edits(a, edits)
    assert apply_edits(a, edits) == b
    return edits


@_settings
@given(_pairs)
def test_edits_are_exact_for_any_pair_and_short_texts_keep_the_old_edits(pair):
    a, b = pair
    edits = _check(a, b)
    assert edits == diff._reference_word_edits(a, b)  # short texts: the whole-text alignment, as before


@_settings
@given(_pairs, st.sampled_from([2, 5, 12]), st.sampled_from([0, 1, 8]))
def test_edits_are_exact_through_anchors_and_the_cap(pair, window, depth):
    # a tiny window and depth send short texts through the anchoring, the recursion and the one-edit fallback
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(diff, "WINDOW", window)
        mp.setattr(diff, "MAX_DEPTH", depth)
        a, b = pair
        _check(a, b)
        _check(b, a)


def _document(texts, words: int) -> str:
    out, n = [], 0
    while n < words:
        for t in texts:
            ws = t.split()[: words - n]
            out.append(" ".join(ws))
            n += len(ws)
            if n >= words:
                break
    return "\n\n".join(out)


def _scatter(text: str, changes: int, seed: int = 0) -> str:
    """``changes`` single-word replacements at evenly spread places."""
    parts = diff.tokens(text)
    words = [k for k, t in enumerate(parts) if t[0].isalpha()]
    rng = random.Random(seed)
    for n in range(changes):
        lo, hi = len(words) * n // changes, len(words) * (n + 1) // changes
        parts[words[rng.randrange(lo, hi)]] = "zzz"
    return "".join(parts)


def test_the_inner_diff_sees_work_proportional_to_the_changes_not_the_length(demo_machine_texts, monkeypatch):
    seen = []
    inner = diff._inner

    def spy(a, b):
        seen.append((len(a), len(b)))
        return inner(a, b)

    monkeypatch.setattr(diff, "_inner", spy)
    work = {}
    for words in (10_000, 50_000):
        seen.clear()
        a = _document(demo_machine_texts, words)
        b = _scatter(a, 40)
        _check(a, b)
        assert seen and all(x <= diff.WINDOW and y <= diff.WINDOW for x, y in seen)
        work[words] = sum(x * y for x, y in seen)  # SequenceMatcher's worst case: comparisons
        assert sum(x + y for x, y in seen) <= 40 * 2 * diff.WINDOW
    # five times the text, the same 40 changes: the inner diff's work does not grow with the length
    assert work[50_000] <= 2 * work[10_000]


def test_unrelated_long_texts_cost_at_most_window_times_length(demo_machine_texts, monkeypatch):
    seen = []
    inner = diff._inner
    monkeypatch.setattr(diff, "_inner", lambda a, b: seen.append((len(a), len(b))) or inner(a, b))
    a = _document(demo_machine_texts[:200], 6000)
    b = _document(demo_machine_texts[400:], 6000)
    n = len(diff.tokens(a)) + len(diff.tokens(b))
    _check(a, b)
    assert all(x <= diff.WINDOW and y <= diff.WINDOW for x, y in seen)
    assert sum(x * y for x, y in seen) <= diff.WINDOW * n  # the linear worst case the docstring states


def test_a_long_rewrite_with_scattered_changes_gets_minimal_local_edits(demo_machine_texts):
    a = _document(demo_machine_texts, 5_000)
    b = _scatter(a, 25, seed=3)
    edits = _check(a, b)
    # each change is one word replaced: one edit each, never a whole-region replacement
    assert len(edits) == 25 and all(len(e.replacement) == 3 for e in edits)
