"""WordNet 3.0 through NLTK, offline.

``nltk.download`` needs the internet; Debian's ``wordnet-base`` and
``wordnet-sense-index`` packages carry the same database files. They are
copied once into ``cache_dir("nltk_data")`` with the ``lexnames`` file NLTK
expects, and that directory is put on ``nltk.data.path``.

NLTK's reader parses its in-memory indexes (every lemma's synset offsets, the adjective satellites, the
exception lists) from the text files each time it is built, and also maps WordNet 3.0 onto itself through
``index.sense``, read twice, for the multilingual functions: 10-40 s on a loaded 2-core machine (issue
#38). :func:`write_index` parses them once, at install (``humanize-bench prepare``), into
``wordnet-index.json`` next to the copy, tagged with a digest of the files it was read from and NLTK's
version; :func:`load_wordnet` then builds :class:`IndexedWordNetReader`, which takes those indexes from the
JSON file (data, not code) and computes the 3.0 self-map only if a multilingual function asks for it.
Synsets, lemmas and ``morphy`` read the same data files as NLTK's reader, so every answer is the same
(``tests/models/test_resources.py`` compares the indexes). A missing or stale index falls back to NLTK's
own parsing.
"""
from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import shutil
import warnings
from pathlib import Path

from humanize.exceptions import ModelUnavailable
from .cache import cache_dir, get_or_load

__all__ = ["load_wordnet", "write_index", "IndexedWordNetReader", "INDEX_FILE"]

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
#: Indexes parsed from the text files and written by :func:`write_index` in this process.
INDEXES_WRITTEN = 0
#: The JSON file of the parsed indexes, inside the corpus directory.
INDEX_FILE = "wordnet-index.json"
#: The files the indexes are parsed from (their digest tags the index).
_INDEXED_FROM = ("data.adj", "index.noun", "index.verb", "index.adj", "index.adv",
                 "noun.exc", "verb.exc", "adj.exc", "adv.exc")
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


def _sources_digest(corpus: Path) -> str:
    """A digest of the files the indexes are parsed from, and NLTK's version (its parsing could change)."""
    import nltk

    h = hashlib.sha256(f"nltk {nltk.__version__}\n".encode())
    for name in _INDEXED_FROM:
        h.update(name.encode() + b"\0" + (corpus / name).read_bytes() + b"\0")
    return h.hexdigest()


def _corpus_dir() -> Path:
    return cache_dir("nltk_data") / "corpora" / "wordnet"


def write_index(corpus: Path | None = None) -> Path:
    """Parse the WordNet copy's indexes with NLTK's own reader and write them to :data:`INDEX_FILE` (what
    :class:`IndexedWordNetReader` loads); returns its path. ``corpus``: the copied corpus directory
    (default: the cache's, installed first if absent)."""
    if corpus is None:
        _load_quietly()  # copies the Debian files into the cache if they are not there yet
        corpus = _corpus_dir()
    import nltk

    parent = str(Path(corpus).parent.parent)  # NLTK reads only below a folder on its path (nltk.pathsec)
    if parent not in nltk.data.path:
        nltk.data.path.append(parent)
    _reader_classes()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*multilingual.*", category=UserWarning)
        reader = _ParseOnlyReader(str(corpus), None)
    return _write_index_of(reader, corpus)


def _write_index_of(reader, corpus: Path) -> Path:
    from nltk.corpus.reader.wordnet import ADJ_SAT

    index = {"format": 1, "sources": _sources_digest(corpus), "satellites": sorted(reader.satellite_offsets),
             "lemmas": {lemma: dict(by_pos) for lemma, by_pos in reader._lemma_pos_offset_map.items()},
             "exceptions": {pos: forms for pos, forms in reader._exception_map.items() if pos != ADJ_SAT}}
    target = corpus / INDEX_FILE
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(index, separators=(",", ":")), encoding="utf-8")
    os.replace(tmp, target)
    global INDEXES_WRITTEN
    INDEXES_WRITTEN += 1
    return target


def index_is_current(corpus: Path | None = None) -> bool:
    """Whether the corpus directory (default: the cache's copy) has an index written from its present files by
    this NLTK (its header is checked, the index itself is not read)."""
    corpus = _corpus_dir() if corpus is None else corpus
    return _current_header(corpus) is not None


_HEADER = re.compile(r'\{"format":1,"sources":"([0-9a-f]{64})",')


def _current_header(corpus: Path) -> str | None:
    """The index file's source digest when it matches the corpus's files, else None."""
    try:
        with open(corpus / INDEX_FILE, encoding="utf-8") as f:
            match = _HEADER.match(f.read(128))
        return match.group(1) if match and match.group(1) == _sources_digest(corpus) else None
    except OSError:
        return None


