"""LocalChat: batched, per-request seeded decoding with SmolLM2-135M-Instruct (real model, few tokens)."""
import copy
import dataclasses
import random
import warnings

import pytest
import torch

from humanize.cost import CostMeter
from humanize.generation import Generation, Request, chat, resolve_generator
from humanize.generation.local import LocalChat
from humanize.models import TextRepairWarning

PROMPTS = ["Rewrite: the cat sat on the mat.", "Write one line about the sea 🌊🐟.", "hi",
           "Écris une phrase sur Paris.", "用中文写一句话。", "Describe a dragon in a forest at night."]


def _hf_greedy(lm, prompt_text: str, n: int, add_special_tokens: bool = False) -> list[int]:
    """The model's own ``generate(do_sample=False)`` on one prompt: its new token ids."""
    tok = lm.tokenizer
    ids = tok(prompt_text, add_special_tokens=add_special_tokens, return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        out = lm.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=n,
                                do_sample=False, num_beams=1, temperature=None, top_p=None, top_k=None,
                                pad_token_id=tok.pad_token_id)
    return out[0, ids.shape[1]:].tolist()


def _template(lm, user: str) -> str:
    return lm.tokenizer.apply_chat_template([{"role": "user", "content": user}], tokenize=False,
                                            add_generation_prompt=True)


def _same_as_hf(lm, gen: Generation, hf: list[int]) -> bool:
    """``gen`` holds exactly ``hf``'s tokens (stop token counted, not rendered)."""
    stopped = hf[-1] == lm.tokenizer.eos_token_id
    text = lm.tokenizer.decode(hf[:-1] if stopped else hf, skip_special_tokens=True)
    return (gen.tokens_out == len(hf) and gen.text == text
            and gen.finish_reason == ("stop" if stopped else "length"))


# -- determinism ------------------------------------------------------------------------------------
def test_sampled_outputs_do_not_depend_on_batch_size_or_order(smollm):
    reqs = [Request(chat(p), seed=1000 + i, max_new_tokens=8) for i, p in enumerate(PROMPTS[:5])]
    texts = {}
    for bs in (1, 3, 8):
        out = LocalChat(smollm, temperature=1.0, top_p=0.9, batch_size=bs).generate(reqs)
        texts[bs] = [g.text for g in out]
    perm = list(range(len(reqs)))
    random.Random(7).shuffle(perm)
    shuffled = LocalChat(smollm, temperature=1.0, top_p=0.9, batch_size=3).generate([reqs[i] for i in perm])
    back = [None] * len(reqs)
    for j, i in enumerate(perm):
        back[i] = shuffled[j].text
    assert texts[1] == texts[3] == texts[8] == back
    assert all(texts[1]) and len(set(texts[1])) == len(reqs)


def test_greedy_batched_equals_the_models_own_generate_one_at_a_time(smollm, local_chat):
    prompts = PROMPTS[:3]
    out = local_chat.generate([Request(chat(p), seed=i, max_new_tokens=12) for i, p in enumerate(prompts)])
    for p, g in zip(prompts, out):
        hf = _hf_greedy(smollm, _template(smollm, p), 12)
        assert _same_as_hf(smollm, g, hf), (p, g, smollm.tokenizer.decode(hf))


def test_seeds_matter_and_repeat(smollm):
    gen = LocalChat(smollm, temperature=1.0, top_p=0.95, max_new_tokens=10)
    story = chat("Write a short story about a dragon.")
    a, b, a2 = gen.generate([Request(story, seed=1), Request(story, seed=2), Request(story, seed=1)])
    assert a.text != b.text
    assert a == a2


def test_sampling_leaves_global_random_state_alone(smollm):
    state = torch.get_rng_state()
    LocalChat(smollm, temperature=0.8, max_new_tokens=3).generate([Request(chat("hi"), seed=5)])
    assert torch.equal(state, torch.get_rng_state())


# -- stopping, answer start, prompts ----------------------------------------------------------------
def test_max_new_tokens_and_finish_reason(local_chat):
    short, stopped, own = local_chat.generate([
        Request(chat(PROMPTS[5]), seed=0, max_new_tokens=3),  # the request's own limit
        Request(chat("hi"), seed=0),                          # a greeting ends well within 16 tokens
        Request(chat(PROMPTS[5]), seed=0),                    # the generator's limit, 16
    ])
    assert (short.tokens_out, short.finish_reason) == (3, "length") and short.text
    assert stopped.finish_reason == "stop" and 1 <= stopped.tokens_out < 16
    assert "<|im_end|>" not in stopped.text
    assert (own.tokens_out, own.finish_reason) == (16, "length")
    assert own.text.startswith(short.text)  # greedy: the 3-token answer is the 16-token one's start


