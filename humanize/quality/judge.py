"""Meaning preserved, as an LLM judge rates it (an LLM-as-a-judge meter: Zheng et al. 2023, "Judging
LLM-as-a-Judge with MT-Bench and Chatbot Arena", NeurIPS, Section 3, single-answer grading).

A chat model (any :mod:`humanize.generation` back end: an OpenAI-compatible endpoint or a local
model) reads the original and the rewrite and answers with one integer on this scale:

- 5: same meaning: every fact, claim, number and qualifier of the original is kept, nothing is added
- 4: nearly the same: one minor detail or nuance is lost, weakened or added
- 3: partly the same: the main point is kept, but some facts are missing, changed or added
- 2: mostly different: the main point is changed or largely lost
- 1: different or opposite meaning: unrelated to the original, or contradicting it

The system message is ``You compare two texts for meaning. You answer with a single integer
from 1 to 5.``; the user message is::

    Does the rewrite say the same thing as the original? Judge the meaning only: ignore wording,
    style, spelling, formatting and length.

    Scale:
    5 = ... (the five lines above)

    Original:
    <<<
    {original}
    >>>

    Rewrite:
    <<<
    {rewrite}
    >>>

    Answer with one integer from 1 to 5 and nothing else.

:func:`judge_prompt` returns this text and the scale. The answer's score is the first integer
1-5 in it, after ``x/5`` or ``x out of 5`` and ``score: x`` forms and with a ``1 to 5`` range
left out ("Score: 4", "4/5", "I'd say 4." all give 4); an answer without one is NaN with a
note. ``judge_meaning = (judge_score - 1) / 4`` in [0, 1]. A pair of identical texts is 5
without a call; an empty or whitespace-only text is NaN with a note.

Determinism: a judge given by name or dict decodes greedily (``temperature=0`` unless the dict
sets it), and every request carries a seed derived from ``seed`` and the pair, so a sampled
judge is as reproducible as its back end makes seeded sampling.
"""
from __future__ import annotations

import hashlib
import math
import re
from numbers import Integral
from typing import Any, Optional, Sequence

import numpy as np

from humanize.validation import Interval

from ._common import check_pairs
from .custom import PairMeter, notes_of

__all__ = ["MeaningJudge", "judge_prompt", "judge_with_notes", "parse_score", "JUDGE_SCALE"]

#: The 1-5 meaning scale the judge is asked to use.
JUDGE_SCALE = {
    5: "same meaning: every fact, claim, number and qualifier of the original is kept, nothing is added",
    4: "nearly the same: one minor detail or nuance is lost, weakened or added",
    3: "partly the same: the main point is kept, but some facts are missing, changed or added",
    2: "mostly different: the main point is changed or largely lost",
    1: "different or opposite meaning: unrelated to the original, or contradicting it",
}
JUDGE_SYSTEM = "You compare two texts for meaning. You answer with a single integer from 1 to 5."
JUDGE_TEMPLATE = (
    "Does the rewrite say the same thing as the original? Judge the meaning only: ignore wording, style, "
    "spelling, formatting and length.\n\n"
    "Scale:\n{scale}\n\n"
    "Original:\n<<<\n{original}\n>>>\n\n"
    "Rewrite:\n<<<\n{rewrite}\n>>>\n\n"
    "Answer with one integer from 1 to 5 and nothing else."
)
_OUT_OF = re.compile(r"(?<![\d.])([1-5])\s*(?:/|out\s+of)\s*5(?![\d]|\.\d)", re.I)
_LABELLED = re.compile(r"\b(?:score|rating|rated|answer)\s*(?:is|of|:|=)?\s*\**\s*([1-5])(?![\d]|\.\d)", re.I)
_RANGE = re.compile(r"(?<![\d.])1\s*(?:-|–|to)\s*5(?![\d.])", re.I)
_BARE = re.compile(r"(?<![\d.])(\d+)(?![\d]|\.\d)")


def judge_prompt() -> dict:
    """The judge's ``system`` message, its user-message ``template`` (``{original}``, ``{rewrite}``) and ``scale``."""
    return {"system": JUDGE_SYSTEM, "template": JUDGE_TEMPLATE.replace("{scale}", _scale_text()),
            "scale": dict(JUDGE_SCALE)}


