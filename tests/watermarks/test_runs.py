"""Watermark detectors in the runner's other paths (issue #37): the report's and the plots' watermark figures
(the statistic per attack, detection against the number of tokens scored), `ars`, and the Ray executor
(the same tables as the local run)."""
import os

import numpy as np
import pandas as pd
import pytest

SECRET = "wm-runs-secret-51f0"


def _config(db, tok, executor="local"):
    from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig

    kgw = {"tokenizer": tok, "key": SECRET}
    return RunConfig(n=60, seed=2, db=str(db), quality=False, per_domain=False, n_boot=50, batch_size=4, fprs=[0.1, 0.05],
                     executor=executor, attacks=[AttackSpec("upper_lower"), AttackSpec("article_deletion")],
                     detectors=[DetectorSpec("kgw", kgw, label="kgw"),
                                DetectorSpec("kgw", {**kgw, "max_tokens": 16}, label="kgw@16"),
                                DetectorSpec("kgw", {**kgw, "max_tokens": 64}, label="kgw@64"),
                                DetectorSpec("synthid", {"tokenizer": tok, "key": SECRET, "depth": 4}),
                                DetectorSpec("surface_probe")])


@pytest.fixture(scope="module")
def local_run(wm_models, tmp_path_factory):
    from humanize.benchmarks.runner import run

    db = tmp_path_factory.mktemp("wm_local") / "r.sqlite"
    return run(_config(db, wm_models["tokenizer"]), progress=False), db


def test_the_report_shows_each_watermark_statistic_per_attack(local_run):
    from humanize.benchmarks.reporting.report import build_report, render_markdown

    result, _ = local_run
    report = build_report(result.tables, manifest=result.manifest)
    table = report["watermark_scores"]
    assert set(table.index.get_level_values("detector")) == {"kgw", "kgw@16", "kgw@64", "synthid"}  # no probe
    scores = result.tables["scores"]
    for (det, attack, label), row in table.iterrows():
        s = scores[(scores["detector"] == det) & (scores["attack"] == attack) & (scores["label"] == label)]["score"]
        assert row["n"] == len(s) > 0
        assert row["q50"] == pytest.approx(np.median(s)) and row["mean"] == pytest.approx(s.mean())
        if det == "synthid":
            assert row["statistic"] == "mean g" and np.isnan(row["share_z_gt_2.326"])
        else:
            assert row["statistic"] == "z" and row["share_z_gt_2.326"] == pytest.approx((s > 2.326).mean())
    # clean human texts, then the clean machine texts and each attack's machine texts
    kgw = table.loc["kgw"].index.tolist()
    assert kgw == [("none", "human"), ("none", "machine"), ("article_deletion", "machine"),
                   ("upper_lower", "machine")]
    assert table.loc[("kgw@16", "none", "human"), "max_tokens"] == 16
    assert "## watermark_scores" in render_markdown(report)


def test_the_report_gives_detection_against_the_tokens_scored(local_run):
    from humanize.benchmarks.reporting.report import build_report

    result, _ = local_run
    report = build_report(result.tables, manifest=result.manifest)
    assert "watermark_scores" not in build_report(result.tables)  # no manifest: no way to tell the detectors
    tokens = report["watermark_tokens_tpr_at_fpr_0.1"]
    assert set(tokens.index.get_level_values("watermark")) == {"kgw"}  # synthid has one length only
    m = result.metrics
    for (group, attack, t), row in tokens.iterrows():
        det = {"all": "kgw", 16: "kgw@16", 64: "kgw@64"}[t]
        assert row["detector"] == det
        want = m[(m["detector"] == det) & (m["attack"] == attack) & (m["metric"] == "tpr")]["value"]
        assert row["tpr"] == pytest.approx(float(want.iloc[0]), nan_ok=True)
        assert row["tpr_lo"] <= row["tpr"] <= row["tpr_hi"] or np.isnan(row["tpr"])
    assert [t for _, a, t in tokens.index if a == "none"] == [16, 64, "all"]
    assert "watermark_tokens_auroc" in report


def test_plots_draw_the_watermark_figures_with_captions(local_run, tmp_path):
    from humanize.benchmarks.reporting.plots import plot_all

    result, _ = local_run
    paths = plot_all(result.tables, tmp_path, formats=("png",), manifest=result.manifest)
    names = {p.name for p in paths}
    assert {"watermark_scores.png", "watermark_tokens.png"} <= names
    captions = (tmp_path / "captions.md").read_text()
    assert "`watermark_scores`" in captions and "`watermark_tokens`" in captions
    from humanize.benchmarks.reporting.plots import figure_captions
    from humanize.benchmarks.reporting.watermark import watermark_score_figure, watermark_tokens_figure

    # no manifest: no way to tell the watermark detectors, nothing drawn
    assert watermark_score_figure(result.tables, None) is None and watermark_tokens_figure(result.tables, None) is None
    assert "watermark_scores" not in figure_captions(result.tables)


