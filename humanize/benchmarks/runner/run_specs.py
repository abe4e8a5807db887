"""What a run configuration says beyond its attacks and detectors: the test-time defenses it
applies (:mod:`humanize.defenses`, issue #12 §3) and what each worker of its jobs needs on a
cluster (issue #13 §1). Checked before any work, with a :class:`ConfigError` naming the key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from humanize.exceptions import ConfigError
from .specs import ComponentSpec, is_number, show

#: What one worker of a job may ask of a cluster (Ray's names; ``num_gpus`` may be a fraction).
RESOURCE_KEYS = ("num_cpus", "num_gpus", "memory")
#: Jobs a ``resources`` entry may name besides attack labels and detectors: every rule attack
#: (``task``), every model job (``model``), the quality meters and the defenses.
RESOURCE_GROUPS = ("task", "model", "quality", "defense")
#: Run keys that say how the work is carried out, not what it computes: never part of the run id.
EXECUTION_KEYS = ("executor", "ray_address", "max_retries", "resources", "plugins")


@dataclass
class DefenseSpec(ComponentSpec):
    """A test-time defense (:mod:`humanize.defenses`) applied to every scored text."""

    kind: ClassVar[str] = "defense"
    registry_module: ClassVar[str] = "humanize.defenses"


def check_defenses(defenses: list) -> None:
    """Every defense is a known name with parameters its constructor accepts, configured once."""
    if not defenses:
        return
    seen = set()
    for spec in defenses:
        if not isinstance(spec, DefenseSpec):
            raise ConfigError(f"each defense must be a DefenseSpec, got {show(spec)}")
        spec.check()
        spec.component_class()
        if spec.name in seen:
            raise ConfigError(f"defense {spec.name!r} is configured twice; a run applies each defense once")
        seen.add(spec.name)
        try:
            spec.build_component()
        except (TypeError, ValueError) as err:
            raise ConfigError(f"defense {spec.name!r}: {err}") from None


def check_resources_table(resources: dict) -> None:
    """The config's ``resources`` table: each entry a job name with the resources one of its
    workers needs (:data:`RESOURCE_KEYS`); a :class:`ConfigError` naming the entry otherwise."""
    for target, table in resources.items():
        if not isinstance(target, str) or not isinstance(table, dict):
            raise ConfigError(f"resources: each entry is a job name with a table of {', '.join(RESOURCE_KEYS)}, "
                              f"got {show(target)} = {show(table)}")
        for key, value in table.items():
            problem = resource_problem(key, value)
            if problem:
                raise ConfigError(f"resources.{target}: {problem}")


def resource_problem(key, value) -> str | None:
    """What is wrong with one resource entry of a worker (Ray's names), or None."""
    if key not in RESOURCE_KEYS:
        return f"unknown resource {key!r}; valid: {', '.join(RESOURCE_KEYS)}"
    if not is_number(value) or not value >= 0:
        return f"{key} must be a number >= 0, got {show(value)}"
    if key == "num_gpus" and value > 1 and value != int(value):
        return f"num_gpus above 1 must be a whole number (only single GPUs are shared), got {show(value)}"
    if key == "memory" and value != int(value):
        return f"memory is a number of bytes (a whole number), got {show(value)}"
    return None


def check_resource_targets(resources: dict, attack_labels: list[str], detectors: list[str]) -> None:
    """Every ``resources`` entry names a job of the run."""
    unknown = sorted(set(resources) - {*RESOURCE_GROUPS, *attack_labels, *detectors})
    if unknown:
        raise ConfigError(f"resources: no job named {unknown}; valid: {', '.join(RESOURCE_GROUPS)}, an attack label "
                          f"({', '.join(attack_labels)}) or a detector ({', '.join(detectors)})")
