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
    ({"rate": 1.5}, ValueError, r"rate θ must be in \[0, 1\]"),
    ({"rate": "half"}, TypeError, "rate must be a number"),
    ({"seed": 1.5}, TypeError, "seed must be an int"),
    ({"neighbours": 0, "candidates": ["vector_neighbours"]}, ValueError, "k must be >= 1"),
    ({"candidates": ["glove"]}, ValueError, "unknown candidate source"),
    ({"allowed_swaps": ["synonym", "close"]}, ValueError, "unknown validity class"),
    ({"senses": 0}, ValueError, "senses must be >= 1"),
    ({"min_cosine": 2}, ValueError, r"min_cosine must be in \[-1.0, 1.0\]"),
    ({"pos": "yes"}, TypeError, "pos must be a bool"),
    ({"pos_window": -1}, ValueError, "window must be an int >= 0"),
    ({"max_share": 1.5}, ValueError, r"max_share must be in \[0.0, 1.0\]"),
    ({"min_similarity": "high"}, TypeError, "min_similarity must be a number"),
    ({"lm": 3}, TypeError, "lm must be a model name"),
    ({"mlm": 3}, TypeError, "model must be a model name/path"),
    ({"mlm": "bert-base-cased", "top_k": 0}, ValueError, "top_k must be >= 1"),
])
def test_bad_synonym_parameters_are_named(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Synonym(**kwargs)


def test_bad_engine_parts_are_named():
    with pytest.raises(ValueError, match="candidates is empty"):
        WordSubstitution(candidates=[])
    with pytest.raises(TypeError, match=r"candidates\[0\] must be a candidate generator, got NotStopword"):
        WordSubstitution(candidates=[NotStopword()])
    with pytest.raises(TypeError, match=r"constraints\[1\] must be a constraint"):
        WordSubstitution(candidates=[WordNetSynonyms()], constraints=[NotStopword(), "pos"])
    with pytest.raises(TypeError, match="scorer must be None or a Scorer"):
        WordSubstitution(candidates=WordNetSynonyms(), scorer="lm")
    with pytest.raises(TypeError, match="search must be None or a Search"):
        WordSubstitution(candidates=WordNetSynonyms(), search=TopScore)
    with pytest.raises(ValueError, match="tries must be an int >= 1"):
        TopScore(tries=0)
    with pytest.raises(TypeError, match="lm must be a model name or a loaded causal LM"):
        CausalLMScore(lm=0)
    with pytest.raises(TypeError, match="vectors must be a name"):
        VectorNeighbours(vectors=[1, 2])
    with pytest.raises(TypeError, match="vectors must be a name"):
        WordCosine(vectors=5)
    with pytest.raises(ValueError, match="window must be >= 0"):
        MaskedLMFill(window=-2)


def test_bad_qpa_arguments_are_named():
    from humanize.attacks import Homoglyph

    with pytest.raises(TypeError, match="QPA: attack must be a word-substitution attack"):
        QPA(Homoglyph())
    with pytest.raises(ValueError, match="unknown attack|no attack|not registered|available"):
        QPA("no_such_attack")
    with pytest.raises(TypeError, match=r"constraints\[0\] must be a TextConstraint or a CandidateConstraint"):
        QPA(Synonym(), constraints=["perplexity"])
    QPA(Synonym(), constraints=[NotStopword()])  # a candidate constraint is a valid QPA constraint
    with pytest.raises(TypeError, match="constraints must be None or a list"):
        QPA(Synonym(), constraints=SentenceSimilarity())
    with pytest.raises(TypeError, match="seed must be None or an int"):
        QPA(Synonym(), seed="1")
    with pytest.raises(ValueError, match=r"rate θ must be in \[0, 1\]"):
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
