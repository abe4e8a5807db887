"""Candidates that are synonyms (issue #19 §1): the word's sense in context, antonyms excluded, inflection kept;
and the validity filter every synonym-style attack applies (§3)."""
import pytest

from humanize.attacks.wordsub import Doc, NotStopword, SenseSynonyms, SwapValidity


def _proposals(gen, text):
    doc = Doc.parse(text)
    positions = [i for i in range(len(doc.words)) if NotStopword().word_ok(doc.word(i))]
    return {doc.word(i): [c.text for c in cs] for i, cs in gen.propose(doc, positions).items()}


@pytest.fixture(scope="module")
def wn():
    from humanize.models import load_wordnet

    return load_wordnet()


# words whose WordNet antonyms or GloVe neighbours invert a finding (the examples)
TRAPS = ("Patients with higher doses showed increased risk of a benign tumour in the small trial, and the "
         "automatic pumps gave larger effects over several months than the manual ones.")


def test_no_proposal_is_an_antonym_of_any_sense_of_the_word(wn):
    from humanize.attacks.wordsub.senses import antonyms_of
    from humanize.quality.validity import classify_swap

    for senses in (1, 3):
        got = _proposals(SenseSynonyms(senses=senses), TRAPS)
        assert any(got.values())
        for word, cands in got.items():
            lemmas = {wn.morphy(word.lower(), p) or word.lower() for p in "nvar"}
            banned = set().union(*(antonyms_of(lem) for lem in lemmas))
            for c in cands:
                assert c.lower() not in banned and classify_swap(word, c) != "antonym", (word, c)
    assert {"lower", "decreased", "malignant", "large", "manual"}.isdisjoint(
        c.lower() for cs in _proposals(SenseSynonyms(senses=3), TRAPS).values() for c in cs)


def test_antonyms_cover_direct_and_satellite_antonymy():
    from humanize.attacks.wordsub.senses import antonyms_of

    assert "decrease" in antonyms_of("increase") and "malignant" in antonyms_of("benign")
    assert "manual" in antonyms_of("automatic")
    assert "small" in antonyms_of("large")  # large is a satellite of big, whose antonym is small


def test_candidates_are_lemmas_of_the_most_frequent_sense_for_the_tag(wn):
    got = _proposals(SenseSynonyms(), "The risk was high.")
    first = wn.synsets("risk", "n")[0]
    expected = {n for n in first.lemma_names() if n.isalpha() and n.islower() and n != "risk"}
    assert set(got["risk"]) == expected and got["risk"]
    # a verb gets verb senses only: "risk" as a verb proposes the verb synset's lemmas
    verb = _proposals(SenseSynonyms(), "They risk their lives.")["risk"]
    assert set(verb) <= {n.lower() for s in wn.synsets("risk", "v") for n in s.lemma_names()}


def test_more_senses_give_more_candidates_and_include_the_first():
    one = _proposals(SenseSynonyms(senses=1), TRAPS)
    three = _proposals(SenseSynonyms(senses=3), TRAPS)
    assert sum(map(len, three.values())) > sum(map(len, one.values()))
    assert all(set(v) <= set(three[k]) or len(three[k]) == 10 for k, v in one.items())


def test_every_sense_lets_the_context_pick_the_sense():
    # "on course to meet": the most frequent noun sense of "course" is "course of action" (a phrase: no
    # single-word lemma); the sense of the sentence ("path", "track") comes only with every sense (issue #33)
    text = "We are on course to meet our target this year."
    one = _proposals(SenseSynonyms(senses=1), text)["course"]
    every = _proposals(SenseSynonyms(senses=None), text)["course"]
    assert "track" in every and "track" not in one
    assert set(one) <= set(every) and set(_proposals(SenseSynonyms(senses=3), text)["course"]) <= set(every)


def test_inflection_follows_the_word_tag():
    got = _proposals(SenseSynonyms(senses=2), "The tumours grew and the doctors showed the results.")
    assert got["tumours"] and all(c.endswith("s") for c in got["tumours"])  # plural kept (NNS)
    assert "demonstrated" in got["showed"] and "demonstrate" not in got["showed"]  # past tense kept (VBD)
    comp = _proposals(SenseSynonyms(senses=3), "This one is bigger.")["bigger"]
    assert comp and all(c.endswith(("er", "r")) for c in comp), comp  # comparative kept (JJR)


def test_proper_nouns_numbers_and_empty_texts_get_no_candidates():
    got = _proposals(SenseSynonyms(senses=3), "Washington met Paris in 2024.")
    assert got.get("Washington") == [] and got.get("Paris") == []
    for text in ("", "   \n ", "😀 🎉", "Москва красивая"):
        assert not any(_proposals(SenseSynonyms(), text).values())


