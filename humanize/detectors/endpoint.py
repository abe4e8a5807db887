"""A detector served over HTTP: a vendor's API or a scoring service of your own.

:class:`EndpointDetector` POSTs a JSON body built from a template, with a batch of texts
(``"{texts}"``) or one text (``"{text}"``) put where the placeholder stands, and reads the
scores at ``score_path`` in the JSON answer. Batches go out several at once (a thread pool
of ``max_concurrency``); scores come back as float64 in input order.

``score_path`` names where the scores are, in a tiny path syntax
(:mod:`humanize.detectors.json_request`): keys separated by dots, ``[N]`` a list index,
``*`` every element of a list, ``[key=value]`` the element whose ``key`` has that value;
e.g. ``"scores"``, ``"results.*.ai_probability"``, ``"data[0].score"``,
``"[0][label=machine].score"`` (the Hugging Face Inference API's answer for one text).
With ``"{texts}"`` the path must lead to a list of one number per text, with ``"{text}"``
to one number.

Retries (with exponential backoff ``backoff * 2**k`` times a jitter in [0.5, 1.5) seeded by
the batch's index) on HTTP 408, 429 and 5xx, timeouts and connection errors, waiting what
the server's ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` asks instead;
every wait is capped at ``max_wait``. ``timeout`` is a deadline for a whole request, and an
answer may be at most ``1 MiB + 64 KiB per text`` of its batch (:data:`SCORE_BYTES_PER_TEXT`):
a bigger one is refused unread, an error body is shown as a short excerpt. Any other 4xx,
a redirect (not followed: it could carry the key to another host) or a bad answer fails at
once with an
:class:`~humanize.exceptions.EndpointError` on one line naming the detector, the
URL (without user info, query or fragment), the status and what was wrong.

The API key is read from the environment variable ``api_key_env`` at each ``score`` and
sent as ``<auth_header>: <auth_scheme> <key>`` (default ``Authorization: Bearer <key>``;
``auth_scheme=""`` sends the bare key, e.g. ``auth_header="x-api-key"``). It is never stored
on the object, so it is in no parameter, repr, fingerprint or pickle, and it is replaced by
``<hidden>`` in every error, also where the server echoes it back.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import math
import os
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Sequence
from urllib.parse import quote, urlsplit

import numpy as np

from numbers import Integral, Real

from humanize._canonical import canonical
from humanize._http import (MAX_ANSWER_BYTES_BASE, ConnectionFailed, ResponseTooLarge, check_url, display_url,
                            error_message, key_problem, post, retry_after)
from humanize._secrets import redact, register_secret, scrub_secrets
from humanize.validation import NONBLANK_STR, Interval, check_texts
from humanize.exceptions import EndpointError

from .base import Detector
from .json_request import TEXT, TEXTS, check_body, describe_value, fill_body, parse_score_path, read_score_path

__all__ = ["EndpointDetector", "EndpointError"]

_RETRY_STATUSES = frozenset({408, 429})  # and every 5xx
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: header names that carry credentials: a key goes through api_key_env, never through ``headers``
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"})
_LOCK = threading.Lock()
#: an answer may be MAX_ANSWER_BYTES_BASE plus this many bytes per text of the batch
SCORE_BYTES_PER_TEXT = 64 << 10
_sleep = time.sleep  # one place to wait, so tests can count the waits instead of timing them


class EndpointDetector(Detector):
    """Scores from an HTTP service. Every parameter after ``url`` is keyword-only.

    url : the http(s) address requests are POSTed to.
    body : the JSON request body (a dict or list) with exactly one placeholder string,
        ``"{texts}"`` (replaced by the batch, a list of str) or ``"{text}"`` (one text per
        request); None = ``{"texts": "{texts}"}``.
    score_path : where the score(s) are in the answer (syntax above); default ``"scores"``.
    batch_size : texts per request with ``"{texts}"`` (None = 32); must be None or 1 with ``"{text}"``.
    invert : score = 1 - value, for services that return the probability of *human*.
    headers : extra non-secret headers (a dict of str); credential headers are refused.
    api_key_env : the environment variable holding the key (None: no key is sent).
    auth_header, auth_scheme : how the key is sent (``Authorization: Bearer <key>``).
    max_concurrency : requests in flight at once; max_retries : retries per request;
    backoff : base seconds of the exponential backoff; max_wait : the longest wait before a
    retry (also caps ``Retry-After``); timeout : seconds per HTTP request.
    name : the report label; version : bump it when the service's model changes (the URL
        alone cannot tell), so no cached score of the old model is reused.

    The fingerprint holds the URL (its query only as a digest), body, score path, batch size,
    invert, headers, name and version; not the transport settings nor the key. A key given in
    the URL's query (``?code=...``) or in the body template (``{"api_key": "..."}``) is sent as
    given and appears nowhere else in clear: repr, fingerprint input, store, cards and errors
    show ``<hidden:blake2b=...>`` (:mod:`humanize._secrets`). The environment (``api_key_env``)
    remains the better place: a component rebuilt from a stored configuration has no key.
    """

    name = "endpoint"
    needs_model = False
    _library_version = False  # the scores are the service's, not this library's
    _transport_params = ("api_key_env", "auth_header", "auth_scheme", "max_concurrency", "max_retries", "backoff",
                         "max_wait", "timeout")
    _parameter_constraints = {
        "url": ["str"],
        "score_path": ["str"],
        "batch_size": [Interval(Integral, 1, None), None],
        "invert": ["boolean"],
        "headers": [dict, None],
        "auth_header": [NONBLANK_STR],
        "auth_scheme": ["str"],
        "max_concurrency": [Interval(Integral, 1, None)],
        "max_retries": [Interval(Integral, 0, None)],
        "backoff": [Interval(Real, 0, None)],  # seconds
        "max_wait": [Interval(Real, 0, None)],
        "timeout": [Interval(Real, 0, None, closed="neither")],
        "name": [NONBLANK_STR, None],
        "version": [NONBLANK_STR],
    }

    def __init__(self, url: str, *, body: "dict | list | None" = None, score_path: str = "scores",
                 batch_size: Optional[int] = None, invert: bool = False, headers: Optional[dict] = None,
                 api_key_env: Optional[str] = None, auth_header: str = "Authorization", auth_scheme: str = "Bearer",
                 max_concurrency: int = 4, max_retries: int = 4, backoff: float = 0.5, max_wait: float = 60.0,
                 timeout: float = 30.0, name: Optional[str] = None, version: str = "1"):
        self.url = url
        self.body = body
        self.score_path = score_path
        self.batch_size = batch_size
        self.invert = invert
        self.headers = headers
        self.api_key_env = api_key_env
        self.auth_header = auth_header
        self.auth_scheme = auth_scheme
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.timeout = timeout
        self.name = name
        self.version = version
        #: requests (batches answered), attempts (HTTP posts) and retries, over this object's life
        self.stats = {"requests": 0, "attempts": 0, "retries": 0}
        self._validate()

    # -- parameters ---------------------------------------------------------------------
    def _check(self) -> None:
        own = type(self).__name__
        if self.name is None:
            self.name = type(self).name
        check_url(self.url, "url", own, "http://localhost:8000/score")
        parts = urlsplit(self.url.strip())
        if "@" in parts.netloc:
            raise ValueError(f"{own}: url must not hold credentials (user:password@host); put the key in an "
                             f"environment variable and name it with api_key_env=")
        # a key in the query (``?code=...``) or in the body template (``{"api_key": ...}``) is sent as given
        # and kept out of every repr, fingerprint, store, card and message: humanize._secrets registers it
        # for scrubbing here and shows it as a digest wherever the parameters are shown
        redact(self.url)
        redact(self.body)
        self._mode = check_body(own, self._body())
        try:
            self._steps = parse_score_path(self.score_path)
        except (TypeError, ValueError) as err:
            raise type(err)(f"{own}: {err}") from None
        if self.batch_size is not None and self._mode == TEXT and self.batch_size != 1:
            raise ValueError(f"{own}: body holds '{{text}}' (one text per request), so batch_size must be None "
                             f"or 1, got {self.batch_size}; put '{{texts}}' in the body to send batches")
        _check_headers(own, self.headers, self.auth_header)
        env = self.api_key_env
        if env is not None and (not isinstance(env, str) or not _ENV_NAME.fullmatch(env)):
            # the value is not shown: a key passed here by mistake must not reach a log
            raise TypeError(f"{own}: api_key_env must be None or the name of an environment variable (letters, "
                            f"digits, _), got {'a str' if isinstance(env, str) else 'a ' + type(env).__name__} "
                            f"that is not")
        if not _HEADER_NAME.fullmatch(self.auth_header):
            raise ValueError(f"{own}: auth_header {self.auth_header!r} is not a valid header name")
        if any(c in self.auth_scheme for c in "\r\n"):
            raise ValueError(f"{own}: auth_scheme must be one line ('Bearer', or '' for the bare key), "
                             f"got {self.auth_scheme!r}")

    def _body(self) -> Any:
        return {"texts": TEXTS} if self.body is None else self.body

    def _batch_size(self) -> int:
        return 1 if self._mode == TEXT else int(self.batch_size or 32)

    def provenance(self) -> dict:
        """What shapes the scores: URL (query as a digest), body, score path, batching, invert, headers, name,
        version; not the transport settings nor the key."""
        out = super().provenance()
        out["version"] = str(type(self).version)  # this class's code; the version parameter is the service's
        params = out["params"]
        for field in self._transport_params:
            params.pop(field, None)
        params["url"] = display_url(self.url.strip())
        query = urlsplit(self.url.strip()).query
        if query:
            params["url_query_digest"] = hashlib.blake2b(query.encode(), digest_size=16).hexdigest()
        params["body"] = redact(canonical(self._body(), "EndpointDetector.body"))  # a key in it: as a digest
        params["batch_size"] = self._batch_size()
        return out

    # -- scoring ------------------------------------------------------------------------
    def score(self, texts: Sequence[str]) -> np.ndarray:
        """One float per text, in input order (``1 - value`` with ``invert``)."""
        texts = check_texts(texts, type(self).__name__, "score")
        if not texts:
            return np.zeros(0, dtype=np.float64)
        from humanize.models.text import model_input

        texts, _ = model_input(texts, where=f"{type(self).__name__} {self.name!r} request")
        key = self._key()
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": "humanize-bench", **(self.headers or {})}
        if key:
            headers[self.auth_header] = f"{self.auth_scheme} {key}" if self.auth_scheme else key
        size = self._batch_size()
        starts = list(range(0, len(texts), size))
        out = np.empty(len(texts), dtype=np.float64)
        opener = None  # the shared transport (humanize._http.post) follows no redirect
        with ThreadPoolExecutor(max_workers=min(int(self.max_concurrency), len(starts)),
                                thread_name_prefix="endpoint-detector") as pool:
            futures = [pool.submit(self._request, opener, headers, key, i, start, texts[start:start + size])
                       for i, start in enumerate(starts)]
            for start, fut in zip(starts, futures):
                try:
                    values = fut.result()
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
                out[start:start + len(values)] = values
        return 1.0 - out if self.invert else out

    def _key(self) -> Optional[str]:
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise self._error(f"has no API key: set the {self.api_key_env} environment variable (api_key_env), "
                              f"or pass api_key_env=None for a service without one", None, 0, None)
        register_secret(key)
        problem = key_problem(key)
        if problem:
            raise self._error(f"cannot send its API key: the key in the {self.api_key_env} environment variable "
                              f"{problem} (the key is not shown); set it again", None, 0, key)
        return key

    def _request(self, opener, headers: dict, key: Optional[str], index: int, start: int,
                 chunk: list[str]) -> np.ndarray:
        """One batch with its retries: its scores, or an :class:`EndpointError`."""
        payload = json.dumps(fill_body(self._body(), chunk if self._mode == TEXTS else chunk[0]),
                             ensure_ascii=False).encode("utf-8")
        jitter = random.Random(index)
        attempts = int(self.max_retries) + 1
        for attempt in range(attempts):
            wait = None
            self._count(attempts=1)
            try:
                status, answer_headers, data = self._post(opener, payload, headers, len(chunk))
            except ResponseTooLarge as exc:
                raise self._error(f"answered with more than {exc.limit} bytes for a batch of {len(chunk)} text(s) "
                                  f"(the limit: {MAX_ANSWER_BYTES_BASE} + {SCORE_BYTES_PER_TEXT} per text; the rest "
                                  f"was not read, not retried)", exc.status, attempt + 1, key) from None
            except TimeoutError:
                status, why = None, f"timed out after {self.timeout} s (a deadline for the whole request, not a wait per read)"
            except (OSError, http.client.HTTPException) as exc:
                status, why = None, f"connection failed ({exc if isinstance(exc, ConnectionFailed) else _cause(exc)})"
            else:
                if 200 <= status < 300:
                    values = self._read(data, len(chunk), start, status, key, attempt + 1)
                    self._count(requests=1)
                    return values
                if 300 <= status < 400:
                    where = display_url(answer_headers.get("location") or "") or "an unnamed address"
                    raise self._error(f"answered HTTP {status}, a redirect to {where} (not followed: it could carry "
                                      f"the key elsewhere); give the final URL", status, attempt + 1, key)
                if status not in _RETRY_STATUSES and status < 500:
                    raise self._error(f"was refused with HTTP {status} (not retried): {_snippet(data, key)}",
                                      status, attempt + 1, key)
                why = f"HTTP {status}: {_snippet(data, key)}"
                wait = retry_after(answer_headers)
            if attempt + 1 == attempts:
                break
            if wait is None:
                wait = self.backoff * 2 ** attempt * (0.5 + jitter.random())
            self._count(retries=1)
            _sleep(min(wait, float(self.max_wait)))
        raise self._error(f"failed after {attempts} attempt(s), the last {why}", status, attempts, key)

    def _post(self, opener, payload: bytes, headers: dict, n: int) -> tuple[int, Any, bytes]:
        """One POST through the shared transport (a deadline, a size limit, no redirect)."""
        status, answer_headers, data, _ = post(self.url.strip(), payload, headers, timeout=float(self.timeout),
                                               max_bytes=MAX_ANSWER_BYTES_BASE + SCORE_BYTES_PER_TEXT * n)
        return status, answer_headers, data

    def _read(self, data: bytes, n: int, start: int, status: int, key: Optional[str], attempts: int) -> np.ndarray:
        """The batch's scores from the answer body, checked (count, numbers, finite)."""
        def fail(what: str) -> EndpointError:
            return self._error(f"answered HTTP {status} {what}", status, attempts, key)

        try:
            doc = json.loads(data)
        except ValueError:
            raise fail(f"with a body that is not JSON: {_snippet(data, key, raw=True)}") from None
        try:
            found = read_score_path(self._steps, doc)
        except ValueError as err:
            raise fail(f"without the score(s) at score_path {self.score_path!r}: {err}") from None
        path = f"score_path {self.score_path!r}"
        if self._mode == TEXTS:
            if not isinstance(found, list):
                raise fail(f"with {describe_value(found, key)} at {path}, not a list of {n} scores")
            if len(found) != n:
                raise fail(f"with {len(found)} scores at {path} for a batch of {n} texts")
        values = found if self._mode == TEXTS else [found]
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise fail(f"with {describe_value(v, key)} as the score of text {start + i} at {path}, not a number")
            if not math.isfinite(v):
                raise fail(f"with {v} as the score of text {start + i} at {path}, not a finite number")
        return np.asarray(values, dtype=np.float64)

    def _count(self, **counts: int) -> None:
        with _LOCK:
            for k, v in counts.items():
                self.stats[k] = self.stats.get(k, 0) + v

    def _error(self, what: str, status: Optional[int], attempts: int, key: Optional[str]) -> EndpointError:
        shown = display_url(self.url.strip())
        msg = " ".join(scrub_secrets(_redact(f"{type(self).__name__} {self.name!r} (POST {shown}) {what}", key),
                                     key).split())
        return EndpointError(msg, base_url=shown, model=self.name, status=status, attempts=attempts)


