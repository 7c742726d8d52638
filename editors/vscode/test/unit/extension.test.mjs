// Unit tests of the extension's static parts (manifest, grammar, language
// configuration) and of its pure helpers (src/results.ts), in plain Node:
// no VS Code instance needed.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import * as esbuild from "esbuild";
import oniguruma from "vscode-oniguruma";
import textmate from "vscode-textmate";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(import.meta.url);
const read = (p) => readFileSync(path.join(root, p), "utf8");
const manifest = JSON.parse(read("package.json"));

/** Loads a TypeScript module of src/ through esbuild (it must not import `vscode`). */
function loadTs(rel) {
  const { outputFiles } = esbuild.buildSync({
    entryPoints: [path.join(root, rel)],
    bundle: true,
    format: "cjs",
    platform: "node",
    write: false,
  });
  const module = { exports: {} };
  new Function("module", "exports", "require", outputFiles[0].text)(module, module.exports, require);
  return module.exports;
}

// Every reserved word of the DSL (LANGUAGE.md, "Lexical structure") and the
// scope the grammar gives it outside a statement.
const KEYWORDS = {
  "keyword.other.statement.mapper": "Task Region Layout InstanceLimit CollectMemory IndexTaskMap SingleTaskMap ControlReplicate",
  "support.constant.constraint.mapper": "F_order C_order AOS SOA Compact Align Exact",
  "support.function.property.mapper":
    "size split merge swap slice reverse balance_split auto_split greedy_split volume has len ipoint ispace parent processor",
  "constant.language.processor-kind.mapper": "CPU GPU IO PY PROC OMP",
  "constant.language.memory-kind.mapper": "SYSMEM FBMEM RDMEM ZCMEM SOCKMEM VIRTUAL",
  "storage.type.mapper": "int bool IPoint ISpace MSpace",
  "constant.language.boolean.mapper": "True False",
  "keyword.control.loop.mapper": "for in",
  "keyword.control.return.mapper": "return",
  "storage.type.function.mapper": "def",
  "support.function.builtin.tuple.mapper": "tuple",
  "support.function.builtin.print.mapper": "print",
};

async function loadGrammar() {
  const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p) => new oniguruma.OnigScanner(p),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async () =>
      textmate.parseRawGrammar(read("syntaxes/mapper.tmLanguage.json"), "mapper.tmLanguage.json"),
  });
  return registry.loadGrammar("source.mapper");
}

/** The scopes of the token at `column` of `line`. */
function scopesAt(grammar, line, column) {
  const { tokens } = grammar.tokenizeLine(line, textmate.INITIAL);
  const t = tokens.find((t) => t.startIndex <= column && column < t.endIndex);
  return t ? t.scopes : [];
}

test("mapper files indent as the formatter does: four spaces", () => {
  // The formatter has one layout (the server's README says why it ignores
  // FormattingOptions); typing with other settings would fight it.
  const defaults = manifest.contributes.configurationDefaults["[mapper]"];
  assert.equal(defaults["editor.tabSize"], 4);
  assert.equal(defaults["editor.insertSpaces"], true);
  assert.equal(defaults["editor.detectIndentation"], false);
});

test("language id, file associations and grammar are contributed", () => {
  const [lang] = manifest.contributes.languages;
  assert.equal(lang.id, "mapper");
  assert.deepEqual(lang.extensions.sort(), [".mapper", ".mappings"]);
  assert.deepEqual(lang.filenames, ["mappings"]);
  assert.deepEqual(lang.filenamePatterns, ["*_mappings"]);
  const [grammar] = manifest.contributes.grammars;
  assert.equal(grammar.language, "mapper");
  assert.equal(grammar.scopeName, "source.mapper");
  assert.ok(manifest.activationEvents.includes("onLanguage:mapper"));
});

test("the issue's commands are contributed, each registered in the extension", () => {
  const source = read("src/extension.ts");
  const titles = Object.fromEntries(
    manifest.contributes.commands.map((c) => [`${c.category}: ${c.title}`, c.command]),
  );
  for (const title of [
    "Mapper: Optimize This Mapper",
    "Mapper: Run Mapper",
    "Mapper: Explain Mapping Decisions",
    "Mapper: Restart Server",
    "Mapper: Show Optimize Report",
  ]) {
    assert.ok(titles[title], `missing command "${title}"`);
  }
  for (const { command } of manifest.contributes.commands) {
    assert.ok(source.includes(`registerCommand("${command}"`), `${command} is not registered`);
    // The client registers the server's own command ids; a clash would break it.
    assert.ok(!["mapwright.optimize", "mapwright.run", "mapwright.explain"].includes(command));
  }
  for (const id of ["mapwright.optimize", "mapwright.run", "mapwright.explain"]) {
    assert.ok(source.includes(`"${id}"`), `${id} is not forwarded`);
  }
});

