#!/usr/bin/env bash
# Install Debian's headless browser (chromium + chromium-driver) for the documents-page browser test
# (tests/benchmarks/test_documents_page_browser.py). Idempotent and quiet; only where we may install
# system packages (root + apt-get). Playwright's own browser download is not reachable from here.
# Sourced by scripts/setup.sh or run on its own: bash scripts/setup_browser.sh
_humanize_browser() {
  if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "[setup] chromium/chromium-driver not installed (needs root and apt-get); the browser test will fail" \
         "until you run: sudo apt-get install chromium chromium-driver" >&2
    return 0
  fi
  echo "[setup] installing Debian chromium + chromium-driver for the browser test" >&2
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
           chromium chromium-driver; } >/dev/null 2>&1; then
    echo "[setup] could not install chromium + chromium-driver with apt-get; the browser test will fail until" \
         "they are installed (apt-get install chromium chromium-driver)" >&2
  fi
  return 0
}
_humanize_browser
unset -f _humanize_browser
