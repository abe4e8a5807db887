"""Detector-guided paraphrasing: Adversarial Paraphrasing (Cheng et al., NeurIPS 2025, arXiv 2506.07001).

An instruction LLM paraphrases the document ``chunk_sentences`` sentences at a time (the chunks of
:class:`~.paraphrase.Paraphrase`, same prompt, same answer cleaning and classification) while a
guidance detector, the *guide*, steers it towards text the guide scores as human (in this library a
higher score is more machine-like, so the lowest score wins):

- ``mode="token"`` (the paper's algorithm): at every decoding step the candidate next tokens, the
  top-``top_p`` nucleus within the ``top_k`` most probable (the paper: 50 and 0.99), are each
  appended to the chunk's answer so far and scored by the guide, all candidates of the step (of
  every chunk decoding together) in ONE guide call; the lowest-scored candidate is taken (ties: the
  more probable). It decodes inside :meth:`LocalChat.generate_guided
  <humanize.generation.local.LocalChat.generate_guided>`, so it needs a local paraphraser. Nothing
  is sampled: the output depends on the document, the models and the guide only. Cost: one guide
  call per generated token, scoring up to ``top_k`` texts (``info["candidates_per_step"]``).
  Candidates that are blank so far (a first token that is only whitespace) are not scored and only
  taken when every candidate is blank. A causal-LM guide (the metric detectors, Fast-DetectGPT,
  Binoculars, a fitted metric_lr: a detector with ``incremental_scorer()``) is scored incrementally
  with ``incremental=True`` (the default): per chunk, its key/value cache over the committed answer
  (re-tokenised with the guide's tokenizer, the last tokens held back) grows by the chosen token
  each step, and the step's candidates are scored as short extensions of it in one batched forward
  pass (:mod:`humanize.detectors.lm_incremental`), instead of re-scoring every candidate's whole
  text. Scores equal the full re-scoring's up to floating-point rounding (about 1e-5 relative), so
  the choice can differ from ``incremental=False`` only where two candidates' scores are that
  close; ``incremental`` is therefore part of the parameters (and the fingerprint). Any other guide
  (tfidf_lr, a classifier, a user's plug-in) is scored through its text interface.
  ``min_length_ratio``: an answer cannot end (its stop tokens are no candidates) before it has this
  fraction of its chunk's tokens (paraphraser tokens; 0.75 by default, 0 lets it end at any step).
  Without it a guide that scores the unfinished answer as more human than any continuation ends the
  answer after a few tokens (measured: 21 tokens for a 120-word text, with SmolLM2 Fast-DetectGPT
  guiding), which evades by dropping what the text said.
- ``mode="rerank"`` (the cheap form, as StealthRL's tables run it): ``n_candidates`` paraphrases are
  sampled per chunk (each with its own seed from the attack's seed, the document, the chunk and the
  candidate) and the one the guide scores lowest is kept. Any chat back end (local, endpoint, a
  user's Generator). Cost: ``n_candidates`` LLM queries and guide texts per chunk, one guide call
  for the whole batch.

A candidate whose answer is no rewrite (empty, an announcement alone, a refusal, an echo of the
prompt: :mod:`.answers`) is not scored; a chunk without any usable candidate keeps its text.
``info``: ``mode``, ``chunks``, ``kept_chunks``, ``truncated_chunks``, ``bad_answers``, the LLM usage
(``llm_queries``, ``llm_tokens_in``, ``llm_tokens_out``), ``guide_queries`` (candidate texts the guide
scored for this document), ``detector_queries`` (everything sent to the guide: ``guide_queries`` plus
the two texts of ``guide_score_before`` / ``guide_score_after``, the guide's score of the original and
of the output), and per mode ``guide_steps`` and ``candidates_per_step`` (their mean; token) or
``candidates_per_chunk`` (usable candidates of each chunk; rerank). Token mode with incremental
scoring adds ``guide_scoring="incremental"`` (``"texts"`` otherwise), ``guide_forward_passes`` and
``guide_forward_tokens`` (passes and new token positions through the guide's models for this
document's chunks) and ``guide_rescored`` (candidates whose guide tokens did not extend the cached
prefix, scored from scratch). A text-interface guide's forward passes are batched across documents
and cached, so they are not attributed to documents (``benchmarks/bench_guided.py`` counts them).

The guide's scoring model and the paraphraser's model are kept disjoint (the project's rule for
attack and detector models): the same model on both sides is refused unless
``allow_shared_model=True``.

``constraints`` (issue #23 §3): QPA's text constraints (:mod:`humanize.attacks.text_constraints`,
``"qpa"`` for TH-Bench's three) veto candidates: in rerank mode before the guide scores them, in
token mode at the chunk's end, where a vetoed chunk falls back to a plain paraphrase and then to its
text (:mod:`._veto`; ``info``: ``vetoed``, ``vetoes``, ``fallback_chunks``, ``vetoed_chunks``). The guide's
candidate texts are reported to the cost meter as ``guide_queries``. A preset paraphraser
(``"authormist"``, ``"stealthrl"``: :mod:`humanize.generation.presets`) is prompted as it was trained.
"""
from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np

