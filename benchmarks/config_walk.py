"""The places the run configuration visits from runner.engine.run: a static call graph over `ast`.

A *place* is a function of humanize/benchmarks/runner that is reachable from engine.run by calls
(resolved by name: a module-level function or a method name defined in the runner) and that takes the
configuration (a parameter named cfg or config, or ctx: the run context that carries it) or a spec of it
(spec, specs). A function that reads a module-level tuple or list of runner functions (the engine's
STAGES) calls each of them. A *return* is a call edge into a module the walk had already left (the
caller's module differs from the callee's, and the callee's module was entered before on the path).
Run from the repository root: python benchmarks/config_walk.py (issue #36; compare with `git stash` or
another checkout).
"""
import ast
from pathlib import Path

ROOT = Path("humanize/benchmarks/runner")
CONFIG_NAMES = {"cfg", "config", "ctx", "spec", "specs"}
funcs = {}  # name -> list of (module, node)
sequences = {}  # name of a module-level tuple/list of function names -> those names (a stage list)
for f in sorted(ROOT.rglob("*.py")):
    mod = f.relative_to(ROOT).with_suffix("").as_posix()
    tree = ast.parse(f.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            funcs.setdefault(node.name, []).append((mod, node))
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, (ast.Tuple, ast.List)) and node.value.elts
                and all(isinstance(e, ast.Name) for e in node.value.elts)):
            sequences[node.targets[0].id] = [e.id for e in node.value.elts]


def calls(node):
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            fn = n.func
            name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else None
            if name in funcs:
                yield name
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in sequences:
            yield from (name for name in sequences[n.id] if name in funcs)


def takes_config(node):
    args = [a.arg for a in node.args.args + node.args.kwonlyargs]
    return bool(CONFIG_NAMES & set(args)) or any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                                                  and n.value.id in ("cfg", "config") for n in ast.walk(node))


start = [(m, n) for m, n in funcs["run"] if m == "engine"][0]
seen, places, returns, stack = set(), set(), 0, [(start, ("engine",))]
while stack:
    (mod, node), path = stack.pop()
    key = (mod, node.name, node.lineno)
    if key in seen:
        continue
    seen.add(key)
    if takes_config(node):
        places.add(key)
    for name in calls(node):
        for callee in funcs[name]:
            cm = callee[0]
            if cm != mod and cm in path:
                returns += 1
            stack.append((callee, path + (cm,)))
print(f"reachable functions: {len(seen)}; places the configuration visits: {len(places)}; "
      f"modules: {len({k[0] for k in places})}; returns to a module already left: {returns}")
