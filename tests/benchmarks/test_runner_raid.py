"""The runner on RAID rows: the dataset's own attacked rows as given, the human texts attacked as RAID
does, and protocol "raid" (RAID's evaluator's figures, checked against raid-bench on the run's scores)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from raid import run_evaluation

from humanize.benchmarks.runner import run
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig, load_config
from humanize.detectors import FunctionDetector
from humanize.exceptions import ConfigError

WORDS = ["the", "river", "model", "quiet", "signal", "harbor", "ancient", "system", "evening", "measure", "a", "of"]


def commas(texts):
    """Machine-like with commas, a little by length and by a stable hash (continuous, so RAID's search lands)."""
    import zlib

    return [0.5 * ("," in t) + 0.3 * min(len(t), 400) / 400 + 0.2 * (zlib.crc32(t.encode()) % 997) / 997
            for t in texts]


@pytest.fixture(scope="module")
def raid_file(tmp_path_factory):
    rng = np.random.default_rng(3)
    rows = []
    for d in ("news", "books"):
        for s in range(30):
            for model in ("human", "gpt2"):
                n = int(rng.integers(10, 30))
                text = " ".join(rng.choice(WORDS, n)) + ("." if model == "human" else ", indeed, and so on.")
                base = f"{d}-{s}-{model}"
                for a, t in (("none", text), ("upper_lower", text.upper()), ("whitespace", text.replace(" ", "  "))):
                    rows.append(dict(id=f"{base}-{a}", adv_source_id=f"{base}-none", source_id=f"{d}-{s}",
                                     model=model, decoding=None if model == "human" else "greedy",
                                     repetition_penalty=None if model == "human" else "no", attack=a, domain=d,
                                     title=None, prompt=None, generation=t))
    path = tmp_path_factory.mktemp("raid_run") / "train.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def config(raid_file, tmp_path, **kw):
    return RunConfig(dataset="raid", filters={"path": str(raid_file)}, n=None, seed=0, quality=False, n_boot=0,
                     detectors=[FunctionDetector(commas, name="commas", fn_version="1")],
                     db=str(tmp_path / "r.sqlite"), fprs=(0.05,), **kw)


def raid_check(result, raid_file):
    """RAID's evaluator on the run's own (undefended) scores equals the run's protocol-raid figures."""
    scores = result.tables["scores"]
    scores = scores[scores["defense"] == "none"]
    data = pd.read_csv(raid_file)
    return scores, data


def test_as_given_scores_the_datasets_attacked_rows_and_raid_protocol_matches_raids_evaluator(raid_file, tmp_path):
    result = run(config(raid_file, tmp_path, attacks="as-given", protocol="raid"), progress=False)
    assert result.work["attacked"] == 0  # nothing re-attacked
    scores = result.tables["scores"]
    test_ids = set(scores[scores["attack"] == "none"]["id"])
    # every attacked row of a test document, human and machine, as given (RAID's own ids)
    data = pd.read_csv(raid_file)
    given = data[(data["attack"] != "none") & data["adv_source_id"].isin(test_ids)]
    assert set(scores[scores["attack"] != "none"]["id"]) == set(given["id"])
    assert (scores[scores["attack"] != "none"]["label"] == "human").sum() == (given["model"] == "human").sum() > 0
    # RAID's evaluator on exactly these rows and scores
    rows = data[data["id"].isin(set(scores["id"]))].drop(columns=["generation"])
    preds = scores[["id", "score"]].to_dict(orient="records")
    theirs = run_evaluation(preds, rows, target_fpr=0.05)
    metrics = result.tables["metrics"]
    assert set(metrics["protocol"]) == {"raid"}
    slices = result.tables["raid_slices"]
    for rec in theirs["scores"]:
        if rec["domain"] == rec["model"] == rec["decoding"] == rec["repetition_penalty"] == "all":
            if rec["attack"] == "all":
                head = slices[(slices[["domain", "attack", "model", "decoding", "repetition_penalty"]] == "all")
                              .all(axis=1)]
                assert head["auroc"].iloc[0] == pytest.approx(rec["auroc"], abs=1e-9)
                continue
            got = metrics[(metrics["attack"] == rec["attack"]) & (metrics["metric"] == "auroc")]["value"]
            assert got.iloc[0] == pytest.approx(rec["auroc"], abs=1e-9)
            acc = rec["accuracy"]["0.05"]
            tpr = metrics[(metrics["attack"] == rec["attack"]) & (metrics["metric"] == "tpr")].iloc[0]
            assert (acc is None) == (not tpr["reached"])
            if acc is not None:
                assert tpr["value"] == pytest.approx(acc["accuracy"], abs=1e-9)
    assert len(slices) == len(theirs["scores"])


def test_attack_human_attacks_and_scores_the_human_texts_too(raid_file, tmp_path):
    plain = run(config(raid_file, tmp_path, attacks=[AttackSpec("upper_lower")]), progress=False)
    both = run(config(raid_file, tmp_path, attacks=[AttackSpec("upper_lower")], attack_human=True,
                      protocol="raid"), progress=False)
    assert plain.run_id != both.run_id
    s_plain, s_both = plain.tables["scores"], both.tables["scores"]
    attacked_humans = s_both[(s_both["attack"] == "upper_lower") & (s_both["label"] == "human")]
    assert len(attacked_humans) == (s_both[s_both["attack"] == "none"]["label"] == "human").sum() > 0
    assert (s_plain[s_plain["attack"] == "upper_lower"]["label"] == "machine").all()
    # the cost table stays the attack's cost on machine texts
    assert set(both.tables["cost"]["id"]) == set(plain.tables["cost"]["id"])
    # our protocol ignores attacked human rows; RAID's AUROC counts them, so the two runs' AUROCs differ there
    m = both.tables["metrics"]
    assert set(m["metric"]) == {"auroc", "tpr"} and m.attrs.get("protocol", "raid") == "raid"


def test_defaults_keep_existing_run_ids(raid_file, tmp_path):
    cfg = config(raid_file, tmp_path, attacks=[AttackSpec("upper_lower")])
    key = json.loads(cfg.key())
    assert not {"protocol", "attack_human", "given_attacks"} & set(key)
    assert {"protocol", "attack_human", "given_attacks"} <= set(cfg.to_dict())


def test_config_file_and_bad_values(tmp_path, raid_file):
    path = tmp_path / "raid.toml"
    path.write_text(f'attacks = "as-given"\ndetectors = ["surface_probe"]\n[dataset]\nname = "raid"\n'
                    f'path = "{raid_file}"\n[run]\nprotocol = "raid"\n')
    cfg = load_config(path)
    assert cfg.given_attacks and cfg.attacks == [] and cfg.protocol == "raid"
    cfg.validate()
    for bad, match in ((dict(protocol="RAID"), "protocol"), (dict(attack_human="yes"), "attack_human")):
        with pytest.raises(ConfigError, match=match):
            RunConfig(attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("surface_probe")], **bad).validate()
    with pytest.raises(ConfigError, match="as-given"):
        RunConfig(attacks="as-given", attack_human=True, detectors=[DetectorSpec("surface_probe")]).validate()


