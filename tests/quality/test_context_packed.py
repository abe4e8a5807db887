"""The context check runs the words a swap shares with its original once (issue #38): each variant goes through the
model from the swapped word on, as a branch of its original window. Counted in the model's tokens
(``lm_stats.cache_info()["passes"]["context"]``), not timed; the values are a whole pass's, to float rounding."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from humanize.detectors import lm_stats
from humanize.models.scoring import encode_for_scoring
from humanize.quality.context import PACKED_CONTEXT_ENV, context_deltas

LABELS = Path(__file__).parent / "data" / "context_swaps.json"
TEXT = ("The committee met on Tuesday to review the budget. After a long debate it approved most of the proposals "
        "and rejected the plan to close the library on weekends.")
WORDS = ("approved", "proposals", "rejected", "close", "library", "weekends")
SWAPS = {"approved": "accepted", "proposals": "suggestions", "rejected": "refused", "close": "shut",
         "library": "museum", "weekends": "Sundays"}


pytestmark = pytest.mark.usefixtures("fresh_lm_cache")


def _items():
    return [(TEXT, TEXT.index(w), TEXT.index(w) + len(w), SWAPS[w]) for w in WORDS]


def _context_pass() -> dict:
    return lm_stats.cache_info()["passes"]["context"]


def test_each_variant_runs_only_from_the_word_it_changes(smollm):
    items = _items()
    packed = context_deltas(items, smollm)
    tokens = _context_pass()["tokens"]
    lm_stats.clear_cache()
    whole = context_deltas(items, smollm, packed=False)
    whole_tokens = _context_pass()["tokens"]
    np.testing.assert_allclose(packed, whole, atol=1e-3)
    # what each way must run: the window, then each variant whole, or each variant from its first new token on
    variants = [TEXT[:s] + r + TEXT[e:] for _, s, e, r in items]
    (orig, *var_ids), _, _ = encode_for_scoring(smollm, [TEXT, *variants])
    assert whole_tokens == len(orig) + sum(len(v) for v in var_ids)
    shared = [next(i for i, (a, b) in enumerate(zip(orig, v)) if a != b) for v in var_ids]
    assert tokens == len(orig) + sum(len(v) - k + 1 for v, k in zip(var_ids, shared))  # one token before the change
    assert tokens < 0.6 * whole_tokens
    assert _context_pass()["batches"] >= 1


def test_the_packed_deltas_are_the_whole_passes_on_the_labelled_swaps(smollm):
    """The first 8 labelled swaps of each of the first four texts (32 swaps; windows of ~700 characters, batched
    across texts): the whole pass is the reference and costs most, so 8 a text rather than the first 60."""
    data = json.loads(LABELS.read_text(encoding="utf-8"))
    per_text: dict[int, list] = {}
    for s in data["swaps"]:
        if s["text"] < 4 and len(per_text.setdefault(s["text"], [])) < 8:
            per_text[s["text"]].append((data["texts"][s["text"]], s["start"], s["end"], s["replacement"]))
    items = [item for chosen in per_text.values() for item in chosen]
    assert len(items) == 32 and len({i[0] for i in items}) == 4
    packed = context_deltas(items, smollm)
    whole = context_deltas(items, smollm, packed=False)
    assert np.array_equal(np.isnan(packed), np.isnan(whole))
    np.testing.assert_allclose(packed, whole, atol=1e-3)


def test_the_environment_switch_runs_every_variant_whole(smollm, monkeypatch):
    monkeypatch.setenv(PACKED_CONTEXT_ENV, "0")
    context_deltas(_items(), smollm)
    off = _context_pass()["tokens"]
    monkeypatch.delenv(PACKED_CONTEXT_ENV)
    lm_stats.clear_cache()
    context_deltas(_items(), smollm)
    assert _context_pass()["tokens"] < off


def test_a_sliding_window_shorter_than_a_sequence_runs_every_variant_whole(smollm, monkeypatch):
    """A sliding-window layer would mask keys the packed mask allows: such a model takes the whole path."""
    config = smollm.model.config
    monkeypatch.setattr(config, "sliding_window", 8, raising=False)
    monkeypatch.setattr(config, "layer_types", ["sliding_attention"] * config.num_hidden_layers, raising=False)
    context_deltas(_items(), smollm)
    got = _context_pass()["tokens"]
    lm_stats.clear_cache()
    context_deltas(_items(), smollm, packed=False)
    assert got == _context_pass()["tokens"]
