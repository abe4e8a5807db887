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

The stages are declared in one place, :data:`STAGES`. :func:`run` checks the configuration, draws the sample,
makes the run's context (:func:`.context.plan_run`: the configuration, the store, the executor and the plans of
its attacks, detectors, defenses and quality meter, each built once) and hands it to each stage in turn; a
stage reads what the earlier ones left in the context and adds its own.

Every stage that computes is the same mechanism (:func:`.stages.run_stages`): the work the store lacks is cut
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
from .context import RunContext, plan_run
from ..data import load_dataset
from .executors import Failure, get_executor
from .run_tables import (CLEAN, COST_COLUMNS, INFO_COUNTS, RAID_KEYS, cost_rows, evaluate_defenses, failure_rows,
                         mixed_machines, raid_slice_table, score_rows, timing_label, unchanged_reason)
from .stages import StageWork, batch_keys, missing_batches, run_stage, run_stages
from .store import ResultsStore, computed_attack_record

__all__ = ["CLEAN", "COST_COLUMNS", "DETECTOR_COST_COLUMNS", "INFO_COUNTS", "STAGES", "RunResult", "run",
           "sample_rows"]

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
    rows.attrs["split_note"] = split.note()  # the evaluate stage says it among the run's warnings
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


# -- the stages: each takes the run's context (.context.RunContext) and adds what it produces ---------------------
def start_stage(ctx: RunContext) -> None:
    """Record what runs (the manifest, :mod:`.manifest`), say the attack models that a detector or the perplexity
    meter also scores with (issue #19 §4), and let a cluster start the first detector's workers while the last
    attack tasks run."""
    ctx.manifest = build_manifest(ctx.config, ctx.run_id, ctx.sample.rows, ctx.attacks, ctx.detectors,
                                  ctx.defenses, ctx.meter)
    ctx.store.start_run(ctx.run_id, {**ctx.config.to_dict(), "manifest": ctx.manifest})
    ctx.shared = model_sharing.shared_models(*ctx.components())
    for item in ctx.shared:
        warnings.warn(item.message(), RuntimeWarning, stacklevel=3)
    ctx.notes.extend(item.message() for item in ctx.shared)
    if ctx.detectors and callable(getattr(ctx.executor, "warm", None)):
        ctx.executor.warm(ctx.detectors[0].job)


def _put_attack_outputs(store, key: str, done: list) -> None:
    store.put_attack_outputs(key, [{**row, "input_hash": h} for h, row in done])


def attack_stage(ctx: RunContext) -> None:
    """Attack outputs per attack label (``ctx.outputs``): DataFrame (id, input_hash, text, text_hash, costs...);
    a document whose attack failed is left out (and reported in ``ctx.failures``). Every attack and θ goes to
    the executor at once: an executor with workers keeps them busy across the jobs."""
    store, machine, keep = ctx.store, ctx.sample.machine, ctx.keep_models()
    texts = dict(zip(machine["text_hash"], machine["generation"]))
    work_items = []
    for i, plan in enumerate(ctx.attacks):
        have = store.attack_outputs(plan.key, list(texts))
        resources = ctx.config.job_resources(plan.label, jobs.attack_kind(plan.attack))
        job = jobs.attack_job(plan.label, plan.attack, resources, store_key=plan.key,
                              keep_models=None if keep is None else keep[i])
        work_items.append(StageWork(job, missing_batches(texts, have, ctx.config.batch_size),
                                    put=partial(_put_attack_outputs, store, plan.key), results=have))
    stages = run_stages(ctx.executor, work_items, progress=ctx.progress, name="attacks")
    for plan, stage in zip(ctx.attacks, stages):
        # the warm-up seconds a computed batch paid (jobs.warm_up), stored beside the output (issue #34): a cached
        # rerun reports what the run that computed it paid
        warmups = {h: stage.results[h].get("warmup_s") for h in stage.computed}
        paid = [(h, {"warmup_s": w}) for h, w in warmups.items() if w is not None]
        if paid:
            store.put_item_costs(plan.key, paid)
        cached = [h for h in stage.results if h not in warmups]
        if cached:
            warmups.update({h: c["warmup_s"] for h, c in store.item_costs(plan.key, cached).items()})
        for h in stage.computed:  # the shape a cached row has (store.attack_record), whichever way it came
            stage.results[h] = computed_attack_record(plan.key, h, stage.results[h])
        ctx.work["attacked"] += len(stage.computed)
        ctx.failures.extend(stage.failures)
        frame = _attack_frame(machine, plan, stage)
        frame["warmup_s"] = frame["input_hash"].map(warmups).astype(float)
        ctx.outputs[plan.label] = frame


