"""The bad-input matrix's vocabulary and judge: what a case is, and how an outcome is classified.

See ``bad_input_matrix.py`` for the categories; this module holds their exact rules.
"""
from __future__ import annotations

import os
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional

STATUSES = ("ok", "clear_error", "crash", "hang", "oom", "silent_wrong")
GROUPS = ("plain", "model", "run", "cli", "big")  # run order; one worker per group
MARKS = {"ok": ".", "clear_error": ".", "crash": "C", "hang": "H", "oom": "M", "silent_wrong": "W", "skipped": "s"}


class Skip(Exception):
    """A case that cannot run on this machine (e.g. no tmpfs mount for a read-only store)."""


class UserFnError(RuntimeError):
    """Raised by callbacks the matrix hands to the library (e.g. the function of a length sweep)."""


@dataclass
class CliResult:
    """What a ``humanize-bench`` subprocess did."""
    argv: list
    rc: Optional[int]
    stdout: str
    stderr: str
    timed_out: bool = False


@dataclass
class Case:
    """One call of one public API with one input, and what a right outcome looks like."""
    layer: str
    name: str
    call: Callable[["Ctx"], Any]
    expect: str = "result"  # "result" | "error" | "either"
    names: tuple = ()  # an error message must contain one of these (case-insensitive)
    oracle: Optional[Callable[[Any, list], Optional[str]]] = None  # reason the result is wrong, or None
    group: str = "plain"
    timeout: float = 30.0
    quick: bool = False  # part of the --quick subset
    must: tuple = ()  # ...and every one of these (e.g. the method that was called)

    def __post_init__(self):
        assert self.expect in ("result", "error", "either"), self.expect
        assert self.group in GROUPS, self.group


class Ctx:
    """Per-worker state: a scratch folder and lazily built, cached fixtures."""

    def __init__(self, tmp: str, mounts_file: str):
        self.tmp = tmp
        self.mounts_file = mounts_file
        self._cache: dict = {}
        self._n = 0

    def get(self, key, factory: Callable[[], Any]):
        if key not in self._cache:
            self._cache[key] = factory()
        return self._cache[key]

    def path(self, name: str) -> str:
        """A fresh path in this worker's scratch folder."""
        self._n += 1
        d = os.path.join(self.tmp, f"c{os.getpid()}_{self._n}")
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, name)


# -- classification ------------------------------------------------------------------------------

def _one_line(text: str, limit: int = 220) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _names_ok(message: str, names: tuple) -> bool:
    if not names:
        return bool(message.strip())
    low = message.lower()
    return any(str(n).lower() in low for n in names)


def _is_humanize(module: str) -> bool:
    return module == "humanize" or module.startswith("humanize.")


def _expected_type(exc: BaseException) -> bool:
    import json as _json

    if type(exc).__module__.split(".")[0] == "humanize":
        return True
    if isinstance(exc, (UnicodeError, KeyError, IndexError, _json.JSONDecodeError, NotImplementedError,
                        RecursionError)):
        return False
    try:
        import sqlite3

        if isinstance(exc, sqlite3.Error):
            return False
    except ImportError:  # pragma: no cover
        pass
    return isinstance(exc, (TypeError, ValueError, LookupError, OSError))


def classify_exception(exc: BaseException, case: Case) -> tuple[str, str, str]:
    """(status, reason, module where it was raised) for an exception a case raised."""
    tb, last = exc.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    module = last.tb_frame.f_globals.get("__name__", "?") if last is not None else "?"
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, MemoryError):
        return "oom", _one_line(message), module
    if isinstance(exc, UserFnError):
        # the callback's own error reached the caller unchanged: not hidden, not a library fault
        ok = case.expect != "result"
        return ("clear_error" if ok else "crash"), _one_line("the callback's error propagated: " + message), module
    stdlib = module.split(".")[0] in getattr(sys, "stdlib_module_names", ())
    origin_ok = _is_humanize(module) or (isinstance(exc, OSError) and stdlib)
    if not _expected_type(exc):
        return "crash", _one_line(f"{message} (raised in {module})"), module
    if not origin_ok:
        return "crash", _one_line(f"{message} (raised inside {module})"), module
    if not _names_ok(str(exc), case.names):
        return "crash", _one_line(f"{message} (names none of {list(case.names)})"), module
    missing = [m for m in case.must if m.lower() not in str(exc).lower()]
    if missing:
        return "crash", _one_line(f"{message} (does not mention {missing})"), module
    if case.expect == "result":
        return "crash", _one_line("valid input rejected: " + message), module
    return "clear_error", _one_line(message), module


