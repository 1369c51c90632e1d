#!/usr/bin/env bash
# Set everything up with the test extras and run the whole test suite: lint, types, then the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/setup_langservers.sh >/dev/null
bash scripts/setup_nvim.sh
echo "test: ruff check" >&2
.venv/bin/ruff check rag_lsp tests bench
echo "test: pyright (pyproject.toml [tool.pyright])" >&2
.venv/bin/pyright
exec .venv/bin/python -m pytest "$@"
