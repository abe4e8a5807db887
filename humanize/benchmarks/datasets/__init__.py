"""Moved to :mod:`humanize.benchmarks.data`: this old path warns and goes in the next release.

Its submodules (``humanize.benchmarks.datasets.<name>``) are the new modules too
(:class:`humanize.benchmarks._moved.OldSubmodules`).
"""
import importlib
import sys
import warnings

from humanize.benchmarks._moved import install_finder, message

warnings.warn(message(__name__, "humanize.benchmarks.data"), DeprecationWarning, stacklevel=2)
install_finder()
sys.modules[__name__] = importlib.import_module("humanize.benchmarks.data")
