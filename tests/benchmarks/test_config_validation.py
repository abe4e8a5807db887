"""Run configurations: every field's type and range is checked before any work, with a
ConfigError naming the field, the value and what is allowed (TOML and YAML alike)."""

import pytest

from humanize._split import sampling_seed
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig, config_from_dict, load_config
from humanize.exceptions import ConfigError


def _ok(**kw):
    base = dict(attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("tfidf_lr")], quality=False)
    base.update(kw)
    return RunConfig(**base)


def _from(text: str, tmp_path, suffix=".toml"):
    path = tmp_path / f"c{suffix}"
    path.write_text(text)
    return load_config(path)


BASE_TOML = '[[attacks]]\nname = "homoglyph"\n\n[[detectors]]\nname = "tfidf_lr"\n\n'


@pytest.mark.parametrize("field, value, pattern", [
    ("batch_size", 0, r"batch_size must be an int >= 1, got 0 \(int\)"),
    ("batch_size", -1, r"batch_size must be an int >= 1, got -1"),
    ("batch_size", "x", r"batch_size must be an int >= 1, got 'x' \(str\)"),
    ("batch_size", True, r"batch_size must be an int >= 1, got True \(bool\)"),
    ("fprs", 0.05, r"fprs must be a non-empty list .* got 0.05 \(float\)"),
    ("fprs", ["0.05"], r"every fprs entry must be a number in \(0, 1\), got '0.05' \(str\)"),
    ("fprs", [], r"fprs must be a non-empty list"),
    ("fprs", [0.05, 1.0], r"every fprs entry must be a number in \(0, 1\), got 1.0"),
    ("quality", "yes", r"quality must be true or false, got 'yes' \(str\)"),
    ("dataset", 5, r"dataset must be a dataset name \(str\), got 5 \(int\)"),
    ("db", 5, r"db must be the path of the results database \(str\), got 5 \(int\)"),
    ("db", "", r"db must be the path"),
    ("train_fraction", "0.5", r"train_fraction must be a number in \(0, 1\), got '0.5' \(str\)"),
    ("train_fraction", 1.0, r"train_fraction must be a number in \(0, 1\), got 1.0"),
    ("per_domain", "no", r"per_domain must be true or false, got 'no' \(str\)"),
    ("device", 0, r"device must be a device name .* got 0 \(int\)"),
    ("device", "gpu9", r"device: unknown device 'gpu9'"),
    ("n", 1, r"n must be an int >= 2"),
    ("n", 2.5, r"n must be an int >= 2 .* got 2.5 \(float\)"),
    ("n", True, r"n must be an int >= 2 .* got True \(bool\)"),
    ("seed", "a", r"seed must be an int \(any size or sign\), got 'a' \(str\)"),
    ("seed", 1.0, r"seed must be an int .* got 1.0 \(float\)"),
    ("seed", False, r"seed must be an int .* got False \(bool\)"),
    ("filters", ["domain"], r"filters must be a table"),
    ("filters", {"domian": "xsum"}, r"dataset 'demo' takes no filter\(s\) \['domian'\]; valid: domain, model"),
    ("quality_lm", 3, r"quality_lm must be a model name"),
    ("attacks", "homoglyph", r"attacks must be a list of attack names or tables, got 'homoglyph'"),
    ("detectors", {"name": "tfidf_lr"}, r"detectors must be a list"),
    ("n_boot", 1, r"n_boot must be an int >= 2 \(bootstrap replicates\), or 0 for no intervals, got 1"),
    ("n_boot", "1000", r"n_boot must be an int >= 2 .* got '1000' \(str\)"),
    ("confidence", 95, r"confidence must be a number in \(0, 1\)"),
    ("confidence", "0.95", r"confidence must be a number in \(0, 1\), e.g. 0.95, got '0.95' \(str\)"),
])
def test_every_field_is_type_and_range_checked(field, value, pattern):
    cfg = _ok(**{field: value})
    with pytest.raises(ConfigError, match=pattern):
        cfg.validate()


@pytest.mark.parametrize("seed", [-1, 0, 2**32, 2**70, -(2**70)])
def test_any_int_seed_is_valid_and_maps_to_a_sampling_seed(seed):
    _ok(seed=seed).validate()
    s = sampling_seed(seed)
    assert isinstance(s, int) and 0 <= s < 2**32
    assert s == sampling_seed(seed)
    if 0 <= seed < 2**32:
        assert s == seed  # seeds numpy takes are used as given: existing results stay reproducible


@pytest.mark.parametrize("snippet, pattern", [
    ('[run]\nbatch_size = 0\n', r"batch_size must be an int >= 1, got 0"),
    ('[run]\nbatch_size = "x"\n', r"batch_size must be an int >= 1, got 'x'"),
    ('[run]\nfprs = 0.05\n', r"fprs must be a non-empty list .* got 0.05"),
    ('[run]\nfprs = ["0.05"]\n', r"every fprs entry must be a number .* got '0.05'"),
    ('[run]\nper_domain = "no"\n', r"per_domain must be true or false, got 'no'"),
    ('[run]\ntrain_fraction = "0.5"\n', r"train_fraction must be a number"),
    ('[run]\ndb = 5\n', r"db must be the path"),
    ('[run]\nseed = "a"\n', r"seed must be an int"),
    ('[run]\ndevice = 1\n', r"device must be a device name"),
    ('quality = "yes"\n', r"quality must be true or false, got 'yes'"),
    ('[quality]\nenabled = "yes"\n', r"quality must be true or false, got 'yes'"),
    ('dataset = 5\n', r"dataset must be a dataset name \(str\), got 5"),
    ('[dataset]\nname = "demo"\nn = "10"\n', r"n must be an int >= 2 .* got '10'"),
    ('[dataset]\nname = "demo"\nfilters = 3\n', r"\[dataset\] filters must be a table"),
])
def test_toml_values_of_the_wrong_type_fail_before_any_work(snippet, pattern, tmp_path):
    with pytest.raises(ConfigError, match=pattern):
        _from(snippet + BASE_TOML if not snippet.startswith("[") else BASE_TOML + snippet, tmp_path).validate()


