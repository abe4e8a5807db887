"""Candidates that fit their sentence (issue #33): ContextFit and KeepTerms in the word-level attacks."""
from __future__ import annotations

import pytest

from humanize.attacks.wordsub import HMGC, QPA, RAFT, ContextFit, Doc, KeepTerms, Synonym
from humanize.attacks.wordsub._doc import Candidate
import numpy as np

from humanize.models import DEFAULT_CHAT_LM, DEFAULT_RANKING_LM

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
    # the default consensus (Gemma-3-270M, then Qwen2.5-Coder-0.5B on Gemma's survivors) rejects it without the
    # term rule too, and so does each of its models alone
    assert "chest" not in _cands(Synonym(keep_terms=False), BREAST)[0].get("breast", [])
    assert "chest" not in _cands(Synonym(keep_terms=False, consensus_lm=None), BREAST)[0].get("breast", [])
    assert "chest" not in _cands(Synonym(lm=DEFAULT_CHAT_LM, keep_terms=False, consensus_lm=None),
                                 BREAST)[0].get("breast", [])
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

    def context_lms(attack):
        return [c.lm for c in attack._parts().candidate_constraints if isinstance(c, ContextFit)]

    for attack in (Synonym(), HMGC(), RAFT(), RAFT(llm=DEFAULT_CHAT_LM)):
        assert {"ContextFit", "KeepTerms"} <= set(kinds(attack)), type(attack).__name__
        assert kinds(attack)[-2:] == ["ContextFit", "ContextFit"]  # the costly checks last: a consensus of two
        assert set(context_lms(attack)) == {DEFAULT_RANKING_LM, DEFAULT_CHAT_LM}
        assert context_lms(attack)[0] == DEFAULT_RANKING_LM  # the smaller model first, the 0.5B on its survivors
        single = type(attack)(**{**attack.get_params(deep=False), "consensus_lm": None})
        assert kinds(single).count("ContextFit") == 1 and single.fingerprint() != attack.fingerprint()
        old = type(attack)(**{**attack.get_params(deep=False), "context_margin": None, "keep_terms": False})
        assert not {"ContextFit", "KeepTerms"} & set(kinds(old))
        assert old.fingerprint() != attack.fingerprint()
    raft = RAFT()
    assert context_lms(raft) == [DEFAULT_RANKING_LM, raft.proxy]
    assert context_lms(RAFT(consensus_lm=None)) == [raft.proxy]
    # the same model twice is one check
    assert context_lms(Synonym(consensus_lm=DEFAULT_RANKING_LM)) == [DEFAULT_RANKING_LM]
    # QPA adds the context checks to an attack without them, and does not repeat them on one that has them
    qpa_old = QPA(Synonym(context_margin=None, keep_terms=False)).built_engine()
    assert context_lms(qpa_old) == [DEFAULT_RANKING_LM, DEFAULT_CHAT_LM]
    qpa = QPA("synonym").built_engine()
    assert context_lms(qpa) == [DEFAULT_RANKING_LM, DEFAULT_CHAT_LM]
    qpa_single = QPA(Synonym(consensus_lm=None)).built_engine()  # QPA's own consensus check adds the second model
    assert context_lms(qpa_single) == [DEFAULT_RANKING_LM, DEFAULT_CHAT_LM]


@pytest.fixture(scope="module")
def tiny_pair(tmp_path_factory):
    """Two tiny random Llamas sharing a tokenizer (plumbing only): the consensus's two models."""
    from ...detectors.conftest import _save_tiny_llama, _train_tokenizer

    tok = _train_tokenizer(300)
    root = tmp_path_factory.mktemp("consensus")
    return _save_tiny_llama(root / "a", tok, seed=0), _save_tiny_llama(root / "b", tok, seed=1)


