"""The component catalogue, generated from the registries at build time.

``.. catalogue:: attacks`` (in a Markdown page, inside an ``{eval-rst}`` block; or ``detectors``, ``defenses``, ``datasets``, ``meters``) renders one table
row per registered name: the name, its class or loader (linked to the reference), the registry's note
(the paper or family its entry is filed under in the registry module), the docstring's first line, the
parameters with their defaults, and what it needs, read from those defaults:

- a packaged offline model (``humanize.models.PACKAGED``) -> "offline model ALIAS (extra E)", the extra
  being the one of this package's extras that installs its distribution;
- a hub id (``owner/name``) -> "hub: ID", and "GPU" when the id names a model of 2B parameters or more
  (``7b``, ``6B``, ``xxl``);
- another registered component by name (a guide detector, a surrogate, a generator) -> what that one needs;
- a required parameter without a default -> "you give: NAME".

Nothing here is written by hand per component: a new registry entry appears at the next build.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import io
import re
import tokenize
from functools import lru_cache
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_BIG = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])|xxl", re.I)
_METER_NOTE = {"validity": "WordNet 3.0 (Debian wordnet-base; NaN with a note without it)",
               "judge": "you give: QualityMeter(judge=...), a chat model name, 'endpoint:<model>' or a Generator"}


# -- what the registries hold ---------------------------------------------------------------------------
def registry_notes(module) -> dict[str, str]:
    """``{name: note}`` from the registry module's source: an entry's trailing comment, else the last
    full-line comment above it (the family the entry is filed under)."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return {}
    notes, group, line_key = {}, "", {}
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.STRING and i + 1 < len(tokens) and tokens[i + 1].string == ":":
            key = tok.string.strip("'\"")
            line_key[tok.start[0]] = key
            notes.setdefault(key, group)
        elif tok.type == tokenize.COMMENT:
            text = tok.string.lstrip("#").strip()
            if tok.line.strip().startswith("#"):
                group = text
            elif tok.start[0] in line_key:
                notes[line_key[tok.start[0]]] = text
    return notes


@lru_cache(maxsize=1)
def _extras() -> dict[str, str]:
    """``{distribution: extra}`` for this package's extras (the first extra that names it), from the
    checkout's pyproject.toml (else the installed metadata)."""
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    requires = []
    try:
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib
        extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
        requires = [f'{req}; extra == "{extra}"' for extra, reqs in extras.items() for req in reqs]
    except (OSError, KeyError, ModuleNotFoundError):
        try:
            requires = importlib.metadata.requires("humanize-bench") or []
        except importlib.metadata.PackageNotFoundError:
            return {}
    out = {}
    for req in requires:
        m = re.match(r"^([A-Za-z0-9_.-]+).*extra\s*==\s*['\"]([\w-]+)['\"]", req)
        if m:
            out.setdefault(m.group(1).lower().replace("_", "-"), m.group(2))
    return out


def needs_of(value, seen=()) -> list[str]:
    """What a parameter default needs (see the module docstring); [] for plain values."""
    from humanize import generation
    from humanize.attacks import registry as attacks
    from humanize.detectors import registry as detectors
    from humanize.models import PACKAGED

    if isinstance(value, (tuple, list)):
        return [n for v in value for n in needs_of(v, seen)]
    if not isinstance(value, str) or not value or value in seen:
        return []
    if value in PACKAGED:
        dist = PACKAGED[value].distribution.lower()
        extra = _extras().get(dist)
        how = f"extra {extra}" if extra else PACKAGED[value].install
        return [f"offline model {value} ({how})"]
    if _HUB_ID.match(value):
        big = _BIG.search(value.split("/")[1])
        gpu = big and (big.group(0).lower() == "xxl" or float(big.group(1)) >= 2)
        return [f"hub: {value}"] + (["GPU"] if gpu else [])
    for module in (detectors, attacks, generation):
        registry = module._registry
        if value in registry.available():
            return component_needs(registry.resolve(value), seen + (value,))
    return []


