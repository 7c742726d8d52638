// The VS Code side of mapwright: starts `mapwright lsp`, forwards settings,
// and adds a few commands. All language intelligence lives in the server.
//
// VS Code command ids differ from the server's executeCommand ids on
// purpose: vscode-languageclient registers a VS Code command for every
// command the server advertises (`mapwright.optimize`, ...), and a clash
// with a contributed command would fail that registration.

import * as cp from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";
import {
  CloseAction,
  DocumentLinkRequest,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";

import {
  PROJECT_FILE,
  PROJECT_FILE_SELECTOR,
  ProjectInfo,
  ServerCommand,
  ServerState,
  explanationText,
  resolveExecutable,
  versionProblem,
  serverCommand,
  serverEnv,
  ReportPictures,
  reportHtml,
  reportPictures,
  serverSettings,
  serverStatusText,
  summarize,
} from "./results";

/** SecretStorage key of the LLM API key (never stored in settings.json). */
const SECRET_API_KEY = "mapwright.llm.apiKey";

const SERVER_COMMANDS: ServerCommand[] = ["mapwright.optimize", "mapwright.run", "mapwright.explain"];

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
/** The last command's result (shown once a command ran). */
let status: vscode.StatusBarItem;
/** The server's state and the app/machine the active mapper resolves to. */
let serverStatus: vscode.StatusBarItem;
let serverState: ServerState = "stopped";
let serverDetail = "";
let project: ProjectInfo | null | undefined;
/** The mapper document the status bar item describes. */
let lastMapper: vscode.TextDocument | undefined;
/** The last optimize report's pictures (shown by Mapper: Show Optimize Report). */
let lastReport: ReportPictures | undefined;
/** Forwarders for server command ids the server did not register itself (code lenses use them). */
let fallbackCommands: vscode.Disposable[] = [];

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("Mapwright");
  status = vscode.window.createStatusBarItem("mapwright.status", vscode.StatusBarAlignment.Left, 10);
  status.name = "Mapwright";
  status.text = "$(beaker) Mapper";
  status.tooltip = "Mapwright: no run yet (click for the output)";
  status.command = "mapwright.showOutput";
  serverStatus = vscode.window.createStatusBarItem("mapwright.server", vscode.StatusBarAlignment.Left, 11);
  serverStatus.name = "Mapwright Server";
  serverStatus.command = "mapwright.showOutput";
  context.subscriptions.push(output, status, serverStatus);
  setServerState("stopped");

  const updateStatusVisibility = () => {
    const editor = vscode.window.activeTextEditor;
    // Focus in an output channel (ours, say) keeps the items as they are.
    if (editor?.document.uri.scheme === "output") return;
    if (editor?.document.languageId === "mapper") {
      serverStatus.show();
      if (status.text !== "$(beaker) Mapper") status.show();
    } else {
      serverStatus.hide();
      status.hide();
    }
  };
  updateStatusVisibility();

  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor(() => {
      updateStatusVisibility();
      void refreshProject();
    }),
    // Diagnostics for the active mapper: the server has it open and knows its project.
    vscode.languages.onDidChangeDiagnostics((e) => {
      const active = vscode.window.activeTextEditor?.document;
      const doc = active?.languageId === "mapper" ? active : lastMapper;
      if (doc && e.uris.some((u) => u.toString() === doc.uri.toString())) {
        void refreshProject();
      }
    }),
    vscode.workspace.onDidSaveTextDocument((d) => {
      if (path.basename(d.uri.fsPath) === PROJECT_FILE || d.languageId === "mapper") void refreshProject();
    }),
    // Links to the description files a project file names, from the server
    // (project files stay out of the documentSelector: see PROJECT_FILE_SELECTOR).
    vscode.languages.registerDocumentLinkProvider(PROJECT_FILE_SELECTOR, {
      provideDocumentLinks: async (doc, token) => {
        const c = client;
        if (!c?.isRunning()) return [];
        const links = await c.sendRequest(
          DocumentLinkRequest.type,
          { textDocument: { uri: c.code2ProtocolConverter.asUri(doc.uri) } },
          token,
        );
        return (await c.protocol2CodeConverter.asDocumentLinks(links, token)) ?? [];
      },
    }),
    vscode.commands.registerCommand("mapwright.optimizeMapper", () =>
      forward("mapwright.optimize", "Optimizing mapper"),
    ),
    vscode.commands.registerCommand("mapwright.runMapper", () => forward("mapwright.run", "Running mapper")),
    vscode.commands.registerCommand("mapwright.explainMapper", () =>
      forward("mapwright.explain", "Explaining mapping decisions"),
    ),
    vscode.commands.registerCommand("mapwright.restartServer", () => restart(context)),
    vscode.commands.registerCommand("mapwright.showOutput", () => output.show(true)),
    vscode.commands.registerCommand("mapwright.showReport", () => showReport()),
    vscode.commands.registerCommand("mapwright.setApiKey", async () => {
      const key = await vscode.window.showInputBox({
        title: "LLM API key for the mapwright optimizer",
        prompt: "Stored in VS Code's secret storage and passed to the server in the environment variable named by mapwright.llm.apiKeyEnv.",
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) return;
      await context.secrets.store(SECRET_API_KEY, key);
      await restart(context);
    }),
    vscode.commands.registerCommand("mapwright.clearApiKey", async () => {
      await context.secrets.delete(SECRET_API_KEY);
      await restart(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      // Settings the server reads travel through didChangeConfiguration;
      // these only take effect in a new server process.
      if (
        e.affectsConfiguration("mapwright.server") ||
        e.affectsConfiguration("mapwright.llm.apiKeyEnv")
      ) {
        await restart(context);
      }
    }),
    { dispose: () => void stop() },
  );

  await start(context);
}

export async function deactivate(): Promise<void> {
  await stop();
}

/** Shows `state` (and `detail` in the tooltip) in the server status bar item. */
function setServerState(state: ServerState, detail = ""): void {
  serverState = state;
  serverDetail = detail;
  renderServerStatus();
}

function renderServerStatus(): void {
  serverStatus.text = serverStatusText(serverState, serverState === "running" ? project : undefined);
  const failed = serverState === "notFound" || serverState === "failed";
  serverStatus.backgroundColor = failed ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  serverStatus.command = failed ? "mapwright.restartServer" : "mapwright.showOutput";
  const lines = [`**Mapwright language server**: ${serverState}`];
  if (serverDetail) lines.push(serverDetail);
  if (serverState === "running") {
    lines.push(
      project?.path
        ? `Project: \`${project.path}\``
        : "No `mapwright.toml` for this file: settings `mapwright.app` / `mapwright.machine`.",
    );
  }
  lines.push(failed ? "Click to restart the server." : "Click for the output channel.");
  const tip = new vscode.MarkdownString(lines.join("\n\n"));
  serverStatus.tooltip = tip;
}

/** Asks the server which app/machine the active mapper resolves to (`mapwright/documentInfo`). */
async function refreshProject(): Promise<void> {
  const c = client;
  const active = vscode.window.activeTextEditor?.document;
  if (active?.languageId === "mapper") lastMapper = active;
  // With the focus elsewhere (the output), the status is the last mapper's.
  const doc = active?.languageId === "mapper" ? active : lastMapper;
  if (!c || c.state !== State.Running || !doc || doc.isClosed) return;
  try {
    const info = await c.sendRequest<{ project?: ProjectInfo | null }>("mapwright/documentInfo", {
      textDocument: { uri: c.code2ProtocolConverter.asUri(doc.uri) },
    });
    project = info?.project ?? null;
  } catch (err) {
    output.appendLine(`mapwright/documentInfo: ${String(err)}`);
    project = undefined;
  }
  renderServerStatus();
}

/** Tells the user the server cannot start and which setting fixes it (once per start). */
async function reportStartFailure(message: string): Promise<void> {
  output.appendLine(message);
  const choice = await vscode.window.showErrorMessage(message, "Open Settings", "Show Output");
  if (choice === "Open Settings") {
    await openServerPathSetting();
  } else if (choice === "Show Output") {
    output.show(true);
  }
}

/**
 * Opens the Settings editor on `mapwright.server.path`, in the scope that sets
 * it: the workspace's; else, in a remote window (code-server, SSH, WSL), the
 * remote machine's, because the User tab does not list machine settings there.
 */
async function openServerPathSetting(): Promise<void> {
  const query = { query: "mapwright.server.path" };
  const inspect = vscode.workspace.getConfiguration("mapwright").inspect<string>("server.path");
  if (inspect?.workspaceFolderValue !== undefined || inspect?.workspaceValue !== undefined) {
    await vscode.commands.executeCommand("workbench.action.openWorkspaceSettings", query);
  } else if (vscode.env.remoteName) {
    await vscode.commands.executeCommand("workbench.action.openRemoteSettings", query);
  } else {
    await vscode.commands.executeCommand("workbench.action.openSettings", query.query);
  }
}

/** Runs `<binary> --version`: a wrong binary is reported before the client spawns it as a server. */
function probeVersion(binary: string, env: Record<string, string>): Promise<string | undefined> {
  return new Promise((resolve) => {
    cp.execFile(binary, ["--version"], { env, timeout: 15_000 }, (err, stdout) => {
      const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
      const spawnError = err && typeof err.code !== "number" ? err.message : undefined;
      resolve(versionProblem(code, String(stdout), spawnError));
    });
  });
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration("mapwright");
  const configured = (config.get<string>("server.path") ?? "").trim();
  const command = serverCommand(configured, os.homedir());
  // Look the binary up first: spawning a missing one fails with a bare
  // ENOENT, and the user needs to know which setting to fix.
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd();
  const resolved = resolveExecutable(command, process.env.PATH, cwd, isExecutable, path.sep, path.delimiter);
  if (!resolved) {
    const where = configured
      ? `\`${command}\` (setting \`mapwright.server.path\`) is not an executable file`
      : "`mapwright` is not on PATH and the setting `mapwright.server.path` is empty";
    setServerState("notFound", `Not found: ${where}.`);
    void reportStartFailure(
      `Mapwright: the language server binary was not found: ${where}. ` +
        "Set `mapwright.server.path` to the `mapwright` binary (built with `cargo build -p mapwright`).",
    );
    return;
  }
  setServerState("starting", `\`${resolved} lsp\``);
  const apiKey = await context.secrets.get(SECRET_API_KEY);
  const env = serverEnv(
    process.env,
    config.get<Record<string, unknown>>("server.extraEnv"),
    config.get<string>("llm.apiKeyEnv"),
    apiKey,
  );
  const problem = await probeVersion(resolved, env);
  if (problem) {
    setServerState("failed", `\`${resolved}\` is not the mapwright binary: ${problem}.`);
    void reportStartFailure(
      `Mapwright: \`${resolved}\` (setting \`mapwright.server.path\`) is not the mapwright language server: ${problem}. ` +
        "Set `mapwright.server.path` to the `mapwright` binary.",
    );
    return;
  }
  const serverOptions: ServerOptions = { command: resolved, args: ["lsp"], options: { env } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "mapper" },
      { scheme: "untitled", language: "mapper" },
    ],
    initializationOptions: serverSettings(
      vscode.workspace.getConfiguration().get<Record<string, unknown>>("mapwright") ?? {},
    ),
    synchronize: { configurationSection: "mapwright" },
    outputChannel: output,
    // Start failures are reported once, by start() with the setting to fix.
    initializationFailedHandler: () => false,
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue, handled: !everRunning }),
      // A server that dies before it ever ran (a wrong binary at
      // mapwright.server.path) is not restarted: start() reports it once.
      // One that crashes later is restarted up to 4 times in 3 minutes.
      closed: () => {
        if (!everRunning) return { action: CloseAction.DoNotRestart, handled: true };
        const now = Date.now();
        crashes = crashes.filter((t) => now - t < 3 * 60 * 1000);
        crashes.push(now);
        if (crashes.length <= 4) return { action: CloseAction.Restart, handled: true };
        return {
          action: CloseAction.DoNotRestart,
          message:
            "The mapwright language server crashed 5 times in the last 3 minutes and will not be restarted " +
            "(Mapper: Restart Server; details in the Mapwright output).",
        };
      },
    },
    middleware: {
      workspace: {
        // Answer `workspace/configuration` without the extension-only keys.
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) return result;
          return result.map((r) =>
            r && typeof r === "object" && !Array.isArray(r) ? serverSettings(r as Record<string, unknown>) : r,
          );
        },
      },
    },
  };
  let everRunning = false;
  let crashes: number[] = [];
  const c = new LanguageClient("mapwright", "Mapwright", serverOptions, clientOptions);
  client = c;
  c.onDidChangeState((e) => {
    if (client !== c) return;
    if (e.newState === State.Running) {
      everRunning = true;
      setServerState("running", `\`${resolved} lsp\``);
      void refreshProject();
    } else if (e.newState === State.Starting) {
      setServerState("starting", `\`${resolved} lsp\``);
    } else if (e.newState === State.Stopped && serverState !== "failed") {
      setServerState("stopped", "Mapper: Restart Server starts it again.");
    }
  });
  try {
    await c.start();
  } catch (err) {
    setServerState("failed", `\`${resolved} lsp\` did not start: ${String(err)}`);
    await reportStartFailure(
      `Mapwright: could not start the language server \`${resolved} lsp\` (setting \`mapwright.server.path\`): ${String(err)}`,
    );
    return;
  }
  await registerFallbackCommands();
}

