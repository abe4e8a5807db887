"""HFClassifier plumbing, on tiny randomly initialised classifiers saved to a tmp dir and loaded
through humanize.models.load_sequence_classifier (the same path the hub detectors take).
Random weights: these tests check label mapping, batching and truncation, never detection quality."""

from __future__ import annotations

import numpy as np
import pytest

from humanize.detectors import get
from humanize.detectors.hf_classifier import (PRESETS, ChatGPTRobertaDetector, HFClassifier, RadarDetector,
                                              RobertaOpenAIDetector)
from humanize.models import ModelUnavailable

from ._learned_helpers import ODD_TEXTS, save_tiny_classifier

TEXTS = ODD_TEXTS + [
    "The committee met on Tuesday to discuss the budget for next year.",
    "In a surprising turn of events, the small village won the national prize for its gardens.",
    "Results were mixed.",
]


@pytest.fixture(scope="module")
def fake_real_dir(tmp_path_factory):
    # the label convention of openai-community/roberta-base-openai-detector
    return str(save_tiny_classifier(tmp_path_factory.mktemp("tiny_fake_real"), ["Fake", "Real"], seed=1))


@pytest.fixture(scope="module")
def human_chatgpt_roberta_dir(tmp_path_factory):
    # the label convention of Hello-SimpleAI/chatgpt-detector-roberta, RoBERTa position offsets
    return str(save_tiny_classifier(tmp_path_factory.mktemp("tiny_roberta"), ["Human", "ChatGPT"], arch="roberta",
                                    max_positions=34, seed=2))