def _attack_frame(machine: pd.DataFrame, plan, stage) -> pd.DataFrame:
    """One attack's outputs (cached and computed) as rows of the run's tables (``plan``: its
    :class:`~.context.AttackPlan`)."""
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
    frame["attack"] = plan.label
    frame["attack_name"] = plan.spec.name
    frame["rate"] = getattr(plan.attack, "rate", math.nan)
    frame["attack_key"] = plan.key
    return frame


def defense_stage(ctx: RunContext) -> None:
    """The texts the detectors score (``ctx.texts``: the clean test texts, the dataset's attacked ones and every
    attack output) and each defense's output for every one of them (``ctx.defended``: {defense: {text hash:
    defended text}}). A defense is cheap and deterministic, so its outputs are recomputed, not stored; their
    scores are."""
    test, given = ctx.sample.test, ctx.sample.given
    ctx.texts = dict(zip(test["text_hash"], test["generation"]))
    ctx.texts.update(zip(given["text_hash"], given["generation"]))
    for frame in ctx.outputs.values():
        ctx.texts.update(zip(frame["text_hash"], frame["text"]))
    work = [StageWork(jobs.defense_job(plan.name, plan.defense, ctx.config.job_resources("defense", "task")),
                      missing_batches(ctx.texts, (), max(ctx.config.batch_size, 1) * 4)) for plan in ctx.defenses]
    stages = run_stages(ctx.executor, work, progress=ctx.progress, name="defenses")
    for stage in stages:
        ctx.failures.extend(stage.failures)
    ctx.defended = {plan.name: stage.results for plan, stage in zip(ctx.defenses, stages)}
    ctx.defended_hashes = {name: {h: text_hash(t) for h, t in d.items()} for name, d in ctx.defended.items()}


def score_stage(ctx: RunContext) -> None:
    """Scores by detector, by text hash (``ctx.scores``), and a :func:`detector_cost_row` per detector
    (``ctx.detector_cost``). The undefended texts are batched first, then each defense's outputs, each group on
    its own, so the undefended texts are scored in the same batches whether or not the run has defenses."""
    groups = [ctx.texts, *({ctx.defended_hashes[name][h]: t for h, t in d.items()} for name, d in ctx.defended.items())]
    train, store = ctx.sample.train, ctx.store
    every = list(dict.fromkeys(h for group in groups for h in group))
    for plan in ctx.detectors:
        have = store.scores(plan.key, every)
        batches, seen = [], set(have)
        for group in groups:
            todo = [h for h in group if h not in seen]
            seen.update(todo)
            todo.sort(key=lambda h: len(group[h]))  # length-sorted batches keep padding low for model detectors
            batches += [[(h, group[h]) for h in b] for b in batch_keys(todo, max(ctx.config.batch_size, 1) * 4)]
        if batches and plan.learnable:
            if train.empty or train["label"].nunique() < 2:
                raise ValueError(f"detector {plan.label!r} must be fit, but the train split lacks human or "
                                 "machine rows")
            ctx.work["fitted"] += 1
        stage = run_stage(ctx.executor, plan.job, batches, put=partial(_put_scores, store, plan.key), results=have,
                          progress=ctx.progress)
        ctx.work["scored"] += len(stage.computed)
        ctx.failures.extend(stage.failures)
        if stage.failures and not stage.results:
            raise _nothing_scored(plan.label, stage.failures)
        ctx.scores[plan.label] = {h: _score(r) for h, r in stage.results.items()}
        got = list(ctx.scores[plan.label].values())
        if got and all(v != v for v in got):  # every score NaN: nothing to evaluate, said as such
            from humanize.exceptions import RunError

            raise RunError(f"detector {plan.label!r} scored every one of its {len(got)} texts NaN; nothing "
                           "was evaluated: fix the detector and rerun")
        # every text's cost as measured when it was scored, this run or an earlier one
        stored = store.item_costs(plan.key, [h for h in every if h in have])
        costs = [stage.results[h] if isinstance(stage.results[h], dict) else stored.get(h)
                 for h in every if h in stage.results]
        ctx.detector_cost.append(detector_cost_row(plan.label, costs, len(stage.computed),
                                                   len(stage.results) - len(stage.computed)))
    _attribute_shared_passes(ctx.detector_cost, {plan.label: plan.detector for plan in ctx.detectors})


