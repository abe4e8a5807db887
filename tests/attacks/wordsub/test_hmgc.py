"""HMGC (Zhou et al. 2024): importance-ranked swaps until the surrogate flips, under HMGC's constraints.

The surrogate is refit here independently (a fresh TF-IDF model on the same
texts) and every claim is recomputed from scratch: the surrogate's score along
the kept swaps, the share of changed words, each changed sentence's MiniLM
cosine, the deletion importance.
"""
import re

import numpy as np
import pytest

from humanize.attacks import apply_edits, check_edits

WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")
SEED = 0
#: HMGC's recipe before issue #19: every sense's lemmas and GloVe neighbours, no validity check, USE-like 0.75
# HMGC's own looser recipe (and no context rules of issue #33: the search's mechanics are what is tested here)
LOOSE = dict(candidates=["wordnet_all_senses", "vector_neighbours"], allowed_swaps=None, min_similarity=0.75,
             context_margin=None, keep_terms=False)


@pytest.fixture(scope="module")
def demo():
    from humanize.benchmarks.data import load_demo

    return load_demo()


@pytest.fixture(scope="module")
def train_pair(demo):
    """100 human and 100 machine writing texts from the train split (explicit: the test refits on the same)."""
    from humanize._split import in_train_split

    rows = demo[(demo["domain"] == "writing") & demo["source_id"].map(lambda s: in_train_split(s, SEED, 0.5))]
    texts, labels = [], []
    for label in ("human", "machine"):
        part = rows[rows["label"] == label].sort_values("id").head(100)
        texts += part["generation"].tolist()
        labels += [label] * len(part)
    return texts, labels


@pytest.fixture(scope="module")
def surrogate(train_pair):
    from humanize.detectors.tfidf import TfidfLogReg

    return TfidfLogReg().fit(*train_pair)  # independent of the attack's fit


@pytest.fixture(scope="module")
def targets(demo, surrogate):
    """Two-sentence machine texts of the test split that the surrogate calls machine (score >= 0.5)."""
    import blingfire

    from humanize._split import in_train_split

    rows = demo[(demo["label"] == "machine") & (demo["domain"] == "writing")
                & ~demo["source_id"].map(lambda s: in_train_split(s, SEED, 0.5))].sort_values("id")
    texts = [" ".join(blingfire.text_to_sentences(t).split("\n")[:2]) for t in rows["generation"].head(12)]
    texts = [t for t in texts if 12 <= len(t.split()) <= 35]
    scores = surrogate.score(texts)
    return [t for t, s in zip(texts, scores) if s >= 0.5][:2]


@pytest.fixture(scope="module")
def hmgc(smollm, train_pair):
    from humanize.attacks.wordsub import HMGC

    # the search's mechanism (stop at the first human verdict) on HMGC's own looser recipe: with the
    # validity-checked defaults the TF-IDF surrogate rarely flips on two-sentence texts
    return HMGC(lm=smollm, train=train_pair, **LOOSE)


@pytest.fixture(scope="module")
def results(hmgc, targets):
    return hmgc.batch(targets)


def _replay(r):
    """The texts after each kept swap, in keep order (kept_order holds the original start offsets)."""
    by_start = {e.start: e for e in r.edits}
    texts, kept = [], []
    for start in r.info["kept_order"]:
        kept.append(by_start[start])
        texts.append(apply_edits(r.original, sorted(kept)))
    return texts


def test_hmgc_stops_when_the_surrogate_flips(results, surrogate):
    assert len(results) >= 2
    flipped = 0
    for r in results:
        check_edits(r.original, r.edits)
        assert apply_edits(r.original, r.edits) == r.text
        assert sorted(r.info["kept_order"]) == [e.start for e in r.edits]
        steps = _replay(r)
        scores = surrogate.score([r.original] + steps)
        assert scores[0] >= 0.5
        np.testing.assert_allclose(scores, [r.info["detector_score_before"]] + r.info["score_trace"], atol=1e-9)
        assert np.all(np.diff(scores) < 0)  # every kept swap lowered the surrogate's score on the current text
        if r.info["stopped"] == "stop_below":
            flipped += 1
            assert scores[-1] < 0.5 and np.all(scores[:-1] >= 0.5)  # it stopped at the first human verdict
        else:  # it ran out of words or of its 40% budget while the surrogate still said machine
            assert r.info["stopped"] in ("words", "k") and scores[-1] >= 0.5
    assert flipped >= 1


