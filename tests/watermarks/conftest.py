"""Tiny models for the watermark tests: a byte-level tokenizer and two random Llamas with a chat template,
one with peaked next-token distributions (KGW/Unigram have a green token to push) and one flat (SynthID's
tournament needs entropy). Plumbing only: their text is noise."""
import pytest

from tests.detectors.conftest import _save_tiny_llama, _train_tokenizer
from tests.test_conformance import TINY_CHAT_TEMPLATE


@pytest.fixture(scope="session")
def wm_models(tmp_path_factory):
    import torch
    from transformers import AutoModelForCausalLM

    tok = _train_tokenizer(300)
    tok.chat_template = TINY_CHAT_TEMPLATE
    root = tmp_path_factory.mktemp("wm_models")
    peaked = _save_tiny_llama(root / "peaked", tok, seed=0, max_positions=1024)
    flat = _save_tiny_llama(root / "flat", tok, seed=1, max_positions=1024)
    model = AutoModelForCausalLM.from_pretrained(flat)
    with torch.no_grad():
        model.lm_head.weight.mul_(0.02)  # near-uniform next-token distributions
    model.save_pretrained(flat)
    return {"peaked": peaked, "flat": flat, "tokenizer": peaked}
