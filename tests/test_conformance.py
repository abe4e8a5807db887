"""The conformance kit (humanize.testing): it catches each broken contract, and every registered component passes.

Every registered attack and detector runs ``check_attack`` / ``check_detector``; a registration
without an entry below fails ``test_every_registered_component_has_an_entry``, so none is skipped
silently. Model-based components are built cheaply: the kit checks the contract (parameters, clone,
pickle, the same output whatever the batch or order, odd inputs, errors), not the model's quality.
The rewriters (paraphrase, recursion, prompt, qpa_prompt) run on a tiny random Llama with a chat
template, and TOBLEND / QPA-TOBLEND blend it with a second one on another tokenizer (``tiny_chat``:
the same code paths as SmolLM2 and Gemma, at a millisecond a forward pass; 3 new tokens, TOBLEND
2-3); the word-level attacks (synonym, qpa, raft, hmgc) rank with it too (RAFT: its LLM and proxy,
one candidate per word), on MiniLM's similarity floors: on the text below they edit exactly what
they edited on SmolLM2-135M (synonym one word; qpa, hmgc and raft none: WordNet's candidates fail
their floors, RAFT's LLM lists none that passes its validity filter); all of them on one
one-sentence text. The LM detectors run on two tiny random
Llamas and the classifiers on tiny random classifiers (the detectors' own input tests do the same),
32 tokens.
Models are passed by name or path: the loader's per-process cache hands every component the
instance its fixture loaded, and ``sklearn.base.clone`` / ``pickle`` copy a name, not the weights.
Components with a model fixture run with ``process=False``: a fresh process would import torch
and load their models again (seconds to tens of seconds each on two cores), so their
fresh-process outputs are left to their own tests (e.g. RAFT's); the model-free ones (rule
attacks, blend, tfidf_lr, surface_probe, function, endpoint) run that check too. Components
whose default model cannot be had here are in ``NO_MODEL``, with the reason: their static
checks run at their defaults, and the full checks on a stand-in that runs the same code.
"""
from __future__ import annotations

import os
import random
from typing import Callable, NamedTuple

import numpy as np
import pytest

from humanize import attacks, detectors
from humanize.attacks import Attack, AttackResult, Edit, apply_edits
from humanize.attacks.base import BatchAttack
from humanize.validation import check_texts
from humanize.detectors import Detector, NotFittedError, check_labels
from humanize.testing import (ATTACK_CHECKS, ATTACK_STATIC_CHECKS, DETECTOR_CHECKS, DETECTOR_STATIC_CHECKS,
                              TRAIN_LABELS, TRAIN_TEXTS, ConformanceError, check_attack, check_detector)

#: the model attacks' documents: short, so that every check's runs stay cheap
SHORT = ["The committee met on Tuesday to discuss the new budget."]

#: Registered components whose default model cannot be had here (no hub, or over the CI budget).
NO_MODEL = {
    "radar": "TrustSafeAI/RADAR-Vicuna-7B: hub only (RoBERTa-large weights despite the name), no hub here; "
             "stand-in: a tiny random classifier, machine = output 0",
    "roberta_openai": "openai-community/roberta-base-openai-detector: hub only; stand-in: a tiny classifier "
                      "labelled Real/Fake",
    "chatgpt_roberta": "Hello-SimpleAI/chatgpt-detector-roberta: hub only; stand-in: a tiny classifier "
                       "labelled Human/ChatGPT",
    "binoculars_qwen": "performer Qwen2.5-Coder-1.5B: the opt-in extra qwen-1-5b, about 7 GB in fp32, over a "
                       "2-core CI budget; stand-in: the same class on two tiny Llamas (Binoculars' code)",
}


@pytest.fixture(scope="module")
def tiny_classifiers(tmp_path_factory):
    """Randomly initialised 2-layer classifiers with the presets' labels (plumbing only)."""
    from .detectors._learned_helpers import save_tiny_classifier

    root = tmp_path_factory.mktemp("conformance_classifiers")
    return {name: str(save_tiny_classifier(root / name, labels, seed=4))
            for name, labels in (("fake_real", ["Real", "Fake"]), ("chatgpt", ["Human", "ChatGPT"]))}


def mean_word_length(texts):
    """A scoring function as users have them (for the ``function`` detector)."""
    return [float(np.mean([len(w) for w in t.split()])) if t.split() else 0.0 for t in texts]