def test_as_given_on_a_dataset_without_attacked_rows_says_so(tmp_path):
    cfg = RunConfig(dataset="demo", n=10, attacks="as-given", detectors=[DetectorSpec("surface_probe")],
                    quality=False, n_boot=0, db=str(tmp_path / "r.sqlite"))
    with pytest.raises(ConfigError, match="as-given"):
        run(cfg, progress=False)


def test_export_format_raid_writes_predictions_of_the_rows_with_raid_ids(raid_file, tmp_path):
    from humanize.cli.main import main

    cfg = config(raid_file, tmp_path, attacks="as-given")
    result = run(cfg, progress=False)
    out = tmp_path / "export"
    assert main(["export", "--db", cfg.db, "--format", "raid", "--out", str(out)]) == 0
    preds = json.loads((out / "predictions.json").read_text())
    scores = result.tables["scores"]
    assert {p["id"] for p in preds} == set(scores["id"]) and len(preds) == len(scores)
    data = pd.read_csv(raid_file)
    assert {p["id"] for p in preds} <= set(data["id"])
    # a run whose attacks are ours: only the clean rows carry RAID ids
    cfg2 = config(raid_file, tmp_path, attacks=[AttackSpec("upper_lower")])
    cfg2.db = str(tmp_path / "r2.sqlite")
    result2 = run(cfg2, progress=False)
    assert main(["export", "--db", cfg2.db, "--format", "raid", "--out", str(tmp_path / "e2")]) == 0
    preds2 = json.loads((tmp_path / "e2" / "predictions.json").read_text())
    clean = result2.tables["scores"]
    assert {p["id"] for p in preds2} == set(clean[clean["attack"] == "none"]["id"])


