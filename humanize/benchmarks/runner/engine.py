"""The benchmark runner: attack, score, measure, evaluate; resumable and cached by content.

One call, :func:`run`, does what ``humanize-bench run`` does:

1. load the dataset rows and sample ``n`` machine and ``n`` human texts (seeded);
   split source documents into a train part (to fit learnable detectors on clean
   texts) and a test part (everything is evaluated on the test part);
2. attack every test machine text with every configured attack (each θ of a
   sweep), measuring time and memory per document with :class:`humanize.cost.CostMeter`;
3. apply each configured test-time defense (:mod:`humanize.defenses`, e.g. ``normalize``)
   to every text to score: learnable detectors stay fit on the undefended train texts;
4. score clean human, clean machine and attacked texts (and their defended versions) with
   every detector, each warmed up outside its timed batches (its scoring seconds per text: the
   ``detector_cost`` table);
5. measure quality (perplexity, cosine, ROUGE-L, Flesch, edit rates) per attack;
6. apply the protocols (:func:`humanize.benchmarks.evaluation.evaluate`), per defense, and
   store the tables.

Every stage is the same mechanism (:func:`.stages.run_stages`): the work the store lacks is cut
into batches, carried out by an executor (``local`` or ``ray``: :mod:`.executors`; the
units of work are in :mod:`.jobs`; all the attacks of a run go to it at once) and written to
the SQLite store batch by batch as they arrive (commits grouped about once a second), keyed by
content, so a run killed at any point resumes where it stopped, and a second run of the same
configuration does no model work at all. A document whose work raises is reported in
``RunResult.failures`` (and the ``failures`` table) and left out; the rest completes.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
import warnings
from dataclasses import dataclass, field, replace
from functools import partial

import pandas as pd

from humanize._split import group_split, sampling_seed
from humanize.exceptions import ConfigError
from humanize.text import text_hash
from . import jobs, model_sharing
from .manifest import build_manifest, input_pairs
from .attack_spec import guide_label
from .config import RunConfig
from ..data import load_dataset
from .executors import Failure, get_executor
from .run_tables import (CLEAN, COST_COLUMNS, INFO_COUNTS, RAID_KEYS, cost_rows, evaluate_defenses, failure_rows,
                         mixed_machines, raid_slice_table, score_rows, timing_label, unchanged_reason)
from .stages import StageWork, batch_keys, missing_batches, run_stage, run_stages
from .store import ResultsStore, computed_attack_record

__all__ = ["CLEAN", "COST_COLUMNS", "DETECTOR_COST_COLUMNS", "INFO_COUNTS", "RunResult", "run", "sample_rows"]

#: The columns of the run's ``detector_cost`` table (:func:`detector_cost_row`).
DETECTOR_COST_COLUMNS = ("detector", "texts_scored", "texts_cached", "texts_timed", "wall_s", "cpu_s", "s_per_text",
                         "s_per_text_shared", "shared_with", "cpu_s_per_text",
                         "warmup_s")


@dataclass
class RunResult:
    run_id: str
    tables: dict[str, pd.DataFrame]
    store: str
    work: dict  # how much was computed (not taken from the cache) in this call
    #: stored rows that failed their integrity check (table, key, hash, reason); recomputed, never used
    corrupt: list = field(default_factory=list)
    #: what a reader of the tables must know (e.g. cost rows measured on several machines)
    warnings: list = field(default_factory=list)
    #: documents whose work failed (:class:`~humanize.benchmarks.runner.executors.Failure`); left out of the
    #: tables (also the run's ``failures`` table), not stored, so a rerun retries them
    failures: list = field(default_factory=list)
    #: what ran (:mod:`.manifest`): components, fingerprints, sample, seeds, versions, machine
    manifest: dict = field(default_factory=dict)
    #: this call's seconds per stage (``attacks``, ``defenses``, ``scoring``, ``evaluation``, ``quality``), each
    #: ``{"wall_s", "cpu_s"}`` (``cpu_s``: this process's CPU seconds, every thread; an executor's worker processes
    #: are not in it), warm-ups included; measured, not stored: a cached rerun shows its own (small) figures
    stage_seconds: dict = field(default_factory=dict)

    @property
    def metrics(self) -> pd.DataFrame:
        return self.tables["metrics"]


def sample_rows(config: RunConfig) -> pd.DataFrame:
    """The clean human and machine rows of the run, with a ``split`` column (train/test); with
    ``config.given_attacks``, also the dataset's attacked rows of the sampled documents (their
    ``adv_source_id`` names a sampled clean row, RAID's link), each in its source's split."""
    try:
        df = load_dataset(config.dataset, **config.filters)
    except (TypeError, ValueError) as err:  # a filter the loader rejects: a config problem
        raise ConfigError(f"dataset {config.dataset!r} with filters {config.filters}: {err}") from None
    df = df[df["generation"].map(lambda t: isinstance(t, str))]
    given = df[~df["attack"].fillna(CLEAN).isin([CLEAN])].copy()
    df = df[df["attack"].fillna(CLEAN).isin([CLEAN])].copy()
    parts = []
    for label in ("machine", "human"):
        part = df[df["label"] == label]
        if config.n is not None and len(part) > config.n:
            part = part.sample(n=config.n, random_state=sampling_seed(config.seed))
        parts.append(part)
    rows = pd.concat(parts).sort_values(["label", "id"]).reset_index(drop=True)
    if rows.empty:
        raise ConfigError(f"dataset {config.dataset!r} with filters {config.filters} has no clean rows")
    own = "split" in rows.columns and not rows["split"].isna().all()
    split = group_split(rows["source_id"], rows["generation"], config.seed, config.train_fraction,
                        given=rows["split"].tolist() if own else None)  # no text on both sides
    rows["split"] = split.parts
    if config.given_attacks:
        rows = pd.concat([rows, _given_rows(config, given, rows)], ignore_index=True)
    rows["text_hash"] = rows["generation"].map(text_hash)
    rows.attrs["split_note"] = split.note()  # _run says it among the run's warnings
    return rows


def _given_rows(config: RunConfig, given: pd.DataFrame, clean: pd.DataFrame) -> pd.DataFrame:
    """The dataset's attacked rows whose ``adv_source_id`` is a sampled clean row, in its split."""
    if "adv_source_id" not in given.columns or given.empty:
        raise ConfigError(f'attacks = "as-given": dataset {config.dataset!r} has no attacked rows linked to their '
                          "clean rows (RAID's adv_source_id column); load a split with its attacks")
    split_of = dict(zip(clean["id"], clean["split"]))
    given = given[given["adv_source_id"].isin(split_of)].copy()
    if given.empty:
        raise ConfigError(f'attacks = "as-given": no attacked row of dataset {config.dataset!r} comes from the '
                          "sampled clean rows (their adv_source_id)")
    given["split"] = given["adv_source_id"].map(split_of)
    return given.sort_values(["label", "attack", "id"])


