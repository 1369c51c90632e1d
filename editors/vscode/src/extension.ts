// The VS Code side of rag_lsp: starts `rag-lsp serve` with vscode-languageclient, shows the index status, runs
// the RAG commands, renders answers as Markdown documents, registers language-model tools for agents, and
// exports an API for other extensions.
// Everything that does not need `vscode` lives in ./pure (tested with `node --test`).

import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import {
  COMPLETION_BUDGET_TOKENS,
  CompletionOptions,
  CompletionSupport,
  ContextOptions,
  contextParams,
  requestCompletionContext,
} from "./pure/params";
import {
  CompletionContext,
  ContextResult,
  METHOD_CONTEXT,
  METHOD_STATUS,
  SERVER_COMMAND_CONTEXT_FOR_SYMBOL,
  StatusResult,
} from "./pure/protocol";
import {
  RenderedContext,
  documentTitle,
  placesLabel,
  renderContextBlock,
  renderContextDocument,
  renderStatusDocument,
  statusBarText,
} from "./pure/render";
import {
  TOOL_COMPLETION,
  TOOL_CONTEXT,
  TOOL_SYMBOL,
  budgetFor,
  checkCompletionInput,
  checkContextInput,
  checkSymbolInput,
  completionPosition,
  completionToolResult,
  contextToolParams,
  contextToolResult,
  fileCandidates,
  invocationMessage,
  noSuchFile,
  symbolToolParams,
} from "./pure/tools";
import {
  INSTALL_COMMAND,
  LAUNCH_SETTING_KEYS,
  LaunchSpec,
  launchSpec,
  missingServerMessage,
  probeServer,
  serverSettings,
} from "./pure/settings";

const SECTION = "ragLsp";
const SCHEME = "rag-context";
const LENS_COMMAND = "ragLsp.lensContext"; // the server's lens command, rerouted so a click shows the answer

/** Options of `getContext`: those of `ragLsp/context`, with a VS Code document and position as the focus. */
export interface GetContextOptions extends Omit<ContextOptions, "uri" | "position"> {
  document?: vscode.TextDocument;
  position?: vscode.Position;
  token?: vscode.CancellationToken;
}

export interface GetCompletionContextOptions extends CompletionOptions {
  token?: vscode.CancellationToken;
}

/** What `vscode.extensions.getExtension('rag-lsp.rag-lsp').activate()` resolves to. */
export interface RagLspApi {
  /** The ranked, token-budgeted places for a question (the JSON of `ragLsp/context`, docs/protocol.md). */
  getContext(query: string, options?: GetContextOptions): Promise<ContextResult>;
  /** Cross-file context for a completion at `position`: snippets and a ready-to-prepend `prompt`. */
  getCompletionContext(
    document: vscode.TextDocument,
    position: vscode.Position,
    options?: GetCompletionContextOptions,
  ): Promise<CompletionContext>;
  /** A context answer as the plain block `rag-lsp context` prints. */
  renderContext(result: ContextResult): string;
}

