"""The base of every attack that rewrites a document with a generator (TH-Bench §2.2).

Subclasses implement :meth:`RewriteAttack.rewrite`: a list of documents in, a list of
``(new_text, info)`` out, so a whole batch of documents goes to the generator together
(left-padded, length-sorted batches on a local model; concurrent requests on an
endpoint). Each document's sampling seed comes from the attack's seed and the document
itself (:meth:`RewriteAttack.request_seed`), so an output does not depend on the batch.
Empty and whitespace-only documents are returned unchanged without a model call.
A document that comes back unchanged says why in ``info["unchanged"]`` (the key every attack
uses: :meth:`~humanize.attacks.base.Attack.unchanged_reason`).

Chat rewriters ask for their chunks through :meth:`RewriteAttack.ask_chunks`: every answer is
classified (:mod:`.answers`); a bad one (empty, an announcement with no text, a refusal, an
echo of the prompt) keeps its chunk unchanged (``on_bad_answer="keep"``) or is asked again
with another seed, at most ``max_retries`` times (``"retry"``), counted in ``info["bad_answers"]``
(per kind) and ``info["retries"]``.
Edits are the word-level diff of the original and the rewrite (:mod:`.diff`), so
``apply_edits(original, edits) == text`` holds as for every other attack.
"""
from __future__ import annotations

from numbers import Integral
from typing import Any, Callable, NamedTuple, Sequence

from humanize.validation import NONBLANK_STR, InstanceOf, Interval, Options

from ..base import AttackResult, BatchAttack, document_seed
from .answers import classify_answer
from .diff import word_edits

__all__ = ["RewriteAttack", "resolve_paraphraser", "add_usage", "chunk_prompt", "GENERATOR_SPEC",
           "ANSWER_CONSTRAINTS", "Ask", "Answered", "answer_counts"]

#: The parameter constraint of a generator spec (see :func:`humanize.generation.resolve_generator`): a model
#: name, ``"endpoint:<model>"`` or ``"dipper"`` (not blank), a Generator, or a dict with ``"backend"``.
#: Which name or dict resolves is checked when the generator is built, not here.
GENERATOR_SPEC = [NONBLANK_STR, InstanceOf("humanize.generation.base:Generator", name="a Generator"),
                  InstanceOf(dict, name="a dict with 'backend'")]

#: The declared constraints of the answer policy of a chat rewriter (:meth:`RewriteAttack.ask_chunks`).
ANSWER_CONSTRAINTS = {
    "on_bad_answer": [Options(str, {"keep", "retry"})],
    "max_retries": [Interval(Integral, 1, 100, closed="both")],
}


class Ask(NamedTuple):
    """One chunk to ask a chat rewriter for: the chunk, the user message holding it, the request seed per attempt."""

    chunk: str
    prompt: str
    seed: Callable[[int], int]


class Answered(NamedTuple):
    """What came of one :class:`Ask`: the accepted text (None: every answer was bad), the bad kinds, the generations."""

    text: Any
    bad: list
    generations: list


#: Counts a rewrite reports in ``AttackResult.info``: generator calls and their prompt / completion tokens.
USAGE_KEYS = ("llm_queries", "llm_tokens_in", "llm_tokens_out")


def add_usage(info: dict, generations) -> dict:
    """Add a list of :class:`~humanize.generation.Generation` to ``info``'s usage counts (in place)."""
    info["llm_queries"] = info.get("llm_queries", 0) + len(generations)
    info["llm_tokens_in"] = info.get("llm_tokens_in", 0) + sum(g.tokens_in for g in generations)
    info["llm_tokens_out"] = info.get("llm_tokens_out", 0) + sum(g.tokens_out for g in generations)
    return info


def resolve_paraphraser(owner: str, value: Any):
    """A generator from a parameter value (see :func:`humanize.generation.resolve_generator`), errors named."""
    from humanize.generation import resolve_generator

    try:
        return resolve_generator(value)
    except TypeError as exc:
        raise TypeError(f"{owner}: {exc}") from None


def chunk_prompt(gen, instruction: str, chunk: str, default: str) -> str:
    """The user turn asking ``gen`` to paraphrase ``chunk``: ``instruction``, a blank line, the chunk; or, when
    the instruction is the attack's ``default`` and ``gen`` was trained with a prompt of its own (a
    :class:`~humanize.generation.presets.PresetChat`: AuthorMist, StealthRL), that prompt."""
    own = getattr(gen, "paraphrase_prompt", None)
    if callable(own) and instruction == default:
        return own(chunk)
    return f"{instruction}\n\n{chunk}"


