"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const settings = require("../out/pure/settings.js");

const reader = (values) => (key) => values[key];

test("every server setting is sent, with its default when unset", () => {
  assert.deepEqual(settings.serverSettings(reader({})), {
    budgetTokens: 4000,
    topK: 10,
    ignore: [],
    languages: {},
    maxFileBytes: 1048576,
    languageServers: {},
    languageServerTimeoutMs: 1500,
    languageServerCalls: 4,
    languageServerBudgetMs: 500,
  });
  const sent = settings.serverSettings(reader({
    budgetTokens: 2000,
    topK: 8,
    ignore: ["fixtures/**"],
    languages: { markdown: false },
    cacheDir: "/tmp/c",
    maxFileBytes: 10,
    languageServers: { go: { enabled: false } },
    languageServerTimeoutMs: 300,
    languageServerCalls: 2,
    languageServerBudgetMs: 800,
    "server.command": "/x/rag-lsp",
    "trace.server": "verbose",
  }));
  assert.deepEqual(sent, {
    budgetTokens: 2000,
    topK: 8,
    ignore: ["fixtures/**"],
    languages: { markdown: false },
    maxFileBytes: 10,
    languageServers: { go: { enabled: false } },
    languageServerTimeoutMs: 300,
    languageServerCalls: 2,
    languageServerBudgetMs: 800,
  });
});

test("the cache dir is how the server is started, never a setting sent to it; blank means the default", () => {
  assert.ok(!("cacheDir" in settings.serverSettings(reader({ cacheDir: "/tmp/c" }))));
  assert.ok(settings.LAUNCH_SETTING_KEYS.includes("cacheDir"));
  assert.deepEqual(settings.launchSpec(reader({ cacheDir: "/tmp/c", "server.args": ["--log-file", "/tmp/l"] })).args,
    ["serve", "--cache-dir", "/tmp/c", "--log-file", "/tmp/l"]);
  assert.deepEqual(settings.launchSpec(reader({ cacheDir: "  " })).args, ["serve"]);
  assert.deepEqual(settings.launchSpec(reader({ cacheDir: "/tmp/c", "server.pythonPath": "/v/bin/python" })).args,
    ["-m", "rag_lsp.cli", "serve", "--cache-dir", "/tmp/c"]);
});

test("language servers are always an object", () => {
  assert.deepEqual(settings.serverSettings(reader({ languageServers: {} })).languageServers, {});
  assert.deepEqual(settings.serverSettings(reader({ languageServers: null })).languageServers, {});
  assert.deepEqual(settings.serverSettings(reader({ languageServers: ["python"] })).languageServers, {});
  const servers = { python: { command: "jedi-language-server" }, go: { enabled: false } };
  assert.deepEqual(settings.serverSettings(reader({ languageServers: servers })).languageServers, servers);
});


test("the server starts as `<command> serve`, or `<python> -m rag_lsp.cli serve` when a Python is set", () => {
  assert.deepEqual(settings.launchSpec(reader({})), {
    command: "rag-lsp", args: ["serve"], display: "rag-lsp serve", setting: "ragLsp.server.command",
  });
  assert.deepEqual(settings.launchSpec(reader({ "server.command": "/v/bin/rag-lsp", "server.args": ["--log-file", "/tmp/l"] })), {
    command: "/v/bin/rag-lsp", args: ["serve", "--log-file", "/tmp/l"], display: "/v/bin/rag-lsp serve --log-file /tmp/l",
    setting: "ragLsp.server.command",
  });
  assert.deepEqual(settings.launchSpec(reader({ "server.command": "/v/bin/rag-lsp", "server.pythonPath": "/v/bin/python" })), {
    command: "/v/bin/python", args: ["-m", "rag_lsp.cli", "serve"], display: "/v/bin/python -m rag_lsp.cli serve",
    setting: "ragLsp.server.pythonPath",
  });
});

test("executables are found on PATH or by path, and a missing one is null", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rag-vscode-"));
  const exe = path.join(dir, "rag-lsp");
  fs.writeFileSync(exe, "#!/bin/sh\n", { mode: 0o755 });
  fs.writeFileSync(path.join(dir, "plain"), "", { mode: 0o644 });
  try {
    assert.equal(settings.resolveExecutable("rag-lsp", `/nonexistent${path.delimiter}${dir}`), exe);
    assert.equal(settings.resolveExecutable(exe, ""), exe);
    assert.equal(settings.resolveExecutable("plain", dir), null);
    assert.equal(settings.resolveExecutable("rag-lsp", "/nonexistent"), null);
    assert.equal(settings.resolveExecutable("rag-lsp", undefined), null);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});

test("a missing server is reported with what was tried and the command that installs it", async () => {
  const spec = settings.launchSpec(reader({ "server.command": "rag-lsp-nowhere" }));
  const problem = await settings.probeServer(spec, "/nonexistent");
  assert.equal(problem, "not an executable on PATH");
  const message = settings.missingServerMessage(spec, problem);
  assert.match(message, /The rag_lsp server `rag-lsp-nowhere` was not found \(not an executable on PATH\)\./);
  assert.ok(message.includes(settings.INSTALL_COMMAND));
  assert.match(message, /ragLsp\.server\.command/);
});

test("a Python without rag_lsp is reported, and a working one passes the probe", async () => {
  const python = settings.resolveExecutable("python3", process.env.PATH);
  if (!python) throw new Error("python3 is needed on PATH for this test");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rag-vscode-"));
  try {
    fs.mkdirSync(path.join(dir, "rag_lsp"));
    fs.writeFileSync(path.join(dir, "rag_lsp", "__init__.py"), "");
    const broken = settings.launchSpec(reader({ "server.pythonPath": python }));
    const problem = await settings.probeServer(broken, process.env.PATH);
    assert.match(problem, /cannot import rag_lsp: ModuleNotFoundError/);
    assert.match(settings.missingServerMessage(broken, problem), /rag_lsp could not be started with `.* -m rag_lsp\.cli serve`/);
    const missing = settings.launchSpec(reader({ "server.pythonPath": path.join(dir, "no-python") }));
    assert.match(await settings.probeServer(missing, process.env.PATH), /^no Python at /);
    // The project's own virtual environment (scripts/setup.sh) has rag_lsp installed.
    const venvPython = path.resolve(__dirname, "../../../.venv/bin/python");
    assert.ok(fs.existsSync(venvPython), `${venvPython} is missing: run scripts/setup.sh first`);
    assert.equal(await settings.probeServer(settings.launchSpec(reader({ "server.pythonPath": venvPython })), ""), null);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});
