"""TOBLEND: token-level blending of several LLMs (Huang et al. 2024; TH-Bench §2.2, §4.1, Appendix G).

The machine text's first ``prefix_words`` words (30) are the prompt and are kept
exactly: a first token that would extend the prompt's last word is discarded (the
step is spent, ``info["prefix_joins"]``), so edits begin after the prompt. Then,
token by token, a model drawn uniformly at random from ``models`` samples the next
token given the text so far, and its text is appended, until the
output has as many words as the original (a whitespace-delimited word count: the
first token that would start one word more is not appended, ``stopped="length"``),
a model samples its EOS (``"eos"``), ``max_new_tokens`` blended tokens are spent
(``"max_new_tokens"``; ``None`` allows 4 per missing word plus 16) or a model's
context is full (``"context"``). TH-Bench runs the paper's classic set, by hub id
``("gpt2-xl", "facebook/opt-2.7b", "EleutherAI/gpt-neo-2.7B", "EleutherAI/gpt-j-6b")``;
the offline default (:data:`DEFAULT_MODELS`) pairs two packaged models with different
tokenizers, Qwen2.5-Coder-0.5B-Instruct and Gemma-3-270M, neither of them SmolLM2-135M, the
default detectors' and perplexity's scoring model (issue #19 §4; :data:`SMOLLM2_GEMMA` is the
pairing before it). The
ToBlend paper samples but reports no decoding constants, so the defaults are the
usual transformers sampling ones: ``top_k=50``, ``top_p=1.0``, ``temperature=1.0``.

Each model keeps its own tokens and KV cache of the text and reads only what was
appended since its last turn (:mod:`._toblend_state`); ``incremental=False`` is the
slow reference (whole text re-tokenised, full forward pass, every turn) that gives
the same tokens. Draws come from the document's own generator (:meth:`Attack.rng`),
so an output depends on the document and ``seed`` only, never on the batch.

``qpa=True`` (or :class:`QPA_TOBLEND`) is TH-Bench's Quality-Preserving Attack
(Appendix G, Algorithm 2): at every step each model proposes its token; a candidate
``S + t`` is kept when its all-MiniLM-L6-v2 cosine with the original's span of the
same number of words (the "original (unattacked) sentence" at this length) exceeds
``min_similarity``; among the kept ones the one whose perplexity under the first
model (the scorer) is closest to that original span's wins. When none passes, the
model drawn at random for the step decides, as plain TOBLEND would (counted in
``info["qpa_fallbacks"]``). Algorithm 2 also lists a Flesch constraint that the
appendix's text does not apply; it is left out.
"""
from __future__ import annotations

import math
import re
from numbers import Integral, Real
from typing import Optional

from humanize.validation import MODEL, Interval, Options, SequenceOf
from humanize.generation.base import SAMPLING_CONSTRAINTS
from humanize.models import DEFAULT_CHAT_LM

from .rewrite import RewriteAttack
from ._toblend_state import Stream

__all__ = ["TOBLEND", "QPA_TOBLEND", "CLASSIC_MODELS", "DEFAULT_MODELS", "SMOLLM2_GEMMA"]

#: TH-Bench's "classic LLMs set" (the ToBlend paper's default), by hub id.
CLASSIC_MODELS = ("gpt2-xl", "facebook/opt-2.7b", "EleutherAI/gpt-neo-2.7B", "EleutherAI/gpt-j-6b")
#: The offline default: two packaged models, disjoint from the default scoring model (the first is QPA's scorer).
DEFAULT_MODELS = (DEFAULT_CHAT_LM, "gemma-3-270m")
#: The offline default before issue #19: its first model is the default detectors' scoring model.
SMOLLM2_GEMMA = ("smollm2-135m-instruct", "gemma-3-270m")
_WORD = re.compile(r"\S+")
_WORDCHAR = re.compile(r"\w")


def _count_words(text: str) -> int:
    return sum(1 for _ in _WORD.finditer(text))


def _added_words(text: str, piece: str) -> int:
    """How many words appending ``piece`` to ``text`` starts."""
    n = _count_words(piece)
    if n and text and not text[-1].isspace() and not piece[0].isspace():
        n -= 1  # the piece's first word continues the text's last one
    return n


