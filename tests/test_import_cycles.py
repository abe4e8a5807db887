"""No import cycle inside ``humanize/`` (issue #36): the module graph has no strongly connected component.

Every import counts, a function-level one included (a cycle closed by an import inside a function is still a
cycle: the two modules cannot be read, tested or moved apart); imports under ``if TYPE_CHECKING:`` do not run
and do not count. ``from package import name`` is an edge to the submodule ``package.name`` where that is a
module, else to the package. The graph is read with :mod:`ast` (nothing is imported), so the test is cheap.

:data:`KNOWN_CYCLES` lists the cycles not yet broken; it may only shrink: a new cycle fails, and so does a
listed one that no longer exists (remove it from the list).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Cycles still to break (issue #36 item 3), each as its sorted module names. Only ever remove entries.
KNOWN_CYCLES: list[list[str]] = []


def module_graph(package: Path = ROOT / "humanize") -> dict[str, set[str]]:
    """``{module: modules of the package it imports}``, from the source."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        is_pkg = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    root = package.name

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_pkg) in modules.items():
        here = name.split(".") if is_pkg else name.split(".")[:-1]
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [owner(a.name) for a in node.names if a.name.split(".")[0] == root]
            else:
                base = here[: len(here) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                if module.split(".")[0] != root:
                    continue
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else owner(module)
                           for a in node.names]
            graph[name].update(t for t in targets if t and t != name)
    return graph


def _runtime_imports(tree: ast.AST):
    """Every import statement of ``tree`` that runs (anywhere: module level, functions, classes), skipping
    ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def test_no_import_cycle_inside_the_package():
    found = cycles(module_graph())
    new = [c for c in found if c not in KNOWN_CYCLES]
    gone = [c for c in KNOWN_CYCLES if c not in found]
    assert not new, "import cycles inside humanize/ (move the shared helper down into a module both can import):\n" + \
        "\n".join(" <-> ".join(c) for c in new)
    assert not gone, f"these cycles are broken: remove them from KNOWN_CYCLES: {gone}"


def test_the_cycle_finder_finds_cycles_and_function_level_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import c\n")
    (pkg / "a.py").write_text("from pkg.b import thing\n")
    (pkg / "b.py").write_text("def f():\n    from .a import other\n")               # closed inside a function
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import sub\n"
                                      "from ..a import x\n")                          # TYPE_CHECKING: no edge
    (pkg / "d.py").write_text("import pkg.e\n")
    (pkg / "e.py").write_text("from pkg import d\n")                                # `from pkg import <module>`
    graph = module_graph(pkg)
    assert graph["pkg.sub.c"] == {"pkg.a"} and graph["pkg.sub"] == {"pkg.sub.c"}
    assert cycles(graph) == [["pkg.a", "pkg.b"], ["pkg.d", "pkg.e"]]
