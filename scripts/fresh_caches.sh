#!/usr/bin/env bash
# Sourced by scripts/test.sh when HUMANIZE_FRESH_CACHES=1 (what .ci/run does): point every
# cache the package or its dependencies write at a new temporary directory, $fresh, so that
# no state left on this machine (a converted model, an NLTK corpus, a font list) can hide a
# missing install step. pip keeps its cache and its user configuration (index URLs), and
# pyenv's shims their root. Found by tracing a test run's writes (strace -e openat,mkdir).
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pip}"
for conf in "${XDG_CONFIG_HOME:-$HOME/.config}/pip/pip.conf" "$HOME/.pip/pip.conf"; do
  if [ -z "${PIP_CONFIG_FILE:-}" ] && [ -f "$conf" ]; then export PIP_CONFIG_FILE="$conf"; fi
done
export PYENV_ROOT="${PYENV_ROOT:-$HOME/.pyenv}"
fresh="$(mktemp -d "${TMPDIR:-/tmp}/humanize-fresh-caches.XXXXXX")"
mkdir -p "$fresh/home"
export HOME="$fresh/home"                        # ~/.cache, ~/.config, ~/nltk_data, ~/.triton ...
export XDG_CACHE_HOME="$fresh/xdg-cache" XDG_CONFIG_HOME="$fresh/xdg-config" XDG_DATA_HOME="$fresh/xdg-data"
export HUMANIZE_CACHE="$fresh/humanize"          # converted models, NLTK copies, datasets, file digests
export NLTK_DATA="$fresh/nltk_data"
export HF_HOME="$fresh/huggingface" HF_HUB_CACHE="$fresh/huggingface/hub" HF_DATASETS_CACHE="$fresh/huggingface/datasets"
export SENTENCE_TRANSFORMERS_HOME="$fresh/sentence-transformers"
export TORCH_HOME="$fresh/torch" TORCHINDUCTOR_CACHE_DIR="$fresh/torchinductor" TRITON_CACHE_DIR="$fresh/triton"
export MPLCONFIGDIR="$fresh/matplotlib"
