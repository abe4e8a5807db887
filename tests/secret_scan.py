"""After a run: every read-side command, then no secret in anything they or the run wrote or printed.

Shared by the trust-boundary tests (API keys in a URL or a body) and the watermark tests (a scheme's key).
"""
from __future__ import annotations

from pathlib import Path


def assert_no_secret_after_read_commands(main, db: str, out: Path, root: Path, secrets, capsys, skip=()) -> None:
    """Run ``report``, ``card --documents``, ``export --format jsonl`` and ``runs --json`` on ``db`` into ``out``;
    then no ``secrets`` (str) in what was printed nor in any file under ``root`` (but ``skip``), which must
    include the database and an HTML page."""
    assert main(["report", "--db", db, "--out", str(out / "report")]) == 0
    assert main(["card", "--db", db, "--out", str(out / "cards"), "--documents"]) == 0
    assert main(["export", "--db", db, "--out", str(out / "export"), "--format", "jsonl"]) == 0
    assert main(["runs", "--db", db, "--json"]) == 0
    printed = capsys.readouterr()
    files = [p for p in root.rglob("*") if p.is_file() and p not in set(skip)]
    assert any(p.suffix == ".sqlite" for p in files) and any(p.suffix == ".html" for p in files)
    for where, data in [("stdout", printed.out.encode()), ("stderr", printed.err.encode())] + \
            [(str(p), p.read_bytes()) for p in files]:
        for secret in secrets:
            assert secret.encode() not in data, f"{secret} in {where}"
