"""Attacks as a configuration names them, and how each becomes a real :class:`~humanize.attacks.Attack`.

Most attacks are a registry name plus parameters. Two need more than the registry:

- ``impose_format`` takes a :class:`~humanize.attacks.FormatProfile`: in a config it is a table
  of the profile's fields (``FormatProfile.to_dict()``) or ``{fit = "demo", label = "human"}``,
  fitted on that dataset's clean texts of that label (optionally with loader filters and ``n``);
- ``pipeline`` (the registered :class:`~humanize.attacks.Pipeline`) runs its ``steps`` (attack specs:
  names or tables, each with its own ``rate``, each seeded by the run) in order: the config's ``steps``
  are the pipeline's ``attacks``. A pipeline has no θ of its own, so a rate sweep does not apply to it;
- ``blend`` (TH-Bench Appendix H) takes ``attacks``, a list of attack specs (names or tables),
  each built with the run's seed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from humanize._split import sampling_seed
from humanize.exceptions import ConfigError


def show(value: Any) -> str:
    """A value as error messages show it: repr plus type."""
    text = repr(value)
    return f"{text[:120]}{'...' if len(text) > 120 else ''} ({type(value).__name__})"


def is_int(x: Any) -> bool:
    import numpy as np

    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_number(x: Any) -> bool:
    import numpy as np

    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


@dataclass
class AttackSpec:
    """An attack in a configuration: a registry name, its parameters, optional θ values and a label.

    ``rates``: None for the attack's default θ, one value, or several (a sweep: one attack per
    θ, labelled ``label@θ``). ``label`` names it in reports (default: the name; a pipeline's
    default is its steps joined by ``+``, e.g. ``homoglyph@0.5+whitespace``).
    """

    name: str
    params: dict = field(default_factory=dict)
    rates: list | None = None
    label: str | None = None

    def base_label(self) -> str:
        if self.label:
            return self.label
        if self.name == "pipeline":
            return "+".join(step.step_label() for step in self.steps())
        from humanize import attacks

        with stored_names(self):
            return component_label(self.name, attacks)

    def step_label(self) -> str:
        """The label inside a pipeline's label: the name, with its θ when one is set."""
        rate = self.rates[0] if self.rates else self.params.get("rate")
        return self.label or (f"{self.base_label()}@{rate:g}" if is_number(rate) else self.base_label())

    def expand(self) -> list[tuple[str, dict]]:
        """(label, params) for each θ of the sweep; the label names the attack in reports."""
        base = self.base_label()
        if not self.rates:
            return [(base, dict(self.params))]
        if len(self.rates) == 1:
            return [(base, {**self.params, "rate": self.rates[0]})]
        return [(f"{base}@{r:g}", {**self.params, "rate": r}) for r in self.rates]

    def steps(self) -> list["AttackSpec"]:
        """A pipeline's steps as specs (names, tables or specs are accepted)."""
        steps = self.params.get("steps")
        if isinstance(steps, (str, dict)) or not isinstance(steps, (list, tuple)) or not steps:
            raise ConfigError(f"attack 'pipeline': steps must be a non-empty list of attack names or tables, "
                              f"got {show(steps)}")
        return [s if isinstance(s, AttackSpec) else attack_spec(s, "pipeline step") for s in steps]

    def check(self, where: str = "attack") -> None:
        """Types of the spec's own fields (the attack checks its parameters' values)."""
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"{where} name must be a non-empty str, got {show(self.name)}")
        if not isinstance(self.params, dict) or not all(isinstance(k, str) for k in self.params):
            raise ConfigError(f"attack {self.name!r}: params must be a table with str keys, got {show(self.params)}")
        if self.label is not None and (not isinstance(self.label, str) or not self.label):
            raise ConfigError(f"attack {self.name!r}: label must be a non-empty str, got {show(self.label)}")
        if self.rates is not None:
            if not isinstance(self.rates, (list, tuple)) or not self.rates:
                raise ConfigError(f"attack {self.name!r}: rate must be a number or a non-empty list of numbers "
                                  f"in [0, 1], got {show(self.rates)}")
            for r in self.rates:
                if not is_number(r):
                    raise ConfigError(f"attack {self.name!r}: every rate must be a number in [0, 1], got {show(r)}")
        if self.name == "pipeline":
            if self.rates or "rate" in self.params:
                raise ConfigError("attack 'pipeline' has no rate θ of its own, so a rate sweep does not apply; "
                                  "give each step its own rate")
            extra = sorted(set(self.params) - {"steps"})
            if extra:
                raise ConfigError(f"attack 'pipeline' takes only 'steps' (and 'label'), got {extra}")
            for step in self.steps():
                step.check("pipeline step")
                if step.rates is not None and len(step.rates) > 1:
                    raise ConfigError(f"pipeline step {step.name!r}: one rate per step (a sweep inside a "
                                      f"pipeline is not supported), got {list(step.rates)}")

    def build(self, seed: int, params: dict | None = None, train_fraction: float = 0.5, targets: dict | None = None):
        """The attack for ``params`` (one θ of :meth:`expand`; default: the spec's own), seeded.

        ``train_fraction`` is the run's: an attack that trains on a dataset (HMGC's
        ``train``, RAFT's ``target_train``) uses the run's train split, so it never
        trains on a document the run tests on (:func:`align_train_split`).
        ``targets``: the run's :class:`~humanize.detectors.Target` by detector label, for the
        parameters that name one as ``{run_detector = "label"}`` (:func:`substitute_targets`).
        """
        from humanize import attacks

        params = dict(self.params if params is None else params)
        if run_detector_refs(params):
            params = substitute_targets(params, targets or {}, self.name)
        params = align_train_split(params, train_fraction)
        if self.name == "pipeline":  # the config's `steps` are the registered pipeline's `attacks`, each seeded
            return attacks.get("pipeline", attacks=build_each(self.steps(), seed, train_fraction))
        if self.name == "blend" and isinstance(params.get("attacks"), (list, tuple)):
            # each blended attack is a spec of its own (a name or a table), seeded by the run
            params["attacks"] = build_each([attack_spec(a, "blended attack") if isinstance(a, (str, dict)) else a
                                            for a in params["attacks"]], seed, train_fraction)
        if self.name == "impose_format" and "profile" in params:
            params["profile"] = resolve_profile(params["profile"], seed)
        return attacks.get(self.name, **{"seed": seed, **params})


