"""The bounded HTTP client and the URL and credential checks that both endpoint components use (the chat
generator :class:`humanize.generation.endpoint.EndpointChat` and the detector
:class:`humanize.detectors.endpoint.EndpointDetector`), so that neither imports the other.

:func:`post` is the standard library's HTTP client with a deadline for the whole exchange and a cap on the
answer's bytes; :func:`split_credentials` and :func:`display_url` keep credentials in a URL out of every message
(:mod:`humanize._secrets`); :func:`check_url` and :func:`key_problem` refuse what cannot be sent.
"""
from __future__ import annotations

import email.utils
import http.client
import json
import logging
import socket
import threading
import time
import unicodedata
import urllib.request
from typing import Any, Optional
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from humanize._secrets import register_secret, scrub_secrets

__all__ = ["BadAnswer", "ConnectionFailed", "EXCERPT_CHARS", "HIDDEN", "MAX_ANSWER_BYTES_BASE", "MAX_ERROR_BYTES", "ResponseTooLarge",
           "check_url", "describe", "display_url", "error_message", "excerpt", "key_problem", "parse_json_body",
           "post", "retry_after", "split_credentials"]

_log = logging.getLogger(__name__)
#: The least a 2xx answer may always have, in bytes (a caller adds what its request asks for).
MAX_ANSWER_BYTES_BASE = 1 << 20
#: The most of an error body read (the rest is not read); a message shows an excerpt of EXCERPT_CHARS.
MAX_ERROR_BYTES = 64 << 10
EXCERPT_CHARS = 300


class _SecretQuery:
    """Query parameters of a URL that hold credentials (their values are hidden like the API key):
    the one rule of :func:`humanize._secrets.is_secret_name` (``?code=``, ``?api_key=``, ``?sig=``)."""

    @staticmethod
    def search(name: str) -> bool:
        from humanize._secrets import is_secret_name

        return is_secret_name(name)


_SECRET_QUERY = _SecretQuery()
HIDDEN = "<hidden>"


def key_problem(key: str) -> Optional[str]:
    """What makes ``key`` impossible to send in an HTTP header, or None; never shows the key."""
    for ch in key:
        if ch in "\r\n":
            return "contains a newline"
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            return f"contains a control character (U+{ord(ch):04X})"
        if ord(ch) > 0x7E:
            name = unicodedata.name(ch, "")
            return (f"contains a non-ASCII character (U+{ord(ch):04X}{' ' + name if name else ''}), perhaps from a "
                    f"copy-paste; a header carries printable ASCII only")
    return None


def split_credentials(url: str) -> tuple[str, bool]:
    """``(url with its user info and secret query values replaced by <hidden>, whether anything was)``."""
    parts = urlsplit(url)
    netloc, hidden = parts.netloc, False
    if "@" in netloc:
        netloc, hidden = f"{HIDDEN}@{netloc.rsplit('@', 1)[1]}", True
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_SECRET_QUERY.search(k) and v for k, v in pairs):
            hidden = True
            query = urlencode([(k, HIDDEN if _SECRET_QUERY.search(k) and v else v) for k, v in pairs], safe="<>")
    if not hidden:
        return url, False
    for secret in (parts.password, parts.username, *(v for k, v in parse_qsl(parts.query) if _SECRET_QUERY.search(k))):
        register_secret(secret)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)), True


