"""The package's docstring conventions, for autodoc.

- Parameters are written as ``name : what it is`` lines (``a, b : ...`` for several), continued on
  indented lines, without a numpydoc ``Parameters`` heading. They become an RST field list here, so
  they render as a list (and docutils does not read them as a broken definition list).
- A numpydoc section heading (``Parameters`` over a line of dashes) becomes a rubric.
- A public name re-exported by another documented module (``humanize.attacks.Target`` is
  ``humanize.detectors.Target``) is documented once, in the documented module it is defined under.
"""

from __future__ import annotations

import re

_FIELD = re.compile(r"^:[^:\s][^:]*:(\s|$)")
_PARAM = re.compile(r"^(?P<names>[A-Za-z_]\w*(?:,\s*[A-Za-z_]\w*)*)\s+:\s+(?P<text>\S.*)$")

#: the modules the reference documents (docs/reference.md); set by conf.py
DOCUMENTED: tuple[str, ...] = ()
_current = {"module": None}


def param_lines_to_fields(lines: list[str]) -> list[str]:
    """``name : text`` lines (and their indented continuations) -> ``:name: text`` fields, with the blank
    lines RST needs around a field list. Lines inside literal blocks (indented) are left alone."""
    out: list[str] = []
    in_fields = False
    for i, line in enumerate(lines):
        if line.strip() and re.fullmatch(r"-{3,}", line.strip()) and out and out[-1].strip():
            out[-1] = f".. rubric:: {out[-1].strip()}"  # a numpydoc heading ("Parameters" over dashes)
            out.append("")
            continue
        m = _PARAM.match(line)
        if m:
            if not in_fields and out and out[-1].strip():
                out.append("")
            out.append(f":{m.group('names')}: {m.group('text')}")
            in_fields = True
            continue
        if _FIELD.match(line):  # a field already (napoleon's :param x:), its list closed like ours
            out.append(line)
            in_fields = True
            continue
        if in_fields:
            if line.startswith((" ", "\t")) and line.strip():
                out.append("   " + line.strip())
                continue
            if line.strip():
                out.append("")
            in_fields = False
        out.append(line)
    return out


def _process_docstring(app, what, name, obj, options, lines):  # noqa: ARG001 - the event's signature
    if what == "module":
        _current["module"] = name
    lines[:] = param_lines_to_fields(list(lines))


def _home(module_name: str) -> str | None:
    found = [m for m in DOCUMENTED if module_name == m or module_name.startswith(m + ".")]
    return max(found, key=len) if found else None


def _skip_member(app, what, name, obj, skip, options):  # noqa: ARG001
    current = _current["module"]
    defined_in = getattr(obj, "__module__", None)
    if skip or what != "module" or current is None or not isinstance(defined_in, str):
        return None
    home = _home(defined_in)
    if home is not None and home != current and _home(current) == current and not current.startswith(home + "."):
        return True  # documented in its own module's page
    return None


def setup(app):
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("autodoc-skip-member", _skip_member)
    return {"version": "1", "parallel_read_safe": False}
