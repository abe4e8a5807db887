"""Watermarked generation (issue #37): the local back end embeds each scheme; detection sees it, the right key
only; a request's text does not depend on its batch; an endpoint refuses in one line."""
import numpy as np
import pytest

from humanize import detectors
from humanize.exceptions import UserError
from humanize.generation import LocalChat, Request, WatermarkedChat, chat
from humanize.watermarks import KGW, SynthID, Unigram

REQUESTS = [Request(chat(f"Write a few lines about topic {i}."), seed=i) for i in range(6)]
CASES = {"kgw": (KGW(key="gen-key", delta=4.0), "flat", "KGWDetector"),
         "unigram": (Unigram(key="gen-key", delta=4.0), "flat", "UnigramDetector"),
         "synthid": (SynthID(key="gen-key", depth=20), "flat", "SynthIDDetector")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_watermarked_text_scores_above_unwatermarked_text_and_only_with_the_key(wm_models, name):
    scheme, model, cls = CASES[name]
    marked = [g.text for g in WatermarkedChat(wm_models[model], watermark=scheme, temperature=1.0,
                                              max_new_tokens=60, batch_size=4).generate(REQUESTS)]
    plain = [g.text for g in LocalChat(wm_models[model], temperature=1.0, max_new_tokens=60,
                                       batch_size=4).generate(REQUESTS)]
    det = getattr(detectors, cls).for_watermark(scheme, tokenizer=wm_models["tokenizer"])
    wrong = getattr(detectors, cls).for_watermark(scheme.set_params(key="another key"), tokenizer=wm_models["tokenizer"])
    if name == "synthid":  # decoding the tiny tokenizer's byte tokens and encoding them again loses n-grams
        assert det.score(marked).mean() > max(det.score(plain).mean(), wrong.score(marked).mean()) + 0.01
    else:
        assert det.score(marked).min() > det.score(plain).max()
        assert wrong.score(marked).mean() < det.score(marked).min()


def test_synthid_tournament_raises_the_mean_g_value_of_the_tokens_it_samples():
    """On a flat distribution the tournament's winners have g = 1 at most layers (Dathathri et al. 2024, Fig. 2)."""
    import torch

    from humanize.generation.decoding import sample_token as _sample

    proc = SynthID(key="t", depth=10, top_k=50).logits_processor(300)
    gen, state, ids = torch.Generator().manual_seed(0), {"prompt_len": 0}, []
    for _ in range(200):
        ids.append(_sample(proc.apply(torch.zeros(300), ids, state), 1.0, 1.0, gen))
    g, mask = proc.g_values(ids)
    assert g[mask].mean() > 0.6 and mask.sum() > 150


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_requests_text_does_not_depend_on_its_batch(wm_models, name):
    scheme, model, _ = CASES[name]
    alone = [WatermarkedChat(wm_models[model], watermark=scheme, max_new_tokens=20, batch_size=1).generate([r])[0]
             for r in REQUESTS[:3]]
    together = WatermarkedChat(wm_models[model], watermark=scheme, max_new_tokens=20,
                               batch_size=3).generate(REQUESTS[2::-1])[::-1]
    assert [g.text for g in alone] == [g.text for g in together]


def test_greedy_kgw_text_is_the_argmax_of_the_biased_logits(wm_models):
    from humanize.models import load_causal_lm
    import torch

    scheme = KGW(key=77, delta=3.0)
    gen = WatermarkedChat(wm_models["peaked"], watermark=scheme, temperature=0, max_new_tokens=8)
    lm = load_causal_lm(wm_models["peaked"])
    prompt = lm.tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                              add_generation_prompt=True)
    ids = lm.tokenizer(prompt, add_special_tokens=False)["input_ids"]
    proc = scheme.logits_processor(len(lm.tokenizer))
    out = []
    for _ in range(8):
        with torch.no_grad():
            logits = lm.model(torch.tensor([ids + out])).logits[0, -1].float()
        tok = int(proc.apply(logits, ids + out, {}).argmax())
        out.append(tok)
        if tok in gen._stop_ids(lm):
            break
    got = gen.generate([Request(chat("hi"))])[0]
    assert got.tokens_out == len(out)


