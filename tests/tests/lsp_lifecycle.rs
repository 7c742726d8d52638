//! `mapwright lsp` end to end: initialization and capability negotiation,
//! shutdown, settings, project files, workspace folders, robustness.

mod lsp_support;

use lsp_support::*;
use mapwright_grammar::line_index::Encoding;
use serde_json::{json, Value};

#[test]
fn initialize_negotiates_utf16_by_default_and_utf8_when_offered() {
    let mut s = Server::spawn();
    let r = s.request("initialize", json!({"processId": null, "capabilities": {}}));
    assert_eq!(r["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(r["serverInfo"]["name"], "mapwright");
    assert_eq!(s.shutdown(), Some(0));

    let s = Server::start_with(
        json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}}),
        Value::Null,
        None,
    );
    assert_eq!(s.encoding, Encoding::Utf8);
    // Neovim 0.7 offers nothing: UTF-16.
    let s = Server::start_with(
        json!({"general": {"positionEncodings": ["utf-32"]}}),
        Value::Null,
        None,
    );
    assert_eq!(s.encoding, Encoding::Utf16);
}

#[test]
fn capabilities_cover_every_feature() {
    let mut s = Server::spawn();
    let r = s.request("initialize", json!({"processId": null, "capabilities": {}}));
    let caps = &r["capabilities"];
    assert_eq!(caps["textDocumentSync"]["change"], 2, "incremental sync");
    assert_eq!(caps["textDocumentSync"]["openClose"], true);
    assert!(caps["textDocumentSync"]["save"].is_object());
    for key in [
        "completionProvider",
        "hoverProvider",
        "signatureHelpProvider",
        "definitionProvider",
        "referencesProvider",
        "documentHighlightProvider",
        "documentSymbolProvider",
        "workspaceSymbolProvider",
        "codeActionProvider",
        "documentFormattingProvider",
        "documentRangeFormattingProvider",
        "renameProvider",
        "foldingRangeProvider",
        "semanticTokensProvider",
        "inlayHintProvider",
    ] {
        assert!(!caps[key].is_null(), "missing {key}");
    }
    assert_eq!(caps["renameProvider"]["prepareProvider"], true);
    assert_eq!(caps["semanticTokensProvider"]["full"]["delta"], true);
    assert_eq!(caps["workspace"]["workspaceFolders"]["supported"], true);
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn shutdown_and_exit_end_the_process_cleanly() {
    let mut s = Server::start();
    let uri = doc_uri("shutdown");
    s.open(&uri, "Task * GPU;\n");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn settings_come_from_initialization_options_then_workspace_configuration() {
    let dir = temp_dir("settings");
    let mut s = Server::spawn();
    // What the client answers to workspace/configuration.
    *s.configuration.lock().unwrap() = json!({"completion": {"snippets": false}});
    s.request(
        "initialize",
        json!({
            "processId": null,
            "capabilities": {"workspace": {"configuration": true}},
            "initializationOptions": {"mapwright": {"diagnostics": {"debounceMs": 5}, "app": "circuit"}},
            "workspaceFolders": [{"uri": file_uri(&dir), "name": "w"}],
        }),
    );
    s.notify("initialized", json!({}));
    // The pull happens after `initialized`; wait for the server's request.
    s.wait_for("workspace/configuration", |m| {
        m["method"] == "workspace/configuration"
    });
    let uri = file_uri(&dir.join("a.mapper"));
    s.open(&uri, "Task * GPU;\n");
    let info = s.request(
        "mapwright/documentInfo",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(info["settings"]["diagnostics"]["debounceMs"], 5);
    assert_eq!(info["settings"]["completion"]["snippets"], false);
    assert_eq!(info["settings"]["diagnostics"]["enable"], true);
    // No mapwright.toml: the settings' app is the fallback.
    assert_eq!(info["project"]["app"], "circuit");
    assert_eq!(info["project"]["path"], Value::Null);
    assert_eq!(info["positionEncoding"], "utf-16");

    // Pushed settings (didChangeConfiguration with a value) apply directly.
    s.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"mapwright": {"completion": {"snippets": true}, "machine": "p100x4"}}}),
    );
    let info = s.request(
        "mapwright/documentInfo",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(info["settings"]["completion"]["snippets"], true);
    assert_eq!(info["project"]["machine"], "p100x4");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn project_file_is_discovered_upwards_and_reloaded_when_it_changes() {
    let root = temp_dir("project");
    let nested = root.join("mappers/gpu");
    std::fs::create_dir_all(&nested).unwrap();
    let toml = root.join("mapwright.toml");
    std::fs::write(&toml, "app = \"circuit\"\nmachine = \"p100x4\"\n").unwrap();
    let mut s = Server::start_with(json!({}), Value::Null, Some(&root));
    // The server asks to watch project files.
    let reg = s.wait_for("registerCapability", |m| {
        m["method"] == "client/registerCapability"
    });
    let watchers = &reg["params"]["registrations"][0]["registerOptions"]["watchers"];
    assert_eq!(watchers[0]["globPattern"], "**/mapwright.toml");

    let uri = file_uri(&nested.join("m.mapper"));
    s.open(&uri, "Task * GPU;\n");
    let info = s.request(
        "mapwright/documentInfo",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(info["project"]["path"], toml.display().to_string());
    assert_eq!(info["project"]["app"], "circuit");
    assert_eq!(info["project"]["machine"], "p100x4");

    // Edit the file and tell the server, as the client's watcher would.
    std::fs::write(&toml, "app = \"stencil\"\n").unwrap();
    s.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&toml), "type": 2}]}),
    );
    let info = s.request(
        "mapwright/documentInfo",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(info["project"]["app"], "stencil");
    assert_eq!(info["project"]["machine"], Value::Null);

    // A closer project file wins once it exists.
    let closer = nested.join("mapwright.toml");
    std::fs::write(&closer, "app = \"pennant\"\n").unwrap();
    s.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&closer), "type": 1}]}),
    );
    let info = s.request(
        "mapwright/documentInfo",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(info["project"]["app"], "pennant");

    // A broken file is reported in the log, not fatal.
    std::fs::write(&closer, "app = = 1\n").unwrap();
    s.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&closer), "type": 2}]}),
    );
    let log = s.wait_for("a warning about the broken file", |m| {
        m["method"] == "window/logMessage"
            && m["params"]["type"] == 2
            && m["params"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("mapwright.toml")
    });
    assert!(log["params"]["message"].as_str().unwrap().contains("gpu"));
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn workspace_folders_are_tracked() {
    let a = temp_dir("folders-a");
    let b = temp_dir("folders-b");
    let mut s = Server::start_with(json!({}), Value::Null, Some(&a));
    let uri = file_uri(&a.join("x.mapper"));
    s.open(&uri, "Task * GPU;\n");
    let info = s.request(
        "mapwright/documentInfo",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(info["workspaceFolders"], json!([a.display().to_string()]));
    s.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": file_uri(&b), "name": "b"}],
                         "removed": [{"uri": file_uri(&a), "name": "a"}]}}),
    );
    let info = s.request(
        "mapwright/documentInfo",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(info["workspaceFolders"], json!([b.display().to_string()]));
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn a_panicking_handler_becomes_an_error_response_and_the_server_keeps_serving() {
    let mut s = Server::start();
    let uri = doc_uri("panic");
    let text = "mgpu = Machine(GPU);\n";
    s.open(&uri, text);
    let err = s
        .try_request(
            "workspace/executeCommand",
            json!({"command": "mapwright.debugPanic"}),
        )
        .unwrap_err();
    assert_eq!(err["code"], -32603, "internal error: {err}");
    assert!(err["message"]
        .as_str()
        .unwrap()
        .contains("deliberate panic"));
    let log = s.wait_for("the panic in the log", |m| {
        m["method"] == "window/logMessage" && m["params"]["type"] == 1
    });
    assert!(log["params"]["message"]
        .as_str()
        .unwrap()
        .contains("debugPanic"));
    // Still alive: a request and a notification after the panic work.
    let hover = s.request("textDocument/hover", s.at(&uri, text, 1));
    assert!(hover["contents"]["value"]
        .as_str()
        .unwrap()
        .contains("global variable"));
    s.change_full(&uri, 2, "Task * GPU\n");
    assert_eq!(s.diagnostics(&uri, 2).len(), 1);
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn cancellation_and_malformed_messages_leave_the_server_serving() {
    let mut s = Server::start();
    let uri = doc_uri("cancel");
    let text = "mgpu = Machine(GPU);\n";
    s.open(&uri, text);
    // Cancel a request right after sending it: the client gets either the
    // result or a RequestCancelled error, never silence.
    let id = s.send_request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": uri}}),
    );
    s.notify("$/cancelRequest", json!({"id": id}));
    match s.response(id) {
        Ok(r) => assert!(r["data"].is_array(), "{r}"),
        Err(e) => assert_eq!(e["code"], -32800, "{e}"),
    }
    // Cancelling something unknown is harmless.
    s.notify("$/cancelRequest", json!({"id": 9999}));
    // A body that is not JSON gets a parse error; the server goes on.
    s.send_raw("{not json");
    let err = s.wait_for("a parse error", |m| m["error"]["code"] == -32700);
    assert!(err["id"].is_null());
    // JSON that is not a JSON-RPC message: invalid request; still serving.
    s.send_raw("[1, 2, 3]");
    s.wait_for("an invalid-request error", |m| m["error"]["code"] == -32600);
    let hover = s.request("textDocument/hover", s.at(&uri, text, 1));
    assert!(hover["contents"]["value"]
        .as_str()
        .unwrap()
        .contains("mgpu"));
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn exiting_without_shutdown_is_exit_code_1() {
    let s = Server::start();
    s.notify("exit", Value::Null);
    assert_eq!(s.wait_exit(), Some(1));
}

#[test]
fn unknown_documents_out_of_range_positions_and_out_of_order_changes_get_clean_answers() {
    let mut s = Server::start();
    let unknown = doc_uri("never-opened");
    let r = s.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": unknown}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(r, Value::Null);
    assert_eq!(
        s.request("textDocument/formatting", json!({"textDocument": {"uri": unknown}, "options": {"tabSize": 4, "insertSpaces": true}})),
        Value::Null
    );

    let uri = doc_uri("ranges");
    s.open(&uri, "Task * GPU;\n");
    // Far past the end of the file and of a line: clamped, no error.
    for (line, character) in [(0, 999), (99, 0), (99, 99)] {
        let p = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
        s.request("textDocument/hover", p.clone());
        s.request("textDocument/completion", p.clone());
        s.request("textDocument/signatureHelp", p.clone());
        s.request("textDocument/definition", p.clone());
        s.request("textDocument/prepareRename", p);
    }
    // A change with a range past the end appends at the end.
    s.change(
        &uri,
        2,
        json!({"start": {"line": 50, "character": 3}, "end": {"line": 60, "character": 0}}),
        "Task x CPU;\n",
    );
    assert!(s.diagnostics(&uri, 2).is_empty());
    // A change whose version is not above the document's is applied as sent
    // (the editor's text is authoritative) and logged, never dropped: the
    // server's text must not diverge from the editor's.
    s.change_full(&uri, 1, "garbage");
    s.wait_for("the out-of-order warning", |m| {
        m["method"] == "window/logMessage"
            && m["params"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("applied as sent")
    });
    assert!(
        !s.diagnostics(&uri, 1).is_empty(),
        "the new text is checked"
    );
    let info = s.request(
        "mapwright/documentInfo",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(info["version"], 1);
    assert_eq!(s.shutdown(), Some(0));
}
