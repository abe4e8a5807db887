"""MGTBench (He et al., CCS 2024): the Essay, WP and Reuters sets used by TH-Bench.

Layout (MGTBench's ``dataset_loader.py``): one CSV per set, ``<Set>_LLMs.csv``,
with a ``human`` column and one column per generator (``ChatGPT-turbo``,
``ChatGLM``, ``Dolly``, ``GPT4All``, ``StableLM``, ``Claude``, ``ChatGPT``); row i of
a generator column answers the same prompt as row i of ``human``. The files are
distributed through MGTBench's Google Drive folder (no stable direct address),
so this loader reads a local directory (default ``<cache>/mgtbench``).

Per (set, generator), as MGTBench does: rows where both texts have more than one
word are kept, shuffled with ``random.Random(seed)`` (seed 0 reproduces
MGTBench's split), the first 80% are "train" and the rest "test"; texts are
detokenised (MGTBench's space clean-up) unless ``detokenize=False``. Human rows
therefore repeat once per generator (``generator`` says which pairing); select
one ``model`` for MGTBench's binary human-vs-generator task.
"""

from __future__ import annotations

import math
import random
import uuid
from pathlib import Path

import pandas as pd

from humanize.exceptions import DatasetUnavailable
from ._cache import cache_dir
from .schema import validate_rows

SETS = ("Essay", "WP", "Reuters")
GENERATORS = ("ChatGPT-turbo", "ChatGLM", "Dolly", "GPT4All", "StableLM", "Claude", "ChatGPT")

_NAMESPACE = uuid.UUID("0b7e4d52-3a9c-4f0e-9d61-5c2a8e7f1b34")

#: Detokenisation MGTBench applies to every text (its ``process_spaces``): the WP
#: and Reuters sources are tokenised (" ,", "<newline>", "`` "...). Applied in order.
DETOKENIZE = (
    (" ,", ","), (" .", "."), (" ?", "?"), (" !", "!"), (" ;", ";"), (" '", "'"), (" ’ ", "'"), (" :", ":"),
    ("<newline>", "\n"), ("`` ", '"'), (" ''", '"'), ("''", '"'), (".. ", "... "), (" )", ")"), ("( ", "("),
    (" n't", "n't"), (" i ", " I "), (" i'", " I'"), ("\\'", "'"), ("\n ", "\n"),
)


def detokenize(text: str) -> str:
    for old, new in DETOKENIZE:
        text = text.replace(old, new)
    return text.strip()


def stable_id(*parts: object) -> str:
    return str(uuid.uuid5(_NAMESPACE, "/".join(str(p) for p in parts)))


def choose(name: str, value, allowed, *, casefold: bool = False) -> list[str]:
    """Normalise a filter (None = all, a str, or a list) against the allowed values."""
    if value is None:
        return list(allowed)
    try:
        vals = [value] if isinstance(value, str) else list(value)
    except TypeError:
        raise TypeError(f"{name} takes a str or a list of str, got {type(value).__name__}") from None
    if not vals:
        raise ValueError(f"{name} filter is empty; choose from {list(allowed)}")
    lookup = {(a.casefold() if casefold else a): a for a in allowed}
    out = []
    for v in vals:
        if not isinstance(v, str):
            raise TypeError(f"{name} values must be str, got {type(v).__name__}")
        key = v.casefold() if casefold else v
        if key not in lookup:
            raise ValueError(f"unknown {name} {v!r}; choose from {list(allowed)}")
        out.append(lookup[key])
    return list(dict.fromkeys(out))


def check_split(split) -> list[str]:
    return choose("split", split, ("train", "test"))


def check_fraction(train_fraction) -> float:
    if isinstance(train_fraction, bool) or not isinstance(train_fraction, (int, float)):
        raise TypeError(f"train_fraction must be a number in (0, 1), got {type(train_fraction).__name__}")
    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction must be in (0, 1), got {train_fraction!r}")
    return float(train_fraction)


def check_n(n) -> int | None:
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f"n must be a positive int, got {n!r}")
    return n


def _words(text) -> int:
    return len(text.split()) if isinstance(text, str) else 0


def load_mgtbench(data_dir: str | Path | None = None, *, domain=None, model=None, split=None, seed: int = 0,
                  train_fraction: float = 0.8, detokenize_text: bool = True) -> pd.DataFrame:
    """MGTBench rows in our schema plus ``split`` ("train"/"test"), ``generator`` and ``pair``.

    ``domain``: set name(s) (Essay/WP/Reuters, any case; None = every set found in
    ``data_dir``); ``model``: generator column(s); ``split``: "train"/"test" or both (None).
    """
    sets = choose("MGTBench domain", domain, SETS, casefold=True)
    splits = check_split(split)
    train_fraction = check_fraction(train_fraction)
    root = Path(data_dir).expanduser() if data_dir is not None else cache_dir("mgtbench")
    if domain is None:  # every set on disk
        sets = [name for name in SETS if (root / f"{name}_LLMs.csv").is_file()] or list(SETS)
    rows = []
    for name in sets:
        csv = root / f"{name}_LLMs.csv"
        if not csv.is_file():
            raise DatasetUnavailable(
                f"no MGTBench file {csv}; download {name}_LLMs.csv from MGTBench's Google Drive folder "
                "(github.com/xinleihe/MGTBench) into that directory"
            )
        table = pd.read_csv(csv, dtype=str, keep_default_na=False, na_values=[""])
        if "human" not in table.columns:
            raise ValueError(f"{csv} has no 'human' column; columns: {list(table.columns)}")
        present = [g for g in GENERATORS if g in table.columns]
        gens = present if model is None else choose(f"generator in {csv.name}", model, present)
        for gen in gens:
            keep = [i for i in range(len(table))
                    if _words(table["human"].iat[i]) > 1 and _words(table[gen].iat[i]) > 1]
            order = list(range(len(keep)))
            random.Random(seed).shuffle(order)
            n_train = math.ceil(len(keep) * train_fraction)
            for pos, j in enumerate(order):
                part = "train" if pos < n_train else "test"
                if part not in splits:
                    continue
                i = keep[j]
                hid = stable_id("mgtbench", name, gen, i, "human")
                for label, text, mid in (("human", table["human"].iat[i], hid),
                                         ("machine", table[gen].iat[i], stable_id("mgtbench", name, gen, i, "machine"))):
                    rows.append(dict(
                        id=mid, source_id=hid, model="human" if label == "human" else gen, decoding=None,
                        repetition_penalty=None, attack="none", domain=name, title=None, prompt=None,
                        generation=detokenize(text) if detokenize_text else text, label=label, split=part,
                        generator=gen, pair=i,
                    ))
    return validate_rows(pd.DataFrame(rows, columns=_COLUMNS))


_COLUMNS = ["id", "source_id", "model", "decoding", "repetition_penalty", "attack", "domain", "title", "prompt",
            "generation", "label", "split", "generator", "pair"]
