// Pure helpers (no `vscode` import) so that unit tests can load them in
// plain Node: what the status bar says about a command's result, and which
// settings travel to the server.

export type ServerCommand = "mapwright.optimize" | "mapwright.run" | "mapwright.explain";

export interface Summary {
  /** Status bar text (with a codicon). */
  text: string;
  /** Longer text for the tooltip and the output channel. */
  detail: string;
  /** True when the result reports a failure. */
  failed: boolean;
}

const VERB: Record<ServerCommand, string> = {
  "mapwright.optimize": "optimize",
  "mapwright.run": "run",
  "mapwright.explain": "explain",
};

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(v: unknown): v is { [key: string]: Json } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function firstLine(s: string, max = 60): string {
  const line = s.split(/\r?\n/).find((l) => l.trim() !== "") ?? "";
  return line.length > max ? line.slice(0, max - 1) + "…" : line.trim();
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function pick(o: { [key: string]: Json }, keys: string[]): Json | undefined {
  for (const k of keys) {
    if (k in o && o[k] !== null && o[k] !== undefined) return o[k];
  }
  return undefined;
}

/** Seconds as a short human string: `850 µs`, `12.3 ms`, `4.56 s`. */
export function formatSeconds(s: number): string {
  if (s < 1e-3) return `${(s * 1e6).toPrecision(3)} µs`;
  if (s < 1) return `${(s * 1e3).toPrecision(3)} ms`;
  return `${s.toPrecision(3)} s`;
}

/**
 * What the status bar shows after `command` returned `result`. The server
 * owns the result's shape; this reads the common fields (`summary`,
 * `message`, `error`, `best_normalized`, `normalized`, `elapsed_s`,
 * `throughput`) and falls back to "done".
 */
export function summarize(command: ServerCommand, result: unknown): Summary {
  const verb = VERB[command];
  const detail =
    typeof result === "string" ? result : JSON.stringify(result ?? null, null, 2) ?? "null";
  if (typeof result === "string") {
    return { text: `$(check) Mapper ${verb}: ${firstLine(result)}`, detail, failed: false };
  }
  if (!isObject(result)) {
    return { text: `$(check) Mapper ${verb}: done`, detail, failed: false };
  }
  const error = pick(result, ["error", "failure"]);
  const failed =
    result["ok"] === false ||
    result["success"] === false ||
    (typeof error === "string" && error !== "") ||
    isObject(error);
  const parts: string[] = [];
  const normalized = num(pick(result, ["best_normalized", "bestNormalized", "normalized", "speedup"]));
  if (normalized !== undefined) parts.push(`${normalized.toFixed(2)}x`);
  const seconds = num(pick(result, ["elapsed_s", "elapsedSeconds", "seconds", "time_s"]));
  if (seconds !== undefined) parts.push(formatSeconds(seconds));
  const throughput = num(pick(result, ["throughput"]));
  if (throughput !== undefined) parts.push(`${throughput.toPrecision(4)}/s`);
  const text = pick(result, ["summary", "message"]);
  if (parts.length === 0 && typeof text === "string") parts.push(firstLine(text));
  if (failed && parts.length === 0) {
    parts.push(typeof error === "string" ? firstLine(error) : "failed");
  }
  if (parts.length === 0) parts.push("done");
  const icon = failed ? "$(error)" : "$(check)";
  return { text: `${icon} Mapper ${verb}: ${parts.join(", ")}`, detail, failed };
}

/** The text to show for "Explain mapping decisions": markdown if the server sent some. */
export function explanationText(result: unknown): { text: string; language: string } {
  if (typeof result === "string") return { text: result, language: "markdown" };
  if (isObject(result)) {
    const md = pick(result, ["markdown", "text", "table", "explanation"]);
    if (typeof md === "string") return { text: md, language: "markdown" };
  }
  return { text: JSON.stringify(result ?? null, null, 2) ?? "null", language: "json" };
}

/** Keys of the `mapwright` configuration that only the extension uses. */
const CLIENT_ONLY = new Set(["server", "trace"]);

/**
 * The settings object sent as `initializationOptions` (and answered to
 * `workspace/configuration`): the `mapwright` section less the
 * extension-only keys. The LLM API key is never part of it: only the name
 * of the environment variable (`llm.apiKeyEnv`) travels.
 */
export function serverSettings(section: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(section)) {
    if (!CLIENT_ONLY.has(k) && typeof v !== "function") out[k] = v;
  }
  return out;
}

/** `~/bin/mapwright` -> `/home/me/bin/mapwright`; empty -> `mapwright` (found on PATH). */
export function serverCommand(configured: string | undefined, home: string | undefined): string {
  const p = (configured ?? "").trim();
  if (p === "") return "mapwright";
  if (home && (p === "~" || p.startsWith("~/"))) return home + p.slice(1);
  return p;
}

/** Environment of the server process: ours, the configured extras, and the API key if one is stored. */
export function serverEnv(
  base: Record<string, string | undefined>,
  extra: Record<string, unknown> | undefined,
  apiKeyEnv: string | undefined,
  apiKey: string | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (typeof v === "string") env[k] = v;
  for (const [k, v] of Object.entries(extra ?? {})) if (typeof v === "string") env[k] = v;
  const name = (apiKeyEnv ?? "").trim();
  if (name !== "" && apiKey) env[name] = apiKey;
  return env;
}

