"""Cases of the bad-input matrix for the ``humanize-bench`` command line: each case runs the
installed script in a subprocess (same interpreter and ``PYTHONPATH``) and judges its exit
status, its last stderr line and whether it printed a traceback."""
from __future__ import annotations

import os
import subprocess
import sys

from _matrix_cases_store import copy_of, finished, ro_store
from _matrix_core import Case, CliResult


# -- CLI -----------------------------------------------------------------------------------------

def _cli_cmd() -> list:
    script = os.path.join(os.path.dirname(sys.executable), "humanize-bench")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "humanize.cli.main"]


def cli(ctx, argv, stdin: bytes = b"", timeout: float = 75) -> CliResult:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg"}
    env.pop("PYTHONIOENCODING", None)
    cwd = os.path.dirname(ctx.path("cwd"))
    try:  # the worker's address-space limit is inherited
        p = subprocess.run(_cli_cmd() + list(argv), input=stdin, capture_output=True, timeout=timeout, env=env,
                           cwd=cwd)
    except subprocess.TimeoutExpired as exc:
        return CliResult(list(map(str, argv)), None, "", str(exc.stderr or ""), timed_out=True)
    return CliResult(list(map(str, argv)), p.returncode, p.stdout.decode("utf-8", "replace"),
                     p.stderr.decode("utf-8", "replace"))


TINY = ["run", "--dataset", "demo", "--n", "8", "--attack", "homoglyph", "--detector", "surface_probe",
        "--no-quality", "--quiet"]


