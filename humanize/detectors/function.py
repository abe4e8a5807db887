"""Any scoring function as a detector: ``FunctionDetector(fn)``, or a subclass with ``predict``.

Many users already have a detector: a scikit-learn pipeline, a vendor SDK, a research
script's ``score(texts)``. :class:`FunctionDetector` puts it behind the
:class:`~humanize.detectors.base.Detector` interface: batching, checked outputs,
parameters and a fingerprint for the results store.

Fingerprint rule (cached scores are keyed by it, so it must change whenever the function
does). A callable has no exact canonical form, so the fingerprint holds what identifies it:

- its import path ``module:qualname`` (for a subclass: the class's) and a BLAKE2b digest of
  its source code (``inspect.getsource``; for a subclass, of every class between it and
  ``FunctionDetector``);
- its default argument values and closure values (exactly where they serialise, else
  their type);
- the ``fn_version``, ``name`` and ``batch_size`` parameters, the class's ``version`` (for a
  subclass: its own, bumped as for any detector) and the library version.

With ``fn_version=None`` (the default) ``fingerprint()`` accepts only code it can identify by
itself: a plain module-level function (its import path leads back to it, its source is
readable, it has no closure), or a subclass defined at module level. A lambda, a closure,
a bound method, a ``functools.partial`` or another callable object is a ``TypeError``
saying so, unless ``fn_version="..."`` is given: then any callable is accepted and the user
vouches that this string names its behaviour; change it whenever the function
changes in a way the digest cannot see (other closure objects, a model file it reads).
The digest covers the function's own code only (for code in a ``--plugin`` file: the whole
file's digest too, so an edited helper in that file changes the fingerprint): when a helper in
another module, a global or a file it reads changes, set or change ``fn_version`` too. (``version`` itself stays what it is for every
detector, the str version of the class's outputs: a parameter defaulting to None could not
both say "not given" and be that str.)
"""

from __future__ import annotations

import hashlib
import inspect
import numbers
from typing import Any, Callable, Sequence

import numpy as np

from humanize._canonical import canonical
from humanize.validation import NONBLANK_STR, Interval, check_texts

from .base import Detector

__all__ = ["FunctionDetector"]


