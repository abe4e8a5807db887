"""What a chat rewriter said: is its answer a rewrite of the chunk, or something else?

A chat model asked to rewrite a chunk sometimes answers with no rewrite at all. Taken as
text, such an answer would replace the chunk and count as a successful rewrite. The
rewriting attacks (:class:`~.paraphrase.Paraphrase`, :class:`~.prompt.Prompt`) classify
every answer with :func:`classify_answer` and keep the chunk unchanged (or ask again with
another seed, ``on_bad_answer="retry"``) unless it is ``"text"``. The rules, English phrasings
only, applied in this order to the answer (``raw``, stripped) and to what the attack's
cleanup kept of it (``cleaned``: a leading announcement followed by content, a label and
wrapping quotes removed):

1. ``"empty"``: ``cleaned`` is blank.
2. ``"announcement"``: the whole answer is a lead-in and nothing follows it: an
   acknowledgement alone (``"Sure!"``, ``"Certainly."``), optionally followed by one
   sentence that starts ``Here is/Here's/Here are/Here it is/Here you go/Below is/The following is/
   This is/I have/I've``
   and either ends with a colon (``"Here is the paraphrased text:"``) or names the rewrite
   (``paraphrase``, ``rewrite``, ``rewritten/rephrased/revised/modified/new/updated/edited``
   followed by ``text/version/sentence(s)/passage/paragraph``: ``"Here's the rewritten version."``).
   A real sentence starting with such a word is not one: ``"Sure enough, the river rose."``
   (the acknowledgement must stand alone, followed by ``! . ,`` and the lead-in sentence or
   nothing) and ``"Here is the revised budget."`` (no colon, names no rewrite) are text.
3. ``"refusal"``: the answer's first sentence (in its first 200 characters) opens with, or with
   an apology (``sorry``, ``I apologise``, ``unfortunately``) before, ``I can't/cannot/won't/am unable
   to/am not able to/am not comfortable`` + a verb of the request (``help/assist/comply/fulfil(l)/do/
   provide/rewrite/paraphrase/complete/create/generate/modify/change/produce/write/support/process``,
   any ending): ``"I'm sorry, but I can't help with that."``; or the answer opens with ``As an AI``.
   Not when the chunk itself opens that way or with an apology (the answer may be its rewrite), and
   not a real sentence that merely apologises: ``"Sorry, I can't make it on Tuesday."`` is text.
4. ``"echo"``: the answer repeats the prompt: it holds one of the prompt's own lines or sentences of at
   least :data:`ECHO_MIN_CHARS` characters outside the chunk (the instruction), whitespace and
   case aside, that the chunk does not hold itself.
5. ``"text"``: anything else (a rewrite, good or bad; an answer equal to the chunk is text).
"""
from __future__ import annotations

import re

__all__ = ["classify_answer", "ANSWER_KINDS", "BAD_ANSWERS", "ECHO_MIN_CHARS", "is_announcement", "is_refusal",
           "is_echo"]

#: Every kind :func:`classify_answer` returns; all but ``"text"`` are bad answers (the chunk is kept).
ANSWER_KINDS = ("text", "empty", "announcement", "refusal", "echo")
BAD_ANSWERS = ANSWER_KINDS[1:]
#: Shortest prompt line (outside the chunk) whose repetition makes an answer an echo of the prompt.
ECHO_MIN_CHARS = 24

_ACK = r"(?:sure|certainly|of course|okay|ok|absolutely|alright|all right|gladly|no problem|great|got it)"
_ACK_ONLY = re.compile(rf"\A{_ACK}\s*[!.,]*\Z", re.I)
_LEAD_WORDS = (r"(?:here(?:'s|\u2019s|\s+is|\s+are|\s+it\s+is|\s+you\s+go|\s+goes)|below\s+is|the\s+following\s+is"
               r"|this\s+is|i\s+have|i've|i\u2019ve)")
