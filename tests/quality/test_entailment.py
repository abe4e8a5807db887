"""The NLI entailment meter's plumbing, with small randomly initialised classifiers saved to a temporary
directory and loaded through the same code path as a hub model (the hub is unreachable here).

A random model checks plumbing only (pairing, directions, batching, skipped calls, labels, notes),
never what an NLI model thinks; the biased models make the arithmetic exact.
"""
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings

from humanize.models import TextRepairWarning, load_sequence_classifier
from humanize.quality import QualityMeter
from humanize.quality.entailment import (entailment, entailment_with_notes, nli_labels, sentence_pairs,
                                         split_sentences)

from ..text_strategies import batches, small_text

THREE_WAY = {0: "contradiction", 1: "entailment", 2: "neutral"}          # cross-encoder/nli-deberta-v3-base
MNLI_CAPS = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}          # microsoft/deberta-large-mnli

DOC = "The trial enrolled 40 patients. Blood pressure fell in most of them. No side effects were seen."
SWAPPED = "The trial enrolled 40 patients. Blood pressure rose in most of them. No side effects were seen."


def _save(path, tok, id2label, arch="bert", bias=None, positions=64):
    from transformers import (BertConfig, BertForSequenceClassification, DebertaV2Config,
                              DebertaV2ForSequenceClassification)

    torch.manual_seed(0)
    common = dict(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, max_position_embeddings=positions, num_labels=len(id2label),
                  initializer_range=0.5,  # outputs that vary with the input (the default 0.02 gives ~1/3 each)
                  id2label=id2label, label2id={v: k for k, v in id2label.items()}, pad_token_id=tok.pad_token_id)
    if arch == "bert":
        model = BertForSequenceClassification(BertConfig(**common))
        head = model.classifier
    else:
        model = DebertaV2ForSequenceClassification(DebertaV2Config(**common, type_vocab_size=2))
        head = model.classifier
    if bias is not None:  # a constant output: the label with the large bias always wins
        with torch.no_grad():
            head.weight.zero_()
            head.bias.copy_(torch.tensor(bias, dtype=torch.float32))
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def tok(minilm):
    return minilm.model.tokenizer  # the packaged MiniLM ships a BERT WordPiece tokenizer


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory, tok):
    return _save(tmp_path_factory.mktemp("tiny-nli"), tok, THREE_WAY)


@pytest.fixture(scope="module")
def tiny_deberta(tmp_path_factory, tok):
    return _save(tmp_path_factory.mktemp("tiny-deberta-nli"), tok, THREE_WAY, arch="deberta")


def _count_rows(monkeypatch, path):
    """Wrap the loaded model's forward: returns the list of batch sizes it was called with."""
    lm = load_sequence_classifier(path, dtype="float32")  # the instance the meter gets (same cache key)
    calls = []
    inner = lm.model.forward

    def forward(*args, **kwargs):
        calls.append(int(kwargs["input_ids"].shape[0]))
        return inner(*args, **kwargs)

    monkeypatch.setattr(lm.model, "forward", forward)
    return calls


def _probs(path, premise, hypothesis):
    lm = load_sequence_classifier(path, dtype="float32")
    enc = lm.tokenizer(premise, hypothesis, return_tensors="pt", truncation=True, max_length=64)
    with torch.inference_mode():
        return torch.softmax(lm.model(**enc).logits.float(), -1)[0].numpy()


# -- pairing ---------------------------------------------------------------------------------------------

def test_sentences_and_pairing_rules():
    assert split_sentences("  ") == [] and split_sentences("") == []
    assert split_sentences("One. Two three.") == ["One.", "Two three."]
    assert split_sentences("🙂🙂") == ["🙂🙂"]
    pairs, rule = sentence_pairs(DOC, SWAPPED)                    # same count: by position
    assert rule == "index" and len(pairs) == 3 and pairs[1] == ("Blood pressure fell in most of them.",
                                                                   "Blood pressure rose in most of them.")
    split = "The trial enrolled 40 patients. Blood pressure fell. It fell in most of them. No side effects were seen."
    pairs, rule = sentence_pairs(DOC, split)                     # a split sentence is compared whole
    assert rule == "overlap" and len(pairs) == 3
    assert pairs[1] == ("Blood pressure fell in most of them.", "Blood pressure fell. It fell in most of them.")
    merged = "The trial enrolled 40 patients and blood pressure fell in most. No side effects were seen."
    pairs, rule = sentence_pairs(DOC, merged)                    # an original chosen by none: whole texts
    assert rule == "whole" and pairs == [(DOC, merged)]
    pairs, rule = sentence_pairs("Alpha beta. Gamma delta.", "Zeta eta theta iota kappa.  Lambda mu. Nu xi.")
    assert rule == "whole"                                       # no word in common
    assert sentence_pairs("", "x") == ([], "empty") and sentence_pairs("x", " \n") == ([], "empty")


