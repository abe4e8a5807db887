"""One forward pass per text serves the metric detectors and perplexity (issue #13).

Perplexity read from the detectors' statistics cache must equal what the meter
computes on its own, and must not run the model again; where the cached pass does
not cover what perplexity scores (a cut text, several windows, another model) it
computes as before.
"""
import numpy as np
import pytest

from humanize.detectors import lm_stats
from humanize.detectors.lm_stats import LMStatistics
from humanize.models.scoring import SHARED_PASS_ENV
from humanize.quality import QualityMeter, perplexity
from humanize.quality.perplexity import perplexity_with_notes

TEXTS = [
    "The committee met on Tuesday to review the budget and approved most of the proposals.",
    "Hello.",
    "Die Katze sitzt auf der Matte und schaut aus dem Fenster. 猫はマットの上に座っている。",
    "Great results 🎉🎉 — thanks everyone! 👍",
    "   \n\t  ",
    "x",
    "Zero\u200bwidth\u200bspaces\u200bsplit\u200bthese\u200bwords\u200bapart.",
]
WINDOW = dict(max_length=512, stride=384)  # the demo's perplexity window


class ForwardCounter:
    """Counts the texts that go through the model's forward (rows of each batch)."""

    def __init__(self, model, monkeypatch):
        self.rows = 0
        inner = model.forward

        def counted(*args, **kwargs):
            ids = kwargs.get("input_ids", args[0] if args else None)
            self.rows += int(ids.shape[0])
            return inner(*args, **kwargs)

        monkeypatch.setattr(model, "forward", counted)


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch):
    monkeypatch.delenv(SHARED_PASS_ENV, raising=False)
    lm_stats.clear_cache()
    yield
    lm_stats.set_cache_size(lm_stats.DEFAULT_CACHE_SIZE)
    lm_stats.clear_cache()


def own_perplexity(smollm, texts, **kw):
    lm_stats.clear_cache()
    return perplexity(list(texts), smollm, **kw)


def test_shared_values_equal_own_and_skip_the_model(smollm, monkeypatch):
    own = own_perplexity(smollm, TEXTS, **WINDOW)
    assert np.isfinite(own).sum() == len(TEXTS)
    LMStatistics(smollm)(TEXTS)  # what the metric detectors compute first in a run
    counter = ForwardCounter(smollm.model, monkeypatch)
    shared = perplexity(TEXTS, smollm, **WINDOW)
    assert counter.rows == 0
    assert lm_stats.cache_info()["shared_hits"] == len(TEXTS)
    np.testing.assert_allclose(shared, own, rtol=1e-5)


def test_quality_meter_reuses_detector_pass(smollm, monkeypatch):
    originals, attacked = TEXTS[:3], [t.upper() for t in TEXTS[:3]]
    meter = QualityMeter(lm=smollm, meters=["perplexity"], **WINDOW)
    lm_stats.clear_cache()
    own = meter.score(originals, attacked)
    lm_stats.clear_cache()
    LMStatistics(smollm)(originals + attacked)
    counter = ForwardCounter(smollm.model, monkeypatch)
    shared = meter.score(originals, attacked)
    assert counter.rows == 0
    for col in ("perplexity_original", "perplexity_attacked", "perplexity_delta"):
        np.testing.assert_allclose(shared[col], own[col], rtol=1e-5, atol=1e-6)
    assert list(shared["note"]) == list(own["note"])


def test_detector_reference_entries_serve_the_scoring_model(smollm, monkeypatch):
    # an entry keyed with a reference model still holds the scoring model's own log-probs
    own = own_perplexity(smollm, TEXTS[:2], **WINDOW)
    stats = LMStatistics(smollm, max_tokens=300)
    stats(TEXTS[:2])
    counter = ForwardCounter(smollm.model, monkeypatch)
    np.testing.assert_allclose(perplexity(TEXTS[:2], smollm, **WINDOW), own, rtol=1e-5)
    assert counter.rows == 0


def test_cut_statistics_fall_back_to_computing(smollm, monkeypatch):
    text = TEXTS[0]
    own = own_perplexity(smollm, [text], **WINDOW)
    LMStatistics(smollm, max_tokens=4)([text])  # the detectors scored only 4 tokens of it
    counter = ForwardCounter(smollm.model, monkeypatch)
    np.testing.assert_allclose(perplexity([text], smollm, **WINDOW), own, rtol=1e-9)
    assert counter.rows == 1
    assert lm_stats.cache_info()["shared_hits"] == 0


