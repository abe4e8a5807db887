#!/usr/bin/env bash
# The main job on the embedded default: `bash scripts/demo.sh [humanize-bench demo options]`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
exec humanize-bench demo "$@"
