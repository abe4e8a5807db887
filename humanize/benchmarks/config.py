"""Run configurations: what ``humanize-bench run`` reads from a TOML/YAML file or from flags.

A configuration names a dataset (and its filters), the attacks (several θ values
make a sweep), the detectors, the quality meters, the sample size, the seed and
the device. Unknown names fail here, before any work, with the valid names listed.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A run configuration is invalid; the message says what and what is allowed."""


@dataclass
class AttackSpec:
    name: str
    params: dict = field(default_factory=dict)
    rates: list | None = None  # None: the attack's default θ

    def expand(self) -> list[tuple[str, dict]]:
        """(label, params) for each θ of the sweep; the label names the attack in reports."""
        if not self.rates:
            return [(self.name, dict(self.params))]
        if len(self.rates) == 1:
            return [(self.name, {**self.params, "rate": self.rates[0]})]
        return [(f"{self.name}@{r:g}", {**self.params, "rate": r}) for r in self.rates]


@dataclass
class DetectorSpec:
    name: str
    params: dict = field(default_factory=dict)


@dataclass
class RunConfig:
    dataset: str = "demo"
    filters: dict = field(default_factory=dict)
    n: int | None = 40  # machine texts (with as many human texts); None = all
    seed: int = 0
    attacks: list[AttackSpec] = field(default_factory=list)
    detectors: list[DetectorSpec] = field(default_factory=list)
    quality: bool = True
    quality_lm: str | None = None  # None: the offline default (humanize.models.DEFAULT_CAUSAL_LM)
    quality_encoder: str | None = None
    quality_params: dict = field(default_factory=dict)  # more QualityMeter arguments, e.g. max_length, stride
    fprs: tuple = (0.05, 0.01)
    per_domain: bool = True
    train_fraction: float = 0.5  # share of source documents used to fit learnable detectors
    device: str | None = None
    batch_size: int = 16
    db: str = "humanize-bench-out/results.sqlite"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["fprs"] = list(self.fprs)
        return d

    def key(self) -> str:
        """Identifies the run: everything that changes its results (not where they are stored)."""
        d = self.to_dict()
        d.pop("db")
        return json.dumps(d, sort_keys=True, default=repr)

    def validate(self) -> "RunConfig":
        from humanize import attacks, detectors

        from .datasets import available_datasets

        if self.dataset not in available_datasets():
            raise ConfigError(f"unknown dataset {self.dataset!r}; available: {', '.join(available_datasets())}")
        if self.n is not None and (not isinstance(self.n, int) or self.n < 2):
            raise ConfigError(f"n must be an int >= 2 (or omitted for all rows), got {self.n!r}")
        if not self.attacks:
            raise ConfigError("no attacks configured; available: " + ", ".join(attacks.available()))
        if not self.detectors:
            raise ConfigError("no detectors configured; available: " + ", ".join(detectors.available()))
        for spec in self.attacks:
            if spec.name not in attacks.available():
                raise ConfigError(f"unknown attack {spec.name!r}; available: {', '.join(attacks.available())}")
            for _, params in spec.expand():
                try:
                    attacks.get(spec.name, **params)
                except (TypeError, ValueError) as err:
                    raise ConfigError(f"attack {spec.name!r}: {err}") from None
        for spec in self.detectors:
            if spec.name not in detectors.available():
                raise ConfigError(f"unknown detector {spec.name!r}; available: {', '.join(detectors.available())}")
            valid = detectors.resolve(spec.name)._param_names()
            unknown = sorted(set(spec.params) - set(valid))
            if unknown:
                raise ConfigError(f"detector {spec.name!r} has no parameter(s) {unknown}; valid: {valid}")
        if self.quality and self.quality_params:
            import inspect

            from humanize.quality import QualityMeter

            valid = [p for p in inspect.signature(QualityMeter.__init__).parameters
                     if p not in ("self", "lm", "encoder", "device")]
            unknown = sorted(set(self.quality_params) - set(valid))
            if unknown:
                raise ConfigError(f"unknown [quality] key(s) {unknown}; valid: enabled, lm, encoder, {', '.join(valid)}")
        if not 0 < self.train_fraction < 1:
            raise ConfigError(f"train_fraction must be in (0, 1), got {self.train_fraction!r}")
        for f in self.fprs:
            if not 0 < float(f) < 1:
                raise ConfigError(f"fprs must be in (0, 1), got {f!r}")
        return self


