"""Test helper: the sentences an attack changed, rebuilt from its edits (for recomputing QPA's constraints)."""
import blingfire

from humanize.attacks import apply_edits


def changed_sentences(r):
    """``[(original sentence, changed sentence)]`` for every sentence of ``r.original`` an edit falls in."""
    _, spans = blingfire.text_to_sentences_and_offsets(r.original)
    out = []
    for s, e in spans:
        inside = [(a - s, b - s, t) for a, b, t in r.edits if s <= a and b <= e]
        if inside:
            out.append((r.original[s:e], apply_edits(r.original[s:e], inside)))
    return out
