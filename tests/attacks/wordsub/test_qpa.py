"""QPA (TH-Bench App. G): every accepted edit keeps its sentence within the quality constraints.

The constraints are recomputed from scratch: sentence split of the original,
each changed sentence rebuilt from the edits, then perplexity, Flesch reading
ease (textstat) and MiniLM cosine computed with the quality meters.
"""
import pytest
import textstat

from ._sentences import changed_sentences


@pytest.fixture(scope="module")
def qpa_results(synonym, short_texts):
    from humanize.attacks.wordsub import QPA

    return QPA(synonym).batch(short_texts[:2])


@pytest.fixture(scope="module")
def qpa_wide_results(synonym, short_texts):
    """QPA over three senses at θ = 1: with valid synonyms only, the 5% perplexity bound of TH-Bench's QPA
    turns down nearly every swap on short texts (the default keeps none on these three); with the context rule
    of issue #33 on top it keeps none here either, so this checks TH-Bench's constraints on the recipe before it."""
    from humanize.attacks.wordsub import QPA, Synonym, qpa_constraints

    return QPA(Synonym(lm=synonym.lm, senses=3, context_margin=None, keep_terms=False),
               constraints=qpa_constraints(context_margin=None), rate=1.0).batch(short_texts)


def test_every_qpa_edit_satisfies_the_constraints_recomputed(qpa_wide_results, smollm, minilm):
    from humanize.quality import perplexity, semantic_similarity
    from humanize.quality.validity import classify_swap

    qpa_results = qpa_wide_results
    for r in qpa_results:  # every kept swap is a WordNet synonym or a morphological variant (issue #19)
        assert all(classify_swap(r.original[e.start:e.end], e.replacement) in ("synonym", "morphological")
                   for e in r.edits)
    pairs = [p for r in qpa_results for p in changed_sentences(r)]
    assert pairs, "QPA accepted no edit on the test texts"
    before = perplexity([a for a, _ in pairs], smollm)
    after = perplexity([b for _, b in pairs], smollm)
    sims = semantic_similarity([a for a, _ in pairs], [b for _, b in pairs], minilm)
    for (a, b), p0, p1, sim in zip(pairs, before, after, sims):
        assert abs(p1 - p0) / p0 < 0.05 + 1e-6, (a, b)
        f0, f1 = textstat.flesch_reading_ease(a), textstat.flesch_reading_ease(b)
        assert abs(f1 - f0) / max(abs(f0), 1.0) < 0.05 + 1e-9, (a, b)
        assert sim > 0.95 - 1e-6, (a, b)


def test_qpa_is_a_subset_in_size_of_the_plain_attack(qpa_results, synonym_results):
    for q, r in zip(qpa_results, synonym_results):
        assert q.info["target_swaps"] == r.info["target_swaps"]  # same stream, same k
        assert q.n_edits <= r.n_edits
        assert q.info["queries"] >= r.info["queries"]
        if r.n_edits:  # candidates reached the search: QPA's quality checks queried the models
            assert q.info["queries"] > r.info["queries"]


def test_custom_qpa_constraints(synonym, short_texts):
    from humanize.attacks.wordsub import QPA, FleschChange

    loose = QPA(synonym, constraints=[FleschChange(max_change=1e9)]).apply(short_texts[0])
    plain = synonym.apply(short_texts[0])
    assert loose.text == plain.text  # a constraint every swap passes changes nothing
