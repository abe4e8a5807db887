"""Quality meters as components: the :class:`PairMeter` base, the registry of meters (the package's own,
:data:`_REGISTRY`, and yours), and the extension point of :class:`~humanize.quality.QualityMeter`.

A :class:`PairMeter` scores (original, attacked) pairs and returns one or more columns::

    from humanize.quality import PairMeter, QualityMeter

    class LengthRatio(PairMeter):
        name = "length_ratio"

        def score(self, originals, attacked):
            return {"length_ratio": [len(b) / max(len(a), 1) for a, b in zip(originals, attacked)]}

    QualityMeter(meters=["rouge_l"], custom=[LengthRatio()]).score(["a b"], ["a b c"])

It is named like every other component: an object, a registered name (``register``), an
import path ``"package.module:Class"`` (a plug-in file's included) or an entry point of an
installed package in group ``humanize.meters``; in a run configuration,
``[quality] custom = ["my_meters:LengthRatio"]``. Its columns are stored with the run's
quality rows and averaged in its summaries; its ``version`` and parameters are part of the
quality fingerprint, so changing either recomputes the figures.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from humanize.params import ParamsMixin
from humanize._registry import Registry

__all__ = ["PairMeter", "available", "build_meters", "builtin_meters", "get", "merge_columns", "notes_of", "origin",
           "register", "resolve"]


class PairMeter(ParamsMixin):
    """Base class: ``score(originals, attacked)`` -> ``{column: values}`` (or a DataFrame), one value
    per pair, a number or NaN. Constructor arguments are the parameters; bump ``version`` when the
    same parameters start giving other figures.

    Traits (class attributes) :class:`~humanize.quality.QualityMeter` reads:

    - ``default``: computed when ``meters`` is None (a built-in meter; an opt-in one is named in ``meters``);
    - ``as_read``: cheap and meant for the text as it is seen, so a run scores it again on both texts as a
      reader sees them (columns ``<column>_read``, :mod:`humanize.quality.as_read`).
    - ``columns``: the columns it gives, where known in advance (the built-in meters': a run reads the "as
      read" figures of these columns; a meter of your own may leave it empty);
    - ``likelihood_params``: the parameters naming a language model whose likelihood of the texts it reports
      (perplexity's ``lm``): an attack that writes or ranks with that same model confounds its figures, and a run
      warns of it (:mod:`humanize.benchmarks.runner.model_sharing`).

    A built-in meter also overrides :meth:`measure` to give a reason for each NaN (the ``note`` column) and
    columns of text (the resolved model's name).
    """

    name: str = "pair_meter"
    version: str = "1"
    default: bool = False
    as_read: bool = False
    columns: tuple = ()
    likelihood_params: tuple = ()

    def score(self, originals: Sequence[str], attacked: Sequence[str]):
        """``{column: values}``: a user's meter implements this; a meter that overrides :meth:`measure`
        (the built-in ones) gets its columns from there."""
        if type(self).measure is PairMeter.measure:
            raise NotImplementedError(f"{type(self).__name__} must implement score(originals, attacked)")
        return self.measure(list(originals), list(attacked))[0]

    def measure(self, originals: list[str], attacked: list[str]) -> tuple[dict, list[str]]:
        """``(columns, notes)``: :meth:`score`'s columns, each checked (a new non-empty name, one number per
        pair) and as a float array, and one note per pair ("" where none)."""
        n = len(originals)
        out = self.score(list(originals), list(attacked))
        if isinstance(out, pd.DataFrame):
            out = {c: out[c].to_numpy() for c in out.columns}
        if not isinstance(out, dict) or not out:
            raise TypeError(f"quality meter {self.name!r}: score must return {{column: values}} or a DataFrame, "
                            f"got {type(out).__name__}")
        cols: dict[str, np.ndarray] = {}
        for column, values in out.items():
            try:
                arr = np.asarray(values, dtype=float).reshape(-1)
            except (TypeError, ValueError):
                raise TypeError(f"quality meter {self.name!r}: column {column!r} must hold numbers") from None
            if len(arr) != n:
                raise ValueError(f"quality meter {self.name!r}: column {column!r} has {len(arr)} values for "
                                 f"{n} pairs")
            cols[column] = arr
        return cols, [""] * n

    @classmethod
    def from_quality_params(cls, params: dict) -> "PairMeter":
        """This meter configured by a :class:`~humanize.quality.QualityMeter`'s parameters: each of its own
        parameters that the quality meter also has (``lm``, ``encoder``, ``batch_size``, ``device``, ...)
        takes the quality meter's value; the others keep their defaults."""
        return cls(**{k: params[k] for k in cls._param_tuple() if k in params})


def notes_of(parts: dict) -> list[str]:
    """One note per pair from ``{column: reasons}`` (a reason per pair, "" where none): ``"column: reason"``
    joined by ``"; "`` in the order given."""
    lists = list(parts.items())
    n = len(lists[0][1]) if lists else 0
    return ["; ".join(f"{column}: {why[i]}" for column, why in lists if why[i]) for i in range(n)]


#: The built-in meters, in the order of their columns. Adding one: a module with a PairMeter subclass and
#: one line here (docs/howto/plugins.md, "A built-in meter").
_REGISTRY: dict = {
    "perplexity": "humanize.quality.perplexity:Perplexity",
    "cosine": "humanize.quality.similarity:Cosine",
    "rouge_l": "humanize.quality.lexical:RougeL",
    "flesch": "humanize.quality.lexical:Flesch",
    "edit_rate": "humanize.quality.lexical:EditRate",
    "validity": "humanize.quality.validity:SwapValidity",
    "entailment": "humanize.quality.entailment:Entailment",
    "judge": "humanize.quality.judge:MeaningJudge",
}
_registry = Registry("quality meter", PairMeter, _REGISTRY, group="humanize.meters")
register, available, resolve, get, origin = _registry.functions()


def builtin_meters() -> dict:
    """``{name: class}`` of the built-in meters, in column order."""
    return {name: resolve(name) for name in _REGISTRY if name in _registry._builtin}


def _one(item: Any, where: str) -> PairMeter:
    if isinstance(item, PairMeter):
        return item
    if isinstance(item, str):
        return get(item)
    if isinstance(item, dict) and isinstance(item.get("name"), str):
        params = {k: v for k, v in item.items() if k != "name"}
        return get(item["name"], **params)
    raise TypeError(f"{where} must be a PairMeter, a name ('package.module:Class' or registered) or a table "
                    f"{{name = ..., params...}}, got {type(item).__name__} {item!r}")


def build_meters(items) -> list[PairMeter]:
    """The meters ``items`` name (objects as given), with distinct names; a column a built-in meter that also
    runs gives is taken (:func:`merge_columns` refuses it)."""
    if items is None:
        return []
    if isinstance(items, (str, dict, PairMeter)) or not isinstance(items, (list, tuple)):
        raise TypeError(f"custom must be a list of quality meters (objects, names or tables), got "
                        f"{type(items).__name__}")
    meters = [_one(item, f"custom[{i}]") for i, item in enumerate(items)]
    names = [m.name for m in meters]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"custom meters must have distinct names, got {dupes} more than once")
    return meters


def merge_columns(meter: PairMeter, out: dict, cols: dict, n: int) -> None:
    """Add ``meter``'s columns ``out`` to ``cols``: each a new non-empty name (not ``note``), ``n`` values."""
    for column, values in out.items():
        if not isinstance(column, str) or not column or column in cols or column == "note":
            raise ValueError(f"quality meter {meter.name!r}: column {column!r} is not a new non-empty name "
                             f"(taken: {sorted(cols)})")
        if len(values) != n:
            raise ValueError(f"quality meter {meter.name!r}: column {column!r} has {len(values)} values for "
                             f"{n} pairs")
        cols[column] = values