def _attack_key(attack) -> str:
    """The store key of an attack's outputs: its name (for reading) and its provenance fingerprint
    (qualified class, output version, exact parameters: see :meth:`humanize._params.ParamsMixin.fingerprint`)."""
    return f"{attack.name}/{attack.fingerprint()}"


def _put_attack_outputs(store: ResultsStore, key: str, done: list) -> None:
    store.put_attack_outputs(key, [{**row, "input_hash": h} for h, row in done])


def _run_targets(config: RunConfig, train: pd.DataFrame) -> dict:
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


def _attack_plan(config: RunConfig, targets: dict | None = None) -> list[tuple]:
    """Per attack and θ: (spec, label, the built attack, its store key). Built once per run: the
    manifest records these objects, and the jobs ship these very objects to the workers."""
    plan = []
    for spec in config.attacks:
        for label, params in spec.expand():
            attack = spec.build(config.seed, params, config.train_fraction, targets=targets)
            plan.append((spec, label, attack, _attack_key(attack)))
    return plan


def _keep_models(plan: list, others: list) -> list[frozenset]:
    """Per attack of ``plan``: the keys (:func:`humanize.models.identity.weights_key`) of the models the run's other
    components name (the other attacks, and ``others``: the detectors, targets and quality meter), which
    the local executor keeps loaded when the attack's job ends; the attack's own other models are released."""
    named = [{key for _, key, _ in model_sharing._safe_models(c)} for c in others]
    common = frozenset().union(*named)
    own = [{key for _, key, _ in model_sharing._safe_models(attack)} for _, _, attack, _ in plan]
    return [frozenset(common.union(*(o for j, o in enumerate(own) if j != i))) for i in range(len(plan))]


