"""The embedded demo set: 900 human/machine pairs shipped with the package.

Origin: the Fast-DetectGPT experiment data (Bao et al., 2023; MIT), XSum news and
WritingPrompts stories with continuations by GPT-3 davinci, gpt-3.5-turbo and
gpt-4. Provenance and licence: ``humanize/data/demo/PROVENANCE.md`` and ``LICENSE``.
Each machine text continues the first words of the human text at the same index.
"""

from __future__ import annotations

import json
import uuid
from functools import lru_cache

import pandas as pd

from humanize._data import DATA_DIR

from .schema import validate_rows

DOMAINS = ("xsum", "writing")
GENERATORS = ("davinci", "gpt-3.5-turbo", "gpt-4")

_NAMESPACE = uuid.UUID("6f1c1d1e-8a49-4c1b-9a53-2d0b8f3f7a10")


def _stable_id(*parts: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, "/".join(parts)))


@lru_cache(maxsize=1)
def _load_all() -> pd.DataFrame:
    rows = []
    base = DATA_DIR / "demo"
    for domain in DOMAINS:
        for model in GENERATORS:
            with open(base / f"{domain}_{model}.raw_data.json", encoding="utf-8") as f:
                data = json.load(f)
            for i, (human, machine) in enumerate(zip(data["original"], data["sampled"])):
                source_id = _stable_id(domain, model, str(i), "human")
                common = dict(decoding=None, repetition_penalty=None, attack="none", domain=domain, title=None)
                rows.append(
                    dict(id=source_id, source_id=source_id, model="human", prompt=None, generation=human,
                         label="human", pair=i, generator=model, **common)
                )
                rows.append(
                    dict(id=_stable_id(domain, model, str(i), "machine"), source_id=source_id, model=model,
                         prompt=None, generation=machine, label="machine", pair=i, generator=model, **common)
                )
    return validate_rows(pd.DataFrame(rows))


def load_demo(domain: str | None = None, model: str | None = None, n: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Rows of the demo set in the RAID schema (plus ``label``, ``pair`` and ``generator``).

    ``domain`` (xsum/writing) and ``model`` (davinci/gpt-3.5-turbo/gpt-4) filter by the
    generator's subset (the human rows of that subset are kept); ``n`` samples that
    many pairs (human and machine together) with ``seed``.
    """
    df = _load_all()
    if domain is not None:
        if domain not in DOMAINS:
            raise ValueError(f"unknown demo domain {domain!r}; choose from {list(DOMAINS)}")
        df = df[df["domain"] == domain]
    if model is not None:
        if model not in GENERATORS:
            raise ValueError(f"unknown demo model {model!r}; choose from {list(GENERATORS)}")
        df = df[df["generator"] == model]
    if n is not None:
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive int, got {n!r}")
        pairs = df[["domain", "generator", "pair"]].drop_duplicates()
        keep = pairs.sample(n=min(n, len(pairs)), random_state=seed)
        df = df.merge(keep, on=["domain", "generator", "pair"])
    return df.reset_index(drop=True).copy()
