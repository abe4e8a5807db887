"""Process and GPU memory probes for the cost meter.

Peak RSS: on Linux the kernel's high-water mark (``VmHWM``) is reset per
measured call by writing ``5`` to ``/proc/self/clear_refs``, which catches
short spikes exactly; elsewhere a background thread samples RSS (psutil).
GPU: torch's allocator peak (``max_memory_allocated``, reset per call) when
torch is already imported and CUDA initialised -- torch is never imported
here -- and NVML's per-process figure when ``pynvml`` is installed.
"""
from __future__ import annotations

import functools
import math
import os
import sys
import threading

import psutil

__all__ = ["rss_mb", "PeakRSS", "gpu_peak_start", "gpu_peak_stop", "nvml_process_mb"]

MB = 1024 * 1024


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / MB


def _hwm_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    raise OSError("no VmHWM in /proc/self/status")


@functools.lru_cache(maxsize=1)
def _hwm_resettable() -> bool:
    try:
        _hwm_mb()
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


class PeakRSS:
    """Peak resident memory (MiB) between ``start()`` and ``stop()``."""

    def __init__(self, interval: float = 0.005):
        self.interval = interval
        self._peak = 0.0
        self._stop = threading.Event()
        self._thread = None

    def current_peak(self) -> float:
        return _hwm_mb() if _hwm_resettable() else max(self._peak, rss_mb())

    def start(self) -> None:
        if _hwm_resettable():
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
            return
        self._peak = rss_mb()
        proc = psutil.Process()

        def sample():
            while not self._stop.wait(self.interval):
                self._peak = max(self._peak, proc.memory_info().rss / MB)

        self._thread = threading.Thread(target=sample, name="humanize-rss-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> float:
        if _hwm_resettable():
            return max(_hwm_mb(), rss_mb())
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return max(self._peak, rss_mb())


def _cuda():
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch
    except Exception:  # noqa: BLE001 - a broken CUDA setup must not break measuring
        return None
    return None


def _torch_peak_mb(torch) -> float:
    return sum(torch.cuda.max_memory_allocated(d) for d in range(torch.cuda.device_count())) / MB


def gpu_peak_start(outer: list) -> None:
    """Fold the current peak into enclosing measurements, then reset torch's peak counters."""
    torch = _cuda()
    if torch is None:
        return
    peak = _torch_peak_mb(torch)
    for m in outer:
        m.extra["_gpu_seen"] = max(m.extra.get("_gpu_seen", 0.0), peak)
    for d in range(torch.cuda.device_count()):
        torch.cuda.reset_peak_memory_stats(d)


def gpu_peak_stop(measurement) -> float:
    """Peak torch allocation (MiB) since ``gpu_peak_start``; NaN when CUDA is not in use."""
    seen = measurement.extra.pop("_gpu_seen", math.nan)
    torch = _cuda()
    if torch is None:
        return seen
    peak = _torch_peak_mb(torch)
    return peak if math.isnan(seen) else max(peak, seen)


@functools.lru_cache(maxsize=1)
def _nvml():
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    except Exception:  # noqa: BLE001 - NVML absent or no driver
        return None


def nvml_process_mb() -> float:
    """GPU memory this process holds on all devices per NVML (MiB); NaN without NVML or CUDA."""
    if _cuda() is None:
        return math.nan
    nv = _nvml()
    if nv is None:
        return math.nan
    pid, total = os.getpid(), 0
    try:
        for i in range(nv.nvmlDeviceGetCount()):
            handle = nv.nvmlDeviceGetHandleByIndex(i)
            for proc in nv.nvmlDeviceGetComputeRunningProcesses(handle):
                if proc.pid == pid and proc.usedGpuMemory:
                    total += proc.usedGpuMemory
    except Exception:  # noqa: BLE001
        return math.nan
    return total / MB
