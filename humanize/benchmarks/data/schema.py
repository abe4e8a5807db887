"""The RAID row schema every loader produces (RAID paper §4; DESIGN.md conventions)."""

from __future__ import annotations

import pandas as pd

#: RAID's columns, in RAID's order, plus our ``label`` ("human" / "machine").
RAID_COLUMNS = [
    "id",
    "source_id",
    "model",
    "decoding",
    "repetition_penalty",
    "attack",
    "domain",
    "title",
    "prompt",
    "generation",
]
COLUMNS = [*RAID_COLUMNS, "label"]
LABELS = ("human", "machine")


def validate_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Check a loader's output has the schema; return it with columns in order."""
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"rows lack the RAID-schema column(s) {missing}; expected {COLUMNS}")
    bad = set(df["label"].unique()) - set(LABELS)
    if bad:
        raise ValueError(f"label must be one of {LABELS}, found {sorted(bad)}")
    extra = [c for c in df.columns if c not in COLUMNS]
    return df[COLUMNS + extra]