def parameters(obj) -> list[tuple[str, object]]:
    """``[(name, default or inspect.Parameter.empty)]`` of a class's constructor or a loader function."""
    sig = inspect.signature(obj.__init__ if isinstance(obj, type) else obj)
    return [(p.name, p.default) for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def component_needs(obj, seen=()) -> list[str]:
    out = []
    for name, default in parameters(obj):
        if default is inspect.Parameter.empty:
            out.append(f"you give: {name}")
        else:
            out.extend(needs_of(default, seen))
    return list(dict.fromkeys(out))


def _dataset_needs(loader) -> list[str]:
    names = {n: d for n, d in parameters(loader)}
    if "download" in names:
        return ["local files, or a download (download=True) into the cache"]
    if names.get("path", None) is inspect.Parameter.empty:
        return ["your file (CSV, JSON Lines, Parquet)"]
    if "data_dir" in names or "path" in names:
        return ["local files"]
    return []


#: the reference's modules, in the order a class is looked for in them (docs/reference.md)
PUBLIC = ("humanize.attacks", "humanize.detectors", "humanize.defenses", "humanize.quality", "humanize.generation",
          "humanize.benchmarks", "humanize.benchmarks.data")


def public_path(obj) -> str:
    """The name the reference documents ``obj`` under: ``humanize.attacks.Homoglyph`` rather than
    ``humanize.attacks.homoglyph.Homoglyph`` when a public module exports it."""
    import importlib

    name = obj.__qualname__
    for module_name in PUBLIC:
        module = importlib.import_module(module_name)
        if name in getattr(module, "__all__", ()) and getattr(module, name, None) is obj:
            return f"{module_name}.{name}"
    return f"{obj.__module__}.{name}"


def summary(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


def rows(kind: str) -> list[dict]:
    """One dict per registered component of ``kind``: name, target, note, summary, params, needs."""
    if kind == "meters":  # the registered PairMeters, combined by QualityMeter
        from humanize.quality.custom import builtin_meters

        out = []
        for name, cls in builtin_meters().items():
            note = "on by default" if cls.default else "opt-in: QualityMeter(meters=[..., %r])" % name
            needs = component_needs(cls) + ([_METER_NOTE[name]] if name in _METER_NOTE else [])
            out.append(dict(name=name, target=public_path(cls), note=note, summary=summary(cls),
                            params=parameters(cls), needs=needs))
        return out
    if kind == "datasets":
        from humanize.benchmarks import data

        registry, names, resolve = data._registry, data.available_datasets(), data.dataset_loader
        module, needs = data, _dataset_needs
    else:
        import importlib

        module = importlib.import_module({"attacks": "humanize.attacks.registry",
                                          "detectors": "humanize.detectors.registry",
                                          "defenses": "humanize.defenses"}[kind])
        registry, names, resolve, needs = module._registry, module._registry.available(), module.resolve, component_needs
    notes = registry_notes(module)
    out = []
    for name in names:
        obj = resolve(name)
        out.append(dict(name=name, target=public_path(obj), note=notes.get(name, ""),
                        summary=summary(obj), params=parameters(obj), needs=needs(obj)))
    return out


# -- rendering --------------------------------------------------------------------------------------------
def _literal(value, limit: int = 48, prefix: str = "") -> str:
    """``prefix + repr(value)`` as an inline literal, the repr cut at ``limit`` characters."""
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return "``" + (prefix + text).replace("`", "'") + "``"


def to_rst(kind: str) -> list[str]:
    """An RST list-table of ``rows(kind)``: name | class, paper, summary | parameters | needs."""
    table = rows(kind)
    out = [f".. list-table:: {kind.capitalize()} ({len(table)} registered)", "   :header-rows: 1",
           "   :widths: 16 34 30 20", f"   :class: catalogue catalogue-{kind}", ""]
    header = ["name", "class / loader, paper or family, what it does", "parameters (defaults)", "needs"]
    out += ["   * - " + header[0]] + [f"     - {h}" for h in header[1:]]
    for row in table:
        params = ", ".join(f"``{p}`` (*required*)" if d is inspect.Parameter.empty else _literal(d, prefix=f"{p}=")
                           for p, d in row["params"]) or "none"
        needs = _escape("; ".join(row["needs"])) or "nothing: offline, CPU"
        target = f":py:obj:`{row['target'].rsplit('.', 1)[-1]} <{row['target']}>`"
        about = " — ".join(t for t in (_escape(row["note"]), row["summary"]) if t)  # a summary is RST already
        out.append(f"   * - ``{row['name']}``")
        out.append(f"     - {target}" + (f" — {about}" if about else ""))
        out += [f"     - {params}", f"     - {needs}"]
    return out


def _escape(text: str) -> str:
    """Plain text for an RST table cell (no markup read into it)."""
    for char in ("\\", "*", "`", "|", "_"):
        text = text.replace(char, "\\" + char)
    return text


class CatalogueDirective(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        kind = self.arguments[0]
        if kind not in ("attacks", "detectors", "defenses", "datasets", "meters"):
            raise self.error(f"catalogue: unknown kind {kind!r} (attacks, detectors, defenses, datasets, meters)")
        container = nodes.container(classes=[f"catalogue-{kind}"])
        self.state.nested_parse(StringList(to_rst(kind), source=f"<catalogue {kind}>"), self.content_offset,
                                container)
        return [container]


def setup(app):
    app.add_directive("catalogue", CatalogueDirective)
    return {"version": "1", "parallel_read_safe": True}
