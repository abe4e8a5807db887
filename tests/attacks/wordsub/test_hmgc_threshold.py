"""HMGC's threshold for a zero-shot surrogate (issue #22): calibrated on the human training texts, so the
search queries; 0.5 on log-likelihood-like (negative) scores stops before the first swap, and says why."""
import pytest

from humanize.detectors import FunctionDetector

MARKERS = ("big", "quick", "happy")


def marker_score(texts):
    """Negative like a log-likelihood: -10 plus one per marker word (the machine tell)."""
    return [sum(w.strip(".,").lower() in MARKERS for w in t.split()) - 10.0 for t in texts]


HUMAN = ["The river rose after the storm.", "We walked home along the old road.", "A dog slept by the door.",
         "She read the letter twice.", "The market was closed on Sunday."]
TRAIN = (HUMAN + ["A big quick happy dog ran.", "The big house was happy."],
         ["human"] * len(HUMAN) + ["machine"] * 2)
DOC = "The big dog was quick and happy in the garden."
#: cheap parts: all-senses WordNet candidates, no vector, POS or sentence-similarity filter, no LM importance
CHEAP = dict(candidates="wordnet_all_senses", allowed_swaps=None, min_cosine=None, pos=False, min_similarity=None,
             weight=1.0)


@pytest.fixture(scope="module")
def surrogate():
    return FunctionDetector(marker_score, name="markers", fn_version="1")


def test_zero_shot_threshold_is_calibrated_and_the_search_queries(smollm, surrogate):
    from humanize.attacks.wordsub import HMGC

    r = HMGC(surrogate=surrogate, train=TRAIN, lm=smollm, **CHEAP).apply(DOC)
    assert r.info["surrogate_threshold"] == -10.0  # the 95th percentile of the human texts' scores
    assert r.info["detector_queries"] > 1 and r.info["swaps"] >= 1 and r.changed
    assert "unchanged" not in r.info
    # the old default, 0.5, on negative scores: one query, no swap, and the reason says so
    stuck = HMGC(surrogate=surrogate, train=TRAIN, lm=smollm, threshold=0.5, **CHEAP).apply(DOC)
    assert stuck.text == DOC and stuck.info["detector_queries"] == 1
    assert stuck.info["unchanged"] == "the surrogate already calls it human (score -7 < threshold 0.5)"


def test_calibration_rule_and_its_errors(surrogate):
    from humanize.attacks.wordsub import HMGC
    from humanize.attacks.wordsub.hmgc import calibrated_threshold

    assert calibrated_threshold(list(range(100))) == 95.0  # 5 of 100 human scores at or above it
    assert calibrated_threshold([1.0, float("nan"), 3.0]) == 3.0
    with pytest.raises(ValueError, match="no finite surrogate score"):
        calibrated_threshold([float("nan")])
    with pytest.raises(ValueError, match="threshold='auto' calibrates a zero-shot surrogate"):
        HMGC(surrogate=surrogate, train=None)
    assert HMGC(surrogate="tfidf_lr", train=TRAIN).surrogate_threshold() == 0.5  # learnable: HMGC's decision
