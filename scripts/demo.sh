#!/usr/bin/env bash
# The main job on the embedded default: `bash scripts/demo.sh [humanize-bench demo options]`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
# The demo uses only packaged models: no hub look-ups.
export HF_HUB_OFFLINE=1
exec humanize-bench demo "$@"
