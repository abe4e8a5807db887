"""One spec grammar (issue #36 item 1): a name, ``NAME:K=V,...``, a table or an object name the same component in
a config, a composite's members and on the command line (:func:`humanize._registry.parse_spec`)."""
from __future__ import annotations

import pytest

from humanize._registry import Spec, parse_spec
from humanize.attacks import Blend, Homoglyph, Pipeline, Whitespace
from humanize.benchmarks.runner.config import AttackSpec, RunConfig, attack_spec, defense_spec, detector_spec
from humanize.exceptions import ConfigError, InvalidParameterError


def test_a_string_and_a_table_are_one_spec():
    as_string = parse_spec("homoglyph:rate=0.5,seed=3")
    assert as_string == Spec("homoglyph", {"rate": 0.5, "seed": 3})
    assert parse_spec({"name": "homoglyph", "rate": 0.5, "seed": 3}) == as_string
    assert parse_spec({"name": "homoglyph", "params": {"rate": 0.5}, "seed": 3}) == as_string
    # values are JSON where they parse; a comma inside brackets or quotes does not split
    assert parse_spec('pipeline:attacks=["homoglyph","whitespace:rate=0.2"],label="a,b"') == Spec(
        "pipeline", {"attacks": ["homoglyph", "whitespace:rate=0.2"], "label": "a,b"})
    assert parse_spec("my_pkg.attacks:Swap:rate=1") == Spec("my_pkg.attacks:Swap", {"rate": 1})
    obj = Homoglyph()
    assert parse_spec(obj, "attack", objects=Homoglyph).obj is obj


@pytest.mark.parametrize("bad, message", [
    ("homoglyph:rate=0.5,seed", "expected NAME or NAME:KEY=VALUE"),
    ({"rate": 0.5}, "an attack given as a table needs a 'name'"),
    ({"name": "homoglyph", "params": [1]}, "params must be a table"),
])
def test_a_bad_spec_is_one_clear_error_in_the_callers_vocabulary(bad, message):
    with pytest.raises(ConfigError, match=message):
        attack_spec(bad)
    with pytest.raises(InvalidParameterError, match=f"^Pipeline: .*{message}"):
        Pipeline([bad]).steps()


def test_config_entries_members_and_cli_arguments_build_the_same_attack():
    by_string = attack_spec("homoglyph:rate=0.5,label=h")
    by_table = attack_spec({"name": "homoglyph", "rate": 0.5, "label": "h"})
    assert by_string == by_table == AttackSpec("homoglyph", {}, [0.5], "h")
    assert by_string.build(1, by_string.expand()[0][1]).fingerprint() == Homoglyph(rate=0.5, seed=1).fingerprint()
    with pytest.raises(ConfigError, match="each attack is a name, NAME:KEY=VALUE,..., a table with 'name' or an "
                                          "Attack object, got 3"):
        attack_spec(3)
    member = Pipeline(["homoglyph:rate=0.5", {"name": "whitespace", "params": {"rate": 0.2}}])
    assert member.fingerprint() == Pipeline([Homoglyph(rate=0.5), Whitespace(rate=0.2)]).fingerprint()
    assert detector_spec("tfidf_lr:C=2,label=t") == detector_spec({"name": "tfidf_lr", "C": 2, "label": "t"})
    assert defense_spec("normalize") == defense_spec({"name": "normalize"})
    cfg = RunConfig(attacks=["homoglyph:rate=0.5", Whitespace(rate=0.2)], detectors=["tfidf_lr"],
                    defenses=["normalize"], quality=False).validate()
    assert [lbl for s in cfg.attacks for lbl, _ in s.expand()] == ["homoglyph", "whitespace"]


def test_a_rate_sweep_skips_every_attack_without_a_rate_of_its_own_whatever_its_name(tmp_path):
    from humanize.cli.main import build_parser
    from humanize.cli.run import config_from_args

    assert not attack_spec("blend:attacks=[\"homoglyph\"]").has_rate() and not AttackSpec.of(Blend(["homoglyph"])).has_rate()
    assert attack_spec("homoglyph").has_rate()
    args = build_parser().parse_args(["run", "--attack", 'blend:attacks=["homoglyph","whitespace"]', "--attack",
                                      "upper_lower", "--detector", "tfidf_lr", "--rates", "0.1", "0.5"])
    cfg = config_from_args(args).validate()
    assert [lbl for s in cfg.attacks for lbl, _ in s.expand()] == ["blend", "upper_lower@0.1", "upper_lower@0.5"]
    args = build_parser().parse_args(["run", "--attack", "homoglyph:rate=0.2", "--detector", "tfidf_lr",
                                      "--rates", "0.1"])
    with pytest.raises(ConfigError, match="sets rate=0.2 and --rates 0.1 would replace it"):
        config_from_args(args)
