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

in nats, the left context being the previous sentence and the sentence up to the word, after the
model's BOS token; a model without one (Qwen2.5) gets its EOS token there instead, as lm-eval-harness
prefixes a loglikelihood request whose context is empty (``prefix_token_id``), so that the first word of a
text has a left context too and its swaps get a score rather than NaN. ``delta`` near 0: the model finds the sentence about as
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
import os
from typing import Any, Sequence

import numpy as np

__all__ = ["CONTEXT_THRESHOLD", "context_deltas", "sentence_spans", "PACKED_CONTEXT_ENV"]

#: Set to ``0`` to run every swap's variant whole instead of as a branch of its original (the path before
#: issue #38), for before/after benchmarks; the values agree up to float rounding.
PACKED_CONTEXT_ENV = "HUMANIZE_PACKED_CONTEXT"

#: A swap fits its context for the meter when ``delta >= CONTEXT_THRESHOLD`` nats under the meter's model
#: (SmolLM2-135M). Chosen on the 137 swaps of ``tests/quality/data/context_swaps.json``, labelled by reading
#: them in context: at -3.0, 8% of the invalid swaps pass (7 of 87) and 56% of the valid ones do (28 of 50);
#: docs/guide/quality.md gives the whole curve.
CONTEXT_THRESHOLD = -3.0

#: kept logits per forward pass (a row of Gemma's logits is 1 MiB in float32)
_MAX_KEPT = 96
#: the packed path (:func:`_packed_logprobs`): at most this many bytes of float32 logits per forward pass, this
#: many tokens (padding included) per batch, and this many per packed row (an original window and its variants)
_KEPT_BYTES = 1 << 27
_BATCH_TOKENS = 4096
_ROW_TOKENS = 1024
#: in reduced precision (one row per pass), a document's packed rows share a sequence of at most this many tokens:
#: longer, the attention over the whole sequence (its mask is block-diagonal, its cost is not) outweighs the
#: passes saved
_MERGE_TOKENS = 512


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
                   cost: Any = None, packed: bool | None = None, dtype: Any = None) -> np.ndarray:
    """``delta`` (module docstring) for each ``(text, start, end, replacement)``: ``text[start:end]``
    replaced by ``replacement``, in nats under the causal LM ``lm`` (a name or a loaded model).

    Each distinct original window goes through the model once, and each swap's variant only from the
    first token where it differs, as a branch of its original in one packed sequence
    (:func:`_packed_logprobs`: the shared tokens before the word are not run again per swap); packed rows
    are batched by length within a token budget (in reduced precision, where a row runs alone, the rows of one
    document share one sequence instead), only the logits of the scored tokens computed.
    ``packed=False`` (default: on unless ``$HUMANIZE_PACKED_CONTEXT`` is ``0``), or a model whose attention takes no custom mask (not ``sdpa`` or ``eager``, or a
    sliding window shorter than a window), runs every variant whole instead (:func:`_token_logprobs`): the
    same values up to float rounding. NaN where the word's span reaches no scored token. The model's
    batches are counted in ``lm_stats.cache_info()["passes"]["context"]``. ``cost``, when given, is
    called with ``forward_passes=``, ``queries=`` and ``lm_tokens=``.
    """
    from humanize.quality.perplexity import get_lm

    items = list(items)
    if not items:
        return np.zeros(0)
    model = get_lm(lm, device, dtype)
    seqs: dict[str, int] = {}  # window text -> row
    rows_text: list[str] = []
    documents: list[str] = []  # per row: the text it was cut from (the least, where texts share a window)
    jobs = []  # (original row, variant row, cut in window)
    for text, start, end, repl in items:
        lo, hi = _window(text, start, end)
        orig = text[lo:hi]
        var = text[lo:start] + repl + text[end:hi]
        for w in (orig, var):
            if w not in seqs:
                seqs[w] = len(rows_text)
                rows_text.append(w)
                documents.append(text)
            elif text < documents[seqs[w]]:
                documents[seqs[w]] = text
        jobs.append((seqs[orig], seqs[var], start - lo))
    # the earliest cut of each row: its logits are kept from there on
    first_cut = [math.inf] * len(rows_text)
    for o, v, cut in jobs:
        first_cut[o] = min(first_cut[o], cut)
        first_cut[v] = min(first_cut[v], cut)
    originals = {o for o, _, _ in jobs}
    parent: list = [None] * len(rows_text)  # a variant's original window (a row that is also an original has none)
    for o, v, _ in jobs:
        if v not in originals and parent[v] is None:
            parent[v] = o
    if packed is None:
        packed = os.environ.get(PACKED_CONTEXT_ENV, "1").strip() != "0"
    per_token = _packed_logprobs(model, rows_text, first_cut, parent, cost, documents) if packed else None
    if per_token is None:
        per_token = _token_logprobs(model, rows_text, first_cut, cost)
    out = np.empty(len(jobs))
    for j, (o, v, cut) in enumerate(jobs):
        a = _tail(per_token[o], cut)
        b = _tail(per_token[v], cut)
        out[j] = b - a if (a == a and b == b) else math.nan
    return out


