"""RAFT, HMGC and QPA written in a run config: built by name with their detectors and training sets,
trained on the run's own train split, and their detector queries reported in the cost table."""

import pytest

from humanize.benchmarks.runner.attack_spec import align_train_split
from humanize.benchmarks.runner.config import load_config
from humanize._split import group_split, in_train_split

TOML = """
[dataset]
name = "demo"
n = 8

[[attacks]]
name = "raft"
target = "log_likelihood"
max_queries = 30

[[attacks]]
name = "hmgc"
label = "hmgc_matched"
surrogate = "tfidf_lr"
train = "demo"

[[attacks]]
name = "hmgc"
label = "hmgc_mismatched"
surrogate = {name = "tfidf_lr", C = 0.5}
train = {dataset = "demo", domain = "writing", n = 50}

[[attacks]]
name = "qpa"
label = "qpa_hmgc"
attack = {name = "hmgc", surrogate = "tfidf_lr", train = "demo"}

[[detectors]]
name = "tfidf_lr"

[run]
seed = 5
train_fraction = 0.3
"""


def test_config_builds_detector_guided_attacks_on_the_runs_split(tmp_path):
    (tmp_path / "c.toml").write_text(TOML)
    cfg = load_config(tmp_path / "c.toml").validate()
    raft, matched, mismatched, qpa = (s.build(cfg.seed, train_fraction=cfg.train_fraction) for s in cfg.attacks)
    assert (raft.name, raft.target, raft.max_queries, raft.seed) == ("raft", "log_likelihood", 30, 5)
    # a bare dataset name follows the run's split (seed 5, fraction 0.3), so no tested document is trained on
    assert matched.train == {"dataset": "demo", "fraction": 0.3}
    assert mismatched.train == {"dataset": "demo", "domain": "writing", "n": 50, "fraction": 0.3}
    assert mismatched.surrogate == {"name": "tfidf_lr", "C": 0.5}
    inner = qpa.inner()
    assert (inner.name, inner.seed, inner.train) == ("hmgc", 5, {"dataset": "demo", "fraction": 0.3})
    assert qpa.engine()._parts().search.seed == 5


def test_align_train_split_leaves_the_default_fraction_and_explicit_ones_alone():
    assert align_train_split("hmgc", {"train": "demo"}, 0.5) == {"train": "demo"}  # same fingerprint as before
    assert align_train_split("hmgc", {"train": {"dataset": "demo", "fraction": 0.9}}, 0.3)["train"]["fraction"] == 0.9
    assert align_train_split("raft", {"target_train": "demo"}, 0.2) == {"target_train": {"dataset": "demo",
                                                                                  "fraction": 0.2}}
    assert align_train_split("hmgc", {"train": ("texts", "labels")}, 0.2) == {"train": ("texts", "labels")}


def test_the_runner_and_the_training_sets_share_one_split_rule(tmp_path):
    """The runner's test documents are exactly those the shared rule leaves out of the train part."""
    from humanize.attacks.targets import training_set
    from humanize.benchmarks.runner import sample_rows

    (tmp_path / "c.toml").write_text(TOML)
    cfg = load_config(tmp_path / "c.toml").validate()
    cfg.n = 100
    rows = sample_rows(cfg)
    # the runner's split is the grouped rule (issue #22: no text on both sides); a text no other source holds
    # gets its source id's side
    assert rows["split"].tolist() == group_split(rows["source_id"], rows["generation"], 5, 0.3).parts
    once = ~rows["generation"].duplicated(keep=False)
    for split, source in zip(rows.loc[once, "split"], rows.loc[once, "source_id"]):
        assert (split == "train") == in_train_split(source, 5, 0.3)
    hmgc = cfg.attacks[1].build(cfg.seed, train_fraction=cfg.train_fraction)
    texts, _ = training_set(hmgc.train, hmgc.seed)
    tested = set(rows.query("split == 'test' and label == 'machine'")["generation"])
    assert tested and not tested & set(texts)  # no attacked machine text was trained on


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
    from humanize.benchmarks.runner import run

    # surrogate-only importance (weight 1.0: no LM perplexity per word deletion) and the session's SmolLM for the
    # candidates' ranking: the test is about the surrogate's queries in the cost table, not the ranking LM
    db = tmp_path_factory.mktemp("wordsub_run") / "r.sqlite"
    cfg = RunConfig(dataset="demo", n=6, seed=1, n_boot=0, quality=False, db=str(db),
                    attacks=[AttackSpec("hmgc", {"surrogate": "tfidf_lr", "train": {"dataset": "demo", "n": 60},
                                                 "pos": False, "lm": "smollm2-135m-instruct", "weight": 1.0})],
                    detectors=[DetectorSpec("tfidf_lr")])
    return run(cfg, progress=False)


def test_the_cost_table_reports_detector_queries_per_document(tiny_run):
    from humanize.benchmarks.reporting.tables import cost_table

    cost = tiny_run.tables["cost"]
    assert (cost["detector_queries"] >= 1).all()  # at least the surrogate's look at the text
    assert (cost["queries"] >= cost["detector_queries"]).all()
    table = cost_table(cost)
    assert table.loc["hmgc", "detector_queries_per_doc"] == pytest.approx(cost["detector_queries"].mean())
