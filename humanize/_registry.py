"""Name -> component registries (attacks, detectors, defenses, datasets, generators).

One way to name a component, everywhere (Python, configs, the CLI, worker processes):

- a registry key (``"homoglyph"``): the package's own entries are ``"module:Class"`` import
  paths imported on first use (so importing a subpackage stays cheap), or classes added at
  run time with ``register()``;
- an import path ``"package.module:Class"`` (the module may be a plug-in file loaded with
  :func:`humanize.plugins.load_plugin`, named by its stem);
- an entry point that an installed package declares under the registry's group
  (``humanize.attacks``, ``humanize.detectors``, ``humanize.defenses``, ``humanize.datasets``:
  :mod:`importlib.metadata`), listed by ``available()`` next to the package's own.

:meth:`Registry.origin` says where a name came from (``humanize-bench list`` prints it).
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import re

#: ``package.module:Attr`` (dotted names on both sides)
IMPORT_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def is_import_path(name) -> bool:
    return isinstance(name, str) and bool(IMPORT_PATH.match(name))


#: True while names read from stored data (a results database, a stored configuration) are resolved
_STORED_NAMES: contextvars.ContextVar = contextvars.ContextVar("humanize_stored_names", default=False)


@contextlib.contextmanager
def names_from_stored_data():
    """Resolve component names that a stored run recorded (issue #35: a database is data, never
    code). Inside, an import path resolves only to this library's own modules or to a plug-in
    file the user loaded (``--plugin``): a database naming ``helper:Thing``, ``os:system`` or a
    module beside it imports nothing. Registry keys and installed entry points resolve as usual
    (the user installed them)."""
    token = _STORED_NAMES.set(True)
    try:
        yield
    finally:
        _STORED_NAMES.reset(token)


#: import path -> the component's own ``name`` as a stored run recorded it (a label is data: reading a
#: run labels its plug-in components without importing them)
_RECORDED_NAMES: dict = {}


def record_names(pairs) -> None:
    """Remember ``(import path, own name)`` pairs a stored run's manifest recorded."""
    for path, own in pairs:
        if is_import_path(path) and isinstance(own, str) and own:
            _RECORDED_NAMES[path] = own


def recorded_name(path: str) -> str | None:
    """The own name a stored run recorded for import path ``path`` (None when none did)."""
    return _RECORDED_NAMES.get(path)


def stored_names_active() -> bool:
    return bool(_STORED_NAMES.get())


def _stored_name_allowed(module_name: str, *, own_modules: bool = True) -> bool:
    from .plugins import plugin_of

    if plugin_of(module_name) is not None:
        return True
    return own_modules and (module_name == "humanize" or module_name.startswith("humanize."))


def _refuse_stored(path: str, kind: str, module_name: str) -> ValueError:
    return ValueError(f"{kind} {path!r} is named by the stored run, and {module_name!r} is not a plug-in file given "
                      "on this command line: code named by a database is never imported; pass --plugin FILE with "
                      "the file that defines it")


