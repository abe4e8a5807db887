"""Attacks that scrub a watermark (issue #37), each with a rate θ, exact edits, seeds and provenance.

- :class:`CopyPasteDilution` (``copy_paste``): the watermarked text cut into ``segments`` spans and
  embedded among human text, the machine share of the result being θ (Kirchenbauer et al. 2023,
  "On the Reliability of Watermarks for LLMs", §4.1, the "CP-n-x%" attacks);
- :class:`EmojiAttack` (``emoji_attack``): θ of the sentences are rewritten by the (watermarked)
  generator asked to write an emoji after every word, and the emojis are deleted, which breaks the
  hash context of every token (Kirchenbauer et al., ICML 2023, §7 "emoji attack");
- :class:`SelfInformationRewrite` (``self_info_rewrite``): the θ share of the words with the highest
  self-information under a small LM are masked and another small LM refills each (SIRA, Cheng et al.,
  ICML 2025: a watermark's green tokens are the improbable ones it forced); ``select="random"`` masks
  words at random instead, at the same edit rate: the control the SIRA paper compares with;
- :class:`WatermarkStealing` (``watermark_stealing``): green-list estimates from watermarked outputs
  alone (Jovanović et al., ICML 2024, §3: token frequencies after each context, against a base corpus),
  then θ of the likely-green words are swapped for a WordNet synonym whose token is likely red; no key.
"""
from __future__ import annotations

import json
import re
from numbers import Integral, Real
from typing import Any, Sequence

import numpy as np

from humanize.validation import MODEL, NONBLANK_STR, Interval, Options

from .generation.rewrite import GENERATOR_SPEC
from .base import Attack, AttackResult, BatchAttack, Edit, apply_edits, document_seed

__all__ = ["CopyPasteDilution", "EmojiAttack", "SelfInformationRewrite", "WatermarkStealing"]

def _demo_human_texts() -> tuple:
    """The packaged demo set's human texts (XSum and WritingPrompts, MIT; humanize/data/demo)."""
    from humanize._data import DATA_DIR

    out = []
    for path in sorted((DATA_DIR / "demo").glob("*_gpt-4.raw_data.json")):
        out.extend(json.loads(path.read_text(encoding="utf-8"))["original"])
    return tuple(out)


def _check_texts_param(owner: str, name: str, value) -> None:
    from humanize.exceptions import InvalidParameterError

    if value is None:
        return
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(t, str) for t in value):
        raise InvalidParameterError(f"{owner}: {name} must be None or a list of str, got {type(value).__name__}")


