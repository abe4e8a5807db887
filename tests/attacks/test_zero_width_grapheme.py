"""ZeroWidthSpace(boundary="grapheme"): U+200B only between extended grapheme clusters."""

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from humanize import attacks
from humanize.attacks import apply_edits
from humanize.attacks.zero_width_space import _grapheme_sites

ZW = "\u200b"

#: Each is one extended grapheme cluster that code-point insertion splits.
CLUSTERS = {
    "combining accent": "e\u0301",  # e + COMBINING ACUTE ACCENT
    "ZWJ emoji": "\U0001f469\u200d\U0001f469\u200d\U0001f467",  # family: woman, woman, girl
    "flag": "\U0001f1eb\U0001f1f7",  # regional indicators F R
    "skin tone": "\U0001f44d\U0001f3fd",  # thumbs up + medium skin tone
    "Devanagari vowel sign": "\u0915\u093f",  # KA + VOWEL SIGN I
    "CRLF": "\r\n",
}


def _clusters(text):
    return regex.findall(r"\X", text)


@pytest.mark.parametrize("kind", sorted(CLUSTERS))
def test_clusters_stay_whole(kind):
    cluster = CLUSTERS[kind]
    text = f"a {cluster} b{cluster}"
    out = attacks.ZeroWidthSpace(boundary="grapheme").apply(text)
    assert cluster in out.text  # never split
    assert out.text.replace(ZW, "") == text
    # RAID's default splits it (except CRLF, whose two characters are invisible)
    if kind != "CRLF":
        assert cluster not in attacks.ZeroWidthSpace().apply(text).text


def test_full_rate_marks_every_cluster_boundary_next_to_a_visible_cluster():
    text = "na\u0308ive \U0001f44d\U0001f3fd  ok\n\n\u0915\u093f"
    out = attacks.ZeroWidthSpace(boundary="grapheme").apply(text)
    assert out.text == (
        f"{ZW}n{ZW}a\u0308{ZW}i{ZW}v{ZW}e{ZW} {ZW}\U0001f44d\U0001f3fd{ZW}  {ZW}o{ZW}k{ZW}\n\n{ZW}\u0915\u093f{ZW}"
    )
    assert [e.start for e in out.edits] == [0, 1, 3, 4, 5, 6, 7, 9, 11, 12, 13, 15, 17]
    assert apply_edits(text, out.edits) == out.text


def test_a_combining_mark_on_a_space_is_a_visible_cluster():
    # " \u0301" is one cluster that renders an accent: its boundaries are sites
    assert _grapheme_sites("a \u0301b") == [0, 1, 3, 4]
    assert _grapheme_sites("") == [] and _grapheme_sites(" \n ") == []


def test_default_is_raids_code_point_boundary():
    z = attacks.ZeroWidthSpace()
    assert z.boundary == "codepoint"
    assert z.apply("e\u0301").text == f"{ZW}e{ZW}\u0301{ZW}"


@pytest.mark.parametrize("bad", ["graphemes", "Grapheme", "", None, 1])
def test_unknown_boundary_is_a_clear_error(bad):
    with pytest.raises(ValueError, match=r"ZeroWidthSpace: boundary must be one of 'codepoint', 'grapheme', got"):
        attacks.ZeroWidthSpace(boundary=bad)
    with pytest.raises(ValueError, match="boundary must be one of"):
        attacks.ZeroWidthSpace().set_params(boundary=bad)


def test_rate_is_the_fraction_of_cluster_boundaries_and_deterministic():
    text = " ".join(["caf\u00e9 cafe\u0301 \U0001f44d\U0001f3fd \U0001f1eb\U0001f1f7 \u0915\u093f"] * 40)
    sites = _grapheme_sites(text)
    half = attacks.ZeroWidthSpace(rate=0.5, seed=3, boundary="grapheme")
    r = half.apply(text)
    assert {e.start for e in r.edits} <= set(sites)
    assert abs(r.n_edits / len(sites) - 0.5) < 0.1
    assert half.apply(text) == r  # same seed, same output
    assert attacks.ZeroWidthSpace(rate=0.5, seed=4, boundary="grapheme").apply(text).text != r.text
    assert [c for c in _clusters(r.text) if c != ZW] == _clusters(text)


_graphemes = st.sampled_from([*CLUSTERS.values(), "a", "Z", " ", "\n", "\u200b", "\u00a0", "\u0301", "日", "\ud800"])


@given(st.lists(_graphemes, max_size=30).map("".join), st.sampled_from([0.3, 1.0]), st.integers(0, 5))
@settings(max_examples=300, deadline=None)
def test_no_insertion_inside_a_cluster(text, rate, seed):
    z = attacks.ZeroWidthSpace(rate=rate, seed=seed, boundary="grapheme")
    r = z.apply(text)
    bounds = {0}
    for m in regex.finditer(r"\X", text):
        bounds.add(m.end())
    assert all(e.start in bounds and e.replacement == ZW for e in r.edits)
    assert apply_edits(text, r.edits) == r.text
    assert z.batch([text, "x"])[0] == r
