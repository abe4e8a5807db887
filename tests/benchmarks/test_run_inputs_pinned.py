"""A run pins the content of every text it read (issue #22): a later command that re-reads the texts
from the dataset fails in one line when they changed, instead of showing texts the run never scored."""
import json

import pytest

from humanize.benchmarks.reporting.documents import run_documents
from humanize.benchmarks.runner import run
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner.store import ResultsStore
from humanize.exceptions import DatasetChanged
from humanize.text import text_hash

TEXTS = [("h%d" % i, "human", f"I walked to the shop number {i} and it was closed, sadly.") for i in range(8)] + \
        [("m%d" % i, "machine", f"In conclusion, item {i} is a significant and important aspect.") for i in range(8)]


def _write(path, texts):
    path.write_text("".join(json.dumps({"id": i, "label": lab, "text": t}) + "\n" for i, lab, t in texts))


def test_documents_of_a_run_fail_when_its_dataset_changed(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    _write(data, TEXTS)
    cfg = RunConfig(dataset="file", filters={"path": str(data), "id_column": "id"}, n=None, seed=1, quality=False,
                    n_boot=0, db=str(tmp_path / "r.sqlite"), attacks=[AttackSpec("homoglyph")],
                    detectors=[DetectorSpec("surface_probe")])
    result = run(cfg, progress=False)
    with ResultsStore(cfg.db, readonly=True) as store:
        recorded = store.inputs(result.run_id)
        assert recorded == {i: text_hash(t) for i, _, t in TEXTS}  # every text read, train and test
        assert len(run_documents(store)) > 0  # unchanged: fine
    changed = [(i, lab, t + " Edited." if i in ("m3", "h5") else t) for i, lab, t in TEXTS]
    _write(data, changed)
    with ResultsStore(cfg.db, readonly=True) as store:
        with pytest.raises(DatasetChanged, match=rf"^dataset 'file' changed since run {result.run_id}: 2 text\(s\) "
                                                 r"differ from those the run scored, e.g. id 'h5' \(its text changed\)"):
            run_documents(store)
    from humanize.cli.main import main

    assert main(["export", "--db", cfg.db, "--format", "csv", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "dataset 'file' changed since run" in err and "e.g. id 'h5'" in err
    second = run(cfg, progress=False)  # a rerun scores the texts as they are now, and records them
    with ResultsStore(cfg.db, readonly=True) as store:
        assert store.inputs(second.run_id)["m3"] == text_hash(changed[11][2])
        assert len(run_documents(store)) > 0