def _spec_table(item: Any, what: str) -> dict:
    """A config entry as a fresh dict with a ``name``: a bare name or a table with one."""
    if isinstance(item, str):
        return {"name": item}
    if not isinstance(item, dict) or "name" not in item:
        raise ConfigError(f"each {what} is a name or a table with 'name', got {item!r}")
    return dict(item)


def _params(table: dict) -> dict:
    """The ``params`` sub-table, plus every other key left in the table (also a parameter)."""
    params = dict(table.pop("params", {}))
    params.update(table)
    return params


def _attack_spec(item: Any) -> AttackSpec:
    table = _spec_table(item, "attack")
    name = table.pop("name")
    rates = table.pop("rate", table.pop("rates", None))
    if rates is not None and not isinstance(rates, list):
        rates = [rates]
    return AttackSpec(name, _params(table), rates)


def _detector_spec(item: Any) -> DetectorSpec:
    table = _spec_table(item, "detector")
    name = table.pop("name")
    return DetectorSpec(name, _params(table))


def config_from_dict(data: dict) -> RunConfig:
    """Build a config from the parsed file (sections: dataset, attacks, detectors, quality, run)."""
    if not isinstance(data, dict):
        raise ConfigError(f"a config is a mapping of sections, got {type(data).__name__}")
    known = {"dataset", "attacks", "detectors", "quality", "run"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown config section(s) {unknown}; valid: {sorted(known)}")
    cfg = RunConfig()
    ds = data.get("dataset", {})
    if isinstance(ds, str):
        ds = {"name": ds}
    ds = dict(ds)
    cfg.dataset = ds.pop("name", cfg.dataset)
    cfg.n = ds.pop("n", cfg.n)
    cfg.filters = dict(ds.pop("filters", {}))
    cfg.filters.update(ds)
    cfg.attacks = [_attack_spec(a) for a in data.get("attacks", [])]
    cfg.detectors = [_detector_spec(d) for d in data.get("detectors", [])]
    q = data.get("quality", {})
    if isinstance(q, bool):
        q = {"enabled": q}
    cfg.quality = bool(q.get("enabled", True))
    cfg.quality_lm = q.get("lm")
    cfg.quality_encoder = q.get("encoder")
    cfg.quality_params = {k: v for k, v in q.items() if k not in ("enabled", "lm", "encoder")}
    run = dict(data.get("run", {}))
    for key in ("seed", "device", "batch_size", "db", "per_domain", "train_fraction"):
        if key in run:
            setattr(cfg, key, run.pop(key))
    if "fprs" in run:
        cfg.fprs = tuple(run.pop("fprs"))
    if run:
        raise ConfigError(f"unknown [run] key(s) {sorted(run)}; valid: seed, device, batch_size, db, per_domain, "
                          "train_fraction, fprs")
    return cfg


def load_config(path: str | Path) -> RunConfig:
    """Read a TOML (.toml) or YAML (.yaml/.yml) run configuration."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise ConfigError(f"{path}: invalid TOML: {err}") from None
    elif path.suffix in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as err:
            raise ConfigError(f"{path}: invalid YAML: {err}") from None
    else:
        raise ConfigError(f"config file must end in .toml, .yaml or .yml, got {path.name!r}")
    return config_from_dict(data)


#: The offline demo: the rule-based attacks against the offline metric and learned detectors.
DEMO_DETECTORS = ["log_likelihood", "log_rank", "entropy", "gltr", "lrr", "fast_detectgpt", "tfidf_lr",
                  "surface_probe"]


def demo_config(n: int = 40, seed: int = 0, db: str = "humanize-bench-out/demo.sqlite") -> RunConfig:
    from humanize.attacks import RULE_BASED

    return RunConfig(
        dataset="demo", n=n, seed=seed, attacks=[AttackSpec(a) for a in RULE_BASED],
        detectors=[DetectorSpec(d) for d in DEMO_DETECTORS], db=db,
        # perplexity on 512-token windows (stride 384): zero-width-space texts run to thousands
        # of tokens, and overlapping 1,024-token windows would triple the demo's time on a CPU
        quality_params={"max_length": 512, "stride": 384},
    )
