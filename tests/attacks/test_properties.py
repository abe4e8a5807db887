"""Properties every attack must have: exact edits, determinism, any text is valid input."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from humanize import attacks
from humanize.attacks import apply_edits, check_edits

from .conftest import RULE_ATTACKS, TRICKY_TEXTS

# Text that exercises the attacks' candidate sites: words, articles, numbers,
# US spellings, misspellable words, sentence ends, whitespace runs and any unicode.
_words = st.sampled_from(
    ["the", "The", "a", "an", "An", "color", "Favorite", "ORGANIZE", "definitely", "acheive", "receive",
     "3.14", "2024", "٣٤", "cat.", "Dog!", "why?", "Привет", "日本語。", "😀", "“hi”", "--", "—", "x"]
)
_sep = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", "", ". ", " \u200b"])
structured_text = st.lists(st.tuples(_words, _sep), max_size=40).map(lambda xs: "".join(w + s for w, s in xs))
any_text = st.one_of(structured_text, st.text(max_size=200))

_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", RULE_ATTACKS)
@pytest.mark.parametrize("rate", [None, 0.0, 0.37, 1.0])
@given(text=any_text, seed=st.integers(0, 2**31))
@_settings
def test_edits_are_exact_valid_and_deterministic(name, rate, text, seed):
    params = {"seed": seed} if rate is None else {"seed": seed, "rate": rate}
    a = attacks.get(name, **params)
    r = a.apply(text)
    check_edits(text, r.edits)
    assert apply_edits(text, r.edits) == r.text
    assert a(text) == r.text
    assert attacks.get(name, **params).apply(text).text == r.text  # a fresh object, same seed
    if rate == 0.0:
        assert r.text == text


@pytest.mark.parametrize("name", RULE_ATTACKS)
@pytest.mark.parametrize("text", TRICKY_TEXTS, ids=range(len(TRICKY_TEXTS)))
def test_tricky_texts_are_valid_inputs(name, text):
    r = attacks.get(name, seed=1).apply(text)
    check_edits(text, r.edits)
    assert apply_edits(text, r.edits) == r.text


@pytest.mark.parametrize("name", RULE_ATTACKS)
def test_already_attacked_text_can_be_attacked_again(name, demo_machine_texts):
    a = attacks.get(name, seed=5)
    once = a(demo_machine_texts[0])
    r = a.apply(once)
    assert apply_edits(once, r.edits) == r.text


@given(
    texts=st.lists(structured_text, min_size=1, max_size=6),
    seed=st.integers(0, 1000),
    data=st.data(),
)
@_settings
def test_pipeline_edits_are_exact_over_the_original(texts, seed, data):
    names = data.draw(st.lists(st.sampled_from(RULE_ATTACKS), min_size=1, max_size=4))
    rates = data.draw(st.lists(st.sampled_from([0.3, 1.0]), min_size=len(names), max_size=len(names)))
    pipe = attacks.Pipeline([attacks.get(n, seed=seed + i, rate=r) for i, (n, r) in enumerate(zip(names, rates))])
    for text in texts:
        r = pipe.apply(text)
        check_edits(text, r.edits)
        assert apply_edits(text, r.edits) == r.text
        # the pipeline equals applying its attacks one after another
        expected = text
        for a in pipe.attacks:
            expected = a(expected)
        assert r.text == expected == pipe(text)


_edit_lists = st.data()


def _random_edits(data, text):
    """Sorted, valid random edits over ``text``."""
    n = len(text)
    points = sorted(data.draw(st.lists(st.integers(0, n), max_size=12)))
    edits, pos, last_insert = [], 0, -1
    for a, b in zip(points[::2], points[1::2]):
        if a < pos:
            continue
        if a == b and a == last_insert:
            continue
        edits.append((a, b, data.draw(st.text(alphabet="XYZ\u200b ", max_size=3))))
        if a == b:
            last_insert = a
        pos = b
    return edits


@given(text=st.text(alphabet="abcdef ", max_size=30), data=st.data())
@settings(max_examples=300, deadline=None)
def test_compose_edits_matches_sequential_application(text, data):
    first = _random_edits(data, text)
    mid = apply_edits(text, first)
    second = _random_edits(data, mid)
    composed = attacks.compose_edits(text, first, second)
    check_edits(text, composed)
    assert apply_edits(text, composed) == apply_edits(mid, second)


@pytest.mark.parametrize("scope", ["raid", "extended"])
@pytest.mark.parametrize("rate", [0.5, 0.37, 1.0])
@given(text=any_text, seed=st.integers(0, 2**31))
@_settings
def test_article_deletion_fast_path_equals_sites_then_choose(scope, rate, text, seed):
    a = attacks.ArticleDeletion(rate=rate, seed=seed, scope=scope)
    r = a.apply(text)
    sites = a.sites(text)
    expected = a.choose(text, sites, a.random(text)) if sites else []
    assert r.edits == expected
    check_edits(text, r.edits)
    assert apply_edits(text, r.edits) == r.text
