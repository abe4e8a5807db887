"""What the stages of one run share: its configuration, sample, store and executor, and its plans, each built
once (issue #36 item 5).

A *plan* is a named, frozen record of a component the run built from its configuration: an
:class:`AttackPlan` per attack and θ, a :class:`DetectorPlan` per detector, a :class:`DefensePlan` per
test-time defense and the :class:`QualityPlan` (the run's quality meter). They are made once, by
:func:`plan_run`, before any work: the manifest records these very objects, the model-sharing warning
reads their models, and the jobs ship them to the workers (a job holds its component, never the context, so
what a worker receives is what it received before). The stages (:data:`.engine.STAGES`) take the
:class:`RunContext` and add what they produce to it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from humanize.exceptions import ConfigError
from . import jobs, model_sharing
from .executors import Job
from .run_tables import CLEAN

if TYPE_CHECKING:
    from .attack_spec import AttackSpec
    from .config import DetectorSpec, RunConfig
    from .executors import Executor
    from .run_specs import DefenseSpec
    from .store import ResultsStore

__all__ = ["AttackPlan", "DefensePlan", "DetectorPlan", "QualityPlan", "RunContext", "RunSample", "attack_plans",
           "defense_plans", "detector_plans", "keep_models", "plan_run", "quality_plan", "run_targets"]


@dataclass(frozen=True, eq=False)
class AttackPlan:
    """One attack setting of the run (one θ of a spec): the spec, its label in the tables, the built attack
    and the store key of its outputs (:func:`attack_key`)."""

    spec: AttackSpec
    label: str
    attack: Any
    key: str


@dataclass(frozen=True, eq=False)
class DetectorPlan:
    """One detector of the run: the spec, its label, the detector the job ships (a targeted detector: the run's
    fitted one, :func:`run_targets`), the store key of its scores (:func:`detector_key`) and its job, made once
    so that the job an executor is asked to warm is the very one it then runs."""

    spec: DetectorSpec
    label: str
    detector: Any
    key: str
    job: Job

    @property
    def learnable(self) -> bool:
        """Whether the detector is fit on the run's train split (its key names the split)."""
        return bool(self.detector.learnable)


@dataclass(frozen=True, eq=False)
class DefensePlan:
    """One test-time defense of the run (:mod:`humanize.defenses`): the spec and the built defense."""

    spec: DefenseSpec
    defense: Any

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True, eq=False)
class QualityPlan:
    """The run's quality meter and what its rows' store keys add to an attack's key: the meter's fingerprint (its
    parameters and RESOLVED models: a new default model recomputes) and the normalizer's behind the "as read"
    columns (issue #34)."""

    meter: Any
    suffix: str

    def store_key(self, attack_key: str) -> str:
        """The store key of the quality rows of the attack stored under ``attack_key``."""
        return f"{attack_key}{self.suffix}"


@dataclass(frozen=True, eq=False)
class RunSample:
    """The run's rows by role: every row (what the manifest and the inputs table record, the dataset's attacked
    rows included), the clean train and test rows, the texts the attacks rewrite (the machine test texts; with
    ``attack_human`` the human ones too) and the dataset's own attacked test rows (``attacks = "as-given"``)."""

    rows: pd.DataFrame
    train: pd.DataFrame
    test: pd.DataFrame
    machine: pd.DataFrame
    given: pd.DataFrame

    @classmethod
    def from_rows(cls, rows: pd.DataFrame, attack_human: bool) -> "RunSample":
        is_clean = rows["attack"].fillna(CLEAN) == CLEAN
        clean = rows[is_clean]
        test = clean[clean["split"] == "test"]
        return cls(rows=rows, train=clean[clean["split"] == "train"], test=test,
                   machine=test if attack_human else test[test["label"] == "machine"],
                   given=rows[~is_clean & (rows["split"] == "test")])


def attack_key(attack) -> str:
    """The store key of an attack's outputs: its name (for reading) and its provenance fingerprint
    (qualified class, output version, exact parameters: see :meth:`humanize.params.ParamsMixin.fingerprint`)."""
    return f"{attack.name}/{attack.fingerprint()}"


