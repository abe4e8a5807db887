"""Executors carry out the runner's units of work: ``local`` (in this process, the default)
and ``ray`` (tasks and actor pools on a Ray cluster; ``pip install "humanize-bench[ray]"``)."""

from __future__ import annotations

from .base import BatchOutcome, Executor, Failure, Job, LocalExecutor, error_line, run_batch

__all__ = ["BatchOutcome", "Executor", "Failure", "Job", "LocalExecutor", "error_line", "run_batch"]
