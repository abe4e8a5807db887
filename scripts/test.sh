#!/usr/bin/env bash
# The test suite: `bash scripts/test.sh [pytest options]`.
#
# HUMANIZE_FRESH_CACHES=1 runs it with every cache the package or its dependencies
# write (the humanize cache, NLTK data, Hugging Face, sentence-transformers, torch,
# matplotlib, XDG dirs, and HOME itself) in a fresh temporary directory, removed
# afterwards unless a test failed or HUMANIZE_KEEP_CACHES=1 (scripts/fresh_caches.sh).
# pip's cache is kept (it only makes the install faster). .ci/run does this.
set -euo pipefail
fresh=""
if [ "${HUMANIZE_FRESH_CACHES:-0}" = 1 ]; then
  source "$(dirname "${BASH_SOURCE[0]}")/fresh_caches.sh"
  echo "[test] fresh caches under $fresh (pip cache: $PIP_CACHE_DIR)" >&2
fi
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
# HUMANIZE_LINT_IMPORTS=1 (.ci/run) first checks the layer contract ([tool.importlinter] in pyproject.toml):
# a module importing a layer above its own fails the run before any test.
if [ "${HUMANIZE_LINT_IMPORTS:-0}" = 1 ]; then
  echo "[test] lint-imports: the layer contract" >&2
  "$VENV/bin/lint-imports" --no-cache
fi
# Offline: fail fast on hub ids instead of retrying (these machines reach no model hub).
export HF_HUB_OFFLINE=1
# HUMANIZE_TEST_WORKERS (default 2, the CI machine's cores): pytest-xdist worker processes, each test file on
# one worker (--dist loadfile keeps a module's fixtures in one process; each packaged model loads once per
# worker) and one math thread per worker so the workers don't oversubscribe the cores. 1 runs in this process.
# --durations=25: every log ends with the 25 slowest test phases (setup included: a module fixture's model load
# shows on its first test), so a test that grows the suite toward the 15-minute CI budget shows where it is.
workers="${HUMANIZE_TEST_WORKERS:-2}"
xdist=()
if [ "$workers" != 1 ]; then
  export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
  xdist=(-n "$workers" --dist loadfile)
fi
if [ -z "$fresh" ]; then
  exec "$VENV/bin/python" -m pytest -q --durations=25 "${xdist[@]}" "$@"
fi
status=0
"$VENV/bin/python" -m pytest -q --durations=25 "${xdist[@]}" "$@" || status=$?
echo "[test] written to the fresh caches:" >&2
(cd "$fresh" && find . -mindepth 1 -maxdepth 2 | sort | sed 's/^/  /') >&2 || true
if [ "$status" = 0 ] && [ "${HUMANIZE_KEEP_CACHES:-0}" != 1 ]; then
  rm -rf "$fresh"
else
  echo "[test] kept $fresh" >&2
fi
exit "$status"
