"""Paraphrase attacks: one pass through a paraphraser, and Recursion (TH-Bench §2.2, §4.1; RAID §3.6).

:class:`Paraphrase` rewrites a document with DIPPER (Krishna et al. 2023, RAID's
settings, see :mod:`humanize.generation.dipper`) or with a chat LLM told to paraphrase
(local, or any OpenAI-compatible endpoint). :class:`Recursion` paraphrases the previous
output again, ``depth`` times (Sadasivan et al. 2023, "Can AI-Generated Text be Reliably
Detected?"; TH-Bench §4.1 uses DIPPER with depth 5).

Chat back ends get the document ``chunk_sentences`` sentences at a time (a chunk never
spans a line break, so paragraphs keep their layout; an overlong sentence is cut at
whitespace), one request per chunk and all documents' chunks in one ``generate`` call; the
whitespace between chunks is kept from the original. Chat models often wrap their answer: a first line that
announces it (``"Here is the paraphrased text:"``, ``"Sure! ..."`` ending in a colon), a
leading label (``"Paraphrase:"``) and quotes around the whole answer (when the chunk
itself is not quoted) are removed; nothing else is touched. Each answer is then classified
(:mod:`.answers`): a chunk whose answer is empty, only an announcement (``"Here is the
paraphrased text:"`` and nothing after it), a refusal or an echo of the prompt keeps its
original text (``on_bad_answer="keep"``) or is asked again with another seed, at most
``max_retries`` times (``"retry"``); kept chunks are counted in ``info["kept_chunks"]``, bad
answers per kind in ``info["bad_answers"]``, retries in ``info["retries"]``. Answers cut short by
the generator's token limit (the accepted or last answer of each chunk) are counted in
``info["truncated_chunks"]``.
"""
from __future__ import annotations

import re
from typing import Any

from numbers import Integral

from humanize.params import ComponentParam
from humanize.validation import NONBLANK_STR, InstanceOf, Interval
from humanize.generation.base import Generator
from humanize.models import DEFAULT_CHAT_LM

from .rewrite import (ANSWER_CONSTRAINTS, GENERATOR_SPEC, Ask, RewriteAttack, add_usage, answer_counts,
                      chunk_prompt, resolve_paraphraser)

__all__ = ["Paraphrase", "Recursion", "clean_answer", "DEFAULT_INSTRUCTION"]

DEFAULT_INSTRUCTION = ("Paraphrase the following text. Keep its meaning, its facts and about its length, and change "
                       "the wording. Reply with the paraphrased text only.")
#: Longest chunk sent to a chat model, in characters: one overlong sentence is cut at whitespace.
MAX_CHUNK_CHARS = 2000

_ANNOUNCE = re.compile(r"^(?:sure|certainly|of course|okay|ok|here|below|this is|the following)\b[^\n]{0,120}:\s*\n?",
                       re.IGNORECASE)
_LABEL = re.compile(r"^(?:paraphrased?(?: text| version)?|rewritten(?: text| version)?|rephrased(?: text)?"
                    r"|rewrite|output|answer)\s*:\s*", re.IGNORECASE)
_QUOTES = {'"': '"', "“": "”", "'": "'", "«": "»", "„": "“"}


def clean_answer(answer: str, original: str = "") -> str:
    """A chat model's paraphrase without its chat noise (see the module docstring); conservative."""
    text = answer.strip()
    m = _ANNOUNCE.match(text)
    if m and text[m.end():].strip():
        text = text[m.end():].strip()
    text = _LABEL.sub("", text, count=1).strip()
    close = _QUOTES.get(text[:1])
    if (close and len(text) >= 2 and text.endswith(close) and not original.lstrip().startswith(text[0])
            and close not in text[1:-1] and text[0] not in text[1:-1]):
        text = text[1:-1].strip()
    return text