class CopyPasteDilution(Attack):
    """Embed the text among human text so that it is a share θ (``rate``) of the result's words.

    The text is cut into ``segments`` spans of about equal word counts; human text (words of
    ``human_texts``, default: the demo set's human texts, drawn per document) goes before, between and
    after them: ``H0 W1 H1 ... Wn Hn``. θ = 1 leaves the text as it is; the smaller θ, the more diluted.
    Every edit is an insertion, so the watermarked tokens are all still there.
    """

    name = "copy_paste"
    needs_model = False
    _parameter_constraints = {
        "rate": [Interval(Real, 0, 1, closed="right")],
        "segments": [Interval(Integral, 1, None)],
    }
    _derived_state = ("_pool",)

    def __init__(self, rate: float = 0.25, segments: int = 1, human_texts: "Sequence[str] | None" = None,
                 seed: int = 0):
        self._init_params(locals())

    def _check(self) -> None:
        _check_texts_param("CopyPasteDilution", "human_texts", self.human_texts)

    def _words(self) -> list:
        pool = self.__dict__.get("_pool")
        if pool is None:
            texts = self.human_texts if self.human_texts is not None else _demo_human_texts()
            pool = self.__dict__["_pool"] = [t.split() for t in texts if t.split()]
        return pool

    def _run(self, text: str) -> tuple:
        spans = [m.span() for m in re.finditer(r"\S+", text)]
        if not spans or self.rate >= 1 or not self._words():
            return text, []
        n = len(spans)
        need = int(round(n * (1.0 - float(self.rate)) / float(self.rate)))
        rnd = self.rng(text)
        pool = self._words()
        human: list[str] = []
        while len(human) < need:
            human.extend(pool[int(rnd.integers(len(pool)))])
        human = human[:need]
        k = min(int(self.segments), n)
        cuts = [spans[(i * n) // k][0] for i in range(1, k)]  # the machine text splits at word starts
        where = [0] + cuts + [len(text)]
        # the human words split into k + 1 runs at k uniform cut points (before, between and after the spans)
        sizes = np.diff(np.sort(np.concatenate([[0, need], rnd.integers(0, need + 1, size=k)])))
        edits, at = [], 0
        for pos, size in zip(where, sizes):
            chunk = " ".join(human[at: at + int(size)])
            at += int(size)
            if not chunk:
                continue
            if pos == 0:
                edits.append(Edit(0, 0, chunk + " "))
            elif pos == len(text):
                edits.append(Edit(pos, pos, " " + chunk))
            else:
                edits.append(Edit(pos, pos, chunk + " "))
        return apply_edits(text, edits), edits


class EmojiAttack(BatchAttack):
    """θ (``rate``) of the sentences rewritten by ``generator`` with an ``emoji`` after every word, then the
    emojis deleted (Kirchenbauer et al. 2023, §7). Meant with the watermarked generator itself (a
    :class:`~humanize.generation.WatermarkedChat`): the attacker only prompts it, and every token it
    wrote was hashed with an emoji before it."""

    name = "emoji_attack"
    has_rate = True
    _parameter_constraints = {
        "generator": GENERATOR_SPEC,
        "emoji": [NONBLANK_STR],
        "instruction": [NONBLANK_STR],
    }

    def __init__(self, generator: Any = "smollm2-135m-instruct", rate: float = 1.0, seed: int = 0,
                 emoji: str = "😀",
                 instruction: str = "Rewrite the following text in your own words. After every word, write {emoji}."):
        self._init_params(locals())

    def _generator(self):
        from humanize.generation import resolve_generator

        return resolve_generator(self.generator)

    def _results(self, texts: Sequence[str]) -> list[AttackResult]:
        from humanize.generation import Request, chat
        from humanize.text import sentence_spans

        from ._sampling import choose_sites
        from .generation.diff import word_edits

        asks, plans = [], []
        for text in texts:
            spans = sentence_spans(text)
            chosen = list(choose_sites(len(spans), float(self.rate), self.random(text))) if spans else []
            base = document_seed(self.seed, self.name, text)
            plans.append([(spans[j], len(asks) + i) for i, j in enumerate(chosen)])
            asks.extend(Request(chat(f"{self.instruction.format(emoji=self.emoji)}\n\n{text[spans[j][0]:spans[j][1]]}"),
                                (base + j) % (1 << 63)) for j in chosen)
        gens = self._generator().generate(asks) if asks else []
        pattern = re.compile(rf"\s*(?:{re.escape(self.emoji)}\s*)+")
        out = []
        for text, plan in zip(texts, plans):
            pieces, pos, info = [], 0, {"rewritten_sentences": len(plan), "llm_queries": len(plan),
                                        "llm_tokens_out": sum(gens[i].tokens_out for _, i in plan)}
            for (s, e), i in plan:
                clean = " ".join(pattern.sub(" ", gens[i].text).split())
                pieces += [text[pos:s], clean or text[s:e]]
                pos = e
            new = "".join(pieces) + text[pos:]
            out.append(self._result(text, (new, word_edits(text, new), info)))
        return out


class SelfInformationRewrite(Attack):
    """SIRA (Cheng et al., ICML 2025): mask the share θ (``rate``) of a text's words with the highest
    self-information under ``scorer`` (the sum of ``-log p`` of their tokens) and refill each with a word
    ``refill`` proposes there: a sample from its next-token distribution after the text's left context,
    among its ``top_k`` most probable whole-word tokens other than the masked word. SIRA refills with an
    instruction-following LLM given the masked text and a reference rewrite; here a small causal LM
    fills each blank from its left context in one forward pass (cheap, local, no right context).
    ``select="random"``: the same number of words, drawn at random (the control at the same edit rate)."""

    name = "self_info_rewrite"
    _model_params = ("scorer", "refill")
    _parameter_constraints = {
        "scorer": [MODEL],
        "refill": [MODEL],
        "select": [Options(str, {"self_information", "random"})],
        "top_k": [Interval(Integral, 1, None)],
        "max_tokens": [Interval(Integral, 8, None)],
    }

    def __init__(self, rate: float = 0.2, seed: int = 0, scorer: Any = "gemma-3-270m",
                 refill: Any = "smollm2-135m-instruct", select: str = "self_information", top_k: int = 20,
                 max_tokens: int = 512, device: Any = None):
        self._init_params(locals())

    def _lm(self, which):
        from humanize.models import load_causal_lm

        m = getattr(self, which)
        return load_causal_lm(m, device=self.device) if isinstance(m, str) else m

    def _words(self, text: str) -> list[tuple[int, int]]:
        from humanize.text import word_spans

        return [(s, e) for s, e in word_spans(text) if text[s:e].isalpha()]

    def _masked(self, text: str, words: list, rng) -> list[int]:
        k = int(round(float(self.rate) * len(words)))
        if k == 0:
            return []
        if self.select == "random":
            return sorted(rng.choice(len(words), size=k, replace=False).tolist())
        from humanize.models import token_logprobs

        offsets, lps = token_logprobs(self._lm("scorer"), text, max_tokens=int(self.max_tokens))
        info = np.zeros(len(words))
        starts, ends = offsets[:, 0], offsets[:, 1]
        si = np.nan_to_num(-np.asarray(lps, dtype=np.float64))
        for i, (s, e) in enumerate(words):
            inside = (starts < e) & (ends > s)
            info[i] = si[inside].sum() if inside.any() else -np.inf  # past max_tokens: not scored, not masked
        order = sorted(range(len(words)), key=lambda i: (-info[i], i))
        return sorted(i for i in order[:k] if np.isfinite(info[i]))

    def _refill(self, text: str, words: list, masked: list[int], rng) -> list[Edit]:
        import torch

        from humanize.models.scoring import encode_for_scoring

        lm = self._lm("refill")
        ids, spans, has_bos = encode_for_scoring(lm, [text], offsets=True, max_tokens=int(self.max_tokens))
        ids, spans = ids[0], spans[0]
        if not len(spans):
            return []
        with torch.inference_mode():
            logits = lm.model(torch.tensor([ids], device=lm.device)).logits[0].float().cpu()
        tok, edits = lm.tokenizer, []
        for i in masked:
            s, e = words[i]
            j = int(np.searchsorted(spans[:, 1], s, side="right"))  # the token holding the word's start
            pos = j + int(has_bos) - 1
            if j >= len(spans) or pos < 0:
                continue
            own = tok.decode([ids[j + int(has_bos)]])
            space = own[:1].isspace()
            vals, cand = torch.topk(logits[pos], min(int(self.top_k) * 4, logits.shape[-1]))
            keep = []
            for v, c in zip(vals.tolist(), cand.tolist()):
                word = tok.decode([c])
                if word[:1].isspace() == space and word.strip().isalpha() and word.strip().lower() != text[s:e].lower():
                    keep.append((v, word.strip()))
                if len(keep) == int(self.top_k):
                    break
            if not keep:
                continue
            p = np.exp(np.array([v for v, _ in keep]) - max(v for v, _ in keep))
            word = keep[int(rng.choice(len(keep), p=p / p.sum()))][1]
            if text[s].isupper():
                word = word[:1].upper() + word[1:]
            edits.append(Edit(s, e, word))
        return edits

    def _run(self, text: str) -> tuple:
        words = self._words(text)
        if not words:
            return text, [], {"masked": 0}
        rng = self.rng(text)
        masked = self._masked(text, words, rng)
        edits = self._refill(text, words, masked, rng) if masked else []
        return apply_edits(text, edits), edits, {"masked": len(masked), "refilled": len(edits)}


class WatermarkStealing(Attack):
    """Jovanović et al. (ICML 2024): learn which tokens the watermark favours from ``watermarked`` texts alone
    (no key, no detector), then swap θ (``rate``) of the words that look green for synonyms that look red.

    Each token ``t`` after a context ``c`` (the previous token, ``context="previous"``, for KGW's LeftHash;
    none, ``context="none"``, for Unigram) gets the green score ``s = p_wm(t | c) / p_base(t | c)``, the
    frequency ratio against ``base`` texts (default: the demo set's human texts) with add-one smoothing;
    a context seen fewer than ``min_count`` times falls back on the context-free ratio (the paper's
    mix of context and context-free estimates, §3). Words whose first token scores above 1 are the
    candidates, the highest first; each gets the WordNet synonym with the lowest score below 1.
    """

    name = "watermark_stealing"
    _model_params = ("tokenizer",)
    _derived_state = ("_counts",)
    _parameter_constraints = {
        "tokenizer": [MODEL],
        "context": [Options(str, {"previous", "none"})],
        "min_count": [Interval(Integral, 1, None)],
    }

    def __init__(self, watermarked: Sequence[str] = (), rate: float = 0.5, seed: int = 0,
                 tokenizer: Any = "smollm2-135m-instruct", base: "Sequence[str] | None" = None,
                 context: str = "previous", min_count: int = 5):
        self._init_params(locals())

    def _check(self) -> None:
        _check_texts_param("WatermarkStealing", "watermarked", self.watermarked)
        _check_texts_param("WatermarkStealing", "base", self.base)

    def _fingerprint_runtime(self, models: dict) -> dict:
        return {}

    def _tok(self):
        from humanize.models import load_tokenizer

        t = self.tokenizer
        return load_tokenizer(t).tokenizer if isinstance(t, str) else getattr(t, "tokenizer", t)

    def _stats(self):
        found = self.__dict__.get("_counts")
        if found is None:
            from collections import Counter

            tok = self._tok()
            base = self.base if self.base is not None else _demo_human_texts()

            def count(texts):
                uni, bi, ctx = Counter(), Counter(), Counter()
                for ids in tok(list(texts), add_special_tokens=False)["input_ids"] if texts else []:
                    uni.update(ids)
                    bi.update(zip(ids[:-1], ids[1:]))
                    ctx.update(ids[:-1])
                return uni, bi, ctx

            found = self.__dict__["_counts"] = (count(self.watermarked), count(base), len(tok))
        return found

    def green_score(self, previous: "int | None", token: int) -> float:
        """The estimated ratio p_wm / p_base of ``token`` after ``previous`` (> 1: likely green)."""
        (wu, wb, wc), (bu, bb, bc), vocab = self._stats()
        if self.context == "previous" and previous is not None and wc[previous] >= self.min_count \
                and bc[previous] >= self.min_count:
            return ((wb[(previous, token)] + 1) / (wc[previous] + vocab)) / ((bb[(previous, token)] + 1) /
                                                                            (bc[previous] + vocab))
        nw, nb = sum(wu.values()), sum(bu.values())
        return ((wu[token] + 1) / (nw + vocab)) / ((bu[token] + 1) / (nb + vocab))

    def _run(self, text: str) -> tuple:
        from humanize.models import load_wordnet
        from humanize.text import word_spans

        words = [(s, e) for s, e in word_spans(text) if text[s:e].isalpha()]
        if not words or not self.watermarked:
            return text, [], {"likely_green": 0}
        tok = self._tok()
        enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        ids, offs = enc["input_ids"], enc["offset_mapping"]
        ends = np.array([b for _, b in offs] or [0])
        first = {}
        for s, e in words:  # the token holding each word's first character
            j = int(np.searchsorted(ends, s, side="right"))
            if j < len(offs) and offs[j][0] <= s:
                first[s] = j
        scored = []
        for w, (s, e) in enumerate(words):
            j = first.get(s)
            if j is None:
                continue
            g = self.green_score(ids[j - 1] if j > 0 else None, ids[j])
            if g > 1:
                scored.append((g, w, j))
        scored.sort(key=lambda x: (-x[0], x[1]))
        k = int(round(float(self.rate) * len(scored)))
        wn = load_wordnet()
        edits = []
        for g, w, j in sorted(scored[:k], key=lambda x: x[1]):
            s, e = words[w]
            word = text[s:e]
            prev = ids[j - 1] if j > 0 else None
            lead = " " if tok.decode([ids[j]])[:1].isspace() else ""
            best = None
            for name in sorted({l.name() for syn in wn.synsets(word.lower()) for l in syn.lemmas()}):
                if not name.isalpha() or name.lower() == word.lower():
                    continue
                cand = tok(lead + name, add_special_tokens=False)["input_ids"]
                if not cand:
                    continue
                score = self.green_score(prev, cand[0])
                if score < 1 and (best is None or score < best[0]):
                    best = (score, name)
            if best is not None:
                new = best[1][:1].upper() + best[1][1:] if word[:1].isupper() else best[1]
                edits.append(Edit(s, e, new))
        return apply_edits(text, edits), edits, {"likely_green": len(scored), "swapped": len(edits)}
