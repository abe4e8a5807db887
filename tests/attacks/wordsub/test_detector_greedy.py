"""DetectorGreedy, the ranker seam and detector access, with a toy detector and toy scorer (no model).

The toy detector's score is the share of a document's words that are in a fixed
"machine lexicon", so every invariant can be recomputed exactly here.
"""
import re

import numpy as np
import pytest

from humanize.attacks import apply_edits, check_edits
from humanize.attacks.wordsub import (Candidate, CandidateGenerator, DetectorGreedy, Doc, NotStopword, Scorer,
                                      TextConstraint, WordRanker, WordSubstitution)
from humanize.detectors.base import Detector

LEXICON = {"significant", "crucial", "important", "various", "numerous", "additionally", "utilize", "enhance",
           "demonstrate", "comprehensive", "robust", "notable", "essential", "facilitate", "approach"}
PLAIN = {"significant": ["big", "large", "real"], "crucial": ["key", "vital"], "important": ["big", "key"],
         "various": ["many", "several"], "numerous": ["many", "lots"], "utilize": ["use"],
         "enhance": ["boost", "improve"], "demonstrate": ["show"], "comprehensive": ["full", "broad"],
         "robust": ["strong", "sturdy"], "notable": ["famous", "striking"], "essential": ["needed", "basic"],
         "facilitate": ["help", "ease"], "approach": ["method", "way"], "results": ["findings", "outcomes"],
         "study": ["paper", "report"], "researchers": ["scientists", "authors"]}
TEXT = ("The comprehensive study shows significant results. Researchers utilize various robust methods to "
        "enhance numerous outcomes. This crucial approach is essential and notable. Additionally, the important "
        "results demonstrate how to facilitate progress.")
WORD = re.compile(r"[^\W\d_]+")


class LexiconDetector(Detector):
    """Share of words in LEXICON (higher = more machine-like); counts the texts it is asked about."""

    name = "lexicon_test"

    def __init__(self):
        self.calls = []

    def score(self, texts):
        self.calls.append(len(texts))
        out = []
        for t in texts:
            words = [w.lower() for w in WORD.findall(t)]
            out.append(sum(w in LEXICON for w in words) / max(len(words), 1))
        return np.array(out)


class PlainWords(CandidateGenerator):
    source = "plain"

    def __init__(self):
        self.seen = []

    def propose(self, doc, positions):
        self.seen.append(list(positions))
        return {i: [Candidate(i, c, self.source) for c in PLAIN.get(doc.word(i).lower(), [])] for i in positions}


class Shorter(Scorer):
    """Shorter candidates first (a cheap, deterministic stand-in for a model score)."""

    def __init__(self):
        pass

    def score(self, doc, cands):
        return {i: [c._replace(score=-len(c.text)) for c in cs] for i, cs in cands.items()}


class ByPositionReversed(WordRanker):
    def __init__(self):
        pass

    def rank(self, doc, positions):
        return sorted(positions, reverse=True)


class LengthDelta(TextConstraint):
    """The sentence's length changes by at most ``max_chars`` characters."""

    def __init__(self, max_chars=3):
        self.max_chars = max_chars

    def values(self, originals, variants, doc=None):
        return np.array([abs(len(v) - len(o)) for o, v in zip(originals, variants)], dtype=float)

    def passes(self, values):
        return values <= self.max_chars


def _attack(search, rate=1.0, ranker=None, constraints=(), gen=None):
    return WordSubstitution([gen or PlainWords()], [NotStopword(), *constraints], Shorter(), search,
                            rate=rate, seed=1, ranker=ranker)


def _replay(r, detector):
    """Every intermediate text the search saw: swaps applied in the order they were kept."""
    by_start = {e.start: e for e in r.edits}
    applied, scores = [], [float(detector.score([r.original])[0])]
    for start in r.info["kept_order"]:
        applied.append(by_start[start])
        scores.append(float(detector.score([apply_edits(r.original, sorted(applied))])[0]))
    return scores