let server: RagServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<RagLspApi> {
  const output = vscode.window.createOutputChannel("rag_lsp", { log: true });
  const status = vscode.window.createStatusBarItem("ragLsp.status", vscode.StatusBarAlignment.Left, 10);
  status.name = "rag_lsp index";
  status.command = "ragLsp.showStatus";
  const documents = new ContextDocuments();
  server = new RagServer(output, status);
  const rag = server;
  let lastQuestion = "";

  const ask = async (title: string, key: string, question: () => Promise<ContextResult>) => {
    const run = async () => {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: "RAG: ranking context" },
        question,
      );
      await documents.show(key, title, renderContextDocument(result, title), run);
    };
    await run();
  };

  const askQuestion = async () => {
    const query = await vscode.window.showInputBox({
      title: "RAG: Context for a question",
      prompt: "A question, an error message or a stack trace; rag_lsp lists the places in the workspace that answer it",
      placeHolder: "why does Ledger.post raise KeyError",
      value: selectedText() || lastQuestion,
      ignoreFocusOut: true,
    });
    if (!query?.trim()) return;
    const question = query.trim();
    lastQuestion = question;
    await ask(question, `question/${question}`, () =>
      rag.request<ContextResult>(METHOD_CONTEXT, contextParams(question)),
    );
  };

  const askSymbol = async () => {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== "file") {
      void vscode.window.showInformationMessage("RAG: put the cursor on a symbol in a file first.");
      return;
    }
    const position = editor.selection.active;
    const wordRange = editor.document.getWordRangeAtPosition(position);
    const word = wordRange ? editor.document.getText(wordRange) : `line ${position.line + 1}`;
    const params = contextParams("", { uri: editor.document.uri.toString(), position });
    await ask(`Context for \`${word}\``, `symbol/${editor.document.uri}#${position.line}:${position.character}`, () =>
      rag.request<ContextResult>(METHOD_CONTEXT, params),
    );
  };

  const lensContext = async (data: { uri?: string; qualname?: string; name?: string }) => {
    const name = data?.qualname || data?.name || "symbol";
    await ask(`Context for \`${name}\``, `symbol/${data?.uri}#${name}`, () =>
      rag.request<ContextResult>(ExecuteCommandRequest.method, {
        command: SERVER_COMMAND_CONTEXT_FOR_SYMBOL,
        arguments: [data],
      }),
    );
  };

  const copyContext = async () => {
    const editor = vscode.window.activeTextEditor;
    const query = await vscode.window.showInputBox({
      title: "RAG: Copy context",
      prompt: "A question or an error; leave it empty for the symbol at the cursor. The answer is copied as text.",
      value: selectedText() || lastQuestion,
      ignoreFocusOut: true,
    });
    if (query === undefined) return;
    let params: Record<string, unknown>;
    if (query.trim()) {
      lastQuestion = query.trim();
      params = contextParams(lastQuestion, { format: "prompt" });
    } else if (editor && editor.document.uri.scheme === "file") {
      params = contextParams("", { uri: editor.document.uri.toString(), position: editor.selection.active, format: "prompt" });
    } else {
      void vscode.window.showInformationMessage("RAG: type a question, or put the cursor on a symbol in a file.");
      return;
    }
    const result = await rag.request<ContextResult>(METHOD_CONTEXT, params);
    // The server's prompt block (the same answer, the same bytes); an older server sends none.
    await vscode.env.clipboard.writeText(result.prompt ?? renderContextBlock(result));
    void vscode.window.showInformationMessage(
      `RAG: copied ${placesLabel(result)} (~${result.tokens} tokens) to the clipboard.`,
    );
  };

  const showStatus = async () => {
    const result = await rag.request<StatusResult>(METHOD_STATUS, null);
    rag.showStatus(result);
    await documents.show("status/index", "rag_lsp index status", { text: renderStatusDocument(result), places: [] }, showStatus, "Refresh");
  };

  const command = (id: string, run: (...args: any[]) => Promise<void>) =>
    vscode.commands.registerCommand(id, async (...args: any[]) => {
      try {
        await run(...args);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        output.appendLine(`${id} failed: ${message}`);
        void vscode.window.showErrorMessage(`RAG: ${message}`);
      }
    });

  context.subscriptions.push(
    output,
    status,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, documents),
    vscode.languages.registerCodeLensProvider({ scheme: SCHEME }, documents),
    command("ragLsp.contextForQuestion", askQuestion),
    command("ragLsp.contextForSymbol", askSymbol),
    command("ragLsp.copyContext", copyContext),
    command("ragLsp.showStatus", showStatus),
    command("ragLsp.restartServer", () => rag.restart()),
    command("ragLsp.openLocation", openLocation),
    command(LENS_COMMAND, lensContext),
    command("ragLsp.rerun", (key: string) => documents.rerun(key)),
    vscode.workspace.onDidChangeConfiguration((event) => rag.configurationChanged(event)),
    vscode.workspace.onDidSaveTextDocument(() => rag.scheduleStatus(1000)),
    { dispose: () => void rag.stop() },
    ...registerTools(rag, output),
  );

  void rag.start();

  return {
    getContext: async (query, options = {}) => {
      const { document, position, token, ...rest } = options;
      const params = contextParams(query, { ...rest, uri: document?.uri.toString(), position });
      return rag.request<ContextResult>(METHOD_CONTEXT, params, token);
    },
    getCompletionContext: async (document, position, options = {}) => {
      const { token, ...rest } = options;
      const send = (method: string, params: unknown) => rag.request<unknown>(method, params, token);
      return requestCompletionContext(send, rag.completionSupport, document.uri.toString(), position, rest);
    },
    renderContext: renderContextBlock,
  };
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}

