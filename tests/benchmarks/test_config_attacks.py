"""impose_format and pipeline written in a config (TOML and YAML) become real attacks."""

import pytest

from humanize import attacks
from humanize.attacks import FormatProfile, ImposeFormat, Pipeline
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig, load_config
from humanize.benchmarks.data import load_demo
from humanize.exceptions import ConfigError

PROFILE = {"line_length_values": [40, 60], "line_length_counts": [3, 1], "paragraph_break_rate": 0.5,
           "double_space_rate": 0.25, "curly_quote_rate": 1.0, "dash_rate": 0.5, "em_dash_share": 0.5}

TOML = """
[[attacks]]
name = "impose_format"
label = "human_format"
profile = {fit = "demo", label = "human", domain = "xsum"}

[[attacks]]
name = "impose_format"
rate = [0.5, 1.0]
[attacks.profile]
line_length_values = [40, 60]
line_length_counts = [3, 1]
paragraph_break_rate = 0.5
double_space_rate = 0.25
curly_quote_rate = 1.0
dash_rate = 0.5
em_dash_share = 0.5

[[attacks]]
name = "pipeline"
attacks = [{name = "homoglyph", rate = 0.5}, "whitespace"]

[[detectors]]
name = "tfidf_lr"
"""

YAML = """
attacks:
  - {name: impose_format, label: human_format, profile: {fit: demo, label: human, domain: xsum}}
  - name: impose_format
    rate: [0.5, 1.0]
    profile: {line_length_values: [40, 60], line_length_counts: [3, 1], paragraph_break_rate: 0.5,
              double_space_rate: 0.25, curly_quote_rate: 1.0, dash_rate: 0.5, em_dash_share: 0.5}
  - name: pipeline
    attacks: [{name: homoglyph, rate: 0.5}, whitespace]
detectors: [tfidf_lr]
"""


def test_toml_and_yaml_give_the_same_impose_format_and_pipeline_attacks(tmp_path):
    (tmp_path / "c.toml").write_text(TOML)
    (tmp_path / "c.yaml").write_text(YAML)
    a, b = load_config(tmp_path / "c.toml").validate(), load_config(tmp_path / "c.yaml").validate()
    assert a.to_dict() == b.to_dict()
    labels = [lbl for s in a.attacks for lbl, _ in s.expand()]
    assert labels == ["human_format", "impose_format@0.5", "impose_format@1", "homoglyph@0.5+whitespace"]

    fitted = a.attacks[0].build(seed=7)
    assert isinstance(fitted, ImposeFormat) and fitted.seed == 7
    xsum_humans = load_demo(domain="xsum")
    expected = FormatProfile().fit(xsum_humans[xsum_humans["label"] == "human"]["generation"].tolist())
    assert fitted.profile == expected

    label, params = a.attacks[1].expand()[0]
    by_hand = a.attacks[1].build(seed=7, params=params)
    assert by_hand.profile == FormatProfile.from_dict(PROFILE) and by_hand.rate == 0.5

    pipe = a.attacks[2].build(seed=7)
    assert isinstance(pipe, Pipeline)
    assert [(s.name, s.seed) for s in pipe.attacks] == [("homoglyph", 7), ("whitespace", 7)]
    default_rate = attacks.resolve("whitespace")().rate
    assert pipe.attacks[0].rate == 0.5 and pipe.attacks[1].rate == default_rate  # a step without rate: its default
    text = "The committee said on Tuesday that it would meet again."
    assert pipe(text) == b.attacks[2].build(seed=7)(text)  # same config, same attack


def test_a_pipeline_equals_its_steps_applied_in_order():
    spec = AttackSpec("pipeline", {"attacks": [{"name": "homoglyph", "rate": 0.5}, {"name": "upper_lower",
                                                                                  "rate": 0.3}]})
    text = "Some text about the weather in Paris in early spring."
    step1 = attacks.get("homoglyph", rate=0.5, seed=3)(text)
    assert spec.build(3)(text) == attacks.get("upper_lower", rate=0.3, seed=3)(step1)


def _cfg(attack):
    return RunConfig(attacks=[attack], detectors=[DetectorSpec("tfidf_lr")], quality=False)


