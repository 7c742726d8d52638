//! `mapwright lsp` end to end, for what editors (and broken plugins) really
//! send (issue 14): `params: null`, `$/` requests, bodies that are not
//! JSON-RPC, oversized headers, out-of-order versions, lone `\r` line
//! breaks, documents opened before the configuration arrives, a vanished
//! client and a dead parent process; and the message sequences of VS Code,
//! Neovim, Eglot, Helix and lsp4ij.

mod lsp_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use lsp_support::*;
use serde_json::{json, Value};

/// Waits up to `limit` for the process to end; its exit code, or `None`.
fn exited_within(child: &mut std::process::Child, limit: Duration) -> Option<Option<i32>> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status.code());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn frame(body: &Value) -> String {
    let body = body.to_string();
    format!("Content-Length: {}\r\n\r\n{}", body.len(), body)
}

#[test]
fn shutdown_with_null_params_is_answered_with_null() {
    let mut s = Server::start();
    s.send(&json!({"jsonrpc": "2.0", "id": 100, "method": "shutdown", "params": null}));
    assert_eq!(s.response(100), Ok(Value::Null));
    s.send(&json!({"jsonrpc": "2.0", "method": "exit", "params": null}));
    assert_eq!(s.wait_exit(), Some(0));
}

#[test]
fn every_request_gets_a_reply_per_spec() {
    let mut s = Server::start();
    // A `$/` request with an id: MethodNotFound, with that id.
    s.send(&json!({"jsonrpc": "2.0", "id": 41, "method": "$/someRequest", "params": {}}));
    let err = s.response(41).unwrap_err();
    assert_eq!(err["code"], -32601, "{err}");
    // An unknown (non-`$/`) method: MethodNotFound too.
    let err = s
        .try_request("textDocument/noSuchThing", json!({}))
        .unwrap_err();
    assert_eq!(err["code"], -32601, "{err}");
    // Only `jsonrpc`: InvalidRequest, id null.
    s.send_raw(r#"{"jsonrpc":"2.0"}"#);
    let m = s.wait_for("an invalid-request error", |m| m["error"]["code"] == -32600);
    assert!(m["id"].is_null());
    // A method that is not a string: InvalidRequest with the message's id.
    s.send_raw(r#"{"jsonrpc":"2.0","id":42,"method":7}"#);
    assert_eq!(s.response(42).unwrap_err()["code"], -32600);
    // Still serving.
    let uri = doc_uri("replies");
    assert!(s.open(&uri, "Task * GPU;\n").is_empty());
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn an_oversized_header_gets_an_error_and_the_server_keeps_serving() {
    let mut s = Server::start();
    {
        // The issue's header, with no body behind it.
        let mut stdin = s.raw_stdin();
        write!(stdin, "Content-Length: 99999999999\r\n\r\n").unwrap();
        stdin.flush().unwrap();
    }
    let m = s.wait_for("the too-large error", |m| m["error"]["code"] == -32600);
    assert!(
        m["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too large"),
        "{m}"
    );
    // The next message is read as usual.
    let uri = doc_uri("oversized");
    assert!(s.open(&uri, "Task * GPU;\n").is_empty());
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn an_out_of_order_version_is_applied_and_logged() {
    let mut s = Server::start();
    let uri = doc_uri("versions");
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "mapper", "version": 5, "text": "Task * GPU;\n"}}),
    );
    assert!(s.diagnostics(&uri, 5).is_empty());
    // Same version, new text: applied, warned about.
    s.change_full(&uri, 5, "Task * GPU\n");
    s.wait_for("the warning", |m| {
        m["method"] == "window/logMessage"
            && m["params"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("applied as sent")
    });
    let info = s.request(
        "mapwright/documentInfo",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(info["version"], 5);
    // The server's text is the editor's: a later incremental edit lands on it.
    let text = "Task * GPU\n";
    s.change(&uri, 6, range(text, 10, 10, s.encoding), ";");
    assert!(
        s.diagnostics(&uri, 6).is_empty(),
        "`;` was added to the new text"
    );
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn lone_cr_crlf_and_lf_are_line_breaks() {
    let mut s = Server::start();
    for (name, br) in [("cr", "\r"), ("crlf", "\r\n"), ("lf", "\n")] {
        let uri = doc_uri(name);
        let text = format!("Task a GPU;{br}Task b CPU{br}Task c GPU;{br}");
        let diags: Vec<Value> = s
            .open(&uri, &text)
            .into_iter()
            .filter(|d| d["severity"] == 1)
            .collect();
        assert_eq!(diags.len(), 1, "{name}: {diags:?}");
        // The missing `;` is at the end of line 1, column 10.
        assert_eq!(diags[0]["range"]["start"]["line"], 1, "{name}: {diags:?}");
        assert_eq!(
            diags[0]["range"]["start"]["character"], 10,
            "{name}: {diags:?}"
        );
        // A position past the end of line 0 is clamped to that line.
        let hover = s.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 200}}),
        );
        assert!(hover.is_null() || hover["contents"].is_object());
    }
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn a_document_opened_before_the_configuration_is_checked_once_with_it() {
    let dir = temp_dir("first-open");
    let mut s = Server::spawn();
    // The application comes only from workspace/configuration.
    *s.configuration.lock().unwrap() = json!({"app": "circuit"});
    s.request(
        "initialize",
        json!({"processId": null, "capabilities": {"workspace": {"configuration": true}},
               "workspaceFolders": [{"uri": file_uri(&dir), "name": "w"}]}),
    );
    s.notify("initialized", json!({}));
    // Opened at once, before the pull is answered (or right after).
    let uri = file_uri(&dir.join("a.mapper"));
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "mapper", "version": 1, "text": "Task no_such_task GPU;\n"}}),
    );
    // The first diagnostics already know the application: the task name is
    // checked against circuit's tasks.
    let first = s.diagnostics(&uri, 1);
    assert!(
        first
            .iter()
            .any(|d| d["message"].as_str().unwrap_or("").contains("no_such_task")),
        "{first:?}"
    );
    assert_eq!(s.shutdown(), Some(0));
}

