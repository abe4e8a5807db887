"""LLM-proposed replacements (RAFT, Wang et al. 2024, §3.2: an LLM lists k substitutes for a highlighted word).

RAFT asks GPT-3.5 for ``k`` (= 15) alternative words for a word shown in
brackets in its paragraph ("grammar correctness and semantic fluency", words
only) and reads every alphabetic run of the answer. :class:`LLMCandidates` asks
any chat model the model layer loads (offline: Qwen2.5-Coder-0.5B-Instruct) for ``k``
synonyms of the word, shown bracketed in its sentence (or in the whole document
with ``context="document"``), and starts the answer as a numbered list, which a
small model follows far more reliably than a bare request. All the document's
prompts are left-padded into batches of ``batch_size`` and decoded greedily,
so the answers are deterministic. An OpenAI-compatible endpoint client (RAFT's
and TH-Bench's GPT-3.5 / GPT-4o-mini) comes with issue #11; until then
``model`` is a local chat model (a name or a loaded LM).
"""
from __future__ import annotations

import re
from typing import Any

from numbers import Integral

from humanize.validation import Interval, Options
from humanize.models import DEFAULT_CHAT_LM

from .._casing import match_case
from ._doc import Candidate, Doc
from .candidates import CandidateGenerator

__all__ = ["LLMCandidates", "parse_words", "PROMPT", "ANSWER_START"]

#: The request (after RAFT's: the word bracketed in its context, k alternatives that fit it); the answer is
#: started as a numbered list (:data:`ANSWER_START`), which a small chat model then continues.
PROMPT = '{what}: {context}\n\nList {k} synonyms of the word "{word}" as used in this {what_lower}.'
ANSWER_START = "1."

_ITEM_SPLIT = re.compile(r"[,;\n\t]|\s+/\s+|\s{2,}")
_LEAD = re.compile(r"^\s*(?:[-*\u2022>]+|\(?\d+[.):]|\(?[a-zA-Z][.)](?=\s))?\s*")
_CUT = re.compile(r"\s+[-\u2013\u2014:(=]\s*|\s*[:(=]")
_QUOTES = "\"'`\u2018\u2019\u201c\u201d*_[]{}<>.!?"


def _recase(original: str, word: str) -> str:
    """``word`` in ``original``'s case; a capitalised list item for a lower-case word is lower-cased."""
    if original.islower() and word[:1].isupper() and (len(word) == 1 or word[1:].islower()):
        return word.lower()
    return match_case(original, word)


def parse_words(answer: str, original: str, k: int) -> list[str]:
    """Single alphabetic words of a model's answer, in its order: numbered/bulleted lists, commas, quotes.

    Each item (split on commas, semicolons, new lines) loses its numbering or
    bullet, anything after a dash, colon or parenthesis (an explanation) and its
    quotes; it is kept when what is left is one alphabetic word that is not the
    original (case-insensitive) and not already kept; at most ``k``.
    """
    out: list[str] = []
    seen = {original.lower()}
    for item in _ITEM_SPLIT.split(answer):
        item = _LEAD.sub("", item, count=1)
        item = _CUT.split(item, maxsplit=1)[0].strip().strip(_QUOTES).strip()
        if not item.isalpha():
            continue
        if item.lower() in seen:
            continue
        seen.add(item.lower())
        out.append(item)
        if len(out) >= k:
            break
    return out


