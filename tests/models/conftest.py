"""Fixtures for the model tests: tiny randomly initialised Llama models with SmolLM2's tokenizer (plumbing only)."""
import pytest
import torch


@pytest.fixture(scope="session")
def save_tiny_llama(tmp_path_factory, smollm):
    """``save_tiny_llama(name, max_positions)``: a 2-layer Llama with SmolLM2's tokenizer saved in a new folder
    (weights from seed 0, the global RNG state untouched), returned as its path."""
    from transformers import LlamaConfig, LlamaForCausalLM

    def save(name: str, max_positions: int):
        cfg = LlamaConfig(vocab_size=len(smollm.tokenizer), hidden_size=32, intermediate_size=64,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                          max_position_embeddings=max_positions, bos_token_id=smollm.tokenizer.bos_token_id)
        path = tmp_path_factory.mktemp(name)
        with torch.random.fork_rng():
            torch.manual_seed(0)
            LlamaForCausalLM(cfg).save_pretrained(path)
        smollm.tokenizer.save_pretrained(path)
        return path

    return save