def test_lesk_picks_the_sense_whose_gloss_overlaps_the_sentence():
    bank = SenseSynonyms(sense="lesk", senses=1)
    river = _proposals(bank, "They sat on the bank of the river and watched the water flow by the sloping land.")
    assert "bank" in river
    freq = _proposals(SenseSynonyms(senses=1), "They sat on the bank of the river and watched the water flow.")
    assert isinstance(river["bank"], list) and isinstance(freq["bank"], list)


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="^SenseSynonyms: sense must be one of 'frequency', 'lesk', got 'random'"):
        SenseSynonyms(sense="random")
    with pytest.raises(ValueError, match=r"^SenseSynonyms: senses must be an int in \[1, inf\) or None, got 0 \(int\)$"):
        SenseSynonyms(senses=0)
    with pytest.raises(ValueError, match=r"^SwapValidity: allowed must be a non-empty list of validity classes \(synonym, .*\), "
                                         r"got \('synonym', 'nearly'\) \(tuple\)$"):
        SwapValidity(allowed=("synonym", "nearly"))
    with pytest.raises(TypeError, match="^SwapValidity: allowed must be .*, got 'synonym' \\(str\\)$"):
        SwapValidity(allowed="synonym")


def test_swap_validity_filters_every_generator(wn):
    from humanize.attacks.wordsub import Candidate

    doc = Doc.parse("The increased risk was small.")
    idx = {doc.word(i): i for i in range(len(doc.words))}
    cands = {idx["increased"]: [Candidate(idx["increased"], w, "x") for w in ("decreased", "raised", "banana")],
             idx["small"]: [Candidate(idx["small"], w, "x") for w in ("large", "little", "tiny")]}
    kept = SwapValidity().filter(doc, cands)
    assert [c.text for c in kept[idx["increased"]]] == ["raised"]
    assert "large" not in [c.text for c in kept[idx["small"]]] and "little" in [c.text for c in kept[idx["small"]]]
    assert doc.cost["validity_checks"] == 6


def test_synonym_candidate_sources_are_checked():
    from humanize.attacks.wordsub import Synonym

    with pytest.raises(ValueError, match=r"^Synonym: candidates must be one of 'wordnet_sense', 'wordnet_all_senses', "
                                         r"'vector_neighbours', 'mlm' or a non-empty list of those or None, got \['glove'\]"):
        Synonym(candidates=["glove"])
    with pytest.raises(ValueError, match="mlm is None"):
        Synonym(candidates=["mlm"])
    with pytest.raises(TypeError, match="candidates"):
        Synonym(candidates=[])
    loose = Synonym(candidates=["wordnet_all_senses", "vector_neighbours"], allowed_swaps=None)
    assert [type(g).__name__ for g in loose._parts().generators] == ["WordNetSynonyms", "VectorNeighbours"]
    tight = Synonym()
    assert [type(g).__name__ for g in tight._parts().generators] == ["SenseSynonyms"]
    cons = [type(c).__name__ for c in tight._parts().candidate_constraints]
    assert "SwapValidity" in cons and "SwapValidity" not in [type(c).__name__ for c in
                                                           loose._parts().candidate_constraints]
    assert [type(c).__name__ for c in tight._parts().text_constraints] == ["SentenceSimilarity"]
    assert tight._parts().text_constraints[0].min_similarity == 0.85


def test_masked_lm_candidates_go_through_the_validity_filter():
    from humanize.attacks.wordsub import Synonym

    mlm = Synonym(mlm="some/masked-lm")  # nothing loads until the first document
    parts = mlm._parts()
    assert [type(g).__name__ for g in parts.generators] == ["MaskedLMFill"]
    assert "SwapValidity" in [type(c).__name__ for c in parts.candidate_constraints]


def test_qpa_checks_the_validity_class_of_each_swap():
    from humanize.attacks.wordsub import QPA, qpa_constraints

    names = [type(c).__name__ for c in QPA("synonym").engine()._parts().candidate_constraints]
    assert "SwapValidity" in names
    assert "SwapValidity" not in [type(c).__name__ for c in qpa_constraints(allowed_swaps=None)]


def test_raft_lexical_stand_in_uses_sense_synonyms_and_the_old_recipe_stays_reachable():
    from humanize.attacks.wordsub import RAFT

    new = RAFT(llm=None)
    assert [type(g).__name__ for g in new._parts().generators] == ["SenseSynonyms"]
    old = RAFT(llm=None, candidates=["wordnet_all_senses", "vector_neighbours"], allowed_swaps=None)
    assert [type(g).__name__ for g in old._parts().generators] == ["WordNetSynonyms", "VectorNeighbours"]
    with pytest.raises(ValueError, match="only with llm=None"):
        RAFT(llm="smollm2-135m-instruct", candidates=["wordnet_sense"])


def test_qpa_by_name_is_fingerprinted_by_the_attack_it_builds():
    from humanize.attacks.wordsub import QPA, Synonym

    assert QPA("synonym").fingerprint() == QPA(Synonym()).fingerprint()
    assert QPA({"name": "synonym", "lm": "smollm2-135m-instruct"}).fingerprint() == \
        QPA(Synonym(lm="smollm2-135m-instruct")).fingerprint()
    # the wrapped attack's model is part of it: another ranking LM is another QPA
    assert QPA({"name": "synonym", "lm": "smollm2-135m-instruct"}).fingerprint() != QPA("synonym").fingerprint()
    assert QPA("synonym").provenance()["params"]["attack"]["class"].endswith("Synonym")
