"""EndpointDetector against a real HTTP scoring server on localhost (stdlib ThreadingHTTPServer).

The server counts what it saw (requests, bodies, headers, requests in flight at once) and can
misbehave on schedule; waits are recorded (endpoint._sleep patched), never timed.
"""

from __future__ import annotations

import json
import re
import logging
import pickle
import socket
import threading
import time
import traceback
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from sklearn.base import clone

from humanize import detectors
from humanize.detectors import EndpointDetector
from humanize.detectors import endpoint as endpoint_mod
from humanize.detectors.json_request import parse_score_path, read_score_path
from humanize.exceptions import EndpointError

from ..score_server import ScoreServer, machine_p, scores_of

KEY = "sk-live-SECRET-7d41c9e2"
TEXTS = [f"text number {i} " + "x" * i for i in range(10)]


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def waits(monkeypatch):
    got: list[float] = []
    monkeypatch.setattr(endpoint_mod, "_sleep", got.append)
    return got


def _det(server, **kw):
    kw.setdefault("backoff", 0.01)
    return EndpointDetector(server.url, **kw)


def _want(texts):
    return np.array([machine_p(t) for t in texts])


# -- the round trip ------------------------------------------------------------------------------
def test_batches_and_input_order():
    with ScoreServer() as server:
        det = _det(server, batch_size=4, max_concurrency=3)
        scores = det.score(TEXTS)
    assert scores.dtype == np.float64
    np.testing.assert_allclose(scores, _want(TEXTS))
    assert len(server.log) == 3 and sorted(len(r["body"]["texts"]) for r in server.log) == [2, 4, 4]
    assert sorted(sum((r["body"]["texts"] for r in server.log), [])) == sorted(TEXTS)
    first = server.log[0]
    assert first["path"] == "/v1/score" and first["headers"]["content-type"] == "application/json"
    assert "authorization" not in first["headers"]  # no api_key_env: no key
    assert det.stats == {"requests": 3, "attempts": 3, "retries": 0}
    assert det.score([]).shape == (0,)


def test_concurrency_limit_is_used_and_respected():
    # each request waits until 3 are in flight (a client sending fewer at once breaks the barrier), then
    # a moment more, in which a client sending more than 3 at once would be seen
    with ScoreServer(barrier=3, hold=0.1) as server:
        det = _det(server, batch_size=2, max_concurrency=3, max_retries=0)
        np.testing.assert_allclose(det.score(TEXTS[:6] + TEXTS[:6]), _want(TEXTS[:6] + TEXTS[:6]))
    assert len(server.log) == 6 and server.max_in_flight == 3


def test_one_text_per_request_nested_path_and_invert():
    def hf_style(req):  # the Hugging Face Inference API's text-classification answer
        p = machine_p(req["body"]["inputs"])
        return 200, {}, [[{"label": "human", "score": 1 - p}, {"label": "machine", "score": p}]]

    with ScoreServer(hf_style) as server:
        det = _det(server, body={"inputs": "{text}", "options": {"wait_for_model": True}},
                   score_path="[0][label=machine].score")
        np.testing.assert_allclose(det.score(TEXTS[:3]), _want(TEXTS[:3]))
        human = _det(server, body={"inputs": "{text}"}, score_path="[0][label=human].score", invert=True)
        np.testing.assert_allclose(human.score(TEXTS[:3]), _want(TEXTS[:3]), atol=1e-12)
    assert len(server.log) == 6  # one request per text; they arrive in any order
    assert sorted(r["body"]["inputs"] for r in server.log[:3]) == sorted(TEXTS[:3])
    assert all(r["body"]["options"] == {"wait_for_model": True} for r in server.log[:3])

    def vendor(req):
        return 200, {}, {"results": [{"ai_probability": machine_p(t), "id": i}
                                     for i, t in enumerate(req["body"]["documents"])]}

    with ScoreServer(vendor) as server:
        det = _det(server, body={"documents": "{texts}", "mode": "fast"}, score_path="results.*.ai_probability")
        np.testing.assert_allclose(det.score(TEXTS), _want(TEXTS))
    assert server.log[0]["body"]["mode"] == "fast"