def _read_index(corpus: Path) -> dict | None:
    """The parsed indexes of :func:`write_index`, or None when absent, unreadable or written from other files."""
    if _current_header(corpus) is None:
        return None
    was = gc.isenabled()
    gc.disable()  # a few hundred thousand small containers: the cyclic collector would triple the load
    try:
        index = json.loads((corpus / INDEX_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    finally:
        if was:
            gc.enable()
    if not isinstance(index, dict) or not all(isinstance(index.get(k), t) for k, t in (
            ("satellites", list), ("lemmas", dict), ("exceptions", dict))):
        return None
    return index


def _reader_classes():
    """The two reader classes, defined on first use (NLTK is imported only when WordNet is loaded)."""
    global _ParseOnlyReader, IndexedWordNetReader
    if IndexedWordNetReader is not None:
        return
    from nltk.corpus.reader.wordnet import ADJ, ADJ_SAT, WordNetCorpusReader

    class ParseOnly(WordNetCorpusReader):
        """NLTK's reader without the WordNet-3.0 self-map of its multilingual functions (``map30``, computed on
        first use): what :func:`write_index` needs to read the indexes."""

        _building = False

        def __init__(self, root, omw_reader):
            self._building = True
            try:
                super().__init__(root, omw_reader)
            finally:
                self._building = False

        def map_wn(self, version="wordnet"):
            if self._building:
                return None  # replaced by the lazy ``map30`` below
            return super().map_wn(version)

        @property
        def map30(self):
            if "_map30" not in self.__dict__:
                self.__dict__["_map30"] = super().map_wn()
            return self.__dict__["_map30"]

        @map30.setter
        def map30(self, value):
            if not self._building:
                self.__dict__["_map30"] = value

    class Indexed(ParseOnly):
        """NLTK's WordNet reader whose in-memory indexes come from :data:`INDEX_FILE` (:func:`write_index`)
        instead of being parsed from the text files; everything else is NLTK's."""

        def __init__(self, root, omw_reader, index: dict):
            self._index = index
            try:
                super().__init__(root, omw_reader)
            finally:
                del self._index

        def _scan_satellites(self):
            self.satellite_offsets = set(self._index["satellites"])

        def _load_lemma_pos_offset_map(self):
            self._lemma_pos_offset_map.update(self._index["lemmas"])

        def _load_exception_map(self):
            self._exception_map.update(self._index["exceptions"])
            self._exception_map[ADJ_SAT] = self._exception_map[ADJ]

    ParseOnly.__name__ = ParseOnly.__qualname__ = "ParseOnlyWordNetReader"
    Indexed.__name__ = Indexed.__qualname__ = "IndexedWordNetReader"
    _ParseOnlyReader, IndexedWordNetReader = ParseOnly, Indexed


_ParseOnlyReader = None
#: NLTK's ``WordNetCorpusReader`` with its indexes read from :data:`INDEX_FILE` (defined on first load).
IndexedWordNetReader = None


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
    target = root / "corpora" / "wordnet"
    found = _found_by_nltk(nltk)
    if found is not None and Path(str(found)).resolve() == target.resolve():
        return _cached_reader(found)  # our copy: its indexes from the JSON file written at install
    try:
        wordnet.ensure_loaded()  # a WordNet of NLTK's own (nltk_data), before our copy on the path
        return wordnet
    except LookupError:
        tried.append("nltk.data.path (nltk_data/corpora/wordnet): not found")
    target.parent.mkdir(parents=True, exist_ok=True)
    src = _install_from_debian(target)
    if src is None:
        tried.append(f"Debian WordNet files in {', '.join(_DEBIAN_DIRS)}: not found")
        raise ModelUnavailable("wordnet", tried, _INSTALL)
    try:
        return _cached_reader(nltk.data.find("corpora/wordnet"))
    except (OSError, LookupError, ValueError) as exc:
        tried.append(f"Debian WordNet files copied from {src}: {type(exc).__name__}: {exc}")
        raise ModelUnavailable("wordnet", tried, _INSTALL) from None


def _found_by_nltk(nltk):
    """The WordNet directory ``nltk.corpus.wordnet`` would load (NLTK's search order), or None."""
    try:
        return nltk.data.find("corpora/wordnet")
    except LookupError:
        try:
            return nltk.data.find("corpora/wordnet.zip/wordnet/")
        except LookupError:
            return None


def _omw_reader():
    """The multilingual reader ``nltk.corpus.wordnet`` is built with (loaded only if a multilingual function
    is called)."""
    from nltk.corpus import CorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    return LazyCorpusLoader("omw-2.0", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8")


def _cached_reader(found):
    """The reader of the cache's WordNet copy at ``found`` (NLTK's path pointer): built from its index file when
    that is current, else parsed by NLTK (and the index written, so the next load is fast)."""
    _reader_classes()
    corpus = Path(str(found))
    index = _read_index(corpus)
    if index is not None:
        return IndexedWordNetReader(found, _omw_reader(), index)
    reader = _ParseOnlyReader(found, _omw_reader())
    try:
        _write_index_of(reader, corpus)
    except OSError:  # a read-only cache: the next process parses again
        pass
    return reader


def _load_quietly():
    with warnings.catch_warnings():  # "multilingual functions are not available": OMW is not needed
        warnings.filterwarnings("ignore", message=".*multilingual.*", category=UserWarning)
        return _thread_safe(_load())


#: The reader's methods that seek and read its shared open files (NLTK's reader keeps one file object per part
#: of speech): two threads calling them at once read each other's lines.
_FILE_READERS = ("_data_file", "synset_from_pos_and_offset", "lemma_count", "lemma_from_key")


def _thread_safe(reader):
    """``reader`` with its file-reading methods (:data:`_FILE_READERS`) behind one lock, so that threads (a caller
    attacking documents from a thread pool) can share the process's one reader."""
    import functools
    import threading

    lock = threading.RLock()

    def locked(method):
        @functools.wraps(method)
        def call(*args, **kwargs):
            with lock:
                return method(*args, **kwargs)
        return call

    for name in _FILE_READERS:
        method = getattr(reader, name, None)
        if callable(method):
            setattr(reader, name, locked(method))
    return reader


def load_wordnet():
    """The NLTK WordNet corpus reader (WordNet 3.0), loaded once per process."""
    return get_or_load(("wordnet",), _load_quietly)
