"""The documents of a stored run: each attacked text with its exact edits, next to its original.

A run's result tables hold scores and figures; the texts live in the store's attack outputs,
keyed by each attack's provenance fingerprint. :func:`run_documents` reads those keys from the
run's manifest (:mod:`.manifest`: no attack is rebuilt, so a plug-in attack, or one whose
parameters are objects, needs nothing but the store) and reads the texts back, so exports and
the documents page of a robustness card show exactly what each detector scored. Runs stored
before manifests existed rebuild the keys from their configuration, as before.
"""

from __future__ import annotations

import pandas as pd

from humanize.text import text_hash
from ..runner.manifest import run_config
from ..runner.store import ResultsStore

DOCUMENT_COLUMNS = ("attack", "attack_name", "rate", "id", "domain", "original", "text", "edits", "input_hash",
                    "text_hash", "attack_key")


def run_documents(store: ResultsStore, run_id: str | None = None, *, clean: bool = True) -> pd.DataFrame:
    """One row per (attack, test machine document) of a finished run: original, attacked text and
    its edits (``[start, end, replacement]`` over the original). With ``clean`` the test human and
    machine texts come first with attack ``"none"`` and no edits. Texts an attack never produced
    (a run stopped early) are left out."""
    from humanize._registry import names_from_stored_data

    with names_from_stored_data():  # a database is data: the names it records import nothing by themselves
        return _run_documents(store, run_id, clean=clean)


def _run_documents(store: ResultsStore, run_id: str | None, *, clean: bool) -> pd.DataFrame:
    from ..runner.context import attack_key
    from ..runner.engine import CLEAN, sample_rows
    from ..runner.manifest import attack_rows, check_inputs, ensure_dataset, run_manifest

    run_id, config = run_config(store, run_id)
    _, manifest = run_manifest(store, run_id)
    rows = sample_rows(ensure_dataset(config, manifest))
    check_inputs(store, run_id, rows, config.dataset, manifest)  # the texts shown are the ones the run scored
    every = rows[rows["split"] == "test"]
    given = every[every["attack"].fillna(CLEAN) != CLEAN]  # the dataset's own attacked rows (attacks = "as-given")
    test = every[every["attack"].fillna(CLEAN) == CLEAN]
    # the texts the run's attacks rewrote: the machine ones, and the human ones too with attack_human
    machine = test if getattr(config, "attack_human", False) else test[test["label"] == "machine"]
    parts = []
    if clean:
        base = test[["id", "domain", "label", "generation", "text_hash"]].rename(columns={"generation": "original"})
        parts.append(base.assign(attack=CLEAN, attack_name=CLEAN, rate=float("nan"), text=base["original"],
                                 edits=[[] for _ in range(len(base))], input_hash=base["text_hash"], attack_key=""))
    if not given.empty:
        parts.append(_given_documents(given, test))
    hashes = machine["text_hash"].tolist()
    if manifest is not None:
        ran = attack_rows(manifest)
    else:  # a run stored before manifests: rebuild each attack to learn its key
        ran = []
        for spec in config.attacks:
            for label, params in spec.expand():
                attack = spec.build(config.seed, params, config.train_fraction)
                ran.append({"attack": label, "attack_name": spec.name,
                            "rate": float(getattr(attack, "rate", float("nan"))), "attack_key": attack_key(attack)})
    for item in ran:
        key = item["attack_key"]
        have = store.attack_outputs(key, hashes)
        frame = machine[machine["text_hash"].isin(have)]
        texts = [have[h]["output"] for h in frame["text_hash"]]
        parts.append(pd.DataFrame({
            "attack": item["attack"], "attack_name": item["attack_name"], "rate": item["rate"],
            "id": frame["id"].to_numpy(), "domain": frame["domain"].to_numpy(), "label": frame["label"].to_numpy(),
            "original": frame["generation"].to_numpy(), "text": texts,
            "edits": [have[h]["edits"] for h in frame["text_hash"]],
            "input_hash": frame["text_hash"].to_numpy(), "text_hash": [text_hash(t) for t in texts],
            "attack_key": key,
        }))
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=[*DOCUMENT_COLUMNS, "label"])
    return out[[*DOCUMENT_COLUMNS[:5], "label", *DOCUMENT_COLUMNS[5:]]]


def diff_edits(original: str, text: str) -> list[list]:
    """The edits ``[start, end, replacement]`` over ``original`` that give ``text`` (difflib's opcodes, no
    junk heuristic): for attacked texts a dataset ships without their edits (RAID's attacked rows)."""
    import difflib

    ops = difflib.SequenceMatcher(None, original, text, autojunk=False).get_opcodes()
    return [[i1, i2, text[j1:j2]] for tag, i1, i2, j1, j2 in ops if tag != "equal"]


def _given_documents(given: pd.DataFrame, clean: pd.DataFrame) -> pd.DataFrame:
    """The dataset's attacked rows as documents: each beside its clean source (``adv_source_id``), with
    the edits between them; a row whose source was not sampled is its own original."""
    source = dict(zip(clean["id"], clean["generation"]))
    originals = [source.get(s, t) for s, t in zip(given["adv_source_id"], given["generation"])]
    return pd.DataFrame({
        "attack": given["attack"].to_numpy(), "attack_name": given["attack"].to_numpy(), "rate": float("nan"),
        "id": given["id"].to_numpy(), "domain": given["domain"].to_numpy(), "label": given["label"].to_numpy(),
        "original": originals, "text": given["generation"].to_numpy(),
        "edits": [diff_edits(o, t) for o, t in zip(originals, given["generation"])],
        "input_hash": [text_hash(o) for o in originals], "text_hash": given["text_hash"].to_numpy(),
        "attack_key": "as-given",
    })
