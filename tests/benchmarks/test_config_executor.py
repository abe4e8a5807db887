"""Config keys of the executor seam and of defenses (issues #12 §3, #13 §1): the run id does not
change for configurations without them, and never depends on where the work runs."""

import hashlib
import json

import pytest

from humanize.benchmarks.runner.config import (AttackSpec, DefenseSpec, DetectorSpec, RunConfig, config_from_dict,
                                               config_from_stored, demo_config, load_config)
from humanize.cli.main import build_parser, main
from humanize.cli.run import config_from_args
from humanize.exceptions import ConfigError


def _run_id(cfg):
    return hashlib.blake2b(cfg.key().encode(), digest_size=8).hexdigest()


def _small(**kw):
    return RunConfig(n=16, seed=3, quality=False,
                     attacks=[AttackSpec("homoglyph"), AttackSpec("whitespace", rates=[0.2, 0.8])],
                     detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe", {"C": 0.5})], **kw)


def test_run_ids_of_configs_without_the_new_keys_are_unchanged():
    # ids computed by the runner before executors and defenses existed: existing stores resume
    assert _run_id(_small()) == "b1220cafa9ef8601"
    # the rule-based demo of before issue #24 (its stores resume); the demo now adds model-based attacks
    # and pools its thresholds over domains, a run of its own. Issue #38 changed the demo's perplexity window
    # (one window of the detectors' ids, DEMO_PERPLEXITY_WINDOW; was 0c9fa7b0fb21e97f with 512/384): a new
    # run id, whose attacks and scores are still read from an old store (keyed on their own fingerprints)
    from humanize.attacks import RULE_BASED

    before = demo_config(model_attacks=False, per_domain=True)
    assert [a.name for a in before.attacks] == list(RULE_BASED) and _run_id(before) == "df15cf42e6e77f83"
    assert _run_id(demo_config()) != _run_id(before)


def test_where_the_work_runs_never_enters_the_run_id_but_defenses_do():
    base = _run_id(_small())
    assert _run_id(_small(executor="ray", ray_address="auto", max_retries=5,
                          resources={"model": {"num_cpus": 2, "num_gpus": 0.5}})) == base
    assert _run_id(_small(defenses=[DefenseSpec("normalize")])) != base
    assert _run_id(_small(defenses=[DefenseSpec("normalize", {"quotes": False})])) != \
        _run_id(_small(defenses=[DefenseSpec("normalize")]))


def test_toml_keys_reach_the_config_and_a_stored_config_round_trips(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(
        'defenses = ["normalize"]\n\n[dataset]\nname = "demo"\nn = 10\n\n'
        '[[attacks]]\nname = "homoglyph"\n\n[[detectors]]\nname = "tfidf_lr"\n\n'
        '[run]\nexecutor = "ray"\nray_address = "auto"\nmax_retries = 3\n\n'
        '[resources]\nmodel = {num_cpus = 1, num_gpus = 0.5}\ntfidf_lr = {num_cpus = 2}\n'
    )
    cfg = load_config(path).validate()
    assert (cfg.executor, cfg.ray_address, cfg.max_retries) == ("ray", "auto", 3)
    assert cfg.defenses == [DefenseSpec("normalize")]
    assert cfg.job_resources("tfidf_lr", "model") == {"num_cpus": 2, "num_gpus": 0.5}
    assert cfg.job_resources("homoglyph", "task") == {}
    stored = config_from_stored(json.loads(json.dumps(cfg.to_dict())))
    assert stored == cfg and stored.key() == cfg.key()
    table = config_from_dict({"attacks": ["homoglyph"], "detectors": ["tfidf_lr"],
                              "defenses": [{"name": "normalize", "quotes": False}]})
    assert table.defenses == [DefenseSpec("normalize", {"quotes": False})]
    old = config_from_stored({k: v for k, v in _small().to_dict().items()
                              if k not in ("defenses", "executor", "ray_address", "max_retries", "resources")})
    assert old == _small()  # a config stored before these keys existed


@pytest.mark.parametrize("field, value, match", [
    ("executor", "spark", "executor must be 'local' or 'ray', got 'spark'"),
    ("ray_address", "", "ray_address must be omitted"),
    ("max_retries", -1, "max_retries must be an int >= 0"),
    ("max_retries", True, "max_retries must be an int >= 0"),
    ("resources", [1], "resources must be a table"),
    ("resources", {"model": {"gpus": 1}}, "resources.model: unknown resource 'gpus'; valid: num_cpus, num_gpus"),
    ("resources", {"model": {"num_gpus": -1}}, r"resources.model: num_gpus must be a number >= 0"),
    ("resources", {"model": {"num_gpus": 1.5}}, "must be a whole number"),
    ("resources", {"model": 2}, "each entry is a job name with a table"),
    ("resources", {"tfidf": {"num_cpus": 1}}, r"no job named \['tfidf'\]; valid: task, model, quality"),
])
def test_bad_execution_keys_are_config_errors_naming_the_key(field, value, match):
    with pytest.raises(ConfigError, match=match):
        _small(**{field: value}).validate()


def test_cli_flags_set_executor_and_defenses(capsys):
    args = build_parser().parse_args(["run", "--attack", "homoglyph", "--detector", "tfidf_lr", "--executor", "ray",
                                      "--ray-address", "auto", "--max-retries", "1",
                                      "--defense", "normalize:quotes=false"])
    cfg = config_from_args(args)
    assert (cfg.executor, cfg.ray_address, cfg.max_retries) == ("ray", "auto", 1)
    assert cfg.defenses == [DefenseSpec("normalize", {"quotes": False})]
    plain = config_from_args(build_parser().parse_args(["run", "--attack", "homoglyph"]))
    assert (plain.executor, plain.ray_address, plain.max_retries, plain.defenses) == ("local", None, 2, [])
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--executor", "spark"])
    capsys.readouterr()
    assert main(["list", "defenses"]) == 0
    assert capsys.readouterr().out.startswith("normalize ")


def test_cli_run_with_a_defense_reports_it(tmp_path, capsys):
    db = str(tmp_path / "r.sqlite")
    code = main(["run", "--attack", "homoglyph", "--detector", "surface_probe", "--n", "6", "--no-quality",
                 "--defense", "normalize", "--db", db, "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "normalize" in out
    from humanize.benchmarks.runner.store import ResultsStore

    with ResultsStore(db, readonly=True) as store:
        assert set(store.run_tables()["metrics"]["defense"]) == {"none", "normalize"}
