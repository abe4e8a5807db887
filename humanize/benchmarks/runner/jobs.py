"""The runner's units of work as picklable :class:`~humanize.benchmarks.runner.executors.Job` parts.

Each stage's worker state is built by a module-level factory (bound with
:func:`functools.partial`) and applied to a batch by a module-level function, so a remote
executor can ship them and build the state where the work runs, once per worker:

- attacks: the attack the driver built from its spec (θ, the run's seed and train fraction) and
  validated, shipped as the object itself (so a worker needs no registry entry, plug-in file or
  entry point to run it); each document attacked under :class:`humanize.cost.CostMeter`
  (TH-Bench §4.3), one store row per document;
- detectors: the configured detector object and, when learnable, FIT on the run's clean train
  texts (deterministic: every worker fits the same model); warmed up on a probe outside the timed
  block, then a batch is scored in one timed call (its seconds shared among its texts);
- quality: the :class:`humanize.quality.QualityMeter`; a batch of (original, attacked) pairs;
- defenses: a test-time defense (:mod:`humanize.defenses`) applied to each text.
"""

from __future__ import annotations

import gc
import math
import time
import weakref
from contextlib import contextmanager
from functools import partial

from .executors import Job


# -- attacks ---------------------------------------------------------------------------------------
def _as_attack(attack):
    """``attack`` itself, or an AttackSpec built with seed 0 (to ask its class what it declares)."""
    if not callable(getattr(attack, "apply", None)) and callable(getattr(attack, "build", None)):
        return attack.build(0)
    return attack


def attack_kind(attack) -> str:
    """``"task"`` when the attack loads no model (its class says so: ``needs_model``; a composite
    asks its parts), else ``"model"`` (actor pools). ``attack``: an Attack or an AttackSpec
    (built with seed 0 to ask)."""
    return "model" if getattr(_as_attack(attack), "needs_model", True) else "task"


def ship_attack(attack):
    """The job's state: the very attack the driver built and validated (an unloaded, picklable
    object: models load on first use), so a worker runs exactly it, whatever registry it has."""
    return attack


