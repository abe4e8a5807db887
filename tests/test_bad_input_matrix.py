"""The bad-input matrix's classifier and worker pool (benchmarks/bad_input_matrix.py).

The matrix's counts are only as honest as its classification: these tests pin what
counts as a clear error, a crash, a hang, an out-of-memory and a silent wrong result.
"""
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import _matrix_core  # noqa: E402
import bad_input_matrix as bim  # noqa: E402


def _raise(fn):
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001
        return exc
    raise AssertionError("did not raise")


def _case(expect="error", names=(), oracle=None, call=lambda ctx: None, **kw):
    return bim.Case("t", "case", call, expect, names, oracle, **kw)


def test_clear_error_needs_humanize_origin_expected_type_and_a_named_culprit():
    from humanize.validation import check_texts

    exc = _raise(lambda: check_texts(5, "Detector", "score"))
    assert bim.classify_exception(exc, _case(names=("int",)))[0] == "clear_error"
    status, reason, _ = bim.classify_exception(exc, _case(names=("batch_size",)))
    assert status == "crash" and "names none" in reason
    status, reason, _ = bim.classify_exception(exc, _case(expect="result", names=("int",)))
    assert status == "crash" and reason.startswith("valid input rejected")


def test_must_requires_every_listed_word():
    from humanize.validation import check_texts

    exc = _raise(lambda: check_texts(5, "Detector", "score"))
    status, reason, _ = bim.classify_exception(exc, _case(names=("int",), must=("no-such-word",)))
    assert status == "crash" and "does not mention" in reason


def test_compare_reports_moves_and_regressions(tmp_path):
    import json

    before = tmp_path / "before.json"
    before.write_text(json.dumps({"cases": [{"layer": "t", "name": "a", "status": "crash"},
                                            {"layer": "t", "name": "b", "status": "ok"}]}))
    after = [{"layer": "t", "name": "a", "status": "clear_error", "reason": ""},
             {"layer": "t", "name": "b", "status": "hang", "reason": "no result"}]
    text = bim.compare(str(before), after)
    assert "crash -> clear_error" in text and "worse than before (1)" in text and "ok -> hang: t b" in text


def test_dependency_errors_and_unexpected_types_are_crashes():
    import numpy as np

    exc = _raise(lambda: np.random.default_rng(-1))
    status, reason, module = bim.classify_exception(exc, _case(names=("negative",)))
    assert status == "crash" and module.startswith("numpy")
    exc = _raise(lambda: [][1])
    assert bim.classify_exception(exc, _case())[0] == "crash"
    exc = _raise(lambda: "\ud800".encode("utf-8"))  # a ValueError subclass, still a crash
    assert bim.classify_exception(exc, _case(names=("surrogate",)))[0] == "crash"
    assert bim.classify_exception(MemoryError(), _case())[0] == "oom"


def test_values_are_judged_by_the_oracle_and_accepted_bad_input_is_silent_wrong():
    assert bim.classify_value(1, _case(expect="error"), [])[0] == "silent_wrong"
    assert bim.classify_value(1, _case(expect="result"), [])[0] == "ok"
    assert bim.classify_value(1, _case(expect="either", oracle=lambda v, w: "bad" if v == 1 else None), [])[0] \
        == "silent_wrong"
    assert bim.classify_value(2, _case(expect="either", oracle=lambda v, w: "bad" if v == 1 else None), [])[0] == "ok"
    # an oracle that cannot read the result counts the result as wrong
    assert bim.classify_value(None, _case(expect="result", oracle=lambda v, w: v.missing), [])[0] == "silent_wrong"


@pytest.mark.parametrize("res,expect,names,status", [
    (bim.CliResult([], 1, "", 'Traceback (most recent call last):\n  File "/x/site-packages/pandas/core/a.py", '
                              'line 1\nValueError: x'), "error", (), "crash"),
    (bim.CliResult([], 2, "", "humanize-bench run: batch_size must be >= 1, got 0"), "error", ("batch_size",),
     "clear_error"),
    (bim.CliResult([], 2, "", "humanize-bench run: something failed"), "error", ("batch_size",), "crash"),
    (bim.CliResult([], 0, "done", ""), "error", (), "silent_wrong"),
    (bim.CliResult([], 0, "done", ""), "result", (), "ok"),
    (bim.CliResult([], 2, "", "humanize-bench run: no such file"), "result", (), "crash"),
    (bim.CliResult([], None, "", "", timed_out=True), "error", (), "hang"),
])
def test_cli_outcomes(res, expect, names, status):
    assert bim.classify_value(res, _case(expect=expect, names=names), [])[0] == status


def test_cli_traceback_names_the_module_of_the_last_frame():
    err = ('Traceback (most recent call last):\n  File "/w/humanize/cli/main.py", line 3, in main\n'
           '  File "/w/.venv/lib/python3.11/site-packages/pandas/core/common.py", line 9\nValueError: Seed')
    assert _matrix_core._cli_module(err) == "pandas.core.common"


def _sleep(ctx):
    time.sleep(30)


def _die(ctx):
    os._exit(3)


def _oom(ctx):
    return bytearray(1 << 33)  # 8 GiB, over the 1 GiB limit below


def test_pool_classifies_hangs_deaths_and_oom_and_keeps_going():
    cases = [bim.Case("t", "ok", lambda ctx: 1, "result"),
             bim.Case("t", "hang", _sleep, "result", timeout=1.5),
             bim.Case("t", "after hang", lambda ctx: 2, "result"),
             bim.Case("t", "dies", _die, "result"),
             bim.Case("t", "oom", _oom, "result"),
             bim.Case("t", "error", lambda ctx: int("x"), "error", ("x",))]
    results = bim.run_matrix(cases, mem_gb=1, timeout_scale=1.0, progress=False)
    assert [r["status"] for r in results] == ["ok", "hang", "ok", "crash", "oom", "crash"]
    assert "worker died" in results[3]["reason"]
    table = bim.summarize(results)
    assert table["TOTAL"]["cases"] == 6 and table["TOTAL"]["crash"] == 2 and table["t"]["hang"] == 1
