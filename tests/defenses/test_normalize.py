"""Normalize: the Defense contract, its switches and parameter checks, and the inputs every module must take."""

from __future__ import annotations

import pickle
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from humanize import attacks
from humanize.attacks import AttackResult, apply_edits, check_edits
from humanize.defenses import Defense, Normalize, available, get
from humanize.defenses import normalize as normalize_module
from humanize.defenses._confusables import confusables_source

from ..text_strategies import any_text
from ..work import assert_linear

FAMILY = "👨\u200d👩\u200d👧"  # an emoji ZWJ sequence
SCOTLAND = "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"  # a flag of tag characters
ALL_OFF = dict(homoglyphs=False, invisible=False, whitespace=False, quotes=False, dashes=False, nfkc=False)


def _only(**on):
    return Normalize(**{**ALL_OFF, **on})


def _exact(r: AttackResult) -> None:
    check_edits(r.original, r.edits)
    assert apply_edits(r.original, r.edits) == r.text


# ------------------------------------------------------------------ the contract other modules use
def test_registry_and_result_contract():
    assert "normalize" in available()
    d = get("normalize")
    assert isinstance(d, Defense) and d.name == "normalize" and d == Normalize()
    r = d.apply("Τhe\u200b  cаt")  # Greek Τ, Cyrillic а
    assert isinstance(r, AttackResult) and r.attack == "normalize" and r.original == "Τhe\u200b  cаt"
    assert r.text == "The cat"
    assert r.params == d.get_params() and d(r.original) == r.text
    _exact(r)
    assert [x.text for x in d.batch(["a", "b\u200b"])] == ["a", "b"]
    assert repr(d).startswith("Normalize(homoglyphs=True")
    assert pickle.loads(pickle.dumps(r)).edits == r.edits
    assert pickle.loads(pickle.dumps(d)) == d  # executors ship it to workers


def test_parameters_clone_and_fingerprint_follows_them_and_the_confusables_data():
    a, b = Normalize(), Normalize(quotes=False)
    assert clone(b) == b and clone(b).get_params() == b.get_params()
    assert a.fingerprint() == Normalize().fingerprint() != b.fingerprint()
    assert Normalize(confusables=False).provenance()["data"] == {"confusables": None}
    assert "data" not in Normalize(homoglyphs=False).provenance()
    # "auto" records what it found, so two installations that fold differently never share a cache key
    auto = Normalize(confusables="auto").provenance()["data"]["confusables"]
    assert auto == confusables_source()
    assert (auto is None) == (Normalize(confusables="auto").fingerprint() == Normalize(confusables=False).fingerprint())


def test_unicode_confusables_fold_letters_outside_raids_table():
    """Branch: the optional package is installed (extras ``confusables`` and ``test``)."""
    assert confusables_source() is not None, "pip install confusable-homoglyphs  (or: pip install -e '.[test]')"
    assert Normalize(confusables=True)("Tһe cаt") == "The cat"  # Cyrillic һ is not in RAID's table
    assert Normalize()("Tһe cаt") == "The cat"  # "auto" finds it
    assert Normalize(confusables=True, homoglyphs=False)("Tһe") == "Tһe"


def test_without_the_package_auto_uses_raids_table_and_true_is_a_clear_error(monkeypatch):
    """Branch: the package is missing (simulated)."""
    monkeypatch.setattr(normalize_module, "_installed_confusables", lambda: None)
    with pytest.raises(ImportError, match="pip install confusable-homoglyphs"):
        Normalize(confusables=True)
    assert Normalize()("Tһe cаt") == "Tһe cat"
    assert Normalize().provenance()["data"] == {"confusables": None}


@pytest.mark.parametrize("params, error, words", [
    (dict(homoglyphs=1), TypeError, "homoglyphs"),
    (dict(whitespace="yes"), TypeError, "whitespace"),
    (dict(nfkc=None), TypeError, "nfkc"),
    (dict(confusables="always"), ValueError, "confusables"),
    (dict(confusables=1), ValueError, "confusables"),
])
def test_bad_parameters_name_the_parameter(params, error, words):
    with pytest.raises(error, match=words):
        Normalize(**params)


def test_bad_inputs_and_names_are_clear_errors():
    with pytest.raises(ValueError, match="unknown defense 'nope'"):
        get("nope")
    with pytest.raises(ValueError, match="no parameter"):
        get("normalize", rate=0.5)
    with pytest.raises(TypeError, match="expects a str"):
        Normalize()(None)
    with pytest.raises(TypeError, match="single str"):
        Normalize().batch("one text")
    d = Normalize()
    with pytest.raises(TypeError, match="quotes"):
        d.set_params(quotes="no")
    assert d.quotes is True  # restored
    with pytest.raises(TypeError, match=r"Normalize\.batch expects a sequence of str .*got dict"):
        Normalize().batch({"a text": 1})  # a dict batch is refused, not read as its keys
    with pytest.raises(TypeError, match=r"Normalize: quotes must be a bool, got 'no' \(str\)"):
        Normalize(quotes="no")
    with pytest.raises(ValueError, match=r"Normalize: confusables must be a bool or one of 'auto', got 'yes' \(str\)"):
        Normalize(confusables="yes")
    import numpy as np

    assert Normalize(quotes=np.bool_(False))("\u201cx\u201d") == "\u201cx\u201d"  # numpy bools are flags


