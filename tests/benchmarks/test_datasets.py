"""Dataset loaders on small files the tests write in each dataset's real layout. No network."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest

from humanize.benchmarks import data as ds
from humanize.benchmarks.data import (
    COLUMNS,
    DatasetUnavailable,
    available_datasets,
    download_raid,
    load_dataset,
    load_mgt_academic,
    load_mgtbench,
    load_raid,
)
from humanize.benchmarks.data import _cache
from humanize.benchmarks.data.mgtbench import detokenize

RAID_HEADER = ["id", "adv_source_id", "source_id", "model", "decoding", "repetition_penalty", "attack", "domain",
               "title", "prompt", "generation"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test gets its own empty cache directory; nothing touches ~/.cache."""
    monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def write_raid_csv(path: Path) -> pd.DataFrame:
    """A small RAID-layout file: 2 domains x 2 sources x (1 human + 2 machine) texts, each also attacked: 24 rows."""
    rows = []
    for dom in ("news", "poetry"):
        for i in range(2):
            hid = f"{dom}-h{i}"
            rows.append(dict(id=hid, adv_source_id=hid, source_id=hid, model="human", decoding="",
                             repetition_penalty="", attack="none", domain=dom, title=f"T{i}", prompt="",
                             generation=f"human {dom} text {i}, with a comma"))
            for model, dec, rep in (("gpt4", "greedy", "no"), ("mistral", "sampling", "yes")):
                mid = f"{dom}-{model}-{i}"
                rows.append(dict(id=mid, adv_source_id=mid, source_id=hid, model=model, decoding=dec,
                                 repetition_penalty=rep, attack="none", domain=dom, title=f"T{i}", prompt="Write",
                                 generation=f"{model} {dom} text {i}"))
                rows.append(dict(id=mid + "-hg", adv_source_id=mid, source_id=hid, model=model, decoding=dec,
                                 repetition_penalty=rep, attack="homoglyph", domain=dom, title=f"T{i}",
                                 prompt="Write", generation=f"{model} {dom} tеxt {i}"))
            rows.append(dict(id=hid + "-hg", adv_source_id=hid, source_id=hid, model="human", decoding="",
                             repetition_penalty="", attack="homoglyph", domain=dom, title=f"T{i}", prompt="",
                             generation=""))
    df = pd.DataFrame(rows, columns=RAID_HEADER)
    df.to_csv(path, index=False)
    return df


# ---------------------------------------------------------------- RAID

def test_load_raid_reads_the_schema_and_sets_labels(tmp_path):
    src = write_raid_csv(tmp_path / "train.csv")
    df = load_raid(tmp_path / "train.csv", chunksize=5)
    assert list(df.columns[: len(COLUMNS)]) == COLUMNS and "adv_source_id" in df.columns
    assert len(df) == len(src) and df["id"].tolist() == src["id"].tolist()  # file order kept across chunks
    assert (df["label"] == "human").sum() == (src["model"] == "human").sum() == 8
    assert set(df.loc[df["model"] == "human", "label"]) == {"human"}
    assert set(df.loc[df["model"] != "human", "label"]) == {"machine"}
    # empty cells become None, an empty generation stays an (empty) text
    human = df[df["id"] == "news-h0"].iloc[0]
    assert human["decoding"] is None and human["prompt"] is None
    assert df.loc[df["id"] == "news-h0-hg", "generation"].item() == ""
    assert "tеxt" in df.loc[df["id"] == "news-gpt4-0-hg", "generation"].item()  # Cyrillic е kept


def test_load_raid_filters(tmp_path):
    write_raid_csv(tmp_path / "train.csv")
    path = tmp_path / "train.csv"
    df = load_raid(path, domain="news", attack="none", chunksize=3)
    assert set(df["domain"]) == {"news"} and set(df["attack"]) == {"none"} and len(df) == 6
    # model selects machine rows and keeps the human rows
    df = load_raid(path, model="gpt4", attack="none")
    assert set(df["model"]) == {"gpt4", "human"} and (df["label"] == "human").sum() == 4
    assert set(load_raid(path, model="gpt4", include_human=False)["model"]) == {"gpt4"}
    df = load_raid(path, decoding="sampling", repetition_penalty="yes", attack=["none", "homoglyph"])
    assert set(df.loc[df["label"] == "machine", "model"]) == {"mistral"}
    assert (df["label"] == "human").sum() == 8
    with pytest.raises(ValueError, match=r"unknown RAID domain value\(s\) \['nws'\]; choose from"):
        load_raid(path, domain="nws")
    with pytest.raises(TypeError, match="str values"):
        load_raid(path, attack=3)


