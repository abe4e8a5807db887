"""Moved to :mod:`humanize.benchmarks.runner.executors`: this old path warns and goes in the next release.

Its submodules (``humanize.benchmarks.executors.<name>``) are the new modules too
(:class:`humanize.benchmarks._moved.OldSubmodules`).
"""
import importlib
import sys
import warnings

from humanize.benchmarks._moved import install_finder, message

warnings.warn(message(__name__, "humanize.benchmarks.runner.executors"), DeprecationWarning, stacklevel=2)
install_finder()
sys.modules[__name__] = importlib.import_module("humanize.benchmarks.runner.executors")