/**
 * The language-model tools (package.json `languageModelTools`) for agents and other extensions: a question, a
 * symbol, and the completion context at a position, each answered by the running server. Bad input gets a
 * text answer that says what to fix; a server that cannot answer is an error, as VS Code expects.
 */
function registerTools(rag: RagServer, output: vscode.LogOutputChannel): vscode.Disposable[] {
  // Editors built on VS Code may report a new enough API version without the language-model API: the rest of
  // the extension works there, without the tools.
  if (typeof vscode.lm?.registerTool !== "function") {
    output.appendLine(`this editor (VS Code API ${vscode.version}) has no vscode.lm.registerTool: the language-model tools are off`);
    return [];
  }
  const configured = () => serverSettings((key) => vscode.workspace.getConfiguration(SECTION).get(key)).budgetTokens as number;
  const register = (
    name: string,
    answer: (input: unknown, options: vscode.LanguageModelToolInvocationOptions<unknown>, token: vscode.CancellationToken) => Promise<string[]>,
  ) =>
    vscode.lm.registerTool<unknown>(name, {
      prepareInvocation: (options) => ({ invocationMessage: invocationMessage(name, options.input) }),
      invoke: async (options, token) =>
        new vscode.LanguageModelToolResult((await answer(options.input, options, token)).map((text) => new vscode.LanguageModelTextPart(text))),
    });

  return [
    register(TOOL_CONTEXT, async (input, options, token) => {
      const checked = checkContextInput(input);
      if (!checked.ok) return [checked.error];
      const budget = budgetFor(checked.value.budgetTokens, configured(), options.tokenizationOptions?.tokenBudget);
      const result = await rag.request<ContextResult>(METHOD_CONTEXT, contextToolParams(checked.value, budget), token);
      return contextToolResult(result, checked.value.query);
    }),
    register(TOOL_SYMBOL, async (input, options, token) => {
      const checked = checkSymbolInput(input);
      if (!checked.ok) return [checked.error];
      const budget = budgetFor(checked.value.budgetTokens, configured(), options.tokenizationOptions?.tokenBudget);
      const result = await rag.request<ContextResult>(METHOD_CONTEXT, symbolToolParams(checked.value, budget), token);
      return contextToolResult(result, `Context for \`${checked.value.symbol}\``);
    }),
    register(TOOL_COMPLETION, async (input, options, token) => {
      const checked = checkCompletionInput(input);
      if (!checked.ok) return [checked.error];
      const { file, line, column, maxSnippets } = checked.value;
      const folders = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
      const candidates = fileCandidates(file, folders);
      if (!candidates.ok) return [candidates.error];
      const found = await firstFile(candidates.value);
      if (!found) return [noSuchFile(file, candidates.value)];
      const document = await vscode.workspace.openTextDocument(found);
      const position = completionPosition(found.fsPath, document.lineCount, (n) => document.lineAt(n).text, line, column);
      if (!position.ok) return [position.error];
      const budgetTokens = budgetFor(checked.value.budgetTokens, COMPLETION_BUDGET_TOKENS, options.tokenizationOptions?.tokenBudget);
      const send = (method: string, params: unknown) => rag.request<unknown>(method, params, token);
      const context = await requestCompletionContext(send, rag.completionSupport, document.uri.toString(), position.value, {
        budgetTokens,
        maxSnippets,
      });
      return completionToolResult(context, `${found.fsPath}:${line}:${column}`);
    }),
  ];
}

/** The first of `paths` that is a file, as a URI. */
async function firstFile(paths: string[]): Promise<vscode.Uri | undefined> {
  for (const candidate of paths) {
    const uri = vscode.Uri.file(candidate);
    try {
      if ((await vscode.workspace.fs.stat(uri)).type & vscode.FileType.File) return uri;
    } catch {
      // Not there: try the next folder.
    }
  }
  return undefined;
}

