"""Fixtures of the quality tests."""
from __future__ import annotations

import pytest


@pytest.fixture
def fresh_lm_cache(monkeypatch):
    """The language-model statistics cache and its pass counters empty before and after the test, with the
    switches that change which passes run (the shared pass, the packed context check) at their defaults."""
    from humanize.detectors import lm_stats
    from humanize.models.scoring import SHARED_PASS_ENV
    from humanize.quality.context import PACKED_CONTEXT_ENV

    for name in (SHARED_PASS_ENV, PACKED_CONTEXT_ENV):
        monkeypatch.delenv(name, raising=False)
    lm_stats.clear_cache()
    yield
    lm_stats.clear_cache()