/// A client that never answers the server's requests, then vanishes.
#[test]
fn the_server_exits_when_stdin_closes_while_it_awaits_its_client() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mapwright-under-test"))
        .args(["lsp", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel::<String>();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                if let Some(v) = line.trim().strip_prefix("Content-Length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                if line.trim().is_empty() {
                    break;
                }
            }
            let mut body = vec![0; len];
            if r.read_exact(&mut body).is_err() {
                return;
            }
            let _ = tx.send(String::from_utf8_lossy(&body).into_owned());
        }
    });
    let caps = json!({"workspace": {"configuration": true, "didChangeWatchedFiles": {"dynamicRegistration": true}}});
    write!(
        stdin,
        "{}",
        frame(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "capabilities": caps}}))
    )
    .unwrap();
    stdin.flush().unwrap();
    // `initialized` goes after the initialize result, as the spec says.
    let init = rx.recv_timeout(TIMEOUT).expect("the initialize result");
    assert!(init.contains("\"id\":1"), "{init}");
    write!(
        stdin,
        "{}",
        frame(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    )
    .unwrap();
    stdin.flush().unwrap();
    // Wait until the server asks something of the client (registration or
    // configuration), and never answer.
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let msg = rx
            .recv_timeout(TIMEOUT)
            .expect("the server asks its client");
        if msg.contains("client/registerCapability") || msg.contains("workspace/configuration") {
            break;
        }
        assert!(Instant::now() < deadline);
    }
    drop(stdin);
    let code = exited_within(&mut child, Duration::from_secs(10));
    let _ = child.kill();
    assert_eq!(code, Some(Some(1)), "the server must exit (1: no shutdown)");
}

#[test]
fn the_server_exits_when_its_parent_process_dies() {
    let mut parent = Command::new("sleep").arg("60").spawn().unwrap();
    let mut s = Server::spawn();
    s.request(
        "initialize",
        json!({"processId": parent.id(), "capabilities": {}}),
    );
    s.notify("initialized", json!({}));
    let uri = doc_uri("orphan");
    assert!(s.open(&uri, "Task * GPU;\n").is_empty());
    parent.kill().unwrap();
    parent.wait().unwrap();
    // Polled every second.
    let deadline = Instant::now() + Duration::from_secs(10);
    let code = loop {
        if let Some(code) = s.try_exit_code() {
            break code;
        }
        assert!(
            Instant::now() < deadline,
            "still running after the parent died"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, Some(1));
}

/// One editor's conversation: its initialize params and its habits.
struct Client {
    name: &'static str,
    initialize: Value,
    /// How it sends void params: left out (`None`) or `null`.
    null_params: bool,
    /// Its didChangeConfiguration after start-up.
    did_change_configuration: Value,
}

fn clients() -> Vec<Client> {
    vec![
        Client {
            name: "VS Code",
            initialize: json!({
                "processId": std::process::id(), "clientInfo": {"name": "Visual Studio Code", "version": "1.95.0"},
                "locale": "en", "rootPath": null, "rootUri": null, "trace": "off", "workspaceFolders": null,
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "workspace": {"configuration": true, "workspaceFolders": true, "didChangeConfiguration": {"dynamicRegistration": true},
                                  "semanticTokens": {"refreshSupport": true}, "inlayHint": {"refreshSupport": true}},
                    "textDocument": {"synchronization": {"dynamicRegistration": true, "didSave": true},
                                     "hover": {"contentFormat": ["markdown", "plaintext"]},
                                     "publishDiagnostics": {"relatedInformation": true, "versionSupport": false}},
                    "window": {"workDoneProgress": true}
                },
                "initializationOptions": {"mapwright": {"diagnostics": {"debounceMs": 0}}}
            }),
            null_params: false,
            did_change_configuration: json!({"settings": null}),
        },
        Client {
            name: "Neovim 0.7",
            initialize: json!({
                "processId": std::process::id(), "clientInfo": {"name": "Neovim", "version": "0.7.2"},
                "rootPath": null, "rootUri": null, "trace": "off", "workspaceFolders": null,
                "capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}},
                                 "workspace": {"configuration": true, "applyEdit": true},
                                 "window": {"workDoneProgress": true}},
                "initializationOptions": {}
            }),
            null_params: false,
            did_change_configuration: json!({"settings": {}}),
        },
        Client {
            name: "Eglot",
            initialize: json!({
                "processId": std::process::id(), "rootPath": "/tmp/", "rootUri": "file:///tmp/",
                "initializationOptions": {}, "workspaceFolders": [{"uri": "file:///tmp/", "name": "/tmp/"}],
                "capabilities": {"workspace": {"applyEdit": true, "configuration": true, "workspaceFolders": true},
                                 "textDocument": {"synchronization": {"willSave": true, "didSave": true},
                                                  "publishDiagnostics": {"relatedInformation": false}},
                                 "general": {"positionEncodings": ["utf-32", "utf-8", "utf-16"]},
                                 "experimental": {}}
            }),
            null_params: true,
            did_change_configuration: json!({"settings": null}),
        },
        Client {
            name: "Helix",
            initialize: json!({
                "processId": std::process::id(), "clientInfo": {"name": "helix", "version": "24.7"},
                "rootPath": "/tmp", "rootUri": null, "workspaceFolders": [],
                "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
                                 "workspace": {"configuration": true, "didChangeConfiguration": {"dynamicRegistration": false}},
                                 "textDocument": {"completion": {"completionItem": {"snippetSupport": true}}}},
                "initializationOptions": null
            }),
            null_params: false,
            did_change_configuration: json!({"settings": null}),
        },
        Client {
            name: "lsp4ij",
            initialize: json!({
                "processId": std::process::id(), "clientInfo": {"name": "IntelliJ IDEA"},
                "rootUri": "file:///tmp/", "workspaceFolders": [{"uri": "file:///tmp/", "name": "tmp"}],
                "capabilities": {"workspace": {"configuration": true, "workspaceFolders": true},
                                 "textDocument": {"hover": {"contentFormat": ["markdown"]}},
                                 "window": {"workDoneProgress": true}},
                "initializationOptions": null
            }),
            null_params: true,
            did_change_configuration: json!({"settings": null}),
        },
    ]
}

