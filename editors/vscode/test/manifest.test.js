"use strict";
// The extension's manifest: command ids, settings and their descriptions.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const manifest = require("../package.json");
const settings = require("../out/pure/settings.js");

const properties = manifest.contributes.configuration.properties;

test("extension command ids are ragLsp.* and never the server's ragLsp.server.* ids", () => {
  const ids = manifest.contributes.commands.map((c) => c.command);
  assert.ok(ids.length >= 4);
  for (const id of ids) {
    assert.match(id, /^ragLsp\.[a-zA-Z]+$/);
    assert.ok(!id.startsWith("ragLsp.server."), id);
  }
  const titles = manifest.contributes.commands.map((c) => `${c.category}: ${c.title}`);
  for (const title of [
    "RAG: Context for a question…",
    "RAG: Context for the symbol at the cursor",
    "RAG: Copy context…",
    "RAG: Show index status",
  ]) {
    assert.ok(titles.includes(title), title);
  }
});

test("every setting has a description, and every server setting is contributed", () => {
  for (const [key, value] of Object.entries(properties)) {
    assert.ok((value.markdownDescription || value.description || "").length > 20, `${key} needs a description`);
  }
  for (const key of [...settings.SERVER_SETTING_KEYS, ...settings.LAUNCH_SETTING_KEYS]) {
    assert.ok(`ragLsp.${key}` in properties, `ragLsp.${key} is not contributed`);
  }
});

test("server settings' defaults in the manifest are the ones sent when unset", () => {
  const sent = settings.serverSettings(() => undefined);
  for (const key of settings.SERVER_SETTING_KEYS) {
    assert.deepEqual(properties[`ragLsp.${key}`].default, sent[key], key);
  }
  assert.deepEqual([properties["ragLsp.languageServerTimeoutMs"].minimum, properties["ragLsp.languageServerTimeoutMs"].maximum], [1, 60000]);
  assert.deepEqual([properties["ragLsp.languageServerCalls"].minimum, properties["ragLsp.languageServerCalls"].maximum], [1, 50]);
  assert.deepEqual([properties["ragLsp.languageServerBudgetMs"].minimum, properties["ragLsp.languageServerBudgetMs"].maximum], [1, 60000]);
});

test("languageServers is keyed by the server's language names, each {command, args, initializationOptions, enabled}", () => {
  const schema = properties["ragLsp.languageServers"];
  const toml = fs.readFileSync(path.resolve(__dirname, "../../../rag_lsp/data/languages.toml"), "utf8");
  const languages = [...toml.matchAll(/^\[([a-z_]+)\]/gm)].map((m) => m[1]);
  assert.ok(languages.includes("python") && languages.includes("go"));
  assert.deepEqual(schema.propertyNames.enum, languages);
  const server = schema.additionalProperties;
  assert.deepEqual(Object.keys(server.properties), ["command", "args", "initializationOptions", "enabled"]);
  assert.equal(server.additionalProperties, false);
  assert.deepEqual(server.properties.command.type, ["string", "null"]);
  assert.equal(server.properties.enabled.type, "boolean");
  assert.ok(schema.markdownDescription.includes('`{"python": {"command": "jedi-language-server"}, "go": {"enabled": false}}`'));
  assert.ok(!/reserved/i.test(schema.markdownDescription));
  for (const binary of ["pyright-langserver", "basedpyright-langserver", "jedi-language-server", "typescript-language-server", "gopls", "clangd", "rust-analyzer"]) {
    assert.ok(schema.markdownDescription.includes(binary), binary);
  }
});

test("the bundle is the entry point and vscode stays external", () => {
  assert.equal(manifest.main, "./dist/extension.js");
  assert.match(manifest.scripts.build, /--external:vscode/);
  assert.match(manifest.scripts.package, /vsce package --no-dependencies/);
});