def display_url(url: str) -> str:
    """``url`` without user info, query or fragment (those may hold credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


# -- the HTTP transport ------------------------------------------------------------------------------
class BadAnswer(ValueError):
    """A 2xx answer whose body is not what the protocol says; ``retry`` where another try may help."""

    def __init__(self, what: str, retry: bool = False):
        super().__init__(what)
        self.retry = retry


class ResponseTooLarge(OSError):
    """An answer bigger than the limit (only the limit was read)."""

    def __init__(self, status: int, limit: int):
        super().__init__(f"more than {limit} bytes")
        self.status, self.limit = status, limit


class ConnectionFailed(OSError):
    """No HTTP answer: the connection could not be made or broke (the message names why, never a header)."""


def _connection(parts, timeout: float) -> tuple[Any, bool]:
    """An HTTP(S) connection to ``parts``' host, through the environment's proxy where one is set;
    ``(connection, whether the request line needs the absolute URL)``."""
    host, port = parts.hostname or "", parts.port
    https = parts.scheme == "https"
    proxy = None if urllib.request.proxy_bypass(host) else urllib.request.getproxies().get(parts.scheme)
    if proxy:
        p = urlsplit(proxy if "://" in proxy else "http://" + proxy)
        if https:
            conn = http.client.HTTPSConnection(p.hostname, p.port or (443 if p.scheme == "https" else 80),
                                               timeout=timeout)
            conn.set_tunnel(host, port or 443)
            return conn, False
        return http.client.HTTPConnection(p.hostname, p.port or 80, timeout=timeout), True
    cls = http.client.HTTPSConnection if https else http.client.HTTPConnection
    return cls(host, port, timeout=timeout), False


def _hang_up(conn: Any) -> None:
    sock = getattr(conn, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def post(url: str, payload: bytes, headers: dict, *, timeout: float,
         max_bytes: int) -> tuple[int, dict, bytes, bool]:
    """POST ``payload``; ``(status, headers with lower-case names, body, whether the body was cut)``.

    ``timeout`` is a deadline for the whole exchange (a watchdog hangs up when it passes, so a
    server sending a byte at a time cannot stretch it). A 2xx body over ``max_bytes`` raises
    :class:`ResponseTooLarge` (the rest is not read); another body is read up to
    :data:`MAX_ERROR_BYTES` and cut there. Redirects are not followed. Raises ``TimeoutError``
    or :class:`ConnectionFailed`.
    """
    parts = urlsplit(url)
    deadline = time.monotonic() + timeout
    conn, absolute = _connection(parts, timeout)
    watchdog = threading.Timer(timeout, _hang_up, (conn,))
    watchdog.daemon = True
    watchdog.start()
    _log.debug("POST %s (%d bytes)", display_url(url), len(payload))
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("POST", url if absolute else path, body=payload, headers=headers)
        resp = conn.getresponse()
        status = resp.status
        answer_headers = {k.lower(): v for k, v in resp.getheaders()}
        ok = 200 <= status < 300
        limit = max_bytes if ok else MAX_ERROR_BYTES
        declared = answer_headers.get("content-length", "")
        if ok and declared.isdigit() and int(declared) > limit:
            raise ResponseTooLarge(status, limit)
        chunks, n, cut = [], 0, False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError()
            if conn.sock is not None:
                conn.sock.settimeout(left)
            chunk = resp.read1(min(65536, limit + 1 - n))
            if not chunk:
                break
            n += len(chunk)
            if n > limit:
                if ok:
                    raise ResponseTooLarge(status, limit)
                chunks.append(chunk[:len(chunk) - (n - limit)])
                cut = True
                break
            chunks.append(chunk)
        if time.monotonic() >= deadline:
            raise TimeoutError()
        return status, answer_headers, b"".join(chunks), cut
    except (ResponseTooLarge, TimeoutError):
        raise
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if time.monotonic() >= deadline - 1e-3:
            raise TimeoutError() from None
        raise ConnectionFailed(f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:200]) from None
    finally:
        watchdog.cancel()
        conn.close()


def parse_json_body(data: bytes) -> Any:
    """The JSON document in a 2xx body; :class:`BadAnswer` naming what it is instead (empty: retried)."""
    if not data.strip():
        raise BadAnswer("with an empty body", retry=True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadAnswer(f"with a body that is not UTF-8 (byte 0x{data[err.start]:02x} at position {err.start}): "
                        f"{excerpt(data, False, raw=True)}") from None
    try:
        return json.loads(text)
    except ValueError:
        what = "an HTML page" if text.lstrip()[:1] == "<" else "a body"
        raise BadAnswer(f"with {what} that is not JSON: {excerpt(data, False, raw=True)}") from None


def error_message(text: str) -> str:
    """A JSON error body's message (``error.message``, ``detail``, ``message``, ...), else ``text`` as it is."""
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    for field in ("error", "detail", "message"):
        if isinstance(doc, dict) and field in doc:
            doc = doc[field]
    doc = doc.get("message", doc) if isinstance(doc, dict) else doc
    return doc if isinstance(doc, str) else json.dumps(doc)


def excerpt(data: bytes, cut: bool, raw: bool = False, limit: int = EXCERPT_CHARS) -> str:
    """A body's message on one line, at most ``limit`` characters: a JSON error's ``message``
    (``error.message``, ``detail``, ...), else the text; says when it was cut."""
    text = data.decode("utf-8", "replace") if isinstance(data, (bytes, bytearray)) else str(data)
    if not raw and not cut:
        text = error_message(text)
    text = scrub_secrets(" ".join(text.split()))
    shown = text[:limit] + f"... ({len(data)}{'+' if cut else ''} bytes, cut)" \
        if len(text) > limit or cut else text
    return repr(shown) if shown else "(empty body)"


def describe(v: Any) -> str:
    """A short description of a JSON value for a message."""
    if v is None:
        return "null"
    shown = repr(v)
    return f"a {type(v).__name__} ({shown[:40] + '...' if len(shown) > 40 else shown})"

def check_url(url: str, where: str, owner: str = "EndpointChat",
              example: str = "http://localhost:8000/v1") -> None:
    """An http(s) URL with a host, or a ``ValueError`` naming ``owner``/``where``."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        # shown only when it looks like an address: a key passed here by mistake must not reach a log
        shown = (repr(display_url(url)) if parts.hostname else repr(url[:80]) if any(c in url for c in ":/.")
                 else "a str that is not a URL (not shown, in case it is a key)")
        raise ValueError(f"{owner}: {where} must be an http(s) URL such as {example}, got {shown}")


def retry_after(headers: Any) -> Optional[float]:
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
