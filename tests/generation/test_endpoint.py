"""EndpointChat against a real chat-completions HTTP server on localhost (tests/generation/chat_server.py)."""
import copy
import json
import logging
import pickle
import socket
import time

import pytest
from sklearn.base import clone

from humanize.cost import CostMeter
from humanize.exceptions import EndpointError
from humanize.generation import Request, chat, resolve_generator
from humanize._http import retry_after
from humanize.generation.endpoint import EndpointChat

from .chat_server import ChatServer, EchoChat

KEY = "sk-test-SECRET-4f9a27"


def _counts(gen):
    return {k: gen.stats[k] for k in ("requests", "attempts", "retries", "missing_usage")}


def _endpoint(server, **kw):
    kw.setdefault("backoff", 0.01)
    return EndpointChat(model="test-model", base_url=server.url, **kw)


@pytest.fixture
def echo_server():
    with ChatServer(EchoChat()) as server:
        yield server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- the round trip, backed by the packaged chat model ------------------------------------------
def test_round_trip_gives_what_the_local_model_gives(smollm):
    from humanize.generation.local import LocalChat

    local = LocalChat(smollm, temperature=0, max_new_tokens=12)
    reqs = [Request(chat("Name a colour.", system="Answer in one short sentence."), seed=2 ** 40 + 3),
            Request(chat("Say hello to Ada."), seed=11, max_new_tokens=6, answer_start="Hello")]
    want = local.generate(reqs)
    with ChatServer(local) as server:
        got = _endpoint(server, temperature=0, max_new_tokens=12).generate(reqs)
        log = list(server.log)
    assert [g.text for g in got] == [g.text for g in want]
    assert [(g.tokens_in, g.tokens_out, g.finish_reason) for g in got] == \
        [(g.tokens_in, g.tokens_out, g.finish_reason) for g in want]
    assert all(g.text.strip() for g in got)
    first = next(e for e in log if e["messages"][-1]["content"] == "Name a colour.")
    assert first["model"] == "test-model" and first["temperature"] == 0 and first["max_tokens"] == 12
    assert first["seed"] == (2 ** 40 + 3) % 2 ** 31 and first["n"] == 1
    assert first["messages"] == [{"role": "system", "content": "Answer in one short sentence."},
                                 {"role": "user", "content": "Name a colour."}]
    second = next(e for e in log if e is not first)
    assert second["messages"][-1] == {"role": "assistant", "content": "Hello"} and second["max_tokens"] == 6


def test_sampled_round_trip_is_seeded_by_the_request(smollm):
    from humanize.generation.local import LocalChat

    reqs = [Request(chat("Write a word about rain."), seed=s, max_new_tokens=8) for s in (1, 2, 1)]
    want = LocalChat(smollm, temperature=1.0, top_p=0.9).generate(reqs)
    with ChatServer(LocalChat(smollm, temperature=0)) as server:  # the request's sampling settings apply
        got = _endpoint(server, temperature=1.0, top_p=0.9).generate(reqs)
    assert [g.text for g in got] == [g.text for g in want]
    assert got[0].text == got[2].text and len({g.text for g in got}) == 2  # the seed decides, not the position


# -- retries ---------------------------------------------------------------------------------
def test_retries_through_429_and_500_honouring_retry_after(monkeypatch):
    from humanize.generation import endpoint as endpoint_module

    waits = []
    monkeypatch.setattr(endpoint_module, "_sleep", waits.append)  # the waits counted, not timed
    with ChatServer(EchoChat(), fail_first=[429, 500], retry_after="1") as server:
        gen = _endpoint(server)
        out = gen.generate([Request(chat("one two three"), seed=5)])
        log = list(server.log)
    assert out[0].text == "three two one"
    assert [e["status"] for e in log] == [429, 500, 200]  # three attempts of the same request
    assert all(e["messages"] == log[0]["messages"] and e["seed"] == 5 for e in log)
    assert len(waits) == 2 and waits[0] == 1.0  # the 429's Retry-After: 1 was waited out
    assert waits[1] < 0.05  # then the 500's backoff alone (0.01 s base)
    assert _counts(gen) == {"requests": 1, "attempts": 3, "retries": 2, "missing_usage": 0}


