// A context answer in the documented shape (docs/protocol.md), shared by the tests.
"use strict";

function contextResult(overrides = {}) {
  return {
    items: [
      {
        path: "shop/ledger.py",
        start_line: 11,
        end_line: 14,
        symbol: "post",
        qualname: "Ledger.post",
        kind: "method",
        language: "python",
        score: 2.0,
        why: ["bm25 3.36: matches ledger, post", "symbol: `Ledger.post` is defined here"],
        strategies: ["symbols", "bm25"],
        sources: ["index", "pyright"],
        content: "    def post(self, entry):\n        account = self.accounts[entry.currency]",
        tokens: 52,
        uri: "file:///home/me/shop/shop/ledger.py",
        root: "/home/me/shop",
      },
      {
        path: "shop/ledger.py",
        start_line: 1,
        end_line: 1,
        symbol: null,
        qualname: null,
        kind: "code",
        language: "python",
        score: 0.51,
        why: ["bm25 1.73: matches ledger"],
        content: "\"\"\"Double-entry ledger.\"\"\"",
        tokens: 17,
        uri: "file:///home/me/shop/shop/ledger.py",
        root: "/home/me/shop",
      },
    ],
    elapsed_ms: 0.92,
    truncated: false,
    index: { root: "/home/me/shop", files: 6, chunks: 13, skipped: {}, parse_errors: 0, indexing_ms: 223.2 },
    query: { terms: ["ledger", "post"], names: ["Ledger.post"] },
    tokens: 69,
    budget_tokens: 4000,
    token_count: "estimate",
    ...overrides,
  };
}

const LANGUAGE_SERVERS = [
  { server: "pyright", command: "/home/me/.venv/bin/pyright-langserver", languages: ["python"], state: "ready",
    version: "1.1.414", pid: 4242, restarts: 0, last_error: null },
  { server: "gopls", command: null, languages: ["go"], state: "missing", version: null, pid: null, restarts: 0,
    last_error: "no go language server on PATH (tried gopls)" },
  { server: "rust-analyzer", command: "/home/me/.cargo/bin/rust-analyzer", languages: ["rust"], state: "down",
    version: null, pid: null, restarts: 3, last_error: "rust-analyzer exited with code 1:\nerror: no sysroot" },
  { server: "typescript-language-server", command: "/usr/bin/typescript-language-server",
    languages: ["javascript", "typescript", "tsx"], state: "idle", version: null, pid: null, restarts: 0, last_error: null },
];

function statusResult(overrides = {}) {
  return {
    version: "0.1.0",
    roots: [
      {
        root: "/home/me/shop",
        files: 6,
        chunks: 13,
        definitions: 12,
        languages: { markdown: 1, python: 3, typescript: 2 },
        skipped: { secret: 1 },
        parse_errors: 0,
        cache: "/home/me/.cache/rag-lsp/shop/index.sqlite",
        warnings: [],
        settings: { budgetTokens: 4000, topK: 10 },
        settings_warnings: [],
        language_servers: LANGUAGE_SERVERS,
      },
    ],
    files: 6,
    chunks: 13,
    open_documents: 1,
    indexing: { done: 6, total: 6, running: false },
    language_servers: LANGUAGE_SERVERS,
    ...overrides,
  };
}

module.exports = { contextResult, statusResult };
