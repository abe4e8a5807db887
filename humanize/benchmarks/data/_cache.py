"""Where downloaded datasets live, and how they get there.

The cache directory is ``$HUMANIZE_CACHE`` if set, else ``~/.cache/humanize-bench``.
Downloads go to a ``.part`` file renamed into place when complete, so an
interrupted download never looks like a finished one; a file already in the
cache with the size the server announces is not downloaded again.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable
from urllib.error import URLError
from urllib.request import urlopen
from humanize.exceptions import DatasetUnavailable

ENV_VAR = "HUMANIZE_CACHE"
DEFAULT_CACHE = "~/.cache/humanize-bench"
_CHUNK = 1 << 20


def cache_dir(subdir: str | None = None) -> Path:
    """The cache directory (created on demand), or a subdirectory of it."""
    root = Path(os.environ.get(ENV_VAR) or DEFAULT_CACHE).expanduser()
    path = root / subdir if subdir else root
    path.mkdir(parents=True, exist_ok=True)
    return path


def download(url: str, dest: Path, *, opener: Callable = urlopen, progress: bool = True,
             timeout: float = 60.0) -> Path:
    """Download ``url`` to ``dest`` (any scheme urllib knows, including ``file://``).

    Skips the download when ``dest`` exists with the announced Content-Length.
    Raises :class:`DatasetUnavailable` when the address cannot be reached.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        response = opener(url, timeout=timeout)
    except (URLError, OSError, ValueError) as e:
        raise DatasetUnavailable(f"cannot download {url}: {e}") from e
    with response:
        size_header = response.headers.get("Content-Length") if response.headers else None
        size = int(size_header) if size_header else None
        if dest.is_file() and (size is None or dest.stat().st_size == size):
            return dest
        part = dest.with_name(dest.name + ".part")
        done = 0
        try:
            with open(part, "wb") as f:
                while chunk := response.read(_CHUNK):
                    f.write(chunk)
                    done += len(chunk)
                    if progress and size:
                        print(f"\rdownloading {dest.name}: {done / size:6.1%} of {size / 1e6:.1f} MB",
                              end="", file=sys.stderr)
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        if progress and size:
            print(file=sys.stderr)
    if size is not None and done != size:
        part.unlink(missing_ok=True)
        raise DatasetUnavailable(f"download of {url} stopped at {done} of {size} bytes")
    os.replace(part, dest)
    return dest


def _check_hub(what: str) -> None:
    """Fail at once, with the offline hint, when the hub is switched off or cannot be reached
    (:func:`humanize.models.loading.hub_unreachable`: one probe, not a minute of retries)."""
    from humanize.models import loading

    why = "HF_HUB_OFFLINE is set" if loading._hub_offline() else loading.hub_unreachable()
    if why is not None:
        raise DatasetUnavailable(f"cannot download {what} from the hub: {why}; without a network, put the files "
                                 "in the dataset cache folder or pass a local path")


def hub_file(repo_id: str, filename: str, dest_dir: Path) -> Path:
    """One file of a Hugging Face *dataset* repository, downloaded into ``dest_dir``."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as e:  # pragma: no cover - huggingface_hub comes with transformers
        raise DatasetUnavailable("downloading from the hub needs the huggingface_hub package") from e
    _check_hub(f"{filename} of the dataset {repo_id}")
    try:
        path = hf_hub_download(repo_id=repo_id, filename=filename, repo_type="dataset", local_dir=str(dest_dir))
    except Exception as e:  # network, auth, missing file: all mean "not available here"
        raise DatasetUnavailable(f"cannot download {filename} from the hub dataset {repo_id}: {e}") from e
    return Path(path)


def hub_snapshot(repo_id: str, dest_dir: Path, allow_patterns: list[str]) -> Path:
    """The files of a Hugging Face dataset repository matching ``allow_patterns``, in ``dest_dir``."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # pragma: no cover
        raise DatasetUnavailable("downloading from the hub needs the huggingface_hub package") from e
    _check_hub(f"{allow_patterns} of the dataset {repo_id}")
    try:
        path = snapshot_download(repo_id=repo_id, repo_type="dataset", local_dir=str(dest_dir),
                                 allow_patterns=allow_patterns)
    except Exception as e:
        raise DatasetUnavailable(f"cannot download {allow_patterns} from the hub dataset {repo_id}: {e}") from e
    return Path(path)