def test_at_most_40_percent_of_words_change_and_sentences_stay_similar(results, minilm):
    from humanize.attacks.wordsub import Doc
    from humanize.quality.similarity import semantic_similarity

    changed = 0
    for r in results:
        words = WORD.findall(r.original)
        assert len(r.edits) <= int(0.4 * len(words) + 1e-9)
        doc = Doc.parse(r.original)
        originals, variants = [], []
        for lo, hi in doc.sentences:
            mine = [e for e in r.edits if lo <= e.start < hi]
            if mine:
                originals.append(r.original[lo:hi])
                variants.append(apply_edits(r.original[lo:hi], [e._replace(start=e.start - lo, end=e.end - lo)
                                                                 for e in mine]))
        if originals:
            sims = semantic_similarity(originals, variants, minilm)
            assert np.all(np.asarray(sims) >= 0.75), sims
            changed += len(originals)
    assert changed >= 1


def test_a_text_the_surrogate_already_calls_human_is_left_without_model_work(hmgc, demo, surrogate):
    texts = demo[demo["label"] == "human"].sort_values("id")["generation"].head(20).str.slice(0, 200).tolist()
    human = next(t for t, s in zip(texts, surrogate.score(texts)) if s < 0.5)
    r = hmgc.apply(human)
    assert r.text == human and not r.edits
    assert r.info["stopped"] == "stop_below" and r.info["detector_score_before"] < 0.5
    assert r.info["surrogate_queries"] == 1 and r.info["forward_passes"] == 0 and r.info["detector_queries"] == 1


def _delete(text, s, e):
    return text[:s] + text[e + 1:] if e < len(text) and text[e].isspace() else (
        text[:s - 1] + text[e:] if s > 0 and text[s - 1].isspace() else text[:s] + text[e:])


def test_deletion_importance_and_the_ranking_recomputed(smollm, train_pair, surrogate, targets):
    from humanize.attacks.wordsub import Doc, SurrogateImportance
    from humanize.quality.perplexity import perplexity

    text = targets[0]
    ranker = SurrogateImportance(train=train_pair, lm=smollm)
    doc = Doc.parse(text)
    words = list(WORD.finditer(text))
    positions = [j for j, m in enumerate(words) if len(m.group()) > 3][:6]
    parts = ranker.importance(doc, positions)
    assert ranker.resolved_method() == "deletion"
    base = surrogate.score([text])[0]
    drops = base - surrogate.score([_delete(text, *words[j].span()) for j in positions])
    np.testing.assert_allclose(parts["surrogate"], drops, atol=1e-9)
    # LM part: the word's sentence with and without it
    pairs = []
    for j in positions:
        lo, hi = doc.sentences[doc.sentence_of[j]]
        s, e = words[j].span()
        pairs += [text[lo:hi], _delete(text[lo:hi], s - lo, e - lo)]
    ppl = perplexity(pairs, smollm)
    lm = ppl[1::2] - ppl[0::2]
    np.testing.assert_allclose(parts["lm"], lm, rtol=1e-4)

    def norm(v):
        v = np.asarray(v, dtype=float)
        return (v - v.min()) / (v.max() - v.min())

    combined = 0.8 * norm(drops) + 0.2 * norm(lm)
    expected = sorted(positions, key=lambda j: (-combined[positions.index(j)], j))
    doc2 = Doc.parse(text)
    assert ranker.rank(doc2, positions) == expected
    assert doc2.cost["surrogate_queries"] == len(positions) + 1
    assert doc2.cost["forward_passes"] >= 1 and doc2.cost["queries"] > len(positions)