def test_gives_up_after_max_retries_with_a_clear_error():
    with ChatServer(EchoChat(), fail_first=[503] * 5) as server:
        gen = _endpoint(server, max_retries=2)
        with pytest.raises(EndpointError) as info:
            gen.generate([Request(chat("hi"), seed=1)])
        assert len(server.log) == 3 and len(server.fail_first) == 2
        assert _counts(gen) == {"requests": 0, "attempts": 3, "retries": 2, "missing_usage": 0}
        url = server.url
    err = info.value
    assert (err.status, err.attempts, err.model, err.base_url) == (503, 3, "test-model", url)
    assert url in str(err) and "'test-model'" in str(err) and "3 attempt" in str(err) and "503" in str(err)


def test_a_400_is_not_retried_and_carries_the_servers_message():
    with ChatServer(EchoChat(), max_tokens_limit=8) as server:
        with pytest.raises(EndpointError, match="max_tokens must be at most 8, got 50") as info:
            _endpoint(server, max_new_tokens=50, max_retries=4).generate([Request(chat("hi"))])
        assert len(server.log) == 1
    assert info.value.status == 400 and info.value.attempts == 1


def test_an_unreachable_endpoint_says_so_and_how_to_point_elsewhere():
    url = f"http://127.0.0.1:{_free_port()}/v1"
    gen = EndpointChat(model="m", base_url=url, max_retries=2, backoff=0.01)
    with pytest.raises(EndpointError) as info:
        gen.generate([Request(chat("hi"))])
    msg = str(info.value)
    assert "unreachable" in msg and url in msg and "OPENAI_BASE_URL" in msg
    assert info.value.attempts == 3 and info.value.status is None


@pytest.mark.parametrize("headers, want", [
    ({"retry-after-ms": "250"}, 0.25), ({"retry-after": "2"}, 2.0), ({"retry-after": "soon"}, None), ({}, None)])
def test_retry_after_headers(headers, want):
    assert retry_after(headers) == want


def test_retry_after_as_an_http_date(monkeypatch):
    from email.utils import formatdate

    now = 1_700_000_000.0  # a fixed clock: the seconds asked for do not depend on how long the test took
    monkeypatch.setattr(time, "time", lambda: now)
    assert 8 <= retry_after({"retry-after": formatdate(now + 10, usegmt=True)}) <= 10
    assert retry_after({"retry-after": formatdate(now + 10, usegmt=True)}) == 10.0
    assert retry_after({"retry-after": formatdate(now - 5, usegmt=True)}) == 0.0  # a date in the past: no wait


# -- usage, concurrency, order ------------------------------------------------------------------
def test_tokens_queries_and_retries_reach_a_running_cost_meter():
    meter = CostMeter(count_tokens=None, track_gpu=False)
    reqs = [Request(chat(t), seed=i) for i, t in enumerate(["a b c", "d e", "f"])]
    with ChatServer(EchoChat(), fail_first=[500], retry_after=None) as server:
        with meter.measure(attack="endpoint", n_docs=3):
            out = _endpoint(server, max_concurrency=1).generate(reqs)
    rec = meter.records[-1]
    assert rec["queries"] == 3 and rec["endpoint_retries"] == 1
    assert rec["api_tokens_in"] == 3 + 2 + 1 == sum(g.tokens_in for g in out)
    assert rec["api_tokens_out"] == sum(g.tokens_out for g in out) == 6


