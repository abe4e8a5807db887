"""WordNet 3.0 through NLTK, offline.

``nltk.download`` needs the internet; Debian's ``wordnet-base`` and
``wordnet-sense-index`` packages carry the same database files. They are
copied once into ``cache_dir("nltk_data")`` with the ``lexnames`` file NLTK
expects, and that directory is put on ``nltk.data.path``.
"""
from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

from humanize.exceptions import ModelUnavailable
from .cache import cache_dir, get_or_load

__all__ = ["load_wordnet"]

_INSTALL = ("apt-get install -y wordnet-base wordnet-sense-index   "
            "(or, with internet: python -m nltk.downloader wordnet)")
_DEBIAN_DIRS = ("/usr/share/wordnet", "/usr/share/wordnet/dict", "/usr/local/WordNet-3.0/dict")
_LEXNAMES = [
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1), ("noun.animal", 1),
    ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1), ("noun.cognition", 1),
    ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1), ("noun.food", 1), ("noun.group", 1),
    ("noun.location", 1), ("noun.motive", 1), ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1),
    ("noun.plant", 1), ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1),
    ("noun.relation", 1), ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1),
    ("verb.body", 2), ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2),
    ("verb.competition", 2), ("verb.consumption", 2), ("verb.contact", 2), ("verb.creation", 2),
    ("verb.emotion", 2), ("verb.motion", 2), ("verb.perception", 2), ("verb.possession", 2),
    ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2), ("adj.ppl", 3),
]
#: Copies of the Debian files into the cache made by this process (:mod:`humanize.models.prepare` counts them).
INSTALLS = 0
_FILES = [f"{k}.{p}" for k in ("data", "index") for p in ("noun", "verb", "adj", "adv")] + [
    f"{p}.exc" for p in ("noun", "verb", "adj", "adv")] + ["cntlist.rev", "index.sense"]


def _install_from_debian(target: Path) -> str | None:
    """Copy Debian's WordNet files into an NLTK corpus dir; the source dir, or None."""
    for src in map(Path, _DEBIAN_DIRS):
        if all((src / f).is_file() for f in _FILES[:8]):
            tmp = target.with_name(target.name + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            for f in _FILES:
                if (src / f).is_file():
                    shutil.copyfile(src / f, tmp / f)
            lex = src / "lexnames"
            if lex.is_file():
                shutil.copyfile(lex, tmp / "lexnames")
            else:
                (tmp / "lexnames").write_text(
                    "".join(f"{i:02d}\t{name}\t{pos}\n" for i, (name, pos) in enumerate(_LEXNAMES)))
            shutil.rmtree(target, ignore_errors=True)
            os.replace(tmp, target)
            global INSTALLS
            INSTALLS += 1
            return str(src)
    return None


def _load():
    tried = []
    try:
        import nltk
        from nltk.corpus import wordnet
    except ImportError as exc:
        raise ModelUnavailable("wordnet", [f"import nltk: {exc}"], "pip install nltk; " + _INSTALL) from None
    root = cache_dir("nltk_data")
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))
    try:
        wordnet.ensure_loaded()
        return wordnet
    except LookupError:
        tried.append("nltk.data.path (nltk_data/corpora/wordnet): not found")
    target = root / "corpora" / "wordnet"
    target.parent.mkdir(parents=True, exist_ok=True)
    src = _install_from_debian(target)
    if src is None:
        tried.append(f"Debian WordNet files in {', '.join(_DEBIAN_DIRS)}: not found")
        raise ModelUnavailable("wordnet", tried, _INSTALL)
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    try:
        return WordNetCorpusReader(str(target), None)
    except (OSError, LookupError, ValueError) as exc:
        tried.append(f"Debian WordNet files copied from {src}: {type(exc).__name__}: {exc}")
        raise ModelUnavailable("wordnet", tried, _INSTALL) from None


def _load_quietly():
    with warnings.catch_warnings():  # "multilingual functions are not available": OMW is not needed
        warnings.filterwarnings("ignore", message=".*multilingual.*", category=UserWarning)
        return _load()


def load_wordnet():
    """The NLTK WordNet corpus reader (WordNet 3.0), loaded once per process."""
    return get_or_load(("wordnet",), _load_quietly)
