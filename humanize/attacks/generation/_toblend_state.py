"""One model's view of a TOBLEND text: its tokens, its KV cache, its next-token distribution.

TOBLEND (Huang et al. 2024) grows one text with tokens from several LLMs that do not
share a tokenizer, so each model keeps its own token sequence of the shared text and
its own KV cache. When the text has grown, a :class:`Stream` re-tokenises only the
tail: it keeps the tokens of every *segment* before the last one and encodes the rest
again. Segments start at a whitespace character that follows a word character
(``(?<=\\w)\\s``); byte-level BPE pre-tokenisation (GPT-2, OPT, GPT-Neo, GPT-J,
SmolLM2) never merges across such a point, and neither does Gemma 3's SentencePiece
vocabulary (its one token spanning a space, ``>▁</``, has no word character before
the space). So the incremental tokens equal the tokens of the whole text (checked
against ``incremental=False``, which tokenises the whole text and runs a full forward
pass at every turn: the slow reference). The cache is cropped to the first token
that changed (``DynamicCache.crop``) and extended by one forward pass over the new
tokens only.

A token's text is its *bytes* (byte-level BPE through the GPT-2 byte alphabet;
SentencePiece pieces with ``▁`` as a space and ``<0xNN>`` byte fallback): a token that
ends inside a UTF-8 character keeps the turn, the same model continuing until the
character is complete, so the text never holds a U+FFFD that the bytes did not mean.
"""
from __future__ import annotations

import codecs
import math
import re
from typing import Optional

import numpy as np

__all__ = ["Stream", "token_table", "segment_starts", "sample_token"]

_BOUNDARY = re.compile(r"(?<=\w)\s")
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_TABLES: dict = {}

#: Most extra tokens a model may add to finish a UTF-8 character (a character has at most 4 bytes).
MAX_CONTINUATION = 4


def segment_starts(text: str, start: int = 0) -> list[int]:
    """Positions in ``text[start:]`` where a segment begins: ``start`` and every whitespace after a word character."""
    return [start] + [m.start() for m in _BOUNDARY.finditer(text, start + 1)]


def _byte_decoder() -> dict:
    # GPT-2's reversible byte <-> printable-character map (the byte-level BPE alphabet).
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = list(printable), 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def token_table(tokenizer) -> tuple[list, frozenset]:
    """``(bytes of every token id, ids never to sample)``, built once per tokenizer.

    The banned ids are the special tokens other than EOS (chat markers, padding, BOS).
    """
    key = id(tokenizer)
    hit = _TABLES.get(key)
    if hit is not None and hit[0] is tokenizer:
        return hit[1], hit[2]
    pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    backend = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "_tokenizer", None)
    decoder = str(getattr(backend, "decoder", "")) if backend is not None else ""
    table: list = []
    if "ByteLevel" in decoder:
        dec = _byte_decoder()
        for p in pieces:
            table.append(bytes(dec[c] for c in p if c in dec) if p is not None else b"")
    elif "ByteFallback" in decoder or "▁" in decoder:
        for p in pieces:
            if p is None:
                table.append(b"")
                continue
            m = _BYTE_PIECE.fullmatch(p)
            table.append(bytes([int(m.group(1), 16)]) if m else p.replace("▁", " ").encode("utf-8"))
    else:  # unknown scheme: the tokenizer's own decoding of each id alone
        table = [tokenizer.decode([i]).encode("utf-8") for i in range(len(pieces))]
    eos = tokenizer.eos_token_id
    banned = frozenset(i for i in tokenizer.all_special_ids if i != eos)
    _TABLES[key] = (tokenizer, table, banned)
    return table, banned


def sample_token(logits: np.ndarray, u: float, *, temperature: float, top_k: int, top_p: float,
                 banned: frozenset, vocab: int) -> int:
    """The token at ``u`` in the inverse CDF of the filtered distribution (float64, descending order).

    ``temperature == 0`` is greedy; ``top_k == 0`` keeps every token; ``top_p`` keeps the
    smallest set of most likely tokens whose mass reaches it. Ids past the tokenizer's
    vocabulary and ``banned`` ids are never drawn.
    """
    z = np.asarray(logits, dtype=np.float64)[:vocab].copy()
    if banned:
        z[[i for i in banned if i < vocab]] = -np.inf
    if temperature == 0:
        return int(np.argmax(z))
    z /= temperature
    if 0 < top_k < z.size:
        idx = np.argpartition(-z, top_k - 1)[:top_k]
    else:
        idx = np.arange(z.size)
    idx = idx[np.lexsort((idx, -z[idx]))]  # descending logit, ties by id: a fixed order
    p = np.exp(z[idx] - z[idx[0]])
    p /= p.sum()
    c = np.cumsum(p)
    if top_p < 1.0:
        keep = int(np.searchsorted(c, top_p, side="left")) + 1
        keep = min(keep, c.size)
        idx, c = idx[:keep], c[:keep] / c[keep - 1]
    j = int(np.searchsorted(c, u * c[-1], side="right"))
    return int(idx[min(j, idx.size - 1)])


