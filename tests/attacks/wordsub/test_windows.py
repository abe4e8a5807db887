"""Long documents in the engine (issue #22 §2): swaps spread over the whole text, the parts' batches bounded by a
window, counted with spies (no model: a rule candidate source and a rule scorer)."""
import pytest

from humanize.attacks import apply_edits, check_edits
from humanize.attacks.wordsub import Candidate, CandidateGenerator, Doc, NotStopword, Scorer, WordSubstitution
from humanize.attacks.wordsub import engine


class Reversed(CandidateGenerator):
    """Each word's reversal and its doubled first letter (rule candidates); records the documents it sees."""

    source = "rule"

    def __init__(self):
        self.seen = []

    def propose(self, doc, positions):
        self.seen.append((len(doc.words), len(positions)))
        out = {}
        for i in positions:
            w = doc.word(i).lower()
            out[i] = [Candidate(i, c, self.source) for c in dict.fromkeys([w[::-1], w[0] + w]) if c != w]
        return out


class Flat(Scorer):
    """Every candidate scores the same: ties everywhere, broken by word position (as a scorer whose context
    ends early leaves every later word at -inf: what sent the swaps to the start of a long text)."""

    def __init__(self):
        self.seen = []

    def score(self, doc, cands):
        self.seen.append(sum(len(cs) for cs in cands.values()))
        return {i: [c._replace(score=0.0) for c in cs] for i, cs in cands.items()}


def _document(texts, words):
    out, n = [], 0
    for t in texts:
        ws = t.split()[: words - n]
        out.append(" ".join(ws))
        n += len(ws)
        if n >= words:
            break
    return "\n\n".join(out)


@pytest.fixture(scope="module")
def machine_texts():
    from humanize.benchmarks.data import load_demo

    return load_demo().query("label == 'machine'")["generation"].tolist()


def _attack(rate=0.2, seed=0):
    return WordSubstitution(candidates=[Reversed()], constraints=[NotStopword()], scorer=Flat(), rate=rate,
                            seed=seed)


