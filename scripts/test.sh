#!/usr/bin/env bash
# The test suite: `bash scripts/test.sh [pytest options]`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
# Offline: fail fast on hub ids instead of retrying (these machines reach no model hub).
export HF_HUB_OFFLINE=1
exec "$VENV/bin/python" -m pytest -q "$@"
