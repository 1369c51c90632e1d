"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const render = require("../out/pure/render.js");
const { contextResult, statusResult } = require("./fixtures.js");

test("the context document lists each place with its location, name, reasons and code", () => {
  const { text, places } = render.renderContextDocument(contextResult(), "why does Ledger.post raise KeyError");
  const lines = text.split("\n");
  assert.equal(lines[0], "# why does Ledger.post raise KeyError");
  assert.equal(lines[2], "2 places · ~69 of 4000 tokens (estimated) · 0.9 ms ranking · 6 files, 13 chunks");
  assert.equal(places.length, 2);
  assert.equal(lines[places[0].line], "## 1. shop/ledger.py:11-14 · Ledger.post (method)");
  assert.equal(lines[places[1].line], "## 2. shop/ledger.py:1 · code");
  assert.ok(text.includes("- bm25 3.36: matches ledger, post\n- symbol: `Ledger.post` is defined here\n- answered by: index, pyright\n"));
  // An item without sources (an older server) shows only its reasons.
  assert.ok(text.includes("- bm25 1.73: matches ledger\n\n```python"));
  assert.ok(text.includes("```python\n    def post(self, entry):\n        account = self.accounts[entry.currency]\n```\n"));
});

test("the summary counts ranked places apart from what was added around them", () => {
  const result = contextResult();
  result.items[1] = { ...result.items[1], source: "dependency" };
  assert.ok(render.summaryLine(result).startsWith("1 place + 1 related · "), render.summaryLine(result));
  result.items[1] = { ...result.items[1], source: "ranked" };
  assert.ok(render.summaryLine(result).startsWith("2 places · "), render.summaryLine(result));
});

test("an Open lens jumps to the line the place is about, inside a merged span", () => {
  const result = contextResult();
  result.items[0] = { ...result.items[0], start_line: 5, focus_line: 11 };
  const { text, places } = render.renderContextDocument(result, "q");
  assert.equal(text.split("\n")[places[0].line], "## 1. shop/ledger.py:5-14 · Ledger.post (method)");
  assert.deepEqual([places[0].startLine, places[0].endLine], [11, 14]);
});

test("each place points from its heading line to its file and lines", () => {
  const { text, places } = render.renderContextDocument(contextResult(), "q");
  const lines = text.split("\n");
  for (const place of places) {
    assert.ok(lines[place.line].includes(` ${place.path}:${place.startLine}`), lines[place.line]);
    assert.equal(place.uri, "file:///home/me/shop/shop/ledger.py");
  }
  assert.deepEqual(places.map((p) => [p.startLine, p.endLine]), [[11, 14], [1, 1]]);
});

test("an empty answer says so, and warnings and partial indexing are shown", () => {
  const { text, places } = render.renderContextDocument(
    contextResult({ items: [], tokens: 0, warnings: ["the query has no searchable words"], indexing: { done: 3, total: 6 } }),
    "??",
  );
  assert.deepEqual(places, []);
  assert.match(text, /No matching places\./);
  assert.match(text, /> the query has no searchable words/);
  assert.match(text, /Indexing is still running \(3 of 6 files\)/);
});

test("code containing a fence gets a longer fence; locations-only answers have no code", () => {
  assert.equal(render.fenceFor("no ticks"), "```");
  assert.equal(render.fenceFor("a ```` b"), "`````");
  const result = contextResult();
  result.items.forEach((item) => delete item.content);
  const { text } = render.renderContextDocument(result, "q");
  assert.ok(!text.includes("```"));
});

test("the copied block is what `rag-lsp context` prints", () => {
  const block = render.renderContextBlock(contextResult());
  assert.equal(
    block,
    "1. shop/ledger.py:11 (Ledger.post) — bm25 3.36: matches ledger, post; symbol: `Ledger.post` is defined here\n" +
      "        def post(self, entry):\n" +
      "            account = self.accounts[entry.currency]\n\n" +
      "2. shop/ledger.py:1 — bm25 1.73: matches ledger\n" +
      "    \"\"\"Double-entry ledger.\"\"\"\n\n" +
      "2 places, ~69 tokens (estimated) of 4000; 0.9 ms ranking over 6 files / 13 chunks",
  );
  assert.match(render.renderContextBlock(contextResult({ items: [], truncated: true })), /^no matching places\n0 places, .*, truncated;/);
});

