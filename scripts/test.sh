#!/usr/bin/env bash
# Set everything up with the test extras and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/setup_langservers.sh >/dev/null
bash scripts/setup_nvim.sh
exec .venv/bin/python -m pytest "$@"
