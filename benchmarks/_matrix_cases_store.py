"""Cases of the bad-input matrix for the runner, the results store and the ``humanize-bench`` CLI.

Corruption is made in place, without SQLite: a stored score's 8 IEEE bytes get their high
mantissa bits flipped, a JSON digit or a text character is swapped for another of the same
length. The file stays a valid database; only a check of the stored values can tell.
"""
from __future__ import annotations

import os
import shutil
import struct
import subprocess

from _matrix_cases_run import base_dict
from _matrix_core import Case, Skip


# -- fixtures ------------------------------------------------------------------------------------

def run_dict(data):
    from humanize.benchmarks.runner.config import config_from_dict
    from humanize.benchmarks.runner import run

    return run(config_from_dict(data), progress=False)


def finished(ctx):
    """(db path, RunResult, config dict) of one finished tiny run, made once per worker."""
    def make():
        path = ctx.path("finished.sqlite")
        data = base_dict(path)
        result = run_dict(data)
        _checkpoint(path)
        return path, result, data
    return ctx.get("finished", make)


def _checkpoint(path: str) -> None:
    """Fold a leftover WAL into the main file, so byte edits there are what SQLite reads."""
    if os.path.exists(path + "-wal"):
        import sqlite3

        con = sqlite3.connect(path)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()


def copy_of(ctx, name: str) -> tuple[str, object, dict]:
    src, result, data = finished(ctx)
    dst = ctx.path(name)
    shutil.copyfile(src, dst)
    return dst, result, {**data, "run": {**data["run"], "db": dst}}


def ro_store(ctx) -> str:
    """A copy of the finished database on a read-only tmpfs (root only; Skip elsewhere)."""
    def make():
        src, _, _ = finished(ctx)
        mnt = os.path.join(ctx.tmp, f"ro_{os.getpid()}")
        os.makedirs(mnt, exist_ok=True)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", mnt], capture_output=True).returncode:
            return None
        with open(ctx.mounts_file, "a") as fh:
            fh.write(mnt + "\n")
        shutil.copyfile(src, os.path.join(mnt, "ro-matrix.sqlite"))
        if subprocess.run(["mount", "-o", "remount,ro", mnt], capture_output=True).returncode:
            return None
        return os.path.join(mnt, "ro-matrix.sqlite")
    path = ctx.get("ro", make)
    if path is None:
        raise Skip("cannot mount a read-only tmpfs here (needs root)")
    return path


def flip_reals(path: str, values, limit: int = 20) -> int:
    """Flip the high mantissa bits of up to ``limit`` stored REAL values; how many were found."""
    _checkpoint(path)
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    flipped = 0
    for v in values:
        if flipped >= limit:
            break
        i = data.find(struct.pack(">d", float(v)))
        if i >= 0:
            data[i + 1] ^= 0x0F
            flipped += 1
    with open(path, "wb") as fh:
        fh.write(data)
    return flipped


def replace_bytes(path: str, old: bytes, new: bytes) -> bool:
    _checkpoint(path)
    with open(path, "rb") as fh:
        data = fh.read()
    if old not in data:
        return False
    with open(path, "wb") as fh:
        fh.write(data.replace(old, new, 1))
    return True


def metric_diff(a, b) -> int:
    """Numeric cells that differ between two metric tables of the same configuration."""
    import numpy as np

    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return max(a.size, b.size)
    n = 0
    for col in a.select_dtypes("number").columns:
        x, y = a[col].to_numpy(float), b[col].to_numpy(float)
        n += int((~(np.isclose(x, y, rtol=1e-9, atol=0) | (np.isnan(x) & np.isnan(y)))).sum())
    return n


def same_metrics(reference):
    def check(value, warns):
        result = value
        n = metric_diff(reference(value), result.metrics)
        return None if n == 0 else f"{n} metric cells differ from the run on the intact store"
    return check


# -- runner --------------------------------------------------------------------------------------

def _set(d, path, value):
    *parents, key = path.split(".")
    node = d
    for part in parents:
        node = node[part]
    node[key] = value
    return d


def runner_ok(result, warns):
    m = getattr(result, "metrics", None)
    if m is None or not len(m):
        return "no metrics"
    return None