def test_concurrency_is_limited_and_results_keep_input_order():
    reqs = [Request(chat(f"word{i} first"), seed=i) for i in range(6)]
    # earlier requests stay in flight longer, so they finish last
    slow_first = lambda body: 0.05 * (6 - int(body["messages"][-1]["content"][4]))  # noqa: E731
    with ChatServer(EchoChat(), delay=slow_first) as server:
        out = _endpoint(server, max_concurrency=2).generate(reqs)
        limited, arrived = server.max_in_flight, len(server.log)
    assert limited == 2 and arrived == 6  # two in flight at most (counted by the server), never all six at once
    assert [g.text for g in out] == [f"first word{i}" for i in range(6)]
    with ChatServer(EchoChat(), delay=0.3) as server:
        _endpoint(server, max_concurrency=6).generate(reqs)
        assert server.max_in_flight > 2  # the pool does run requests side by side


def test_answer_start_is_sent_as_an_assistant_turn_and_never_returned_twice():
    req = Request(chat("alpha beta"), seed=3, answer_start="Sure:")
    for echo in (False, True):
        with ChatServer(EchoChat(), echo_prefix=echo) as server:
            out = _endpoint(server).generate([req])
            assert server.log[0]["messages"][-1] == {"role": "assistant", "content": "Sure:"}
        assert out[0].text == "beta alpha"


def test_valid_odd_inputs_round_trip_and_an_empty_batch_sends_nothing(echo_server):
    gen = _endpoint(echo_server)
    assert gen.generate([]) == [] and echo_server.log == []
    texts = ["", "   ", "héllo 世界 🙂 مرحبا", "x " * 3000]
    out = gen.generate([Request(chat(t), seed=i) for i, t in enumerate(texts)])
    assert [g.text for g in out] == ["", "", "مرحبا 🙂 世界 héllo", " ".join(["x"] * 256)]
    assert out[3].finish_reason == "length"


