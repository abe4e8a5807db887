"""Cases of the bad-input matrix for what the reports write (layer ``outputs``): a symlink planted
at an output path, and HTML, bidirectional-override and invisible characters in the data's texts
and in the config's labels.

One tiny run (a CSV of the user's own with hostile texts, an attack and a detector with
hostile labels) is made once per worker; each case writes one output. An oracle reads the
written file: no raw ``<script>alert``/``<img src`` from the data or labels, no raw bidi or invisible
character; a planted link must be refused with an error naming the path, and its target must
stay as it was.
"""
from __future__ import annotations

import os

from _matrix_core import Case

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
BIDI = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
INVISIBLE = "\u2066"  # LEFT-TO-RIGHT ISOLATE
ATTACK_LABEL = f"{IMG}|{BIDI}swap"
DETECTOR_LABEL = f"{SCRIPT}{INVISIBLE}probe"
RAW = ("<script>alert", "<img src", BIDI, INVISIBLE)  # the payloads (a page's own <script> is not one)
VICTIM = "precious file, must stay as it is\n"


def _hostile_csv(path: str) -> None:
    import csv

    rows = [(f"The council met {SCRIPT} on day {i}, and {BIDI}the budget{INVISIBLE} passed after debate.", "human")
            for i in range(10)]
    rows += [(f"In conclusion, the model {IMG} writes text {i} that is fluent{BIDI} and generic.", "machine")
             for i in range(10)]
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        w.writerows(rows)


def hostile_run(ctx):
    """(db path, RunResult) of one run whose texts and labels carry HTML and bidi characters."""
    def make():
        from humanize.benchmarks.runner import run
        from humanize.benchmarks.runner.config import config_from_dict

        data = ctx.path("hostile.csv")
        _hostile_csv(data)
        db = ctx.path("hostile.sqlite")
        cfg = config_from_dict({"dataset": {"name": "file", "path": data}, "quality": False,
                                "attacks": [{"name": "homoglyph", "label": ATTACK_LABEL}],
                                "detectors": [{"name": "surface_probe", "label": DETECTOR_LABEL}],
                                "run": {"db": db, "n_boot": 0}})
        return db, run(cfg, progress=False)
    return ctx.get("hostile", make)


def _raw_in(paths) -> str | None:
    for p in paths:
        text = open(p, encoding="utf-8").read()
        for bad in RAW:
            if bad in text:
                return f"{os.path.basename(p)} holds raw {bad!r} from the data or a label"
    return None


def files_oracle(value, warns):
    paths = value if isinstance(value, (list, tuple)) else [value]
    return _raw_in([str(p) for p in paths])


def _planted(ctx, name: str):
    """(folder, victim path): ``folder/name`` is a symlink to a victim file outside the folder."""
    folder = os.path.dirname(ctx.path("out/x"))
    os.makedirs(folder, exist_ok=True)
    victim = ctx.path("victim.txt")
    with open(victim, "w") as fh:
        fh.write(VICTIM)
    os.symlink(victim, os.path.join(folder, name))
    return folder, victim


def _through_link(write, name: str, link_name: str | None = None):
    """Plant a link at ``link_name`` (default ``name``), call ``write(folder)``; the victim must be unchanged
    (an error is re-raised after the check, so that an error *and* a clobbered victim reads wrong)."""
    def call(ctx):
        folder, victim = _planted(ctx, link_name or name)
        try:
            write(ctx, folder)
        finally:
            with open(victim) as fh:
                now = fh.read()
            if now != VICTIM:
                raise AssertionError(f"wrote through the symlink planted at {link_name or name}: the victim changed")
        return folder
    return call


def _export(ctx, folder):
    from humanize.benchmarks.reporting.export import export_run

    db, _ = hostile_run(ctx)
    return export_run(db, folder, tables=["metrics"], format="csv")


def _cards(fmt):
    def write(ctx, folder):
        from humanize.benchmarks.reporting.card import write_cards

        db, _ = hostile_run(ctx)
        return write_cards(db, folder, formats=(fmt,))
    return write


def _documents(ctx, folder):
    from humanize.benchmarks.reporting.documents_page import write_documents_page

    db, _ = hostile_run(ctx)
    return write_documents_page(db, os.path.join(folder, "documents.html"))


def _report(ctx, folder):
    from humanize.benchmarks.reporting.report import build_report, export_report

    _, result = hostile_run(ctx)
    return export_report(build_report(result.tables), folder, formats=("md",))


def _card_stem():
    return "card_" + "".join(c if c.isalnum() or c in "-_." else "_" for c in DETECTOR_LABEL)


def outputs_cases(add) -> None:
    def case(name, call, expect, names=(), oracle=None, must=(), timeout=180):
        add(Case("outputs", name, call, expect, names, oracle=oracle, must=must, group="run", timeout=timeout))

    link = ("symlink", "link")
    case("export_run with a symlink planted at metrics.csv", _through_link(_export, "metrics.csv"), "error", link,
         must=("metrics.csv",))
    case("export_run with a symlink planted at metrics.csv.part",
         _through_link(_export, "metrics.csv", "metrics.csv.part"), "either", link)
    case("write_cards(md) with a symlink planted at the card", _through_link(_cards("md"), _card_stem() + ".md"),
         "error", link)
    case("write_documents_page with a symlink planted at documents.html",
         _through_link(_documents, "documents.html"), "error", link, must=("documents.html",))
    case("export_report(md) with a symlink planted at report.md", _through_link(_report, "report.md"), "error", link,
         must=("report.md",))

    def out(ctx):
        folder = os.path.dirname(ctx.path("o/x"))
        os.makedirs(folder, exist_ok=True)
        return folder
    case("card markdown: HTML and bidi labels escaped and marked",
         lambda c: _cards("md")(c, out(c)), "result", oracle=files_oracle)
    case("card HTML: HTML and bidi labels escaped and marked",
         lambda c: _cards("html")(c, out(c)), "result", oracle=files_oracle)
    case("documents page: HTML and bidi texts and labels escaped and marked",
         lambda c: _documents(c, out(c)), "result", oracle=files_oracle)
    case("report markdown: HTML and bidi labels escaped and marked",
         lambda c: _report(c, out(c)), "result", oracle=files_oracle)
