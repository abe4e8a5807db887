"""Validity of word swaps: does a substitution keep what the text says?

Morris et al. (2020, "Reevaluating Adversarial Examples in Natural Language", §3-4) show that
word-substitution attacks pass their own constraints with antonyms and merely related words;
this meter makes that visible. Every 1:1 word swap an attack made is classified with WordNet
3.0 (NLTK, offline through :func:`humanize.models.load_wordnet`) after case-folding, NFKC and
lemmatising both words (``wn._morphy`` per POS):

======================  =================================================================
``morphological``       same word after case-folding / NFKC, same lemma (plural, tense,
                        comparative: increase -> increased), or a US/GB spelling pair
``non_word``            the replacement is no word: invisible or compatibility characters,
                        look-alike Greek/Cyrillic letters in a Latin word, letters mixed with digits, or
                        unknown to WordNet, not a stop word and not one of GloVe 6B's 100,000
                        most frequent words (known misspellings excluded): a misspelling
``antonym``             a WordNet antonym between any senses: direct (lemma antonyms, both
                        ways), or indirect through adjective clusters (a satellite's head,
                        the antonym's satellites: higher/lower, benign/malignant)
``synonym``             the two share a synset (or an adjective satellite and its head)
``hypernym``            one is a hypernym or hyponym of the other within 2 levels
                        (instance hypernyms included); neither valid nor invalid
``sister``              co-hyponyms (a shared direct hypernym: months/weeks) or first cousins
                        under a shared grandparent below WordNet's top levels (door/window)
``unrelated``           anything else, a changed number (digits), and a swap of words
                        WordNet lacks (stop words)
======================  =================================================================

The classes are tried in that order, so a swap is an antonym before it is a synonym. Valid
swaps: synonym, morphological; invalid (meaning-changing): antonym, sister, unrelated.

A WordNet class is necessary, not sufficient (issue #33): with ``context_lm`` (the quality meter
passes the perplexity meter's model, which no attack uses) every swap is also scored in its
sentence (:mod:`humanize.quality.context`), and a swap *fits its context* when its ``delta`` is at
least ``context_threshold`` nats (:data:`~humanize.quality.context.CONTEXT_THRESHOLD`). A swap is
valid when it is both: a synonym or morphological variant, and fits its context. A swap of the same
word in another case or compatibility form (``you -> You``, ``the -> THE``: equal after case-folding and
NFKC) is not a substitute and is not scored: it fits (the language model finds nearly every such change
improbable, 96% of the demo's ``upper_lower`` swaps below the threshold, which says the spelling is odd, not
that the text says something else; its cost shows in perplexity). A proper noun whose case carries its sense
("US -> us") is counted as fitting too.
"""
from __future__ import annotations

import difflib
import functools
import math
import unicodedata
from numbers import Real
from typing import NamedTuple, Optional, Union

import pandas as pd
import regex

from humanize.validation import MODEL, Interval, check_texts
from humanize.models import DEFAULT_CAUSAL_LM, LoadedModel

from ._common import check_pairs, check_text
from .context import CONTEXT_THRESHOLD
from .custom import PairMeter, notes_of

__all__ = ["SwapValidity", "SWAP_CLASSES", "VALID_CLASSES", "INVALID_CLASSES", "VALIDITY_COLUMNS", "Swap", "classify_swap",
           "antonym_synsets",
           "word_swaps", "classified_swaps", "swap_validity", "swap_validity_with_note",
           "summarize_validity"]

SWAP_CLASSES = ("synonym", "morphological", "hypernym", "antonym", "sister", "unrelated", "non_word")
VALID_CLASSES = ("synonym", "morphological")
INVALID_CLASSES = ("antonym", "sister", "unrelated")
#: the per-pair columns of :func:`swap_validity` (and of the quality meter's ``validity``)
VALIDITY_COLUMNS = ("swaps", *(f"swap_{c}" for c in SWAP_CLASSES), "valid_share", "invalid_share",
                    "rewritten_words", "swap_context_fail", "swap_valid_in_context", "valid_in_context_share",
                    "context_misfits")

#: a word token: letters/digits (with combining marks and invisible format characters inside, so
#: that a zero-width character or a look-alike letter keeps its word one token), apostrophe-joined
WORD_RE = regex.compile(r"[\p{Cf}\p{M}]*[\p{L}\p{N}][\p{L}\p{M}\p{N}\p{Cf}]*"
                        r"(?:['\u2019][\p{L}\p{M}\p{N}\p{Cf}]+)*")