def _run_attacks(config: RunConfig, store: ResultsStore, executor, machine: pd.DataFrame, plan: list,
                 progress: bool, work: dict, failures: list, keep: list | None = None):
    """Attack outputs per attack label: DataFrame (id, input_hash, text, text_hash, costs...); a
    document whose attack failed is left out (and reported in ``failures``). ``keep``: per attack of
    ``plan``, the models to keep loaded when its job ends (:func:`_keep_models`; None: every model stays)."""
    outputs = {}
    texts = dict(zip(machine["text_hash"], machine["generation"]))
    work_items = []
    for i, (spec, label, attack, key) in enumerate(plan):
        have = store.attack_outputs(key, list(texts))
        job = jobs.attack_job(label, attack, config.job_resources(label, jobs.attack_kind(attack)), store_key=key,
                              keep_models=None if keep is None else keep[i])
        work_items.append(StageWork(job, missing_batches(texts, have, config.batch_size),
                                    put=partial(_put_attack_outputs, store, key), results=have))
    # every attack and θ at once: an executor with workers keeps them busy across the jobs
    stages = run_stages(executor, work_items, progress=progress, name="attacks")
    for (spec, label, attack, key), stage in zip(plan, stages):
        # the warm-up seconds a computed batch paid (jobs.warm_up), stored beside the output (issue #34): a cached
        # rerun reports what the run that computed it paid
        warmups = {h: stage.results[h].get("warmup_s") for h in stage.computed}
        paid = [(h, {"warmup_s": w}) for h, w in warmups.items() if w is not None]
        if paid:
            store.put_item_costs(key, paid)
        cached = [h for h in stage.results if h not in warmups]
        if cached:
            warmups.update({h: c["warmup_s"] for h, c in store.item_costs(key, cached).items()})
        for h in stage.computed:  # the shape a cached row has (store.attack_record), whichever way it came
            stage.results[h] = computed_attack_record(key, h, stage.results[h])
        work["attacked"] += len(stage.computed)
        failures.extend(stage.failures)
        outputs[label] = _attack_frame(machine, spec, label, attack, key, stage)
        outputs[label]["warmup_s"] = outputs[label]["input_hash"].map(warmups).astype(float)
    return outputs


def _attack_frame(machine: pd.DataFrame, spec, label: str, attack, key: str, stage) -> pd.DataFrame:
    """One attack's outputs (cached and computed) as rows of the run's tables."""
    have, measured = stage.results, set(stage.computed)
    done = machine[machine["text_hash"].isin(have)]
    hashes = done["text_hash"].tolist()
    rows = [have[h] for h in hashes]
    infos = [r.get("info") or {} for r in rows]
    texts = [r["output"] for r in rows]
    columns = {"id": done["id"].to_numpy(), "domain": done["domain"].to_numpy(), "input_hash": hashes,
               "original": done["generation"].to_numpy(), "text": texts, "text_hash": [text_hash(t) for t in texts]}
    columns.update({col: [r.get(col) for r in rows] for col in COST_COLUMNS})
    columns["cost_source"] = ["measured" if h in measured else "cached" for h in hashes]
    # how wall_s and cpu_s were timed: the document alone, or its share of a batch timed as one call (jobs.attack_texts)
    columns["batch_docs"] = [int(i.get(jobs.TIMED_BATCH) or 1) for i in infos]
    columns["timing"] = [timing_label(b) for b in columns["batch_docs"]]
    columns["machine"] = [r.get("machine") for r in rows]
    columns["n_edits"] = [r["n_edits"] for r in rows]
    # texts a detector-guided attack sent to its target/surrogate (RAFT, HMGC), 0 for the others
    columns["detector_queries"] = [int(i.get("detector_queries", 0) or 0) for i in infos]
    # prompt / completion tokens and calls of the generator a rewriting attack used, and the candidate texts a
    # guided paraphrase sent to its guide (0 for the others)
    for col in INFO_COUNTS[1:]:
        columns[col] = [int(i.get(col, 0) or 0) for i in infos]
    # why a document came back unchanged (the attack's info["unchanged"]; None when it changed)
    columns["unchanged"] = [unchanged_reason(i, o, t) for i, o, t in zip(infos, columns["original"], texts)]
    frame = pd.DataFrame(columns, index=done.index)
    frame["attack"] = label
    frame["attack_name"] = spec.name
    frame["rate"] = getattr(attack, "rate", math.nan)
    frame["attack_key"] = key
    return frame


