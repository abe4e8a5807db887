"""The runner, one job: carry out a benchmark run, resumable and cached by content.

Its configuration (:mod:`.config`; the components it names, :mod:`.specs`, :mod:`.attack_spec`,
:mod:`.run_specs`), what a run builds from it once and its stages share (:mod:`.context`), the units of work
(:mod:`.jobs`, :mod:`.stages`) and who carries them out (:mod:`.executors`), the SQLite results
store (:mod:`.store`, :mod:`.store_schema`), what ran (:mod:`.manifest`), models shared between
attacks and detectors (:mod:`.model_sharing`), the run's tables (:mod:`.run_tables`), detector
targets (:mod:`.targets`), and the engine that ties them together (:mod:`.engine`).

This package re-exports the engine's names (what ``humanize.benchmarks.runner`` was before it
became a package), imported on first access: ``run``, ``RunResult``, ``sample_rows``, ``CLEAN``,
``COST_COLUMNS``, ``INFO_COUNTS``.
"""

from humanize._lazy import lazy_getattr

__all__ = ["CLEAN", "COST_COLUMNS", "INFO_COUNTS", "RunResult", "run", "sample_rows"]

_EXPORTS = {name: "engine" for name in __all__}

__getattr__ = lazy_getattr(__name__, _EXPORTS)
