"""Benchmarks, in subpackages with one job each (arrows point down only):

- :mod:`.reporting` (reports, plots, cards, documents, exports) and :mod:`.audits` (dataset audits,
  artifact reliance): read a run;
- :mod:`.runner`: configure and carry out a run (config, jobs, stages, executors, store, manifest);
- :mod:`.data` (datasets as RAID-schema rows) and :mod:`.evaluation` (protocols and statistics).

Importing this package installs the resolver of dataset-named training sets
(``train="demo"``) that the attacks reach through :mod:`humanize._providers`,
since they import nothing from here. A few helpers are exported here, imported
on first access: ``build_target`` (a :class:`~humanize.detectors.target.Target`
from a detector and a dataset name), ``dataset_training_set`` and
``reliance_for_run``, and the runner's face: ``RunConfig``, ``AttackSpec``,
``DetectorSpec``, ``run``, ``build_report``, ``load_dataset``; and RAID's leaderboard workflow:
``raid_detect``, ``raid_check``, ``raid_evaluate``, ``raid_metadata_template``.
"""

from humanize._lazy import lazy_getattr
from humanize._providers import set_training_sets


def _dataset_training_set(spec, seed, owner):
    """The installed resolver: :func:`.targets.dataset_training_set` (pandas and the loaders load on first use)."""
    from .runner.targets import dataset_training_set

    return dataset_training_set(spec, seed, owner)


set_training_sets(_dataset_training_set)

_EXPORTS = {
    "build_target": "runner.targets",
    "dataset_training_set": "runner.targets",
    "reliance_for_run": "audits.reliance_run",
    # the runner's face: configure and run a benchmark from Python
    "AttackSpec": "runner.config",
    "DetectorSpec": "runner.config",
    "DefenseSpec": "runner.config",
    "RunConfig": "runner.config",
    "load_config": "runner.config",
    "run": "runner",
    "RunResult": "runner",
    "build_report": "reporting.report",
    "load_dataset": "data",
    # RAID's leaderboard workflow (humanize-bench raid ...)
    "raid_detect": "humanize.benchmarks.runner.raid_detect:detect_file",
    "raid_check": "humanize.benchmarks.runner.raid_submission:check_submission",
    "raid_evaluate": "evaluation.raid",
    "raid_metadata_template": "humanize.benchmarks.runner.raid_submission:write_metadata_template",
}
__all__ = list(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS)