/** The language client, its start-up checks, the status bar item, and settings sent to the server. */
class RagServer {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  private statusTimer: NodeJS.Timeout | undefined;
  private failure: string | undefined;
  private startedAt = 0;
  completionSupport: CompletionSupport = {};

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly statusItem: vscode.StatusBarItem,
  ) {}

  start(): Promise<LanguageClient | undefined> {
    if (!this.starting) this.starting = this.launch();
    return this.starting;
  }

  private async launch(): Promise<LanguageClient | undefined> {
    this.setStatusBar({ kind: "starting" });
    this.failure = undefined;
    const config = vscode.workspace.getConfiguration(SECTION);
    const spec = launchSpec((key) => config.get(key));
    const problem = await probeServer(spec, process.env.PATH);
    if (problem) {
      this.fail(missingServerMessage(spec, problem), spec);
      return undefined;
    }
    const serverOptions: ServerOptions = { command: spec.command, args: spec.args };
    const initial = serverSettings((key) => config.get(key));
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }],
      initializationOptions: initial,
      outputChannel: this.output,
      middleware: {
        provideCodeLenses: async (document, token, next) => (await next(document, token))?.map(rerouteLens),
        resolveCodeLens: async (lens, token, next) => {
          const resolved = await next(lens, token);
          return resolved ? rerouteLens(resolved) : resolved;
        },
      },
    };
    const client = new LanguageClient(SECTION, "rag_lsp", serverOptions, clientOptions);
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped && this.client === client) {
        this.setStatusBar({ kind: "stopped", reason: "the server stopped; run “RAG: Restart the server”" });
      }
    });
    try {
      this.output.appendLine(`starting ${spec.display}`);
      await client.start();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.fail(`rag_lsp could not start \`${spec.display}\`: ${message}. See the “rag_lsp” output for details.`, spec);
      return undefined;
    }
    this.client = client;
    this.startedAt = Date.now();
    this.completionSupport = {};
    this.scheduleStatus(0);
    return client;
  }

  private fail(message: string, spec: LaunchSpec): void {
    this.failure = message;
    this.output.appendLine(message);
    this.setStatusBar({ kind: "stopped", reason: message });
    void vscode.window.showErrorMessage(message, "Open Settings", "Copy Install Command").then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", spec.setting);
      } else if (choice === "Copy Install Command") {
        void vscode.env.clipboard.writeText(INSTALL_COMMAND);
      }
    });
  }

  async stop(): Promise<void> {
    clearTimeout(this.statusTimer);
    const pending = this.starting;
    this.starting = undefined;
    const client = (await pending) ?? this.client; // a start under way finishes first, then stops
    this.client = undefined;
    if (client && client.state !== State.Stopped) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.appendLine(`stopping the server: ${error}`);
      }
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Sends a request once the server runs; a clear error when it cannot. */
  async request<T>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<T> {
    const client = await this.start();
    if (!client) throw new Error(this.failure ?? "the rag_lsp server is not running");
    if (client.state === State.Stopped) {
      throw new Error("the rag_lsp server stopped (see the “rag_lsp” output); run “RAG: Restart the server”");
    }
    return token ? client.sendRequest<T>(method, params, token) : client.sendRequest<T>(method, params);
  }

  configurationChanged(event: vscode.ConfigurationChangeEvent): void {
    if (!event.affectsConfiguration(SECTION)) return;
    if (LAUNCH_SETTING_KEYS.some((key) => event.affectsConfiguration(`${SECTION}.${key}`)) || !this.client) {
      void this.restart();
      return;
    }
    const config = vscode.workspace.getConfiguration(SECTION);
    const sent = serverSettings((key) => config.get(key));
    void this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: { [SECTION]: sent } });
    this.scheduleStatus(500);
  }

  /** Refreshes the status bar after `delay` ms: every second while indexing or starting, else every 30 s. */
  scheduleStatus(delay: number): void {
    clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(async () => {
      const client = this.client;
      if (!client || client.state !== State.Running) return;
      try {
        const result = await client.sendRequest<StatusResult>(METHOD_STATUS, null);
        this.showStatus(result);
        // Fast while indexing, and for a while after start-up (indexing may not have begun at the first poll).
        const early = Date.now() - this.startedAt < 20000;
        this.scheduleStatus(result.indexing?.running || early ? 1000 : 30000);
      } catch (error) {
        this.output.appendLine(`ragLsp/status failed: ${error}`);
        this.scheduleStatus(5000);
      }
    }, delay);
  }

  showStatus(result: StatusResult): void {
    this.setStatusBar({ kind: "ready", status: result });
  }

  private setStatusBar(state: Parameters<typeof statusBarText>[0]): void {
    const { text, tooltip } = statusBarText(state);
    this.statusItem.text = text;
    this.statusItem.tooltip = tooltip;
    this.statusItem.show();
  }
}