def _detector_key(detector, train: pd.DataFrame | None) -> str:
    """The store key of a detector's scores: name, provenance fingerprint (class, version, exact
    parameters, resolved models, library version) and, for learnable detectors, the training set."""
    key = f"{detector.name}/{detector.fingerprint()}"
    if train is not None:
        digest = hashlib.blake2b(digest_size=12)
        for h, lab in sorted(zip(train["text_hash"], train["label"])):
            digest.update(f"{h}:{lab};".encode())
        key += f"|train={digest.hexdigest()}"
    return key


def _put_scores(store: ResultsStore, key: str, done: list) -> None:
    store.put_scores(key, [(h, _score(r)) for h, r in done])
    store.put_item_costs(key, [(h, r) for h, r in done if isinstance(r, dict)])


def _score(result) -> float:
    """A score as the store has it: a computed result is :func:`.jobs.score_texts`'s record, a cached one the float."""
    return result["score"] if isinstance(result, dict) else result


def _detector_plan(config: RunConfig, train: pd.DataFrame, targets: dict | None = None) -> list[tuple]:
    """Per configured detector: (spec, train rows to fit on or None, store key, job, detector). Made
    once per run, so the job an executor is asked to warm is the very one it then runs, and the
    detector object the manifest records is the one the job ships."""
    plan = []
    for spec in config.detectors:
        label = spec.base_label()
        target = (targets or {}).get(label)
        detector = spec.build(config.device) if target is None \
            else target.fitted_detector()
        fit_on = train if detector.learnable else None  # the store key: fit on the run's train split
        kind = "model" if getattr(detector, "needs_model", True) else "task"
        # a targeted detector is shipped fitted (the very model the attacks queried), not refit
        job = jobs.detector_job(label, detector, fit_on if target is None else None,
                                config.job_resources(label, kind))
        plan.append((spec, fit_on, _detector_key(detector, fit_on), job, detector))
    return plan


def _score_all(config: RunConfig, store: ResultsStore, executor, groups: list[dict[str, str]], train: pd.DataFrame,
               plan: list[tuple], progress: bool, work: dict, failures: list,
               timing: list | None = None) -> dict[str, dict[str, float]]:
    """Scores by detector, by text hash. ``groups``: the texts to score (hash -> text), the
    undefended ones first, then each defense's; each group is batched on its own, so the
    undefended texts are scored in the same batches whether or not the run has defenses.
    ``timing``: gets one :func:`detector_cost_row` per detector."""
    scores = {}
    every = list(dict.fromkeys(h for group in groups for h in group))
    for spec, fit_on, key, job, _ in plan:
        have = store.scores(key, every)
        batches, seen = [], set(have)
        for group in groups:
            todo = [h for h in group if h not in seen]
            seen.update(todo)
            todo.sort(key=lambda h: len(group[h]))  # length-sorted batches keep padding low for model detectors
            batches += [[(h, group[h]) for h in b] for b in batch_keys(todo, max(config.batch_size, 1) * 4)]
        if batches and fit_on is not None:
            if train.empty or train["label"].nunique() < 2:
                raise ValueError(f"detector {spec.base_label()!r} must be fit, but the train split lacks human or "
                                 "machine rows")
            work["fitted"] += 1
        stage = run_stage(executor, job, batches, put=partial(_put_scores, store, key), results=have,
                          progress=progress)
        work["scored"] += len(stage.computed)
        failures.extend(stage.failures)
        if stage.failures and not stage.results:
            raise _nothing_scored(spec.base_label(), stage.failures)
        scores[spec.base_label()] = {h: _score(r) for h, r in stage.results.items()}
        got = list(scores[spec.base_label()].values())
        if got and all(v != v for v in got):  # every score NaN: nothing to evaluate, said as such
            from humanize.exceptions import RunError

            raise RunError(f"detector {spec.base_label()!r} scored every one of its {len(got)} texts NaN; nothing "
                           "was evaluated: fix the detector and rerun")
        if timing is not None:  # every text's cost as measured when it was scored, this run or an earlier one
            stored = store.item_costs(key, [h for h in every if h in have])
            costs = [stage.results[h] if isinstance(stage.results[h], dict) else stored.get(h)
                     for h in every if h in stage.results]
            timing.append(detector_cost_row(spec.base_label(), costs, len(stage.computed),
                                            len(stage.results) - len(stage.computed)))
    if timing is not None:
        _attribute_shared_passes(timing, {spec.base_label(): det for spec, *_, det in plan})
    return scores


