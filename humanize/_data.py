"""Where the package data lives (word lists, tables, the demo set), and the demo set's rows.

The demo set is part of the package, so reading it belongs down here: the benchmarks' loader
(:func:`humanize.benchmarks.data.load_demo`) and an attack that trains on it by name
(``HMGC(train="demo")``, through :mod:`humanize._providers`) read the same rows, in the same order.
"""

from __future__ import annotations

import json
import uuid
from functools import lru_cache
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"

#: The demo set's domains and the generators of its machine texts.
DEMO_DOMAINS = ("xsum", "writing")
DEMO_GENERATORS = ("davinci", "gpt-3.5-turbo", "gpt-4")

_NAMESPACE = uuid.UUID("6f1c1d1e-8a49-4c1b-9a53-2d0b8f3f7a10")


def _stable_id(*parts: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, "/".join(parts)))


@lru_cache(maxsize=1)
def _demo_frame():
    import pandas as pd

    rows = []
    base = DATA_DIR / "demo"
    for domain in DEMO_DOMAINS:
        for model in DEMO_GENERATORS:
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
    return pd.DataFrame(rows)


def demo_rows(domain: str | None = None, model: str | None = None, n: int | None = None, seed: int = 0):
    """Rows of the demo set (a DataFrame with the RAID schema's columns, plus ``label``, ``pair`` and
    ``generator``); ``domain`` and ``model`` filter by the generator's subset, ``n`` samples that many pairs
    with ``seed`` (see :func:`humanize.benchmarks.data.load_demo`, which checks the schema)."""
    df = _demo_frame()
    if domain is not None:
        if domain not in DEMO_DOMAINS:
            raise ValueError(f"unknown demo domain {domain!r}; choose from {list(DEMO_DOMAINS)}")
        df = df[df["domain"] == domain]
    if model is not None:
        if model not in DEMO_GENERATORS:
            raise ValueError(f"unknown demo model {model!r}; choose from {list(DEMO_GENERATORS)}")
        df = df[df["generator"] == model]
    if n is not None:
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive int, got {n!r}")
        pairs = df[["domain", "generator", "pair"]].drop_duplicates()
        keep = pairs.sample(n=min(n, len(pairs)), random_state=seed)
        df = df.merge(keep, on=["domain", "generator", "pair"])
    return df.reset_index(drop=True).copy()