def stored_names(spec):
    """The context a spec's names resolve in: a spec read from a stored run (``spec.stored``) resolves
    them as stored data (:func:`humanize._registry.names_from_stored_data`: nothing imported by itself)."""
    import contextlib

    if getattr(spec, "stored", False):
        from humanize._registry import names_from_stored_data

        return names_from_stored_data()
    return contextlib.nullcontext()


def component_label(name: str, registry) -> str:
    """How a component is labelled in reports by default: its name, or for an import path
    (``my_attacks:Swap``) the class's own ``name`` (``swap``), which its outputs are keyed by."""
    from humanize._registry import is_import_path, recorded_name

    if not is_import_path(name):
        return name
    try:
        own = getattr(registry.resolve(name), "name", None)
    except (TypeError, ValueError):  # not importable, or named by a stored run and not loaded: its recorded name
        return recorded_name(name) or name
    return own if isinstance(own, str) and own and own not in ("attack", "detector") else name


#: A parameter value ``{run_detector = "label"}`` names the run's own detector of that label.
RUN_DETECTOR = "run_detector"


def _is_ref(value) -> bool:
    return isinstance(value, dict) and set(value) == {RUN_DETECTOR}


def run_detector_refs(params: dict) -> list[str]:
    """The detector labels that ``params`` name as ``{run_detector = "label"}`` (a wrapper's inner attack too)."""
    out = []
    for value in params.values():
        if _is_ref(value):
            out.append(value[RUN_DETECTOR])
        elif isinstance(value, dict) and isinstance(value.get("params"), dict):
            out += run_detector_refs(value["params"])
        elif isinstance(value, dict) and "name" in value:
            out += run_detector_refs({k: v for k, v in value.items() if k != "name"})
    return out


def substitute_targets(params: dict, targets: dict, owner: str) -> dict:
    """``params`` with each ``{run_detector = "label"}`` replaced by the run's Target of that label:
    the detector the run scores with, fitted once on the run's train split, is the one the
    attack queries ("attack detector X, evaluate on X and on Y" in one configuration)."""
    out = {}
    for key, value in params.items():
        if _is_ref(value):
            label = value[RUN_DETECTOR]
            if label not in targets:
                raise ConfigError(f"attack {owner!r}: {key} = {{run_detector = {label!r}}} names no detector of the "
                                  f"run; configured: {', '.join(sorted(targets)) or 'none'}")
            out[key] = targets[label]
        elif isinstance(value, dict) and run_detector_refs({"_": value} if not _is_ref(value) else value):
            inner = dict(value)
            if isinstance(inner.get("params"), dict):
                inner["params"] = substitute_targets(inner["params"], targets, owner)
            else:
                inner = {k: (v if k == "name" else substitute_targets({k: v}, targets, owner)[k])
                         for k, v in inner.items()}
            out[key] = inner
        else:
            out[key] = value
    return out