test("settings cover server, app, machine, runtime, proposer and LLM endpoint, never the key", () => {
  const props = manifest.contributes.configuration.properties;
  for (const key of [
    "mapwright.server.path",
    "mapwright.app",
    "mapwright.machine",
    "mapwright.runtimeUrl",
    "mapwright.proposer",
    "mapwright.llm.baseUrl",
    "mapwright.llm.model",
    "mapwright.llm.apiKeyEnv",
    "mapwright.optimize.minGain",
  ]) {
    assert.ok(props[key], `missing setting ${key}`);
  }
  const secretLike = Object.keys(props).filter((k) => /key|token|secret|password/i.test(k));
  assert.deepEqual(secretLike, ["mapwright.llm.apiKeyEnv"]);
});

test("every keyword class gets its scope, and near-miss identifiers do not", async () => {
  const grammar = await loadGrammar();
  for (const [scope, words] of Object.entries(KEYWORDS)) {
    for (const word of words.split(" ")) {
      const line = `x = ${word};`;
      assert.ok(scopesAt(grammar, line, 4).includes(scope), `${word}: ${scopesAt(grammar, line, 4)}`);
    }
  }
  for (const name of ["sizes", "task", "GPU2", "Tasks", "_Align", "int8"]) {
    const scopes = scopesAt(grammar, `x = ${name};`, 4);
    assert.deepEqual(scopes, ["source.mapper", "variable.other.mapper"], name);
  }
});

test("indentation rules indent `def` bodies and outdent at `}`", () => {
  const config = JSON.parse(read("language-configuration.json"));
  const increase = new RegExp(config.indentationRules.increaseIndentPattern);
  const decrease = new RegExp(config.indentationRules.decreaseIndentPattern);
  assert.ok(increase.test("def linearblock(Task task) {"));
  assert.ok(increase.test("def f(Task t) { # body follows"));
  assert.ok(increase.test("    upper = tuple("));
  assert.ok(!increase.test("Task * GPU;"));
  assert.ok(!increase.test("# a comment with {"));
  assert.ok(!increase.test('print("{", x);'));
  assert.ok(decrease.test("}"));
  assert.ok(decrease.test("    ];"));
  assert.ok(!decrease.test("    return x;"));
  const word = new RegExp(config.wordPattern, "g");
  assert.deepEqual("m_2d.auto_split(0, 12)".match(word), ["m_2d", "auto_split", "0", "12"]);
  assert.deepEqual(config.comments, { lineComment: "#" });
});

test("results are summarized for the status bar", () => {
  const { summarize, explanationText, formatSeconds } = loadTs("src/results.ts");
  assert.equal(formatSeconds(0.0123), "12.3 ms");
  assert.equal(formatSeconds(4.5678), "4.57 s");
  assert.equal(summarize("mapwright.run", null).text, "$(check) Mapper run: done");
  assert.equal(
    summarize("mapwright.run", { elapsed_s: 0.0123, summary: "ok" }).text,
    "$(check) Mapper run: 12.3 ms",
  );
  assert.equal(
    summarize("mapwright.optimize", { best_normalized: 1.234 }).text,
    "$(check) Mapper optimize: 1.23x",
  );
  const failed = summarize("mapwright.run", { ok: false, error: "slice processor index out of bound\nmore" });
  assert.equal(failed.failed, true);
  assert.equal(failed.text, "$(error) Mapper run: slice processor index out of bound");
  assert.equal(summarize("mapwright.run", "Elapsed 3 s\nrest").text, "$(check) Mapper run: Elapsed 3 s");
  assert.deepEqual(explanationText("| task | proc |"), { text: "| task | proc |", language: "markdown" });
  assert.deepEqual(explanationText({ markdown: "# x" }), { text: "# x", language: "markdown" });
  assert.equal(explanationText({ a: 1 }).language, "json");
});

test("server settings, command and environment", () => {
  const { serverSettings, serverCommand, serverEnv } = loadTs("src/results.ts");
  const section = {
    server: { path: "/x" },
    trace: { server: "off" },
    app: "circuit",
    llm: { baseUrl: "http://localhost:8000/v1", model: "m", apiKeyEnv: "K" },
    get: () => 1,
  };
  assert.deepEqual(serverSettings(section), {
    app: "circuit",
    llm: { baseUrl: "http://localhost:8000/v1", model: "m", apiKeyEnv: "K" },
  });
  assert.equal(serverCommand("", "/home/u"), "mapwright");
  assert.equal(serverCommand(undefined, "/home/u"), "mapwright");
  assert.equal(serverCommand("~/bin/mapwright", "/home/u"), "/home/u/bin/mapwright");
  assert.equal(serverCommand("/opt/mapwright", "/home/u"), "/opt/mapwright");
  const env = serverEnv({ PATH: "/bin", U: undefined }, { RUST_LOG: "debug" }, "K", "secret");
  assert.deepEqual(env, { PATH: "/bin", RUST_LOG: "debug", K: "secret" });
  assert.deepEqual(serverEnv({}, undefined, "K", undefined), {});
});

