"""Why a word-substitution attack left a document unchanged, from the ``info`` the engine reports."""
from __future__ import annotations

__all__ = ["wordsub_unchanged_reason"]


def wordsub_unchanged_reason(info: dict) -> str:
    """The first that holds: no eligible word, none drawn at the rate, no candidate through the
    constraints, a guided search's surrogate already below its threshold, no swap kept."""
    if not info.get("eligible"):
        return "no eligible word"
    if not info.get("target_swaps"):
        return "no word drawn at the rate"
    stopped = info.get("stopped")
    before, threshold = info.get("detector_score_before"), info.get("surrogate_threshold")
    if stopped == "stop_below" and not info.get("score_trace"):
        if before is not None and threshold is not None:
            return f"the surrogate already calls it human (score {before:.4g} < threshold {threshold:.4g})"
        return "the surrogate already calls it human"
    if not info.get("with_candidates") or stopped == "no_candidates":
        return "no candidate passed the constraints"
    if stopped is not None:
        return f"no swap lowered the surrogate's score (stopped: {stopped})"
    return "no swap kept"
