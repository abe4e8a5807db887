"""Chat generation on any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp's server, ...).

TH-Bench §2.2 rewrites text with chat LLMs; most of them are served behind the
chat-completions protocol. :class:`EndpointChat` POSTs each request there (the standard
library's HTTP client, :func:`humanize._http.post`, shared with the endpoint detector), several at once (at
most ``max_concurrency``), retries on rate limits, timeouts, connection errors and server
errors with exponential backoff, and reports the prompt / completion tokens the server
counted and the number of queries to the cost meters
(:func:`humanize.generation.base.report_usage`).

Every request is bounded: ``timeout`` is a deadline for the whole request (connecting,
sending, the answer's last byte), not a wait per read, and an answer may be at most
:func:`answer_limit` bytes (derived from the request's ``max_tokens``); an error body is read
up to :data:`humanize._http.MAX_ERROR_BYTES` and shown as a short excerpt.
"""
from __future__ import annotations

import base64
import copy
import json
import logging
import os
import warnings
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Sequence
from urllib.parse import urlsplit, urlunsplit

from numbers import Integral, Real

from humanize._http import (HIDDEN, MAX_ANSWER_BYTES_BASE, BadAnswer, ConnectionFailed, ResponseTooLarge, check_url,
                            describe, display_url, excerpt, key_problem, parse_json_body, post, retry_after,
                            split_credentials)
from humanize._secrets import register_secret, scrub_secrets
from humanize.validation import NONBLANK_STR, Interval, Options

from .base import (SAMPLING_CONSTRAINTS, Generation, Generator, Request, check_requests, effective_temperature,
                   report_usage)
from humanize.exceptions import EndpointError
from humanize.exceptions import InvalidParameterError

__all__ = ["EndpointChat", "EndpointError", "DEFAULT_BASE_URL", "answer_limit"]

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
_log = logging.getLogger(__name__)
#: An answer may be MAX_ANSWER_BYTES_BASE bytes plus this many per requested token (a token is a few bytes, at
#: most a few dozen JSON-escaped; reasoning text counts among the completion tokens).
MAX_ANSWER_BYTES_PER_TOKEN = 512
_sleep = time.sleep  # one place to wait between attempts, so tests count the waits instead of timing them


class _Secret:
    """Holds the API key; prints as ``<hidden>`` so no repr, log line or ``vars()`` dump shows it."""

    __slots__ = ("value",)

    def __init__(self, value: Optional[str]):
        self.value = value

    def __repr__(self) -> str:
        return "<hidden>" if self.value else "None"