def _put_scores(store: ResultsStore, key: str, done: list) -> None:
    store.put_scores(key, [(h, _score(r)) for h, r in done])
    store.put_item_costs(key, [(h, r) for h, r in done if isinstance(r, dict)])


def _score(result) -> float:
    """A score as the store has it: a computed result is :func:`.jobs.score_texts`'s record, a cached one the float."""
    return result["score"] if isinstance(result, dict) else result


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


def evaluate_stage(ctx: RunContext) -> None:
    """The score table, the protocols' metrics (per defense), the cost and detector cost tables, RAID's slices
    (protocol "raid") and the model-sharing warnings (``ctx.tables``)."""
    config, test, given = ctx.config, ctx.sample.test, ctx.sample.given
    # RAID's slice keys, for protocol "raid" (other runs' tables keep their columns)
    keys = [c for c in RAID_KEYS if c in test.columns] if config.protocol == "raid" else []
    base = test[["id", "label", "domain", "text_hash", *keys]].assign(attack=CLEAN, adv_source_id=test["id"])
    label_of = dict(zip(test["id"], test["label"]))
    extra_of = {k: dict(zip(test["id"], test[k])) for k in keys}
    attacked = [
        f[["id", "domain", "text_hash", "attack"]].assign(label=f["id"].map(label_of), adv_source_id=f["id"],
                                                          **{k: f["id"].map(extra_of[k]) for k in keys})
        for f in ctx.outputs.values()
    ]
    if not given.empty:
        attacked.append(given[["id", "label", "domain", "text_hash", "attack", "adv_source_id", *keys]])
    ctx.scored_rows = pd.concat([base, *attacked], ignore_index=True)
    score_table = score_rows(ctx.scored_rows, ctx.scores, ctx.defended)
    metrics = evaluate_defenses(score_table, config)
    # the cost and quality of an attack are read on the machine texts it rewrote (attack_human: humans too,
    # scored, but not in these tables)
    ctx.machine_outputs = {label: f[f["id"].map(label_of) == "machine"] for label, f in ctx.outputs.items()}
    cost = cost_rows(ctx.machine_outputs)
    # which detector guided each attack (a run detector's label, or "<name> (own)"): transfer is read off one table
    guides = {plan.label: guide_label(plan.attack, ctx.targets) for plan in ctx.attacks}
    if any(guides.values()):
        metrics["guide"] = metrics["attack"].map(guides)
        if not cost.empty:
            cost["guide"] = cost["attack"].map(guides)
    for note in mixed_machines(cost):
        warnings.warn(note, RuntimeWarning, stacklevel=3)
        ctx.notes.append(note)
    split_note = ctx.sample.rows.attrs.get("split_note")
    if split_note:  # duplicate texts in the sample (humanize._split.group_split)
        ctx.notes.append(split_note)
        warnings.warn(split_note, RuntimeWarning, stacklevel=3)
    ctx.tables.update({"metrics": metrics, "scores": score_table, "cost": cost,
                       "detector_cost": pd.DataFrame(ctx.detector_cost, columns=DETECTOR_COST_COLUMNS)})
    if config.protocol == "raid":  # every slice of RAID's evaluator (domain x attack x model x ...), undefended
        ctx.tables["raid_slices"] = raid_slice_table(score_table, config)
    if ctx.shared:
        ctx.tables["warnings"] = model_sharing.sharing_table(ctx.shared)