#: The parameters by which an attack names the detector it queries while it rewrites (its *guide*):
#: Adversarial Paraphrasing's ``guide``, RAFT's ``target``, HMGC's ``surrogate``.
GUIDE_PARAMS = ("guide", "target", "surrogate")


def _train_param(key: str) -> str:
    return "target_train" if key == "target" else "train"


def _as_detector_spec(value):
    """``(name, params)`` of a guide given as a detector name or a table ``{name = ..., **params}``, else None."""
    if isinstance(value, str) and value:
        return value, {}
    if isinstance(value, dict) and isinstance(value.get("name"), str) and not _is_ref(value):
        rest = {k: v for k, v in value.items() if k not in ("name", "params")}
        params = value.get("params", {})
        return (value["name"], {**params, **rest}) if isinstance(params, dict) else None
    return None


def share_run_guides(params: dict, detectors: list) -> dict:
    """``params`` with each guide parameter (:data:`GUIDE_PARAMS`) that is exactly one of the run's detectors
    (the same name and parameters) replaced by ``{run_detector = "label"}``, so the guide is the run's own
    detector: built (and, when learnable, fit on the run's train split) once, and scored with. Shared only when
    the attack names no training set of its own (``train``; RAFT's ``target_train``): a guide given one
    (TH-Bench's matched ``train = "demo"`` or a mismatched set) is the attack's own copy, fit on that. A
    wrapper's inner attack (QPA's ``attack``) too."""
    out = dict(params)
    inner = out.get("attack")
    if isinstance(inner, dict):
        out["attack"] = share_run_guides(inner, detectors)
    for key in GUIDE_PARAMS:
        spec = _as_detector_spec(out.get(key))
        if spec is None or out.get(_train_param(key)) is not None:
            continue
        for det in detectors:
            if getattr(det, "obj", None) is None and det.name == spec[0] and det.params == spec[1]:
                out[key] = {RUN_DETECTOR: det.base_label()}
                break
    return out


def guide_label(attack, targets: dict) -> str | None:
    """The guide of a built attack as a report names it: the run detector's label when the attack queries the
    run's own Target of it, else its detector's name with `` (own)`` (an attack's own copy, fit on its own
    training set); None for an attack no detector guides. A wrapper (QPA) reports its inner attack's guide."""
    from humanize.detectors.base import Detector
    from humanize.detectors.target import Target

    if isinstance(attack, dict):  # a wrapper's inner attack given as a table
        params = attack
    else:
        params = attack.get_params(deep=False) if callable(getattr(attack, "get_params", None)) else {}
    for key in GUIDE_PARAMS:
        if key not in params:
            continue
        value = params[key]
        for label, target in targets.items():
            if value is target:
                return label
        if isinstance(value, Target):
            return f"{value.detector.name} (own)"
        if isinstance(value, Detector):
            return f"{value.name} (own)"
        spec = _as_detector_spec(value)
        if spec is not None:
            return f"{spec[0]} (own)"
    inner = params.get("attack")
    return guide_label(inner, targets) if inner is not None and inner is not attack else None


def build_each(items: list, seed: int, train_fraction: float) -> list:
    """Each spec built at its own parameters (a pipeline's steps, a blend's attacks); attack objects as given."""
    return [a.build(seed, a.expand()[0][1], train_fraction) if isinstance(a, AttackSpec) else a for a in items]


#: Attack parameters that name a training set (see humanize.attacks.wordsub.targets).
TRAIN_PARAMS = ("train", "target_train")


def align_train_split(params: dict, train_fraction: float) -> dict:
    """Training-set parameters on the run's split: a dataset name or table gets the run's ``train_fraction``.

    The split rule (:func:`humanize._split.in_train_split`) is keyed on the
    seed (the run passes its own to every attack) and the fraction; the default fraction (0.5)
    leaves a bare dataset name as given, so its results keep their fingerprint.
    """
    if isinstance(params.get("attack"), dict):  # a wrapper's inner attack (QPA)
        params["attack"] = align_train_split(dict(params["attack"]), train_fraction)
    for key in TRAIN_PARAMS:
        value = params.get(key)
        if isinstance(value, str) and train_fraction != 0.5:
            params[key] = {"dataset": value, "fraction": train_fraction}
        elif isinstance(value, dict) and "dataset" in value and "fraction" not in value and train_fraction != 0.5:
            params[key] = {**value, "fraction": train_fraction}
    return params


