"""Composition: run attacks in order, keeping one set of exact edits over the original."""

from __future__ import annotations

from typing import Sequence

from humanize._validation import SequenceOf, check_text

from .base import Attack, AttackResult, Edit, apply_edits


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


class Pipeline(Attack):
    """Apply attacks in order, like ``torchvision.transforms.Compose``.

    Each attack draws from its own per-document generator, so a pipeline is as
    deterministic as its parts. The result's edits are over the original text.
    """

    name = "pipeline"
    has_rate = False

    _parameter_constraints = {"attacks": [SequenceOf(Attack)]}

    def __init__(self, attacks: Sequence[Attack]):
        self.attacks = attacks
        self._validate()

    @property
    def needs_model(self) -> bool:
        """A pipeline loads a model when one of its steps does."""
        return any(getattr(a, "needs_model", True) for a in self.attacks)

    @property
    def version(self) -> str:
        """The members' output versions: a pipeline's outputs change when one of theirs does."""
        return "+".join(a.version for a in self.attacks)

    # -- parameters: the steps by name, as scikit-learn's Pipeline ----------------------
    def named_attacks(self) -> list[tuple[str, Attack]]:
        """``(step name, attack)`` pairs: each attack's ``name``, numbered ``name-1``, ``name-2`` when repeated."""
        names = [a.name for a in self.attacks]
        seen: dict[str, int] = {}
        out = []
        for n, a in zip(names, self.attacks):
            if names.count(n) > 1:
                seen[n] = seen.get(n, 0) + 1
                n = f"{n}-{seen[n]}"
            out.append((n, a))
        return out

    def get_params(self, deep: bool = True) -> dict:
        """``attacks``; with ``deep``, each step by name and its parameters as ``step__param``."""
        out = {"attacks": self.attacks}
        if deep and isinstance(self.attacks, (list, tuple)):
            for name, a in self.named_attacks():
                out[name] = a
                out.update((f"{name}__{k}", v) for k, v in a.get_params(deep=True).items())
        return out

    def set_params(self, **params) -> "Pipeline":
        """Set ``attacks``, replace a step (``homoglyph=Homoglyph(...)``) or set a step's parameter
        (``homoglyph__rate=0.3``)."""
        steps = dict(self.named_attacks()) if isinstance(self.attacks, (list, tuple)) else {}
        own = {k: v for k, v in params.items() if k.partition("__")[0] not in steps}
        if own:
            super().set_params(**own)
            steps = dict(self.named_attacks())
        replaced = {k: v for k, v in params.items() if k in steps}
        if replaced:
            names = [n for n, _ in self.named_attacks()]
            new = [replaced.get(n, a) for n, a in zip(names, self.attacks)]
            super().set_params(attacks=type(self.attacks)(new))
            steps = dict(self.named_attacks())
        for key, value in params.items():
            head, sep, sub = key.partition("__")
            if sep and head in steps and key not in own:
                steps[head].set_params(**{sub: value})
        self.__dict__.pop("_params_cache", None)
        return self

    def _check_param_name(self, name: str) -> None:
        if name != "attacks":
            steps = [n for n, _ in self.named_attacks()] if isinstance(self.attacks, (list, tuple)) else []
            raise ValueError(f"Pipeline has no parameter or step {name!r}; valid: attacks"
                             f"{', ' if steps else ''}{', '.join(steps)}")

    def _run(self, text: str):
        current = text
        edits: list[Edit] = []
        info: dict = {}
        for a in self.attacks:
            r: AttackResult = a.apply(current)
            edits = compose_edits(text, edits, r.edits) if edits else list(r.edits)
            current = r.text
            for k, v in r.info.items():
                info[f"{a.name}.{k}"] = v
        return current, edits, info

    def __call__(self, text: str) -> str:
        check_text(text, "Pipeline", "__call__")
        for a in self.attacks:
            text = a(text)
        return text

    def __or__(self, other: Attack) -> "Pipeline":
        return Pipeline([*self.attacks, other])
