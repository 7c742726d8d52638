//! A small LSP test client: spawns the real `mapwright lsp` binary, speaks
//! Content-Length framed JSON-RPC over its stdin/stdout, answers the
//! server's own requests (`workspace/configuration`,
//! `client/registerCapability`), and waits for responses and notifications
//! with timeouts so a hung server fails the test instead of hanging it.
//!
//! The binary is `mapwright-under-test`, built by cargo for this crate from
//! `server/src/main.rs` (see tests/Cargo.toml), so it is always current;
//! `MAPWRIGHT_BIN` names another one (the benchmark compares builds).

#![allow(dead_code)] // Each test file uses a different subset.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mapwright_grammar::line_index::{Encoding, LineCol};
use mapwright_grammar::LineIndex;
use serde_json::{json, Value};

/// How long any single wait may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A running server and the client side of the conversation.
pub struct Server {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    rx: Receiver<(Value, Arrival)>,
    /// Messages received but not yet consumed by a wait.
    inbox: VecDeque<(Value, Arrival)>,
    next_id: i64,
    /// What `workspace/configuration` is answered with (per item).
    pub configuration: Arc<Mutex<Value>>,
    stderr: Arc<Mutex<String>>,
    /// The encoding the server chose.
    pub encoding: Encoding,
}

fn write_message(stdin: &Mutex<ChildStdin>, msg: &Value) {
    let body = msg.to_string();
    let mut w = stdin.lock().unwrap();
    // A write error means the server died; the next wait reports it.
    let _ = write!(w, "Content-Length: {}\r\n\r\n{}", body.len(), body);
    let _ = w.flush();
}

/// When a message was read in full (before it was parsed) and its size.
#[derive(Debug, Clone, Copy)]
pub struct Arrival {
    pub at: Instant,
    /// Bytes of the JSON body.
    pub bytes: usize,
}

/// The binary under test: `MAPWRIGHT_BIN` if set, else this build's.
/// Starts `command` (a `mapwright serve ... --bind 127.0.0.1:0`) and
/// returns it with the URL and the line its first line of output gave.
pub fn start_serve(mut command: Command) -> (Child, String, String) {
    let mut serve = command
        .env_remove("MAPWRIGHT_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot start mapwright serve");
    let mut line = String::new();
    BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    (serve, url, line)
}

pub fn binary() -> PathBuf {
    std::env::var_os("MAPWRIGHT_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mapwright-under-test")))
}

fn read_message(r: &mut impl BufRead) -> Option<(Value, Arrival)> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    let arrival = Arrival {
        at: Instant::now(),
        bytes: body.len(),
    };
    Some((serde_json::from_slice(&body).ok()?, arrival))
}

impl Server {
    /// Starts `mapwright lsp` (not yet initialized).
    pub fn spawn() -> Server {
        Server::spawn_binary(&binary())
    }

