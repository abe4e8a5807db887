"""chain_edits: edits over the original from a chain of steps, checked against applying the steps one by one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from humanize.attacks import apply_edits, check_edits
from humanize.attacks.pipeline import compose_edits
from humanize.defenses._edits import chain_edits


@st.composite
def _edits(draw, text):
    """Sorted, non-overlapping edits over ``text`` (deletions, insertions, replacements)."""
    n = len(text)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=8)))
    edits, prev_end, prev_insert = [], 0, -1
    for a, b in zip(cuts[::2], cuts[1::2]):
        if a < prev_end or (a == b and a == prev_insert):
            continue
        edits.append((a, b, draw(st.text(alphabet="xyz\u200b", max_size=3))))
        prev_end, prev_insert = b, a if a == b else -1
    return edits


@st.composite
def _chains(draw):
    text = draw(st.text(alphabet="abc \u200b", max_size=20))
    stages, texts = [], [text]
    for _ in range(draw(st.integers(1, 4))):
        edits = draw(_edits(texts[-1]))
        check_edits(texts[-1], edits)
        stages.append(edits)
        texts.append(apply_edits(texts[-1], edits))
    return texts, stages


@settings(max_examples=150, deadline=None)
@given(_chains())
def test_chained_edits_rebuild_the_final_text_like_compose_edits(chain):
    texts, stages = chain
    original, final = texts[0], texts[-1]
    edits = chain_edits(original, final, stages)
    check_edits(original, edits)
    assert apply_edits(original, edits) == final
    composed = stages[0]
    for s in stages[1:]:
        composed = compose_edits(original, composed, s)
    assert apply_edits(original, composed) == final
    assert all(a < b or r for a, b, r in edits)  # no empty edit


def test_untouched_text_and_touching_edits():
    assert chain_edits("abc", "abc", [[]]) == []
    # delete "b", then write "X" where it was: one edit over the original
    assert chain_edits("abc", "aXc", [[(1, 2, "")], [(1, 1, "X")]]) == [(1, 2, "X")]