/**
 * Where `command` resolves the way the server process would be spawned: a
 * path (containing a separator) as is, relative ones against `cwd`; a bare
 * name through `PATH`. `undefined` when no executable file is there.
 * `isExecutable` is injected (fs access with X_OK in the extension).
 */
export function resolveExecutable(
  command: string,
  pathEnv: string | undefined,
  cwd: string,
  isExecutable: (p: string) => boolean,
  sep = "/",
  delimiter = ":",
): string | undefined {
  if (command.includes("/") || command.includes(sep)) {
    const p = command.startsWith("/") || /^[A-Za-z]:[\\/]/.test(command) ? command : cwd + sep + command;
    return isExecutable(p) ? p : undefined;
  }
  for (const dir of (pathEnv ?? "").split(delimiter)) {
    if (dir === "") continue;
    const p = dir.endsWith(sep) ? dir + command : dir + sep + command;
    if (isExecutable(p)) return p;
  }
  return undefined;
}

/** The server's lifecycle as the status bar shows it. */
export type ServerState = "starting" | "running" | "stopped" | "notFound" | "failed";

/** The project a document resolves to (`mapwright/documentInfo`'s `project`). */
export interface ProjectInfo {
  path?: string | null;
  app?: string | null;
  machine?: string | null;
}

/** Text of the server status bar item: state, then the app and machine in use. */
export function serverStatusText(state: ServerState, project: ProjectInfo | undefined | null): string {
  switch (state) {
    case "starting":
      return "$(loading~spin) Mapwright: starting";
    case "stopped":
      return "$(debug-disconnect) Mapwright: stopped";
    case "notFound":
      return "$(error) Mapwright: server not found";
    case "failed":
      return "$(error) Mapwright: server failed";
    case "running": {
      const app = project?.app ?? undefined;
      const machine = project?.machine ?? undefined;
      if (!app && !machine) return "$(check) Mapwright: no app/machine";
      return `$(check) Mapwright: ${app ?? "no app"} on ${machine ?? "default machine"}`;
    }
  }
}

/**
 * Why the output of `<binary> --version` shows it is not a mapwright server
 * binary, or `undefined` when it is (`mapwright 0.1.0`).
 */
export function versionProblem(exitCode: number | null, stdout: string, error?: string): string | undefined {
  const first = stdout.trim().split("\n")[0] ?? "";
  if (exitCode === 0 && /^mapwright \S+/.test(first)) return undefined;
  if (error) return `\`--version\` failed: ${error}`;
  const shown = first ? `, printing \`${first.slice(0, 80)}\`` : "";
  return `\`--version\` exited with ${exitCode ?? "a signal"}${shown}, not \`mapwright <version>\``;
}

/** The project file's name (`mapwright.toml`). */
export const PROJECT_FILE = "mapwright.toml";

/**
 * The documents whose links the server provides besides mappers: project
 * files (the description files they name). Kept out of the client's
 * documentSelector: the server must not sync and analyse them as mappers,
 * so the extension asks for their links itself (`textDocument/documentLink`
 * with the URI; the server reads the file).
 */
export const PROJECT_FILE_SELECTOR = { scheme: "file", pattern: `**/${PROJECT_FILE}` };

/** The optimize report's pictures the server wrote into the run folder. */
export interface ReportPictures {
  /** The trajectory plot (`report.svg`). */
  plot: string;
  /** The best run's per-processor timeline, where that run was measured. */
  timeline?: string;
}

/**
 * The pictures an optimize result names (`report_svg`, `timeline_svg`), or
 * `undefined` when it names none (no run folder: `mapwright.optimize.saveRuns`
 * off).
 */
export function reportPictures(result: unknown): ReportPictures | undefined {
  if (!isObject(result)) return undefined;
  const plot = result["report_svg"];
  if (typeof plot !== "string" || plot === "") return undefined;
  const timeline = result["timeline_svg"];
  return typeof timeline === "string" && timeline !== "" ? { plot, timeline } : { plot };
}

/** Escapes text for HTML. */
function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The report view's page: the plot, then the timeline, each an `<img>` of
 * its webview URI (`src` maps a file to it), under a Content-Security-Policy
 * that allows images from `cspSource` only.
 */
export function reportHtml(
  pictures: ReportPictures,
  src: (file: string) => string,
  cspSource: string,
): string {
  const figure = (file: string, caption: string) =>
    `<figure><img src="${escapeHtml(src(file))}" alt="${escapeHtml(caption)}">` +
    `<figcaption>${escapeHtml(caption)}: ${escapeHtml(file)}</figcaption></figure>`;
  const timeline = pictures.timeline
    ? figure(pictures.timeline, "The best run's timeline, as Realm measured it")
    : "<p>No timeline: the best candidate ran on the simulator, which measures nothing.</p>";
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${cspSource}; style-src 'unsafe-inline';">
<style>body{background:#fff;color:#222;font-family:sans-serif}img{max-width:100%}figure{margin:0 0 16px 0}</style>
</head><body>
${figure(pictures.plot, "Trajectory")}
${timeline}
</body></html>`;
}
