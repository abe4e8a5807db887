"""Moved to :mod:`humanize.benchmarks.runner.targets`: this old path warns and goes in the next release."""
import importlib
import sys
import warnings

from humanize.benchmarks._moved import message

warnings.warn(message(__name__, "humanize.benchmarks.runner.targets"), DeprecationWarning, stacklevel=2)
sys.modules[__name__] = importlib.import_module("humanize.benchmarks.runner.targets")