def _counts(chunks: int, kept: int, generations) -> dict:
    """Chunks sent, chunks that kept their original text, answers cut by the token limit."""
    return {"chunks": chunks, "kept_chunks": kept,
            "truncated_chunks": sum(g.finish_reason == "length" for g in generations)}


def paraphrase_generator(value: Any) -> Generator:
    """Paraphrase's back end from its ``paraphraser`` value (a seq2seq one must rewrite whole documents)."""
    gen = resolve_paraphraser("Paraphrase", value)
    if gen.kind == "seq2seq" and not callable(getattr(gen, "paraphrase_documents", None)):
        raise TypeError(f"Paraphrase: the seq2seq paraphraser {type(gen).__name__} has no paraphrase_documents()")
    return gen


class Paraphrase(RewriteAttack):
    """Rewrite each document with a paraphraser.

    ``paraphraser``: a chat :class:`~humanize.generation.Generator`, a model name,
    ``"endpoint:<model>"``, a dict with ``"backend"``, or ``"dipper"`` / a
    :class:`~humanize.generation.dipper.Dipper` (which windows the document itself,
    ``sent_interval`` sentences at a time, and ignores ``chunk_sentences`` and
    ``instruction``). ``on_bad_answer`` (``"keep"`` or ``"retry"``) and ``max_retries``: what a chat
    answer that is no rewrite does (module docstring). ``info``: ``chunks``, ``kept_chunks``,
    ``truncated_chunks``, ``bad_answers``, ``retries`` and the usage.
    ``max_chunks``: a budget for chat back ends, the document's first ``max_chunks`` chunks rewritten and
    the rest kept as it is (None: every chunk; the demo rewrites one sentence per document).
    The default is :data:`~humanize.models.DEFAULT_CHAT_LM` (Qwen2.5-Coder-0.5B-Instruct), not
    SmolLM2-135M, the default detectors' and perplexity's scoring model (issue #19 §4);
    ``paraphraser="smollm2-135m-instruct"`` is the default before it.
    """

    name = "paraphrase"
    # 2: the default paraphraser is DEFAULT_CHAT_LM (was SmolLM2-135M); 3: answers that are no rewrite
    # (an announcement alone, a refusal, an echo of the prompt) keep their chunk
    version = "3"
    _parameter_constraints = {
        "paraphraser": GENERATOR_SPEC,
        "chunk_sentences": [Interval(Integral, 1, None)],
        "instruction": [NONBLANK_STR],
        **ANSWER_CONSTRAINTS,
        "max_chunks": [Interval(Integral, 1, None), None],
    }
    _component_params = {"paraphraser": ComponentParam("generator", lambda self, value: paraphrase_generator(value))}

    def __init__(self, paraphraser: Any = DEFAULT_CHAT_LM, seed: int = 0, chunk_sentences: int = 3,
                 instruction: str = DEFAULT_INSTRUCTION, on_bad_answer: str = "keep", max_retries: int = 2,
                 max_chunks: Any = None):
        self._init_params(locals())

    def generator(self) -> Generator:
        """The paraphraser as a :class:`Generator` (resolved once per parameter value)."""
        return self.component("paraphraser")

    def _seed(self, text: str, chunk: int, step: int) -> int:
        # step 0 is a plain Paraphrase; Recursion's later steps get seeds of their own
        return self.request_seed(text, (step << 32) | chunk)

    def rewrite(self, texts: list[str], step: int = 0) -> list[tuple[str, dict]]:
        """``(paraphrase, info)`` per document; ``step`` (Recursion's step) only changes the seeds."""
        gen = self.generator()
        if gen.kind == "seq2seq":
            done = gen.paraphrase_documents(texts, [self._seed(t, 0, step) for t in texts])
            return [(new, add_usage(_counts(len(gens), sum(not g.text.strip() for g in gens), gens), gens))
                    for new, gens in done]
        from humanize.generation.dipper import sentence_groups

        fits = (lambda s: len(s) <= MAX_CHUNK_CHARS)
        plans = [sentence_groups(t, self.chunk_sentences, fits)[:self.max_chunks] for t in texts]
        asks = [Ask(t[a:b], chunk_prompt(gen, self.instruction, t[a:b], DEFAULT_INSTRUCTION),
                    (lambda attempt, t=t, k=k: self.request_seed(t, (step << 32) | k, attempt)))
                for t, plan in zip(texts, plans) for k, (a, b) in enumerate(plan)]
        answered = self.ask_chunks(gen, asks, clean_answer) if asks else []
        out, pos = [], 0
        for t, plan in zip(texts, plans):
            mine = answered[pos:pos + len(plan)]
            pos += len(plan)
            parts, at = [], 0
            for (a, b), ans in zip(plan, mine):
                parts += [t[at:a], t[a:b] if ans.text is None else ans.text]
                at = b
            parts.append(t[at:])
            info = _counts(len(plan), 0, [ans.generations[-1] for ans in mine])
            info.update(answer_counts(mine))
            out.append(("".join(parts), add_usage(info, [g for ans in mine for g in ans.generations])))
        return out


