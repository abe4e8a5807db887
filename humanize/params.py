"""One parameter protocol for attacks, detectors, quality meters and pipelines (scikit-learn style).

Constructor arguments are the parameters: a class stores each ``__init__``
argument under its own name, as given, and checks them in ``_validate()``
(called by ``__init__`` and by :meth:`ParamsMixin.set_params`). The mixin reads
them back (``get_params``, nested objects' parameters as ``a__b``), sets them
(``set_params``, nested too), prints them (``repr``), and so makes
``sklearn.base.clone`` work.

It also gives every configured object one provenance :meth:`~ParamsMixin.fingerprint`:
a digest of its qualified class name, its output ``version``, its parameters
serialised exactly (:mod:`humanize._canonical`), the identity of the models it
resolves (:mod:`humanize.models.identity`) and, where its outputs depend on the
library's code, ``humanize.__version__``. Caches key on it.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sys
import warnings
import weakref
from typing import Any

from ._canonical import canonical, digest
from .validation import validate_parameter_constraints

__all__ = ["ComponentParam", "ParamsMixin", "class_source_digest"]

#: The kinds of component a parameter may name (:class:`ComponentParam`).
COMPONENT_KINDS = ("attack", "detector", "generator", "training_set", "format_profile")


class ComponentParam:
    """A parameter that names another component: declared in a class's ``_component_params``, next to its
    ``_parameter_constraints`` (``{"paraphraser": ComponentParam("generator", resolve_paraphraser)}``).

    - ``kind``: one of :data:`COMPONENT_KINDS` (what the runner hands it: the run's seed to an attack member,
      the run's fitted detector to a detector guide, the run's train split to a training set);
    - ``resolve``: ``resolve(owner, value) -> component`` turning a name, a table, an import path or an object
      into the component (None: the value is used as given); :meth:`ParamsMixin.component` calls it lazily,
      once per value, and the owner's fingerprint then holds the *resolved* component's provenance, so
      ``"dipper"`` and ``Dipper()`` are one configuration;
    - ``many``: the value is a list of such components (each resolved on its own, names and tables keyed
      by what they say);
    - ``depends``: other parameters the resolved component is built from (a wrapped attack built with the
      owner's ``seed``): a change of one of them resolves it again;
    - ``train``: for a detector, the parameter naming the training set it is fit on (a run hands its own
      fitted detector only where that parameter is None);
    - ``label``: the owner's default label in a run joins its members' labels with ``+`` (a pipeline).
    """

    __slots__ = ("kind", "resolve", "many", "depends", "train", "label")

    def __init__(self, kind: str, resolve=None, *, many: bool = False, depends: tuple = (),
                 train: str | None = None, label: bool = False):
        if kind not in COMPONENT_KINDS:
            raise ValueError(f"ComponentParam: kind must be one of {', '.join(COMPONENT_KINDS)}, got {kind!r}")
        self.kind, self.resolve, self.many, self.depends = kind, resolve, many, tuple(depends)
        self.train, self.label = train, label

    def __repr__(self) -> str:
        return f"ComponentParam({self.kind!r}{', many=True' if self.many else ''})"


# Types that can never hold nested parameters: skipped without a getattr (get_params is on a hot path).
_LEAF_TYPES = frozenset({int, float, str, bool, type(None), tuple, list, dict})


class ParamsMixin:
    """Parameters, repr and provenance fingerprint for a configured object.

    Class attributes a subclass may set:

    - ``version``: the output version for given parameters; bump it when the same
      parameters start giving other outputs;
    - ``_model_params``: names of parameters that name a model (resolved to the
      model's identity in the fingerprint);
    - ``_runtime_params``: parameters (device, dtype) replaced in the fingerprint by
      what they resolve to (device type, dtype) when a model is loaded by name;
    - ``_library_version``: include ``humanize.__version__`` in the fingerprint;
    - ``_repr_changed_only``: show only parameters that differ from their defaults.
    """

    version: str = "1"
    _model_params: tuple = ()
    _runtime_params: tuple = ("device", "dtype")
    _library_version: bool = False
    _repr_changed_only: bool = False
    #: Instance attributes built from the parameters (an assembled engine, a resolved inner attack):
    #: dropped by every :meth:`set_params` (nested ones included, and on a failed one), so an object
    #: whose parameters changed describes, fingerprints and runs the same configuration.
    _derived_state: tuple = ()
    #: What each constructor argument may be (:mod:`humanize.validation`): name -> list of
    #: constraints, one of which the value must satisfy. Merged along the MRO (a subclass's entry
    #: for a name replaces its base's) and applied to the parameters ``__init__`` takes.
    _parameter_constraints: dict = {}
    #: The parameters that name another component (:class:`ComponentParam`), merged along the MRO like
    #: the constraints: resolved by :meth:`component`, fingerprinted as what they resolve to.
    _component_params: dict = {}

    # -- reading parameters ---------------------------------------------------------
    @classmethod
    def _param_tuple(cls) -> tuple:
        """The ``__init__`` argument names, read once per class (signature inspection is slow)."""
        names = cls.__dict__.get("_param_names_cache")
        if names is None:
            sig = inspect.signature(cls.__init__)
            names = tuple(
                p.name
                for p in sig.parameters.values()
                if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            )
            cls._param_names_cache = names
        return names

    @classmethod
    def _param_names(cls) -> list:
        return list(cls._param_tuple())

    def get_params(self, deep: bool = True) -> dict:
        """The constructor arguments as given; with ``deep``, nested objects' parameters as ``name__param``."""
        out = {k: getattr(self, k) for k in self._param_tuple()}
        if deep:
            for v in out.values():
                if type(v) not in _LEAF_TYPES:
                    return _with_nested(out)
        return out

    # -- setting parameters ---------------------------------------------------------
    def _init_params(self, arguments: dict) -> None:
        """Store each constructor argument under its own name, as given, then validate.

        Called first thing in ``__init__`` as ``self._init_params(locals())``: the arguments are
        kept unconverted (scikit-learn's rule, so ``get_params`` and ``clone`` round-trip) and
        checked against the declared constraints. A base class's ``__init__`` stores only its
        own arguments; the subclass stores the rest and validates again.
        """
        for name, value in arguments.items():
            if name != "self" and name != "__class__":
                setattr(self, name, value)
        self._validate()

    def _check_param_name(self, name: str) -> None:
        valid = self._param_tuple()
        if name not in valid:
            raise ValueError(f"{type(self).__name__} has no parameter {name!r}; valid: {', '.join(valid)}")

    def set_params(self, **params) -> "ParamsMixin":
        """Set parameters (``name=value``, or ``name__param=value`` on a nested object) and validate.

        An unknown name is a ``ValueError`` listing the valid ones; if validation
        fails, the direct parameters are restored before the error propagates.
        """
        direct: dict = {}
        nested: dict = {}
        for key, value in params.items():
            head, sep, sub = key.partition("__")
            self._check_param_name(head)
            if sep:
                nested.setdefault(head, {})[sub] = value
            else:
                direct[head] = value
        old = {k: getattr(self, k) for k in direct}
        self._drop_derived()
        for k, v in direct.items():
            setattr(self, k, v)
        try:
            for head, sub in nested.items():
                target = getattr(self, head)
                if not callable(getattr(target, "set_params", None)):
                    raise ValueError(f"{type(self).__name__}: parameter {head!r} is a {type(target).__name__}, "
                                     f"which has no parameters to set ({', '.join(head + '__' + s for s in sub)})")
                target.set_params(**sub)
            self._validate()
        except Exception:
            for k, v in old.items():
                setattr(self, k, v)
            self._drop_derived()
            raise
        return self

    def _drop_derived(self) -> None:
        """Forget what was built from the parameters (:attr:`_derived_state` and the parameter cache)."""
        self.__dict__.pop("_params_cache", None)
        self.__dict__.pop("_components", None)
        for name in self._derived_state:
            self.__dict__.pop(name, None)

    @classmethod
    def _merged_along_mro(cls, attr: str, cache: str, drop_none: bool = False) -> dict:
        """The class attribute ``attr`` (a dict) merged along the MRO, a subclass's entry replacing its base's,
        for the parameters ``__init__`` takes (cached per class in ``cache``); with ``drop_none``, an entry a
        subclass sets to None is withdrawn."""
        merged = cls.__dict__.get(cache)
        if merged is None:
            merged = {}
            for klass in reversed(cls.__mro__):
                merged.update(klass.__dict__.get(attr, {}))
            names = set(cls._param_tuple())
            merged = {k: v for k, v in merged.items() if k in names and not (drop_none and v is None)}
            setattr(cls, cache, merged)
        return merged

    @classmethod
    def _merged_constraints(cls) -> dict:
        """``_parameter_constraints`` merged along the MRO, for the parameters ``__init__`` takes (cached per class)."""
        return cls._merged_along_mro("_parameter_constraints", "_merged_constraints_cache")

    @classmethod
    def component_params(cls) -> dict:
        """``_component_params`` merged along the MRO, for the parameters ``__init__`` takes (cached per class)."""
        return cls._merged_along_mro("_component_params", "_merged_components_cache", drop_none=True)

    def component(self, name: str):
        """The component parameter ``name`` names, resolved lazily and once per value (a list for ``many``).

        The one place a name, a table, an import path or an object becomes the component it names
        (:class:`ComponentParam`); :meth:`set_params` forgets what was resolved.
        """
        decl = self.component_params()[name]
        value = getattr(self, name)
        if decl.resolve is None:
            return value
        cache = self.__dict__.setdefault("_components", {})
        depends = tuple(getattr(self, d, None) for d in decl.depends)
        found = cache.get(name)
        if found is not None and found[0] is value and found[1] == depends and not decl.many:
            return found[2]
        if decl.many:  # a list may have changed in place: each member looked up again (names and tables kept)
            from ._canonical import canonical_json

            members = found[3] if found is not None and found[1] == depends else {}
            out, keep = [], {}
            for item in value:
                if isinstance(item, (str, dict)):
                    key = canonical_json(item, f"{type(self).__name__}.{name}")
                    built = keep[key] = members[key] if key in members else decl.resolve(self, item)
                    out.append(built)
                else:
                    out.append(decl.resolve(self, item))
            cache[name] = (value, depends, out, keep)
            return out
        resolved = decl.resolve(self, value)
        cache[name] = (value, depends, resolved, None)
        return resolved

    def _validate(self) -> None:
        """Check the parameters against the declared constraints, then the cross-parameter rules (``_check``).

        Raises :class:`~humanize.exceptions.InvalidParameterError` naming the class, the
        parameter, the value and what is allowed.
        """
        merged = self._merged_constraints()
        # only the constrained parameters, and only those already set (a subclass may validate in its
        # base's __init__ before it has stored its own)
        missing = object()
        params = {k: v for k in merged if (v := getattr(self, k, missing)) is not missing}
        validate_parameter_constraints(type(self).__name__, merged, params)
        self._check()

    def _check(self) -> None:
        """Rules that involve several parameters (``low <= high``); each parameter alone is already valid."""

    # -- printing -------------------------------------------------------------------
    def __repr__(self) -> str:
        params = self.get_params(deep=False)
        if self._repr_changed_only:
            sig = inspect.signature(type(self).__init__).parameters
            params = {k: v for k, v in params.items() if not _is_default(v, sig[k].default)}
        from ._secrets import redact

        # the one secret path (humanize._secrets): a key in a URL's query or a body template shows as its digest
        args = ", ".join(f"{k}={redact(v, k)!r}" for k, v in params.items())
        return f"{type(self).__name__}({args})"

    # -- provenance -----------------------------------------------------------------
    def _fingerprint_models(self) -> dict:
        """The model-naming parameters that matter for this configuration (name -> value)."""
        return {k: getattr(self, k) for k in self._model_params}

    def _fingerprint_runtime(self, models: dict) -> dict:
        """Device type and dtype that models loaded by name will get (loaded models carry their own)."""
        if not any(v is not None and not hasattr(v, "identity") for v in models.values()):
            return {}
        from humanize.models import resolve_device, resolve_dtype

        device = resolve_device(getattr(self, "device", None))
        out = {"device_type": device.type}
        if "dtype" in self._param_tuple():
            out["dtype"] = str(resolve_dtype(getattr(self, "dtype"), device))
        return out

    def provenance(self) -> dict:
        """What the fingerprint hashes, readable: class, version, exact parameters, models, library version.
        A secret a parameter holds (a URL's ``?code=``, a body template's ``api_key``) is in it only as a
        digest (:func:`humanize._secrets.redact`)."""
        from ._secrets import redact

        cls = type(self)
        where = cls.__name__
        models = self._fingerprint_models()
        runtime = self._fingerprint_runtime(models) if models else {}
        skip = set(self._runtime_params) if runtime else set()
        params = {}
        components = {k for k, decl in self.component_params().items() if decl.resolve is not None}
        for k, v in self.get_params(deep=False).items():
            if k in skip or k in components:
                continue
            if k in self._model_params and (k not in models or v is None):
                params[k] = None  # no model, or one this configuration does not use
            elif k in self._model_params and _names_a_model(v):
                from humanize.models.identity import model_identity

                params[k] = {"__model__": model_identity(v)}
            else:
                # a secret in a URL or a mapping is digested, never hashed (or shown) in clear: humanize._secrets
                params[k] = redact(canonical(v, f"{where}.{k}"), k)
        for k in components:  # the component it resolves to (``"dipper"`` and ``Dipper()`` are one configuration)
            params[k] = canonical(self.component(k), f"{where}.{k}")
        out = {"class": f"{cls.__module__}.{cls.__qualname__}", "version": str(self.version), "params": params}
        source = class_source_digest(cls)
        if source is not None:
            out["source"] = source
        if runtime:
            out["runtime"] = runtime
        if self._library_version:
            import humanize

            out["library"] = humanize.__version__
        return out

    def fingerprint(self) -> str:
        """A stable hex digest of :meth:`provenance`: equal for configurations that give equal outputs.

        Raises ``TypeError`` for a parameter that cannot be serialised exactly.
        """
        return digest(self.provenance(), type(self).__name__)


#: class -> the digest of the code that defines it (or None), computed once per class object
_SOURCE_DIGESTS: "weakref.WeakKeyDictionary[type, str | None]" = weakref.WeakKeyDictionary()


def class_source_digest(cls: type) -> str | None:
    """What identifies the code of a class defined outside the package (None for humanize's own, whose
    code the version and the library version stand for): ``file:<BLAKE2b>`` of a plug-in file as it was
    loaded (:mod:`humanize.plugins`), else ``source:<BLAKE2b>`` of its module's source
    (:func:`inspect.getsource`). Editing such a class's code changes the fingerprints of its objects, so
    cached results are recomputed. A class whose source cannot be read (defined in an interactive
    session or by ``exec``) gets None and a warning: its cache keys cannot follow its code."""
    module = getattr(cls, "__module__", None) or ""
    if module == "humanize" or module.startswith("humanize."):
        return None
    try:
        return _SOURCE_DIGESTS[cls]
    except KeyError:
        pass
    from .plugins import plugin_of

    rec = plugin_of(module)
    if rec is not None and rec.get("blake2b"):
        out = f"file:{rec['blake2b']}"
    else:
        try:
            source = inspect.getsource(sys.modules[module])
        except (KeyError, OSError, TypeError):
            try:  # the class alone, where only it can be found (a module without a file)
                source = inspect.getsource(cls)
            except (OSError, TypeError):
                source = None
        if source is None:
            out = None
            warnings.warn(f"{module}.{cls.__qualname__}: its source cannot be read (defined interactively or by "
                          f"exec?), so its fingerprint cannot follow edits to its code: a rerun after changing it "
                          f"may reuse cached results; define it in a file (a module or a --plugin file)",
                          RuntimeWarning, stacklevel=3)
        else:
            digest = hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
            out = f"source:{digest}"
    _SOURCE_DIGESTS[cls] = out
    return out


def _names_a_model(value: Any) -> bool:
    """A model name or path, or a loaded model (whose identity the fingerprint takes)."""
    return isinstance(value, (str, os.PathLike)) or (hasattr(value, "model") and hasattr(value, "resolved"))


def _with_nested(params: dict) -> dict:
    """``params`` plus each nested object's parameters as ``name__param`` (scikit-learn's deep form)."""
    out = dict(params)
    for k, v in params.items():
        if callable(getattr(v, "get_params", None)) and not isinstance(v, type):
            out.update((f"{k}__{kk}", vv) for kk, vv in v.get_params().items())
    return out


def _is_default(value: Any, default: Any) -> bool:
    if value is default:
        return True
    try:
        return bool(value == default) and type(value) is type(default)
    except Exception:  # noqa: BLE001 - arrays and other odd values are simply shown
        return False


class EqualByParams:
    """Equality by class and parameters, for objects that are values (attacks, defenses): two with
    the same parameters give the same outputs. Mixed into a :class:`ParamsMixin` subclass."""

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other):
            return False
        return self.get_params(deep=False) == other.get_params(deep=False)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        # equal objects have equal fingerprints (numbers are keyed by value, 1 == 1.0);
        # a parameter without an exact serialisation falls back to the parameter names
        try:
            return hash((type(self), self.fingerprint()))  # type: ignore[attr-defined]
        except TypeError:
            return hash((type(self), self._param_tuple()))  # type: ignore[attr-defined]
