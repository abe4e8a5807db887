"""Attack blending: one attack per sentence (TH-Bench, Discussion "Attack Blending" and Appendix H).

The text is cut into sentences (:func:`humanize.attacks._text.sentence_spans`; the text between
sentences is kept) and each sentence gets exactly one of the attacks, chosen by ``policy``:

- ``"alternate"``: sentence ``i`` gets ``attacks[i % n]`` (TH-Bench App. H alternates Dipper and RAFT);
- ``"random"``: drawn per sentence from a generator seeded by Blend's ``seed`` and the document;
- ``"greedy"``: every attack is tried on every sentence and the one with the best detector-score drop
  per unit of quality loss is kept (the targeted selection App. H proposes). ``drop = score(original)
  - score(attacked)`` (higher score = more machine-like); ``loss`` is ``1 - cosine`` of MiniLM
  embeddings by default (``meter``), floored at ``LOSS_FLOOR`` so an unchanged or near-identical
  rewrite does not divide by zero. Ties go to the larger drop, then to the earlier attack; a NaN
  score or loss ranks last. The best attack is kept even when no attack lowers the score.

Each attack runs on the sentences with its own seed (a sentence's output depends on the sentence
text), through ``attack.batch`` over all chosen sentences of all documents at once, so a rewriting
attack sends them to its generator in one call. Edits are the sentences' edits shifted to document
offsets, so ``apply_edits(original, edits) == text``.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence, Union

import numpy as np

from humanize._validation import InstanceOf, Options, SequenceOf

from ._text import sentence_spans
from .base import Attack, AttackResult, BatchAttack, Edit, document_random
from humanize.exceptions import InvalidParameterError

__all__ = ["Blend", "POLICIES", "QUALITY_LOSSES", "LOSS_FLOOR"]

POLICIES = ("alternate", "random", "greedy")
#: Quality losses ``meter`` can name: 1 - MiniLM cosine, 1 - ROUGE-L F1, word edit rate.
QUALITY_LOSSES = ("cosine", "rouge_l", "edit_rate")
#: The smallest quality loss greedy divides by.
LOSS_FLOOR = 1e-3
_USAGE = ("llm_queries", "llm_tokens_in", "llm_tokens_out")


def _quality_loss(meter: Any, originals: list[str], attacked: list[str]) -> np.ndarray:
    """Per-pair quality loss (0 = no loss) for greedy selection."""
    if not originals:
        return np.zeros(0)
    if callable(meter):
        loss = np.asarray(meter(list(originals), list(attacked)), dtype=float).reshape(-1)
        if loss.shape != (len(originals),):
            raise ValueError(f"Blend: meter returned {loss.size} values for {len(originals)} sentence pairs")
        return loss
    if meter in (None, "cosine"):
        from humanize.quality import semantic_similarity

        cos = np.asarray(semantic_similarity(originals, attacked), dtype=float)
        return np.where(np.isnan(cos), 1.0, 1.0 - cos)
    if meter == "rouge_l":
        from humanize.quality import rouge_l

        return np.array([1.0 - rouge_l(a, b) for a, b in zip(originals, attacked)])
    from humanize.quality import edit_rate

    return np.array([edit_rate(a, b)[0] for a, b in zip(originals, attacked)])


class Blend(BatchAttack):
    """Apply one of several attacks to each sentence (TH-Bench App. H).

    attacks : list of :class:`Attack` objects or registered names (built with their defaults)
    policy : ``"alternate"``, ``"random"`` or ``"greedy"`` (see the module docstring)
    detector : for greedy: a detector object or registered name (``humanize.detectors.get``)
    meter : for greedy: ``"cosine"`` (None), ``"rouge_l"``, ``"edit_rate"``, or a callable
        ``(originals, attacked) -> losses`` (one float per pair, 0 = no loss)
    seed : drives only ``"random"``; every attack keeps its own seed
    """

    name = "blend"
    has_rate = False

    _parameter_constraints = {
        "attacks": [SequenceOf(Attack, "str", nonempty=True, name="a non-empty list of Attack objects or names")],
        "policy": [Options(str, POLICIES)],
        "detector": ["str", InstanceOf("humanize.detectors.base:Detector", name="a Detector"), None],
        "meter": [Options(str, QUALITY_LOSSES), "callable", None],
    }

    def __init__(self, attacks: Sequence[Union[Attack, str]], policy: str = "alternate",
                 detector: Any = None, meter: Union[None, str, Callable] = None, seed: int = 0):
        self.attacks = attacks
        self.policy = policy
        self.detector = detector
        self.meter = meter
        self.seed = seed
        self._validate()

    @property
    def needs_model(self) -> bool:
        """A blend loads a model when one of its attacks does, or to choose greedily (a detector, a meter)."""
        return self.policy == "greedy" or any(getattr(a, "needs_model", True) for a in self.steps())

    @property
    def version(self) -> str:
        """Blend's own version and its attacks': outputs change when one of theirs does."""
        return "1:" + "+".join(a.version for a in self.steps())

    # -- parameters -----------------------------------------------------------------
    def _validate(self) -> None:
        super()._validate()
        from .registry import resolve

        for a in self.attacks:
            if isinstance(a, str):
                resolve(a)  # unknown name: ValueError listing the registered attacks
        if isinstance(self.detector, str):
            from humanize.detectors.registry import resolve as resolve_detector

            resolve_detector(self.detector)

    def _check(self) -> None:
        if self.policy == "greedy" and self.detector is None:
            raise InvalidParameterError("Blend: policy='greedy' needs a detector (an object or a name such as "
                                        "'log_likelihood'), got detector=None")

    def steps(self) -> list[Attack]:
        """The attacks as objects; a name resolves once to its registered class with default parameters."""
        built = self.__dict__.setdefault("_built", {})
        from .registry import get

        out = []
        for a in self.attacks:
            if isinstance(a, str):
                if a not in built:
                    built[a] = get(a)
                a = built[a]
            out.append(a)
        return out

    def named_attacks(self) -> list[tuple[str, Attack]]:
        """``(step name, attack)``: each attack's ``name``, numbered ``name-1``, ``name-2`` when repeated."""
        steps = self.steps()
        names = [a.name for a in steps]
        seen: dict[str, int] = {}
        out = []
        for n, a in zip(names, steps):
            if names.count(n) > 1:
                seen[n] = seen.get(n, 0) + 1
                n = f"{n}-{seen[n]}"
            out.append((n, a))
        return out

    def _valid_steps(self) -> dict:
        try:
            return dict(self.named_attacks()) if isinstance(self.attacks, (list, tuple)) else {}
        except (TypeError, ValueError):
            return {}

    def get_params(self, deep: bool = True) -> dict:
        """The constructor arguments; with ``deep``, each step by name and its parameters as ``step__param``."""
        out = super().get_params(deep=deep)
        if deep:
            for name, a in self._valid_steps().items():
                out[name] = a
                out.update((f"{name}__{k}", v) for k, v in a.get_params(deep=True).items())
        return out

    def set_params(self, **params) -> "Blend":
        """Set parameters, replace a step (``homoglyph=Homoglyph(...)``) or set a step's parameter
        (``homoglyph__rate=0.3``; a step given by name becomes that object)."""
        steps = self._valid_steps()
        own = {k: v for k, v in params.items() if k.partition("__")[0] not in steps}
        if own:
            super().set_params(**own)
            steps = self._valid_steps()
        replace = {k: v for k, v in params.items() if k in steps}
        touched = {k.partition("__")[0] for k in params if k.partition("__")[0] in steps and "__" in k}
        if replace or touched:
            names = list(steps)
            new = [replace.get(n, a if n in touched else orig)
                   for n, a, orig in zip(names, steps.values(), self.attacks)]
            super().set_params(attacks=type(self.attacks)(new))
            steps = self._valid_steps()
        for key, value in params.items():
            head, sep, sub = key.partition("__")
            if sep and head in steps and key not in own:
                steps[head].set_params(**{sub: value})
        self.__dict__.pop("_params_cache", None)
        return self

    def _check_param_name(self, name: str) -> None:
        if name not in self._param_tuple():
            steps = list(self._valid_steps())
            raise ValueError(f"Blend has no parameter or step {name!r}; valid: {', '.join(self._param_tuple())}"
                             f"{', ' if steps else ''}{', '.join(steps)}")

    def provenance(self) -> dict:
        """As every attack's, with the attacks (names included) as their own provenance."""
        out = super().provenance()
        out["params"]["attacks"] = [a.provenance() for a in self.steps()]
        return out

    def _detector(self):
        d = self.detector
        if isinstance(d, str):
            built = self.__dict__.setdefault("_built_detector", {})
            if d not in built:
                from humanize.detectors import get

                built[d] = get(d)
            d = built[d]
        return d

    # -- running --------------------------------------------------------------------
    def _choices(self, text: str, n_sentences: int) -> list[int]:
        n = len(self.attacks)
        if self.policy == "alternate":
            return [i % n for i in range(n_sentences)]
        rnd = document_random(int(self.seed), self.name, text)
        return [rnd.randrange(n) for _ in range(n_sentences)]

    def _greedy(self, steps: list[Attack], sentences: list[str]) -> tuple[list[int], list[AttackResult], list]:
        """Per sentence: the chosen attack, its result, and (drop, loss) of the choice; all tried results too."""
        tried = [s.batch(sentences) for s in steps]
        if not sentences:
            return [], tried, []
        texts = list(dict.fromkeys(sentences + [r.text for rs in tried for r in rs]))
        scores = dict(zip(texts, np.asarray(self._detector().score(texts), dtype=float).tolist()))
        picks, stats = [], []
        loss = [_quality_loss(self.meter, sentences, [r.text for r in rs]) for rs in tried]
        for j, s in enumerate(sentences):
            best, best_key = 0, None
            for k, rs in enumerate(tried):
                drop, lo = scores[s] - scores[rs[j].text], float(loss[k][j])
                ratio = drop / max(lo, LOSS_FLOOR)
                key = (-math.inf, -math.inf) if math.isnan(ratio) else (ratio, drop)
                if best_key is None or key > best_key:
                    best, best_key, best_stats = k, key, (drop, lo)
            picks.append(best)
            stats.append(best_stats)
        return picks, tried, stats

    def _results(self, texts: Sequence[str]) -> list[AttackResult]:
        steps = self.steps()
        names = [n for n, _ in self.named_attacks()]
        spans = [sentence_spans(t) for t in texts]
        owners = [(d, j) for d, sp in enumerate(spans) for j in range(len(sp))]
        sentences = [texts[d][a:b] for d, sp in enumerate(spans) for a, b in sp]
        usage: list[dict] = [{} for _ in texts]
        stats: list = []
        if self.policy == "greedy":
            picks, tried, stats = self._greedy(steps, sentences)
            chosen = [tried[k][i] for i, k in enumerate(picks)]
            for rs in tried:
                for (d, _), r in zip(owners, rs):
                    _add_usage(usage[d], r.info)
        else:
            picks = [k for d, t in enumerate(texts) for k in self._choices(t, len(spans[d]))]
            chosen: list = [None] * len(sentences)
            for k, step in enumerate(steps):
                idx = [i for i, p in enumerate(picks) if p == k]
                if idx:
                    for i, r in zip(idx, step.batch([sentences[i] for i in idx])):
                        chosen[i] = r
                        _add_usage(usage[owners[i][0]], r.info)
        out, i = [], 0
        params = self.get_params()
        for d, text in enumerate(texts):
            pieces, edits, pos, used, doc_stats = [], [], 0, [], []
            for a, b in spans[d]:
                r = chosen[i]
                pieces += [text[pos:a], r.text]
                pos = b
                for s, t, rep in r.edits:
                    if edits and s == t and edits[-1][0] == edits[-1][1] == s + a:
                        edits[-1] = Edit(s + a, s + a, edits[-1][2] + rep)  # two insertions where sentences touch
                    else:
                        edits.append(Edit(s + a, t + a, rep))
                used.append(names[picks[i]])
                if stats:
                    doc_stats.append(stats[i])
                i += 1
            pieces.append(text[pos:])
            info = {"per_sentence": used, **usage[d]}
            if self.policy == "greedy":
                info["drop"] = [s[0] for s in doc_stats]
                info["quality_loss"] = [s[1] for s in doc_stats]
            out.append(AttackResult(original=text, text="".join(pieces), attack=self.name, params=dict(params),
                                    _edits=edits, info=info))
        return out


def _add_usage(total: dict, info: dict) -> None:
    for key in _USAGE:
        if key in info:
            total[key] = total.get(key, 0) + info[key]
