"""Quality meters of your own: the documented extension point of :class:`~humanize.quality.QualityMeter`.

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

from humanize._params import ParamsMixin
from humanize._registry import Registry

__all__ = ["PairMeter", "available", "build_meters", "get", "origin", "register", "resolve", "score_custom"]


class PairMeter(ParamsMixin):
    """Base class: ``score(originals, attacked)`` -> ``{column: values}`` (or a DataFrame), one value
    per pair, a number or NaN. Constructor arguments are the parameters; bump ``version`` when the
    same parameters start giving other figures."""

    name: str = "pair_meter"
    version: str = "1"

    def score(self, originals: Sequence[str], attacked: Sequence[str]):
        raise NotImplementedError(f"{type(self).__name__} must implement score(originals, attacked)")


_REGISTRY: dict = {}
_registry = Registry("quality meter", PairMeter, _REGISTRY, group="humanize.meters")
register, available, resolve, get, origin = _registry.functions()


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
    """The meters ``items`` name (objects as given); names must be unique and not a built-in meter's."""
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


def score_custom(meters: list[PairMeter], originals: list[str], attacked: list[str],
                 taken: set) -> tuple[dict, list[str]]:
    """Every meter's columns (``taken``: column names already used) and one note per pair."""
    n = len(originals)
    cols: dict[str, np.ndarray] = {}
    for meter in meters:
        out = meter.score(list(originals), list(attacked))
        if isinstance(out, pd.DataFrame):
            out = {c: out[c].to_numpy() for c in out.columns}
        if not isinstance(out, dict) or not out:
            raise TypeError(f"quality meter {meter.name!r}: score must return {{column: values}} or a DataFrame, "
                            f"got {type(out).__name__}")
        for column, values in out.items():
            if not isinstance(column, str) or not column or column in taken or column in cols or column == "note":
                raise ValueError(f"quality meter {meter.name!r}: column {column!r} is not a new non-empty name "
                                 f"(taken: {sorted(taken | set(cols))})")
            try:
                arr = np.asarray(values, dtype=float).reshape(-1)
            except (TypeError, ValueError):
                raise TypeError(f"quality meter {meter.name!r}: column {column!r} must hold numbers") from None
            if len(arr) != n:
                raise ValueError(f"quality meter {meter.name!r}: column {column!r} has {len(arr)} values for "
                                 f"{n} pairs")
            cols[column] = arr
    return cols, [""] * n
