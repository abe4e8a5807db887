"""The old import paths of the modules that moved into subpackages (issue #21): one release of grace.

Each moved module keeps a shim file at its old path that warns (:class:`DeprecationWarning`, naming
the new path) and puts the new module object in its place (``sys.modules``), so
``humanize.benchmarks.config is humanize.benchmarks.runner.config``: private names and monkeypatching
reach the one module. The old *packages* (``datasets``, ``protocols``, ``executors``) alias their
package, and :class:`OldSubmodules` (installed by their shims) answers their dotted submodules
(``humanize.benchmarks.datasets.split``) with the new module object, warning likewise; without it
the import system would load a second copy of the file under the old name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings

#: old package -> new package (their submodules move with them)
MOVED_PACKAGES = {
    "humanize.benchmarks.datasets": "humanize.benchmarks.data",
    "humanize.benchmarks.protocols": "humanize.benchmarks.evaluation",
    "humanize.benchmarks.executors": "humanize.benchmarks.runner.executors",
}
_RUNNER = ("config", "attack_spec", "run_specs", "jobs", "stages", "store", "store_schema", "manifest",
           "model_sharing", "run_tables", "targets")
_REPORTING = ("report", "plots", "card", "card_render", "documents", "documents_page", "export", "attack_tour")
_AUDITS = ("audit", "audit_probe", "reliance", "reliance_run")
#: old module -> new module (each has a shim file at its old path)
MOVED_MODULES = {
    **{f"humanize.benchmarks.{m}": f"humanize.benchmarks.runner.{m}" for m in _RUNNER},
    **{f"humanize.benchmarks.{m}": f"humanize.benchmarks.reporting.{m}" for m in _REPORTING},
    **{f"humanize.benchmarks.{m}": f"humanize.benchmarks.audits.{m}" for m in _AUDITS},
}


def message(old: str, new: str) -> str:
    return f"{old} moved to {new}; import it from there (the old path goes in the next release)"


def new_name(old: str) -> str | None:
    """The new dotted name of an old module path, or None if ``old`` did not move."""
    if old in MOVED_MODULES:
        return MOVED_MODULES[old]
    for old_pkg, new_pkg in MOVED_PACKAGES.items():
        if old == old_pkg or old.startswith(old_pkg + "."):
            return new_pkg + old[len(old_pkg):]
    return None


class _Alias(importlib.abc.Loader):
    """Loads an old dotted name as the new module object itself (no second copy)."""

    def __init__(self, new: str):
        self.new = new
        self._spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        warnings.warn(message(spec.name, self.new), DeprecationWarning, stacklevel=2)
        return module

    def exec_module(self, module):
        module.__spec__ = self._spec  # the import system set the old name's spec on it: put the real one back


class OldSubmodules(importlib.abc.MetaPathFinder):
    """Finds ``<old package>.<submodule>`` (any depth) as the moved module."""

    def find_spec(self, name, path=None, target=None):
        for old_pkg in MOVED_PACKAGES:
            if name.startswith(old_pkg + "."):
                return importlib.machinery.ModuleSpec(name, _Alias(new_name(name)))
        return None


def install_finder() -> None:
    if not any(isinstance(f, OldSubmodules) for f in sys.meta_path):
        sys.meta_path.insert(0, OldSubmodules())