# -- batching, skipped calls, directions -------------------------------------------------------------------

@pytest.mark.parametrize("which", ["tiny_nli", "tiny_deberta"])
def test_batching_gives_the_numbers_of_one_by_one(which, request):
    path = request.getfixturevalue(which)
    originals = [DOC, "A short one.", "Cats sleep a lot. Dogs bark at night.", DOC]
    attacked = [SWAPPED, "A brief one!", "Cats nap often. Dogs howl at night.", "Something else entirely."]
    together, notes, name = entailment_with_notes(originals, attacked, path, batch_size=3)
    alone = [entailment_with_notes([o], [a], path, batch_size=1)[0] for o, a in zip(originals, attacked)]
    for key in ("entailment", "entailment_min", "contradiction", "pairs", "unchanged"):
        np.testing.assert_allclose(together[key], [a[key][0] for a in alone], rtol=0, atol=1e-5, err_msg=key)
    assert name == str(Path(path).resolve())
    assert np.all((together["entailment"] >= 0) & (together["entailment"] <= 1))
    assert np.all(together["entailment_min"] <= together["entailment"] + 1e-12)
    assert notes[3].startswith("whole texts compared")


def test_unchanged_pairs_skip_the_model(tiny_nli, monkeypatch):
    calls = _count_rows(monkeypatch, tiny_nli)
    cols, _, _ = entailment_with_notes([DOC, DOC, DOC], [SWAPPED, DOC, SWAPPED], tiny_nli, batch_size=16)
    # one changed sentence pair, shared by documents 0 and 2: two directions, each sent once
    assert sum(calls) == 2
    assert cols["pairs"].tolist() == [3, 3, 3] and cols["unchanged"].tolist() == [2, 3, 2]
    assert cols["entailment"][1] == 1.0 and cols["entailment_min"][1] == 1.0 and cols["contradiction"][1] == 0.0
    assert cols["entailment"][0] == cols["entailment"][2]
    calls.clear()
    same, _, _ = entailment_with_notes([DOC], [DOC], tiny_nli)
    assert calls == [] and same["entailment"][0] == 1.0
    calls.clear()
    entailment_with_notes([DOC, "A. B."], [SWAPPED, "A. C."], tiny_nli, batch_size=1)
    assert calls == [1, 1, 1, 1]                                 # batch_size rows per forward pass


def test_direction_and_min_logic_against_the_model_itself(tiny_nli):
    o, a = "Blood pressure fell in most of them.", "Blood pressure rose in most of them."
    fwd, bwd = _probs(tiny_nli, o, a), _probs(tiny_nli, a, o)
    assert not np.allclose(fwd, bwd)                             # the random model is direction-sensitive
    cols, _, _ = entailment_with_notes([DOC], [SWAPPED], tiny_nli)
    want = min(fwd[1], bwd[1])
    assert cols["entailment_min"][0] == pytest.approx(want, abs=1e-6)
    assert cols["entailment"][0] == pytest.approx((1 + 1 + want) / 3, abs=1e-6)
    assert cols["contradiction"][0] == pytest.approx(max(fwd[0], bwd[0]), abs=1e-6)


@pytest.mark.parametrize("labels, bias", [(THREE_WAY, [0.0, 5.0, 0.0]), (MNLI_CAPS, [0.0, 0.0, 5.0])])
def test_a_model_that_always_entails_gives_exact_figures(tmp_path, tok, labels, bias):
    path = _save(tmp_path / "always", tok, labels, bias=bias)
    q = math.exp(5) / (math.exp(5) + 2)                          # P(entailment) of every changed pair
    c = 1 / (math.exp(5) + 2)                                    # P(contradiction)
    cols, notes, _ = entailment_with_notes([DOC, "One. Two."], [SWAPPED, "Uno. Dos."], path)
    assert cols["entailment_min"][0] == pytest.approx(q, abs=1e-6)
    assert cols["entailment"][0] == pytest.approx((2 + q) / 3, abs=1e-6)
    assert cols["contradiction"][0] == pytest.approx(c, abs=1e-6)
    assert cols["entailment"][1] == pytest.approx(q, abs=1e-6) and cols["unchanged"][1] == 0
    assert nli_labels(load_sequence_classifier(path, dtype="float32")) == \
        ((1, 0) if labels is THREE_WAY else (2, 0))
    assert entailment(DOC, SWAPPED, path) == pytest.approx((2 + q) / 3, abs=1e-6)


# -- inputs, labels, notes ---------------------------------------------------------------------------------

