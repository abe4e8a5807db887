"""Chat generation on any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp's server, ...).

TH-Bench §2.2 rewrites text with chat LLMs; most of them are served behind the
chat-completions protocol. :class:`EndpointChat` sends each request there through the
``openai`` client, several at once (at most ``max_concurrency``), retries on rate limits,
timeouts, connection errors and server errors with exponential backoff, and reports the
prompt / completion tokens the server counted and the number of queries to the cost
meters (:func:`humanize.generation.base.report_usage`).
"""
from __future__ import annotations

import copy
import email.utils
import os
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Sequence
from urllib.parse import urlsplit, urlunsplit

from numbers import Integral, Real

from humanize._validation import Interval
from humanize.models.loading import NONBLANK_STR

from .base import SAMPLING_CONSTRAINTS, Generation, Generator, Request, check_requests, report_usage
from humanize.exceptions import EndpointError  # defined there; importable here as before

__all__ = ["EndpointChat", "EndpointError", "DEFAULT_BASE_URL"]

#: Where requests go when neither ``base_url`` nor ``OPENAI_BASE_URL`` is set.
DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: The key sent to a server of your own when no key is configured (vLLM and llama.cpp accept any).
PLACEHOLDER_KEY = "EMPTY"
#: Statuses worth retrying: request timeout, conflict (lock), rate limit, and every 5xx.
_RETRY_STATUSES = frozenset({408, 409, 429})
#: The longest wait a server's Retry-After can impose on one retry, in seconds.
MAX_RETRY_AFTER = 120.0
_SEED_MOD = 2 ** 31  # servers differ in seed width (llama.cpp: 32-bit); this range is accepted everywhere
_LOCK = threading.Lock()


class _Secret:
    """Holds the API key; prints as ``<hidden>`` so no repr, log line or ``vars()`` dump shows it."""

    __slots__ = ("value",)

    def __init__(self, value: Optional[str]):
        self.value = value

    def __repr__(self) -> str:
        return "<hidden>" if self.value else "None"


