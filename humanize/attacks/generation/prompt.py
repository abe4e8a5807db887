"""The prompt attack (TH-Bench §2.2, ref. [50]: Xu et al. 2023, "An LLM can Fool Itself", PromptAttack).

The attack prompt has PromptAttack's three parts:

1. *original input*: the sample with its ground-truth label ("machine-generated");
2. *attack objective*: a new sample that keeps the meaning and is classified as human-written;
3. *attack guidance*: one of PromptAttack's nine perturbation instructions (character level C1-C3,
   word level W1-W3, sentence level S1-S3), then "only output the new text".

The instructions keep PromptAttack's wording (TH-Bench keeps "the same prompt format and content as
the paper", setup "Evading Attacks") with "sentence" read as "text", since a chunk may hold several sentences; the
label sentence and objective follow its template with our labels.

TH-Bench's Quality-Preserving Attack (QPA, Discussion and Appendix G) adds an instruction to keep the quality
of the text; the paper does not print its wording, so ours is written from its description
(fluent, coherent, semantically intact). ``Prompt(qpa=True)``, registered as ``qpa_prompt``.

Chunking: a small local model cannot rewrite a long document in one go, so with
``chunk_sentences=None`` a generator that runs a local model (one with ``loaded()``, i.e.
:class:`~humanize.generation.local.LocalChat`) gets runs of ``LOCAL_CHUNK_SENTENCES`` (3)
sentences, any other back end (an endpoint) the whole document. Text between chunks is kept.
All chunks of all documents go to the generator in one ``generate`` call.

Answers: :func:`parse_answer` takes the new text out of an answer; an answer that is no
rewrite (empty, an announcement alone, a refusal, an echo of the prompt: :mod:`.answers`)
keeps its chunk (``on_bad_answer="keep"``) or is asked again with another seed, at most
``max_retries`` times (``"retry"``); ``info``: ``kept_chunks``, ``bad_answers`` (per kind), ``retries``.
"""
from __future__ import annotations

import re
from numbers import Integral
from typing import Any, Optional, Sequence, Union

from humanize.params import ComponentParam
from humanize.validation import Interval, SequenceOf, describe_value
from humanize.exceptions import InvalidParameterError
from humanize.models import DEFAULT_CHAT_LM
from humanize.text import sentence_spans

from ..base import document_random
from .rewrite import ANSWER_CONSTRAINTS, GENERATOR_SPEC, Ask, RewriteAttack, add_usage, answer_counts, \
    resolve_paraphraser

__all__ = ["Prompt", "QPAPrompt", "GUIDANCE", "LOCAL_CHUNK_SENTENCES", "parse_answer"]

#: Sentences per chunk for a local generator when ``chunk_sentences`` is None.
LOCAL_CHUNK_SENTENCES = 3

#: PromptAttack's perturbation instructions (Xu et al. 2023, C1-S3), by our name: (code, instruction).
#: ``{unit}`` is what is being rewritten ("text").
GUIDANCE = {
    "typos": ("C1", "Choose at most two words in the {unit}, and change them so that they have typos."),
    "letters": ("C2", "Change at most two letters in the {unit}."),
    "extra_characters": ("C3", "Add at most two extraneous characters to the end of the {unit}."),
    "synonyms": ("W1", "Replace at most two words in the {unit} with synonyms."),
    "delete_words": ("W2", "Choose at most two words in the {unit} that do not contribute to its meaning "
                           "and delete them."),
    "neutral_words": ("W3", "Add at most two semantically neutral words to the {unit}."),
    "handle": ("S1", "Add a randomly generated short meaningless handle after the {unit}, such as @fasuv3."),
    "paraphrase": ("S2", "Paraphrase the {unit}."),
    "syntax": ("S3", "Change the syntactic structure of the {unit}."),
}
_BY_CODE = {code: name for name, (code, _) in GUIDANCE.items()}

#: The label the original carries and the one the attack aims for.
LABEL, TARGET = "machine-generated", "human-written"
UNIT = "text"
#: QPA's quality instruction (TH-Bench App. G describes it; the wording is ours).
QPA_INSTRUCTION = ("The new {unit} must keep the quality of the original: it stays fluent, coherent and "
                   "grammatical, keeps every piece of information and its meaning, and stays close to the "
                   "original's length, style and readability.")

# An answer's lead-in ("Sure! Here is the new text:", "New text:") and trailing notes, which are not the text.
_ACK = re.compile(r"\A\s*(?:sure|certainly|okay|ok|of course|absolutely|alright)\b[^\n]{0,60}?[!.]\s*", re.I)
_ONLY_ACK = re.compile(r"\A(?:sure|certainly|okay|ok|of course|absolutely|alright)\s*[!.,]?\Z", re.I)
_LEAD = re.compile(r"\A\s*(?:(?:here(?:'s|\s+is|\s+are)|below\s+is)\b[^\n:]{0,100}|(?:the\s+)?(?:new|rewritten|"
                   r"modified|revised|paraphrased|updated)\s+(?:text|version|sentences?|passage|paragraph)\b"
                   r"[^\n:]{0,60}|(?:output|answer))\s*:[ \t]*(?:\n\s*)?", re.I)
