"""humanize-bench: red-team detectors of machine-generated text.

Subpackages, one job each: ``attacks`` (humanizing transformations), ``models``
(loading, offline aliases), ``quality`` (what an attack costs the text), ``cost``
(what it costs to run), ``detectors``, ``benchmarks`` (data, evaluation, runner,
reporting, audits) and ``cli``.
"""

__version__ = "0.1.0"


def _check_import_name() -> None:
    """Fail when another installed distribution owns the import name ``humanize`` (the PyPI
    package ``humanize``, human-readable numbers and dates): in one environment one package
    overwrites the other's files. Cheap: one listing of each folder on ``sys.path`` for a
    ``humanize-*.dist-info`` / ``humanize*.egg-info`` entry (well under a millisecond), and only
    then :mod:`importlib.metadata`'s look-up of that one distribution, never a scan of every
    distribution's file list."""
    import os
    import sys

    def candidate(entry: str) -> bool:  # humanize-4.9.0.dist-info, humanize.egg-info, humanize-4.9.0-py3.11.egg-info
        low = entry.lower()
        return low == "humanize.egg-info" or (low.startswith("humanize-") and low.endswith((".dist-info", ".egg-info")))

    for folder in sys.path:
        try:
            if any(candidate(e) for e in os.listdir(folder or ".")):
                break
        except OSError:  # a zip file, a folder that does not exist
            continue
    else:
        return
    from importlib import metadata

    try:
        other = metadata.distribution("humanize")
    except metadata.PackageNotFoundError:
        return
    except Exception:  # noqa: BLE001 - unreadable metadata is not this package's business at import
        return
    top_level = (other.read_text("top_level.txt") or "").split()
    owns = "humanize" in top_level or any(str(f).replace("\\", "/").startswith("humanize/")
                                          for f in (other.files or ()))
    if not owns:
        return
    where = other.locate_file("")
    version = other.metadata.get("Version", "?")
    raise ImportError(
        f"the PyPI package 'humanize' {version} (human-readable numbers and dates, in {where}) is "
        "installed in this environment and owns the same import name 'humanize' as humanize-bench, so one "
        "package's files overwrite the other's: `pip uninstall humanize` here (then reinstall humanize-bench), "
        "or install humanize-bench into a virtual environment of its own")


_check_import_name()
