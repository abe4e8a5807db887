"""The train/test split of source documents, shared by the runner and the attacks that learn.

The rule lives in :mod:`humanize._split` (below the attack layer, which uses it
without importing the benchmarks); this module keeps its old import path.
"""
from __future__ import annotations

from humanize._split import SplitResult, group_split, in_train_split

__all__ = ["SplitResult", "group_split", "in_train_split"]