def test_report_and_plot_commands_show_them_and_write_no_key(local_run, tmp_path, capsys):
    from humanize.cli.main import main

    _, db = local_run
    assert main(["report", "--db", str(db), "--out", str(tmp_path / "rep")]) == 0
    assert main(["plot", "--db", str(db), "--out", str(tmp_path / "plots"), "--format", "png"]) == 0
    out = capsys.readouterr().out
    assert "watermark_scores" in out and "watermark_tokens_tpr_at_fpr_0.1" in out
    assert (tmp_path / "rep" / "watermark_scores.csv").is_file() and (tmp_path / "plots" / "watermark_tokens.png").is_file()
    for root, _, files in os.walk(tmp_path):
        for f in files:
            assert SECRET.encode() not in open(os.path.join(root, f), "rb").read(), f


def test_ars_scores_a_watermark_detector(wm_models, tmp_path, capsys):
    from humanize.cli.main import main

    tok = wm_models["tokenizer"]
    assert main(["ars", "--dataset", "demo", "--detector", f"kgw:tokenizer={tok},key={SECRET}", "--max-per-class",
                 "12", "--n-boot", "0", "--out", str(tmp_path / "ars"), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out and "threshold (kgw" in out
    table = pd.read_csv(tmp_path / "ars" / "reliance.csv")
    overall = table[table["subset"] == "overall"]
    assert len(overall) == 1 and np.isfinite(overall["flip"]).all()
    assert SECRET.encode() not in (tmp_path / "ars" / "reliance.csv").read_bytes()


def test_the_ray_executor_gives_the_local_tables(local_run, wm_models, tmp_path):
    import ray  # the "ray" extra

    from humanize.benchmarks.runner import run

    expected, _ = local_run
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 2**20,
             runtime_env={"env_vars": {"PYTHONPATH": root, "OMP_NUM_THREADS": "1"}})
    try:
        got = run(_config(tmp_path / "r.sqlite", wm_models["tokenizer"], executor="ray"), progress=False)
    finally:
        ray.shutdown()
    assert not got.failures and got.run_id == expected.run_id
    for name in ("metrics", "scores"):
        pd.testing.assert_frame_equal(expected.tables[name], got.tables[name])


def test_the_quality_stage_scores_the_scrubbing_attacks(wm_models, tmp_path):
    """Each scrubbing attack's figures stand beside its meaning and validity figures, as for every attack."""
    from humanize.benchmarks.reporting.report import build_report
    from humanize.benchmarks.runner import run
    from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig

    tok, lm = wm_models["tokenizer"], wm_models["peaked"]
    attacks = [AttackSpec("copy_paste", {"rate": 0.5}),
               AttackSpec("self_info_rewrite", {"scorer": lm, "refill": wm_models["flat"], "top_k": 50}),
               AttackSpec("watermark_stealing", {"watermarked": ["The big dog ran to the big house."] * 6,
                                                 "tokenizer": tok, "context": "none", "rate": 1.0})]
    cfg = RunConfig(n=8, seed=1, db=str(tmp_path / "q.sqlite"), n_boot=0, per_domain=False, attacks=attacks,
                    detectors=[DetectorSpec("kgw", {"tokenizer": tok, "key": SECRET})], quality=True, quality_lm=lm,
                    quality_params={"meters": ["perplexity", "rouge_l", "edit_rate", "validity"]})
    result = run(cfg, progress=False)
    quality = result.tables["quality"]
    assert {"copy_paste", "self_info_rewrite", "watermark_stealing"} <= set(quality["attack"])
    for attack, rows in quality.groupby("attack"):
        assert np.isfinite(rows["rouge_l"]).all() and np.isfinite(rows["perplexity_attacked"]).all(), attack
        assert np.isfinite(rows["word_edit_rate"]).all() and (rows["rewritten_words"] >= 0).all(), attack
    pasted = quality[quality["attack"] == "copy_paste"]
    assert (pasted["rouge_l"] < 1).all()  # the machine text is half of each diluted document
    table = build_report(result.tables, manifest=result.manifest)["quality"]
    assert {"copy_paste", "self_info_rewrite", "watermark_stealing"} <= set(table.index.get_level_values(0))


def test_the_card_of_a_watermark_detector_shows_its_figures(local_run):
    from humanize.benchmarks.reporting.card import robustness_cards

    result, db = local_run
    cards = robustness_cards(str(db))
    kgw = cards["kgw"]
    assert kgw.watermark is not None and set(kgw.watermark.index.get_level_values("detector")) == {"kgw"}
    assert list(kgw.watermark_tokens.index.get_level_values("tokens")[:3]) == [16, 64, "all"]
    md, page = kgw.to_markdown(), kgw.to_html()
    assert "## Watermark statistic per attack (z)" in md and "## Detection against tokens scored" in md
    assert "Watermark statistic per attack" in page
    assert "Watermark statistic per attack (mean g)" in cards["synthid"].to_markdown()
    assert cards["surface_probe"].watermark is None and "Watermark" not in cards["surface_probe"].to_markdown()
    assert SECRET not in md + page
