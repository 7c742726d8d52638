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
