"""A stored run's documents (run_config, run_documents), tables added after a run (add_run_table),
and the documents page's markup of exact edits (without a browser)."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest

from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.reporting.documents import run_documents
from humanize.benchmarks.reporting.documents_page import documents_page, render_edits, write_documents_page
from humanize.benchmarks.runner import run
from humanize.benchmarks.runner.manifest import run_config
from humanize.benchmarks.runner.store import ResultsStore
from humanize.text import text_hash


def _config(db):
    return RunConfig(n=10, seed=2, db=str(db), quality=False, n_boot=0, fprs=(0.2,), per_domain=False,
                     attacks=[AttackSpec("homoglyph"), AttackSpec("zero_width_space"),
                              AttackSpec("whitespace", rates=[0.3, 0.9])],
                     detectors=[DetectorSpec("surface_probe"), DetectorSpec("tfidf_lr")])


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    db = tmp_path_factory.mktemp("docs") / "r.sqlite"
    return db, run(_config(db), progress=False)


def _apply(original: str, edits) -> str:
    out, pos = [], 0
    for start, end, repl in sorted(edits, key=lambda e: (e[0], e[1])):
        out += [original[pos:start], repl]
        pos = end
    return "".join(out) + original[pos:]


def test_run_config_finds_the_latest_or_the_named_run(stored, tmp_path):
    db, result = stored
    with ResultsStore(db, readonly=True) as store:
        run_id, cfg = run_config(store)
        assert run_id == result.run_id and cfg.key() == _config(db).key()
        assert run_config(store, result.run_id)[0] == result.run_id
        with pytest.raises(LookupError, match="no finished run 'nope'"):
            run_config(store, "nope")
    with ResultsStore(tmp_path / "empty.sqlite") as empty:
        with pytest.raises(LookupError, match="no finished run in"):
            run_config(empty)


def test_run_documents_are_the_scored_texts_with_edits_that_rebuild_them(stored):
    db, result = stored
    with ResultsStore(db, readonly=True) as store:
        docs = run_documents(store)
        attacked_only = run_documents(store, result.run_id, clean=False)
    assert list(docs["attack"].drop_duplicates()) == ["none", "homoglyph", "zero_width_space", "whitespace@0.3",
                                                      "whitespace@0.9"]
    clean = docs[docs["attack"] == "none"]
    assert set(clean["label"]) == {"human", "machine"} and (clean["text"] == clean["original"]).all()
    assert clean["edits"].map(len).eq(0).all()
    attacked = docs[docs["attack"] != "none"]
    pd.testing.assert_frame_equal(attacked.reset_index(drop=True), attacked_only.reset_index(drop=True))
    for row in attacked.itertuples():
        assert _apply(row.original, row.edits) == row.text and row.text_hash == text_hash(row.text)
        assert row.input_hash == text_hash(row.original) and row.attack_key.startswith(row.attack_name + "/")
    assert (attacked["text"] != attacked["original"]).all()
    # the documents are exactly the texts the run scored: same (attack, id) pairs as the scores table
    scores = result.tables["scores"]
    scored = scores[(scores["label"] == "machine") & (scores["detector"] == "surface_probe")]
    assert set(zip(scored["attack"], scored["id"])) == set(zip(docs.loc[docs["label"] == "machine", "attack"],
                                                                docs.loc[docs["label"] == "machine", "id"]))
    assert set(attacked["rate"].dropna()) == {0.3, 0.9, 1.0}


def test_add_run_table_adds_a_table_that_a_rerun_keeps(stored, tmp_path):
    db, result = stored
    copy = tmp_path / "r.sqlite"
    copy.write_bytes(db.read_bytes())
    frame = pd.DataFrame({"detector": ["surface_probe"], "subset": ["overall"], "flip": [0.25]})
    with ResultsStore(copy) as store:
        store.add_run_table(result.run_id, "reliance", frame)
        assert store.run_tables(result.run_id)["reliance"].to_dict("records") == frame.to_dict("records")
        with pytest.raises(ValueError, match="table 'metrics' cannot be added"):
            store.add_run_table(result.run_id, "metrics", frame)
        with pytest.raises(TypeError, match="must be a pandas DataFrame"):
            store.add_run_table(result.run_id, "reliance", frame.to_dict())
        with pytest.raises(LookupError, match="no finished run 'nope'"):
            store.add_run_table("nope", "reliance", frame)
    again = run(_config(copy), progress=False)  # everything cached: the run's tables are rewritten or kept
    assert again.run_id == result.run_id and again.work["attacked"] == 0
    with ResultsStore(copy, readonly=True) as store:
        tables = store.run_tables(result.run_id)
    assert "reliance" in tables and tables["reliance"]["flip"].tolist() == [0.25]


def test_render_edits_marks_each_kind_of_edit_and_escapes_everything():
    original = 'a <b> & "q" 😀 text\u200b end'
    edits = [(0, 1, "\u0430"),  # a -> Cyrillic a (look-alike)
             (2, 5, ""),  # delete "<b>"
             (6, 6, "\u200b"),  # insert a zero-width space
             (12, 13, "😀!"),  # replace an emoji by two characters
             (19, 19, "  "),  # insert two spaces
             ]
    text = _apply(original, edits)
    out = render_edits(original, edits, text)
    assert '<ins class="edit sub" title="U+0061 LATIN SMALL LETTER A -&gt; U+0430 CYRILLIC SMALL LETTER A">' \
           "\u0430</ins>" in out
    assert '<del class="edit del">&lt;b&gt;</del>' in out
    assert '<ins class="edit ins"><span class="inv" title="U+200B ZERO WIDTH SPACE">ZWSP</span></ins>' in out
    assert '<span class="edit rep"><del>' in out and "</del><ins>" in out
    assert out.count('<span class="ws"') == 2
    assert "&amp;" in out and "&quot;q&quot;" in out and "<b>" not in out
    # the zero-width space already in the original is made visible too, outside any edit
    assert out.count("ZWSP</span>") == 2
    with pytest.raises(ValueError, match="overlaps another"):
        render_edits(original, [(0, 3, "x"), (2, 4, "y")])
    with pytest.raises(ValueError, match="outside the original"):
        render_edits("abc", [(2, 9, "x")])
    with pytest.raises(ValueError, match="do not rebuild"):
        render_edits(original, edits, text + "!")
    assert render_edits("", []) == ""


def test_the_documents_page_has_a_row_per_attacked_text_with_its_scores(stored, tmp_path):
    db, result = stored
    page = documents_page(db)
    with ResultsStore(db, readonly=True) as store:
        docs = run_documents(store, clean=False)
    rows = re.findall(r'<tr class="row" data-attack="([^"]*)" data-order="\d+" data-change-0="([^"]*)" '
                      r'data-change-1="([^"]*)">', page)
    assert len(rows) == len(docs) and [html.unescape(a) for a, _, _ in rows] == docs["attack"].tolist()
    scores = result.tables["scores"].set_index(["detector", "attack", "id"])["score"]
    first = docs.iloc[0]
    change = scores[("surface_probe", first["attack"], first["id"])] - scores[("surface_probe", "none", first["id"])]
    assert float(rows[0][1]) == pytest.approx(change)
    for attack in docs["attack"].unique():
        assert f'<option value="{attack}">' in page
    assert '<select id="sort">' in page and 'value="1:asc"' in page
    assert "http://" not in page and "https://" not in page and "src=" not in page
    path = write_documents_page(db, tmp_path / "sub" / "documents.html")
    assert path.read_text(encoding="utf-8") == page


def test_word_swaps_are_coloured_by_their_validity_class():
    original = "Rates were higher in big cities in 2019; the color of patients"
    words = {w: (original.index(w), original.index(w) + len(w)) for w in ("higher", "big", "2019", "color",
                                                                          "patients")}
    edits = [(*words["higher"], "lower"), (*words["big"], "large"), (*words["2019"], "2020"),
             (*words["color"], "colour"), (*words["patients"], "pateints"),
             (1, 3, "xy"),  # part of a word: an edit, not a word swap
             (0, 0, "New ")]  # an insertion
    counts: dict = {}
    out = render_edits(original, edits, _apply(original, edits), counts=counts)
    assert '<span class="edit rep swap v-antonym" title="antonym: higher -&gt; lower"><del>higher</del>' \
           "<ins>lower</ins></span>" in out
    for cls in ("synonym", "unrelated", "morphological", "non_word"):
        assert f'class="edit rep swap v-{cls}"' in out
    assert counts == {"antonym": 1, "synonym": 1, "unrelated": 1, "morphological": 1, "non_word": 1}
    assert '<span class="edit rep"><del>at</del><ins>xy</ins></span>' in out
    assert '<ins class="edit ins">New<span class="ws"' in out


def test_the_documents_page_colours_word_swaps_with_a_legend(tmp_path):
    db = tmp_path / "w.sqlite"
    cfg = RunConfig(n=6, seed=2, db=str(db), quality=False, n_boot=0, fprs=(0.2,), per_domain=False,
                    attacks=[AttackSpec("misspelling", rates=[1.0]), AttackSpec("homoglyph")],
                    detectors=[DetectorSpec("surface_probe")])
    run(cfg, progress=False)
    page = documents_page(db)
    with ResultsStore(db, readonly=True) as store:
        docs = run_documents(store, clean=False)
    misspelt = docs[docs["attack"] == "misspelling"]["edits"].map(len).sum()
    # every misspelt word is a word swap, and not a word
    assert misspelt > 0 and page.count('class="edit rep swap v-non_word"') == misspelt
    for label in ("synonym", "morphological variant", "antonym", "sister term (co-hyponym)", "unrelated word",
                  "not a word", "hypernym / hyponym"):
        assert f'title="{label}"><ins>{label}</ins></span>' in page  # the legend names every class
    assert re.search(r'<span class="swap v-non_word">\d+ not a word</span>', page)  # per document, in its header
    homoglyph = re.findall(r'<tr class="row" data-attack="homoglyph".*?</tr>', page, flags=re.S)
    assert homoglyph and all("swap v-" not in r and 'class="edit sub"' in r for r in homoglyph)


def test_a_swap_that_does_not_fit_its_sentence_is_struck_through_and_counted():
    """Issue #33: the documents page shows a swap coloured by both meters, WordNet's class and the context's."""
    from humanize.benchmarks.reporting.documents_page import _misfits, render_edits

    original = "a higher breast cancer risk, several studies"
    edits = [[9, 15, "chest"], [37, 44, "surveys"]]
    counts: dict = {}
    out = render_edits(original, edits, counts=counts, misfits={(9, 15)})
    assert 'class="edit rep swap v-synonym ctx-fail" title="synonym: breast -&gt; chest; does not fit its sentence' in out
    assert "surveys; fits its sentence (context meter)" in out
    assert counts["ctx_fail"] == 1
    plain = render_edits(original, edits)
    assert "ctx-fail" not in plain and "context meter" not in plain  # a run without the meter: WordNet alone
    import pandas as pd

    q = pd.DataFrame({"attack": ["synonym", "synonym", "x"], "id": ["1", "2", "3"],
                      "context_misfits": ["9:15 37:44", "", float("nan")]})
    assert _misfits(q) == {("synonym", "1"): {(9, 15), (37, 44)}, ("synonym", "2"): set()}
