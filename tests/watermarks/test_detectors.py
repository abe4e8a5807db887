"""Watermark detectors (issue #37): transformers' statistic exactly, LM-free, the key kept secret."""
import json

import numpy as np
import pytest
import torch

from humanize import detectors
from humanize.exceptions import InvalidParameterError
from humanize.watermarks import KGW, SynthID, Unigram
from humanize.watermarks.base import key_int

from ..secret_scan import assert_no_secret_after_read_commands

TEXTS = ["The cat sat on the mat and the dog ran in the park.", "the cat the cat the cat sat on the mat the cat",
         "", "   ", "Über café naïve — Привет мир 🎉🎉", "x" * 3000]


def _reference(tok_dir, **config):
    from transformers import AutoTokenizer, PretrainedConfig, WatermarkDetector, WatermarkingConfig

    tok = AutoTokenizer.from_pretrained(tok_dir)
    ignore = config.pop("ignore_repeated_ngrams", False)
    return WatermarkDetector(PretrainedConfig(vocab_size=len(tok), bos_token_id=tok.bos_token_id), "cpu",
                             WatermarkingConfig(**config), ignore_repeated_ngrams=ignore)


@pytest.mark.parametrize("scheme,width,ignore", [("lefthash", 1, False), ("lefthash", 1, True),
                                                 ("selfhash", 1, False), ("selfhash", 3, True)])
def test_kgw_z_is_transformers_watermark_detector_z(wm_models, scheme, width, ignore):
    tok = wm_models["tokenizer"]
    det = detectors.get("kgw", tokenizer=tok, key="a passphrase", gamma=0.3, seeding_scheme=scheme,
                        context_width=width, ignore_repeated_ngrams=ignore)
    ref = _reference(tok, greenlist_ratio=0.3, hashing_key=key_int("a passphrase"), seeding_scheme=scheme,
                     context_width=width, ignore_repeated_ngrams=ignore)
    for text, ids in zip(TEXTS[:2], det.token_ids(TEXTS[:2])):
        want = ref(torch.tensor([ids]), return_dict=True)
        got = det.statistics([text])[0]
        assert got["tokens"] == want.num_tokens_scored[0] and got["green"] == want.num_green_tokens[0]
        assert got["score"] == pytest.approx(float(want.z_score[0]))
        assert got["p_value"] == pytest.approx(float(want.p_value[0]), abs=1e-12)


def test_odd_texts_score_the_null_value_and_no_lm_is_loaded(wm_models):
    from humanize.models import add_load_listener, remove_load_listener

    loads = []
    add_load_listener(loads.append)
    try:
        for name, null in (("kgw", 0.0), ("unigram", 0.0), ("synthid", 0.5)):
            scores = detectors.get(name, tokenizer=wm_models["tokenizer"], key=5).score(TEXTS)
            assert scores.shape == (len(TEXTS),) and np.isfinite(scores).all()
            assert scores[2] == null  # nothing to score: no evidence either way
    finally:
        remove_load_listener(loads.append)
    assert {e["kind"] for e in loads} <= {"tokenizer"}


def test_unigram_counts_every_token_or_each_distinct_token_once(wm_models):
    det = detectors.get("unigram", tokenizer=wm_models["tokenizer"], key=9, gamma=0.5)
    proc = det._processor(det.loaded_tokenizer())
    ids = det.token_ids([TEXTS[1]])[0]
    green = int(proc.mask[ids].sum())
    assert det.statistics([TEXTS[1]])[0]["green"] == green
    distinct = sorted(set(ids))
    once = detectors.get("unigram", tokenizer=wm_models["tokenizer"], key=9, ignore_repeated_tokens=True)
    stats = once.statistics([TEXTS[1]])[0]
    assert stats["tokens"] == len(distinct) < len(ids) and stats["green"] == int(proc.mask[distinct].sum())
    assert proc.mask.sum() == int(0.5 * len(proc.mask))


