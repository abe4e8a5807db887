"""The context meter (issue #33): a swap must fit its sentence under a model the attack did not use."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from humanize.quality import QualityMeter, summarize_validity, swap_validity
from humanize.quality.context import CONTEXT_THRESHOLD, context_deltas

LABELS = Path(__file__).parent / "data" / "context_swaps.json"
STUDIES = "Several studies have indicated an association between short sleep and obesity in children."
BREAST = "Women with a family history of the disease face a higher breast cancer risk than other women."


def test_deltas_are_the_full_pass_log_probabilities_of_the_sentence_tail(smollm):
    from humanize.models.scoring import encode_for_scoring, sequence_logprobs

    text = "Obesity is common. Several studies have indicated an association between sleep and obesity."
    s = text.index("indicated")
    items = [(text, s, s + 9, "suggested"), (text, s, s + 9, "pointed")]
    got = context_deltas(items, smollm)
    # the reference: each whole window through the model alone, summed from the word's first token on
    variants = [text, text[:s] + "suggested" + text[s + 9:], text[:s] + "pointed" + text[s + 9:]]
    ids, spans, has_bos = encode_for_scoring(smollm, variants, offsets=True)
    lps = sequence_logprobs(smollm, ids, batch_size=1)
    tails = [float(lp[-int((sp[:, 1] > s).sum()):].sum()) for lp, sp in zip(lps, spans)]
    assert has_bos
    assert got == pytest.approx([tails[1] - tails[0], tails[2] - tails[0]], abs=1e-3)
    assert got[0] > CONTEXT_THRESHOLD > got[1]  # "have suggested an association" fits, "have pointed an" does not


def test_a_swap_wordnet_accepts_and_the_context_rejects_is_not_valid(smollm):
    from humanize.quality import classify_swap

    attacked = BREAST.replace("breast", "chest")
    assert classify_swap("breast", "chest") == "synonym"  # WordNet alone calls it valid
    row = swap_validity([BREAST], [attacked], smollm).iloc[0]
    assert row["swaps"] == 1 and row["valid_share"] == 1.0
    assert row["swap_context_fail"] == 1 and row["swap_valid_in_context"] == 0 and row["valid_in_context_share"] == 0
    s = BREAST.index("breast")
    assert row["context_misfits"] == f"{s}:{s + 6}"
    fine = swap_validity([STUDIES], [STUDIES.replace("indicated", "suggested")], smollm).iloc[0]
    assert fine["swap_context_fail"] == 0 and fine["valid_in_context_share"] == 1.0


def test_the_meter_reads_the_labelled_swaps_with_few_false_valid_calls(smollm):
    """137 swaps labelled by reading them in context (the file's ``about``): of the invalid ones, at most
    10% are called valid at the threshold (measured: 7 of 87), and at least half of the valid ones pass
    (measured: 28 of 50)."""
    data = json.loads(LABELS.read_text(encoding="utf-8"))
    swaps = data["swaps"]
    assert len(swaps) >= 60
    items = [(data["texts"][s["text"]], s["start"], s["end"], s["replacement"]) for s in swaps]
    for (text, a, b, _), s in zip(items, swaps):
        assert text[a:b] == s["word"]
    valid = np.array([s["valid"] for s in swaps])
    fits = context_deltas(items, smollm) >= CONTEXT_THRESHOLD
    false_valid = (fits & ~valid).sum() / (~valid).sum()
    assert false_valid <= 0.10
    assert (fits & valid).sum() / valid.sum() >= 0.5
    assert (fits & ~valid).sum() / fits.sum() <= 0.25  # of what it calls valid, at most a quarter is not


def test_quality_meter_reports_both_figures_and_the_old_figures_stay_reachable(smollm, minilm):
    pair = BREAST + " " + STUDIES
    attacked = [pair.replace("breast", "chest").replace("indicated", "suggested"), pair]
    frame = QualityMeter(lm=smollm, encoder=minilm, meters=["validity"]).score([pair, pair], attacked)
    assert frame.loc[0, "swaps"] == 2 and frame.loc[0, "swap_context_fail"] == 1
    assert frame.loc[0, "valid_share"] == 1.0 and frame.loc[0, "valid_in_context_share"] == 0.5
    assert frame.loc[1, "swaps"] == 0 and frame.loc[1, "context_misfits"] == ""
    s = summarize_validity(frame)
    assert s["context_fail_share"] == 0.5 and s["valid_in_context_share"] == 0.5 and s["valid_share"] == 1.0
    old = QualityMeter(lm=smollm, encoder=minilm, meters=["validity"], context_threshold=None)
    row = old.score([pair], attacked[:1]).iloc[0]
    assert row["valid_share"] == 1.0 and math.isnan(row["swap_context_fail"])
    assert math.isnan(summarize_validity(old.score([pair], attacked[:1]))["valid_in_context_share"])
    # the context threshold is part of what the figures depend on
    assert old.fingerprint() != QualityMeter(lm=smollm, encoder=minilm, meters=["validity"]).fingerprint()


def test_a_non_word_swap_fails_the_context_unscored(smollm):
    row = swap_validity(["the patient was seen"], ["the p\u0430tient was seen"], smollm).iloc[0]
    assert row["swap_non_word"] == 1 and row["swap_context_fail"] == 1


def test_the_same_word_in_another_case_fits_unscored_and_a_substitute_is_still_scored(smollm):
    """A case change (upper_lower's "you -> You") keeps the word: it fits without a context score (the model
    found 96% of the demo's case changes improbable, a verdict on spelling, not meaning); in the same text a
    substitute is still scored (counted: one item reaches the model)."""
    from humanize.models.scoring import STATISTICS_CACHE

    original = "Then you followed the path and the river was wide."
    attacked = "Then You followed the path and the river was broad."
    STATISTICS_CACHE.clear()
    row = swap_validity([original], [attacked], smollm).iloc[0]
    assert row["swaps"] == 2 and row["swap_morphological"] == 1
    assert STATISTICS_CACHE.passes["context"]["rows"] >= 1
    misfits = str(row["context_misfits"]).split()
    assert f"{original.index('you')}:{original.index('you') + 3}" not in misfits
    STATISTICS_CACHE.clear()
    alone = swap_validity([original], ["Then You followed the path and the river was wide."], smollm).iloc[0]
    assert alone["swap_context_fail"] == 0 and alone["swap_valid_in_context"] == 1
    assert "context" not in STATISTICS_CACHE.passes  # the case change alone: no pass at all


def test_bad_threshold_is_named():
    from humanize.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="context_threshold"):
        QualityMeter(context_threshold="low")


@pytest.fixture(scope="module")
def tiny_lm_path(tmp_path_factory):
    from ..detectors.conftest import _save_tiny_llama, _train_tokenizer

    return _save_tiny_llama(tmp_path_factory.mktemp("context_eos") / "a", _train_tokenizer(300), seed=0)


@pytest.mark.parametrize("packed", [True, False])
def test_a_model_without_bos_scores_a_first_word_swap_after_its_eos(tiny_lm_path, packed):
    """A tokenizer without a BOS token (Qwen2.5's) gets its EOS token first, as lm-eval-harness prefixes an empty
    context: a swap of the text's first word gets a score (it was NaN), the same as a model whose BOS is that EOS."""
    import copy
    import dataclasses

    from humanize.models import load_causal_lm

    lm = load_causal_lm(tiny_lm_path)
    no_bos = dataclasses.replace(lm, tokenizer=copy.deepcopy(lm.tokenizer))
    no_bos.tokenizer.bos_token = None
    eos_first = dataclasses.replace(lm, tokenizer=copy.deepcopy(lm.tokenizer))
    eos_first.tokenizer.bos_token = eos_first.tokenizer.eos_token
    assert no_bos.tokenizer.bos_token_id is None and eos_first.tokenizer.bos_token_id == lm.tokenizer.eos_token_id
    text = "The cat sat on the mat. The dog ran in the park."
    items = [(text, 0, 3, "A"), (text, 4, 7, "dog"), (text, text.index("ran"), text.index("ran") + 3, "sat")]
    got = context_deltas(items, no_bos, packed=packed)
    assert np.isfinite(got).all()
    assert got == pytest.approx(context_deltas(items, eos_first, packed=packed), abs=1e-4)
    # a tokenizer with neither token cannot score the first word: NaN, as before
    bare = dataclasses.replace(no_bos, tokenizer=copy.deepcopy(no_bos.tokenizer))
    bare.tokenizer.eos_token = None
    none = context_deltas(items, bare, packed=packed)
    assert math.isnan(none[0]) and np.isfinite(none[1:]).all()
