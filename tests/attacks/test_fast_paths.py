"""The fast site finders equal the readable patterns that define them."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from humanize.attacks import article_deletion, upper_lower, whitespace, zero_width_space
from humanize.attacks import apply_edits
from humanize.text import WORD_RE

_pieces = st.sampled_from(
    ["the", "The", "THE", "a", "A", "an", "An", "AN", " ", "  ", "\t", "\n", "\u200b", "\u00a0", ".", "!", "'",
     "’", "-", "x", "é", "ß", "”", ")", "_", "1", "İ", "ǅ", "日本", "😀", "\u2028"]
)
texts = st.one_of(st.lists(_pieces, max_size=30).map("".join), st.text(max_size=60))


@given(texts)
@settings(max_examples=400, deadline=None)
def test_article_sites_equal_the_article_patterns(text):
    lower = [(*m.span(), False) for m in article_deletion._LOWER_RE.finditer(text)]
    opening = [(*m.span(), True) for m in article_deletion._OPENING_RE.finditer(text)]
    assert article_deletion._extended_sites(text) == sorted(lower + opening)


@given(texts)
@settings(max_examples=400, deadline=None)
def test_raid_article_sites_are_articles_between_two_spaces(text):
    expected = [(m.start(), m.end() + 1) for m in re.finditer(r"(?<= )(?:the|an|a)(?= )", text)]
    assert article_deletion._raid_sites(text) == expected


@given(texts)
@settings(max_examples=400, deadline=None)
def test_whitespace_gaps_equal_the_gap_pattern(text):
    assert whitespace._gaps(text) == [m.start() for m in whitespace._GAP_RE.finditer(text)]


@given(texts)
@settings(max_examples=400, deadline=None)
def test_zero_width_sites_equal_the_site_pattern(text):
    expected = [m.start() for m in zero_width_space._SITE_RE.finditer(text)]
    assert zero_width_space._sites(text) == expected


@given(texts)
@settings(max_examples=400, deadline=None)
def test_upper_lower_sites_equal_word_starts_with_a_case_swap(text):
    expected = [m.start() for m in WORD_RE.finditer(text) if upper_lower._swapped(text[m.start()]) is not None]
    assert upper_lower._sites(text) == expected


# Texts shaped like the fast paths' cases: words and single spaces, line breaks, paragraph breaks,
# runs, other whitespace, non-ASCII letters and spaces, lone surrogates.
_words = st.sampled_from(["word", "a", "The", "é", "日本", "😀", "x1", "\ud800", "“q”", "-"])
_seps = st.sampled_from([" ", " ", " ", "\n", "\n\n", "  ", " \n", "\t", "\r\n", "\u00a0", "\u2028", "\u200b", "\x1c"])
shaped = st.lists(st.tuples(_words, _seps), max_size=25).map(lambda ps: "".join(w + s for w, s in ps)).flatmap(
    lambda t: st.sampled_from([t, t.strip(), " " + t, t.rstrip()])
)


@given(st.one_of(shaped, texts), st.sampled_from([0.05, 0.2, 0.5, 1.0]), st.integers(0, 3))
@settings(max_examples=500, deadline=None)
def test_whitespace_fast_run_equals_the_generic_path(text, rate, seed):
    attack = whitespace.Whitespace(rate=rate, seed=seed)
    edits = attack.propose(text)  # SiteAttack: sites() then choose()
    result = attack.apply(text)
    assert result.edits == edits
    assert result.text == apply_edits(text, edits)


@given(st.one_of(shaped, texts))
@settings(max_examples=500, deadline=None)
def test_zero_width_full_build_equals_the_site_pattern(text):
    for char in ("\u200b", "\u2060", "\U000e0020", "\ud800", "x", "<\u200b>"):
        assert zero_width_space._insert_at_every_site(text, char) == zero_width_space._SITE_RE.sub(char, text)