def _check_headers(owner: str, headers: Any, auth_header: str) -> None:
    if headers is None:
        return
    for k, v in headers.items():
        if not isinstance(k, str) or not _HEADER_NAME.fullmatch(k):
            raise ValueError(f"{owner}: headers has an invalid header name {k!r}")
        if k.lower() in _SECRET_HEADERS or k.lower() == auth_header.lower():
            # the value is not shown: it is probably a key
            raise ValueError(f"{owner}: headers must not carry credentials ({k!r}); put the key in an environment "
                             f"variable and name it with api_key_env= (sent as auth_header)")
        if not isinstance(v, str) or any(c in v for c in "\r\n"):
            raise TypeError(f"{owner}: header {k!r} must have a one-line str value, got {type(v).__name__}")


# -- messages ------------------------------------------------------------------------------------
def _redact(text: str, key: Optional[str]) -> str:
    """``text`` with the key (as is, JSON-escaped or URL-quoted) replaced by ``<hidden>``."""
    if key:
        for form in {key, json.dumps(key)[1:-1], quote(key, safe="")}:
            text = text.replace(form, "<hidden>")
    return text


def _snippet(data: bytes, key: Optional[str], raw: bool = False, limit: int = 300) -> str:
    """The server's message (``error.message``, ``detail``, ... of a JSON body, else the text), redacted, one line."""
    data = data[:MAX_ERROR_CHARS] if isinstance(data, (bytes, bytearray)) else data  # an excerpt, not the body
    text = data.decode("utf-8", "replace") if isinstance(data, (bytes, bytearray)) else str(data)
    if not raw:
        text = error_message(text)
    text = " ".join(_redact(text, key).split())
    text = text[:limit] + "..." if len(text) > limit else text
    return repr(text) if text else "(empty body)"


MAX_ERROR_CHARS = 64 << 10  # of a body shown in a message (then cut to ``limit`` characters)


def _cause(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:200]