def quality_stage(ctx: RunContext) -> None:
    """Quality rows per (attack, document) by the run's meter (``ctx.tables["quality"]``; nothing without
    quality). Pending pairs are scored a few source documents at a time with every attack together, so each
    original's perplexity is computed once, not per attack."""
    if ctx.quality is None:
        return
    store, outputs = ctx.store, ctx.machine_outputs
    keys = {label: ctx.quality.store_key(frame["attack_key"].iloc[0]) for label, frame in outputs.items() if len(frame)}
    have = {label: store.quality(keys[label], frame["input_hash"].tolist()) if len(frame) else {}
            for label, frame in outputs.items()}
    by_doc: dict[str, list] = {}  # pending ((label, input hash), (original, attacked)) per source document
    for label, frame in outputs.items():
        for h, o, t in zip(frame["input_hash"], frame["original"], frame["text"]):
            if h not in have[label]:
                by_doc.setdefault(h, []).append(((label, h), (o, t)))
    batches = [[item for h in group for item in by_doc[h]]
               for group in batch_keys(sorted(by_doc), max(1, ctx.config.batch_size // 2))]

    def put(done: list) -> None:
        per_label: dict[str, list] = {}
        for (label, h), record in done:
            per_label.setdefault(label, []).append((h, record))
        store.put_quality_many({keys[label]: rows for label, rows in per_label.items()})

    job = jobs.quality_job(ctx.quality.meter, ctx.config.job_resources("quality", "model"))
    stage = run_stage(ctx.executor, job, batches, put=put, progress=ctx.progress)
    for (label, h), record in stage.results.items():
        have[label][h] = record
    ctx.work["quality"] += len(stage.computed)
    ctx.failures.extend(Failure(f"quality {f.key[0]}", f.key[1], f.error, f.attempts) for f in stage.failures)
    frames = []
    for label, frame in outputs.items():
        frame = frame[frame["input_hash"].isin(have[label])]
        q = pd.DataFrame([have[label][h] for h in frame["input_hash"]])
        q.insert(0, "attack", label)
        q.insert(1, "id", frame["id"].to_numpy())
        q["rate"] = frame["rate"].to_numpy()
        frames.append(q)
    ctx.tables["quality"] = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def finish_stage(ctx: RunContext) -> None:
    """The failures table (and its note), the inputs later commands check the dataset against, and the tables
    stored as the run's."""
    failures = ctx.failures
    if failures:
        from humanize._secrets import scrub_secrets

        # messages are scrubbed where they are made; this is the second defence, before anything is stored
        failures[:] = [replace(f, error=scrub_secrets(f.error)) for f in failures]
        ids = dict(zip(ctx.scored_rows["text_hash"], ctx.scored_rows["id"]))
        for hashes in ctx.defended_hashes.values():  # a defended text's failure is its undefended text's document's
            ids.update((dh, ids.get(h)) for h, dh in hashes.items() if dh not in ids)
        ctx.tables["failures"] = failure_rows(failures, ids)
        ctx.notes.append(f"{len(failures)} document(s) failed and are left out of the tables (see the run's "
                         f"'failures' table); a rerun retries them: {failures[0].job}: {failures[0].error}")
        warnings.warn(ctx.notes[-1], RuntimeWarning, stacklevel=3)
    ctx.store.put_inputs(ctx.run_id, input_pairs(ctx.sample.rows))  # what later commands that re-read the dataset check
    ctx.store.finish_run(ctx.run_id, ctx.tables)


#: The stages of a run, in order (the module docstring's steps): :func:`run` builds the run's context
#: (:class:`.context.RunContext`: its plans, built once) and hands it to each.
STAGES = (start_stage, attack_stage, defense_stage, score_stage, evaluate_stage, quality_stage, finish_stage)

#: The stages whose wall and CPU seconds :attr:`RunResult.stage_seconds` reports, by the name it gives them.
TIMED_STAGES = {attack_stage: "attacks", defense_stage: "defenses", score_stage: "scoring",
                evaluate_stage: "evaluation", quality_stage: "quality"}


def run(config: RunConfig, *, progress: bool = True, executor=None, release_models: bool = False) -> RunResult:
    """Run a benchmark configuration; see the module docstring for the steps.

    ``executor``: an :class:`~humanize.benchmarks.runner.executors.Executor` to carry out the work
    (default: the configuration's, built with :func:`~humanize.benchmarks.runner.executors.get_executor`
    and closed at the end). ``release_models``: when an attack's job ends, the local executor releases
    the models it loaded that no other attack, detector or meter of the run names (issue #24: the demo's
    Gemma and Qwen are not held through the detector stage; the CLI sets it). Off by default: a process
    that runs again (a test session, a notebook) keeps each model loaded once.
    """
    meter = config.validate_for_run()
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
            ctx = plan_run(config, run_id, rows, store, executor, meter=meter, progress=progress,
                           release_models=release_models)
            seconds: dict = {}
            for stage in STAGES:
                if stage in TIMED_STAGES:
                    with _timed(seconds, TIMED_STAGES[stage]):
                        stage(ctx)
                else:
                    stage(ctx)
            return RunResult(run_id, ctx.tables, str(config.db), ctx.work, corrupt=list(store.corrupt),
                             warnings=ctx.notes, failures=ctx.failures, manifest=ctx.manifest, stage_seconds=seconds)
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
