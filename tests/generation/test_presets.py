"""The RL humanizers' presets (AuthorMist, StealthRL): a preset pointed at a tiny chat Llama built here runs
LocalChat's own code with the preset's prompt and decoding; on this offline machine the hub presets fail in
one line naming the hub id and what they need. Plumbing only: the tiny model's text is noise."""
import dataclasses
import sys

import pytest

from humanize import attacks, detectors
from humanize.attacks.generation.answers import classify_answer
from humanize.attacks.generation.guided import AdversarialParaphrase
from humanize.attacks.generation.paraphrase import Paraphrase, clean_answer
from humanize.exceptions import InvalidParameterError, ModelUnavailable
from humanize.generation import Request, resolve_generator
from humanize.generation.base import chat
from humanize.generation.local import LocalChat
from humanize.generation.presets import PRESETS, PresetChat

DOC = "The committee met on Tuesday to discuss the new budget."
TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}</s>\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")


def _length(texts):
    return [float(len(t)) for t in texts]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    from ..detectors.conftest import _save_tiny_llama, _train_tokenizer

    tok = _train_tokenizer(300)
    tok.chat_template = TEMPLATE
    return _save_tiny_llama(tmp_path_factory.mktemp("preset_lm") / "chat", tok, seed=0, max_positions=1024)


def test_a_preset_on_local_weights_is_localchat_with_its_prompt_and_decoding(tiny_dir):
    spec = PRESETS["authormist"]
    gen = resolve_generator({"backend": "preset", "preset": "authormist", "model": tiny_dir, "max_new_tokens": 5})
    assert isinstance(gen, PresetChat) and gen.decoding() == {"temperature": 0.7, "top_p": 0.9, "max_new_tokens": 5}
    plain = LocalChat(model=tiny_dir, temperature=spec.temperature, top_p=spec.top_p, max_new_tokens=5)
    reqs = [Request(chat(spec.format(DOC)), seed=s) for s in (1, 2, 3)]
    got = gen.generate(reqs)
    assert got == plain.generate(reqs)
    assert len({g.text for g in got}) > 1  # sampled at the preset's temperature: the seeds differ
    # a rewriting attack sends the preset's own prompt (its default instruction gives way to it), and the
    # registered plain rewrite is that run
    for attack in (Paraphrase(paraphraser=gen, seed=4, chunk_sentences=5),
                   attacks.get("authormist", model=tiny_dir, max_new_tokens=5, seed=4, chunk_sentences=5)):
        res = attack.apply(DOC)
        answer = plain.generate([Request(chat(spec.format(DOC)), attack.request_seed(DOC, 0))])[0].text
        kind = classify_answer(answer, clean_answer(answer, DOC), DOC, spec.format(DOC))
        assert res.text == (clean_answer(answer, DOC) if kind == "text" else DOC), attack
        assert res.info["llm_queries"] == 1 and res.attack == attack.name
    own = Paraphrase(paraphraser=gen, seed=4, chunk_sentences=5, instruction="Rewrite this.")
    answer = plain.generate([Request(chat("Rewrite this.\n\n" + DOC), own.request_seed(DOC, 0))])[0].text
    assert own.apply(DOC).text in (clean_answer(answer, DOC), DOC)  # the user's own instruction replaces it

def test_a_preset_system_turn_and_guided_decoding(tiny_dir, monkeypatch):
    spec = dataclasses.replace(PRESETS["authormist"], system="You rewrite text.")
    monkeypatch.setitem(PRESETS, "authormist", spec)
    gen = PresetChat("authormist", model=tiny_dir, max_new_tokens=4, temperature=0)
    plain = LocalChat(model=tiny_dir, temperature=0, max_new_tokens=4)
    req = Request(chat("Hello there."), 0)
    assert gen.generate([req]) == plain.generate([Request(chat("Hello there.", system="You rewrite text."), 0)])
    # token mode decodes inside the preset's LocalChat; an endpoint has no decode loop
    guide = detectors.get("function", fn=_length)
    res = AdversarialParaphrase(paraphraser=gen, guide=guide, mode="token", top_k=2).apply(DOC)
    assert res.info["guide_steps"] == res.info["llm_tokens_out"] > 0
    with pytest.raises(ValueError, match="mode='rerank'"):
        AdversarialParaphrase(paraphraser=PresetChat("authormist", via="endpoint", base_url="http://127.0.0.1:9"),
                              guide=guide, mode="token")


def test_hub_presets_fail_in_one_line_naming_what_they_need(monkeypatch, tiny_dir):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable) as err:
        resolve_generator("AuthorMist").generate([Request(chat("Hi."), 0)])
    msg = str(err.value)
    assert "\n" not in msg and "authormist/authormist-originality" in msg and "GPU" in msg and "hub" in msg
    with pytest.raises(ModelUnavailable, match="no published hub id.*adapter=") as err:
        attacks.get("stealthrl").apply(DOC)
    assert "\n" not in str(err.value)
    monkeypatch.setitem(sys.modules, "peft", None)  # peft absent, whatever this machine has
    with pytest.raises(ModelUnavailable, match=r"needs peft: pip install 'humanize-bench\[lora\]'$"):
        PresetChat("stealthrl", model=tiny_dir, adapter="/nonexistent/lora").generate([Request(chat("Hi."), 0)])


@pytest.mark.parametrize("kwargs, pattern", [
    ({"preset": "nope"}, "preset"),
    ({"preset": "authormist", "adapter": "x/y"}, "adapter presets only"),
    ({"preset": "stealthrl", "via": "endpoint"}, "served adapter"),
    ({"preset": "authormist", "temperature": -1}, "temperature"),
])
def test_bad_preset_parameters_name_themselves(kwargs, pattern):
    with pytest.raises((InvalidParameterError, ValueError), match=pattern):
        PresetChat(**kwargs)