def test_swaps_spread_over_both_halves_of_a_2000_word_text(machine_texts):
    text = _document(machine_texts, 2000)
    r = _attack().apply(text)
    check_edits(text, r.edits)
    assert apply_edits(text, r.edits) == r.text
    assert len(r.edits) == r.info["target_swaps"] > 100
    first = sum(e.start < len(text) // 2 for e in r.edits)
    assert 0.35 <= first / len(r.edits) <= 0.65
    again = _attack().apply(text)  # same seed, same document: same result
    assert (again.text, again.edits, again.info) == (r.text, r.edits, r.info)


def test_a_document_within_one_window_is_attacked_as_a_whole(machine_texts, monkeypatch):
    text = _document(machine_texts, 300)
    assert len(Doc.parse(text).words) <= engine.WINDOW_WORDS
    windowed = _attack(rate=0.5).apply(text)
    monkeypatch.setattr(engine, "WINDOW_WORDS", 10**9)
    whole = _attack(rate=0.5).apply(text)
    assert (whole.text, whole.edits, whole.info) == (windowed.text, windowed.edits, windowed.info)


@pytest.mark.parametrize("words", [2000, 8000])
def test_the_largest_batch_the_parts_see_is_bounded_by_the_window_not_the_document(machine_texts, words):
    attack = _attack()
    text = _document(machine_texts * 4, words)
    r = attack.apply(text)
    gen, scorer = attack.candidates[0], attack.scorer
    n_words = len(Doc.parse(text).words)
    assert n_words >= 0.95 * words
    assert len(gen.seen) >= n_words // engine.WINDOW_WORDS  # one call a window
    assert max(w for w, _ in gen.seen) <= engine.WINDOW_WORDS  # each call saw a window, never the document
    assert max(p for _, p in gen.seen) <= engine.WINDOW_WORDS
    assert max(scorer.seen) <= 2 * engine.WINDOW_WORDS  # at most two candidates a word, one window scored at once
    assert r.info["with_candidates"] == sum(p for _, p in gen.seen)  # every eligible word of every window


def test_windows_tile_the_words_on_sentence_boundaries(machine_texts):
    doc = Doc.parse(_document(machine_texts, 3000) + " " + "long " * 900)
    spans = engine.windows(doc)
    assert spans[0][0] == 0 and spans[-1][1] == len(doc.words)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert all(0 < hi - lo <= engine.WINDOW_WORDS for lo, hi in spans)
    # a cut falls between two sentences, except inside the one sentence longer than a window
    inside = [lo for lo, _ in spans[1:] if doc.sentence_of[lo] == doc.sentence_of[lo - 1]]
    assert inside and all(doc.sentence_of[lo] == doc.sentence_of[-1] for lo in inside)
    for lo, hi in spans:
        sub = engine.window_doc(doc, lo, hi)
        assert [sub.word(i) for i in range(len(sub.words))] == [doc.word(i) for i in range(lo, hi)]


def test_share_is_proportional_capped_and_sums_to_the_budget():
    assert engine.share(10, [3, 3, 4]) == [3, 3, 4]
    assert engine.share(7, [2, 2]) == [2, 2]  # capped at what a window can take
    assert engine.share(6, [1, 10, 10]) == [0, 3, 3]  # largest remainders
    assert engine.share(1, [1, 1]) == [1, 0]  # ties to the earlier window
    assert sum(engine.share(50, [7, 0, 13, 29, 1])) == 50
    assert engine.share(3, [0, 0]) == [0, 0]


def test_deletion_importance_holds_a_bounded_number_of_document_copies(machine_texts, monkeypatch):
    from humanize.attacks.wordsub import importance

    from .test_detector_greedy import LexiconDetector

    doc = Doc.parse(_document(machine_texts, 700))
    positions = list(range(len(doc.words)))

    def ranked(batch):
        monkeypatch.setattr(importance, "DELETION_BATCH", batch)
        det = LexiconDetector()
        ranker = importance.SurrogateImportance(surrogate=det, train=None, method="deletion", weight=1.0)
        d = Doc(doc.text, doc.words, doc.sentences, doc.sentence_of)
        return ranker.surrogate_importance(d, positions), det.calls, d.cost["detector_queries"]

    whole, calls, queries = ranked(10**6)
    assert calls == [len(positions) + 1]  # one call, as before, while the words fit in one batch
    chunked, calls, queries_c = ranked(100)
    assert max(calls) == 100 and sum(calls) == len(positions) + 1 == queries_c == queries
    assert chunked.tolist() == whole.tolist()


def test_a_hand_built_document_without_sentences_is_windowed_too():
    text = "word " * 1000
    words = [(5 * k, 5 * k + 4) for k in range(1000)]
    doc = Doc(text, words, [], [])
    spans, w = engine.windows(doc), engine.WINDOW_WORDS
    assert spans == [(lo, min(lo + w, 1000)) for lo in range(0, 1000, w)]
    sub = engine.window_doc(doc, *spans[1])
    assert sub.sentences == [(0, len(sub.text))] and sub.word(0) == "word"


def test_an_unchanged_document_says_why():
    """The engine's info['unchanged'] names the reason (issue #22: no silent no-ops), and only when unchanged."""
    w = WordSubstitution(candidates=[Reversed()], constraints=[NotStopword()], scorer=Flat(), rate=1.0)
    assert w.apply("").info["unchanged"] == "no eligible word"
    assert w.apply("of the and").info["unchanged"] == "no eligible word"  # stopwords only
    assert WordSubstitution(candidates=[Reversed()], scorer=Flat(), rate=0.0).apply(
        "The committee met today.").info["unchanged"] == "no word drawn at the rate"
    changed = w.apply("The committee met today.")
    assert changed.text != "The committee met today." and "unchanged" not in changed.info
