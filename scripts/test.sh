#!/usr/bin/env bash
# The test suite: `bash scripts/test.sh [pytest options]`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
exec "$VENV/bin/python" -m pytest -q "$@"
