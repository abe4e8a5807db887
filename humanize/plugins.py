"""Components from outside the package: plain Python files given with ``--plugin`` (the way
TextAttack's ``--attack-from-file`` takes one) and installed packages' entry points.

A plug-in file is imported as a module named after its stem (``my_detectors.py`` ->
``my_detectors``), so ``"my_detectors:Mine"`` names a class in it wherever an import path is
accepted; it may also call ``attacks.register(...)`` / ``detectors.register(...)`` at import.
Every file loaded is recorded (absolute path, module name, BLAKE2b of its bytes): a run
writes the list into its manifest.

The trust rule (issue #35, ``docs/security.md``): a file runs only because the user named it
(``--plugin`` on this command line, ``plugins`` in this config). A results database is data:
the plug-ins its manifest records are never imported because it records them. A command that
reads a run and needs a plug-in's code says which file (:func:`missing_plugins`); given the
file with ``--plugin``, :func:`load_plugin` checks the bytes against the recorded digest
*before* importing them (``expected=``), and refuses a changed file unless told
(``allow_changed=True``, the CLI's ``--allow-changed-plugins``). The bytes checked are the
bytes executed.

Import is contained: a plug-in that calls ``sys.exit`` or parses ``sys.argv`` at import fails
with one line naming the file (it sees ``sys.argv == [its path]``), and a file named like a
module Python or an installed package already provides (``json.py``, ``numpy.py``) is refused
before it can shadow that module.

A plug-in module is pickled *by value* for worker processes (``cloudpickle``, which Ray
uses): a Ray worker builds the very class the driver validated without the file on its path.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import keyword
import sys
from pathlib import Path
from humanize.exceptions import PluginError

__all__ = ["PluginError", "load_plugin", "load_plugins", "loaded_plugins", "plugin_of", "file_digest",
           "missing_plugins"]

#: absolute path -> {"path", "module", "blake2b"} of every plug-in file this process loaded
_LOADED: dict[str, dict] = {}


def file_digest(path: str | Path) -> str:
    return _digest(Path(path).read_bytes())


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _shadowed(name: str, file: Path) -> str | None:
    """What a plug-in module called ``name`` would shadow: a standard-library module or one an
    installed package (or this library) provides; None when the name is free."""
    if name in getattr(sys, "stdlib_module_names", ()) or name in sys.builtin_module_names:
        return "a module of Python's standard library"
    if name == "humanize":
        return "this library"
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    origin = getattr(spec, "origin", None)
    if origin and origin not in ("built-in", "frozen") and Path(origin).resolve() == file:
        return None  # the plug-in file itself is on sys.path (the current folder)
    return f"an installed module ({origin or 'a namespace package'})"


def load_plugin(path, *, expected: str | None = None, allow_changed: bool = False) -> object:
    """Import the Python file at ``path`` as the module named by its stem (once per process).

    ``expected``: the BLAKE2b a run recorded for this file; a file whose bytes differ is refused
    *before* it is imported (:class:`PluginError` with both digests) unless ``allow_changed``."""
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
    data = file.read_bytes()
    digest = _digest(data)
    if expected is not None and digest != expected and not allow_changed:
        raise PluginError(f"plug-in {str(path)!r} changed since the run (BLAKE2b {expected} then, {digest} now); "
                          "it was not imported: pass --allow-changed-plugins (allow_changed=True) to use it anyway")
    if key in _LOADED:
        if _LOADED[key]["blake2b"] != digest and expected is not None and not allow_changed:
            raise PluginError(f"plug-in {str(path)!r} changed since this process imported it")
        return sys.modules[_LOADED[key]["module"]]
    present = sys.modules.get(name)
    if present is not None:
        where = getattr(present, "__file__", None)
        if where is None or Path(where).resolve() != file:
            raise PluginError(f"plug-in {str(path)!r}: a module named {name!r} is already imported (from {where}); "
                              "rename the file so its name is unique")
    else:
        shadow = _shadowed(name, file)
        if shadow is not None:
            raise PluginError(f"plug-in {str(path)!r}: its module name {name!r} is the name of {shadow}, which it "
                              "would replace; rename the file")
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a loader
        raise PluginError(f"plug-in {str(path)!r} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    argv = sys.argv
    sys.argv = [key]  # a plug-in that parses the command line at import sees none of ours
    said = io.StringIO()  # what it prints while importing: passed on once it imported, else its last line quoted
    try:
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            # the bytes whose digest was checked are the bytes run (not a second read of the file)
            exec(compile(data, key, "exec"), module.__dict__)  # noqa: S102 - the user named this file
    except SystemExit as err:
        sys.modules.pop(name, None)
        raise PluginError(f"plug-in {str(path)!r} called sys.exit({err.code!r}) while being imported (a plug-in "
                          "defines components; it must not end the program or parse the command line)"
                          + _last_words(said)) from None
    except Exception as err:
        sys.modules.pop(name, None)
        line = " ".join(str(err).split()) or type(err).__name__
        raise PluginError(f"plug-in {str(path)!r} failed to import: {type(err).__name__}: {line}") from err
    finally:
        sys.argv = argv
    if said.getvalue():
        sys.stderr.write(said.getvalue())
    _LOADED[key] = {"path": key, "module": name, "blake2b": digest}
    _pickle_by_value(module)
    return module


def _last_words(said: io.StringIO) -> str:
    lines = [ln.strip() for ln in said.getvalue().splitlines() if ln.strip()]
    return f"; it said: {lines[-1][:200]}" if lines else ""


def load_plugins(paths, *, recorded=None, allow_changed: bool = False) -> list:
    """:func:`load_plugin` for each path (a str or a list of them). ``recorded``: a run's
    manifest ``plugins`` records; a file matching one (same resolved path, else same module
    name) must still have the recorded digest (see :func:`load_plugin`)."""
    if paths is None:
        return []
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if not isinstance(paths, (list, tuple)):
        raise PluginError(f"plugins must be a list of Python file paths, got {type(paths).__name__}")
    out = []
    for p in paths:
        rec = _record_for(p, recorded) if recorded else None
        out.append(load_plugin(p, expected=rec.get("blake2b") if rec else None, allow_changed=allow_changed))
    return out


def _record_for(path, records) -> dict | None:
    """The recorded plug-in a given file stands for: the same absolute path, else the same module name."""
    if not isinstance(path, (str, Path)):
        return None
    file = Path(path).expanduser()
    try:
        file = file.resolve()
    except OSError:
        return None
    recs = [r for r in records or [] if isinstance(r, dict) and isinstance(r.get("blake2b"), str)]
    for rec in recs:
        if rec.get("path") == str(file):
            return rec
    for rec in recs:
        if rec.get("module") == file.stem:
            return rec
    return None


def loaded_plugins() -> list[dict]:
    """The plug-in files this process loaded, in load order."""
    return [dict(v) for v in _LOADED.values()]


def plugin_of(module_name: str) -> dict | None:
    """The plug-in record of a module name (None for a module that is not a plug-in file)."""
    for rec in _LOADED.values():
        if rec["module"] == module_name:
            return dict(rec)
    return None


def missing_plugins(records, needed_for: str) -> None:
    """Refuse (one line, :class:`PluginError`) when a computation needs code from plug-in files a
    run recorded and the user has not given them with ``--plugin``: the message names each file
    and its recorded digest. Nothing is imported here, ever (a database is data)."""
    missing = [r for r in records or [] if isinstance(r, dict) and isinstance(r.get("module"), str)
               and plugin_of(r["module"]) is None]
    if missing:
        files = ", ".join(f"{r.get('path', r['module'] + '.py')} (BLAKE2b {r.get('blake2b', '?')})" for r in missing)
        raise PluginError(f"{needed_for} needs the code of the plug-in file(s) the run used: {files}; a results "
                          "database never loads code by itself: pass --plugin FILE (checked against that digest); "
                          "the figures stored in the run (report, plot, card, export of its tables) need none")


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
