"""A run's manifest: what ran, written when the run starts (issue #20 §3).

Every resolved component (its label, the name the configuration gave, the class as an import
path, where it came from: built in, an entry point, a plug-in file with its digest; its exact
parameters, fingerprint, store key and model identities), the dataset and the sample it drew,
the seeds, the package versions and the machine. ``report``, ``export``, ``ars``, ``card`` and
the documents page read it instead of rebuilding components from the stored configuration:
none of them needs a plug-in again to learn what a run did (only to compute something new, and
then the user gives the plug-in files with ``--plugin``: a manifest's records are never imported,
only compared with the files given; :func:`with_recorded_plugins`).
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import sys
from datetime import datetime, timezone

FORMAT = 1
#: Package versions a manifest records (the ones whose changes move scores or texts).
VERSIONED = ("humanize-bench", "torch", "transformers", "sentence-transformers", "scikit-learn", "numpy", "pandas",
             "ray")


def package_versions(names=VERSIONED) -> dict:
    """``{package: version}`` of the installed ``names`` (absent ones left out), with humanize's own."""
    from importlib import metadata

    import humanize

    out = {"humanize": humanize.__version__}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _versions() -> dict:
    return {**package_versions(), "python": platform.python_version()}


def _origin(registry, name: str) -> str:
    try:
        return registry.origin(name)
    except ValueError:
        return "object"


def _models(provenance: dict) -> dict:
    return {k: v["__model__"] for k, v in provenance.get("params", {}).items()
            if isinstance(v, dict) and "__model__" in v}


def component_entry(obj, *, name: str, registry) -> dict:
    """A component as a manifest records it (class path, origin, plug-in, provenance, fingerprint)."""
    from humanize.plugins import plugin_of
    from humanize._registry import class_path

    prov = obj.provenance()
    module = type(obj).__module__
    entry = {"name": name, "class": class_path(obj), "origin": _origin(registry, name),
             "version": prov.get("version"), "params": prov.get("params", {}), "fingerprint": obj.fingerprint()}
    plugin = plugin_of(module)
    if plugin is not None:
        entry["plugin"] = plugin
    models = _models(prov)
    if models:
        entry["models"] = models
    if prov.get("runtime"):  # the device type and dtype its models compute in (dtype="auto" resolved, issue #38)
        entry["runtime"] = dict(prov["runtime"])
    entry["needs_model"] = bool(getattr(obj, "needs_model", True))
    return entry


def sample_digest(rows) -> str:
    """One digest of the sample: each row's id, label, split and text hash."""
    h = hashlib.blake2b(digest_size=16)
    for rid, label, split, th in sorted(zip(rows["id"].astype(str), rows["label"], rows["split"], rows["text_hash"])):
        h.update(f"{rid}|{label}|{split}|{th};".encode())
    return h.hexdigest()


def build_manifest(config, run_id: str, rows, attacks, detectors, defenses=(), quality_meter=None) -> dict:
    """The manifest of a run about to start, from its plans (:mod:`.context`): ``attacks``, ``detectors`` and
    ``defenses``, its :class:`~.context.AttackPlan`, :class:`~.context.DetectorPlan` and
    :class:`~.context.DefensePlan` records (the very objects its jobs ship); ``quality_meter``: its meter or None.
    """
    from humanize import attacks as attack_registry
    from humanize import detectors as detector_registry
    from humanize.plugins import loaded_plugins
    from humanize.cost.machine import machine_description

    from humanize._split import sampling_seed
    from ..data import _registry as dataset_registry

    attack_entries = []
    for plan in attacks:
        spec, attack = plan.spec, plan.attack
        entry = component_entry(attack, name=spec.name, registry=attack_registry)
        rate = getattr(attack, "rate", None)
        entry.update(label=plan.label, key=plan.key, attack_name=attack.name,
                     rate=float(rate) if isinstance(rate, (int, float)) and not isinstance(rate, bool) else None,
                     config=_jsonable({"name": spec.name, "params": spec.params, "rates": spec.rates,
                                       "label": spec.label}))
        attack_entries.append(entry)
    detector_entries = []
    for plan in detectors:
        spec, detector = plan.spec, plan.detector
        entry = component_entry(detector, name=spec.name, registry=detector_registry)
        entry.update(label=plan.label, key=plan.key, learnable=bool(getattr(detector, "learnable", False)),
                     config=_jsonable({"name": spec.name, "params": spec.params, "label": spec.label}))
        detector_entries.append(entry)
    defense_entries = []
    if defenses:
        from humanize import defenses as defense_registry

        defense_entries = [component_entry(plan.defense, name=plan.spec.name, registry=defense_registry)
                           for plan in defenses]
    counts = {f"{split}_{label}": int(((rows["split"] == split) & (rows["label"] == label)).sum())
              for split in ("train", "test") for label in ("human", "machine")}
    dataset = {"name": config.dataset, "origin": _origin(dataset_registry, config.dataset),
               "filters": _jsonable(config.filters), "n": config.n, "train_fraction": config.train_fraction,
               "sample": {**counts, "digest": sample_digest(rows)}}
    out = {"format": FORMAT, "run_id": run_id, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "attacks": attack_entries, "detectors": detector_entries, "defenses": defense_entries, "dataset": dataset,
           "seeds": {"seed": config.seed, "sampling_seed": sampling_seed(config.seed)},
           "plugins": loaded_plugins(), "versions": _versions(), "machine": machine_description(),
           "command": " ".join(sys.argv[:1] + [a for a in sys.argv[1:]])[:2000]}
    if quality_meter is not None:
        out["quality"] = {"class": type(quality_meter).__qualname__, "fingerprint": quality_meter.fingerprint(),
                          "params": quality_meter.provenance().get("params", {})}
    return out