test("the server binary is looked up the way it is spawned", () => {
  const { resolveExecutable } = loadTs("src/results.ts");
  const present = new Set(["/usr/bin/mapwright", "/work/target/debug/mapwright"]);
  const isExe = (p) => present.has(p);
  assert.equal(resolveExecutable("mapwright", "/bin:/usr/bin", "/w", isExe), "/usr/bin/mapwright");
  assert.equal(resolveExecutable("mapwright", "/bin:/opt", "/w", isExe), undefined);
  assert.equal(resolveExecutable("mapwright", undefined, "/w", isExe), undefined);
  assert.equal(resolveExecutable("/work/target/debug/mapwright", "", "/w", isExe), "/work/target/debug/mapwright");
  assert.equal(resolveExecutable("/nope/mapwright", "/usr/bin", "/w", isExe), undefined);
  assert.equal(resolveExecutable("target/debug/mapwright", "", "/work", isExe), "/work/target/debug/mapwright");
});

test("the server status names the state, the app and the machine", () => {
  const { serverStatusText } = loadTs("src/results.ts");
  assert.equal(
    serverStatusText("running", { app: "cannon", machine: "p100x4" }),
    "$(check) Mapwright: cannon on p100x4",
  );
  assert.equal(serverStatusText("running", { app: "cannon", machine: null }), "$(check) Mapwright: cannon on default machine");
  assert.equal(serverStatusText("running", null), "$(check) Mapwright: no app/machine");
  assert.equal(serverStatusText("notFound", null), "$(error) Mapwright: server not found");
  assert.match(serverStatusText("starting", null), /starting/);
});

test("a binary that is not mapwright is told apart by --version", () => {
  const { versionProblem } = loadTs("src/results.ts");
  assert.equal(versionProblem(0, "mapwright 0.1.0\n"), undefined);
  assert.match(versionProblem(1, "false (GNU coreutils) 9.1\n"), /exited with 1, printing `false \(GNU coreutils\) 9.1`/);
  assert.match(versionProblem(0, "Python 3.11\n"), /not `mapwright <version>`/);
  assert.match(versionProblem(null, "", "timed out"), /failed: timed out/);
});

test("project files get document links from the server without being synced as mappers", () => {
  const { PROJECT_FILE, PROJECT_FILE_SELECTOR } = loadTs("src/results.ts");
  assert.equal(PROJECT_FILE, "mapwright.toml");
  assert.deepEqual(PROJECT_FILE_SELECTOR, { scheme: "file", pattern: "**/mapwright.toml" });
  // The extension starts in a workspace with a project file, so its links
  // work before any mapper is opened.
  assert.ok(manifest.activationEvents.includes(`workspaceContains:${PROJECT_FILE_SELECTOR.pattern}`));
  const source = read("src/extension.ts");
  assert.match(source, /registerDocumentLinkProvider\(PROJECT_FILE_SELECTOR,/);
  assert.match(source, /DocumentLinkRequest\.type/);
  // The client's documentSelector (what is synced) names mappers only.
  const selector = source.match(/documentSelector: \[([^\]]*)\]/)[1];
  assert.doesNotMatch(selector, /toml|PROJECT_FILE/);
  assert.match(selector, /language: "mapper"/);
});

test("an optimize result's pictures become the report view, images from the webview only", () => {
  const { reportPictures, reportHtml } = loadTs("src/results.ts");
  assert.equal(reportPictures({ summary: "done", report_dir: null }), undefined);
  assert.equal(reportPictures("text"), undefined);
  assert.deepEqual(reportPictures({ report_svg: "/r/report.svg", timeline_svg: null }), { plot: "/r/report.svg" });
  const pictures = reportPictures({ report_svg: "/r/report.svg", timeline_svg: "/r/report.timeline.svg" });
  assert.deepEqual(pictures, { plot: "/r/report.svg", timeline: "/r/report.timeline.svg" });
  const html = reportHtml(pictures, (f) => `vscode-webview://x${f}`, "vscode-webview://x");
  assert.ok(html.includes('<img src="vscode-webview://x/r/report.svg"'), html);
  assert.ok(html.includes('<img src="vscode-webview://x/r/report.timeline.svg"'), html);
  assert.ok(html.includes("img-src vscode-webview://x;"), html);
  assert.ok(!html.includes("<script"), html);
  const simulated = reportHtml({ plot: "/r/a<b>.svg" }, (f) => f, "s");
  assert.ok(simulated.includes("No timeline"), simulated);
  assert.ok(simulated.includes("/r/a&#60;b&#62;.svg"), simulated);
});