def _scale_text() -> str:
    return "\n".join(f"{k} = {v}" for k, v in JUDGE_SCALE.items())


def build_messages(original: str, rewrite: str) -> tuple:
    """The chat sent for one pair: ``(("system", ...), ("user", ...))``."""
    user = JUDGE_TEMPLATE.format(scale=_scale_text(), original=original, rewrite=rewrite)
    return (("system", JUDGE_SYSTEM), ("user", user))


def parse_score(answer: str) -> Optional[int]:
    """The score 1-5 in a judge's answer, or None (see the module docstring)."""
    if not isinstance(answer, str):
        return None
    for pattern in (_OUT_OF, _LABELLED):
        m = pattern.search(answer)
        if m:
            return int(m.group(1))
    for m in _BARE.finditer(_RANGE.sub(" ", answer)):
        value = int(m.group(1))
        if 1 <= value <= 5:
            return value
        return None  # the first number is out of range: not a score we can trust
    return None


def _pair_seed(seed: int, original: str, rewrite: str) -> int:
    data = f"{seed}\0judge\0{original}\0{rewrite}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") & ((1 << 63) - 1)


def _shown(answer: str, width: int = 60) -> str:
    text = " ".join(answer.split())
    return repr(text if len(text) <= width else text[:width] + "...")


def resolve_judge(spec: Any):
    """A chat :class:`~humanize.generation.Generator` from a judge spec; greedy when built from a name or dict."""
    from humanize.generation import Generator, resolve_generator

    if isinstance(spec, str) and not spec.strip():
        raise ValueError("judge must not be empty; give a chat model name, 'endpoint:<model>', a dict with "
                         "'backend' or a Generator")
    if not isinstance(spec, (str, dict, Generator)):
        raise TypeError(f"judge must be a chat model name, 'endpoint:<model>', a dict with 'backend' or a "
                        f"Generator, got {type(spec).__name__}")
    if isinstance(spec, dict) and "api_key" in spec:  # the value is never shown
        raise ValueError("judge: a dict spec must not hold api_key (it would be stored with the configuration); "
                         "set the environment variable named by api_key_env (default OPENAI_API_KEY) or pass "
                         "an EndpointChat(api_key=...)")
    gen = resolve_generator(spec)
    if getattr(gen, "kind", "chat") != "chat":
        raise TypeError(f"judge must be a chat generator; {type(gen).__name__} takes plain prompts")
    if not isinstance(spec, Generator) and not (isinstance(spec, dict) and "temperature" in spec) \
            and "temperature" in gen.get_params(deep=False):
        gen.set_params(temperature=0)
    return gen


def judge_name(gen) -> str:
    """What the figures name as their judge: a local model's resolved name, an endpoint's model and URL."""
    loaded = getattr(gen, "loaded", None)
    if callable(loaded):
        return str(loaded().resolved)
    model = getattr(gen, "model", None)
    where = gen.provenance().get("endpoint") if callable(getattr(gen, "provenance", None)) else None
    if isinstance(model, str):
        return f"{model} @ {where}" if where else model
    return type(gen).__name__