def test_no_kept_swap_raises_the_score_on_the_current_text():
    det = LexiconDetector()
    r = _attack(DetectorGreedy(det)).apply(TEXT)
    check_edits(TEXT, r.edits)
    assert r.n_edits >= 5
    scores = _replay(r, LexiconDetector())
    assert all(b < a for a, b in zip(scores, scores[1:]))  # strictly lower at every kept step
    assert np.allclose(scores[1:], r.info["score_trace"])
    assert r.info["detector_score_before"] == pytest.approx(scores[0])
    assert r.info["detector_score_after"] == pytest.approx(scores[-1])
    # one detector call per tried word plus the original: the candidates of a word go in one batch
    assert r.info["detector_calls"] == len(det.calls) and r.info["detector_queries"] == sum(det.calls)
    assert max(det.calls) > 1
    assert r.info["queries"] >= r.info["detector_queries"]


def test_the_query_budget_is_never_exceeded_and_stops_the_search():
    free = _attack(DetectorGreedy(LexiconDetector())).apply(TEXT)
    for budget in (1, 2, 5, 9):
        det = LexiconDetector()
        r = _attack(DetectorGreedy(det, max_queries=budget)).apply(TEXT)
        assert sum(det.calls) == r.info["detector_queries"] == budget < free.info["detector_queries"]
        assert r.info["stopped"] == "max_queries"
        assert r.n_edits <= free.n_edits
    assert _attack(DetectorGreedy(LexiconDetector(), max_queries=1)).apply(TEXT).n_edits == 0  # only the original


def test_stop_below_stops_at_the_first_text_under_the_threshold():
    r = _attack(DetectorGreedy(LexiconDetector(), stop_below=0.2)).apply(TEXT)
    scores = _replay(r, LexiconDetector())
    assert r.info["stopped"] == "stop_below"
    assert scores[-1] < 0.2 and all(s >= 0.2 for s in scores[:-1])
    assert _attack(DetectorGreedy(LexiconDetector(), stop_below=0.9)).apply(TEXT).n_edits == 0  # already below


def test_batched_and_one_by_one_scoring_give_the_same_result():
    det1, det2 = LexiconDetector(), LexiconDetector()
    a = _attack(DetectorGreedy(det1, batch=True)).apply(TEXT)
    b = _attack(DetectorGreedy(det2, batch=False)).apply(TEXT)
    assert a.text == b.text and a.info["detector_queries"] == b.info["detector_queries"]
    assert set(det2.calls) == {1} and b.info["detector_calls"] == b.info["detector_queries"]
    assert a.info["detector_calls"] < b.info["detector_calls"]


def test_a_ranker_orders_the_words_and_only_its_first_k_get_candidates():
    gen = PlainWords()
    attack = _attack(DetectorGreedy(LexiconDetector()), rate=0.5, ranker=ByPositionReversed(), gen=gen)
    r = attack.apply(TEXT)
    asked = gen.seen[-1]
    assert asked == sorted(asked, reverse=True) and len(asked) == r.info["target_swaps"] < r.info["eligible"]
    starts = r.info["kept_order"]
    assert starts and starts == sorted(starts, reverse=True)  # kept in the ranker's order
    words = attack.eligible(Doc.parse(TEXT))
    assert len(asked) == r.info["target_swaps"] and set(asked) <= set(words)


def test_text_constraints_filter_what_the_detector_sees():
    r = _attack(DetectorGreedy(LexiconDetector()), constraints=[LengthDelta(2)]).apply(TEXT)
    import blingfire

    _, spans = blingfire.text_to_sentences_and_offsets(TEXT)
    for s, e in spans:
        inside = [(a - s, b - s, t) for a, b, t in r.edits if s <= a and b <= e]
        assert abs(len(apply_edits(TEXT[s:e], inside)) - (e - s)) <= 2


