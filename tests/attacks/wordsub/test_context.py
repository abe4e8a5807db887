"""Candidates that fit their sentence (issue #33): ContextFit and KeepTerms in the word-level attacks."""
from __future__ import annotations

import pytest

from humanize.attacks.wordsub import HMGC, QPA, RAFT, ContextFit, Doc, KeepTerms, Synonym
from humanize.attacks.wordsub._doc import Candidate
from humanize.models import DEFAULT_CHAT_LM

BREAST = "Women with a family history of the disease face a higher breast cancer risk than other women."
STUDIES = "Several studies have indicated an association between short sleep and obesity in children."


def _cands(attack, text):
    doc = Doc.parse(text)
    words = {doc.word(i): i for i in range(len(doc.words))}
    _, cands = attack.candidates_for(doc)
    return {doc.word(i): [c.text for c in cs] for i, cs in cands.items()}, words


def test_breast_cancer_is_neither_proposed_nor_called_valid(smollm):
    old = Synonym(lm=smollm, context_margin=None, keep_terms=False)
    assert "chest" in _cands(old, BREAST)[0]["breast"]  # the recipe of #19 proposes it
    assert "chest" not in _cands(Synonym(lm=smollm), BREAST)[0].get("breast", [])
    # each rule alone rejects it: the term is kept, and the context score rejects it without that rule
    assert "chest" not in _cands(Synonym(lm=smollm, keep_terms=False), BREAST)[0]["breast"]
    assert "chest" not in _cands(Synonym(lm=smollm, context_margin=None), BREAST)[0].get("breast", [])
    # ... and the meter, with its own model, calls the swap not valid
    from humanize.quality import swap_validity

    row = swap_validity([BREAST], [BREAST.replace("breast", "chest")], "smollm2-135m-instruct").iloc[0]
    assert row["valid_share"] == 1.0 and row["valid_in_context_share"] == 0.0


def test_context_fit_rejects_a_verb_whose_complement_no_longer_fits(smollm):
    doc = Doc.parse(STUDIES)
    i = next(k for k in range(len(doc.words)) if doc.word(k) == "indicated")
    cands = {i: [Candidate(i, "suggested", "t"), Candidate(i, "pointed", "t")]}
    kept = ContextFit(smollm).filter(doc, cands)[i]
    assert [c.text for c in kept] == ["suggested"]
    assert doc.cost["context_checks"] == 2 and doc.cost["forward_passes"] >= 1
    # margin: a larger one lets more through; its scores are the meter's own function under the same model
    from humanize.quality.context import context_deltas

    s, e = doc.words[i]
    d = context_deltas([(STUDIES, s, e, "pointed")], smollm)[0]
    loose = ContextFit(smollm, margin=-d + 0.01).filter(Doc.parse(STUDIES), cands)[i]
    assert [c.text for c in loose] == ["suggested", "pointed"]


def test_keep_terms_collocations_compounds_proper_nouns_and_user_terms():
    text = ("Data on marital status were collected in Belfast. The gene polymorphism raised the blood pressure "
            "of patients. A cognitive function test followed.")
    doc = Doc.parse(text)
    kept = {doc.word(i) for i in KeepTerms().protected(doc)}
    assert {"marital", "status", "blood", "pressure", "gene", "polymorphism", "Belfast"} <= kept
    assert not {"Data", "collected", "raised", "patients", "cognitive", "followed"} & kept
    mine = KeepTerms(collocations=False, compounds=False, terms=["cognitive function"])
    assert {doc.word(i) for i in mine.protected(Doc.parse(text))} == {"cognitive", "function"}
    assert KeepTerms(collocations=False, compounds=False).protected(Doc.parse(text)) == set()


def test_bad_parameters_are_named():
    from humanize.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="context_margin"):
        Synonym(context_margin=-1)
    with pytest.raises(InvalidParameterError, match="terms"):
        Synonym(terms="breast cancer")
    with pytest.raises(InvalidParameterError, match="keep_terms"):
        HMGC(keep_terms="yes")


def test_the_rules_are_in_every_word_level_attack_and_change_the_fingerprint():
    def kinds(attack):
        return [type(c).__name__ for c in attack._parts().candidate_constraints]

    for attack in (Synonym(), HMGC(), RAFT(), RAFT(llm=DEFAULT_CHAT_LM)):
        assert {"ContextFit", "KeepTerms"} <= set(kinds(attack)), type(attack).__name__
        assert kinds(attack)[-1] == "ContextFit"  # the costly check last
        old = type(attack)(**{**attack.get_params(deep=False), "context_margin": None, "keep_terms": False})
        assert not {"ContextFit", "KeepTerms"} & set(kinds(old))
        assert old.fingerprint() != attack.fingerprint()
    raft = RAFT()
    assert next(c for c in raft._parts().candidate_constraints if isinstance(c, ContextFit)).lm == raft.proxy
    # QPA adds the context check to an attack without one, and does not repeat it on one that has it
    qpa_old = QPA(Synonym(context_margin=None, keep_terms=False)).built_engine()
    assert [type(c).__name__ for c in qpa_old._parts().candidate_constraints].count("ContextFit") == 1
    qpa = QPA("synonym").built_engine()
    assert [type(c).__name__ for c in qpa._parts().candidate_constraints].count("ContextFit") == 1
