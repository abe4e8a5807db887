"""``humanize-bench run``: a benchmark from a config file (TOML/YAML) and/or flags.

A component flag (``--attack``, ``--detector``, ``--defense``) is a spec in the one grammar of configs and
composite members (:func:`humanize._registry.parse_spec`): ``NAME`` or ``NAME:K=V,...`` is the config table
``{name = NAME, K = V}``, so ``--attack homoglyph:rate=0.3,label=h`` is the ``[[attacks]]`` entry
``name = "homoglyph", rate = 0.3, label = "h"``."""

from __future__ import annotations

import sys

from humanize.cli.common import (DEFAULT_OUT, executor_arguments, expected_errors, int_at_least, key_values, one_line,
                                 plugin_argument, print_tables, quiet_model_loading, warn_too_small)


def config_from_args(args):
    """The run configuration the flags (and ``--config``) describe, not yet validated."""
    from humanize.benchmarks.runner.config import RunConfig, attack_spec, defense_spec, detector_spec, load_config
    from humanize.exceptions import ConfigError

    cfg = load_config(args.config) if args.config else RunConfig()
    if getattr(args, "plugin", None):
        cfg.plugins = [*cfg.plugins, *args.plugin]
        cfg.load_plugins()  # before the names below are read: a plug-in may register them
    if args.dataset:
        cfg.dataset = args.dataset
    cfg.filters.update(key_values(args.filter, "--filter"))
    rates = " ".join(f"{r:g}" for r in args.rates or ())
    if args.attack:
        cfg.attacks = []
        for text in args.attack:
            spec = attack_spec(text)
            if args.rates and spec.rates is not None:
                raise ConfigError(f"--attack {text} sets rate={spec.rates[0] if len(spec.rates) == 1 else spec.rates} "
                                  f"and --rates {rates} would replace it; give one or the other")
            if args.rates and spec.has_rate():  # a θ sweep applies to an attack with a θ of its own
                spec.rates = list(args.rates)
            cfg.attacks.append(spec)
    elif args.rates:
        for spec in cfg.attacks:
            if spec.has_rate():  # a composite has no θ of its own: its members carry theirs
                if spec.rates and list(spec.rates) != list(args.rates):
                    print(f"humanize-bench run: warning: --rates {rates} replaces the rate(s) "
                          f"{', '.join(f'{r:g}' for r in spec.rates)} of attack {spec.name!r} in {args.config}",
                          file=sys.stderr)
                spec.rates = list(args.rates)
    if args.detector:
        cfg.detectors = [detector_spec(d) for d in args.detector]
    if args.defense:
        cfg.defenses = [defense_spec(d) for d in args.defense]
    for field in ("n", "seed", "device", "db", "batch_size", "executor", "ray_address", "max_retries"):
        value = getattr(args, field, None)
        if value is not None:
            setattr(cfg, field, value)
    if args.no_quality:
        cfg.quality = False
    if getattr(args, "protocol", None):
        cfg.protocol = args.protocol
    if getattr(args, "attack_human", False):
        cfg.attack_human = True
    if getattr(args, "attacks_as_given", False):
        cfg.given_attacks = True  # with --attack too: validate refuses the pair in one line
    return cfg


def _cmd_run(args) -> int:
    from humanize.benchmarks.reporting.report import build_report
    from humanize.benchmarks.runner import run

    quiet_model_loading()
    try:
        cfg = config_from_args(args)
        # a CLI process runs once: an attack's models are released when its job ends (issue #24)
        result = run(cfg, progress=not args.quiet, release_models=True)
    except expected_errors() as err:
        print(f"humanize-bench run: {one_line(err)}", file=sys.stderr)
        return 2
    print(f"run {result.run_id} stored in {result.store}; computed this time: {result.work}")
    if result.corrupt:
        print(f"recomputed {len(result.corrupt)} stored row(s) that failed their integrity check", file=sys.stderr)
    if result.failures:
        print(f"{len(result.failures)} document(s) failed and are left out of the tables (a rerun retries them); "
              f"first: {result.failures[0].job}: {result.failures[0].error}", file=sys.stderr)
    print_tables(build_report(result.tables, n=cfg.n, manifest=result.manifest))
    warn_too_small(result.tables, cfg.n, "run")
    return 0


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("run", help="run a benchmark from a config file (TOML/YAML) and/or flags")
    p.add_argument("--config", help="TOML or YAML run configuration")
    p.add_argument("--dataset", help="dataset name (see `humanize-bench list datasets`)")
    p.add_argument("--filter", action="append", metavar="KEY=VALUE", help="dataset filter, e.g. domain=xsum")
    p.add_argument("--attack", action="append", metavar="NAME[:K=V,...]",
                   help="attack (repeatable), as a config's [[attacks]] table: homoglyph:rate=0.3,label=h")
    p.add_argument("--rates", type=float, nargs="+", metavar="θ",
                   help="θ values: a sweep for every attack that has a θ of its own (not a pipeline or blend: their "
                        "members carry their own θ)")
    p.add_argument("--detector", action="append", metavar="NAME[:K=V,...]", help="detector (repeatable)")
    p.add_argument("--n", type=int, help="texts sampled per label: N machine and N human, about half of each held out "
                                         "as test texts (the rest fit the learned detectors)")
    p.add_argument("--seed", type=int)
    p.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: CUDA when present)")
    p.add_argument("--batch-size", dest="batch_size", type=int)
    p.add_argument("--db", help=f"results database (default {DEFAULT_OUT}/results.sqlite)")
    p.add_argument("--no-quality", action="store_true", help="skip the quality meters")
    p.add_argument("--protocol", choices=["humanize", "raid"],
                   help="the evaluation's definitions: humanize (default: exact thresholds, intervals) or raid "
                        "(RAID's own evaluator's, exactly; adds every RAID slice as the raid_slices table)")
    p.add_argument("--attack-human", dest="attack_human", action="store_true",
                   help="attack the human test texts too, as RAID does (RAID's AUROC counts them)")
    p.add_argument("--attacks-as-given", dest="attacks_as_given", action="store_true",
                   help="score the dataset's own attacked rows as they are (RAID's train or extra split with its "
                        "attacks) instead of attacking; takes no --attack")
    p.add_argument("--defense", action="append", metavar="NAME[:K=V,...]",
                   help="test-time defense applied to every scored text, e.g. normalize (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    plugin_argument(p)
    executor_arguments(p)
    p.add_argument("--max-retries", dest="max_retries", type=int_at_least(0), metavar="N",
                   help="resubmissions of a batch whose worker died (ray; default 2)")
    p.set_defaults(func=_cmd_run)