#[test]
fn the_message_sequences_of_five_editors_get_answers_per_spec() {
    for c in clients() {
        let name = c.name;
        let mut s = Server::spawn();
        let init = s.request("initialize", c.initialize.clone());
        assert!(init["capabilities"].is_object(), "{name}");
        s.encoding = match init["capabilities"]["positionEncoding"].as_str() {
            Some("utf-8") => mapwright_grammar::line_index::Encoding::Utf8,
            _ => mapwright_grammar::line_index::Encoding::Utf16,
        };
        if c.null_params {
            s.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": null}));
        } else {
            s.notify("initialized", json!({}));
        }
        let uri = doc_uri(&format!("client-{}", name.replace(' ', "-")));
        let text = "mgpu = Machine(GPU);\nTask * GPU;\nx = mgpu.size;\n";
        let diags = s.open(&uri, text);
        assert!(
            diags.iter().all(|d| d["severity"] != 1),
            "{name}: {diags:?}"
        );
        // Settings changed: null (pull) or an empty object.
        s.notify(
            "workspace/didChangeConfiguration",
            c.did_change_configuration.clone(),
        );
        // A request, then its cancellation.
        let id = s.send_request(
            "textDocument/semanticTokens/full",
            json!({"textDocument": {"uri": uri}}),
        );
        s.notify("$/cancelRequest", json!({"id": id}));
        match s.response(id) {
            Ok(r) => assert!(r["data"].is_array(), "{name}: {r}"),
            Err(e) => assert_eq!(e["code"], -32800, "{name}: {e}"),
        }
        // Positions past the end of a line and of the file.
        for (line, character) in [(0, 500), (2, 99), (50, 0)] {
            let p = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
            s.request("textDocument/hover", p.clone());
            s.request("textDocument/completion", p.clone());
            s.request("textDocument/definition", p);
        }
        // `$/setTrace` and an unknown notification: no reply, no harm.
        s.notify("$/setTrace", json!({"value": "off"}));
        s.notify("custom/unknownNotification", json!({}));
        // An unknown request: MethodNotFound.
        let err = s
            .try_request("custom/unknownRequest", json!({}))
            .unwrap_err();
        assert_eq!(err["code"], -32601, "{name}: {err}");
        // Still serving.
        let hover = s.request("textDocument/hover", s.at(&uri, text, 1));
        assert!(hover["contents"].is_object(), "{name}: {hover}");
        // Shutdown the client's way, then exit.
        if c.null_params {
            s.send(&json!({"jsonrpc": "2.0", "id": 9000, "method": "shutdown", "params": null}));
            assert_eq!(s.response(9000), Ok(Value::Null), "{name}");
            s.send(&json!({"jsonrpc": "2.0", "method": "exit", "params": null}));
            assert_eq!(s.wait_exit(), Some(0), "{name}");
        } else {
            assert_eq!(s.shutdown(), Some(0), "{name}");
        }
    }
}