# ------------------------------------------------------------------ each step
@pytest.mark.parametrize("step, text, expected", [
    ("invisible", "in\u200bvi\u200csi\u200dble\u2060\ufeff soft\u00adhyphen \u202elrm\u200e",
     "invisible softhyphen lrm"),
    ("invisible", "\u0600\u0661", "\u0600\u0661"),  # Arabic number sign: Cf yet visible
    ("nfkc", "ﬁne ｆｕｌｌ ①…", "fine full 1..."),
    ("quotes", "“It’s ‚low‘” «guillemets»", "\"It's 'low'\" «guillemets»"),
    ("dashes", "1–2 a—b c‐d −3", "1-2 a--b c-d -3"),
    ("whitespace", "a  b\t\tc\u00a0d \u2009e", "a b c d e"),
    ("whitespace", "line  \nnext\t\n\n  - item\n\tcode  x", "line\nnext\n\n  - item\n\tcode x"),
    ("homoglyphs", "Τhe Ηаrd саt", "The Hard cat"),  # Greek Τ, Η; Cyrillic а, с (RAID's table)
])
def test_each_switch_does_its_own_job(step, text, expected):
    assert _only(**{step: True})(text) == expected
    _exact(_only(**{step: True}).apply(text))


def test_switches_off_change_nothing():
    text = "Tһe\u200b “cаt” — ﬁne  \n"
    assert _only()(text) == text and _only().apply(text).edits == []


def test_raid_table_only_without_confusables():
    assert Normalize(confusables=False)("Tһe cаt") == "Tһe cat"  # Cyrillic һ is outside RAID's table


# ------------------------------------------------------------------ legitimate text stays
@pytest.mark.parametrize("text", [
    "Привет, мир! Это тест: а с о у, сор и рост.",  # Cyrillic prose, all-look-alike words included
    "Ο λόγος και η ΚΑΙ ΑΡΕΤΗ του Αριστοτέλη.",  # Greek prose and capitals
    "Він сказав: і все.",  # Ukrainian і
    "日本語の文です。次の文。",
    "مرحبا بالعالم ١٢٣",
    "می\u200cخواهم",  # Persian half-space (ZWNJ) is orthography
    "क्\u200dष नमस्ते",  # Devanagari ZWJ
    f"{FAMILY} family, 👍🏽, 🇫🇷, ❤\ufe0f, 1\ufe0f\u20e3 and {SCOTLAND}",
    "The α-helix and γ-rays, 5 μm.",  # lone Greek letters are symbols in English prose
])
def test_legitimate_non_latin_text_is_kept(text):
    assert Normalize()(text) == text


def test_latin_words_inside_other_script_text_are_folded_but_the_text_stays():
    text = "Он, а не она, сказал: Hеllo, а pаrty is сool."
    # mixed words fold; the all-look-alike "а" folds among English words and stays among Russian ones
    assert Normalize()(text) == "Он, а не она, сказал: Hello, a party is cool."
    # a word of Greek and Cyrillic look-alikes is mixed-script too, even right after Russian words
    assert Normalize()("Он сказал: что? Ηе said so.") == "Он сказал: что? He said so."
    assert Normalize()("ΗΕ НЕ") == "ΗΕ НЕ"  # one script per word: no Latin context, kept


def test_zero_width_attack_on_emoji_and_accents_is_undone():
    text = f"Family {FAMILY} café e\u0301 ❤\ufe0f {SCOTLAND}"
    attacked = attacks.get("zero_width_space")(text)
    assert attacked != text and _only(invisible=True)(attacked) == text


# ------------------------------------------------------------------ edge inputs
@pytest.mark.parametrize("text, expected", [
    ("", ""),
    ("   ", ""),
    ("\n\n", "\n\n"),
    ("\u200b", ""),
    ("\u3000\u00a0", ""),
    ("😀", "😀"),
    ("a \ud800 b", "a \ud800 b"),  # a lone surrogate passes through
])
def test_edge_inputs(text, expected):
    r = Normalize().apply(text)
    assert r.text == expected
    _exact(r)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_text)
def test_any_text_gives_exact_edits_and_is_idempotent(text):
    d = Normalize()
    r = d.apply(text)
    _exact(r)
    assert d(r.text) == r.text


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=string.ascii_letters + " .,'\n\t-éüñß\u0301\u2019", max_size=60))
def test_attacked_latin_text_comes_back(text):
    """Any Latin text after a word that decides the context ("Look" keeps L and k): what an
    all-look-alike word means depends on its neighbours, so a lone "а" stays as it is."""
    text = "Look: " + text
    for attack in (attacks.get("homoglyph", rate=0.7, seed=1) | attacks.get("zero_width_space", rate=0.5),
                   attacks.get("homoglyph") | attacks.get("zero_width_space", boundary="grapheme")):
        assert Normalize()(attack(text)) == Normalize()(text)
        assert _only(homoglyphs=True, invisible=True)(attack(text)) == text


def test_a_lone_all_look_alike_word_is_left_alone():
    assert Normalize()("а") == "а" and Normalize()("ace сар") == "ace cap"


def test_a_long_attacked_text_is_linear(demo_texts):
    big = "\n\n".join(demo_texts)[:200_000]
    attacked = (attacks.get("homoglyph") | attacks.get("zero_width_space"))(big)  # 400,000 characters
    d = Normalize()
    r = d.apply(attacked)
    assert _only(homoglyphs=True, invisible=True)(attacked) == big
    _exact(r)
    # The work counted on 2,000 attacked characters repeated 1, 2 and 8 times (tests/work.py).
    block = attacked[:2_000]
    assert d.apply(block).edits
    assert_linear(lambda k: d.apply(block * k).edits)
