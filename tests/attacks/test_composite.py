"""Pipeline and Blend share one composite base (issue #21): members as objects, names or tables, alike."""

import pytest

from humanize import attacks
from humanize.attacks import Blend, Homoglyph, Pipeline, Whitespace
from humanize.attacks.composite import CompositeAttack
from humanize.exceptions import InvalidParameterError

TEXT = "The quick brown fox jumps over the lazy dog. It was not amused at all. Then it left."


def test_pipeline_is_registered_and_built_by_name_like_any_attack():
    assert "pipeline" in attacks.available() and attacks.origin("pipeline") == "built in"
    assert issubclass(Pipeline, CompositeAttack) and issubclass(Blend, CompositeAttack)
    by_name = attacks.get("pipeline", attacks=["homoglyph", {"name": "whitespace", "rate": 0.3, "seed": 2}])
    objects = Pipeline([Homoglyph(), Whitespace(rate=0.3, seed=2)])
    assert isinstance(by_name, Pipeline)
    assert by_name.apply(TEXT).text == objects.apply(TEXT).text != TEXT
    assert by_name.fingerprint() == objects.fingerprint()
    assert [n for n, _ in by_name.named_attacks()] == ["homoglyph", "whitespace"]


@pytest.mark.parametrize("cls", [Pipeline, Blend])
def test_both_composites_take_members_the_same_way(cls):
    built = cls(["homoglyph", {"name": "whitespace", "rate": 0.5}])
    assert built.get_params()["whitespace__rate"] == 0.5
    built.set_params(homoglyph__rate=0.2)  # a member given by name becomes that object, set
    assert isinstance(built.attacks[0], Homoglyph) and built.attacks[0].rate == 0.2
    assert built.fingerprint() == cls([Homoglyph(rate=0.2), Whitespace(rate=0.5)]).fingerprint()
    with pytest.raises(ValueError, match="unknown attack 'no_such'"):
        cls(["no_such"])
    with pytest.raises(ValueError, match=f"^{cls.__name__}: an attack given as a table needs a 'name'"):
        cls([{"rate": 0.5}])
    with pytest.raises(ValueError, match="whitespace' has no parameter"):
        cls([{"name": "whitespace", "strength": 2}])


def test_config_pipeline_table_builds_the_registered_component():
    from humanize.benchmarks.runner.attack_spec import attack_spec

    spec = attack_spec({"name": "pipeline", "attacks": ["homoglyph", {"name": "whitespace", "rate": 0.3}]})
    pipe = spec.build(seed=4)
    assert type(pipe) is attacks.resolve("pipeline")
    assert [(a.name, a.seed) for a in pipe.attacks] == [("homoglyph", 4), ("whitespace", 4)]
    assert spec.base_label() == "homoglyph+whitespace@0.3"


def test_cli_list_shows_the_pipeline(capsys):
    from humanize.cli.main import main

    assert main(["list", "attacks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split()[0] == "pipeline" and "Apply attacks in order" in line for line in lines)


def test_a_member_table_reads_as_a_config_file_writes_it():
    """One grammar: ``{name, params = {...}, **params}`` in a config file and among a composite's members."""
    inline = attacks.get("pipeline", attacks=[{"name": "homoglyph", "rate": 0.3}, "whitespace"])
    nested = attacks.get("pipeline", attacks=[{"name": "homoglyph", "params": {"rate": 0.3}}, "whitespace"])
    assert nested.steps()[0].rate == 0.3 and nested.fingerprint() == inline.fingerprint()
    with pytest.raises(InvalidParameterError, match=r"Pipeline: attack 'homoglyph': params must be a table"):
        attacks.get("pipeline", attacks=[{"name": "homoglyph", "params": 0.3}])
    with pytest.raises(ValueError, match=r"^attack 'pipeline': 'steps' is now 'attacks'$"):
        attacks.get("pipeline", steps=["homoglyph"])