test("the status bar shows starting, indexing progress, the file count, and a stopped server", () => {
  assert.equal(render.statusBarText({ kind: "starting" }).text, "$(sync~spin) RAG: starting");
  const indexing = render.statusBarText({ kind: "ready", status: statusResult({ indexing: { done: 3, total: 12, running: true } }) });
  assert.equal(indexing.text, "$(sync~spin) RAG: indexing 3/12 25%");
  const ready = render.statusBarText({ kind: "ready", status: statusResult() });
  assert.equal(ready.text, "$(database) RAG: 6 files");
  assert.match(ready.tooltip, /rag_lsp 0\.1\.0: 6 files, 13 chunks in 1 folder/);
  assert.match(ready.tooltip, /\/home\/me\/shop: 6 files \(python 3, typescript 2, markdown 1\)/);
  assert.match(ready.tooltip, /\nlanguage servers: pyright ready, gopls missing, rust-analyzer down, typescript-language-server idle\n/);
  assert.ok(!render.statusBarText({ kind: "ready", status: statusResult({ language_servers: [] }) }).tooltip.includes("language servers"));
  const stopped = render.statusBarText({ kind: "stopped", reason: "not found" });
  assert.equal(stopped.text, "$(error) RAG: stopped");
  assert.equal(stopped.tooltip, "rag_lsp: not found");
});

test("the status page names each root's files, languages, skips, cache and settings", () => {
  const text = render.renderStatusDocument(statusResult());
  assert.match(text, /^# rag_lsp index status\n/);
  assert.match(text, /Server 0\.1\.0 · 6 files · 13 chunks · 1 open documents/);
  assert.match(text, /## \/home\/me\/shop\n\n- 6 files, 13 chunks, 12 definitions\n- languages: markdown 1, python 3, typescript 2\n- skipped: secret 1\n/);
  assert.match(text, /- cache: `\/home\/me\/\.cache\/rag-lsp\/shop\/index\.sqlite`/);
  assert.match(text, /Indexing: done \(6 of 6 files in the last run\)\./);
  assert.ok(text.includes(
    "- language servers:\n" +
      "  - pyright (python): ready, 1.1.414\n" +
      "  - gopls (go): missing — no go language server on PATH (tried gopls)\n" +
      "  - rust-analyzer (rust): down, 3 restarts — rust-analyzer exited with code 1: error: no sysroot\n" +
      "  - typescript-language-server (javascript, typescript, tsx): idle — starts on first need\n",
  ), text);
});

test("each language server state reads as one line", () => {
  const entry = (fields) => ({ server: "pyright", command: null, languages: ["python"], state: "ready", version: null,
    pid: null, restarts: 0, last_error: null, ...fields });
  assert.equal(render.languageServerLine(entry({ version: "1.1.414" })), "pyright (python): ready, 1.1.414");
  assert.equal(render.languageServerLine(entry({ state: "starting" })), "pyright (python): starting");
  assert.equal(render.languageServerLine(entry({ state: "ready", restarts: 1, last_error: "crashed" })), "pyright (python): ready, 1 restart");
  assert.equal(render.languageServerLine(entry({ state: "restarting", restarts: 2, last_error: "exited with code 1" })),
    "pyright (python): restarting, 2 restarts — exited with code 1");
  assert.equal(render.languageServerLine(entry({ state: "disabled", server: "gopls", languages: ["go"], last_error: "disabled by settings" })),
    "gopls (go): disabled — disabled by settings");
  assert.equal(render.languageServerLine(entry({ state: "missing", server: "pyright or basedpyright or jedi-language-server",
    last_error: "no python language server on PATH (tried pyright-langserver, basedpyright-langserver, jedi-language-server)" })),
    "pyright or basedpyright or jedi-language-server (python): missing — no python language server on PATH " +
      "(tried pyright-langserver, basedpyright-langserver, jedi-language-server)");
  assert.equal(render.languageServerLine(entry({ state: "missing", server: "", languages: ["java"], last_error: "no server configured for java" })),
    "no server (java): missing — no server configured for java");
  assert.equal(render.languageServerLine(entry({ state: "stopped" })), "pyright (python): stopped");
});

test("the status page says when the server reports no language servers, or none are planned", () => {
  const old = statusResult();
  delete old.language_servers;
  delete old.roots[0].language_servers;
  assert.match(render.renderStatusDocument(old), /- language servers: not reported by this rag-lsp/);
  const none = statusResult();
  none.roots[0].language_servers = [];
  assert.match(render.renderStatusDocument(none), /- language servers: none \(/);
});

test("document titles are one short line without path separators", () => {
  assert.equal(render.documentTitle("why does a/b raise\nKeyError?"), "why does a b raise KeyError");
  assert.equal(render.documentTitle("x".repeat(100), 10), "xxxxxxxxx…");
  assert.equal(render.documentTitle("  "), "context");
});

test("the plain block names the tokenizer that counted, as rag-lsp context does", () => {
  const counted = contextResult({ token_count: "cl100k" });
  const footer = render.renderContextBlock(counted).split("\n").pop();
  assert.match(footer, /^2 places, 69 tokens \(cl100k\) of 4000; /);
});
