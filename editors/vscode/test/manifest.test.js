"use strict";
// The extension's manifest: command ids, settings and their descriptions.
const test = require("node:test");
const assert = require("node:assert/strict");
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
  for (const key of [...settings.SERVER_SETTING_KEYS, ...settings.LAUNCH_SETTING_KEYS, "languageServers"]) {
    assert.ok(`ragLsp.${key}` in properties, `ragLsp.${key} is not contributed`);
  }
});

test("the bundle is the entry point and vscode stays external", () => {
  assert.equal(manifest.main, "./dist/extension.js");
  assert.match(manifest.scripts.build, /--external:vscode/);
  assert.match(manifest.scripts.package, /vsce package --no-dependencies/);
});
