"""Declared parameter constraints (issue #21 §1), in the manner of scikit-learn's ``_parameter_constraints``.

A class lists what each constructor argument may be, once, as data::

    class Synonym(Attack):
        _parameter_constraints = {
            "rate": [Interval(Real, 0, 1, closed="both")],
            "mode": [Options(str, {"alternate", "random"})],
            "model": ["model", None],
        }

and :meth:`humanize.params.ParamsMixin._validate` checks every parameter against its list
(a value must satisfy at least one entry) with :func:`validate_parameter_constraints`, raising
:class:`~humanize.exceptions.InvalidParameterError` with one message format::

    Synonym: rate must be a number in [0, 1], got 1.5 (float)

A constraint is a :class:`Constraint` (:class:`Interval`, :class:`Options`, :class:`InstanceOf`,
:class:`HasMethods`), a type (shorthand for ``InstanceOf(type)``), ``None`` (None is allowed) or
one of the string shorthands:

- ``"boolean"``: a ``bool`` or ``numpy.bool_``;
- ``"str"``, ``"nonempty str"``;
- ``"seed"``: any int, numpy integers included (never a bool);
- ``"callable"``;
- ``"model"`` (:data:`MODEL`, the one model-name rule): a model name or path (a non-blank ``str``,
  ``os.PathLike``) or a loaded model (an object with ``.model`` and ``.resolved``);
- ``"sequence of str"``: a list or tuple of str.

Numbers: ``Interval(Integral, ...)`` takes ``int`` and numpy integers, ``Interval(Real, ...)`` any
real number (numpy scalars included) but NaN; neither takes a bool.

:func:`check_texts` is the one rule for a batch of documents, shared by every layer.
"""

from __future__ import annotations

import numbers
import os
import re
from collections.abc import Mapping
from typing import Any, Iterable

import numpy as np

from .exceptions import InvalidParameterError

__all__ = ["Constraint", "Interval", "Options", "InstanceOf", "HasMethods", "SequenceOf", "MODEL", "NONBLANK_STR",
           "make_constraint",
           "validate_parameter_constraints", "check_texts", "check_text", "describe_value"]

#: Parameters whose value is never printed (an API key, a token).
#: A name that IS a secret (``api_key``, ``hf_token``, ``password``), not one about secrets' sizes
#: (``max_tokens``, ``batch_tokens``) or where one lives (``api_key_env``).
_SECRET = re.compile(r"(^|_)(key|token|secret|password|passwd|credentials?)$", re.IGNORECASE)
_REPR_MAX = 80


class Constraint:
    """What a parameter value may be: ``is_satisfied_by(value)`` and ``describe()`` (a noun phrase)."""

    def is_satisfied_by(self, value: Any) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.describe()}>"


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_integral(value: Any) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not _is_bool(value)


def _is_real(value: Any) -> bool:
    if _is_bool(value) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        return False
    try:
        return value == value  # NaN is the one value unequal to itself
    except Exception:  # noqa: BLE001 - an odd Real subclass
        return False


def _bound(value: Any) -> str:
    if value is None:
        return "inf"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return repr(value) if not isinstance(value, (np.integer, np.floating)) else repr(value.item())