def test_max_tokens_scores_only_the_first_tokens(wm_models):
    full = detectors.get("kgw", tokenizer=wm_models["tokenizer"])
    cut = detectors.get("kgw", tokenizer=wm_models["tokenizer"], max_tokens=5)
    assert full.statistics([TEXTS[0]])[0]["tokens"] > 4 == cut.statistics([TEXTS[0]])[0]["tokens"]


def test_the_key_is_a_digest_in_repr_provenance_and_errors(wm_models):
    secret, number = "wm-passphrase-5b1e", 918273645546372819
    for name in ("kgw", "unigram", "synthid"):
        for key in (secret, number):
            det = detectors.get(name, tokenizer=wm_models["tokenizer"], key=key)
            shown = repr(det) + json.dumps(det.provenance()) + det.fingerprint()
            assert str(key) not in shown and "<hidden:blake2b=" in shown
            other = detectors.get(name, tokenizer=wm_models["tokenizer"], key=f"{key}x")
            assert other.fingerprint() != det.fingerprint()
    with pytest.raises(InvalidParameterError) as err:
        detectors.get("kgw", tokenizer=wm_models["tokenizer"], key=-number)
    assert str(number) not in str(err.value) and len(str(err.value).splitlines()) == 1
    with pytest.raises(InvalidParameterError, match="context_width must be 1"):
        detectors.get("kgw", tokenizer=wm_models["tokenizer"], context_width=2)


def test_for_watermark_takes_the_schemes_key_and_parameters(wm_models):
    det = detectors.KGWDetector.for_watermark(KGW(key="k", gamma=0.4, seeding_scheme="selfhash", context_width=2),
                                              tokenizer=wm_models["tokenizer"])
    assert (det.key, det.gamma, det.seeding_scheme, det.context_width) == ("k", 0.4, "selfhash", 2)
    assert detectors.UnigramDetector.for_watermark(Unigram(key=3, gamma=0.3)).gamma == 0.3
    assert detectors.SynthIDDetector.for_watermark(SynthID(key=3, depth=7)).depth == 7


def test_a_run_with_watermark_detectors_writes_the_key_nowhere(wm_models, tmp_path, capsys, monkeypatch):
    """`run`, `report`, `card`, `export`, `runs`: every file written (and the model cache) is searched for the key."""
    from humanize.cli.main import main

    secret, number = "wm-run-secret-9c3d", 734112094331117
    monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    out.mkdir()
    config = tmp_path / "run.toml"
    tok = wm_models["tokenizer"]
    config.write_text(f'''
attacks = ["upper_lower"]
detectors = [{{name = "kgw", tokenizer = "{tok}", key = "{secret}"}},
             {{name = "unigram", tokenizer = "{tok}", key = {number}}},
             {{name = "synthid", tokenizer = "{tok}", key = "{secret}", depth = 4}}]
[dataset]
name = "demo"
n = 8
[run]
db = "{out / 'r.sqlite'}"
''', encoding="utf-8")
    assert main(["run", "--config", str(config), "--quiet", "--no-quality"]) == 0
    assert_no_secret_after_read_commands(main, str(out / "r.sqlite"), out, tmp_path, (secret, str(number)), capsys,
                                         skip=[config])


@pytest.mark.parametrize("scheme,width", [("lefthash", 1), ("selfhash", 2)])
def test_kgw_generation_bias_is_transformers_watermark_logits_processor(scheme, width):
    from transformers.generation.logits_process import WatermarkLogitsProcessor

    kgw = KGW(key="bias key", gamma=0.3, delta=1.5, seeding_scheme=scheme, context_width=width)
    ours = kgw.logits_processor(500)
    ref = WatermarkLogitsProcessor(vocab_size=500, device="cpu", greenlist_ratio=0.3, bias=1.5,
                                   hashing_key=key_int("bias key"), seeding_scheme=scheme, context_width=width)
    gen = torch.Generator().manual_seed(0)
    for _ in range(3):
        logits = torch.randn(500, generator=gen)
        context = torch.randint(0, 500, (7,), generator=gen)
        want = ref(context[None], logits[None].clone())[0]
        assert torch.allclose(ours.apply(logits, context.tolist(), {}), want)
