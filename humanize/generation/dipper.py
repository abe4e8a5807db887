"""DIPPER, the discourse paraphraser (Krishna et al. 2023), with RAID's settings (RAID §3.6, Appendix E.4).

DIPPER is a T5-XXL model fine-tuned to paraphrase the sentences between ``<sent>``
and ``</sent>`` given the text before them as context. Its input is
``"lexical = L, order = O {context} <sent> {window} </sent>"`` where the codes are
100 minus the wanted diversities (so RAID's lexical diversity 60 and order diversity
0 read ``lexical = 40, order = 100``); a document is paraphrased ``sent_interval`` (3)
sentences at a time (never across a line break, see :func:`sentence_groups`), each
window's context being the paraphrases produced so far (cut from the left to fit 512 tokens);
decoding is nucleus sampling with p = 0.75 and no top-k, up to 512 tokens.

Sampling is our own decode loop over the seq2seq model (encoder once, then the
decoder with its key/value cache), so a batch of prompts decodes together while each
request draws from its own ``torch.Generator`` seeded by the request: an output
depends on its prompt and seed only, never on the batch. ``transformers``'
``generate`` would share one random stream across a batch, and calling it once per
request would give up batching.

The released model (``kalpeshk2011/dipper-paraphraser-xxl``, 11B parameters, about
45 GB in fp32 and 23 GB in bf16, tokenizer ``google/t5-v1_1-xxl``) needs the Hugging
Face hub and a GPU; any T5-style seq2seq model directory runs through the same code.
"""
from __future__ import annotations

import hashlib
import os
import re
import warnings
from numbers import Integral
from typing import Any, Callable, Optional, Sequence

from humanize.validation import MODEL, InstanceOf, Interval, Options, check_texts, make_constraint

from .base import SAMPLING_CONSTRAINTS, Generation, Generator, Request, check_requests, report_usage

__all__ = ["Dipper", "DIPPER_MODEL", "DIPPER_TOKENIZER", "dipper_prompt", "sentence_groups", "window_seed"]

DIPPER_MODEL = "kalpeshk2011/dipper-paraphraser-xxl"
DIPPER_TOKENIZER = "google/t5-v1_1-xxl"
#: T5's input length, which RAID fits every prompt into (context truncated from the left first).
MAX_INPUT_TOKENS = 512
_DIVERSITIES = (0, 20, 40, 60, 80, 100)
_LINE_BREAK = re.compile(r"[^\S\n]*\n\s*")
_NEEDS = ("DIPPER is T5-XXL (11B parameters: about 45 GB in fp32, 23 GB in bf16); it needs the Hugging Face hub "
          f"(`hf download {DIPPER_MODEL}` and `hf download {DIPPER_TOKENIZER}`) and a GPU")


def dipper_prompt(lex_code: int, order_code: int, window: str, context: str = "") -> str:
    """DIPPER's input for one window: the control codes, the context (if any), the window in ``<sent>`` tags."""
    head = f"lexical = {lex_code}, order = {order_code}"
    if context:
        head += f" {context}"
    return f"{head} <sent> {window} </sent>"


def window_seed(seed: int, index: int) -> int:
    """The sampling seed of a document's ``index``-th window, from the document's seed (63 bits)."""
    digest = hashlib.blake2b(b"dipper-window\x00%d\x00%d" % (int(seed), int(index)), digest_size=8).digest()
    return int.from_bytes(digest, "little") & ((1 << 63) - 1)


def _split(text: str, start: int, end: int, fits: Callable[[str], bool]) -> list[tuple[int, int]]:
    """``text[start:end]`` cut into pieces that each ``fit``: at the whitespace nearest the middle, else mid-way."""
    piece = text[start:end]
    if end - start <= 1 or fits(piece):
        return [(start, end)]
    mid = start + (end - start) // 2
    spaces = [i for i in range(start + 1, end - 1) if text[i].isspace() and not text[i - 1].isspace()]
    cut = min(spaces, key=lambda i: abs(i - mid)) if spaces else mid
    left, right = (start, cut), (cut, end)
    while right[0] < right[1] and text[right[0]].isspace():  # the separator stays between the pieces
        right = (right[0] + 1, right[1])
    pieces = _split(text, *left, fits) if left[0] < left[1] else []
    return pieces + (_split(text, *right, fits) if right[0] < right[1] else [])


