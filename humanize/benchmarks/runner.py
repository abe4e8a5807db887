"""The benchmark runner: attack, score, measure, evaluate; resumable and cached by content.

One call, :func:`run`, does what ``humanize-bench run`` does:

1. load the dataset rows and sample ``n`` machine and ``n`` human texts (seeded);
   split source documents into a train part (to fit learnable detectors on clean
   texts) and a test part (everything is evaluated on the test part);
2. attack every test machine text with every configured attack (each θ of a
   sweep), measuring time and memory per document with :class:`humanize.cost.CostMeter`;
3. score clean human, clean machine and attacked texts with every detector;
4. measure quality (perplexity, cosine, ROUGE-L, Flesch, edit rates) per attack;
5. apply the protocols (:func:`humanize.benchmarks.protocols.evaluate`) and store
   the tables.

Every finished batch is committed to the SQLite store before the next starts,
keyed by content, so a run killed at any point resumes where it stopped, and a
second run of the same configuration does no model work at all.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from humanize import detectors as detector_registry

from .config import ConfigError, RunConfig, sampling_seed
from .datasets import load_dataset
from .datasets.split import in_train_split
from .store import ResultsStore, text_hash

CLEAN = "none"


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

    @property
    def metrics(self) -> pd.DataFrame:
        return self.tables["metrics"]


def _progress(iterable, total: int, desc: str, enabled: bool):
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, leave=False)


def _batches(seq: list, size: int) -> list[list]:
    return [seq[i : i + size] for i in range(0, len(seq), size)]


def sample_rows(config: RunConfig) -> pd.DataFrame:
    """The clean human and machine rows of the run, with a ``split`` column (train/test)."""
    try:
        df = load_dataset(config.dataset, **config.filters)
    except (TypeError, ValueError) as err:  # a filter the loader rejects: a config problem
        raise ConfigError(f"dataset {config.dataset!r} with filters {config.filters}: {err}") from None
    df = df[df["attack"].fillna(CLEAN).isin([CLEAN])].copy()
    df = df[df["generation"].map(lambda t: isinstance(t, str))]
    parts = []
    for label in ("machine", "human"):
        part = df[df["label"] == label]
        if config.n is not None and len(part) > config.n:
            part = part.sample(n=config.n, random_state=sampling_seed(config.seed))
        parts.append(part)
    rows = pd.concat(parts).sort_values(["label", "id"]).reset_index(drop=True)
    if rows.empty:
        raise ConfigError(f"dataset {config.dataset!r} with filters {config.filters} has no clean rows")
    if "split" not in rows.columns or rows["split"].isna().all():
        rows["split"] = [
            "train" if in_train_split(str(s), config.seed, config.train_fraction) else "test" for s in rows["source_id"]
        ]
    rows["text_hash"] = rows["generation"].map(text_hash)
    return rows


def _attack_key(attack) -> str:
    """The store key of an attack's outputs: its name (for reading) and its provenance fingerprint
    (qualified class, output version, exact parameters: see :meth:`humanize._params.ParamsMixin.fingerprint`)."""
    return f"{attack.name}/{attack.fingerprint()}"


#: The cost columns of the run's cost table, as stored per attack output.
COST_COLUMNS = ("wall_s", "cpu_s", "peak_rss_mb", "peak_gpu_mb", "tokens_in", "tokens_out", "queries")
#: Counts an attack reports in ``AttackResult.info`` that the cost table carries per document.
INFO_COUNTS = ("detector_queries", "llm_tokens_in", "llm_tokens_out")


def _run_attacks(config: RunConfig, store: ResultsStore, machine: pd.DataFrame, progress: bool, work: dict):
    """Attack outputs per attack label: DataFrame (id, input_hash, text, text_hash, costs...)."""
    from humanize.cost import CostMeter
    from humanize.cost.machine import machine_description

    outputs = {}
    texts = dict(zip(machine["text_hash"], machine["generation"]))
    for spec in config.attacks:
        for label, params in spec.expand():
            attack = spec.build(config.seed, params, config.train_fraction)
            key = _attack_key(attack)
            have = store.attack_outputs(key, list(texts))
            todo = [h for h in texts if h not in have]
            batches = _batches(todo, config.batch_size)
            measured = set(todo)
            for batch in _progress(batches, len(batches), f"attack {label}", progress):
                meter = CostMeter()
                rows = []
                for h in batch:
                    with meter.measure(doc_id=h, attack=label) as m:
                        result = attack.apply(texts[h])
                        info = dict(result.info)
                        m.add(queries=info.get("queries"), llm_tokens=info.get("lm_tokens"))
                    m.count_input(texts[h])  # counted outside the timed block; the record takes them
                    m.count_output(result.text)
                    rec = m.record
                    rows.append(dict(
                        input_hash=h, output=result.text, edits=[list(e) for e in result.edits], info=info,
                        wall_s=rec.get("wall_s"), cpu_s=rec.get("cpu_s"), peak_rss_mb=rec.get("peak_rss_mb"),
                        peak_gpu_mb=rec.get("gpu_peak_mb"), tokens_in=_count(rec.get("tokens_in")),
                        tokens_out=_count(rec.get("tokens_out")), queries=_count(rec.get("queries")),
                        machine=machine_description(),
                    ))
                store.put_attack_outputs(key, rows)
                have.update((r["input_hash"], r) for r in rows)
                work["attacked"] += len(rows)
            frame = machine[["id", "domain", "text_hash", "generation"]].rename(
                columns={"text_hash": "input_hash", "generation": "original"}
            ).copy()
            frame["text"] = [have[h]["output"] for h in frame["input_hash"]]
            frame["text_hash"] = frame["text"].map(text_hash)
            for col in COST_COLUMNS:
                frame[col] = [have[h].get(col) for h in frame["input_hash"]]
            frame["cost_source"] = ["measured" if h in measured else "cached" for h in frame["input_hash"]]
            frame["machine"] = [have[h].get("machine") for h in frame["input_hash"]]
            frame["n_edits"] = [len(have[h]["edits"]) for h in frame["input_hash"]]
            # texts a detector-guided attack sent to its target/surrogate (RAFT, HMGC), 0 for the others
            frame["detector_queries"] = [int((have[h].get("info") or {}).get("detector_queries", 0) or 0)
                                         for h in frame["input_hash"]]
            # prompt / completion tokens of the generator calls a rewriting attack made (0 for the others)
            for col in INFO_COUNTS[1:]:
                frame[col] = [int((have[h].get("info") or {}).get(col, 0) or 0) for h in frame["input_hash"]]
            frame["attack"] = label
            frame["attack_name"] = spec.name
            frame["rate"] = getattr(attack, "rate", math.nan)
            frame["attack_key"] = key
            outputs[label] = frame
    return outputs


def _count(value):
    """A counter of the cost meter as stored: an int, or None when it was not counted (NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return int(value) if float(value).is_integer() else float(value)


def _mixed_machines(cost: pd.DataFrame) -> list[str]:
    """A warning when the cost rows were measured on more than one kind of machine."""
    if "machine" not in cost.columns:
        return []
    machines = sorted({str(m) for m in cost["machine"] if isinstance(m, str) and m})
    unknown = int(sum(not (isinstance(m, str) and m) for m in cost["machine"]))
    if len(machines) + (unknown > 0) <= 1:
        return []
    parts = [f"{int((cost['machine'] == m).sum())} rows on {m!r}" for m in machines]
    if unknown:
        parts.append(f"{unknown} rows on an unrecorded machine")
    return [f"the cost table mixes machines ({'; '.join(parts)}): compare times and memory only within "
            f"one machine (column 'machine')"]


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


def _score_all(config: RunConfig, store: ResultsStore, texts: dict[str, str], train: pd.DataFrame,
               progress: bool, work: dict) -> dict[str, dict[str, float]]:
    scores = {}
    for spec in config.detectors:
        detector = detector_registry.get(spec.name, **spec.params)
        if config.device is not None and "device" in detector.get_params() and "device" not in spec.params:
            detector.device = config.device
        fit_on = train if detector.learnable else None
        key = _detector_key(detector, fit_on)
        have = store.scores(key, list(texts))
        todo = [h for h in texts if h not in have]
        if todo and detector.learnable:
            if train.empty or train["label"].nunique() < 2:
                raise ValueError(f"detector {spec.name!r} must be fit, but the train split lacks human or machine rows")
            detector.fit(train["generation"].tolist(), train["label"].tolist())
            work["fitted"] += 1
        # length-sorted batches keep padding low for model detectors
        todo.sort(key=lambda h: len(texts[h]))
        batches = _batches(todo, max(config.batch_size, 1) * 4)
        for batch in _progress(batches, len(batches), f"score {spec.name}", progress):
            values = np.asarray(detector.score([texts[h] for h in batch]), dtype=float).tolist()
            store.put_scores(key, zip(batch, values))
            have.update(zip(batch, values))
            work["scored"] += len(batch)
        scores[spec.name] = have
    return scores


def _quality_meter(config: RunConfig):
    """The run's QualityMeter (models load on its first score, so building it is cheap)."""
    from humanize.quality import QualityMeter

    kwargs = {"device": config.device, **config.quality_params}
    if config.quality_lm:
        kwargs["lm"] = config.quality_lm
    if config.quality_encoder:
        kwargs["encoder"] = config.quality_encoder
    return QualityMeter(**kwargs)


def _quality(config: RunConfig, store: ResultsStore, outputs: dict[str, pd.DataFrame], progress: bool,
             work: dict) -> pd.DataFrame:
    """Quality rows per (attack, document). Pending pairs are scored a few source documents at a
    time with every attack together, so each original's perplexity is computed once, not per attack."""
    meter = _quality_meter(config)
    # keyed on the meter's fingerprint: its parameters and the RESOLVED models (a new default model recomputes)
    suffix = "|quality=" + meter.fingerprint()
    keys = {label: frame["attack_key"].iloc[0] + suffix for label, frame in outputs.items()}
    have = {label: store.quality(keys[label], frame["input_hash"].tolist()) for label, frame in outputs.items()}
    by_doc: dict[str, list] = {}  # pending (label, original, attacked) per source document
    for label, frame in outputs.items():
        for h, o, t in zip(frame["input_hash"], frame["original"], frame["text"]):
            if h not in have[label]:
                by_doc.setdefault(h, []).append((h, label, o, t))
    groups = _batches(sorted(by_doc), max(1, config.batch_size // 2))
    for group in _progress(groups, len(groups), "quality", progress):
        items = [item for h in group for item in by_doc[h]]
        table = meter.score([o for _, _, o, _ in items], [t for *_, t in items])
        per_label: dict[str, list] = {}
        for (h, label, _, _), record in zip(items, table.to_dict(orient="records")):
            per_label.setdefault(label, []).append((h, record))
            have[label][h] = record
        store.put_quality_many({keys[label]: rows for label, rows in per_label.items()})
        work["quality"] += len(items)
    frames = []
    for label, frame in outputs.items():
        q = pd.DataFrame([have[label][h] for h in frame["input_hash"]])
        q.insert(0, "attack", label)
        q.insert(1, "id", frame["id"].to_numpy())
        q["rate"] = frame["rate"].to_numpy()
        frames.append(q)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def run(config: RunConfig, *, progress: bool = True) -> RunResult:
    """Run a benchmark configuration; see the module docstring for the steps."""
    from .protocols import evaluate

    config.validate()
    run_id = hashlib.blake2b(config.key().encode(), digest_size=8).hexdigest()
    work = {"attacked": 0, "scored": 0, "quality": 0, "fitted": 0}
    rows = sample_rows(config)  # a filter the loader rejects fails here, before the store is touched
    test = rows[rows["split"] == "test"]
    train = rows[rows["split"] == "train"]
    machine = test[test["label"] == "machine"]
    human = test[test["label"] == "human"]
    if machine.empty or human.empty:
        raise ConfigError("the test split needs both human and machine texts; raise n or change train_fraction")
    with ResultsStore(config.db) as store:
        store.start_run(run_id, config.to_dict())
        outputs = _run_attacks(config, store, machine, progress, work)
        texts = dict(zip(test["text_hash"], test["generation"]))
        for frame in outputs.values():
            texts.update(zip(frame["text_hash"], frame["text"]))
        scores = _score_all(config, store, texts, train, progress, work)

        long_rows = []
        base = test[["id", "label", "domain", "text_hash"]].assign(attack=CLEAN, adv_source_id=test["id"])
        attacked = [
            f[["id", "domain", "text_hash", "attack"]].assign(label="machine", adv_source_id=f["id"])
            for f in outputs.values()
        ]
        every = pd.concat([base, *attacked], ignore_index=True)
        for det, by_hash in scores.items():
            part = every.copy()
            part["detector"] = det
            part["score"] = part["text_hash"].map(by_hash)
            long_rows.append(part)
        score_table = pd.concat(long_rows, ignore_index=True).drop(columns=["text_hash"])
        metrics = evaluate(score_table, fprs=config.fprs, per_domain=config.per_domain, pair_key="adv_source_id",
                           nan_policy="omit", seed=sampling_seed(config.seed), n_boot=config.n_boot,
                           confidence=config.confidence)
        cost = pd.concat(
            [f[["attack", "id", "rate", *COST_COLUMNS, *INFO_COUNTS, "n_edits", "cost_source",
                "machine"]].assign(
                chars_in=f["original"].str.len(), words_in=f["original"].str.split().str.len())
             for f in outputs.values()],
            ignore_index=True,
        )
        notes = _mixed_machines(cost)
        for note in notes:
            warnings.warn(note, RuntimeWarning, stacklevel=2)
        tables = {"metrics": metrics, "scores": score_table, "cost": cost}
        if config.quality:
            tables["quality"] = _quality(config, store, outputs, progress, work)
        store.finish_run(run_id, tables)
    return RunResult(run_id, tables, str(config.db), work, corrupt=list(store.corrupt), warnings=notes)
