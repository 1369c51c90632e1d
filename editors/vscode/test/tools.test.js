"use strict";
// The language-model tools: input checks, request params, the answer's text, and the manifest's schemas.
const test = require("node:test");
const assert = require("node:assert/strict");
const tools = require("../out/pure/tools.js");
const manifest = require("../package.json");
const { contextResult } = require("./fixtures.js");

const contributed = Object.fromEntries(manifest.contributes.languageModelTools.map((tool) => [tool.name, tool]));

function error(checked) {
  assert.equal(checked.ok, false, `expected an error, got ${JSON.stringify(checked)}`);
  return checked.error;
}

test("the question tool takes a query, evidence and limits, and says what is wrong with bad input", () => {
  assert.deepEqual(tools.checkContextInput({ query: "  why does Ledger.post raise KeyError " }), {
    ok: true,
    value: { query: "why does Ledger.post raise KeyError" },
  });
  assert.deepEqual(tools.checkContextInput({ query: "q", evidence: ["Traceback ..."], topK: 3, budgetTokens: 900 }).value, {
    query: "q", evidence: ["Traceback ..."], topK: 3, budgetTokens: 900,
  });
  assert.deepEqual(tools.checkContextInput({ query: "q", evidence: [], topK: null }).value, { query: "q" });
  assert.match(error(tools.checkContextInput({})), /^rag_lsp_context: 'query' is required: .*; got nothing\. Example input: \{"query": /);
  assert.match(error(tools.checkContextInput({ query: "   " })), /'query' is required/);
  assert.match(error(tools.checkContextInput("why")), /the input must be a JSON object, got "why"/);
  assert.match(error(tools.checkContextInput(null)), /must be a JSON object, got null/);
  assert.match(error(tools.checkContextInput({ query: "q", topK: 0 })), /'topK' must be an integer from 1 to 100, got 0/);
  assert.match(error(tools.checkContextInput({ query: "q", topK: 101 })), /'topK' must be an integer from 1 to 100, got 101/);
  assert.match(error(tools.checkContextInput({ query: "q", topK: "5" })), /'topK' must be an integer from 1 to 100, got "5"/);
  assert.match(error(tools.checkContextInput({ query: "q", budgetTokens: 2.5 })), /'budgetTokens' must be an integer from 1 to 200000/);
  assert.match(error(tools.checkContextInput({ query: "q", evidence: "trace" })), /'evidence' must be a list of strings/);
  assert.match(error(tools.checkContextInput({ query: "q", top_k: 3 })), /unknown field 'top_k'; the fields are 'query', 'evidence', 'topK', 'budgetTokens'/);
  assert.match(error(tools.checkContextInput({ query: "q", evidence: ["x".repeat(200000)] })), /together must stay under 200000 characters, got 200001/);
});

test("the symbol tool takes one name, forgiving backticks and call parentheses", () => {
  assert.deepEqual(tools.checkSymbolInput({ symbol: "Ledger.post" }).value, { symbol: "Ledger.post" });
  assert.deepEqual(tools.checkSymbolInput({ symbol: "`Ledger.post`", topK: 2 }).value, { symbol: "Ledger.post", topK: 2 });
  assert.deepEqual(tools.checkSymbolInput({ symbol: "convert()" }).value, { symbol: "convert" });
  assert.deepEqual(tools.checkSymbolInput({ symbol: "std::vector::push_back" }).value, { symbol: "std::vector::push_back" });
  assert.match(error(tools.checkSymbolInput({ symbol: "why does post fail" })), /one name without spaces \(for a question in words, call rag_lsp_context\)/);
  assert.match(error(tools.checkSymbolInput({ symbol: "``" })), /one name without spaces/);
  assert.match(error(tools.checkSymbolInput({ name: "post" })), /unknown field 'name'/);
  assert.match(error(tools.checkSymbolInput({ symbol: "a".repeat(501) })), /at most 500 characters, got 501/);
  assert.match(error(tools.checkSymbolInput({ symbol: "post", budgetTokens: 0 })), /'budgetTokens' must be an integer from 1 to 200000, got 0/);
});

test("the completion tool takes a file, a 1-based line and column, and limits", () => {
  assert.deepEqual(tools.checkCompletionInput({ file: "/w/a.py", line: 3 }).value, { file: "/w/a.py", line: 3, column: 1 });
  assert.deepEqual(tools.checkCompletionInput({ file: "a.py", line: 3, column: 9, budgetTokens: 300, maxSnippets: 4 }).value, {
    file: "a.py", line: 3, column: 9, budgetTokens: 300, maxSnippets: 4,
  });
  assert.match(error(tools.checkCompletionInput({ file: "/w/a.py" })), /'line' is required: the cursor's line, counted from 1/);
  assert.match(error(tools.checkCompletionInput({ file: "/w/a.py", line: 0 })), /'line' must be an integer from 1 up, got 0/);
  assert.match(error(tools.checkCompletionInput({ file: "/w/a.py", line: 2, column: -1 })), /'column' must be an integer from 1 up, got -1/);
  assert.match(error(tools.checkCompletionInput({ line: 2 })), /'file' is required: the file's absolute path/);
  assert.match(error(tools.checkCompletionInput({ file: "/w/a.py", line: 2, maxSnippets: 101 })), /'maxSnippets' must be an integer from 1 to 100/);
  assert.match(error(tools.checkCompletionInput({ file: "/w/a.py", line: 2, character: 4 })), /unknown field 'character'/);
});

test("a file is a URI, an absolute path, or a path under each workspace folder", () => {
  assert.deepEqual(tools.fileCandidates("file:///w/shop/a%20b.py", []).value, ["/w/shop/a b.py"]);
  assert.deepEqual(tools.fileCandidates("/w/shop/../shop/a.py", ["/x"]).value, ["/w/shop/a.py"]);
  assert.deepEqual(tools.fileCandidates("shop/a.py", ["/w", "/v"]).value, ["/w/shop/a.py", "/v/shop/a.py"]);
  assert.match(error(tools.fileCandidates("shop/a.py", [])), /must be an absolute path: no workspace folder is open/);
  assert.match(error(tools.fileCandidates("untitled://x/a.py", ["/w"])), /must be a path or a file:\/\/ URI/);
});

test("a missing file's answer names the paths tried", () => {
  assert.equal(tools.noSuchFile("/w/a.py", ["/w/a.py"]), "rag_lsp_completion_context: no such file: /w/a.py.");
  assert.equal(tools.noSuchFile("a.py", ["/w/a.py", "/v/a.py"]),
    "rag_lsp_completion_context: no such file: /w/a.py or /v/a.py (under each workspace folder); give the file's absolute path.");
});

test("a 1-based line and code-point column become an LSP position in UTF-16 units", () => {
  const lines = ["def f():", "    s = 'é😀x'", ""];
  const at = (line, column) => tools.completionPosition("/w/a.py", lines.length, (n) => lines[n], line, column);
  assert.deepEqual(at(1, 1).value, { line: 0, character: 0 });
  assert.deepEqual(at(2, 5).value, { line: 1, character: 4 });
  // The emoji is one column but two UTF-16 units: column 12, after it, is character 12 (11 code points in).
  assert.deepEqual(at(2, 12).value, { line: 1, character: 12 });
  assert.deepEqual(at(2, 14).value, { line: 1, character: 14 }); // the end of the line
  assert.deepEqual(at(3, 1).value, { line: 2, character: 0 });
  assert.match(error(at(4, 1)), /'line' 4 is past the end of \/w\/a\.py, which has 3 lines/);
  assert.match(error(at(2, 15)), /'column' 15 is past the end of line 2, which has 13 characters \(the last column is 14\)/);
});

test("the budget is the agent's, else the caller's smaller hint, else the server's settings", () => {
  assert.equal(tools.budgetFor(900, 4000, 100), 900);
  assert.equal(tools.budgetFor(undefined, 4000, 1500), 1500);
  assert.equal(tools.budgetFor(undefined, 4000, 8000), undefined);
  assert.equal(tools.budgetFor(undefined, 4000, undefined), undefined);
  assert.equal(tools.budgetFor(undefined, 512, 0), undefined);
});

test("the question and symbol tools send ragLsp/context params", () => {
  assert.deepEqual(tools.contextToolParams({ query: "q", evidence: ["E"], topK: 3 }, 700), {
    query: "q", evidence: ["E"], topK: 3, budgetTokens: 700,
  });
  assert.deepEqual(tools.contextToolParams({ query: "q" }, undefined), { query: "q" });
  // The symbol's name in backticks: the query the server's contextForSymbol command builds for a lens.
  assert.deepEqual(tools.symbolToolParams({ symbol: "Ledger.post", topK: 2 }, undefined), { query: "`Ledger.post`", topK: 2 });
});

test("a context answer is the Markdown document with absolute paths, then the places as JSON without code", () => {
  const result = contextResult();
  result.items[1].uri = null; // an item without a URI falls back to its root and path
  Object.assign(result.items[0], { focus_line: 12, source: "ranked" });
  const [text, json] = tools.contextToolResult(result, "why does Ledger.post raise KeyError");
  const lines = text.split("\n");
  assert.equal(lines[0], "# why does Ledger.post raise KeyError");
  assert.ok(lines.includes("## 1. /home/me/shop/shop/ledger.py:11-14 · Ledger.post (method)"), text);
  assert.ok(lines.includes("## 2. /home/me/shop/shop/ledger.py:1 · code"), text);
  assert.ok(text.includes("- symbol: `Ledger.post` is defined here"));
  assert.ok(text.includes("```python\n    def post(self, entry):\n"));
  assert.deepEqual(JSON.parse(json), {
    places: [
      { path: "/home/me/shop/shop/ledger.py", start_line: 11, end_line: 14, focus_line: 12, qualname: "Ledger.post", kind: "method",
        score: 2, source: "ranked" },
      { path: "/home/me/shop/shop/ledger.py", start_line: 1, end_line: 1, qualname: null, kind: "code", score: 0.51 },
    ],
    tokens: 69,
    budget_tokens: 4000,
    truncated: false,
  });
  assert.ok(!json.includes("def post"));
  const empty = tools.contextToolResult(contextResult({ items: [] }), "nothing");
  assert.ok(empty[0].includes("No matching places."));
  assert.deepEqual(JSON.parse(empty[1]).places, []);
});

test("a completion context is each definition with its place, reasons and code", () => {
  const context = {
    snippets: [{
      uri: "file:///home/me/shop/shop/currency.py", path: "shop/currency.py", start_line: 4, end_line: 6,
      symbol: "convert", qualname: "convert", kind: "function", language: "python", score: 2.999,
      content: "def convert(amount, currency):\n    return amount * RATES[currency]\n", tokens: 20,
      why: ["imported: `convert` from shop.currency", "used on the cursor line"],
    }],
    prompt: "# shop/currency.py\n...",
    elapsed_ms: 0.91,
    truncated: true,
    source: "ragLsp/completionContext",
  };
  const [text, json] = tools.completionToolResult(context, "/home/me/shop/shop/ledger.py:14:35");
  assert.equal(text, [
    "# Completion context at /home/me/shop/shop/ledger.py:14:35",
    "",
    "1 snippet · from ragLsp/completionContext · 0.9 ms · truncated",
    "",
    "## 1. /home/me/shop/shop/currency.py:4-6 · convert (function)",
    "",
    "- imported: `convert` from shop.currency",
    "- used on the cursor line",
    "",
    "```python",
    "def convert(amount, currency):",
    "    return amount * RATES[currency]",
    "```",
    "",
  ].join("\n"));
  assert.deepEqual(JSON.parse(json).places, [
    { path: "/home/me/shop/shop/currency.py", start_line: 4, end_line: 6, qualname: "convert", kind: "function", score: 2.999 },
  ]);
  const none = tools.completionToolResult({ ...context, snippets: [], truncated: false }, "/w/a.py:1:1");
  assert.ok(none[0].includes("0 snippets · from ragLsp/completionContext"));
  assert.ok(none[0].includes("No definitions from elsewhere are needed here."));
});

test("invocation messages name what the tool is doing", () => {
  assert.equal(tools.invocationMessage(tools.TOOL_CONTEXT, { query: "why\ndoes it fail" }), "Ranking the workspace's places for “why does it fail”");
  assert.equal(tools.invocationMessage(tools.TOOL_SYMBOL, { symbol: "Ledger.post" }), "Finding the context of `Ledger.post`");
  assert.equal(tools.invocationMessage(tools.TOOL_COMPLETION, { file: "/w/shop/ledger.py", line: 14 }), "Collecting the completion context at ledger.py:14");
  assert.equal(tools.invocationMessage(tools.TOOL_CONTEXT, undefined), "Ranking the workspace's places for “”");
  assert.ok(tools.invocationMessage(tools.TOOL_CONTEXT, { query: "x".repeat(100) }).length < 100);
});

test("the manifest contributes the three tools, each referencable in chat and described for a model", () => {
  assert.deepEqual(Object.keys(contributed), [...tools.TOOL_NAMES]);
  const references = new Set();
  for (const tool of Object.values(contributed)) {
    assert.match(tool.name, /^rag_lsp_[a-z_]+$/);
    assert.equal(tool.canBeReferencedInPrompt, true, tool.name);
    assert.match(tool.toolReferenceName, /^rag[A-Z][A-Za-z]+$/, tool.name);
    references.add(tool.toolReferenceName);
    assert.match(tool.displayName, /^RAG: /);
    assert.ok(tool.userDescription.length > 40, tool.name);
    // The model is told when to call the tool, what it answers, and that it changes nothing.
    assert.match(tool.modelDescription, /Call it (before|when|right before)/, tool.name);
    assert.match(tool.modelDescription, /Read-only\.$/, tool.name);
    assert.equal(tool.inputSchema.type, "object");
    assert.equal(tool.inputSchema.additionalProperties, false);
    for (const [key, property] of Object.entries(tool.inputSchema.properties)) {
      assert.ok(property.description.length > 10, `${tool.name}.${key}`);
    }
  }
  assert.equal(references.size, 3);
  assert.deepEqual(contributed.rag_lsp_context.inputSchema.required, ["query"]);
  assert.deepEqual(contributed.rag_lsp_symbol_context.inputSchema.required, ["symbol"]);
  assert.deepEqual(contributed.rag_lsp_completion_context.inputSchema.required, ["file", "line"]);
});

test("the schemas' bounds are the checks' bounds, and the checks accept what the schemas allow", () => {
  const bounds = {
    topK: [1, tools.LIMITS.topK],
    budgetTokens: [1, tools.LIMITS.budgetTokens],
    maxSnippets: [1, tools.LIMITS.maxSnippets],
    line: [1, undefined],
    column: [1, undefined],
  };
  const checks = {
    rag_lsp_context: [tools.checkContextInput, { query: "q" }],
    rag_lsp_symbol_context: [tools.checkSymbolInput, { symbol: "s" }],
    rag_lsp_completion_context: [tools.checkCompletionInput, { file: "/w/a.py", line: 1 }],
  };
  for (const [name, [checkInput, minimal]] of Object.entries(checks)) {
    const properties = contributed[name].inputSchema.properties;
    // The schema's required fields make a minimal input; with any one of them missing, the check refuses it.
    assert.deepEqual(Object.keys(minimal), contributed[name].inputSchema.required);
    assert.equal(checkInput(minimal).ok, true, name);
    for (const key of Object.keys(minimal)) {
      const { [key]: _, ...without } = minimal;
      assert.equal(checkInput(without).ok, false, `${name} without ${key}`);
    }
    for (const [key, property] of Object.entries(properties)) {
      if (property.type !== "integer") continue;
      const [low, high] = bounds[key];
      assert.equal(property.minimum, low, `${name}.${key}`);
      assert.equal(property.maximum, high, `${name}.${key}`);
      assert.equal(checkInput({ ...minimal, [key]: low }).ok, true, `${name}.${key} = ${low}`);
      assert.equal(checkInput({ ...minimal, [key]: low - 1 }).ok, false, `${name}.${key} = ${low - 1}`);
      if (high !== undefined) {
        assert.equal(checkInput({ ...minimal, [key]: high }).ok, true, `${name}.${key} = ${high}`);
        assert.equal(checkInput({ ...minimal, [key]: high + 1 }).ok, false, `${name}.${key} = ${high + 1}`);
      }
    }
    // Every property the schema lists is one the check knows, and no other.
    for (const key of Object.keys(properties)) {
      assert.ok(!/unknown field/.test(checkInput({ ...minimal, [key]: undefined }).error ?? ""), `${name}.${key}`);
    }
    assert.match(checkInput({ ...minimal, extra: 1 }).error, /unknown field 'extra'/);
  }
  assert.equal(contributed.rag_lsp_symbol_context.inputSchema.properties.symbol.maxLength, tools.LIMITS.symbolChars);
  assert.equal(contributed.rag_lsp_context.inputSchema.properties.query.maxLength, tools.LIMITS.queryChars);
});

test("the engine is new enough for the language-model tool API", () => {
  const [major, minor] = manifest.engines.vscode.replace(/^\^/, "").split(".").map(Number);
  assert.ok(major > 1 || minor >= 95, manifest.engines.vscode);
  assert.equal(manifest.devDependencies["@types/vscode"], manifest.engines.vscode.replace(/^\^/, ""));
});
