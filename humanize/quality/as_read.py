"""The cheap meters again, on both texts as a person reads them (issue #34): columns ``<column>_read``.

A homoglyph or an invisible character changes the bytes a meter reads, not the words a person reads: ROUGE-L
and the edit rates see damage a reader does not. :class:`AsRead` passes both texts of each pair through a
``reader`` (in a run, :class:`humanize.defenses.Normalize` at its defaults: look-alike letters folded,
invisible and bidi characters deleted, whitespace collapsed, NFKC) and scores them again with its meters (the
built-in meters whose ``as_read`` trait is set: cosine, ROUGE-L, Flesch, edit rates), and says whether a
reader sees any change at all (``changed_read``): what tells a meter's blind spot from a change no one sees.

A pair the reader leaves as it is keeps its raw figures (copied, not recomputed); the others are scored
together. The ``reader`` is an object with ``__call__(text) -> text`` and ``fingerprint()``: this layer does
not import the defenses, the caller hands one in.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import pandas as pd

from ._common import check_pairs
from .custom import PairMeter, builtin_meters, merge_columns

__all__ = ["AsRead", "READ_SUFFIX"]

#: The suffix of the "as read" columns.
READ_SUFFIX = "_read"


class AsRead(PairMeter):
    """``meters`` again on both texts as ``reader`` gives them: columns ``<column>_read`` and ``changed_read``.

    reader : text -> text as a person reads it, with a ``fingerprint()`` (e.g. ``humanize.defenses.Normalize()``)
    meters : the meters read again (:class:`PairMeter` objects); None: the built-in meters whose ``as_read``
        trait is set, at their defaults. Their number-valued columns among their declared ``columns`` are read.
    """

    name = "as_read"
    #: 2: changed_read (whether a reader sees any change)
    version = "2"

    def __init__(self, reader: Any, meters: Optional[Sequence[PairMeter]] = None):
        self._init_params(locals())

    def _check(self) -> None:
        if not callable(self.reader) or not callable(getattr(self.reader, "fingerprint", None)):
            raise TypeError(f"AsRead: reader must be callable (text -> text) with a fingerprint(), got "
                            f"{type(self.reader).__name__}")
        if self.meters is not None and not (isinstance(self.meters, (list, tuple))
                                            and all(isinstance(m, PairMeter) for m in self.meters)):
            raise TypeError("AsRead: meters must be a list of PairMeter objects or None")

    def members(self) -> list[PairMeter]:
        if self.meters is not None:
            return list(self.meters)
        return [cls() for cls in builtin_meters().values() if cls.as_read]

    def key(self) -> str:
        """What the figures depend on besides the members' parameters (which are the quality meter's, in its
        fingerprint): this version and the reader's fingerprint. A run's quality cache key holds it."""
        return f"{self.version}:{self.reader.fingerprint()}"

    def extend(self, table: pd.DataFrame, originals: list[str], attacked: list[str]) -> pd.DataFrame:
        """``table`` (the members' raw figures for these pairs, and others) joined with the ``_read`` columns and
        ``changed_read``."""
        members = self.members()
        declared = {c for m in members for c in m.columns}
        columns = [c for c in table.columns if c in declared and c != "note"
                   and not any(isinstance(v, str) for v in table[c])]  # a model's name is not read again
        read_o, read_t = [self.reader(o) for o in originals], [self.reader(t) for t in attacked]
        differ = [i for i in range(len(originals)) if read_o[i] != originals[i] or read_t[i] != attacked[i]]
        read = table[columns].copy()
        if differ:
            again = self._measure([read_o[i] for i in differ], [read_t[i] for i in differ], members)
            read.loc[differ, columns] = again[columns].to_numpy()
        table = table.join(read.add_suffix(READ_SUFFIX))
        table["changed" + READ_SUFFIX] = [float(read_o[i] != read_t[i]) for i in range(len(originals))]
        return table

    @staticmethod
    def _measure(originals: list[str], attacked: list[str], members: list[PairMeter]) -> pd.DataFrame:
        cols: dict = {}
        for member in members:
            merge_columns(member, member.measure(originals, attacked)[0], cols, len(originals))
        return pd.DataFrame(cols, index=pd.RangeIndex(len(originals)))

    def measure(self, originals, attacked) -> tuple[dict, list[str]]:
        originals, attacked = check_pairs(type(self).__name__, "measure", originals, attacked)
        raw = self._measure(originals, attacked, self.members())
        table = self.extend(raw, originals, attacked)
        read = [c for c in table.columns if c not in raw.columns]
        return {c: table[c].to_numpy() for c in read}, [""] * len(originals)

