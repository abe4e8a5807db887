"""The embedded demo set: 900 human/machine pairs shipped with the package.

Origin: the Fast-DetectGPT experiment data (Bao et al., 2023; MIT), XSum news and
WritingPrompts stories with continuations by GPT-3 davinci, gpt-3.5-turbo and
gpt-4. Provenance and licence: ``humanize/data/demo/PROVENANCE.md`` and ``LICENSE``.
Each machine text continues the first words of the human text at the same index.
"""

from __future__ import annotations

import pandas as pd

from humanize._data import DEMO_DOMAINS as DOMAINS
from humanize._data import DEMO_GENERATORS as GENERATORS
from humanize._data import demo_rows

from .schema import validate_rows

__all__ = ["DOMAINS", "GENERATORS", "load_demo"]


def load_demo(domain: str | None = None, model: str | None = None, n: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Rows of the demo set in the RAID schema (plus ``label``, ``pair`` and ``generator``).

    ``domain`` (xsum/writing) and ``model`` (davinci/gpt-3.5-turbo/gpt-4) filter by the
    generator's subset (the human rows of that subset are kept); ``n`` samples that
    many pairs (human and machine together) with ``seed``. The rows are read by
    :func:`humanize._data.demo_rows` (below the attacks, which may train on them by name).
    """
    return validate_rows(demo_rows(domain, model, n, seed))