#: alignment works on windows of this many tokens (longer texts are aligned window by window)
WINDOW = 4000
_POS = ("n", "v", "a", "r")
_UPOS = {"NOUN": "n", "PROPN": "n", "VERB": "v", "AUX": "v", "ADJ": "a", "ADV": "r"}
_OTHER_TAGS = {"ADP", "DET", "PRON", "CCONJ", "SCONJ", "CONJ", "NUM", "PART", "PUNCT", "SYM", "X", "INTJ", "SPACE",
               "CC", "CD", "DT", "EX", "FW", "IN", "LS", "MD", "PDT", "POS", "PRP", "PRP$", "RP", "TO", "UH", "WDT",
               "WP", "WP$", "WRB", "HYPH", "NFP", "ADD", "AFX", "XX", "_SP"}
#: how many of GloVe 6B's most frequent words count as words where WordNet lacks them
COMMON_WORDS = 100_000
#: grandparents this shallow (WordNet min_depth) are too general to make two words sisters
_COUSIN_MIN_DEPTH = 4


class Swap(NamedTuple):
    """One word replaced by one word: ``original[start:end] == original_word``."""

    start: int
    end: int
    original_word: str
    replacement: str


# -- classification --------------------------------------------------------------------------------
def _wordnet():
    from humanize.models import load_wordnet

    return load_wordnet()


def _wn_pos(pos) -> tuple[str, ...]:
    """WordNet POS letters for a WordNet letter, a Penn tag or a universal tag; all for None or a
    function-word tag."""
    if pos is None:
        return _POS
    if not isinstance(pos, str):
        raise TypeError(f"pos must be a str (WordNet 'n'/'v'/'a'/'r' or a Penn tag) or None, "
                        f"got {type(pos).__name__}")
    p = pos.strip()
    if p in ("n", "v", "a", "r", "s"):
        return ("a",) if p == "s" else (p,)
    up = p.upper()
    if up in _UPOS:
        return (_UPOS[up],)
    for prefix, letter in (("NN", "n"), ("VB", "v"), ("JJ", "a"), ("RB", "r")):
        if up.startswith(prefix) and up[len(prefix):] in ("", "S", "P", "PS", "D", "G", "N", "Z", "R"):
            return (letter,)
    if up in _OTHER_TAGS or (p and not any(c.isalnum() for c in p)):
        return _POS
    raise ValueError(f"pos {pos!r} is not a WordNet POS ('n', 'v', 'a', 'r'), a Penn tag or a universal POS tag")