from humanize.params import ComponentParam
from humanize.validation import NONBLANK_STR, HasMethods, Interval, Options, SequenceOf
from humanize.cost import report
from humanize.generation.base import Generator
from humanize.models import DEFAULT_CHAT_LM

from ..targets import QueriesDetector, check_detector_spec, check_ready, check_train_spec
from ..text_constraints import TextConstraint
from ._veto import add_vetoes, resolve_constraints, veto, veto_token_chunks
from .answers import classify_answer
from .paraphrase import DEFAULT_INSTRUCTION, MAX_CHUNK_CHARS, clean_answer
from .rewrite import GENERATOR_SPEC, Ask, RewriteAttack, add_usage, chunk_prompt, resolve_paraphraser

__all__ = ["AdversarialParaphrase", "shared_models"]

#: Keys of a model identity that describe where it runs, not which weights it is.
_RUNTIME_KEYS = ("kind", "device_type", "dtype")


def _identities(obj: Any) -> dict:
    """``{canonical identity: parameter}`` of the models ``obj``'s ``_model_params`` name (weights only)."""
    from humanize._canonical import canonical_json
    from humanize.models.identity import model_identity

    out = {}
    for k in getattr(obj, "_model_params", ()):
        v = getattr(obj, k, None)
        if v is None or not (isinstance(v, str) or hasattr(v, "resolved")):
            continue
        try:
            ident = {a: b for a, b in model_identity(v).items() if a not in _RUNTIME_KEYS}
        except Exception:  # noqa: BLE001 - a model that cannot be found fails with its own message on loading
            ident = {"name": str(getattr(v, "resolved", v))}
        out[canonical_json(ident)] = k
    return out


def shared_models(guide: Any, generator: Any) -> list[str]:
    """``"guide.<param> = paraphraser.<param>"`` for each model the guide's detector and the generator share."""
    from ..targets import build_detector

    det = build_detector(guide, "AdversarialParaphrase", "guide")
    mine = _identities(generator)
    return [f"guide {det.name}.{k} is the paraphraser's {mine[ident]}"
            for ident, k in _identities(det).items() if ident in mine]


def chat_paraphraser(value: Any) -> Generator:
    """AdversarialParaphrase's back end from its ``paraphraser`` value: a chat generator."""
    gen = resolve_paraphraser("AdversarialParaphrase", value)
    if gen.kind != "chat":
        raise ValueError(f"AdversarialParaphrase: the paraphraser must be a chat generator, got the "
                         f"{gen.kind} {type(gen).__name__} (DIPPER rewrites whole windows: use paraphrase)")
    return gen


