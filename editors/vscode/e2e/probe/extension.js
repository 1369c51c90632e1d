// A test-only extension for e2e/run.mjs: it reaches rag_lsp's tools the way an agent or another extension does,
// through `vscode.lm.tools` and `vscode.lm.invokeTool` (VS Code's tool service, not rag_lsp's own code), and
// writes what it saw to the file `ragLspProbe.resultFile` names. The calls come from `ragLspProbe.calls`: the
// test passes both through User/settings.json, because environment variables do not reach the extension host.
"use strict";
const fs = require("fs");
const vscode = require("vscode");

function describeError(error) {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

async function invokeTools() {
  const config = vscode.workspace.getConfiguration("ragLspProbe");
  const resultFile = config.get("resultFile");
  const report = {
    api: {
      registerTool: typeof vscode.lm?.registerTool,
      invokeTool: typeof vscode.lm?.invokeTool,
      tools: Array.isArray(vscode.lm?.tools),
    },
    version: vscode.version,
    tools: [],
    calls: [],
  };
  try {
    // rag_lsp registers its tools when it activates (at start-up); activating it here only waits for that.
    await vscode.extensions.getExtension("rag-lsp.rag-lsp")?.activate();
    report.tools = vscode.lm.tools
      .filter((tool) => tool.name.startsWith("rag_lsp_"))
      .map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema, tags: tool.tags }));
    for (const { name, input } of config.get("calls")) {
      const call = { name, input };
      try {
        const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
        call.parts = result.content.map((part) =>
          part instanceof vscode.LanguageModelTextPart ? part.value : { notText: Object.prototype.toString.call(part) });
      } catch (error) {
        call.error = describeError(error);
      }
      report.calls.push(call);
    }
  } catch (error) {
    report.error = describeError(error);
  }
  fs.writeFileSync(resultFile, JSON.stringify(report, null, 2));
}

exports.activate = (context) => {
  context.subscriptions.push(vscode.commands.registerCommand("ragLspProbe.invokeTools", invokeTools));
};