def test_answer_start_continues_the_answer_and_is_not_repeated(smollm, local_chat):
    start = "Sure! Here is"
    g = local_chat.generate([Request(chat(PROMPTS[0]), seed=0, max_new_tokens=8, answer_start=start)])[0]
    hf = _hf_greedy(smollm, _template(smollm, PROMPTS[0]) + start, 8)
    assert _same_as_hf(smollm, g, hf)
    assert g.text and not g.text.startswith(start)
    plain = local_chat.generate([Request(chat(PROMPTS[0]), seed=0, max_new_tokens=8)])[0]
    assert plain.text != g.text


def test_system_turn_and_multi_turn_chats_use_the_template(smollm, local_chat):
    msgs = (("system", "Answer in French."), ("user", "Say hello."), ("assistant", "Bonjour !"),
            ("user", "Again."))
    g = local_chat.generate([Request(msgs, seed=0, max_new_tokens=6)])[0]
    text = smollm.tokenizer.apply_chat_template([{"role": r, "content": c} for r, c in msgs], tokenize=False,
                                                add_generation_prompt=True)
    assert g.tokens_in == len(smollm.tokenizer(text, add_special_tokens=False)["input_ids"])
    assert _same_as_hf(smollm, g, _hf_greedy(smollm, text, 6))


def test_a_model_without_chat_template_gets_the_turns_as_plain_text(smollm):
    tok = copy.deepcopy(smollm.tokenizer)
    tok.chat_template = None
    base = dataclasses.replace(smollm, tokenizer=tok)
    g = LocalChat(base, temperature=0, max_new_tokens=6).generate(
        [Request(chat("The capital of France is Paris.", system="Facts."), seed=0)])[0]
    prompt = "Facts.\n\nThe capital of France is Paris.\n\n"
    assert g.tokens_in == len(tok(prompt)["input_ids"])
    assert _same_as_hf(smollm, g, _hf_greedy(smollm, prompt, 6, add_special_tokens=True))


def test_a_template_that_rejects_a_chat_is_a_clear_error(smollm):
    tok = copy.deepcopy(smollm.tokenizer)
    tok.chat_template = ("{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
                         "{% endif %}{% for m in messages %}{{ m['content'] }}{% endfor %}")
    gen = LocalChat(dataclasses.replace(smollm, tokenizer=tok), temperature=0, max_new_tokens=2)
    with pytest.raises(ValueError, match=r"rejects request 1 \(roles \['system', 'user'\]\).*System role"):
        gen.generate([Request(chat("fine"), seed=0), Request(chat("no", system="sys"), seed=0)])


def test_emoji_non_latin_empty_and_surrogate_prompts(local_chat):
    texts = ("🙂🙂🙂", "Привет, как дела?", "", "   ", "bad \ud800 half")
    reqs = [Request(chat(p), seed=0, max_new_tokens=4) for p in texts]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = local_chat.generate(reqs)
    assert [g.tokens_out for g in out] and all(1 <= g.tokens_out <= 4 for g in out)
    assert all(g.tokens_in > 10 for g in out)  # the template's tokens at least
    assert sum(issubclass(w.category, TextRepairWarning) for w in caught) == 1
    for g in out:
        g.text.encode("utf-8")  # valid text back


def test_empty_request_list_loads_nothing():
    assert LocalChat("no-such-model-anywhere").generate([]) == []


def test_over_long_prompt_is_a_clear_error_naming_the_request(local_chat):
    long = Request(chat("word " * 9000), seed=0)
    with pytest.raises(ValueError, match=r"request 1 has \d{4,} prompt tokens, more than the 8176 allowed"):
        local_chat.generate([Request(chat("hi"), seed=0), long])


def test_usage_reaches_a_running_cost_meter(local_chat):
    meter = CostMeter(count_tokens=None, track_gpu=False)
    reqs = [Request(chat(p), seed=0, max_new_tokens=4) for p in PROMPTS[:3]]
    with meter.measure(attack="local", n_docs=3):
        out = local_chat.generate(reqs)
    rec = meter.records[-1]
    assert rec["queries"] == 3
    assert rec["api_tokens_in"] == sum(g.tokens_in for g in out) > 3 * 20
    assert rec["api_tokens_out"] == sum(g.tokens_out for g in out) > 0


# -- parameters -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, words", [
    ({"temperature": -1}, ValueError, "temperature"),
    ({"temperature": "hot"}, TypeError, "temperature"),
    ({"top_p": 0}, ValueError, "top_p"),
    ({"top_p": 1.5}, ValueError, "top_p"),
    ({"batch_size": 0}, ValueError, "batch_size"),
    ({"batch_size": 2.0}, ValueError, "batch_size"),
    ({"max_new_tokens": 0}, ValueError, "max_new_tokens"),
    ({"model": 3}, TypeError, "model"),
    ({"model": "  "}, ValueError, "model"),
    ({"device": 1.5}, TypeError, "device"),
    ({"dtype": 16}, TypeError, "dtype"),
])
def test_bad_parameters_are_clear_errors(kwargs, error, words):
    with pytest.raises(error, match=words):
        LocalChat(**kwargs)


