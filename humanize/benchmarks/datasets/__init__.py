"""Dataset loaders: each returns rows in the RAID schema (see :mod:`.schema`)."""

from .demo import load_demo
from .schema import COLUMNS, RAID_COLUMNS, validate_rows

__all__ = ["COLUMNS", "RAID_COLUMNS", "load_demo", "validate_rows"]
