"""Components from outside the package: plain Python files given with ``--plugin`` (the way
TextAttack's ``--attack-from-file`` takes one) and installed packages' entry points.

A plug-in file is imported as a module named after its stem (``my_detectors.py`` ->
``my_detectors``), so ``"my_detectors:Mine"`` names a class in it wherever an import path is
accepted; it may also call ``attacks.register(...)`` / ``detectors.register(...)`` at import.
Every file loaded is recorded (absolute path, module name, BLAKE2b of its bytes): a run
writes the list into its manifest, so a later ``export``/``ars``/``card`` in a new shell
loads the same files without being told, and says so when a file changed since the run.

A plug-in module is pickled *by value* for worker processes (``cloudpickle``, which Ray
uses): a Ray worker builds the very class the driver validated without the file on its path.
"""

from __future__ import annotations

import hashlib
import importlib.util
import keyword
import sys
import warnings
from pathlib import Path
from humanize.exceptions import PluginError  # defined there; importable here as before

__all__ = ["PluginError", "load_plugin", "load_plugins", "loaded_plugins", "plugin_of", "file_digest"]

#: absolute path -> {"path", "module", "blake2b"} of every plug-in file this process loaded
_LOADED: dict[str, dict] = {}


def file_digest(path: str | Path) -> str:
    return hashlib.blake2b(Path(path).read_bytes(), digest_size=16).hexdigest()


def load_plugin(path) -> object:
    """Import the Python file at ``path`` as the module named by its stem (once per process)."""
    if not isinstance(path, (str, Path)) or str(path).strip() == "":
        raise PluginError(f"a plug-in is the path of a Python file, got {path!r}")
    file = Path(path).expanduser()
    if not file.is_file():
        raise PluginError(f"plug-in {str(path)!r}: no such file" if not file.exists()
                          else f"plug-in {str(path)!r} is not a file")
    if file.suffix != ".py":
        raise PluginError(f"plug-in {str(path)!r}: expected a Python file ending in .py")
    file = file.resolve()
    name = file.stem
    if not name.isidentifier() or keyword.iskeyword(name):
        raise PluginError(f"plug-in {str(path)!r}: its name {name!r} is not a Python module name; rename the file "
                          "(letters, digits, underscores)")
    key = str(file)
    if key in _LOADED:
        return sys.modules[_LOADED[key]["module"]]
    present = sys.modules.get(name)
    if present is not None:
        where = getattr(present, "__file__", None)
        if where is None or Path(where).resolve() != file:
            raise PluginError(f"plug-in {str(path)!r}: a module named {name!r} is already imported (from {where}); "
                              "rename the file so its name is unique")
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a loader
        raise PluginError(f"plug-in {str(path)!r} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:
        sys.modules.pop(name, None)
        line = " ".join(str(err).split()) or type(err).__name__
        raise PluginError(f"plug-in {str(path)!r} failed to import: {type(err).__name__}: {line}") from err
    _LOADED[key] = {"path": key, "module": name, "blake2b": file_digest(file)}
    _pickle_by_value(module)
    return module


def load_plugins(paths) -> list:
    """:func:`load_plugin` for each path (a str or a list of them)."""
    if paths is None:
        return []
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if not isinstance(paths, (list, tuple)):
        raise PluginError(f"plugins must be a list of Python file paths, got {type(paths).__name__}")
    return [load_plugin(p) for p in paths]


def loaded_plugins() -> list[dict]:
    """The plug-in files this process loaded, in load order."""
    return [dict(v) for v in _LOADED.values()]


def plugin_of(module_name: str) -> dict | None:
    """The plug-in record of a module name (None for a module that is not a plug-in file)."""
    for rec in _LOADED.values():
        if rec["module"] == module_name:
            return dict(rec)
    return None


def reload_recorded(records) -> list[str]:
    """Load the plug-in files a run recorded (its manifest's ``plugins``); warns when a file
    changed since (its digest differs) and fails clearly when it is gone. Returns notes."""
    notes = []
    for rec in records or []:
        path = rec.get("path") if isinstance(rec, dict) else None
        if not path:
            continue
        if path in _LOADED:
            continue
        if not Path(path).is_file():
            raise PluginError(f"the run used plug-in {path!r}, which no longer exists; pass --plugin with its "
                              "new location to compute anything new")
        load_plugin(path)
        now = _LOADED[str(Path(path).resolve())]["blake2b"]
        if rec.get("blake2b") and rec["blake2b"] != now:
            note = (f"plug-in {path!r} changed since the run (BLAKE2b {rec['blake2b']} then, {now} now): figures "
                    "computed from it now may differ from the run's")
            warnings.warn(note, RuntimeWarning, stacklevel=2)
            notes.append(note)
    return notes


def _pickle_by_value(module) -> None:
    """Ship the plug-in's classes and functions by value to worker processes."""
    for name in ("cloudpickle", "ray.cloudpickle"):
        if name == "ray.cloudpickle" and "ray" not in sys.modules:
            continue
        try:
            cp = importlib.import_module(name)
        except ImportError:
            continue
        try:
            cp.register_pickle_by_value(module)
        except (AttributeError, ValueError):  # an old cloudpickle, or already registered
            pass


def register_loaded_by_value() -> None:
    """Register every loaded plug-in with the cloudpickles imported since (Ray's, once started)."""
    for rec in _LOADED.values():
        module = sys.modules.get(rec["module"])
        if module is not None:
            _pickle_by_value(module)