_LEAD = re.compile(rf"\A(?:{_ACK}\s*[!.,]+\s*)?({_LEAD_WORDS}\b[^\n]{{0,160}}?)\s*([:.!])?\s*\Z", re.I)
_NAMES_REWRITE = re.compile(r"\b(?:paraphras\w*|rewrites?|(?:rewritten|rephrased|revised|modified|new|updated|edited)"
                            r"\s+(?:text|version|sentences?|passage|paragraph))\b", re.I)
_APOLOGY = re.compile(r"\A(?:i'm|i\u2019m|i am)?\s*(?:so\s+|very\s+|really\s+)?(?:sorry|i apologi[sz]e|apologies|"
                      r"unfortunately)\b", re.I)
_REFUSE = re.compile(r"\bi(?:\s+(?:can't|can\u2019t|cannot|can not|won't|won\u2019t|will not)|(?:'m|\u2019m|\s+am)\s+"
                     r"(?:unable|not able)\s+to|(?:'m|\u2019m|\s+am)\s+not\s+comfortable)\s+(?:really\s+)?"
                     r"(?:be\s+able\s+to\s+)?(?:help\s+(?:you\s+)?(?:with\s+)?)?(?:help|assist|comply|fulfil|"
                     r"fulfill|do|provide|rewrit|paraphras|complet|creat|generat|modif|chang|produc|writ|support|"
                     r"process|engag)\w*\b", re.I)
_AS_AI = re.compile(r"\Aas an ai\b", re.I)
_SPACE = re.compile(r"\s+")
_PIECES = re.compile(r"\n|(?<=[.!?:])\s+")  # the prompt's lines and sentences


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def is_announcement(answer: str) -> bool:
    """Whether ``answer`` is only a lead-in (rule 2 of the module docstring)."""
    text = answer.strip()
    if not text:
        return False
    if _ACK_ONLY.match(text):
        return True
    m = _LEAD.match(text)
    if not m:
        return False
    return m.group(2) == ":" or bool(_NAMES_REWRITE.search(m.group(1)))


def _refusal_opening(text: str) -> bool:
    head = text.strip()[:200]
    if _AS_AI.match(head):
        return True
    first = re.split(r"(?<=[.!?])\s", head, maxsplit=1)[0]
    m = _REFUSE.search(first)
    if m is None:
        return False
    return m.start() == 0 or bool(_APOLOGY.match(first))  # "I can't help ..." or "Sorry, but I can't help ..."


def is_refusal(answer: str, chunk: str = "") -> bool:
    """Whether ``answer`` refuses the request (rule 3): not when ``chunk`` opens the same way."""
    if not _refusal_opening(answer):
        return False
    head = chunk.strip()[:200]
    return not (_refusal_opening(head) or _APOLOGY.match(head))


def is_echo(answer: str, prompt: str, chunk: str = "") -> bool:
    """Whether ``answer`` repeats one of ``prompt``'s own lines outside ``chunk`` (rule 4)."""
    if not prompt:
        return False
    said, own = _norm(answer), _norm(chunk)
    rest = prompt.replace(chunk, "\n") if chunk else prompt
    for line in _PIECES.split(rest):
        line = _norm(line)
        if len(line) >= ECHO_MIN_CHARS and line in said and line not in own:
            return True
    return False


def classify_answer(raw: str, cleaned: str, chunk: str = "", prompt: str = "") -> str:
    """The kind of a chat answer (one of :data:`ANSWER_KINDS`), by the rules of the module docstring.

    ``raw`` is the model's answer, ``cleaned`` what the attack's cleanup kept of it, ``chunk`` the
    text it was asked to rewrite, ``prompt`` the user message that held it.
    """
    if not cleaned.strip():
        return "empty"
    if is_announcement(raw) or is_announcement(cleaned):
        return "announcement"
    if is_refusal(raw, chunk) or is_refusal(cleaned, chunk):
        return "refusal"
    if is_echo(cleaned, prompt, chunk):
        return "echo"
    return "text"
