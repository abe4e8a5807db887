"""``humanize-bench raid detect | check | evaluate | metadata`` on a RAID-format CSV the test writes."""
from __future__ import annotations

import json
import re
import textwrap

import numpy as np
import pandas as pd
import pytest
from raid import run_evaluation

from humanize.cli.main import main

DOMAINS = ("news", "books")
ATTACKS = ("none", "homoglyph", "article_deletion")
N_SRC = 40  # clean humans per domain: enough for RAID's search to land within epsilon of 5%


def raid_csv(tmp_path, with_labels: bool = True):
    """A RAID-shaped CSV: every column of RAID's, human and machine rows, clean and attacked (humans too)."""
    rng = np.random.default_rng(0)
    words = ["the", "river", "model", "quiet", "signal", "harbor", "ancient", "system", "evening", "measure"]
    rows = []
    for d in DOMAINS:
        for s in range(N_SRC):
            for model in ("human", "gpt2", "mistral"):
                base = f"{d}-{s}-{model}"
                n = int(rng.integers(8, 30))
                text = " ".join(rng.choice(words, n)) + ("." if model == "human" else ", indeed.")
                for a in ATTACKS:
                    rows.append(dict(id=f"{base}-{a}", adv_source_id=f"{base}-none", source_id=f"{d}-{s}",
                                     model=model, decoding=None if model == "human" else "greedy",
                                     repetition_penalty=None if model == "human" else "no", attack=a, domain=d,
                                     title=f"t{s}", prompt=None, generation=text if a == "none" else f"{a}: {text}"))
    df = pd.DataFrame(rows)
    if not with_labels:
        df = df.drop(columns=["model", "decoding", "repetition_penalty"])
    path = tmp_path / "test.csv"
    df.to_csv(path, index=False)
    return path, df


PLUGIN = textwrap.dedent('''
    import os
    import zlib
    import numpy as np
    from humanize.detectors import Detector

    class CommaLength(Detector):
        """Machine-like when it has a comma; a little by length. Counts the texts it scores in $COUNT_FILE
        and stops (Ctrl-C) after $STOP_AFTER of them when that is set."""
        name = "comma_length"
        needs_model = False
        version = "1"

        def __init__(self):
            self._init_params(locals())

        def score(self, texts):
            count = os.environ.get("COUNT_FILE")
            done = int(open(count).read() or 0) if count and os.path.exists(count) else 0
            stop = int(os.environ.get("STOP_AFTER", "0") or 0)
            if stop and done + len(texts) > stop:
                raise KeyboardInterrupt
            if count:
                with open(count, "w") as f:
                    f.write(str(done + len(texts)))
            return np.array([0.5 * ("," in t) + 0.3 * min(len(t), 400) / 400 + 0.2 * (zlib.crc32(t.encode()) % 997) / 997
                             for t in texts], dtype=float)
''')


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    path = tmp_path_factory.mktemp("raid_plugin") / "mydet.py"
    path.write_text(PLUGIN)
    return path


def detect(plugin, data, out, db, *extra):
    return main(["raid", "detect", "--detector", "mydet:CommaLength", "--plugin", str(plugin), "--data", str(data),
                 "--out", str(out), "--db", str(db), "--quiet", "--batch-size", "8", *extra])


def test_detect_writes_raids_predictions_for_every_row(tmp_path, plugin, capsys):
    data, df = raid_csv(tmp_path)
    out = tmp_path / "predictions.json"
    assert detect(plugin, data, out, tmp_path / "r.sqlite") == 0
    preds = json.loads(out.read_text())
    assert [p["id"] for p in preds] == df["id"].tolist()
    assert all(set(p) == {"id", "score"} and isinstance(p["score"], float) for p in preds)
    assert "720 rows" in capsys.readouterr().out