def test_unpaired_surrogates_are_repaired_before_sending():
    with ScoreServer() as server, pytest.warns(UserWarning, match="lone surrogates"):
        _det(server).score(["ok", "bad \ud800 text"])
    assert server.log[0]["body"]["texts"] == ["ok", "bad \ufffd text"]


# -- retries -------------------------------------------------------------------------------------
def test_429_honours_retry_after(waits):
    faults = [(429, {"Retry-After": "0"}, {"error": "slow down"}), (429, {"Retry-After": "0.05"}, b""),
              (429, {"Retry-After": "3600"}, b""),
              (429, {"Retry-After": formatdate(time.time() - 60, usegmt=True)}, b"")]  # a date in the past
    with ScoreServer(faults=faults) as server:
        det = _det(server, backoff=10.0, max_wait=0.2)
        np.testing.assert_allclose(det.score(TEXTS[:3]), _want(TEXTS[:3]))
    assert len(server.log) == 5 and det.stats["retries"] == 4
    assert waits == [0.0, 0.05, 0.2, 0.0]  # the server's asks (capped by max_wait), not the 10 s backoff


def test_5xx_then_success_with_exponential_backoff(waits):
    with ScoreServer(faults=[(500, {}, b"oops"), (502, {}, b"bad gateway")]) as server:
        det = _det(server, backoff=0.01)
        np.testing.assert_allclose(det.score(TEXTS[:2]), _want(TEXTS[:2]))
    assert len(server.log) == 3
    assert 0.005 <= waits[0] < 0.015 and 0.01 <= waits[1] < 0.03


def test_retries_run_out_with_a_clear_error(waits):
    with ScoreServer(faults=[(503, {}, {"error": {"message": "overloaded"}})] * 3) as server:
        det = _det(server, max_retries=2)
        with pytest.raises(EndpointError) as info:
            det.score(TEXTS[:2])
    err = info.value
    assert (err.status, err.attempts, len(server.log), len(waits)) == (503, 3, 3, 2)
    assert str(err) == (f"EndpointDetector 'endpoint' (POST {server.url}) failed after 3 attempt(s), "
                        f"the last HTTP 503: 'overloaded'")


def test_slow_answer_times_out_then_the_retry_succeeds(waits):
    # the late answers come 1.5 s after the request: far beyond the 0.3 s timeout, however loaded the machine
    with ScoreServer(faults=[("slow", 1.5)]) as server:
        det = _det(server, timeout=0.3)
        np.testing.assert_allclose(det.score(TEXTS[:2]), _want(TEXTS[:2]))
        assert len(server.log) == 2 and det.stats["retries"] == 1
    with ScoreServer(faults=[("slow", 1.5)] * 2) as server:
        with pytest.raises(EndpointError, match=r"failed after 2 attempt\(s\), the last timed out after 0.3 s") as info:
            _det(server, timeout=0.3, max_retries=1).score(TEXTS[:2])
    assert info.value.status is None and info.value.attempts == 2


def test_unreachable_server(waits):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    det = EndpointDetector(f"http://127.0.0.1:{port}/score?lang=en", max_retries=1, backoff=0)
    with pytest.raises(EndpointError, match=r"failed after 2 attempt\(s\), the last connection failed") as info:
        det.score(["x"])
    assert "lang=en" not in str(info.value) and f"http://127.0.0.1:{port}/score" in str(info.value)


def test_client_errors_and_redirects_are_not_retried(waits):
    with ScoreServer(faults=[(400, {}, {"detail": "texts must be a list"})]) as server:
        with pytest.raises(EndpointError, match=r"refused with HTTP 400 \(not retried\): 'texts must be a list'"):
            _det(server).score(["x"])
    assert len(server.log) == 1 and waits == []
    with ScoreServer(faults=[(302, {"Location": "http://elsewhere.example/steal?k=1"}, b"")]) as server:
        with pytest.raises(EndpointError, match=r"HTTP 302, a redirect to http://elsewhere.example/steal \(not "):
            _det(server).score(["x"])
    assert len(server.log) == 1