def test_load_raid_samples_per_label_reproducibly(tmp_path):
    write_raid_csv(tmp_path / "train.csv")
    path = tmp_path / "train.csv"
    a = load_raid(path, n=3, seed=1, chunksize=4)
    assert (a["label"] == "human").sum() == 3 and (a["label"] == "machine").sum() == 3
    # the sample does not depend on the chunk size, and the seed matters
    b = load_raid(path, n=3, seed=1, chunksize=7)
    assert a["id"].tolist() == b["id"].tolist()
    others = {tuple(load_raid(path, n=3, seed=s)["id"]) for s in range(2, 8)}
    assert len(others) > 1
    assert len(load_raid(path, n=1000)) == 24  # n above the count keeps every row
    with pytest.raises(ValueError, match="positive int"):
        load_raid(path, n=0)


def test_load_raid_without_a_file_says_how_to_get_it(private_cache):
    with pytest.raises(DatasetUnavailable, match=r"download=True .*11\.8 GB"):
        load_raid(split="train")
    with pytest.raises(FileNotFoundError):
        load_raid("/nonexistent/raid.csv")
    with pytest.raises(ValueError, match="unknown RAID split 'dev'"):
        load_raid(split="dev")


def test_unlabelled_files_are_refused(tmp_path):
    pd.DataFrame({"id": ["a"], "generation": ["text"]}).to_csv(tmp_path / "test.csv", index=False)
    with pytest.raises(ValueError, match="unlabelled"):
        load_raid(tmp_path / "test.csv")


def test_download_raid_from_a_file_url_into_the_cache(tmp_path, private_cache):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    write_raid_csv(mirror / "extra_none.csv")
    path = download_raid("extra", include_adversarial=False, base_url=mirror.as_uri(), progress=False)
    assert path == private_cache / "raid" / "extra_none.csv"
    assert path.read_bytes() == (mirror / "extra_none.csv").read_bytes()
    assert not list(path.parent.glob("*.part"))
    # now cached: loading needs no download
    assert len(load_raid(split="extra", include_adversarial=False)) == 24


def test_load_raid_downloads_when_asked(tmp_path, private_cache, monkeypatch):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    write_raid_csv(mirror / "test.csv")
    calls = []
    real = ds.raid.download

    def redirected(url, dest, **kw):  # RAID's address, served from a local mirror
        calls.append(url)
        return real(url.replace(ds.raid.RAID_URL, mirror.as_uri()), dest, progress=False)

    monkeypatch.setattr(ds.raid, "download", redirected)
    df = load_raid(split="test", download=True, attack="none")
    assert calls == ["https://dataset.raid-bench.xyz/test.csv"]
    assert len(df) == 12
    assert len(load_raid(split="test", download=True)) == 24 and len(calls) == 1  # cached now


def test_download_skips_a_complete_file_and_cleans_up_a_broken_one(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"x" * 3000)
    dest = tmp_path / "out" / "file.bin"
    _cache.download(src.as_uri(), dest, progress=False)
    assert dest.read_bytes() == src.read_bytes()
    mtime = dest.stat().st_mtime_ns
    _cache.download(src.as_uri(), dest, progress=False)  # same size: not downloaded again
    assert dest.stat().st_mtime_ns == mtime

    class Truncated:
        headers = {"Content-Length": "100"}

        def __init__(self):
            self.sent = False

        def read(self, n):
            if self.sent:
                return b""
            self.sent = True
            return b"y" * 10

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    with pytest.raises(DatasetUnavailable, match="stopped at 10 of 100 bytes"):
        _cache.download("https://example.invalid/f", tmp_path / "t.bin", opener=lambda url, timeout: Truncated(),
                        progress=False)
    assert not (tmp_path / "t.bin").exists() and not (tmp_path / "t.bin.part").exists()
    with pytest.raises(DatasetUnavailable, match="cannot download"):
        _cache.download((tmp_path / "missing.csv").as_uri(), tmp_path / "m.csv", progress=False)


def hub_online(monkeypatch, unreachable=None):
    """The offline switches off and the hub probe answering ``unreachable`` (None: reachable), for tests that
    stand in for the hub's download functions."""
    from humanize.models import loading

    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HUMANIZE_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(loading, "hub_unreachable", lambda: unreachable)


