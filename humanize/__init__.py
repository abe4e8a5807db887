"""humanize-bench: red-team detectors of machine-generated text.

Subpackages, one job each: ``attacks`` (humanizing transformations), ``models``
(loading, offline aliases), ``quality`` (what an attack costs the text), ``cost``
(what it costs to run), ``detectors``, ``benchmarks`` (data, evaluation, runner,
reporting, audits) and ``cli``.
"""

__version__ = "0.1.0"
