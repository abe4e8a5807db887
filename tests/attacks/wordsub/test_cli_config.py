"""The runner's attack specs and the CLI select the word-substitution attacks by name, with parameters."""
import json


def test_cli_runs_synonym_by_name_with_parameters(capsys):
    from humanize.cli.main import main

    text = "The minister said the plan would help families who struggle to pay their bills."
    assert main(["attack", "synonym:rate=1.0,context_margin=3.0", text, "--seed", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["attack"] == "synonym" and out["edits"]
    rebuilt, pos = [], 0
    for s, e, r in out["edits"]:
        rebuilt += [text[pos:s], r]
        pos = e
    assert "".join(rebuilt) + text[pos:] == out["text"] != text


def test_config_specs_build_synonym_and_a_qpa_rate_sweep():
    from humanize.benchmarks.runner.attack_spec import AttackSpec

    spec = AttackSpec(name="qpa", rates=[0.2, 0.4], params={"attack": "synonym"})
    built = [(label, spec.build(3, p)) for label, p in spec.expand()]
    assert [label for label, _ in built] == ["qpa@0.2", "qpa@0.4"]
    assert [(a.engine().rate, a.engine().seed, a.engine().name) for _, a in built] == [
        (0.2, 3, "synonym"), (0.4, 3, "synonym")]
    syn = AttackSpec(name="synonym", params={"max_share": 0.4}).build(7)
    assert (syn.seed, syn.max_share, syn.rate) == (7, 0.4, 0.5)
