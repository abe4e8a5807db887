"""Run configurations: what ``humanize-bench run`` reads from a TOML/YAML file or from flags.

A configuration names a dataset (and its filters), the attacks (several θ values
make a sweep), the detectors, the quality meters, the sample size, the seed and
the device. :meth:`RunConfig.validate` checks every field's type and range (strictly:
a bool is not an int, a str is not a number) and every name, before any work, with a
:class:`ConfigError` naming the field, the value and what is allowed. Attacks that need
more than a registry name (members, guides, training sets, profiles) are described in
:mod:`.attack_spec`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from humanize.exceptions import ConfigError
from .attack_spec import AttackSpec, attack_spec, spec_of
from .specs import ComponentSpec, is_int, is_number, show
from .run_specs import (EXECUTION_KEYS, DefenseSpec, check_defenses, check_resource_targets,
                        check_resources_table)

__all__ = ["AttackSpec", "DefenseSpec", "DetectorSpec", "RunConfig", "attack_spec", "config_from_dict",
           "config_from_stored", "defense_spec", "demo_config", "detector_spec", "load_config"]


@dataclass
class DetectorSpec(ComponentSpec):
    """A detector in a configuration: a name (registry key, entry point or import path), its
    parameters and an optional ``label`` naming it in reports (default: the name; for an import
    path, the class's ``name``)."""

    label: str | None = None
    #: a detector object given in Python (``RunConfig(detectors=[FunctionDetector(fn)])``): built
    #: as a clone of it; ``name`` is then its class's import path
    obj: Any = field(default=None, compare=False, repr=False)
    #: the default label the run gave it because another detector of the run has the same name
    #: (:func:`assign_detector_labels`: ``name:param=value,...``); derived, never stored
    default_label: str | None = field(default=None, compare=False, repr=False)

    kind: ClassVar[str] = "detector"
    registry_module: ClassVar[str] = "humanize.detectors"

    @classmethod
    def of(cls, detector) -> "DetectorSpec":
        """The spec of a Detector object (its parameters travel with the object), labelled by its ``name``."""
        spec = super().of(detector)
        name = getattr(detector, "name", None)
        spec.label = name if isinstance(name, str) and name else None
        return spec

    def base_label(self) -> str:
        if self.label:
            return self.label
        if self.default_label:
            return self.default_label
        return self.plain_label()

    def plain_label(self) -> str:
        """The label without the run's disambiguation: the name (for an import path, the class's
        ``name``; for a detector whose parameters name it, that name)."""
        own = self.params.get("name") if isinstance(self.params, dict) else None
        if isinstance(own, str) and own:  # a detector whose parameters name it (function, endpoint)
            return own
        return self.name_label()

    def params_label(self) -> str:
        """``plain_label:param=value,...`` over the parameters in name order (the plain label when there are none):
        what tells two detectors of one class apart, e.g. ``surface_probe:features=formatting``."""
        base = self.plain_label()
        params = self.params if isinstance(self.params, dict) else {}
        if not params and self.obj is not None:
            return f"{base}:{self.obj.fingerprint()[:8]}"
        from humanize._secrets import redact

        params = redact(params)  # a key in a URL or a body never becomes part of a label (humanize._secrets)
        shown = ",".join(f"{k}={_label_value(params[k])}" for k in sorted(params) if k != "name")
        return f"{base}:{shown}" if shown else base

    def build(self, device: str | None = None):
        """The configured detector (nothing loaded yet); the run's device unless its params set one."""
        detector = self.build_component()
        if device is not None and "device" in detector.get_params() and "device" not in self.params:
            detector.device = device
        return detector

    def to_dict(self) -> dict:
        out = {"name": self.name, "params": self.params}
        if self.label is not None:
            out["label"] = self.label
        if self.obj is not None:  # an object is identified by its fingerprint (its parameters, exactly)
            out["fingerprint"] = self.obj.fingerprint()
        return out


def _label_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return f"{value:g}"
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return str(value)


def assign_detector_labels(specs: list) -> None:
    """Give each detector without a ``label`` whose plain label another detector of the run shares a
    default label naming its parameters (:meth:`DetectorSpec.params_label`), so two detectors of one
    class with different parameters are two report rows; a lone detector keeps its plain label. Two
    that still share a label are refused by :meth:`RunConfig.validate` (a ConfigError)."""
    specs = [s for s in specs if isinstance(s, DetectorSpec)]
    plain: dict[str, int] = {}
    for s in specs:
        s.default_label = None
        try:
            key = s.label or s.plain_label()
        except Exception:  # noqa: BLE001 - a malformed spec: validate names it
            continue
        plain[key] = plain.get(key, 0) + 1
    for s in specs:
        if not s.label:
            try:
                if plain.get(s.plain_label(), 0) > 1:
                    s.default_label = s.params_label()
            except Exception:  # noqa: BLE001 - a malformed spec: validate names it
                continue


#: ``attacks = "as-given"``: the dataset's own attacked rows, scored as they are (RAID's 11 attacks)
AS_GIVEN = "as-given"


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
    n_boot: int = 1000  # bootstrap replicates behind every interval (0 = no intervals)
    confidence: float = 0.95  # the intervals' coverage
    device: str | None = None
    batch_size: int = 16
    db: str = "humanize-bench-out/results.sqlite"
    defenses: list[DefenseSpec] = field(default_factory=list)  # test-time defenses, each scored like the texts
    executor: str = "local"  # "local" or "ray" (humanize.benchmarks.runner.executors)
    ray_address: str | None = None  # None: start a local Ray cluster; "auto" or an address: join one
    max_retries: int = 2  # resubmissions of a batch whose worker died (the ray executor)
    resources: dict = field(default_factory=dict)  # {target: {num_cpus=..., num_gpus=...}} per worker
    plugins: list = field(default_factory=list)  # Python files defining components (humanize.plugins)
    #: "humanize" (exact quantile thresholds, intervals) or "raid" (RAID's own evaluator's definitions)
    protocol: str = "humanize"
    #: attack the human test texts too, as RAID does (they are scored; RAID's AUROC counts them)
    attack_human: bool = False
    #: evaluate the dataset's own attacked rows (its ``attack`` column) as given instead of attacking:
    #: ``attacks = "as-given"`` in a config or ``RunConfig(attacks="as-given")``
    given_attacks: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.attacks, str) and self.attacks == AS_GIVEN:
            self.attacks, self.given_attacks = [], True
        if isinstance(self.detectors, (list, tuple)):  # a stored config's reader sees the run's labels
            assign_detector_labels(self.detectors)

    def to_dict(self) -> dict:
        attacks, detectors, self.attacks, self.detectors = self.attacks, self.detectors, [], []
        try:
            d = asdict(self)
        finally:
            self.attacks, self.detectors = attacks, detectors
        d["attacks"] = [s.to_dict() if isinstance(s, AttackSpec) else s for s in attacks]
        d["detectors"] = [s.to_dict() if isinstance(s, DetectorSpec) else s for s in detectors]
        d["fprs"] = list(self.fprs) if isinstance(self.fprs, (list, tuple)) else self.fprs
        return d

    def key(self) -> str:
        """Identifies the run: everything that changes its results (not where they are stored)."""
        d = self.to_dict()
        d.pop("db")
        for name in EXECUTION_KEYS:  # the same results whichever executor computes them
            d.pop(name)
        if not d["defenses"]:  # runs without defenses keep the ids they had before defenses existed
            d.pop("defenses")
        for name, default in (("protocol", "humanize"), ("attack_human", False), ("given_attacks", False)):
            if d.get(name) == default:  # runs without them keep the ids they had before they existed
                d.pop(name)

        return json.dumps(d, sort_keys=True, default=repr)

    def job_resources(self, target: str, kind: str) -> dict:
        """What one worker of a job needs: the ``resources`` entry of its kind (``task`` or
        ``model``), updated by the entry of its target (a detector name, an attack label, or
        ``quality``/``defense``)."""
        return {**self.resources.get(kind, {}), **self.resources.get(target, {})}

    def validate(self) -> "RunConfig":
        """Check every field's type and range, and every name, before any work (:class:`ConfigError`).
        The plug-in files are loaded first, so their components' names resolve. A Detector object
        among ``detectors`` becomes its :meth:`DetectorSpec.of`, an Attack object among ``attacks`` its
        :meth:`AttackSpec.of`, a name, ``NAME:K=V,...`` or a table its :func:`.attack_spec.attack_spec` (detectors and
        defenses alike: :func:`detector_spec`, :func:`defense_spec`)."""
        self.validate_for_run()
        return self

    def validate_for_run(self):
        """:meth:`validate`, returning the run's quality meter that the check of ``[quality]`` built
        (:meth:`quality_meter`; None without quality): :func:`.engine.run` uses that very meter, so a run
        builds one."""
        from humanize.attacks import Attack
        from humanize.detectors.base import Detector

        # one grammar (:func:`.attack_spec.spec_of`): objects, names, NAME:K=V strings and tables, as in a config file
        if isinstance(self.detectors, (list, tuple)):
            self.detectors = [detector_spec(d) if isinstance(d, (Detector, str, dict)) else d for d in self.detectors]
        if isinstance(self.attacks, (list, tuple)):
            self.attacks = [attack_spec(a) if isinstance(a, (Attack, str, dict)) else a for a in self.attacks]
        if isinstance(self.defenses, (list, tuple)):
            self.defenses = [defense_spec(d) if isinstance(d, (str, dict)) else d for d in self.defenses]
        self._check_fields()
        self.load_plugins()  # an import-path detector's own name is its plain label
        assign_detector_labels(self.detectors)
        self._share_guides()
        return self._check_names()

    def quality_meter(self):
        """The run's :class:`~humanize.quality.QualityMeter` from the ``[quality]`` table (models load on its first
        score, so building it is cheap), or None without quality; a :class:`ConfigError` naming the key. Custom
        meters are built here: the meters themselves travel to the workers (a plug-in's need no file there)."""
        if not self.quality:
            return None
        import inspect

        from humanize.quality import QualityMeter

        valid = [p for p in inspect.signature(QualityMeter.__init__).parameters
                 if p not in ("self", "lm", "encoder", "device")]
        unknown = sorted(set(self.quality_params) - set(valid))
        if unknown:
            raise ConfigError(f"unknown [quality] key(s) {unknown}; valid: enabled, lm, encoder, "
                              f"{', '.join(valid)}")
        for name in ("quality_lm", "quality_encoder"):
            if getattr(self, name) == "":
                raise ConfigError(f"{name} must be a model name (str), got '' (omit it for the default)")
        kwargs = {"device": self.device, **self.quality_params}
        if self.quality_lm:
            kwargs["lm"] = self.quality_lm
        if self.quality_encoder:
            kwargs["encoder"] = self.quality_encoder
        try:  # the meter checks its arguments and loads nothing until it scores
            if kwargs.get("custom"):
                from humanize.quality.custom import build_meters

                kwargs["custom"] = build_meters(kwargs["custom"])
            return QualityMeter(**kwargs)
        except (TypeError, ValueError) as err:
            raise ConfigError(f"[quality]: {err}") from None

    def _share_guides(self) -> None:
        """An attack whose guide (``guide``, ``target``, ``surrogate``) is exactly one of the run's detectors
        queries the run's own Target of it (:func:`.attack_spec.share_run_guides`): one build, one fit."""
        from .attack_spec import share_run_guides

        if not isinstance(self.attacks, (list, tuple)) or not isinstance(self.detectors, (list, tuple)):
            return  # _check_fields names the problem
        specs = [d for d in self.detectors if isinstance(d, DetectorSpec)]
        for spec in self.attacks:
            if isinstance(spec, AttackSpec) and isinstance(spec.params, dict) and spec.obj is None:
                spec.params = share_run_guides(spec.name, spec.params, specs)

    def load_plugins(self) -> list:
        """Import the configured plug-in files (once per process)."""
        from humanize.plugins import load_plugins
        from humanize.exceptions import PluginError

        try:
            return load_plugins(self.plugins)
        except PluginError as err:
            raise ConfigError(str(err)) from None

    def target_labels(self) -> list[str]:
        """The detector labels the attacks name as ``{run_detector = "label"}`` (the run hands them its Target)."""
        from .attack_spec import run_detector_refs

        refs = []
        for spec in self.attacks:
            if isinstance(spec, AttackSpec) and isinstance(spec.params, dict):  # a rate sweep names no detector
                refs += [r for r in run_detector_refs(spec.params) if r not in refs]
        return refs

    def validation_targets(self) -> dict:
        """Stand-ins for the run's Targets, to check the attacks' parameters before any work: the
        configured detector, unfitted (a learnable one on a two-text set it is never fit on)."""
        refs = self.target_labels()
        if not refs:
            return {}
        from humanize.detectors import Target

        labels = [s.base_label() for s in self.detectors if isinstance(s, DetectorSpec)]
        for spec in self.attacks:
            from .attack_spec import run_detector_refs

            for ref in run_detector_refs(spec.params) if isinstance(spec, AttackSpec) else []:
                if ref not in labels:
                    raise ConfigError(f"attack {spec.name!r} names {{run_detector = {ref!r}}}, which is no detector "
                                      f"of the run; configured: {', '.join(labels) or 'none'}")

        out = {}
        for spec in self.detectors:
            if isinstance(spec, DetectorSpec) and spec.base_label() in refs:
                det = spec.build()
                out[spec.base_label()] = (Target(det, train=(["a human text", "a machine text"], ["human", "machine"]))
                                          if det.learnable else Target(det))
        return out

    def _check_fields(self) -> None:
        def need(ok: bool, name: str, allowed: str) -> None:
            if not ok:
                raise ConfigError(f"{name} must be {allowed}, got {show(getattr(self, name))}")

        need(isinstance(self.dataset, str), "dataset", "a dataset name (str)")
        need(isinstance(self.filters, dict) and all(isinstance(k, str) for k in self.filters), "filters",
             "a table of loader arguments with str keys, e.g. {domain = \"xsum\"}")
        need(self.n is None or (is_int(self.n) and self.n >= 2), "n", "an int >= 2 (or omitted for all rows)")
        need(is_int(self.seed), "seed", "an int (any size or sign)")
        need(isinstance(self.attacks, (list, tuple)) and not isinstance(self.attacks, str), "attacks",
             "a list of attack names or tables")
        need(isinstance(self.detectors, (list, tuple)) and not isinstance(self.detectors, str), "detectors",
             "a list of detector names or tables")
        need(isinstance(self.quality, bool), "quality", "true or false")
        for name in ("quality_lm", "quality_encoder"):
            need(getattr(self, name) is None or isinstance(getattr(self, name), str), name, "a model name (str)")
        need(isinstance(self.quality_params, dict), "quality_params", "a table of QualityMeter arguments")
        need(isinstance(self.fprs, (list, tuple)) and len(self.fprs) > 0, "fprs",
             "a non-empty list of false-positive rates in (0, 1), e.g. [0.05, 0.01]")
        for f in self.fprs:
            if not is_number(f) or not 0 < f < 1:
                raise ConfigError(f"every fprs entry must be a number in (0, 1), got {show(f)}")
        need(isinstance(self.per_domain, bool), "per_domain", "true or false")
        need(is_number(self.train_fraction) and 0 < self.train_fraction < 1, "train_fraction",
             "a number in (0, 1)")
        need(is_int(self.n_boot) and (self.n_boot == 0 or self.n_boot >= 2), "n_boot",
             "an int >= 2 (bootstrap replicates), or 0 for no intervals")
        need(is_number(self.confidence) and 0 < self.confidence < 1, "confidence", "a number in (0, 1), e.g. 0.95")
        need(self.device is None or isinstance(self.device, str), "device", "a device name (cpu, cuda, cuda:1...)")
        need(is_int(self.batch_size) and self.batch_size >= 1, "batch_size", "an int >= 1")
        need(isinstance(self.db, (str, os.PathLike)) and str(self.db) != "", "db",
             "the path of the results database (str)")
        need(isinstance(self.defenses, (list, tuple)) and not isinstance(self.defenses, str), "defenses",
             "a list of defense names or tables")
        from .executors import EXECUTORS

        need(isinstance(self.executor, str) and self.executor in EXECUTORS, "executor",
             " or ".join(map(repr, EXECUTORS)))
        need(self.ray_address is None or (isinstance(self.ray_address, str) and self.ray_address.strip() != ""),
             "ray_address", "omitted (start a local Ray cluster), 'auto' or a cluster address such as "
             "'ray://host:10001'")
        need(is_int(self.max_retries) and self.max_retries >= 0, "max_retries", "an int >= 0")
        need(isinstance(self.plugins, (list, tuple)) and all(isinstance(p, (str, os.PathLike)) for p in self.plugins),
             "plugins", "a list of Python file paths")
        from ..evaluation.evaluate import PROTOCOLS

        need(isinstance(self.protocol, str) and self.protocol in PROTOCOLS, "protocol", " or ".join(map(repr, PROTOCOLS)))
        need(isinstance(self.attack_human, bool), "attack_human", "true or false")
        need(isinstance(self.given_attacks, bool), "given_attacks", 'true or false (attacks = "as-given" sets it)')
        if self.given_attacks and self.attacks:
            raise ConfigError('attacks = "as-given" evaluates the dataset\'s own attacked rows; it takes no list of '
                              "attacks besides (run them in another configuration)")
        if self.given_attacks and self.attack_human:
            raise ConfigError('attack_human attacks the human texts with the configured attacks; with attacks = '
                              '"as-given" the dataset\'s own attacked human rows are used as they are')
        need(isinstance(self.resources, dict), "resources",
             "a table of per-worker resources by job, e.g. {model = {num_cpus = 1, num_gpus = 0.5}}")
        check_resources_table(self.resources)
        if self.device is not None:
            from humanize.models.loading import resolve_device

            try:
                resolve_device(self.device)
            except (TypeError, ValueError) as err:
                raise ConfigError(f"device: {err}") from None

    def _check_names(self) -> None:
        from humanize import attacks, detectors

        from ..data import dataset_loader

        try:
            loader = dataset_loader(self.dataset)
        except (TypeError, ValueError) as err:
            raise ConfigError(str(err)) from None
        import inspect

        signature = inspect.signature(loader).parameters
        valid = list(signature)
        unknown = sorted(set(self.filters) - set(valid))
        if unknown and not any(p.kind is p.VAR_KEYWORD for p in signature.values()):
            raise ConfigError(f"dataset {self.dataset!r} takes no filter(s) {unknown}; valid: {', '.join(valid)}")
        if not self.attacks and not self.given_attacks:
            raise ConfigError("no attacks configured (or attacks = \"as-given\" for the dataset's own attacked "
                              "rows); available: " + ", ".join(attacks.available()))
        if not self.detectors:
            raise ConfigError("no detectors configured; available: " + ", ".join(detectors.available()))
        labels: dict[str, str] = {}
        targets = self.validation_targets()
        for spec in self.attacks:
            if not isinstance(spec, AttackSpec):
                raise ConfigError(f"each attack must be an AttackSpec, got {show(spec)}")
            spec.check()
            spec.component_class()
            for label, params in spec.expand():
                try:
                    attack = spec.build(self.seed, params, targets=targets)
                    attack.fingerprint()  # a parameter without an exact form (a lambda) fails here, not mid-run
                except ConfigError:
                    raise
                except (TypeError, ValueError, LookupError, OSError) as err:
                    raise ConfigError(f"attack {spec.name!r}: {err}") from None
                if label == "none" or label in labels:
                    why = "is the clean rows' label" if label == "none" else f"is also {labels[label]}'s label"
                    raise ConfigError(f"attack label {label!r} {why}; give one of them its own `label`")
                labels[label] = spec.name
        seen_detectors: set = set()
        for spec in self.detectors:
            if not isinstance(spec, DetectorSpec):
                raise ConfigError(f"each detector must be a DetectorSpec, got {show(spec)}")
            spec.check()
            spec.component_class()
            label = spec.base_label()
            if label in seen_detectors:
                raise ConfigError(f"detector label {label!r} is configured twice (same name and parameters, or the "
                                  "same `label`); scores and reports are keyed by it: give one of them its own `label`")
            seen_detectors.add(label)
            try:
                # constructors check values and load nothing; the fingerprint keys the stored scores
                spec.build().fingerprint()
            except (TypeError, ValueError) as err:
                raise ConfigError(f"detector {spec.name!r}: {err}") from None
        meter = self.quality_meter()
        check_defenses(self.defenses)
        check_resource_targets(self.resources, list(labels), [d.base_label() for d in self.detectors])
        return meter


