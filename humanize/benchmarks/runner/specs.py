"""Components as a configuration names them: the one base of the spec classes (issue #36 item 5).

A spec is a component's name (a registry key, an entry point or an import path) and its parameters;
the one spec grammar (:func:`humanize._registry.parse_spec`: a name, ``NAME:K=V,...``, a table or an
object) reads it from a configuration entry (:func:`.attack_spec.attack_spec`, :func:`.config.detector_spec`,
:func:`.config.defense_spec`); :class:`ComponentSpec` checks its fields' types, resolves its name, labels
it and builds it, the same way for every kind. The kinds add what is theirs: :class:`~.attack_spec.AttackSpec` (θ values, a
label, an object given in Python), :class:`~.config.DetectorSpec` (a label, an object) and
:class:`~.run_specs.DefenseSpec`. The value checks that error messages share are here too.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from humanize.exceptions import ConfigError

__all__ = ["ComponentSpec", "component_label", "is_int", "is_number", "show", "stored_names"]


def show(value: Any) -> str:
    """A value as error messages show it: repr plus type."""
    text = repr(value)
    return f"{text[:120]}{'...' if len(text) > 120 else ''} ({type(value).__name__})"


def is_int(x: Any) -> bool:
    import numpy as np

    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_number(x: Any) -> bool:
    import numpy as np

    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def stored_names(spec):
    """The context a spec's names resolve in: a spec read from a stored run (``spec.stored``) resolves
    them as stored data (:func:`humanize._registry.names_from_stored_data`: nothing imported by itself)."""
    import contextlib

    if getattr(spec, "stored", False):
        from humanize._registry import names_from_stored_data

        return names_from_stored_data()
    return contextlib.nullcontext()


def component_label(name: str, registry) -> str:
    """How a component is labelled in reports by default: its name, or for an import path
    (``my_attacks:Swap``) the class's own ``name`` (``swap``), which its outputs are keyed by."""
    from humanize._registry import is_import_path, recorded_name

    if not is_import_path(name):
        return name
    try:
        own = getattr(registry.resolve(name), "name", None)
    except (TypeError, ValueError):  # not importable, or named by a stored run and not loaded: its recorded name
        return recorded_name(name) or name
    return own if isinstance(own, str) and own and own not in ("attack", "detector") else name



def _field_names(cls) -> set:
    return {f.name for f in fields(cls)}


@dataclass
class ComponentSpec:
    """A component in a configuration: a name (registry key, entry point or import path) and its parameters.

    A subclass names its ``kind`` (as messages and configuration sections say it) and its registry, and adds
    its own fields (a ``label``; ``obj``, a component object given in Python, built as a clone of it)."""

    name: str
    params: dict = field(default_factory=dict)

    #: the kind of component: ``attack``, ``detector`` or ``defense``
    kind: ClassVar[str] = "component"
    #: the module of the kind's registry (its ``get`` and ``resolve``)
    registry_module: ClassVar[str] = ""
    #: set on a spec read from a stored run (:func:`.config.config_from_stored`): its names resolve as stored data
    stored: ClassVar[bool] = False

    @classmethod
    def registry(cls):
        """The kind's registry (:attr:`registry_module`)."""
        import importlib

        return importlib.import_module(cls.registry_module)

    @classmethod
    def of(cls, component) -> "ComponentSpec":
        """The spec of a component object given in Python (its parameters travel with the object); a kind
        without an ``obj`` field takes none."""
        from humanize._registry import class_path

        if "obj" not in _field_names(cls):
            raise TypeError(f"a {cls.kind} is configured by name, not given as an object")
        return cls(class_path(component), {}, obj=component)

    def check(self, where: str | None = None) -> None:
        """The types of the spec's own fields (name, parameters, label): a :class:`ConfigError` naming the
        field; the component checks its parameters' values when it is built."""
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"{where or self.kind} name must be a non-empty str, got {show(self.name)}")
        if not isinstance(self.params, dict) or not all(isinstance(k, str) for k in self.params):
            raise ConfigError(f"{self.kind} {self.name!r}: params must be a table with str keys, "
                              f"got {show(self.params)}")
        label = getattr(self, "label", None)
        if label is not None and (not isinstance(label, str) or not label):
            raise ConfigError(f"{self.kind} {self.name!r}: label must be a non-empty str, got {show(label)}")

    def component_class(self) -> type:
        """The class the spec names (an object's own class); a :class:`ConfigError` saying why a name does not
        resolve."""
        obj = getattr(self, "obj", None)
        if obj is not None:
            return type(obj)
        try:
            return self.registry().resolve(self.name)
        except (TypeError, ValueError) as err:
            raise ConfigError(str(err)) from None

    def name_label(self) -> str:
        """The name as reports show it by default (:func:`component_label`: for an import path, the class's own
        ``name``), resolved as stored data for a spec read from a stored run."""
        with stored_names(self):
            return component_label(self.name, self.registry())

    def build_component(self, params: dict | None = None):
        """The configured component (nothing loaded yet): a clone of the object given in Python, else the
        registry's component for the name and ``params`` (default: the spec's own)."""
        obj = getattr(self, "obj", None)
        if obj is not None:
            from sklearn.base import clone

            return clone(obj)
        return self.registry().get(self.name, **(self.params if params is None else params))
