"""The hub code path with small randomly initialised models saved to a temporary directory.

These check plumbing only (loading, sharing, dtype, scoring shapes), never model quality.
"""
import numpy as np
import pytest
import torch

from humanize.models import (load_causal_lm, load_masked_lm, load_seq2seq, load_sequence_classifier,
                             token_logprobs)


@pytest.fixture(scope="module")
def bert_tokenizer_dir(minilm):
    # the packaged MiniLM ships a BERT WordPiece tokenizer
    return minilm.model.tokenizer


@pytest.fixture(scope="module")
def tiny_llama(save_tiny_llama):
    return save_tiny_llama("tiny-llama", max_positions=128)


def test_local_causal_lm_through_loader(tiny_llama):
    lm = load_causal_lm(str(tiny_llama))
    assert lm.resolved == str(tiny_llama.resolve()) and lm.source == "local"
    assert lm.context_length == 128 and not lm.model.training
    assert load_causal_lm(tiny_llama) is lm                      # PathLike works, same instance
    half = load_causal_lm(str(tiny_llama), dtype="bfloat16")
    assert half is not lm and half.dtype == torch.bfloat16
    assert next(half.model.parameters()).dtype == torch.bfloat16
    text = "word " * 300                                         # longer than the 128-token context
    offsets, lps = token_logprobs(lm, text)
    assert len(lps) == len(offsets) > 128 and np.all(np.isfinite(lps))


def test_local_encoder_models(tmp_path, bert_tokenizer_dir):
    from transformers import BartConfig, BartForConditionalGeneration, BertConfig, BertForMaskedLM

    tok = bert_tokenizer_dir
    torch.manual_seed(0)
    bert = tmp_path / "tiny-bert"
    BertForMaskedLM(BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=64)).save_pretrained(bert)
    tok.save_pretrained(bert)
    mlm = load_masked_lm(str(bert))
    enc = mlm.tokenizer("a [MASK] test", return_tensors="pt")
    assert mlm.kind == "masked_lm"
    assert mlm.model(**enc).logits.shape[-1] == len(tok)
    clf = load_sequence_classifier(str(bert), num_labels=2)
    assert clf.kind == "sequence_classifier" and clf.model(**enc).logits.shape == (1, 2)
    bart = tmp_path / "tiny-bart"
    BartForConditionalGeneration(BartConfig(vocab_size=len(tok), d_model=32, encoder_layers=1, decoder_layers=1,
                                            encoder_attention_heads=2, decoder_attention_heads=2,
                                            encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
                                            pad_token_id=tok.pad_token_id, decoder_start_token_id=tok.cls_token_id,
                                            bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id)
                                 ).save_pretrained(bart)
    tok.save_pretrained(bart)
    s2s = load_seq2seq(str(bart))
    ids = s2s.tokenizer("hello world", return_tensors="pt").input_ids
    out = s2s.model.generate(input_ids=ids, max_new_tokens=4)
    assert s2s.kind == "seq2seq" and out.shape[0] == 1
