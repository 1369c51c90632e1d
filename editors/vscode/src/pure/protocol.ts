// The shapes rag_lsp's server speaks (docs/protocol.md). Fields may be added by the server; these are the ones
// the extension reads. Nothing here imports `vscode`, so it runs under `node --test`.

export interface Position {
  line: number; // 0-based
  character: number; // UTF-16 code units, as VS Code counts them
}

export interface ContextItem {
  path: string;
  start_line: number; // 1-based, inclusive
  end_line: number;
  /** The line the place is about (where to jump); start_line unless nearby places were merged into it. */
  focus_line?: number;
  symbol: string | null;
  qualname: string | null;
  kind: string;
  language: string;
  score: number;
  why: string[];
  /** The evidence strategies behind the item (`symbols`, `bm25`, ...). */
  strategies?: string[];
  /** `ranked`, or what the task's template added around the ranked places (`dependency`, `related`). */
  source?: string;
  /** What answered its evidence: a language server's name (`pyright`, `gopls`), `tree-sitter`, or `index`. */
  sources?: string[];
  content?: string; // absent with verbosity "locations"
  tokens: number;
  uri?: string | null;
  root?: string;
}

export interface ContextResult {
  items: ContextItem[];
  elapsed_ms: number;
  truncated: boolean;
  index: { root?: string; roots?: unknown[]; files: number; chunks: number; [key: string]: unknown };
  query?: { terms: string[]; names: string[] };
  tokens: number;
  budget_tokens: number;
  token_count?: string;
  warnings?: string[];
  indexing?: { done: number; total: number };
  /** The task type the bundle was built for, and how sure the classifier was (`source` `request` when asked). */
  task?: { type: string; confidence: number; source: string };
  /** How complete the bundle is for its task, in [0, 1]. */
  sufficiency?: number;
  /** With `format: "prompt"`: the answer as a block to paste into a prompt (byte-stable). */
  prompt?: string;
}

/** One language server planned for a root (`ragLsp/status` `language_servers[]`). */
export interface LanguageServerStatus {
  server: string; // its display name; "" when no server is configured for the language
  command: string | null; // the resolved executable; null when missing or disabled
  languages: string[];
  /** idle, starting, ready, restarting, down, stopped, missing or disabled. */
  state: string;
  version: string | null; // the server's own `serverInfo.version`
  pid: number | null;
  restarts: number;
  last_error: string | null; // for missing and disabled: why
}

export interface RootStatus {
  root: string;
  files: number;
  chunks: number;
  definitions?: number;
  languages?: Record<string, number>;
  skipped?: Record<string, number>;
  parse_errors?: number;
  cache?: string | null;
  warnings?: string[];
  settings?: Record<string, unknown>;
  settings_warnings?: string[];
  /** Absent from servers older than language-server composition. */
  language_servers?: LanguageServerStatus[];
}

export interface StatusResult {
  version: string;
  roots: RootStatus[];
  files: number;
  chunks: number;
  open_documents?: number;
  indexing?: { done: number; total: number; running: boolean };
  /** Every root's language servers together. */
  language_servers?: LanguageServerStatus[];
}

/** One place of a completion context (`ragLsp/completionContext`). */
export interface CompletionSnippet {
  uri: string | null;
  path: string;
  start_line: number;
  end_line: number;
  symbol: string | null;
  kind: string;
  content: string;
  tokens: number;
  why: string[];
  /** Passed on when the answer has them (both requests send them today; older servers may not). */
  qualname?: string | null;
  language?: string;
  score?: number;
}

/** What `getCompletionContext` returns, whichever request answered. */
export interface CompletionContext {
  snippets: CompletionSnippet[];
  /** Ready to prepend to a completion prompt: each snippet headed by its path as a comment. */
  prompt: string;
  elapsed_ms: number;
  truncated: boolean;
  /** The request that answered: `ragLsp/completionContext`, or `ragLsp/context` when the server lacks it. */
  source: string;
}

export const METHOD_CONTEXT = "ragLsp/context";
export const METHOD_STATUS = "ragLsp/status";
export const METHOD_COMPLETION_CONTEXT = "ragLsp/completionContext";
export const SERVER_COMMAND_CONTEXT_FOR_SYMBOL = "ragLsp.server.contextForSymbol";
export const METHOD_NOT_FOUND = -32601;
