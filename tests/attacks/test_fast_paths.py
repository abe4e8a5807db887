"""The fast site finders equal the readable patterns that define them."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from humanize.attacks import article_deletion, upper_lower, whitespace, zero_width_space
from humanize.attacks._text import WORD_RE

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
    assert zero_width_space._insert_at_every_site(text, "\u200b") == zero_width_space._SITE_RE.sub("\u200b", text)


@given(texts)
@settings(max_examples=400, deadline=None)
def test_upper_lower_sites_equal_word_starts_with_a_case_swap(text):
    expected = [m.start() for m in WORD_RE.finditer(text) if upper_lower._swapped(text[m.start()]) is not None]
    assert upper_lower._sites(text) == expected
