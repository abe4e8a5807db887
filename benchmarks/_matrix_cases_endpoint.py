"""Cases of the bad-input matrix: the HTTP endpoints (the chat generator ``EndpointChat``, the
``EndpointDetector``) against a local server that misbehaves one way per case (the test
suite's stand-in chat server, ``tests/generation/chat_server.py``, with its hostile modes),
keys and URLs that carry what they must not, and temperatures that underflow.

Each case starts its own server on an ephemeral port and stops it when done. A leaked secret
is a wrong result: the cases that hold one return what the library showed (messages, reprs,
parameters, pickles) and the oracle looks for the secret in it.
"""
from __future__ import annotations

import contextlib
import os
import pickle
import sys

from _matrix_core import Case

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET = "sk-matrix-SECRET-7781"


def _server(**kw):
    if _ROOT not in sys.path:
        sys.path.insert(0, _ROOT)
    from tests.generation.chat_server import ChatServer, EchoChat

    return ChatServer(EchoChat(), **kw)


def _chat(url, **kw):
    from humanize.generation.endpoint import EndpointChat

    kw.setdefault("max_retries", 0)
    kw.setdefault("backoff", 0.01)
    kw.setdefault("timeout", 5.0)
    return EndpointChat(model="test-model", base_url=url, **kw)


def _requests(*texts, **kw):
    from humanize.generation import Request, chat

    return [Request(chat(t), seed=i, **kw) for i, t in enumerate(texts)]


def _generate(mode=None, server_kw=None, texts=("one two three",), **kw):
    with _server(mode=mode, **(server_kw or {})) as server:
        max_new = kw.pop("request_tokens", None)
        out = _chat(server.url, **kw).generate(_requests(*texts, max_new_tokens=max_new))
        return {"texts": [g.text for g in out], "usage": [(g.tokens_in, g.tokens_out) for g in out],
                "log": list(server.log), "bytes_sent": server.bytes_sent}


def _texts_oracle(want):
    def check(value, warns):
        got = value["texts"]
        return None if got == want else f"texts {str(got)[:80]!r}, want {want!r}"
    return check


def _shown_secret(message: str, secrets=(SECRET,)) -> bool:
    return any(s in message for s in secrets)


def _leak_guard(call, secrets=(SECRET,), limit=2000):
    """Run ``call``; an error whose message shows a secret, or runs past ``limit`` characters, becomes
    a result the oracle flags (a wrong outcome, not a clear error)."""
    def run(ctx):
        try:
            return call(ctx)
        except Exception as exc:  # noqa: BLE001 - inspected, then re-raised
            text = f"{type(exc).__name__}: {exc}"
            if _shown_secret(text, secrets):
                return {"error": text, "why": "shows the secret"}
            if len(text) > limit:
                return {"error": text, "why": f"is {len(text)} characters long"}
            raise
    return run


def _no_error_oracle(value, warns):
    if isinstance(value, dict) and "error" in value:
        return f"the error message {value['why']}: {value['error'][:100]!r}"
    return None


def _key_oracle(value, warns):
    return _no_error_oracle(value, warns) or "a key no header can carry was accepted"


def _key_call(key):
    def call(ctx):
        with _server() as server:
            _chat(server.url, api_key=key).generate(_requests("a b"))
        return {"sent": True}
    return call


def _env_key_call(key):
    def call(ctx):
        old = os.environ.get("MATRIX_ENDPOINT_KEY")
        os.environ["MATRIX_ENDPOINT_KEY"] = key
        try:
            with _server() as server:
                _chat(server.url, api_key_env="MATRIX_ENDPOINT_KEY").generate(_requests("a b"))
        finally:
            if old is None:
                os.environ.pop("MATRIX_ENDPOINT_KEY", None)
            else:
                os.environ["MATRIX_ENDPOINT_KEY"] = old
        return {"sent": True}
    return call


def _detector_key_call(key):
    def call(ctx):
        from humanize.detectors.endpoint import EndpointDetector

        old = os.environ.get("MATRIX_DETECTOR_KEY")
        os.environ["MATRIX_DETECTOR_KEY"] = key
        try:
            with _server() as server:
                EndpointDetector(server.url + "/score", api_key_env="MATRIX_DETECTOR_KEY", max_retries=0,
                                 timeout=5).score(["a text"])
        finally:
            if old is None:
                os.environ.pop("MATRIX_DETECTOR_KEY", None)
            else:
                os.environ["MATRIX_DETECTOR_KEY"] = old
        return {"sent": True}
    return call


def _url_credentials(ctx):
    with _server() as server:
        port = server.url.split(":")[2].split("/")[0]
        url = f"http://user:{SECRET}@127.0.0.1:{port}/v1?api-key={SECRET}"
        gen = _chat(url)
        shown = [repr(gen), repr(gen.get_params()), gen.fingerprint(), repr(gen.provenance())]
        with contextlib.suppress(Exception):
            shown.append(pickle.dumps(gen).decode("latin-1"))
        return {"shown": shown}


