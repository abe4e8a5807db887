"""Dataset loaders: each returns rows in the RAID schema (see :mod:`.schema`).

``load_dataset(name, **filters)`` picks a loader by name; ``available_datasets()``
lists them. The embedded demo set is the default and needs nothing on disk.
"""

from __future__ import annotations

import inspect

import pandas as pd

from ._cache import DatasetUnavailable, cache_dir
from .demo import load_demo
from .files import load_file
from .mgt_academic import load_mgt_academic
from .mgtbench import load_mgtbench
from .raid import download_raid, load_raid
from .schema import COLUMNS, RAID_COLUMNS, validate_rows

_LOADERS = {
    "demo": load_demo,
    "raid": load_raid,
    "mgtbench": load_mgtbench,
    "mgt_academic": load_mgt_academic,
    "file": load_file,
}
DEFAULT_DATASET = "demo"


def available_datasets() -> list[str]:
    """Names ``load_dataset`` accepts."""
    return list(_LOADERS)


def load_dataset(name: str = DEFAULT_DATASET, **filters) -> pd.DataFrame:
    """Rows of dataset ``name`` ("demo", "raid", "mgtbench", "mgt_academic", or "file": a user's
    CSV/JSONL/Parquet, ``path=`` plus :func:`load_file`'s column options); ``filters`` are the
    loader's keyword arguments (e.g. ``domain=``, ``model=``, ``n=``)."""
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    if name not in _LOADERS:
        raise ValueError(f"unknown dataset {name!r}; choose from {available_datasets()}")
    loader = _LOADERS[name]
    params = inspect.signature(loader).parameters
    unknown = sorted(set(filters) - set(params))
    if unknown:
        raise TypeError(f"dataset {name!r} does not take {unknown}; it takes {list(params)}")
    return loader(**filters)


__all__ = [
    "COLUMNS",
    "DEFAULT_DATASET",
    "DatasetUnavailable",
    "RAID_COLUMNS",
    "available_datasets",
    "cache_dir",
    "download_raid",
    "load_dataset",
    "load_demo",
    "load_file",
    "load_mgt_academic",
    "load_mgtbench",
    "load_raid",
    "validate_rows",
]