# -- bad answers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("body, match", [
    (b"<html>not json</html>", r"answered HTTP 200 with a body that is not JSON: '<html>not json</html>'"),
    ({"result": [0.1, 0.2]}, r"without the score\(s\) at score_path 'scores': no field 'scores' at 'scores' "
                             r"\(fields there: 'result'\)"),
    ({"scores": [0.1]}, r"with 1 scores at score_path 'scores' for a batch of 2 texts"),
    ({"scores": [0.1, 0.2, 0.3]}, r"with 3 scores at score_path 'scores' for a batch of 2 texts"),
    ({"scores": [0.1, "0.2"]}, r"with a str \('0.2'\) as the score of text 1 at score_path 'scores', not a number"),
    ({"scores": [True, 0.2]}, r"with a bool \(True\) as the score of text 0 .*not a number"),
    ({"scores": [None, 0.2]}, r"with null as the score of text 0"),
    ({"scores": [0.1, float("nan")]}, r"with nan as the score of text 1 at score_path 'scores', not a finite number"),
    ({"scores": 0.5}, r"with a float \(0.5\) at score_path 'scores', not a list of 2 scores"),
])
def test_bad_answers_are_clear_one_line_errors(body, match, waits):
    with ScoreServer(faults=[(200, {}, body)]) as server:
        with pytest.raises(EndpointError, match=match) as info:
            _det(server).score(["one", "two"])
    assert len(server.log) == 1 and waits == []  # a bad answer is not retried
    assert info.value.status == 200 and "\n" not in str(info.value)
    assert str(info.value).startswith(f"EndpointDetector 'endpoint' (POST {server.url}) answered HTTP 200")


def test_score_path_syntax():
    doc = {"data": [{"score": 0.3, "label": "x"}], "results": [{"p": 1}, {"p": 2}], "flag": [{"ok": True, "v": 5}]}
    assert read_score_path(parse_score_path("data[0].score"), doc) == 0.3
    assert read_score_path(parse_score_path("results.*.p"), doc) == [1, 2]
    assert read_score_path(parse_score_path("results[*].p"), doc) == [1, 2]
    assert read_score_path(parse_score_path("results[-1].p"), doc) == 2
    assert read_score_path(parse_score_path("flag[ok=true].v"), doc) == 5
    assert read_score_path(parse_score_path("data[label=x].score"), doc) == 0.3
    assert read_score_path(parse_score_path(""), [0.1, 0.2]) == [0.1, 0.2]
    assert read_score_path(parse_score_path("*"), [0.1, 0.2]) == [0.1, 0.2]
    for bad in ("a..b", ".a", "a.", "a[", "a[x]", "a.[0]", "[=v]", "a]"):
        with pytest.raises(ValueError, match=re.escape(f"score_path {bad!r}: cannot read it at character")):
            parse_score_path(bad)
    with pytest.raises(ValueError, match=r"'data\[3\]': index 3 is out of range for a list of 1"):
        read_score_path(parse_score_path("data[3]"), doc)
    with pytest.raises(ValueError, match=r"element 1 of 'results.\*': no field 'q'"):
        read_score_path(parse_score_path("results.*.q"), {"results": [{"q": 1}, {"p": 2}]})
    with pytest.raises(ValueError, match=r"'data.score' needs an object, found a list"):
        read_score_path(parse_score_path("data.score"), doc)
    with pytest.raises(ValueError, match=r"no element has label = 'machine'"):
        read_score_path(parse_score_path("data[label=machine]"), doc)


# -- the key -------------------------------------------------------------------------------------
def _assert_no_key(*things):
    for thing in things:
        text = thing if isinstance(thing, (str, bytes)) else repr(thing)
        assert (KEY.encode() if isinstance(text, bytes) else KEY) not in text


