"""One way to get a model: packaged offline alias, local directory or hub id.

>>> from humanize.models import load_causal_lm, token_logprobs
>>> lm = load_causal_lm()                      # smollm2-135m-instruct, offline
>>> offsets, logprobs = token_logprobs(lm, "The cat sat on the mat.")

Every loader returns the same instance for the same (model, device, dtype)
within a process. GGUF-packaged models are converted once into
``$HUMANIZE_CACHE`` (default ``~/.cache/humanize``). Wherever the papers use
GPT-2 the offline default is :data:`DEFAULT_CAUSAL_LM`; the rewriting attacks default to another
model, :data:`DEFAULT_CHAT_LM`, so no attack is scored by its own writer. Results record
``LoadedModel.resolved``, the model that actually produced them.
"""
from humanize.exceptions import ModelUnavailable
from .cache import cache_dir, clear_loaded, loaded_models
from .identity import model_identity
from .loading import (
    LoadedModel,
    add_load_listener,
    load_causal_lm,
    load_masked_lm,
    load_sentence_encoder,
    load_seq2seq,
    load_sequence_classifier,
    load_tokenizer,
    remove_load_listener,
    resolve_device,
    resolve_dtype,
)
from .registry import DEFAULT_CAUSAL_LM, DEFAULT_CHAT_LM, DEFAULT_RANKING_LM, DEFAULT_SENTENCE_ENCODER, PACKAGED
from .scoring import sequence_logprobs, token_logprobs
from .text import HumanizeWarning, TextRepairWarning, model_input
from .vectors import WordVectors, load_word_vectors
from .wordnet import load_wordnet

__all__ = [
    "ModelUnavailable", "model_identity", "LoadedModel", "load_causal_lm", "load_masked_lm", "load_seq2seq",
    "load_sequence_classifier", "load_sentence_encoder", "load_tokenizer", "load_word_vectors", "load_wordnet",
    "DEFAULT_CAUSAL_LM", "DEFAULT_CHAT_LM", "DEFAULT_RANKING_LM", "DEFAULT_SENTENCE_ENCODER", "PACKAGED", "token_logprobs",
    "sequence_logprobs",
    "WordVectors", "cache_dir", "clear_loaded", "loaded_models", "add_load_listener",
    "remove_load_listener", "resolve_device", "resolve_dtype", "model_input", "HumanizeWarning", "TextRepairWarning",
]
