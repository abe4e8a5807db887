"""Attacks as a configuration names them, and how each becomes a real :class:`~humanize.attacks.Attack`.

Most attacks are a registry name plus parameters. Two need more than the registry:

- ``impose_format`` takes a :class:`~humanize.attacks.FormatProfile`: in a config it is a table
  of the profile's fields (``FormatProfile.to_dict()``) or ``{fit = "demo", label = "human"}``,
  fitted on that dataset's clean texts of that label (optionally with loader filters and ``n``);
- ``pipeline`` runs its ``steps`` (attack specs: names or tables, each with its own ``rate``)
  in order. A pipeline has no θ of its own, so a rate sweep does not apply to it;
- ``blend`` (TH-Bench Appendix H) takes ``attacks``, a list of attack specs (names or tables),
  each built with the run's seed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any


class ConfigError(ValueError):
    """A run configuration is invalid; the message says what and what is allowed."""


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


def sampling_seed(seed: int) -> int:
    """A seed numpy/pandas accept ([0, 2**32)) from any int: itself when in range (so existing
    results stay reproducible), else 32 bits of BLAKE2b of its decimal form."""
    if 0 <= seed < 2**32:
        return int(seed)
    return int.from_bytes(hashlib.blake2b(str(int(seed)).encode(), digest_size=4).digest(), "little")


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
        return self.name

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

    def build(self, seed: int, params: dict | None = None, train_fraction: float = 0.5):
        """The attack for ``params`` (one θ of :meth:`expand`; default: the spec's own), seeded.

        ``train_fraction`` is the run's: an attack that trains on a dataset (HMGC's
        ``train``, RAFT's ``target_train``) uses the run's train split, so it never
        trains on a document the run tests on (:func:`align_train_split`).
        """
        from humanize import attacks

        params = align_train_split(dict(self.params if params is None else params), train_fraction)
        if self.name == "pipeline":
            return attacks.Pipeline(build_each(self.steps(), seed, train_fraction))
        if self.name == "blend" and isinstance(params.get("attacks"), (list, tuple)):
            # each blended attack is a spec of its own (a name or a table), seeded by the run
            params["attacks"] = build_each([attack_spec(a, "blended attack") if isinstance(a, (str, dict)) else a
                                            for a in params["attacks"]], seed, train_fraction)
        if self.name == "impose_format" and "profile" in params:
            params["profile"] = resolve_profile(params["profile"], seed)
        return attacks.get(self.name, **{"seed": seed, **params})


def build_each(items: list, seed: int, train_fraction: float) -> list:
    """Each spec built at its own parameters (a pipeline's steps, a blend's attacks); attack objects as given."""
    return [a.build(seed, a.expand()[0][1], train_fraction) if isinstance(a, AttackSpec) else a for a in items]


#: Attack parameters that name a training set (see humanize.attacks.wordsub.targets).
TRAIN_PARAMS = ("train", "target_train")


def align_train_split(params: dict, train_fraction: float) -> dict:
    """Training-set parameters on the run's split: a dataset name or table gets the run's ``train_fraction``.

    The split rule (:func:`humanize.benchmarks.datasets.split.in_train_split`) is keyed on the
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

    from .datasets import available_datasets, load_dataset

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
