"""The parts on their own: causal-LM scores are exact log-probabilities; masked-LM fill-in plumbing."""
import math

import numpy as np
import pytest

from humanize.attacks.wordsub import (CausalLMScore, Doc, MaskedLMFill, MLMProbability, MLMScore, NotStopword,
                                      Synonym, WordNetSynonyms, WordSubstitution)


def test_causal_scores_are_the_lm_logprob_of_the_candidate_from_one_pass(smollm):
    """Each score equals log p(candidate | prefix) computed from scratch on the swapped text."""
    from humanize.models import token_logprobs

    text = "The committee approved the new budget after a long debate on Tuesday."
    doc = Doc.parse(text)
    words = [doc.word(j) for j in range(len(doc.words))]
    positions = [words.index("approved"), words.index("debate")]
    gens = WordNetSynonyms().propose(doc, positions)
    scored = CausalLMScore(smollm).score(doc, gens)
    scored = [c for i in positions for c in scored[i]]
    assert len(scored) >= 4
    for c in scored:
        s, e = doc.words[c.word]
        swapped = text[:s] + c.text + text[e:]
        offsets, lps = token_logprobs(smollm, swapped)
        inside = [k for k, (a, b) in enumerate(offsets) if a < s + len(c.text) and b > s]
        assert math.isclose(c.score, float(np.sum(lps[inside])), rel_tol=1e-3, abs_tol=1e-3), c
    multi = sum(1 for c in scored
                if len(smollm.tokenizer(" " + c.text, add_special_tokens=False)["input_ids"]) > 1)
    assert multi >= 1  # the multi-token path is exercised too
    assert doc.cost["forward_passes"] == 1  # one pass, multi-token candidates included


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A randomly initialised BertForMaskedLM saved to a temp dir: plumbing only, never effectiveness."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    words = ("house home building car vehicle dog cat animal city town river road quick fast slow big large "
             "small little happy glad sad good great bad red blue green old new young run walk eat see").split()
    path = tmp_path_factory.mktemp("tiny-bert")
    entries = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", "."] + words
    tok = BertTokenizerFast(vocab={w: k for k, w in enumerate(entries)}, do_lower_case=False)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128)
    BertForMaskedLM(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path), set(words)


def test_masked_lm_fill_proposes_top_k_vocabulary_words_in_batched_passes(tiny_bert):
    path, vocab = tiny_bert
    text = "the old dog saw a big red car near the river and the small cat ran home"
    doc = Doc.parse(text)
    positions = [j for j in range(len(doc.words)) if NotStopword().word_ok(doc.word(j))]
    gen = MaskedLMFill(path, top_k=5, window=3, batch_size=4)
    cands = gen.propose(doc, positions)
    assert doc.cost["forward_passes"] == -(-len(positions) // 4)
    for i, cs in cands.items():
        assert 1 <= len(cs) <= 5
        assert all(c.text in vocab and c.text != doc.word(i) and c.source == "mlm" for c in cs)
        probs = [c.mlm_prob for c in cs]
        assert all(0 < p <= 1 for p in probs) and probs == sorted(probs, reverse=True)


def test_synonym_with_a_masked_lm_ranks_by_its_probability(tiny_bert):
    path, vocab = tiny_bert
    text = "the old dog saw a big red car near the river and the small cat ran home"
    r = Synonym(mlm=path, pos=False, min_cosine=-1.0, min_mlm_prob=0.0, top_k=5, rate=0.5, context_margin=None,
                keep_terms=False).apply(text)  # a random model's fill-ins fit no context: plumbing only
    assert r.info["sources"] == ["mlm"] and r.n_edits >= 1
    assert all(e.replacement in vocab for e in r.edits)
    engine = WordSubstitution([MaskedLMFill(path, top_k=5)], [NotStopword(), MLMProbability(0.9)], MLMScore())
    assert engine.apply(text).n_edits == 0  # no random-model fill-in reaches probability 0.9