def test_a_killed_detect_continues_and_gives_the_same_file(tmp_path, plugin, monkeypatch, capsys):
    data, df = raid_csv(tmp_path)
    whole = tmp_path / "whole.json"
    assert detect(plugin, data, whole, tmp_path / "a.sqlite") == 0
    count = tmp_path / "count"
    monkeypatch.setenv("COUNT_FILE", str(count))
    monkeypatch.setenv("STOP_AFTER", "100")
    out = tmp_path / "predictions.json"
    assert detect(plugin, data, out, tmp_path / "b.sqlite") == 130  # interrupted
    assert not out.exists()  # all or nothing
    first = int(count.read_text())
    assert 0 < first <= 100
    monkeypatch.setenv("STOP_AFTER", "0")
    capsys.readouterr()
    assert detect(plugin, data, out, tmp_path / "b.sqlite") == 0
    said = capsys.readouterr().out
    scored, cached = (int(x.replace(",", "")) for x in re.search(r"scored ([\d,]+) texts now, ([\d,]+) from", said).groups())
    assert cached > 0 and scored < df["generation"].nunique()  # the rerun scored only what the first left
    assert int(count.read_text()) == first + scored + 1  # + the detector's warm-up probe
    assert out.read_text() == whole.read_text()


def test_detect_refuses_a_detector_that_must_be_fit(tmp_path, capsys):
    data, _ = raid_csv(tmp_path)
    assert main(["raid", "detect", "--detector", "tfidf_lr", "--data", str(data), "--out", str(tmp_path / "p.json"),
                 "--db", str(tmp_path / "r.sqlite"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "fit it first" in err and err.count("\n") == 1


@pytest.fixture()
def submission(tmp_path, plugin):
    data, df = raid_csv(tmp_path)
    folder = tmp_path / "submissions" / "CommaLength-v1"
    folder.mkdir(parents=True)
    preds = folder / "predictions.json"
    assert detect(plugin, data, preds, tmp_path / "r.sqlite") == 0
    meta = folder / "metadata.json"
    assert main(["raid", "metadata", "--out", str(meta), "--detector-name", "CommaLength"]) == 0
    filled = json.loads(meta.read_text())
    filled.update(date_released="2026-12-03", contact_info="someone@example.org")
    meta.write_text(json.dumps(filled))
    return data, df, preds, meta


def check(data, preds, meta=None):
    return main(["raid", "check", "--predictions", str(preds), "--data", str(data)]
                + (["--metadata", str(meta)] if meta else []))


def test_a_clean_submission_passes(submission, capsys):
    data, _, preds, meta = submission
    capsys.readouterr()
    assert check(data, preds, meta) == 0, capsys.readouterr()
    assert capsys.readouterr().out.startswith("ok: 720 predictions over 720 rows")


def _edit(preds_path, fn):
    records = json.loads(preds_path.read_text())
    records = fn(records)
    text = json.dumps(records)  # NaN/Infinity literals as Python's json writes them
    preds_path.write_text(text)


def _forget_attacked_humans(df):
    gone = set(df[(df["model"] == "human") & (df["attack"] != "none")]["id"])
    return lambda rs: [r for r in rs if r["id"] not in gone]


DEFECTS = {
    "missing ids": (lambda df: _forget_attacked_humans(df), "attacked human rows: 160"),
    "duplicate ids": (lambda df: lambda rs: rs + rs[:3], "3 id(s)"),
    "unknown ids": (lambda df: lambda rs: rs + [{"id": "not-a-raid-id", "score": 0.5}], "not-a-raid-id"),
    "non-numeric scores": (lambda df: lambda rs: [dict(r, score="0.7") if i < 2 else r for i, r in enumerate(rs)],
                           "2 score(s)"),
    "NaN scores": (lambda df: lambda rs: [dict(r, score=float("nan")) if i == 5 else r for i, r in enumerate(rs)],
                   "1 score(s) are NaN"),
    "infinite scores": (lambda df: lambda rs: [dict(r, score=float("inf")) if i == 5 else r
                                               for i, r in enumerate(rs)], "infinite"),
    "inverted scores": (lambda df: lambda rs: [dict(r, score=1 - r["score"]) for r in rs], "negate"),
    "uncalibratable domains": (lambda df: lambda rs: [dict(r, score=round(r["score"] * 3) / 3) for r in rs],
                                                      "quantized"),
    "uncalibratable logits": (lambda df: lambda rs: [dict(r, score=1000 * (r["score"] - 0.5)) for r in rs],
                              "logits"),
}


@pytest.mark.parametrize("defect", list(DEFECTS))
def test_each_seeded_defect_is_one_line_and_exit_2(submission, defect, capsys):
    data, df, preds, meta = submission
    make, expected = DEFECTS[defect]
    _edit(preds, make(df))
    capsys.readouterr()
    assert check(data, preds) == 2
    out = capsys.readouterr().out.splitlines()
    kind = "uncalibratable domains" if defect.startswith("uncalibratable") else defect
    hits = [line for line in out if line.startswith(kind + ":")]
    assert len(hits) == 1 and expected in hits[0], out


def test_metadata_keys_and_folder_name(submission, tmp_path, capsys):
    data, _, preds, meta = submission
    bad = json.loads(meta.read_text())
    bad["detector name"] = bad.pop("detector_name")
    meta.write_text(json.dumps(bad))
    (meta.parent / "results.json").write_text("{}")
    capsys.readouterr()
    assert check(data, preds, meta) == 2
    out = capsys.readouterr().out
    assert "metadata keys: key(s) ['detector name'] are not RAID's" in out
    assert "required key(s) ['detector_name'] are missing" in out
    assert "results.json is in the folder" in out
    odd = tmp_path / 'a "quoted" name'
    odd.mkdir()
    (odd / "metadata.json").write_text(meta.read_text())
    assert check(data, preds, odd / "metadata.json") == 2
    assert "double quote" in capsys.readouterr().out


def test_check_on_the_unlabelled_test_split_says_what_it_cannot_check(tmp_path, plugin, capsys):
    data, df = raid_csv(tmp_path, with_labels=False)
    preds = tmp_path / "p.json"
    assert detect(plugin, data, preds, tmp_path / "r.sqlite") == 0
    capsys.readouterr()
    assert check(data, preds) == 0
    assert "not checked: inverted scores and calibration" in capsys.readouterr().err


def test_evaluate_gives_raids_numbers_and_json(submission, tmp_path, capsys):
    data, df, preds, _ = submission
    out = tmp_path / "results.json"
    capsys.readouterr()
    assert main(["raid", "evaluate", "--predictions", str(preds), "--data", str(data), "--target-fpr", "0.05",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "all domains, every attack: AUROC" in printed and "all domains, no attack" in printed
    ours = json.loads(out.read_text())
    theirs = run_evaluation(json.loads(preds.read_text()), pd.read_csv(data), target_fpr=0.05)
    assert json.loads(json.dumps(theirs, default=float)).keys() == ours.keys()
    for d, t in theirs["thresholds"]["0.05"].items():
        assert ours["thresholds"]["0.05"][d] == pytest.approx(t, abs=1e-9)
        assert ours["fpr"]["0.05"][d] == pytest.approx(theirs["fpr"]["0.05"][d], abs=1e-9)
    assert len(ours["scores"]) == len(theirs["scores"])
    for a, b in zip(ours["scores"], theirs["scores"]):
        assert a["auroc"] == pytest.approx(b["auroc"], abs=1e-9) and a["accuracy"] == b["accuracy"]


def test_evaluate_refuses_unlabelled_data_and_bad_predictions(tmp_path, plugin, capsys):
    data, _ = raid_csv(tmp_path, with_labels=False)
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps([{"id": "x", "score": 0.1}]))
    assert main(["raid", "evaluate", "--predictions", str(preds), "--data", str(data)]) == 2
    assert "labels are hidden" in capsys.readouterr().err
    labelled, _ = raid_csv(tmp_path / "..", with_labels=True)
    preds.write_text(json.dumps([{"id": "x", "score": float("nan")}]))
    assert main(["raid", "evaluate", "--predictions", str(preds), "--data", str(labelled)]) == 2
    err = capsys.readouterr().err
    assert "not finite" in err and err.count("\n") == 1


def test_a_domain_too_small_to_resolve_the_fpr_is_a_note_not_a_problem(tmp_path, plugin, capsys):
    data, df = raid_csv(tmp_path)
    small = df[~((df["model"] == "human") & (df["attack"] == "none") & (df["domain"] == "books")
                 & df["source_id"].isin([f"books-{s}" for s in range(13)]))]  # books keeps 27 clean humans
    small.to_csv(data, index=False)
    preds = tmp_path / "p.json"
    assert detect(plugin, data, preds, tmp_path / "r.sqlite") == 0
    capsys.readouterr()
    assert check(data, preds) == 0
    err = capsys.readouterr().err
    assert "not checkable at FPR 0.05 in 1 domain(s) (books)" in err and "steps of 1/27" in err