def _nothing_scored(label: str, stage_failures: list):
    """The one-line error of a detector that failed on every text it was given (an endpoint that
    always answers 500, a function that raises or returns no finite score): nothing is left to
    evaluate, so the run stops here and says why, with the vendor's or the function's own message.
    The failures table rides on the exception (``.failures``)."""
    from humanize.exceptions import RunError
    from humanize._secrets import scrub_secrets

    first = stage_failures[0]
    err = RunError(f"detector {label!r} failed on every text it was given ({len(stage_failures)} failure(s) in the "
                   f"failures table; first: {scrub_secrets(' '.join(str(first.error).split()))}); nothing was "
                   "evaluated: fix the detector and rerun (what was computed is stored)")
    err.failures = failure_rows([replace(f, error=scrub_secrets(f.error)) for f in stage_failures], {})
    return err


def detector_cost_row(label: str, costs: list, scored: int, cached: int) -> dict:
    """A detector's row of the run's ``detector_cost`` table: ``costs``, one per text of the run in a fixed order,
    each what that text's score cost when it was computed (this run or an earlier one: the store keeps it; None
    where a score was stored before costs were); ``scored`` of them computed now and ``cached`` read back. Its
    scoring seconds (wall, CPU) over the texts whose cost is known, in all and per text, and its warm-up seconds
    (outside those): the same figures on a rerun from the store as on the cold run (issue #34)."""
    known = [c for c in costs if c is not None and c.get("wall_s") is not None]
    wall = math.fsum(c["wall_s"] for c in known)
    cpu = math.fsum(c["cpu_s"] for c in known if c.get("cpu_s") is not None)
    warm = [c["warmup_s"] for c in known if c.get("warmup_s") is not None]
    n = len(known)
    return {"detector": label, "texts_scored": int(scored), "texts_cached": int(cached), "texts_timed": n,
            "wall_s": wall if n else math.nan, "cpu_s": cpu if n else math.nan, "s_per_text": wall / n if n else math.nan,
            "cpu_s_per_text": cpu / n if n else math.nan, "warmup_s": math.fsum(warm) if warm else math.nan,
            "shared_with": "", "s_per_text_shared": wall / n if n else math.nan}


def _pass_key(detector) -> tuple | None:
    """What a detector's forward pass is keyed on when detectors share it (the per-process LM statistics cache,
    :mod:`humanize.detectors.lm_stats`): its scoring (and reference) models and ``max_tokens``; None for a
    detector that runs no shared pass."""
    from humanize.detectors.metric import CausalLMMetricDetector

    from .model_sharing import component_models

    if not isinstance(detector, CausalLMMetricDetector):
        return None
    try:
        models = tuple(sorted(key for _, key, _ in component_models(detector)))
    except TypeError:  # a model that cannot be identified: no sharing claimed
        return None
    return (*models, getattr(detector, "max_tokens", None))


