"""Guided attacks given a Target: the caller's object is the one queried, never refit, and fingerprinted.

A toy engine (the plain-word candidates and length scorer of test_detector_greedy, no model) runs
DetectorGreedy and SurrogateImportance on a TF-IDF Target; RAFT and HMGC are checked for passing
the Target through to their parts, and one HMGC run (SmolLM2 scorer) for giving the same output
from ``build_target(name, dataset)`` as from the name and the dataset.
"""
import pickle

import numpy as np
import pytest

from humanize.attacks import Target
from humanize.attacks.wordsub import HMGC, RAFT, DetectorGreedy, NotStopword, SurrogateImportance, WordSubstitution
from humanize.detectors import TfidfLogReg

from .test_detector_greedy import LEXICON, TEXT, PlainWords, Shorter

DOCS = [TEXT, "Various robust results demonstrate a crucial approach.", "The study was fine.", ""]
PLAIN = ["the cat sat on the mat", "we walked home in the rain", "my brother fixed the old bike",
         "she laughed at the dog", "they ate soup and bread", "the bus was late again"]
TRAIN = (PLAIN + [" ".join(sorted(LEXICON)[i::3]) for i in range(3)] + ["significant crucial results",
                                                                        "robust comprehensive approach",
                                                                        "numerous essential methods"],
         ["human"] * 6 + ["machine"] * 6)


class CountingTfidf(TfidfLogReg):
    fits: list = []

    def fit(self, texts, labels):
        CountingTfidf.fits.append(len(texts))
        return super().fit(texts, labels)


@pytest.fixture(autouse=True)
def _reset_fits():
    CountingTfidf.fits = []


def _engine(search, ranker=None, rate=1.0):
    return WordSubstitution([PlainWords()], [NotStopword()], Shorter(), search, rate=rate, seed=1, ranker=ranker)


def test_the_search_queries_the_callers_target_and_never_refits_it():
    t = Target(CountingTfidf(min_df=1), TRAIN)
    attack = _engine(DetectorGreedy(t))
    assert attack._parts().search.target() is t
    results = attack.batch(DOCS)
    assert sum(r.n_edits for r in results) >= 3
    assert t.queries == sum(r.info["detector_queries"] for r in results) > 0
    assert t.calls == sum(r.info.get("detector_calls", 0) for r in results)
    attack.set_params(rate=0.5)  # another θ: the same Target, still one fit
    attack.batch(DOCS)
    assert CountingTfidf.fits == [12]
    by_name = _engine(DetectorGreedy(CountingTfidf(min_df=1), train=TRAIN)).batch(DOCS)
    assert [r.text for r in by_name] == [r.text for r in results]  # the same fit, the same swaps


def test_ranker_and_search_share_the_callers_target_and_it_counts_both():
    t = Target(CountingTfidf(min_df=1), TRAIN)
    ranker = SurrogateImportance(t, weight=1.0, method="deletion")  # no LM part: no model
    attack = _engine(DetectorGreedy(t), ranker=ranker, rate=0.6)
    r = attack.apply(TEXT)
    assert r.n_edits >= 1
    # the ranker's deletion queries and the search's, all on the one Target
    assert t.queries == r.info["detector_queries"] > r.info["surrogate_queries"] > 0
    assert ranker.ready() is t.fitted_detector() and CountingTfidf.fits == [12]
    copy = pickle.loads(pickle.dumps(attack))  # a Ray worker's copy: fitted, not refit
    assert copy.apply(TEXT).text == r.text and CountingTfidf.fits == [12]


def test_a_target_is_in_the_attacks_fingerprint():
    a, b = Target(TfidfLogReg(min_df=1), TRAIN), Target(TfidfLogReg(min_df=1), (TRAIN[0][1:], TRAIN[1][1:]))
    assert HMGC(surrogate=a).provenance()["params"]["surrogate"] == a.provenance()
    assert HMGC(surrogate=a).fingerprint() != HMGC(surrogate=b).fingerprint()
    assert HMGC(surrogate=a) == HMGC(surrogate=Target(TfidfLogReg(min_df=1), TRAIN))
    assert RAFT(target=a).fingerprint() != RAFT(target=b).fingerprint()
    assert _engine(DetectorGreedy(a)).fingerprint() != _engine(DetectorGreedy(b)).fingerprint()


def test_raft_and_hmgc_hand_the_target_to_their_parts():
    t = Target(TfidfLogReg(min_df=1), TRAIN)
    raft = RAFT(target=t, llm=None)  # a learnable Target needs no target_train: it holds its own
    assert raft._parts().search.target() is t
    parts = HMGC(surrogate=t)._parts()  # train keeps its default ('demo'), unused with a Target
    assert parts.search.target() is t and parts.ranker.target() is t
    with pytest.raises(ValueError, match="learns and is not fitted"):
        RAFT(target=Target(TfidfLogReg()))
    with pytest.raises(TypeError, match="a Detector or a Target"):
        HMGC(surrogate=3)


def test_build_target_gives_the_fit_an_attack_naming_the_dataset_gets():
    from humanize.attacks.targets import ready_detector
    from humanize.benchmarks import build_target

    spec = {"dataset": "demo", "n": 40}
    mine = TfidfLogReg(min_df=1)
    t = build_target(mine, spec, seed=3)
    probes = [TEXT, "the cat sat on the mat"]
    assert np.array_equal(t.score(probes), ready_detector(mine, spec, 3).score(probes))
    assert t.provenance()["train"]["n"] == 80 and not hasattr(mine, "pipeline_")
    assert build_target("tfidf_lr", spec, seed=4).fingerprint() != build_target("tfidf_lr", spec, seed=3).fingerprint()
    zero = build_target("log_likelihood", "demo")  # zero-shot: no training set is loaded
    assert zero.train is None and zero.name == "log_likelihood"
    assert build_target(t) is t
    with pytest.raises(ValueError, match="already a Target"):
        build_target(t, "demo")
    with pytest.raises(ValueError, match="learns and is not fitted"):
        build_target("tfidf_lr")
    with pytest.raises(TypeError, match="seed must be an int"):
        build_target("tfidf_lr", "demo", seed="0")


def test_hmgc_on_a_built_target_matches_hmgc_on_the_name(smollm):
    from humanize.benchmarks import build_target

    spec, seed = {"dataset": "demo", "n": 60}, 2
    cheap = dict(lm=smollm, weight=1.0, importance="deletion", candidates=["wordnet_all_senses"], allowed_swaps=None,
                 min_similarity=None, min_cosine=None, pos=False, seed=seed,
                 context_margin=None, keep_terms=False)  # the #19 recipe: the search's plumbing, every swap allowed
    text = "Additionally, the comprehensive study demonstrates significant and robust results."
    t = build_target("tfidf_lr", spec, seed=seed)
    by_target = HMGC(surrogate=t, **cheap).apply(text)
    by_name = HMGC(surrogate="tfidf_lr", train=spec, **cheap).apply(text)
    assert by_target.n_edits >= 1 and by_target.text == by_name.text
    assert by_target.info["score_trace"] == by_name.info["score_trace"]
    assert t.queries == by_target.info["detector_queries"] > 1