class FunctionDetector(Detector):
    """A detector from a callable ``texts -> scores`` (higher = more machine-like).

    Parameters
    ----------
    fn : a callable taking a list of str and returning one finite number per text (a list,
        tuple or 1-D array), or its import path ``"package.module:function"`` (so a config or
        the CLI can name it: ``detectors.get("function", fn="my_scorers:score")``). Leave it
        None in a subclass that defines ``predict(self, texts)`` instead (the cleaner form
        when the scorer has state or parameters of its own: give the subclass an ``__init__``
        whose arguments are stored under their names, as for any detector, and set its
        ``name`` class attribute to register it).
    name : the label in reports and results keys (default: the class's ``name``, ``"function"``).
    batch_size : texts per call of ``fn`` / ``predict``.
    fn_version : None, or a str naming the function's behaviour (see the module's fingerprint rule).

    ``fn`` is called with lists of at most ``batch_size`` texts, in input order; scores come
    back as float64 in input order. A module-level function, or an import path, pickles by
    reference (worker processes can take the detector); a lambda does not pickle.
    """

    name = "function"
    needs_model = False
    #: The outputs' version for given parameters (this wrapper's code; a subclass bumps its own).
    version = "1"
    _parameter_constraints = {
        "fn": ["callable", "str", None],  # which of them must be given is checked in _check
        "name": [NONBLANK_STR, None],  # the report label; None: the class's name
        "batch_size": [Interval(numbers.Integral, 1, None)],
        "fn_version": [NONBLANK_STR, None],
    }

    def __init__(self, fn: "Callable | str | None" = None, name: "str | None" = None, batch_size: int = 64,
                 fn_version: "str | None" = None):
        self._init_params(locals())

    # -- parameters ---------------------------------------------------------------------
    def _check(self) -> None:
        own = type(self).__name__
        if self.name is None:
            self.name = type(self).name
        overridden = type(self).predict is not FunctionDetector.predict
        if self.fn is None and not overridden:
            raise TypeError(f"{own}: give fn= (a function list[str] -> scores, or its import path "
                            f"'package.module:function'), or subclass FunctionDetector and define predict(self, texts)")
        if self.fn is not None and overridden:
            raise TypeError(f"{own} defines predict(), so fn= would be ignored; give one or the other, not both")
        if self.fn is not None:
            self._function()  # an import path must resolve now, not at the first score

    def _function(self) -> Callable:
        """``fn`` itself, or the object its import path names."""
        fn = self.fn
        if isinstance(fn, str):
            from humanize._registry import import_object, is_import_path

            if not is_import_path(fn):
                raise ValueError(f"{type(self).__name__}: fn must be a callable or an import path "
                                 f"'package.module:function', got {fn!r}")
            fn = import_object(fn, f"{type(self).__name__} fn")
        if not callable(fn):
            raise TypeError(f"{type(self).__name__}: fn must be callable (list[str] -> scores), got "
                            f"{type(fn).__name__}{' (from ' + repr(self.fn) + ')' if isinstance(self.fn, str) else ''}")
        return fn

    # -- scoring ------------------------------------------------------------------------
    def predict(self, texts: list[str]) -> Any:
        """The raw scores of one batch: ``fn(texts)``. A subclass overrides this instead of giving ``fn``."""
        return self._function()(texts)

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """One float per text, in input order, from ``predict`` on batches of ``batch_size``."""
        texts = check_texts(texts, type(self).__name__, "score")
        out = np.empty(len(texts), dtype=np.float64)
        size = int(self.batch_size)
        for start in range(0, len(texts), size):
            chunk = texts[start:start + size]
            out[start:start + len(chunk)] = self._check_output(self.predict(list(chunk)), len(chunk), start)
        return out

    def _who(self) -> str:
        what = f"fn {_label(self._function())}" if self.fn is not None else f"{type(self).__qualname__}.predict"
        return f"{type(self).__name__} {self.name!r}: {what}"

    def _check_output(self, value: Any, n: int, start: int) -> np.ndarray:
        must = "it must return one finite number per text (a list or 1-D array, higher = more machine-like)"
        scalar = np.ndim(value) == 0 and not hasattr(value, "__len__")  # a number, a generator...
        if value is None or isinstance(value, (str, bytes, dict)) or scalar:
            raise ValueError(f"{self._who()} returned {_describe(value)} for a batch of {n} texts; {must}")
        try:
            arr = np.asarray(value)
        except Exception as err:  # noqa: BLE001 - ragged or exotic output: one line naming it
            raise ValueError(f"{self._who()} returned a {type(value).__name__} that is not array-like ({err}); "
                             f"{must}") from None
        if arr.ndim != 1:
            hint = " (class probabilities? return the machine column, e.g. proba[:, 1])" if arr.ndim == 2 else ""
            raise ValueError(f"{self._who()} returned an array of shape {arr.shape} for a batch of {n} texts{hint}; "
                             f"{must}")
        if len(arr) != n:
            raise ValueError(f"{self._who()} returned {len(arr)} scores for a batch of {n} texts; {must}")
        if arr.dtype.kind not in "biuf":
            items = list(value) if isinstance(value, (list, tuple)) else arr.tolist()  # numpy may cast to str
            for i, v in enumerate(items):
                if isinstance(v, complex) or not isinstance(v, numbers.Real):
                    raise ValueError(f"{self._who()} returned {_describe(v)} as the score of text {start + i}; {must}")
            arr = arr.astype(np.float64)
        arr = arr.astype(np.float64, copy=False)
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise ValueError(f"{self._who()} returned {arr[bad[0]]} as the score of text {start + int(bad[0])} "
                             f"({bad.size} non-finite in the batch); {must}")
        return arr

    # -- provenance ---------------------------------------------------------------------
    def provenance(self) -> dict:
        """Class, version, parameters (``fn`` replaced by its identity), library version."""
        import humanize

        from humanize._secrets import redact

        cls = type(self)
        params = {k: redact(canonical(v, f"{cls.__name__}.{k}")) for k, v in self.get_params(deep=False).items()
                  if k != "fn"}
        return {"class": f"{cls.__module__}.{cls.__qualname__}", "version": str(self.version), "params": params,
                "function": self._identity(), "library": humanize.__version__}

    def _identity(self) -> dict:
        if self.fn is not None:
            fn = self._function()
            out = {"path": _label(fn), "source": _source_digest(fn), **_captured(fn)}
            problem = _why_not_exact(fn)
        else:
            own = [c for c in type(self).__mro__ if issubclass(c, FunctionDetector) and c is not FunctionDetector]
            out = {"path": _label(type(self)), "source": [_source_digest(c) for c in own]}
            problem = next((f"{c.__qualname__} {why}" for c in own if (why := _why_not_exact(c))), None)
        plugin_files = _plugin_files([self._function()] if self.fn is not None else own)
        if plugin_files:  # code from a --plugin file: its whole file's digest, so an edited helper shows (#35)
            out["plugin_files"] = plugin_files
        if problem and self.fn_version is None:
            raise TypeError(
                f"{type(self).__name__} {self.name!r}: fingerprint() needs a module-level function or a "
                f"FunctionDetector subclass defined at module level, identified by import path and source; "
                f"{out['path']} {problem}. Move it to module level, or pass fn_version='...' to vouch for it "
                f"yourself (change it whenever the function changes), so cached scores are never reused for "
                f"another function")
        return out

    def describe(self) -> dict:
        info = super().describe()
        info["function"] = _label(self._function() if self.fn is not None else type(self))
        return info