def detector_spec(item: Any, what: str = "detector") -> DetectorSpec:
    """A :class:`DetectorSpec` from a config entry or a ``--detector`` argument, in the one spec grammar
    (:func:`.attack_spec.spec_of`): a name, ``NAME:K=V,...``, a table (``label`` is the run's) or a Detector object.

    An import path to a plain function (``my_scorers:comma_rate``, a ``list[str] -> scores`` callable in a module
    or a loaded plug-in file) is the function detector of that function, ``function:fn=my_scorers:comma_rate``,
    labelled by the function's name."""
    from humanize._registry import import_object, is_import_path
    from humanize.detectors.base import Detector

    if isinstance(item, DetectorSpec):
        return item
    spec = spec_of(item, what, Detector)
    if spec.obj is not None:
        return DetectorSpec.of(spec.obj)
    params = spec.params
    label = params.pop("label", None)
    if is_import_path(spec.name):
        try:
            target = import_object(spec.name, what)
        except Exception:  # noqa: BLE001 - any failure is reported by the run's own check, in its words
            target = None
        if callable(target) and not isinstance(target, type):
            own = params.pop("name", None) or getattr(target, "__name__", None) or "function"
            return DetectorSpec("function", {"fn": spec.name, "name": own, **params}, label)
    return DetectorSpec(spec.name, params, label)