def _encode(model, texts: list[str]):
    """``encode_for_scoring``'s ids (BOS first where the tokenizer has one) and spans; a tokenizer without a BOS
    token gets its EOS token first instead (lm-eval-harness's prefix for an empty context), so the text's first
    token is predicted from something. ``has_start`` is True when a first token was added."""
    from humanize.models.scoring import encode_for_scoring

    ids, spans, has_bos = encode_for_scoring(model, texts, offsets=True)
    if has_bos:
        return ids, spans, True
    eos = getattr(model.tokenizer, "eos_token_id", None)
    if eos is None:
        return ids, spans, False
    return [[int(eos)] + list(seq) for seq in ids], spans, True


def _tail(row: tuple[np.ndarray, np.ndarray], cut: int) -> float:
    """Sum of the log-probabilities of the tokens ending after character ``cut``."""
    ends, lps = row
    pick = ends > cut
    if not pick.any() or np.isnan(lps[pick]).any():
        return math.nan
    return float(lps[pick].sum())


def _packed_logprobs(model, texts: list[str], cuts: list[float], parent: list, cost, documents: list):
    """:func:`_token_logprobs`'s values, each variant computed as a branch of its original window.

    ``parent[t]``: the row of the original window that row ``t`` (a variant) was made from, or None for an
    original. A variant shares its token ids with its original up to the swapped word; those tokens are not run
    again: its remaining tokens follow the original's in one packed sequence, with the position ids they have in
    the variant and an attention mask that lets them see the original's tokens before the branch point and their
    own earlier tokens only. By causality every log-probability is the one a pass over the variant alone gives,
    up to float rounding. Packed rows are sorted by length and batched within a token budget. None where the
    model's attention cannot take such a mask (then :func:`_token_logprobs` runs).

    In reduced precision a forward pass holds one row (:func:`~humanize.models.scoring.one_row_per_batch`), and a
    pass over a 70-token window costs half of one over 300 (the weights are read whatever the length). There the
    packed rows of one document (``documents[t]``: the text row ``t`` was cut from) are laid end to end in one
    sequence of at most :data:`_MERGE_TOKENS`, each a block of its own in the mask, its positions its own, and
    only the scored positions' logits computed: the same values up to float rounding, in fewer and fuller passes
    (the demo's validity meter: 14.5 -> 12.0 s). A document's sequences depend on its own rows only (their content
    fixes their order), not on the other documents of the call."""
    import torch

    from humanize.models.scoring import STATISTICS_CACHE, kept_logits, one_row_per_batch

    net = model.model
    config = getattr(net, "config", None)
    impl = getattr(config, "_attn_implementation", None)
    if impl not in ("sdpa", "eager"):
        return None
    ids, spans, has_bos = _encode(model, texts)
    window = _sliding_window(config)
    if window is not None and max(len(s) for s in ids) > window:
        return None  # a sliding-window layer would mask what the packed mask lets through
    shift = int(has_bos)
    need, out = [], []
    for t, (seq, sp) in enumerate(zip(ids, spans)):
        ends = sp[:, 1] if len(sp) else np.zeros(0, dtype=np.int64)
        need.append(min(int((ends > cuts[t]).sum()), len(seq) - 1))
        out.append((ends, np.full(len(ends), np.nan)))
    # the branches of each original: (row, branch point b); the branch runs ids[row][b:] at positions b, b+1, ...
    branches: dict[int, list[tuple[int, int]]] = {}
    for t, o in enumerate(parent):
        if o is None or need[t] == 0:
            continue
        first = len(ids[t]) - need[t]  # the first target whose log-probability is needed
        lcp = _common_prefix(ids[t], ids[o])
        branches.setdefault(o, []).append((t, max(0, min(lcp, first) - 1)))
    # packed rows: (trunk row, trunk tokens, whether its own logits are needed, branches)
    rows = []
    for o in sorted(set(branches) | {t for t in range(len(texts)) if parent[t] is None and need[t] > 0}):
        todo, own = branches.get(o, []), parent[o] is None and need[o] > 0
        while True:  # a trunk with more branches than one row holds is repeated in the next row
            part, length = [], len(ids[o])
            while todo and (not part or length + len(ids[todo[0][0]]) - todo[0][1] <= _ROW_TOKENS):
                t, b = todo.pop(0)
                part.append((t, b))
                length += len(ids[t]) - b
            rows.append((o, len(ids[o]) if own else max(b for _, b in part), own, part))
            own = False
            if not todo:
                break
    # each packed row: ids, position ids, its blocks (start in row, trunk length, branches as (start in row, branch
    # point, length)) and the (row position predicting, target id, text row, token index in out[text]) to read
    packed, owner = [], []
    for o, trunk, own, part in rows:
        tok = list(ids[o][:trunk])
        pos = list(range(trunk))
        spans_ = []
        reads = []
        if own:
            for j in range(len(ids[o]) - 1 - need[o], len(ids[o]) - 1):
                reads.append((j, ids[o][j + 1], o, j + 1 - shift))
        for t, b in part:
            start = len(tok)
            tok += ids[t][b:]
            pos += range(b, len(ids[t]))
            spans_.append((start, b, len(ids[t]) - b))
            for q in range(len(ids[t]) - 1 - need[t], len(ids[t]) - 1):
                reads.append((start + q - b, ids[t][q + 1], t, q + 1 - shift))
        packed.append((tok, pos, [(0, trunk, spans_)], reads))
        owner.append(o)
    single = one_row_per_batch(model)  # a row's values must not depend on the rows batched with it
    if single:
        limit = _MERGE_TOKENS if window is None else min(_MERGE_TOKENS, window)
        packed = _merged_by_document(packed, [documents[o] for o in owner], limit)
    order = sorted(range(len(packed)), key=lambda r: (len(packed[r][0]), r))
    pad = getattr(model.tokenizer, "pad_token_id", None)
    pad = 0 if pad is None else int(pad)
    vocab = int(getattr(config, "vocab_size", 0) or 50_000)
    max_kept = max(1, _KEPT_BYTES // (4 * vocab))
    i = 0
    with torch.inference_mode():
        while i < len(order):
            batch = [order[i]]
            i += 1
            while i < len(order) and not single:
                width = len(packed[order[i]][0])  # the longest so far: sorted by length
                kept = max(_kept(packed[r]) for r in (*batch, order[i]))
                if (len(batch) + 1) * width > _BATCH_TOKENS or (len(batch) + 1) * kept > max_kept:
                    break
                batch.append(order[i])
                i += 1
            width = max(len(packed[r][0]) for r in batch)
            inp = torch.full((len(batch), width), pad, dtype=torch.long)
            position = torch.zeros((len(batch), width), dtype=torch.long)
            allowed = torch.zeros((len(batch), 1, width, width), dtype=torch.bool)
            allowed[:, 0].diagonal(dim1=-2, dim2=-1).fill_(True)  # a padding query sees itself: no empty softmax
            tokens = 0
            for r, k in enumerate(batch):
                tok, pos, blocks, _ = packed[k]
                off = width - len(tok)  # left padding: the kept logits are every row's last positions
                tokens += len(tok)
                inp[r, off:] = torch.as_tensor(tok, dtype=torch.long)
                position[r, off:] = torch.as_tensor(pos, dtype=torch.long)
                for at, trunk, spans_ in blocks:
                    a = off + at
                    allowed[r, 0, a:a + trunk, a:a + trunk] = torch.ones(trunk, trunk, dtype=torch.bool).tril()
                    for start, b, n in spans_:
                        s = off + start
                        allowed[r, 0, s:s + n, a:a + b] = True
                        allowed[r, 0, s:s + n, s:s + n] = torch.ones(n, n, dtype=torch.bool).tril()
            STATISTICS_CACHE.count_pass("context", rows=len(batch), width=width, tokens=tokens)
            mask = allowed if impl == "sdpa" else \
                torch.zeros(allowed.shape, dtype=net.dtype).masked_fill(~allowed, torch.finfo(net.dtype).min)
            dev = model.device
            if single:  # one row: the logits of its scored positions only
                where = sorted({p for p, *_ in packed[batch[0]][3]})
                keep = torch.as_tensor(where, dtype=torch.long)
                index = {p: j for j, p in enumerate(where)}
                at = [(0, index[p], target, t, j) for p, target, t, j in packed[batch[0]][3]]
            else:
                keep = max(_kept(packed[r]) for r in batch)
                at = [(r, p + keep - len(packed[k][0]), target, t, j)  # row position p is kept index p + keep - len
                      for r, k in enumerate(batch) for p, target, t, j in packed[k][3]]
            logits = kept_logits(net, keep, input_ids=inp.to(dev), attention_mask=mask.to(dev),
                                 position_ids=position.to(dev)).float()
            norm = torch.logsumexp(logits, -1).cpu()
            logits = logits.cpu()
            if cost is not None:
                cost(forward_passes=1, queries=sum(1 + sum(len(b[2]) for b in packed[k][2]) for k in batch),
                     lm_tokens=tokens)
            r_, p_, target_ = (torch.as_tensor([a[i] for a in at], dtype=torch.long) for i in range(3))
            values = (logits[r_, p_, target_] - norm[r_, p_]).double().numpy()
            for (_, _, _, t, j), v in zip(at, values):
                out[t][1][j] = v
    return out


def _merged_by_document(packed: list, documents: list, limit: int) -> list:
    """The packed rows of each document laid end to end, in sequences of at most ``limit`` tokens (a row longer
    than that stays alone): positions and reads shifted, each row a block of its own. A document's rows go in
    the order of their content, so its sequences do not depend on the order the rows were made in."""
    by_doc: dict = {}
    for k, doc in enumerate(documents):
        by_doc.setdefault(doc, []).append(k)
    merged = []
    for doc in sorted(by_doc):
        current = None
        for k in sorted(by_doc[doc], key=lambda k: (len(packed[k][0]), packed[k][0])):
            tok, pos, blocks, reads = packed[k]
            if current is None or len(current[0]) + len(tok) > limit:
                current = ([], [], [], [])
                merged.append(current)
            at = len(current[0])
            current[0].extend(tok)
            current[1].extend(pos)
            current[2].extend((start + at, trunk, [(s + at, b, n) for s, b, n in spans_])
                              for start, trunk, spans_ in blocks)
            current[3].extend((p + at, target, t, j) for p, target, t, j in reads)
    return merged


def _kept(row) -> int:
    """Logit positions a packed row needs: from its first read to its end."""
    tok, _, _, reads = row
    return len(tok) - min(p for p, *_ in reads) if reads else 1


def _common_prefix(a, b) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _sliding_window(config):
    """The model's sliding attention window where one of its layers uses it, else None."""
    window = getattr(config, "sliding_window", None)
    if not window:
        return None
    types = getattr(config, "layer_types", None)
    if types is not None and "sliding_attention" not in types:
        return None
    if getattr(config, "use_sliding_window", True) is False:
        return None
    return int(window)


def _token_logprobs(model, texts: list[str], cuts: list[float], cost) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per text: (token end offsets, log p(token | before)) for the tokens ending after ``cuts[i]`` (others NaN)."""
    import torch

    from humanize.models.scoring import STATISTICS_CACHE, kept_logits, one_row_per_batch

    ids, spans, has_bos = _encode(model, texts)
    shift = int(has_bos)
    single = one_row_per_batch(model)  # a row's values must not depend on the rows batched with it
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
            while i < len(order) and (not batch or (not single and kept + need[order[i]] + 1 <= _MAX_KEPT)):
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
            logits = kept_logits(model.model, keep, input_ids=inp.to(dev), attention_mask=mask.to(dev),
                                 position_ids=pos.to(dev))
            logits = logits[:, :-1].float()  # position width-keep+j predicts token width-keep+j+1
            target = inp[:, width - keep + 1:].to(logits.device)
            lp = (logits.gather(-1, target.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, -1))
            lp = lp.double().cpu().numpy()
            STATISTICS_CACHE.count_pass("context", rows=len(batch), width=width, tokens=int(mask.sum()))
            if cost is not None:
                cost(forward_passes=1, queries=len(batch), lm_tokens=int(mask.sum()))
            for r, t in enumerate(batch):
                n_tok = len(ids[t]) - shift  # own tokens
                vals = lp[r, keep - 1 - need[t]:]  # the last need[t] predicted tokens
                out[t][1][n_tok - need[t]:] = vals
    return out