@pytest.fixture(scope="module")
def scoring_server():
    """A real HTTP scoring service on localhost (for the ``endpoint`` detector): POST {"texts": [...]}."""
    from .score_server import ScoreServer

    with ScoreServer(answer=lambda req: (200, {}, {"scores": mean_word_length(req["body"]["texts"])})) as server:
        yield server.url


class Entry(NamedTuple):
    """How the test builds a registered component: ``build(get)`` (``get`` = ``request.getfixturevalue``) after
    loading ``fixtures``. One with fixtures (models) runs in-process only, an attack on SHORT texts."""

    build: Callable
    fixtures: tuple = ()
    checks: tuple | None = None  # None: every check; ATTACK_STATIC_CHECKS where the model cannot run here

    def make(self, request):
        for f in self.fixtures:
            request.getfixturevalue(f)
        return self.build(request.getfixturevalue)


def _profile():
    from humanize.attacks.format_profile import FormatProfile

    return FormatProfile().fit(["Formal  text -- with \"quotes\" and\na short line.", "Another one.  Two spaces."])


def _rule(name):
    return Entry(lambda get: attacks.get(name, seed=3))


#: A chat template in the usual shape (role turns, then the assistant's), so LocalChat renders prompts as for SmolLM2.
TINY_CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}</s>\n{% endfor %}"
                      "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")


@pytest.fixture(scope="module")
def tiny_chat(tmp_path_factory):
    """Two tiny random Llamas on different byte-level tokenizers (300 and 320 pieces), 4,096 positions (the
    rewriters' prompts run to 500 tokens); "chat" has a chat template. Plumbing only: their text is noise."""
    from .detectors.conftest import _save_tiny_llama, _train_tokenizer

    root, chat = tmp_path_factory.mktemp("conformance_chat"), _train_tokenizer(300)
    chat.chat_template = TINY_CHAT_TEMPLATE
    return {"chat": _save_tiny_llama(root / "chat", chat, seed=0, max_positions=4096),
            "other": _save_tiny_llama(root / "other", _train_tokenizer(320), seed=1, max_positions=4096)}


def _lm_dir(get):
    return get("tiny_chat")["chat"]


def _chat(get):
    return {"backend": "local", "model": _lm_dir(get), "max_new_tokens": 3}


def _pair(get):
    """TOBLEND's plumbing pair: two models, two tokenizers (as humanize.attacks.generation.toblend.SMOLLM2_GEMMA)."""
    return get("tiny_chat")["chat"], get("tiny_chat")["other"]


