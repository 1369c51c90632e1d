// Rendering answers as text: the context document, the copied block, the status bar and the status page.
// No `vscode` import.

import { ContextItem, ContextResult, LanguageServerStatus, RootStatus, StatusResult } from "./protocol";

/** A place in a rendered context document: where its heading is and where it points. */
export interface RenderedPlace {
  /** 0-based line of the place's heading in the rendered text (where its "Open" lens goes). */
  line: number;
  uri: string | null;
  path: string;
  startLine: number; // 1-based, as the server counts
  endLine: number;
}

export interface RenderedContext {
  text: string;
  places: RenderedPlace[];
}

/** The heading of a place: `path:start-end`, plus `· Qualname (kind)` when it is a definition or section. */
export function placeLabel(item: ContextItem): { location: string; detail: string } {
  const range = item.end_line > item.start_line ? `${item.start_line}-${item.end_line}` : `${item.start_line}`;
  const name = item.qualname || item.symbol;
  return { location: `${item.path}:${range}`, detail: name ? `${name} (${item.kind})` : item.kind };
}

/**
 * The answer as a Markdown document: a title, one line of totals, then each place with its reasons and code.
 * Each heading's line and target are reported in `places` so the editor can put an "Open" lens there.
 */
export function renderContextDocument(result: ContextResult, title: string): RenderedContext {
  const lines: string[] = [];
  const places: RenderedPlace[] = [];
  lines.push(`# ${oneLine(title) || "Context"}`, "", summaryLine(result));
  if (result.indexing) {
    lines.push("", `> Indexing is still running (${result.indexing.done} of ${result.indexing.total} files): this answer comes from what is indexed so far.`);
  }
  for (const warning of result.warnings ?? []) lines.push("", `> ${oneLine(warning)}`);
  if (result.items.length === 0) lines.push("", "No matching places.");
  result.items.forEach((item, i) => {
    const { location, detail } = placeLabel(item);
    const prefix = `## ${i + 1}. `;
    lines.push("");
    places.push({
      line: lines.length,
      uri: item.uri ?? null,
      path: item.path,
      startLine: item.focus_line ?? item.start_line,
      endLine: item.end_line,
    });
    lines.push(`${prefix}${location} · ${detail}`, "");
    for (const why of item.why) lines.push(`- ${oneLine(why)}`);
    if (item.sources?.length) lines.push(`- answered by: ${item.sources.join(", ")}`);
    if (item.content !== undefined) {
      const fence = fenceFor(item.content);
      lines.push("", `${fence}${fenceLanguage(item.language)}`, ...item.content.replace(/\n+$/, "").split("\n"), fence);
    }
  });
  return { text: lines.join("\n") + "\n", places };
}

/** `3 places + 1 related · ~69 of 4000 tokens (estimated) · truncated · 0.9 ms · 6 files, 13 chunks`. */
/** `2 places`, or `1 place + 1 related`: `topK` counts the ranked places, so what the task's template added
 * around them (dependencies, tests, documents) is counted apart. */
export function placesLabel(result: ContextResult): string {
  const ranked = result.items.filter((item) => (item.source ?? "ranked") === "ranked").length;
  const related = result.items.length - ranked;
  return `${ranked} ${ranked === 1 ? "place" : "places"}${related ? ` + ${related} related` : ""}`;
}

export function summaryLine(result: ContextResult): string {
  const parts = [
    placesLabel(result),
    `~${result.tokens} of ${result.budget_tokens} tokens${result.token_count === "estimate" ? " (estimated)" : ""}`,
  ];
  if (result.truncated) parts.push("truncated");
  parts.push(`${formatMs(result.elapsed_ms)} ranking`, `${result.index.files} files, ${result.index.chunks} chunks`);
  return parts.join(" · ");
}

/**
 * The plain block copied to the clipboard: the same text `rag-lsp context` prints (`1. path:line (name) — why`,
 * the code indented by four spaces, then a footer line).
 */
export function renderContextBlock(result: ContextResult): string {
  const blocks = result.items.map((item, i) => {
    const name = item.symbol ? ` (${item.qualname || item.symbol})` : "";
    const code = (item.content ?? "").split("\n").map((line) => `    ${line}`);
    return [`${i + 1}. ${item.path}:${item.focus_line ?? item.start_line}${name} — ${item.why.join("; ")}`, ...code].join("\n");
  });
  const counted =
    (result.token_count ?? "estimate") === "estimate"
      ? `~${result.tokens} tokens (estimated)`
      : `${result.tokens} tokens (${result.token_count})`;
  const footer =
    `${result.items.length} places, ${counted} of ${result.budget_tokens}` +
    `${result.truncated ? ", truncated" : ""}; ${result.elapsed_ms.toFixed(1)} ms ranking` +
    ` over ${result.index.files} files / ${result.index.chunks} chunks`;
  return blocks.length ? [...blocks, footer].join("\n\n") : `no matching places\n${footer}`;
}

