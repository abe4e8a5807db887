"""Each attack changes a fraction θ of its candidate sites (RAID Table 11 defaults)."""

import pytest

from humanize import attacks
from humanize.attacks._resources import homoglyph_table
from humanize.attacks._text import is_invisible

RAID_DEFAULTS = {
    "alternative_spelling": 1.0,
    "article_deletion": 0.5,
    "homoglyph": 1.0,
    "insert_paragraphs": 0.5,
    "misspelling": 0.2,
    "number_swap": 0.5,
    "upper_lower": 0.05,
    "whitespace": 0.2,
    "zero_width_space": 1.0,
}


def _changed_sites(result):
    """Sites changed: one per edit, except whitespace where each extra space is one draw."""
    if result.attack == "whitespace":
        return sum(len(e.replacement) for e in result.edits)
    return len(result.edits)


@pytest.mark.parametrize("name", sorted(RAID_DEFAULTS))
def test_defaults_are_raids_theta(name):
    assert attacks.get(name).rate == RAID_DEFAULTS[name]


#: Non-default settings that change which sites an attack has.
VARIANTS = {
    "article_deletion[extended]": ("article_deletion", {"scope": "extended"}),
    "zero_width_space[grapheme]": ("zero_width_space", {"boundary": "grapheme"}),
}


@pytest.mark.parametrize("name", sorted(RAID_DEFAULTS) + sorted(VARIANTS))
@pytest.mark.parametrize("rate", ["default", 0.3])
def test_fraction_of_candidate_sites_changed_is_theta(name, rate, demo_machine_texts):
    texts = demo_machine_texts[:300]
    name, params = VARIANTS.get(name, (name, {}))
    theta = RAID_DEFAULTS[name] if rate == "default" else rate
    sites = sum(_changed_sites(r) for r in attacks.get(name, rate=1.0, seed=0, **params).batch(texts))
    changed = sum(_changed_sites(r) for r in attacks.get(name, rate=theta, seed=1, **params).batch(texts))
    assert sites > 50, f"too few candidate sites for {name} in the sample: {sites}"
    fraction = changed / sites
    # binomial-like sampling error on a few hundred documents: allow 3 standard errors + rounding slack
    tolerance = 3 * (theta * (1 - theta) / sites) ** 0.5 + 0.01
    assert abs(fraction - theta) <= tolerance, (name, fraction, theta, sites)


def test_homoglyph_at_full_rate_changes_every_mappable_character(demo_machine_texts):
    table = homoglyph_table()
    for text in demo_machine_texts[:20]:
        r = attacks.Homoglyph().apply(text)
        assert r.n_edits == sum(ch in table for ch in text)
        assert not any(ch in table for ch in r.text)


def test_zero_width_space_at_full_rate_fills_every_position_next_to_a_visible_character(demo_machine_texts):
    for text in demo_machine_texts[:20] + ["a  b\n\nc", " x ", "\u200bq"]:
        r = attacks.ZeroWidthSpace().apply(text)
        expected = [
            p for p in range(len(text) + 1)
            if (p > 0 and not is_invisible(text[p - 1])) or (p < len(text) and not is_invisible(text[p]))
        ]
        assert [e.start for e in r.edits] == expected
        assert r.text.replace("\u200b", "") == text.replace("\u200b", "")


def test_small_rates_still_touch_short_texts_on_average():
    """Stochastic rounding: θ·N = 0.5 sites gives one edit about half of the time (RAID's floor gives none)."""
    text = " ".join(["word"] * 10)  # 10 words, θ = 0.05 -> 0.5 expected flips
    flips = [attacks.UpperLower(seed=s).apply(text).n_edits for s in range(400)]
    assert set(flips) <= {0, 1}
    assert 0.4 < sum(flips) / len(flips) < 0.6
