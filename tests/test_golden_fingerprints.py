"""The golden table (issue #36): every registered component's fingerprint at its defaults, and the run id and
store keys of the demo configuration, as ``tests/golden_fingerprints.json`` recorded them.

A refactor must leave this table unchanged: a changed entry means users' cached results would silently be
recomputed (or, worse, reused for other outputs). A deliberate change (a version bump) regenerates the file:

    HUMANIZE_UPDATE_GOLDEN=1 python -m pytest -q tests/test_golden_fingerprints.py

and the commit lists the entries that changed (the test prints them either way).

Machine state is left out so that the table is the same on every machine: each model's identity (installed
package version, hub snapshot, directory digest) is replaced by the name the component asked for, the device is
the CPU, the CPU is one without bfloat16 instructions (so ``dtype="auto"``, the scoring models' default, resolves
to float32 here as on such a machine; ``tests/models/test_precision.py`` checks that a machine with them records
bfloat16 instead), and ``OPENAI_BASE_URL`` is unset. Everything the code decides (class, version, exact parameters,
nested components, library version, the demo's configuration key and training split) is in the table.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).with_name("golden_fingerprints.json")
UPDATE_ENV = "HUMANIZE_UPDATE_GOLDEN"


def required_args() -> dict:
    """Fixed arguments for the registered components that have required parameters (the rest: defaults)."""
    from humanize.attacks.format_profile import FormatProfile

    profile = FormatProfile().fit(["A first line -- with \"quotes\".\n\nA second paragraph.  Two spaces.",
                                   "Plain text, one line. Another sentence."])
    return {
        ("attack", "pipeline"): {"attacks": ["homoglyph", "whitespace"]},
        ("attack", "blend"): {"attacks": ["homoglyph", "whitespace"]},
        ("attack", "impose_format"): {"profile": profile},
        ("detector", "endpoint"): {"url": "https://detector.example/score"},
        ("detector", "function"): {"fn": "humanize.text:text_hash"},
        ("detector", "hf_classifier"): {"model": "roberta-base-openai-detector", "machine_label": "Fake"},
    }


@pytest.fixture
def machine_free(monkeypatch):
    """No machine state in the fingerprints: models by the name asked for, CPU, no endpoint from the environment."""
    import humanize.models.identity as identity

    monkeypatch.setattr(identity, "model_identity", lambda model: {"requested": os.fspath(model)
                                                                   if isinstance(model, (str, os.PathLike))
                                                                   else repr(model)})
    monkeypatch.setenv("HUMANIZE_DEVICE", "cpu")
    monkeypatch.setattr("humanize.models.precision.cpu_has_native_bf16", lambda: False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _registries() -> dict:
    from humanize import attacks, defenses, detectors, generation
    from humanize.quality import custom

    return {"attack": attacks.registry._registry, "detector": detectors.registry._registry,
            "defense": defenses._registry, "generator": generation._registry, "meter": custom._registry}


def component_table() -> dict:
    """``{"<kind>/<name>": {"fingerprint", "provenance"}}`` of every built-in registered component."""
    out, args = {}, required_args()
    for kind, registry in _registries().items():
        for name in sorted(registry._builtin):
            obj = registry.get(name, **args.get((kind, name), {}))
            out[f"{kind}/{name}"] = {"fingerprint": obj.fingerprint(), "provenance": obj.provenance()}
    from humanize.quality import QualityMeter

    out["meter/quality_meter"] = {"fingerprint": QualityMeter().fingerprint(), "provenance": QualityMeter().provenance()}
    return out


def demo_table() -> dict:
    """The demo's run id and the store keys of its attacks, detectors and quality rows, computed as the runner
    computes them (its plans are built, no model is loaded and nothing runs)."""
    from humanize.benchmarks.runner import context, engine
    from humanize.benchmarks.runner.config import demo_config

    out = {}
    for variant, cfg in (("demo", demo_config()), ("demo --rule-based-only", demo_config(model_attacks=False))):
        run_id = engine.hashlib.blake2b(cfg.key().encode(), digest_size=8).hexdigest()
        rows = engine.sample_rows(cfg)
        train = rows[rows["split"] == "train"]
        attack_keys = {plan.label: plan.key for plan in context.attack_plans(cfg, {})}
        detector_keys = {plan.label: plan.key for plan in context.detector_plans(cfg, train, {})}
        quality = context.quality_plan(cfg.quality_meter())
        out[variant] = {"run_id": run_id, "attack_keys": attack_keys, "detector_keys": detector_keys,
                        "quality_keys": {label: quality.store_key(key) for label, key in attack_keys.items()}}
    return out


def _flatten(table, prefix="") -> dict:
    if isinstance(table, dict):
        out = {}
        for k, v in table.items():
            out.update(_flatten(v, f"{prefix}{k}" if not prefix else f"{prefix} > {k}"))
        return out
    return {prefix: table}


def changes(old: dict, new: dict) -> list[str]:
    """One line per entry that differs (``kind/name > fingerprint``, ``demo > attack_keys > homoglyph``)."""
    a, b = _flatten(old), _flatten(new)
    lines = [f"changed {k}: {a[k]!r} -> {b[k]!r}" for k in sorted(set(a) & set(b)) if a[k] != b[k]]
    lines += [f"added {k}: {b[k]!r}" for k in sorted(set(b) - set(a))]
    lines += [f"removed {k}: {a[k]!r}" for k in sorted(set(a) - set(b))]
    return lines


def test_golden_fingerprints_unchanged(machine_free):
    current = json.loads(json.dumps({"components": component_table(), "demo": demo_table()}))
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
    diff = changes(recorded, current)
    if os.environ.get(UPDATE_ENV) == "1":
        GOLDEN.write_text(json.dumps(current, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{GOLDEN.name} rewritten; {len(diff)} entr(y/ies) changed:", *diff, sep="\n  ")
        return
    assert not diff, (f"{len(diff)} golden entr(y/ies) changed (cached results would be recomputed; if deliberate, "
                      f"bump the component's version, rerun with {UPDATE_ENV}=1 and list them in the commit):\n  "
                      + "\n  ".join(diff[:60]))


def test_golden_table_covers_every_registered_component(machine_free):
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))["components"]
    listed = {f"{kind}/{name}" for kind, registry in _registries().items() for name in registry._builtin}
    assert listed <= set(recorded), f"not in the golden table: {sorted(listed - set(recorded))}"


def test_changes_names_each_entry():
    old = {"a": {"fingerprint": "1", "provenance": {"version": "1"}}, "gone": {"fingerprint": "x"}}
    new = {"a": {"fingerprint": "2", "provenance": {"version": "2"}}, "new": {"fingerprint": "y"}}
    assert changes(old, new) == ["changed a > fingerprint: '1' -> '2'",
                                 "changed a > provenance > version: '1' -> '2'",
                                 "added new > fingerprint: 'y'", "removed gone > fingerprint: 'x'"]
