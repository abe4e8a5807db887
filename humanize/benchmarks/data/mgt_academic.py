"""MGT-Academic (MGTBench-2.0; TH-Bench Appendix B): academic human text and its
LLM-polished versions, hub dataset ``AITextDetect/AI_Polish_clean``.

Repository layout: one folder per configuration, ``Human`` and ``<LLM>_new``
(``Llama3_new``, ``Mixtral_new``, ``Moonshot_new``, ``gpt35_new``,
``gpt-4omini_new``), each with a folder per category (16: Physics, Math, ...)
holding JSON files named ``<Category>_<source>_new.json`` (source: wiki, arxiv,
gutenberg, ...) whose records carry a ``text`` field. We read those JSON files
directly (the repository's loading script needs ``trust_remote_code``, which
current ``datasets`` releases no longer run); ``download=True`` fetches only the
folders asked for into ``<cache>/mgt_academic``.

Split: per category, the human texts and each LLM's texts are shuffled with
``seed`` and cut 80/20 into "train"/"test"; ``n`` keeps that many texts per
class (human, and each LLM) per category before the cut (TH-Bench uses the
size of an MGTBench set, 1,000, per field).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from humanize.exceptions import DatasetUnavailable
from ._cache import cache_dir, hub_snapshot
from .mgtbench import check_fraction, check_n, check_split, choose, stable_id
from .schema import validate_rows

HUB_REPO = "AITextDetect/AI_Polish_clean"
HUMAN_DIR = "Human"
#: LLM name (the loading script's configuration) -> folder in the repository.
MODEL_DIRS = {"Llama3": "Llama3_new", "Mixtral": "Mixtral_new", "Moonshot": "Moonshot_new",
              "gpt35": "gpt35_new", "gpt-4omini": "gpt-4omini_new"}
TOPICS = {
    "STEM": ("Physics", "Math", "Chemistry", "Biology", "Electrical_engineering", "Computer_science",
             "Statistics", "Medicine"),
    "Social_sciences": ("Economy", "Management", "Education"),
    "Humanities": ("Literature", "History", "Law", "Art", "Philosophy"),
}
CATEGORIES = tuple(c for cats in TOPICS.values() for c in cats)
TOPIC_OF = {c: t for t, cats in TOPICS.items() for c in cats}


def _categories(domain) -> list[str]:
    if domain is None:
        return list(CATEGORIES)
    vals = [domain] if isinstance(domain, str) else list(domain)
    out = []
    for v in vals:
        if isinstance(v, str) and v in TOPICS:
            out.extend(TOPICS[v])
        else:
            out.extend(choose("MGT-Academic domain (category or topic)", v, CATEGORIES + tuple(TOPICS)))
    return list(dict.fromkeys(out))


def _read_texts(path: Path) -> list[str]:
    """Texts of one JSON file: a list of records, JSON lines, or {"text": [...]}."""
    raw = path.read_text(encoding="utf-8")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        data = [json.loads(line) for line in raw.splitlines() if line.strip()]
    if isinstance(data, dict) and isinstance(data.get("text"), list):
        return ["" if t is None else str(t) for t in data["text"]]
    if isinstance(data, list) and all(isinstance(r, dict) and "text" in r for r in data):
        return ["" if r["text"] is None else str(r["text"]) for r in data]
    raise ValueError(f"{path}: expected records with a 'text' field, found {type(data).__name__}")


def _source(path: Path, category: str) -> str:
    stem = path.stem
    if stem.startswith(category + "_"):
        stem = stem[len(category) + 1:]
    return stem[: -len("_new")] if stem.endswith("_new") else stem


def _folder_texts(root: Path, folder: str, category: str) -> list[tuple[str, str]]:
    d = root / folder / category
    files = sorted(d.glob("*.json")) + sorted(d.glob("*.jsonl"))
    if not files:
        raise DatasetUnavailable(
            f"no MGT-Academic files in {d}; pass download=True to fetch them from the hub dataset {HUB_REPO}, "
            "or data_dir= a local copy with its layout"
        )
    return [(t, _source(f, category)) for f in files for t in _read_texts(f)]


def download_mgt_academic(categories, models) -> Path:
    """Fetch the Human and LLM folders of these categories into ``<cache>/mgt_academic``."""
    root = cache_dir("mgt_academic")
    folders = [HUMAN_DIR] + [MODEL_DIRS[m] for m in models]
    return hub_snapshot(HUB_REPO, root, [f"{f}/{c}/*" for f in folders for c in categories])


def load_mgt_academic(data_dir: str | Path | None = None, *, domain=None, model=None, split=None,
                      n: int | None = None, seed: int = 0, train_fraction: float = 0.8,
                      download: bool = False) -> pd.DataFrame:
    """MGT-Academic rows in our schema plus ``split``, ``generator``, ``topic`` and ``source``.

    ``domain``: categories (e.g. "Physics") and/or topics ("STEM",
    "Social_sciences", "Humanities"); None = every category on disk.
    ``model``: LLM names (Llama3, Mixtral, Moonshot, gpt35, gpt-4omini); None =
    those on disk. ``split``: "train"/"test" or both (None).
    Human rows appear once per category (``generator`` is None for them).
    """
    cats = _categories(domain)
    models = choose("MGT-Academic model", model, tuple(MODEL_DIRS))
    splits = check_split(split)
    n = check_n(n)
    train_fraction = check_fraction(train_fraction)
    if data_dir is not None:
        root = Path(data_dir).expanduser()
    else:
        root = cache_dir("mgt_academic")
        if download:
            download_mgt_academic(cats, models)
    if domain is None:  # every category on disk
        cats = [c for c in cats if (root / HUMAN_DIR / c).is_dir()] or cats
    rows = []
    for cat in cats:
        groups = [("human", None, HUMAN_DIR)] + [("machine", m, MODEL_DIRS[m]) for m in models]
        for label, gen, folder in groups:
            if model is None and gen is not None and not (root / folder / cat).is_dir():
                continue  # an LLM not on disk for this category, and none was asked for
            texts = _folder_texts(root, folder, cat)
            stream = 0 if gen is None else 1 + list(MODEL_DIRS).index(gen)
            # one stream per (seed, category, class): a split does not depend on what else is loaded
            rng = np.random.default_rng([seed, CATEGORIES.index(cat), stream])
            order = rng.permutation(len(texts))
            if n is not None:
                order = order[:n]
            n_train = math.ceil(len(order) * train_fraction)
            for pos, j in enumerate(order):
                part = "train" if pos < n_train else "test"
                if part not in splits:
                    continue
                text, source = texts[j]
                rid = stable_id("mgt_academic", folder, cat, int(j))
                rows.append(dict(
                    id=rid, source_id=rid if gen is None else None, model="human" if gen is None else gen,
                    decoding=None, repetition_penalty=None, attack="none", domain=cat, title=None, prompt=None,
                    generation=text, label=label, split=part, generator=gen, topic=TOPIC_OF[cat], source=source,
                ))
    cols = ["id", "source_id", "model", "decoding", "repetition_penalty", "attack", "domain", "title", "prompt",
            "generation", "label", "split", "generator", "topic", "source"]
    return validate_rows(pd.DataFrame(rows, columns=cols))
