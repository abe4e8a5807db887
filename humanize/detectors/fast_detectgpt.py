"""Fast-DetectGPT (Bao et al., ICLR 2024), analytic sampling discrepancy.

For the scored tokens ``x_1..x_n`` of a text, scoring model ``p`` and
reference (sampling) model ``q``::

    score = (sum_t log p(x_t | x_<t) - sum_t mu_t) / sqrt(sum_t var_t)
    mu_t  = E_{v~q(.|x_<t)}[log p(v | x_<t)],   var_t = Var_{v~q(.|x_<t)}[log p(v | x_<t)]

(the paper's Eq. 5 with the analytic mean and variance of its released code).
Higher = more machine-like. With ``reference_model=None`` the reference is the
scoring model itself (``q = p``), and the score comes from the shared one-pass
statistics, for free next to the other metric detectors. A separate reference
model must share the scoring model's tokenizer; the paper's defaults are
``EleutherAI/gpt-neo-2.7B`` (scoring) with ``EleutherAI/gpt-j-6B`` (reference),
RAID Appendix F.1; the offline default here is ``smollm2-135m-instruct`` alone.
"""

from __future__ import annotations


from humanize.validation import MODEL
from .lm_stats import DEFAULT_MAX_TOKENS, describe_lm, load_lm
from .metric import CausalLMMetricDetector

__all__ = ["FastDetectGPT"]


class FastDetectGPT(CausalLMMetricDetector):
    """Fast-DetectGPT's analytic sampling discrepancy; ``reference_model`` defaults to the scoring model.

    ``model`` is the scoring model; ``reference_model`` (optional) the model
    whose next-token distribution the mean and variance are taken under. Other
    parameters as :class:`~humanize.detectors.metric.CausalLMMetricDetector`.
    """

    name = "fast_detectgpt"
    _model_params = ("model", "reference_model")
    feature = "fast_detectgpt"
    _parameter_constraints = {"reference_model": [MODEL, None]}

    def __init__(self, model="smollm2-135m-instruct", reference_model=None, *,
                 max_tokens: int = DEFAULT_MAX_TOKENS, batch_tokens=None, device=None, dtype="auto"):
        self.reference_model = reference_model
        super().__init__(model, max_tokens=max_tokens, batch_tokens=batch_tokens, device=device, dtype=dtype)

    def _statistics_models(self) -> tuple:
        lm = self._scoring_lm()
        ref = None
        if self.reference_model is not None:
            ref = load_lm(self.reference_model, self.device, self.dtype)
            self.reference_model_ = describe_lm(ref)
        else:
            self.reference_model_ = self.scoring_model_
        return lm, ref

    def describe(self) -> dict:
        out = super().describe()
        out["reference_model"] = getattr(self, "reference_model_", None) or (
            {"name": str(self.reference_model), "loaded": False} if self.reference_model is not None
            else "same as scoring_model")
        return out