class RewriteAttack(BatchAttack):
    """An attack whose output is a model's rewrite of the document; ``rewrite`` does the work."""

    has_rate = False
    version = "1"

    def request_seed(self, text: str, step: int = 0, attempt: int = 0) -> int:
        """The sampling seed of ``text``'s ``step``-th generation (a 63-bit int, private to the document);
        ``attempt`` > 0: the seed of its ``attempt``-th retry after a bad answer."""
        key = f"{self.name}/{step}" if not attempt else f"{self.name}/{step}/retry{attempt}"
        return document_seed(int(getattr(self, "seed", 0)), key, text) & ((1 << 63) - 1)

    def ask_chunks(self, gen, asks: Sequence[Ask], clean: Callable[[str, str], str]) -> list[Answered]:
        """Ask ``gen`` for every chunk in one ``generate`` call (one more per retry round), each answer
        cleaned by ``clean(answer, chunk)`` and classified (:func:`~.answers.classify_answer`).

        A bad answer's chunk is asked again with the seed of the next attempt when ``on_bad_answer`` is
        ``"retry"``, at most ``max_retries`` times; so whether a chunk is retried, and with which seed,
        depends on that chunk's own answers only (never on the batch).
        """
        from humanize.generation.base import Request, chat

        retry = getattr(self, "on_bad_answer", "keep") == "retry"
        rounds = 1 + (int(getattr(self, "max_retries", 0)) if retry else 0)
        texts: list = [None] * len(asks)
        bad: list = [[] for _ in asks]
        gens: list = [[] for _ in asks]
        pending = list(range(len(asks)))
        for attempt in range(rounds):
            if not pending:
                break
            reqs = [Request(chat(asks[i].prompt), asks[i].seed(attempt)) for i in pending]
            out = gen.generate(reqs)
            if len(out) != len(reqs):
                raise RuntimeError(f"{type(gen).__name__} returned {len(out)} generations for {len(reqs)} requests")
            again = []
            for i, g in zip(pending, out):
                gens[i].append(g)
                new = clean(g.text, asks[i].chunk)
                kind = classify_answer(g.text, new, asks[i].chunk, asks[i].prompt)
                if kind == "text":
                    texts[i] = new
                else:
                    bad[i].append(kind)
                    again.append(i)
            pending = again
        return [Answered(t, b, g) for t, b, g in zip(texts, bad, gens)]

    def rewrite(self, texts: list[str]) -> list[tuple[str, dict]]:
        """``(rewritten text, info)`` for each non-blank document, in order."""
        raise NotImplementedError(f"{type(self).__name__} must implement rewrite()")

    def _results(self, texts: Sequence[str]) -> list[AttackResult]:
        todo = [i for i, t in enumerate(texts) if t.strip()]
        done = dict(zip(todo, self.rewrite([texts[i] for i in todo]))) if todo else {}
        params = self.get_params()
        out = []
        for i, t in enumerate(texts):
            new, info = done.get(i, (t, {"skipped": "blank", "unchanged": "blank document"}))
            if new == t and "unchanged" not in info:
                info = {**info, "unchanged": self.unchanged_reason(t, info)}
            out.append(AttackResult(original=t, text=new, attack=self.name, params=dict(params),
                                    _edits=(lambda t=t, new=new: word_edits(t, new)), info=dict(info)))
        return out

    def unchanged_reason(self, text: str, info: dict) -> str:
        """Why a rewrite left ``text`` as it was: every chunk's answers rejected, or accepted as they were."""
        bad = info.get("bad_answers") or {}
        if bad and info.get("kept_chunks", 0) >= info.get("chunks", 1):
            kinds = ", ".join(f"{k}: {n}" for k, n in sorted(bad.items()))
            return f"every answer rejected ({kinds})"
        return "the rewriter returned the text unchanged"


def answer_counts(answered: Sequence[Answered]) -> dict:
    """``bad_answers`` (per kind, only kinds seen), ``retries`` and ``kept_chunks`` of one document's chunks."""
    bad: dict = {}
    for a in answered:
        for k in a.bad:
            bad[k] = bad.get(k, 0) + 1
    return {"kept_chunks": sum(a.text is None for a in answered), "bad_answers": bad,
            "retries": sum(len(a.generations) - 1 for a in answered)}