class AdversarialParaphrase(QueriesDetector, RewriteAttack):
    """Paraphrase each document while a guide detector picks the most human-scored tokens or candidates.

    ``paraphraser``: a chat :class:`~humanize.generation.Generator`, a model name,
    ``"endpoint:<model>"`` or a dict with ``"backend"`` (as :class:`~.paraphrase.Paraphrase`; ``mode="token"``
    needs a :class:`~humanize.generation.local.LocalChat`). ``guide``: a detector name, a table
    ``{"name": ..., **params}``, a :class:`~humanize.detectors.base.Detector` or a
    :class:`~humanize.detectors.target.Target` (queried as given); a learnable one is fit on ``train``
    (as RAFT's target, :mod:`humanize.attacks.targets`). ``top_k``, ``top_p``: the candidate
    tokens of a step (token mode); ``min_length_ratio``: the least answer length, as a fraction of the chunk's
    tokens, before the guide may end it (token mode); ``n_candidates``: paraphrases per chunk (rerank mode). ``constraints``:
    QPA's :class:`~humanize.attacks.text_constraints.TextConstraint` objects (or ``"qpa"``) that
    veto candidates (module docstring).
    See the module docstring for the algorithm, its cost and ``info``.
    """

    name = "adversarial_paraphrase"
    version = "2"  # 2: min_length_ratio (token mode answers no longer end after a few tokens)
    _detector_param = "guide"
    _parameter_constraints = {
        "paraphraser": GENERATOR_SPEC,
        "mode": [Options(str, {"token", "rerank"})],
        "top_k": [Interval(Integral, 1, None)],
        "top_p": [Interval(Real, 0, 1, closed="right")],
        "n_candidates": [Interval(Integral, 1, None)],
        "chunk_sentences": [Interval(Integral, 1, None)],
        "instruction": [NONBLANK_STR],
        "allow_shared_model": ["boolean"],
        # a word-level CandidateConstraint (word_ok, allows) passes here to be refused with a pointer (_veto)
        "constraints": [SequenceOf(TextConstraint, HasMethods("word_ok", "allows"),
                                   name="a list of TextConstraint (QPA's: e.g. sentence_constraints())"),
                        Options(str, {"qpa"}), None],
        "incremental": ["boolean"],
        "min_length_ratio": [Interval(Real, 0, 1, closed="both")],
    }
    _component_params = {
        "paraphraser": ComponentParam("generator", lambda self, value: chat_paraphraser(value)),
        "guide": ComponentParam("detector", train="train"),
        "train": ComponentParam("training_set"),
    }

    def __init__(self, paraphraser: Any = DEFAULT_CHAT_LM, guide: Any = "fast_detectgpt", mode: str = "token",
                 top_k: int = 50, top_p: float = 0.99, n_candidates: int = 4, chunk_sentences: int = 3,
                 instruction: str = DEFAULT_INSTRUCTION, train: Any = None, seed: int = 0,
                 allow_shared_model: bool = False, constraints: Any = None, incremental: bool = True,
                 min_length_ratio: float = 0.75):
        self.paraphraser = paraphraser
        self.guide = guide
        self.mode = mode
        self.top_k = top_k
        self.top_p = top_p
        self.n_candidates = n_candidates
        self.chunk_sentences = chunk_sentences
        self.instruction = instruction
        self.train = train
        self.seed = seed
        self.allow_shared_model = allow_shared_model
        self.constraints = constraints
        self.incremental = incremental
        self.min_length_ratio = min_length_ratio
        self._validate()

    def _check(self) -> None:
        check_detector_spec("AdversarialParaphrase", "guide", self.guide)
        check_train_spec("AdversarialParaphrase", self.train)
        check_ready("AdversarialParaphrase", "guide", self.guide, self.train, "train")
        resolve_constraints("AdversarialParaphrase", self.constraints)
        gen = self.generator()
        if self.mode == "token" and not callable(getattr(gen, "generate_guided", None)):
            raise ValueError(f"AdversarialParaphrase: mode='token' decodes inside a local model (LocalChat); "
                             f"{type(gen).__name__} has no generate_guided(): use mode='rerank'")
        if not self.allow_shared_model:
            shared = shared_models(self.guide, gen)
            if shared:
                raise ValueError(f"AdversarialParaphrase: the guide scores with the paraphraser's own model "
                                 f"({'; '.join(shared)}); attack and detector models are kept disjoint: pick "
                                 f"another guide or paraphraser, or pass allow_shared_model=True")

    def generator(self) -> Generator:
        """The paraphraser as a chat :class:`Generator` (resolved once per parameter value)."""
        return self.component("paraphraser")

    # -- scoring ----------------------------------------------------------------------
    def _scores(self, texts: list[str], nan: float = math.inf) -> list[float]:
        """The guide's scores of ``texts`` in one call; blank texts are not sent and score +inf, a NaN
        score is ``nan`` (+inf: never chosen). A guide that scores every text it is sent NaN cannot
        guide: :class:`~humanize.exceptions.RunError` (one line), not an attack that "succeeds" at +inf."""
        out = [math.inf] * len(texts)
        send = [i for i, t in enumerate(texts) if t.strip()]
        if send:
            got = np.asarray(self.target().score([texts[i] for i in send]), dtype=float)
            if got.shape != (len(send),):
                raise RuntimeError(f"AdversarialParaphrase: the guide returned {got.shape} scores for "
                                   f"{len(send)} texts")
            _check_guide(self, got)
            for i, s in zip(send, got.tolist()):
                out[i] = nan if math.isnan(s) else float(s)
        return out

    # -- rewriting ----------------------------------------------------------------------
    def rewrite(self, texts: list[str]) -> list[tuple[str, dict]]:
        from humanize.generation.dipper import sentence_groups

        fits = (lambda s: len(s) <= MAX_CHUNK_CHARS)
        plans = [sentence_groups(t, self.chunk_sentences, fits) for t in texts]
        chunks = [(d, k, t[a:b]) for d, (t, plan) in enumerate(zip(texts, plans)) for k, (a, b) in enumerate(plan)]
        infos = [{"mode": self.mode, "chunks": len(plan), "kept_chunks": 0, "truncated_chunks": 0, "bad_answers": {},
                  "guide_queries": 0} for plan in plans]
        run = self._token if self.mode == "token" else self._rerank
        answers = run(texts, chunks, infos) if chunks else []
        if self.constraints is not None and self.mode == "token" and chunks:
            answers = veto_token_chunks(self, texts, chunks, answers, infos)
        out = []
        pos = 0
        for t, plan, info in zip(texts, plans, infos):
            parts, at = [], 0
            for (a, b), ans in zip(plan, answers[pos:pos + len(plan)]):
                parts += [t[at:a], t[a:b] if ans is None else ans]
                at = b
            pos += len(plan)
            parts.append(t[at:])
            out.append("".join(parts))
        measured = self._scores(list(texts) + out, nan=math.nan)  # a NaN measurement stays NaN, never "+inf"
        n = len(texts)
        for d, info in enumerate(infos):
            info["guide_score_before"], info["guide_score_after"] = measured[d], measured[n + d]
            info["detector_queries"] = info["guide_queries"] + 2
        # the cost meter counts the guide's candidate texts next to the generator's queries
        report(guide_queries=sum(info["guide_queries"] for info in infos))
        return list(zip(out, infos))

    def _prompt(self, chunk: str) -> str:
        return chunk_prompt(self.generator(), self.instruction, chunk, DEFAULT_INSTRUCTION)

    def _count_bad(self, info: dict, kind: str) -> None:
        info["bad_answers"][kind] = info["bad_answers"].get(kind, 0) + 1

    def _token(self, texts: list[str], chunks: list, infos: list[dict]) -> list:
        """Token mode: every chunk decoded together, one guide call per step."""
        from humanize.generation.base import Request, chat

        gen = self.generator()
        reqs = [Request(chat(self._prompt(c)), self.request_seed(texts[d], k)) for d, k, c in chunks]

        sent = [0] * len(reqs)  # candidate texts each chunk sent to the guide
        scorer = self.target().incremental_scorer() if self.incremental else None
        if scorer is not None:
            scorer.start(range(len(reqs)))

        def scored(partials: list, candidates: list, rows: list) -> list:
            """Each row's candidate scores: blank texts are not sent (+inf), NaN scores are +inf."""
            if scorer is None:
                flat = self._scores([c for row in candidates for c in row])
                out, at = [], 0
                for row in candidates:
                    out.append(flat[at:at + len(row)])
                    at += len(row)
                return out
            send = [[i for i, c in enumerate(row) if c.strip()] for row in candidates]
            for p, r in zip(partials, rows):
                scorer.commit(r, p)
            got = scorer.score_steps([(r, [row[i] for i in idx]) for row, r, idx in zip(candidates, rows, send)])
            _check_guide(self, np.concatenate([np.asarray(v, dtype=float).ravel() for v in got]) if got else
                         np.zeros(0))
            out = []
            for row, idx, vals in zip(candidates, send, got):
                mine = [math.inf] * len(row)
                for i, v in zip(idx, vals.tolist()):
                    mine[i] = math.inf if math.isnan(v) else float(v)
                out.append(mine)
            return out

        def choose(partials: list, candidates: list, rows: list) -> list:
            for row, r in zip(candidates, rows):
                sent[r] += sum(bool(c.strip()) for c in row)
            # the first lowest: the more probable of equal scores
            return [int(np.argmin(mine)) for mine in scored(partials, candidates, rows)]

        gens, counts = gen.generate_guided(reqs, choose, top_k=int(self.top_k), top_p=float(self.top_p),
                                           min_new_tokens=self._min_new_tokens(gen, [c for _, _, c in chunks]))
        steps: dict = {}
        answers = []
        forward = (("forward_passes", "guide_forward_passes"), ("forward_tokens", "guide_forward_tokens"),
                   ("rescored", "guide_rescored"))
        for info in infos:
            info["guide_scoring"] = "texts" if scorer is None else "incremental"
            if scorer is not None:
                info.update({name: 0 for _, name in forward})
        for c, ((d, k, chunk), g, req, cnt, n_sent) in enumerate(zip(chunks, gens, reqs, counts, sent)):
            info = infos[d]
            add_usage(info, [g])
            info["guide_queries"] += n_sent
            if scorer is not None:
                got = scorer.counts(c)
                for key, name in forward:
                    info[name] += got[key]
            steps.setdefault(d, []).extend(cnt)
            info["truncated_chunks"] += g.finish_reason == "length"
            new = clean_answer(g.text, chunk)
            kind = classify_answer(g.text, new, chunk, req.messages[-1][1])
            if kind == "text":
                answers.append(new)
            else:
                self._count_bad(info, kind)
                info["kept_chunks"] += 1
                answers.append(None)
        for d, info in enumerate(infos):
            mine = steps.get(d, [])
            info["guide_steps"] = len(mine)
            info["candidates_per_step"] = round(sum(mine) / len(mine), 3) if mine else 0.0
        return answers

    def _min_new_tokens(self, gen, chunks: list[str]) -> list[int]:
        """Per chunk: ``min_length_ratio`` of its paraphraser tokens, at most the answer's budget less one."""
        ratio = float(self.min_length_ratio)
        if ratio <= 0:
            return [0] * len(chunks)
        from humanize.models.text import model_input

        tok = gen.loaded().tokenizer
        budget = int(getattr(gen, "max_new_tokens", 0) or 0)
        out = []
        # counted as the paraphraser reads them: a lone surrogate (U+D800-U+DFFF) as U+FFFD, never a crash
        for c in model_input(chunks, where="AdversarialParaphrase chunk", warn=False)[0]:
            n = math.ceil(ratio * len(tok(c, add_special_tokens=False)["input_ids"]))
            out.append(max(0, min(n, budget - 1)) if budget else n)
        return out

    def _rerank(self, texts: list[str], chunks: list, infos: list[dict]) -> list:
        """Rerank mode: ``n_candidates`` sampled paraphrases per chunk, the guide's lowest kept."""
        n = int(self.n_candidates)
        asks = [Ask(c, self._prompt(c), (lambda attempt, t=texts[d], k=k, j=j:
                                         self.request_seed(t, (j << 32) | k, attempt)))
                for d, k, c in chunks for j in range(n)]
        answered = self.ask_chunks(self.generator(), asks, clean_answer)
        good = [i for i, a in enumerate(answered) if a.text is not None]
        vetoed_by: dict = {}
        if self.constraints is not None and good:  # the constraints filter the candidates before the guide picks
            ok, by = veto(self._constraint_objects(), [chunks[i // n][2] for i in good],
                          [answered[i].text for i in good])
            vetoed_by = {i: b for i, b in zip(good, by) if b is not None}
            good = [i for i, keep in zip(good, ok.tolist()) if keep]
        scores = dict(zip(good, self._scores([answered[i].text for i in good])))
        answers = []
        for c, (d, k, chunk) in enumerate(chunks):
            info = infos[d]
            mine = range(c * n, (c + 1) * n)
            for i in mine:
                add_usage(info, answered[i].generations)
                for kind in answered[i].bad:
                    self._count_bad(info, kind)
            usable = [i for i in mine if i in scores]
            if self.constraints is not None:
                add_vetoes(info, [vetoed_by.get(i) for i in mine])
                info["vetoed_chunks"] = info.get("vetoed_chunks", 0) + bool(any(i in vetoed_by for i in mine)
                                                                           and not usable)
            info.setdefault("candidates_per_chunk", []).append(len(usable))
            info["guide_queries"] += sum(answered[i].text.strip() != "" for i in usable)
            best = min(usable, key=lambda i: (scores[i], i)) if usable else None
            if best is None:
                info["kept_chunks"] += 1
                answers.append(None)
                continue
            info["truncated_chunks"] += answered[best].generations[-1].finish_reason == "length"
            answers.append(answered[best].text)
        return answers

    # -- constraints (QPA's, vetoing candidates) ---------------------------------------------
    def _constraint_objects(self) -> list:
        found = self.__dict__.get("_constraint_list")
        if found is None or found[0] is not self.constraints:
            found = (self.constraints, resolve_constraints("AdversarialParaphrase", self.constraints))
            self.__dict__["_constraint_list"] = found
        return found[1]


def _check_guide(attack, scores: np.ndarray) -> None:
    """Refuse a guide whose every score of a call is NaN (a broken detector, an endpoint that answers
    nothing usable): one line naming the guide, instead of candidates all tied at +inf."""
    if scores.size and np.isnan(scores).all():
        from humanize.exceptions import RunError

        guide = attack.target()
        name = getattr(getattr(guide, "detector", guide), "name", type(guide).__name__)
        raise RunError(f"{type(attack).__name__}: the guide detector {name!r} scored all {scores.size} text(s) it "
                       f"was sent NaN; it cannot guide the rewriting (check the detector: a failed model, an "
                       f"endpoint's empty answer)")