def _attribute_shared_passes(rows: list[dict], detectors: dict) -> None:
    """Detectors that share one forward pass per text: the first to score a text pays it, the others read it from
    the cache and show next to nothing. Each row names the others (``shared_with``), and ``s_per_text_shared`` is
    the group's seconds per text divided among its detectors (an equal share of the pass, plus their own work)."""
    groups: dict = {}
    for row in rows:
        key = _pass_key(detectors.get(row["detector"]))
        if key is not None:
            groups.setdefault(key, []).append(row)
    for members in groups.values():
        if len(members) < 2:
            continue
        total = math.fsum(r["s_per_text"] for r in members if r["s_per_text"] == r["s_per_text"])
        for row in members:
            row["shared_with"] = ", ".join(r["detector"] for r in members if r is not row)
            row["s_per_text_shared"] = total / len(members)


def _quality_meter(config: RunConfig):
    """The run's QualityMeter (models load on its first score, so building it is cheap)."""
    return jobs.build_quality_meter(jobs.quality_kwargs(config))


def _quality(config: RunConfig, store: ResultsStore, executor, outputs: dict[str, pd.DataFrame], progress: bool,
             work: dict, failures: list, meter) -> pd.DataFrame:
    """Quality rows per (attack, document), by ``meter`` (the run's, built once). Pending pairs are scored a few
    source documents at a time with every attack together, so each original's perplexity is computed once, not
    per attack."""
    # keyed on the meter's fingerprint: its parameters and the RESOLVED models (a new default model recomputes)
    # ... and the normalizer behind the "as read" columns (issue #34)
    suffix = "|read=" + jobs.read_fingerprint() + "|quality=" + meter.fingerprint()
    keys = {label: f"{frame['attack_key'].iloc[0]}{suffix}" for label, frame in outputs.items() if len(frame)}
    have = {label: store.quality(keys[label], frame["input_hash"].tolist()) if len(frame) else {}
            for label, frame in outputs.items()}
    by_doc: dict[str, list] = {}  # pending ((label, input hash), (original, attacked)) per source document
    for label, frame in outputs.items():
        for h, o, t in zip(frame["input_hash"], frame["original"], frame["text"]):
            if h not in have[label]:
                by_doc.setdefault(h, []).append(((label, h), (o, t)))
    batches = [[item for h in group for item in by_doc[h]]
               for group in batch_keys(sorted(by_doc), max(1, config.batch_size // 2))]

    def put(done: list) -> None:
        per_label: dict[str, list] = {}
        for (label, h), record in done:
            per_label.setdefault(label, []).append((h, record))
        store.put_quality_many({keys[label]: rows for label, rows in per_label.items()})

    job = jobs.quality_job(meter, config.job_resources("quality", "model"))
    stage = run_stage(executor, job, batches, put=put, progress=progress)
    for (label, h), record in stage.results.items():
        have[label][h] = record
    work["quality"] += len(stage.computed)
    failures.extend(Failure(f"quality {f.key[0]}", f.key[1], f.error, f.attempts) for f in stage.failures)
    frames = []
    for label, frame in outputs.items():
        frame = frame[frame["input_hash"].isin(have[label])]
        q = pd.DataFrame([have[label][h] for h in frame["input_hash"]])
        q.insert(0, "attack", label)
        q.insert(1, "id", frame["id"].to_numpy())
        q["rate"] = frame["rate"].to_numpy()
        frames.append(q)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _defend(config: RunConfig, executor, texts: dict[str, str], progress: bool, failures: list) -> dict[str, dict]:
    """Each defense's output for every scored text: {defense: {text hash: defended text}}. A
    defense is cheap and deterministic, so its outputs are recomputed, not stored; their scores are."""
    work = [StageWork(jobs.defense_job(spec.name, spec.params, config.job_resources("defense", "task")),
                      missing_batches(texts, (), max(config.batch_size, 1) * 4)) for spec in config.defenses]
    stages = run_stages(executor, work, progress=progress, name="defenses")
    for stage in stages:
        failures.extend(stage.failures)
    return {spec.name: stage.results for spec, stage in zip(config.defenses, stages)}


def run(config: RunConfig, *, progress: bool = True, executor=None, release_models: bool = False) -> RunResult:
    """Run a benchmark configuration; see the module docstring for the steps.

    ``executor``: an :class:`~humanize.benchmarks.runner.executors.Executor` to carry out the work
    (default: the configuration's, built with :func:`~humanize.benchmarks.runner.executors.get_executor`
    and closed at the end). ``release_models``: when an attack's job ends, the local executor releases
    the models it loaded that no other attack, detector or meter of the run names (issue #24: the demo's
    Gemma and Qwen are not held through the detector stage; the CLI sets it). Off by default: a process
    that runs again (a test session, a notebook) keeps each model loaded once.
    """
    config.validate()
    run_id = hashlib.blake2b(config.key().encode(), digest_size=8).hexdigest()
    rows = sample_rows(config)  # a filter the loader rejects fails here, before the store is touched
    test = rows[rows["split"] == "test"]
    if (test["label"] == "machine").sum() == 0 or (test["label"] == "human").sum() == 0:
        raise ConfigError("the test split needs both human and machine texts; raise n or change train_fraction")
    if executor is not None and not callable(getattr(executor, "map", None)):
        raise TypeError(f"executor must be an Executor (humanize.benchmarks.runner.executors), "
                        f"got {type(executor).__name__}")
    own = executor is None
    if own:
        executor = get_executor(config.executor, address=config.ray_address, max_retries=config.max_retries)
    try:
        with ResultsStore(config.db) as store, store.commit_every(1.0):
            return _run(config, run_id, rows, store, executor, progress, release_models)
    finally:
        if own:
            executor.close()


@contextlib.contextmanager
def _timed(seconds: dict, stage: str):
    """Add the block's wall and process CPU seconds to ``seconds[stage]``."""
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        got = seconds.setdefault(stage, {"wall_s": 0.0, "cpu_s": 0.0})
        got["wall_s"] += time.perf_counter() - wall
        got["cpu_s"] += time.process_time() - cpu


def _run(config: RunConfig, run_id: str, rows: pd.DataFrame, store: ResultsStore, executor,
         progress: bool, release_models: bool = False) -> RunResult:
    work = {"attacked": 0, "scored": 0, "quality": 0, "fitted": 0}
    seconds: dict = {}
    failures: list = []
    every_row = rows  # what the manifest and the inputs table record (the dataset's attacked rows included)
    is_clean = rows["attack"].fillna(CLEAN) == CLEAN
    given = rows[~is_clean & (rows["split"] == "test")]  # the dataset's own attacked rows (attacks = "as-given")
    rows = rows[is_clean]
    test, train = rows[rows["split"] == "test"], rows[rows["split"] == "train"]
    # the texts the configured attacks rewrite: the machine test texts, and with attack_human the human ones too
    machine = test if config.attack_human else test[test["label"] == "machine"]
    targets = _run_targets(config, train)
    attack_plan = _attack_plan(config, targets)
    plan = _detector_plan(config, train, targets)
    meter = _quality_meter(config) if config.quality else None
    manifest = build_manifest(config, run_id, every_row, attack_plan,
                              [(spec, det, key) for spec, _, key, _, det in plan], meter)
    store.start_run(run_id, {**config.to_dict(), "manifest": manifest})
    # attack models that a detector or the perplexity meter also scores with (issue #19 §4): said first
    shared = model_sharing.shared_models(*model_sharing.run_components(config, meter))
    for item in shared:
        warnings.warn(item.message(), RuntimeWarning, stacklevel=3)
    if plan and callable(getattr(executor, "warm", None)):
        # a cluster may start the first detector's workers while the last attack tasks run
        executor.warm(plan[0][3])
    keep = _keep_models(attack_plan, [det for *_, det in plan] + list(targets.values())
                        + ([meter] if meter is not None else [])) if release_models else None
    with _timed(seconds, "attacks"):
        outputs = _run_attacks(config, store, executor, machine, attack_plan, progress, work, failures, keep)
    texts = dict(zip(test["text_hash"], test["generation"]))
    texts.update(zip(given["text_hash"], given["generation"]))
    for frame in outputs.values():
        texts.update(zip(frame["text_hash"], frame["text"]))
    with _timed(seconds, "defenses"):
        defended = _defend(config, executor, texts, progress, failures)
    defended_by_hash = {name: {h: text_hash(t) for h, t in d.items()} for name, d in defended.items()}
    groups = [texts, *({defended_by_hash[name][h]: t for h, t in d.items()} for name, d in defended.items())]
    detector_cost: list = []
    with _timed(seconds, "scoring"):
        scores = _score_all(config, store, executor, groups, train, plan, progress, work, failures, detector_cost)

    # RAID's slice keys, for protocol "raid" (other runs' tables keep their columns)
    keys = [c for c in RAID_KEYS if c in test.columns] if config.protocol == "raid" else []
    base = test[["id", "label", "domain", "text_hash", *keys]].assign(attack=CLEAN, adv_source_id=test["id"])
    label_of = dict(zip(test["id"], test["label"]))
    extra_of = {k: dict(zip(test["id"], test[k])) for k in keys}
    attacked = [
        f[["id", "domain", "text_hash", "attack"]].assign(label=f["id"].map(label_of), adv_source_id=f["id"],
                                                          **{k: f["id"].map(extra_of[k]) for k in keys})
        for f in outputs.values()
    ]
    if not given.empty:
        attacked.append(given[["id", "label", "domain", "text_hash", "attack", "adv_source_id", *keys]])
    every = pd.concat([base, *attacked], ignore_index=True)
    with _timed(seconds, "evaluation"):
        score_table = score_rows(every, scores, defended)
        metrics = evaluate_defenses(score_table, config)
    # the cost and quality of an attack are read on the machine texts it rewrote (attack_human: humans too,
    # scored, but not in these tables)
    outputs = {label: f[f["id"].map(label_of) == "machine"] for label, f in outputs.items()}
    cost = cost_rows(outputs)
    # which detector guided each attack (a run detector's label, or "<name> (own)"): transfer is read off one table
    guides = {label: guide_label(attack, targets) for _, label, attack, _ in attack_plan}
    if any(guides.values()):
        metrics["guide"] = metrics["attack"].map(guides)
        if not cost.empty:
            cost["guide"] = cost["attack"].map(guides)
    notes = mixed_machines(cost)
    for note in notes:
        warnings.warn(note, RuntimeWarning, stacklevel=3)
    notes = [s.message() for s in shared] + notes
    if every_row.attrs.get("split_note"):  # duplicate texts in the sample (humanize._split.group_split)
        notes.append(every_row.attrs["split_note"])
        warnings.warn(notes[-1], RuntimeWarning, stacklevel=3)
    tables = {"metrics": metrics, "scores": score_table, "cost": cost,
              "detector_cost": pd.DataFrame(detector_cost, columns=DETECTOR_COST_COLUMNS)}
    if config.protocol == "raid":  # every slice of RAID's evaluator (domain x attack x model x ...), undefended
        tables["raid_slices"] = raid_slice_table(score_table, config)
    if shared:
        tables["warnings"] = model_sharing.sharing_table(shared)
    if config.quality:
        with _timed(seconds, "quality"):
            tables["quality"] = _quality(config, store, executor, outputs, progress, work, failures, meter)
    if failures:
        from humanize._secrets import scrub_secrets

        # messages are scrubbed where they are made; this is the second defence, before anything is stored
        failures[:] = [replace(f, error=scrub_secrets(f.error)) for f in failures]
        ids = dict(zip(every["text_hash"], every["id"]))
        for hashes in defended_by_hash.values():  # a defended text's failure is its undefended text's document's
            ids.update((dh, ids.get(h)) for h, dh in hashes.items() if dh not in ids)
        tables["failures"] = failure_rows(failures, ids)
        notes.append(f"{len(failures)} document(s) failed and are left out of the tables (see the run's "
                     f"'failures' table); a rerun retries them: {failures[0].job}: {failures[0].error}")
        warnings.warn(notes[-1], RuntimeWarning, stacklevel=3)
    store.put_inputs(run_id, input_pairs(every_row))  # what later commands that re-read the dataset check against
    store.finish_run(run_id, tables)
    return RunResult(run_id, tables, str(config.db), work, corrupt=list(store.corrupt), warnings=notes,
                     failures=failures, manifest=manifest, stage_seconds=seconds)