class LLMCandidates(CandidateGenerator):
    """Up to ``k`` single-word replacements per word from a chat model (RAFT's candidate generator).

    ``model``: a chat model name or a loaded causal LM with a chat template
    (default :data:`~humanize.models.DEFAULT_CHAT_LM`, Qwen2.5-Coder-0.5B-Instruct, offline:
    not the detectors' scoring model, issue #19 §4). ``context``: ``"sentence"`` (the
    word's sentence; short prompts) or ``"document"`` (RAFT's whole paragraph).
    ``max_new_tokens`` bounds each answer (default ``4 k + 4``).
    Cost: ``queries`` (prompts), ``forward_passes`` (``generate`` calls),
    ``llm_tokens_in`` (prompt tokens) and ``llm_tokens_out`` (generated tokens).
    """

    source = "llm"
    _model_params = ("model",)

    _parameter_constraints = {
        "model": ["model"],
        "k": [Interval(Integral, 1, None)],
        "context": [Options(str, ("sentence", "document"))],
        "batch_size": [Interval(Integral, 1, None)],
        "max_new_tokens": [Interval(Integral, 1, None), None],
    }

    def __init__(self, model: Any = DEFAULT_CHAT_LM, k: int = 15, context: str = "sentence", batch_size: int = 16,
                 max_new_tokens: Any = None, device: Any = None):
        self._init_params(locals())


    def loaded(self):
        from humanize.models import LoadedModel, load_causal_lm

        lm = load_causal_lm(self.model, device=self.device) if isinstance(self.model, str) else self.model
        if isinstance(lm, LoadedModel) and lm.kind != "causal_lm":
            raise ValueError(f"LLMCandidates needs a causal (chat) LM, got a {lm.kind} ({lm.resolved})")
        if not getattr(lm.tokenizer, "chat_template", None):
            raise ValueError(f"LLMCandidates: the tokenizer of {getattr(lm, 'resolved', lm)} has no chat template; "
                             f"give a chat (instruct) model")
        return lm

    def new_tokens(self) -> int:
        """``max_new_tokens``, by default 4 per word asked plus 4 (a numbered list item is about 4 tokens)."""
        return int(self.max_new_tokens) if self.max_new_tokens is not None else 4 * int(self.k) + 4

    def prompt(self, doc: Doc, i: int) -> str:
        """The user message for word ``i``: the word in brackets in its context."""
        s, e = doc.words[i]
        lo, hi = (0, len(doc.text)) if self.context == "document" else doc.sentences[doc.sentence_of[i]]
        context = (doc.text[lo:s] + "[" + doc.text[s:e] + "]" + doc.text[e:hi]).strip()
        what = "Sentence" if self.context == "sentence" else "Passage"
        return PROMPT.format(word=doc.text[s:e], what=what, what_lower=what.lower(), context=context, k=self.k)

    def propose(self, doc: Doc, positions: list[int]) -> dict[int, list[Candidate]]:
        import torch

        from humanize.models.text import model_input

        out: dict[int, list[Candidate]] = {i: [] for i in positions}
        if not positions:
            return out
        lm = self.loaded()
        tok = lm.tokenizer
        chats = [tok.apply_chat_template([{"role": "user", "content": self.prompt(doc, i)}], tokenize=False,
                                         add_generation_prompt=True) + ANSWER_START for i in positions]
        chats, _ = model_input(chats, where=f"chat model {getattr(lm, 'resolved', '')}")
        # the template already holds the special tokens; padding by hand (left) leaves the shared tokenizer as it is
        encoded = tok(chats, add_special_tokens=False, return_attention_mask=False)["input_ids"]
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        eos = tok.eos_token_id
        for b in range(0, len(positions), self.batch_size):
            rows = encoded[b: b + self.batch_size]
            width = max(len(r) for r in rows)
            ids = torch.full((len(rows), width), pad, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for r, seq in enumerate(rows):
                ids[r, width - len(seq):] = torch.as_tensor(seq, dtype=torch.long)
                mask[r, width - len(seq):] = 1
            with torch.inference_mode():
                gen = lm.model.generate(input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device),
                                        max_new_tokens=self.new_tokens(), do_sample=False, num_beams=1,
                                        temperature=None, top_p=None, top_k=None,
                                        pad_token_id=pad, eos_token_id=eos)
            new = gen[:, width:].cpu().tolist()
            n_out = 0
            for r, seq in enumerate(new):
                if eos in seq:
                    seq = seq[: seq.index(eos) + 1]
                n_out += len(seq)
                i = positions[b + r]
                answer = ANSWER_START + tok.decode(seq, skip_special_tokens=True)
                # in the original's case: a chat model capitalises list items ("Strategy" for "plan"), which
                # would read as a proper noun to the POS constraint; the edit re-cases it anyway
                word = doc.word(i)
                picks = dict.fromkeys(_recase(word, w) for w in parse_words(answer, word, self.k))
                out[i] = [Candidate(i, w, self.source) for w in picks if w.lower() != word.lower()]
            doc.add_cost(queries=len(rows), forward_passes=1, llm_tokens_in=int(mask.sum()), llm_tokens_out=n_out)
        return out