def _jsonable(value):
    """A configuration value as JSON (objects by their repr: the provenance has them exactly)."""
    return json.loads(json.dumps(value, default=repr))


def stored_manifest(stored_config: dict) -> dict | None:
    """The manifest in a run's stored configuration (None for runs stored before manifests)."""
    manifest = stored_config.get("manifest") if isinstance(stored_config, dict) else None
    return manifest if isinstance(manifest, dict) and manifest.get("format") else None


def _finished_run(store, run_id: str | None) -> tuple[str, dict]:
    """(run_id, stored configuration) of a finished run (the latest by default), its row's checksum
    verified: every command that reads a run reads it through here."""
    runs = store.runs()
    done = runs[runs["status"] == "done"]
    if run_id is not None:
        done = done[done["run_id"] == run_id]
    if done.empty:
        raise LookupError(f"no finished run {'' if run_id is None else repr(run_id) + ' '}in {store.path}")
    found = str(done.iloc[-1]["run_id"])
    return found, store.run_config_data(found)


def run_config(store, run_id: str | None = None):
    """(run_id, RunConfig) of a finished run in ``store`` (the latest one by default), verified."""
    from .config import config_from_stored

    found, data = _finished_run(store, run_id)
    return found, config_from_stored(data)


def run_manifest(store, run_id: str | None = None) -> tuple[str, dict | None]:
    """(run_id, manifest) of a finished run in ``store`` (the latest one by default), verified."""
    found, data = _finished_run(store, run_id)
    return found, stored_manifest(data)


def attack_rows(manifest: dict) -> list[dict]:
    """(label, attack name, rate, store key) of each attack the run ran, from its manifest."""
    out = []
    for entry in manifest.get("attacks", []):
        rate = entry.get("rate")
        out.append({"attack": entry["label"], "attack_name": entry.get("config", {}).get("name", entry["name"]),
                    "rate": math.nan if rate is None else float(rate), "attack_key": entry["key"]})
    return out


def input_pairs(rows) -> list[tuple[str, str]]:
    """``(row id, text hash)`` of every sampled row (train and test): what a run records it read."""
    return list(zip(rows["id"].astype(str), rows["text_hash"]))


def check_inputs(store, run_id: str, rows, dataset: str, manifest: dict | None = None) -> None:
    """The texts re-read from ``dataset`` for run ``run_id`` (``rows``, as :func:`~.engine.sample_rows`
    gives them) are the ones the run read: else a one-line :class:`~humanize.exceptions.DatasetChanged`
    naming how many differ and one of them. Checked against the run's recorded inputs and, with
    ``manifest``, against its sample digest (so a deleted inputs table hides nothing). A run stored
    before either was recorded is not checked."""
    from humanize.exceptions import DatasetChanged

    recorded = store.inputs(run_id)
    if recorded:
        now = dict(input_pairs(rows))
        differ = sorted(i for i in recorded.keys() | now.keys() if recorded.get(i) != now.get(i))
        if differ:
            first = differ[0]
            why = ("no longer in the sample" if first not in now else "not in the run's sample"
                   if first not in recorded else "its text changed")
            raise DatasetChanged(f"dataset {dataset!r} changed since run {run_id}: {len(differ)} text(s) differ from "
                                 f"those the run scored, e.g. id {first!r} ({why}); rerun it to score the texts as "
                                 f"they are now")
    sample = ((manifest or {}).get("dataset") or {}).get("sample") if isinstance(manifest, dict) else None
    digest = sample.get("digest") if isinstance(sample, dict) else None
    if isinstance(digest, str) and sample_digest(rows) != digest:
        missing = "" if recorded else " (and the run's record of its inputs is missing from the database)"
        raise DatasetChanged(f"dataset {dataset!r} changed since run {run_id}: its sample's digest differs from the "
                             f"one the run recorded{missing}; rerun it to score the texts as they are now")


def ensure_dataset(config, manifest: dict | None):
    """``config``, when its dataset can be read here: a dataset the run read through a plug-in's
    loader needs that plug-in given with ``--plugin`` (nothing the run recorded is imported by
    itself: :func:`humanize.plugins.missing_plugins` says which file)."""
    from ..data import knows_dataset

    if not knows_dataset(config.dataset):
        if manifest is not None and manifest.get("plugins"):
            from humanize.plugins import missing_plugins

            missing_plugins(manifest["plugins"], f"re-reading the documents of dataset {config.dataset!r}")
        from humanize.exceptions import PluginError

        raise PluginError(f"dataset {config.dataset!r} of this run is not known here (a plug-in's or an installed "
                          "package's loader); pass --plugin FILE with the file that defines it")
    return config


def with_recorded_plugins(config, records, needed_for: str = "computing this"):
    """``config``, once the plug-in files in ``records`` (a manifest, for all it recorded, or a list of
    its plug-in records) are loaded *by the user* (``--plugin``): a recorded file is never imported
    because the run recorded it; a missing one is named in one line
    (:func:`humanize.plugins.missing_plugins`)."""
    if isinstance(records, dict):
        records = records.get("plugins")
    if records:
        from humanize.plugins import missing_plugins

        missing_plugins(records, needed_for)
    return config
