"""Every error humanize raises on purpose, in one place (issue #21 §2).

::

    HumanizeError
    ├── UserError            bad input or configuration: the CLI prints one line and exits 2
    │   ├── InvalidParameterError   a parameter's type or range (also a TypeError and a ValueError)
    │   ├── NotFittedError          a learnable detector asked to score before ``fit``
    │   ├── EndpointError           an HTTP endpoint that failed or answered badly
    │   ├── StoreError              a results database that cannot be used as asked
    │   ├── SweepError              a cost sweep that cannot run as configured
    │   ├── OutputPathError         an output path that is not written (a symlink at the destination)
    │   └── RunError                about the run, not one document: raised where it happens,
    │       │                       never reported as a per-document failure
    │       ├── ConfigError         a run configuration (also a ValueError)
    │       ├── PluginError         a plug-in file (also a ValueError)
    │       ├── ProviderMissing     a dataset-named training set without humanize.benchmarks
    │       ├── ModelUnavailable    a model that is not installed or cannot be fetched
    │       ├── DatasetUnavailable  a dataset file that is missing or cannot be fetched
    │       ├── DataFileError       a data file that is damaged, ambiguous or outside the row schema
    │       │                       (also a ValueError): names the file, the row and the column
    │       └── DatasetChanged      a dataset whose texts differ from those a stored run read
    ├── InadmissibleTransform a format counterfactual that does not apply to a document
    └── SplitGGUFError       a packaged model's parts that do not assemble

Import them from here (the package faces ``humanize.models.ModelUnavailable``,
``humanize.detectors.NotFittedError`` and ``humanize.benchmarks.data.DatasetUnavailable`` are the same class
objects). Each keeps the built-in base it had (``RuntimeError``, ``ValueError``, ``LookupError``).
Messages say what was given and what is allowed, and never contain a secret (:func:`humanize._secrets.scrub_secrets`
hides the secrets this process has seen).
"""

from __future__ import annotations

__all__ = ["HumanizeError", "UserError", "RunError", "InvalidParameterError", "NotFittedError", "EndpointError",
           "StoreError", "SweepError", "ConfigError", "PluginError", "ProviderMissing", "ModelUnavailable",
           "DatasetUnavailable", "DataFileError", "DatasetChanged", "OutputPathError", "InadmissibleTransform",
           "SplitGGUFError", "RUN_ERRORS"]


class HumanizeError(Exception):
    """The base of every error humanize raises on purpose."""


class UserError(HumanizeError):
    """Bad input or configuration: something the user can fix; the message says what and how."""


class RunError(UserError):
    """About the run, not one document (a configuration, a missing model or dataset): raised where it
    happens, in a worker's factory or in ``apply``, and never reported as a per-document failure."""


class InvalidParameterError(UserError, ValueError, TypeError):
    """A parameter of the wrong type or out of range (scikit-learn's ``InvalidParameterError``: both a
    ``TypeError`` and a ``ValueError``, so either ``except`` catches it)."""


class NotFittedError(UserError, RuntimeError):
    """A learnable detector was asked to score before ``fit``."""


class EndpointError(UserError, RuntimeError):
    """A request to an endpoint failed: names the endpoint, the model, the HTTP status and the attempts.

    ``status`` is None when no HTTP answer came (unreachable, timed out) or before any request.
    The message never holds the API key.
    """

    def __init__(self, message: str, *, base_url: str, model: str, status: "int | None" = None,
                 attempts: int = 0):
        super().__init__(message)
        self.base_url, self.model, self.status, self.attempts = base_url, model, status, attempts


class StoreError(UserError, RuntimeError):
    """The results database cannot be used as asked; the message names the file and why."""


class SweepError(UserError, RuntimeError):
    """A cost sweep cannot run as configured."""


class ConfigError(RunError, ValueError):
    """A run configuration is invalid; the message says what and what is allowed."""


class PluginError(RunError, ValueError):
    """A plug-in file cannot be loaded; the message names the file and why."""


class ProviderMissing(RunError, LookupError):
    """An attack was given a dataset-named training set, but the benchmarks layer that loads
    datasets (``humanize.benchmarks``) has not installed its resolver."""


class ModelUnavailable(RunError, RuntimeError):
    """A requested model (or language resource) cannot be loaded here.

    The message says which name was asked for, every route that was tried and
    why it failed, and the exact command that makes the model available.
    The same facts are kept as attributes for programs that catch the error.
    """

    def __init__(self, name: str, tried: list, install: str):
        self.name = name
        self.tried = list(tried)
        self.install = install
        lines = [f"model {name!r} is not available."]
        if self.tried:
            lines.append("Tried:")
            lines.extend(f"  - {t}" for t in self.tried)
        lines.append(f"To make it available: {install}")
        super().__init__("\n".join(lines))

    def __reduce__(self):  # keep picklable (multiprocessing, pytest-xdist)
        return (type(self), (self.name, self.tried, self.install))


class DatasetUnavailable(RunError, RuntimeError):
    """A dataset file that is missing or cannot be fetched."""


class DataFileError(RunError, ValueError):
    """A data file that cannot be read as it is: damaged (a truncated compressed stream), ambiguous
    (a repeated column name, a ragged row) or outside the row schema (a numeric text, a null model,
    parts whose schemas disagree). The message names the file, and the row and column where known."""


class OutputPathError(UserError, OSError):
    """An output file that is not written as asked: its destination is a symbolic link (never
    followed) or not a regular file. The message names the path."""


class DatasetChanged(RunError, RuntimeError):
    """A command re-read a stored run's texts from its dataset and they are not the texts the run scored."""


class InadmissibleTransform(HumanizeError, ValueError):
    """A format counterfactual does not apply to this document (artifact-reliance paper §5.1)."""


class SplitGGUFError(HumanizeError, RuntimeError):
    """A packaged model's parts do not assemble into its file."""


#: What an executor lets through as "about the run" (a missing optional dependency too).
RUN_ERRORS = (RunError, ImportError)
