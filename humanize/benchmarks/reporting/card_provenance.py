"""What a robustness card says about where its figures come from: the run, the detector, the attacks and the
package versions (recorded in the run's manifest where it has one, else rebuilt here)."""
from __future__ import annotations

__all__ = ["VERSIONED", "provenance", "detector_provenance", "recorded_detector", "recorded_attacks",
           "attack_provenance", "versions"]

#: the packages whose versions a card lists
VERSIONED = ("numpy", "pandas", "scipy", "scikit-learn", "torch", "transformers", "sentence-transformers")


def versions() -> dict:
    """The versions of the packages the figures depend on, where the card is made (as a manifest records them)."""
    from ..runner.manifest import package_versions

    return package_versions(("humanize-bench", *VERSIONED))


def detector_provenance(spec) -> dict:
    from humanize import detectors

    out = {"name": spec.name, "params": dict(spec.params)}
    try:
        det = detectors.get(spec.name, **spec.params)
        prov = det.provenance()
        out["fingerprint"] = det.fingerprint()
        out["class"] = prov.get("class")
        out["version"] = prov.get("version")
        models = {k: v["__model__"] for k, v in prov.get("params", {}).items() if isinstance(v, dict)
                  and "__model__" in v}
        if models:
            out["models"] = models
    except Exception as err:  # noqa: BLE001 - a model missing here must not stop the card
        out["fingerprint"] = f"not computed here ({type(err).__name__}: {' '.join(str(err).split())[:160]})"
    return out


def attack_provenance(config) -> list[dict]:
    from ..runner.context import attack_key

    out = []
    for spec in config.attacks:
        for label, params in spec.expand():
            rec = {"attack": label, "name": spec.name, "params": params}
            try:
                rec["key"] = attack_key(spec.build(config.seed, params, config.train_fraction))
            except Exception as err:  # noqa: BLE001 - e.g. a model-based attack whose model is missing here
                rec["key"] = f"not computed here ({type(err).__name__})"
            out.append(rec)
    return out


def recorded_detector(entry: dict) -> dict:
    """A detector's provenance as the run's manifest recorded it (nothing rebuilt or imported)."""
    out = {"name": entry["label"], "params": entry.get("config", {}).get("params", {}), "class": entry.get("class"),
           "origin": entry.get("origin"), "version": entry.get("version"), "fingerprint": entry.get("fingerprint")}
    if entry.get("plugin"):
        out["plugin"] = entry["plugin"]
    if entry.get("models"):
        out["models"] = entry["models"]
    return out


def recorded_attacks(manifest: dict) -> list[dict]:
    out = []
    for e in manifest.get("attacks", []):
        rec = {"attack": e["label"], "name": e.get("config", {}).get("name", e["name"]), "class": e.get("class"),
               "origin": e.get("origin"), "params": e.get("params"), "key": e.get("key")}
        if e.get("plugin"):
            rec["plugin"] = e["plugin"]
        out.append(rec)
    return out


def provenance(run_id: str, config, tables: dict, manifest: dict | None = None) -> dict:
    out = {"run_id": run_id, "dataset": config.dataset, "filters": dict(config.filters), "n": config.n,
           "seed": config.seed, "train_fraction": config.train_fraction, "fprs": list(config.fprs),
           "per_domain": config.per_domain, "n_boot": config.n_boot, "confidence": config.confidence,
           "protocol": getattr(config, "protocol", "humanize")}
    defenses = getattr(config, "defenses", None)
    if defenses:
        out["defenses"] = [getattr(d, "name", d) for d in defenses]
    if config.quality:
        q = {"lm": config.quality_lm or "default", "encoder": config.quality_encoder or "default",
             "params": dict(config.quality_params)}
        quality = tables.get("quality")
        for col in ("perplexity_model", "cosine_model"):
            if quality is not None and col in quality.columns and quality[col].notna().any():
                q[col] = sorted({str(v) for v in quality[col].dropna()})
        out["quality"] = q
    cost = tables.get("cost")
    if cost is not None and "machine" in cost.columns:
        out["machines"] = sorted({str(m) for m in cost["machine"].dropna() if str(m)})
    if manifest is not None:
        out["attacks"] = recorded_attacks(manifest)
        out["versions (where the run ran)"] = manifest.get("versions", {})
        out["machine (where the run ran)"] = manifest.get("machine")
    else:
        out["attacks"] = attack_provenance(config)
    out["versions (where the card was made)"] = versions()
    return out
