"""Generation attacks by name from the shell and from a config: back end and model are parameters,
an endpoint URL in a config works, and an endpoint that does not answer is a one-line error."""
import json
import socket

import pandas as pd
import pytest

from humanize.benchmarks.runner.store import ResultsStore
from humanize.cli.main import main

from ..generation.chat_server import ChatServer, EchoChat


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_config_names_an_endpoint_paraphraser_and_the_cost_table_counts_its_tokens(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    with ChatServer(EchoChat(max_new_tokens=400), model="echo-model") as server:
        (tmp_path / "run.toml").write_text(f"""
[dataset]
name = "demo"
n = 8

[quality]
enabled = false

[run]
db = "{db}"

[[detectors]]
name = "tfidf_lr"

[[attacks]]
name = "paraphrase"
label = "paraphrase(endpoint)"
paraphraser = {{ backend = "endpoint", base_url = "{server.url}", model = "echo-model", max_retries = 0 }}

[[attacks]]
name = "blend"
attacks = [{{ name = "prompt", llm = {{ backend = "endpoint", base_url = "{server.url}", model = "echo-model" }} }},
           "upper_lower"]
""")
        assert main(["run", "--config", str(tmp_path / "run.toml"), "--quiet"]) == 0
        arrived = list(server.log)
    out = capsys.readouterr().out
    assert "paraphrase(endpoint)" in out and "blend" in out
    assert arrived and all(r["model"] == "echo-model" for r in arrived)
    cost = ResultsStore(db).run_tables()["cost"]
    para = cost[cost["attack"] == "paraphrase(endpoint)"]
    assert len(para) > 0 and (para["queries"] >= 1).all()
    assert (para["llm_tokens_in"] > 0).all() and (para["llm_tokens_out"] > 0).all()
    assert pd.to_numeric(cost.loc[cost["attack"] == "blend", "llm_tokens_out"]).sum() > 0


def test_the_attack_command_takes_a_back_end_and_reports_an_unreachable_endpoint_in_one_line(capsys):
    with ChatServer(EchoChat(), model="m") as server:
        spec = json.dumps({"backend": "endpoint", "base_url": server.url, "model": "m"})
        assert main(["attack", "paraphrase", "--param", f"paraphraser={spec}", "one two three.", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["attack"] == "paraphrase" and data["text"] != "one two three."
    gone = json.dumps({"backend": "endpoint", "base_url": f"http://127.0.0.1:{_free_port()}/v1", "model": "m",
                       "max_retries": 0})
    assert main(["attack", "paraphrase", "--param", f"paraphraser={gone}", "Some text."]) == 2
    message = capsys.readouterr().err.strip()
    assert message.startswith("humanize-bench attack:") and "unreachable" in message and "\n" not in message


def test_a_key_the_server_echoes_back_is_written_nowhere(tmp_path, capsys, monkeypatch):
    """A server that echoes the wrong key in its 401 (as OpenAI's does): the failures table, the SQLite
    files, every file the run wrote and the terminal never hold it (issue #22: scrubbed at the source)."""
    secret = "sk-proj-DoNotStore-7f3a9c"
    monkeypatch.setenv("MY_CHAT_KEY", secret)
    db = tmp_path / "r.sqlite"
    with ChatServer(EchoChat(), model="echo-model", api_key="the-right-key") as server:
        (tmp_path / "run.toml").write_text(f"""
[dataset]
name = "demo"
n = 4

[quality]
enabled = false

[run]
db = "{db}"

[[detectors]]
name = "surface_probe"

[[attacks]]
name = "paraphrase"
paraphraser = {{ backend = "endpoint", base_url = "{server.url}", model = "echo-model", api_key_env = "MY_CHAT_KEY", max_retries = 0 }}
""")
        with pytest.warns(RuntimeWarning, match="failed and are left out") as warned:
            status = main(["run", "--config", str(tmp_path / "run.toml"), "--quiet"])
        arrived = list(server.log)
    assert status == 0 and arrived and all(r["authorization"] == f"Bearer {secret}" for r in arrived)  # sent...
    out = capsys.readouterr()
    assert secret not in out.out + out.err + " ".join(str(w.message) for w in warned)
    failures = ResultsStore(db).run_tables().get("failures")  # the documents failed one by one: recorded, scrubbed
    assert failures is not None and len(failures) > 0 and secret not in failures.to_csv()
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "run.toml"]
    assert written and all(secret.encode() not in p.read_bytes() for p in written)  # ...and stored nowhere
