"""Errors raised by the model layer."""
from __future__ import annotations
from humanize.exceptions import ModelUnavailable  # defined there; importable here as before

__all__ = ["ModelUnavailable"]


