"""The train/test split keeps every copy of a text on one side (issue #22): the demo set holds 21 texts
twice under different source ids, and a copy on each side would inflate a learned detector's figures."""

from __future__ import annotations

import pandas as pd

from humanize._split import group_split, in_train_split
from humanize.benchmarks.data import load_demo
from humanize.text import text_hash


def test_no_demo_text_is_on_both_sides_and_the_duplicates_are_counted():
    demo = load_demo()
    for seed, fraction in ((0, 0.5), (3, 0.3)):
        split = group_split(demo["source_id"], demo["generation"], seed, fraction)
        sides = pd.DataFrame({"h": demo["generation"].map(text_hash), "s": split.parts}).groupby("h")["s"].nunique()
        assert (sides == 1).all()
        assert (split.duplicate_texts, split.duplicate_rows) == (21, 42)
        assert split.note().startswith("21 duplicate text(s) (same content hash) in 42 rows")
        # a source document's rows stay together, and a text no other source holds keeps its source's side
        by_source = pd.DataFrame({"src": demo["source_id"], "s": split.parts}).groupby("src")["s"].nunique()
        assert (by_source == 1).all()
        once = ~demo["generation"].duplicated(keep=False)
        linked = set(demo.loc[~once, "source_id"])
        for src, part in zip(demo["source_id"], split.parts):
            if src not in linked:
                assert (part == "train") == in_train_split(src, seed, fraction)
    # the old per-source rule put some of these texts on both sides: the case this guards against
    old = ["train" if in_train_split(s, 0, 0.5) else "test" for s in demo["source_id"]]
    leaked = pd.DataFrame({"h": demo["generation"].map(text_hash), "s": old}).groupby("h")["s"].nunique()
    assert (leaked > 1).sum() > 0


def test_a_group_is_train_only_when_every_source_in_it_is():
    ids = [f"s{i}" for i in range(40)]
    train = [s for s in ids if in_train_split(s, 1, 0.5)]
    test = [s for s in ids if not in_train_split(s, 1, 0.5)]
    a, b, c = train[0], train[1], test[0]
    split = group_split([a, b, c, a], ["x", "x", "y", "z"], 1, 0.5)
    assert split.parts == ["train", "train", "test", "train"] and split.duplicate_texts == 1
    split = group_split([a, c, c], ["x", "x", "w"], 1, 0.5)  # a's text is also c's, and c is tested
    assert split.parts == ["test", "test", "test"]
    assert group_split([a, b], ["x", "y"], 1, 0.5).note() is None


def test_a_datasets_own_split_is_kept_but_a_train_copy_of_a_tested_text_moves_to_test():
    split = group_split(["p", "q", "r", "s"], ["x", "x", "y", "z"], 0, 0.5, given=["train", "test", "train", "test"])
    assert split.parts == ["test", "test", "train", "test"] and split.moved == 1
    assert "1 train row(s) sharing a text with the test part moved" in split.note()


def test_the_run_says_how_many_duplicates_it_found(tmp_path):
    from humanize.benchmarks.runner import run
    from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig

    rows = [(f"h{i}", f"A human sentence number {i} about the town.", "human") for i in range(6)]
    rows += [(f"m{i}", f"A generated sentence number {i} from the model.", "machine") for i in range(6)]
    rows += [("dup", rows[0][1], "human")]  # the first human text again, under another id
    path = tmp_path / "d.csv"
    pd.DataFrame(rows, columns=["id", "text", "label"]).to_csv(path, index=False)
    cfg = RunConfig(dataset="file", filters={"path": str(path), "id_column": "id"}, n=None, seed=0, quality=False,
                    n_boot=0, fprs=(0.2,), per_domain=False, db=str(tmp_path / "r.sqlite"), train_fraction=0.3,
                    attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("surface_probe")])
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(cfg, progress=False)
    note = next(w for w in result.warnings if "duplicate text" in w)
    assert note.startswith("1 duplicate text(s) (same content hash) in 2 rows")
    assert any(note == str(w.message) for w in caught)