class Interval(Constraint):
    """A number of ``kind`` (``numbers.Integral`` or ``numbers.Real``) between ``left`` and ``right``.

    A bound of None is unbounded on that side; ``closed`` ("both", "left", "right", "neither")
    says which bounds belong to the interval. An infinite value is inside only a closed infinite
    bound (``Interval(Real, 0, math.inf, closed="both")``), never an unbounded side.
    """

    def __init__(self, kind: type, left: Any = None, right: Any = None, *, closed: str = "both"):
        if kind not in (numbers.Integral, numbers.Real, int, float):
            raise TypeError(f"Interval: kind must be numbers.Integral or numbers.Real, got {kind!r}")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"Interval: closed must be one of 'both', 'left', 'right', 'neither', got {closed!r}")
        self.kind = numbers.Integral if kind in (numbers.Integral, int) else numbers.Real
        self.left, self.right, self.closed = left, right, closed
        if left is not None and right is not None and left > right:
            raise ValueError(f"Interval: left ({left!r}) is greater than right ({right!r})")

    def is_satisfied_by(self, value: Any) -> bool:
        if not (_is_integral(value) if self.kind is numbers.Integral else _is_real(value)):
            return False
        closed_left = self.closed in ("both", "left")
        closed_right = self.closed in ("both", "right")
        if self.left is None:
            if value == float("-inf"):
                return False
        elif value < self.left or (value == self.left and not closed_left):
            return False
        if self.right is None:
            if value == float("inf"):
                return False
        elif value > self.right or (value == self.right and not closed_right):
            return False
        return True

    def describe(self) -> str:
        what = "an int" if self.kind is numbers.Integral else "a number"
        if (self.left is None or self.left == float("-inf")) and (self.right is None or self.right == float("inf")):
            return what
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        left = "-inf" if self.left is None else _bound(self.left)
        return f"{what} in {lb}{left}, {_bound(self.right)}{rb}"


class Options(Constraint):
    """One of ``values``, each an instance of ``kind`` (``Options(str, {"alternate", "random"})``)."""

    def __init__(self, kind: type, values: Iterable):
        self.kind = kind
        self.values = tuple(sorted(values, key=repr)) if isinstance(values, (set, frozenset)) else tuple(values)
        for v in self.values:
            if not isinstance(v, kind):
                raise TypeError(f"Options: {v!r} is not a {kind.__name__}")

    def is_satisfied_by(self, value: Any) -> bool:
        if not isinstance(value, self.kind) or (_is_bool(value) and self.kind not in (bool, np.bool_)):
            return False
        try:
            return value in self.values
        except TypeError:  # an unhashable or odd value
            return False

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


_ARTICLE = re.compile(r"^[aeiou]", re.IGNORECASE)


def _a(name: str) -> str:
    return f"{'an' if _ARTICLE.match(name) else 'a'} {name}"


def _resolve_type(t: Any) -> type:
    if isinstance(t, str):  # "package.module:Class", imported on first use (no import cycle, no import cost)
        import importlib

        module, _, attr = t.partition(":")
        return getattr(importlib.import_module(module), attr)
    return t


class InstanceOf(Constraint):
    """An instance of one of ``types``; ``name`` is what the message calls it (default: the type names).

    A type may be given as ``"package.module:Class"``, imported when a value is first checked
    (for a class of a higher layer, or one whose import is costly).
    """

    def __init__(self, *types: Any, name: str | None = None):
        if not types or not all(isinstance(t, type) or (isinstance(t, str) and ":" in t) for t in types):
            raise TypeError(f"InstanceOf: expects one or more types (or 'module:Class'), got {types!r}")
        self._types, self.name = types, name

    @property
    def types(self) -> tuple:
        if any(isinstance(t, str) for t in self._types):
            self._types = tuple(map(_resolve_type, self._types))
        return self._types

    def is_satisfied_by(self, value: Any) -> bool:
        types = self.types
        if _is_bool(value) and not any(t in (bool, np.bool_, object) for t in types):
            return False  # bool is an int subclass: a flag is never a count
        return isinstance(value, types)

    def describe(self) -> str:
        if self.name:
            return self.name
        return " or ".join(_a(t.rpartition(":")[2] if isinstance(t, str) else t.__name__) for t in self._types)


