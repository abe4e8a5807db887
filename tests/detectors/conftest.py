"""Session fixtures for detector tests.

Tiny randomly initialised Llama models (plumbing only, never quality) with small
byte-level BPE tokenizers trained here, saved to a temp dir and loaded through
``humanize.models.load_causal_lm``; and the packaged smollm2, loaded once.
"""
import pytest
import torch

_CORPUS = [
    "The cat sat on the mat. The dog ran in the park and the birds sang.",
    "Machine-generated text tends to use likely words; human text is more surprising.",
    "Numbers like 42, 3.14 and 2024 appear; so do punctuation marks: commas, colons!",
    "Über café naïve — Привет мир, 你好世界 🎉 emoji and other scripts.",
]


def _train_tokenizer(vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<s>", "</s>", "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(_CORPUS * 5, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")


def _save_tiny_llama(path, tokenizer, seed: int, extra_vocab: int = 0, max_positions: int = 256):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=len(tokenizer) + extra_vocab, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=max_positions, bos_token_id=tokenizer.bos_token_id,
                      eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    with torch.random.fork_rng():  # a fixed seed without touching the global RNG state
        torch.manual_seed(seed)
        model = LlamaForCausalLM(cfg)
        with torch.no_grad():  # larger logits than the default init, so ranks and entropies spread out
            model.lm_head.weight.mul_(40.0)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def tiny_dirs(tmp_path_factory):
    """Model dirs: 'a' and 'b' share a tokenizer, 'wide' shares it with 8 extra logits, 'other' does not."""
    tok = _train_tokenizer(300)
    other = _train_tokenizer(320)
    root = tmp_path_factory.mktemp("tiny-lms")
    return {
        "a": _save_tiny_llama(root / "a", tok, seed=0),
        "b": _save_tiny_llama(root / "b", tok, seed=1),
        "wide": _save_tiny_llama(root / "wide", tok, seed=2, extra_vocab=8),
        "other": _save_tiny_llama(root / "other", other, seed=3),
    }


@pytest.fixture(scope="session")
def tiny_lm(tiny_dirs):
    from humanize.models import load_causal_lm

    return load_causal_lm(tiny_dirs["a"])


@pytest.fixture(scope="session")
def tiny_lm_b(tiny_dirs):
    from humanize.models import load_causal_lm

    return load_causal_lm(tiny_dirs["b"])


@pytest.fixture(autouse=True)
def _fresh_stats_cache():
    from humanize.detectors import lm_stats

    lm_stats.clear_cache()
    yield
    lm_stats.clear_cache()


class ForwardCounter:
    """Counts forward calls and rows (texts) through a torch module."""

    def __init__(self, module):
        self.calls = 0
        self.rows = 0
        self._handle = module.register_forward_hook(self._hook, with_kwargs=True)

    def _hook(self, module, args, kwargs, output):
        ids = kwargs.get("input_ids", args[0] if args else None)
        self.calls += 1
        self.rows += int(ids.shape[0])

    def remove(self):
        self._handle.remove()


@pytest.fixture
def count_forward():
    counters = []

    def make(lm):
        c = ForwardCounter(lm.model)
        counters.append(c)
        return c

    yield make
    for c in counters:
        c.remove()


def hand_ids(lm, text, max_tokens=None):
    """[BOS] + the text's tokens (first max_tokens of them), as the detectors define scoring input."""
    ids = lm.tokenizer(text, add_special_tokens=False)["input_ids"]
    if max_tokens is not None:
        ids = ids[:max_tokens]
    bos = lm.tokenizer.bos_token_id
    return ([bos] if bos is not None else []) + list(ids)


def hand_logits(lm, ids):
    """float64 next-token logits for positions 0..n-2 and the targets ids[1:], one text, no padding."""
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([ids], device=lm.model.device)).logits[0, :-1].double().cpu()
    return logits, torch.tensor(ids[1:])


@pytest.fixture(scope="session")
def hand():
    """Plain-torch helpers for hand computations, independent of lm_stats."""
    from types import SimpleNamespace

    return SimpleNamespace(ids=hand_ids, logits=hand_logits)
