"""scripts/fresh_caches.sh (HUMANIZE_FRESH_CACHES=1, .ci/run) moves every cache we know of into a new directory."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import json, os, nltk, huggingface_hub.constants as hf, matplotlib, torch.hub
from humanize.models import cache_dir
from humanize.benchmarks.data import _cache
print(json.dumps({
    "home": os.path.expanduser("~"),
    "humanize": str(cache_dir(create=False)),
    "datasets": str(_cache.cache_dir()),
    "nltk": nltk.data.path[0],
    "hf_hub": hf.HF_HUB_CACHE,
    "matplotlib": matplotlib.get_cachedir(),
    "torch": torch.hub.get_dir(),
    "sentence_transformers": os.environ["SENTENCE_TRANSFORMERS_HOME"],
    "pip": os.environ["PIP_CACHE_DIR"],
}))
"""


def test_every_cache_is_under_the_fresh_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_CACHE_DIR", "HUMANIZE_CACHE", "NLTK_DATA")}
    env["TMPDIR"] = str(tmp_path)
    script = f'source scripts/fresh_caches.sh && echo "$fresh" && exec {sys.executable} -c "$PROBE"'
    proc = subprocess.run(["bash", "-c", script], cwd=ROOT, env={**env, "PROBE": PROBE},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    fresh, found = proc.stdout.splitlines()[0], json.loads(proc.stdout.splitlines()[-1])
    try:
        assert Path(fresh).parent == tmp_path and Path(fresh).name.startswith("humanize-fresh-caches.")
        pip = found.pop("pip")
        assert not pip.startswith(fresh)  # pip's cache is kept
        for what, path in found.items():
            assert Path(path).resolve().is_relative_to(Path(fresh).resolve()), (what, path)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


def test_ci_runs_the_readme_command_with_fresh_caches():
    ci = (ROOT / ".ci" / "run").read_text()
    line = next(x for x in ci.splitlines() if x.endswith("bash scripts/test.sh"))
    assert "HUMANIZE_FRESH_CACHES=1" in line.split()  # and the import contracts (HUMANIZE_LINT_IMPORTS=1) first
    assert "bash scripts/test.sh" in (ROOT / "README.md").read_text()
