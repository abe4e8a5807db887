"""Models an attack shares with the detectors and the perplexity meter that score its output (issue #19 §4).

An attack that writes or ranks with the very model a detector scores with confounds that
detector's figures: a causal LM rates its own choices as likely, so a rewrite by the scoring
model looks more machine-like to it, and the perplexity meter reports a fall in perplexity
for the same wrong reason. The runner warns about every such pair, in the run's warnings
and in the report's ``warnings`` table.

Models are compared by resolved identity, read from each component's provenance
(:meth:`humanize.params.ParamsMixin.provenance`, built on
:func:`humanize.models.identity.model_identity`), never by guessing at names: a packaged
alias and the hub id it stands for are one model; a local directory is its contents'
digest. Nothing is loaded.

Not compared: an attack's ``target`` or ``surrogate`` detector (RAFT, HMGC), which is the
threat model (the attack queries it on purpose); the quality meter's sentence encoder and
QPA's own constraints, which hold the meters' figures within bounds by design (TH-Bench
App. G); of the meter, only the perplexity LM is a scoring model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

__all__ = ["SharedModel", "component_models", "shared_models", "sharing_table", "SKIPPED_PARAMS"]

#: Parameters whose models are the attack's threat model, not its own (see the module docstring).
SKIPPED_PARAMS = ("target", "surrogate")


@dataclass(frozen=True)
class SharedModel:
    """One attack model that a detector or meter also scores with."""

    attack: str                  # the attack's label in the run
    where: str                   # the parameter path inside the attack (``paraphraser.model``)
    model: str                   # the model, as the user would name it (alias, hub id or directory)
    scorers: tuple               # e.g. ("detector log_likelihood", "the perplexity meter")

    def message(self) -> str:
        """One line: the attack, the parameter, the model and who else scores with it."""
        dets = [s.split(" ", 1)[1] for s in self.scorers if s.startswith("detector ")]
        rest = [s for s in self.scorers if not s.startswith("detector ")]
        who = (f"detector{'s' if len(dets) > 1 else ''} " if dets else "") + _join(dets + rest)
        many = len(dets) + len(rest) > 1
        return (f"attack {self.attack!r} writes or ranks with {self.model} ({self.where}), which {who} also "
                f"score{'' if many else 's'} with: {'their' if many else 'its'} figures for this attack are "
                f"confounded (a causal LM rates its own choices as likely); give the attack or the "
                f"scorer{'s' if many else ''} another model")


def _join(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _walk(node: Any, path: tuple, skip: tuple) -> Iterable[tuple[str, Mapping]]:
    """``(parameter path, identity)`` for every ``{"__model__": identity}`` in a provenance tree."""
    if isinstance(node, Mapping):
        if "__model__" in node and isinstance(node["__model__"], Mapping):
            yield ".".join(path), node["__model__"]
            return
        params = node.get("params") if isinstance(node.get("params"), Mapping) and "class" in node else None
        items = params.items() if params is not None else node.items()
        for k, v in items:
            if params is not None and k in skip:
                continue
            yield from _walk(v, path + (str(k),), skip)
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            yield from _walk(v, path[:-1] + (f"{path[-1]}[{i}]",) if path else (f"[{i}]",), skip)


def component_models(component: Any, only: Optional[tuple] = None,
                     skip: tuple = SKIPPED_PARAMS) -> list[tuple[str, str, str]]:
    """``(parameter path, key, name)`` of each model a component (attack, detector, meter) names.

    ``only``: keep the models under these top-level parameters (the meter's ``lm``);
    ``skip``: parameters, at any depth, whose models are left out (an attack's target).
    Read from ``component.provenance()``; nothing is loaded.
    """
    from humanize.models.identity import weights_key

    found = []
    for path, ident in _walk(component.provenance(), (), skip):
        if only is not None and path.split(".")[0].split("[")[0] not in only:
            continue
        key, name = weights_key(ident)
        found.append((path, key, name))
    return found


def shared_models(attacks: Mapping[str, Any], detectors: Mapping[str, Any],
                  meter: Any = None) -> list[SharedModel]:
    """Each (attack, parameter, model) whose model a detector or a likelihood meter (perplexity) scores with.

    ``attacks``: label -> attack; ``detectors``: name -> detector; ``meter``: the run's
    :class:`~humanize.quality.QualityMeter` or None (no quality table). A component whose
    provenance cannot be read (a model directory that is gone) is left out: the run itself
    reports that.
    """
    scorers: dict[str, list[str]] = {}
    for name, det in detectors.items():
        for _, key, _ in _safe_models(det):
            scorers.setdefault(key, []).append(f"detector {name}")
    for member in _likelihood_meters(meter):  # declared by the meter (PairMeter.likelihood_params), not named here
        for _, key, _ in _safe_models(member, only=member.likelihood_params):
            scorers.setdefault(key, []).append(f"the {member.name} meter")
    out, seen = [], set()
    for label, attack in attacks.items():
        for where, key, name in _safe_models(attack):
            if key in scorers and (label, where, key) not in seen:
                seen.add((label, where, key))
                out.append(SharedModel(label, where, name, tuple(dict.fromkeys(scorers[key]))))
    return out


def _likelihood_meters(meter: Any) -> list:
    """The quality meter's active members that report a language model's likelihood (``likelihood_params``)."""
    try:
        members = meter.members() if meter is not None else []
    except Exception:  # noqa: BLE001 - a warning must never stop a run; the run reports a broken meter
        return []
    return [m for m in members if getattr(m, "likelihood_params", ())]


def _safe_models(component: Any, only: Optional[tuple] = None) -> list[tuple[str, str, str]]:
    try:
        return component_models(component, only=only)
    except Exception:  # noqa: BLE001 - a warning must never stop a run; the run reports a broken component
        return []


def sharing_table(shared: list[SharedModel]):
    """The report's ``warnings`` table: one row per shared model."""
    import pandas as pd

    return pd.DataFrame([{"attack": s.attack, "parameter": s.where, "model": s.model,
                          "scored_by": ", ".join(s.scorers), "warning": s.message()} for s in shared],
                        columns=["attack", "parameter", "model", "scored_by", "warning"])
