"""Per-text statistics of a causal LM, shared by every metric detector.

One forward pass per text yields everything the metric detectors need
(RAID Section 5 / Appendix F.1; TH-Bench Section 2.1): for each scored token
``x_t`` its log-probability ``log p(x_t | x_<t)``, its 1-based rank among the
vocabulary, the entropy of ``p(. | x_<t)`` and, for Fast-DetectGPT (Bao et al.,
2024, analytic form) and Binoculars (Hans et al., 2024), the mean and variance
of ``log p(v | x_<t)`` for ``v`` drawn from a reference distribution ``q``
(``q = p`` when no reference model is given).

Texts are encoded by :func:`humanize.models.scoring.encode_for_scoring` (the
tokenizer's BOS is prepended when it has one, so the first token of the text is
scored too); only the first ``max_tokens`` tokens of a text are scored (512 by
default, as in Binoculars). Uncached texts run in length-sorted, right-padded
batches under ``torch.inference_mode()``. Results are kept in a bounded
per-process LRU cache keyed by (model identity, reference identity,
max_tokens, text hash), so detectors that share a scoring model cost one
forward pass per text in total; perplexity under the same model reads its
log-probabilities from there too (:func:`humanize.models.scoring.shared_logprobs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from numbers import Integral

import numpy as np

from humanize.validation import Interval, check_texts, validate_parameter_constraints
from humanize.models.scoring import STATISTICS_CACHE, model_key, text_key

__all__ = [
    "TextStatistics", "LMStatistics", "check_same_tokenizer", "clear_cache", "cache_info", "set_cache_size",
    "DEFAULT_MAX_TOKENS", "DEFAULT_CACHE_SIZE",
]

DEFAULT_MAX_TOKENS = 512
DEFAULT_CACHE_SIZE = STATISTICS_CACHE.maxsize  # 4096 texts
#: fp32 logits of one batch are kept near this many bytes when ``batch_tokens`` is None.
_BATCH_LOGIT_BYTES = 256 * 2**20


@dataclass(frozen=True, eq=False)
class TextStatistics:
    """Statistics of the scored tokens of one text (arrays of equal length ``n_tokens``).

    ``expected_logprob[t] = E_{v~q}[log p(v | x_<t)]`` and ``logprob_var[t] =
    Var_{v~q}[log p(v | x_<t)]`` where ``p`` is the scoring model and ``q`` the
    reference model (``q = p``, i.e. ``expected_logprob = -entropy``, without one).
    """

    token_ids: np.ndarray
    logprob: np.ndarray
    rank: np.ndarray
    entropy: np.ndarray
    expected_logprob: np.ndarray
    logprob_var: np.ndarray
    #: True when the text had more than ``max_tokens`` tokens and was cut.
    truncated: bool

    @property
    def n_tokens(self) -> int:
        return int(self.token_ids.shape[0])


#: The shared cache lives in humanize.models.scoring, where perplexity reads it too (one pass serves both).
_CACHE = STATISTICS_CACHE


def clear_cache() -> None:
    """Forget every cached statistic (and reset the counters of :func:`cache_info`)."""
    _CACHE.clear()


def cache_info() -> dict:
    """``hits``, ``misses``, ``size``, ``maxsize``, how many texts/batches went through a model,
    ``shared_hits``: texts whose perplexity was read from the cache instead of a forward pass, and
    ``passes``: per pass (``statistics``: the detectors', ``sequence``: perplexity's own windows), its
    ``batches``, ``rows``, real ``tokens`` and ``padding`` tokens."""
    return {"hits": _CACHE.hits, "misses": _CACHE.misses, "size": len(_CACHE), "maxsize": _CACHE.maxsize,
            "forward_texts": _CACHE.forward_texts, "forward_batches": _CACHE.forward_batches,
            "shared_hits": _CACHE.shared_hits, "passes": {k: dict(v) for k, v in _CACHE.passes.items()}}


def set_cache_size(maxsize: int) -> None:
    """Bound the cache to ``maxsize`` texts per (model, reference, max_tokens); 0 disables it."""
    validate_parameter_constraints("set_cache_size", {"maxsize": [Interval(Integral, 0, None)]},
                                   {"maxsize": maxsize})
    _CACHE.resize(int(maxsize))


_model_key = model_key
_text_key = text_key


def check_same_tokenizer(a, b, what: str = "reference model and scoring model") -> None:
    """Raise ValueError unless LoadedModels ``a`` and ``b`` have the same vocabulary (token -> id)."""
    if a is b or a.tokenizer is b.tokenizer:
        return
    va, vb = a.tokenizer.get_vocab(), b.tokenizer.get_vocab()
    if va == vb:
        return
    diff = sorted(set(va.items()) ^ set(vb.items()), key=lambda kv: kv[1])[:3]
    raise ValueError(
        f"the {what} must share a tokenizer: {a.resolved!r} has {len(va)} tokens, {b.resolved!r} has "
        f"{len(vb)}, and they differ (e.g. {', '.join(f'{t!r}->{i}' for t, i in diff)}); "
        f"pick two models of the same family (e.g. tiiuae/falcon-7b with tiiuae/falcon-7b-instruct)")


#: The token limits every metric detector (and :class:`LMStatistics`) takes.
LM_CONSTRAINTS = {
    "max_tokens": [Interval(Integral, 1, None)],
    "batch_tokens": [Interval(Integral, 1, None), None],
}


class LMStatistics:
    """Compute (or fetch from the cache) :class:`TextStatistics` for texts.

    ``lm`` is the scoring model (a :class:`humanize.models.LoadedModel`);
    ``reference`` an optional second causal LM with the same tokenizer whose
    next-token distribution ``q`` weights ``expected_logprob``/``logprob_var``.
    ``batch_tokens`` bounds rows x padded length of one forward batch (None:
    about 256 MiB of fp32 logits). ``cache=False`` bypasses the shared cache.
    """

    def __init__(self, lm, *, reference=None, max_tokens: int = DEFAULT_MAX_TOKENS,
                 batch_tokens: Optional[int] = None, cache: bool = True):
        for m, label in ((lm, "lm"), (reference, "reference")):
            if m is None and label == "reference":
                continue
            if not (hasattr(m, "model") and hasattr(m, "tokenizer") and hasattr(m, "resolved")):
                raise TypeError(f"{label} must be a humanize.models.LoadedModel, got {type(m).__name__}")
            if getattr(m, "kind", "causal_lm") != "causal_lm":
                raise ValueError(f"{label} must be a causal LM, got a {m.kind} ({m.resolved})")
        validate_parameter_constraints("LMStatistics", {**LM_CONSTRAINTS, "cache": ["boolean"]},
                                       {"max_tokens": max_tokens, "batch_tokens": batch_tokens, "cache": cache})
        if reference is not None and reference.model is lm.model:
            reference = None  # the same network: q = p
        if reference is not None:
            check_same_tokenizer(reference, lm)
        self.lm, self.reference = lm, reference
        self.max_tokens, self.batch_tokens, self.cache = int(max_tokens), batch_tokens, bool(cache)
        self._lm_key = _model_key(lm)
        self._ref_key = _model_key(reference) if reference is not None else None

    def _key(self, text_key: bytes, with_reference: bool = True) -> tuple:
        ref = self._ref_key if with_reference else None
        return (self._lm_key, ref, self.max_tokens, text_key)

    def compute(self, texts: Sequence[str]) -> list[TextStatistics]:
        """Statistics of each text, in input order (identical texts are computed once)."""
        texts = check_texts(texts, "LMStatistics", "compute")
        from humanize.models.text import model_input

        # repaired before the cache lookup, so cached and fresh texts warn alike
        texts, _ = model_input(texts, where=f"tokenizer of {self.lm.resolved}")
        keys = [_text_key(t) for t in texts]
        found: dict[bytes, TextStatistics] = {}
        todo: dict[bytes, str] = {}
        for key, text in zip(keys, texts):
            if key in found or key in todo:
                continue
            hit = _CACHE.get(self._key(key)) if self.cache else None
            if hit is None:
                todo[key] = text
            else:
                found[key] = hit
        if todo:
            found.update(self._run(list(todo.keys()), list(todo.values())))
        return [found[k] for k in keys]

    __call__ = compute

    # -- the forward passes -------------------------------------------------------------------------

    def _encode(self, texts: list[str]) -> tuple[list[list[int]], list[bool]]:
        from humanize.models.scoring import encode_for_scoring

        # one token more than is scored tells whether the text was cut; the rest is never tokenised
        ids, _, has_bos = encode_for_scoring(self.lm, texts, max_tokens=self.max_tokens + 1)
        keep = self.max_tokens + (1 if has_bos else 0)
        return [seq[:keep] for seq in ids], [len(seq) > keep for seq in ids]

    def _batches(self, lengths: list[int]) -> list[list[int]]:
        """Indices grouped into batches, longest first, rows x width <= batch_tokens; one text per batch for a
        model in reduced precision (:func:`~humanize.models.scoring.one_row_per_batch`)."""
        from humanize.models.scoring import one_row_per_batch

        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        if any(m is not None and one_row_per_batch(m) for m in (self.lm, self.reference)):
            return [[i] for i in order]
        budget = self.batch_tokens
        if budget is None:
            vocab = int(getattr(self.lm.model.config, "vocab_size", 0) or 50_000)
            if self.reference is not None:
                vocab += int(getattr(self.reference.model.config, "vocab_size", 0) or 50_000)
            budget = max(self.max_tokens + 1, _BATCH_LOGIT_BYTES // (4 * vocab))
        batches: list[list[int]] = []
        for i in order:  # the first (longest) text of a batch sets its padded width
            if batches and (len(batches[-1]) + 1) * lengths[batches[-1][0]] <= budget:
                batches[-1].append(i)
            else:
                batches.append([i])
        return batches

    def _run(self, keys: list[bytes], texts: list[str]) -> dict[bytes, TextStatistics]:
        import torch

        ids, truncated = self._encode(texts)
        out: dict[bytes, TextStatistics] = {}
        runnable = [i for i, seq in enumerate(ids) if len(seq) >= 2]
        for i in set(range(len(ids))) - set(runnable):  # nothing to score (e.g. an empty text)
            out[keys[i]] = _empty(ids[i], truncated[i])
        pad_id = getattr(self.lm.tokenizer, "pad_token_id", None) or 0
        lengths = [len(ids[i]) for i in runnable]
        with torch.inference_mode():
            for batch in self._batches(lengths):
                rows = [runnable[b] for b in batch]
                width = max(len(ids[i]) for i in rows)
                input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
                mask = torch.zeros((len(rows), width), dtype=torch.long)
                for r, i in enumerate(rows):
                    input_ids[r, : len(ids[i])] = torch.as_tensor(ids[i], dtype=torch.long)
                    mask[r, : len(ids[i])] = 1
                logits = self._forward(self.lm, input_ids, mask)
                ref_logits = self._forward(self.reference, input_ids, mask) if self.reference is not None else None
                _CACHE.forward_texts += len(rows)
                _CACHE.forward_batches += 1
                _CACHE.count_pass("statistics", rows=len(rows), width=width, tokens=sum(len(ids[i]) for i in rows))
                targets = input_ids[:, 1:].to(logits.device)
                for r, i in enumerate(rows):
                    n = len(ids[i]) - 1
                    target = targets[r, :n]
                    own = _own_stats(logits[r, :n], target)
                    stats = TextStatistics(token_ids=np.asarray(ids[i][1:], dtype=np.int64), truncated=truncated[i],
                                           **own)
                    if self.cache and self.reference is not None:
                        # the scoring and reference models' own statistics come for free
                        _CACHE.put(self._key(keys[i], with_reference=False), stats)
                        ref_own = _own_stats(ref_logits[r, :n], target.to(ref_logits.device))
                        _CACHE.put((self._ref_key, None, self.max_tokens, keys[i]),
                                   TextStatistics(token_ids=stats.token_ids, truncated=truncated[i], **ref_own))
                    if ref_logits is not None:
                        mean, var = _cross_stats(ref_logits[r, :n].float().to(logits.device), logits[r, :n].float())
                        stats = TextStatistics(token_ids=stats.token_ids, logprob=stats.logprob, rank=stats.rank,
                                               entropy=stats.entropy, expected_logprob=mean, logprob_var=var,
                                               truncated=truncated[i])
                    if self.cache:
                        _CACHE.put(self._key(keys[i]), stats)
                    out[keys[i]] = stats
        return out

    @staticmethod
    def _forward(lm, input_ids, mask):
        device = lm.device
        return lm.model(input_ids=input_ids.to(device), attention_mask=mask.to(device), use_cache=False).logits


def _empty(ids: list[int], truncated: bool) -> TextStatistics:
    z = np.zeros(0)
    return TextStatistics(token_ids=np.asarray(ids[1:], dtype=np.int64)[:0], logprob=z, rank=z.astype(np.int64),
                          entropy=z, expected_logprob=z, logprob_var=z, truncated=truncated)


#: Positions whose vocabulary statistics are computed together: 32 x 49k fp32 logits (6 MiB a temporary) keep
#: every pass of :func:`_own_stats` in the CPU's cache instead of streaming the whole batch's logits ~10 times.
STATS_CHUNK = 32


def _own_stats(logits, target, chunk: int = STATS_CHUNK) -> dict:
    """Log-prob, 1-based rank, entropy and mean/variance of log p under p itself, per position.

    In chunks of ``chunk`` positions and from the shifted logits ``z = x - max x`` alone (one ``exp``, no
    ``log_softmax`` tensor): with ``s = sum exp z``, ``log p = z - log s``, so ``E_p[log p] = E_p[z] - log s``
    and ``Var_p[log p] = Var_p[z]``; terms whose ``exp z`` underflows to 0 count as 0. The same values, to
    float32 rounding, as the log-softmax form (issue #38: that form cost 15-30% of a scoring pass).
    """
    import torch

    n = logits.shape[0]
    logprob, mean, var = (torch.empty(n, dtype=torch.float64) for _ in range(3))
    rank = torch.empty(n, dtype=torch.int64)
    for a in range(0, n, chunk):
        x = logits[a: a + chunk].float()
        observed = x.gather(-1, target[a: a + chunk].unsqueeze(-1).to(x.device))
        rank[a: a + chunk] = (1 + (x > observed).sum(-1)).cpu()  # ties count in the token's favour
        top = x.amax(-1, keepdim=True)
        z = (x - top).clamp_min_(-1e4)  # a -inf logit: exp 0, and 0 * z stays 0
        e = z.exp()
        s = e.sum(-1)
        s1 = torch.linalg.vecdot(e, z)  # sum e z (a reduction as accurate as sum's, unlike a bmm)
        s2 = torch.linalg.vecdot(e.mul_(z), z)  # sum e z^2
        log_s = s.log()
        m1 = s1 / s
        logprob[a: a + chunk] = (observed.view(-1) - top.view(-1) - log_s).double().cpu()
        mean[a: a + chunk] = (m1 - log_s).double().cpu()
        var[a: a + chunk] = (s2 / s - m1 * m1).clamp_min(0).double().cpu()

    return dict(logprob=logprob.numpy(), rank=rank.numpy(), entropy=(-mean).numpy(), expected_logprob=mean.numpy(),
                logprob_var=var.numpy())


def _own_stats_softmax(logits, target) -> dict:
    """The log-softmax form of :func:`_own_stats` (before issue #38), kept as its reference in the tests and
    as the ``--baseline`` of ``benchmarks/bench_scoring.py``."""
    import torch

    lse = torch.logsumexp(logits, dim=-1)
    logp = logits - lse.unsqueeze(-1)
    observed = logits.gather(-1, target.unsqueeze(-1))
    rank = 1 + (logits > observed).sum(-1)  # ties count in the token's favour
    p = logp.exp()
    mean, var = _moments(p, logp)

    def out(t):
        return t.double().cpu().numpy()

    return dict(logprob=out(observed.squeeze(-1) - lse), rank=rank.cpu().numpy().astype(np.int64),
                entropy=out(-mean), expected_logprob=out(mean), logprob_var=out(var))


def _cross_stats(ref_logits, logits) -> tuple[np.ndarray, np.ndarray]:
    """E_q[log p] and Var_q[log p] per position; vocabularies cut to the shorter one (as Fast-DetectGPT does)."""
    import torch

    v = min(ref_logits.shape[-1], logits.shape[-1])
    q = torch.softmax(ref_logits[:, :v], dim=-1)
    logp = torch.log_softmax(logits[:, :v], dim=-1)
    mean, var = _moments(q, logp)
    return mean.double().cpu().numpy(), var.double().cpu().numpy()


def _moments(q, logp):
    """``E_q[log p]`` and ``Var_q[log p]`` over the last axis, terms with ``q == 0`` counted as 0.

    In place on two temporaries (no ``where``/``zeros_like`` copies): the same values, bit for bit,
    as ``where(q > 0, q * logp, 0)`` and ``where(q > 0, q * logp**2, 0)``.
    """
    absent = ~(q > 0)
    qlogp = (q * logp).masked_fill_(absent, 0.0)
    mean = qlogp.sum(-1)
    second = qlogp.mul_(logp).masked_fill_(absent, 0.0).sum(-1)
    return mean, (second - mean * mean).clamp_min(0)


# -- helpers for the detectors built on these statistics ------------------------------------------------


def load_lm(value, device=None, dtype=None):
    """The LoadedModel for a model argument (loaded once per process by humanize.models)."""
    if hasattr(value, "model") and hasattr(value, "tokenizer") and hasattr(value, "resolved"):
        if getattr(value, "kind", "causal_lm") != "causal_lm":
            raise ValueError(f"a causal LM is needed, got a {value.kind} ({value.resolved})")
        return value
    from humanize.models import load_causal_lm

    return load_causal_lm(value, device=device, dtype=dtype)


def describe_lm(lm) -> dict:
    """What produced a score: the name asked for and the model actually loaded."""
    return {"name": str(lm.name), "resolved": str(lm.resolved), "device": str(lm.device), "dtype": str(lm.dtype),
            "source": str(getattr(lm, "source", ""))}


def warn_unscored(detector: str, stats: Sequence[TextStatistics]) -> None:
    """Warn once per call when some texts have no token to score (their scores are NaN)."""
    import warnings

    empty = [i for i, s in enumerate(stats) if s.n_tokens == 0]
    if empty:
        shown = ", ".join(map(str, empty[:10])) + (", ..." if len(empty) > 10 else "")
        warnings.warn(f"{detector}: {len(empty)} of {len(stats)} texts have no token to score (empty text); "
                      f"their scores are NaN (indices {shown})", RuntimeWarning, stacklevel=3)
