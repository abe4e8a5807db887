"""The ``humanize-bench`` command line: argument parsing only; work happens in ``humanize.benchmarks``."""