def import_object(path: str, kind: str = "component"):
    """The object an import path ``module:Attr`` names; a clear ``ValueError`` when it cannot be imported
    (or, while :func:`names_from_stored_data` is active, when it names code the user did not load)."""
    module_name, _, attr = path.partition(":")
    if _STORED_NAMES.get() and not _stored_name_allowed(module_name):
        raise _refuse_stored(path, kind, module_name)
    try:
        obj = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name and module_name.startswith(err.name):  # the module itself, not one of its imports
            raise ValueError(f"{kind} {path!r}: no module named {module_name!r} (an installed package, a module on "
                             f"sys.path, or a plug-in file given with --plugin / [run] plugins)") from None
        raise ValueError(f"{kind} {path!r}: importing {module_name!r} failed: {err}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"{kind} {path!r}: module {module_name!r} has no attribute {attr!r}") from None
    return obj


class Spec:
    """A component as one spec names it: ``name`` (a registry key or an import path) and ``params``, or ``obj``, a
    component object given in Python (then ``name`` is None and ``params`` empty). :func:`parse_spec` makes one."""

    __slots__ = ("name", "params", "obj")

    def __init__(self, name: str | None, params: dict | None = None, obj=None):
        self.name, self.params, self.obj = name, dict(params or {}), obj

    def __repr__(self) -> str:
        return f"Spec({self.name!r}, {self.params!r})" if self.obj is None else f"Spec(obj={self.obj!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Spec) and (self.name, self.params, self.obj) == (other.name, other.params, other.obj)


def parse_value(text: str):
    """A ``K=V`` value as JSON where it parses (``0.5``, ``true``, ``[1, 2]``, ``{"a": 1}``), else the string."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _split_items(text: str) -> list[str]:
    """``K=V,K=V`` split at the commas outside brackets, braces and double quotes (``rates=[0.1,0.2]`` is one)."""
    items, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch in "[{":
            depth += 1
        elif not quoted and ch in "]}":
            depth -= 1
        elif not quoted and depth == 0 and ch == ",":
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item for item in items if item.strip()]


def parse_spec(value, kind: str = "component", error: type = ValueError, *, owner: str | None = None,
               objects: type | tuple | None = None) -> Spec:
    """The one spec grammar of configs, composite members and the command line: a :class:`Spec` from

    - a name: a registry key (``"homoglyph"``) or an import path (``"my_attacks:Swap"``);
    - ``"NAME:K=V,K=V"``: the name and parameters, each value JSON where it parses (``homoglyph:rate=0.5``,
      ``"pipeline:attacks=[\"homoglyph\",\"whitespace\"]"``); an import path takes its parameters after a second
      colon (``my_attacks:Swap:rate=1.0``);
    - a table ``{"name": NAME, "params": {...}, **params}`` (a config file's ``[[attacks]]``; a key outside
      ``params`` is a parameter too, and wins);
    - an object, where ``objects`` (a class or classes) says which objects are components here.

    ``NAME:K=V`` and the table ``{name = NAME, K = V}`` are one spec. Anything else raises ``error``, its message
    led by ``owner`` (the component or place the spec is given to) and naming the ``kind`` of component.
    """
    lead = f"{owner}: " if owner else ""
    article = "an" if kind[:1] in "aeiou" else "a"
    if objects is not None and isinstance(value, objects):
        return Spec(None, {}, value)
    if isinstance(value, str):
        text = value.strip()
        head, sep, rest = text.partition(":")
        attr, _, after = rest.partition(":")
        if sep and attr and "=" not in attr and "," not in attr and all(p.isidentifier() for p in attr.split(".")):
            head, rest = f"{head}:{attr}", after  # an import path; its parameters, if any, after the next colon
        params = {}
        for item in _split_items(rest):
            key, eq, val = item.partition("=")
            if not eq or not key.strip():
                raise error(f"{lead}{kind} {value!r}: expected NAME or NAME:KEY=VALUE,... (NAME may be "
                            "package.module:Class)")
            params[key.strip()] = parse_value(val.strip())
        if not head.strip():
            raise error(f"{lead}{kind} name must be a non-empty str, got {value!r}")
        return Spec(head.strip(), params)
    if isinstance(value, dict):
        table = dict(value)
        if "name" not in table:
            raise error(f"{lead}{article} {kind} given as a table needs a 'name' (a registered {kind}), got {value!r}")
        name = table.pop("name")
        if not isinstance(name, str) or not name.strip():
            raise error(f"{lead}{kind} name must be a non-empty str, got {name!r} ({type(name).__name__})")
        params = table.pop("params", {})
        if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
            raise error(f"{lead}{kind} {name!r}: params must be a table with str keys, got {params!r}")
        return Spec(name, {**params, **table})
    allowed = "a name, NAME:KEY=VALUE,..., a table with 'name'"
    if objects is not None:
        kinds = objects if isinstance(objects, tuple) else (objects,)
        allowed += " or " + " or ".join(f"{'an' if k.__name__[:1] in 'AEIOU' else 'a'} {k.__name__} object"
                                        for k in kinds)
    raise error(f"{lead}each {kind} is {allowed}, got {value!r} ({type(value).__name__})")


class Registry:
    """The ``kind`` components known by name; ``entries`` is the live dict of the package's own
    and run-time registrations, ``group`` the entry-point group of installed plug-ins.

    ``base``: the class every entry must subclass (None: any object ``check`` accepts, e.g.
    a dataset loader function).
    """

    def __init__(self, kind: str, base: type | None, entries: dict, group: str | None = None, check=None):
        self.kind = kind
        self.base = base
        self.entries = entries
        self.group = group
        self._check = check
        self._builtin = set(entries)
        self._origins: dict[str, str] = {}
        self._entry_points: dict | None = None

    # -- adding -----------------------------------------------------------------------
    def register(self, name: str, target) -> None:
        """Add a class (or a ``"module:Class"`` path) under ``name``."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"{self.kind} name must be a non-empty str, got {name!r}")
        if is_import_path(name):
            raise ValueError(f"{self.kind} name {name!r} looks like an import path; register under a plain name")
        if isinstance(target, str):
            if not is_import_path(target):
                raise ValueError(f"register expects an import path 'module:Class', got {target!r}")
        else:
            self._accept(name, target)
        self.entries[name] = target
        self._origins[name] = f"registered at run time ({_defined_in(target)})"

    def _accept(self, name: str, target) -> None:
        if self.base is not None:
            if not (isinstance(target, type) and issubclass(target, self.base)):
                raise TypeError(f"register expects a subclass of {self.base.__name__} or 'module:Class', got "
                                f"{target!r}")
            self._check_name(name, target)
        elif self._check is not None:
            self._check(name, target)

    def _check_name(self, name: str, cls: type) -> None:
        """A class's ``name`` is its registry key: results, reports and random streams are keyed by it."""
        own = getattr(cls, "name", None)
        if own != name:
            raise ValueError(
                f"cannot register {cls.__qualname__} as {self.kind} {name!r}: its name attribute is {own!r}; "
                f"set {cls.__qualname__}.name = {name!r} (outputs, reports and random streams are keyed by it)"
            )

    # -- entry points -----------------------------------------------------------------
    def entry_points(self) -> dict:
        """``{name: EntryPoint}`` of the installed packages' plug-ins in this registry's group."""
        if self.group is None:
            return {}
        if self._entry_points is None:
            from importlib.metadata import entry_points

            try:
                found = entry_points(group=self.group)
            except TypeError:  # pragma: no cover - Python < 3.10's dict interface
                found = entry_points().get(self.group, [])
            self._entry_points = {ep.name: ep for ep in found}
        return self._entry_points

    def refresh(self) -> None:
        """Forget the entry points read so far (after installing a plug-in package in this process)."""
        self._entry_points = None

    # -- reading ----------------------------------------------------------------------
    def available(self) -> list[str]:
        """Every name: the package's own, run-time registrations and installed entry points, sorted."""
        return sorted(set(self.entries) | set(self.entry_points()))

    def origin(self, name: str) -> str:
        """Where ``name`` comes from: built in, registered at run time, an entry point of a
        distribution, a plug-in file or an import path."""
        if name in self.entries:
            if name in self._origins:
                return self._origins[name]
            target = self.entries[name]
            if name in self._builtin and isinstance(target, str):
                return "built in"
            return f"registered at run time ({target if isinstance(target, str) else _defined_in(target)})"
        ep = self.entry_points().get(name)
        if ep is not None:
            dist = getattr(ep, "dist", None)
            where = f"{dist.name} {dist.version}" if dist is not None else "an installed package"
            return f"entry point {self.group} of {where} ({ep.value})"
        if is_import_path(name):
            from .plugins import plugin_of

            rec = plugin_of(name.partition(":")[0])
            return f"plug-in file {rec['path']}" if rec else "import path"
        raise ValueError(self._unknown(name))

    def _unknown(self, name) -> str:
        thing = "Class" if self.base is not None else "function"
        return (f"unknown {self.kind} {name!r}; available: {', '.join(self.available())} (or an import path "
                f"'package.module:{thing}', an entry point in group {self.group!r}, or a plug-in file's {thing.lower()})")

    def resolve(self, name: str):
        """The class (for datasets: the loader) that ``name`` names."""
        if not isinstance(name, str):
            raise TypeError(f"{self.kind} name must be a str, got {type(name).__name__}")
        if name in self.entries:
            target = self.entries[name]
            if not isinstance(target, str):
                return target
            obj = import_object(target, self.kind)
            self._verify(name, obj, target)
            return obj
        ep = self.entry_points().get(name)
        if ep is not None:
            try:
                obj = ep.load()
            except Exception as err:  # noqa: BLE001 - a broken plug-in package: one line naming it
                raise ValueError(f"{self.kind} {name!r} (entry point {ep.value!r}) failed to load: "
                                 f"{type(err).__name__}: {err}") from None
            self._verify(name, obj, ep.value)
            return obj
        if is_import_path(name):
            module_name = name.partition(":")[0]
            if _STORED_NAMES.get() and not _stored_name_allowed(module_name, own_modules=self.base is not None):
                # a function registry (datasets) takes any callable: from stored data, only a user's plug-in's
                raise _refuse_stored(name, self.kind, module_name)
            obj = import_object(name, self.kind)
            self._verify(None, obj, name)
            return obj
        raise ValueError(self._unknown(name))

    def _verify(self, name: str | None, obj, where: str) -> None:
        if self.base is not None:
            if not (isinstance(obj, type) and issubclass(obj, self.base)):
                raise TypeError(f"{self.kind} {name or where!r} is {where!r}, which is not a {self.base.__name__} "
                                f"subclass (got {type(obj).__name__} {getattr(obj, '__qualname__', obj)!r})")
            if name is not None:
                self._check_name(name, obj)
        elif self._check is not None:
            self._check(name or where, obj)

    def functions(self) -> tuple:
        """``(register, available, resolve, get, origin)``: the module-level face of a registry."""
        return self.register, self.available, self.resolve, self.get, self.origin

    def get(self, name: str, /, **params):
        """Build the object registered under ``name`` with ``params``."""
        cls = self.resolve(name)
        valid = cls._param_names()
        unknown = sorted(set(params) - set(valid))
        renamed = {k: v for k, v in getattr(cls, "_renamed_params", {}).items() if k in unknown}
        if renamed:  # an old spelling: say what it is now
            raise ValueError(f"{self.kind} {name!r}: " + "; ".join(f"{old!r} is now {new!r}" for old, new in
                                                                   renamed.items()))
        if unknown:
            raise ValueError(f"{self.kind} {name!r} has no parameter(s) {', '.join(unknown)}; valid: {', '.join(valid)}")
        return cls(**params)


def _defined_in(target) -> str:
    module = getattr(target, "__module__", None) or "?"
    return f"{module}:{getattr(target, '__qualname__', target)}"


def class_path(obj_or_cls) -> str:
    """``module:Qualname`` of a class (or of an object's class): how a manifest names it."""
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    return f"{cls.__module__}:{cls.__qualname__}"
