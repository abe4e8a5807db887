"""JSON request bodies and score paths: how :class:`~humanize.detectors.endpoint.EndpointDetector`
puts texts into a request and finds the scores in the answer.

A body template is plain JSON (dicts, lists, str, numbers, bools, None) holding exactly one
placeholder value: ``"{texts}"`` (replaced by a batch, a list of str) or ``"{text}"`` (one
text). Only a whole value is replaced, never part of a string.

Score path syntax: keys separated by dots; ``[N]`` a list index (negative from the end);
``*`` or ``[*]`` every element of a list (the rest of the path is read in each);
``[key=value]`` the first element of a list whose ``key`` equals ``value`` (a JSON
non-string is compared in its JSON form: ``true``, ``1``); ``""`` the whole answer. A key
holding ``.``, ``[`` or ``]`` cannot be named. Examples: ``"scores"``,
``"results.*.ai_probability"``, ``"data[0].score"``, ``"[0][label=machine].score"``.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["TEXT", "TEXTS", "check_body", "describe_value", "fill_body", "parse_score_path", "read_score_path"]

TEXTS, TEXT = "{texts}", "{text}"


def check_body(owner: str, body: Any) -> str:
    """The placeholder the body holds (``TEXTS`` or ``TEXT``), after checking it is JSON with exactly one."""
    if not isinstance(body, (dict, list)):
        raise TypeError(f"{owner}: body must be a JSON object or array (dict or list) holding '{{texts}}' or "
                        f"'{{text}}', got {type(body).__name__}")
    try:
        json.dumps(body, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{owner}: body must be plain JSON (str, numbers, bools, None, lists, dicts with str keys): "
                        f"{err}") from None
    found: list = []

    def walk(v: Any) -> None:
        if isinstance(v, str) and v in (TEXTS, TEXT):
            found.append(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                if not isinstance(k, str):
                    raise TypeError(f"{owner}: body keys must be str, got {k!r}")
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)

    walk(body)
    if len(found) != 1:
        raise ValueError(f"{owner}: body must hold exactly one placeholder value, '{{texts}}' (the batch) or "
                         f"'{{text}}' (one text), found {len(found)}: {json.dumps(body)[:200]}")
    return found[0]


def fill_body(body: Any, value: Any) -> Any:
    """A copy of the template ``body`` with its placeholder replaced by ``value``."""
    if isinstance(body, str):
        return value if body in (TEXTS, TEXT) else body
    if isinstance(body, dict):
        return {k: fill_body(v, value) for k, v in body.items()}
    if isinstance(body, (list, tuple)):
        return [fill_body(v, value) for v in body]
    return body


_STEP = re.compile(r"(\.)?(?:([^.\[\]]+)|\[([^\[\]]*)\])")


def parse_score_path(path: str) -> tuple:
    """``path`` as steps ``(text so far, ("key", k) | ("index", i) | ("all",) | ("where", k, v))``."""
    if not isinstance(path, str):
        raise TypeError(f"score_path must be a str, got {type(path).__name__}")
    steps, pos = [], 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        step = None
        if m is not None:
            dot, name, inner = m.groups()
            if name is not None and bool(dot) == (pos > 0):
                step = ("all",) if name == "*" else ("key", name)
            elif inner is not None and not dot:
                if inner == "*":
                    step = ("all",)
                elif re.fullmatch(r"-?\d+", inner):
                    step = ("index", int(inner))
                elif "=" in inner and inner.split("=", 1)[0]:
                    step = ("where", *inner.split("=", 1))
        if step is None:
            raise ValueError(f"score_path {path!r}: cannot read it at character {pos} ({path[pos:pos + 12]!r}); use "
                             f"keys separated by dots, [N] for a list index, * or [*] for every element, [key=value] "
                             f"for the element whose key has that value, e.g. 'results.*.ai_probability' or "
                             f"'data[0].score'")
        pos = m.end()
        steps.append((path[:pos], step))
    return tuple(steps)


def read_score_path(steps: tuple, value: Any) -> Any:
    """The value ``steps`` (from :func:`parse_score_path`) lead to in ``value``; ``ValueError`` naming the step."""
    for j, (text, step) in enumerate(steps):
        kind = step[0]
        if kind == "key":
            if not isinstance(value, dict):
                raise ValueError(f"{text!r} needs an object, found {describe_value(value)}")
            if step[1] not in value:
                fields = ", ".join(map(repr, list(value)[:10]))
                raise ValueError(f"no field {step[1]!r} at {text!r} (fields there: {fields})")
            value = value[step[1]]
            continue
        if not isinstance(value, list):
            raise ValueError(f"{text!r} needs a list, found {describe_value(value)}")
        if kind == "index":
            if not -len(value) <= step[1] < len(value):
                raise ValueError(f"{text!r}: index {step[1]} is out of range for a list of {len(value)}")
            value = value[step[1]]
        elif kind == "where":
            key, want = step[1], step[2]
            match = [v for v in value if isinstance(v, dict) and key in v
                     and (v[key] if isinstance(v[key], str) else json.dumps(v[key])) == want]
            if not match:
                raise ValueError(f"{text!r}: no element has {key} = {want!r}")
            value = match[0]
        else:
            out = []
            for i, v in enumerate(value):
                try:
                    out.append(read_score_path(steps[j + 1:], v))
                except ValueError as err:
                    raise ValueError(f"element {i} of {text!r}: {err}") from None
            return out
    return value


def describe_value(v: Any, key: "str | None" = None) -> str:
    """A short description of a JSON value for a message (``key``, if given, shown as ``<hidden>``)."""
    if v is None:
        return "null"
    shown = repr(v).replace(key, "<hidden>") if key else repr(v)  # before cutting: a cut could leave part of it
    return f"a {type(v).__name__} ({shown[:40] + '...' if len(shown) > 40 else shown})"
