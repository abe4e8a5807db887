"""In the demo's configuration the quality stage's perplexity runs no forward pass of its own: the metric
detectors' pass over the same texts serves it, long texts included (issue #38). Counted in passes and tokens
(``lm_stats.cache_info()["passes"]``), not timed."""
import numpy as np
import pytest

from humanize.benchmarks.runner.config import DEMO_PERPLEXITY_WINDOW, demo_config
from humanize.detectors import lm_stats
from humanize.detectors.metric import LogLikelihood
from humanize.quality import QualityMeter

ORIGINALS = [
    "The committee met on Tuesday to review the budget and approved most of the proposals.",
    "Rain fell over the valley for three days, and the river rose above its banks near the old mill.",
]
# a zero-width-space attack makes a text several times longer in tokens: beyond the detectors' 512
ATTACKED = [ORIGINALS[0].replace(" ", " \u200b") * 12, ORIGINALS[1].replace("a", "а")]


pytestmark = pytest.mark.usefixtures("fresh_lm_cache")


def _sequence_tokens() -> int:
    return lm_stats.cache_info()["passes"].get("sequence", {}).get("tokens", 0)


def test_the_demo_quality_stage_reads_the_detectors_pass(smollm):
    cfg = demo_config()
    assert cfg.quality_params == DEMO_PERPLEXITY_WINDOW
    meter = QualityMeter(lm=smollm, meters=["perplexity"], **cfg.quality_params)
    own = meter.score(ORIGINALS, ATTACKED)  # on a cold cache: perplexity's own pass
    assert _sequence_tokens() > 0
    assert "scored the first 512 tokens" in own.loc[0, "note"]  # the long text: the detectors' 512 tokens

    lm_stats.clear_cache()
    detector = LogLikelihood(smollm)  # every demo metric detector scores max_tokens=512 with this model
    assert [d.name for d in cfg.detectors][:1] == ["log_likelihood"] and detector.max_tokens == 512
    detector.score(ORIGINALS + ATTACKED)
    scored = lm_stats.cache_info()["passes"]["statistics"]["tokens"]
    assert scored > 512 + 2 * 20
    shared = meter.score(ORIGINALS, ATTACKED)
    assert _sequence_tokens() == 0  # no second pass: not one token through the model again
    assert lm_stats.cache_info()["shared_hits"] == 4
    assert lm_stats.cache_info()["passes"]["statistics"]["tokens"] == scored
    for column in ("perplexity_original", "perplexity_attacked"):
        np.testing.assert_allclose(shared[column], own[column], rtol=1e-5)


def test_a_longer_window_than_the_detectors_pays_a_second_pass_for_the_rest(smollm):
    LogLikelihood(smollm).score(ORIGINALS + ATTACKED)
    QualityMeter(lm=smollm, meters=["perplexity"], max_length=512, stride=384).score(ORIGINALS, ATTACKED)
    extra = lm_stats.cache_info()["passes"]["sequence"]
    assert extra["rows"] >= 1 and extra["tokens"] > 0  # the later windows of the long text, only those
    assert lm_stats.cache_info()["shared_hits"] == 4
