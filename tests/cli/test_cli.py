"""The command line: help on every command, clear errors, the commands run."""

import json
import subprocess
import sys

import pytest

from humanize.cli.main import build_parser, main

COMMANDS = ["demo", "run", "report", "plot", "tour", "attack", "list", "audit", "ars", "card", "export", "runs", "prepare"]


def test_every_command_module_is_registered():
    """Commands in humanize/cli/<name>.py are found without an edit of main.py."""
    names = set(build_parser()._subparsers._group_actions[0].choices)
    assert set(COMMANDS) <= names


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    assert "usage: humanize-bench " + command in capsys.readouterr().out


def test_console_script_is_installed():
    out = subprocess.run([sys.executable, "-m", "humanize.cli.main", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "humanize-bench" in out.stdout


def test_attack_command_prints_text_and_exact_edits(capsys):
    assert main(["attack", "homoglyph:rate=1.0", "Hello", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["text"][0] in "НΗ" and data["text"][1:] == "еllо"  # Cyrillic/Greek look-alikes
    assert data["attack"] == "homoglyph" and data["edits"]


def test_unknown_names_fail_with_the_valid_names(capsys):
    assert main(["attack", "homoglif", "x"]) == 2
    assert "unknown attack 'homoglif'" in capsys.readouterr().err
    code = main(["run", "--attack", "homoglyph", "--detector", "nope", "--quiet"])
    assert code == 2
    assert "unknown detector 'nope'" in capsys.readouterr().err


def test_unavailable_models_and_datasets_are_clear_errors_not_tracebacks(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code = main(["run", "--attack", "upper_lower", "--detector", "log_likelihood:model=no-such-org/no-such-model",
                 "--n", "6", "--no-quality", "--db", str(tmp_path / "r.sqlite"), "--quiet"])
    assert code == 2
    assert "no-such-org/no-such-model" in capsys.readouterr().err
    code = main(["run", "--dataset", "raid", "--filter", f"path={tmp_path / 'missing.csv'}", "--attack", "upper_lower",
                 "--detector", "tfidf_lr", "--n", "6", "--db", str(tmp_path / "r2.sqlite"), "--quiet"])
    assert code == 2
    assert "missing.csv" in capsys.readouterr().err


def test_list_commands(capsys):
    for what in ("attacks", "detectors", "datasets"):
        assert main(["list", what]) == 0
    out = capsys.readouterr().out
    assert "zero_width_space" in out and "log_likelihood" in out and "demo" in out


def test_list_meters_names_every_built_in_meter(capsys):
    from humanize.quality import METERS, OPTIONAL_METERS

    assert main(["list", "meters"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert listed == set(METERS + OPTIONAL_METERS)


def test_run_report_and_plot_from_the_shell(tmp_path, capsys):
    db = str(tmp_path / "r.sqlite")
    assert main(["run", "--attack", "upper_lower", "--attack", "homoglyph", "--detector", "tfidf_lr",
                 "--n", "12", "--no-quality", "--db", db, "--quiet"]) == 0
    assert "auroc" in capsys.readouterr().out
    assert main(["report", "--db", db, "--out", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "report.md").exists()
    assert main(["plot", "--db", db, "--out", str(tmp_path / "plots"), "--format", "png"]) == 0
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert {"triangle.png", "heatmap_auroc.png", "cost_vs_length.png"} <= set(pngs)
    assert main(["report", "--db", str(tmp_path / "none.sqlite")]) == 2
    assert "no results database" in capsys.readouterr().err


def test_parser_builds():
    assert build_parser().prog == "humanize-bench"


def test_demo_takes_a_defense_and_names_an_unknown_one(tmp_path, capsys):
    code = main(["demo", "--n", "4", "--quiet", "--out", str(tmp_path), "--defense", "normalise"])
    assert code == 2
    err = capsys.readouterr().err
    assert "normalise" in err and "normalize" in err  # the unknown name and the valid ones


def test_a_detector_named_by_a_plain_function_is_the_function_detector_of_it(tmp_path, monkeypatch):
    from humanize.plugins import load_plugin
    from humanize.benchmarks.runner.config import detector_spec
    from humanize.detectors import FunctionDetector

    path = tmp_path / "my_fn.py"
    path.write_text("def comma_rate(texts):\n    return [t.count(',') / max(len(t.split()), 1) for t in texts]\n")
    load_plugin(str(path))
    spec = detector_spec("my_fn:comma_rate")  # the form the plug-in page shows
    assert (spec.name, spec.params) == ("function", {"fn": "my_fn:comma_rate", "name": "comma_rate"})
    assert spec.base_label() == "comma_rate"
    detector = spec.build()
    assert isinstance(detector, FunctionDetector) and list(detector.score(["a, b, c", "a b c"])) == [2 / 3, 0.0]
    named = detector_spec("my_fn:comma_rate:name=commas,batch_size=8")
    assert named.params == {"fn": "my_fn:comma_rate", "name": "commas", "batch_size": 8}
    assert detector_spec({"name": "my_fn:comma_rate", "batch_size": 8}).params == {
        "fn": "my_fn:comma_rate", "name": "comma_rate", "batch_size": 8}  # a config table: the same rule
    # a class path and a registry name are left as they are
    assert detector_spec("tfidf_lr").name == "tfidf_lr"
    assert detector_spec("humanize.detectors.tfidf:TfidfLogReg").name == "humanize.detectors.tfidf:TfidfLogReg"


def test_no_command_module_imports_a_private_name_of_another_cli_module():
    """The commands share public helpers (humanize.cli.common), never another command module's private names, and
    every command is a module of its own: main.py only builds the parser and runs the error boundary (issue #36)."""
    import ast
    from pathlib import Path

    import humanize
    from humanize.cli.main import build_parser, command_modules

    root = Path(humanize.__file__).parent
    found = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("humanize.cli."):
                if node.module != "humanize.cli._outputs":
                    found += [f"{path.relative_to(root)}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert not found
    main_source = (root / "cli" / "main.py").read_text(encoding="utf-8")
    assert "add_parser(\"" not in main_source and "set_defaults(" not in main_source  # no command defined in main
    commands = set(build_parser()._subparsers._group_actions[0].choices)
    owners = {m.__name__.rpartition(".")[2] for m in command_modules()}
    assert {"demo", "run", "report", "plot", "tour", "attack", "listing", "card", "export"} <= owners
    assert {"demo", "run", "report", "plot", "tour", "attack", "list", "card", "export", "raid"} <= commands


def test_quieting_the_model_loads_imports_no_transformers_yet_quiets_its_bars():
    # issue #38: the demo's cached rerun loads no model; quieting the loads must not import transformers (1-5 s)
    import subprocess
    import sys

    code = ("import sys; from humanize.cli.common import quiet_model_loading; quiet_model_loading(); "
            "print('transformers' in sys.modules); from transformers.utils import logging; "
            "print(logging.is_progress_bar_enabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
