"""The report counts the documents each attack left unchanged, by reason (issue #22)."""
import pandas as pd

from humanize.benchmarks import AttackSpec, RunConfig, build_report, run
from humanize.benchmarks.reporting.report import render_markdown
from humanize.benchmarks.reporting.tables import unchanged_table
from humanize.detectors import FunctionDetector


def _commas(texts):
    return [t.count(",") / max(len(t.split()), 1) for t in texts]


def test_run_reports_unchanged_documents_by_reason(tmp_path):
    det = FunctionDetector(_commas, name="commas", fn_version="1")
    result = run(RunConfig(dataset="demo", n=20, attacks=[AttackSpec("number_swap", rates=[0.0, 1.0])],
                           detectors=[det], db=str(tmp_path / "r.sqlite"), quality=False), progress=False)
    cost = result.tables["cost"]
    report = build_report(result.tables)
    table = report["unchanged"]
    zero, one = cost[cost["rate"] == 0.0], cost[cost["rate"] == 1.0]
    # rate 0: every document unchanged, those with numbers because none was drawn, the others for want of sites
    assert zero["unchanged"].notna().all()
    assert set(zero["unchanged"]) == {"no sites", "no site drawn at rate=0"}
    # rate 1: exactly the documents without numbers (no edit) are unchanged, and they have no sites
    assert (one["unchanged"].notna() == (one["n_edits"] == 0)).all() and one["n_edits"].gt(0).any()
    assert set(one["unchanged"].dropna()) == {"no sites"}
    by_reason = cost.dropna(subset=["unchanged"]).groupby(["attack", "unchanged"]).size()
    assert {(a, r): n for a, r, n in table.itertuples(index=False)} == by_reason.to_dict()
    assert report["cost"]["unchanged"].to_dict() == cost.groupby("attack")["unchanged"].count().to_dict()
    assert "unchanged" in render_markdown(report)


def test_unchanged_table_of_an_old_cost_table_is_empty():
    assert unchanged_table(pd.DataFrame({"attack": ["a"], "wall_s": [0.1]})).empty
    cost = pd.DataFrame({"attack": ["a", "a", "b"], "unchanged": ["no sites", None, "not recorded"]})
    assert unchanged_table(cost).to_dict("records") == [{"attack": "a", "reason": "no sites", "docs": 1},
                                                        {"attack": "b", "reason": "not recorded", "docs": 1}]