def detector_key(detector, train: pd.DataFrame | None) -> str:
    """The store key of a detector's scores: name, provenance fingerprint (class, version, exact
    parameters, resolved models, library version) and, for learnable detectors, the training set."""
    key = f"{detector.name}/{detector.fingerprint()}"
    if train is not None:
        digest = hashlib.blake2b(digest_size=12)
        for h, lab in sorted(zip(train["text_hash"], train["label"])):
            digest.update(f"{h}:{lab};".encode())
        key += f"|train={digest.hexdigest()}"
    return key


def run_targets(config: RunConfig, train: pd.DataFrame) -> dict:
    """The run's :class:`~humanize.detectors.Target` of each detector an attack names as
    ``{run_detector = "label"}``: built and (when learnable) fit once, here, on the run's clean
    train texts; the attack queries it and the scoring job ships its fitted detector."""
    refs = config.target_labels()
    if not refs:
        return {}
    from humanize.detectors import Target

    out = {}
    for spec in config.detectors:
        label = spec.base_label()
        if label not in refs:
            continue
        detector = spec.build(config.device)
        if detector.learnable:
            if train.empty or train["label"].nunique() < 2:
                raise ConfigError(f"detector {label!r} must be fit for the attacks that target it, but the train "
                                  "split lacks human or machine rows")
            target = Target(detector, train=(train["generation"].tolist(), train["label"].tolist()))
            target.fitted_detector()  # fit once, in this process
        else:
            target = Target(detector)
        out[label] = target
    return out


def attack_plans(config: RunConfig, targets: dict | None = None) -> tuple[AttackPlan, ...]:
    """An :class:`AttackPlan` per attack and θ, in the configuration's order."""
    plans = []
    for spec in config.attacks:
        for label, params in spec.expand():
            attack = spec.build(config.seed, params, config.train_fraction, targets=targets)
            plans.append(AttackPlan(spec, label, attack, attack_key(attack)))
    return tuple(plans)


def detector_plans(config: RunConfig, train: pd.DataFrame, targets: dict | None = None) -> tuple[DetectorPlan, ...]:
    """A :class:`DetectorPlan` per configured detector, in the configuration's order."""
    plans = []
    for spec in config.detectors:
        label = spec.base_label()
        target = (targets or {}).get(label)
        detector = spec.build(config.device) if target is None else target.fitted_detector()
        fit_on = train if detector.learnable else None  # the store key: fit on the run's train split
        kind = "model" if getattr(detector, "needs_model", True) else "task"
        # a targeted detector is shipped fitted (the very model the attacks queried), not refit
        job = jobs.detector_job(label, detector, fit_on if target is None else None,
                                config.job_resources(label, kind))
        plans.append(DetectorPlan(spec, label, detector, detector_key(detector, fit_on), job))
    return tuple(plans)


def defense_plans(config: RunConfig) -> tuple[DefensePlan, ...]:
    """A :class:`DefensePlan` per configured defense (a defense loads nothing: building it is cheap)."""
    return tuple(DefensePlan(spec, spec.build_component()) for spec in config.defenses)


def quality_plan(meter) -> QualityPlan | None:
    """The :class:`QualityPlan` of the run's quality meter (None: no quality table)."""
    if meter is None:
        return None
    return QualityPlan(meter, "|read=" + jobs.read_fingerprint() + "|quality=" + meter.fingerprint())


def keep_models(attacks: tuple, others: list) -> list[frozenset]:
    """Per attack plan: the keys (:func:`humanize.models.identity.weights_key`) of the models the run's other
    components name (the other attacks, and ``others``: the detectors, targets and quality meter), which
    the local executor keeps loaded when the attack's job ends; the attack's own other models are released."""
    named = [{key for _, key, _ in model_sharing._safe_models(c)} for c in others]
    common = frozenset().union(*named)
    own = [{key for _, key, _ in model_sharing._safe_models(plan.attack)} for plan in attacks]
    return [frozenset(common.union(*(o for j, o in enumerate(own) if j != i))) for i in range(len(attacks))]


