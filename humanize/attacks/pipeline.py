"""Composition: run attacks in order, keeping one set of exact edits over the original."""

from __future__ import annotations

from typing import Sequence, Union

from humanize.params import ComponentParam
from humanize.validation import SequenceOf, check_text, check_texts

from .base import Attack, AttackResult, Edit, apply_edits
from .composite import CompositeAttack, build_member


def compose_edits(original: str, first: Sequence[Edit], second: Sequence[Edit]) -> list[Edit]:
    """Edits over ``original`` equivalent to ``first`` followed by ``second``.

    ``second`` is over ``apply_edits(original, first)``. Where a second edit
    overlaps or touches the text a first edit produced, the two merge into one
    edit over the original; everything else passes through. Linear in the number
    of edits.
    """
    text1 = apply_edits(original, first)
    spans1 = []  # where each first edit's replacement sits in text1
    delta = 0
    for s, t, r in first:
        spans1.append((s + delta, s + delta + len(r)))
        delta += len(r) - (t - s)
    out: list[Edit] = []
    i = j = 0
    cum = 0  # total length change of the first edits already passed
    n1, n2 = len(first), len(second)
    while i < n1 or j < n2:
        if j >= n2 or (i < n1 and spans1[i][1] < second[j][0]):
            s, t, r = first[i]
            out.append(Edit(s, t, r))
            cum += len(r) - (t - s)
            i += 1
            continue
        j0 = j
        lo, hi = second[j][0], second[j][1]
        included = []
        grew = True
        while grew:
            grew = False
            while i < n1 and spans1[i][0] <= hi:
                lo, hi = min(lo, spans1[i][0]), max(hi, spans1[i][1])
                included.append(i)
                i += 1
                grew = True
            while j + 1 < n2 and second[j + 1][0] <= hi:
                j += 1
                hi = max(hi, second[j][1])
                grew = True
        inner = sum(len(first[k][2]) - (first[k][1] - first[k][0]) for k in included)
        o_lo = first[included[0]][0] if included and spans1[included[0]][0] == lo else lo - cum
        o_hi = first[included[-1]][1] if included and spans1[included[-1]][1] == hi else hi - cum - inner
        piece = apply_edits(text1[lo:hi], [(s - lo, t - lo, r) for s, t, r in second[j0 : j + 1]])
        out.append(Edit(o_lo, o_hi, piece))
        cum += inner
        j += 1
    return out


class Pipeline(CompositeAttack):
    """Apply attacks in order, like ``torchvision.transforms.Compose``.

    attacks : list of :class:`Attack` objects, registered names (built with their defaults) or
        tables ``{"name": ..., **params}`` (:mod:`humanize.attacks.composite`)

    Each attack draws from its own per-document generator, so a pipeline is as
    deterministic as its parts. The result's edits are over the original text.
    """

    name = "pipeline"
    has_rate = False
    #: its default label in a run joins its members' (``homoglyph@0.5+whitespace``)
    _component_params = {"attacks": ComponentParam("attack", lambda self, item: build_member(item, "Pipeline"),
                                                   many=True, label=True)}
    #: the old spelling of ``attacks`` in a config file: one clear line (humanize._registry)
    _renamed_params = {"steps": "attacks"}

    _parameter_constraints = {
        "attacks": [SequenceOf(Attack, "str", dict, name="a list of Attack objects, names or tables")],
    }

    def __init__(self, attacks: Sequence[Union[Attack, str, dict]]):
        self._init_params(locals())

    def _run(self, text: str):
        current = text
        edits: list[Edit] = []
        info: dict = {}
        for a in self.steps():
            r: AttackResult = a.apply(current)
            edits = compose_edits(text, edits, r.edits) if edits else list(r.edits)
            current = r.text
            for k, v in r.info.items():
                info[f"{a.name}.{k}"] = v
        return current, edits, info

    def batch(self, texts: Sequence[str]) -> list[AttackResult]:
        """Attack many documents; when a step batches (:attr:`batches`), each step runs once on the whole
        batch's current texts (a rewriting step then makes one model call for all), with the outputs
        :meth:`apply` gives one document at a time."""
        if not self.batches:
            return super().batch(texts)
        texts = check_texts(texts, "Pipeline", "batch")
        current = list(texts)
        edits: list[list[Edit]] = [[] for _ in texts]
        infos: list[dict] = [{} for _ in texts]
        for a in self.steps():
            for d, r in enumerate(a.batch(current)):
                edits[d] = compose_edits(texts[d], edits[d], r.edits) if edits[d] else list(r.edits)
                current[d] = r.text
                for k, v in r.info.items():
                    infos[d][f"{a.name}.{k}"] = v
        return [self._result(t, out) for t, out in zip(texts, zip(current, edits, infos))]

    def __call__(self, text: str) -> str:
        check_text(text, "Pipeline", "__call__")
        for a in self.steps():
            text = a(text)
        return text

    def __or__(self, other: Attack) -> "Pipeline":
        return Pipeline([*self.attacks, other])


Attack._pipeline_class = Pipeline  # what ``a | b`` builds (the base module does not import this one)
