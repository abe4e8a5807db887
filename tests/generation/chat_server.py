"""A real OpenAI-compatible chat-completions server on localhost, for the endpoint tests.

``ChatServer(generator)`` serves ``POST /v1/chat/completions`` and ``GET /v1/models``
over HTTP (stdlib ``ThreadingHTTPServer`` in a background thread, an ephemeral port),
answering with whatever the backing :class:`~humanize.generation.Generator` generates.
Options make it misbehave the way real servers do: ``fail_first`` (answer those statuses
first, 429 with a ``Retry-After``), ``api_key`` (401 on a wrong bearer token, echoing it
as some servers do), ``delay`` (seconds, or a function of the request body, spent in
flight before generating), ``max_tokens_limit`` (400 above it) and ``echo_prefix``
(start the reply with a final assistant turn's text, as some servers echo a prefill).
The request's ``temperature`` and ``top_p`` apply where the back end has those parameters.
``log`` records every request that arrived; ``max_in_flight`` the most handled at once.

``mode`` makes it answer the way a broken or hostile server does (see :data:`MODES`): a body
sent a byte at a time (``drip``, ``drip_s`` seconds per byte), a huge answer or error body,
HTML, bytes that are not UTF-8, no body, choices / content / usage of the wrong shape, a
reasoning model that refuses ``max_tokens`` and ``temperature`` (``reasoning``).
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Sequence, Union

from humanize.generation import Generation, Generator, Request

__all__ = ["ChatServer", "EchoChat", "MODES"]

#: the ways ``ChatServer(mode=...)`` misbehaves
MODES = ("drip", "huge", "huge_error", "html", "not_utf8", "empty", "not_json", "choices_dict", "choice_str",
         "content_number", "content_parts", "usage_strings", "usage_negative", "reasoning")


class EchoChat(Generator):
    """A cheap deterministic chat back end: the last user turn's words, reversed.

    Tokens are whitespace words; ``max_new_tokens`` truncates (finish reason ``"length"``);
    ``answer_start`` is put first, as a local model would continue it, and not returned.
    """

    name = "echo"

    def __init__(self, max_new_tokens: int = 64):
        self.max_new_tokens = max_new_tokens

    def generate(self, requests: Sequence[Request]) -> list[Generation]:
        out = []
        for r in requests:
            user = [c for role, c in r.messages if role == "user"]
            words = (user[-1] if user else "").split()[::-1]
            limit = r.max_new_tokens or self.max_new_tokens
            n_in = sum(len(c.split()) for _, c in r.messages) + len(r.answer_start.split())
            out.append(Generation(" ".join(words[:limit]), n_in, min(len(words), limit),
                                  "length" if len(words) > limit else "stop"))
        return out


def _error(status: int, message: str, kind: str) -> tuple[int, dict]:
    return status, {"error": {"message": message, "type": kind, "param": None, "code": None}}


class ChatServer:
    """A chat-completions server backed by ``generator``; use as a context manager (``url`` is its API root)."""

    def __init__(self, generator: Generator, *, model: str = "test-model", fail_first: Sequence[int] = (),
                 retry_after: Optional[str] = "1", api_key: Optional[str] = None,
                 delay: Union[float, Callable[[dict], float]] = 0.0, max_tokens_limit: Optional[int] = None,
                 echo_prefix: bool = False, mode: Optional[str] = None, drip_s: float = 0.05):
        assert mode is None or mode in MODES, mode
        self.mode, self.drip_s = mode, drip_s
        self.generator, self.model = generator, model
        self.fail_first = list(fail_first)
        self.retry_after, self.api_key, self.delay = retry_after, api_key, delay
        self.max_tokens_limit, self.echo_prefix = max_tokens_limit, echo_prefix
        self.log: list[dict] = []
        self.bytes_sent = 0
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        self._gen_lock = threading.Lock()  # one generate() at a time: a local model is not thread-safe
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # -- life cycle ----------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._httpd is not None, "the server is not running"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "ChatServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [
                        {"id": server.model, "object": "model", "created": 0, "owned_by": "humanize-tests"}]})
                else:
                    self._send(*_error(404, f"no route {self.path}", "not_found"))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    status, body, headers = server._handle(self.path, raw, dict(self.headers.items()))
                finally:
                    with server._lock:
                        server.in_flight -= 1
                self._send(status, body, headers)

            def _send(self, status: int, body: Any, headers: Optional[dict] = None) -> None:
                # bytes go out as they are (a broken server's body); a dict as JSON
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                headers = dict(headers or {})
                self.send_response(status)
                self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    if server.mode == "drip" and status == 200:  # a byte at a time, each in time for a read timeout
                        for i in range(len(data)):
                            self.wfile.write(data[i:i + 1])
                            self.wfile.flush()
                            server.bytes_sent += 1
                            time.sleep(server.drip_s)
                    else:
                        self.wfile.write(data)
                        server.bytes_sent += len(data)
                except OSError:  # the client hung up (a deadline or a size limit): nothing to do
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="chat-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "ChatServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- one request -------------------------------------------------------------------
    def _handle(self, path: str, raw: bytes, headers: dict) -> tuple[int, dict, dict]:
        auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        entry: dict = {"path": path, "authorization": auth, "time": time.perf_counter()}
        with self._lock:
            self.log.append(entry)
            fail = self.fail_first.pop(0) if self.fail_first else None
        if path.split("?")[0].rstrip("/") != "/v1/chat/completions":
            return (*_error(404, f"no route {path}", "not_found"), {})
        try:
            body = json.loads(raw or b"null")
            assert isinstance(body, dict)
        except (ValueError, AssertionError):
            return (*_error(400, "the body must be a JSON object", "invalid_request_error"), {})
        entry.update({k: body.get(k) for k in ("model", "messages", "seed", "temperature", "top_p",
                                               "max_tokens", "max_completion_tokens", "n")})
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            given = auth.removeprefix("Bearer ")
            return (*_error(401, f"Incorrect API key provided: {given}", "invalid_request_error"), {})
        if fail is not None:
            entry["status"] = fail
            extra = {"Retry-After": self.retry_after} if fail == 429 and self.retry_after is not None else {}
            return (*_error(fail, f"injected failure {fail}", "server_error"), extra)
        if self.mode == "reasoning":  # OpenAI's o-series: max_completion_tokens, default temperature only
            if "max_tokens" in body:
                return (*_error(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                                     "'max_completion_tokens' instead.", "invalid_request_error"), {})
            if body.get("temperature") not in (None, 1):
                return (*_error(400, "Unsupported value: 'temperature' does not support 0.7 with this model. Only "
                                     "the default (1) value is supported.", "invalid_request_error"), {})
            body = {**body, "max_tokens": body.get("max_completion_tokens")}
        if self.mode == "huge_error":
            return 500, {"error": {"message": "overloaded " + "x" * 5_000_000}}, {}
        if body.get("model") != self.model:
            return (*_error(404, f"The model `{body.get('model')}` does not exist.", "not_found_error"), {})
        try:
            request = _to_request(body)
        except (TypeError, ValueError, KeyError) as exc:
            return (*_error(400, f"bad request: {exc}", "invalid_request_error"), {})
        if self.max_tokens_limit is not None and (request.max_new_tokens or 0) > self.max_tokens_limit:
            return (*_error(400, f"max_tokens must be at most {self.max_tokens_limit}, got "
                                 f"{request.max_new_tokens}", "invalid_request_error"), {})
        delay = self.delay(body) if callable(self.delay) else self.delay
        if delay:
            time.sleep(delay)
        with self._gen_lock:  # the request's sampling settings, where the back end has them (as servers do)
            g = self.generator
            sampling = {k: body[k] for k in ("temperature", "top_p") if body.get(k) is not None
                        and k in g.get_params(deep=False)}
            before = {k: getattr(g, k) for k in sampling}
            g.set_params(**sampling)
            try:
                gen = g.generate([request])[0]
            finally:
                g.set_params(**before)
        text = (request.answer_start + gen.text) if self.echo_prefix else gen.text
        entry["status"] = 200
        broken = self._broken(text, gen)
        if broken is not None:
            return broken
        return 200, {
            "id": f"chatcmpl-{len(self.log)}", "object": "chat.completion", "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": gen.finish_reason, "logprobs": None}],
            "usage": {"prompt_tokens": gen.tokens_in, "completion_tokens": gen.tokens_out,
                      "total_tokens": gen.tokens_in + gen.tokens_out},
        }, {}


    def _broken(self, text: str, gen: Generation) -> Optional[tuple]:
        """The answer of a broken server (``mode``), or None for a well-formed one."""
        mode = self.mode
        if mode is None or mode in ("drip", "reasoning"):
            return None
        if mode == "huge":
            text = "word " * 4_000_000  # 20 MB, whatever was asked
        raw = {"html": (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
               "not_utf8": (json.dumps({"choices": [{"message": {"content": "@@"}}]}).encode()
                            .replace(b"@@", b"caf\xe9 \xff"), "application/json"),
               "empty": (b"", "application/json"), "not_json": (b"OK, generated.", "text/plain")}
        if mode in raw:
            data, kind = raw[mode]
            return 200, data, {"Content-Type": kind}
        message: Any = {"role": "assistant", "content": text}
        usage: Any = {"prompt_tokens": gen.tokens_in, "completion_tokens": gen.tokens_out}
        if mode == "content_number":
            message["content"] = 42
        elif mode == "content_parts":
            words = text.split(" ")
            message["content"] = [{"type": "text", "text": " ".join(words[:1])},
                                  {"type": "text", "text": (" " if len(words) > 1 else "") + " ".join(words[1:])}]
        elif mode == "usage_strings":
            usage = {"prompt_tokens": "12", "completion_tokens": "many"}
        elif mode == "usage_negative":
            usage = {"prompt_tokens": -5, "completion_tokens": -1}
        choice: Any = {"index": 0, "message": message, "finish_reason": gen.finish_reason}
        choices: Any = [choice]
        if mode == "choices_dict":
            choices = choice
        elif mode == "choice_str":
            choices = [text]
        return 200, {"object": "chat.completion", "model": self.model, "choices": choices, "usage": usage}, {}


def _to_request(body: dict) -> Request:
    """The chat-completions body as a :class:`Request`; a final assistant turn becomes ``answer_start``."""
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list")
    turns = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant") \
                or not isinstance(m.get("content"), str):
            raise ValueError(f"bad message {m!r}")
        turns.append((m["role"], m["content"]))
    answer_start = ""
    if turns[-1][0] == "assistant":
        answer_start = turns.pop()[1]
    if not turns:
        raise ValueError("messages hold no user turn")
    seed = body.get("seed") or 0
    max_tokens = body.get("max_tokens")
    if not isinstance(seed, int) or (max_tokens is not None and not isinstance(max_tokens, int)):
        raise TypeError("seed and max_tokens must be integers")
    return Request(tuple(turns), seed, max_tokens, answer_start)
