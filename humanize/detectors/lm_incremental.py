"""Incremental scoring of growing texts by a causal-LM detector (the guide of token-mode guided decoding).

Token-mode Adversarial Paraphrasing scores, at every decoding step and for every row being decoded,
the row's committed answer with each candidate next token appended. A causal-LM detector's score is
a reduction over per-token statistics (:class:`~.lm_stats.TextStatistics`: log p of the token, its
rank, the entropy, the mean and variance of log p under the reference distribution), and the
statistics of a token depend only on the tokens before it. So, per row:

- the guide's key/value cache (and the reference model's, when there is one) over the *stable*
  prefix of the committed text is kept, with the statistics of its tokens: the text is re-tokenised
  with the GUIDE's tokenizer (the paraphraser's token ids are not the guide's) and all its tokens but
  the last ``hold`` are stable (BPE and SentencePiece merges change only the tokens at the end when
  text is appended); a committed text that extends the last one extends the cache by its new
  stable tokens (one forward pass of those tokens);
- each candidate text is tokenised in full; when its tokens start with the cached prefix, only its
  tail (typically ``hold + 1`` tokens) goes through the model, for all candidates of the row in ONE
  forward pass on the cached state repeated once per candidate row, and its statistics are the
  prefix's followed by the tail's. The committed text's new stable tokens (usually the one token
  that stopped being held back) are the common start of every tail, so :meth:`commit` only records
  them and that same pass extends the cache: one of its rows, cut back to the stable tokens, is the
  row's new cache (a cache that cannot be cut back, e.g. a sliding window, runs them as a pass of
  their own first). One forward pass per model per step, not two. A candidate whose tokens do not start with the cached prefix (a merge reaching further
  back) is scored from scratch, as :class:`~.lm_stats.LMStatistics` would. The last token of a tail
  needs no forward pass (the logits before it predict it), and tails that differ only there, or
  whose inputs are the start of another's, share one row of the pass: the usual step, where the
  held tokens are common and only the candidate token differs, runs ``hold`` positions in all.

The statistics are those of a full re-scoring up to floating-point rounding (the same tokens, the
same positions; a KV-cached pass rounds differently from one padded pass, about 1e-6 relative), and
the detector's own reduction turns them into scores. Nothing is written to the shared statistics
cache. Counters: ``texts`` (candidate texts scored), ``forward_passes`` and ``forward_tokens`` (new
positions run through the guide's model, reference passes counted apart), per row and in total.
"""
from __future__ import annotations

import copy
import inspect
from numbers import Integral
from typing import Any, Callable, Hashable, Iterable, Sequence

import numpy as np

from humanize.validation import Interval, validate_parameter_constraints

from .lm_stats import LMStatistics, TextStatistics, _cross_stats, _moments

__all__ = ["IncrementalStatistics", "IncrementalScorer", "DEFAULT_HOLD"]

#: Tokens at the end of a committed text that are not cached (a later append may re-merge them).
DEFAULT_HOLD = 2

_FIELDS = ("logprob", "rank", "entropy", "expected_logprob", "logprob_var")


class _Row:
    """One row's cached state: the stable guide token ids (BOS first when the tokenizer has one), each model's
    key/value cache over them and its logits after the last one, and the statistics of the scored ones."""

    __slots__ = ("ids", "caches", "last", "stats", "text", "counts", "pending")

    def __init__(self):
        self.ids: list[int] = []
        self.pending: list[int] = []  # stable tokens committed but not yet run (the next candidates' pass runs them)
        self.caches: list = []
        self.last: list = []
        self.stats = {f: np.zeros(0, dtype=np.int64 if f == "rank" else float) for f in _FIELDS}
        self.text = ""
        self.counts = {"texts": 0, "forward_passes": 0, "forward_tokens": 0, "rescored": 0}