def test_same_output_alone_in_a_batch_and_in_another_order():
    attack = _attack(DetectorGreedy(LexiconDetector()), rate=0.6)
    texts = [TEXT, "Various robust results.", TEXT.upper(), "", "Crucial."]
    alone = [attack.apply(t).text for t in texts]
    assert [r.text for r in attack.batch(texts)] == alone
    assert [r.text for r in attack.batch(texts[::-1])] == alone[::-1]


# -- detector access (targets.py) -------------------------------------------------------------------------------

def test_a_learnable_detector_is_fit_on_the_train_split_once_and_never_in_place():
    from humanize.attacks.targets import ready_detector, training_set
    from humanize.benchmarks.data import load_demo
    from humanize._split import in_train_split
    from humanize.detectors import TfidfLogReg

    texts, labels = training_set({"dataset": "demo", "n": 40}, seed=3)
    assert labels.count("human") == labels.count("machine") == 40
    demo = load_demo()
    src = dict(zip(demo["generation"], demo["source_id"]))
    assert all(in_train_split(src[t], 3, 0.5) for t in texts)  # never a document of the run's test split
    mine = TfidfLogReg(min_df=1)
    a = ready_detector(mine, {"dataset": "demo", "n": 40}, 3)
    b = ready_detector(mine, {"dataset": "demo", "n": 40}, 3)
    assert a is b and a is not mine and not hasattr(mine, "pipeline_")  # cached; the caller's object untouched
    assert ready_detector(mine, {"dataset": "demo", "n": 40}, 4) is not a  # another seed, another split


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"detector": "no_such_detector"}, ValueError, "detector: unknown detector 'no_such_detector'; available"),
    ({"detector": 3}, TypeError, "detector must be a detector name"),
    ({"detector": {"C": 1}}, TypeError, "needs a 'name'"),
    ({"train": 5}, TypeError, "train must be None, a dataset name"),
    ({"train": {"dataset": "demo", "fraction": 1.5}}, ValueError, r"fraction must be a number in \(0, 1\]"),
    ({"train": {"dataset": "demo", "split": "test"}}, ValueError, "split must be 'train' or 'all'"),
    ({"max_queries": 0}, ValueError, r"^DetectorGreedy: max_queries must be an int in \[1, inf\) or None, got 0 \(int\)$"),
    ({"stop_below": "low"}, TypeError, r"^DetectorGreedy: stop_below must be a number or None, got 'low' \(str\)$"),
    ({"batch": 1}, TypeError, r"^DetectorGreedy: batch must be a bool, got 1 \(int\)$"),
])
def test_bad_search_parameters_are_named(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        DetectorGreedy(**kwargs)


def test_a_learnable_detector_without_training_data_is_a_clear_error():
    attack = _attack(DetectorGreedy("tfidf_lr"))
    with pytest.raises(ValueError, match="'tfidf_lr' learns, so it needs a training set: pass train="):
        attack.apply(TEXT)
    with pytest.raises(ValueError, match="unknown train dataset 'nope'"):
        _attack(DetectorGreedy("tfidf_lr", train="nope")).apply(TEXT)


def test_offer_all_tries_every_ranked_word_and_k_caps_the_kept_swaps():
    gen = PlainWords()
    attack = WordSubstitution([gen], [NotStopword()], Shorter(), DetectorGreedy(LexiconDetector()), rate=0.2,
                              seed=1, ranker=ByPositionReversed(), offer="all")
    r = attack.apply(TEXT)
    assert gen.seen[-1] == sorted(attack.eligible(Doc.parse(TEXT)), reverse=True)  # every eligible word offered
    assert 1 <= r.n_edits <= r.info["target_swaps"] < len(gen.seen[-1])
    top = _attack(DetectorGreedy(LexiconDetector()), rate=0.2, ranker=ByPositionReversed()).apply(TEXT)
    assert top.n_edits <= r.n_edits  # top_k stops at the first k words, kept or not
    with pytest.raises(ValueError, match=r"^WordSubstitution: offer must be one of 'top_k', 'all', got 'some' \(str\)$"):
        WordSubstitution([gen], offer="some")