@pytest.mark.parametrize("name", ["kgw", "unigram", "synthid"])
def test_a_logit_bias_goes_on_before_the_temperature_and_a_tournament_after_it(wm_models, monkeypatch, name):
    """Kirchenbauer et al. 2023, Algorithm 2, adds delta to the model's logits, and the paper's code hands its
    processor to ``generate`` as a logits processor, which transformers runs before the temperature: at T the
    bias weighs delta / T. SynthID's tournament reads the tempered scores (DeepMind's reference). The scores the
    sampler gets at each step are rebuilt here from the model's logits in that order."""
    import torch

    from humanize.generation import watermarked
    from humanize.models import load_causal_lm

    seen = []

    def record(scores, temperature, top_p, generator):  # the sampler's input; the argmax keeps it checkable
        seen.append(scores.clone())
        return int(scores.argmax())

    monkeypatch.setattr(watermarked, "sample_token", record)
    temperature = 0.5
    scheme = {"kgw": KGW(key=77, delta=3.0), "unigram": Unigram(key=77, delta=3.0),
              "synthid": SynthID(key=77, depth=10)}[name]
    WatermarkedChat(wm_models["flat"], watermark=scheme, temperature=temperature, max_new_tokens=5).generate(
        [Request(chat("hi"), seed=3)])
    lm = load_causal_lm(wm_models["flat"])
    prompt = lm.tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                              add_generation_prompt=True)
    ids = lm.tokenizer(prompt, add_special_tokens=False)["input_ids"]
    proc = scheme.logits_processor(len(lm.tokenizer))
    state, out = {"prompt_len": len(ids)}, []
    assert len(seen) >= 2
    for scores in seen:
        with torch.no_grad():
            logits = lm.model(torch.tensor([ids + out])).logits[0, -1].float()
        if name == "synthid":
            expected = proc.apply(logits / temperature, ids + out, state)
        else:
            expected = proc.apply(logits, ids + out, state) / temperature
        finite = torch.isfinite(expected)
        assert torch.equal(finite, torch.isfinite(scores))
        assert torch.allclose(scores[finite], expected[finite], atol=1e-3)
        out.append(int(scores.argmax()))


def test_the_key_never_shows_in_the_generator_and_endpoints_refuse_in_one_line(wm_models):
    from humanize.generation.watermarked import watermarked_generator

    gen = watermarked_generator({"backend": "local", "model": wm_models["peaked"]}, {"scheme": "kgw", "key": 4242424242})
    assert isinstance(gen, WatermarkedChat) and "4242424242" not in repr(gen) + str(gen.provenance())
    with pytest.raises(UserError) as err:
        watermarked_generator("endpoint:gpt-4o-mini", KGW())
    assert "cannot watermark" in str(err.value) and len(str(err.value).splitlines()) == 1
    with pytest.raises(ValueError) as err:
        WatermarkedChat(wm_models["peaked"], watermark={"scheme": "nope", "key": "hush-hush-key"})
    assert "hush-hush-key" not in str(err.value)


