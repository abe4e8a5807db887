"""The marker a command leaves in the output folder it writes: which run the files are of.

``card``, ``export``, ``report --out`` and ``plot`` write a stored run's files into a folder;
writing another run's files over them would leave a folder whose files mix two runs (a card
of one run next to the documents page of another). Each command claims its folder first
(:func:`check_folder`): a folder without a marker, or with a marker naming the same run, is
written; a folder whose marker names another run is refused unless ``--force`` is given. The
marker (:func:`mark_folder`) is written once the files are.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from humanize.exceptions import UserError

#: the marker's file name, in the output folder
MARKER = ".humanize-run"


def folder_run(folder: str | os.PathLike) -> str | None:
    """The run id named by ``folder``'s marker (None without a marker)."""
    path = Path(folder) / MARKER
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return "(unreadable marker)"
    try:  # a JSON marker, or the bare run id
        data = json.loads(text)
    except json.JSONDecodeError:
        return text.splitlines()[0] if text else "(empty marker)"
    return str(data.get("run_id")) if isinstance(data, dict) else text


def check_folder(folder: str | os.PathLike, run_id: str, *, force: bool = False) -> Path:
    """Refuse (with :class:`~humanize.exceptions.UserError`) to write ``run_id``'s outputs into
    ``folder`` when its marker names another run, unless ``force``; writes nothing."""
    folder = Path(folder)
    other = folder_run(folder)
    if other is not None and other != run_id and not force:
        raise UserError(f"{folder} holds the outputs of run {other}, not of run {run_id}; give another "
                        f"--out folder, or --force to overwrite them")
    return folder


def mark_folder(folder: str | os.PathLike, run_id: str, *, db: str | None = None) -> Path:
    """Write ``folder``'s marker naming ``run_id`` (after the outputs were written)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    marker = {"run_id": run_id, **({"db": str(db)} if db is not None else {})}
    (folder / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
    return folder / MARKER


def force_argument(p) -> None:
    p.add_argument("--force", action="store_true",
                   help="overwrite the output folder even when it holds another run's outputs")