@pytest.fixture(scope="module")
def tiny_lm_d():
    from humanize.detectors.lm_d import LMDetector

    return LMDetector(max_tokens=32, epochs=1, batch_size=16)


def test_gradient_importance_is_a_permutation_and_zero_past_the_window(tiny_lm_d, targets):
    from humanize.attacks.wordsub import Doc, SurrogateImportance

    ranker = SurrogateImportance(tiny_lm_d, train={"dataset": "demo", "n": 16}, weight=1.0, method="auto")
    text = " ".join(targets)  # longer than the surrogate's 32-token window
    doc = Doc.parse(text)
    positions = list(range(len(doc.words)))
    assert ranker.resolved_method() == "gradient"
    fitted = ranker.ready()
    assert fitted is not tiny_lm_d and not hasattr(tiny_lm_d, "model_")  # the caller's object is not fit in place
    raw = ranker.importance(doc, positions)["surrogate"]
    assert doc.cost["surrogate_queries"] == 1 and doc.cost["forward_passes"] == 1
    enc = fitted.tokenizer_(text, truncation=True, max_length=32, return_offsets_mapping=True)
    window_end = max(e for s, e in enc["offset_mapping"])
    inside = np.array([doc.words[i][0] < window_end for i in positions])
    assert inside.any() and (~inside).any()  # the text is longer than the 32-token window
    assert np.all(raw[~inside] == 0) and np.all(raw[inside] > 0)
    order = ranker.rank(Doc.parse(text), positions)
    assert sorted(order) == positions
    assert set(order[: int(inside.sum())]) == {i for i, ok in zip(positions, inside) if ok}
    with pytest.raises(ValueError, match="differentiable"):
        SurrogateImportance("tfidf_lr", train={"dataset": "demo", "n": 20}, method="gradient").resolved_method()


def test_matched_and_mismatched_training_sets_never_hold_a_tested_document(demo):
    from humanize.attacks.wordsub import HMGC
    from humanize.attacks.targets import training_set
    from humanize.benchmarks.runner.config import RunConfig
    from humanize._split import in_train_split
    from humanize.benchmarks.runner import sample_rows

    # a few demo human texts recur verbatim under several source ids: map a text to all of its sources
    sources_of = demo.groupby("generation")["source_id"].agg(set).to_dict()
    for seed in (0, 3):
        rows = sample_rows(RunConfig(dataset="demo", n=60, seed=seed))
        test_rows = rows[rows["split"] == "test"]
        assert len(test_rows)
        matched, labels = training_set("demo", seed)
        assert set(labels) == {"human", "machine"}
        # every training text comes from a train-split source; no text only a tested source has is trained on
        assert all(any(in_train_split(s, seed, 0.5) for s in sources_of[t]) for t in matched)
        only_tested = {t for t in test_rows["generation"]
                       if not any(in_train_split(s, seed, 0.5) for s in sources_of[t])}
        assert only_tested and not only_tested & set(matched)
        mismatched, _ = training_set({"dataset": "demo", "domain": "xsum", "n": 50}, seed)
        domains = set(demo.loc[demo["generation"].isin(mismatched), "domain"])
        assert domains == {"xsum"} and not only_tested & set(mismatched)
    # the attack's ranker and search share one fit of the surrogate on that set
    attack = HMGC(train={"dataset": "demo", "domain": "xsum", "n": 50}, seed=3)
    parts = attack._parts()
    assert parts.ranker.ready() is parts.search.ready()


def test_same_output_alone_as_in_a_batch(hmgc, results, targets, smollm, train_pair):
    from humanize.attacks.wordsub import HMGC

    alone = HMGC(lm=smollm, train=(list(train_pair[0]), list(train_pair[1])), **LOOSE).apply(targets[-1])
    assert alone.text == results[-1].text and alone.edits == results[-1].edits
    assert alone.info["kept_order"] == results[-1].info["kept_order"]


