"""Where the package data lives (word lists, tables, the demo set)."""

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"