TRAIN = (list(TRAIN_TEXTS), list(TRAIN_LABELS))
ATTACKS = {
    **{n: _rule(n) for n in attacks.RULE_BASED + ("strip_format",)},
    "impose_format": Entry(lambda get: attacks.get("impose_format", profile=_profile(), rate=0.5, seed=3)),
    "blend": Entry(lambda get: attacks.get("blend", attacks=["upper_lower", "homoglyph"], policy="random", seed=3)),
    "pipeline": Entry(lambda get: attacks.get("pipeline", attacks=["upper_lower", {"name": "homoglyph", "rate": 0.3}])),
    "paraphrase": Entry(lambda get: attacks.get("paraphrase", paraphraser=_chat(get), seed=3), ("tiny_chat",)),
    "recursion": Entry(lambda get: attacks.get("recursion", paraphraser=_chat(get), depth=2, seed=3),
                       ("tiny_chat",)),
    "prompt": Entry(lambda get: attacks.get("prompt", llm=_chat(get), seed=3), ("tiny_chat",)),
    "qpa_prompt": Entry(lambda get: attacks.get("qpa_prompt", llm=_chat(get), seed=3), ("tiny_chat",)),
    "toblend": Entry(lambda get: attacks.get("toblend", models=_pair(get), prefix_words=6, max_new_tokens=3,
                                             seed=3), ("tiny_chat",)),
    "qpa_toblend": Entry(lambda get: attacks.get("qpa_toblend", models=_pair(get), prefix_words=6,
                                                 max_new_tokens=2, seed=3), ("tiny_chat", "minilm")),
    "synonym": Entry(lambda get: attacks.get("synonym", lm=_lm_dir(get), seed=3), ("tiny_chat", "minilm")),
    "qpa": Entry(lambda get: attacks.get("qpa", attack=attacks.get("synonym", lm=_lm_dir(get)), rate=1.0, seed=3),
                 ("tiny_chat", "minilm")),
    "raft": Entry(lambda get: attacks.get("raft", llm=_lm_dir(get), proxy=_lm_dir(get), target="tfidf_lr",
                                          target_train=TRAIN, rate=0.1, k=1, seed=3), ("tiny_chat",)),
    "hmgc": Entry(lambda get: attacks.get("hmgc", lm=_lm_dir(get), train=TRAIN, seed=3), ("tiny_chat", "minilm")),
    # token mode on a tiny random Llama (tiny_lms below): the guided decode loop for a millisecond a step
    "adversarial_paraphrase": Entry(lambda get: attacks.get(
        "adversarial_paraphrase", paraphraser={"backend": "local", "model": get("tiny_lms")["a"], "max_new_tokens": 3},
        guide="tfidf_lr", train=TRAIN, mode="token", top_k=3, seed=3), ("tiny_lms",)),
    # the RL humanizers' presets pointed at the tiny chat Llama: their prompt and decoding, LocalChat's code
    "authormist": Entry(lambda get: attacks.get("authormist", model=_lm_dir(get), max_new_tokens=3, seed=3),
                        ("tiny_chat",)),
    # its LoRA adapter has no published hub id and loading one needs peft (the extra "lora"): the static
    # checks at its defaults; the full ones run on authormist, the same RLHumanizer code without the adapter
    # watermark scrubbing (humanize.attacks.watermark)
    "copy_paste": Entry(lambda get: attacks.get("copy_paste", rate=0.5, segments=2, seed=3,
                                                human_texts=["A few words a person wrote about the weather."])),
    "emoji_attack": Entry(lambda get: attacks.get("emoji_attack", generator=_chat(get), seed=3), ("tiny_chat",)),
    "self_info_rewrite": Entry(lambda get: attacks.get("self_info_rewrite", scorer=get("tiny_lms")["a"],
                                                       refill=get("tiny_lms")["b"], rate=0.5, seed=3), ("tiny_lms",)),
    "watermark_stealing": Entry(lambda get: attacks.get(
        "watermark_stealing", watermarked=["The committee met to talk about the budget and the plan."] * 3,
        base=["The cat sat on the mat."] * 3, tokenizer=get("tiny_lms")["a"], min_count=1, seed=3), ("tiny_lms",)),
    "stealthrl": Entry(lambda get: attacks.get("stealthrl", seed=3), checks=ATTACK_STATIC_CHECKS),
}


@pytest.fixture(scope="module")
def tiny_lms(tmp_path_factory):
    """Two tiny random Llamas sharing a byte-level tokenizer (tests/detectors/conftest.py's, as the detectors'
    input tests use them): the LM detectors' code on a model whose forward pass costs a millisecond."""
    from .detectors.conftest import _save_tiny_llama, _train_tokenizer

    tok, root = _train_tokenizer(300), tmp_path_factory.mktemp("conformance_lms")
    return {k: _save_tiny_llama(root / k, tok, seed=seed) for k, seed in (("a", 0), ("b", 1))}


def _lm(name, *roles):
    return Entry(lambda get: detectors.get(name, max_tokens=32, **{r: get("tiny_lms")[k] for r, k in
                                                                    zip(roles, "ab")}), ("tiny_lms",))


def _classifier(name, which, **kw):
    return Entry(lambda get: detectors.get(name, model=get("tiny_classifiers")[which], batch_size=2, **kw),
                 ("tiny_classifiers",))


DETECTORS = {
    **{n: _lm(n, "model") for n in ("log_likelihood", "rank", "log_rank", "entropy", "gltr", "lrr", "fast_detectgpt",
                                    "metric_lr")},
    "binoculars": _lm("binoculars", "observer", "performer"),
    "binoculars_qwen": _lm("binoculars_qwen", "observer", "performer"),
    "hf_classifier": _classifier("hf_classifier", "fake_real", machine_label="Fake"),
    "roberta_openai": _classifier("roberta_openai", "fake_real"),
    "chatgpt_roberta": _classifier("chatgpt_roberta", "chatgpt"),
    "radar": _classifier("radar", "fake_real"),
    "lm_d": Entry(lambda get: detectors.get("lm_d", max_tokens=16, batch_size=8), ("minilm",)),
    "function": Entry(lambda get: detectors.get("function", fn=mean_word_length)),
    "endpoint": Entry(lambda get: detectors.get("endpoint", url=get("scoring_server"), batch_size=2)),
    "tfidf_lr": Entry(lambda get: detectors.get("tfidf_lr")),
    # the watermark detectors read a tokenizer only (the tiny Llamas' byte-level one)
    "kgw": Entry(lambda get: detectors.get("kgw", tokenizer=get("tiny_lms")["a"], key="conformance key"), ("tiny_lms",)),
    "unigram": Entry(lambda get: detectors.get("unigram", tokenizer=get("tiny_lms")["a"], key=12345), ("tiny_lms",)),
    "synthid": Entry(lambda get: detectors.get("synthid", tokenizer=get("tiny_lms")["a"], key=7, depth=4),
                     ("tiny_lms",)),
    "surface_probe": Entry(lambda get: detectors.get("surface_probe")),
}


def test_every_registered_component_has_an_entry():
    assert sorted(ATTACKS) == attacks.available()
    assert sorted(DETECTORS) == detectors.available()
    assert set(NO_MODEL) <= set(detectors.available())


@pytest.mark.parametrize("name", attacks.available())
def test_registered_attack_conforms(request, name):
    entry = ATTACKS[name]
    check_attack(entry.make(request), SHORT if entry.fixtures else None, process=not entry.fixtures,
                 checks=entry.checks)


@pytest.mark.parametrize("name", detectors.available())
def test_registered_detector_conforms(request, name):
    entry = DETECTORS[name]
    check_detector(entry.make(request), process=not entry.fixtures)


@pytest.mark.parametrize("name", sorted(NO_MODEL))
def test_component_without_its_model_passes_the_static_checks_at_its_defaults(name):
    """Built at its defaults, nothing loaded: traits, clone, parameters, fingerprint, pickle, and bad input
    refused before any model is looked for."""
    from humanize.models import add_load_listener, remove_load_listener

    loads = []
    add_load_listener(loads.append)
    try:
        check_detector(detectors.get(name), checks=DETECTOR_STATIC_CHECKS)
    finally:
        remove_load_listener(loads.append)
    assert loads == []


# -- the kit catches each broken contract ---------------------------------------------------------------------

class Shout(Attack):
    """A correct reference attack: uppercase θ of the words, drawn from the document's own stream."""

    name = "shout"
    needs_model = False

    def __init__(self, rate: float = 0.5, seed: int = 0):
        self.rate = rate
        self.seed = seed
        self._validate()

    def propose(self, text, rng=None):
        rnd = self.random(text)
        words, pos, edits = text.split(" "), 0, []
        for w in words:
            if w and rnd.random() < self.rate:
                edits.append(Edit(pos, pos + len(w), w.upper()))
            pos += len(w) + 1
        return edits

    def _run(self, text):
        edits = self.propose(text)
        return apply_edits(text, edits), edits


class NotBoolTrait(Shout):
    needs_model = "no"


class CopiesItsParameter(Shout):
    def __init__(self, rate: float = 0.5, seed: int = 0, words: tuple = ("a",)):
        super().__init__(rate, seed)
        self.words = list(words)  # not stored as given: clone cannot rebuild it


class AttributeErrorOnNone(Shout):
    def apply(self, text):
        text.isspace()
        return super().apply(text)


class HoldsALambda(Shout):
    def __init__(self, rate: float = 0.5, seed: int = 0):
        super().__init__(rate, seed)
        self._upper = lambda s: s.upper()


class InexactEdits(Shout):
    def _run(self, text):
        return text.upper(), []


class DependsOnItsBatch(BatchAttack):
    name = "batch_dependent"
    needs_model = False

    def __init__(self, seed: int = 0):
        self.seed = seed
        self._validate()

    def _results(self, texts):
        out = []
        for i, t in enumerate(texts):  # the position in the batch leaks into the output
            text = t + "!" * i
            edits = [Edit(len(t), len(t), "!" * i)] if i else []
            out.append(AttackResult(t, text, self.name, self.get_params(), edits))
        return out