def defense_spec(item: Any) -> DefenseSpec:
    """A :class:`DefenseSpec` from a config entry or a ``--defense`` argument (the one spec grammar)."""
    if isinstance(item, DefenseSpec):
        return item
    spec = spec_of(item, "defense")
    return DefenseSpec(spec.name, spec.params)


def _entries(data: dict, section: str) -> list:
    """The ``attacks``/``detectors`` list; a single name or table is a mistake worth naming."""
    items = data.get(section, [])
    if isinstance(items, list):
        return items
    if isinstance(items, str):
        hint = f'write {section} = ["{items}"] (a list)'
    elif isinstance(items, dict):
        hint = f"a single [{section}] table: write [[{section}]] (one per entry)"
    else:
        hint = "expected a list of names or tables"
    raise ConfigError(f"{section} must be a list of names or tables, got {show(items)}; {hint}")


def _section(data: dict, name: str, scalar_key: str | None = None, scalar_types: tuple = ()) -> dict:
    value = data.get(name, {})
    if scalar_key and isinstance(value, scalar_types):
        return {scalar_key: value}
    if not isinstance(value, dict):
        raise ConfigError(f"[{name}] must be a table{' or a ' + scalar_key if scalar_key else ''}, got {show(value)}")
    return dict(value)


def config_from_dict(data: dict) -> RunConfig:
    """Build a config from the parsed file (sections: dataset, attacks, detectors, defenses, quality, run,
    resources).

    Values are taken as written; :meth:`RunConfig.validate` checks their types and ranges.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"a config is a mapping of sections, got {type(data).__name__}")
    known = {"dataset", "attacks", "detectors", "defenses", "quality", "run", "resources"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown config section(s) {unknown}; valid: {sorted(known)}")
    cfg = RunConfig()
    ds = _section(data, "dataset", "name", (str, int, float, bool, list))
    cfg.dataset = ds.pop("name", cfg.dataset)
    cfg.n = ds.pop("n", cfg.n)
    filters = ds.pop("filters", {})
    if not isinstance(filters, dict):
        raise ConfigError(f"[dataset] filters must be a table, got {show(filters)}")
    cfg.filters = {**filters, **ds}
    if data.get("attacks") == AS_GIVEN:
        cfg.given_attacks = True
    else:
        cfg.attacks = [attack_spec(a) for a in _entries(data, "attacks")]
    cfg.detectors = [detector_spec(d) for d in _entries(data, "detectors")]
    cfg.defenses = [defense_spec(d) for d in _entries(data, "defenses")]
    cfg.resources = _section(data, "resources")
    q = _section(data, "quality", "enabled", (bool, str, int, float, list))
    cfg.quality = q.pop("enabled", True)
    cfg.quality_lm = q.pop("lm", None)
    cfg.quality_encoder = q.pop("encoder", None)
    cfg.quality_params = q
    run = _section(data, "run")
    valid = ("seed", "device", "batch_size", "db", "per_domain", "train_fraction", "fprs", "n_boot", "confidence",
             "executor", "ray_address", "max_retries", "plugins", "protocol", "attack_human")
    for key in valid:
        if key in run:
            setattr(cfg, key, run.pop(key))
    if run:
        raise ConfigError(f"unknown [run] key(s) {sorted(run)}; valid: {', '.join(valid)}")
    return cfg


def config_from_stored(data: dict) -> RunConfig:
    """The inverse of :meth:`RunConfig.to_dict`: the configuration a store recorded for a run."""
    from dataclasses import fields

    if not isinstance(data, dict):
        raise ConfigError(f"a stored config is a mapping, got {show(data)}")
    names = {f.name for f in fields(RunConfig)}
    values = {k: v for k, v in data.items() if k in names}
    # a stored configuration is data: the plug-in files it names are never loaded from it (issue #35);
    # the manifest keeps their records, against which files given with --plugin are checked
    values["plugins"] = []
    values["attacks"] = [a if isinstance(a, AttackSpec) else AttackSpec(**{k: v for k, v in a.items()
                                                                          if k in ("name", "params", "rates", "label")})
                         for a in values.get("attacks", [])]
    values["detectors"] = [d if isinstance(d, DetectorSpec) else DetectorSpec(**{k: v for k, v in d.items()
                                                                                if k in ("name", "params", "label")})
                           for d in values.get("detectors", [])]
    values["defenses"] = [d if isinstance(d, DefenseSpec) else DefenseSpec(**d) for d in values.get("defenses", [])]
    if isinstance(values.get("fprs"), list):
        values["fprs"] = tuple(values["fprs"])
    from humanize._registry import names_from_stored_data, record_names

    manifest = data.get("manifest") if isinstance(data.get("manifest"), dict) else {}
    record_names([(e.get("name"), e.get("attack_name")) for e in manifest.get("attacks", []) if isinstance(e, dict)]
                 + [(e.get("name"), e.get("label")) for e in manifest.get("detectors", []) if isinstance(e, dict)
                    and not (e.get("config") or {}).get("label") and ":" not in str(e.get("label"))])
    for spec in [*values["attacks"], *values["detectors"], *values["defenses"]]:
        spec.stored = True  # its names resolve as stored data, whenever they are resolved
    with names_from_stored_data():  # labels resolve the recorded names: nothing they name is imported by itself
        return RunConfig(**values)


def load_config(path: str | Path) -> RunConfig:
    """Read a TOML (.toml) or YAML (.yaml/.yml) run configuration."""
    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"config path must be a str or path, got {show(path)}")
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist" if not path.exists()
                          else f"config path {str(path)!r} is not a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
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
    cfg = config_from_dict(data)
    if isinstance(cfg.plugins, (list, tuple)):  # a plug-in path in a config file is relative to that file
        cfg.plugins = [str(path.parent / p) if isinstance(p, str) and not Path(p).expanduser().is_absolute() else p
                       for p in cfg.plugins]
    return cfg


#: The offline demo: the rule-based attacks and two model-based ones against the offline metric and learned detectors.
DEMO_DETECTORS = ["log_likelihood", "log_rank", "entropy", "gltr", "lrr", "fast_detectgpt", "tfidf_lr",
                  "surface_probe"]

#: The demo's model-based attacks (``humanize/data/demo/model_attacks.json``: data, so that the runner names no
#: attack), each on a small budget so that the demo stays within 5 minutes on 2 CPU cores
#: (``benchmarks/bench_runner.py`` measures it): a word-level one (RAID's synonym swap of about 10% of the
#: content words, ranked by Gemma 3 270M, its two models in ``dtype="auto"``: bfloat16 on a CPU with it, twice as
#: fast, 1 of 73 keep/drop decisions changed; issue #38) and a rewriting one (the first sentence of each document
#: paraphrased by Qwen2.5-Coder-0.5B-Instruct, at most 80 new tokens: a demo sentence is under 60; a rambling
#: answer is cut, counted in truncated_chunks). Neither model is one the detectors or the perplexity meter score with
#: (SmolLM2-135M), so no detector sees an attack's own model (issue #19 §4).
DEMO_MODEL_ATTACKS = "demo/model_attacks.json"
DEMO_REWRITER = "qwen2.5-coder-0.5b-instruct"  # humanize.models.DEFAULT_CHAT_LM, named in that file for the config key


def demo_model_attacks() -> list[AttackSpec]:
    """The specs of :data:`DEMO_MODEL_ATTACKS` (name, parameters, label), read afresh."""
    from humanize._data import DATA_DIR

    entries = json.loads((DATA_DIR / DEMO_MODEL_ATTACKS).read_text(encoding="utf-8"))
    return [AttackSpec(e["name"], dict(e["params"]), label=e["label"]) for e in entries]


#: The demo's perplexity window: one window of the ids the metric detectors score (BOS + their
#: ``max_tokens`` = 512 tokens), so perplexity reads the detectors' pass instead of running its own
#: (:func:`humanize.models.scoring.shared_logprobs`). Other windows are allowed; the cost then shows a
#: second pass (``lm_stats.cache_info()["passes"]["sequence"]``).
DEMO_PERPLEXITY_WINDOW = {"max_length": 513, "max_windows": 1}


def demo_config(n: int = 40, seed: int = 0, db: str = "humanize-bench-out/demo.sqlite", *,
                model_attacks: bool = True, per_domain: bool = False) -> RunConfig:
    """The demo's run: the rule-based attacks, with ``model_attacks`` the two of :data:`DEMO_MODEL_ATTACKS`,
    against :data:`DEMO_DETECTORS` on ``n`` machine and ``n`` human texts of the embedded demo set.

    ``per_domain=False`` (the default): each detector's thresholds are calibrated on the clean human test texts
    of both domains pooled, so that the default ``n = 40`` (20 human test texts) resolves TPR at 5% FPR; with
    ``per_domain=True`` (RAID's protocol, one threshold per domain) 5% needs 20 human test texts in every
    domain, about ``n = 100``."""
    from humanize.attacks import RULE_BASED

    attacks = [AttackSpec(a) for a in RULE_BASED]
    if model_attacks:
        attacks += demo_model_attacks()
    return RunConfig(
        dataset="demo", n=n, seed=seed, attacks=attacks, per_domain=per_domain,
        detectors=[DetectorSpec(d) for d in DEMO_DETECTORS], db=db,
        # perplexity over the tokens the detectors score (BOS + their first 512, one window): their pass
        # serves it, so the quality stage runs no second pass (issue #38); a longer text (zero-width-space
        # texts run to thousands of tokens) gets the perplexity of that prefix, with a note
        quality_params=dict(DEMO_PERPLEXITY_WINDOW),
    )
