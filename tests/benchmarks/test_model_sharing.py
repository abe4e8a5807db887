"""Attack models that a detector or the perplexity meter also scores with (issue #19 §4): found from the
components' provenance (no model loaded), warned about by the runner and listed in the report."""
import shutil
import warnings

import pytest

from humanize import attacks, detectors
from humanize.benchmarks.runner.config import DEMO_DETECTORS, AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner.model_sharing import component_models, shared_models
from humanize.quality import QualityMeter

SMOL = "smollm2-135m-instruct"


def test_a_paraphrase_with_smollm2_against_log_likelihood_is_named_with_its_parameter_and_model():
    found = shared_models({"paraphrase(smol)": attacks.get("paraphrase", paraphraser=SMOL)},
                          {"log_likelihood": detectors.get("log_likelihood"), "tfidf_lr": detectors.get("tfidf_lr")})
    assert len(found) == 1
    s = found[0]
    assert (s.attack, s.where, s.model, s.scorers) == ("paraphrase(smol)", "paraphraser.model", SMOL,
                                                         ("detector log_likelihood",))
    line = s.message()
    assert "\n" not in line and "'paraphrase(smol)'" in line and SMOL in line and "detector log_likelihood" in line


def test_the_default_rewriters_share_no_model_with_the_default_detectors_and_meter():
    defaults = {name: attacks.get(name) for name in ("paraphrase", "prompt", "qpa_prompt", "toblend", "qpa_toblend")}
    defaults["recursion"] = attacks.get("recursion", paraphraser=attacks.get("paraphrase"))
    defaults["raft"] = attacks.get("raft")
    defaults["blend"] = attacks.get("blend", attacks=[attacks.get("paraphrase"), attacks.get("homoglyph")])
    dets = {name: detectors.get(name) for name in [*DEMO_DETECTORS, "binoculars"]}
    assert shared_models(defaults, dets, QualityMeter()) == []
    # ... while the pairing before issue #19 shares SmolLM2 with every metric detector and the perplexity meter
    old = {"toblend(old)": attacks.get("toblend", models=(SMOL, "gemma-3-270m")),
           "prompt(old)": attacks.get("prompt", llm=SMOL)}
    found = shared_models(old, dets, QualityMeter())
    assert {(s.attack, s.where) for s in found} == {("toblend(old)", "models[0]"), ("prompt(old)", "llm.model")}
    assert all("the perplexity meter" in s.scorers and "detector fast_detectgpt" in s.scorers for s in found)


def test_nested_attacks_aliases_and_hub_ids_and_directories_resolve_to_one_identity(tmp_path):
    hub = "HuggingFaceTB/SmolLM2-135M-Instruct"
    blend = attacks.get("blend", attacks=[attacks.get("homoglyph"), attacks.get("paraphrase", paraphraser=hub)])
    found = shared_models({"blend": blend}, {"log_rank": detectors.get("log_rank", model=SMOL)})
    assert [(s.where, s.model) for s in found] == [("attacks[1].paraphraser.model", hub)]
    # QPA builds its attack from a name: the wrapped attack's models count (here Synonym's ranking LM)
    qpa = attacks.get("qpa", attack={"name": "synonym", "lm": hub})
    assert [s.where for s in shared_models({"qpa": qpa}, {"lrr": detectors.get("lrr")})] == ["attack.lm"]
    one, two = tmp_path / "a", tmp_path / "b"
    one.mkdir()
    (one / "config.json").write_text('{"model_type": "llama"}')
    shutil.copytree(one, two)
    para = attacks.get("paraphrase", paraphraser=str(one))
    assert shared_models({"p": para}, {"entropy": detectors.get("entropy", model=str(two))})[0].where == \
        "paraphraser.model"
    (two / "config.json").write_text('{"model_type": "qwen2"}')  # other weights: other model
    assert shared_models({"p": para}, {"entropy": detectors.get("entropy", model=str(two))}) == []


def test_a_target_detector_is_the_threat_model_and_the_meters_encoder_is_not_a_scorer():
    raft = attacks.get("raft", target="log_likelihood", llm=None, proxy=SMOL)
    paths = [p for p, _, _ in component_models(raft)]
    assert "proxy" in paths and not any(p.startswith("target") for p in paths)
    found = shared_models({"raft": raft}, {"log_likelihood": detectors.get("log_likelihood")})
    assert [s.where for s in found] == ["proxy"]
    qpa = {"qpa(toblend)": attacks.get("qpa_toblend")}  # MiniLM picks its tokens; MiniLM measures its cosine
    assert shared_models(qpa, {}, QualityMeter()) == []
    assert shared_models(qpa, {}, QualityMeter(lm="gemma-3-270m"))[0].scorers == ("the perplexity meter",)
    # the meter says which of its members report a likelihood (PairMeter.likelihood_params): without perplexity
    # among the active meters, the same LM scores nothing an attack could confound
    assert shared_models(qpa, {}, QualityMeter(lm="gemma-3-270m", meters=["rouge_l"])) == []


def test_the_runner_warns_and_the_report_lists_the_shared_model(tmp_path, smollm):
    from humanize.benchmarks.reporting.report import build_report, render_markdown
    from humanize.benchmarks.runner import run
    from humanize.benchmarks.runner.store import ResultsStore

    short = {"backend": "local", "model": SMOL, "max_new_tokens": 2}  # two tokens a chunk: the warning is the point
    cfg = RunConfig(n=4, seed=1, db=str(tmp_path / "r.sqlite"), quality=False, n_boot=0,
                    attacks=[AttackSpec("paraphrase", {"paraphraser": short}, label="paraphrase(smol)"),
                             AttackSpec("homoglyph")],
                    detectors=[DetectorSpec("log_likelihood", {"max_tokens": 32}), DetectorSpec("tfidf_lr")])
    with pytest.warns(RuntimeWarning, match=r"'paraphrase\(smol\)' writes or ranks with smollm2"):
        result = run(cfg, progress=False)
    assert len(result.warnings) == 1 and "detector log_likelihood" in result.warnings[0]
    table = result.tables["warnings"]
    assert table[["attack", "parameter", "model"]].values.tolist() == [["paraphrase(smol)", "paraphraser.model", SMOL]]
    report = build_report(result.tables)
    assert "warnings" in report and "paraphrase(smol)" in render_markdown(report)
    with ResultsStore(cfg.db, readonly=True) as store:  # `humanize-bench report` reads it back from the store
        assert store.run_tables(result.run_id)["warnings"]["warning"].tolist() == result.warnings
    cfg.attacks = [AttackSpec("homoglyph")]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        quiet = run(cfg, progress=False)
    assert "warnings" not in quiet.tables and "warnings" not in build_report(quiet.tables)
