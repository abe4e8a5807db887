"""Class probabilities of a sequence classifier over already-tokenised inputs, in length-sorted batches.

Shared by the Hugging Face detectors (:mod:`humanize.detectors.hf_classifier`, LM-D) and the
entailment meter (:mod:`humanize.quality.entailment`): the inputs are sorted by length so each
padded batch wastes little, scored under ``torch.inference_mode`` in eval mode (the model's
training flag is restored afterwards), and the rows come back in the input order.
"""
from __future__ import annotations

import numpy as np

__all__ = ["input_limit", "softmax_in_batches"]

#: Architectures whose position table holds ``pad_token_id + 1`` offset slots (RoBERTa family).
OFFSET_POSITIONS = ("roberta", "xlm-roberta", "camembert", "longformer", "data2vec-text")


def input_limit(loaded) -> "int | None":
    """The longest input (special tokens included) a loaded sequence classifier takes: the smaller of
    its tokenizer's ``model_max_length`` and its position table (less the RoBERTa offset); None when
    neither says."""
    limits = []
    tok_max = getattr(loaded.tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
        limits.append(tok_max)
    config = loaded.model.config
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        if getattr(config, "model_type", "") in OFFSET_POSITIONS:
            positions -= int(getattr(config, "pad_token_id", 1) or 0) + 1
        limits.append(positions)
    return min(limits) if limits else None


def softmax_in_batches(model, tokenizer, encoded, batch_size: int, can_pad: bool = True) -> np.ndarray:
    """Softmax rows, shape ``(len(encoded["input_ids"]), num_labels)``, for a tokenizer's output.

    ``encoded`` is what ``tokenizer(..., padding=False)`` returns; without a way to pad
    (``can_pad`` False) every input goes through the model on its own.
    """
    import torch

    ids = encoded["input_ids"]
    step = batch_size if can_pad else 1
    order = np.argsort([len(x) for x in ids], kind="stable")
    device = next(model.parameters()).device
    out = np.zeros((len(ids), int(model.config.num_labels)), dtype=np.float64)
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for start in range(0, len(order), step):
                idx = order[start:start + step]
                features = [{k: encoded[k][i] for k in encoded.keys()} for i in idx]
                if len(features) > 1:
                    batch = tokenizer.pad(features, return_tensors="pt")
                else:
                    batch = {k: torch.tensor([v]) for k, v in features[0].items()}
                batch = {k: v.to(device) for k, v in batch.items()}
                logits = model(**batch).logits.float()
                out[idx] = torch.softmax(logits, dim=-1).cpu().numpy()
    finally:
        model.train(was_training)
    return out
