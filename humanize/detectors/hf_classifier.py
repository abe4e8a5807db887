"""Hugging Face sequence-classification detectors (RAID Section 5.1 / Appendix F.1 "neural";
TH-Bench Section 2.1 "model-based": OpenAI-D, ChatGPT-D, RADAR).

The score of a text is the softmax probability of the classifier's *machine* label.
Which output is the machine label differs per model, so it is a parameter:

- ``roberta_openai``: ``openai-community/roberta-base-openai-detector``, labels Fake/Real, machine = ``"Fake"``;
- ``chatgpt_roberta``: ``Hello-SimpleAI/chatgpt-detector-roberta``, labels Human/ChatGPT, machine = ``"ChatGPT"``;
- ``radar``: ``TrustSafeAI/RADAR-Vicuna-7B``, machine = output ``0`` (see below);
- ``hf_classifier``: any other model, ``model=`` and ``machine_label=`` given by the caller.

RADAR-Vicuna-7B is, despite its name, a RoBERTa-large classifier whose config does not
name its classes; its model card and RAID's detector runner read the softmax probability
of output 0 as "AI-generated", so the preset names the machine output by index.

Texts are tokenised once, truncated to ``max_tokens`` (default: the model's own limit),
sorted by length and run in padded batches of ``batch_size``; scores come back in the
input order. Models load lazily on the first ``score`` through
:func:`humanize.models.load_sequence_classifier` (hub id, packaged alias or local dir).
"""

from __future__ import annotations

from numbers import Integral
from typing import Sequence

import numpy as np

from humanize.validation import MODEL, Interval, check_texts

from .base import Detector

#: Known detectors: registry key -> (hub id, machine label, max tokens).
PRESETS: dict[str, dict] = {
    "roberta_openai": {"model": "openai-community/roberta-base-openai-detector", "machine_label": "Fake", "max_tokens": 512},
    "chatgpt_roberta": {"model": "Hello-SimpleAI/chatgpt-detector-roberta", "machine_label": "ChatGPT", "max_tokens": 512},
    "radar": {"model": "TrustSafeAI/RADAR-Vicuna-7B", "machine_label": 0, "max_tokens": 512},
}

class HFClassifier(Detector):
    """Any ``AutoModelForSequenceClassification`` as a detector.

    Parameters
    ----------
    model : hub id, packaged alias or local directory.
    machine_label : the label name (``config.id2label`` value, e.g. ``"Fake"``) or the
        output index (int) that means machine-generated.
    max_tokens : truncation length in tokens (special tokens included), never above the
        model's own limit (``min`` of the tokenizer's ``model_max_length`` and the position
        table); ``None`` = that limit.
    batch_size : texts per forward pass.
    device, dtype : passed to the model loader (``None`` = its defaults).
    """

    name = "hf_classifier"
    _model_params = ("model",)
    _parameter_constraints = {
        "model": [MODEL],  # hub id, alias, directory or a loaded model
        "machine_label": ["nonempty str", Interval(Integral, 0, None)],  # a label name, or an output index
        "max_tokens": [Interval(Integral, 2, None), None],  # room for the special tokens
        "batch_size": [Interval(Integral, 1, None)],
    }

    def __init__(self, model: str, machine_label: "str | int", max_tokens: "int | None" = None,
                 batch_size: int = 16, device: "str | None" = None, dtype: "str | None" = None):
        self._init_params(locals())
        self._loaded = None

    # -- parameters ---------------------------------------------------------------------
    def _check(self) -> None:
        self._loaded = None  # new parameters: the model loads again on the next score

    # -- model --------------------------------------------------------------------------
    def _load(self):
        if self._loaded is None:
            from humanize.models import load_sequence_classifier

            loaded = load_sequence_classifier(self.model, device=self.device, dtype=self.dtype)
            self._machine_index = self._resolve_machine_index(loaded.model.config)
            self._effective_max = self._effective_max_tokens(loaded)
            self._loaded = loaded
        return self._loaded

    def labels(self) -> list[str]:
        """The model's output labels, in output order (loads the model)."""
        config = self._load().model.config
        return [str(config.id2label[i]) for i in range(config.num_labels)]

    def _resolve_machine_index(self, config) -> int:
        n = int(config.num_labels)
        names = [str(config.id2label.get(i, config.id2label.get(str(i), f"LABEL_{i}"))) for i in range(n)]
        label = self.machine_label
        if isinstance(label, (int, np.integer)):
            if not 0 <= int(label) < n:
                raise ValueError(f"machine_label index {int(label)} is out of range for model {self.model!r}, "
                                 f"which has {n} outputs: {dict(enumerate(names))}")
            return int(label)
        if label in names:
            return names.index(label)
        raise ValueError(f"machine_label {label!r} is not a label of model {self.model!r}; "
                         f"its labels are {names} (or pass an output index 0..{n - 1})")

    def _effective_max_tokens(self, loaded) -> int:
        from humanize.models.classify import input_limit

        limits = [x for x in (input_limit(loaded), self.max_tokens) if x is not None]
        return min(int(x) for x in limits) if limits else 512

    # -- scoring ------------------------------------------------------------------------
    def score(self, texts: Sequence[str]) -> np.ndarray:
        """P(machine label) for each text, in [0, 1]."""
        texts = check_texts(texts, type(self).__name__, "score")
        if not texts:
            return np.zeros(0, dtype=np.float64)
        loaded = self._load()
        return self._probabilities(texts, loaded)[:, self._machine_index].astype(np.float64)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """Softmax over all the model's labels (columns in ``labels()`` order)."""
        texts = check_texts(texts, type(self).__name__, "predict_proba")
        loaded = self._load()
        if not texts:
            return np.zeros((0, int(loaded.model.config.num_labels)), dtype=np.float64)
        return self._probabilities(texts, loaded).astype(np.float64)

    def _probabilities(self, texts: list[str], loaded) -> np.ndarray:
        return batched_softmax(loaded.model, loaded.tokenizer, texts, self._effective_max, int(self.batch_size))

    def describe(self) -> dict:
        info = super().describe()
        if self._loaded is not None:
            info["model"] = {"name": self._loaded.name, "resolved": str(self._loaded.resolved),
                             "device": str(self._loaded.device), "dtype": str(self._loaded.dtype),
                             "labels": self.labels(), "machine_index": self._machine_index,
                             "max_tokens": self._effective_max}
        return info


