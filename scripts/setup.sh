#!/usr/bin/env bash
# Create .venv and install rag_lsp into it (editable), with the test extras when asked.
# Idempotent: it reinstalls only when pyproject.toml or the requested extras changed.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "setup: rag_lsp needs Python 3.11 or newer (found $("$python" --version 2>&1))" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
stamp=".venv/.rag-lsp-installed"
want="$(sha1sum pyproject.toml | cut -d' ' -f1) ${extras}"
if [ ! -f "$stamp" ] || ! grep -qxF "$want" "$stamp"; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install -qq --disable-pip-version-check -e ".${extras:+[$extras]}"
  echo "$want" >> "$stamp"
fi
