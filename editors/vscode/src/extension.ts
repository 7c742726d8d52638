// The VS Code side of mapwright: starts `mapwright lsp`, forwards settings,
// and adds a few commands. All language intelligence lives in the server.
//
// VS Code command ids differ from the server's executeCommand ids on
// purpose: vscode-languageclient registers a VS Code command for every
// command the server advertises (`mapwright.optimize`, ...), and a clash
// with a contributed command would fail that registration.

import * as os from "os";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";

import {
  ServerCommand,
  explanationText,
  serverCommand,
  serverEnv,
  serverSettings,
  summarize,
} from "./results";

/** SecretStorage key of the LLM API key (never stored in settings.json). */
const SECRET_API_KEY = "mapwright.llm.apiKey";

const SERVER_COMMANDS: ServerCommand[] = ["mapwright.optimize", "mapwright.run", "mapwright.explain"];

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
/** Forwarders for server command ids the server did not register itself (code lenses use them). */
let fallbackCommands: vscode.Disposable[] = [];

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("Mapwright");
  status = vscode.window.createStatusBarItem("mapwright.status", vscode.StatusBarAlignment.Left, 10);
  status.name = "Mapwright";
  status.text = "$(beaker) Mapper";
  status.tooltip = "Mapwright: no run yet (click for the output)";
  status.command = "mapwright.showOutput";
  context.subscriptions.push(output, status);

  const updateStatusVisibility = () => {
    if (vscode.window.activeTextEditor?.document.languageId === "mapper") status.show();
    else status.hide();
  };
  updateStatusVisibility();

  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor(updateStatusVisibility),
    vscode.commands.registerCommand("mapwright.optimizeMapper", () =>
      forward("mapwright.optimize", "Optimizing mapper"),
    ),
    vscode.commands.registerCommand("mapwright.runMapper", () => forward("mapwright.run", "Running mapper")),
    vscode.commands.registerCommand("mapwright.explainMapper", () =>
      forward("mapwright.explain", "Explaining mapping decisions"),
    ),
    vscode.commands.registerCommand("mapwright.restartServer", () => restart(context)),
    vscode.commands.registerCommand("mapwright.showOutput", () => output.show(true)),
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

async function start(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration("mapwright");
  const command = serverCommand(config.get<string>("server.path"), os.homedir());
  const apiKey = await context.secrets.get(SECRET_API_KEY);
  const env = serverEnv(
    process.env,
    config.get<Record<string, unknown>>("server.extraEnv"),
    config.get<string>("llm.apiKeyEnv"),
    apiKey,
  );
  const serverOptions: ServerOptions = { command, args: ["lsp"], options: { env } };
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
  client = new LanguageClient("mapwright", "Mapwright", serverOptions, clientOptions);
  client.onDidChangeState((e) => {
    if (e.newState === State.Stopped) status.text = "$(debug-disconnect) Mapper: server stopped";
  });
  try {
    await client.start();
  } catch (err) {
    const message = `Could not start the mapwright language server (\`${command} lsp\`): ${String(err)}`;
    output.appendLine(message);
    const choice = await vscode.window.showErrorMessage(message, "Open Settings", "Show Output");
    if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "mapwright.server.path");
    } else if (choice === "Show Output") {
      output.show(true);
    }
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
  await start(context);
  status.text = "$(beaker) Mapper";
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
    status.tooltip = new vscode.MarkdownString(
      "**Last mapper " + command.replace("mapwright.", "") + "**\n\n```\n" + summary.detail.slice(0, 2000) + "\n```",
    );
    status.backgroundColor = summary.failed
      ? new vscode.ThemeColor("statusBarItem.errorBackground")
      : undefined;
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
