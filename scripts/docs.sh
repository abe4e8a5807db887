#!/usr/bin/env bash
# Build the documentation site: `bash scripts/docs.sh` -> docs/_build/html/index.html.
# Warnings are errors (-W --keep-going: every warning is listed, then the build fails). The gallery's
# examples (docs/examples/plot_*.py) run at every build; the catalogue is generated from the registries.
# Extra arguments go to sphinx-build (e.g. `bash scripts/docs.sh -q`). Output folder: $HUMANIZE_DOCS_OUT.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
export HF_HUB_OFFLINE=1
out="${HUMANIZE_DOCS_OUT:-docs/_build/html}"
exec "$VENV/bin/python" -m sphinx -W --keep-going -E -b html "$@" docs "$out"
