"""Which kind of machine measured a cost: a hostname-free description, stored next to each cost row.

Times and memory figures are only comparable on the same hardware, so the
runner records this string with every measured row and flags a cost table that
mixes machines. It names the OS and architecture, the CPU model and its core
count, and the NVIDIA GPUs (through NVML, or the driver's ``/proc`` entries;
torch is not imported), never the host name or a serial number.
"""
from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

__all__ = ["machine_description"]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _gpus() -> list[str]:
    try:
        import pynvml  # optional, as for the cost meter's NVML figure

        pynvml.nvmlInit()
        try:
            names = []
            for i in range(pynvml.nvmlDeviceGetCount()):
                name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i))
                names.append(name.decode() if isinstance(name, bytes) else str(name))
            return names
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - no NVML: fall back to the driver's files
        pass
    names = []
    root = Path("/proc/driver/nvidia/gpus")
    try:
        for info in sorted(root.glob("*/information")):
            for line in info.read_text(errors="replace").splitlines():
                if line.startswith("Model:"):
                    names.append(" ".join(line.split(":", 1)[1].split()))
    except OSError:
        pass
    return names


@functools.lru_cache(maxsize=1)
def machine_description() -> str:
    """E.g. ``"Linux x86_64 | AMD EPYC 7B13 | 2 cores | GPU: none"`` (computed once per process)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 0)
    gpus = _gpus()
    if gpus:
        counted = sorted({g: gpus.count(g) for g in gpus}.items())
        gpu = ", ".join(f"{n} x {g}" if n > 1 else g for g, n in counted)
    else:
        gpu = "none"
    return f"{platform.system()} {platform.machine()} | {_cpu_model()} | {cores} cores | GPU: {gpu}"