class MeaningJudge(PairMeter):
    """Rate with an LLM whether each rewrite says the same thing as its original (scale in the module docstring).

    llm : the judge: a chat model name (local), ``"endpoint:<model>"``, a dict with ``backend``
        (see :func:`humanize.generation.resolve_generator`) or a chat :class:`~humanize.generation.Generator`
    seed : seeds every request (with the pair's texts)
    max_new_tokens : answer length per request (the score comes first)
    batch_size : requests per ``generate`` call (None = all in one; the back end batches within it)
    """

    name = "judge"
    columns = ("judge_score", "judge_meaning", "judge_model")
    #: bump when the prompt, the scale or the parsing changes
    version = "1"
    _library_version = True
    _parameter_constraints = {
        "seed": ["seed"],
        "max_new_tokens": [Interval(Integral, 1, None)],  # answer length per request
        "batch_size": [Interval(Integral, 1, None), None],
    }

    def __init__(self, llm: Any = "endpoint:gpt-4o-mini", seed: int = 0, max_new_tokens: int = 16,
                 batch_size: Optional[int] = None):
        self._init_params(locals())

    def _check(self) -> None:
        self.generator()

    def generator(self):
        """The resolved judge generator (built once per ``llm`` value; models load on the first request)."""
        cached = self.__dict__.get("_generator_cache")
        if cached is None or cached[0] is not self.llm:
            cached = (self.llm, resolve_judge(self.llm))
            self.__dict__["_generator_cache"] = cached
        return cached[1]

    def provenance(self) -> dict:
        """As every component's, with ``llm`` replaced by the resolved generator's provenance (model identity)."""
        out = super().provenance()
        out["params"]["llm"] = self.generator().provenance()
        return out

    def score_with_notes(self, originals, attacked) -> tuple[dict, list[str], str]:
        """``judge_score`` and ``judge_meaning`` arrays, a note per pair and the judge's name."""
        from humanize.generation import Request

        originals, attacked = check_pairs("MeaningJudge", "score_with_notes", originals, attacked)
        gen = self.generator()
        n = len(originals)
        scores = np.full(n, math.nan)
        notes = [""] * n
        todo, requests = [], []
        for i, (o, a) in enumerate(zip(originals, attacked)):
            if not o.strip() or not a.strip():
                notes[i] = "empty original" if not o.strip() else "empty attacked text"
            elif o == a:
                scores[i] = 5.0
            else:
                todo.append(i)
                requests.append(Request(build_messages(o, a), seed=_pair_seed(self.seed, o, a),
                                        max_new_tokens=int(self.max_new_tokens)))
        step = int(self.batch_size or max(len(requests), 1))
        answers = []
        for start in range(0, len(requests), step):
            chunk = requests[start:start + step]
            got = gen.generate(chunk)
            if len(got) != len(chunk):
                raise RuntimeError(f"{type(gen).__name__} returned {len(got)} generations for {len(chunk)} requests")
            answers.extend(got)
        for i, g in zip(todo, answers):
            value = parse_score(g.text)
            if value is None:
                cut = " (cut at max_new_tokens)" if g.finish_reason == "length" else ""
                notes[i] = f"no score 1-5 in the judge's answer {_shown(g.text)}{cut}"
            else:
                scores[i] = float(value)
        return {"judge_score": scores, "judge_meaning": (scores - 1.0) / 4.0}, notes, judge_name(gen)

    def measure(self, originals, attacked) -> tuple[dict, list[str]]:
        """The quality meter's columns ``judge_score``, ``judge_meaning`` and ``judge_model``, and the notes."""
        judged, why, model = self.score_with_notes(originals, attacked)
        cols = {"judge_score": judged["judge_score"], "judge_meaning": judged["judge_meaning"],
                "judge_model": [model] * len(why)}
        return cols, notes_of({"judge": why})


    @classmethod
    def from_quality_params(cls, params: dict) -> "MeaningJudge":
        """The quality meter's ``judge``: as it is when a MeaningJudge, else ``MeaningJudge(judge)``."""
        judge = params.get("judge")
        if judge is None:
            raise ValueError("meters names 'judge' but judge is None; give judge='endpoint:<model>', a local "
                             "chat model name, a dict with 'backend' or a Generator")
        return judge if isinstance(judge, MeaningJudge) else cls(judge)


def judge_with_notes(originals: Sequence[str], attacked: Sequence[str], judge: Any, *, seed: int = 0,
                     max_new_tokens: int = 16, batch_size: Optional[int] = None) -> tuple[dict, list[str], str]:
    """Judge scores for (original, attacked) pairs: arrays, a note per pair, the judge's name.

    ``judge`` is a :class:`MeaningJudge` (its own parameters apply) or anything :class:`MeaningJudge`
    takes as ``llm``.
    """
    if not isinstance(judge, MeaningJudge):
        judge = MeaningJudge(judge, seed=seed, max_new_tokens=max_new_tokens, batch_size=batch_size)
    return judge.score_with_notes(originals, attacked)
