"""Meaning preserved per attack, with its bootstrap interval, and where the meter cannot see the change.

A meaning meter can be blind to a kind of edit: the default sentence encoder (all-MiniLM-L6-v2) is
uncased, so an attack that only flips letter case gets cosine 1.0 on every document although the text
changed. :func:`meaning_by_attack` flags such an attack as ``measured = False``: the meter reads no loss at
all (every document within :data:`BLIND_TOLERANCE` of "meaning kept") on documents whose characters the
attack did change (``char_edit_rate > 0``, or edits in the cost table). Its quality loss is then "not measured", never "no loss".
"""
from __future__ import annotations

import math
import zlib

import numpy as np
import pandas as pd

from .tables import meaning_measure

__all__ = ["BLIND_TOLERANCE", "mean_interval", "meaning_by_attack"]

#: a meter whose loss stays within this of 0 on every changed document did not see the change
BLIND_TOLERANCE = 1e-6


def mean_interval(values, n_boot: int, confidence: float, seed) -> tuple[float, float]:
    """Percentile bootstrap interval of a mean over documents (NaN without replicates or values)."""
    from ..evaluation.bootstrap import percentile_interval

    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if n_boot < 2 or len(values) == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(n_boot, len(values)))].mean(axis=1)
    return percentile_interval(means, confidence)


def _changed(g: pd.DataFrame, cost: pd.DataFrame | None, edits: str = "char_edit_rate") -> pd.Series:
    """Per quality row: did the attack change the text? From its character edit rate (``edits``: on the text as
    read, for a meter that read it so), else from the edits the cost table recorded for the same (attack, id);
    False where neither says."""
    if edits in g and pd.to_numeric(g[edits], errors="coerce").notna().any():
        return pd.to_numeric(g[edits], errors="coerce") > 0
    if cost is None or not {"attack", "id", "n_edits"} <= set(cost.columns) or "id" not in g:
        return pd.Series(False, index=g.index)
    edits = cost.drop_duplicates(["attack", "id"]).set_index(["attack", "id"])["n_edits"]
    keys = pd.MultiIndex.from_arrays([g["attack"], g["id"]])
    return pd.Series(pd.to_numeric(edits.reindex(keys), errors="coerce").to_numpy() > 0, index=g.index)


def meaning_by_attack(quality: pd.DataFrame | None, n_boot: int = 1000, confidence: float = 0.95,
                      seed: int = 0, cost: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per attack: ``meaning`` (mean of the strongest meaning meter, :func:`.tables.meaning_measure`),
    ``lo``/``hi`` (percentile bootstrap over documents), ``n`` documents, ``char_edit_rate`` (mean) and
    ``measured`` (False where the meter reads no loss on texts the attack changed: their character edit
    rate, else the run's ``cost`` table's edits, says so). ``attrs["measure"]``: the (column, definition)
    used, None when the run has no meaning meter (every figure NaN)."""
    cols = ["meaning", "lo", "hi", "n", "char_edit_rate", "measured"]
    measure = meaning_measure(quality)
    if quality is None or quality.empty or "attack" not in quality:
        out = pd.DataFrame(columns=cols, dtype=float)
        out.attrs["measure"] = measure
        return out
    rows = {}
    for attack, g in quality.groupby("attack", sort=True):
        edits = pd.to_numeric(g["char_edit_rate"], errors="coerce") if "char_edit_rate" in g else \
            pd.Series(np.nan, index=g.index)
        if measure is None:
            rows[attack] = [math.nan, math.nan, math.nan, 0, edits.mean(), False]
            continue
        meaning = pd.to_numeric(g[measure[0]], errors="coerce")
        lo, hi = mean_interval(meaning.to_numpy(float), n_boot, confidence, [seed, zlib.crc32(str(attack).encode())])
        # a meter that read the text as a person sees it is blind only to changes a person sees: a homoglyph
        # whose text reads exactly as the original keeps its meaning, measured
        read = measure[0].endswith("_read")
        if read and "changed_read" in g and pd.to_numeric(g["changed_read"], errors="coerce").notna().any():
            changed = (pd.to_numeric(g["changed_read"], errors="coerce") > 0) & meaning.notna()
        else:
            edits_col = "char_edit_rate_read" if read and "char_edit_rate_read" in g else "char_edit_rate"
            changed = _changed(g, cost, edits_col) & meaning.notna()
        blind = bool(changed.any()) and bool(((1.0 - meaning[changed]).abs() <= BLIND_TOLERANCE).all())
        rows[attack] = [meaning.mean(), lo, hi, int(meaning.notna().sum()), edits.mean(), not blind]
    out = pd.DataFrame.from_dict(rows, orient="index", columns=cols)
    out["measured"] = out["measured"].astype(bool)
    out.attrs["measure"] = measure
    return out