def test_resolve_generator_builds_the_endpoint_from_a_config_or_the_environment(echo_server, monkeypatch):
    gen = resolve_generator({"backend": "endpoint", "base_url": echo_server.url, "model": "test-model"})
    assert isinstance(gen, EndpointChat) and gen(["one two"]) == ["two one"]
    monkeypatch.setenv("OPENAI_BASE_URL", echo_server.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    env = resolve_generator("endpoint:test-model")
    assert env.base_url is None and env.resolved_base_url() == echo_server.url
    assert env(["three four"]) == ["four three"]
    assert echo_server.log[-1]["authorization"] == "Bearer EMPTY"  # a server of your own needs no key


# -- the key -----------------------------------------------------------------------------------
def test_the_key_is_sent_but_never_shown_logged_fingerprinted_or_pickled(caplog, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    caplog.set_level(logging.DEBUG)
    with ChatServer(EchoChat(), api_key=KEY) as server:
        gen = _endpoint(server, api_key=KEY)
        assert gen.generate([Request(chat("a b"))])[0].text == "b a"
        assert server.log[-1]["authorization"] == f"Bearer {KEY}"
        shown = [repr(gen), repr(gen.get_params()), json.dumps(gen.provenance()), gen.fingerprint(), repr(vars(gen)),
                 caplog.text]
        assert "chat/completions" in caplog.text  # the client's debug log was captured
        assert not any(KEY in s for s in shown)
        assert "api_key" not in gen.get_params() and "api_key" not in gen.provenance()["params"]
        assert KEY.encode() not in pickle.dumps(gen)
        # in-memory copies keep the key; a pickled one reads the environment (unset: the placeholder)
        assert clone(gen).generate([Request(chat("c d"))])[0].text == "d c"
        assert copy.deepcopy(gen).generate([Request(chat("e f"))])[0].text == "f e"
        with pytest.raises(EndpointError, match="HTTP 401") as info:
            pickle.loads(pickle.dumps(gen)).generate([Request(chat("x"))])
        assert server.log[-1]["authorization"] == "Bearer EMPTY"
        monkeypatch.setenv("MY_ENDPOINT_KEY", KEY)
        assert _endpoint(server, api_key_env="MY_ENDPOINT_KEY").generate([Request(chat("g h"))])[0].text == "h g"
        # a server that echoes a wrong key in its error: the key is scrubbed from ours
        wrong = "sk-wrong-KEY-0042"
        with pytest.raises(EndpointError) as bad:
            _endpoint(server, api_key=wrong).generate([Request(chat("x"))])
    assert bad.value.status == 401 and wrong not in str(bad.value) and "<hidden>" in str(bad.value)
    assert info.value.status == 401 and KEY not in caplog.text


def test_openais_endpoint_without_a_key_asks_for_openai_api_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(EndpointError, match="set the OPENAI_API_KEY environment variable"):
        EndpointChat().generate([Request(chat("hi"))])


def test_the_fingerprint_keys_on_what_shapes_outputs_and_the_endpoint(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    base = EndpointChat(base_url="http://localhost:8000/v1")
    assert base.fingerprint() == EndpointChat(base_url="http://localhost:8000/v1/", max_concurrency=2,
                                              max_retries=0, timeout=5, backoff=0).fingerprint()
    assert base.fingerprint() != EndpointChat(base_url="http://localhost:8001/v1").fingerprint()
    assert base.fingerprint() != EndpointChat(base_url="http://localhost:8000/v1", temperature=0).fingerprint()
    default = EndpointChat().fingerprint()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1")
    assert EndpointChat().fingerprint() != default
    assert EndpointChat(base_url="http://user:pw@host:9/v1?k=1").provenance()["endpoint"] == "http://host:9/v1"


@pytest.mark.parametrize("kw, err, where", [
    ({"model": ""}, TypeError, "model"), ({"base_url": "ftp://x/v1"}, ValueError, "base_url"),
    ({"base_url": 8000}, TypeError, "base_url"), ({"api_key_env": ""}, TypeError, "api_key_env"),
    ({"temperature": -1}, ValueError, "temperature"), ({"top_p": 0}, ValueError, "top_p"),
    ({"max_new_tokens": 0}, ValueError, "max_new_tokens"), ({"max_concurrency": 0}, ValueError, "max_concurrency"),
    ({"max_retries": -1}, ValueError, "max_retries"), ({"max_retries": 1.5}, ValueError, "max_retries"),
    ({"timeout": 0}, ValueError, "timeout"), ({"backoff": -0.1}, ValueError, "backoff"),
    ({"backoff": float("nan")}, TypeError, "backoff"), ({"api_key": 12345}, TypeError, "api_key"),
    ({"api_key": ""}, TypeError, "api_key")])
def test_bad_parameters_are_named(kw, err, where):
    with pytest.raises(err, match=where):
        EndpointChat(**kw)


def test_a_key_in_the_wrong_place_is_refused_without_being_shown():
    for build in (lambda: EndpointChat("m", KEY), lambda: EndpointChat(api_key_env=KEY),
                  lambda: EndpointChat("m", "http://localhost:8000/v1", KEY)):
        with pytest.raises((TypeError, ValueError)) as info:
            build()
        assert KEY not in str(info.value)


def test_parameters_are_stored_as_given_and_set_params_validates():
    gen = EndpointChat(model="m", base_url="http://localhost:1/v1", timeout=5)
    assert list(gen.get_params()) == gen._param_names() and "api_key" not in gen._param_names()
    assert gen.get_params()["timeout"] == 5 and gen.get_params()["base_url"] == "http://localhost:1/v1"
    with pytest.raises(ValueError, match="max_concurrency"):
        gen.set_params(max_concurrency=0)
    assert gen.max_concurrency == 8
    with pytest.raises(ValueError, match="no parameter 'api_key'"):
        gen.set_params(api_key="x")
    with pytest.raises(TypeError, match="list of Request"):
        gen.generate("hi")


# -- hostile servers (issue #22) ------------------------------------------------------------------
@pytest.mark.parametrize("mode, names, attempts", [
    ("html", "an HTML page that is not JSON", 1), ("not_utf8", "not UTF-8", 1), ("empty", "empty body", 2),
    ("not_json", "not JSON", 1), ("choices_dict", "'choices' = a dict", 1), ("choice_str", "choices[0] = a str", 1),
    ("content_number", "content = a int (42)", 1), ("usage_strings", "usage.prompt_tokens = a str", 1),
    ("usage_negative", "usage.prompt_tokens = a int (-5)", 1)])
def test_a_broken_answer_is_an_endpoint_error_naming_url_model_and_status(mode, names, attempts):
    with ChatServer(EchoChat(), mode=mode) as server:
        with pytest.raises(EndpointError) as info:
            _endpoint(server, max_retries=1).generate([Request(chat("one two"))])
        url = server.url
    msg = str(info.value)
    assert names in msg and url in msg and "'test-model'" in msg and "HTTP 200" in msg
    assert (info.value.status, info.value.attempts) == (200, attempts)  # only an empty body is retried


def test_content_as_text_parts_is_joined():
    with ChatServer(EchoChat(), mode="content_parts") as server:
        assert _endpoint(server).generate([Request(chat("one two three"))])[0].text == "three two one"


def test_the_timeout_is_a_deadline_for_the_whole_answer():
    with ChatServer(EchoChat(), mode="drip", drip_s=0.05) as server:
        with pytest.raises(EndpointError, match=r"timed out after 0.5 s \(a deadline") as info:
            _endpoint(server, timeout=0.5, max_retries=0).generate([Request(chat("one two"))])
        sent = server.bytes_sent
    assert info.value.status is None and sent < 100  # the answer is ~250 bytes: the client hung up early


def test_a_huge_answer_is_refused_and_a_huge_error_body_is_cut():
    with ChatServer(EchoChat(), mode="huge") as server:
        with pytest.raises(EndpointError, match=r"more than \d+ bytes for a 16-token request") as info:
            _endpoint(server, max_retries=2).generate([Request(chat("one two"), max_new_tokens=16)])
        assert len(server.log) == 1 and info.value.status == 200
    with ChatServer(EchoChat(), mode="huge_error") as server:
        with pytest.raises(EndpointError, match="HTTP 500") as info:
            _endpoint(server, max_retries=0).generate([Request(chat("one two"))])
    assert len(str(info.value)) < 600 and "bytes, cut" in str(info.value)


def test_a_reasoning_model_gets_max_completion_tokens_and_no_temperature():
    with ChatServer(EchoChat(), mode="reasoning") as server:
        gen = _endpoint(server, max_retries=0)
        with pytest.warns(UserWarning, match="max_completion_tokens"):
            out = gen.generate([Request(chat("one two"), max_new_tokens=5)])
        again = gen.generate([Request(chat("three four"))])
        log = list(server.log)
    assert out[0].text == "two one" and again[0].text == "four three"
    assert gen.stats["token_field"] == "max_completion_tokens" and gen.stats["sampling_sent"] is False
    assert log[-1]["max_completion_tokens"] == 256 and log[-1]["max_tokens"] is None and log[-1]["temperature"] is None
    assert len(log) == 3 and _counts(gen)["retries"] == 0  # one retry with the other fields, then they stay
    with ChatServer(EchoChat(), mode="reasoning") as server:
        fixed = _endpoint(server, token_field="max_completion_tokens")
        assert fixed.generate([Request(chat("a b"))])[0].text == "b a" and len(server.log) == 1


def test_a_lone_surrogate_is_repaired_with_the_warning_not_the_batch_lost(echo_server):
    from humanize.models.text import TextRepairWarning

    with pytest.warns(TextRepairWarning, match="surrogate"):
        out = _endpoint(echo_server).generate([Request(chat(t), seed=i) for i, t in
                                               enumerate(["a b", "bad \ud800 text", "c d"])])
    assert [g.text for g in out] == ["b a", "text \ufffd bad", "d c"]


def test_a_temperature_that_underflows_is_sent_as_greedy(echo_server):
    from humanize.generation.base import GREEDY_BELOW, effective_temperature

    _endpoint(echo_server, temperature=1e-40).generate([Request(chat("a b"))])
    _endpoint(echo_server, temperature=0.5).generate([Request(chat("a b"))])
    assert [e["temperature"] for e in echo_server.log] == [0.0, 0.5]
    assert effective_temperature(GREEDY_BELOW / 2) == 0.0 and effective_temperature(GREEDY_BELOW) == GREEDY_BELOW


@pytest.mark.parametrize("bad, what", [(KEY[:7] + "\n" + KEY[7:], "contains a newline"),
                                       (KEY.replace("-", "\u2013", 1), r"U\+2013 EN DASH")])
def test_a_key_no_header_can_carry_is_refused_before_any_request_and_never_shown(bad, what, monkeypatch):
    from humanize._secrets import scrub_secrets

    parts = [bad, KEY[:7], KEY[7:], repr(bad)[1:-1]]
    with pytest.raises(ValueError, match=what) as info:
        EndpointChat(model="test-model", base_url="http://127.0.0.1:9/v1", api_key=bad)
    assert not any(p in str(info.value) for p in parts)
    monkeypatch.setenv("MY_ENDPOINT_KEY", bad)
    with ChatServer(EchoChat()) as server:
        gen = _endpoint(server, api_key_env="MY_ENDPOINT_KEY")
        with pytest.raises(EndpointError, match=what) as info:
            gen.generate([Request(chat("a b"))])
        assert server.log == []  # checked before the first request, not retried as a network failure
    shown = [str(info.value), repr(gen), repr(gen.get_params()), gen.fingerprint()]
    assert not any(p in s for s in shown for p in parts) and bad.encode() not in pickle.dumps(gen)
    # the second defence (what the runner applies before a failure is stored): every form of a key seen
    assert scrub_secrets(f"x {bad!r} {json.dumps(bad)} y") == "x '<hidden>' \"<hidden>\" y"


def test_credentials_in_base_url_are_held_like_the_key():
    secret = "pw-SECRET-991"
    with ChatServer(EchoChat()) as server:
        port = server.url.split(":")[2].split("/")[0]
        gen = EndpointChat(model="test-model", base_url=f"http://user:{secret}@127.0.0.1:{port}/v1?api-key={secret}",
                           backoff=0.01, max_retries=0)
        shown = [repr(gen), repr(gen.get_params()), gen.fingerprint(), json.dumps(gen.provenance())]
        assert not any(secret in s for s in shown) and secret.encode() not in pickle.dumps(gen)
        assert gen.get_params()["base_url"] == f"http://<hidden>@127.0.0.1:{port}/v1?api-key=<hidden>"
        assert gen.generate([Request(chat("a b"))])[0].text == "b a"
        assert server.log[-1]["authorization"].startswith("Basic ") and server.log[-1]["path"].endswith(secret)
        assert clone(gen).generate([Request(chat("c d"))])[0].text == "d c"
        with pytest.raises(EndpointError, match="had credentials") as info:
            pickle.loads(pickle.dumps(gen)).generate([Request(chat("x"))])
    assert secret not in str(info.value)


def test_a_secret_that_contains_another_registered_secret_is_hidden_whole():
    """Registered secrets are process-wide: a shorter one inside a longer one must not leave the rest
    of the longer one showing (the order the set gives them in does not matter)."""
    from humanize._secrets import register_secret, scrub_secrets

    inner, outer = "inner-SECRET-91c2", "sk\u2013outer-inner-SECRET-91c2"
    register_secret(inner)
    register_secret(outer)
    assert scrub_secrets(f"a {outer!r} {json.dumps(outer)} {inner} b") == "a '<hidden>' \"<hidden>\" <hidden> b"


def test_a_numeric_secret_is_hidden_as_a_number_never_inside_other_digits():
    # a watermark's numeric key registered in this process must not eat the digits of a run id or a figure
    from humanize._secrets import hide, scrub_secrets

    hide(23456)
    assert scrub_secrets("key 23456, run 0123456789abcdef, 123456 texts, z=23456.") == \
        "key <hidden>, run 0123456789abcdef, 123456 texts, z=<hidden>."
