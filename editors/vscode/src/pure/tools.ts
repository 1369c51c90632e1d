// The language-model tools (package.json `contributes.languageModelTools`): their names and bounds, the checks
// of an agent's input, the requests they send, and the text they answer. No `vscode` import.
//
// An agent's input arrives as whatever JSON the model produced, so every field is checked here and a bad one
// becomes a sentence the model can act on (what is wrong and an example of good input), not an exception.

import * as path from "path";
import { fileURLToPath } from "url";
import { contextParams } from "./params";
import { CompletionContext, ContextItem, ContextResult, Position } from "./protocol";
import { fenceFor, renderContextDocument } from "./render";

export const TOOL_CONTEXT = "rag_lsp_context";
export const TOOL_SYMBOL = "rag_lsp_symbol_context";
export const TOOL_COMPLETION = "rag_lsp_completion_context";
export const TOOL_NAMES = [TOOL_CONTEXT, TOOL_SYMBOL, TOOL_COMPLETION] as const;

/** The bounds the server enforces (docs/protocol.md); the manifest's input schemas state the same ones. */
export const LIMITS = {
  topK: 100,
  budgetTokens: 200_000,
  maxSnippets: 100,
  /** The question and its evidence together, in characters (the server's limit). */
  queryChars: 200_000,
  symbolChars: 500,
} as const;

/** What a check gives: the value to use, or the sentence to answer with. */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

export interface ContextInput {
  query: string;
  evidence?: string[];
  topK?: number;
  budgetTokens?: number;
}

export interface SymbolInput {
  symbol: string;
  topK?: number;
  budgetTokens?: number;
}

export interface CompletionInput {
  file: string;
  /** 1-based, as editors and the answers number lines. */
  line: number;
  /** 1-based, in characters (code points), as `rag-lsp completion-context --column` counts. */
  column: number;
  budgetTokens?: number;
  maxSnippets?: number;
}

const EXAMPLES: Record<string, string> = {
  [TOOL_CONTEXT]: '{"query": "why does Ledger.post raise KeyError", "topK": 5}',
  [TOOL_SYMBOL]: '{"symbol": "Ledger.post"}',
  [TOOL_COMPLETION]: '{"file": "/home/me/shop/shop/ledger.py", "line": 14, "column": 35}',
};

/** A field of the input failed: the sentence says which, why, and what good input looks like. */
class InputError extends Error {}

function fail(tool: string, problem: string): { ok: false; error: string } {
  return { ok: false, error: `${tool}: ${problem}. Example input: ${EXAMPLES[tool]}` };
}

function objectInput(input: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new InputError(`the input must be a JSON object, got ${describe(input)}`);
  }
  const unknown = Object.keys(input).filter((key) => !allowed.includes(key));
  if (unknown.length) {
    throw new InputError(`unknown ${unknown.length === 1 ? "field" : "fields"} ${unknown.map((k) => `'${k}'`).join(", ")}; ` +
      `the fields are ${allowed.map((k) => `'${k}'`).join(", ")}`);
  }
  return input as Record<string, unknown>;
}

function integer(input: Record<string, unknown>, key: string, upper: number | undefined): number | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || (upper !== undefined && value > upper)) {
    throw new InputError(`'${key}' must be an integer from 1${upper === undefined ? " up" : ` to ${upper}`}, got ${describe(value)}`);
  }
  return value;
}

function text(input: Record<string, unknown>, key: string, what: string): string {
  const value = input[key];
  if (typeof value !== "string" || !value.trim()) {
    throw new InputError(`'${key}' is required: ${what}; got ${describe(value)}`);
  }
  return value.trim();
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

function check<T>(tool: string, run: () => T): Checked<T> {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    if (error instanceof InputError) return fail(tool, error.message);
    throw error;
  }
}

/** The question tool's input: `{query, evidence?, topK?, budgetTokens?}`. */
export function checkContextInput(input: unknown): Checked<ContextInput> {
  return check(TOOL_CONTEXT, () => {
    const fields = objectInput(input, ["query", "evidence", "topK", "budgetTokens"]);
    const query = text(fields, "query", "a question, a task, or an error message in words");
    const value: ContextInput = { query };
    if (fields.evidence !== undefined && fields.evidence !== null) {
      const evidence = fields.evidence;
      if (!Array.isArray(evidence) || !evidence.every((e) => typeof e === "string")) {
        throw new InputError(`'evidence' must be a list of strings (pasted output, a stack trace), got ${describe(evidence)}`);
      }
      if (evidence.length) value.evidence = evidence;
    }
    const chars = query.length + (value.evidence ?? []).reduce((sum, e) => sum + e.length, 0);
    if (chars > LIMITS.queryChars) {
      throw new InputError(`'query' and 'evidence' together must stay under ${LIMITS.queryChars} characters, got ${chars}`);
    }
    assign(value, "topK", integer(fields, "topK", LIMITS.topK));
    assign(value, "budgetTokens", integer(fields, "budgetTokens", LIMITS.budgetTokens));
    return value;
  });
}

