"""Format counterfactuals (artifact-reliance paper, Section 5.1): StripFormat, ImposeFormat, FormatProfile."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from humanize import attacks
from humanize.attacks import FormatProfile, ImposeFormat, StripFormat, apply_edits, check_edits, is_admissible
from humanize.attacks import format as fmt
from humanize.attacks.format_profile import UNBROKEN, sentence_gaps
from humanize.exceptions import InadmissibleTransform

from ..work import assert_linear
from .conftest import TRICKY_TEXTS

ARXIV_LIKE = (
    "We study the problem of  wrapping.  Lines are wrapped at eighty columns in\n"
    "the source, and every sentence ends with two spaces.  This is the \"classic\"\n"
    "format -- it comes from LaTeX.  Another sentence follows here for good\n"
    "measure."
)


def _profile(**kw) -> FormatProfile:
    """A hand-written profile: no wrapping unless line lengths are given."""
    d = {
        "line_length_values": [],
        "line_length_counts": [],
        "paragraph_break_rate": 0.0,
        "double_space_rate": 0.0,
        "curly_quote_rate": 0.0,
        "dash_rate": 0.0,
        "em_dash_share": 0.0,
    }
    d.update(kw)
    return FormatProfile.from_dict(d)


def _hyphens(text: str) -> str:
    """Hyphen runs as one hyphen: ``--`` may become an en dash, which strips back to ``-``."""
    return re.sub("-+", "-", text)


def _fold(text: str) -> str:
    return "".join(fmt.FOLD.get(c, c) for c in text)


@pytest.fixture(scope="module")
def demo_rows():
    from humanize.benchmarks.data import load_demo

    df = load_demo()
    return df[df.label == "human"]["generation"].tolist(), df[df.label == "machine"]["generation"].tolist()


@pytest.fixture(scope="module")
def demo_profiles(demo_rows):
    human, machine = demo_rows
    return FormatProfile().fit(human), FormatProfile().fit(machine)


@pytest.fixture(scope="module")
def mixed_profile():
    """Every rate strictly between 0 and 1, wrapping at arXiv-like widths, some paragraph breaks."""
    return _profile(
        line_length_values=[20, 60, 76],
        line_length_counts=[2, 5, 10],
        line_break_counts=[1, 5, 9],
        paragraph_break_rate=0.2,
        double_space_rate=0.6,
        curly_quote_rate=0.5,
        dash_rate=0.5,
        em_dash_share=0.5,
    )


# -- admissibility ---------------------------------------------------------------------
def test_is_admissible_ignores_formatting_and_catches_word_changes():
    assert is_admissible("He said \"hi\" -- twice.", "He said “hi” — twice.\n")
    assert is_admissible("a  b\n\nc", "a b c")
    assert not is_admissible("color", "colour")
    assert not is_admissible("the cat", "the cats")
    assert not is_admissible("Cat", "cat")  # case is content
    with pytest.raises(TypeError, match="NoneType"):
        is_admissible("a", None)


def test_an_inadmissible_output_raises_instead_of_returning(monkeypatch):
    monkeypatch.setattr(fmt, "_strip_edits", lambda text: [attacks.Edit(0, 1, "X")])
    with pytest.raises(InadmissibleTransform, match="alphanumeric"):
        StripFormat()("abc")
    with pytest.raises(ValueError):  # InadmissibleTransform is a ValueError
        ImposeFormat(_profile())("abc")


# -- StripFormat -----------------------------------------------------------------------
def test_strip_collapses_whitespace_and_folds_quotes_and_dashes():
    text = "  “Hi,” she said — it’s 1990–2000.\n\n  Next\tline…  "
    assert StripFormat()(text) == '"Hi," she said -- it\'s 1990-2000. Next line…'


@given(text=st.text())
@settings(max_examples=200, deadline=None)
def test_full_strip_is_split_join_of_the_folded_text(text):
    out = StripFormat()(text)
    assert out == " ".join(_fold(text).split())
    assert StripFormat()(out) == out  # idempotent


def test_strip_rate_is_the_fraction_of_sites_normalised():
    text = "a  b " * 2000  # 2000 double-space sites (the last run is trailing)
    r = StripFormat(rate=0.3, seed=4).apply(text)
    assert 0.25 < r.n_edits / 2000 < 0.35
    assert StripFormat(rate=0.0)(text) == text


# -- ImposeFormat: behaviour -------------------------------------------------------------
def test_quotes_curl_with_the_right_open_close_choice():
    prof = _profile(curly_quote_rate=1.0, dash_rate=1.0, em_dash_share=1.0)
    text = "He said \"hello\" and 'bye' -- it's the '90s (\"ok\"). 'Tis \"\"."
    assert ImposeFormat(prof)(text) == "He said “hello” and ‘bye’ — it’s the ’90s (“ok”). ‘Tis “”."


def test_dashes_follow_the_profile_and_hyphenated_words_are_left_alone():
    text = "well-known results - as ever -- hold"
    en, em = _profile(dash_rate=1.0, em_dash_share=0.0), _profile(dash_rate=1.0, em_dash_share=1.0)
    assert ImposeFormat(en)(text) == "well-known results – as ever – hold"
    assert ImposeFormat(em)(text) == "well-known results — as ever — hold"
    assert ImposeFormat(_profile(dash_rate=0.0))(text) == text


def test_double_spaces_go_after_sentence_ends_only():
    text = "First one. Second one! Third? (Fourth.) Fifth e.g. sixth."
    out = ImposeFormat(_profile(double_space_rate=1.0))(text)
    assert out == "First one.  Second one!  Third?  (Fourth.)  Fifth e.g. sixth."


def test_lines_wrap_near_the_drawn_length_and_never_inside_a_word(demo_rows):
    _, machine = demo_rows
    prof = _profile(line_length_values=[40], line_length_counts=[1])
    for text in machine[:30]:
        out = ImposeFormat(prof, seed=1)(text)
        lines = out.split("\n")
        longest_word = max(len(w) for w in text.split())
        assert all(abs(len(line) - 40) <= longest_word + 1 for line in lines[:-1])
        assert len(lines[-1]) <= 40 + longest_word + 1
        assert out.replace("\n", " ") == StripFormat()(text)  # every break replaced a space


def test_paragraph_breaks_prefer_sentence_boundaries():
    text = " ".join(f"Sentence number {i} is here and it is short." for i in range(40))
    prof = _profile(line_length_values=[150], line_length_counts=[1], paragraph_break_rate=1.0)
    out = ImposeFormat(prof)(text)
    paras = out.split("\n\n")
    assert len(paras) > 5 and "\n" not in out.replace("\n\n", "")
    assert all(p.endswith(".") for p in paras)


def test_rate_zero_only_normalises_and_without_normalize_changes_nothing(mixed_profile):
    text = "A “quote”  -- and\n\na line. Another 'one'."
    assert ImposeFormat(mixed_profile, rate=0.0)(text) == StripFormat()(text)
    assert ImposeFormat(mixed_profile, rate=0.0, normalize=False)(text) == text


def test_without_normalize_existing_breaks_are_kept():
    text = "Para one is here.\n\nPara two is here."
    out = ImposeFormat(_profile(double_space_rate=1.0), normalize=False)(text)
    assert out == text  # the only sentence gap is a paragraph break: nothing to double
    assert ImposeFormat(_profile(), normalize=True)(text) == "Para one is here. Para two is here."


def test_rate_scales_the_profile_chosen_sites(demo_rows):
    _, machine = demo_rows
    prof = _profile(double_space_rate=1.0)
    full = sum(ImposeFormat(prof, rate=1.0)(t).count("  ") for t in machine[:200])
    half = sum(ImposeFormat(prof, rate=0.5, seed=3)(t).count("  ") for t in machine[:200])
    assert full > 1000 and 0.42 < half / full < 0.58


def test_different_seeds_give_different_outputs(mixed_profile, demo_rows):
    _, machine = demo_rows
    outs = {ImposeFormat(mixed_profile, seed=s)(machine[0]) for s in range(5)}
    assert len(outs) == 5


# -- properties on arbitrary text ---------------------------------------------------------
_words = st.sampled_from(
    ["the", "Cat.", "why?", "don't", "'90s", '"quoted"', "'single'", "--", "-", "—", "–", "“hi”", "‘x’",
     "Привет.", "日本語。", "😀", "e.g.", "(ok).", "well-known", "x"]
)
_sep = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", "", " \n ", "\r\n", "\u00a0", "\u2028"])
structured_text = st.lists(st.tuples(_words, _sep), max_size=60).map(lambda xs: "".join(w + s for w, s in xs))
any_text = st.one_of(structured_text, st.text())
_settings = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("rate", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("normalize", [True, False])
@given(text=any_text, seed=st.integers(0, 2**31))
@_settings
def test_impose_edits_are_exact_admissible_and_deterministic(mixed_profile, rate, normalize, text, seed):
    a = ImposeFormat(mixed_profile, rate=rate, seed=seed, normalize=normalize)
    r = a.apply(text)
    check_edits(text, r.edits)
    assert apply_edits(text, r.edits) == r.text
    assert is_admissible(text, r.text)
    assert ImposeFormat(mixed_profile, rate=rate, seed=seed, normalize=normalize)(text) == r.text
    if normalize:  # impose only adds formatting that strip removes again: no word is ever split
        assert _hyphens(StripFormat()(r.text)) == _hyphens(StripFormat()(text))


@pytest.mark.parametrize("rate", [0.0, 0.4, 1.0])
@given(text=any_text, seed=st.integers(0, 2**31))
@_settings
def test_strip_edits_are_exact_admissible_and_deterministic(rate, text, seed):
    r = StripFormat(rate=rate, seed=seed).apply(text)
    check_edits(text, r.edits)
    assert apply_edits(text, r.edits) == r.text
    assert is_admissible(text, r.text)
    assert StripFormat(rate=rate, seed=seed)(text) == r.text


@pytest.mark.parametrize("text", [*TRICKY_TEXTS, "lone \ud800 surrogate. Next one.", "\x00\x1c\x85 x"])
def test_tricky_texts_are_valid_inputs(mixed_profile, text):
    for a in (StripFormat(seed=1), ImposeFormat(mixed_profile, seed=1),
              ImposeFormat(mixed_profile, normalize=False)):
        r = a.apply(text)
        check_edits(text, r.edits)
        assert apply_edits(text, r.edits) == r.text and is_admissible(text, r.text)
        assert apply_edits(r.text, a.apply(r.text).edits) == a(r.text)  # already-attacked text


def test_one_megabyte_is_exact_and_linear(mixed_profile, demo_rows):
    _, machine = demo_rows
    big = ("\n\n".join(machine) * 2)[:1_000_000]
    a = ImposeFormat(mixed_profile, rate=0.7)
    r = a.apply(big)
    assert apply_edits(big, r.edits) == r.text and is_admissible(big, r.text)
    # The work counted on 3,000 characters repeated 1, 2 and 8 times: the cost of each added block
    # stays the same if the cost is linear, grows if quadratic (tests/work.py).
    block = big[:3_000]
    assert a.apply(block).edits
    assert_linear(lambda k: a.apply("\n\n".join([block] * k)).edits)


# -- FormatProfile ---------------------------------------------------------------------
def test_fit_measures_each_formatting_dimension():
    p = FormatProfile().fit([ARXIV_LIKE, "One block, “curly” and — em; ‘a’ – b."])
    assert p is not None and p.n_documents_ == 2
    assert p.line_length_values_.tolist() == [8, 37, 70, 74, 75]
    assert p.line_length_counts_.tolist() == [1, 1, 1, 1, 1]
    assert p.line_break_counts_.tolist() == [0, 0, 1, 1, 1]  # each document's last line is censored
    assert p.n_line_breaks_ == 3 and p.paragraph_break_rate_ == 0.0
    assert p.n_sentence_gaps_ == 3 and p.double_space_rate_ == 1.0  # gaps split by a newline do not count
    assert p.n_quotes_ == 6 and p.curly_quote_rate_ == pytest.approx(4 / 6)
    assert p.n_dash_sites_ == 3 and p.dash_rate_ == pytest.approx(2 / 3) and p.em_dash_share_ == 0.5
    assert p.median_line_length_ == 70


def test_paragraph_break_rate_counts_blank_line_breaks():
    p = FormatProfile().fit(["a b\n\nc d\ne f\r\n\r\ng", "  \n leading and trailing \n\n"])
    assert p.n_line_breaks_ == 3 and p.paragraph_break_rate_ == pytest.approx(2 / 3)


def test_censoring_decides_whether_unwrapped_classes_wrap(demo_rows):
    human, _ = demo_rows
    censored = FormatProfile().fit(human)  # demo human texts have no line breaks
    literal = FormatProfile(censor_last_line=False).fit(human)
    assert censored.line_length_distribution()[2] == 1.0
    assert (censored.sample_line_lengths(50, np.random.default_rng(0)) == UNBROKEN).all()
    assert literal.line_length_distribution()[2] == 0.0
    probs = literal.line_length_distribution()[1]
    assert probs.sum() == pytest.approx(1.0)


def test_fit_rejects_bad_input_with_clear_errors():
    with pytest.raises(TypeError, match="single str"):
        FormatProfile().fit("just one text")
    with pytest.raises(ValueError, match="at least one text"):
        FormatProfile().fit([])
    with pytest.raises(TypeError, match="int at position 1"):
        FormatProfile().fit(["ok", 3])
    with pytest.raises(TypeError, match=r"^FormatProfile: censor_last_line must be a bool, got .yes. \(str\)$"):
        FormatProfile(censor_last_line="yes").fit(["a"])


def test_unfitted_profile_raises_not_fitted():
    with pytest.raises(NotFittedError, match="not fitted"):
        FormatProfile().to_dict()
    with pytest.raises(NotFittedError, match="ImposeFormat"):
        ImposeFormat(FormatProfile())
    assert issubclass(NotFittedError, ValueError)


def test_to_dict_round_trips_through_json(demo_profiles, demo_rows):
    human, machine = demo_profiles
    for p in (human, machine, FormatProfile(censor_last_line=False).fit(demo_rows[1][:50])):
        q = FormatProfile.from_dict(json.loads(json.dumps(p.to_dict())))
        assert q == p and repr(q) == repr(p)
        text = demo_rows[1][3]
        assert ImposeFormat(q, seed=2).apply(text).text == ImposeFormat(p, seed=2).apply(text).text


def test_from_dict_names_missing_unknown_and_bad_values():
    good = _profile().to_dict()
    with pytest.raises(ValueError, match=r"missing keys \['dash_rate'\].*valid keys"):
        FormatProfile.from_dict({k: v for k, v in good.items() if k != "dash_rate"})
    with pytest.raises(ValueError, match=r"unknown keys \['dash_rte'\]"):
        FormatProfile.from_dict({**good, "dash_rte": 0.1})
    with pytest.raises(ValueError, match="curly_quote_rate must be a number in \\[0, 1\\], got 1.5"):
        FormatProfile.from_dict({**good, "curly_quote_rate": 1.5})
    with pytest.raises(ValueError, match="same length"):
        FormatProfile.from_dict({**good, "line_length_values": [3, 4], "line_length_counts": [1]})
    with pytest.raises(ValueError, match="ints >= 1, got 0"):
        FormatProfile.from_dict({**good, "line_length_values": [0], "line_length_counts": [1]})
    with pytest.raises(TypeError, match="expects a dict, got list"):
        FormatProfile.from_dict([1])


def test_repr_and_params_are_readable(demo_profiles):
    assert repr(FormatProfile()) == "FormatProfile()"
    assert repr(FormatProfile(censor_last_line=False)) == "FormatProfile(censor_last_line=False)"
    human, _ = demo_profiles
    assert repr(human).startswith("FormatProfile(n_documents_=900, median_line_length_=")
    assert FormatProfile(censor_last_line=False).get_params() == {"censor_last_line": False}
    a = ImposeFormat(human, rate=0.5, seed=7)
    assert a.get_params(deep=False) == {"profile": human, "rate": 0.5, "seed": 7, "normalize": True}
    assert a.get_params()["profile__censor_last_line"] is True  # nested, as scikit-learn
    assert repr(a).startswith("ImposeFormat(profile=FormatProfile(n_documents_=900")
    assert a == ImposeFormat(FormatProfile.from_dict(human.to_dict()), rate=0.5, seed=7)


def test_impose_validates_its_parameters(demo_profiles):
    human, _ = demo_profiles
    with pytest.raises(TypeError, match=r"^ImposeFormat: profile must be a fitted FormatProfile .*, got .human. \(str\)$"):
        ImposeFormat("human")
    with pytest.raises(TypeError, match="FormatProfile.from_dict"):
        ImposeFormat(human.to_dict())
    with pytest.raises(TypeError, match=r"^ImposeFormat: normalize must be a bool, got 1 \(int\)$"):
        ImposeFormat(human, normalize=1)
    with pytest.raises(ValueError, match="1.5"):
        ImposeFormat(human, rate=1.5)
    a = ImposeFormat(human)
    with pytest.raises(TypeError, match=r"^ImposeFormat: profile must be .*, got None \(NoneType\)$"):
        a.set_params(profile=None)


def test_registry_builds_both_attacks(demo_profiles):
    human, _ = demo_profiles
    assert isinstance(attacks.get("strip_format", rate=0.5), StripFormat)
    a = attacks.get("impose_format", profile=human, seed=1)
    assert isinstance(a, ImposeFormat) and a.name == "impose_format" and a.profile is human
    assert attacks.get("strip_format").apply("a  b").attack == "strip_format"


def test_sentence_gaps_are_whitespace_after_a_sentence_end():
    text = "One.  Two!\nThree \"four.\" Five e.g. six"
    gaps = sentence_gaps(text)
    assert [text[s:e] for s, e in gaps] == ["  ", "\n", " "]


# -- the counterfactual on real rows (paper Section 5.1: θ_H and θ_M per class) -------------
def _stats(texts):
    p = FormatProfile().fit(texts)
    newline_docs = float(np.mean(["\n" in t for t in texts]))
    return p, newline_docs


def test_imposing_the_human_profile_moves_machine_texts_towards_human(demo_rows, demo_profiles):
    human_texts, machine_texts = demo_rows
    human, machine = demo_profiles
    out = [r.text for r in ImposeFormat(human, seed=0).batch(machine_texts)]
    got, got_nl = _stats(out)
    _, machine_nl = _stats(machine_texts)
    _, human_nl = _stats(human_texts)
    assert human_nl == 0.0 and machine_nl > 0.8 and got_nl == 0.0  # demo human rows are unwrapped
    for attr in ("median_line_length_", "paragraph_break_rate_", "curly_quote_rate_", "dash_rate_"):
        target = getattr(human, attr)
        moved, before = abs(getattr(got, attr) - target), abs(getattr(machine, attr) - target)
        assert moved < before, (attr, getattr(got, attr), getattr(human, attr), getattr(machine, attr))
    assert all(is_admissible(t, o) for t, o in zip(machine_texts, out))


def test_machine_profile_placebo_keeps_machine_formatting(demo_rows, demo_profiles):
    _, machine_texts = demo_rows
    _, machine = demo_profiles
    got, got_nl = _stats([ImposeFormat(machine, seed=0)(t) for t in machine_texts])
    assert got_nl > 0.8
    assert abs(got.paragraph_break_rate_ - machine.paragraph_break_rate_) < 0.02
    assert abs(got.median_line_length_ - machine.median_line_length_) < 0.15 * machine.median_line_length_
    assert abs(got.dash_rate_ - machine.dash_rate_) < 0.08


def test_an_arxiv_like_profile_is_reproduced_on_unwrapped_text(demo_rows):
    _, machine_texts = demo_rows
    arxiv = FormatProfile().fit([ARXIV_LIKE] * 5)
    got = FormatProfile().fit([ImposeFormat(arxiv, seed=s)(t) for s, t in enumerate(machine_texts[:200])])
    assert got.double_space_rate_ > 0.95
    assert abs(got.median_line_length_ - arxiv.median_line_length_) <= 6
    assert got.paragraph_break_rate_ == 0.0 and got.n_line_breaks_ > 1000