/** Server command ids used by code lenses, forwarded by us if the server did not advertise them. */
async function registerFallbackCommands(): Promise<void> {
  const known = new Set(await vscode.commands.getCommands(true));
  for (const id of SERVER_COMMANDS) {
    if (known.has(id)) continue;
    try {
      fallbackCommands.push(
        vscode.commands.registerCommand(id, (...args: unknown[]) => forward(id, id, args)),
      );
    } catch {
      // Registered meanwhile by the client: nothing to do.
    }
  }
}

async function stop(): Promise<void> {
  for (const d of fallbackCommands) d.dispose();
  fallbackCommands = [];
  const c = client;
  client = undefined;
  if (c && c.state !== State.Stopped) {
    try {
      await c.stop();
    } catch (err) {
      output.appendLine(`Stopping the server: ${String(err)}`);
    }
  }
}

async function restart(context: vscode.ExtensionContext): Promise<void> {
  output.appendLine("Restarting the mapwright language server…");
  await stop();
  project = undefined;
  await start(context);
}

/**
 * Runs one of the server's commands on the active mapper document via
 * `workspace/executeCommand` (arguments: the document URI), logs the result
 * and shows its summary in the status bar.
 */
async function forward(command: ServerCommand, title: string, args?: unknown[]): Promise<void> {
  const c = client;
  if (!c || c.state !== State.Running) {
    void vscode.window.showErrorMessage("The mapwright language server is not running (Mapper: Restart Server).");
    return;
  }
  const editor = vscode.window.activeTextEditor;
  let commandArgs = args && args.length > 0 ? args : undefined;
  if (!commandArgs) {
    if (!editor || editor.document.languageId !== "mapper") {
      void vscode.window.showWarningMessage("Open a mapper file first.");
      return;
    }
    commandArgs = [c.code2ProtocolConverter.asUri(editor.document.uri)];
  }
  status.text = `$(sync~spin) Mapper: ${title}…`;
  status.show();
  output.appendLine(`[${new Date().toISOString()}] ${command} ${JSON.stringify(commandArgs)}`);
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Mapper: ${title}` },
      () => c.sendRequest(ExecuteCommandRequest.type, { command, arguments: commandArgs }),
    );
    const summary = summarize(command, result);
    output.appendLine(summary.detail);
    status.text = summary.text;
    const tooltip = new vscode.MarkdownString(
      "**Last mapper " + command.replace("mapwright.", "") + "**\n\n```\n" + summary.detail.slice(0, 2000) + "\n```",
    );
    status.backgroundColor = summary.failed
      ? new vscode.ThemeColor("statusBarItem.errorBackground")
      : undefined;
    if (command === "mapwright.optimize") {
      lastReport = reportPictures(result);
      // Clicking the status bar item opens the report when there is one.
      status.command = lastReport ? "mapwright.showReport" : "mapwright.showOutput";
      if (lastReport) tooltip.appendMarkdown("\n\nClick to show the optimize report.");
    }
    status.tooltip = tooltip;
    if (command === "mapwright.explain") {
      const { text, language } = explanationText(result);
      const doc = await vscode.workspace.openTextDocument({ content: text, language });
      await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    output.appendLine(`${command} failed: ${message}`);
    status.text = `$(error) Mapper: ${command.replace("mapwright.", "")} failed`;
    status.tooltip = message;
    status.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
    void vscode.window.showErrorMessage(`Mapper: ${title} failed: ${message}`);
  }
}

/**
 * Shows the last optimize report's pictures (the trajectory plot and the
 * best run's timeline) in a webview beside the mapper.
 */
function showReport(): void {
  const pictures = lastReport;
  if (!pictures) {
    void vscode.window.showInformationMessage(
      "No optimize report yet: run Mapper: Optimize This Mapper (with mapwright.optimize.saveRuns on).",
    );
    return;
  }
  const files = [pictures.plot, pictures.timeline].filter((f): f is string => !!f);
  const panel = vscode.window.createWebviewPanel(
    "mapwright.report",
    "Mapper Optimize Report",
    vscode.ViewColumn.Beside,
    { localResourceRoots: files.map((f) => vscode.Uri.file(path.dirname(f))) },
  );
  panel.webview.html = reportHtml(
    pictures,
    (file) => panel.webview.asWebviewUri(vscode.Uri.file(file)).toString(),
    panel.webview.cspSource,
  );
}