class IncrementalStatistics:
    """Per-row key/value-cached :class:`~.lm_stats.TextStatistics` of growing texts.

    ``lm``, ``reference``, ``max_tokens``: as :class:`~.lm_stats.LMStatistics` (the statistics are
    the same, up to rounding). ``hold``: tokens at the end of a committed text left out of the cache.
    Rows are any hashable keys: :meth:`start` opens them, :meth:`commit` sets a row's committed
    text, :meth:`candidates` gives the statistics of texts that extend it.
    """

    def __init__(self, lm, *, reference=None, max_tokens: int = 512, hold: int = DEFAULT_HOLD):
        validate_parameter_constraints("IncrementalStatistics", {"hold": [Interval(Integral, 0, None)]},
                                       {"hold": hold})
        self._full = LMStatistics(lm, reference=reference, max_tokens=max_tokens, cache=False)
        self.lm, self.reference = self._full.lm, self._full.reference
        self.max_tokens, self.hold = self._full.max_tokens, int(hold)
        self.models = [self.lm] + ([self.reference] if self.reference is not None else [])
        self._kw = []
        for m in self.models:
            params = inspect.signature(m.model.forward).parameters
            self._kw.append("cache" if "cache" in params else "past_key_values")
        self.rows: dict[Hashable, _Row] = {}
        self.totals = {"texts": 0, "forward_passes": 0, "forward_tokens": 0, "rescored": 0}

    # -- rows ---------------------------------------------------------------------------
    def start(self, rows: Iterable[Hashable]) -> None:
        """Forget every row; open ``rows`` with an empty committed text."""
        self.rows = {r: _Row() for r in rows}

    def counts(self, row: Hashable) -> dict:
        """``texts``, ``forward_passes``, ``forward_tokens``, ``rescored`` (candidates scored from scratch) of a row."""
        return dict(self._row(row).counts)

    def _row(self, row: Hashable) -> _Row:
        try:
            return self.rows[row]
        except KeyError:
            raise KeyError(f"IncrementalStatistics: row {row!r} was not started") from None

    def _encode(self, texts: Sequence[str], extra: int = 0) -> tuple[list[list[int]], list[bool]]:
        """Guide ids of each text as LMStatistics scores them (BOS, then at most ``max_tokens`` tokens)
        and whether it was cut; ``extra`` more tokens are kept (to see past the scored ones)."""
        from humanize.models.scoring import encode_for_scoring

        ids, _, has_bos = encode_for_scoring(self.lm, list(texts), max_tokens=self.max_tokens + 1 + extra)
        keep = self.max_tokens + (1 if has_bos else 0)
        return [seq[:keep + extra] for seq in ids], [len(seq) > keep for seq in ids]

    def _keep(self) -> int:
        bos = getattr(self.lm.tokenizer, "bos_token_id", None) is not None
        return self.max_tokens + (1 if bos else 0)

    def commit(self, row: Hashable, text: str) -> None:
        """The row's committed text is now ``text`` (normally the last one with the chosen token's text
        appended); the cache grows by the new stable tokens, or is rebuilt when they do not extend it."""
        state = self._row(row)
        state.text = text
        (ids,), _ = self._encode([text], extra=self.hold)
        # the BOS is always stable: the cache then starts with the first text
        stable = ids[:min(self._keep(), max(len(ids) - self.hold, int(_has_bos(self.lm))))]
        if stable[:len(state.ids)] != state.ids:
            fresh = _Row()
            fresh.counts, fresh.text = state.counts, text
            self.rows[row] = state = fresh
        # run by the next candidates' pass (they all start with them), or now when nothing is cached yet
        state.pending = stable[len(state.ids):]
        if state.pending and not state.ids:
            self._flush(state)

    def _flush(self, state: _Row) -> None:
        """Run the row's pending stable tokens as a pass of their own."""
        new, state.pending = state.pending, []
        if new:
            self._extend(state, new)

    def extend(self, row: Hashable, text: str) -> None:
        """Append ``text`` to the row's committed text (:meth:`commit` of the concatenation)."""
        self.commit(row, self._row(row).text + text)

    def _count(self, state: _Row, passes: int, tokens: int) -> None:
        for d in (state.counts, self.totals):
            d["forward_passes"] += passes
            d["forward_tokens"] += tokens

    def _forward(self, k: int, ids, cache, offset: int):
        """Model ``k`` on ``ids`` (rows x width) after ``offset`` cached positions: (fp32 logits, cache)."""
        import torch

        lm = self.models[k]
        rows, width = ids.shape
        kwargs = {"input_ids": ids.to(lm.device), "use_cache": True,
                  "attention_mask": torch.ones((rows, offset + width), dtype=torch.long, device=lm.device),
                  "position_ids": (offset + torch.arange(width, device=lm.device)).expand(rows, width)}
        if cache is not None:
            kwargs[self._kw[k]] = cache
        out = lm.model(**kwargs)
        new = getattr(out, "cache", None)
        return out.logits.float(), (new if new is not None else out.past_key_values)

    def _extend(self, state: _Row, new: list[int]) -> None:
        """Run the stable tokens ``new`` on the row's caches; append their statistics."""
        import torch

        offset = len(state.ids)
        x = torch.as_tensor([new], dtype=torch.long)
        preds = []
        for k in range(len(self.models)):
            with torch.inference_mode():
                logits, cache = self._forward(k, x, state.caches[k] if k < len(state.caches) else None,
                                              offset)
            if len(state.caches) <= k:
                state.caches.append(cache)
                state.last.append(None)
            else:
                state.caches[k] = cache
            rows = logits[0]
            # the logits predicting ``new``: the previous last ones, then all but the new last
            pred = rows[:-1] if state.last[k] is None else torch.cat([state.last[k][None], rows[:-1]])
            state.last[k] = rows[-1]
            preds.append(pred)
        self._count(state, len(self.models), len(new) * len(self.models))
        scored = new if offset else new[1:]  # with no position before it, the first token is context only
        if scored:
            stats = self._stats([p[-len(scored):] for p in preds], scored)
            for f in _FIELDS:
                state.stats[f] = np.concatenate([state.stats[f], stats[f]])
        state.ids = state.ids + new

    def _stats(self, preds: list, target: list[int]) -> dict:
        """The statistics of tokens ``target`` from the logits predicting them, one row each (scoring model, then
        reference)."""
        return self._stats_at(preds, list(range(len(target))), target)

    def _stats_at(self, preds: list, index: list[int], target: list[int]) -> dict:
        """The statistics of tokens ``target``, each predicted by row ``index[j]`` of ``preds`` (per model: distinct
        predicting logits, scoring model first): the same values as :meth:`_stats` of the rows ``preds[k][index]``,
        with the whole-vocabulary reductions (log-normaliser, entropy, moments) done once per distinct row."""
        import torch

        logits = preds[0]
        lse = torch.logsumexp(logits, dim=-1)
        logp = logits - lse.unsqueeze(-1)
        mean, var = _moments(logp.exp(), logp)
        entropy = (-mean).double().cpu().numpy()
        if len(preds) > 1:
            mean, var = _cross_stats(preds[1].to(logits.device), logits)
        else:
            mean, var = mean.double().cpu().numpy(), var.double().cpu().numpy()
        ix = torch.as_tensor(index, dtype=torch.long, device=logits.device)
        rows = logits[ix]
        observed = rows.gather(-1, torch.as_tensor(target, dtype=torch.long, device=logits.device).unsqueeze(-1))
        rank = 1 + (rows > observed).sum(-1)  # ties count in the token's favour
        pick = ix.cpu().numpy()
        return dict(logprob=(observed.squeeze(-1) - lse[ix]).double().cpu().numpy(),
                    rank=rank.cpu().numpy().astype(np.int64), entropy=entropy[pick], expected_logprob=mean[pick],
                    logprob_var=var[pick])

    # -- candidates -------------------------------------------------------------------------
    def candidates(self, row: Hashable, texts: Sequence[str]) -> list[TextStatistics]:
        """Statistics of each of ``texts`` (each normally the row's committed text plus a candidate token)."""
        import torch

        state = self._row(row)
        texts = list(texts)
        if not texts:
            return []
        ids, truncated = self._encode(texts)
        pending = state.pending
        target = state.ids + pending
        if pending and not all(_croppable(c) for c in state.caches):  # they cannot ride along: their own pass first
            self._flush(state)
            pending, target = [], state.ids
        n = len(state.ids)
        inc = [i for i, c in enumerate(ids) if n and len(c) >= n and c[:n] == state.ids]
        full = [i for i in range(len(texts)) if i not in set(inc)]
        out: list[Any] = [None] * len(texts)
        if full:
            for i, s in zip(full, self._full([texts[i] for i in full])):
                out[i] = s
            # a from-scratch text is one pass per model over its tokens (LMStatistics batches them)
            for d in (state.counts, self.totals):
                d["rescored"] += len(full)
            self._count(state, len(self.models), sum(len(ids[i]) for i in full) * len(self.models))
        tails = {i: ids[i][n:] for i in inc}
        # the inputs to run: each tail but its last token (the logits after the cached prefix predict the
        # first); an input that is the start of another's is read off that one's row (causal attention)
        inputs = {i: tuple(tails[i][:-1]) for i in inc if len(tails[i]) > 1}
        if pending:  # the pending tokens ride along: normally the start of every candidate's row
            inputs[-1] = tuple(pending)
        rows: list[tuple] = []
        for seq in sorted(set(inputs.values()), key=lambda q: (-len(q), q)):
            if not any(r[:len(seq)] == seq for r in rows):
                rows.append(seq)
        passes, where = [], {}  # per model: the pass's logits (rows x width x vocab); each input's row
        carried = []  # per model: (its cache cut back to the stable tokens, the logits of the pending tokens' row)
        if rows:
            width = len(rows[0])
            x = torch.as_tensor([list(r) + [r[0]] * (width - len(r)) for r in rows], dtype=torch.long)
            where = {i: next(j for j, r in enumerate(rows) if r[:len(q)] == q) for i, q in inputs.items()}
            for k in range(len(self.models)):
                # the pass carries the pending tokens: the row's cache is repeated in place (it is replaced
                # by one row of the result); otherwise it is left as it is and a copy is repeated
                cache = state.caches[k]
                if pending:
                    cache.batch_repeat_interleave(len(rows))
                else:
                    cache = _fork(cache, len(rows))
                try:
                    with torch.inference_mode():
                        logits, cache = self._forward(k, x, cache, n)
                except BaseException:
                    if pending:  # the cache was changed in place: forget the row's state
                        self.rows[row] = fresh = _Row()
                        fresh.counts, fresh.text = state.counts, state.text
                    raise
                passes.append(logits)
                if pending:
                    j = where[-1]
                    cache.batch_select_indices(torch.as_tensor([j], dtype=torch.long, device=logits.device))
                    cache.crop(-(cache.get_seq_length() - len(target)))  # a negative count: tokens to remove
                    carried.append((cache, logits[j, :len(pending)]))
            self._count(state, len(self.models), sum(len(r) for r in rows) * len(self.models))
        # the logits predicting each tail token: the cached last ones for the first, then its row's positions;
        # candidates share them (usually all but the last token's target), so each distinct one is reduced once
        keys: dict = {}
        at = {i: [keys.setdefault((-1, 0) if p == 0 else (where[i], p - 1), len(keys)) for p in range(len(tails[i]))]
              for i in inc}
        got = {}
        if keys:
            preds = [torch.stack([state.last[k] if r < 0 else passes[k][r, p] for r, p in keys])
                     for k in range(len(self.models))]
            flat = self._stats_at(preds, [u for i in inc for u in at[i]], [t for i in inc for t in tails[i]])
            start = 0
            for i in inc:
                got[i] = {f: v[start:start + len(tails[i])] for f, v in flat.items()}
                start += len(tails[i])
        for i in inc:
            stats = {f: state.stats[f] for f in _FIELDS}
            if tails[i]:
                stats = {f: np.concatenate([stats[f], got[i][f]]) for f in _FIELDS}
            out[i] = TextStatistics(token_ids=np.asarray(ids[i][1:], dtype=np.int64), truncated=truncated[i],
                                    **stats)
        for d in (state.counts, self.totals):
            d["texts"] += len(texts)
        if pending:
            self._carry(state, pending, carried)
        return out

    def _carry(self, state: _Row, pending: list[int], carried: list) -> None:
        """Take the pending tokens' cache and statistics from the candidates' pass (:meth:`_extend` without a pass)."""
        import torch

        preds = []
        for k, (cache, rows) in enumerate(carried):
            preds.append(torch.cat([state.last[k][None], rows[:-1]]))  # the logits predicting ``pending``
            state.caches[k], state.last[k] = cache, rows[-1]
        stats = self._stats(preds, pending)
        for f in _FIELDS:
            state.stats[f] = np.concatenate([state.stats[f], stats[f]])
        state.ids, state.pending = state.ids + pending, []