@dataclass
class RunContext:
    """One run, as its stages see it. :func:`plan_run` makes it and its plans; each stage of
    :data:`.engine.STAGES` reads what the earlier ones left here and adds its own (the fields below the plans)."""

    config: RunConfig
    run_id: str
    store: ResultsStore
    executor: Executor
    sample: RunSample
    targets: dict  # detector label -> the run's Target of it (run_targets)
    attacks: tuple[AttackPlan, ...]
    detectors: tuple[DetectorPlan, ...]
    defenses: tuple[DefensePlan, ...]
    quality: QualityPlan | None
    progress: bool = True
    #: when an attack's job ends, the local executor releases the models no other component of the run names
    release_models: bool = False
    #: how much was computed (not taken from the cache) in this call
    work: dict = field(default_factory=lambda: {"attacked": 0, "scored": 0, "quality": 0, "fitted": 0})
    failures: list = field(default_factory=list)
    #: what a reader of the tables must know (the run's warnings, in the order they were given)
    notes: list = field(default_factory=list)
    # -- what the stages add -----------------------------------------------------------------------
    manifest: dict = field(default_factory=dict)
    shared: list = field(default_factory=list)  # the attack models a scorer shares (model_sharing.SharedModel)
    outputs: dict = field(default_factory=dict)  # attack label -> its outputs (every text it rewrote)
    texts: dict = field(default_factory=dict)  # text hash -> text: every undefended text the detectors score
    defended: dict = field(default_factory=dict)  # defense -> {text hash: defended text}
    defended_hashes: dict = field(default_factory=dict)  # defense -> {text hash: defended text's hash}
    scores: dict = field(default_factory=dict)  # detector label -> {text hash: score}
    detector_cost: list = field(default_factory=list)  # a detector_cost row per detector
    scored_rows: Any = None  # every scored text with its id, label, domain and attack (the score table's rows)
    machine_outputs: dict = field(default_factory=dict)  # attack label -> its outputs on the machine texts
    tables: dict = field(default_factory=dict)

    @property
    def meter(self):
        """The run's quality meter, or None."""
        return None if self.quality is None else self.quality.meter

    def components(self) -> tuple[dict, dict, Any]:
        """The attacks (the first θ of each spec, under the spec's label: a sweep varies the rate, never a
        model), the detectors by label and the quality meter, as :func:`.model_sharing.shared_models` reads them."""
        attacks, seen = {}, set()
        for plan in self.attacks:
            if id(plan.spec) not in seen:
                seen.add(id(plan.spec))
                attacks[plan.spec.base_label()] = plan.attack
        return attacks, {plan.label: plan.detector for plan in self.detectors}, self.meter

    def keep_models(self) -> list[frozenset] | None:
        """Per attack plan, the models to keep loaded when its job ends (:func:`keep_models`); None without
        ``release_models`` (every model stays)."""
        if not self.release_models:
            return None
        others = [p.detector for p in self.detectors] + list(self.targets.values())
        return keep_models(self.attacks, others + ([self.meter] if self.meter is not None else []))


def plan_run(config: RunConfig, run_id: str, rows: pd.DataFrame, store: ResultsStore, executor: Executor, *,
             meter=None, progress: bool = True, release_models: bool = False) -> RunContext:
    """The context of a run of the validated ``config`` on ``rows`` (:func:`.engine.sample_rows`): the targets fit
    and every plan built. ``meter``: the run's quality meter
    (:meth:`~humanize.benchmarks.runner.config.RunConfig.validate_for_run` built it), None without quality."""
    sample = RunSample.from_rows(rows, config.attack_human)
    targets = run_targets(config, sample.train)
    return RunContext(config=config, run_id=run_id, store=store, executor=executor, sample=sample, targets=targets,
                      attacks=attack_plans(config, targets), detectors=detector_plans(config, sample.train, targets),
                      defenses=defense_plans(config), quality=quality_plan(meter), progress=progress,
                      release_models=release_models)
