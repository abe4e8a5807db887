"""The conformance kit for quality meters and defenses (``check_meter``, ``check_defense``): every registered one
passes, and each check catches the meter it is about.

The built-in meters run on the models the rest of the suite uses cheaply: perplexity and the validity meter's
context part on a tiny random Llama, cosine on the packaged MiniLM, entailment on a tiny random NLI classifier, the
judge on a tiny random chat Llama (its answers are noise: NaN with a note, which is what the plumbing is checked
on). Those with a model run in-process only (``process=False``), and so do Flesch and the validity meter, whose
word lists (CMUdict, WordNet) a fresh process would load again for tens of seconds; ROUGE-L, the edit rates and
the kit's own meters run every check.
"""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from humanize import defenses, quality
from humanize.quality import PairMeter
from humanize.testing import (DEFENSE_CHECKS, DEFENSE_STATIC_CHECKS, METER_CHECKS, METER_STATIC_CHECKS,
                              ConformanceError, check_defense, check_meter)

from .test_conformance import TINY_CHAT_TEMPLATE

#: the model meters' pairs: short, so that every check's runs stay cheap
SHORT = [("The committee met on Tuesday to discuss the new budget.",
          "The committee met on Tuesday to talk about the new budget.")]


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    from .detectors.conftest import _save_tiny_llama, _train_tokenizer

    tok = _train_tokenizer(300)
    tok.chat_template = TINY_CHAT_TEMPLATE
    return str(_save_tiny_llama(tmp_path_factory.mktemp("meter_llama") / "lm", tok, seed=0, max_positions=1024))


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory, minilm):
    from .quality.test_entailment import THREE_WAY, _save

    return _save(tmp_path_factory.mktemp("meter_nli"), minilm.model.tokenizer, THREE_WAY)


#: the model-free meters that also run the fresh-process check
IN_A_FRESH_PROCESS = ("rouge_l", "edit_rate")
METERS = {  # name -> (build(get), fixtures)
    "perplexity": (lambda get: quality.get("perplexity", lm=get("tiny_llama"), max_length=64), ("tiny_llama",)),
    "cosine": (lambda get: quality.get("cosine"), ("minilm",)),
    "rouge_l": (lambda get: quality.get("rouge_l"), ()),
    "flesch": (lambda get: quality.get("flesch"), ()),
    "edit_rate": (lambda get: quality.get("edit_rate"), ()),
    "validity": (lambda get: quality.get("validity", lm=get("tiny_llama")), ("tiny_llama",)),
    "entailment": (lambda get: quality.get("entailment", nli_model=get("tiny_nli"), batch_size=2), ("tiny_nli",)),
    "judge": (lambda get: quality.get("judge", llm={"backend": "local", "model": get("tiny_llama"),
                                                    "max_new_tokens": 2}), ("tiny_llama",)),
}


def test_every_registered_meter_has_an_entry():
    assert sorted(METERS) == quality.available()


@pytest.mark.parametrize("name", sorted(METERS))
def test_registered_meter_conforms(request, name):
    build, fixtures = METERS[name]
    check_meter(build(request.getfixturevalue), SHORT if fixtures else None, process=name in IN_A_FRESH_PROCESS)



@pytest.mark.parametrize("name", defenses.available())
def test_registered_defense_conforms(name):
    check_defense(defenses.get(name))


# -- the kit catches each broken meter ------------------------------------------------------------------------
class LengthRatio(PairMeter):
    """The documented example (humanize.quality.custom): passes every check."""

    name = "length_ratio"

    def score(self, originals, attacked):
        return {"length_ratio": [len(b) / max(len(a), 1) for a, b in zip(originals, attacked)]}


class Unnamed(LengthRatio):
    name = PairMeter.name


class NotPicklable(LengthRatio):
    def __init__(self, fn=None):
        self.fn = (lambda x: x) if fn is None else fn

    def __getstate__(self):
        raise TypeError("cannot pickle")


class NoteColumn(LengthRatio):
    def score(self, originals, attacked):
        return {"note": [0.0] * len(originals)}


class BatchMean(LengthRatio):
    """Divides by the batch's mean length: a pair's figure depends on the other pairs."""

    def score(self, originals, attacked):
        mean = np.mean([len(b) for b in attacked]) if attacked else 1.0
        return {"length_ratio": [len(b) / mean for b in attacked]}


