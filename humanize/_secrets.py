"""The one path every component parameter takes on its way to a repr, a fingerprint, a store, a
card or an error (issue #35): a secret in it is replaced by a digest that identifies it.

A secret may be given in several places, and each is found by the same rule, :func:`is_secret_name`:

- a URL's query (``?code=...``, the form one cloud provider's function endpoints use;
  ``?api_key=``, ``?sig=``) and its user info (``https://user:password@host``);
- a request body template or any mapping parameter (``{"key": ...}``, ``{"api_key": ...}``),
  at any depth;
- headers (a mapping like any other; the endpoint detector refuses credential headers outright
  and takes the key from the environment);
- a secret-named parameter holding a number or a list (a watermark's ``key``: humanize.watermarks);
- an environment reference (``api_key_env="MY_KEY"``) names where the key lives: the name is
  kept, the value is read at request time and never stored.

:func:`redact` returns a copy with every such value replaced by ``<hidden:blake2b=...>`` (a keyed
BLAKE2b of the value: equal keys give equal markers, so a fingerprint still tells two keys apart,
and the marker reveals nothing usable); every secret found is also registered with
:func:`register_secret`, so :func:`scrub_secrets` hides
it wherever else it might appear (an error message, a stored command line). :func:`redact` is
idempotent: a marker is left as it is, so a component rebuilt from a stored configuration has the
fingerprint of the one that ran.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

__all__ = ["HIDDEN_MARKER", "hide", "is_secret_name", "redact", "redact_params", "redact_url", "register_secret",
           "scrub_secrets", "secret_forms"]

#: a part of a name (split at ``_ - .``, spaces and camelCase) that makes it hold a credential:
#: ``api_key``, ``x-api-key``, ``apiKey``, ``access_token``, ``client_secret``, ``Authorization``
_SECRET_PARTS = frozenset({"key", "apikey", "token", "accesstoken", "secret", "password", "passwd", "passphrase",
                           "pwd", "auth", "authorization", "credential", "credentials", "session", "sessionid",
                           "signature", "cookie", "jwt", "bearer"})
#: a last part that does: ``?code=`` (the query parameter of one cloud's function endpoints), ``?sig=``
#: (signed URLs); not ``encode`` or ``zipcode_format``
_SECRET_LAST = frozenset({"code", "sig"})
#: a last part that says the name is *about* a secret, not one: ``api_key_env`` (where the key lives),
#: ``auth_header``/``auth_scheme`` (how it is sent), ``max_key_length``
_ABOUT_LAST = frozenset({"env", "environ", "var", "variable", "header", "scheme", "type", "kind", "path", "file",
                         "name", "names", "url", "field", "column", "len", "length", "size", "count", "limit",
                         "max", "min", "format", "prefix", "suffix", "position", "index"})
#: tokenizer tokens are vocabulary, not credentials (``pad_token``, ``eos_token``)
_VOCABULARY = frozenset({"pad", "eos", "bos", "sep", "cls", "unk", "mask", "stop", "start", "end", "special"})
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: what replaced a secret (kept as is when met again)
HIDDEN_MARKER = re.compile(r"<hidden(?::blake2b=[0-9a-f]{16})?>")
_IDENTITY_KEY = b"humanize-bench secret identity"
#: values a template holds in place of data, never secrets (the endpoint detector's placeholders)
_PLACEHOLDERS = frozenset({"{text}", "{texts}"})


def is_secret_name(name: Any) -> bool:
    """Whether a parameter, query, body or header name holds a credential."""
    if not isinstance(name, str) or not name:
        return False
    parts = [p.lower() for p in _PARTS.findall(name)]
    if not parts or parts[-1] in _ABOUT_LAST or (parts[-1] == "token" and parts[0] in _VOCABULARY):
        return False
    return any(p in _SECRET_PARTS for p in parts) or parts[-1] in _SECRET_LAST or "".join(parts) in _SECRET_PARTS


def hide(value: Any) -> str:
    """The marker of one secret value: ``<hidden:blake2b=<16 hex>>`` (registered for scrubbing)."""
    text = str(value)
    if HIDDEN_MARKER.fullmatch(text):
        return text
    register_secret(text)
    mac = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8, key=_IDENTITY_KEY).hexdigest()
    return f"<hidden:blake2b={mac}>"


def _is_url(value: str) -> bool:
    head = value[:8].lower()
    return head.startswith("http://") or head.startswith("https://")


def redact_url(url: str) -> str:
    """``url`` with its user info and the values of its secret query parameters replaced by markers."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if not HIDDEN_MARKER.fullmatch(userinfo):
            netloc = f"{hide(userinfo)}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_name(k) and v and not HIDDEN_MARKER.fullmatch(v) for k, v in pairs):
            query = "&".join(f"{quote(k, safe='')}={hide(v) if is_secret_name(k) and v else quote(v, safe='')}"
                             for k, v in pairs)
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact(value: Any, name: Any = None) -> Any:
    """A copy of ``value`` (a parameter, a configuration, a body template) with every secret it holds
    replaced by its marker: the value of a secret-named key (at any depth), and each URL's user info
    and secret query values. Everything else is returned as it is (the same object where nothing changed)."""
    if isinstance(value, dict):
        out, changed = {}, False
        for k, v in value.items():
            new = redact(v, k)
            out[k] = new
            changed = changed or new is not v
        return out if changed else value
    if isinstance(value, (list, tuple)):
        # the items of a secret-named sequence (a watermark's several keys) are secrets too
        items = [redact(v, name if is_secret_name(name) else None) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(items) if isinstance(value, list) else tuple(items)
    if isinstance(value, str):
        if is_secret_name(name) and value and value not in _PLACEHOLDERS:
            return hide(value)
        if _is_url(value):
            shown = redact_url(value)
            return value if shown == value else shown
        return value
    if isinstance(value, int) and not isinstance(value, bool) and is_secret_name(name):
        return hide(value)  # a numeric key (a watermark's hash key) is a secret as much as a str one
    return value


#: the keys of a stored configuration or manifest under which components' parameters sit
PARAM_KEYS = frozenset({"params", "filters"})


def redact_params(value: Any) -> Any:
    """A stored configuration (or manifest) with :func:`redact` applied to every component's
    parameters (the values under :data:`PARAM_KEYS`, at any depth) and to every URL elsewhere;
    the record's own fields (a store ``key``, a ``fingerprint``) are left as they are."""
    if isinstance(value, dict):
        out = {k: redact(v) if k in PARAM_KEYS else redact_params(v) for k, v in value.items()}
        return out if any(out[k] is not value[k] for k in value) else value
    if isinstance(value, (list, tuple)):
        items = [redact_params(v) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(items) if isinstance(value, list) else tuple(items)
    if isinstance(value, str) and _is_url(value):
        return redact_url(value)
    return value


# -- the secrets this process has seen, scrubbed from messages before they are stored ---------------------
#: Secrets this process has seen (API keys, credentials in a URL), held in memory only, so that a
#: message can be scrubbed before it is stored (the second defence: messages are scrubbed where made).
_SECRETS: set = set()
_MIN_SECRET = 4  # shorter strings would scrub ordinary words


def register_secret(value: "str | None") -> None:
    """Remember ``value`` (an API key, a password) so :func:`scrub_secrets` hides it; never written anywhere."""
    if isinstance(value, str) and len(value) >= _MIN_SECRET:
        _SECRETS.add(value)


def secret_forms(value: str) -> set:
    """The ways ``value`` can appear in a message: as is, JSON- or repr-escaped, URL-quoted, and each line of it."""
    import json
    from urllib.parse import quote

    forms = {value, json.dumps(value)[1:-1], repr(value)[1:-1], quote(value, safe=""), quote(value)}
    forms.update(part for part in value.splitlines() if len(part) >= _MIN_SECRET)
    return {f for f in forms if f}


def scrub_secrets(text: str, *extra: "str | None") -> str:
    """``text`` with every registered secret (and each of ``extra``), in any of its forms, replaced by ``<hidden>``."""
    if not isinstance(text, str):
        return text
    forms: set = set()
    for secret in {*_SECRETS, *(e for e in extra if isinstance(e, str) and len(e) >= _MIN_SECRET)}:
        forms |= secret_forms(secret)
    if not forms:
        return text
    import re

    # one pass, longest form first: a secret that contains another registered secret is hidden whole; a secret
    # of digits only (a watermark's numeric key) only where it stands as a number of its own, never inside a
    # longer number or a hex run id
    def form(f: str) -> str:
        return rf"(?<![0-9A-Za-z]){re.escape(f)}(?![0-9A-Za-z])" if f.isdigit() else re.escape(f)

    pattern = re.compile("|".join(form(f) for f in sorted(forms, key=len, reverse=True)))
    return pattern.sub("<hidden>", text)
