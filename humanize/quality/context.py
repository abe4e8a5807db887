"""Does a swapped word fit its sentence? A causal LM's verdict, per swap (issue #33).

A WordNet synonym of *some* sense is necessary, not sufficient (Morris et al. 2020, §4: a
substitute must be a synonym *in context*): "breast cancer" -> "chest cancer" and "studies have
indicated an association" -> "have pointed an association" pass WordNet and break the text. In
lexical-substitution practice a substitute is judged by how probable a language model finds it
at the word's position compared with the original word. Here the comparison covers the
substitute's whole token span *and the rest of its sentence*, so a verb whose complement no
longer fits ("pointed an association") or a compound that no longer reads as one ("chest
cancer risk") costs probability after the word as well:

``delta = log p(replacement + rest of sentence | left context) - log p(word + rest of sentence | left context)``

in nats, the left context being the previous sentence and the sentence up to the word (the
model's BOS first when it has one). ``delta`` near 0: the model finds the sentence about as
likely with the substitute; strongly negative: the sentence became much less probable there.

The same measure serves two purposes with two different models:

- the word-level attacks filter their candidates with their own ranking model (Gemma-3-270M by
  default, :class:`humanize.attacks.wordsub.ContextFit`);
- the validity meter scores every swap an attack made with the perplexity meter's model
  (SmolLM2-135M by default), which no attack uses, against :data:`CONTEXT_THRESHOLD`
  (:func:`humanize.quality.validity.swap_validity`), so the report's validity figure does not
  come from the attack's own filter.

Each swap is scored on its own (the original text with that one word replaced), so a swap's
score does not depend on the other swaps of the document.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

__all__ = ["CONTEXT_THRESHOLD", "context_deltas", "sentence_spans"]

#: A swap fits its context for the meter when ``delta >= CONTEXT_THRESHOLD`` nats under the meter's model
#: (SmolLM2-135M). Chosen on the 137 swaps of ``tests/quality/data/context_swaps.json``, labelled by reading
#: them in context: at -3.0, 8% of the invalid swaps pass (7 of 87) and 56% of the valid ones do (28 of 50);
#: docs/guide/quality.md gives the whole curve.
CONTEXT_THRESHOLD = -3.0

#: kept logits per forward pass (a row of Gemma's logits is 1 MiB in float32)
_MAX_KEPT = 96


@functools.lru_cache(maxsize=256)
def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Character spans of the sentences of ``text`` (blingfire's sentence breaker); the whole text when
    blingfire finds none."""
    if not text.strip():
        return ((0, len(text)),)
    import blingfire

    from humanize.models.text import repair_text

    clean, _ = repair_text(text)  # same length: offsets stay valid
    try:
        _, offsets = blingfire.text_to_sentences_and_offsets(clean)
    except AssertionError:
        return ((0, len(text)),)
    return tuple((int(s), int(e)) for s, e in offsets) or ((0, len(text)),)


def _window(text: str, start: int, end: int) -> tuple[int, int]:
    """``(lo, hi)``: from the start of the previous sentence to the end of the word's sentence."""
    spans = sentence_spans(text)
    k = 0
    for j, (s, _) in enumerate(spans):
        if s <= start:
            k = j
    lo = spans[k - 1][0] if k > 0 else spans[k][0]
    hi = max(spans[k][1], end)
    return min(lo, start), hi


