"""Edge-case texts and bad parameters: valid results, clear errors."""
import pytest

from humanize.attacks import apply_edits, check_edits
from humanize.attacks.wordsub import (QPA, CausalLMScore, MaskedLMFill, MaxWordsChanged, NotStopword,
                                      SentenceSimilarity, Synonym, TopScore, VectorNeighbours, WordCosine,
                                      WordNetSynonyms, WordSubstitution)

from ..conftest import TRICKY_TEXTS


def test_tricky_texts_give_exact_results(synonym):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lone surrogates are repaired for the models, with a warning
        results = synonym.batch(TRICKY_TEXTS)
    for t, r in zip(TRICKY_TEXTS, results):
        check_edits(t, r.edits)
        assert apply_edits(t, r.edits) == r.text and r.original == t
        for e in r.edits:
            assert t[e.start:e.end].isalpha() and e.replacement.isalpha()
    assert results[0].text == "" and results[1].text == " "


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"rate": 1.5}, ValueError, r"^Synonym: rate must be a number in \[0, 1\], got 1.5 \(float\)$"),
    ({"rate": "half"}, TypeError, r"^Synonym: rate must be a number in \[0, 1\], got 'half' \(str\)$"),
    ({"seed": 1.5}, TypeError, r"^Synonym: seed must be an int seed, got 1.5 \(float\)$"),
    ({"neighbours": 0, "candidates": ["vector_neighbours"]}, ValueError,
     r"^Synonym: neighbours must be an int in \[1, inf\), got 0 \(int\)$"),
    ({"candidates": ["glove"]}, ValueError, r"^Synonym: candidates must be one of 'wordnet_sense', .*, got \['glove'\]"),
    ({"allowed_swaps": ["synonym", "close"]}, ValueError,
     r"^SwapValidity: allowed must be a non-empty list of validity classes .*, got \('synonym', 'close'\)"),
    ({"senses": 0}, ValueError, r"^Synonym: senses must be an int in \[1, inf\) or None, got 0 \(int\)$"),
    ({"min_cosine": 2}, ValueError, r"^Synonym: min_cosine must be a number in \[-1, 1\], got 2 \(int\)$"),
    ({"pos": "yes"}, TypeError, r"^Synonym: pos must be a bool, got 'yes' \(str\)$"),
    ({"pos_window": -1}, ValueError, r"^Synonym: pos_window must be an int in \[0, inf\), got -1 \(int\)$"),
    ({"max_share": 1.5}, ValueError, r"^Synonym: max_share must be a number in \[0, 1\] or None, got 1.5 \(float\)$"),
    ({"min_similarity": "high"}, TypeError, r"^Synonym: min_similarity must be a number in \[-1, 1\] or None, got 'high'"),
    ({"lm": 3}, TypeError, r"^Synonym: lm must be a model name or path \(not blank\), or a loaded model, got 3 \(int\)$"),
    ({"mlm": 3}, TypeError, r"^Synonym: mlm must be a model name or path \(not blank\), or a loaded model or None, got 3 \(int\)$"),
    ({"mlm": "bert-base-cased", "top_k": 0}, ValueError, r"^Synonym: top_k must be an int in \[1, inf\), got 0 \(int\)$"),
])
def test_bad_synonym_parameters_are_named(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Synonym(**kwargs)


def test_bad_engine_parts_are_named():
    with pytest.raises(ValueError, match=r"^WordSubstitution: candidates must be a CandidateGenerator or a non-empty list "
                                         r"of candidate generators \(WordNetSynonyms, .*\), got \[\] \(list\)$"):
        WordSubstitution(candidates=[])
    with pytest.raises(TypeError, match=r"^WordSubstitution: candidates must be .*, got \[NotStopword\(min_length=2\)\]"):
        WordSubstitution(candidates=[NotStopword()])
    with pytest.raises(TypeError, match=r"^WordSubstitution: constraints must be .*, got \[NotStopword\(.*\), 'pos'\]"):
        WordSubstitution(candidates=[WordNetSynonyms()], constraints=[NotStopword(), "pos"])
    with pytest.raises(TypeError, match=r"^WordSubstitution: scorer must be a Scorer or None, got 'lm' \(str\)$"):
        WordSubstitution(candidates=WordNetSynonyms(), scorer="lm")
    with pytest.raises(TypeError, match=r"^WordSubstitution: search must be a Search or None, got <class .*TopScore'> \(type\)$"):
        WordSubstitution(candidates=WordNetSynonyms(), search=TopScore)
    with pytest.raises(ValueError, match=r"^TopScore: tries must be an int in \[1, inf\), got 0 \(int\)$"):
        TopScore(tries=0)
    with pytest.raises(TypeError, match=r"^CausalLMScore: lm must be a model name or path \(not blank\), or a loaded model, got 0 \(int\)$"):
        CausalLMScore(lm=0)
    with pytest.raises(TypeError, match=r"^VectorNeighbours: vectors must be a str or an object with .vector\(\), got \[1, 2\]"):
        VectorNeighbours(vectors=[1, 2])
    with pytest.raises(TypeError, match=r"^WordCosine: vectors must be a name or a fastText .bin path or an object with "
                                        r".similarity\(\), got 5 \(int\)$"):
        WordCosine(vectors=5)
    with pytest.raises(ValueError, match=r"^MaskedLMFill: window must be an int in \[0, inf\), got -2 \(int\)$"):
        MaskedLMFill(window=-2)


def test_bad_qpa_arguments_are_named():
    from humanize.attacks import Homoglyph

    with pytest.raises(TypeError, match="QPA: attack must be a word-substitution attack"):
        QPA(Homoglyph())
    with pytest.raises(ValueError, match="unknown attack|no attack|not registered|available"):
        QPA("no_such_attack")
    with pytest.raises(TypeError, match=r"^QPA: constraints must be a list of TextConstraint / CandidateConstraint .* or "
                                        r"None, got \['perplexity'\] \(list\)$"):
        QPA(Synonym(), constraints=["perplexity"])
    QPA(Synonym(), constraints=[NotStopword()])  # a candidate constraint is a valid QPA constraint
    with pytest.raises(TypeError, match=r"^QPA: constraints must be .*, got SentenceSimilarity\(.*\) \(SentenceSimilarity\)$"):
        QPA(Synonym(), constraints=SentenceSimilarity())
    with pytest.raises(TypeError, match=r"^QPA: seed must be an int seed or None, got '1' \(str\)$"):
        QPA(Synonym(), seed="1")
    with pytest.raises(ValueError, match=r"^QPA: rate must be a number in \[0, 1\] or None, got 1.5 \(float\)$"):
        QPA(Synonym(), rate=1.5)


def test_a_new_attack_is_assembled_from_parts_without_subclassing(smollm, short_texts):
    attack = WordSubstitution(candidates=[WordNetSynonyms(max_candidates=5)],
                              constraints=[NotStopword(min_length=4), MaxWordsChanged(0.1)],
                              scorer=CausalLMScore(smollm), rate=1.0, seed=3)
    r = attack.apply(short_texts[2])
    assert apply_edits(r.original, r.edits) == r.text
    assert 1 <= r.n_edits <= int(0.1 * r.info["words"])
    assert all(len(r.original[e.start:e.end]) >= 4 for e in r.edits)
    assert r.info["sources"] == ["wordnet"]
    assert attack.get_params()["constraints"][1].max_share == 0.1


def test_a_search_strategy_plugs_in_without_touching_the_engine(smollm, short_texts):
    """The seam later strategies (RAFT, HMGC) use: ``Search.select(doc, cands, k, text_constraints)``."""
    from humanize.attacks.wordsub import Search

    class LastWords(Search):
        def __init__(self):
            pass

        def select(self, doc, cands, k, text_constraints):
            words = sorted((i for i, cs in cands.items() if cs), reverse=True)[:k]
            return [max(cands[i], key=lambda c: c.score) for i in words]

    attack = WordSubstitution([WordNetSynonyms()], [NotStopword()], CausalLMScore(smollm), LastWords(), rate=0.2)
    r = attack.apply(short_texts[0])
    assert r.n_edits >= 1 and apply_edits(r.original, r.edits) == r.text
    chosen = [e.start for e in r.edits]
    assert chosen == sorted(chosen) and chosen[-1] > len(r.original) // 2  # the last words, as the strategy says
