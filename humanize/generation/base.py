"""One interface for every text generator the rewriting attacks use (TH-Bench §2.2).

A :class:`Generator` turns requests into generations. A request is a chat (a
tuple of ``(role, content)`` pairs) or, for a seq2seq paraphraser, a plain
prompt string, plus a per-request ``seed``: a sampled output depends on its
request and seed only, never on the batch it was sent with, its position or
the process (the attacks derive the seed from the document, see
:func:`humanize.attacks.document_seed`).

Back ends: :class:`~humanize.generation.local.LocalChat` (a transformers causal
LM, batched), :class:`~humanize.generation.endpoint.EndpointChat` (any
OpenAI-compatible server) and :class:`~humanize.generation.dipper.Dipper` (the
T5 paraphraser). Every back end reports ``queries``, ``api_tokens_in`` (prompt
tokens) and ``api_tokens_out`` (completion tokens) to the cost meters running
around the call (:func:`humanize.cost.report`), and returns the same counts per
generation so attacks can put them in ``AttackResult.info``.
"""
from __future__ import annotations

from numbers import Integral, Real
from typing import Any, NamedTuple, Optional, Sequence, Union

from humanize.params import ParamsMixin
from humanize.validation import Interval, validate_parameter_constraints

__all__ = ["Request", "Generation", "Generator", "chat", "check_requests", "report_usage", "GREEDY_BELOW",
           "effective_temperature"]

Messages = tuple  # ((role, content), ...)


class Request(NamedTuple):
    """One generation request.

    ``messages``: a chat, ``((role, content), ...)`` with roles ``system``, ``user``
    or ``assistant``; or a plain ``str`` prompt (seq2seq back ends). ``seed``: the
    request's own sampling seed. ``max_new_tokens``: overrides the generator's.
    ``answer_start``: text the answer is started with (local back ends put it after
    the generation prompt; endpoints send it as a final assistant turn where allowed);
    the returned text does not repeat it.
    """

    messages: Union[Messages, str]
    seed: int = 0
    max_new_tokens: Optional[int] = None
    answer_start: str = ""


class Generation(NamedTuple):
    """What came back: the text, its token counts and why it stopped (``"stop"`` or ``"length"``)."""

    text: str
    tokens_in: int
    tokens_out: int
    finish_reason: str = "stop"


def chat(user: str, system: Optional[str] = None) -> Messages:
    """A one-turn chat, with an optional system message."""
    turns = [("system", system)] if system else []
    return tuple(turns + [("user", user)])


_ROLES = ("system", "user", "assistant")


def check_requests(owner: str, requests: Any, *, plain: bool = False) -> list[Request]:
    """``requests`` as a list of :class:`Request`, or a TypeError/ValueError naming what is wrong.

    ``plain=True`` (seq2seq back ends) wants string prompts, otherwise chats.
    """
    if isinstance(requests, (Request, str)) or not isinstance(requests, (list, tuple)):
        raise TypeError(f"{owner}.generate expects a list of Request, got {type(requests).__name__}")
    out = []
    for i, r in enumerate(requests):
        if not isinstance(r, Request):
            raise TypeError(f"{owner}.generate: item {i} is a {type(r).__name__}, not a Request")
        if plain:
            if not isinstance(r.messages, str):
                raise TypeError(f"{owner} takes plain prompt strings, request {i} holds a {type(r.messages).__name__}")
        else:
            if isinstance(r.messages, str) or not isinstance(r.messages, (tuple, list)) or not r.messages:
                raise TypeError(f"{owner} takes chats ((role, content), ...); request {i} holds "
                                f"{type(r.messages).__name__} {str(r.messages)[:40]!r}")
            for turn in r.messages:
                if (not isinstance(turn, (tuple, list)) or len(turn) != 2 or turn[0] not in _ROLES
                        or not isinstance(turn[1], str)):
                    raise TypeError(f"{owner}: request {i} has a turn {turn!r}; want (role, str) with role in {_ROLES}")
        validate_parameter_constraints(f"{owner}: request {i}", _REQUEST_CONSTRAINTS,
                                       {"seed": r.seed, "max_new_tokens": r.max_new_tokens})
        if type(r.seed) is not int or (r.max_new_tokens is not None and type(r.max_new_tokens) is not int):
            # numpy integers are ints here: plain ints downstream (JSON bodies, torch seeds)
            r = r._replace(seed=int(r.seed), max_new_tokens=None if r.max_new_tokens is None else int(r.max_new_tokens))
        out.append(r)
    return out


#: The sampling parameters every back end shares: temperature >= 0 (0 = greedy), 0 < top_p <= 1.
SAMPLING_CONSTRAINTS = {
    "temperature": [Interval(Real, 0, None)],
    "top_p": [Interval(Real, 0, 1, closed="right")],
    "max_new_tokens": [Interval(Integral, 1, None)],
}
#: Temperatures below this decode greedily (as temperature 0): ``logits / temperature`` overflows for
#: tiny ones (1e-40: every logit is infinite, the softmax NaN, the answer empty), and below 0.01 sampling
#: already picks the most probable token for all practical purposes.
GREEDY_BELOW = 0.01


def effective_temperature(temperature: float) -> float:
    """The temperature a back end samples with: 0.0 (greedy) below :data:`GREEDY_BELOW`, else ``temperature``."""
    t = float(temperature)
    return 0.0 if t < GREEDY_BELOW else t


_REQUEST_CONSTRAINTS = {"seed": ["seed"], "max_new_tokens": [Interval(Integral, 1, None), None]}


def report_usage(generations: Sequence[Generation]) -> None:
    """Tell the running cost meters about a batch of generations (queries and tokens)."""
    from humanize.cost import report

    if generations:
        report(queries=len(generations), api_tokens_in=sum(g.tokens_in for g in generations),
               api_tokens_out=sum(g.tokens_out for g in generations))


class Generator(ParamsMixin):
    """Base class: ``generate(requests) -> list[Generation]``, one per request, in order.

    Subclasses store their constructor arguments (scikit-learn style), declare what each may be
    in ``_parameter_constraints`` (cross-parameter rules in ``_check``) and load nothing before
    the first ``generate``.
    ``kind`` is ``"chat"`` (requests are chats) or ``"seq2seq"`` (plain prompts).
    """

    kind: str = "chat"
    name: str = "generator"

    def generate(self, requests: Sequence[Request]) -> list[Generation]:
        raise NotImplementedError(f"{type(self).__name__} must implement generate()")

    def __call__(self, prompts: Sequence[str], seed: int = 0) -> list[str]:
        """Convenience: one user turn per prompt (or plain prompts), every request seeded ``seed + i``."""
        if isinstance(prompts, str):
            raise TypeError(f"{type(self).__name__}() expects a list of prompts, got a single str")
        reqs = [Request(p if self.kind == "seq2seq" else chat(p), seed + i) for i, p in enumerate(prompts)]
        return [g.text for g in self.generate(reqs)]