def context_deltas(items: Sequence[tuple[str, int, int, str]], lm: Any, *, device: Any = None,
                   cost: Any = None) -> np.ndarray:
    """``delta`` (module docstring) for each ``(text, start, end, replacement)``: ``text[start:end]``
    replaced by ``replacement``, in nats under the causal LM ``lm`` (a name or a loaded model).

    Batched: one sequence per distinct original window and one per swap, left-padded, only the
    logits of the scored tokens computed. NaN where the word's span reaches no scored token.
    ``cost``, when given, is called with ``forward_passes=``, ``queries=`` and ``lm_tokens=``.
    """
    from humanize.quality.perplexity import get_lm

    items = list(items)
    if not items:
        return np.zeros(0)
    model = get_lm(lm, device)
    seqs: dict[str, int] = {}  # window text -> row
    rows_text: list[str] = []
    jobs = []  # (original row, variant row, cut in window, cut in variant)
    for text, start, end, repl in items:
        lo, hi = _window(text, start, end)
        orig = text[lo:hi]
        var = text[lo:start] + repl + text[end:hi]
        for w in (orig, var):
            if w not in seqs:
                seqs[w] = len(rows_text)
                rows_text.append(w)
        jobs.append((seqs[orig], seqs[var], start - lo))
    # the earliest cut of each row: its logits are kept from there on
    first_cut = [math.inf] * len(rows_text)
    for o, v, cut in jobs:
        first_cut[o] = min(first_cut[o], cut)
        first_cut[v] = min(first_cut[v], cut)
    per_token = _token_logprobs(model, rows_text, first_cut, cost)
    out = np.empty(len(jobs))
    for j, (o, v, cut) in enumerate(jobs):
        a = _tail(per_token[o], cut)
        b = _tail(per_token[v], cut)
        out[j] = b - a if (a == a and b == b) else math.nan
    return out


def _tail(row: tuple[np.ndarray, np.ndarray], cut: int) -> float:
    """Sum of the log-probabilities of the tokens ending after character ``cut``."""
    ends, lps = row
    pick = ends > cut
    if not pick.any() or np.isnan(lps[pick]).any():
        return math.nan
    return float(lps[pick].sum())


def _token_logprobs(model, texts: list[str], cuts: list[float], cost) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per text: (token end offsets, log p(token | before)) for the tokens ending after ``cuts[i]`` (others NaN)."""
    import torch

    from humanize.models.scoring import encode_for_scoring

    ids, spans, has_bos = encode_for_scoring(model, texts, offsets=True)
    shift = int(has_bos)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    need = []  # per text: number of trailing tokens whose log-prob is needed
    for t, (seq, sp) in enumerate(zip(ids, spans)):
        ends = sp[:, 1] if len(sp) else np.zeros(0, dtype=np.int64)
        n_tail = int((ends > cuts[t]).sum())
        # the first token has no log-prob without a BOS before it
        n_tail = min(n_tail, len(seq) - 1)
        need.append(n_tail)
        out.append((ends, np.full(len(ends), np.nan)))
    # rows with as many kept positions together (every row of a batch keeps the batch's largest number)
    order = sorted(range(len(texts)), key=lambda t: (need[t], len(ids[t]), t))
    pad = getattr(model.tokenizer, "pad_token_id", None)
    pad = 0 if pad is None else int(pad)
    i = 0
    with torch.inference_mode():
        while i < len(order):
            batch, kept = [], 0
            while i < len(order) and (not batch or kept + need[order[i]] + 1 <= _MAX_KEPT):
                batch.append(order[i])
                kept += need[order[i]] + 1
                i += 1
            batch = [t for t in batch if need[t] > 0]
            if not batch:
                continue
            width = max(len(ids[t]) for t in batch)
            keep = max(need[t] for t in batch) + 1
            inp = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, t in enumerate(batch):
                inp[r, width - len(ids[t]):] = torch.as_tensor(ids[t], dtype=torch.long)
                mask[r, width - len(ids[t]):] = 1
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            dev = model.device
            logits = _forward(model.model, inp.to(dev), mask.to(dev), pos.to(dev), keep)
            logits = logits[:, :-1].float()  # position width-keep+j predicts token width-keep+j+1
            target = inp[:, width - keep + 1:].to(logits.device)
            lp = (logits.gather(-1, target.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, -1))
            lp = lp.double().cpu().numpy()
            if cost is not None:
                cost(forward_passes=1, queries=len(batch), lm_tokens=int(mask.sum()))
            for r, t in enumerate(batch):
                n_tok = len(ids[t]) - shift  # own tokens
                vals = lp[r, keep - 1 - need[t]:]  # the last need[t] predicted tokens
                out[t][1][n_tok - need[t]:] = vals
    return out


def _forward(model, input_ids, attention_mask, position_ids, keep: int):
    """The last ``keep`` positions' logits (``logits_to_keep`` where the model takes it)."""
    try:
        res = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                    use_cache=False, logits_to_keep=keep)
    except TypeError:
        res = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False)
    return res.logits[:, -keep:]
