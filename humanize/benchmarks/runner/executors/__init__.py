"""Executors carry out the runner's units of work: ``local`` (in this process, the default)
and ``ray`` (tasks and actor pools on a Ray cluster; ``pip install "humanize-bench[ray]"``).

:func:`get_executor` is the single entry point; a run's ``[run] executor``, ``ray_address``
and ``max_retries`` reach it. Results are the same whichever executor runs the batches.
"""

from __future__ import annotations

from .base import BatchOutcome, Executor, Failure, Job, LocalExecutor, error_line, is_run_error, run_batch, run_errors

__all__ = ["BatchOutcome", "EXECUTORS", "Executor", "Failure", "Job", "LocalExecutor", "error_line",
           "get_executor", "is_run_error", "run_batch", "run_errors"]

#: The executor names a configuration may give.
EXECUTORS = ("local", "ray")
#: Options that only matter on a cluster: the local executor accepts and ignores them.
_CLUSTER_OPTIONS = ("address", "max_retries", "num_workers", "resources", "init_options")


def get_executor(name: str = "local", **options) -> Executor:
    """The executor ``name``: ``"local"`` (:class:`LocalExecutor`) or ``"ray"`` (RayExecutor:
    ``address`` None starts a local Ray cluster, ``"auto"`` or ``"host:port"``/``"ray://..."``
    joins one; ``max_retries`` bounds the retries of a worker that died)."""
    if not isinstance(name, str) or name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r}; available: {', '.join(EXECUTORS)}")
    unknown = sorted(set(options) - set(_CLUSTER_OPTIONS))
    if unknown:
        raise TypeError(f"get_executor({name!r}): unknown option(s) {unknown}; valid: {', '.join(_CLUSTER_OPTIONS)}")
    if name == "local":
        return LocalExecutor()
    try:
        import ray  # noqa: F401 - only to say clearly what is missing
    except ModuleNotFoundError:
        from humanize.exceptions import ConfigError

        raise ConfigError('executor "ray" needs Ray: pip install "humanize-bench[ray]"') from None
    from .ray import RayExecutor

    return RayExecutor(**options)