def test_attack_and_detector_lists_of_the_wrong_shape_are_named(tmp_path):
    with pytest.raises(ConfigError, match=r"attacks must be a list .* got 'homoglyph' .*attacks = \[\"homoglyph\"\]"):
        _from('attacks = "homoglyph"\n[[detectors]]\nname = "tfidf_lr"\n', tmp_path)
    with pytest.raises(ConfigError, match=r"detectors must be a list .*single \[detectors\] table.*\[\[detectors\]\]"):
        _from('[[attacks]]\nname = "homoglyph"\n[detectors]\nname = "tfidf_lr"\n', tmp_path)
    with pytest.raises(ConfigError, match=r"every rate must be a number in \[0, 1\], got 'x' \(str\)"):
        _from('[[attacks]]\nname = "homoglyph"\nrate = [0.1, "x"]\n[[detectors]]\nname = "tfidf_lr"\n',
              tmp_path).validate()
    with pytest.raises(ConfigError, match=r"rate must be a number or a non-empty list"):
        _ok(attacks=[AttackSpec("homoglyph", rates=[])]).validate()
    with pytest.raises(ConfigError, match=r"attack name must be a non-empty str, got 5"):
        config_from_dict({"attacks": [{"name": 5}], "detectors": ["tfidf_lr"]}).validate()
    with pytest.raises(ConfigError, match=r"detector 'tfidf_lr': .*C"):
        _ok(detectors=[DetectorSpec("tfidf_lr", {"C": "big"})]).validate()
    with pytest.raises(ConfigError, match=r"\[run\] must be a table"):
        config_from_dict({"run": 3})


def test_yaml_gets_the_same_checks(tmp_path):
    base = "attacks: [homoglyph]\ndetectors: [tfidf_lr]\n"
    with pytest.raises(ConfigError, match=r"per_domain must be true or false, got 'no'"):
        _from(base + "run: {per_domain: 'no'}\n", tmp_path, ".yaml").validate()
    with pytest.raises(ConfigError, match=r"attacks must be a list .* got 'homoglyph'"):
        _from("attacks: homoglyph\ndetectors: [tfidf_lr]\n", tmp_path, ".yaml")
    cfg = _from(base + "run: {per_domain: false, seed: -5}\n", tmp_path, ".yaml").validate()
    assert cfg.per_domain is False and cfg.seed == -5


def test_attack_labels_must_be_unique_and_not_the_clean_label():
    with pytest.raises(ConfigError, match=r"attack label 'homoglyph' is also homoglyph's label"):
        _ok(attacks=[AttackSpec("homoglyph"), AttackSpec("homoglyph", {}, [0.3])]).validate()
    with pytest.raises(ConfigError, match=r"'none' is the clean rows' label"):
        _ok(attacks=[AttackSpec("homoglyph", label="none")]).validate()
    _ok(attacks=[AttackSpec("homoglyph"), AttackSpec("homoglyph", {}, [0.3], label="hg30")]).validate()


def test_an_unknown_attack_lists_pipeline_too():
    with pytest.raises(ConfigError, match=r"unknown attack 'homoglif'; available: .*homoglyph.*pipeline"):
        _ok(attacks=[AttackSpec("homoglif")]).validate()


def test_config_paths_of_the_wrong_type_or_encoding(tmp_path):
    with pytest.raises(ConfigError, match=r"config path must be a str or path, got 5 \(int\)"):
        load_config(5)
    with pytest.raises(ConfigError, match=r"is not a file"):
        load_config(tmp_path)
    bad = tmp_path / "c.yaml"
    bad.write_bytes(b"run: {seed: \xff}\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: not UTF-8 text"):
        load_config(bad)


def test_quality_arguments_are_checked_by_the_meter():
    with pytest.raises(ConfigError, match=r"\[quality\]: QualityMeter: unknown meters \['nope'\]"):
        _ok(quality=True, quality_params={"meters": ["nope"]}).validate()
    with pytest.raises(ConfigError, match=r"quality_lm must be a model name \(str\), got ''"):
        _ok(quality=True, quality_lm="").validate()
    with pytest.raises(ConfigError, match=r"unknown \[quality\] key\(s\) \['strides'\]"):
        _ok(quality=True, quality_params={"strides": 3}).validate()


def test_bootstrap_settings_come_from_the_run_section(tmp_path):
    cfg = _from(BASE_TOML + "[run]\nn_boot = 0\nconfidence = 0.9\n", tmp_path).validate()
    assert (cfg.n_boot, cfg.confidence) == (0, 0.9)
    with pytest.raises(ConfigError, match="n_boot must be"):
        _from(BASE_TOML + "[run]\nn_boot = -5\n", tmp_path).validate()


def test_the_resources_table_check_and_its_old_name():
    from humanize.benchmarks.runner import run_specs
    from humanize.exceptions import ConfigError

    run_specs.check_resources_table({"detect": {"num_cpus": 1}})
    with pytest.raises(ConfigError, match=r"resources\.detect: unknown resource 'cpus'"):
        run_specs.check_resources_table({"detect": {"cpus": 1}})
    with pytest.raises(ConfigError, match="each entry is a job name"):
        run_specs.check_resources_table({"detect": 1})