class GlobalRandom(Shout):
    def propose(self, text, rng=None):
        return [Edit(0, 0, str(random.random()))]


class FailsOnEmpty(Shout):
    def propose(self, text, rng=None):
        first = text.split()[0]
        return [Edit(0, len(first), first.upper())]


class RemembersItsInputs(Shout):
    def __init__(self, rate: float = 0.5, seed: int = 0, history=None):
        super().__init__(rate, seed)
        self.history = history

    def propose(self, text, rng=None):
        self.history = (self.history or ()) + (len(text),)  # applying changes a parameter
        return super().propose(text)


class SeededByTheProcess(Shout):
    def propose(self, text, rng=None):
        return [Edit(0, 0, str(random.Random(os.getpid() + self.seed).random()))]


BROKEN_ATTACKS = {
    "traits": NotBoolTrait(), "params": CopiesItsParameter(), "bad_input": AttributeErrorOnNone(),
    "pickle": HoldsALambda(), "edits": InexactEdits(), "batch": DependsOnItsBatch(), "determinism": GlobalRandom(),
    "odd_inputs": FailsOnEmpty(), "fingerprint": RemembersItsInputs(), "process": SeededByTheProcess(),
}


def test_a_correct_attack_passes_every_check():
    check_attack(Shout(rate=0.5, seed=1))


@pytest.mark.parametrize("check", ATTACK_CHECKS)
def test_each_attack_check_catches_its_broken_attack(check):
    broken = BROKEN_ATTACKS[check]
    with pytest.raises(ConformanceError) as info:
        check_attack(broken, checks=[check])
    assert info.value.checks == [check]
    assert type(broken).__qualname__ in str(info.value) and f"check {check!r}" in str(info.value)
    check_attack(Shout(), checks=[check])  # and the correct one passes the same check


def test_attack_failures_name_what_differed():
    with pytest.raises(ConformanceError, match=r"apply\(None\) raised AttributeError.*expected a TypeError"):
        check_attack(AttributeErrorOnNone(), checks=["bad_input"])
    with pytest.raises(ConformanceError, match=r"apply_edits\(original, edits\) != text"):
        check_attack(InexactEdits(), checks=["edits"])
    with pytest.raises(ConformanceError, match=r"a fresh process gave another output"):
        check_attack(SeededByTheProcess(), checks=["process"])
    with pytest.raises(ConformanceError) as info:  # every check runs: all failures are listed
        check_attack(GlobalRandom(), checks=["batch", "determinism", "traits"])
    assert info.value.checks == ["batch", "determinism"] and "failed 2 conformance checks" in str(info.value)


class WordLength(Detector):
    """A correct reference detector: the mean word length, centred on what fit saw of machine texts."""

    name = "word_length"
    learnable = True
    needs_model = False

    def __init__(self, shift: float = 0.0):
        self.shift = shift

    def fit(self, texts, labels):
        texts = check_texts(texts, type(self).__name__, "fit")
        y = check_labels(labels, len(texts))
        self.centre_ = float(np.mean([self._length(t) for t, v in zip(texts, y) if v == 1]))
        return self

    @staticmethod
    def _length(text):
        words = text.split()
        return sum(map(len, words)) / len(words) if words else 0.0

    def score(self, texts):
        texts = check_texts(texts, type(self).__name__, "score")
        if not hasattr(self, "centre_"):
            raise NotFittedError("WordLength is not fitted yet: call fit(texts, labels) before score")
        return np.array([self._length(t) - self.centre_ + self.shift for t in texts], dtype=float)


class LearnableNotBool(WordLength):
    learnable = "yes"


class RoundsItsParameter(WordLength):
    def __init__(self, shift: float = 0.25):
        self.shift = round(shift, 1)  # not stored as given


class LowersItsTexts(WordLength):
    def score(self, texts):
        return super().score([t.lower() for t in texts])


class ScoresBeforeFit(WordLength):
    def score(self, texts):
        if not hasattr(self, "centre_"):
            return np.zeros(len(check_texts(texts, type(self).__name__, "score")))
        return super().score(texts)


class DetectorWithALambda(WordLength):
    def __init__(self, shift: float = 0.0):
        super().__init__(shift)
        self._norm = lambda x: x


class ReturnsAList(WordLength):
    def score(self, texts):
        return list(super().score(texts))