def test_probability_of_the_configured_label(fake_real_dir):
    fake = HFClassifier(fake_real_dir, "Fake")
    proba = fake.predict_proba(TEXTS)
    assert fake.labels() == ["Fake", "Real"]
    assert proba.shape == (len(TEXTS), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    scores = fake.score(TEXTS)
    assert scores.shape == (len(TEXTS),) and scores.dtype == np.float64
    assert np.all((scores >= 0) & (scores <= 1))
    np.testing.assert_allclose(scores, proba[:, 0])
    # picking the other label (by name or by index) gives the complement
    np.testing.assert_allclose(HFClassifier(fake_real_dir, "Real").score(TEXTS), 1 - scores, atol=1e-6)
    np.testing.assert_allclose(HFClassifier(fake_real_dir, 1).score(TEXTS), 1 - scores, atol=1e-6)
    assert np.ptp(scores) > 0  # the texts are actually read: not one constant


def test_batching_equals_one_by_one(fake_real_dir, human_chatgpt_roberta_dir):
    for path, label in ((fake_real_dir, "Fake"), (human_chatgpt_roberta_dir, "ChatGPT")):
        batched = HFClassifier(path, label, batch_size=4).score(TEXTS)
        single = np.array([HFClassifier(path, label, batch_size=1).score([t])[0] for t in TEXTS])
        np.testing.assert_allclose(batched, single, atol=1e-5)
        # order of the input is kept although batches are length-sorted
        np.testing.assert_allclose(HFClassifier(path, label, batch_size=3).score(TEXTS[::-1]), batched[::-1],
                                   atol=1e-5)


def test_truncation_at_max_tokens(fake_real_dir):
    det = HFClassifier(fake_real_dir, "Fake", max_tokens=12)
    head = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    a, b, c = det.score([head + " alpha beta gamma", head + " completely different tail", "one two three"])
    assert a == pytest.approx(b, abs=1e-6)  # only the first 12 tokens are read
    assert a != pytest.approx(c, abs=1e-6)
    # a text far longer than the model's 64 positions runs (default limit = the model's)
    long_text = "word " * 5000
    det_default = HFClassifier(fake_real_dir, "Fake")
    assert 0 <= det_default.score([long_text])[0] <= 1
    assert det_default.describe()["model"]["max_tokens"] == 64


def test_roberta_position_offset_limit(human_chatgpt_roberta_dir):
    det = HFClassifier(human_chatgpt_roberta_dir, "ChatGPT")
    scores = det.score(["token " * 3000, "short"])  # would index past the position table if not truncated
    assert scores.shape == (2,)
    # 34 positions, padding index 0: RoBERTa positions start at pad+1, so 33 tokens fit
    assert det.describe()["model"]["max_tokens"] == 33


def test_unknown_machine_label_lists_the_models_labels(fake_real_dir):
    det = HFClassifier(fake_real_dir, "ChatGPT")
    with pytest.raises(ValueError, match=r"'ChatGPT'.*\['Fake', 'Real'\]"):
        det.score(["some text"])
    with pytest.raises(ValueError, match="out of range.*2 outputs"):
        HFClassifier(fake_real_dir, 2).score(["some text"])


def test_presets_in_the_registry(fake_real_dir, human_chatgpt_roberta_dir):
    assert isinstance(get("roberta_openai"), RobertaOpenAIDetector)
    assert get("roberta_openai").get_params()["model"] == "openai-community/roberta-base-openai-detector"
    assert get("roberta_openai").machine_label == "Fake"
    assert get("chatgpt_roberta").get_params()["machine_label"] == "ChatGPT"
    assert isinstance(get("chatgpt_roberta"), ChatGPTRobertaDetector)
    radar = get("radar")
    assert isinstance(radar, RadarDetector)
    assert (radar.model, radar.machine_label) == ("TrustSafeAI/RADAR-Vicuna-7B", 0)
    assert set(PRESETS) == {"roberta_openai", "chatgpt_roberta", "radar"}
    assert "RobertaOpenAIDetector(model='openai-community/roberta-base-openai-detector'" in repr(get("roberta_openai"))
    # the preset's label convention works end to end on a model with the same labels
    np.testing.assert_allclose(get("roberta_openai", model=fake_real_dir).score(TEXTS),
                               HFClassifier(fake_real_dir, 0).score(TEXTS))
    np.testing.assert_allclose(get("chatgpt_roberta", model=human_chatgpt_roberta_dir).score(TEXTS),
                               HFClassifier(human_chatgpt_roberta_dir, 1).score(TEXTS))
    generic = get("hf_classifier", model=fake_real_dir, machine_label="Real", batch_size=2)
    assert generic.name == "hf_classifier" and generic.get_params()["batch_size"] == 2


def test_a_users_own_classifier_from_its_directory(tmp_path):
    # issue #20 §2: any local sequence classifier by one registry call, its label by name or by index
    path = str(save_tiny_classifier(tmp_path / "own", ["human", "machine"], seed=3))
    by_name = get("hf_classifier", model=path, machine_label="machine")
    scores = by_name.score(TEXTS)
    assert scores.shape == (len(TEXTS),) and np.all((scores >= 0) & (scores <= 1)) and np.ptp(scores) > 0
    assert by_name.labels() == ["human", "machine"]
    np.testing.assert_allclose(get("hf_classifier", model=path, machine_label=1).score(TEXTS), scores)
    np.testing.assert_allclose(get("hf_classifier", model=path, machine_label=0).score(TEXTS), 1 - scores, atol=1e-6)
    np.testing.assert_allclose(by_name.predict_proba(TEXTS)[:, 1], scores)
    assert by_name.describe()["model"]["resolved"] == str(tmp_path / "own")


def test_describe_names_the_model(fake_real_dir):
    det = HFClassifier(fake_real_dir, "Fake")
    assert "model" not in det.describe()  # nothing loaded yet
    det.score(["x"])
    info = det.describe()
    assert info["detector"] == "hf_classifier"
    assert info["model"]["labels"] == ["Fake", "Real"] and info["model"]["machine_index"] == 0


def test_bad_arguments(fake_real_dir, tmp_path):
    with pytest.raises(TypeError, match="machine_label"):
        HFClassifier(fake_real_dir, 1.5)
    with pytest.raises(ValueError, match="batch_size"):
        HFClassifier(fake_real_dir, "Fake", batch_size=0)
    with pytest.raises(ValueError, match="max_tokens"):
        HFClassifier(fake_real_dir, "Fake", max_tokens=1)
    with pytest.raises(TypeError, match="model"):
        HFClassifier("", "Fake")
    det = HFClassifier(fake_real_dir, "Fake")
    with pytest.raises(TypeError, match="single str"):
        det.score("a text")
    with pytest.raises(TypeError, match="item 1 is int"):
        det.score(["ok", 3])
    assert det.score([]).shape == (0,)
    with pytest.raises(ModelUnavailable, match="does not exist"):
        HFClassifier(str(tmp_path / "no_such_model"), "Fake").score(["x"])


def test_decoder_classifier_without_pad_id_runs_one_by_one(tmp_path):
    # GPT-style classifiers read the last non-pad position; without config.pad_token_id they
    # cannot take padded batches, so the wrapper falls back to one text per forward pass.
    import torch
    import transformers

    from ._learned_helpers import minilm_dir

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(minilm_dir()))
    config = transformers.LlamaConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                                      max_position_embeddings=48, num_labels=2, pad_token_id=None,
                                      id2label={0: "human", 1: "machine"}, label2id={"human": 0, "machine": 1})
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = transformers.LlamaForSequenceClassification(config)
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    det = HFClassifier(str(tmp_path), "machine", batch_size=8)
    texts = ["short", "a somewhat longer text with more words in it", "word " * 200]
    batched = det.score(texts)
    single = np.array([det.score([t])[0] for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-6)
    assert det.describe()["model"]["max_tokens"] == 48