@pytest.mark.parametrize("attack, pattern", [
    (AttackSpec("pipeline", {"attacks": ["homoglyph"]}, [0.1, 0.2]), r"'pipeline' has no rate θ of its own"),
    (AttackSpec("blend", {"attacks": ["homoglyph"]}, [0.1, 0.2]), r"'blend' has no rate θ of its own"),
    (AttackSpec("pipeline", {"attacks": "homoglyph"}), r"attacks must be a non-empty list"),
    (AttackSpec("pipeline", {"attacks": []}), r"attacks must be a non-empty list"),
    (AttackSpec("pipeline", {"attacks": ["homoglif"]}), r"unknown attack 'homoglif'"),
    (AttackSpec("pipeline", {"attacks": [{"name": "homoglyph", "rate": [0.1, 0.2]}]}), r"one rate per member"),
    (AttackSpec("pipeline", {"attacks": [{"name": "homoglyph", "rate": 2}]}), r"Homoglyph: rate must be a number in \[0, 1\], got 2 \(int\)"),
    (AttackSpec("pipeline", {"attacks": ["homoglyph"], "mode": 1}), r"'pipeline' has no parameter\(s\) mode"),
    (AttackSpec("pipeline", {"steps": ["homoglyph"]}), r"^attack 'pipeline': 'steps' is now 'attacks'$"),
    (AttackSpec("impose_format", {"profile": "human"}), r"profile must be a table of FormatProfile fields"),
    (AttackSpec("impose_format", {"profile": {**PROFILE, "dash_rate": 2}}), r"dash_rate must be a number in"),
    (AttackSpec("impose_format", {"profile": {"fit": "demo"}}), r"profile label must be 'human' or 'machine'"),
    (AttackSpec("impose_format", {"profile": {"fit": "demoo", "label": "human"}}), r"unknown profile dataset"),
    (AttackSpec("impose_format", {"profile": {"fit": "demo", "label": "human", "domain": "news"}}),
     r"unknown demo domain 'news'"),
    (AttackSpec("impose_format", {"profile": {"fit": "demo", "label": "human", "n": 0}}), r"profile n must be"),
    (AttackSpec("impose_format"), r"profile"),
])
def test_bad_pipeline_and_profile_specs_are_config_errors(attack, pattern):
    with pytest.raises(ConfigError, match=pattern):
        _cfg(attack).validate()


def test_a_profile_fitted_on_n_texts_is_seeded_and_shared_across_a_sweep():
    spec = AttackSpec("impose_format", {"profile": {"fit": "demo", "label": "machine", "n": 30}}, [0.5, 1.0])
    (_, p1), (_, p2) = spec.expand()
    a, b = spec.build(1, p1), spec.build(1, p2)
    assert a.profile is b.profile and a.profile.n_documents_ == 30
    assert spec.build(1, p1).profile == spec.build(1, p1).profile
    assert spec.build(2, p1).profile != a.profile  # another seed samples other texts


def test_run_config_takes_attack_objects_names_and_tables_as_it_takes_detector_objects():
    from humanize.attacks import Homoglyph

    obj = Homoglyph(rate=0.3, seed=5)
    cfg = RunConfig(attacks=[obj, "whitespace", {"name": "pipeline", "attacks": [Homoglyph(rate=0.2), "upper_lower"]}],
                    detectors=[DetectorSpec("tfidf_lr")], quality=False).validate()
    spec = cfg.attacks[0]
    assert spec.obj is obj and spec.expand() == [("homoglyph", {})]
    built = spec.build(seed=99)  # a clone of the object, with its own seed (not the run's)
    assert built is not obj and built.get_params() == obj.get_params() and built.seed == 5
    assert cfg.attacks[1].build(seed=7).seed == 7  # a name: the run's seed
    assert cfg.attacks[2].base_label() == "homoglyph@0.2+upper_lower"  # an object member shows its own θ
    pipe = cfg.attacks[2].build(seed=7)
    assert [a.seed for a in pipe.attacks] == [0, 7]  # the object keeps its seed, the name gets the run's
    stored = cfg.to_dict()["attacks"]
    assert stored[0]["fingerprint"] == obj.fingerprint() and "obj" not in stored[0]
    assert stored[1] == {"name": "whitespace", "params": {}, "rates": None, "label": None}
    other = RunConfig(attacks=[Homoglyph(rate=0.4, seed=5)], detectors=[DetectorSpec("tfidf_lr")], quality=False)
    assert other.validate().key() != RunConfig(attacks=[obj], detectors=[DetectorSpec("tfidf_lr")],
                                               quality=False).validate().key()