def test_watermark_rows_are_aligned_raid_rows_and_cached_by_content(wm_models, tmp_path, monkeypatch):
    from humanize.benchmarks.data import demo_prompts, watermark_rows
    from humanize.benchmarks.data.schema import COLUMNS

    monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path))
    prompts = demo_prompts(n=3, prefix_words=8)
    assert len(prompts) == 3 and all(len(p.split()) == 8 for p in prompts["prompt"])
    calls = []
    from humanize.generation.local import LocalChat

    original = LocalChat._decode
    monkeypatch.setattr(LocalChat, "_decode", lambda self, lm, reqs, dec: calls.append(len(reqs)) or
                        original(self, lm, reqs, dec))
    build = lambda: watermark_rows(list(prompts["prompt"]), list(prompts["human"]), model=wm_models["flat"],
                                   watermark=KGW(key="rows-key-31f", delta=4.0), max_new_tokens=12,
                                   temperature=1.0, domains=list(prompts["domain"]))
    rows = build()
    assert list(rows.columns[:len(COLUMNS)]) == COLUMNS and len(rows) == 9
    assert rows.groupby("pair")["watermark"].apply(lambda s: sorted(s.fillna("human"))).tolist() == \
        [["human", "kgw", "none"]] * 3
    assert (rows.groupby("pair")["source_id"].nunique() == 1).all()
    assert calls == [3, 3]
    again = build()
    assert calls == [3, 3] and again.equals(rows)  # read back from the content cache
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or b"rows-key-31f" not in path.read_bytes()
    det = detectors.KGWDetector(tokenizer=wm_models["tokenizer"], key="rows-key-31f")
    by = rows.assign(score=det.score(list(rows["generation"]))).groupby(rows["watermark"].fillna("human"))["score"]
    assert by.mean()["kgw"] > by.mean()["none"]
    assert set(rows["repetition_penalty"].dropna()) == {"no"}
    penalised = watermark_rows(list(prompts["prompt"][:1]), model=wm_models["flat"], watermark=KGW(key=3),
                               max_new_tokens=12, min_new_tokens=12, repetition_penalty=1.2, cache=False)
    assert penalised["repetition_penalty"].tolist() == ["yes", "yes"]  # both machine sides, RAID's column


def test_no_watermark_is_localchats_decoding_and_min_new_tokens_fixes_the_length(wm_models):
    kw = dict(temperature=0.9, max_new_tokens=12, batch_size=3)
    plain = [g.text for g in LocalChat(wm_models["peaked"], **kw).generate(REQUESTS)]
    same = [g.text for g in WatermarkedChat(wm_models["peaked"], watermark=None, **kw).generate(REQUESTS)]
    assert same == plain
    fixed = WatermarkedChat(wm_models["peaked"], watermark=KGW(key=1), min_new_tokens=12, **kw).generate(REQUESTS)
    assert all(g.tokens_out == 12 and g.finish_reason == "length" for g in fixed)


@pytest.mark.parametrize("watermark", [None, KGW(key=77, delta=3.0)], ids=["none", "kgw"])
def test_repetition_penalty_is_transformers_before_the_watermark(wm_models, watermark):
    """Keskar et al.'s penalty on the row's tokens (prompt included), as transformers applies it, then the scheme."""
    import torch
    from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

    from humanize.generation.decoding import decode_answer
    from humanize.models import load_causal_lm

    kw = dict(watermark=watermark, temperature=0, max_new_tokens=40, min_new_tokens=40)
    gen = WatermarkedChat(wm_models["peaked"], repetition_penalty=3.0, **kw)
    lm = load_causal_lm(wm_models["peaked"])
    prompt = lm.tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                              add_generation_prompt=True)
    ids = lm.tokenizer(prompt, add_special_tokens=False)["input_ids"]
    penalty, stop = RepetitionPenaltyLogitsProcessor(3.0), sorted(gen._stop_ids(lm))
    out = []
    for _ in range(40):
        with torch.no_grad():
            logits = lm.model(torch.tensor([ids + out])).logits[0, -1].float()
        logits = penalty(torch.tensor([ids + out]), logits[None])[0]
        logits[stop] = float("-inf")
        if watermark is not None:
            logits = watermark.logits_processor(len(lm.tokenizer)).apply(logits, ids + out, {})
        out.append(int(logits.argmax()))
    got = gen.generate([Request(chat("hi"))])[0].text
    assert got == decode_answer(lm.tokenizer, ids, out).rstrip("\ufffd")  # a byte cut at the length limit: dropped
    assert got != WatermarkedChat(wm_models["peaked"], **kw).generate([Request(chat("hi"))])[0].text
    with pytest.raises(ValueError, match="repetition_penalty"):
        WatermarkedChat(wm_models["peaked"], repetition_penalty=0)