def test_params_fingerprint_and_resolution(smollm, local_chat):
    gen = LocalChat()
    assert gen.get_params()["model"] == "smollm2-135m-instruct" and gen.temperature == 0.7
    with pytest.raises(ValueError, match="top_p"):
        gen.set_params(top_p=0)
    assert gen.top_p == 0.95  # restored
    assert LocalChat(temperature=0.5).fingerprint() != gen.fingerprint() == LocalChat().fingerprint()
    assert local_chat.fingerprint() == LocalChat(smollm, temperature=0, max_new_tokens=16).fingerprint()
    with pytest.raises(ValueError, match="device and dtype"):
        LocalChat(smollm, device="cpu")
    with pytest.raises(ValueError, match="needs a causal LM"):
        LocalChat(dataclasses.replace(smollm, kind="seq2seq")).generate([Request(chat("hi"), seed=0)])
    assert isinstance(resolve_generator("smollm2-135m-instruct"), LocalChat)
    assert local_chat.loaded() is smollm
    with pytest.raises(TypeError, match="Request"):
        local_chat.generate(["hi"])


# -- the sampler ------------------------------------------------------------------------------------
def _reference_sample(logits, temperature, top_p, generator):
    """Nucleus sampling spelled out: sort everything, keep the smallest top mass >= top_p, inverse CDF."""
    probs = torch.softmax(logits / temperature, dim=-1)
    u = float(torch.rand((), generator=generator, dtype=torch.float64))
    sp, si = torch.sort(probs, descending=True, stable=True)
    cum = torch.cumsum(sp, dim=0)
    n = max(int((cum - sp < top_p).sum()), 1)
    k = int(torch.searchsorted(cum[:n], torch.tensor([u * float(cum[n - 1])]), right=True))
    return int(si[min(k, n - 1)])


def test_sampler_matches_full_sort_nucleus_sampling_ties_included():
    from humanize.generation.decoding import sample_token as _sample

    rng = torch.Generator().manual_seed(0)
    for trial in range(60):
        x = torch.randn(5000, generator=rng) * (1, 4, 12)[trial % 3]
        if trial % 4 == 0:
            x = torch.round(x)  # many exact ties, at the nucleus edge too
        for top_p in (0.3, 0.9, 1.0):
            ga, gb = torch.Generator().manual_seed(trial), torch.Generator().manual_seed(trial)
            got = _sample(x, 0.7, top_p, ga)
            if top_p < 1:
                assert got == _reference_sample(x, 0.7, top_p, gb), (trial, top_p)
            else:
                assert 0 <= got < len(x)


def test_top_p_keeps_the_smallest_nucleus_and_its_proportions():
    from humanize.generation.decoding import sample_token as _sample

    logits = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05]))
    g = torch.Generator().manual_seed(3)
    only_first = {_sample(logits, 1.0, 0.5, g) for _ in range(200)}
    assert only_first == {0}
    draws = [_sample(logits, 1.0, 0.7, g) for _ in range(4000)]
    assert set(draws) == {0, 1}
    assert abs(draws.count(0) / len(draws) - 0.5 / 0.8) < 0.03
    full = [_sample(logits, 1.0, 1.0, g) for _ in range(4000)]
    assert abs(full.count(3) / len(full) - 0.05) < 0.015


def test_numpy_scalars_are_numbers_and_request_seeds_become_ints():
    import numpy as np

    from humanize.generation import Dipper, EndpointChat
    from humanize.generation.base import check_requests

    gen = LocalChat(temperature=np.float64(0.5), top_p=np.float32(0.9), max_new_tokens=np.int64(8),
                    batch_size=np.int32(2))
    assert gen.max_new_tokens == 8
    assert Dipper(lex_diversity=np.int64(40), sent_interval=np.int16(2)).codes == (60, 100)
    EndpointChat(max_concurrency=np.int64(2), timeout=np.float64(3.0), max_retries=np.int8(0))
    [req] = check_requests("LocalChat", [Request(chat("hi"), seed=np.int64(7), max_new_tokens=np.int32(3))])
    assert type(req.seed) is int and type(req.max_new_tokens) is int and (req.seed, req.max_new_tokens) == (7, 3)
    with pytest.raises(TypeError, match=r"LocalChat: request 0: seed must be an int seed, got 1.5 \(float\)"):
        check_requests("LocalChat", [Request(chat("hi"), seed=1.5)])
    with pytest.raises(ValueError, match=r"Dipper: lex_diversity must be a multiple of 20 .*got 50 \(int\)"):
        Dipper(lex_diversity=50)
    with pytest.raises(ValueError, match=r"LocalChat: top_p must be a number in \(0, 1\], got 0 \(int\)"):
        LocalChat(top_p=0)
