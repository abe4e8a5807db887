"""What each rule-based attack does, on hand-checkable examples (RAID §3.6, App. E.4)."""

import numpy as np
import pytest

from humanize import attacks
from humanize.attacks import Edit
from humanize.attacks.misspelling import word_logprobs


def test_homoglyph_replaces_with_table_lookalikes_only():
    r = attacks.Homoglyph(rate=1.0, seed=0).apply("ABC xyz 123")
    assert r.text[0] in "АΑ" and r.text[1] in "ВΒ" and r.text[2] == "С"
    assert r.text[3:] == " хуz 123"  # x, y mapped, z lowercase has no homoglyph
    assert all(len(e.replacement) == 1 for e in r.edits)


def test_zero_width_space_partial_rate_inserts_only_zwsp():
    r = attacks.ZeroWidthSpace(rate=0.5, seed=3).apply("hello world")
    assert r.text.replace("\u200b", "") == "hello world"
    assert all(e.start == e.end and e.replacement == "\u200b" for e in r.edits)
    assert 0 < r.n_edits < 12


def test_whitespace_adds_spaces_only_inside_existing_gaps():
    text = "one two  three\nfour"
    r = attacks.Whitespace(rate=1.0, seed=0).apply(text)
    assert r.text.split() == text.split()
    assert sum(len(e.replacement) for e in r.edits) == 3  # three gaps, θ = 1 -> three extra spaces
    assert {e.start for e in r.edits} <= {3, 7, 14}
    assert r.text.startswith("one") and r.text.endswith("four")


def test_upper_lower_flips_first_letters():
    r = attacks.UpperLower(rate=1.0).apply("Hello big World 42 ßtraße")
    assert r.text == "hello Big world 42 ßtraße"  # ß has no one-letter upper case: not a candidate


def test_article_deletion_raid_scope_deletes_articles_between_spaces():
    text = "The cat saw a dog and an owl. The end: a a b.\nthe line (a note) an\tapple."
    r = attacks.ArticleDeletion(rate=1.0).apply(text)
    # RAID's sites only: lowercase, a space on each side; capitals, line starts,
    # "(a" and a tab after the article are left.
    assert r.text == "The cat saw dog and owl. The end: b.\nthe line (a note) an\tapple."
    assert [tuple(e) for e in r.edits] == [(12, 14, ""), (22, 25, ""), (39, 41, ""), (41, 43, "")]


def test_article_deletion_extended_scope_removes_article_and_its_space_and_recapitalises():
    r = attacks.ArticleDeletion(rate=1.0, scope="extended").apply(
        "The cat saw a dog and an owl. The end. Plan A works, a-priori."
    )
    assert r.text == "Cat saw dog and owl. End. Plan A works, a-priori."
    assert attacks.ArticleDeletion(rate=1.0, scope="extended")("(a note)\nthe\tline") == "(note)\nline"


@pytest.mark.parametrize("scope", ["raid", "extended"])
def test_article_deletion_leaves_words_containing_articles(scope):
    text = "Theatre, another, then, Anna, a.m., the\nend"  # an article before a line break stays: no line merging
    assert attacks.ArticleDeletion(rate=1.0, scope=scope)(text) == text


def test_article_deletion_rejects_an_unknown_scope():
    with pytest.raises(ValueError, match="scope must be one of 'raid', 'extended', got 'all'"):
        attacks.ArticleDeletion(scope="all")


def test_number_swap_changes_digits_to_different_digits_of_the_same_script():
    text = "Pi is 3.14159 and ٣٤٥ rounds; version 2.0."
    r = attacks.NumberSwap(rate=1.0, seed=4).apply(text)
    assert len(r.text) == len(text)
    for e in r.edits:
        old, new = text[e.start], e.replacement
        assert old.isdigit() and new.isdigit() and old != new
        assert (old in "0123456789") == (new in "0123456789")
    assert r.n_edits == sum(ch.isdigit() for ch in text)


def test_number_swap_draws_every_other_digit_uniformly():
    r = attacks.NumberSwap(rate=1.0, seed=0).apply("5" * 9000)
    counts = np.bincount([int(e.replacement) for e in r.edits], minlength=10)
    assert counts[5] == 0
    assert counts[[0, 1, 2, 3, 4, 6, 7, 8, 9]].min() > 850


def test_insert_paragraphs_keeps_all_original_whitespace():
    text = "First one.  Second one!\tThird one?\n\nFourth one. Fifth."
    r = attacks.InsertParagraphs(rate=1.0).apply(text)
    assert all(e.replacement == "\n\n" and e.start == e.end for e in r.edits)
    starts = [e.start for e in r.edits]
    assert starts == [text.index("Second"), text.index("Third"), text.index("Fifth")]  # Fourth already opens a paragraph


def test_alternative_spelling_whole_words_longest_match_and_case():
    r = attacks.AlternativeSpelling().apply("Color, COLORED and colorful favorites; the colorless program.")
    assert r.text == "Colour, COLOURED and colourful favourites; the colourless programme."
    assert attacks.AlternativeSpelling()("discolor") == "discolour"
    assert attacks.AlternativeSpelling()("colorimeter") == "colorimeter"  # not a listed word: untouched


def test_misspelling_uses_the_dictionary_and_keeps_case():
    r = attacks.Misspelling(rate=1.0).apply("Definitely we receive it. Acquaintance!")
    table = attacks.misspelling.misspelling_table("common")
    assert r.n_edits == 3
    for e, word in zip(r.edits, ["Definitely", "receive", "Acquaintance"]):
        assert e.replacement.lower() in table[word.lower()]
        assert e.replacement[0].isupper() == word[0].isupper()


def test_misspelling_with_an_lm_picks_the_most_likely_candidates():
    text = "definitely and receive and believe and occurred"
    likely = {"receive", "occurred"}

    def fake_lm(t):  # one token per word: likely words get high log-probabilities
        spans = [(m.start(), m.end()) for m in __import__("re").finditer(r"\S+", t)]
        return np.array(spans), np.array([-0.1 if t[s:e] in likely else -9.0 for s, e in spans])

    a = attacks.Misspelling(rate=0.5, lm=fake_lm)
    for seed in range(10):
        r = a.set_params(seed=seed).apply(text)
        assert {text[e.start:e.end] for e in r.edits} == likely
        assert r.info["lm"] == "fake_lm"


def test_word_logprobs_sums_overlapping_tokens():
    offsets = np.array([[0, 2], [2, 5], [5, 6], [6, 10]])
    lp = np.array([-1.0, -2.0, -4.0, -8.0])
    assert word_logprobs([(0, 5), (3, 7), (10, 12)], offsets, lp).tolist() == [-3.0, -14.0, 0.0]


def test_pipeline_composes_and_merges_edits():
    pipe = attacks.Pipeline([attacks.Homoglyph(rate=1.0), attacks.ZeroWidthSpace(rate=1.0)])
    r = pipe.apply("ab")
    assert r.text == "\u200bа\u200bb\u200b"
    assert attacks.apply_edits("ab", r.edits) == r.text
    assert r.edits == [Edit(0, 1, "\u200bа\u200b"), Edit(2, 2, "\u200b")] or attacks.apply_edits("ab", r.edits) == r.text
    assert (attacks.Homoglyph() | attacks.ZeroWidthSpace()).attacks[1] == attacks.ZeroWidthSpace()
    with pytest.raises(TypeError, match=r"^Pipeline: attacks must be a list of Attack objects, names or tables, got Homoglyph\(.*\) \(Homoglyph\)$"):
        attacks.Pipeline(attacks.Homoglyph())
