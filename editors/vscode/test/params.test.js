"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const params = require("../out/pure/params.js");
const { contextResult } = require("./fixtures.js");

test("context params carry the question, evidence, focus and limits the server documents", () => {
  assert.deepEqual(params.contextParams("  why does Ledger.post raise KeyError "), { query: "why does Ledger.post raise KeyError" });
  assert.deepEqual(
    params.contextParams("q", {
      evidence: ["Traceback ..."],
      uri: "file:///w/a.py",
      position: { line: 3, character: 4 },
      topK: 5,
      budgetTokens: 800,
      verbosity: "locations",
    }),
    {
      query: "q",
      evidence: ["Traceback ..."],
      textDocument: { uri: "file:///w/a.py" },
      position: { line: 3, character: 4 },
      topK: 5,
      budgetTokens: 800,
      verbosity: "locations",
    },
  );
});

test("context params need something to ask, and positive limits", () => {
  assert.throws(() => params.contextParams(" "), /ask a question/);
  assert.throws(() => params.contextParams("", { uri: "file:///a.py" }), /ask a question/);
  assert.deepEqual(params.contextParams("", { evidence: ["E"] }), { query: "", evidence: ["E"] });
  assert.throws(() => params.contextParams("q", { topK: 0 }), /topK must be a positive integer/);
  assert.throws(() => params.contextParams("q", { budgetTokens: 1.5 }), /budgetTokens/);
});

test("completion params are {textDocument, position, budgetTokens?, maxSnippets?}", () => {
  assert.deepEqual(params.completionParams("file:///w/a.py", { line: 7, character: 2 }), {
    textDocument: { uri: "file:///w/a.py" },
    position: { line: 7, character: 2 },
  });
  assert.deepEqual(params.completionParams("file:///w/a.py", { line: 7, character: 2 }, { budgetTokens: 300, maxSnippets: 4 }), {
    textDocument: { uri: "file:///w/a.py" },
    position: { line: 7, character: 2 },
    budgetTokens: 300,
    maxSnippets: 4,
  });
});

function fakeServer(answers) {
  const calls = [];
  const send = async (method, p) => {
    calls.push([method, p]);
    const answer = answers[method];
    if (answer instanceof Error) throw answer;
    if (answer === undefined) throw Object.assign(new Error(`Unhandled method ${method}`), { code: -32601 });
    return answer;
  };
  return { send, calls };
}

test("a server with ragLsp/completionContext answers it, and its prompt is kept", async () => {
  const answer = {
    snippets: [{ uri: "file:///w/m.py", path: "m.py", start_line: 1, end_line: 2, symbol: "f", kind: "function", content: "def f():\n    pass", tokens: 6, why: ["imported"] }],
    prompt: "# m.py\ndef f():\n    pass\n",
    elapsed_ms: 3.5,
    truncated: false,
  };
  const server = fakeServer({ "ragLsp/completionContext": answer });
  const support = {};
  const result = await params.requestCompletionContext(server.send, support, "file:///w/a.py", { line: 1, character: 0 }, { maxSnippets: 3 });
  assert.equal(result.source, "ragLsp/completionContext");
  assert.equal(result.prompt, answer.prompt);
  assert.deepEqual(result.snippets, answer.snippets);
  assert.equal(support.supported, true);
  assert.deepEqual(server.calls, [["ragLsp/completionContext", { textDocument: { uri: "file:///w/a.py" }, position: { line: 1, character: 0 }, maxSnippets: 3 }]]);
});

test("MethodNotFound falls back to ragLsp/context focused on the position, once and then directly", async () => {
  const server = fakeServer({ "ragLsp/context": contextResult() });
  const support = {};
  const position = { line: 12, character: 8 };
  const first = await params.requestCompletionContext(server.send, support, "file:///w/a.py", position, { maxSnippets: 2 });
  assert.equal(first.source, "ragLsp/context");
  assert.equal(support.supported, false);
  assert.deepEqual(server.calls.map((c) => c[0]), ["ragLsp/completionContext", "ragLsp/context"]);
  assert.deepEqual(server.calls[1][1], {
    query: "",
    textDocument: { uri: "file:///w/a.py" },
    position,
    topK: 2,
    budgetTokens: params.COMPLETION_BUDGET_TOKENS,
  });
  assert.equal(first.snippets.length, 2);
  assert.equal(first.snippets[0].path, "shop/ledger.py");
  assert.equal(first.prompt.split("\n")[0], "# shop/ledger.py:11-14");
  assert.ok(first.prompt.includes("    def post(self, entry):"));
  assert.equal(first.elapsed_ms, 0.92);
  await params.requestCompletionContext(server.send, support, "file:///w/a.py", position);
  assert.deepEqual(server.calls.map((c) => c[0]), ["ragLsp/completionContext", "ragLsp/context", "ragLsp/context"]);
});

test("other errors are not swallowed by the fallback", async () => {
  const server = fakeServer({ "ragLsp/completionContext": Object.assign(new Error("bad position"), { code: -32602 }) });
  await assert.rejects(
    params.requestCompletionContext(server.send, {}, "file:///w/a.py", { line: 999, character: 0 }),
    /bad position/,
  );
  assert.equal(server.calls.length, 1);
});

test("snippet headers are comments in the file's language", () => {
  assert.equal(params.commentLine("a/b.py", "x"), "# x");
  assert.equal(params.commentLine("a/b.ts", "x"), "// x");
  assert.equal(params.commentLine("q.sql", "x"), "-- x");
  assert.equal(params.commentLine("README.md", "x"), "<!-- x -->");
  assert.equal(params.commentLine("Makefile", "x"), "# x");
  assert.equal(params.commentLine("main.go", "x"), "// x");
});

test("context params ask for the prompt block and the verbosity ladder when told to", () => {
  assert.deepEqual(params.contextParams("q", { format: "prompt", verbosity: "minimal" }),
    { query: "q", verbosity: "minimal", format: "prompt" });
});