class Stream:
    """A model's tokens of the shared text, its cache and its log-probabilities of its own tokens."""

    def __init__(self, lm, *, incremental: bool = True, scores: bool = False):
        import inspect

        self.lm = lm
        self.incremental = incremental
        self.scores = scores  # keep log p of every own token (the QPA scorer); else only next-token logits
        params = inspect.signature(lm.model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        tok = lm.tokenizer
        self.bos = tok.bos_token_id
        self.eos = tok.eos_token_id
        self.table, self.banned = token_table(tok)
        self.vocab = len(self.table)
        self.context = lm.context_length or 1024
        self.text = ""
        self.ids: list = [self.bos] if self.bos is not None else []
        self.seg_chars: list = []  # char start of each segment of self.text
        self.seg_toks: list = []   # index in self.ids of each segment's first token
        self.lp: list = [math.nan] * len(self.ids)  # log p(ids[i] | ids[:i])
        self.cache = None
        self.n_cached = 0
        self.next_logits: Optional[np.ndarray] = None
        self.dirty = False      # ids hold tokens past ``text`` (an unfinished character)
        self.forwards = 0       # forward passes
        self.tokens_fed = 0     # tokens those passes read

    # -- tokenisation -----------------------------------------------------------------
    def _encode(self, parts: list) -> list:
        from humanize.models.text import repair_text

        if not parts:
            return []
        parts = [repair_text(p)[0] for p in parts]  # lone surrogates -> U+FFFD, one for one (models.text)
        enc = self.lm.tokenizer(parts, add_special_tokens=False, return_attention_mask=False)["input_ids"]
        return [list(e) for e in enc]

    def _tokens_for(self, text: str) -> tuple[list, list, list]:
        """``(ids, seg_chars, seg_toks)`` of ``text``, reusing this stream's segments before the last one."""
        head = [self.bos] if self.bos is not None else []
        if not self.incremental:
            ids = head + (self._encode([text])[0] if text else [])
            return ids, [], []
        keep = len(self.seg_chars) - 1 if self.seg_chars else 0
        start = self.seg_chars[keep] if self.seg_chars else 0
        base = self.ids[: self.seg_toks[keep]] if self.seg_chars else head
        starts = segment_starts(text, start) if len(text) > start else []
        parts = [text[s:e] for s, e in zip(starts, starts[1:] + [len(text)])]
        ids, seg_chars, seg_toks = list(base), self.seg_chars[:keep], self.seg_toks[:keep]
        for s, enc in zip(starts, self._encode(parts)):
            seg_chars.append(s)
            seg_toks.append(len(ids))
            ids.extend(enc)
        return ids, seg_chars, seg_toks

    # -- model ------------------------------------------------------------------------
    def _start(self, ids: list, old_ids: list) -> int:
        """The first position to run: before it, ``ids`` share ``old_ids``' cached prefix."""
        common = 0
        limit = min(len(ids), len(old_ids), self.n_cached + 1)
        while common < limit and ids[common] == old_ids[common]:
            common += 1
        return max(0, min(common - 1, self.n_cached)) if self.incremental else 0

    def _forward(self, ids: list, old_ids: list, all_logits: bool = False) -> tuple[int, np.ndarray]:
        """Run the model over ``ids`` from the first position whose cache entry is stale.

        Returns ``(f, logprobs)``: log-probabilities of ``ids[f+1:]`` and, last, the logits
        of the next token (one array, float32, rows = positions f..n-1).
        """
        import torch

        f = self._start(ids, old_ids)
        if f == 0 or self.cache is None:
            f, self.cache = 0, (self._new_cache() if self.incremental else None)
        else:
            self._crop(f)
        model = self.lm.model
        x = torch.tensor([ids[f:]], dtype=torch.long, device=self.lm.device)
        kwargs = {self._cache_arg: self.cache, "use_cache": self.incremental}
        if not (self.scores or all_logits):  # only the next token's logits: the LM head is most of the cost
            kwargs["logits_to_keep"] = 1
        with torch.inference_mode():
            out = model(input_ids=x, **kwargs)
        self.forwards += 1
        self.tokens_fed += len(ids) - f
        logits = out.logits[0].float().cpu().numpy()
        self.n_cached = len(ids) if self.incremental else 0
        return f, logits

    def _crop(self, n: int) -> None:
        # DynamicCache.crop takes minus the number of positions to drop (in old and new transformers)
        extra = int(self.cache.get_seq_length()) - n
        if extra > 0:
            self.cache.crop(-extra)

    def _new_cache(self):
        from transformers import DynamicCache

        # A cache without the model's config keeps every layer in full (no sliding-window
        # eviction), so it can be cropped back to any position; the model still applies
        # its sliding-window masks.
        return DynamicCache()

    @staticmethod
    def _logprobs(logits: np.ndarray, targets: list) -> list:
        z = logits.astype(np.float64)
        m = z.max(axis=1, keepdims=True)
        lse = (m[:, 0] + np.log(np.exp(z - m).sum(axis=1)))
        return [float(z[i, t] - lse[i]) for i, t in enumerate(targets)]

    def _head(self, f: int) -> list:
        # log-probabilities of ids[:f+1], unchanged since ids[:f+1] is a shared prefix (NaN: no context)
        head = list(self.lp[: f + 1])
        return head + [math.nan] * (f + 1 - len(head))

    def sync(self, text: str) -> None:
        """Make this stream's tokens, cache and next-token logits those of ``text``."""
        if text == self.text and self.next_logits is not None and not self.dirty:
            return
        ids, seg_chars, seg_toks = self._tokens_for(text)
        self._commit(ids)
        self.text, self.seg_chars, self.seg_toks, self.dirty = text, seg_chars, seg_toks, False

    def _commit(self, ids: list) -> None:
        f, logits = self._forward(ids, self.ids)
        if self.scores:
            lp = self._head(f) + self._logprobs(logits[:-1], ids[f + 1:])
        else:
            lp = [math.nan] * len(ids)
        self.ids, self.lp, self.next_logits = ids, lp[: len(ids)], logits[-1]

    def push(self, token: int) -> None:
        """Append one sampled token to this model's sequence (the rest of a UTF-8 character)."""
        self._commit(self.ids + [token])
        self.dirty = True

    def nll(self, text: str) -> tuple[float, int]:
        """``(sum of -log p, number of scored tokens)`` of ``text``; this stream's text is unchanged.

        ``text`` must extend this stream's text. The cache is left cropped to the shared
        prefix (the next :meth:`sync` recomputes from there).
        """
        if not self.scores:
            raise RuntimeError("Stream.nll needs a stream built with scores=True")
        ids, _, _ = self._tokens_for(text)
        f, logits = self._forward(ids, self.ids, all_logits=True)
        lp = self._head(f) + self._logprobs(logits[:-1], ids[f + 1:])
        if self.incremental:
            self._crop(f)
            self.n_cached = f
            self.next_logits = None
        vals = [v for v in lp[: len(ids)] if not math.isnan(v)]
        return -float(sum(vals)), len(vals)

    def nll_many(self, texts: list) -> list:
        """:meth:`nll` of several extensions of this stream's text, in ONE forward pass when incremental.

        The candidates' new tokens go in one right-padded batch over the shared cached
        prefix (the cache repeated per row, then cut back to one row); the reference
        path scores them one by one.
        """
        import torch

        if not self.scores:
            raise RuntimeError("Stream.nll_many needs a stream built with scores=True")
        if not self.incremental or len(texts) < 2 or self.cache is None:
            return [self.nll(t) for t in texts]
        enc = [self._tokens_for(t)[0] for t in texts]
        f = min(self._start(ids, self.ids) for ids in enc)
        if f == 0:
            return [self.nll(t) for t in texts]
        self._crop(f)
        tails = [ids[f:] for ids in enc]
        width = max(len(t) for t in tails)
        x = torch.tensor([t + [t[-1]] * (width - len(t)) for t in tails], dtype=torch.long, device=self.lm.device)
        mask = torch.tensor([[1] * (f + len(t)) + [0] * (width - len(t)) for t in tails], dtype=torch.long,
                            device=self.lm.device)
        self.cache.batch_repeat_interleave(len(tails))
        try:
            with torch.inference_mode():
                out = self.lm.model(input_ids=x, attention_mask=mask, use_cache=True, **{self._cache_arg: self.cache})
        finally:
            self.cache.batch_select_indices(torch.tensor([0], device=self.lm.device))
            self._crop(f)
        self.forwards += 1
        self.tokens_fed += sum(len(t) for t in tails)
        self.n_cached, self.next_logits = f, None
        logits = out.logits.float().cpu().numpy()
        result = []
        for i, ids in enumerate(enc):
            lp = self._head(f) + self._logprobs(logits[i, : len(tails[i]) - 1], ids[f + 1:])
            vals = [v for v in lp[: len(ids)] if not math.isnan(v)]
            result.append((-float(sum(vals)), len(vals)))
        return result

    # -- proposing --------------------------------------------------------------------
    def propose(self, rng: np.random.Generator, sampling: dict) -> tuple[Optional[str], int]:
        """``(text of the next token(s), tokens drawn)``; ``None`` text for EOS, ``""`` if the bytes never form text.

        One uniform number per drawn token comes from ``rng``. A token that leaves a UTF-8
        character unfinished is pushed onto this model's own sequence and the model draws
        again (the next :meth:`sync` re-tokenises the finished text).
        """
        decoder = codecs.getincrementaldecoder("utf-8")("strict")
        logits, drawn, out = self.next_logits, 0, ""
        while True:
            token = sample_token(logits, float(rng.random()), banned=self.banned, vocab=self.vocab, **sampling)
            drawn += 1
            if token == self.eos:
                return (None if drawn == 1 else ""), drawn
            try:
                out += decoder.decode(self.table[token])
            except UnicodeDecodeError:
                return "", drawn
            if not decoder.getstate()[0]:  # no bytes pending: the character(s) are complete
                return out, drawn
            if drawn > MAX_CONTINUATION or len(self.ids) + 1 >= self.context:
                return "", drawn
            self.push(token)
            logits = self.next_logits