class Random(LengthRatio):
    def score(self, originals, attacked):
        return {"length_ratio": [random.random() for _ in originals]}


class FailsOnBlank(LengthRatio):
    def score(self, originals, attacked):
        if any(not b.strip() for b in attacked):
            raise ValueError("blank text")
        return super().score(originals, attacked)


class Counts(LengthRatio):
    """Changes a parameter as it measures."""

    def __init__(self, calls: int = 0):
        self.calls = calls

    def score(self, originals, attacked):
        self.calls += 1
        return super().score(originals, attacked)


class ByAddress(LengthRatio):
    """Figures keyed on the object's identity: a clone, a copy or another process gives others."""

    def score(self, originals, attacked):
        return {"length_ratio": [float(id(self) % 997)] * len(originals)}


BROKEN_METERS = {
    "traits": Unnamed(), "params": NotPicklable(), "pickle": NotPicklable(), "columns": NoteColumn(),
    "batch": BatchMean(), "determinism": ByAddress(), "odd_inputs": FailsOnBlank(), "fingerprint": Counts(),
    "process": ByAddress(),
}


def test_a_correct_meter_passes_every_check():
    check_meter(LengthRatio())


@pytest.mark.parametrize("check", METER_CHECKS)
def test_each_meter_check_catches_its_broken_meter(check):
    with pytest.raises(ConformanceError) as info:
        check_meter(BROKEN_METERS[check], checks=[check])
    assert info.value.checks == [check]


def test_meter_failures_name_what_differed():
    with pytest.raises(ConformanceError, match=r"\[batch\] measure\(pairs\[0\]\) alone gave length_ratio = [0-9.]+ "
                                               r"for the pair of 'The committee"):
        check_meter(BatchMean(), checks=["batch"])
    with pytest.raises(ConformanceError, match="column name 'note' is not a non-empty str other than 'note'"):
        check_meter(NoteColumn(), checks=["columns"])


# -- the kit catches each broken defense ----------------------------------------------------------------------
class Upper(defenses.Defense):
    name = "upper"

    def __init__(self):
        self._init_params(locals())

    def _run(self, text):
        out = text.upper()
        return out, ([(0, len(text), out)] if out != text else [])


class WrongEdits(Upper):
    def _run(self, text):
        return text.upper(), []


class OrderDependent(Upper):
    """Remembers the texts it saw: the same text defends differently the second time."""

    def _run(self, text):
        seen = self.__dict__.setdefault("_seen", set())
        out = text if text in seen else text.upper()
        seen.add(text)
        return out, ([(0, len(text), out)] if out != text else [])


def test_a_correct_defense_passes_every_check():
    check_defense(Upper())


@pytest.mark.parametrize("check,defense", [("edits", WrongEdits()), ("batch", OrderDependent())])
def test_defense_checks_catch_broken_defenses(check, defense):
    with pytest.raises(ConformanceError) as info:
        check_defense(defense, checks=[check])
    assert info.value.checks == [check]


def test_kit_input_errors_for_meters_and_defenses():
    with pytest.raises(TypeError, match="check_meter expects a PairMeter instance, got Upper"):
        check_meter(Upper())
    with pytest.raises(TypeError, match="check_defense expects a Defense instance, got LengthRatio"):
        check_defense(LengthRatio())
    with pytest.raises(TypeError, match=r"pairs must be a non-empty sequence of \(original, attacked\) str pairs"):
        check_meter(LengthRatio(), pairs=["one text"])
    with pytest.raises(ValueError, match=r"unknown meter check\(s\) \['edits'\]"):
        check_meter(LengthRatio(), checks=["edits"])


def test_each_check_is_a_public_function():
    import humanize.testing as kit

    for kind, names in (("meter", METER_CHECKS), ("defense", DEFENSE_CHECKS)):
        for name in names:
            assert f"check_{kind}_{name}" in kit.__all__ and callable(getattr(kit, f"check_{kind}_{name}"))
    assert set(METER_STATIC_CHECKS) < set(METER_CHECKS) and set(DEFENSE_STATIC_CHECKS) < set(DEFENSE_CHECKS)
    kit.check_meter_batch(LengthRatio(), [("a b", "a b c"), ("x", "")])
    assert math.isfinite(LengthRatio().measure(["a"], ["ab"])[0]["length_ratio"][0])