def _cli_module(stderr: str) -> str:
    """The module of the last traceback frame printed by a CLI subprocess."""
    import re

    frames = re.findall(r'File "([^"]+)"', stderr)
    if not frames:
        return "?"
    path = frames[-1].replace("\\", "/")
    for marker in ("/site-packages/", "/lib/python3"):
        if marker in path:
            tail = path.split(marker, 1)[1]
            tail = tail.split("/", 1)[1] if marker == "/lib/python3" and "/" in tail else tail
            return tail.removesuffix(".py").replace("/", ".")
    if "/humanize/" in path:
        return "humanize." + path.split("/humanize/", 1)[1].removesuffix(".py").replace("/", ".")
    return path


def classify_cli(res: CliResult, case: Case, warns: list) -> tuple[str, str, str]:
    tail = _one_line(res.stderr.strip().splitlines()[-1] if res.stderr.strip() else "")
    if res.timed_out:
        return "hang", f"no exit within {case.timeout - 15:.0f} s", ""
    if res.rc is not None and res.rc < 0:
        status = "oom" if res.rc == -9 else "crash"
        return status, f"killed by signal {-res.rc}", ""
    if "Traceback (most recent call last)" in res.stderr:
        module = _cli_module(res.stderr)
        return "crash", _one_line(f"traceback, exit {res.rc}: {tail} (raised in {module})"), module
    if res.rc == 0:
        problem = case.oracle(res, warns) if case.oracle else None
        if problem:
            return "silent_wrong", _one_line(problem), ""
        if case.expect == "error" and case.oracle is None:
            return "silent_wrong", _one_line(f"invalid invocation exited 0: {res.stdout.strip()[-150:]}"), ""
        return "ok", "", ""
    if case.expect == "result":
        return "crash", _one_line(f"valid invocation failed, exit {res.rc}: {tail}"), ""
    if not _names_ok(res.stderr, case.names):
        return "crash", _one_line(f"exit {res.rc}, message names none of {list(case.names)}: {tail}"), ""
    missing = [m for m in case.must if m.lower() not in res.stderr.lower()]
    if missing:
        return "crash", _one_line(f"exit {res.rc}, message does not mention {missing}: {tail}"), ""
    return "clear_error", _one_line(f"exit {res.rc}: {tail}"), ""


def classify_value(value: Any, case: Case, warns: list) -> tuple[str, str, str]:
    if isinstance(value, CliResult):
        return classify_cli(value, case, warns)
    if case.oracle is not None:
        try:
            problem = case.oracle(value, warns)
        except Exception as exc:  # noqa: BLE001 - an unusable result is a wrong result
            problem = f"result unusable ({type(exc).__name__}: {exc})"
        if problem:
            return "silent_wrong", _one_line(problem), ""
        return "ok", "", ""
    if case.expect == "error":
        return "silent_wrong", _one_line(f"invalid input accepted, returned {_summary(value)}"), ""
    return "ok", "", ""


def _summary(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."


def run_case(case: Case, ctx: Ctx) -> dict:
    t0 = time.perf_counter()
    module = ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = case.call(ctx)
        except Skip as exc:
            status, reason = "skipped", str(exc)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - classifying it is the point
            status, reason, module = classify_exception(exc, case)
        else:
            warns = [str(w.message) for w in caught]
            status, reason, module = classify_value(value, case, warns)
    return {"status": status, "reason": reason, "module": module, "seconds": round(time.perf_counter() - t0, 3)}