def test_empty_whitespace_emoji_and_surrogates(tiny_nli):
    originals = ["", "   \n", DOC, "🙂🙂 🎉", "a \ud800 b.", DOC]
    attacked = [DOC, DOC, "\t", "🙂 🎉🎉", "a \ud800 c.", ""]
    with pytest.warns(TextRepairWarning):
        cols, notes, _ = entailment_with_notes(originals, attacked, tiny_nli)
    assert np.isnan(cols["entailment"][[0, 1, 2, 5]]).all() and np.isnan(cols["contradiction"][[0, 1, 2, 5]]).all()
    assert notes[0] == notes[1] == "empty original" and notes[2] == notes[5] == "empty attacked text"
    assert np.isfinite(cols["entailment"][[3, 4]]).all() and notes[3] == notes[4] == ""
    empty, notes, _ = entailment_with_notes([], [], tiny_nli)
    assert empty["entailment"].shape == (0,) and notes == []
    assert isinstance(entailment("x.", "y.", tiny_nli), float)
    assert math.isnan(entailment("", "", tiny_nli))


def test_long_texts_are_cut_to_the_model_length_with_a_note(tiny_nli):
    long_o = "word " * 5000 + "end."
    cols, notes, _ = entailment_with_notes([long_o], ["term " * 5000 + "end."], tiny_nli)
    assert np.isfinite(cols["entailment"][0]) and "cut to the model's 64 tokens" in notes[0]


def test_label_lookup_names_the_labels(tmp_path, tok):
    plain = _save(tmp_path / "plain", tok, {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(ValueError, match=r"has labels .*LABEL_0.* starting with 'entail'"):
        entailment_with_notes([DOC], [SWAPPED], plain)
    rte = _save(tmp_path / "rte", tok, {0: "entailment", 1: "not_entailment"})
    with pytest.raises(ValueError, match=r"starting with 'contradict'"):
        entailment_with_notes([DOC], [SWAPPED], rte)


def test_bad_arguments_are_named(tiny_nli):
    with pytest.raises(TypeError, match="two str or two sequences"):
        entailment("a", ["b"], tiny_nli)
    with pytest.raises(ValueError, match="differ in length"):
        entailment_with_notes(["a"], [], tiny_nli)
    with pytest.raises(TypeError, match=r"entailment_with_notes\(attacked\) expects a sequence of str .*: item 0 is int"):
        entailment_with_notes(["a"], [3], tiny_nli)
    with pytest.raises(ValueError, match=r"entailment_with_notes: batch_size must be an int in \[1, inf\), got 0 \(int\)"):
        entailment_with_notes(["a"], ["b"], tiny_nli, batch_size=0)
    with pytest.raises(TypeError, match=r"get_nli_model: nli_model must be a model name or path .*got 3 \(int\)"):
        entailment_with_notes(["a"], ["b"], 3)


_model = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.function_scoped_fixture])


@_model
@given(pairs=batches(small_text, max_size=4), other=batches(small_text, max_size=4))
def test_any_text_batch_equals_one_by_one(tiny_nli, pairs, other):
    originals, attacked = pairs, (other * 4)[:len(pairs)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TextRepairWarning)
        cols, notes, _ = entailment_with_notes(originals, attacked, tiny_nli, batch_size=4)
        alone = [entailment_with_notes([o], [a], tiny_nli)[0]["entailment"][0] for o, a in zip(originals, attacked)]
    np.testing.assert_allclose(cols["entailment"], alone, atol=1e-5, equal_nan=True)
    blank = [not o.strip() or not a.strip() for o, a in zip(originals, attacked)]
    assert np.isnan(cols["entailment"]).tolist() == blank
    ok = ~np.isnan(cols["entailment"])
    assert np.all((cols["entailment"][ok] >= 0) & (cols["entailment"][ok] <= 1))


# -- through the QualityMeter ------------------------------------------------------------------------------

def test_quality_meter_runs_entailment_only_when_named(tiny_nli, tmp_path, tok):
    meter = QualityMeter(meters=["rouge_l", "entailment"], nli_model=tiny_nli)
    frame = meter.score([DOC, ""], [SWAPPED, DOC])
    assert {"rouge_l", "entailment", "entailment_min", "contradiction", "entailment_model"} <= set(frame.columns)
    assert frame.loc[0, "entailment"] == pytest.approx(entailment(DOC, SWAPPED, tiny_nli))
    assert "entailment: empty original" in frame.loc[1, "note"]
    assert "entailment" not in QualityMeter()._active() and "judge" not in QualityMeter()._active()
    other = _save(tmp_path / "other", tok, THREE_WAY, bias=[0.0, 1.0, 0.0])
    active = [QualityMeter(meters=["entailment"], nli_model=p).fingerprint() for p in (tiny_nli, other)]
    assert active[0] != active[1]                                # the NLI model's identity is in the fingerprint
    idle = [QualityMeter(meters=["rouge_l"], nli_model=p).fingerprint() for p in (tiny_nli, other)]
    assert idle[0] == idle[1]                                    # ...only when the meter runs
    with pytest.raises(ValueError, match=r"unknown meters \['entail'\]"):
        QualityMeter(meters=["entail"])
    with pytest.raises(TypeError, match="nli_model must be a model name"):
        QualityMeter(nli_model=3)