def batched_softmax(model, tokenizer, texts: list[str], max_tokens: int, batch_size: int) -> np.ndarray:
    """Class probabilities of a sequence classifier, shape ``(len(texts), num_labels)``.

    Texts are tokenised once with truncation at ``max_tokens``, sorted by length so each
    padded batch wastes little, and the rows are returned in the input order. Texts enter
    through :func:`humanize.models.text.model_input` (lone surrogates -> U+FFFD, with a warning),
    and only a prefix holding their first ``max_tokens`` tokens is tokenised.
    """
    from humanize.models.classify import softmax_in_batches
    from humanize.models.text import model_input, token_prefix

    texts, _ = model_input(texts, where=f"{type(model).__name__} tokenizer")

    def count(prefix: str) -> int:
        return len(tokenizer(prefix, add_special_tokens=False)["input_ids"])

    texts = [token_prefix(t, max_tokens, count) for t in texts]  # the rest would be cut anyway
    encoded = tokenizer(texts, truncation=True, max_length=max_tokens, padding=False)
    # Without a pad token (in the tokenizer or, for decoder classifiers that pick the
    # last non-pad position, in the config) a batch cannot be padded: one text at a time.
    can_pad = tokenizer.pad_token_id is not None and getattr(model.config, "pad_token_id", None) is not None
    return softmax_in_batches(model, tokenizer, encoded, batch_size, can_pad)


def _preset_init(key: str):
    preset = PRESETS[key]

    def __init__(self, model: str = preset["model"], machine_label: "str | int" = preset["machine_label"],
                 max_tokens: "int | None" = preset["max_tokens"], batch_size: int = 16,
                 device: "str | None" = None, dtype: "str | None" = None):
        HFClassifier.__init__(self, model, machine_label, max_tokens, batch_size, device, dtype)

    return __init__


class RobertaOpenAIDetector(HFClassifier):
    """OpenAI's GPT-2 output detector, RoBERTa-base (RAID "RoBERTa-B (GPT2)", TH-Bench "OpenAI-D")."""

    name = "roberta_openai"
    __init__ = _preset_init("roberta_openai")


class ChatGPTRobertaDetector(HFClassifier):
    """RoBERTa-base fine-tuned on HC3 (RAID "RoBERTa-B (ChatGPT)", TH-Bench "ChatGPT-D")."""

    name = "chatgpt_roberta"
    __init__ = _preset_init("chatgpt_roberta")


class RadarDetector(HFClassifier):
    """RADAR (Hu et al., 2023), adversarially trained against a paraphraser (RAID F.1, TH-Bench 2.1)."""

    name = "radar"
    __init__ = _preset_init("radar")