def test_hub_source_goes_through_hf_hub_download(tmp_path, private_cache, monkeypatch):
    import huggingface_hub

    seen = {}

    def fake_hf_hub_download(repo_id, filename, repo_type, local_dir):
        seen.update(repo_id=repo_id, filename=filename, repo_type=repo_type)
        out = Path(local_dir) / filename
        out.parent.mkdir(parents=True, exist_ok=True)
        write_raid_csv(out)
        return str(out)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_hf_hub_download)
    hub_online(monkeypatch)
    df = load_raid(split="train", include_adversarial=False, download=True, source="hub", domain="poetry")
    assert seen == {"repo_id": "liamdugan/raid", "filename": "train_none.csv", "repo_type": "dataset"}
    assert set(df["domain"]) == {"poetry"}


def test_unreachable_hub_fails_before_any_download(private_cache, monkeypatch):
    """One probe says the hub is unreachable: the download is never attempted (no minute of retries)."""
    import huggingface_hub

    calls = []
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda **kw: calls.append(kw))
    hub_online(monkeypatch, unreachable="connection refused")
    with pytest.raises(DatasetUnavailable, match="cannot download train_none.csv.*connection refused"):
        load_raid(split="train", include_adversarial=False, download=True, source="hub")
    assert calls == []


def test_cache_dir_follows_the_environment(private_cache, monkeypatch):
    assert _cache.cache_dir() == private_cache and private_cache.is_dir()
    monkeypatch.delenv("HUMANIZE_CACHE")
    monkeypatch.setenv("HOME", str(private_cache.parent / "home"))
    assert _cache.cache_dir() == private_cache.parent / "home" / ".cache" / "humanize-bench"


# ---------------------------------------------------------------- MGTBench

def write_mgtbench(root: Path, name: str = "Essay", n: int = 10) -> pd.DataFrame:
    root.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame({
        "human": [f"human essay number {i} , it ca n't be<newline>done" for i in range(n)],
        "ChatGPT": [f"chatgpt essay {i}" if i != 3 else "" for i in range(n)],  # row 3: empty answer
        "Claude": [f"claude essay {i}" if i != 4 else "single" for i in range(n)],  # row 4: one word
        "prompt": [f"prompt {i}" for i in range(n)],
    })
    table.to_csv(root / f"{name}_LLMs.csv", index=False)
    return table


def test_load_mgtbench_layout_split_and_pairs(tmp_path):
    write_mgtbench(tmp_path)
    df = load_mgtbench(tmp_path, domain="essay")  # set names match in any case
    assert list(df.columns[: len(COLUMNS)]) == COLUMNS
    assert set(df["generator"]) == {"ChatGPT", "Claude"}  # generator columns found; 'prompt' is not one
    chat = df[df["generator"] == "ChatGPT"]
    assert len(chat) == 18 and 3 not in set(chat["pair"])  # 9 usable rows x (human, machine)
    assert 4 not in set(df.loc[df["generator"] == "Claude", "pair"])
    # MGTBench's split: usable rows shuffled with random.seed(0), first 80% (ceil) train
    keep = [i for i in range(10) if i != 3]
    order = list(range(9))
    random.Random(0).shuffle(order)
    expected_train = {keep[j] for j in order[:8]}
    machines = chat[chat["label"] == "machine"]
    assert set(machines.loc[machines["split"] == "train", "pair"]) == expected_train
    # each machine row is paired with its human row
    for _, m in machines.iterrows():
        h = chat[(chat["label"] == "human") & (chat["pair"] == m["pair"])].iloc[0]
        assert m["source_id"] == h["id"] and m["split"] == h["split"]
    # MGTBench's detokenisation
    assert chat[chat["label"] == "human"]["generation"].iloc[0].endswith(", it can't be\ndone")
    raw = load_mgtbench(tmp_path, model="ChatGPT", detokenize_text=False)
    assert "<newline>" in raw["generation"].iloc[0]


def test_load_mgtbench_filters_and_errors(tmp_path):
    write_mgtbench(tmp_path)
    test = load_mgtbench(tmp_path, model="Claude", split="test", seed=3)
    assert set(test["split"]) == {"test"} and len(test) == 2 * (9 - 8)
    with pytest.raises(ValueError, match="unknown generator"):
        load_mgtbench(tmp_path, model="GPT4All")  # a known generator this file lacks
    with pytest.raises(ValueError, match="unknown MGTBench domain 'Poems'"):
        load_mgtbench(tmp_path, domain="Poems")
    with pytest.raises(DatasetUnavailable, match="WP_LLMs.csv"):
        load_mgtbench(tmp_path, domain="WP")
    with pytest.raises(ValueError, match="split"):
        load_mgtbench(tmp_path, split="dev")


def test_detokenize():
    assert detokenize("it is n't , really `` so '' .") == 'it isn\'t, really "so".'