_NOTE = re.compile(r"\n\s*\(?\s*(?:note|explanation)\s*:.*\Z", re.I | re.S)
_DOUBLE = re.compile('["\u201c\u201d]')
_QUOTED = re.compile('["\u201c]([^"\u201c\u201d]+)["\u201d]')
_QUOTES = (('"', '"'), ("\u201c", "\u201d"), ("'", "'"), ("\u2018", "\u2019"), ("```", "```"), ("`", "`"))


def parse_answer(answer: str, original: str = "") -> str:
    """The new text in a model's answer: lead-ins, trailing notes and wrapping quotes removed.

    When the answer wraps the text in prose (``The new text is "..."``) and ``original`` has no
    double quotes of its own, the last double-quoted span at least half as long as ``original``
    is taken (small models echo the original first, then give the new text).
    """
    text = answer.strip()
    ack = _ACK.match(text)
    if _ONLY_ACK.match(text):
        return ""  # only "Sure!": no text
    if ack and _LEAD.match(text[ack.end():]):
        text = text[ack.end():]
    lead = _LEAD.match(text)
    if lead:
        text = text[lead.end():]
    text = _NOTE.sub("", text).strip()
    for left, right in _QUOTES:
        if len(text) > len(left) + len(right) and text.startswith(left) and text.endswith(right) \
                and left not in text[len(left):-len(right)]:
            return text[len(left):-len(right)].strip()
    if original and not _DOUBLE.search(original):
        quoted = [m.group(1).strip() for m in _QUOTED.finditer(text)]
        quoted = [q for q in quoted if len(q) >= max(8, len(original.strip()) // 2)]
        if quoted:
            return quoted[-1]
    return text


def _guidance_name(value: Any, owner: str = "Prompt") -> str:
    """A guidance name (``GUIDANCE``) from a name or a PromptAttack code, any case."""
    if not isinstance(value, str):
        raise InvalidParameterError(f"{owner}: guidance must be a guidance name or code (a str), "
                                    f"got {describe_value('guidance', value)}")
    name = _BY_CODE.get(value.upper(), value)
    if name not in GUIDANCE:
        raise InvalidParameterError(f"{owner}: guidance must be one of {', '.join(map(repr, GUIDANCE))}, their codes "
                                    f"({', '.join(_BY_CODE)}), 'random' or a list of these, got "
                                    f"{describe_value('guidance', value)}")
    return name


def chat_generator(owner: str, value: Any):
    """A chat generator from an ``llm`` value (a plain-prompt one is refused, naming ``owner``)."""
    gen = resolve_paraphraser(owner, value)
    if getattr(gen, "kind", "chat") != "chat":
        raise TypeError(f"{owner}: llm must be a chat generator; {type(gen).__name__} takes "
                        f"plain prompts (use it with the paraphrase attacks)")
    return gen


class Prompt(RewriteAttack):
    """Ask an LLM to rewrite a machine-generated text so that it reads as human-written (PromptAttack).

    llm : generator spec (see :func:`humanize.generation.resolve_generator`): a chat model name,
        ``"endpoint:<model>"``, a dict with ``backend``, or a :class:`~humanize.generation.Generator`;
        default :data:`~humanize.models.DEFAULT_CHAT_LM` (Qwen2.5-Coder-0.5B-Instruct), not SmolLM2-135M,
        the default detectors' scoring model (issue #19 §4; ``"smollm2-135m-instruct"``: the default before it)
    guidance : a perturbation instruction by name (``GUIDANCE``) or PromptAttack code (``"S2"``), a list
        of them (one drawn per document with the seed), or ``"random"`` (any of the nine)
    qpa : add TH-Bench's quality-preserving instruction (App. G)
    chunk_sentences : sentences per request; None = 3 for a local model, the whole document otherwise
    seed : drives the guidance draw and the sampling seeds (per document and chunk)
    on_bad_answer : ``"keep"`` (a chunk whose answer is no rewrite stays as it was) or ``"retry"``
        (ask again with the next attempt's seed, at most ``max_retries`` times, then keep it)
    """

    name = "prompt"
    # 2: llm defaults to DEFAULT_CHAT_LM (was SmolLM2-135M); 3: answers that are no rewrite keep their chunk
    version = "3"
    _component_params = {"llm": ComponentParam("generator", lambda self, value: chat_generator(type(self).__name__, value))}
    _parameter_constraints = {
        "llm": GENERATOR_SPEC,
        "guidance": ["str", SequenceOf("str", nonempty=True)],
        "qpa": ["boolean"],
        "chunk_sentences": [Interval(Integral, 1, None), None],
        **ANSWER_CONSTRAINTS,
    }

    def __init__(self, llm: Any = DEFAULT_CHAT_LM, guidance: Union[str, Sequence[str]] = "paraphrase",
                 qpa: bool = False, chunk_sentences: Optional[int] = None, seed: int = 0,
                 on_bad_answer: str = "keep", max_retries: int = 2):
        self._init_params(locals())

    # -- parameters -----------------------------------------------------------------
    def _check(self) -> None:
        super()._check()
        self._guidance_pool()  # each name or code must be known (a registry lookup)

    def _guidance_pool(self) -> tuple[str, ...]:
        """The guidance names a document's instruction is drawn from (one name: no draw)."""
        g, who = self.guidance, type(self).__name__
        if isinstance(g, str):
            return tuple(GUIDANCE) if g.lower() == "random" else (_guidance_name(g, who),)
        return tuple(_guidance_name(x, who) for x in g)

    def generator(self):
        """The resolved generator (built once per ``llm`` value; models load on the first generate)."""
        return self.component("llm")

    # -- the prompt -----------------------------------------------------------------
    def document_guidance(self, text: str) -> str:
        """The guidance name for ``text``: fixed, or drawn from the pool with the seed and the document."""
        pool = self._guidance_pool()
        if len(pool) == 1:
            return pool[0]
        return pool[document_random(int(self.seed), f"{self.name}/guidance", text).randrange(len(pool))]

    def prompt_parts(self, text: str, guidance: Optional[str] = None) -> dict:
        """The three parts of the attack prompt: ``original_input``, ``attack_objective``, ``attack_guidance``."""
        name = _guidance_name(guidance) if guidance is not None else self.document_guidance(text)
        conditions = [f"1. Keeping the semantic meaning of the new {UNIT} unchanged;",
                      f"2. The new {UNIT} should be classified as {TARGET}."]
        if self.qpa:
            conditions.append("3. " + QPA_INSTRUCTION.format(unit=UNIT))
        return {
            "original_input": f'The original {UNIT} "{text}" is classified as {LABEL}.',
            "attack_objective": f"Your task is to generate a new {UNIT} which must satisfy the following "
                                f"conditions:\n" + "\n".join(conditions),
            "attack_guidance": f"You can finish the task by modifying the {UNIT} using the following guidance:\n"
                               f"{GUIDANCE[name][1].format(unit=UNIT)}\n"
                               f"Only output the new {UNIT} without anything else.",
        }

    def build_prompt(self, text: str, guidance: Optional[str] = None) -> str:
        """The user message: the three parts, one paragraph each."""
        parts = self.prompt_parts(text, guidance)
        return "\n\n".join((parts["original_input"], parts["attack_objective"], parts["attack_guidance"]))

    # -- chunks ---------------------------------------------------------------------
    def chunk_size(self) -> Optional[int]:
        """Sentences per request: ``chunk_sentences``, or the rule in the module docstring (None = whole)."""
        if self.chunk_sentences is not None:
            return self.chunk_sentences
        return LOCAL_CHUNK_SENTENCES if callable(getattr(self.generator(), "loaded", None)) else None

    @staticmethod
    def chunks(text: str, size: Optional[int]) -> list[tuple[int, int]]:
        """``(start, end)`` of each run of ``size`` sentences (None: one span from first to last sentence)."""
        spans = sentence_spans(text) or ([(0, len(text))] if text.strip() else [])
        if not spans:
            return []
        step = len(spans) if size is None else size
        return [(spans[i][0], spans[min(i + step, len(spans)) - 1][1]) for i in range(0, len(spans), step)]

    # -- running --------------------------------------------------------------------
    def rewrite(self, texts: list[str]) -> list[tuple[str, dict]]:
        gen = self.generator()
        size = self.chunk_size()
        plans, asks = [], []
        for text in texts:
            guidance = self.document_guidance(text)
            spans = self.chunks(text, size)
            plans.append((guidance, spans))
            asks.extend(Ask(text[a:b], self.build_prompt(text[a:b], guidance),
                            (lambda attempt, text=text, j=j: self.request_seed(text, j, attempt)))
                        for j, (a, b) in enumerate(spans))
        answered = self.ask_chunks(gen, asks, parse_answer) if asks else []
        out, k = [], 0
        for text, (guidance, spans) in zip(texts, plans):
            mine = answered[k:k + len(spans)]
            k += len(spans)
            pieces, pos = [], 0
            for (a, b), ans in zip(spans, mine):
                pieces += [text[pos:a], text[a:b] if ans.text is None else ans.text]
                pos = b
            pieces.append(text[pos:])
            info = {"guidance": guidance, "chunks": len(spans),
                    "truncated_chunks": sum(ans.generations[-1].finish_reason == "length" for ans in mine)}
            info.update(answer_counts(mine))
            out.append(("".join(pieces), add_usage(info, [g for ans in mine for g in ans.generations])))
        return out


class QPAPrompt(Prompt):
    """:class:`Prompt` with TH-Bench's quality-preserving instruction on (App. G), registered as ``qpa_prompt``."""

    name = "qpa_prompt"

    def __init__(self, llm: Any = DEFAULT_CHAT_LM, guidance: Union[str, Sequence[str]] = "paraphrase",
                 qpa: bool = True, chunk_sentences: Optional[int] = None, seed: int = 0,
                 on_bad_answer: str = "keep", max_retries: int = 2):
        super().__init__(llm=llm, guidance=guidance, qpa=qpa, chunk_sentences=chunk_sentences, seed=seed,
                         on_bad_answer=on_bad_answer, max_retries=max_retries)
