"""The Artifact Reliance Score of a stored run's detectors, written into the run (paper §5.1, §7.2).

:func:`reliance_for_run` rebuilds a finished run's documents from its stored configuration
(the same sample and train/test split as the run), computes :func:`artifact_reliance` for each
detector on the test documents (learnable detectors fitted on the run's train documents, as the
runner fits them) and stores one table, ``reliance``, in the run (``ResultsStore.add_run_table``),
where the robustness card reads it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from humanize._split import sampling_seed
from humanize.detectors.base import Detector
from humanize.exceptions import ConfigError

from ..runner.config import DetectorSpec
from .reliance import TABLE_COLUMNS, RelianceResult, artifact_reliance

__all__ = ["reliance_for_run"]


def _detectors(detectors, config) -> list[Detector]:

    specs = config.detectors if detectors is None else detectors
    if isinstance(specs, (str, Detector, DetectorSpec)):
        specs = [specs]
    out = []
    for spec in specs:
        if isinstance(spec, Detector):
            out.append(spec)
            continue
        if isinstance(spec, str):
            spec = DetectorSpec(spec)
        if not isinstance(spec, DetectorSpec):
            raise TypeError(f"reliance_for_run: detectors must be names, DetectorSpecs or Detectors, "
                            f"got {type(spec).__name__}")
        out.append(spec.build(config.device))  # as the runner builds it
    if not out:
        raise ValueError("reliance_for_run: no detector to score (the run has none and none was given)")
    return out


class _Cached(Detector):
    """A fitted detector that answers texts the run already scored from the store (same scores: the
    store keys them by the detector's fingerprint and, for learnable ones, its training set)."""

    def __init__(self, detector: Detector, known: dict):
        self.detector = detector
        self.known = known
        self.name = detector.name

    def score(self, texts):
        texts = list(texts)
        todo = sorted({t for t in texts if t not in self.known}, key=len)
        fresh = dict(zip(todo, np.asarray(self.detector.score(todo), dtype=float).tolist())) if todo else {}
        return np.array([self.known[t] if t in self.known else fresh[t] for t in texts], dtype=np.float64)


def _with_cached_scores(det: Detector, db, test: pd.DataFrame, train: pd.DataFrame, run_id: str) -> Detector:
    """``det`` fitted on the run's train documents (learnable ones), reusing the run's stored scores."""
    from ..runner.context import detector_key
    from ..runner.store import ResultsStore

    fit = train if det.learnable else None
    if fit is not None:
        if fit["label"].nunique() < 2:
            raise ConfigError(f"detector {det.name!r} must be fit, but run {run_id!r} has no train documents of "
                              "both classes")
        det = type(det)(**det.get_params(deep=False))  # never refit the caller's object
        det.fit(fit["generation"].tolist(), fit["label"].tolist())
    with ResultsStore(db, readonly=True) as store:
        have = store.scores(detector_key(det, fit), test["text_hash"].tolist())
    known = {t: have[h] for t, h in zip(test["generation"], test["text_hash"]) if h in have}
    return _Cached(det, known)


def reliance_for_run(db, run_id: str | None = None, detectors=None, *, by=("domain",), fpr: float | None = None,
                     threshold=None, per_domain: bool | None = None, n_boot: int | None = None,
                     confidence: float | None = None, max_per_class: int | None = 500,
                     store_table: bool = True) -> RelianceResult:
    """ARS of each detector of finished run ``run_id`` (latest by default) in results database ``db``.

    ``detectors``: names, :class:`DetectorSpec` or :class:`Detector` objects (default: the run's).
    Arguments left ``None`` take the run's values: ``fpr`` its first FPR, ``per_domain``,
    ``n_boot`` and ``confidence`` its own; the seed is the run's. The table (column ``detector``
    first, then :data:`~humanize.benchmarks.audits.reliance.TABLE_COLUMNS`) is stored in the run as
    ``reliance`` unless ``store_table=False``.
    """
    from ..runner.manifest import run_config
    from ..runner.engine import sample_rows
    from ..runner.store import ResultsStore

    if not Path(db).exists():
        raise FileNotFoundError(f"no results database at {str(db)!r}")
    from ..runner.manifest import ensure_dataset, run_manifest, with_recorded_plugins

    from ..runner.manifest import check_inputs

    from humanize._registry import names_from_stored_data

    with ResultsStore(db, readonly=True) as store, names_from_stored_data():
        run_id, config = run_config(store, run_id)
        manifest = run_manifest(store, run_id)[1]
        # the ARS is computed anew: a plug-in detector (or dataset) the run used must be given with --plugin
        # (a database never loads code by itself; the stored names resolve only to what the user loaded)
        if detectors is None and manifest is not None:  # the run's detectors: the plug-ins they came from
            with_recorded_plugins(config, [d["plugin"] for d in manifest.get("detectors", []) if d.get("plugin")],
                                  f"the ARS of run {run_id}'s detectors")
        rows = sample_rows(ensure_dataset(config, manifest))
        check_inputs(store, run_id, rows, config.dataset, manifest)
    test, train = rows[rows["split"] == "test"], rows[rows["split"] == "train"]
    if test.empty:
        raise ConfigError(f"run {run_id!r} has no test documents to compute the ARS on")
    options = dict(
        by=by, threshold=threshold, max_per_class=max_per_class, seed=sampling_seed(config.seed),
        fpr=config.fprs[0] if fpr is None else fpr,
        per_domain=config.per_domain if per_domain is None else per_domain,
        n_boot=config.n_boot if n_boot is None else n_boot,
        confidence=config.confidence if confidence is None else confidence,
    )
    results = []
    if detectors is None:  # the run's own detectors: names a database recorded (nothing imported by itself)
        with names_from_stored_data():
            dets = _detectors(detectors, config)
    else:  # named by the caller (the command line): resolved as any name the user gives
        dets = _detectors(detectors, config)
    for det in dets:
        results.append(artifact_reliance(_with_cached_scores(det, db, test, train, run_id), test, **options))
    table = pd.concat([r.table for r in results], ignore_index=True)[list(TABLE_COLUMNS)]
    documents = pd.concat([r.documents for r in results], ignore_index=True)
    rules = sorted({r.threshold_rule for r in results})
    rule = rules[0] if len(rules) == 1 else "; ".join(f"{r.table['detector'].iloc[0]}: {r.threshold_rule}"
                                                      for r in results)
    if store_table:
        with ResultsStore(db) as store:
            store.add_run_table(run_id, "reliance", table)
    return RelianceResult(table, documents, rule)