def cli_cases(add) -> None:
    exit_status_cases(add)
    def case(label, argv, expect, names=(), oracle=None, stdin=b"", timeout=90, quick=False):
        def call(ctx):
            args = argv(ctx) if callable(argv) else argv
            return _exit_checked(cli(ctx, args, stdin=stdin, timeout=timeout - 15), expect)
        add(Case("cli", f"humanize-bench {label}", call, expect, names, oracle=oracle, group="cli", timeout=timeout,
                 quick=quick))

    def out_has(text):
        return lambda r, w: None if text in r.stdout else f"stdout lacks {text!r}"

    def garbage(ctx):
        path = ctx.path("garbage-matrix.sqlite")
        with open(path, "wb") as fh:
            fh.write(b"this is not a database\n" * 200)
        return path

    def truncated(ctx):
        path, _, _ = copy_of(ctx, "truncated-matrix.sqlite")
        with open(path, "r+b") as fh:
            fh.truncate(os.path.getsize(path) // 2)
        return path

    def config_file(name, text):
        def make(ctx):
            path = ctx.path(name)
            with open(path, "wb") as fh:
                fh.write(text)
            return path
        return make

    def db(ctx, name="cli.sqlite"):
        return ctx.path(name)

    case("(no arguments)", [], "error", ("usage", "command"))
    case("bogus", ["bogus"], "error", ("bogus",))
    case("list detectors", ["list", "detectors"], "result", oracle=out_has("surface_probe"), quick=True)
    case("list bogus", ["list", "bogus"], "error", ("bogus",))
    case("run (tiny)", lambda ctx: TINY + ["--db", db(ctx)], "result", oracle=out_has("=="), quick=True)
    case("run --seed -1", lambda ctx: TINY + ["--db", db(ctx), "--seed", "-1"], "either", ("seed",),
         oracle=out_has("=="))
    case("run --batch-size 0", lambda ctx: TINY + ["--db", db(ctx), "--batch-size", "0"], "error",
         ("batch_size", "batch-size"), quick=True)
    case("run --n x", lambda ctx: TINY + ["--db", db(ctx), "--n", "x"], "error", ("--n",))
    case("run --n -1", lambda ctx: TINY + ["--db", db(ctx), "--n", "-1"], "error", ("n",))
    case("run --rates x", lambda ctx: TINY + ["--db", db(ctx), "--rates", "x"], "error", ("--rates",))
    case("run --rates 2", lambda ctx: TINY + ["--db", db(ctx), "--rates", "2"], "error", ("rate",))
    case("run --attack nope", lambda ctx: TINY + ["--db", db(ctx), "--attack", "nope"], "error", ("nope",))
    case("run --attack homoglyph:rate=x", lambda ctx: TINY + ["--db", db(ctx), "--attack", "homoglyph:rate=x"],
         "error", ("rate",))
    case("run --attack homoglyph:rate", lambda ctx: TINY + ["--db", db(ctx), "--attack", "homoglyph:rate"], "error",
         ("homoglyph:rate", "KEY=VALUE"))
    case("run --detector nope", lambda ctx: TINY + ["--db", db(ctx), "--detector", "nope"], "error", ("nope",))
    case("run --filter x", lambda ctx: TINY + ["--db", db(ctx), "--filter", "x"], "error", ("--filter",))
    case("run --filter domain=nope", lambda ctx: TINY + ["--db", db(ctx), "--filter", "domain=nope"], "error",
         ("nope", "domain"))
    case("run --dataset nope", lambda ctx: TINY + ["--db", db(ctx), "--dataset", "nope"], "error", ("nope",))
    case("run --db <garbage file>", lambda ctx: TINY + ["--db", garbage(ctx)], "error", ("garbage-matrix.sqlite",),
         quick=True)
    def a_dir(ctx):
        path = ctx.path("dbdir-matrix")
        os.makedirs(path)
        return path
    case("run --db <directory>", lambda ctx: TINY + ["--db", a_dir(ctx)], "error", ("dbdir-matrix",))
    case("run --db <under a regular file>", lambda ctx: TINY + ["--db", os.path.join(
        config_file("afile-matrix", b"x")(ctx), "x.sqlite")], "error", ("afile-matrix",))
    case("run --config <missing>", lambda ctx: ["run", "--config", os.path.join(ctx.tmp, "missing-matrix.toml")],
         "error", ("missing-matrix.toml",))
    case("run --config <invalid TOML>", lambda ctx: ["run", "--config", config_file("bad-matrix.toml", b"[[[")(ctx)],
         "error", ("bad-matrix.toml",))
    case("run --config <invalid UTF-8>", lambda ctx: ["run", "--config", config_file(
        "utf-matrix.toml", b"attacks = [1]\n# \xff\n")(ctx)], "error", ("utf-matrix.toml",))
    case("run --config <batch_size = 0>", lambda ctx: ["run", "--config", config_file(
        "bs-matrix.toml", b'attacks = ["homoglyph"]\ndetectors = ["surface_probe"]\nquality = false\n'
                          b'[dataset]\nname = "demo"\nn = 8\n[run]\nbatch_size = 0\n')(ctx), "--quiet",
        "--db", db(ctx)], "error", ("batch_size",))
    def locked(ctx):
        import sqlite3

        path, _, _ = copy_of(ctx, "locked-matrix.sqlite")
        con = sqlite3.connect(path, isolation_level=None)
        con.execute("BEGIN EXCLUSIVE")  # held by this worker while the CLI runs
        ctx.get(("lock", path), lambda: con)
        return path
    case("run --db <store locked by another process>", lambda ctx: TINY + ["--db", locked(ctx), "--seed", "1"], "error",
         ("locked-matrix.sqlite", "locked"), timeout=120)
    case("run on a read-only filesystem (cached)", lambda ctx: TINY + ["--db", ro_store(ctx)], "result",
         oracle=out_has("=="))
    case("report --db <missing>", lambda ctx: ["report", "--db", os.path.join(ctx.tmp, "missing-matrix.sqlite")],
         "error", ("missing-matrix.sqlite",))
    case("report --db <garbage file>", lambda ctx: ["report", "--db", garbage(ctx)], "error",
         ("garbage-matrix.sqlite",), quick=True)
    case("report --db <half-truncated>", lambda ctx: ["report", "--db", truncated(ctx)], "either",
         ("truncated-matrix.sqlite",), oracle=out_has("=="))
    case("report --db <finished>", lambda ctx: ["report", "--db", finished(ctx)[0]], "result", oracle=out_has("=="))
    case("report --db <read-only filesystem>", lambda ctx: ["report", "--db", ro_store(ctx)], "result",
         oracle=out_has("=="), quick=True)
    case("plot --db <read-only filesystem>", lambda ctx: ["plot", "--db", ro_store(ctx), "--out",
                                                          os.path.dirname(ctx.path("plots"))], "result", timeout=120)
    case("report --fpr 2", lambda ctx: ["report", "--db", finished(ctx)[0], "--fpr", "2"], "error", ("fpr",))
    case("report --fpr x", lambda ctx: ["report", "--db", finished(ctx)[0], "--fpr", "x"], "error", ("--fpr",))
    case("report --run nope", lambda ctx: ["report", "--db", finished(ctx)[0], "--run", "nope-run"], "error",
         ("nope-run",))
    case("attack homoglyph 'hello world'", ["attack", "homoglyph", "hello world"], "result",
         oracle=lambda r, w: None if r.stdout.strip() else "no output")
    case("attack homoglyph <invalid UTF-8 argv>", ["attack", "homoglyph", b"caf\xe9 \xff"], "either",
         ("utf-8", "encod", "surrogate", "decode"), oracle=lambda r, w: None if r.stdout.strip() else "no output",
         quick=True)
    case("attack homoglyph - <invalid UTF-8 stdin>", ["attack", "homoglyph", "-"], "either",
         ("utf-8", "encod", "surrogate", "decode", "stdin"), stdin=b"caf\xe9 \xff\n",
         oracle=lambda r, w: None if r.stdout.strip() else "no output")
    case("attack homoglyph - <empty stdin>", ["attack", "homoglyph", "-"], "result")
    case("attack nope x", ["attack", "nope", "x"], "error", ("nope",))
    case("attack homoglyph:rate=2 x", ["attack", "homoglyph:rate=2", "x"], "error", ("rate",))
    case("attack homoglyph x --seed a", ["attack", "homoglyph", "x", "--seed", "a"], "error", ("--seed",))
    case("attack homoglyph x --param rate", ["attack", "homoglyph", "x", "--param", "rate"], "error", ("--param",))
    case("tour --attacks nope", ["tour", "--attacks", "nope"], "error", ("nope",))
    case("tour --n 0", ["tour", "--n", "0"], "either", ("n",))
    case("tour --n 100000", ["tour", "--n", "100000", "--attacks", "homoglyph"], "either", ("n", "900"))
    case("demo --n 0", lambda ctx: ["demo", "--n", "0", "--out", os.path.dirname(ctx.path("demo"))], "error", ("n",))
    case("demo --n 1", lambda ctx: ["demo", "--n", "1", "--out", os.path.dirname(ctx.path("demo"))], "error", ("n",))


# -- issue #22: exit statuses, --version, runs, --force, a full disk, silent overrides -------------

class WrongExitStatus(RuntimeError):
    """A user error that exited with another status than 2 (1 is for internal errors only)."""


def _exit_checked(res: CliResult, expect: str) -> CliResult:
    if (expect != "result" and res.rc not in (None, 0, 2) and res.rc > 0
            and "Traceback (most recent call last)" not in res.stderr):
        tail = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else ""
        raise WrongExitStatus(f"exit status {res.rc} for a user error (expected 2): {tail}")
    return res


def full_disk(ctx) -> str:
    """A folder on a tmpfs with a few KiB left (root only; Skip elsewhere)."""
    def make():
        mnt = os.path.join(ctx.tmp, f"full_{os.getpid()}")
        os.makedirs(mnt, exist_ok=True)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt], capture_output=True).returncode:
            return None
        with open(ctx.mounts_file, "a") as fh:
            fh.write(mnt + "\n")
        st = os.statvfs(mnt)
        with open(os.path.join(mnt, "filler"), "wb") as fh:
            fh.write(b"\0" * max(st.f_bavail * st.f_frsize - 48 * 1024, 0))
        return mnt
    path = ctx.get("full", make)
    if path is None:
        from _matrix_core import Skip

        raise Skip("cannot mount a tmpfs here (needs root)")
    return path