class TOBLEND(RewriteAttack):
    """Blend the next-token samples of several LLMs, one model drawn per token (Huang et al. 2024).

    ``AttackResult.info``: ``tokens_per_model`` (appended tokens per entry of ``models``),
    ``steps``, ``stopped``, ``llm_queries`` (forward passes), ``llm_tokens_in`` (tokens
    those passes read), ``llm_tokens_out`` (tokens sampled), ``dropped_partial_characters``,
    ``prefix_joins``,
    ``models_resolved``; with QPA also ``qpa_steps``, ``qpa_candidates``, ``qpa_kept``,
    ``qpa_fallbacks``, ``qpa_min_chosen_similarity``, ``qpa_scorer``, ``qpa_encoder``.
    Documents of at most ``prefix_words`` words come back unchanged, saying so in
    ``info["unchanged"]`` (and ``info["skipped"]``), as does a blend that ended before its first token.
    """

    name = "toblend"
    version = "2"  # 2: models default to DEFAULT_MODELS (was SMOLLM2_GEMMA)
    _model_params = ("models",)
    _parameter_constraints = {
        "models": [SequenceOf(MODEL, nonempty=True,
                              name="a non-empty list or tuple of model names (the paper blends four)")],
        "prefix_words": [Interval(Integral, 1, None)],
        "top_k": [Interval(Integral, 0, None)],  # 0: no top-k cut
        "top_p": SAMPLING_CONSTRAINTS["top_p"],
        "temperature": SAMPLING_CONSTRAINTS["temperature"],  # 0: greedy
        "max_new_tokens": [*SAMPLING_CONSTRAINTS["max_new_tokens"], None],
        "qpa": ["boolean"],
        "min_similarity": [Interval(Real, -1, 1, closed="both")],
        "encoder": [MODEL],  # a sentence-encoder name
        "incremental": ["boolean"],
    }

    def __init__(self, models=DEFAULT_MODELS, prefix_words: int = 30, top_k: int = 50,
                 top_p: float = 1.0, temperature: float = 1.0, max_new_tokens: Optional[int] = None, seed: int = 0,
                 device=None, qpa: bool = False, min_similarity: float = 0.7,
                 encoder: str = "all-minilm-l6-v2", incremental: bool = True):
        self._init_params(locals())

    def provenance(self) -> dict:
        """The base provenance with each blended model (and QPA's encoder) resolved to its identity.

        ``incremental`` is left out: both paths give the same outputs (only the speed differs).
        """
        from humanize.models.identity import model_identity

        out = super().provenance()
        out["params"].pop("incremental", None)
        out["params"]["models"] = [{"__model__": model_identity(m)} for m in self.models]
        if self.qpa:
            out["params"]["encoder"] = {"__model__": model_identity(self.encoder)}
        return out

    def _sampling(self) -> dict:
        return {"temperature": float(self.temperature), "top_k": int(self.top_k), "top_p": float(self.top_p)}

    def _load(self) -> list:
        from humanize.models import load_causal_lm

        return [load_causal_lm(name, device=self.device) for name in self.models]

    # -- the attack -------------------------------------------------------------------
    def rewrite(self, texts: list[str]) -> list[tuple[str, dict]]:
        from humanize.cost import report

        lms = None
        out = []
        for text in texts:
            words = list(_WORD.finditer(text))
            if len(words) <= self.prefix_words:
                short = f"short: {len(words)} words <= prefix_words={self.prefix_words}"
                out.append((text, {"skipped": short, "unchanged": f"{short} (the prompt is the whole text)",
                                   "llm_queries": 0, "llm_tokens_in": 0, "llm_tokens_out": 0}))
                continue
            lms = lms or self._load()
            new, info = self._blend(text, words, lms)
            report(queries=info["llm_queries"], api_tokens_in=info["llm_tokens_in"],
                   api_tokens_out=info["llm_tokens_out"])
            out.append((new, info))
        return out

    def unchanged_reason(self, text: str, info: dict) -> str:
        return f"the blend gave back the original text (stopped: {info.get('stopped')})"

    def _blend(self, original: str, words: list, lms: list) -> tuple[str, dict]:
        from humanize.models.text import model_input

        model_input([original], where=f"{type(self).__name__}'s models")  # warns once if it repairs surrogates
        rng = self.rng(original)
        # the first model is QPA's perplexity scorer: only its stream keeps log-probabilities of its tokens
        streams = [Stream(lm, incremental=self.incremental, scores=bool(self.qpa) and i == 0)
                   for i, lm in enumerate(lms)]
        judge = _Judge(self, original, words, lms[0]) if self.qpa else None
        text = prefix = original[: words[self.prefix_words - 1].end()]
        target, n_words = len(words), self.prefix_words
        cap = self.max_new_tokens if self.max_new_tokens is not None else 4 * (target - n_words) + 16
        counts, drawn, steps, stopped, dropped, joins = [0] * len(lms), 0, 0, None, 0, 0
        sampling = self._sampling()
        while stopped is None:
            if steps >= cap:
                stopped = "max_new_tokens"
                break
            pick = int(rng.integers(len(lms)))
            order = range(len(lms)) if judge else (pick,)
            pieces = {}
            for j in order:
                s = streams[j]
                s.sync(text)
                if len(s.ids) + 1 >= s.context:
                    stopped = "context"
                    break
                pieces[j], n = s.propose(rng, sampling)
                drawn += n
            if stopped:
                break
            steps += 1
            if judge:
                pick = judge.choose(text, n_words, pieces, pick, streams[0])
            piece = pieces[pick]
            if piece is None:
                stopped = "eos"
            elif piece == "":
                dropped += 1
            elif len(text) == len(prefix) and _WORDCHAR.match(text[-1]) and _WORDCHAR.match(piece):
                joins += 1  # it would extend the prompt's last word: discarded, the step is spent
            else:
                added = _added_words(text, piece)
                if n_words + added > target:
                    stopped = "length"
                else:
                    text, n_words = text + piece, n_words + added
                    counts[pick] += 1
        # tokens_per_model: the appended tokens (pieces) each model gave; steps: blending steps, the last
        # one's token not appended when it ended the text (EOS, one word too many)
        info = {"tokens_per_model": counts, "stopped": stopped, "steps": steps,
                "llm_queries": sum(s.forwards for s in streams),
                "llm_tokens_in": sum(s.tokens_fed for s in streams), "llm_tokens_out": drawn,
                "dropped_partial_characters": dropped, "prefix_joins": joins,
                "models_resolved": [lm.resolved for lm in lms]}
        if judge:
            info.update(judge.info())
        return text, info