class Recursion(RewriteAttack):
    """Paraphrase the previous output again, ``depth`` times (Sadasivan et al. 2023; TH-Bench §4.1).

    ``paraphraser``: a :class:`Paraphrase` (used as given, with its own seed) or anything
    :class:`Paraphrase` accepts (wrapped as ``Paraphrase(paraphraser, seed=seed)``).
    Step ``s`` gets its own sampling seeds. ``info["steps"]``: per step the output length
    in characters and that step's usage; the top-level usage counts are their sums.
    """

    name = "recursion"
    version = "2"  # 2: its Paraphrase steps keep the chunks whose answers are no rewrite (Paraphrase 3)
    _parameter_constraints = {
        "paraphraser": [InstanceOf(Paraphrase, name="a Paraphrase attack"), *GENERATOR_SPEC],
        "depth": [Interval(Integral, 1, None)],
    }
    #: a Paraphrase is used as given (with its own seed); anything else is wrapped, with this attack's seed
    _component_params = {"paraphraser": ComponentParam(
        "attack", lambda self, value: value if isinstance(value, Paraphrase) else Paraphrase(value, seed=self.seed),
        depends=("seed",))}

    def __init__(self, paraphraser: Any = "dipper", depth: int = 5, seed: int = 0):
        self._init_params(locals())

    def paraphrase_attack(self) -> Paraphrase:
        """The one-pass attack each step runs."""
        return self.component("paraphraser")

    def rewrite(self, texts: list[str]) -> list[tuple[str, dict]]:
        para = self.paraphrase_attack()
        current = list(texts)
        infos: list[dict] = [{"steps": []} for _ in texts]
        for step in range(self.depth):
            todo = [i for i, t in enumerate(current) if t.strip()]
            done = para.rewrite([current[i] for i in todo], step=step) if todo else []
            for i, (new, info) in zip(todo, done):
                current[i] = new
                infos[i]["steps"].append({"chars": len(new), **{k: v for k, v in info.items()
                                                                if k.startswith("llm_") or k.endswith("chunks")
                                                                or k in ("bad_answers", "retries")}})
        for info in infos:
            for key in ("llm_queries", "llm_tokens_in", "llm_tokens_out"):
                info[key] = sum(s.get(key, 0) for s in info["steps"])
        return list(zip(current, infos))

    def unchanged_reason(self, text: str, info: dict) -> str:
        steps = info.get("steps") or []
        if steps and all(s.get("bad_answers") and s.get("kept_chunks", 0) >= s.get("chunks", 1) for s in steps):
            bad: dict = {}
            for s in steps:
                for k, n in s["bad_answers"].items():
                    bad[k] = bad.get(k, 0) + n
            return f"every answer rejected ({', '.join(f'{k}: {n}' for k, n in sorted(bad.items()))})"
        return super().unchanged_reason(text, info)