def _has_bos(lm) -> bool:
    return getattr(lm.tokenizer, "bos_token_id", None) is not None


def _croppable(cache) -> bool:
    """Whether a key/value cache can be cut back to its first positions and select its rows (a sliding window
    or a recurrent state cannot)."""
    ok = getattr(cache, "is_croppable", True)
    return bool(ok) and callable(getattr(cache, "crop", None)) and callable(getattr(cache, "batch_select_indices", None))


def _fork(cache, n: int):
    """A copy of a batch-1 key/value cache repeated ``n`` times along the batch (the original is not changed)."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        new = copy.copy(cache)
        new.layers = [copy.copy(layer) for layer in layers]  # the copies' tensors are replaced, never written to
    else:
        new = copy.deepcopy(cache)
    new.batch_repeat_interleave(n)
    return new


class IncrementalScorer:
    """A detector's scores of growing texts from :class:`IncrementalStatistics`.

    ``reduce(list of TextStatistics) -> scores`` is the detector's own reduction (what its
    ``score`` applies to its statistics). :meth:`start`, :meth:`commit`, :meth:`extend` as on the
    statistics; :meth:`score_candidates` scores one row's candidates, :meth:`score_steps` every row's
    of one decoding step. ``on_query(n_texts)``, when set, is called once per scoring call (a
    :class:`~humanize.detectors.target.Target` counts its queries and calls with it).
    """

    def __init__(self, stats: IncrementalStatistics, reduce: Callable[[list], np.ndarray], name: str = ""):
        self.statistics, self.reduce, self.name = stats, reduce, name
        self.on_query: Callable[[int], None] | None = None

    def start(self, rows: Iterable[Hashable]) -> None:
        self.statistics.start(rows)

    def commit(self, row: Hashable, text: str) -> None:
        self.statistics.commit(row, text)

    def extend(self, row: Hashable, text: str) -> None:
        self.statistics.extend(row, text)

    def counts(self, row: Hashable) -> dict:
        return self.statistics.counts(row)

    @property
    def totals(self) -> dict:
        return dict(self.statistics.totals)

    def score_candidates(self, row: Hashable, texts: Sequence[str]) -> np.ndarray:
        """Scores of ``texts`` (higher = more machine-like; NaN where the detector's is undefined)."""
        out = self._score(row, texts)
        if self.on_query is not None:
            self.on_query(len(out))
        return out

    def _score(self, row: Hashable, texts: Sequence[str]) -> np.ndarray:
        stats = self.statistics.candidates(row, texts)
        if not stats:
            return np.zeros(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(self.reduce(stats), dtype=float)

    def score_steps(self, items: Sequence[tuple[Hashable, Sequence[str]]]) -> list[np.ndarray]:
        """:meth:`score_candidates` of each ``(row, texts)``, one scoring call."""
        out = [self._score(r, t) for r, t in items]
        if self.on_query is not None:
            self.on_query(sum(len(o) for o in out))
        return out
