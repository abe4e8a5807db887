"""Package data for the rule-based attacks, loaded lazily and once per process.

Provenance and licences: ``humanize/data/resources/PROVENANCE.md`` and ``humanize/data/NOTICE``.
"""

from __future__ import annotations

import json
from functools import lru_cache

from humanize._data import DATA_DIR


@lru_cache(maxsize=None)
def load_json(name: str):
    """Parse ``humanize/data/resources/<name>`` (cached)."""
    with open(DATA_DIR / "resources" / name, encoding="utf-8") as f:
        return json.load(f)


def homoglyph_table() -> dict[str, list[str]]:
    """RAID's homoglyph table: Latin letter -> look-alike characters (Cyrillic/Greek)."""
    return {k: [t["char"] for t in v] for k, v in load_json("homoglyphs_raid.json").items()}


#: The misspelling dictionaries by name (the file each is read from).
MISSPELLING_DICTIONARIES = {"common": "misspellings_common.json", "wikipedia": "misspellings_wikipedia_machines.json"}


def misspelling_table(name: str = "common") -> dict[str, list[str]]:
    files = MISSPELLING_DICTIONARIES
    if name not in files:
        raise ValueError(f"unknown misspelling dictionary {name!r}; choose one of {sorted(files)}")
    return load_json(files[name])


def us_to_gb_table() -> dict[str, str]:
    return load_json("american_to_british.json")