def sentence_groups(text: str, size: int, fits: Optional[Callable[[str], bool]] = None) -> list[tuple[int, int]]:
    """Character spans of up to ``size`` consecutive sentences each (blingfire sentences), in text order.

    A group never spans a line break, so paragraphs and lines keep their layout (a
    sentence broken across lines counts as one sentence per line, as RAID's
    ``split_on_newlines`` option does). With ``fits``, a sentence that does not fit alone
    is cut at whitespace into pieces that do, and a group is closed early when the next
    sentence would not fit in it. The text between two groups (whitespace) is in none.
    """
    from humanize.text import sentence_spans

    units = sentence_spans(text)
    if not units and text.strip():
        a = len(text) - len(text.lstrip())
        units = [(a, len(text.rstrip()))]
    lines = []
    for a, b in units:
        for m in _LINE_BREAK.finditer(text, a, b):
            if m.start() > a:
                lines.append((a, m.start()))
            a = m.end()
        if b > a:
            lines.append((a, b))
    if fits is not None:
        lines = [p for a, b in lines for p in _split(text, a, b, fits)]
    groups: list[tuple[int, int]] = []
    count = 0
    for a, b in lines:
        if (groups and count < size and "\n" not in text[groups[-1][1]:a]
                and (fits is None or fits(text[groups[-1][0]:b]))):
            groups[-1] = (groups[-1][0], b)
            count += 1
        else:
            groups.append((a, b))
            count = 1
    return groups


def _nucleus(logits, top_p: float, generator) -> int:
    """One token from the smallest set of most likely tokens whose probability reaches ``top_p``."""
    import torch

    probs = torch.softmax(logits.double(), dim=-1)
    sorted_p, order = torch.sort(probs, descending=True)
    cum = torch.cumsum(sorted_p, dim=-1)
    keep = int((cum - sorted_p < top_p).sum())  # the first token is always kept
    kept = torch.cumsum(sorted_p[:keep], dim=-1)
    u = torch.rand((), generator=generator, dtype=torch.float64) * kept[-1]
    i = min(int(torch.searchsorted(kept, u, right=True)), keep - 1)
    return int(order[i])


class _Diversity(Options):
    def describe(self) -> str:
        return "a multiple of 20 in [0, 100] (DIPPER's control codes)"


_DIVERSITY = _Diversity(Integral, _DIVERSITIES)


