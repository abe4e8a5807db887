"""Carry the letter case of a matched word over to its replacement."""

from __future__ import annotations


def match_case(source: str, replacement: str) -> str:
    """``COLOR`` -> ``COLOUR``, ``Color`` -> ``Colour``, ``color`` -> ``colour``."""
    if not replacement:
        return replacement
    letters = [c for c in source if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return replacement.upper()
    if source[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement
