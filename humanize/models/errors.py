"""Errors raised by the model layer."""
from __future__ import annotations

__all__ = ["ModelUnavailable"]


class ModelUnavailable(RuntimeError):
    """A requested model (or language resource) cannot be loaded here.

    The message says which name was asked for, every route that was tried and
    why it failed, and the exact command that makes the model available.
    The same facts are kept as attributes for programs that catch the error.
    """

    def __init__(self, name: str, tried: list[str], install: str):
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
