"""Cases of the bad-input matrix for configuration, the runner, the results store and the CLI.

The runner cases run a tiny configuration (8 demo texts per label, one attack, the surface
probe, no quality meters) into scratch databases; corruption cases change stored bytes
in place (a score's IEEE bytes, a JSON digit, a text character), so the file stays a valid
SQLite database and only an integrity check can tell.
"""
from __future__ import annotations

import copy
import os

from _matrix_core import Case

BASE = {"dataset": {"name": "demo", "n": 8}, "attacks": ["homoglyph"], "detectors": ["surface_probe"],
        "quality": False, "run": {"db": "matrix.sqlite"}}


def base_dict(db: str = "matrix.sqlite") -> dict:
    d = copy.deepcopy(BASE)
    d["run"]["db"] = db
    return d


def _isint(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _isreal(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v


def config_problems(cfg) -> list[str]:
    """What is wrong with a config that ``validate()`` accepted (field types and ranges)."""
    p = []
    if not isinstance(cfg.dataset, str):
        p.append(f"dataset={cfg.dataset!r}")
    if not isinstance(cfg.filters, dict):
        p.append(f"filters={cfg.filters!r}")
    if cfg.n is not None and not (_isint(cfg.n) and cfg.n >= 2):
        p.append(f"n={cfg.n!r}")
    if not _isint(cfg.seed):
        p.append(f"seed={cfg.seed!r}")
    if not (_isint(cfg.batch_size) and cfg.batch_size >= 1):
        p.append(f"batch_size={cfg.batch_size!r}")
    for name in ("per_domain", "quality"):
        if not isinstance(getattr(cfg, name), bool):
            p.append(f"{name}={getattr(cfg, name)!r}")
    if not (_isreal(cfg.train_fraction) and 0 < cfg.train_fraction < 1):
        p.append(f"train_fraction={cfg.train_fraction!r}")
    try:
        fprs = list(cfg.fprs)
    except TypeError:
        fprs = None
    if not fprs or not all(_isreal(f) and 0 < f < 1 for f in fprs):
        p.append(f"fprs={cfg.fprs!r}")
    if not (isinstance(cfg.db, (str, os.PathLike)) and str(cfg.db)):
        p.append(f"db={cfg.db!r}")
    if cfg.device is not None and not (isinstance(cfg.device, str) and cfg.device):
        p.append(f"device={cfg.device!r}")
    for name in ("quality_lm", "quality_encoder"):
        v = getattr(cfg, name, None)
        if v is not None and not (isinstance(v, str) and v):
            p.append(f"{name}={v!r}")
    if not isinstance(cfg.attacks, list) or not cfg.attacks:
        p.append(f"attacks={cfg.attacks!r}")
    else:
        for spec in cfg.attacks:
            if not isinstance(getattr(spec, "name", None), str) or not isinstance(getattr(spec, "params", None), dict):
                p.append(f"attack spec {spec!r}")
            elif spec.rates is not None and not all(_isreal(r) and 0 <= r <= 1 for r in spec.rates):
                p.append(f"{spec.name} rates={spec.rates!r}")
    if not isinstance(cfg.detectors, list) or not cfg.detectors:
        p.append(f"detectors={cfg.detectors!r}")
    else:
        for spec in cfg.detectors:
            if not isinstance(getattr(spec, "name", None), str) or not isinstance(getattr(spec, "params", None), dict):
                p.append(f"detector spec {spec!r}")
    return p


def config_oracle(label: str, want=None, valid: bool = False):
    """Accepting is right only for a valid config, or an invalid-looking value normalised as ``want`` says."""
    def check(cfg, warns):
        problems = config_problems(cfg)
        if problems:
            return f"validate() accepted {label}: " + "; ".join(problems)
        if want is not None:
            return None if want(cfg) else f"validate() accepted {label} with another meaning"
        return None if valid else f"validate() accepted {label}"
    return check


def _validated(data):
    from humanize.benchmarks.runner.config import config_from_dict

    cfg = config_from_dict(data)
    cfg.validate()
    return cfg


def _set(path: str, value):
    def mutate(d):
        *parents, key = path.split(".")
        node = d
        for part in parents:
            node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else node[part]
        node[key] = value
    return mutate


def _names(cfg):
    return [s.name for s in cfg.attacks], [s.name for s in cfg.detectors]


def config_cases(add) -> None:
    def case(label, mutate, names, want=None, valid=False, quick=False):
        def call(ctx):
            d = base_dict()
            mutate(d)
            return _validated(d)
        add(Case("config", f"config_from_dict({label}).validate()", call, "result" if valid else "error", names,
                 oracle=config_oracle(label, want, valid), quick=quick))

    case("valid tiny config", lambda d: None, (), valid=True, quick=True)
    case("per_domain=false", _set("run.per_domain", False), (), want=lambda c: c.per_domain is False, valid=True)
    case("rate sweep [0.1, 0.2]", lambda d: d.__setitem__("attacks", [{"name": "homoglyph", "rate": [0.1, 0.2]}]),
         (), want=lambda c: len(c.attacks[0].expand()) == 2, valid=True)
    fields = {
        "seed": ["a", 1.5, None, True, [1]],
        "batch_size": [0, -1, "x", 1.5, None, True, "16"],
        "fprs": [["0.05"], [0], [1], [1.5], [-0.1], [], "0.05", [None], [True], [float("nan")]],
        "per_domain": ["yes", "false", 2, None, []],
        "train_fraction": ["0.5", 0, 1, -0.1, 1.5, None, [0.5], float("nan")],
        "device": [5, ["cpu"], True, ""],
        "db": [5, None, [], ""],
        "bogus_key": [1],
    }
    for key, values in fields.items():
        for value in values:
            case(f"run.{key}={value!r}", _set(f"run.{key}", value), (key,),
                 quick=(key, value) in (("batch_size", 0), ("fprs", ["0.05"])))
    case("run.per_domain='no'", _set("run.per_domain", "no"), ("per_domain",), want=lambda c: c.per_domain is False,
         quick=True)
    case("run.fprs=0.05 (a scalar)", _set("run.fprs", 0.05), ("fprs",), want=lambda c: list(c.fprs) == [0.05])
    for seed in (-1, 2**32, 2**70):
        case(f"run.seed={seed}", _set("run.seed", seed), ("seed",), want=lambda c, s=seed: c.seed == s)
    sections = {
        "dataset": [(5, ("dataset",)), (None, ("dataset",)), ([], ("dataset",)),
                    ("nope", ("nope",)), ({"name": 5}, ("dataset",)), ({"name": "nope"}, ("nope",)),
                    ({"name": "demo", "n": 0}, ("n",)), ({"name": "demo", "n": 1}, ("n",)),
                    ({"name": "demo", "n": -3}, ("n",)), ({"name": "demo", "n": "4"}, ("n",)),
                    ({"name": "demo", "n": 2.5}, ("n",)), ({"name": "demo", "n": True}, ("n",)),
                    ({"name": "demo", "filters": "x"}, ("filters",)), ({"name": "demo", "filters": 5}, ("filters",)),
                    ({"name": "demo", "bogus_filter": 1}, ("bogus_filter",))],
        "attacks": [(5, ("attacks",)), (None, ("attacks",)), ([None], ("attack",)),
                    ([5], ("attack",)), (["nope"], ("nope",)), ([], ("attack",)),
                    ([{"rate": 0.1}], ("name",)), ([{"name": 5}], ("attack", "name")),
                    ([{"name": "homoglyph", "rate": [0.1, "x"]}], ("rate",)),
                    ([{"name": "homoglyph", "rate": "x"}], ("rate",)), ([{"name": "homoglyph", "rate": -1}], ("rate",)),
                    ([{"name": "homoglyph", "rate": 2}], ("rate",)),
                    ([{"name": "homoglyph", "rate": float("nan")}], ("rate",)),
                    ([{"name": "homoglyph", "rate": True}], ("rate",)),
                    ([{"name": "homoglyph", "bogus": 1}], ("bogus",)),
                    ([{"name": "homoglyph", "params": "x"}], ("params",)),
                    ([{"name": "homoglyph", "seed": "a"}], ("seed",))],
        "detectors": [(5, ("detectors",)), (None, ("detectors",)), ([None], ("detector",)),
                      ([5], ("detector",)), (["nope"], ("nope",)), ([], ("detector",)),
                      ([{"name": "tfidf_lr", "C": -1}], ("C",)), ([{"name": "tfidf_lr", "C": "x"}], ("C",)),
                      ([{"name": "surface_probe", "bogus": 1}], ("bogus",)),
                      ([{"name": "log_likelihood", "max_tokens": 0}], ("max_tokens",)),
                      ([{"name": "surface_probe", "params": 5}], ("params",))],
        "quality": [("yes", ("quality",)), (5, ("quality",)), ([], ("quality",)),
                    ({"lm": 5}, ("lm",)), ({"encoder": 5}, ("encoder",)),
                    ({"lm": ""}, ("lm",)), ({"batch_size": 0}, ("batch_size",)), ({"batch_size": "x"}, ("batch_size",)),
                    ({"max_length": -1}, ("max_length",)), ({"stride": 0}, ("stride",)), ({"bogus": 1}, ("bogus",)),
                    ({"meters": ["nope"]}, ("nope", "meters")), ({"meters": "rouge_l"}, ("meters",))],
    }
    for section, items in sections.items():
        for value, names in items:
            case(f"{section}={value!r}", lambda d, s=section, v=value: d.__setitem__(s, v), names,
                 quick=(section, value) in (("attacks", 5), ("quality", "yes")))
    case("attacks='homoglyph' (a str)", lambda d: d.__setitem__("attacks", "homoglyph"), ("attacks",),
         want=lambda c: _names(c)[0] == ["homoglyph"], quick=True)
    case("[attacks] table with name", lambda d: d.__setitem__("attacks", {"name": "homoglyph"}), ("attacks",),
         want=lambda c: _names(c)[0] == ["homoglyph"])
    case("[detectors] table with name", lambda d: d.__setitem__("detectors", {"name": "surface_probe"}),
         ("detectors",), want=lambda c: _names(c)[1] == ["surface_probe"], quick=True)
    case("detectors='surface_probe' (a str)", lambda d: d.__setitem__("detectors", "surface_probe"), ("detectors",),
         want=lambda c: _names(c)[1] == ["surface_probe"])
    case("quality={'enabled': 'no'}", lambda d: d.__setitem__("quality", {"enabled": "no"}), ("enabled", "quality"),
         want=lambda c: c.quality is False)
    for label, data, names in (("None", None, ("mapping", "NoneType")), ("a list", [], ("mapping", "list")),
                               ("a str", "x", ("mapping", "str"))):
        add(Case("config", f"config_from_dict({label})", lambda ctx, d=data: _validated(d), "error", names))
    for label, key, value in (("unknown section", "bogus", {}), ("run=5", "run", 5), ("run=[]", "run", []),
                              ("run='x'", "run", "x")):
        case(label, lambda d, k=key, v=value: d.__setitem__(k, v), (key,))
    _runconfig_cases(add)
    _load_config_cases(add)


def _runconfig_cases(add) -> None:
    def call(field, value):
        def run(ctx):
            import dataclasses

            from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig

            cfg = RunConfig(dataset="demo", n=8, attacks=[AttackSpec("homoglyph")],
                            detectors=[DetectorSpec("surface_probe")], quality=False)
            cfg = dataclasses.replace(cfg, **{field: value})
            cfg.validate()
            return cfg
        return run

    for field, value, names in (("attacks", ["homoglyph"], ("attack",)), ("detectors", ["surface_probe"], ("detector",)),
                                ("n", "4", ("n",)), ("quality", "yes", ("quality",)), ("fprs", 0.05, ("fprs",)),
                                ("batch_size", 0, ("batch_size",)), ("seed", "a", ("seed",)), ("db", 5, ("db",)),
                                ("per_domain", "no", ("per_domain",)), ("train_fraction", "0.5", ("train_fraction",)),
                                ("dataset", 5, ("dataset",)), ("filters", "x", ("filters",)), ("device", 5, ("device",)),
                                ("quality_params", "x", ("quality_params", "quality")),
                                ("quality_lm", 5, ("quality_lm", "lm"))):
        label = f"{field}={value!r}"
        add(Case("config", f"RunConfig({label}).validate()", call(field, value), "error", names,
                 oracle=config_oracle(label), quick=field in ("attacks", "fprs")))


def _load_config_cases(add) -> None:
    good_toml = ('attacks = ["homoglyph"]\ndetectors = ["surface_probe"]\nquality = false\n\n'
                 '[dataset]\nname = "demo"\nn = 8\n')
    files = [
        ("valid .toml", "ok.toml", good_toml, (), "result"),
        ("valid .yaml", "ok.yaml", "dataset: {name: demo, n: 8}\nattacks: [homoglyph]\ndetectors: [surface_probe]\n"
                                   "quality: false\n", (), "result"),
        ("TOML per_domain = \"no\"", "pd.toml", good_toml.replace("quality = false\n",
                                                                   "quality = false\n[run]\nper_domain = \"no\"\n"),
         ("per_domain",), "error"),
        ("TOML [detectors] table", "dt.toml", good_toml.replace('detectors = ["surface_probe"]\n', "") +
         '\n[detectors]\nname = "surface_probe"\n', ("detectors",), "either"),
        ("TOML attacks = \"homoglyph\"", "as.toml", good_toml.replace('["homoglyph"]', '"homoglyph"'), ("attacks",),
         "either"),
        ("YAML fprs: 0.05", "f.yaml", "dataset: demo\nattacks: [homoglyph]\ndetectors: [surface_probe]\n"
                                      "run: {fprs: 0.05}\n", ("fprs",), "either"),
        ("invalid TOML", "bad-matrix.toml", "[[[ this is not toml", ("bad-matrix.toml",), "error"),
        ("YAML list", "list-matrix.yaml", "- a\n- b\n", ("mapping", "list"), "error"),
        ("YAML scalar", "scalar-matrix.yaml", "hello\n", ("mapping", "str"), "error"),
        ("invalid YAML", "bad-matrix.yaml", "a: [unclosed\n  - x: :\n", ("bad-matrix.yaml",), "error"),
        ("empty .toml", "empty.toml", "", ("attack",), "error"),
        (".txt suffix", "conf-matrix.txt", good_toml, (".txt", "conf-matrix.txt"), "error"),
        ("invalid UTF-8", "utf-matrix.toml", b"attacks = [\"homoglyph\"]\n# \xff\xfe\n", ("utf-matrix.toml",), "error"),
        ("NUL bytes", "nul-matrix.toml", "attacks = [\"homo\x00glyph\"]\n", ("nul-matrix.toml", "homo"), "error"),
    ]
    for label, name, text, names, expect in files:
        def call(ctx, name=name, text=text):
            from humanize.benchmarks.runner.config import load_config

            path = ctx.path(name)
            with open(path, "wb") as fh:
                fh.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            cfg = load_config(path)
            cfg.validate()
            return cfg
        want = None
        if "[detectors]" in label:
            want = lambda c: _names(c)[1] == ["surface_probe"]  # noqa: E731
        elif "attacks =" in label:
            want = lambda c: _names(c)[0] == ["homoglyph"]  # noqa: E731
        elif "fprs" in label:
            want = lambda c: list(c.fprs) == [0.05]  # noqa: E731
        add(Case("config", f"load_config({label})", call, expect, names,
                 oracle=config_oracle(label, want, valid=expect == "result"), quick=label.startswith("invalid")))

    def missing(ctx):
        from humanize.benchmarks.runner.config import load_config

        return load_config(os.path.join(ctx.tmp, "missing-matrix.toml"))

    def directory(ctx):
        from humanize.benchmarks.runner.config import load_config

        path = ctx.path("dir-matrix.toml")
        os.makedirs(path)
        return load_config(path)

    add(Case("config", "load_config(missing file)", missing, "error", ("missing-matrix.toml",)))
    add(Case("config", "load_config(a directory)", directory, "error", ("dir-matrix.toml",)))
    for label, arg, names in (("5", 5, ("int", "path")), ("None", None, ("None", "path"))):
        add(Case("config", f"load_config({label})", lambda ctx, a=arg: __import__(
            "humanize.benchmarks.runner.config").benchmarks.runner.config.load_config(a), "error", names))