class NormalisesTheBatch(WordLength):
    def score(self, texts):
        s = super().score(texts)
        return s - s.mean() if len(s) else s


class FitsWithoutASeed(WordLength):
    def fit(self, texts, labels):
        super().fit(texts, labels)
        self.centre_ += np.random.default_rng().normal()
        return self


class FailsOnBlank(WordLength):
    def score(self, texts):
        return np.array([len(t.split()[0]) for t in check_texts(texts, type(self).__name__, "score")], dtype=float)


class StoresTheFitInAParameter(WordLength):
    def fit(self, texts, labels):
        super().fit(texts, labels)
        self.shift = -self.centre_
        return self


class ProcessNoise(WordLength):
    def score(self, texts):
        return super().score(texts) + os.getpid() % 997


BROKEN_DETECTORS = {
    "traits": LearnableNotBool(), "params": RoundsItsParameter(), "bad_input": LowersItsTexts(),
    "not_fitted": ScoresBeforeFit(), "pickle": DetectorWithALambda(), "scores": ReturnsAList(),
    "batch": NormalisesTheBatch(), "determinism": FitsWithoutASeed(), "odd_inputs": FailsOnBlank(),
    "fingerprint": StoresTheFitInAParameter(), "process": ProcessNoise(),
}


class RefusesBlank(WordLength):
    def score(self, texts):
        if any(not t.strip() for t in check_texts(texts, type(self).__name__, "score")):
            raise ValueError("RefusesBlank cannot score an empty or blank text")
        return super().score(texts)


def test_a_correct_detector_passes_every_check():
    check_detector(WordLength(shift=0.25))
    check_detector(RefusesBlank(), checks=["odd_inputs"])  # a blank text may be refused, saying it is empty


@pytest.mark.parametrize("check", DETECTOR_CHECKS)
def test_each_detector_check_catches_its_broken_detector(check):
    broken = BROKEN_DETECTORS[check]
    with pytest.raises(ConformanceError) as info:
        check_detector(broken, checks=[check])
    assert info.value.checks == [check] and type(broken).__qualname__ in str(info.value)
    check_detector(WordLength(), checks=[check])


class ClaimsNoModel(Shout):
    """Says it needs no model, then uppercases only the words the packaged GloVe vectors know."""

    def propose(self, text, rng=None):
        from humanize.models.vectors import load_word_vectors

        vectors = load_word_vectors("glove-6b-50d")
        return [e for e in super().propose(text) if text[e.start:e.end].lower() in vectors]


def test_a_model_free_claim_is_checked_in_a_fresh_process():
    """needs_model = False on an attack that loads word vectors: the fresh process sees the load."""
    with pytest.raises(ConformanceError, match=r"needs_model is False but a fresh process loaded 'glove-6b-50d'"):
        check_attack(ClaimsNoModel(rate=1.0), checks=["process"])


def test_kit_input_errors():
    with pytest.raises(TypeError, match="expects an Attack instance, got WordLength"):
        check_attack(WordLength())
    with pytest.raises(TypeError, match="expects a Detector instance, got Shout"):
        check_detector(Shout())
    with pytest.raises(ValueError, match=r"unknown attack check\(s\) \['scores'\]"):
        check_attack(Shout(), checks=["scores"])
    with pytest.raises(TypeError, match="texts must be a non-empty sequence of str"):
        check_attack(Shout(), texts=[])
    with pytest.raises(ValueError, match="labels given without the texts"):
        check_detector(WordLength(), labels=[0, 1])


def test_each_check_is_a_public_function_and_static_checks_are_checks():
    import humanize.testing as kit

    for kind, names in (("attack", ATTACK_CHECKS), ("detector", DETECTOR_CHECKS)):
        for name in names:
            assert f"check_{kind}_{name}" in kit.__all__ and callable(getattr(kit, f"check_{kind}_{name}"))
    assert set(ATTACK_STATIC_CHECKS) < set(ATTACK_CHECKS) and set(DETECTOR_STATIC_CHECKS) < set(DETECTOR_CHECKS)
    with pytest.raises(ConformanceError, match="check 'edits'"):
        kit.check_attack_edits(InexactEdits())
    kit.check_detector_batch(WordLength(), texts=["a b", "ccc d"], labels=[0, 1])