class Dipper(Generator):
    """The DIPPER paraphraser as a :class:`Generator` of plain prompts, plus :meth:`paraphrase_documents`.

    ``lex_diversity`` / ``order_diversity``: 0 to 100 in steps of 20 (RAID: 60 and 0);
    ``model``: a hub id, a directory or a loaded seq2seq model; ``tokenizer``: where the
    tokenizer comes from (``None``: the model's own).
    """

    kind = "seq2seq"
    name = "dipper"
    _model_params = ("model", "tokenizer")
    _parameter_constraints = {
        "model": [MODEL],
        "tokenizer": [InstanceOf(str, os.PathLike, name="a hub id or a directory"), None],  # None: the model's own
        "lex_diversity": [_DIVERSITY],
        "order_diversity": [_DIVERSITY],
        "sent_interval": [Interval(Integral, 1, None)],
        "top_p": SAMPLING_CONSTRAINTS["top_p"],
        "max_new_tokens": SAMPLING_CONSTRAINTS["max_new_tokens"],
        "batch_size": [Interval(Integral, 1, None)],
    }

    def __init__(self, model: Any = DIPPER_MODEL, tokenizer: Any = DIPPER_TOKENIZER, lex_diversity: int = 60,
                 order_diversity: int = 0, sent_interval: int = 3, top_p: float = 0.75, max_new_tokens: int = 512,
                 batch_size: int = 8, device: Any = None, dtype: Any = None):
        self._init_params(locals())

    @property
    def codes(self) -> tuple[int, int]:
        """DIPPER's (lexical, order) input codes: 100 minus the diversities."""
        return 100 - int(self.lex_diversity), 100 - int(self.order_diversity)

    # -- the model ----------------------------------------------------------------------
    def loaded(self):
        """The :class:`~humanize.models.LoadedModel` (loaded once per process; a loaded model keeps its device)."""
        lm = self.model
        if not (hasattr(lm, "model") and hasattr(lm, "tokenizer")):
            from humanize.models import ModelUnavailable, load_seq2seq, resolve_device

            if os.fspath(self.model) == DIPPER_MODEL and resolve_device(self.device).type == "cpu":
                warnings.warn(f"{_NEEDS}; on the CPU it is very slow", RuntimeWarning, stacklevel=2)
            try:
                if self.tokenizer is None:
                    lm = load_seq2seq(self.model, device=self.device, dtype=self.dtype)
                else:
                    lm = _load_with_tokenizer(self.model, self.tokenizer, self.device, self.dtype)
            except ModelUnavailable as exc:
                raise ModelUnavailable(exc.name, exc.tried, f"{exc.install}. {_NEEDS}") from None
        if not getattr(getattr(lm.model, "config", None), "is_encoder_decoder", False) or lm.tokenizer is None:
            raise TypeError(f"Dipper needs an encoder-decoder (seq2seq) model with a tokenizer, got "
                            f"{type(lm.model).__name__} ({getattr(lm, 'kind', '?')})")
        return lm

    def _input_limit(self, lm) -> int:
        limit = getattr(lm.tokenizer, "model_max_length", None)
        return min(limit, MAX_INPUT_TOKENS) if isinstance(limit, int) and limit > 8 else MAX_INPUT_TOKENS

    # -- Generator --------------------------------------------------------------------
    def generate(self, requests: Sequence[Request]) -> list[Generation]:
        """One sampled paraphrase per prompt; length-sorted batches of ``batch_size``; seeded per request.

        A prompt longer than T5's input (512 tokens) is cut at its end; the prompts
        :meth:`paraphrase_documents` builds always fit.
        """
        reqs = check_requests("Dipper", requests, plain=True)
        if not reqs:
            return []
        lm = self.loaded()
        lengths = [len(lm.tokenizer(r.messages)["input_ids"]) for r in reqs]
        order = sorted(range(len(reqs)), key=lambda i: -lengths[i])
        out: list[Optional[Generation]] = [None] * len(reqs)
        size = int(self.batch_size)
        for b in range(0, len(order), size):
            idx = order[b:b + size]
            for i, g in zip(idx, self._decode(lm, [reqs[i] for i in idx])):
                out[i] = g
        report_usage(out)
        return out  # type: ignore[return-value]

    def _decode(self, lm, reqs: list[Request]) -> list[Generation]:
        """Nucleus sampling for one batch: the encoder once, then the decoder step by step with its cache."""
        import torch

        tok, model = lm.tokenizer, lm.model
        device = next(model.parameters()).device
        enc = tok([r.messages for r in reqs], return_tensors="pt", padding=True, truncation=True,
                  max_length=self._input_limit(lm))
        ids, mask = enc["input_ids"].to(device), enc["attention_mask"].to(device)
        cfg = model.config
        start = cfg.decoder_start_token_id if cfg.decoder_start_token_id is not None else cfg.pad_token_id
        eos = cfg.eos_token_id if cfg.eos_token_id is not None else tok.eos_token_id
        eos_ids = set(eos) if isinstance(eos, (list, tuple)) else {eos}
        pad = cfg.pad_token_id if cfg.pad_token_id is not None else start
        limits = [int(r.max_new_tokens or self.max_new_tokens) for r in reqs]
        rngs = [torch.Generator().manual_seed(int(r.seed) % (1 << 64)) for r in reqs]
        tokens: list[list[int]] = [[] for _ in reqs]
        done = [False] * len(reqs)
        stopped = [False] * len(reqs)
        with torch.inference_mode():
            encoded = model.get_encoder()(input_ids=ids, attention_mask=mask)
            step_ids = torch.full((len(reqs), 1), start, dtype=torch.long, device=device)
            cache_arg = _cache_argument(model)
            past = None
            for _ in range(max(limits)):
                o = model(encoder_outputs=encoded, attention_mask=mask, decoder_input_ids=step_ids,
                          use_cache=True, **{cache_arg: past})
                past = o[cache_arg] if cache_arg in o else o.past_key_values
                logits = o.logits[:, -1, :].float().cpu()
                nxt = []
                for i in range(len(reqs)):
                    if done[i]:
                        nxt.append(pad)
                        continue
                    t = _nucleus(logits[i], self.top_p, rngs[i])
                    nxt.append(t)
                    if t in eos_ids:
                        done[i] = stopped[i] = True
                    else:
                        tokens[i].append(t)
                        done[i] = len(tokens[i]) >= limits[i]
                if all(done):
                    break
                step_ids = torch.tensor(nxt, dtype=torch.long, device=device).view(-1, 1)
        n_in = mask.sum(dim=1).tolist()
        return [Generation(tok.decode(t, skip_special_tokens=True).strip(), int(n), len(t),
                           "stop" if s else "length") for t, n, s in zip(tokens, n_in, stopped)]

    # -- documents --------------------------------------------------------------------
    def _counter(self, lm) -> Callable[[str], int]:
        tok = lm.tokenizer
        return lambda s: len(tok(s)["input_ids"])

    def windows(self, text: str, lm=None) -> list[tuple[int, int]]:
        """Character spans of ``text``'s windows: ``sent_interval`` sentences each, cut so a prompt fits T5's input."""
        lm = lm or self.loaded()
        count, limit = self._counter(lm), self._input_limit(lm)
        lex, order = self.codes
        return sentence_groups(text, int(self.sent_interval),
                               lambda s: count(dipper_prompt(lex, order, " ".join(s.split()))) <= limit)

    def _prompt(self, lm, window: str, context: str) -> str:
        """The window's prompt, its context cut from the left (whole words) until the prompt fits (as RAID)."""
        count, limit = self._counter(lm), self._input_limit(lm)
        lex, order = self.codes
        words = context.split()[-limit:]  # every word is at least one token: more could never fit
        if count(dipper_prompt(lex, order, window, " ".join(words))) <= limit:
            return dipper_prompt(lex, order, window, " ".join(words))
        lo, hi = 1, len(words)  # find the fewest words dropped from the left
        while lo < hi:
            mid = (lo + hi) // 2
            if count(dipper_prompt(lex, order, window, " ".join(words[mid:]))) <= limit:
                hi = mid
            else:
                lo = mid + 1
        return dipper_prompt(lex, order, window, " ".join(words[lo:]))

    def paraphrase_documents(self, texts: Sequence[str], seeds: Sequence[int]) -> list[tuple[str, list[Generation]]]:
        """Paraphrase whole documents: ``(text, generations)`` per document, one generation per window.

        Window i of every document goes to the model as one batch, then window i + 1
        with each document's outputs so far as its context. Within a window the original
        whitespace collapses to single spaces (as DIPPER was trained); the whitespace
        between windows is kept, and no window spans a line break (:func:`sentence_groups`).
        A window whose paraphrase comes back empty keeps its original text. Seeds: one per
        document (window seeds derive from it, see :func:`window_seed`). Blank documents
        come back unchanged.
        """
        texts = check_texts(texts, "Dipper", "paraphrase_documents")
        if isinstance(seeds, (str, bytes, dict, int)) or not hasattr(seeds, "__iter__"):
            raise TypeError(f"Dipper.paraphrase_documents expects a list of int seeds, got {type(seeds).__name__}")
        seeds = list(seeds)
        if len(texts) != len(seeds):
            raise ValueError(f"Dipper.paraphrase_documents: {len(texts)} texts but {len(seeds)} seeds")
        seed = make_constraint("seed")
        for i, s in enumerate(seeds):
            if not seed.is_satisfied_by(s):
                raise TypeError(f"Dipper.paraphrase_documents: seed {i} must be an int, got {type(s).__name__}")
        seeds = [int(s) for s in seeds]
        if not any(t.strip() for t in texts):
            return [(t, []) for t in texts]
        lm = self.loaded()
        plans = [self.windows(t, lm) if t.strip() else [] for t in texts]
        outputs: list[list[str]] = [[] for _ in texts]
        generations: list[list[Generation]] = [[] for _ in texts]
        step = 0
        while True:
            todo = [d for d, plan in enumerate(plans) if len(plan) > step]
            if not todo:
                break
            reqs = []
            for d in todo:
                a, b = plans[d][step]
                context = " ".join(outputs[d][-self._input_limit(lm):])  # see _prompt: enough words to fill it
                reqs.append(Request(self._prompt(lm, " ".join(texts[d][a:b].split()), context),
                                    window_seed(seeds[d], step)))
            for d, g in zip(todo, self.generate(reqs)):
                a, b = plans[d][step]
                outputs[d].append(" ".join(g.text.split()) or " ".join(texts[d][a:b].split()))
                generations[d].append(g)
            step += 1
        results = []
        for t, plan, outs, gens in zip(texts, plans, outputs, generations):
            if not plan:
                results.append((t, []))
                continue
            parts, pos = [], 0
            for (a, b), new in zip(plan, outs):
                parts += [t[pos:a], new]
                pos = b
            parts.append(t[pos:])
            results.append(("".join(parts), gens))
        return results


def _cache_argument(model) -> str:
    """The forward argument for the decoder cache: ``cache`` (transformers >= 5.2x) or ``past_key_values``."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _load_with_tokenizer(model, tokenizer, device, dtype):
    """A seq2seq model with a tokenizer from elsewhere (DIPPER ships none), through the model layer's cache."""
    import transformers

    from humanize.models import loading

    name = loading._check_name(model)
    device = loading.resolve_device(device)
    dtype = loading.resolve_dtype(dtype, device)
    tok_name = os.fspath(tokenizer)

    def build(path: str, source: str):
        def from_pretrained(opts: dict):  # the hub's fast failure and offline hint (models.loading._hub_build)
            return (transformers.AutoModelForSeq2SeqLM.from_pretrained(path, dtype=dtype, **opts),
                    transformers.AutoTokenizer.from_pretrained(tok_name, **opts))

        m, tok = loading._hub_build(f"{path} (tokenizer {tok_name})", from_pretrained)
        m.to(device)
        m.eval()
        m.requires_grad_(False)
        return m, tok

    return loading._load(name, "seq2seq", ("tokenizer", tok_name), device, build, dtype=dtype)
