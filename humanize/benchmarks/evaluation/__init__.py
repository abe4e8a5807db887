"""The evaluation, one job: protocols and statistics that turn detector scores into metrics
(RAID Section 5.2 / Appendix C, TH-Bench Section 4 and Figure 4): thresholds, AUROC, TPR at FPR,
bootstrap intervals; and RAID's own protocol, exactly (:mod:`.raid`, ``evaluate(..., protocol="raid")``).

Scores: higher = more machine-like, for every detector. Labels: "human"/"machine"
or 0/1 with 1 = machine.
"""

from .adapted import adapted_detector_matrix
from .raid import RaidEvaluationError, raid_evaluate
from .evaluate import evaluate, threshold_table, to_wide
from .metrics import (
    TPRAtFPR,
    TPRAtFPRResult,
    attack_success_rate,
    auroc,
    binary_metrics,
    classification_at_fpr,
    tpr_at_calibration,
)
from .thresholds import DEFAULT_TOLERANCE, Calibration, ThresholdResult, calibrate, threshold_at_fpr

__all__ = [
    "DEFAULT_TOLERANCE",
    "RaidEvaluationError",
    "Calibration",
    "TPRAtFPR",
    "TPRAtFPRResult",
    "ThresholdResult",
    "adapted_detector_matrix",
    "attack_success_rate",
    "auroc",
    "binary_metrics",
    "calibrate",
    "classification_at_fpr",
    "evaluate",
    "raid_evaluate",
    "threshold_at_fpr",
    "threshold_table",
    "to_wide",
    "tpr_at_calibration",
]
