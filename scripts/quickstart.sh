#!/usr/bin/env bash
# Set everything up, index this repository and ask it a sample question.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
query="${*:-where does the walk skip secret files such as .env and *.pem}"
.venv/bin/rag-lsp index .
echo
.venv/bin/rag-lsp context "$query" --root . --top-k 5 --budget-tokens 1500
