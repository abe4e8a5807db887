"""The one base of the attacks made of attacks (:class:`~humanize.attacks.Pipeline`, :class:`~humanize.attacks.Blend`).

A composite holds its members in its ``attacks`` parameter, each an :class:`Attack` object, a
registered name (``"homoglyph"``: built with its defaults) or a spec table (``{"name": "homoglyph",
"rate": 0.3}`` or, as a config file writes it, ``{"name": "homoglyph", "params": {"rate": 0.3}}``: built with
those parameters). Names and tables are built once, on first use
(:meth:`CompositeAttack.steps`), and are keyed by what they say, so a member changed through
:meth:`set_params` is never a stale build.

Parameters follow scikit-learn's ``Pipeline``: each member is a step named after its ``name``
(numbered ``name-1``, ``name-2`` when repeated), readable and settable as ``step`` and
``step__param``. A composite loads a model (``needs_model``) and batches (``batches``) when one of its
members does, and its output version
is its members' versions, so a cached output is never reused after a member's outputs change.
"""

from __future__ import annotations

from typing import Any

from humanize.params import ComponentParam
from humanize.exceptions import InvalidParameterError

from .base import Attack

__all__ = ["CompositeAttack", "build_member"]


def build_member(item: Any, owner: str) -> Attack:
    """The attack a member names, in the one spec grammar (:func:`humanize._registry.parse_spec`): an object as
    it is, a registered name with its defaults, ``NAME:K=V,...`` or a table ``{"name": ..., **params}`` built with
    those parameters (one clear error otherwise)."""
    from humanize._registry import parse_spec

    spec = parse_spec(item, "attack", InvalidParameterError, owner=owner, objects=Attack)
    if spec.obj is not None:
        return spec.obj
    from .registry import get

    return get(spec.name, **spec.params)


class CompositeAttack(Attack):
    """An attack whose ``attacks`` parameter holds other attacks (objects, names or spec tables).

    Subclasses implement how the members run; this base gives them one way to resolve, name,
    read, set, describe and fingerprint the members.
    """

    has_rate = False
    _component_params = {"attacks": ComponentParam("attack", lambda self, item: build_member(item, type(self).__name__),
                                                   many=True)}
    #: Prefix of the composite's output version, before its members' versions.
    _version_prefix: str = ""

    # -- members ----------------------------------------------------------------------
    def steps(self) -> list[Attack]:
        """The members as objects; a name or a table is built once (keyed by what it says)."""
        return self.component("attacks")

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

    @property
    def needs_model(self) -> bool:
        """A composite loads a model when one of its members does."""
        return any(getattr(a, "needs_model", True) for a in self.steps())

    @property
    def batches(self) -> bool:
        """A composite works a batch out together when one of its members does (issue #24)."""
        return any(getattr(a, "batches", False) for a in self.steps())

    @property
    def version(self) -> str:
        """The composite's own version and its members': outputs change when one of theirs does."""
        return self._version_prefix + "+".join(a.version for a in self.steps())

    # -- parameters -------------------------------------------------------------------
    def _validate(self) -> None:
        super()._validate()
        if isinstance(self.attacks, (list, tuple)):
            self.steps()  # an unknown name or a bad table: one clear error now, not on the first document

    def get_params(self, deep: bool = True) -> dict:
        """The constructor arguments; with ``deep``, each step by name and its parameters as ``step__param``."""
        out = super().get_params(deep=False)
        if deep:
            for k, v in list(out.items()):
                if k != "attacks" and callable(getattr(v, "get_params", None)) and not isinstance(v, type):
                    out.update((f"{k}__{kk}", vv) for kk, vv in v.get_params().items())
            for name, a in self._valid_steps().items():
                out[name] = a
                out.update((f"{name}__{k}", v) for k, v in a.get_params(deep=True).items())
        return out

    def set_params(self, **params) -> "CompositeAttack":
        """Set parameters, replace a step (``homoglyph=Homoglyph(...)``) or set a step's parameter
        (``homoglyph__rate=0.3``; a step given by name or table becomes that object)."""
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
        self._drop_derived()
        return self

    def _check_param_name(self, name: str) -> None:
        if name not in self._param_tuple():
            steps = list(self._valid_steps())
            raise ValueError(f"{type(self).__name__} has no parameter or step {name!r}; valid: "
                             f"{', '.join(self._param_tuple())}{', ' if steps else ''}{', '.join(steps)}")