def windows(n_ids, length, stride):
    return 1 + max(0, -(-(n_ids - length) // stride))


@pytest.mark.parametrize("max_tokens", [512, 10])  # the whole text, or a cut pass that still covers window 1
def test_only_the_first_window_is_shared_when_there_are_several(smollm, monkeypatch, max_tokens):
    # with 8-token windows every later window conditions on a context that does not start at 0: computed
    text, kw = TEXTS[0], dict(max_length=8, stride=4)
    n_ids = len(smollm.tokenizer(text)["input_ids"]) + (smollm.tokenizer.bos_token_id is not None)
    assert windows(n_ids, 8, 4) >= 3
    own, own_notes, _ = perplexity_with_notes([text], smollm, max_windows=3, **kw)
    assert own_notes == ["scored the first 15 tokens of a longer text (max_windows=3)"]
    full = own_perplexity(smollm, [text], **kw)
    LMStatistics(smollm, max_tokens=max_tokens)([text])
    counter = ForwardCounter(smollm.model, monkeypatch)
    values, notes, _ = perplexity_with_notes([text], smollm, max_windows=3, **kw)
    assert counter.rows == 2 and lm_stats.cache_info()["shared_hits"] == 1
    np.testing.assert_allclose(values, own, rtol=1e-5)
    assert notes == own_notes
    counter.rows = 0
    np.testing.assert_allclose(perplexity([text], smollm, **kw), full, rtol=1e-5)
    assert counter.rows == windows(n_ids, 8, 4) - 1
    assert not np.isclose(full[0], values[0])  # the cut changes the figure, so the test can tell


def test_sharing_can_be_switched_off(smollm, monkeypatch):
    LMStatistics(smollm)(TEXTS[:2])
    monkeypatch.setenv(SHARED_PASS_ENV, "0")
    counter = ForwardCounter(smollm.model, monkeypatch)
    perplexity(TEXTS[:2], smollm, **WINDOW)
    assert counter.rows == 2 and lm_stats.cache_info()["shared_hits"] == 0


def test_cache_stays_bounded_and_evicted_texts_are_computed(smollm, monkeypatch):
    lm_stats.set_cache_size(2)
    own = own_perplexity(smollm, TEXTS[:4], **WINDOW)
    LMStatistics(smollm)(TEXTS[:4])
    assert lm_stats.cache_info()["size"] == 2
    counter = ForwardCounter(smollm.model, monkeypatch)
    np.testing.assert_allclose(perplexity(TEXTS[:4], smollm, **WINDOW), own, rtol=1e-5)
    assert counter.rows == 2 and lm_stats.cache_info()["shared_hits"] == 2


def test_lone_surrogate_text_is_shared_after_repair(smollm, monkeypatch):
    from humanize.models import TextRepairWarning

    bad = "A broken \ud83d surrogate in a sentence."
    with pytest.warns(TextRepairWarning):
        own = own_perplexity(smollm, [bad], **WINDOW)
    with pytest.warns(TextRepairWarning):
        LMStatistics(smollm)([bad])
    counter = ForwardCounter(smollm.model, monkeypatch)
    with pytest.warns(TextRepairWarning):
        shared = perplexity([bad], smollm, **WINDOW)
    assert counter.rows == 0
    np.testing.assert_allclose(shared, own, rtol=1e-5)


@pytest.fixture(scope="module")
def no_bos_lm(tmp_path_factory):
    """A tiny random Llama whose tokenizer has no BOS: its first token is context, never scored."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from humanize.models import load_causal_lm

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(TEXTS * 3, trainer=trainers.BpeTrainer(
        vocab_size=280, special_tokens=["</s>", "<pad>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="</s>", pad_token="<pad>")
    cfg = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = LlamaForCausalLM(cfg)
    path = tmp_path_factory.mktemp("no-bos-lm")
    model.save_pretrained(path)
    fast.save_pretrained(path)
    lm = load_causal_lm(str(path))
    assert lm.tokenizer.bos_token_id is None
    return lm


def test_a_tokenizer_without_bos_shares_too(no_bos_lm, smollm, monkeypatch):
    kw = dict(max_length=32, stride=16)
    own, own_notes, _ = perplexity_with_notes(TEXTS, no_bos_lm, **kw)
    assert np.isnan(own[TEXTS.index("x")]) and "no BOS" in own_notes[TEXTS.index("x")]
    LMStatistics(smollm)(TEXTS)  # another model's statistics serve nothing here
    counter = ForwardCounter(no_bos_lm.model, monkeypatch)
    np.testing.assert_allclose(perplexity(TEXTS, no_bos_lm, **kw), own, rtol=1e-9)
    assert counter.rows > 0 and lm_stats.cache_info()["shared_hits"] == 0
    LMStatistics(no_bos_lm, max_tokens=64)(TEXTS)
    counter.rows = 0
    shared, notes, _ = perplexity_with_notes(TEXTS, no_bos_lm, **kw)
    np.testing.assert_allclose(shared, own, rtol=1e-5)
    assert notes == own_notes
    long_texts = sum(len(no_bos_lm.tokenizer(t)["input_ids"]) > 32 for t in TEXTS)
    assert counter.rows == sum(max(0, -(-(len(no_bos_lm.tokenizer(t)["input_ids"]) - 32) // 16))
                               for t in TEXTS)  # only the later windows of the long texts
    assert lm_stats.cache_info()["shared_hits"] == len(TEXTS) - 1 and long_texts >= 1  # all but "x"
