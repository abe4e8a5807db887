"""What the reports write is safe whatever the data and the config hold (issue #22): no writer follows
a symbolic link planted at its output path, and no text or label reaches a page as raw HTML or as an
unmarked invisible or bidirectional-override character."""

from __future__ import annotations

import csv
import os

import pandas as pd
import pytest

from humanize.benchmarks.reporting import _escape
from humanize.benchmarks.reporting._files import atomic_write, write_text
from humanize.benchmarks.reporting.attack_tour import _visible
from humanize.benchmarks.reporting._files import file_stem
from humanize.benchmarks.reporting.card import write_cards
from humanize.benchmarks.reporting.documents_page import write_documents_page
from humanize.benchmarks.reporting.export import export_run, write_table
from humanize.benchmarks.reporting.report import build_report, export_report, render_markdown
from humanize.benchmarks.runner import run
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.exceptions import OutputPathError, UserError

SCRIPT, IMG, RLO, LRI = "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "\u202e", "\u2066"
ATTACK = f"{IMG}|{RLO}swap"
DETECTOR = f"{SCRIPT}{LRI}probe"
PAYLOADS = ("<script>alert", "<img src", RLO, LRI)
VICTIM = "must stay as it is\n"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A tiny run of a user's CSV whose texts, attack label and detector label carry HTML and bidi characters."""
    tmp = tmp_path_factory.mktemp("hostile")
    data = tmp / "hostile.csv"
    with open(data, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        w.writerows((f"The council met {SCRIPT} on day {i}; {RLO}the budget{LRI} passed.", "human") for i in range(8))
        w.writerows((f"In conclusion, the model {IMG} writes text {i}{RLO} fluently.", "machine") for i in range(8))
    cfg = RunConfig(dataset="file", filters={"path": str(data)}, n=None, seed=0, db=str(tmp / "r.sqlite"),
                    quality=False, n_boot=0, fprs=(0.2,), per_domain=False,
                    attacks=[AttackSpec("homoglyph", label=ATTACK)], detectors=[DetectorSpec("surface_probe",
                                                                                              label=DETECTOR)])
    return tmp / "r.sqlite", run(cfg, progress=False)


def _plant(folder, name):
    folder.mkdir(parents=True, exist_ok=True)
    victim = folder.parent / f"victim-{name}"
    victim.write_text(VICTIM)
    os.symlink(victim, folder / name)
    return victim


WRITERS = {
    "export_run": ("metrics.csv", lambda db, res, out: export_run(db, out, tables=["metrics"], format="csv")),
    "write_cards(md)": (file_stem(DETECTOR, "card_") + ".md",
                        lambda db, res, out: write_cards(db, out, formats=("md",))),
    "write_documents_page": ("documents.html", lambda db, res, out: write_documents_page(db, out / "documents.html")),
    "export_report(md)": ("report.md", lambda db, res, out: export_report(build_report(res.tables), out, ("md",))),
    "export_report(csv)": ("auroc.csv", lambda db, res, out: export_report(build_report(res.tables), out, ("csv",))),
    "export_report(json)": ("auroc.json",
                            lambda db, res, out: export_report(build_report(res.tables), out, ("json",))),
}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_no_writer_follows_a_symlink_planted_at_its_output(hostile, tmp_path, writer):
    name, write = WRITERS[writer]
    victim = _plant(tmp_path / "out", name)
    with pytest.raises(OutputPathError, match="symbolic link") as err:
        write(*hostile, tmp_path / "out")
    assert name in str(err.value) and "\n" not in str(err.value) and isinstance(err.value, UserError)
    assert victim.read_text() == VICTIM and os.path.islink(tmp_path / "out" / name)


def test_a_plot_is_written_atomically_and_refuses_a_link(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from humanize.benchmarks.reporting._figstyle import save

    fig, _ = plt.subplots(figsize=(1, 1))
    victim = _plant(tmp_path / "out", "x.png")
    with pytest.raises(OutputPathError):
        save(fig, tmp_path / "out", "x", ["png"], close=False)
    assert victim.read_text() == VICTIM
    (tmp_path / "out" / "x.png").unlink()
    [p] = save(fig, tmp_path / "out", "x", ["png"], close=False)
    plt.close(fig)
    assert p.read_bytes().startswith(b"\x89PNG") and os.listdir(tmp_path / "out") == ["x.png"]


def test_a_link_at_the_old_part_name_is_ignored_and_the_table_lands_as_a_new_file(tmp_path):
    victim = _plant(tmp_path / "out", "t.csv.part")
    path = write_table(pd.DataFrame({"a": [1, 2]}), tmp_path / "out" / "t.csv", "csv")
    assert victim.read_text() == VICTIM
    assert not os.path.islink(path) and pd.read_csv(path)["a"].tolist() == [1, 2]
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o666 & ~_umask())  # not mkstemp's 0600


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "r.md"
    write_text(target, "old")

    def broken(tmp):
        tmp.write_text("half")
        raise RuntimeError("disk full")
    with pytest.raises(RuntimeError):
        atomic_write(target, broken)
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["r.md"]
    (tmp_path / "d").mkdir()
    with pytest.raises(OutputPathError, match="not a regular file"):
        write_text(tmp_path / "d", "x")


def _outputs(db, res, out):
    out.mkdir()
    return {**{p.suffix: p for p in write_cards(db, out)},
            "documents": write_documents_page(db, out / "documents.html"),
            "report": export_report(build_report(res.tables), out, ("md",))[0]}


def test_no_raw_html_or_unmarked_bidi_from_texts_or_labels_in_any_page(hostile, tmp_path):
    written = _outputs(*hostile, tmp_path / "o")
    for kind, path in written.items():
        page = path.read_text(encoding="utf-8")
        for bad in PAYLOADS:
            assert bad not in page, f"{kind}: raw {bad!r}"
    md, html_card = written[".md"].read_text(), written[".html"].read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\u27e8U+2066\u27e9probe" in md
    assert 'title="U+202E RIGHT-TO-LEFT OVERRIDE">U+202E</span>' in html_card
    assert "&lt;img src=x onerror=alert(1)&gt;\\|\u27e8U+202E\u27e9swap" in written["report"].read_text()
    docs = written["documents"].read_text()
    assert '<span class="inv" title="U+2066 LEFT-TO-RIGHT ISOLATE">U+2066</span>probe' in docs  # a label, marked


def test_markdown_escaping_keeps_a_table_cell_one_cell_and_marks_what_cannot_be_seen():
    assert _escape.md_text("a|b\n<c> & d\u200b") == "a\\|b &lt;c&gt; &amp; d\u27e8ZWSP\u27e9"
    table = render_markdown({"t": pd.DataFrame({"x|y": [1.0]}, index=pd.Index(["a|<b>"], name="attack"))})
    row = next(line for line in table.splitlines() if "&lt;b&gt;" in line)
    assert row.replace("\\|", "").count("|") == 3  # two cells, however many pipes the label holds
    assert _escape.html_text("x\u202ey\n") == 'x<span class="inv" title="U+202E RIGHT-TO-LEFT OVERRIDE">U+202E</span>y\n'
    assert _visible("a\u202eb\u200bc\n") == "a\u27e8U+202E\u27e9b⟨ZW⟩c⏎"


def test_the_latex_tables_print_a_label_as_text_never_as_a_command(hostile, tmp_path):
    from humanize.benchmarks.reporting.report import render_latex

    paths = export_report(build_report(hostile[1].tables), tmp_path, ("tex",))
    tex = (tmp_path / "auroc.tex").read_text()
    assert {p.suffix for p in paths} == {".tex"} and "\\toprule" in tex and "\\bottomrule" in tex  # booktabs
    assert RLO not in tex and LRI not in tex and "[U+202E]" in tex  # invisible characters marked in ASCII
    table = pd.DataFrame({"score": [0.5]}, index=pd.Index(["\\input{/etc/passwd}_$&%#"], name="attack"))
    out = render_latex(table, caption="a_b\\def")
    assert "\\input{" not in out and "\\textbackslash input\\{/etc/passwd\\}\\_\\$\\&\\%\\#" in out
    assert "\\caption{a\\_b\\textbackslash{}def}" in out