class SequenceOf(Constraint):
    """A list or tuple whose every item satisfies one of ``items`` (constraint entries); ``nonempty``: at least one.

    ``containers``: the collection types taken (default list and tuple).
    """

    def __init__(self, *items: Any, nonempty: bool = False, name: str | None = None,
                 containers: tuple = (list, tuple)):
        if not items:
            raise TypeError("SequenceOf: expects one or more item constraints")
        self.items, self.nonempty, self.name = [make_constraint(c) for c in items], nonempty, name
        self.containers = containers

    def is_satisfied_by(self, value: Any) -> bool:
        if not isinstance(value, self.containers) or (self.nonempty and not value):
            return False
        return all(any(c.is_satisfied_by(v) for c in self.items) for v in value)

    def describe(self) -> str:
        if self.name:
            return self.name
        what = " or ".join(dict.fromkeys(_strip_article(c.describe()) for c in self.items))
        kinds = " or ".join(t.__name__ for t in self.containers)
        return f"a {'non-empty ' if self.nonempty else ''}{kinds} of {what}"


def _strip_article(text: str) -> str:
    for art in ("a ", "an "):
        if text.startswith(art):
            return text[len(art):]
    return text


class HasMethods(Constraint):
    """An object with callable attributes ``names`` (``HasMethods("score")``)."""

    def __init__(self, *names: str):
        if not names or not all(isinstance(n, str) for n in names):
            raise TypeError(f"HasMethods: expects one or more method names, got {names!r}")
        self.names = names

    def is_satisfied_by(self, value: Any) -> bool:
        return not isinstance(value, type) and all(callable(getattr(value, n, None)) for n in self.names)

    def describe(self) -> str:
        ms = ", ".join(f".{n}()" for n in self.names)
        return f"an object with {ms}"


class _Predicate(Constraint):
    def __init__(self, test, text: str):
        self._test, self._text = test, text

    def is_satisfied_by(self, value: Any) -> bool:
        return bool(self._test(value))

    def describe(self) -> str:
        return self._text


class _ModelArgument(Constraint):
    """A model argument: a non-blank name or path, or a loaded model (``.model`` and ``.resolved``)."""

    def is_satisfied_by(self, value: Any) -> bool:
        if isinstance(value, os.PathLike):
            return True
        if isinstance(value, str):
            return bool(value.strip())
        return hasattr(value, "model") and hasattr(value, "resolved")

    def describe(self) -> str:
        return "a model name or path (not blank), or a loaded model"


class _NonBlankStr(Constraint):
    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str) and bool(value.strip())

    def describe(self) -> str:
        return "a non-blank str"


#: The one rule of every argument that names a model (the ``"model"`` shorthand is this constraint).
MODEL = _ModelArgument()
#: A str with a non-space character (a hub id, a server's model name, a label).
NONBLANK_STR = _NonBlankStr()


_SHORTHANDS = {
    "boolean": _Predicate(_is_bool, "a bool"),
    "str": _Predicate(lambda v: isinstance(v, str), "a str"),
    "nonempty str": _Predicate(lambda v: isinstance(v, str) and bool(v), "a non-empty str"),
    "seed": _Predicate(_is_integral, "an int seed"),
    "callable": _Predicate(callable, "a callable"),
    "model": MODEL,
    "sequence of str": _Predicate(lambda v: isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v),
                                  "a list or tuple of str"),
}
_NONE = _Predicate(lambda v: v is None, "None")


def make_constraint(spec: Any) -> Constraint:
    """The :class:`Constraint` a declaration entry stands for (a constraint, a type, None or a shorthand)."""
    if isinstance(spec, Constraint):
        return spec
    if spec is None:
        return _NONE
    if isinstance(spec, str):
        try:
            return _SHORTHANDS[spec]
        except KeyError:
            raise ValueError(f"unknown parameter constraint {spec!r}; known: {', '.join(map(repr, _SHORTHANDS))}, "
                             f"None, a type, Interval, Options, InstanceOf, HasMethods") from None
    if isinstance(spec, type):
        return InstanceOf(spec)
    raise TypeError(f"a parameter constraint must be a Constraint, a type, None or a shorthand str, got {spec!r}")


