"""The key claim of issue #12 §3: the normalizer exactly undoes RAID's homoglyph and zero-width-space attacks.

"Exactly" in its strongest true form: with only the homoglyph and invisible steps on,
the defended attacked text IS the original, on every demo text (human and machine);
with every step on, it is the defended original (the demo texts hold curly quotes,
dashes and "…" that the other steps rewrite either way).
"""

from __future__ import annotations

import pytest

from humanize import attacks
from humanize.defenses import Normalize, get

UNDO = Normalize(homoglyphs=True, invisible=True, whitespace=False, quotes=False, dashes=False, nfkc=False)


@pytest.fixture(scope="module")
def normalized(demo_texts):
    full = get("normalize")
    return [full(t) for t in demo_texts]


def test_the_undo_steps_leave_every_demo_text_as_it_is(demo_texts):
    assert all(UNDO(t) == t for t in demo_texts)


@pytest.mark.parametrize("attack", [
    attacks.get("homoglyph"),  # RAID's θ = 1.0: every mappable letter
    attacks.get("zero_width_space"),  # RAID's θ = 1.0: around every visible character
    attacks.get("homoglyph") | attacks.get("zero_width_space"),
], ids=["homoglyph", "zero_width_space", "both"])
def test_every_demo_text_comes_back_exactly(attack, demo_texts, normalized):
    attacked = [attack(t) for t in demo_texts]
    assert all(a != t for a, t in zip(attacked, demo_texts))  # the attack did change every text
    restored = [UNDO(a) for a in attacked]
    bad = [i for i, (r, t) in enumerate(zip(restored, demo_texts)) if r != t]
    assert not bad, f"{len(bad)} demo texts not restored, first: {demo_texts[bad[0]][:80]!r}"
    full = get("normalize")
    assert [full(a) for a in attacked] == normalized


@pytest.mark.parametrize("name, params", [
    ("homoglyph", dict(rate=0.5, seed=3)),
    ("homoglyph", dict(rate=0.1, seed=7)),
    ("zero_width_space", dict(rate=0.3, seed=1)),
    ("zero_width_space", dict(rate=1.0, boundary="grapheme")),
])
def test_other_rates_and_seeds_come_back_exactly(name, params, demo_texts):
    attack = attacks.get(name, **params)
    texts = demo_texts[::6]  # both labels, every domain
    assert all(UNDO(attack(t)) == t for t in texts)


def test_the_whitespace_attack_is_undone_up_to_normalisation(demo_texts, normalized):
    ws = attacks.get("whitespace", rate=0.5, seed=2)
    attacked = [ws(t) for t in demo_texts[::3]]
    assert [get("normalize")(a) for a in attacked] == normalized[::3]
    # the whitespace step is what does it
    without = Normalize(whitespace=False)
    assert sum(without(a) != n for a, n in zip(attacked, normalized[::3])) > 0.9 * len(attacked)


def test_the_upper_lower_attack_is_not_undone(demo_texts, normalized):
    """Case is legitimate text: the normalizer does not fold it (a documented limit)."""
    ul = attacks.get("upper_lower", rate=0.2, seed=0)
    texts = demo_texts[::9]
    assert all(get("normalize")(ul(t)) != n for t, n in zip(texts, normalized[::9]))


def test_defended_results_carry_exact_edits_over_the_attacked_text(demo_texts):
    attacked = (attacks.get("homoglyph") | attacks.get("zero_width_space")).batch(demo_texts[:40])
    for r in get("normalize").batch([a.text for a in attacked]):
        assert attacks.apply_edits(r.original, r.edits) == r.text
        attacks.check_edits(r.original, r.edits)
        assert r.attack == "normalize" and r.params == get("normalize").get_params()