def test_consensus_keeps_what_both_models_keep_and_scores_only_the_first_models_survivors(tiny_pair):
    from humanize.attacks.wordsub import context_checks
    from humanize.quality.context import context_deltas

    a, b = tiny_pair
    text = "The cat sat on the mat. The dog ran in the park and the birds sang."
    doc = Doc.parse(text)
    i = next(k for k in range(len(doc.words)) if doc.word(k) == "ran")
    s, e = doc.words[i]
    words = ["walked", "sat", "played", "jumped", "raced", "went", "sang", "mat"]
    da = context_deltas([(text, s, e, w) for w in words], a)
    db = context_deltas([(text, s, e, w) for w in words], b)
    margin_a = max(0.0, -float(np.median(da)))  # about half the candidates survive the first model
    first = [w for w, d in zip(words, da) if d >= -margin_a]
    margin_b = max(0.0, -float(np.median(db[[words.index(w) for w in first]])))
    both = [w for w in first if db[words.index(w)] >= -margin_b]
    assert 0 < len(both) < len(first) < len(words)  # each model rejects something: the test can tell them apart
    checks = context_checks(a, margin_a, b, margin_b)
    assert [c.lm for c in checks] == [a, b]
    cands = {i: [Candidate(i, w, "t") for w in words]}
    for check in checks:  # as the engine filters: each constraint on what the previous ones left
        cands = check.filter(doc, cands)
    assert [c.text for c in cands[i]] == both
    # the second model scored only the first one's survivors
    assert doc.cost["context_checks"] == len(words) + len(first)
    # order does not change what is kept, only who scores what
    doc2 = Doc.parse(text)
    cands = {i: [Candidate(i, w, "t") for w in words]}
    for check in context_checks(a, margin_a, b, margin_b, first="consensus"):
        cands = check.filter(doc2, cands)
    assert sorted(c.text for c in cands[i]) == sorted(both)
    # one model: no consensus; no margin: no check at all
    assert [c.lm for c in context_checks(a, margin_a, None)] == [a]
    assert context_checks(a, None, b) == []


def test_synonym_swaps_only_what_both_models_accept(tiny_pair):
    """End to end: a Synonym whose consensus model rejects everything its ranking model keeps makes no swap."""
    a, b = tiny_pair
    text = STUDIES
    single = Synonym(lm=a, consensus_lm=None, context_margin=50.0, keep_terms=False, min_similarity=None)
    loose = Synonym(lm=a, consensus_lm=b, context_margin=50.0, consensus_margin=50.0, keep_terms=False,
                    min_similarity=None)
    strict = Synonym(lm=a, consensus_lm=b, context_margin=50.0, consensus_margin=0.0, keep_terms=False,
                     min_similarity=None)
    got = {n: _cands(x, text)[0] for n, x in (("single", single), ("loose", loose), ("strict", strict))}
    assert got["single"] == got["loose"] and any(got["single"].values())
    from humanize.quality.context import context_deltas

    doc = Doc.parse(text)
    for w, cs in got["strict"].items():
        k = next(j for j in range(len(doc.words)) if doc.word(j) == w)
        s, e = doc.words[k]
        assert set(cs) <= set(got["single"][w])
        assert all(d >= 0 for d in context_deltas([(text, s, e, c) for c in cs], b))
    assert sum(map(len, got["strict"].values())) < sum(map(len, got["single"].values()))


def test_the_demo_shares_one_qwen_between_its_paraphrase_and_synonym_attacks(qwen):
    """The demo's synonym@0.1 checks its candidates under Qwen2.5-Coder-0.5B, which its paraphrase attack loads:
    one model object, no second load."""
    from humanize.attacks import registry
    from humanize.benchmarks.runner.config import demo_model_attacks
    from humanize.models import add_load_listener, remove_load_listener
    from humanize.quality.perplexity import get_lm

    loads = []
    add_load_listener(loads.append)
    try:
        specs = {s.name: s for s in demo_model_attacks()}
        synonym = registry.get("synonym", **specs["synonym"].params)
        paraphrase = registry.get("paraphrase", **specs["paraphrase"].params)
        checks = [c for c in synonym._parts().candidate_constraints if isinstance(c, ContextFit)]
        assert checks[-1].lm == DEFAULT_CHAT_LM
        assert get_lm(checks[-1].lm, checks[-1].device) is paraphrase.generator().loaded() is qwen
        synonym.batch([STUDIES])  # runs the consensus check under Qwen
    finally:
        remove_load_listener(loads.append)
    assert [e["name"] for e in loads if e["kind"] == "causal_lm" and e["name"] == DEFAULT_CHAT_LM] == []
