"""A run's manifest: what ran, written when the run starts (issue #20 §3).

Every resolved component (its label, the name the configuration gave, the class as an import
path, where it came from: built in, an entry point, a plug-in file with its digest; its exact
parameters, fingerprint, store key and model identities), the dataset and the sample it drew,
the seeds, the package versions and the machine. ``report``, ``export``, ``ars``, ``card`` and
the documents page read it instead of rebuilding components from the stored configuration:
none of them needs a plug-in again to learn what a run did (only to compute something new, and
then :func:`with_recorded_plugins` loads the plug-in files the run recorded).
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
    from humanize._plugins import plugin_of
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
    entry["needs_model"] = bool(getattr(obj, "needs_model", True))
    return entry


def sample_digest(rows) -> str:
    """One digest of the sample: each row's id, label, split and text hash."""
    h = hashlib.blake2b(digest_size=16)
    for rid, label, split, th in sorted(zip(rows["id"].astype(str), rows["label"], rows["split"], rows["text_hash"])):
        h.update(f"{rid}|{label}|{split}|{th};".encode())
    return h.hexdigest()


def build_manifest(config, run_id: str, rows, attacks: list, detectors: list, quality_meter=None) -> dict:
    """The manifest of a run about to start.

    ``attacks``: ``(spec, label, attack, store key)``; ``detectors``: ``(spec, detector, store key)``.
    """
    from humanize import attacks as attack_registry
    from humanize import detectors as detector_registry
    from humanize._plugins import loaded_plugins
    from humanize.cost.machine import machine_description

    from .attack_spec import sampling_seed
    from ..data import _registry as dataset_registry

    attack_entries = []
    for spec, label, attack, key in attacks:
        entry = component_entry(attack, name=spec.name, registry=attack_registry)
        rate = getattr(attack, "rate", None)
        entry.update(label=label, key=key, attack_name=attack.name,
                     rate=float(rate) if isinstance(rate, (int, float)) and not isinstance(rate, bool) else None,
                     config=_jsonable({"name": spec.name, "params": spec.params, "rates": spec.rates,
                                       "label": spec.label}))
        attack_entries.append(entry)
    detector_entries = []
    for spec, detector, key in detectors:
        entry = component_entry(detector, name=spec.name, registry=detector_registry)
        entry.update(label=spec.base_label(), key=key, learnable=bool(getattr(detector, "learnable", False)),
                     config=_jsonable({"name": spec.name, "params": spec.params, "label": spec.label}))
        detector_entries.append(entry)
    defenses = []
    if config.defenses:
        from humanize import defenses as defense_registry

        for spec in config.defenses:
            defense = defense_registry.get(spec.name, **spec.params)
            defenses.append(component_entry(defense, name=spec.name, registry=defense_registry))
    counts = {f"{split}_{label}": int(((rows["split"] == split) & (rows["label"] == label)).sum())
              for split in ("train", "test") for label in ("human", "machine")}
    dataset = {"name": config.dataset, "origin": _origin(dataset_registry, config.dataset),
               "filters": _jsonable(config.filters), "n": config.n, "train_fraction": config.train_fraction,
               "sample": {**counts, "digest": sample_digest(rows)}}
    out = {"format": FORMAT, "run_id": run_id, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "attacks": attack_entries, "detectors": detector_entries, "defenses": defenses, "dataset": dataset,
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


def run_config(store, run_id: str | None = None):
    """(run_id, RunConfig) of a finished run in ``store`` (the latest one by default)."""
    from .config import config_from_stored

    runs = store.runs()
    done = runs[runs["status"] == "done"]
    if run_id is None:
        if done.empty:
            raise LookupError(f"no finished run in {store.path}")
        row = done.iloc[-1]
    else:
        match = done[done["run_id"] == run_id]
        if match.empty:
            raise LookupError(f"no finished run {run_id!r} in {store.path}")
        row = match.iloc[-1]
    return str(row["run_id"]), config_from_stored(json.loads(row["config"]))


def run_manifest(store, run_id: str | None = None) -> tuple[str, dict | None]:
    """(run_id, manifest) of a finished run in ``store`` (the latest one by default)."""
    runs = store.runs()
    done = runs[runs["status"] == "done"]
    if run_id is not None:
        done = done[done["run_id"] == run_id]
    if done.empty:
        raise LookupError(f"no finished run {'' if run_id is None else repr(run_id) + ' '}in {store.path}")
    row = done.iloc[-1]
    return str(row["run_id"]), stored_manifest(json.loads(row["config"]))


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


def check_inputs(store, run_id: str, rows, dataset: str) -> None:
    """The texts re-read from ``dataset`` for run ``run_id`` (``rows``, as :func:`~.engine.sample_rows`
    gives them) are the ones the run read: else a one-line :class:`~humanize.exceptions.DatasetChanged`
    naming how many differ and one of them. A run stored before inputs were recorded is not checked."""
    recorded = store.inputs(run_id)
    if not recorded:
        return
    now = dict(input_pairs(rows))
    differ = sorted(i for i in recorded.keys() | now.keys() if recorded.get(i) != now.get(i))
    if differ:
        from humanize.exceptions import DatasetChanged

        first = differ[0]
        why = ("no longer in the sample" if first not in now else "not in the run's sample" if first not in recorded
               else "its text changed")
        raise DatasetChanged(f"dataset {dataset!r} changed since run {run_id}: {len(differ)} text(s) differ from "
                             f"those the run scored, e.g. id {first!r} ({why}); rerun it to score the texts as they "
                             f"are now")


def ensure_dataset(config, manifest: dict | None):
    """``config``, after loading the plug-in files the run recorded when its dataset is not known here
    (a plug-in's loader): the documents of a run are re-read from its dataset, not stored."""
    from ..data import knows_dataset

    if manifest is not None and not knows_dataset(config.dataset):
        return with_recorded_plugins(config, manifest)
    return config


def with_recorded_plugins(config, manifest: dict | None):
    """``config``, after loading the plug-in files the run recorded (to compute something new with
    its components in a process that was not given them); a changed file is warned about."""
    if manifest is not None and manifest.get("plugins"):
        from humanize._plugins import reload_recorded

        reload_recorded(manifest["plugins"])
    return config