/** The symbol tool's input: `{symbol, topK?, budgetTokens?}`; the name as written in code. */
export function checkSymbolInput(input: unknown): Checked<SymbolInput> {
  return check(TOOL_SYMBOL, () => {
    const fields = objectInput(input, ["symbol", "topK", "budgetTokens"]);
    // Models often quote a name as Markdown code or write it as a call: `Ledger.post`, post().
    const symbol = text(fields, "symbol", "a name as written in code, such as Ledger.post or convert")
      .replace(/^`+|`+$/g, "")
      .replace(/\(\)$/, "");
    if (!symbol || /[\s`]/.test(symbol)) {
      throw new InputError(`'symbol' must be one name without spaces (for a question in words, call ${TOOL_CONTEXT}), got ${describe(fields.symbol)}`);
    }
    if (symbol.length > LIMITS.symbolChars) {
      throw new InputError(`'symbol' must be at most ${LIMITS.symbolChars} characters, got ${symbol.length}`);
    }
    const value: SymbolInput = { symbol };
    assign(value, "topK", integer(fields, "topK", LIMITS.topK));
    assign(value, "budgetTokens", integer(fields, "budgetTokens", LIMITS.budgetTokens));
    return value;
  });
}

/** The completion tool's input: `{file, line, column?, budgetTokens?, maxSnippets?}`. */
export function checkCompletionInput(input: unknown): Checked<CompletionInput> {
  return check(TOOL_COMPLETION, () => {
    const fields = objectInput(input, ["file", "line", "column", "budgetTokens", "maxSnippets"]);
    const file = text(fields, "file", "the file's absolute path (or a file:// URI, or a path relative to a workspace folder)");
    const line = integer(fields, "line", undefined);
    if (line === undefined) throw new InputError(`'line' is required: the cursor's line, counted from 1`);
    const value: CompletionInput = { file, line, column: integer(fields, "column", undefined) ?? 1 };
    assign(value, "budgetTokens", integer(fields, "budgetTokens", LIMITS.budgetTokens));
    assign(value, "maxSnippets", integer(fields, "maxSnippets", LIMITS.maxSnippets));
    return value;
  });
}

function assign<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

/**
 * The token budget to ask for: the agent's own `budgetTokens`; else the caller's `tokenBudget` (VS Code's hint of
 * how many tokens the tool may answer with) when it is below the default; else none, so that the server's
 * settings decide (a root's `.rag-lsp.toml` included).
 */
export function budgetFor(requested: number | undefined, fallback: number, callerBudget: number | undefined): number | undefined {
  if (requested !== undefined) return requested;
  if (callerBudget !== undefined && Number.isInteger(callerBudget) && callerBudget > 0 && callerBudget < fallback) {
    return callerBudget;
  }
  return undefined;
}

/** `ragLsp/context` params of the question tool. */
export function contextToolParams(input: ContextInput, budgetTokens: number | undefined): Record<string, unknown> {
  return contextParams(input.query, { evidence: input.evidence, topK: input.topK, budgetTokens });
}

/**
 * `ragLsp/context` params of the symbol tool: the name in backticks, which the server reads as a code name
 * (the query `ragLsp.server.contextForSymbol` asks for a lens's symbol).
 */
export function symbolToolParams(input: SymbolInput, budgetTokens: number | undefined): Record<string, unknown> {
  return contextParams(`\`${input.symbol}\``, { topK: input.topK, budgetTokens });
}

/**
 * The files the completion tool's `file` may name, in the order to try them: a `file://` URI or an absolute
 * path is itself; a relative path is tried under each workspace folder.
 */
export function fileCandidates(file: string, folders: readonly string[]): Checked<string[]> {
  if (/^[a-zA-Z][\w+.-]+:\/\//.test(file)) {
    if (!file.startsWith("file://")) return fail(TOOL_COMPLETION, `'file' must be a path or a file:// URI, got ${describe(file)}`);
    try {
      return { ok: true, value: [fileURLToPath(file)] };
    } catch (error) {
      return fail(TOOL_COMPLETION, `'file' is not a valid file:// URI (${(error as Error).message})`);
    }
  }
  if (path.isAbsolute(file)) return { ok: true, value: [path.normalize(file)] };
  if (!folders.length) return fail(TOOL_COMPLETION, `'file' must be an absolute path: no workspace folder is open`);
  return { ok: true, value: folders.map((folder) => path.join(folder, file)) };
}

/** The answer when none of the candidates is a file; a relative path gets a hint to give an absolute one. */
export function noSuchFile(file: string, candidates: readonly string[]): string {
  const hint = path.isAbsolute(file) || file.startsWith("file://") ? "" : " (under each workspace folder); give the file's absolute path";
  return `${TOOL_COMPLETION}: no such file: ${candidates.join(" or ")}${hint}.`;
}

/**
 * The LSP position (0-based line, UTF-16 character) of a 1-based line and code-point column; a line or column
 * past the end is an error that says how long the file or the line is.
 */
export function completionPosition(
  file: string,
  lineCount: number,
  lineText: (line: number) => string,
  line: number,
  column: number,
): Checked<Position> {
  if (line > lineCount) {
    return fail(TOOL_COMPLETION, `'line' ${line} is past the end of ${file}, which has ${lineCount} ${lineCount === 1 ? "line" : "lines"}`);
  }
  const characters = Array.from(lineText(line - 1));
  if (column > characters.length + 1) {
    return fail(TOOL_COMPLETION, `'column' ${column} is past the end of line ${line}, which has ${characters.length} characters ` +
      `(the last column is ${characters.length + 1})`);
  }
  return { ok: true, value: { line: line - 1, character: characters.slice(0, column - 1).join("").length } };
}

/** The file an item points at: from its URI, else its root and path, else its path as the server gave it. */
export function absolutePath(item: { uri?: string | null; root?: string; path: string }): string {
  if (item.uri?.startsWith("file://")) {
    try {
      return fileURLToPath(item.uri);
    } catch {
      // A URI the platform cannot map: fall back to the root and the relative path.
    }
  }
  return item.root ? path.join(item.root, item.path) : item.path;
}

/**
 * A context answer as the tool's text parts: the Markdown document the editor shows (with absolute paths, so an
 * agent can open each place) and a compact JSON list of the places without their code (code is in the first
 * part already; every part goes to the model, so repeating it would spend the budget twice).
 */
export function contextToolResult(result: ContextResult, title: string): string[] {
  const items = result.items.map((item) => ({ ...item, path: absolutePath(item) }));
  const { text } = renderContextDocument({ ...result, items }, title);
  return [text, placesJson(items, result)];
}

/** What the JSON part lists of a place: where it is and what it is. */
type Place = Pick<ContextItem, "path" | "start_line" | "end_line" | "symbol" | "kind"> &
  { qualname?: string | null; score?: number; focus_line?: number; source?: string };

function placesJson(items: Place[], totals: { tokens?: number; budget_tokens?: number; truncated: boolean }): string {
  return JSON.stringify({
    places: items.map((item) => ({
      path: item.path,
      start_line: item.start_line,
      end_line: item.end_line,
      // Where to jump, and whether the place was ranked or added around the ranked ones: context answers only.
      ...(item.focus_line !== undefined ? { focus_line: item.focus_line } : {}),
      qualname: item.qualname ?? item.symbol ?? null,
      kind: item.kind,
      score: item.score ?? null,
      ...(item.source !== undefined ? { source: item.source } : {}),
    })),
    tokens: totals.tokens,
    budget_tokens: totals.budget_tokens,
    truncated: totals.truncated,
  });
}

/**
 * A completion context as the tool's text parts: each snippet with its place, reasons and code as Markdown,
 * then the same compact JSON of places as the context tools.
 */
export function completionToolResult(context: CompletionContext, where: string): string[] {
  const snippets = context.snippets.map((snippet) => ({ ...snippet, path: absolutePath(snippet) }));
  const n = snippets.length;
  const facts = [`${n} ${n === 1 ? "snippet" : "snippets"}`, `from ${context.source}`, `${context.elapsed_ms.toFixed(1)} ms`];
  if (context.truncated) facts.push("truncated");
  const lines = [`# Completion context at ${where}`, "", facts.join(" · ")];
  if (!n) lines.push("", "No definitions from elsewhere are needed here.");
  snippets.forEach((snippet, i) => {
    const range = snippet.end_line > snippet.start_line ? `${snippet.start_line}-${snippet.end_line}` : `${snippet.start_line}`;
    const name = snippet.qualname || snippet.symbol;
    lines.push("", `## ${i + 1}. ${snippet.path}:${range} · ${name ? `${name} (${snippet.kind})` : snippet.kind}`, "");
    for (const why of snippet.why) lines.push(`- ${why}`);
    const fence = fenceFor(snippet.content);
    lines.push("", `${fence}${snippet.language && snippet.language !== "text" ? snippet.language : ""}`,
      ...snippet.content.replace(/\n+$/, "").split("\n"), fence);
  });
  return [lines.join("\n") + "\n", placesJson(snippets, { truncated: context.truncated })];
}

/** The short progress message VS Code shows while a tool runs. */
export function invocationMessage(tool: string, input: unknown): string {
  const fields = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const short = (value: unknown) => {
    const line = String(value ?? "").replace(/\s+/g, " ").trim();
    return line.length > 60 ? `${line.slice(0, 59)}…` : line;
  };
  if (tool === TOOL_CONTEXT) return `Ranking the workspace's places for “${short(fields.query)}”`;
  if (tool === TOOL_SYMBOL) return `Finding the context of \`${short(fields.symbol)}\``;
  const where = `${path.basename(short(fields.file))}:${short(fields.line)}`;
  return `Collecting the completion context at ${where}`;
}
