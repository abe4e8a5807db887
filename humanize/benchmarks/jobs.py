"""The runner's units of work as picklable :class:`~humanize.benchmarks.executors.Job` parts.

Each stage's worker state is built by a module-level factory (bound with
:func:`functools.partial`) and applied to a batch by a module-level function, so a remote
executor can ship them and build the state where the work runs, once per worker:

- attacks: the attack built from its spec, θ, the run's seed and train fraction; each document
  attacked under :class:`humanize.cost.CostMeter` (TH-Bench §4.3), one store row per document;
- detectors: the detector built from its spec and, when learnable, FIT on the run's clean train
  texts (deterministic: every worker fits the same model); a batch is scored in one call;
- quality: the :class:`humanize.quality.QualityMeter`; a batch of (original, attacked) pairs;
- defenses: a test-time defense (:mod:`humanize.defenses`) applied to each text.
"""

from __future__ import annotations

import math
from functools import partial

from humanize.attacks.registry import RULE_BASED

from .executors import Job

#: Attacks that load no model (the registry's rule-based attacks and the format counterfactuals):
#: cheap stateless work, run as plain tasks; every other attack is "model" work (actor pools).
NO_MODEL_ATTACKS = frozenset(RULE_BASED) | {"strip_format", "impose_format"}


# -- attacks ---------------------------------------------------------------------------------------
def attack_kind(spec) -> str:
    """``"task"`` when the attack (every step of a pipeline, every part of a blend) loads no model."""
    from .attack_spec import attack_spec

    if spec.name == "pipeline":
        return "task" if all(attack_kind(s) == "task" for s in spec.steps()) else "model"
    if spec.name == "blend":
        parts = spec.params.get("attacks")
        if not isinstance(parts, (list, tuple)) or not parts:
            return "model"
        specs = [attack_spec(a) if isinstance(a, (str, dict)) else a for a in parts]
        return "task" if all(hasattr(s, "steps") and attack_kind(s) == "task" for s in specs) else "model"
    return "task" if spec.name in NO_MODEL_ATTACKS else "model"


def build_attack(spec, params: dict, seed: int, train_fraction: float):
    """The attack of one θ of ``spec`` (see :meth:`AttackSpec.build`)."""
    return spec.build(seed, params, train_fraction)


def _count(value):
    """A counter of the cost meter as stored: an int, or None when it was not counted (NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return int(value) if float(value).is_integer() else float(value)


def attack_texts(attack, texts: list[str]) -> list[dict]:
    """Attack each text under a fresh :class:`~humanize.cost.CostMeter`: the store row of each
    output (text, exact edits as the store's JSON text and their number, info, time, memory,
    tokens, queries, machine). The edits are encoded here, where the work runs: a remote
    worker then sends one string per document, not thousands of small lists to unpickle."""
    from humanize.cost import CostMeter
    from humanize.cost.machine import machine_description

    from .store import encode_edits

    meter = CostMeter()
    rows = []
    for text in texts:
        with meter.measure(attack=attack.name) as m:
            result = attack.apply(text)
            info = dict(result.info)
            m.add(queries=info.get("queries"), llm_tokens=info.get("lm_tokens"))
        m.count_input(text)  # counted outside the timed block; the record takes them
        m.count_output(result.text)
        rec = m.record
        rows.append(dict(
            output=result.text, edits=encode_edits([list(e) for e in result.edits]), n_edits=len(result.edits),
            info=info,
            wall_s=rec.get("wall_s"), cpu_s=rec.get("cpu_s"), peak_rss_mb=rec.get("peak_rss_mb"),
            peak_gpu_mb=rec.get("gpu_peak_mb"), tokens_in=_count(rec.get("tokens_in")),
            tokens_out=_count(rec.get("tokens_out")), queries=_count(rec.get("queries")),
            machine=machine_description(),
        ))
    return rows


def attack_store_rows(store_key: str, attack, texts: list[str]) -> list[dict]:
    """:func:`attack_texts`, each row also ``encoded`` as the store inserts it under ``store_key``
    (:func:`~humanize.benchmarks.store.encode_attack_row`): the checksums and the encoding are
    computed where the attack runs, and the driver only inserts."""
    from .store import encode_attack_row, text_hash

    rows = attack_texts(attack, texts)
    for text, row in zip(texts, rows):
        row["encoded"] = encode_attack_row(store_key, text_hash(text), row)
    return rows


def attack_job(label: str, spec, params: dict, seed: int, train_fraction: float, resources: dict,
               store_key: str | None = None) -> Job:
    """``store_key``: the key the outputs are stored under; given, the rows come back encoded for
    the store (:func:`attack_store_rows`)."""
    apply = attack_texts if store_key is None else partial(attack_store_rows, store_key)
    return Job(f"attack {label}", partial(build_attack, spec, params, seed, train_fraction), apply,
               kind=attack_kind(spec), resources=dict(resources))


# -- detectors -------------------------------------------------------------------------------------
def make_detector(name: str, params: dict, device: str | None):
    """The configured detector (nothing loaded yet); the run's device unless its params set one."""
    from humanize import detectors

    detector = detectors.get(name, **params)
    if device is not None and "device" in detector.get_params() and "device" not in params:
        detector.device = device
    return detector


def build_detector(name: str, params: dict, device: str | None, train_texts: list | None,
                   train_labels: list | None):
    """The detector, fit on the clean train texts when it is learnable."""
    detector = make_detector(name, params, device)
    if train_texts is not None:
        detector.fit(list(train_texts), list(train_labels))
    return detector


def score_texts(detector, texts: list[str]) -> list[float]:
    import numpy as np

    return np.asarray(detector.score(list(texts)), dtype=float).tolist()


def detector_job(name: str, params: dict, device: str | None, train, resources: dict) -> Job:
    """``train``: the clean train rows to fit on (None for a detector that is not learnable)."""
    texts = None if train is None else train["generation"].tolist()
    labels = None if train is None else train["label"].tolist()
    return Job(f"score {name}", partial(build_detector, name, params, device, texts, labels), score_texts,
               kind="model", resources=dict(resources))


# -- quality ---------------------------------------------------------------------------------------
def quality_kwargs(config) -> dict:
    kwargs = {"device": config.device, **config.quality_params}
    if config.quality_lm:
        kwargs["lm"] = config.quality_lm
    if config.quality_encoder:
        kwargs["encoder"] = config.quality_encoder
    return kwargs


def build_quality_meter(kwargs: dict):
    from humanize.quality import QualityMeter

    return QualityMeter(**kwargs)


def quality_pairs(meter, pairs: list[tuple[str, str]]) -> list[dict]:
    """One quality record per (original, attacked) pair."""
    table = meter.score([o for o, _ in pairs], [t for _, t in pairs])
    return table.to_dict(orient="records")


def quality_job(kwargs: dict, resources: dict) -> Job:
    return Job("quality", partial(build_quality_meter, dict(kwargs)), quality_pairs, kind="model",
               resources=dict(resources))


# -- defenses --------------------------------------------------------------------------------------
def build_defense(name: str, params: dict):
    from humanize.defenses import get as get_defense

    return get_defense(name, **params)


def defend_texts(defense, texts: list[str]) -> list[str]:
    return [defense(t) for t in texts]


def defense_job(name: str, params: dict, resources: dict) -> Job:
    return Job(f"defense {name}", partial(build_defense, name, dict(params)), defend_texts, kind="task",
               resources=dict(resources))