/** The status bar item: its text (with a codicon) and tooltip, for a status, a start-up, or a failure. */
export function statusBarText(
  state: { kind: "starting" } | { kind: "stopped"; reason: string } | { kind: "ready"; status: StatusResult },
): { text: string; tooltip: string } {
  if (state.kind === "starting") return { text: "$(sync~spin) RAG: starting", tooltip: "rag_lsp: starting the server" };
  if (state.kind === "stopped") return { text: "$(error) RAG: stopped", tooltip: `rag_lsp: ${state.reason}` };
  const { status } = state;
  const indexing = status.indexing;
  const tooltip = [
    `rag_lsp ${status.version}: ${status.files} files, ${status.chunks} chunks in ${status.roots.length} ` +
      `${status.roots.length === 1 ? "folder" : "folders"}`,
    ...status.roots.map((r) => `${r.root}: ${r.files} files${languagesShort(r)}`),
    ...languageServersShort(status),
    "Click for the index status.",
  ].join("\n");
  if (indexing?.running) {
    const pct = indexing.total > 0 ? ` ${Math.floor((100 * indexing.done) / indexing.total)}%` : "";
    return { text: `$(sync~spin) RAG: indexing ${indexing.done}/${indexing.total}${pct}`, tooltip };
  }
  return { text: `$(database) RAG: ${status.files} files`, tooltip };
}

/** The index status as a Markdown page, one section per workspace folder. */
export function renderStatusDocument(status: StatusResult): string {
  const lines = [
    "# rag_lsp index status",
    "",
    `Server ${status.version} · ${status.files} files · ${status.chunks} chunks · ` +
      `${status.open_documents ?? 0} open documents`,
  ];
  const indexing = status.indexing;
  if (indexing) {
    lines.push("", indexing.running ? `Indexing: ${indexing.done} of ${indexing.total} files done.` :
      `Indexing: done (${indexing.done} of ${indexing.total} files in the last run).`);
  }
  for (const root of status.roots) lines.push("", ...rootSection(root));
  return lines.join("\n") + "\n";
}

function rootSection(root: RootStatus): string[] {
  const lines = [`## ${root.root}`, "", `- ${root.files} files, ${root.chunks} chunks, ${root.definitions ?? 0} definitions`];
  const languages = Object.entries(root.languages ?? {});
  if (languages.length) lines.push(`- languages: ${languages.map(([k, v]) => `${k} ${v}`).join(", ")}`);
  const skipped = Object.entries(root.skipped ?? {});
  lines.push(`- skipped: ${skipped.length ? skipped.map(([k, v]) => `${k} ${v}`).join(", ") : "none"}`);
  if (root.parse_errors) lines.push(`- parse errors: ${root.parse_errors}`);
  if (root.cache) lines.push(`- cache: \`${root.cache}\``);
  if (root.settings) lines.push(`- settings: \`${JSON.stringify(root.settings)}\``);
  for (const warning of [...(root.warnings ?? []), ...(root.settings_warnings ?? [])]) lines.push(`- warning: ${oneLine(warning)}`);
  const servers = root.language_servers;
  if (servers === undefined) {
    lines.push("- language servers: not reported by this rag-lsp (it predates language-server composition)");
  } else if (servers.length === 0) {
    lines.push("- language servers: none (the patterns answer for every language)");
  } else {
    lines.push("- language servers:", ...servers.map((server) => `  - ${languageServerLine(server)}`));
  }
  return lines;
}

/** What an entry's state means when no error says more. */
const STATE_NOTES: Record<string, string> = { idle: "starts on first need" };

/** States in which `last_error` is the current problem (elsewhere it is history, or empty). */
const TROUBLE_STATES = new Set(["missing", "disabled", "restarting", "down"]);

/**
 * One language server as a line: `pyright (python): ready, 1.1.414`,
 * `gopls (go): missing — no go language server on PATH (tried gopls)`, `rust-analyzer (rust): down — <error>`.
 */
export function languageServerLine(server: LanguageServerStatus): string {
  const name = server.server || "no server";
  const languages = server.languages?.length ? ` (${server.languages.join(", ")})` : "";
  const state = server.state || "unknown";
  const facts = [state];
  if (server.version) facts.push(server.version);
  if (server.restarts > 0) facts.push(`${server.restarts} ${server.restarts === 1 ? "restart" : "restarts"}`);
  const note = TROUBLE_STATES.has(state) ? (server.last_error ? oneLine(server.last_error) : "") : STATE_NOTES[state] ?? "";
  return `${name}${languages}: ${facts.join(", ")}${note ? ` — ${note}` : ""}`;
}

/** The tooltip's line about language servers: `language servers: pyright ready, gopls missing` (or nothing). */
function languageServersShort(status: StatusResult): string[] {
  const servers = status.language_servers ?? [];
  if (!servers.length) return [];
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const server of servers) {
    const part = `${server.server || server.languages.join("/")} ${server.state}`;
    if (!seen.has(part)) parts.push(part);
    seen.add(part);
  }
  return [`language servers: ${parts.join(", ")}`];
}

function languagesShort(root: RootStatus): string {
  const entries = Object.entries(root.languages ?? {}).sort((a, b) => b[1] - a[1]);
  return entries.length ? ` (${entries.map(([k, v]) => `${k} ${v}`).join(", ")})` : "";
}

/** A backtick fence longer than any run of backticks in `content`. */
export function fenceFor(content: string): string {
  const longest = Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  return "`".repeat(Math.max(3, longest + 1));
}

const FENCE_LANGUAGES: Record<string, string> = { text: "", tsx: "tsx", cpp: "cpp", c_sharp: "csharp" };

function fenceLanguage(language: string): string {
  return language in FENCE_LANGUAGES ? FENCE_LANGUAGES[language] : language;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

function formatMs(ms: number): string {
  return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
}

/** A short, file-name-safe title for a question (the context document's tab). */
export function documentTitle(question: string, max = 60): string {
  const text = oneLine(question).replace(/[\\/:*?"<>|#%]+/g, " ").replace(/\s+/g, " ").trim();
  return (text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text) || "context";
}