def _url_oracle(value, warns):
    for i, s in enumerate(value["shown"]):
        if SECRET in s:
            return f"the base_url's credentials are shown ({['repr', 'get_params', 'fingerprint', 'provenance', 'pickle'][i]})"
    return None


def _surrogate_batch(ctx):
    return _generate(texts=("alpha beta", "bad \ud800 text", "gamma delta"))


def _surrogate_oracle(value, warns):
    want = ["beta alpha", "text \ufffd bad", "delta gamma"]
    if value["texts"] != want:
        return f"texts {value['texts']!r}, want {want!r}"
    if not any("surrogate" in w for w in warns):
        return "the repair was silent (no warning)"
    return None


def _tiny_temperature(ctx):
    return _generate(temperature=1e-40)


def _tiny_temperature_oracle(value, warns):
    sent = value["log"][0].get("temperature")
    if sent not in (0, 0.0):
        return f"temperature {sent!r} sent: sampling underflows there (an empty or garbled answer)"
    return None


def _local_tiny_temperature(ctx):
    from humanize.generation.local import LocalChat

    tiny = LocalChat("smollm2-135m-instruct", temperature=1e-40, max_new_tokens=6)
    greedy = LocalChat("smollm2-135m-instruct", temperature=0, max_new_tokens=6)
    reqs = _requests("Name a colour.")
    return {"tiny": tiny.generate(reqs)[0].text, "greedy": greedy.generate(reqs)[0].text}


def _local_tiny_oracle(value, warns):
    if value["tiny"] != value["greedy"]:
        return f"temperature 1e-40 gave {value['tiny']!r}, greedy {value['greedy']!r}"
    return None


def _huge_oracle(value, warns):
    n = sum(len(t) for t in value["texts"])
    return f"a {n}-character answer accepted for a 16-token request" if n > 100_000 else None


def endpoint_cases(add) -> None:
    layer = "endpoint"
    # the body of a 200 answer
    for mode, names in [("html", ("html", "json")), ("not_utf8", ("utf-8",)), ("empty", ("empty",)),
                        ("not_json", ("json",)), ("choices_dict", ("choices",)), ("choice_str", ("choice",)),
                        ("content_number", ("content",)), ("usage_strings", ("usage", "tokens")),
                        ("usage_negative", ("usage", "tokens"))]:
        add(Case(layer, f"chat_200_{mode}", lambda ctx, m=mode: _generate(m), "error",
                 names=names, must=("test-model", "127.0.0.1"), timeout=20, quick=True))
    add(Case(layer, "chat_content_parts", lambda ctx: _generate("content_parts"), "result",
             oracle=_texts_oracle(["three two one"]), timeout=20, quick=True))
    # size and time
    add(Case(layer, "chat_byte_at_a_time", lambda ctx: _generate("drip", {"drip_s": 0.1}, timeout=1.0), "error",
             names=("timed out", "deadline"), must=("test-model",), timeout=12))
    add(Case(layer, "chat_huge_answer", lambda ctx: _generate("huge", request_tokens=16), "error",
             names=("bytes", "large"), oracle=_huge_oracle, timeout=30))
    add(Case(layer, "chat_huge_error_body", _leak_guard(lambda ctx: _generate("huge_error")), "error",
             names=("500",), oracle=_no_error_oracle, timeout=30))
    # what the server accepts
    add(Case(layer, "chat_reasoning_model", lambda ctx: _generate("reasoning"), "result",
             oracle=_texts_oracle(["three two one"]), timeout=20, quick=True))
    add(Case(layer, "chat_lone_surrogate_in_batch", _surrogate_batch, "result", oracle=_surrogate_oracle,
             timeout=20, quick=True))
    add(Case(layer, "chat_temperature_1e-40", _tiny_temperature, "either", oracle=_tiny_temperature_oracle,
             names=("temperature",), timeout=20))
    add(Case(layer, "local_temperature_1e-40", _local_tiny_temperature, "either", oracle=_local_tiny_oracle,
             names=("temperature",), group="model", timeout=120))
    # secrets
    for where, make in [("api_key", _key_call), ("env_key", _env_key_call), ("detector_key", _detector_key_call)]:
        for what, key, names in [("newline", SECRET[:8] + "\n" + SECRET[8:], ("newline",)),
                                 ("en_dash", SECRET.replace("-", "\u2013", 1), ("non-ascii", "U+2013"))]:
            add(Case(layer, f"{where}_with_{what}", _leak_guard(make(key), (SECRET[:8], SECRET[8:], key)), "error",
                     names=names, must=("key",), oracle=_key_oracle, timeout=20, quick=True))
    add(Case(layer, "base_url_with_credentials", _url_credentials, "result", oracle=_url_oracle, timeout=20,
             quick=True))