def _norm(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold().replace("\u2019", "'")


def _script(ch: str) -> str:
    return unicodedata.name(ch, "UNKNOWN").split(" ")[0]


def _obfuscated(word: str, original: str) -> bool:
    """Invisible characters, compatibility look-alikes (fullwidth, ligatures, math letters), another
    script's letters for a Latin ``original``, or Latin mixed with another script in ``word``."""
    if any(unicodedata.category(c) == "Cf" and c not in original for c in word):
        return True
    if unicodedata.normalize("NFKC", word) != word and unicodedata.normalize("NFKC", original) == original:
        return True
    scripts = {_script(c) for c in word if c.isalpha()}
    if {_script(c) for c in original if c.isalpha()} == {"LATIN"} and scripts - {"LATIN"}:
        return True  # a Latin word written (partly) in look-alike Greek / Cyrillic letters
    return "LATIN" in scripts and len(scripts) > 1


@functools.lru_cache(maxsize=1)
def _stop_words() -> frozenset:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(_norm(w) for w in STOP_WORDS)


@functools.lru_cache(maxsize=1)
def _spellings() -> dict:
    """US <-> GB spellings (the table of the ``alternative_spelling`` attack), both ways, lower case."""
    import json

    from humanize._data import DATA_DIR

    with open(DATA_DIR / "resources" / "american_to_british.json", encoding="utf-8") as f:
        table = json.load(f)
    out: dict = {}
    for us, gb in table.items():
        out.setdefault(us.lower(), set()).add(gb.lower())
        out.setdefault(gb.lower(), set()).add(us.lower())
    return out


def _base(word: str) -> str:
    """The form to look up: possessive ``'s`` / trailing apostrophe dropped."""
    if word.endswith("'s") and len(word) > 2:
        return word[:-2]
    return word.rstrip("'") or word


@functools.lru_cache(maxsize=1 << 16)
def _lemmas(word: str, pos: tuple) -> frozenset:
    wn = _wordnet()
    w = _base(word)
    out = {w}
    for p in pos:
        out.update(wn._morphy(w, p))
    return frozenset(out)


@functools.lru_cache(maxsize=1 << 16)
def _synsets(word: str, pos: tuple) -> frozenset:
    wn = _wordnet()
    w = _base(word)
    return frozenset(s for p in pos for s in wn.synsets(w, ("a", "s") if p == "a" else p))


@functools.lru_cache(maxsize=1)
def _misspellings() -> frozenset:
    """The misspellings of the ``misspelling`` attack's tables (correct word -> misspellings)."""
    import json

    from humanize._data import DATA_DIR

    out = set()
    for name in ("misspellings_common.json", "misspellings_wikipedia_machines.json"):
        with open(DATA_DIR / "resources" / name, encoding="utf-8") as f:
            out.update(w.lower() for ws in json.load(f).values() for w in ws)
    return frozenset(out)


@functools.lru_cache(maxsize=1)
def _common_words() -> frozenset:
    """GloVe 6B's most frequent words (its vocabulary is in frequency order): words WordNet lacks
    (payouts, biodiesel, names); empty where the vectors are not installed."""
    from humanize.models import ModelUnavailable, load_word_vectors

    try:
        return frozenset(load_word_vectors("glove-6b-50d").words[:COMMON_WORDS])
    except ModelUnavailable:
        return frozenset()


def _known(word: str) -> bool:
    if word in _stop_words() or _base(word) in _stop_words() or _synsets(word, _POS):
        return True
    if word in _misspellings():
        return False
    if word in _common_words() or _base(word) in _common_words():
        return True
    head, _, tail = word.partition("'")
    if tail in ("t", "s", "re", "ve", "ll", "d", "m"):  # contractions: don't, we're, it'll
        stem = head[:-1] if tail == "t" and head.endswith("n") else head
        return bool(stem) and (stem in _stop_words() or bool(_synsets(stem, _POS)) or stem in ("ca", "wo", "sha"))
    return False


@functools.lru_cache(maxsize=1 << 16)
def antonym_synsets(synsets: frozenset) -> frozenset:
    """Synsets antonymous to any of ``synsets``: direct lemma antonyms, and through adjective clusters
    (a satellite's head synsets; the antonym's own satellites)."""
    out = set()
    for s in synsets:
        heads = [s, *s.similar_tos()] if s.pos() == "s" else [s]
        for h in heads:
            for lemma in h.lemmas():
                for ant in lemma.antonyms():
                    t = ant.synset()
                    out.add(t)
                    if t.pos() in ("a", "s"):
                        out.update(t.similar_tos())
    return frozenset(out)


@functools.lru_cache(maxsize=1 << 16)
def _ancestors(synsets: frozenset, depth: int) -> dict:
    """Hypernyms (and instance hypernyms) up to ``depth`` levels: synset -> level."""
    out: dict = {}
    frontier = list(synsets)
    for level in range(1, depth + 1):
        nxt = []
        for s in frontier:
            for h in (*s.hypernyms(), *s.instance_hypernyms()):
                if h not in out:
                    out[h] = level
                    nxt.append(h)
        frontier = nxt
    return out


def _similar(synsets: frozenset) -> frozenset:
    return frozenset(t for s in synsets if s.pos() in ("a", "s") for t in s.similar_tos())


@functools.lru_cache(maxsize=1 << 18)
def _classify(original: str, replacement: str, pos: tuple) -> str:
    if original == replacement:
        return "morphological"
    if _obfuscated(replacement, original):
        return "non_word"
    a, b = _norm(original), _norm(replacement)
    if a == b:
        return "morphological"
    if any(c.isdigit() for c in a + b):
        if any(c.isdigit() for c in a) or b.isdigit():
            return "unrelated"  # a changed figure (1990s -> 1991s) changes what the text says
        return "non_word"  # letters mixed with digits (h3llo) where the original was a word
    if pos != _POS and not (_synsets(a, pos) and _synsets(b, pos)):
        pos = _POS  # a tag WordNet does not know for one of the words: judge on every POS
    la, lb = _lemmas(a, pos), _lemmas(b, pos)
    if la & lb:
        return "morphological"
    spell = _spellings()
    if any(spell.get(x, set()) & lb for x in la) or any(spell.get(x, set()) & la for x in lb) \
            or b in spell.get(a, set()):
        return "morphological"
    if not _known(b):
        return "non_word"
    sa, sb = _synsets(a, pos), _synsets(b, pos)
    if not sa or not sb:
        return "unrelated"  # a stop word or a word WordNet lacks: no relation to vouch for it
    if antonym_synsets(sa) & sb or antonym_synsets(sb) & sa:
        return "antonym"
    if sa & sb or _similar(sa) & sb or _similar(sb) & sa:
        return "synonym"
    up_a, up_b = _ancestors(sa, 2), _ancestors(sb, 2)
    if any(s in up_a for s in sb) or any(s in up_b for s in sa):
        return "hypernym"
    shared = set(up_a) & set(up_b)
    if any(up_a[h] == 1 and up_b[h] == 1 for h in shared) or \
            any(up_a[h] == 2 and up_b[h] == 2 and h.min_depth() >= _COUSIN_MIN_DEPTH for h in shared):
        return "sister"
    return "unrelated"


def classify_swap(original: str, replacement: str, pos: str | None = None) -> str:
    """The validity class (one of :data:`SWAP_CLASSES`) of replacing word ``original`` by ``replacement``.

    ``pos``: the word's POS as a WordNet letter ('n', 'v', 'a', 'r'), a Penn or universal tag, or
    None (every POS); senses are taken from that POS, or from every POS when WordNet has none there
    for one of the words. The order of the tests is the module docstring's table. Cached.
    """
    check_text(original, "original")
    check_text(replacement, "replacement")
    if not original.strip() or not replacement.strip():
        raise ValueError(f"classify_swap: original and replacement must be words, got {original!r} -> "
                         f"{replacement!r}")
    return _classify(original.strip(), replacement.strip(), _wn_pos(pos))


# -- alignment -------------------------------------------------------------------------------------
def _opcodes(a: list[str], b: list[str]):
    """difflib opcodes of two token lists; texts over :data:`WINDOW` tokens are aligned window by
    window (each cut at an equal run before the window's last quarter), so the cost stays linear."""
    i = j = 0
    while i < len(a) or j < len(b):
        ai, bj = min(len(a), i + WINDOW), min(len(b), j + WINDOW)
        ops = difflib.SequenceMatcher(None, a[i:ai], b[j:bj], autojunk=False).get_opcodes()
        if ai == len(a) and bj == len(b):
            yield from ((t, i1 + i, i2 + i, j1 + j, j2 + j) for t, i1, i2, j1, j2 in ops)
            return
        margin = WINDOW // 4
        limit_a, limit_b = (ai - i) - margin, (bj - j) - margin
        cut = None
        for k, (t, i1, i2, j1, j2) in enumerate(ops):
            if t == "equal" and i1 < limit_a and j1 < limit_b:
                cut = k
        if cut is None:  # nothing in common early in the window: all of it rewritten
            yield ("replace", i, ai, j, bj)
            i, j = ai, bj
            continue
        for t, i1, i2, j1, j2 in ops[:cut]:
            yield t, i1 + i, i2 + i, j1 + j, j2 + j
        _, i1, i2, j1, j2 = ops[cut]
        n = min(i2 - i1, limit_a - i1, limit_b - j1)
        yield "equal", i1 + i, i1 + n + i, j1 + j, j1 + n + j
        i, j = i + i1 + n, j + j1 + n


def _align(original: str, attacked: str) -> tuple[list[Swap], int]:
    check_text(original, "original")
    check_text(attacked, "attacked")
    ta = [(m.start(), m.end(), m.group()) for m in WORD_RE.finditer(original)]
    tb = [m.group() for m in WORD_RE.finditer(attacked)]
    swaps, rewritten = [], 0
    for tag, i1, i2, j1, j2 in _opcodes([t[2] for t in ta], tb):
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            swaps += [Swap(ta[i][0], ta[i][1], ta[i][2], tb[j]) for i, j in zip(range(i1, i2), range(j1, j2))]
        else:
            rewritten += max(i2 - i1, j2 - j1)
    return swaps, rewritten


def word_swaps(original: str, attacked: str) -> list[Swap]:
    """The 1:1 word replacements that turn ``original`` into ``attacked``, offsets into ``original``.

    Tokens (:data:`WORD_RE`: letters and digits, apostrophe-joined) are aligned with difflib
    (``autojunk=False``); a replaced block with as many tokens on both sides gives one swap per
    token; unequal blocks, insertions and deletions are rewritten words, not swaps. Texts longer
    than :data:`WINDOW` tokens are aligned window by window (linear cost).
    """
    return _align(original, attacked)[0]


def classified_swaps(original: str, attacked: str) -> list[tuple[Swap, str]]:
    """Every swap of :func:`word_swaps` with its class (for listings such as the documents page)."""
    return [(s, _classify(s.original_word, s.replacement, _POS)) for s in word_swaps(original, attacked)]


def swap_validity(originals, attacked, context_lm=None, *, context_threshold: float | None = None,
                  device=None, dtype=None) -> pd.DataFrame:
    """One row per (original, attacked) pair: ``swaps``, ``swap_<class>`` counts, ``valid_share`` and
    ``invalid_share`` (NaN without swaps) and ``rewritten_words`` (words in unequal rewrites,
    insertions and deletions: the larger side of each).

    With ``context_lm`` (a causal LM's name or the model) every swap is also scored in its sentence
    (module docstring): ``swap_context_fail`` counts the swaps below ``context_threshold`` (default
    :data:`~humanize.quality.context.CONTEXT_THRESHOLD`; a non-word counts as failing, unscored, and the same
    word in another case as fitting, unscored),
    ``swap_valid_in_context`` those that are WordNet-valid *and* fit, ``valid_in_context_share`` their
    share and ``context_misfits`` the failing swaps as ``"start:end"`` offsets into the original, joined
    by spaces. Without ``context_lm`` these columns are NaN.
    """
    from .context import CONTEXT_THRESHOLD, context_deltas

    originals, attacked = check_pairs("humanize.quality", "swap_validity", originals, attacked)
    threshold = CONTEXT_THRESHOLD if context_threshold is None else float(context_threshold)
    rows, scored = [], []
    for o, t in zip(originals, attacked):
        swaps, rewritten = _align(o, t)
        classes = [_classify(s.original_word, s.replacement, _POS) for s in swaps]
        counts = dict.fromkeys(SWAP_CLASSES, 0)
        for c in classes:
            counts[c] += 1
        n = len(swaps)
        rows.append({"swaps": n, **{f"swap_{c}": k for c, k in counts.items()},
                     "valid_share": sum(counts[c] for c in VALID_CLASSES) / n if n else math.nan,
                     "invalid_share": sum(counts[c] for c in INVALID_CLASSES) / n if n else math.nan,
                     "rewritten_words": rewritten, "swap_context_fail": math.nan,
                     "swap_valid_in_context": math.nan, "valid_in_context_share": math.nan,
                     "context_misfits": math.nan})
        scored.append((o, swaps, classes))
    if context_lm is not None:
        items = [(o, s.start, s.end, s.replacement) for o, swaps, classes in scored
                 for s, c in zip(swaps, classes) if _scored_in_context(s, c)]
        deltas = iter(context_deltas(items, context_lm, device=device, dtype=dtype))
        for row, (o, swaps, classes) in zip(rows, scored):
            fits = [(d := next(deltas)) == d and d >= threshold if _scored_in_context(s, c) else c != "non_word"
                    for s, c in zip(swaps, classes)]
            row["swap_context_fail"] = sum(not f for f in fits)
            row["swap_valid_in_context"] = sum(f and c in VALID_CLASSES for f, c in zip(fits, classes))
            row["valid_in_context_share"] = row["swap_valid_in_context"] / len(swaps) if swaps else math.nan
            row["context_misfits"] = " ".join(f"{s.start}:{s.end}" for s, f in zip(swaps, fits) if not f)
    return pd.DataFrame(rows, columns=list(VALIDITY_COLUMNS), index=pd.RangeIndex(len(rows)))


def _scored_in_context(swap: Swap, cls: str) -> bool:
    """Whether the context check scores ``swap``: not a non-word (it fails unscored) and not the same word in
    another case or form (it fits unscored; module docstring)."""
    return cls != "non_word" and _norm(swap.original_word) != _norm(swap.replacement)


def swap_validity_with_note(originals, attacked, context_lm=None, *, context_threshold: float | None = None,
                            device=None, dtype=None) -> tuple[pd.DataFrame, str]:
    """:func:`swap_validity`, or NaN columns and the reason where WordNet is not installed."""
    from humanize.exceptions import ModelUnavailable

    try:
        return swap_validity(originals, attacked, context_lm, context_threshold=context_threshold,
                             device=device, dtype=dtype), ""
    except ModelUnavailable as err:
        n = len(check_texts(originals, "humanize.quality", "swap_validity(originals)"))
        frame = pd.DataFrame(math.nan, columns=list(VALIDITY_COLUMNS), index=pd.RangeIndex(n))
        return frame, "WordNet unavailable: " + " ".join(str(err).split())[:200]


def summarize_validity(frame: pd.DataFrame) -> pd.Series:
    """Shares pooled over every swap of ``frame`` (sum of counts / sum of swaps, not a mean of
    per-document shares): ``swaps``, ``share_<class>``, ``valid_share``, ``invalid_share``,
    ``swaps_per_doc`` and ``rewritten_words_per_doc`` (documents with a count); and, where the context
    meter ran, ``context_fail_share`` (swaps that do not fit their sentence) and
    ``valid_in_context_share`` (WordNet-valid *and* fitting: the report's "valid swaps")."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in ("swaps", *(f"swap_{c}" for c in SWAP_CLASSES)) if c not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks the validity columns {missing} (from swap_validity or QualityMeter)")
    counted = frame[pd.to_numeric(frame["swaps"], errors="coerce").notna()]
    total = float(pd.to_numeric(counted["swaps"]).sum())
    out = {"swaps": total}
    for c in SWAP_CLASSES:
        out[f"share_{c}"] = float(pd.to_numeric(counted[f"swap_{c}"]).sum()) / total if total else math.nan
    out["valid_share"] = sum(out[f"share_{c}"] for c in VALID_CLASSES) if total else math.nan
    out["invalid_share"] = sum(out[f"share_{c}"] for c in INVALID_CLASSES) if total else math.nan
    # the context meter's figures, pooled over the swaps of the documents it scored
    ctx = counted[pd.to_numeric(counted["swap_context_fail"], errors="coerce").notna()] \
        if "swap_context_fail" in counted.columns else counted.iloc[:0]
    n_ctx = float(pd.to_numeric(ctx["swaps"]).sum()) if len(ctx) else 0.0
    out["context_fail_share"] = float(pd.to_numeric(ctx["swap_context_fail"]).sum()) / n_ctx if n_ctx else math.nan
    out["valid_in_context_share"] = (float(pd.to_numeric(ctx["swap_valid_in_context"]).sum()) / n_ctx
                                     if n_ctx else math.nan)
    out["swaps_per_doc"] = total / len(counted) if len(counted) else math.nan
    if "rewritten_words" in counted.columns:
        rw = pd.to_numeric(counted["rewritten_words"], errors="coerce")
        out["rewritten_words_per_doc"] = float(rw.mean()) if rw.notna().any() else math.nan
    return pd.Series(out, dtype=float)


class SwapValidity(PairMeter):
    """Validity of every word swap: its WordNet class and whether it fits its sentence (Morris et al. 2020, §4).

    :func:`swap_validity`'s columns: the WordNet class of every swap and, with ``context_threshold``, whether it fits its sentence under ``lm``
    (:mod:`humanize.quality.context`); NaN with a note where WordNet is not installed.

    lm : the causal LM that scores each swap in its sentence (the perplexity meter's by default, which no
        attack uses)
    context_threshold : a swap fits when its delta is at least this many nats; None: the WordNet classes alone
    """

    name = "validity"
    #: 2: a swap of the same word in another case or form (you -> You) fits without a context score
    version = "2"
    default = True
    columns = VALIDITY_COLUMNS
    _model_params = ("lm",)
    _parameter_constraints = {"lm": [MODEL], "context_threshold": [Interval(Real, None, None), None]}

    def __init__(self, lm: Union[str, LoadedModel] = DEFAULT_CAUSAL_LM,
                 context_threshold: Optional[float] = CONTEXT_THRESHOLD, device=None, dtype="auto"):
        self._init_params(locals())

    def _fingerprint_models(self) -> dict:
        return {} if self.context_threshold is None else {"lm": self.lm}  # the WordNet classes load no model

    def measure(self, originals, attacked) -> tuple[dict, list[str]]:
        ctx_lm = None if self.context_threshold is None else self.lm
        valid, why = swap_validity_with_note(originals, attacked, ctx_lm, context_threshold=self.context_threshold,
                                             device=self.device, dtype=self.dtype)
        return {c: valid[c].to_numpy() for c in valid.columns}, notes_of({"validity": [why] * len(valid)})

