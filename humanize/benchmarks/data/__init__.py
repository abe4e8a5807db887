"""The datasets, one job: load benchmark texts as rows in the RAID schema (see :mod:`.schema`).

Loaders by name, the demo set, RAID, MGTBench, MGT-Academic and files of the user's own, and the
source-document train/test split (:mod:`.split`).

``load_dataset(name, **filters)`` picks a loader by name; ``available_datasets()``
lists them. The embedded demo set is the default and needs nothing on disk.
"""

from __future__ import annotations

import inspect

import pandas as pd

from ._cache import cache_dir
from .demo import load_demo
from .files import load_file
from .mgt_academic import load_mgt_academic
from .mgtbench import load_mgtbench
from .raid import download_raid, load_raid
from .schema import COLUMNS, RAID_COLUMNS, validate_rows
from .watermark import demo_prompts, watermark_rows

from humanize._registry import Registry
from humanize.exceptions import DatasetUnavailable


def _check_loader(name, loader) -> None:
    if not callable(loader) or isinstance(loader, type):
        raise TypeError(f"dataset {name!r} must be a loader function returning RAID-schema rows, got "
                        f"{type(loader).__name__} {loader!r}")


#: The package's own loaders; ``register(name, loader)`` adds one at run time, installed packages
#: declare theirs under the entry-point group ``humanize.datasets``, and an import path
#: ``"package.module:load_rows"`` names any loader (a plug-in file's included).
_LOADERS = {
    "demo": load_demo,
    "raid": load_raid,
    "mgtbench": load_mgtbench,
    "mgt_academic": load_mgt_academic,
    "file": load_file,
}
DEFAULT_DATASET = "demo"
_registry = Registry("dataset", None, _LOADERS, group="humanize.datasets", check=_check_loader)
origin = _registry.origin


def register(name: str, loader) -> None:
    """Add a dataset: ``loader(**filters)`` returns rows in the RAID schema (:mod:`.schema`)."""
    _registry.register(name, loader)


def available_datasets() -> list[str]:
    """Names ``load_dataset`` accepts: the package's own first, then registered and installed ones."""
    own = list(_LOADERS)
    return own + [n for n in _registry.available() if n not in own]


def dataset_loader(name: str):
    """The loader function ``name`` names (a registry key, an entry point or an import path)."""
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    return _registry.resolve(name)


def knows_dataset(name) -> bool:
    """Whether ``name`` names a dataset (an import path is imported to check)."""
    try:
        dataset_loader(name)
    except (TypeError, ValueError):
        return False
    return True


def load_dataset(name: str = DEFAULT_DATASET, **filters) -> pd.DataFrame:
    """Rows of dataset ``name`` ("demo", "raid", "mgtbench", "mgt_academic", or "file": a user's
    CSV/JSONL/Parquet, ``path=`` plus :func:`load_file`'s column options; or a registered, installed
    or import-path loader); ``filters`` are the loader's keyword arguments (e.g. ``domain=``, ``n=``)."""
    loader = dataset_loader(name)
    params = inspect.signature(loader).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    unknown = sorted(set(filters) - set(params))
    if unknown and not takes_any:
        raise TypeError(f"dataset {name!r} does not take {unknown}; it takes {list(params)}")
    rows = loader(**filters)
    if loader not in _BUILTIN_LOADERS:  # a user's loader: its rows are checked before any work uses them
        rows = validate_rows(rows) if isinstance(rows, pd.DataFrame) else _not_rows(name, rows)
    return rows


_BUILTIN_LOADERS = tuple(_LOADERS.values())


def _not_rows(name, rows):
    raise TypeError(f"dataset {name!r}: its loader must return a pandas DataFrame of RAID-schema rows, got "
                    f"{type(rows).__name__}")


__all__ = [
    "COLUMNS",
    "demo_prompts",
    "watermark_rows",
    "DEFAULT_DATASET",
    "DatasetUnavailable",
    "RAID_COLUMNS",
    "available_datasets",
    "dataset_loader",
    "knows_dataset",
    "origin",
    "register",
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
