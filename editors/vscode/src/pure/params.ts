// Building request params and the completion-context request with its fallback. No `vscode` import.

import {
  CompletionContext,
  CompletionSnippet,
  ContextItem,
  ContextResult,
  METHOD_COMPLETION_CONTEXT,
  METHOD_CONTEXT,
  METHOD_NOT_FOUND,
  Position,
} from "./protocol";

/** Options of `getContext` (all optional; the server's settings give the defaults). */
export interface ContextOptions {
  /** Untrusted text pasted with the question: terminal output, a failing test's log. */
  evidence?: string[];
  topK?: number;
  budgetTokens?: number;
  /** `locations` leaves out the code of each place; the ladder `minimal` … `diagnostic` chooses the fields. */
  verbosity?: "full" | "locations" | "minimal" | "standard" | "verbose" | "diagnostic";
  /** `prompt` adds the answer's prompt block (`prompt`) to the result. */
  format?: "json" | "prompt";
  /** A focus: its workspace folder is searched first; with an empty query, the symbol there is the question. */
  uri?: string;
  position?: Position;
}

/** Options of `getCompletionContext`. */
export interface CompletionOptions {
  /** Token budget of the snippets (the server's default is 512). */
  budgetTokens?: number;
  maxSnippets?: number;
}

/** Default budget of a completion context, as the server's `ragLsp/completionContext` uses. */
export const COMPLETION_BUDGET_TOKENS = 512;

/** `ragLsp/context` params; throws when there is nothing to ask (no query, evidence or focus). */
export function contextParams(query: string, options: ContextOptions = {}): Record<string, unknown> {
  const params: Record<string, unknown> = { query: (query ?? "").trim() };
  if (options.evidence && options.evidence.length > 0) params.evidence = [...options.evidence];
  if (options.uri) params.textDocument = { uri: options.uri };
  if (options.position) params.position = { line: options.position.line, character: options.position.character };
  positiveInteger(params, "topK", options.topK);
  positiveInteger(params, "budgetTokens", options.budgetTokens);
  if (options.verbosity) params.verbosity = options.verbosity;
  if (options.format) params.format = options.format;
  const focused = params.textDocument !== undefined && params.position !== undefined;
  if (!params.query && !params.evidence && !focused) {
    throw new Error("ask a question, paste evidence, or give a document and a position");
  }
  return params;
}

/** `ragLsp/completionContext` params: `{textDocument, position, budgetTokens?, maxSnippets?}`. */
export function completionParams(uri: string, position: Position, options: CompletionOptions = {}): Record<string, unknown> {
  const params: Record<string, unknown> = {
    textDocument: { uri },
    position: { line: position.line, character: position.character },
  };
  positiveInteger(params, "budgetTokens", options.budgetTokens);
  positiveInteger(params, "maxSnippets", options.maxSnippets);
  return params;
}

/** The `ragLsp/context` params that stand in for a completion context: the symbol at the position. */
export function completionFallbackParams(
  uri: string,
  position: Position,
  options: CompletionOptions = {},
): Record<string, unknown> {
  return contextParams("", {
    uri,
    position,
    budgetTokens: options.budgetTokens ?? COMPLETION_BUDGET_TOKENS,
    topK: options.maxSnippets,
  });
}

export function isMethodNotFound(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === METHOD_NOT_FOUND;
}

/** Sends one request; the extension passes the language client's `sendRequest`, tests a fake. */
export type SendRequest = (method: string, params: unknown) => Promise<unknown>;

/** Remembers, per server process, whether it answers `ragLsp/completionContext`. */
export interface CompletionSupport {
  supported?: boolean;
}

/**
 * The completion context at a position: `ragLsp/completionContext`, or, when the server answers MethodNotFound
 * (an older server), `ragLsp/context` focused on the position, reshaped the same way. Once the server said
 * MethodNotFound, `support` remembers it and the fallback is asked directly.
 */
export async function requestCompletionContext(
  send: SendRequest,
  support: CompletionSupport,
  uri: string,
  position: Position,
  options: CompletionOptions = {},
): Promise<CompletionContext> {
  if (support.supported !== false) {
    try {
      const answer = await send(METHOD_COMPLETION_CONTEXT, completionParams(uri, position, options));
      support.supported = true;
      return normalizeCompletion(answer, METHOD_COMPLETION_CONTEXT);
    } catch (error) {
      if (!isMethodNotFound(error)) throw error;
      support.supported = false;
    }
  }
  const answer = (await send(METHOD_CONTEXT, completionFallbackParams(uri, position, options))) as ContextResult;
  return normalizeCompletion(answer, METHOD_CONTEXT);
}

/** Either answer as a `CompletionContext`: snippets from `snippets` (or a context's `items`) and a prompt. */
export function normalizeCompletion(answer: unknown, source: string): CompletionContext {
  const raw = (answer ?? {}) as Record<string, unknown>;
  const list = (Array.isArray(raw.snippets) ? raw.snippets : Array.isArray(raw.items) ? raw.items : []) as ContextItem[];
  const snippets: CompletionSnippet[] = list.map((item) => {
    const snippet: CompletionSnippet = {
      uri: item.uri ?? null,
      path: item.path,
      start_line: item.start_line,
      end_line: item.end_line,
      symbol: item.symbol ?? null,
      kind: item.kind,
      content: item.content ?? "",
      tokens: item.tokens ?? 0,
      why: Array.isArray(item.why) ? item.why : [],
    };
    if (item.qualname !== undefined) snippet.qualname = item.qualname;
    if (typeof item.language === "string") snippet.language = item.language;
    if (typeof item.score === "number") snippet.score = item.score;
    return snippet;
  });
  const prompt = typeof raw.prompt === "string" ? raw.prompt : completionPrompt(snippets);
  return {
    snippets,
    prompt,
    elapsed_ms: typeof raw.elapsed_ms === "number" ? raw.elapsed_ms : 0,
    truncated: raw.truncated === true,
    source,
  };
}

/** Snippets joined into a prompt prefix, each headed by its path as a comment in the file's language. */
export function completionPrompt(snippets: CompletionSnippet[]): string {
  return snippets
    .map((s) => `${commentLine(s.path, `${s.path}:${s.start_line}-${s.end_line}`)}\n${s.content.replace(/\n*$/, "")}\n`)
    .join("\n");
}

const HASH_COMMENT = new Set(["py", "pyi", "rb", "sh", "bash", "zsh", "yaml", "yml", "toml", "r", "pl", "cfg", "ini", "txt"]);
const DASH_COMMENT = new Set(["lua", "sql", "hs", "elm"]);
const MARKUP_COMMENT = new Set(["md", "markdown", "html", "htm", "xml", "vue", "svelte", "rst"]);

/** `text` as a one-line comment in the language of `path` (`#`, `--`, `<!-- -->`, else `//`). */
export function commentLine(path: string, text: string): string {
  const base = path.split("/").pop() ?? path;
  const ext = base.includes(".") ? base.split(".").pop()!.toLowerCase() : base.toLowerCase();
  if (HASH_COMMENT.has(ext) || base === "Makefile" || base === "Dockerfile") return `# ${text}`;
  if (DASH_COMMENT.has(ext)) return `-- ${text}`;
  if (MARKUP_COMMENT.has(ext)) return `<!-- ${text} -->`;
  return `// ${text}`;
}

function positiveInteger(target: Record<string, unknown>, key: string, value: number | undefined): void {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value) || value < 1) throw new Error(`${key} must be a positive integer, got ${value}`);
  target[key] = value;
}