def test_run_from_the_command_line(raid_file, tmp_path, capsys):
    from humanize.cli.main import main

    db = str(tmp_path / "cli.sqlite")
    argv = ["run", "--dataset", "raid", "--filter", f"path={json.dumps(str(raid_file))}", "--detector", "surface_probe",
            "--attacks-as-given", "--protocol", "raid", "--no-quality", "--db", db, "--quiet"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "raid_headline" in out and "RAID's own search" in out
    assert main([*argv, "--attack", "homoglyph"]) == 2
    assert "as-given" in capsys.readouterr().err


def _apply(original, edits):
    out, pos = [], 0
    for start, end, replacement in edits:
        out += [original[pos:start], replacement]
        pos = end
    return "".join(out) + original[pos:]


def test_documents_show_the_given_rows_beside_their_sources_and_the_attacked_humans(raid_file, tmp_path):
    from humanize.benchmarks.reporting.documents import run_documents
    from humanize.benchmarks.runner.store import ResultsStore

    cfg = config(raid_file, tmp_path, attacks="as-given")
    result = run(cfg, progress=False)
    with ResultsStore(cfg.db, readonly=True) as store:
        docs = run_documents(store)
    given = docs[docs["attack"] != "none"]
    scored = result.tables["scores"]
    assert set(zip(given["attack"], given["id"])) == set(zip(scored[scored["attack"] != "none"]["attack"],
                                                          scored[scored["attack"] != "none"]["id"]))
    assert all(_apply(o, e) == t for o, e, t in zip(given["original"], given["edits"], given["text"]))
    assert (given["original"] != given["text"]).all()  # beside their clean source, not themselves
    cfg2 = config(raid_file, tmp_path, attacks=[AttackSpec("upper_lower")], attack_human=True)
    cfg2.db = str(tmp_path / "h.sqlite")
    run(cfg2, progress=False)
    with ResultsStore(cfg2.db, readonly=True) as store:
        docs = run_documents(store)
    attacked = docs[docs["attack"] == "upper_lower"]
    assert set(attacked["label"]) == {"human", "machine"}


def test_raid_predictions_of_several_detectors_get_one_file_each(tmp_path):
    from humanize.benchmarks.reporting.export import export_raid_predictions

    scores = pd.DataFrame({"detector": ["a/b", "a/b", "Mine Det"], "id": ["x", "y", "x"], "attack": "none",
                           "adv_source_id": ["x", "y", "x"], "defense": "none", "score": [0.1, 0.2, 0.3]})
    paths = export_raid_predictions(scores, tmp_path)
    assert len(paths) == 2 and all(p.parent == tmp_path and p.name.startswith("predictions-") for p in paths)
    assert [len(json.loads(p.read_text())) for p in paths] == [2, 1]