def describe_value(name: str, value: Any) -> str:
    """``value``'s repr (cut at ~80 characters) and type name, or ``<hidden>`` for a secret's name."""
    tname = type(value).__name__
    if _SECRET.search(name) and value is not None:
        return f"<hidden> ({tname})"
    from ._secrets import redact

    try:
        r = repr(redact(value))  # a key inside (a URL's ?code=, a body's api_key) shows as its digest
    except Exception:  # noqa: BLE001 - a repr that fails is no reason to hide the real error
        r = f"<{tname} object>"
    if len(r) > _REPR_MAX:
        r = r[: _REPR_MAX - 3] + "..."
    return f"{r} ({tname})"


def _join(descriptions: list) -> str:
    # None reads best last ("an int in [1, inf) or None")
    descriptions = sorted(descriptions, key=lambda d: d == "None")
    return " or ".join(dict.fromkeys(descriptions))


def validate_parameter_constraints(owner: str, constraints: dict, params: dict) -> None:
    """Check each parameter of ``params`` named in ``constraints`` against its list of constraints.

    A value passes when it satisfies at least one; otherwise this raises
    :class:`~humanize.exceptions.InvalidParameterError`:
    ``"{owner}: {name} must be {a or b}, got {value!r} ({type})"``.
    A name mapped to the string ``"no_validation"`` is skipped.
    """
    for name, specs in constraints.items():
        if name not in params or specs == "no_validation":
            continue
        value = params[name]
        cs = [make_constraint(s) for s in specs]
        if any(c.is_satisfied_by(value) for c in cs):
            continue
        raise InvalidParameterError(
            f"{owner}: {name} must be {_join([c.describe() for c in cs])}, got {describe_value(name, value)}")


def _texts_prefix(owner: str, method: str) -> str:
    return f"{owner}.{method} expects a sequence of str (one per document)"


def check_texts(texts: Any, owner: str, method: str = "batch") -> list:
    """``texts`` as a list of str, or :class:`~humanize.exceptions.InvalidParameterError`.

    The one batch-input rule for every layer: a list, tuple, generator, 1-D numpy array or pandas
    Series of str is a batch; a single str (the commonest mistake), bytes, None, a mapping, a set,
    a number or a non-str item is refused, with a message naming ``owner.method``.
    """
    if type(texts) is list:
        for i, t in enumerate(texts):
            if type(t) is not str:
                break
        else:
            return list(texts)  # a copy: the caller's list is never the one a layer works on
    prefix = _texts_prefix(owner, method)
    if isinstance(texts, str):
        raise InvalidParameterError(f"{prefix}, got a single str: wrap it in a list")
    if texts is None or isinstance(texts, (bytes, bytearray, memoryview, dict, set, frozenset, numbers.Number,
                                           np.generic, Mapping)):
        raise InvalidParameterError(f"{prefix}, got {type(texts).__name__}")
    ndim = getattr(texts, "ndim", 1)
    if ndim != 1:
        raise InvalidParameterError(f"{prefix}, got a {ndim}-D {type(texts).__name__}")
    try:
        items = list(texts)
    except TypeError:
        raise InvalidParameterError(f"{prefix}, got {type(texts).__name__}") from None
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise InvalidParameterError(f"{prefix}: item {i} is {type(t).__name__}, not str")
        if type(t) is not str:  # numpy.str_ and other subclasses: plain str downstream
            items[i] = str(t)
    return items


def check_text(text: Any, owner: str, method: str = "apply") -> str:
    """``text`` if it is one str, else :class:`~humanize.exceptions.InvalidParameterError` naming ``owner.method``."""
    if isinstance(text, str):
        return text
    hint = ": pass one str, or call .batch() on a sequence" if isinstance(text, (list, tuple)) else ""
    raise InvalidParameterError(f"{owner}.{method} expects a str (one document), got {type(text).__name__}{hint}")