class _Judge:
    """QPA's candidate ranking (TH-Bench Appendix G, Algorithm 2), one document."""

    def __init__(self, attack: TOBLEND, original: str, words: list, scorer):
        from humanize.models import load_sentence_encoder, token_logprobs

        self.floor = float(attack.min_similarity)
        self.scorer = scorer.resolved
        self.encoder = load_sentence_encoder(attack.encoder, device=attack.device)
        self.original, self.words = original, words
        offsets, lps = token_logprobs(scorer, original)
        self._ends = [int(e) for e in offsets[:, 1]] if len(offsets) else []
        self._lps = [float(v) for v in lps]
        self._ppl: dict = {}
        self.steps = self.fallbacks = self.candidates = self.kept = 0
        self.min_chosen = math.inf  # the lowest similarity of a candidate QPA chose (not a fallback)

    def span(self, n: int) -> str:
        """The original's first ``n`` words (all of it past its length)."""
        return self.original[: self.words[min(n, len(self.words)) - 1].end()]

    def span_ppl(self, n: int) -> float:
        n = min(n, len(self.words))
        if n not in self._ppl:
            end = self.words[n - 1].end()
            vals = [v for e, v in zip(self._ends, self._lps) if e <= end and not math.isnan(v)]
            self._ppl[n] = math.exp(-sum(vals) / len(vals)) if vals else math.nan
        return self._ppl[n]

    def choose(self, text: str, n_words: int, pieces: dict, fallback: int, scorer: Stream) -> int:
        from humanize.quality.similarity import similarity_with_notes

        self.steps += 1
        cands = {}
        for j, p in pieces.items():
            if p:  # EOS and dropped bytes cannot be ranked
                cands.setdefault(text + p, []).append(j)
        self.candidates += len(cands)
        if not cands:
            self.fallbacks += 1
            return fallback
        texts = list(cands)
        counts = [n_words + _added_words(text, t[len(text):]) for t in texts]
        sims, _, _ = similarity_with_notes([self.span(n) for n in counts], texts, self.encoder)
        passing = [(t, n, float(sim)) for t, n, sim in zip(texts, counts, sims) if sim > self.floor]
        self.kept += len(passing)
        scores = scorer.nll_many([t for t, _, _ in passing]) if passing else []
        best, best_gap, best_sim = None, math.inf, math.nan
        for (t, n, sim), (nll, k) in zip(passing, scores):
            gap = abs(math.exp(nll / k) - self.span_ppl(n)) if k else math.inf
            if best is None or gap < best_gap:
                best, best_gap, best_sim = t, gap, sim
        if best is None:
            self.fallbacks += 1
            return fallback
        self.min_chosen = min(self.min_chosen, best_sim)
        js = cands[best]
        return fallback if fallback in js else js[0]

    def info(self) -> dict:
        return {"qpa_steps": self.steps, "qpa_fallbacks": self.fallbacks, "qpa_candidates": self.candidates,
                "qpa_kept": self.kept,
                "qpa_min_chosen_similarity": self.min_chosen if self.min_chosen < math.inf else None,
                "qpa_scorer": self.scorer, "qpa_encoder": self.encoder.resolved}


class QPA_TOBLEND(TOBLEND):
    """TOBLEND with TH-Bench's Quality-Preserving Attack ranking (Appendix G, Algorithm 2): ``qpa`` is True."""

    name = "qpa_toblend"
    _parameter_constraints = {"qpa": [Options(bool, {True})]}  # use TOBLEND for plain blending

    def __init__(self, models=DEFAULT_MODELS, prefix_words: int = 30, top_k: int = 50,
                 top_p: float = 1.0, temperature: float = 1.0, max_new_tokens: Optional[int] = None, seed: int = 0,
                 device=None, qpa: bool = True, min_similarity: float = 0.7,
                 encoder: str = "all-minilm-l6-v2", incremental: bool = True):
        super().__init__(models=models, prefix_words=prefix_words, top_k=top_k, top_p=top_p,
                         temperature=temperature, max_new_tokens=max_new_tokens, seed=seed, device=device, qpa=qpa,
                         min_similarity=min_similarity, encoder=encoder, incremental=incremental)