def runner_cases(add) -> None:
    def tiny(label, edits, expect, names=(), oracle=runner_ok, quick=False, timeout=120):
        def call(ctx):
            d = base_dict(ctx.path("run.sqlite"))
            for path, value in edits:
                _set(d, path, value)
            return run_dict(d)
        add(Case("runner", f"run({label})", call, expect, names, oracle=oracle, group="run", timeout=timeout,
                 quick=quick))

    def twice(ctx):
        d = base_dict(ctx.path("twice.sqlite"))
        return run_dict(d), run_dict(d)

    add(Case("runner", "run(valid) twice: the rerun computes nothing, same metrics", twice, "result",
             oracle=lambda v, w: (runner_ok(v[0], w) or (None if sum(v[1].work.values()) == 0 else
                                  f"rerun computed {v[1].work}") or
                                  (None if metric_diff(v[0].metrics, v[1].metrics) == 0 else "rerun metrics differ")),
             group="run", timeout=120, quick=True))
    for seed in (-1, 2**32, 2**70):
        tiny(f"seed={seed}", [("run.seed", seed)], "either", ("seed",), quick=seed == -1)
    tiny("seed='a'", [("run.seed", "a")], "error", ("seed",))
    for bs in (0, -1, "x"):
        tiny(f"batch_size={bs!r}", [("run.batch_size", bs)], "error", ("batch_size",), oracle=None, quick=bs == 0)
    tiny("fprs=['0.05']", [("run.fprs", ["0.05"])], "error", ("fprs",), oracle=None, quick=True)
    tiny("fprs=0.05 (a scalar)", [("run.fprs", 0.05)], "either", ("fprs",),
         oracle=lambda r, w: runner_ok(r, w) or (None if 0.05 in set(r.metrics["fpr"].dropna()) else "no 5% rows"))
    tiny("train_fraction='0.5'", [("run.train_fraction", "0.5")], "error", ("train_fraction",), oracle=None)
    tiny("dataset filter domain='nope'", [("dataset.domain", "nope")], "error", ("nope", "domain"), oracle=None)
    tiny("rate sweep [0.1, 'x']", [("attacks", [{"name": "homoglyph", "rate": [0.1, "x"]}])], "error", ("rate",),
         oracle=None)
    tiny("n=2", [("dataset.n", 2)], "either", ("n",))
    tiny("tfidf_lr on 8 texts", [("detectors", ["tfidf_lr"])], "either", ("min_df", "tfidf"))
    tiny("rate sweep [0.1, 0.5]", [("attacks", [{"name": "homoglyph", "rate": [0.1, 0.5]}])], "result",
         oracle=lambda r, w: runner_ok(r, w) or (None if len(set(r.metrics["attack"])) == 3 else
                                                 f"attacks in metrics: {sorted(set(r.metrics['attack']))}"))
    tiny("quality on", [("quality", True)], "result",
         oracle=lambda r, w: runner_ok(r, w) or (None if len(r.tables.get("quality", ())) else "no quality rows"),
         timeout=240)

    def per_domain_no(ctx):
        runs = []
        for value in ("no", False, True):  # 40 texts per label: enough for per-domain thresholds to differ
            d = _set(base_dict(ctx.path(f"pd-{value}.sqlite")), "run.per_domain", value)
            runs.append(run_dict(_set(d, "dataset.n", 40)))
        if metric_diff(runs[1].metrics, runs[2].metrics) == 0:
            raise Skip("per_domain true and false give the same metrics here")
        return runs[0], runs[1]
    add(Case("runner", "run(per_domain='no')", per_domain_no, "error", ("per_domain",),
             oracle=lambda v, w: None if metric_diff(v[0].metrics, v[1].metrics) == 0 else
             "per_domain='no' gives other metrics than per_domain=false (treated as true)", group="run",
             timeout=120, quick=True))

    def flipped(ctx):
        path, first, data = copy_of(ctx, "flipped-matrix.sqlite")
        values = [v for v in first.tables["scores"]["score"].dropna().unique() if float(v) != int(v)]
        n = flip_reals(path, values, 20)
        if not n:
            raise Skip("no stored score value found to flip")
        return first, run_dict(data), n

    def flipped_oracle(value, warns):
        first, second, n = value
        diff = metric_diff(first.metrics, second.metrics)
        if diff == 0:
            return None
        if not second.work.get("scored"):
            return f"{n} byte-flipped score values used: {diff} metric cells changed, nothing recomputed, no error"
        return f"{diff} metric cells differ after recomputing {second.work}"
    add(Case("runner", "run over a store with byte-flipped scores (up to 20)", flipped, "either",
             ("flipped-matrix.sqlite", "corrupt", "integrity"), oracle=flipped_oracle, group="run", timeout=120,
             quick=True))

    def on(name, prepare, expect, names, oracle=None):
        def call(ctx):
            path, first, data = copy_of(ctx, name)
            prepare(path)
            return run_dict(data)
        add(Case("runner", f"run(db={name})", call, expect, names, oracle=oracle, group="run", timeout=120))

    def garbage(path):
        with open(path, "wb") as fh:
            fh.write(b"this is not a database\n" * 200)

    def truncate(path):
        size = os.path.getsize(path)
        with open(path, "r+b") as fh:
            fh.truncate(size // 2)

    on("garbage-matrix.sqlite", garbage, "error", ("garbage-matrix.sqlite",))
    on("truncated-matrix.sqlite", truncate, "either", ("truncated-matrix.sqlite",), oracle=runner_ok)

    def db_at(label, make_path, names, expect="error"):
        def call(ctx):
            return run_dict(base_dict(make_path(ctx)))
        add(Case("runner", f"run(db={label})", call, expect, names, oracle=None, group="run", timeout=120))

    def a_dir(ctx):
        path = ctx.path("dir-matrix.sqlite")
        os.makedirs(path)
        return path

    def under_file(ctx):
        path = ctx.path("afile-matrix")
        open(path, "w").close()
        return os.path.join(path, "x.sqlite")
    db_at("a directory", a_dir, ("dir-matrix.sqlite",))
    db_at("under a regular file", under_file, ("afile-matrix",))
    db_at("new file on a read-only filesystem", lambda ctx: os.path.join(os.path.dirname(ro_store(ctx)), "new.sqlite"),
          ("new.sqlite", "read-only", "readonly"))

    def cached_ro(ctx):
        path = ro_store(ctx)
        _, first, data = finished(ctx)
        return first, run_dict({**data, "run": {**data["run"], "db": path}})
    add(Case("runner", "run fully cached on a read-only filesystem", cached_ro, "result",
             oracle=lambda v, w: None if metric_diff(v[0].metrics, v[1].metrics) == 0 else "metrics differ",
             group="run", timeout=120, quick=True))


# -- results store -------------------------------------------------------------------------------

def _store(path):
    from humanize.benchmarks.runner.store import ResultsStore

    return ResultsStore(path)


def store_cases(add) -> None:
    def case(label, call, expect, names=(), oracle=None, quick=False):
        add(Case("store", label, call, expect, names, oracle=oracle, group="run", timeout=90, quick=quick))

    case("ResultsStore(5)", lambda ctx: _store(5), "error", ("int", "path"))
    case("ResultsStore(None)", lambda ctx: _store(None), "error", ("None", "path"))

    def a_dir(ctx):
        path = ctx.path("dir-matrix.sqlite")
        os.makedirs(path)
        return _store(path)
    case("ResultsStore(a directory)", a_dir, "error", ("dir-matrix.sqlite",))

    def garbage(ctx):
        path = ctx.path("garbage-matrix.sqlite")
        with open(path, "wb") as fh:
            fh.write(b"this is not a database\n" * 200)
        with _store(path) as s:
            return s.run_tables()
    case("ResultsStore(garbage file).run_tables()", garbage, "error", ("garbage-matrix.sqlite",), quick=True)

    def truncated(ctx):
        path, first, _ = copy_of(ctx, "truncated-matrix.sqlite")
        with open(path, "r+b") as fh:
            fh.truncate(os.path.getsize(path) // 2)
        with _store(path) as s:
            return first, s.run_tables()
    case("ResultsStore(half-truncated file).run_tables()", truncated, "either", ("truncated-matrix.sqlite",),
         oracle=lambda v, w: None if metric_diff(v[0].metrics, v[1]["metrics"]) == 0 else "tables differ")

    def empty_file(ctx):
        path = ctx.path("empty-matrix.sqlite")
        open(path, "wb").close()
        with _store(path) as s:
            return s.run_tables()
    case("ResultsStore(0-byte file).run_tables()", empty_file, "error", ("empty-matrix.sqlite", "no finished run"))

    def unknown_run(ctx):
        path, _, _ = copy_of(ctx, "runs-matrix.sqlite")
        with _store(path) as s:
            return s.run_tables("nope-run-id")
    case("run_tables('nope-run-id')", unknown_run, "error", ("nope-run-id",))

    def read_only(ctx):
        _, first, _ = finished(ctx)
        with _store(ro_store(ctx)) as s:
            return first, s.run_tables()
    case("ResultsStore(read-only file).run_tables()", read_only, "either", ("ro-matrix.sqlite", "read-only"),
         oracle=lambda v, w: None if metric_diff(v[0].metrics, v[1]["metrics"]) == 0 else "tables differ", quick=True)

    def scores_flip(ctx):
        path = ctx.path("flip-matrix.sqlite")
        values = [0.123456789 + i / 1000 for i in range(5)]
        with _store(path) as s:
            s.put_scores("det", [(f"h{i}", v) for i, v in enumerate(values)])
        if not flip_reals(path, values):
            raise Skip("stored values not found in the file")
        with _store(path) as s:
            return values, s.scores("det", [f"h{i}" for i in range(5)])

    def scores_flip_oracle(value, warns):
        values, got = value
        bad = [h for i, (h, v) in enumerate((f"h{i}", v) for i, v in enumerate(values)) if h in got and got[h] != v]
        return f"{len(bad)} corrupted scores returned as valid" if bad else None
    case("scores() after 5 stored values byte-flipped", scores_flip, "either", ("flip-matrix.sqlite", "h0"),
         oracle=scores_flip_oracle, quick=True)

    def edited(label, put, get, old, new, check, names):
        def call(ctx):
            path = ctx.path("edit-matrix.sqlite")
            with _store(path) as s:
                put(s)
            if not replace_bytes(path, old, new):
                raise Skip(f"{old!r} not found in the file")
            with _store(path) as s:
                return get(s)
        case(label, call, "either", names, oracle=check)

    quality_row = {"rouge_l": 0.53125, "note": ""}
    edited("quality() after a JSON digit changed", lambda s: s.put_quality("k", [("h", quality_row)]),
           lambda s: s.quality("k", ["h"]), b"0.53125", b"0.93125",
           lambda got, w: None if "h" not in got or got["h"].get("rouge_l") == 0.53125 else
           f"corrupted metrics returned: rouge_l={got['h'].get('rouge_l')}", ("edit-matrix.sqlite", "k"))
    edited("quality() after its JSON broken", lambda s: s.put_quality("k", [("h", quality_row)]),
           lambda s: s.quality("k", ["h"]), b'{"rouge_l"', b'X"rouge_l"',
           lambda got, w: None if "h" not in got else f"returned {got['h']!r}", ("edit-matrix.sqlite", "k"))
    row = {"input_hash": "h", "output": "The quick brown fox", "edits": [], "info": {}}
    edited("attack_outputs() after a text character changed", lambda s: s.put_attack_outputs("k", [row]),
           lambda s: s.attack_outputs("k", ["h"]), b"quick", b"quack",
           lambda got, w: None if "h" not in got or got["h"]["output"] == row["output"] else
           f"corrupted output returned: {got['h']['output']!r}", ("edit-matrix.sqlite", "k"))

    def roundtrip(ctx, rows):
        path = ctx.path("rt-matrix.sqlite")
        with _store(path) as s:
            s.put_attack_outputs("k", rows)
        with _store(path) as s:
            return s.attack_outputs("k", [r["input_hash"] for r in rows])
    sur = {"input_hash": "h", "output": "a \ud800 b", "edits": [], "info": {}}
    case("put/get an attack output with a lone surrogate", lambda ctx: roundtrip(ctx, [sur]), "either",
         ("surrogate", "output"), oracle=lambda got, w: None if got.get("h", {}).get("output") == sur["output"] else
         f"read back {got.get('h', {}).get('output')!r}")

    def nan_inf(ctx):
        path = ctx.path("naninf-matrix.sqlite")
        with _store(path) as s:
            s.put_scores("k", [("a", float("nan")), ("b", float("inf")), ("c", -0.5)])
        with _store(path) as s:
            return s.scores("k", ["a", "b", "c"])
    case("put/get NaN, inf and -0.5 scores", nan_inf, "result",
         oracle=lambda g, w: None if (g.get("a") != g.get("a") and g.get("b") == float("inf") and g.get("c") == -0.5)
         else f"read back {g}")

    def bad_score(ctx):
        with _store(ctx.path("bad-matrix.sqlite")) as s:
            s.put_scores("k", [("h", "x")])
            return s.scores("k", ["h"])
    case("put_scores with a str score", bad_score, "error", ("score",))
    case("text_hash(lone surrogate)", lambda ctx: __import__("humanize.text").text.text_hash(
        "a\ud800b"), "result", oracle=lambda h, w: None if isinstance(h, str) and h else f"{h!r}")