def answer_limit(max_tokens: int) -> int:
    """The most bytes an answer of at most ``max_tokens`` tokens may have (a bigger one is refused)."""
    return MAX_ANSWER_BYTES_BASE + MAX_ANSWER_BYTES_PER_TOKEN * int(max_tokens)


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
    timeout : seconds one HTTP request may take in all (a deadline, not a wait per read)
    token_field : the field the answer's token limit goes in: ``"max_tokens"`` (most servers),
        ``"max_completion_tokens"`` (OpenAI's reasoning models, which also take no temperature
        nor top_p: those are then left to the server), or ``"auto"``: ``max_tokens`` with the
        sampling settings, and when the server refuses ``max_tokens`` (or a temperature / top_p)
        with a 400 naming it, one retry with ``max_completion_tokens`` (or without them), kept for
        later requests; ``stats["token_field"]`` and ``stats["sampling_sent"]`` say what was sent,
        and a warning says when the server's default sampling is used
    api_key : the key itself. It is deliberately **not a parameter**: it is kept
        out of ``get_params``, ``repr``, the fingerprint and every error message, and is not
        pickled (a pickled or stored configuration re-reads ``api_key_env``); ``sklearn.clone``
        and ``copy.deepcopy`` keep it in memory. With no key anywhere, a server of your own
        (any ``base_url`` other than OpenAI's) gets the placeholder ``"EMPTY"``; OpenAI's
        endpoint is an error asking to set the variable. A key must be printable ASCII (it goes in a
        header): one with a newline or a non-ASCII character is refused before any request.

    Credentials inside ``base_url`` (``user:password@`` and query values named like a key or token,
    ``?api-key=...``) are held like the key: the parameter keeps ``<hidden>`` in their place (so they
    are in no repr, parameter, fingerprint or pickle); a copy that lost them (unpickled, rebuilt
    from ``get_params``) says so instead of sending ``<hidden>``. ``user:password@`` is sent as
    HTTP basic authentication, when no API key is set.

    Temperatures below :data:`~humanize.generation.base.GREEDY_BELOW` (0.01) are sent as 0 (greedy):
    smaller ones underflow the server's sampling.

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
    #: token_field shapes what is sent (with "max_completion_tokens", no sampling settings): in the fingerprint
    _parameter_constraints = {
        "model": [NONBLANK_STR],  # the server's model name
        "base_url": ["str", None],
        **SAMPLING_CONSTRAINTS,
        "max_concurrency": [Interval(Integral, 1, None)],
        "max_retries": [Interval(Integral, 0, None)],
        "timeout": [Interval(Real, 0, None, closed="neither")],  # seconds
        "backoff": [Interval(Real, 0, None)],
        "token_field": [Options(str, {"auto", "max_tokens", "max_completion_tokens"})],
    }

    def __init__(self, model: str = "gpt-4o-mini", base_url: Optional[str] = None, *,
                 api_key_env: str = "OPENAI_API_KEY", temperature: float = 0.7, top_p: float = 0.95,
                 max_new_tokens: int = 256, max_concurrency: int = 8, max_retries: int = 5,
                 timeout: float = 60.0, backoff: float = 0.5, token_field: str = "auto",
                 api_key: Optional[str] = None):
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
        self.token_field = token_field
        if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
            what = "an empty str" if isinstance(api_key, str) else f"a {type(api_key).__name__}"
            raise TypeError(f"EndpointChat: api_key must be a non-empty str or None, got {what}")
        if api_key is not None:
            register_secret(api_key)
            problem = key_problem(api_key.strip())
            if problem:
                raise InvalidParameterError(f"EndpointChat: the API key (api_key) {problem} (the key is not shown)")
        self._api_key = _Secret(api_key.strip() if api_key else api_key)
        self._url_secret = _Secret(None)
        self._learned: dict = {}  # what the server refused: {"token_field": ..., "sampling": False}
        self.stats = {"requests": 0, "attempts": 0, "retries": 0, "missing_usage": 0}
        self._validate()

    # -- parameters -----------------------------------------------------------------
    @classmethod
    def _param_tuple(cls) -> tuple:
        return tuple(n for n in super()._param_tuple() if n != "api_key")

    def _check(self) -> None:
        own = "EndpointChat"
        if self.base_url is not None:
            check_url(self.base_url, "base_url")
            shown, hidden = split_credentials(self.base_url)
            if hidden and shown != self.base_url:  # the real URL is held like the key, the parameter redacted
                self.__dict__["_url_secret"] = _Secret(self.base_url)
                self.base_url = shown
        env = self.api_key_env
        if not isinstance(env, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", env):
            # the value is not shown: a key passed here by mistake must not reach a log
            raise TypeError(f"{own}: api_key_env must name an environment variable (letters, digits, _), got "
                            f"{'a str' if isinstance(env, str) else 'a ' + type(env).__name__} that does not")

    def resolved_base_url(self) -> str:
        """The API root requests go to: ``base_url``, else ``$OPENAI_BASE_URL``, else OpenAI's (credentials
        inside it shown as ``<hidden>``)."""
        url = (self.base_url or "").strip() or os.environ.get("OPENAI_BASE_URL", "").strip() or DEFAULT_BASE_URL
        if self.base_url is None and url != DEFAULT_BASE_URL:
            check_url(url, "the OPENAI_BASE_URL environment variable")
            url = split_credentials(url)[0]
        return url.rstrip("/")

    def _real_base_url(self) -> str:
        """The API root with its credentials (never shown)."""
        secret = getattr(self, "_url_secret", None)
        if self.base_url is not None and secret is not None and secret.value \
                and split_credentials(secret.value)[0] == self.base_url:
            return secret.value.strip().rstrip("/")
        if self.base_url is None:
            url = os.environ.get("OPENAI_BASE_URL", "").strip()
            if url:
                return url.rstrip("/")
        url = self.resolved_base_url()
        if HIDDEN in url or "%3Chidden%3E" in url:
            raise EndpointError(
                f"EndpointChat (model {self.model!r}): base_url {url!r} had credentials, which are not kept in "
                f"a pickle nor in get_params(); pass base_url again with them", base_url=display_url(url),
                model=self.model)
        return url

    def provenance(self) -> dict:
        """Class, version and the parameters that shape outputs, plus the endpoint resolved (never the key)."""
        out = super().provenance()
        for name in (*self._transport_params, "base_url"):  # base_url: resolved below
            out["params"].pop(name, None)
        out["endpoint"] = display_url(self.resolved_base_url())
        return out

    # -- copies: the key stays in memory, never in a pickle ------------------------------
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_api_key"] = _Secret(None)
        state["_url_secret"] = _Secret(None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __deepcopy__(self, memo: dict) -> "EndpointChat":
        new = type(self).__new__(type(self))
        new.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        new._api_key = self._api_key
        new._url_secret = getattr(self, "_url_secret", _Secret(None))
        return new

    def __sklearn_clone__(self) -> "EndpointChat":
        params = self.get_params(deep=False)
        secret = getattr(self, "_url_secret", None)
        if secret is not None and secret.value and split_credentials(secret.value)[0] == self.base_url:
            params["base_url"] = secret.value
        return type(self)(**params, api_key=self._api_key.value)

    # -- the key -----------------------------------------------------------------------
    def _key(self, url: str) -> str:
        if self._api_key.value:
            return self._api_key.value
        key = os.environ.get(self.api_key_env, "").strip()
        if key:
            register_secret(key)
            problem = key_problem(key)
            if problem:
                raise EndpointError(f"EndpointChat (model {self.model!r}): the API key in the {self.api_key_env} "
                                    f"environment variable {problem} (the key is not shown); set it again",
                                    base_url=display_url(url), model=self.model)
            return key
        if url == DEFAULT_BASE_URL:
            raise EndpointError(
                f"EndpointChat: no API key for {url}: set the {self.api_key_env} environment variable "
                f"(or pass api_key=...), or point base_url / OPENAI_BASE_URL at a server of your own",
                base_url=url, model=self.model)
        return PLACEHOLDER_KEY

    def _target(self) -> tuple[str, str, dict, str]:
        """``(request URL with credentials, shown API root, headers, the key)``; checks the key first."""
        real = self._real_base_url()
        shown = self.resolved_base_url()
        key = self._key(shown)
        parts = urlsplit(real)
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "humanize-bench"}
        if parts.username is not None or parts.password is not None:
            if key != PLACEHOLDER_KEY:
                raise EndpointError(
                    f"EndpointChat (model {self.model!r}): base_url holds user:password@ and an API key is set; "
                    f"only one can go in the Authorization header: drop one of them",
                    base_url=display_url(shown), model=self.model)
            from urllib.parse import unquote

            pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
            if key_problem(pair):
                raise EndpointError(f"EndpointChat (model {self.model!r}): the user:password@ in base_url "
                                    f"{key_problem(pair)} (not shown)", base_url=display_url(shown), model=self.model)
            token = base64.b64encode(pair.encode()).decode()
            register_secret(token)
            headers["Authorization"] = f"Basic {token}"
            key = token
        else:
            headers["Authorization"] = f"Bearer {key}"
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port:
            netloc += f":{parts.port}"
        url = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/") + "/chat/completions", parts.query, ""))
        return url, shown, headers, key

    # -- generation --------------------------------------------------------------------
    def generate(self, requests: Sequence[Request]) -> list[Generation]:
        """One generation per request, in order; requests run concurrently (``max_concurrency``)."""
        reqs = check_requests("EndpointChat", requests)
        if not reqs:
            return []
        reqs = _repaired(reqs)
        target, url, headers, key = self._target()
        results: list = [None] * len(reqs)
        error: Optional[BaseException] = None
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(reqs)),
                                thread_name_prefix="endpoint") as pool:
            futures = [pool.submit(self._one, target, url, headers, key, r) for r in reqs]
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

    def _body(self, req: Request) -> tuple[dict, int]:
        """The request body (as this server takes it: the learned token field / sampling) and its token limit."""
        messages = [{"role": role, "content": content} for role, content in req.messages]
        if req.answer_start:
            messages.append({"role": "assistant", "content": req.answer_start})
        limit = int(req.max_new_tokens or self.max_new_tokens)
        field = self.token_field if self.token_field != "auto" else self._learned.get("token_field", "max_tokens")
        body: dict = {"model": self.model, "messages": messages, field: limit, "seed": req.seed % _SEED_MOD, "n": 1}
        if field == "max_tokens" and self._learned.get("sampling", True):
            body["temperature"] = effective_temperature(self.temperature)
            body["top_p"] = float(self.top_p)
        with _LOCK:
            self.stats["token_field"] = field
            self.stats["sampling_sent"] = "temperature" in body
        return body, limit

    def _learn(self, status: int, message: str) -> bool:
        """Whether a 400 refused a field "auto" can change (then it is changed, for this and later requests)."""
        if self.token_field != "auto" or status != 400:
            return False
        low = message.lower()
        refused = "max_completion_tokens" in low or re.search(r"unsupported|not supported|does not support", low)
        if not refused:
            return False
        with _LOCK:
            if "max_tokens" in low and self._learned.get("token_field") != "max_completion_tokens":
                self._learned["token_field"] = "max_completion_tokens"
                what = "max_completion_tokens instead of max_tokens, and no temperature / top_p"
            elif ("temperature" in low or "top_p" in low) and self._learned.get("sampling", True):
                self._learned["sampling"] = False
                what = "no temperature / top_p"
            else:
                return False
        warnings.warn(f"EndpointChat: model {self.model!r} refused a request field ({message[:120]}); sending {what} "
                      f"from now on: the server's default sampling applies (stats['token_field'], "
                      f"stats['sampling_sent'])", UserWarning, stacklevel=3)
        return True

    def _one(self, target: str, url: str, headers: dict, key: str, req: Request) -> tuple[Generation, int]:
        """One request with its retries: ``(generation, retries used)`` or an :class:`EndpointError`."""
        jitter = random.Random(req.seed)
        attempts, attempt, relearned = self.max_retries + 1, 0, 0
        status, why = None, ""
        while attempt < attempts:
            wait = None
            body, limit = self._body(req)
            payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
            try:
                status, answer_headers, data, cut = post(target, payload, headers, timeout=float(self.timeout),
                                                         max_bytes=answer_limit(limit))
            except ResponseTooLarge as exc:
                raise self._error(f"answered with more than {exc.limit} bytes for a {limit}-token request (the "
                                  f"limit: {MAX_ANSWER_BYTES_BASE} + {MAX_ANSWER_BYTES_PER_TOKEN} per token; the rest "
                                  f"was not read, not retried)", url, key, exc.status, attempt + 1) from None
            except TimeoutError:
                status, why = None, f"timed out after {self.timeout} s (a deadline for the whole request, not a wait per read)"
            except ConnectionFailed as exc:
                status, why = None, f"unreachable ({exc})"
            else:
                if 200 <= status < 300:
                    try:
                        return self._generation(data, req), attempt
                    except BadAnswer as exc:
                        if not exc.retry:
                            raise self._error(f"answered HTTP {status} {exc} (not retried)", url, key, status,
                                              attempt + 1) from None
                        why = f"HTTP {status} {exc}"
                else:
                    message = excerpt(data, cut)
                    if self._learn(status, message) and relearned < 2:
                        relearned += 1
                        continue  # the same request, as the server takes it: not a retry of a failure
                    if 300 <= status < 400:
                        raise self._error(f"answered HTTP {status}, a redirect to "
                                          f"{display_url(answer_headers.get('location') or '') or 'an unnamed address'}"
                                          f" (not followed); give the final URL", url, key, status, attempt + 1)
                    if status not in _RETRY_STATUSES and status < 500:
                        raise self._error(f"was refused with HTTP {status} (not retried): {message}",
                                          url, key, status, attempt + 1) from None
                    why = f"HTTP {status}: {message}"
                    wait = retry_after(answer_headers)
            attempt += 1
            if attempt == attempts:
                break
            if wait is None:
                wait = self.backoff * 2 ** (attempt - 1) * (0.5 + jitter.random())
            _sleep(min(wait, MAX_RETRY_AFTER))
        if status is None and why.startswith("unreachable"):
            raise self._error(
                f"the endpoint at {display_url(url)} is {why} after {attempts} attempt(s); start the server, "
                f"or point base_url= (or the OPENAI_BASE_URL environment variable) at a running "
                f"OpenAI-compatible server, e.g. http://localhost:8000/v1", url, key, None, attempts,
                prefix=False) from None
        raise self._error(f"failed after {attempts} attempt(s), the last {why}", url, key, status, attempts) from None

    def _generation(self, data: bytes, req: Request) -> Generation:
        """The generation in a 2xx answer's body, checked; :class:`BadAnswer` saying what is wrong."""
        doc = parse_json_body(data)
        if not isinstance(doc, dict):
            raise BadAnswer(f"with {describe(doc)} as its body, not a JSON object")
        if "choices" not in doc and "error" in doc:
            raise BadAnswer(f"with an error: {excerpt(json.dumps(doc['error']).encode(), False)}")
        choices = doc.get("choices")
        if not isinstance(choices, list) or not choices:
            raise BadAnswer(f"with 'choices' = {describe(choices)}, not a non-empty list")
        choice = choices[0]
        if not isinstance(choice, dict):
            raise BadAnswer(f"with choices[0] = {describe(choice)}, not an object")
        message = choice.get("message")
        if not isinstance(message, dict):
            raise BadAnswer(f"with choices[0].message = {describe(message)}, not an object")
        text = _content(message.get("content"))
        if req.answer_start and text.startswith(req.answer_start):
            text = text[len(req.answer_start):]
        finish = choice.get("finish_reason")
        if finish is not None and not isinstance(finish, str):
            raise BadAnswer(f"with choices[0].finish_reason = {describe(finish)}, not a str")
        usage = doc.get("usage")
        if usage is None:
            with _LOCK:
                self.stats["missing_usage"] += 1
            usage = {}
        if not isinstance(usage, dict):
            raise BadAnswer(f"with 'usage' = {describe(usage)}, not an object")
        counts = []
        for field in ("prompt_tokens", "completion_tokens"):
            n = usage.get(field, 0)
            n = 0 if n is None else n
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise BadAnswer(f"with usage.{field} = {describe(n)}, not a count of tokens (an int >= 0)")
            counts.append(n)
        return Generation(text, counts[0], counts[1], finish or "stop")

    def _error(self, what: str, url: str, key: str, status: Optional[int], attempts: int,
               prefix: bool = True) -> EndpointError:
        shown = display_url(url)
        msg = (f"EndpointChat: model {self.model!r} at {shown} {what}" if prefix
               else f"EndpointChat (model {self.model!r}): {what}")
        msg = scrub_secrets(msg, key if key != PLACEHOLDER_KEY else None, self._api_key.value)
        return EndpointError(msg, base_url=shown, model=self.model, status=status, attempts=attempts)


def _repaired(reqs: list) -> list:
    """``reqs`` with lone surrogates in their text replaced by U+FFFD (with the warning), as the scoring path does."""
    from humanize.models.text import model_input

    flat = [c for r in reqs for _, c in r.messages] + [r.answer_start for r in reqs]
    clean, n = model_input(flat, where="EndpointChat request")
    if not n:
        return reqs
    out, pos = [], 0
    for i, r in enumerate(reqs):
        turns = tuple((role, clean[pos + j]) for j, (role, _) in enumerate(r.messages))
        pos += len(r.messages)
        out.append(r._replace(messages=turns))
    return [r._replace(answer_start=clean[pos + i]) for i, r in enumerate(out)]


def _content(content: Any) -> str:
    """A message's ``content``: a str, null (""), or a list of text parts (joined, as OpenAI's format allows)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                raise BadAnswer(f"with content part {i} = {describe(part)}, not a text part")
        return "".join(texts)
    raise BadAnswer(f"with choices[0].message.content = {describe(content)}, not a str or a list of text parts")