def _count(value):
    """A counter of the cost meter as stored: an int, or None when it was not counted (NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return int(value) if float(value).is_integer() else float(value)


#: The attacks and detectors warmed up in this process, by identity (a worker warms the component it was
#: shipped once, whatever number of batches it then runs; a copy shipped to another worker warms up there).
_WARMED: "weakref.WeakValueDictionary[int, object]" = weakref.WeakValueDictionary()
#: A short text of non-ASCII characters (accents, curly quotes, a dash): many attacks take a faster path on
#: ASCII text and build what the other path needs on its first use, so the warm-up attacks this too.
WARMUP_PROBE = "Caf\u00e9 na\u00efvet\u00e9 \u2013 \u201cquoted\u201d words, and one more sentence."


def warm_up(attack, text: str) -> float | None:
    """Apply ``attack`` once to ``text`` and once to :data:`WARMUP_PROBE` (one ``batch`` of both for an attack
    that batches, :func:`attack_batches`), outside any timed block
    (issue #24 §2): the one-off work of a first call (imports, lexicons, tables and models built or
    loaded on first use, a JIT's first pass) is then not charged to the first document's time.
    Returns the warm-up's wall seconds, or None when this process has warmed ``attack`` up already.
    The outputs are discarded (an attack's output depends on its text only, so later outputs are
    the same); an error is left to the timed call, which reports it as the document's."""
    # an attack that batches (a chat model: a decode per call) is warmed up by one batch of both
    calls = [(attack.batch, [text, WARMUP_PROBE])] if attack_batches(attack) else \
        [(attack.apply, text), (attack.apply, WARMUP_PROBE)]
    return _warm_once(attack, calls)


def _warm_once(component, calls: list) -> float | None:
    """Make ``calls`` (``(function, argument)`` pairs; outputs discarded, errors left to the timed call) unless
    this process has warmed ``component`` (an attack or a detector) up already: their wall seconds, or None."""
    if _WARMED.get(id(component)) is component:
        return None
    start = time.perf_counter()
    for call, argument in calls:
        try:
            call(argument)
        except Exception:  # noqa: BLE001 - the timed call raises it again, as that document's or batch's failure
            pass
    seconds = time.perf_counter() - start
    try:
        _WARMED[id(component)] = component
    except TypeError:  # an object that takes no weak reference: warmed again by the next batch
        pass
    return seconds


@contextmanager
def _no_gc():
    """The cyclic garbage collector paused for the block, as :mod:`timeit` does: a full collection of the
    process's heap (torch, pandas: a tenth of a second) would otherwise land on whichever document's
    timed call happened to trigger it. The garbage is collected when the block ends."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def attack_batches(attack) -> bool:
    """Whether the runner attacks a batch of documents with one ``attack.batch`` call: the attack's class
    says so (``batches``: the rewriting attacks; a composite asks its parts). ``attack``: an
    Attack or an AttackSpec (built with seed 0 to ask)."""
    return bool(getattr(_as_attack(attack), "batches", False))


#: ``info`` key of a row whose time is its share of a batch timed as one call: the batch's documents.
TIMED_BATCH = "timed_batch"


def _row(result, rec: dict, warmup) -> dict:
    """The store row of one output from its cost record (``rec``, with the row's ``info``)."""
    from humanize.cost.machine import machine_description

    from .store import encode_edits

    return dict(
        output=result.text, edits=encode_edits([list(e) for e in result.edits]), n_edits=len(result.edits),
        info=rec.pop("info"),
        wall_s=rec.get("wall_s"), cpu_s=rec.get("cpu_s"), peak_rss_mb=rec.get("peak_rss_mb"),
        peak_gpu_mb=rec.get("gpu_peak_mb"), tokens_in=_count(rec.get("tokens_in")),
        tokens_out=_count(rec.get("tokens_out")), queries=_count(rec.get("queries")),
        machine=machine_description(), warmup_s=warmup,
    )


def _attack_one_by_one(attack, texts: list[str], warmup) -> list[dict]:
    """Each text under its own timed block."""
    from humanize.cost import CostMeter

    meter = CostMeter()
    rows = []
    for text in texts:
        with _no_gc(), meter.measure(attack=attack.name) as m:
            result = attack.apply(text)
            info = dict(result.info)
            m.add(queries=info.get("queries"), llm_tokens=info.get("lm_tokens"))
        m.count_input(text)  # counted outside the timed block; the record takes them
        m.count_output(result.text)
        rows.append(_row(result, {**m.record, "info": info}, None if rows else warmup))
    return rows


def _attack_as_batch(attack, texts: list[str], warmup) -> list[dict] | None:
    """``attack.batch(texts)`` under one timed block; each row its share: wall and CPU seconds of the batch
    divided by its documents, the batch's peak memory, its own tokens and queries, and ``info["timed_batch"]``
    the number of documents. None when the batch raised (an error about the run is raised)."""
    from humanize.cost import CostMeter

    from .executors import is_run_error

    meter = CostMeter()
    try:
        with _no_gc(), meter.measure(attack=attack.name, n_docs=len(texts)) as m:
            results = attack.batch(texts)
            if len(results) != len(texts):
                raise RuntimeError(f"{type(attack).__name__}.batch returned {len(results)} results for "
                                   f"{len(texts)} documents")
    except Exception as err:  # noqa: BLE001 - every document is attacked alone, so a bad one fails alone
        if is_run_error(err):
            raise
        return None
    batch, n = m.record, len(texts)
    infos = [dict(r.info) for r in results]
    # the queries the attack's generator reported (cost.report) during the batch: each document's own when
    # they add up to the documents' llm_queries (one per generation), else an even share
    reported = batch.get("queries")
    reported = 0.0 if reported is None or math.isnan(reported) else float(reported)
    llm = [float(i.get("llm_queries") or 0) for i in infos]
    shares = llm if sum(llm) == reported else [reported / n] * n
    rows = []
    for text, result, info, share in zip(texts, results, infos, shares):
        own = info.get("queries")
        queries = (own or 0) + share if (own is not None or share) else None
        rec = {"wall_s": batch["wall_s"] / n, "cpu_s": batch["cpu_s"] / n, "peak_rss_mb": batch["peak_rss_mb"],
               "gpu_peak_mb": batch["gpu_peak_mb"], "tokens_in": meter._count(text),
               "tokens_out": meter._count(result.text), "queries": queries,
               "info": {**info, TIMED_BATCH: n}}
        rows.append(_row(result, rec, None if rows else warmup))
    return rows


def attack_texts(attack, texts: list[str]) -> list[dict]:
    """Attack the texts under :class:`~humanize.cost.CostMeter`: the store row of each output (text, exact
    edits as the store's JSON text and their number, info, time, memory, tokens, queries, machine). The
    edits are encoded here, where the work runs: a remote worker then sends one string per document, not
    thousands of small lists to unpickle.

    An attack that batches (:func:`attack_batches`: the rewriting attacks) gets the texts in one
    ``attack.batch`` call, timed as one block (issue #24: a chat model decodes the batch together, not one
    request after another); each row has the batch's wall and CPU seconds divided by its documents, the
    batch's peak memory, its own tokens and queries, and ``info["timed_batch"]``, the batch's size (the cost
    table's ``timing`` says "batch mean"). When the batch raises, each text is attacked alone, so a bad
    document fails alone. Any other attack is timed one document at a time.

    The attack is first warmed up outside the timed blocks (:func:`warm_up`, once per attack and
    process); the first row of the batch that paid it carries ``warmup_s``, its seconds (None on the
    other rows). ``warmup_s`` is a cost of this run, not stored with the outputs. The cyclic garbage
    collector is paused inside each timed call (:func:`_no_gc`)."""
    warmup = warm_up(attack, texts[0]) if texts else None
    if len(texts) > 1 and attack_batches(attack):
        rows = _attack_as_batch(attack, texts, warmup)
        if rows is not None:
            return rows
    return _attack_one_by_one(attack, texts, warmup)


def attack_store_rows(store_key: str, attack, texts: list[str]) -> list[dict]:
    """:func:`attack_texts`, each row also ``encoded`` as the store inserts it under ``store_key``
    (:func:`~humanize.benchmarks.runner.store.encode_attack_row`): the checksums and the encoding are
    computed where the attack runs, and the driver only inserts."""
    from .store import encode_attack_row
    from humanize.text import text_hash

    rows = attack_texts(attack, texts)
    for text, row in zip(texts, rows):
        row["encoded"] = encode_attack_row(store_key, text_hash(text), row)
    return rows


def attack_job(label: str, attack, resources: dict, store_key: str | None = None,
               keep_models: frozenset | None = None) -> Job:
    """The job attacking texts with ``attack`` (the configured object, shipped as it is).
    ``store_key``: the key the outputs are stored under; given, the rows come back encoded for
    the store (:func:`attack_store_rows`). ``keep_models``: see :class:`~.executors.Job` (given, the
    local executor releases the models the attack loaded that the run no longer needs)."""
    apply = attack_texts if store_key is None else partial(attack_store_rows, store_key)
    return Job(f"attack {label}", partial(ship_attack, attack), apply, kind=attack_kind(attack),
               resources=dict(resources), keep_models=keep_models)


# -- detectors -------------------------------------------------------------------------------------
def build_detector(detector, train_texts: list | None, train_labels: list | None):
    """The worker's detector: the configured object shipped by the driver, fit (a clone, so the
    driver's object stays unfitted) on the clean train texts when it is learnable."""
    if train_texts is None:
        return detector
    from sklearn.base import clone

    fitted = clone(detector)
    fitted.fit(list(train_texts), list(train_labels))
    return fitted


def warm_up_detector(detector) -> float | None:
    """Score :data:`WARMUP_PROBE` once with ``detector``, outside any timed block (its model load and first
    pass); its wall seconds, or None when this process has warmed ``detector`` up already. An error is left
    to the timed call."""
    return _warm_once(detector, [(detector.score, [WARMUP_PROBE])])


def score_texts(detector, texts: list[str]) -> list[dict]:
    """Score a batch in one timed call (the detector warmed up first, outside it: :func:`warm_up_detector`):
    per text ``score``, ``wall_s`` and ``cpu_s`` (the batch's divided by its texts) and ``warmup_s`` (on the
    first text of the batch that paid it, else None)."""
    import numpy as np

    warmup = warm_up_detector(detector)
    # timed with the clocks alone, not a CostMeter: its peak-RSS reset (clear_refs) would also reset the
    # process's high-water mark, which a benchmark of the whole run reads at its end
    with _no_gc():
        wall0, cpu0 = time.perf_counter(), time.process_time()
        scores = _checked_scores(detector, detector.score(list(texts)), len(texts))
        wall0, cpu0 = time.perf_counter() - wall0, time.process_time() - cpu0
    n = max(len(texts), 1)
    wall, cpu = wall0 / n, cpu0 / n
    return [{"score": s, "wall_s": wall, "cpu_s": cpu, "warmup_s": warmup if i == 0 else None}
            for i, s in enumerate(scores)]


def _checked_scores(detector, out, n: int) -> list:
    """A detector's answer for ``n`` texts as ``n`` floats, or a ``ValueError`` saying what it returned
    instead (a generator, a 2-D array, one score too few): the batch's failure, in its own words."""
    import numpy as np

    name = getattr(detector, "name", type(detector).__name__)
    if not hasattr(out, "__len__") and not isinstance(out, np.ndarray):
        raise ValueError(f"detector {name!r} returned a {type(out).__name__} for {n} texts; return a list or 1-D "
                         "array of one score per text")
    try:
        arr = np.asarray(out, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"detector {name!r} returned scores that are not numbers ({err})") from None
    if arr.shape != (n,):
        raise ValueError(f"detector {name!r} returned scores of shape {arr.shape} for {n} texts; expected one "
                         "score per text")
    return arr.tolist()


def detector_job(label: str, detector, train, resources: dict) -> Job:
    """``detector``: the configured (or already fitted) object; ``train``: the clean train rows to fit
    it on (None for a detector that is not learnable, or is fitted already)."""
    texts = None if train is None else train["generation"].tolist()
    labels = None if train is None else train["label"].tolist()
    kind = "model" if getattr(detector, "needs_model", True) else "task"
    return Job(f"score {label}", partial(build_detector, detector, texts, labels), score_texts,
               kind=kind, resources=dict(resources))


# -- quality ---------------------------------------------------------------------------------------
def ship_quality_meter(meter):
    """The job's state: the quality meter the driver built once for the run, shipped as it is."""
    return meter


def reader():
    """The normalizer that gives the text a reader sees: :class:`humanize.defenses.Normalize` at its defaults
    (look-alike letters folded, invisible and bidi characters deleted, whitespace collapsed, NFKC)."""
    from humanize.defenses.normalize import Normalize

    return Normalize()


def read_fingerprint() -> str:
    """What the "as read" quality columns depend on besides the meter's parameters, for the quality cache key."""
    from humanize.quality import AsRead

    return AsRead(reader()).key()


def quality_pairs(meter, pairs: list[tuple[str, str]]) -> list[dict]:
    """One quality record per (original, attacked) pair: every meter on the texts as they are, and the meters
    meant for the text as seen again on both texts as a reader sees them (:func:`reader`;
    :meth:`humanize.quality.QualityMeter.read_again`), in columns ``<column>_read``."""
    originals, attacked = [o for o, _ in pairs], [t for _, t in pairs]
    table = meter.score(originals, attacked)
    again = meter.read_again(reader())
    if again is not None:
        table = again.extend(table, originals, attacked)
    return table.to_dict(orient="records")


def quality_job(meter, resources: dict) -> Job:
    """``meter``: the run's quality meter, built once by the driver (its models load in the worker)."""
    return Job("quality", partial(ship_quality_meter, meter), quality_pairs, kind="model", resources=dict(resources))


# -- defenses --------------------------------------------------------------------------------------
def ship_defense(defense):
    """The job's state: the defense the driver built (a plug-in's included), shipped as it is."""
    return defense


def defend_texts(defense, texts: list[str]) -> list[str]:
    return [defense(t) for t in texts]


def defense_job(name: str, defense, resources: dict) -> Job:
    """``defense``: the run's defense, built once by the driver (:class:`~.context.DefensePlan`)."""
    return Job(f"defense {name}", partial(ship_defense, defense), defend_texts, kind="task",
               resources=dict(resources))