    /// Starts `mapwright lsp` of the binary at `path` (not yet
    /// initialized): the benchmark's other build.
    pub fn spawn_binary(path: &Path) -> Server {
        let mut child = Command::new(path)
            .args(["lsp", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start mapwright lsp");
        let stdin = Arc::new(Mutex::new(child.stdin.take().unwrap()));
        let stdout = child.stdout.take().unwrap();
        let stderr_pipe = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        {
            let stderr = stderr.clone();
            std::thread::spawn(move || {
                let mut r = BufReader::new(stderr_pipe);
                let mut line = String::new();
                while r.read_line(&mut line).unwrap_or(0) > 0 {
                    stderr.lock().unwrap().push_str(&line);
                    line.clear();
                }
            });
        }
        let configuration = Arc::new(Mutex::new(json!({})));
        let (tx, rx) = channel();
        {
            let stdin = stdin.clone();
            let configuration = configuration.clone();
            std::thread::spawn(move || {
                let mut r = BufReader::new(stdout);
                while let Some((msg, arrival)) = read_message(&mut r) {
                    // Answer the server's requests right here, so a server
                    // awaiting its client never blocks the test.
                    if let (Some(id), Some(method)) = (msg.get("id"), msg["method"].as_str()) {
                        let result = match method {
                            "workspace/configuration" => {
                                let n = msg["params"]["items"].as_array().map_or(1, |a| a.len());
                                let c = configuration.lock().unwrap().clone();
                                Value::Array(vec![c; n])
                            }
                            // The test applies the edit itself (it sees the
                            // request in the inbox), as an editor would.
                            "workspace/applyEdit" => json!({"applied": true}),
                            "window/showDocument" => json!({"success": true}),
                            _ => Value::Null,
                        };
                        write_message(
                            &stdin,
                            &json!({"jsonrpc": "2.0", "id": id, "result": result}),
                        );
                    }
                    if tx.send((msg, arrival)).is_err() {
                        break;
                    }
                }
            });
        }
        Server {
            child,
            stdin,
            rx,
            inbox: VecDeque::new(),
            next_id: 1,
            configuration,
            stderr,
            encoding: Encoding::Utf16,
        }
    }

    /// Starts and initializes a server with a typical editor's capabilities
    /// (UTF-16 only, like Neovim 0.7 and VS Code; every optional diagnostic
    /// field, like VS Code), plus `extra` capabilities
    /// and `options` as initializationOptions.
    pub fn start_with(extra_caps: Value, options: Value, root: Option<&Path>) -> Server {
        Server::start_binary_with(&binary(), extra_caps, options, root)
    }

    /// [`Server::start_with`] of the binary at `path`.
    pub fn start_binary_with(
        path: &Path,
        extra_caps: Value,
        options: Value,
        root: Option<&Path>,
    ) -> Server {
        let mut s = Server::spawn_binary(path);
        let mut caps = json!({
            "general": {"positionEncodings": ["utf-16"]},
            "textDocument": {
                "completion": {"completionItem": {"snippetSupport": true}},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
                // What VS Code advertises (Neovim: all but codeDescription).
                "publishDiagnostics": {
                    "relatedInformation": true,
                    "versionSupport": true,
                    "tagSupport": {"valueSet": [1, 2]},
                    "codeDescriptionSupport": true,
                    "dataSupport": true,
                },
                "codeAction": {"dataSupport": true},
                "foldingRange": {"lineFoldingOnly": true},
            },
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "didChangeWatchedFiles": {"dynamicRegistration": true},
            },
        });
        merge(&mut caps, &extra_caps);
        let folders = root.map(|r| json!([{"uri": file_uri(r), "name": "root"}]));
        let result = s.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": root.map(file_uri),
                "capabilities": caps,
                "initializationOptions": options,
                "workspaceFolders": folders,
            }),
        );
        s.encoding = match result["capabilities"]["positionEncoding"].as_str() {
            Some("utf-8") => Encoding::Utf8,
            _ => Encoding::Utf16,
        };
        s.notify("initialized", json!({}));
        s
    }

    /// Starts a server with default capabilities and no settings.
    pub fn start() -> Server {
        Server::start_with(json!({}), Value::Null, None)
    }

    pub fn send(&self, msg: &Value) {
        write_message(&self.stdin, msg);
    }

    /// Sends a framed body that need not be valid JSON.
    pub fn send_raw(&self, body: &str) {
        let mut w = self.stdin.lock().unwrap();
        let _ = write!(w, "Content-Length: {}\r\n\r\n{}", body.len(), body);
        let _ = w.flush();
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(&message(None, method, params));
    }

    /// Sends a request; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&message(Some(id), method, params));
        id
    }

    /// The response to request `id`: `Ok(result)` or `Err(error)`.
    pub fn response(&mut self, id: i64) -> Result<Value, Value> {
        self.response_within(id, TIMEOUT)
    }

    /// [`Self::response`] for a request that takes longer than
    /// [`TIMEOUT`] by its nature (a real run): waits up to `timeout`.
    pub fn response_within(&mut self, id: i64, timeout: Duration) -> Result<Value, Value> {
        let msg = self.wait_for_within(&format!("response {id}"), timeout, |m| {
            m.get("method").is_none() && m["id"] == json!(id)
        });
        match msg.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(msg["result"].clone()),
        }
    }

    /// Sends a request and returns its result or error.
    pub fn try_request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.send_request(method, params);
        self.response(id)
    }

    /// Sends a request and returns its result; fails the test on an error.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        match self.try_request(method, params) {
            Ok(v) => v,
            Err(e) => panic!("{method} failed: {e}\nserver stderr:\n{}", self.stderr()),
        }
    }

    /// The first message (received or arriving within [`TIMEOUT`]) that
    /// satisfies `pred`; earlier non-matching messages stay in the inbox.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_for_within(what, TIMEOUT, pred)
    }

    /// [`Self::wait_for`] for what takes longer than [`TIMEOUT`] by its
    /// nature (a real run): waits up to `timeout`.
    pub fn wait_for_within(
        &mut self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        self.try_wait_for(timeout, &pred).unwrap_or_else(|| {
            panic!(
                "timed out after {timeout:?} waiting for {what}\ninbox: {:#?}\nserver stderr:\n{}",
                self.inbox,
                self.stderr()
            )
        })
    }

    /// The values of the `$/progress` notifications for `token`, each
    /// with the time it was read, up to and with the `end`; each must come
    /// within `each` of the one before.
    pub fn progress_to_the_end(&mut self, token: &Value, each: Duration) -> Vec<(Instant, Value)> {
        let mut seen: Vec<(Instant, Value)> = Vec::new();
        loop {
            let what = format!("$/progress for {token} after {} of them", seen.len());
            let m = self.wait_for_within(&what, each, |m| {
                m["method"] == "$/progress" && m["params"]["token"] == *token
            });
            let value = m["params"]["value"].clone();
            let end = value["kind"] == "end";
            seen.push((Instant::now(), value));
            if end {
                return seen;
            }
        }
    }

    /// Like [`Server::wait_for`] with a custom timeout; `None` on timeout.
    pub fn try_wait_for(
        &mut self,
        timeout: Duration,
        pred: &dyn Fn(&Value) -> bool,
    ) -> Option<Value> {
        self.try_wait_for_arrival(timeout, pred).map(|(m, _)| m)
    }

    /// Like [`Server::try_wait_for`], with when the message arrived.
    pub fn try_wait_for_arrival(
        &mut self,
        timeout: Duration,
        pred: &dyn Fn(&Value) -> bool,
    ) -> Option<(Value, Arrival)> {
        if let Some(i) = self.inbox.iter().position(|(m, _)| pred(m)) {
            return self.inbox.remove(i);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok((msg, a)) if pred(&msg) => return Some((msg, a)),
                Ok(got) => self.inbox.push_back(got),
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => {
                    panic!(
                        "the server closed its output\nserver stderr:\n{}",
                        self.stderr()
                    )
                }
            }
        }
    }

    /// The `publishDiagnostics` for `uri` at `version`.
    pub fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let msg = self.wait_for(&format!("diagnostics of {uri} v{version}"), |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == json!(version)
        });
        msg["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Opens a document (version 1) and returns its diagnostics.
    pub fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "mapper", "version": 1, "text": text}}),
        );
        self.diagnostics(uri, 1)
    }

    /// Replaces the whole text of a document.
    pub fn change_full(&self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// Replaces `range` of a document.
    pub fn change(&self, uri: &str, version: i64, range: Value, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": range, "text": text}]}),
        );
    }

    /// `{textDocument, position}` params for byte `offset` of `text`.
    pub fn at(&self, uri: &str, text: &str, offset: usize) -> Value {
        json!({"textDocument": {"uri": uri}, "position": pos(text, offset, self.encoding)})
    }

    /// The server's stdin, for bytes that are not a framed message.
    /// The quick fixes the server offers for one published diagnostic
    /// (published diagnostics carry no fixes; code actions compute them).
    pub fn quick_fixes(&mut self, uri: &str, diag: &Value) -> Vec<Value> {
        let actions = self.request(
            "textDocument/codeAction",
            serde_json::json!({"textDocument": {"uri": uri}, "range": diag["range"],
                   "context": {"diagnostics": [diag], "only": ["quickfix"]}}),
        );
        actions.as_array().cloned().unwrap_or_default()
    }

    /// The edits of the one `source.fixAll.mapwright` action for `text`
    /// (asked for by kind, as fix-on-save does).
    pub fn fix_all_edits(&mut self, uri: &str, text: &str) -> Vec<Value> {
        let actions = self.request(
            "textDocument/codeAction",
            serde_json::json!({"textDocument": {"uri": uri}, "range": range(text, 0, 0, self.encoding),
                   "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        );
        let actions = actions.as_array().cloned().unwrap_or_default();
        assert_eq!(actions.len(), 1, "{actions:#?}");
        assert_eq!(actions[0]["kind"], "source.fixAll.mapwright");
        actions[0]["edit"]["changes"][uri]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("{actions:#?}"))
    }

    pub fn raw_stdin(&self) -> std::sync::MutexGuard<'_, ChildStdin> {
        self.stdin.lock().unwrap()
    }

    /// The exit code if the process has ended (`Some(None)`: ended by a
    /// signal), without waiting.
    pub fn try_exit_code(&mut self) -> Option<Option<i32>> {
        self.child.try_wait().unwrap().map(|s| s.code())
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// `shutdown` + `exit`; returns the process's exit code.
    pub fn shutdown(mut self) -> Option<i32> {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r, Value::Null);
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    /// Waits for the process to end; returns its exit code.
    pub fn wait_exit(mut self) -> Option<i32> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if Instant::now() > deadline {
                panic!("server did not exit after `exit`");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A request (with an id) or notification; `null` params are left out, as
/// clients do for `shutdown` and `exit`.
fn message(id: Option<i64>, method: &str, params: Value) -> Value {
    let mut m = json!({"jsonrpc": "2.0", "method": method});
    if let Some(id) = id {
        m["id"] = json!(id);
    }
    if !params.is_null() {
        m["params"] = params;
    }
    m
}

fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

/// An LSP position for byte `offset` of `text`.
pub fn pos(text: &str, offset: usize, enc: Encoding) -> Value {
    let lc = LineIndex::new(text).line_col(offset, enc);
    json!({"line": lc.line, "character": lc.col})
}

/// An LSP range for bytes `start..end` of `text`.
pub fn range(text: &str, start: usize, end: usize, enc: Encoding) -> Value {
    json!({"start": pos(text, start, enc), "end": pos(text, end, enc)})
}

/// Byte offset of an LSP position.
pub fn offset(text: &str, p: &Value, enc: Encoding) -> usize {
    LineIndex::new(text).offset(
        LineCol {
            line: p["line"].as_u64().unwrap() as u32,
            col: p["character"].as_u64().unwrap() as u32,
        },
        enc,
    )
}

/// Applies LSP text edits (all relative to `text`) as a client does.
pub fn apply_edits(text: &str, edits: &[Value], enc: Encoding) -> String {
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            (
                offset(text, &e["range"]["start"], enc),
                offset(text, &e["range"]["end"], enc),
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    spans.sort_by_key(|s| (s.0, s.1));
    for w in spans.windows(2) {
        assert!(w[0].1 <= w[1].0, "overlapping edits: {edits:?}");
    }
    let mut out = text.to_string();
    for (s, e, t) in spans.into_iter().rev() {
        out.replace_range(s..e, &t);
    }
    out
}

/// A fresh, empty directory for one test (no `mapwright.toml` above it
/// inside the directory itself), `mapwright-lsp-PID/NAME`, removed (with
/// the per-process folder, once empty) when the test that made it ends.
pub fn temp_dir(name: &str) -> TempDir {
    mapwright::testing::temp_dir_in("mapwright-lsp", name)
}

pub use mapwright::testing::TempDir;

/// `file://` URI of a path.
pub fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// A document URI for a test that does not care about the file system
/// (nothing is made there).
pub fn doc_uri(name: &str) -> String {
    file_uri(
        &std::env::temp_dir()
            .join(format!("mapwright-lsp-{}", std::process::id()))
            .join(name)
            .join("mapper.mapper"),
    )
}

/// The `label`s of a completion result (list or array).
pub fn completion_labels(result: &Value) -> Vec<String> {
    let items = result
        .get("items")
        .and_then(|i| i.as_array())
        .or_else(|| result.as_array())
        .cloned()
        .unwrap_or_default();
    items
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_string())
        .collect()
}

/// The completion item labelled `label`.
pub fn completion_item(result: &Value, label: &str) -> Value {
    result["items"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["label"] == label).cloned())
        .unwrap_or_else(|| panic!("no completion `{label}` in {result}"))
}

/// Problems only the application and machine reveal: a misspelt task and
/// region (W0309/W0310, each with a "use ..." fix), contradictory layouts
/// across statements (W0306, with related information), and a mapping
/// function that runs off the machine (E0301, with related information and
/// a modulo fix).
pub const CIRCUIT_MAPPER: &str = "Task * GPU,CPU;
Task calculate_new_curents GPU;
Region * rp_sharedd GPU FBMEM;
Layout calculate_new_currents rp_private FBMEM SOA C_order;
Layout update_voltages rp_private FBMEM AOS F_order;
m = Machine(GPU);
def f(Task task) {
    return m[0, task.ipoint[0] + 1];
}
IndexTaskMap calculate_new_currents f;
";
