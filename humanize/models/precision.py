"""Which precision a model computes in on this machine, and the rule that picks it (issue #38).

``dtype=None`` keeps float32 on a CPU (bfloat16 on CUDA, see :func:`~humanize.models.resolve_dtype`);
``dtype="auto"`` asks for the fastest precision the hardware runs natively:

* CUDA: bfloat16 where the GPU supports it, else float16;
* CPU with ``avx512_bf16`` or ``amx_bf16`` (the instructions oneDNN's bfloat16 matrix products use):
  bfloat16;
* any other CPU: float32 (emulated bfloat16 is slower than float32).

``"auto"`` is the default of the scoring models: the metric detectors (log-likelihood, log-rank, entropy,
GLTR, LRR, Fast-DetectGPT, the metric LR) and the quality meter's perplexity and in-context validity, which
must share their precision to share the detectors' pass. It passed the issue's check: bfloat16 scores rank
the demo texts as float32's do (Spearman >= 0.99, ``tests/models/test_precision.py``) and keep every demo
AUROC inside float32's bootstrap interval (``benchmarks/bench_precision_agreement.py``). It is also the default
of the cosine meter's sentence encoder (all-MiniLM-L6-v2): its bfloat16 cosines of demo pairs differ from
float32's by at most 0.01 (``tests/models/test_precision.py``; 0.003 measured). Generation models, the word-level
attacks' ranking models and classifiers keep ``None`` (float32 on a CPU): no such check was run for them.

A score computed in another precision is another score: the dtype is part of a model's identity
(:mod:`humanize.models.identity`), hence of every fingerprint, manifest entry and cache key built on it, so
figures of two precisions never share a table row or a cache entry; a machine with bfloat16 and one without
give the same configuration two fingerprints, each saying what ran. ``dtype="float32"`` pins float32
everywhere (e.g. to compare with figures taken on another machine).

Dynamic int8 (:func:`quantize_dynamic_int8`, PyTorch's ``quantize_dynamic`` of the linear layers) is
measured by the benchmarks next to the two; it is not offered as a ``dtype`` because it changes the
weights, not only the arithmetic (the demo's scores correlate with float32's at Spearman 0.52-0.89).
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path

__all__ = ["cpu_bf16_flags", "cpu_has_native_bf16", "auto_dtype", "quantize_dynamic_int8"]

#: CPU flags (``/proc/cpuinfo``) of native bfloat16 arithmetic.
BF16_FLAGS = ("avx512_bf16", "amx_bf16")


@lru_cache(maxsize=1)
def cpu_bf16_flags(cpuinfo: str = "/proc/cpuinfo") -> tuple[str, ...]:
    """The :data:`BF16_FLAGS` this CPU reports (empty where ``/proc/cpuinfo`` is absent: not Linux)."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return ()
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[-1].split())
    return tuple(f for f in BF16_FLAGS if f in flags)


def cpu_has_native_bf16() -> bool:
    """Whether the CPU has bfloat16 instructions (:data:`BF16_FLAGS`)."""
    return bool(cpu_bf16_flags())


def auto_dtype(device):
    """The dtype ``dtype="auto"`` resolves to on ``device`` (the rule in this module's docstring)."""
    import torch

    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "cpu" and cpu_has_native_bf16():
        return torch.bfloat16
    return torch.float32


def quantize_dynamic_int8(lm):
    """A float32 CPU :class:`~humanize.models.LoadedModel` with its linear layers dynamically quantised
    to int8 (weights int8, activations quantised per batch; a copy, the given model is untouched)."""
    import copy

    import torch

    if lm.model is None or str(lm.device) != "cpu" or lm.dtype != torch.float32:
        raise ValueError(f"int8 dynamic quantisation needs a float32 model on the CPU, got {lm.dtype} on {lm.device}")
    from torch.ao.quantization import quantize_dynamic

    model = quantize_dynamic(copy.deepcopy(lm.model), {torch.nn.Linear}, dtype=torch.qint8)
    # its own dtype label, so its identity (fingerprints, cache keys) is not the float32 model's
    out = dataclasses.replace(lm, model=model, name=f"{lm.name}+int8-dynamic", dtype="qint8-dynamic")
    out.__dict__.pop("_identity", None)
    out.__dict__.pop("_identity_key", None)
    return out