def other_runs_folder(ctx, name: str) -> str:
    """An output folder whose marker names another run."""
    path = ctx.path(name)
    os.makedirs(path)
    with open(os.path.join(path, ".humanize-run"), "w", encoding="utf-8") as fh:
        fh.write("0123456789abcdef\n")
    return path


def exit_status_cases(add) -> None:
    def case(label, argv, expect, names=(), oracle=None, timeout=90, quick=False):
        def call(ctx):
            args = argv(ctx) if callable(argv) else argv
            return _exit_checked(cli(ctx, args, timeout=timeout - 15), expect)
        add(Case("cli", f"humanize-bench {label}", call, expect, names, oracle=oracle, group="cli", timeout=timeout,
                 quick=quick))

    def out_has(text):
        return lambda r, w: None if text in r.stdout else f"stdout lacks {text!r}"

    def missing(ctx):
        return os.path.join(ctx.tmp, "missing-matrix.sqlite")

    case("--version", ["--version"], "result", oracle=out_has("0.1"), quick=True)
    case("report --db <missing> (exit 2)", lambda ctx: ["report", "--db", missing(ctx)], "error",
         ("missing-matrix.sqlite",), quick=True)
    case("plot --db <missing> (exit 2)", lambda ctx: ["plot", "--db", missing(ctx)], "error",
         ("missing-matrix.sqlite",))
    case("card --db <missing> (exit 2)", lambda ctx: ["card", "--db", missing(ctx)], "error",
         ("missing-matrix.sqlite",))
    case("export --db <missing> (exit 2)", lambda ctx: ["export", "--db", missing(ctx)], "error",
         ("missing-matrix.sqlite",))
    case("ars --db <missing> (exit 2)", lambda ctx: ["ars", "--db", missing(ctx)], "error",
         ("missing-matrix.sqlite",))
    case("audit nope (exit 2)", ["audit", "nope"], "error", ("nope",))
    case("attack nope x (exit 2)", ["attack", "nope", "x"], "error", ("nope",), quick=True)
    case("tour --attacks nope (exit 2)", ["tour", "--attacks", "nope"], "error", ("nope",))
    case("demo --defense nope (exit 2)", lambda ctx: ["demo", "--n", "4", "--quiet", "--defense", "nope", "--out",
                                                      ctx.path("demo")], "error", ("nope",))
    case("list attacks --plugin <missing> (exit 2)", lambda ctx: ["list", "attacks", "--plugin",
                                                                 os.path.join(ctx.tmp, "missing_plugin.py")],
         "error", ("missing_plugin",))
    case("run --attack nope (exit 2)", lambda ctx: TINY + ["--db", ctx.path("x.sqlite"), "--attack", "nope"], "error",
         ("nope",))
    seen: dict = {}

    def runs_argv(ctx):
        path, result, _ = finished(ctx)
        seen["run_id"] = result.run_id
        return ["runs", "--db", path]

    case("runs --db <finished>", runs_argv, "result",
         oracle=lambda r, w: None if seen.get("run_id", "?") in r.stdout and "demo" in r.stdout
         else f"stdout lacks the run id {seen.get('run_id')} or its dataset")
    case("runs --db <missing>", lambda ctx: ["runs", "--db", missing(ctx)], "error", ("no results database",))
    case("card --out <another run's folder>", lambda ctx: ["card", "--db", finished(ctx)[0], "--out",
                                                           other_runs_folder(ctx, "cards")], "error", ("--force",))
    case("export --out <another run's folder>", lambda ctx: ["export", "--db", finished(ctx)[0], "--out",
                                                             other_runs_folder(ctx, "export")], "error", ("--force",))
    case("card --out <another run's folder> --force",
         lambda ctx: ["card", "--db", finished(ctx)[0], "--out", other_runs_folder(ctx, "cards"), "--force"],
         "result")
    case("run --attack whitespace:rate=0.3 --rates 0.1 0.5",
         lambda ctx: TINY + ["--db", ctx.path("x.sqlite"), "--attack", "whitespace:rate=0.3", "--rates", "0.1", "0.5"],
         "error", ("rate=0.3",))
    case("run --db <on a full disk>", lambda ctx: TINY + ["--db", os.path.join(full_disk(ctx), "full.sqlite")],
         "error", ("disk full",), timeout=120)