def _display_url(url: str) -> str:
    """``url`` without user info, query or fragment (those may hold credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


class EndpointChat(Generator):
    """A chat model behind an OpenAI-compatible chat-completions endpoint.

    Every parameter after ``base_url`` is keyword-only (so a key can never land in a
    positional slot that is a parameter).

    model : the model name the server knows (``"gpt-4o-mini"``, a vLLM model id, ...)
    base_url : the API root, e.g. ``"http://localhost:8000/v1"``; None reads ``OPENAI_BASE_URL``,
        then falls back to OpenAI's (:data:`DEFAULT_BASE_URL`)
    api_key_env : the environment variable the key is read from when ``api_key`` is not given
    temperature, top_p, max_new_tokens : sampling, sent with every request (temperature 0: greedy)
    max_concurrency : requests in flight at once (a thread pool); results come back in input order
    max_retries : retries per request on 408/409/429/5xx, timeouts and connection errors
        (other 4xx fail at once with the server's message); each retry waits ``backoff * 2**k``
        seconds times a jitter in [0.5, 1.5) drawn from a generator seeded by the request's seed,
        or what the server's ``Retry-After`` / ``retry-after-ms`` asks (at most 120 s)
    timeout : seconds per HTTP request
    api_key : the key itself. It is deliberately **not a parameter**: it is kept
        out of ``get_params``, ``repr``, the fingerprint and every error message, and is not
        pickled (a pickled or stored configuration re-reads ``api_key_env``); ``sklearn.clone``
        and ``copy.deepcopy`` keep it in memory. With no key anywhere, a server of your own
        (any ``base_url`` other than OpenAI's) gets the placeholder ``"EMPTY"``; OpenAI's
        endpoint is an error asking to set the variable.

    Each request carries ``seed`` (the request's seed modulo 2**31: vLLM and OpenAI honour
    it, best effort), ``n=1`` and ``max_tokens``. A request's ``answer_start`` goes as a final
    assistant turn (servers that continue a final assistant message, such as vLLM with
    ``continue_final_message``, start the answer with it; others treat it as context); when
    the server's reply repeats it, the repetition is stripped, so the text never starts with
    it twice. ``stats`` counts requests, attempts, retries and answers without usage.
    Outputs are as reproducible as the server makes them: greedy, or seeded sampling where
    the server honours ``seed``.
    """

    name = "endpoint"
    kind = "chat"
    version = "1"
    #: parameters that change how requests travel, not what comes back: left out of the fingerprint
    _transport_params = ("api_key_env", "max_concurrency", "max_retries", "timeout", "backoff")
    _parameter_constraints = {
        "model": [NONBLANK_STR],  # the server's model name
        "base_url": ["str", None],
        **SAMPLING_CONSTRAINTS,
        "max_concurrency": [Interval(Integral, 1, None)],
        "max_retries": [Interval(Integral, 0, None)],
        "timeout": [Interval(Real, 0, None, closed="neither")],  # seconds
        "backoff": [Interval(Real, 0, None)],
    }

    def __init__(self, model: str = "gpt-4o-mini", base_url: Optional[str] = None, *,
                 api_key_env: str = "OPENAI_API_KEY", temperature: float = 0.7, top_p: float = 0.95,
                 max_new_tokens: int = 256, max_concurrency: int = 8, max_retries: int = 5,
                 timeout: float = 60.0, backoff: float = 0.5, api_key: Optional[str] = None):
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.top_p = top_p
        self.max_new_tokens = max_new_tokens
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff = backoff
        if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
            what = "an empty str" if isinstance(api_key, str) else f"a {type(api_key).__name__}"
            raise TypeError(f"EndpointChat: api_key must be a non-empty str or None, got {what}")
        self._api_key = _Secret(api_key)
        self._client: Any = None
        self._client_for: Optional[tuple] = None
        self.stats = {"requests": 0, "attempts": 0, "retries": 0, "missing_usage": 0}
        self._validate()

    # -- parameters -----------------------------------------------------------------
    @classmethod
    def _param_tuple(cls) -> tuple:
        return tuple(n for n in super()._param_tuple() if n != "api_key")

    def _check(self) -> None:
        own = "EndpointChat"
        if self.base_url is not None:
            _check_url(self.base_url, "base_url")
        env = self.api_key_env
        if not isinstance(env, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", env):
            # the value is not shown: a key passed here by mistake must not reach a log
            raise TypeError(f"{own}: api_key_env must name an environment variable (letters, digits, _), got "
                            f"{'a str' if isinstance(env, str) else 'a ' + type(env).__name__} that does not")

    def resolved_base_url(self) -> str:
        """The API root requests go to: ``base_url``, else ``$OPENAI_BASE_URL``, else OpenAI's."""
        url = (self.base_url or "").strip() or os.environ.get("OPENAI_BASE_URL", "").strip() or DEFAULT_BASE_URL
        if self.base_url is None and url != DEFAULT_BASE_URL:
            _check_url(url, "the OPENAI_BASE_URL environment variable")
        return url.rstrip("/")

    def provenance(self) -> dict:
        """Class, version and the parameters that shape outputs, plus the endpoint resolved (never the key)."""
        out = super().provenance()
        for name in (*self._transport_params, "base_url"):  # base_url: resolved below
            out["params"].pop(name, None)
        out["endpoint"] = _display_url(self.resolved_base_url())
        return out

    # -- copies: the key stays in memory, never in a pickle ------------------------------
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_api_key"] = _Secret(None)
        state["_client"] = state["_client_for"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __deepcopy__(self, memo: dict) -> "EndpointChat":
        new = type(self).__new__(type(self))
        new.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        new._api_key = self._api_key
        return new

    def __sklearn_clone__(self) -> "EndpointChat":
        return type(self)(**self.get_params(deep=False), api_key=self._api_key.value)

    # -- the client --------------------------------------------------------------------
    def _key(self, url: str) -> str:
        key = self._api_key.value or os.environ.get(self.api_key_env, "").strip()
        if key:
            return key
        if url == DEFAULT_BASE_URL:
            raise EndpointError(
                f"EndpointChat: no API key for {url}: set the {self.api_key_env} environment variable "
                f"(or pass api_key=...), or point base_url / OPENAI_BASE_URL at a server of your own",
                base_url=url, model=self.model)
        return PLACEHOLDER_KEY

    def _get_client(self) -> tuple[Any, str, str]:
        import openai

        url = self.resolved_base_url()
        key = self._key(url)
        wanted = (url, float(self.timeout), hash(key))
        with _LOCK:
            if self._client is None or self._client_for != wanted:
                # the client's own retries are off: ours are seeded, counted and honour Retry-After
                self._client = openai.OpenAI(base_url=url, api_key=key, max_retries=0, timeout=float(self.timeout))
                self._client_for = wanted
            return self._client, url, key

    # -- generation --------------------------------------------------------------------
    def generate(self, requests: Sequence[Request]) -> list[Generation]:
        """One generation per request, in order; requests run concurrently (``max_concurrency``)."""
        reqs = check_requests("EndpointChat", requests)
        if not reqs:
            return []
        client, url, key = self._get_client()
        results: list = [None] * len(reqs)
        error: Optional[BaseException] = None
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(reqs)),
                                thread_name_prefix="endpoint") as pool:
            futures = [pool.submit(self._one, client, url, key, r) for r in reqs]
            for i, fut in enumerate(futures):
                try:
                    results[i] = fut.result()
                except BaseException as exc:  # noqa: BLE001 - re-raised below, after the usage is counted
                    error = exc
                    for f in futures[i + 1:]:
                        f.cancel()
                    break
            for i, fut in enumerate(futures):  # requests already in flight finish; their tokens were spent
                if results[i] is None and not fut.cancelled() and fut.exception() is None:
                    results[i] = fut.result()
        done = [r for r in results if r is not None]
        gens = [g for g, _ in done]
        retries = sum(n for _, n in done)
        attempts = len(done) + retries
        if isinstance(error, EndpointError) and error.attempts:  # the failed request's tries count too
            retries += error.attempts - 1
            attempts += error.attempts
        with _LOCK:
            self.stats["requests"] += len(done)
            self.stats["retries"] += retries
            self.stats["attempts"] += attempts
        report_usage(gens)
        from humanize.cost import report

        report(endpoint_retries=retries)
        if error is not None:
            raise error
        return gens

    def _one(self, client: Any, url: str, key: str, req: Request) -> tuple[Generation, int]:
        """One request with its retries: ``(generation, retries used)`` or an :class:`EndpointError`."""
        import openai

        messages = [{"role": role, "content": content} for role, content in req.messages]
        if req.answer_start:
            messages.append({"role": "assistant", "content": req.answer_start})
        jitter = random.Random(req.seed)
        attempts = self.max_retries + 1
        for attempt in range(attempts):
            wait = None
            try:
                resp = client.chat.completions.create(
                    model=self.model, messages=messages, temperature=float(self.temperature),
                    top_p=float(self.top_p), max_tokens=int(req.max_new_tokens or self.max_new_tokens),
                    seed=req.seed % _SEED_MOD, n=1)
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status not in _RETRY_STATUSES and status < 500:
                    raise self._error(f"was refused with HTTP {status} (not retried): {_server_message(exc)}",
                                      url, key, status, attempt + 1) from None
                why = f"HTTP {status}: {_server_message(exc)}"
                wait = _retry_after(exc.response.headers)
            except openai.APITimeoutError:
                status, why = None, f"timed out after {self.timeout} s"
            except openai.APIConnectionError as exc:
                status, why = None, f"unreachable ({_cause(exc)})"
            else:
                return self._generation(resp, req, url, key, attempt + 1), attempt
            if attempt + 1 == attempts:
                break
            if wait is None:
                wait = self.backoff * 2 ** attempt * (0.5 + jitter.random())
            time.sleep(min(wait, MAX_RETRY_AFTER))
        if status is None and why.startswith("unreachable"):
            raise self._error(
                f"the endpoint at {_display_url(url)} is {why} after {attempts} attempt(s); start the server, "
                f"or point base_url= (or the OPENAI_BASE_URL environment variable) at a running "
                f"OpenAI-compatible server, e.g. http://localhost:8000/v1", url, key, None, attempts,
                prefix=False) from None
        raise self._error(f"failed after {attempts} attempt(s), the last {why}", url, key, status, attempts) from None

    def _generation(self, resp: Any, req: Request, url: str, key: str, attempts: int) -> Generation:
        choices = getattr(resp, "choices", None) or []
        if not choices:
            raise self._error("answered without any choice", url, key, 200, attempts)
        choice = choices[0]
        text = getattr(choice.message, "content", None) or ""
        if req.answer_start and text.startswith(req.answer_start):
            text = text[len(req.answer_start):]
        usage = getattr(resp, "usage", None)
        if usage is None:
            with _LOCK:
                self.stats["missing_usage"] += 1
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        return Generation(text, tokens_in, tokens_out, choice.finish_reason or "stop")

    def _error(self, what: str, url: str, key: str, status: Optional[int], attempts: int,
               prefix: bool = True) -> EndpointError:
        shown = _display_url(url)
        msg = (f"EndpointChat: model {self.model!r} at {shown} {what}" if prefix
               else f"EndpointChat (model {self.model!r}): {what}")
        if key and key != PLACEHOLDER_KEY:
            msg = msg.replace(key, "<hidden>")
        return EndpointError(msg, base_url=shown, model=self.model, status=status, attempts=attempts)


def _check_url(url: str, where: str, owner: str = "EndpointChat",
               example: str = "http://localhost:8000/v1") -> None:
    """An http(s) URL with a host, or a ``ValueError`` naming ``owner``/``where`` (shared with the endpoint detector)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        # shown only when it looks like an address: a key passed here by mistake must not reach a log
        shown = (repr(_display_url(url)) if parts.hostname else repr(url[:80]) if any(c in url for c in ":/.")
                 else "a str that is not a URL (not shown, in case it is a key)")
        raise ValueError(f"{owner}: {where} must be an http(s) URL such as {example}, got {shown}")


def _server_message(exc: Any) -> str:
    """The server's own error message (OpenAI's ``{"error": {"message": ...}}``), else the client's."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        msg = inner.get("message") if isinstance(inner, dict) else inner
        if isinstance(msg, str) and msg:
            return msg
    return str(getattr(exc, "message", "") or exc)[:500]


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return f"{type(cause).__name__}: {cause}"[:200] if cause is not None else str(exc)


def _retry_after(headers: Any) -> Optional[float]:
    """Seconds a server asks to wait: ``retry-after-ms``, or ``Retry-After`` (seconds or an HTTP date)."""
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None
