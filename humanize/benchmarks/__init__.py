"""Benchmarks: datasets (loaders to RAID-schema rows), protocols, runner, report and plots.

Importing this package installs the resolver of dataset-named training sets
(``train="demo"``) that the attacks reach through :mod:`humanize._providers`,
since they import nothing from here. A few helpers are exported here, imported
on first access: ``build_target`` (a :class:`~humanize.detectors.target.Target`
from a detector and a dataset name), ``dataset_training_set`` and
``reliance_for_run``, and the runner's face: ``RunConfig``, ``AttackSpec``,
``DetectorSpec``, ``run``, ``build_report``, ``load_dataset``.
"""

from humanize._lazy import lazy_getattr
from humanize._providers import set_training_sets


def _dataset_training_set(spec, seed, owner):
    """The installed resolver: :func:`.targets.dataset_training_set` (pandas and the loaders load on first use)."""
    from .targets import dataset_training_set

    return dataset_training_set(spec, seed, owner)


set_training_sets(_dataset_training_set)

_EXPORTS = {
    "build_target": "targets",
    "dataset_training_set": "targets",
    "reliance_for_run": "reliance_run",
    # the runner's face: configure and run a benchmark from Python
    "AttackSpec": "config",
    "DetectorSpec": "config",
    "DefenseSpec": "config",
    "RunConfig": "config",
    "load_config": "config",
    "run": "runner",
    "RunResult": "runner",
    "build_report": "report",
    "load_dataset": "datasets",
}
__all__ = list(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS)