/** A server lens runs the server's command, whose answer VS Code would drop; show it instead. */
function rerouteLens(lens: vscode.CodeLens): vscode.CodeLens {
  if (lens.command?.command === SERVER_COMMAND_CONTEXT_FOR_SYMBOL) {
    lens.command = { ...lens.command, command: LENS_COMMAND };
  }
  return lens;
}

interface ShownDocument extends RenderedContext {
  rerun?: () => Promise<void>;
  rerunLabel: string;
}

/**
 * Read-only Markdown documents (`rag-context:`) holding answers, with an "Open path:line" lens above each place
 * and "Ask again" above the title. (Lenses, not document links: a Ctrl+click in Markdown also runs Go to
 * Definition, which would open the answer a second time.)
 */
class ContextDocuments implements vscode.TextDocumentContentProvider, vscode.CodeLensProvider {
  private readonly shown = new Map<string, ShownDocument>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;

  async show(
    key: string,
    title: string,
    rendered: RenderedContext,
    rerun?: () => Promise<void>,
    rerunLabel = "Ask again",
  ): Promise<void> {
    const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${key.split("/")[0]}/${documentTitle(title)}`, query: key });
    this.shown.set(uri.toString(), { ...rendered, rerun, rerunLabel });
    this.changed.fire(uri);
    this.lensesChanged.fire();
    let document = await vscode.workspace.openTextDocument(uri);
    if (document.languageId !== "markdown") {
      document = await vscode.languages.setTextDocumentLanguage(document, "markdown");
    }
    // Answers share one editor group: the one already holding an answer, else a new one beside the code.
    const group = vscode.window.tabGroups.all.find((g) => g.tabs.some(isAnswerTab));
    await vscode.window.showTextDocument(document, {
      viewColumn: group?.viewColumn ?? vscode.ViewColumn.Beside,
      preview: false,
    });
  }

  async rerun(uri: string): Promise<void> {
    await this.shown.get(uri)?.rerun?.();
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.shown.get(uri.toString())?.text ?? "This answer is gone; ask again.\n";
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const shown = this.shown.get(document.uri.toString());
    if (!shown) return [];
    const lenses: vscode.CodeLens[] = [];
    if (shown.rerun) {
      lenses.push(new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), {
        title: `$(refresh) ${shown.rerunLabel}`,
        command: "ragLsp.rerun",
        arguments: [document.uri.toString()],
      }));
    }
    for (const place of shown.places) {
      if (!place.uri) continue;
      lenses.push(new vscode.CodeLens(new vscode.Range(place.line, 0, place.line, 0), {
        title: `$(go-to-file) Open ${place.path}:${place.startLine}`,
        command: "ragLsp.openLocation",
        arguments: [place],
      }));
    }
    return lenses;
  }
}

/** Opens a place (`{uri, startLine, endLine}`, 1-based lines) beside the answer, its first line selected. */
async function openLocation(place: { uri?: string | null; startLine: number; endLine: number }): Promise<void> {
  if (!place?.uri) return;
  const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(place.uri));
  const start = new vscode.Position(Math.max(0, place.startLine - 1), 0);
  const end = new vscode.Position(Math.max(0, place.endLine - 1), Number.MAX_SAFE_INTEGER);
  // Open it among the code, not among the answers.
  const group = vscode.window.tabGroups.all.find((g) => !g.tabs.some(isAnswerTab));
  const editor = await vscode.window.showTextDocument(document, {
    viewColumn: group?.viewColumn ?? vscode.ViewColumn.Beside,
    selection: new vscode.Range(start, start),
  });
  editor.revealRange(new vscode.Range(start, end), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

function isAnswerTab(tab: vscode.Tab): boolean {
  return tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === SCHEME;
}

function selectedText(): string {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.selection.isEmpty) return "";
  return editor.document.getText(editor.selection).trim().slice(0, 2000);
}