def resolve_profile(value: Any, seed: int):
    """A FormatProfile from a config value: a profile, its fields as a table, or ``{fit=..., label=...}``."""
    from humanize.attacks import FormatProfile

    if isinstance(value, FormatProfile):
        return value
    if not isinstance(value, dict):
        raise ConfigError("impose_format: profile must be a table of FormatProfile fields (FormatProfile.to_dict()) "
                          f"or {{fit = DATASET, label = \"human\"|\"machine\"}}, got {show(value)}")
    if "fit" not in value:
        try:
            return FormatProfile.from_dict(value)
        except (TypeError, ValueError) as err:
            raise ConfigError(f"impose_format: {err}") from None
    spec = dict(value)
    dataset, label, n = spec.pop("fit"), spec.pop("label", None), spec.pop("n", None)
    filters = dict(spec.pop("filters", {}) or {})
    censor = spec.pop("censor_last_line", True)
    filters.update(spec)
    if not isinstance(dataset, str):
        raise ConfigError(f"impose_format: profile fit must be a dataset name, got {show(dataset)}")
    if label not in ("human", "machine"):
        raise ConfigError(f"impose_format: profile label must be 'human' or 'machine', got {show(label)}")
    if n is not None and (not is_int(n) or n < 1):
        raise ConfigError(f"impose_format: profile n must be an int >= 1 (or omitted for every text), got {show(n)}")
    if not isinstance(censor, bool):
        raise ConfigError(f"impose_format: profile censor_last_line must be a bool, got {show(censor)}")
    key = json.dumps([dataset, label, n, filters, censor, sampling_seed(seed) if n else None], sort_keys=True)
    return _fitted_profile(key)


@lru_cache(maxsize=8)
def _fitted_profile(key: str):
    """Fit once per (dataset, label, filters, n, seed): every θ of a sweep shares the profile."""
    from humanize.attacks import FormatProfile

    from ..data import available_datasets, load_dataset

    dataset, label, n, filters, censor, seed = json.loads(key)
    if dataset not in available_datasets():
        raise ConfigError(f"impose_format: unknown profile dataset {dataset!r}; available: "
                          f"{', '.join(available_datasets())}")
    try:
        df = load_dataset(dataset, **filters)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"impose_format: profile dataset {dataset!r}: {err}") from None
    df = df[(df["attack"].fillna("none") == "none") & (df["label"] == label)]
    df = df[df["generation"].map(lambda t: isinstance(t, str))]
    if df.empty:
        raise ConfigError(f"impose_format: dataset {dataset!r} with filters {filters} has no clean {label} texts "
                          "to fit a profile on")
    if n is not None and len(df) > n:
        df = df.sort_values("id").sample(n=n, random_state=seed)
    return FormatProfile(censor_last_line=censor).fit(df["generation"].tolist())


def _spec_table(item: Any, what: str) -> dict:
    """A config entry as a fresh dict with a ``name``: a bare name or a table with one."""
    if isinstance(item, str):
        return {"name": item}
    if not isinstance(item, dict) or "name" not in item:
        raise ConfigError(f"each {what} is a name or a table with 'name', got {show(item)}")
    return dict(item)


def spec_params(table: dict, what: str) -> dict:
    """The ``params`` sub-table, plus every other key left in the table (also a parameter)."""
    params = table.pop("params", {})
    if not isinstance(params, dict):
        raise ConfigError(f"{what} {table.get('name')!r}: params must be a table, got {show(params)}")
    params = dict(params)
    params.update(table)
    return params


def attack_spec(item: Any, what: str = "attack") -> AttackSpec:
    """An :class:`AttackSpec` from a config entry: ``"name"`` or a table (name, rate(s), label, params...)."""
    table = _spec_table(item, what)
    name = table.pop("name")
    rates = table.pop("rate", table.pop("rates", None))
    if rates is not None and not isinstance(rates, (list, tuple)):
        rates = [rates]
    label = table.pop("label", None)
    return AttackSpec(name, spec_params(table, what), None if rates is None else list(rates), label)
