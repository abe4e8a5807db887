"""Attacks as a configuration names them, and how each becomes a real :class:`~humanize.attacks.Attack`.

An attack is a registry name (or import path) plus parameters, or an :class:`~humanize.attacks.Attack`
object given in Python (:meth:`AttackSpec.of`). The runner knows no attack by name: what it hands an
attack follows from the parameters its class declares as components
(:class:`humanize.params.ComponentParam`, ``_component_params``), by their kind:

- ``attack`` (``many``: a list of them, a composite's ``attacks``): each member is a spec
  of its own (a name, a table, a spec or an object), built with the run's seed; a member given as one table
  (QPA's ``attack``) gets the run's values below and is built by its owner;
- ``detector``: ``{run_detector = "label"}``, or a guide that is exactly one of the run's detectors, is the
  run's own fitted :class:`~humanize.detectors.Target` (:func:`share_run_guides`);
- ``training_set``: a dataset name or table is put on the run's train split (:func:`align_train_split`);
- ``format_profile``: a table of the profile's fields or ``{fit = "demo", label = "human"}``, fitted on that
  dataset's clean texts of that label (:func:`resolve_profile`).

A class whose member list is declared with ``label=True`` (a sequence of attacks) is labelled by its
members' labels joined with ``+`` (``a@0.5+b``). A class without a rate θ takes no rate sweep.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

from humanize._split import sampling_seed
from humanize.exceptions import ConfigError
from .specs import ComponentSpec, is_int, is_number, show, stored_names


def attack_class(name: Any):
    """The class an attack name resolves to, or None when it does not (the check names the problem)."""
    from humanize import attacks

    if not isinstance(name, str) or not name:
        return None
    try:
        return attacks.resolve(name)
    except (TypeError, ValueError):
        return None


def declared(name: Any) -> dict:
    """The component parameters the class of ``name`` declares (``{param: ComponentParam}``; none if unknown)."""
    cls = attack_class(name)
    return cls.component_params() if callable(getattr(cls, "component_params", None)) else {}


def _of_kind(decls: dict, kind: str, many: bool | None = None) -> list:
    return [(k, d) for k, d in decls.items() if d.kind == kind and (many is None or d.many == many)]


@dataclass
class AttackSpec(ComponentSpec):
    """An attack in a configuration: a registry name, its parameters, optional θ values and a label.

    ``rates``: None for the attack's default θ, one value, or several (a sweep: one attack per
    θ, labelled ``label@θ``). ``label`` names it in reports (default: the name; a sequence's
    default is its members' labels joined by ``+``, e.g. ``a@0.5+b``).
    """

    rates: list | None = None
    label: str | None = None
    #: an attack object given in Python (``RunConfig(attacks=[Homoglyph(rate=0.3)])``): run as a clone of it,
    #: with its own seed; ``name`` is then its class's import path
    obj: Any = field(default=None, compare=False, repr=False)

    kind: ClassVar[str] = "attack"
    registry_module: ClassVar[str] = "humanize.attacks"

    def base_label(self) -> str:
        if self.label:
            return self.label
        own = getattr(self.obj, "name", None)
        if isinstance(own, str) and own:  # an object given in Python: its class's name
            return own
        with stored_names(self):
            joined = [k for k, d in _of_kind(declared(self.name), "attack", many=True) if d.label]
            if joined and self.obj is None:
                return "+".join(m.step_label() for m in self.members(joined[0]))
        return self.name_label()

    def step_label(self) -> str:
        """The label inside a sequence's label: the name, with its θ when one is set."""
        rate = self.rates[0] if self.rates else self.params.get("rate")
        if self.obj is not None and getattr(self.obj, "has_rate", False):
            rate = getattr(self.obj, "rate", None)
        return self.label or (f"{self.base_label()}@{rate:g}" if is_number(rate) else self.base_label())

    def expand(self) -> list[tuple[str, dict]]:
        """(label, params) for each θ of the sweep; the label names the attack in reports."""
        base = self.base_label()
        if not self.rates:
            return [(base, dict(self.params))]
        if len(self.rates) == 1:
            return [(base, {**self.params, "rate": self.rates[0]})]
        return [(f"{base}@{r:g}", {**self.params, "rate": r}) for r in self.rates]

    def has_rate(self) -> bool:
        """Whether the attack has a rate θ of its own (its class's declared ``has_rate``): a θ sweep applies to it.
        A composite has none (its members carry theirs). An unknown name says True: the name check names it."""
        if self.obj is not None:
            return bool(getattr(self.obj, "has_rate", False))
        cls = attack_class(self.name)
        return True if cls is None else bool(getattr(cls, "has_rate", True))

    def members(self, key: str) -> list["AttackSpec"]:
        """The attacks a member-list parameter holds, as specs (names, tables, specs and objects are accepted)."""
        items = self.params.get(key)
        if isinstance(items, (str, dict)) or not isinstance(items, (list, tuple)) or not items:
            raise ConfigError(f"attack {self.name!r}: {key} must be a non-empty list of attack names or tables, "
                              f"got {show(items)}")
        return [attack_spec(i, f"{self.name} member") for i in items]

    def check(self, where: str | None = None) -> None:
        """Types of the spec's own fields, θ values included (the attack checks its parameters' values)."""
        super().check(where)
        if self.rates is not None:
            if not isinstance(self.rates, (list, tuple)) or not self.rates:
                raise ConfigError(f"attack {self.name!r}: rate must be a number or a non-empty list of numbers "
                                  f"in [0, 1], got {show(self.rates)}")
            for r in self.rates:
                if not is_number(r):
                    raise ConfigError(f"attack {self.name!r}: every rate must be a number in [0, 1], got {show(r)}")
        if self.obj is not None:
            return
        cls = attack_class(self.name)
        if cls is None:
            return  # the name check says what is wrong
        renamed = [k for k in getattr(cls, "_renamed_params", {}) if k in self.params]
        if renamed:
            new = cls._renamed_params
            raise ConfigError(f"attack {self.name!r}: " + "; ".join(f"{k!r} is now {new[k]!r}" for k in renamed))
        if getattr(cls, "has_rate", True) is False and "rate" not in cls._param_tuple() and (
                self.rates or "rate" in self.params):
            raise ConfigError(f"attack {self.name!r} has no rate θ of its own, so a rate sweep does not apply; "
                              "give each of its attacks its own rate")
        for key, _ in _of_kind(cls.component_params(), "attack", many=True):
            if key not in self.params:
                continue
            for member in self.members(key):
                member.check(f"{self.name} member")
                if member.rates is not None and len(member.rates) > 1:
                    raise ConfigError(f"{self.name} member {member.name!r}: one rate per member (a sweep inside "
                                      f"{self.name!r} is not supported), got {list(member.rates)}")

    def build(self, seed: int, params: dict | None = None, train_fraction: float = 0.5, targets: dict | None = None):
        """The attack for ``params`` (one θ of :meth:`expand`; default: the spec's own), seeded.

        ``train_fraction`` is the run's: an attack that trains on a dataset (a ``training_set``
        parameter: HMGC's ``train``, RAFT's ``target_train``) uses the run's train split, so it never
        trains on a document the run tests on (:func:`align_train_split`).
        ``targets``: the run's :class:`~humanize.detectors.Target` by detector label, for the
        parameters that name one as ``{run_detector = "label"}`` (:func:`substitute_targets`).
        An object given in Python is run as a clone of it (its own seed).
        """
        if self.obj is not None:
            return self.build_component()
        params = dict(self.params if params is None else params)
        if run_detector_refs(params):
            params = substitute_targets(params, targets or {}, self.name)
        params = run_values(self.name, params, seed, train_fraction, targets)
        if "seed" in self.registry().resolve(self.name)._param_tuple():
            params = {"seed": seed, **params}
        return self.build_component(params)

    def to_dict(self) -> dict:
        """The spec as a configuration stores it (an object by its fingerprint, as a detector's)."""
        from dataclasses import asdict

        obj, self.obj = self.obj, None
        try:
            out = asdict(self)
        finally:
            self.obj = obj
        out.pop("obj")
        if obj is not None:
            out["fingerprint"] = obj.fingerprint()
        return out


def run_values(name: str, params: dict, seed: int, train_fraction: float, targets: dict | None = None) -> dict:
    """``params`` with the run's values put into the component parameters the class of ``name`` declares:
    members built with the run's seed, training sets on the run's split, a format profile fitted (module
    docstring). A member given as one table (QPA's ``attack``) gets the same, and is built by its owner."""
    params = align_train_split(name, params, train_fraction)
    for key, inner in list(_inner_tables(name, params)):
        params[key] = run_values(inner["name"], inner, seed, train_fraction, targets)
    for key, decl in declared(name).items():
        value = params.get(key)
        if decl.kind == "attack" and decl.many and isinstance(value, (list, tuple)):
            spec = AttackSpec(name, {key: value})
            params[key] = [m.build(seed, m.expand()[0][1], train_fraction, targets) for m in spec.members(key)]
        elif decl.kind == "format_profile" and value is not None:
            params[key] = resolve_profile(value, seed, name)
    return params


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


def _as_detector_spec(value):
    """``(name, params)`` of a guide given as a detector spec (a name, ``NAME:K=V,...`` or a table), else None."""
    if not isinstance(value, (str, dict)) or _is_ref(value):
        return None
    try:
        spec = spec_of(value, "detector")
    except ConfigError:
        return None
    return spec.name, spec.params


def _inner_tables(name: str, params: dict):
    """``(key, table)`` of each member given as one table ``{name = ...}`` (QPA's ``attack``)."""
    for key, decl in _of_kind(declared(name), "attack", many=False):
        value = params.get(key)
        if isinstance(value, dict) and attack_class(value.get("name")) is not None:
            yield key, value


def share_run_guides(name: str, params: dict, detectors: list) -> dict:
    """``params`` with each ``detector`` parameter of the class of ``name`` that is exactly one of the run's
    detectors (the same name and parameters) replaced by ``{run_detector = "label"}``, so the guide is the run's
    own detector: built (and, when learnable, fit on the run's train split) once, and scored with. Shared only
    when the attack names no training set of its own for it (the ``train`` its declaration pairs it with: HMGC's
    ``train``, RAFT's ``target_train``): a guide given one (TH-Bench's matched ``train = "demo"`` or a mismatched
    set) is the attack's own copy, fit on that. A member given as one table (QPA's ``attack``) too."""
    out = dict(params)
    for key, inner in _inner_tables(name, out):
        out[key] = share_run_guides(inner["name"], inner, detectors)
    for key, decl in _of_kind(declared(name), "detector"):
        spec = _as_detector_spec(out.get(key))
        if spec is None or (decl.train is not None and out.get(decl.train) is not None):
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
        params, decls = attack, declared(attack.get("name"))
    elif callable(getattr(attack, "get_params", None)) and callable(getattr(attack, "component_params", None)):
        params, decls = attack.get_params(deep=False), attack.component_params()
    else:
        return None
    for key, _ in _of_kind(decls, "detector"):
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
    for key, _ in _of_kind(decls, "attack", many=False):
        inner = params.get(key)
        if inner is not None and inner is not attack:
            found = guide_label(inner, targets)
            if found is not None:
                return found
    return None


def align_train_split(name: str, params: dict, train_fraction: float) -> dict:
    """The ``training_set`` parameters of the class of ``name`` on the run's split: a dataset name or table
    gets the run's ``train_fraction`` (a member given as one table, QPA's ``attack``, gets it through
    :func:`run_values`, which calls this for every member).

    The split rule (:func:`humanize._split.in_train_split`) is keyed on the
    seed (the run passes its own to every attack) and the fraction; the default fraction (0.5)
    leaves a bare dataset name as given, so its results keep their fingerprint.
    """
    params = dict(params)
    for key, _ in _of_kind(declared(name), "training_set"):
        value = params.get(key)
        if isinstance(value, str) and train_fraction != 0.5:
            params[key] = {"dataset": value, "fraction": train_fraction}
        elif isinstance(value, dict) and "dataset" in value and "fraction" not in value and train_fraction != 0.5:
            params[key] = {**value, "fraction": train_fraction}
    return params


def resolve_profile(value: Any, seed: int, owner: str):
    """A FormatProfile from a config value: a profile, its fields as a table, or ``{fit=..., label=...}``."""
    from humanize.attacks import FormatProfile

    if isinstance(value, FormatProfile):
        return value
    if not isinstance(value, dict):
        raise ConfigError(f"{owner}: profile must be a table of FormatProfile fields (FormatProfile.to_dict()) "
                          f"or {{fit = DATASET, label = \"human\"|\"machine\"}}, got {show(value)}")
    if "fit" not in value:
        try:
            return FormatProfile.from_dict(value)
        except (TypeError, ValueError) as err:
            raise ConfigError(f"{owner}: {err}") from None
    spec = dict(value)
    dataset, label, n = spec.pop("fit"), spec.pop("label", None), spec.pop("n", None)
    filters = dict(spec.pop("filters", {}) or {})
    censor = spec.pop("censor_last_line", True)
    filters.update(spec)
    if not isinstance(dataset, str):
        raise ConfigError(f"{owner}: profile fit must be a dataset name, got {show(dataset)}")
    if label not in ("human", "machine"):
        raise ConfigError(f"{owner}: profile label must be 'human' or 'machine', got {show(label)}")
    if n is not None and (not is_int(n) or n < 1):
        raise ConfigError(f"{owner}: profile n must be an int >= 1 (or omitted for every text), got {show(n)}")
    if not isinstance(censor, bool):
        raise ConfigError(f"{owner}: profile censor_last_line must be a bool, got {show(censor)}")
    key = json.dumps([dataset, label, n, filters, censor, sampling_seed(seed) if n else None], sort_keys=True)
    return _fitted_profile(key, owner)


@lru_cache(maxsize=8)
def _fitted_profile(key: str, owner: str):
    """Fit once per (dataset, label, filters, n, seed): every θ of a sweep shares the profile."""
    from humanize.attacks import FormatProfile

    from ..data import available_datasets, load_dataset

    dataset, label, n, filters, censor, seed = json.loads(key)
    if dataset not in available_datasets():
        raise ConfigError(f"{owner}: unknown profile dataset {dataset!r}; available: "
                          f"{', '.join(available_datasets())}")
    try:
        df = load_dataset(dataset, **filters)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{owner}: profile dataset {dataset!r}: {err}") from None
    df = df[(df["attack"].fillna("none") == "none") & (df["label"] == label)]
    df = df[df["generation"].map(lambda t: isinstance(t, str))]
    if df.empty:
        raise ConfigError(f"{owner}: dataset {dataset!r} with filters {filters} has no clean {label} texts "
                          "to fit a profile on")
    if n is not None and len(df) > n:
        df = df.sort_values("id").sample(n=n, random_state=seed)
    return FormatProfile(censor_last_line=censor).fit(df["generation"].tolist())


def spec_of(item: Any, what: str, objects: type | tuple | None = None):
    """A config entry (a name, ``NAME:K=V,...``, a table or, where ``objects`` allows, an object) as a
    :class:`humanize._registry.Spec`: the one spec grammar of configs, composite members and the command line."""
    from humanize._registry import parse_spec

    return parse_spec(item, what, ConfigError, objects=objects)


def attack_spec(item: Any, what: str = "attack") -> AttackSpec:
    """An :class:`AttackSpec` from a config entry, in the one spec grammar (:func:`spec_of`): ``"name"``,
    ``"name:rate=0.3,label=x"``, a table (name, rate(s), label, params...) or an Attack object. ``rate`` (one
    value or a list: a sweep) and ``label`` are the run's; every other key is a parameter of the attack."""
    from humanize.attacks import Attack

    if isinstance(item, AttackSpec):
        return item
    run_keys = {}
    if isinstance(item, dict):  # the run's keys are the table's own (a params sub-table's rate is the attack's)
        item = dict(item)
        run_keys = {k: item.pop(k) for k in ("rate", "rates", "label") if k in item}
    spec = spec_of(item, what, Attack)
    if spec.obj is not None:
        return AttackSpec.of(spec.obj)
    params = spec.params
    if not isinstance(item, dict):
        run_keys = {k: params.pop(k) for k in ("rate", "rates", "label") if k in params}
    rates = run_keys["rate"] if "rate" in run_keys else run_keys.get("rates")
    if rates is not None and not isinstance(rates, (list, tuple)):
        rates = [rates]
    return AttackSpec(spec.name, params, None if rates is None else list(rates), run_keys.get("label"))
