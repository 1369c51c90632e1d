// VS Code settings → what the server is sent, and how the server is started. No `vscode` import.

import * as fs from "fs";
import * as path from "path";

/** Reads one setting below `ragLsp.` (VS Code's `WorkspaceConfiguration.get` fits). */
export type SettingsReader = (key: string) => unknown;

/** The settings the server knows (docs/protocol.md "Settings"), in the server's camelCase. */
export const SERVER_SETTING_KEYS = [
  "budgetTokens",
  "topK",
  "ignore",
  "languages",
  "maxFileBytes",
  "languageServers",
  "languageServerTimeoutMs",
  "languageServerCalls",
  "languageServerBudgetMs",
] as const;

/**
 * Settings that change how the server is started: a change restarts it instead of being sent to it. The cache
 * directory is one: the server writes only inside its roots and the cache root it was started with
 * (`--cache-dir`), and ignores a client's `cacheDir` outside them (docs/protocol.md, `cacheDir`).
 */
export const LAUNCH_SETTING_KEYS = ["server.command", "server.pythonPath", "server.args", "cacheDir"] as const;

const DEFAULTS: Record<string, unknown> = {
  budgetTokens: 4000,
  topK: 10,
  ignore: [],
  languages: {},
  maxFileBytes: 1048576,
  languageServers: {},
  languageServerTimeoutMs: 1500,
  languageServerCalls: 4,
  languageServerBudgetMs: 500,
};

/**
 * The server's settings, complete: every known key is sent (defaults included) because the server applies an
 * update on top of the previous one, so a setting reset in VS Code must be sent as its default.
 * `languageServers` is sent even when empty: the server replaces the client's previous value with it, so a
 * language removed here is removed there (the operator file `.rag-lsp.toml` still overlays it key by key).
 */
export function serverSettings(read: SettingsReader): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_SETTING_KEYS) {
    const value = read(key);
    out[key] = value === undefined ? DEFAULTS[key] : value;
  }
  if (!isPlainObject(out.languageServers)) out.languageServers = {};
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export interface LaunchSpec {
  command: string;
  args: string[];
  /** How the user names it in messages: `rag-lsp serve`, `/usr/bin/python3 -m rag_lsp.cli serve`. */
  display: string;
  /** Which setting chose the command, for the message when it is missing. */
  setting: "ragLsp.server.command" | "ragLsp.server.pythonPath";
}

/**
 * How to start the server: `<python> -m rag_lsp.cli serve` when a Python is set, else `<command> serve`; with
 * `--cache-dir` when `ragLsp.cacheDir` names one (blank means the default).
 */
export function launchSpec(read: SettingsReader): LaunchSpec {
  const cacheDir = asString(read("cacheDir"));
  const extra = [...(cacheDir ? ["--cache-dir", cacheDir] : []), ...asStringList(read("server.args"))];
  const python = asString(read("server.pythonPath"));
  if (python) {
    const args = ["-m", "rag_lsp.cli", "serve", ...extra];
    return { command: python, args, display: [python, ...args].join(" "), setting: "ragLsp.server.pythonPath" };
  }
  const command = asString(read("server.command")) || "rag-lsp";
  const args = ["serve", ...extra];
  return { command, args, display: [command, ...args].join(" "), setting: "ragLsp.server.command" };
}

/** The shell command that installs the server, for the "not found" message. */
export const INSTALL_COMMAND = "python3 -m pip install <path to a rag_lsp checkout>";

/**
 * Where `command` resolves to: itself when it contains a slash, else the first executable of that name on
 * `pathVariable`; null when there is none. `isExecutable` is injectable for tests.
 */
export function resolveExecutable(
  command: string,
  pathVariable: string | undefined,
  isExecutable: (file: string) => boolean = defaultIsExecutable,
): string | null {
  if (command.includes("/") || command.includes(path.sep)) {
    return isExecutable(command) ? command : null;
  }
  for (const dir of (pathVariable ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

/** The error shown when the server cannot be started: what was tried, and how to install or point at it. */
export function missingServerMessage(spec: LaunchSpec, detail?: string): string {
  const what =
    spec.setting === "ragLsp.server.pythonPath"
      ? `rag_lsp could not be started with \`${spec.display}\`${detail ? ` (${detail})` : ""}.`
      : `The rag_lsp server \`${spec.command}\` was not found${detail ? ` (${detail})` : ""}.`;
  return (
    `${what} Install it with \`${INSTALL_COMMAND}\`, ` +
    `then set \`ragLsp.server.command\` to its \`rag-lsp\` executable (or \`ragLsp.server.pythonPath\` to that Python).`
  );
}

function asString(value: unknown): string {
  return typeof value === "string" ? value.trim() : "";
}

function asStringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function defaultIsExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Why the server described by `spec` cannot start, or null when it looks startable: the command is not an
 * executable on PATH, or the Python is missing or cannot import rag_lsp. Quick (one `python -c` at most).
 */
export async function probeServer(spec: LaunchSpec, pathVariable: string | undefined): Promise<string | null> {
  const resolved = resolveExecutable(spec.command, pathVariable);
  if (!resolved) {
    return spec.setting === "ragLsp.server.pythonPath" ? `no Python at ${spec.command}` : "not an executable on PATH";
  }
  if (spec.setting !== "ragLsp.server.pythonPath") return null;
  const { execFile } = await import("child_process");
  return new Promise((resolve) => {
    execFile(resolved, ["-c", "import rag_lsp"], { timeout: 20000 }, (error, _stdout, stderr) => {
      resolve(error ? `${spec.command} cannot import rag_lsp: ${lastLine(String(stderr)) || error.message}` : null);
    });
  });
}

function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return lines[lines.length - 1] ?? "";
}