def test_key_reaches_the_server_and_nowhere_else(monkeypatch, caplog):
    monkeypatch.setenv("SCORE_API_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    with ScoreServer() as server:
        det = _det(server, api_key_env="SCORE_API_KEY", headers={"X-Client": "bench"})
        det.score(TEXTS[:3])
        other = _det(server, api_key_env="SCORE_API_KEY", auth_header="x-api-key", auth_scheme="")
        other.score(TEXTS[:1])
    assert server.log[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert server.log[0]["headers"]["x-client"] == "bench"
    assert server.log[1]["headers"]["x-api-key"] == KEY and "authorization" not in server.log[1]["headers"]
    for d in (det, other):
        _assert_no_key(repr(d), d.get_params(), json.dumps(d.provenance()), d.fingerprint(), pickle.dumps(d),
                       vars(d), d.describe(), clone(d).get_params())
    _assert_no_key(caplog.text)
    twin = pickle.loads(pickle.dumps(det))
    with ScoreServer() as server:
        twin.set_params(url=server.url).score(["x"])  # the key is read again from the environment
    assert server.log[0]["headers"]["authorization"] == f"Bearer {KEY}"


def test_key_echoed_by_the_server_never_reaches_an_error(monkeypatch, waits):
    monkeypatch.setenv("SCORE_API_KEY", KEY)

    def echo(status, wrap):
        return lambda req: (status, {}, wrap(req["headers"]["authorization"]))

    cases = [
        echo(401, lambda auth: {"error": {"message": f"invalid credentials: {auth}"}}),
        echo(500, lambda auth: f"internal error while checking {auth}\nTraceback...".encode()),
        echo(200, lambda auth: f"<html>{auth}</html>".encode()),
        echo(200, lambda auth: {"scores": [auth]}),
        echo(200, lambda auth: {"wrong": 1, auth: 2}),
        echo(403, lambda auth: {"detail": auth * 40}),  # longer than the shown part: cut after hiding
    ]
    for answer in cases:
        with ScoreServer(answer) as server:
            with pytest.raises(EndpointError) as info:
                _det(server, api_key_env="SCORE_API_KEY", max_retries=1).score(["x"])
        err = info.value
        shown = "".join(traceback.format_exception(type(err), err, err.__traceback__))
        _assert_no_key(str(err), repr(err), err.args, shown, vars(err))
        assert "Bearer <hidden>" in str(err) or "<hidden>" in str(err)
        assert "sk-live" not in str(err)  # not even a cut-off piece of it


def test_missing_key_is_a_clear_error_before_any_request(monkeypatch):
    monkeypatch.delenv("SCORE_API_KEY", raising=False)
    with ScoreServer() as server:
        with pytest.raises(EndpointError, match=r"has no API key: set the SCORE_API_KEY environment variable"):
            _det(server, api_key_env="SCORE_API_KEY").score(["x"])
    assert server.log == []


# -- parameters ----------------------------------------------------------------------------------
def test_bad_arguments_name_the_problem():
    url = "http://localhost:8000/score"
    with pytest.raises(ValueError, match=r"url must be an http\(s\) URL such as http://localhost:8000/score"):
        EndpointDetector("ftp://host/x")
    with pytest.raises(ValueError, match="url must not hold credentials") as info:
        EndpointDetector("http://user:hunter2@host/x")
    assert "hunter2" not in str(info.value)
    for query in ("?api-key=hunter2", "?model=v2&key=hunter2", "?access_token=hunter2", "?sig=hunter2", "?code=hunter2"):
        # a key in the query is sent as given (#35: the form of one cloud's function endpoints), shown nowhere
        det = EndpointDetector(url + query)
        shown = repr(det) + json.dumps(det.provenance()) + json.dumps(det.get_params() and det.provenance())
        assert "hunter2" not in shown and "<hidden" in repr(det)
    with pytest.raises(ValueError, match=r"exactly one placeholder value.*found 0"):
        EndpointDetector(url, body={"texts": "texts"})
    with pytest.raises(ValueError, match="found 2"):
        EndpointDetector(url, body={"a": "{texts}", "b": ["{text}"]})
    with pytest.raises(TypeError, match="body must be a JSON object or array"):
        EndpointDetector(url, body="{texts}")
    with pytest.raises(TypeError, match="body must be plain JSON"):
        EndpointDetector(url, body={"texts": "{texts}", "when": object()})
    with pytest.raises(ValueError, match=r"body holds '\{text\}' \(one text per request\), so batch_size"):
        EndpointDetector(url, body={"inputs": "{text}"}, batch_size=8)
    with pytest.raises(ValueError, match="headers must not carry credentials") as info:
        EndpointDetector(url, headers={"Authorization": f"Bearer {KEY}"})
    _assert_no_key(str(info.value))
    with pytest.raises(TypeError, match="api_key_env must be None or the name of an environment variable") as info:
        EndpointDetector(url, api_key_env=KEY)
    _assert_no_key(str(info.value))
    with pytest.raises(ValueError, match=r"EndpointDetector: score_path 'a\.\.b'"):
        EndpointDetector(url, score_path="a..b")
    with pytest.raises(ValueError, match=r"EndpointDetector: timeout must be a number in \(0, inf\), got 0 \(int\)"):
        EndpointDetector(url, timeout=0)
    with pytest.raises(ValueError, match=r"max_concurrency must be an int in \[1, inf\), got 0"):
        EndpointDetector(url, max_concurrency=0)
    with pytest.raises(TypeError, match=r"invert must be a bool, got 'yes' \(str\)"):
        EndpointDetector(url, invert="yes")
    with pytest.raises(TypeError, match=r"name must be a non-blank str or None, got '' \(str\)"):
        EndpointDetector(url, name="")
    with pytest.raises(TypeError, match="single str"):
        EndpointDetector(url).score("one text")


def test_registry_params_and_fingerprint():
    url = "http://localhost:8000/score"
    det = detectors.get("endpoint", url=url, score_path="data.*.p")
    assert isinstance(det, EndpointDetector) and det.name == "endpoint" and det.needs_model is False
    assert EndpointDetector(url, name="gptzero").name == "gptzero"
    base = det.fingerprint()
    assert clone(det).fingerprint() == base and pickle.loads(pickle.dumps(det)).fingerprint() == base
    # how requests travel does not change the scores' key
    same = det.set_params(max_concurrency=1, max_retries=0, backoff=2.0, timeout=5.0, max_wait=1.0,
                          api_key_env="SOME_KEY", auth_header="x-api-key", auth_scheme="")
    assert same.fingerprint() == base
    # what shapes the scores does
    for change in ({"score_path": "data.*.q"}, {"invert": True}, {"version": "2"}, {"name": "other"},
                   {"url": url + "2"}, {"body": {"docs": "{texts}"}}, {"headers": {"X-Model": "v2"}},
                   {"batch_size": 8}):
        assert EndpointDetector(**{"url": url, "score_path": "data.*.p", **change}).fingerprint() != base, change
    assert EndpointDetector(url, body={"texts": "{texts}"}, batch_size=32).fingerprint() == \
        EndpointDetector(url).fingerprint()  # the defaults spelled out
    with_query = EndpointDetector(url + "?model=v2&lang=en")
    assert "lang=en" not in json.dumps(with_query.provenance())  # a query is a digest in the fingerprint
    assert with_query.fingerprint() != EndpointDetector(url + "?model=v3&lang=en").fingerprint()


def test_a_key_no_header_can_carry_is_refused_before_any_request_and_never_shown(monkeypatch):
    bad = "sk-detector-SECRET\n-1234"
    monkeypatch.setenv("DETECTOR_KEY", bad)
    with ScoreServer() as server:
        with pytest.raises(EndpointError, match="contains a newline") as info:
            _det(server, api_key_env="DETECTOR_KEY").score(TEXTS[:1])
        assert server.log == []
    assert not any(p in str(info.value) for p in (bad, "sk-detector-SECRET", repr(bad)[1:-1]))


def test_a_huge_answer_is_refused_unread():
    from humanize._http import post

    big = b"[" + b"0.5," * 1_000_000 + b"0.5]"

    class Huge(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", str(len(big)))
            self.end_headers()
            try:
                self.wfile.write(big)
            except OSError:
                pass

        def log_message(self, *a):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Huge)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/score"
        with pytest.raises(EndpointError, match=r"more than \d+ bytes for a batch of 1 text"):
            EndpointDetector(url, max_retries=2, backoff=0).score(TEXTS[:1])
        assert post(url, b"{}", {}, timeout=5, max_bytes=len(big))[2] == big
    finally:
        httpd.shutdown()
        httpd.server_close()