# ---------------------------------------------------------------- MGT-Academic

def write_mgt_academic(root: Path) -> None:
    files = {
        "Human/Physics/Physics_wiki_new.json": [{"text": f"physics wiki {i}"} for i in range(6)],
        "Human/Physics/Physics_arxiv_new.json": [{"text": f"physics arxiv {i}"} for i in range(4)],
        "Human/Art/Art_gutenberg_new.json": [{"text": f"art book {i}"} for i in range(5)],
        "Llama3_new/Physics/Physics_wiki_new.json": [{"text": f"llama physics {i}"} for i in range(10)],
        "Llama3_new/Art/Art_gutenberg_new.json": [{"text": f"llama art {i}"} for i in range(5)],
        "gpt35_new/Physics/Physics_wiki_new.json": [{"text": f"gpt35 physics {i}"} for i in range(10)],
    }
    for rel, records in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(records), encoding="utf-8")
    # one folder in JSON-lines form
    p = root / "gpt35_new/Art/Art_gutenberg_new.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(json.dumps({"text": f"gpt35 art {i}"}) for i in range(5)), encoding="utf-8")


def test_load_mgt_academic(tmp_path):
    write_mgt_academic(tmp_path)
    df = load_mgt_academic(tmp_path, domain="Physics", model="Llama3")
    assert list(df.columns[: len(COLUMNS)]) == COLUMNS
    assert (df["label"] == "human").sum() == 10 and (df["label"] == "machine").sum() == 10
    assert set(df["source"]) == {"wiki", "arxiv"} and set(df["topic"]) == {"STEM"}
    assert (df["split"] == "train").sum() == 16  # 80% of 10, per class
    # a topic expands to its categories present; n caps texts per class and category
    df = load_mgt_academic(tmp_path, domain=["Physics", "Art"], n=5)
    assert df.groupby(["domain", "label"]).size().to_dict() == {
        ("Art", "human"): 5, ("Art", "machine"): 10, ("Physics", "human"): 5, ("Physics", "machine"): 10}
    # the split of one class does not depend on what else is loaded
    alone = load_mgt_academic(tmp_path, domain="Physics", model="Llama3", seed=4)
    both = load_mgt_academic(tmp_path, domain="Physics", seed=4)
    key = ["id", "split"]
    assert alone[alone["model"] == "Llama3"][key].values.tolist() == both[both["model"] == "Llama3"][key].values.tolist()
    with pytest.raises(DatasetUnavailable, match="download=True"):
        load_mgt_academic(tmp_path, domain="Math")
    with pytest.raises(ValueError, match="unknown MGT-Academic model 'gpt5'"):
        load_mgt_academic(tmp_path, model="gpt5")
    with pytest.raises(ValueError, match="category or topic"):
        load_mgt_academic(tmp_path, domain="Poetry")


def test_mgt_academic_download_plumbing(tmp_path, private_cache, monkeypatch):
    import huggingface_hub

    hub_online(monkeypatch)
    seen = {}

    def fake_snapshot(repo_id, repo_type, local_dir, allow_patterns):
        seen.update(repo_id=repo_id, repo_type=repo_type, patterns=sorted(allow_patterns))
        write_mgt_academic(Path(local_dir))
        return local_dir

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot)
    df = load_mgt_academic(domain="Art", model="gpt35", download=True)
    assert seen == {"repo_id": "AITextDetect/AI_Polish_clean", "repo_type": "dataset",
                    "patterns": ["Human/Art/*", "gpt35_new/Art/*"]}
    assert set(df["model"]) == {"human", "gpt35"}


# ---------------------------------------------------------------- registry

def test_registry(tmp_path):
    assert available_datasets() == ["demo", "raid", "mgtbench", "mgt_academic", "file"]
    demo = load_dataset("demo", domain="xsum", n=4)
    assert len(demo) == 8 and set(demo["domain"]) == {"xsum"}
    assert load_dataset().shape == ds.load_demo().shape  # the demo set is the default
    write_mgtbench(tmp_path)
    assert set(load_dataset("mgtbench", data_dir=tmp_path, model="Claude")["generator"]) == {"Claude"}
    with pytest.raises(ValueError, match=r"unknown dataset 'raid2'; available: demo, file, mgt_academic, mgtbench, raid \(or an import path"):
        load_dataset("raid2")
    with pytest.raises(TypeError, match=r"does not take \['colour'\]"):
        load_dataset("demo", colour="red")
    with pytest.raises(TypeError, match="str"):
        load_dataset(3)
