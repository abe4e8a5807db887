"""How every report writer puts a file on disk: atomically, and never through a link.

:func:`atomic_write` refuses a destination that is a symbolic link (or anything but a regular
file) with :class:`~humanize.exceptions.OutputPathError`, writes into a new temporary file in
the destination's folder (``tempfile.mkstemp``: a fresh name, created exclusively, so a link
planted at a guessable ``.part`` name is never followed) and renames it into place with
``os.replace``. A rename replaces a directory entry and never follows a link there, so even a
link planted between the check and the rename is replaced, not written through; a crash leaves
the old file (or none), never half a file.
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Callable

from humanize.exceptions import OutputPathError

__all__ = ["atomic_write", "check_destination", "file_stem", "write_text"]

#: the longest slug a file name takes from a label (the whole name stays far below NAME_MAX, 255 bytes)
SLUG_CHARS = 48


def file_stem(label, prefix: str = "") -> str:
    """A file name stem for ``label`` (a detector's, an attack's: any text): ``prefix`` plus the label
    itself when it is a short lower-case ASCII slug (``card_mine``), else a slug of it plus the first
    10 hex digits of its BLAKE2b (``card_my-detector-3f2a9c01d4``). Unique (two labels that differ only
    in characters the slug drops get different digests), bounded (at most ``SLUG_CHARS`` + 11
    characters after the prefix, so a long label never makes a name the file system refuses),
    stable (the same label, the same name), and never a path (no separator, no leading dot)."""
    import hashlib
    import re
    import unicodedata

    text = str(label)
    ascii_ = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9_.-]+", "-", ascii_.lower()).strip("-.")
    slug = re.sub(r"-{2,}", "-", slug)[:SLUG_CHARS].strip("-.")
    if slug == text and slug:
        return prefix + slug
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=5).hexdigest()
    return f"{prefix}{slug + '-' if slug else ''}{digest}"


def check_destination(path: str | os.PathLike) -> Path:
    """``path`` as a Path when it may be written: absent, or a regular file that is not a link."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return path
    if stat.S_ISLNK(info.st_mode):
        raise OutputPathError(f"refusing to write {str(path)!r}: it is a symbolic link (to "
                              f"{os.readlink(path)!r}); remove it or choose another output path")
    if not stat.S_ISREG(info.st_mode):
        raise OutputPathError(f"refusing to write {str(path)!r}: it exists and is not a regular file")
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` to fill a new temporary file next to ``path``, then rename it to ``path``."""
    path = check_destination(path)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # what open() would have given a new file, not mkstemp's 0600
        check_destination(path)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_text(path: str | os.PathLike, text: str) -> Path:
    """``text`` as UTF-8 at ``path``, atomically (:func:`atomic_write`)."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