def test_zero_shot_surrogate_is_used_unfitted(smollm, targets):
    from humanize.attacks.wordsub import Doc, SurrogateImportance

    ranker = SurrogateImportance({"name": "log_likelihood", "model": smollm}, train="demo", weight=1.0)
    det = ranker.ready()
    assert not det.learnable
    doc = Doc.parse(targets[0])
    order = ranker.rank(doc, [0, 1, 2, 3])
    assert sorted(order) == [0, 1, 2, 3] and doc.cost["surrogate_queries"] == 5


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"surrogate": "no_such_detector"}, ValueError, "^HMGC: surrogate: unknown detector 'no_such_detector'"),
    ({"surrogate": 3}, TypeError, "surrogate must be"),
    ({"threshold": "0.5"}, TypeError, r"^HMGC: threshold must be a number or one of 'auto' or None, got '0.5' \(str\)$"),
    ({"threshold": True}, TypeError, r"^HMGC: threshold must be .*, got True \(bool\)$"),
    ({"train": 5}, TypeError, "train must be"),
    ({"importance": "saliency"}, ValueError, "^HMGC: importance must be one of 'auto', 'gradient', 'deletion', got 'saliency'"),
    ({"weight": 1.5}, ValueError, r"^HMGC: weight must be a number in \[0, 1\], got 1.5 \(float\)$"),
    ({"max_share": 2.0}, ValueError, r"^HMGC: max_share must be a number in \[0, 1\] or None, got 2.0 \(float\)$"),
    ({"min_similarity": "high"}, TypeError, r"^HMGC: min_similarity must be .*, got 'high' \(str\)$"),
    ({"pos": 1}, TypeError, r"^HMGC: pos must be a bool, got 1 \(int\)$"),
    ({"rate": 1.5}, ValueError, r"^HMGC: rate must be a number in \[0, 1\], got 1.5 \(float\)$"),
])
def test_bad_hmgc_parameters_are_named(kwargs, exc, match):
    from humanize.attacks.wordsub import HMGC

    with pytest.raises(exc, match=match):
        HMGC(**kwargs)


def test_registry_config_and_qpa_build_hmgc_by_name():
    from humanize import attacks
    from humanize.attacks.wordsub import HMGC, QPA

    a = attacks.get("hmgc", surrogate="lm_d", train="demo", threshold=0.4, seed=2)
    assert type(a) is HMGC and a.name == "hmgc" and a.get_params()["threshold"] == 0.4
    parts = a._parts()
    assert type(parts.ranker).__name__ == "SurrogateImportance" and parts.search.stop_below == 0.4
    assert [type(b).__name__ for b in parts.budgets] == ["MaxWordsChanged"] and parts.budgets[0].max_share == 0.4
    a.threshold = 0.3  # a changed parameter rebuilds the parts
    assert a._parts().search.stop_below == 0.3
    engine = QPA("hmgc").engine()
    assert engine.name == "hmgc" and type(engine.ranker).__name__ == "SurrogateImportance"
    full = HMGC(mlm="bert-base-cased", min_cosine=None)._parts()  # HMGC's masked-LM candidates (not loaded here)
    assert [type(g).__name__ for g in full.generators] == ["MaskedLMFill"] and full.generators[0].top_k == 50
    assert [type(c).__name__ for c in full.candidate_constraints] == ["NotStopword", "KeepTerms", "MLMProbability",
                                                                      "SwapValidity", "SamePOS", "ContextFit",
                                                                      "ContextFit"]  # Gemma, then Qwen
    assert type(full.scorer).__name__ == "MLMScore"


def test_a_run_config_spec_builds_hmgc_with_its_training_set():
    from humanize.benchmarks.runner.attack_spec import AttackSpec

    spec = AttackSpec(name="hmgc", params={"surrogate": "lm_d", "train": {"dataset": "demo", "domain": "xsum"}})
    a = spec.build(7)
    assert (a.seed, a.surrogate, a.train) == (7, "lm_d", {"dataset": "demo", "domain": "xsum"})
    assert a._parts().search.seed == 7 and a._parts().ranker.seed == 7  # the run's seed: the runner's split
