"""The opt-in meaning meters (NLI entailment, LLM judge) from a TOML ``[quality]`` section to the run's meter."""
import pytest

from humanize.benchmarks.runner.config import load_config
from humanize.exceptions import ConfigError
from humanize.quality.judge import MeaningJudge

BASE = '[[attacks]]\nname = "homoglyph"\n\n[[detectors]]\nname = "tfidf_lr"\n\n'


def _meter(text, tmp_path):
    path = tmp_path / "run.toml"
    path.write_text(BASE + text)
    cfg = load_config(path)
    return cfg, cfg.validate_for_run()


def test_nli_model_and_judge_reach_the_meter(tmp_path):
    cfg, meter = _meter('[quality]\nmeters = ["rouge_l", "entailment", "judge"]\n'
                        'nli_model = "microsoft/deberta-large-mnli"\njudge = "endpoint:gpt-4o-mini"\n', tmp_path)
    assert cfg.quality_params["nli_model"] == "microsoft/deberta-large-mnli"
    assert meter._active() == ("rouge_l", "entailment", "judge")
    assert meter.nli_model == "microsoft/deberta-large-mnli"
    assert isinstance(meter._judge(), MeaningJudge) and meter._judge().generator().temperature == 0
    params = meter.provenance()["params"]
    assert params["nli_model"]["__model__"]["hub_id"] == "microsoft/deberta-large-mnli"
    assert params["judge"]["params"]["llm"]["params"]["model"] == "gpt-4o-mini"


def test_a_judge_table_and_bad_values_are_named(tmp_path):
    _, meter = _meter('[quality]\nmeters = ["judge"]\n\n[quality.judge]\nbackend = "endpoint"\nmodel = "m"\n'
                      'base_url = "http://localhost:8000/v1"\n', tmp_path)
    assert meter._judge().generator().model == "m"
    for text, match in (('[quality]\nmeters = ["judge"]\n', r"\[quality\]: meters names 'judge' but judge is None"),
                        ('[quality]\njudge = 5\n', r"\[quality\]: judge must be a chat model name"),
                        ('[quality]\nnli_model = ""\n', r"\[quality\]: QualityMeter: nli_model must be a model name or path \(not blank\), or a loaded model, got ''"),
                        ('[quality]\nnli = "x"\n', r"unknown \[quality\] key\(s\) \['nli'\]; valid: .*nli_model")):
        with pytest.raises(ConfigError, match=match):
            _meter(text, tmp_path)