def _plugin_files(objects) -> list:
    """The BLAKE2b of each plug-in file (``--plugin``) that defines one of ``objects``, as loaded:
    a module-level helper, constant or import in that file changes it too (a Detector subclass in a
    plug-in is fingerprinted the same way, :func:`humanize.params.class_source_digest`)."""
    from humanize.plugins import plugin_of

    out = []
    for obj in objects:
        rec = plugin_of(getattr(obj, "__module__", None) or "")
        if rec is not None and rec.get("blake2b") and rec["blake2b"] not in out:
            out.append(rec["blake2b"])
    return out


def _label(obj: Any) -> str:
    """``module:qualname`` of a function or class (of a callable object: its class's)."""
    module = getattr(obj, "__module__", None) or type(obj).__module__
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{module}:{qualname}"


def _why_not_exact(obj: Any) -> "str | None":
    """Why ``obj`` cannot be identified by import path and source alone (None: it can)."""
    qualname = getattr(obj, "__qualname__", "") or ""
    if inspect.ismethod(obj):
        return "is a bound method (its object's state is not part of the fingerprint)"
    if not (inspect.isfunction(obj) or isinstance(obj, type)):
        return f"is a {type(obj).__name__} object, not a function"
    if "<lambda>" in qualname:
        return "is a lambda"
    if "<locals>" in qualname or getattr(obj, "__closure__", None):
        return "is defined inside a function, or is a closure (e.g. made by a decorator)"
    try:
        from humanize._registry import import_object

        found = import_object(_label(obj), "function")
    except ValueError:
        found = None
    if found is not obj:
        return "is not found again at its import path"
    if _source_digest(obj) is None:
        return "has no readable source code"
    return None


def _source_digest(obj: Any) -> "str | None":
    try:
        source = inspect.getsource(obj)
    except (OSError, TypeError):
        return None
    return hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _captured(obj: Any) -> dict:
    """A function's default values and closure values: exact where they serialise, else their type."""
    fn = getattr(obj, "__func__", obj)
    if not inspect.isfunction(fn):
        return {}
    out: dict = {}
    if fn.__defaults__:
        out["defaults"] = [_value(v) for v in fn.__defaults__]
    if fn.__kwdefaults__:
        out["kwdefaults"] = {k: _value(v) for k, v in fn.__kwdefaults__.items()}
    if fn.__closure__:
        cells = {}
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                cells[var] = _value(cell.cell_contents)
            except ValueError:  # an empty cell
                cells[var] = None
        out["closure"] = cells
    return out


def _value(v: Any) -> Any:
    try:
        return canonical(v, "captured value")
    except (TypeError, RecursionError):
        return {"__opaque__": f"{type(v).__module__}.{type(v).__qualname__}"}


def _describe(v: Any) -> str:
    if v is None:
        return "None"
    if isinstance(v, (str, bytes)):
        return f"a {type(v).__name__} ({v[:40]!r})"
    if isinstance(v, dict):
        return f"a dict (keys {list(v)[:5]})"
    text = repr(v)
    return f"a {type(v).__name__} ({text[:40] + '...' if len(text) > 40 else text})"
