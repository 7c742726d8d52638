//! What a client declares decides what it gets (issue 39), through the real
//! binary over stdio: hover and completion documentation as Markdown or as
//! plain text, long output (Explain) as a document or as a file named in a
//! one-line message, and the order of quick fixes when the context holds
//! several diagnostics (the diagnostic under the cursor first, at most one
//! preferred action per diagnostic).

mod lsp_support;

use lsp_support::*;
use serde_json::{json, Value};

/// A project for cannon on the paper's machine and a server with `caps`.
fn start(name: &str, caps: Value) -> (Server, TempDir, String) {
    let root = temp_dir(name);
    std::fs::write(
        root.join("mapwright.toml"),
        "app = \"cannon\"\nmachine = \"p100x4\"\n",
    )
    .unwrap();
    let s = Server::start_with(caps, Value::Null, Some(&root));
    let uri = file_uri(&root.join("m.mapper"));
    (s, root, uri)
}

fn by_code<'a>(diags: &'a [Value], code: &str) -> &'a Value {
    diags
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {diags:#?}"))
}

/// Markup a client can't render.
fn has_markdown(text: &str) -> bool {
    text.contains("```") || text.contains("**") || text.contains('`')
}

#[test]
fn hover_is_plain_text_when_the_client_declares_no_markdown() {
    let text = "Task * GPU;\n";
    let (mut s, _root, uri) = start(
        "caps-hover-plain",
        json!({"textDocument": {"hover": {"contentFormat": ["plaintext"]}}}),
    );
    s.open(&uri, text);
    let hover = s.request("textDocument/hover", s.at(&uri, text, 1));
    let contents = &hover["contents"];
    assert_eq!(contents["kind"], "plaintext", "{hover:#}");
    let value = contents["value"].as_str().unwrap();
    assert!(
        value.starts_with("Task NAME|* PROC[,PROC...];\n"),
        "{value}"
    );
    assert!(
        value.contains("Processor placement. A priority list"),
        "{value}"
    );
    assert!(!has_markdown(value), "{value}");
    assert_eq!(s.shutdown(), Some(0));

    // The same request from a client that takes Markdown.
    let (mut s, _root, uri) = start("caps-hover-markdown", json!({}));
    s.open(&uri, text);
    let hover = s.request("textDocument/hover", s.at(&uri, text, 1));
    assert_eq!(hover["contents"]["kind"], "markdown", "{hover:#}");
    assert!(hover["contents"]["value"]
        .as_str()
        .unwrap()
        .starts_with("```mapper\n"));
    assert_eq!(s.shutdown(), Some(0));
}

/// The documentation of the completion items at `Task task_1 G`.
fn completion_docs(s: &mut Server, uri: &str) -> Vec<Value> {
    let text = "Task task_1 G";
    s.open(uri, text);
    let list = s.request("textDocument/completion", s.at(uri, text, text.len()));
    let items = list["items"].as_array().cloned().unwrap_or_default();
    assert!(items.iter().any(|i| i["label"] == "GPU"), "{list:#}");
    let docs: Vec<Value> = items
        .iter()
        .filter(|i| !i["documentation"].is_null())
        .map(|i| i["documentation"].clone())
        .collect();
    assert!(!docs.is_empty(), "{list:#}");
    docs
}

#[test]
fn completion_documentation_follows_the_declared_format() {
    // Declared for completion: plain text only.
    let caps = json!({"textDocument": {"completion": {"completionItem":
        {"documentationFormat": ["plaintext"]}}}});
    let (mut s, _root, uri) = start("caps-completion-plain", caps);
    for d in completion_docs(&mut s, &uri) {
        assert_eq!(d["kind"], "plaintext", "{d:#}");
    }
    assert_eq!(s.shutdown(), Some(0));
    // Not declared for completion, hovers plain only (eglot): plain text.
    let caps = json!({"textDocument": {"hover": {"contentFormat": ["plaintext"]}}});
    let (mut s, _root, uri) = start("caps-completion-eglot", caps);
    for d in completion_docs(&mut s, &uri) {
        assert_eq!(d["kind"], "plaintext", "{d:#}");
        assert!(!has_markdown(d["value"].as_str().unwrap()), "{d:#}");
    }
    assert_eq!(s.shutdown(), Some(0));
    // Markdown declared (VS Code, Neovim).
    let caps = json!({"textDocument": {"completion": {"completionItem":
        {"documentationFormat": ["markdown", "plaintext"]}}}});
    let (mut s, _root, uri) = start("caps-completion-markdown", caps);
    for d in completion_docs(&mut s, &uri) {
        assert_eq!(d["kind"], "markdown", "{d:#}");
    }
    assert_eq!(s.shutdown(), Some(0));
}

fn explain(s: &mut Server, uri: &str) -> Value {
    s.open(uri, "Task * GPU,CPU;\n");
    s.request(
        "workspace/executeCommand",
        json!({"command": "mapwright.explain", "arguments": [{"uri": uri, "show": true}]}),
    )
}

#[test]
fn explain_without_show_document_names_a_file_in_one_line() {
    let (mut s, _root, uri) = start("caps-explain-message", json!({}));
    s.open(&uri, "Task * GPU,CPU;\n");
    let id = s.send_request(
        "workspace/executeCommand",
        json!({"command": "mapwright.explain", "arguments": [{"uri": uri, "show": true}]}),
    );
    // The message comes before the response (lsp-mode 8 drops a
    // notification that follows the response it waits for).
    let first = s.wait_for("the message or the response", |m| {
        m["method"] == "window/showMessage" || (m.get("method").is_none() && m["id"] == json!(id))
    });
    assert_eq!(first["method"], "window/showMessage", "{first:#}");
    let shown = first;
    let result = s.response(id).expect("explain");
    let text = result["text"].as_str().unwrap();
    assert!(text.lines().count() > 20, "{text}");
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(!message.contains('\n'), "{message}");
    assert!(message.len() < 400, "{message}");
    let (_, file) = message
        .split_once("written to ")
        .unwrap_or_else(|| panic!("{message}"));
    let file = file.split(" (file:").next().unwrap();
    assert_eq!(std::fs::read_to_string(file).unwrap(), text);
    assert_eq!(s.shutdown(), Some(0));

    // A client with showDocument gets the same file as a document.
    let caps = json!({"window": {"showDocument": {"support": true}}});
    let (mut s, _root, uri) = start("caps-explain-document", caps);
    explain(&mut s, &uri);
    let request = s.wait_for("showDocument", |m| m["method"] == "window/showDocument");
    let shown = request["params"]["uri"].as_str().unwrap();
    assert!(shown.ends_with("/.mapwright/m.explain.txt"), "{request:#}");
    assert_eq!(s.shutdown(), Some(0));
}

/// Issue 39: `Task * GPU` with cannon has E0305 (no Layout statement; on
/// the whole statement) and E0101 (missing `;`, at its end). Eglot asks at
/// `GPU` with both in the context, E0305 first, and applies the first
/// preferred action: it must be the `;`.
#[test]
fn the_fix_of_the_diagnostic_under_the_cursor_comes_first() {
    let text = "Task * GPU";
    let (mut s, _root, uri) = start("caps-fix-order", json!({}));
    let diags = s.open(&uri, text);
    let e0305 = by_code(&diags, "E0305").clone();
    let e0101 = by_code(&diags, "E0101").clone();
    for context in [vec![e0305.clone(), e0101.clone()], vec![e0101.clone()]] {
        let actions = s.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range(text, 7, 10, s.encoding),
                   "context": {"diagnostics": context}}),
        );
        let actions = actions.as_array().cloned().unwrap();
        let quick: Vec<&Value> = actions.iter().filter(|a| a["kind"] == "quickfix").collect();
        assert_eq!(quick[0]["title"], "insert `;`", "{actions:#?}");
        assert_eq!(quick[0]["isPreferred"], true, "{actions:#?}");
        // The E0305's fix is still offered, after it.
        assert!(
            quick[1..]
                .iter()
                .any(|a| a["diagnostics"][0]["code"] == "E0305"),
            "{actions:#?}"
        );
        let first_preferred = actions.iter().find(|a| a["isPreferred"] == true).unwrap();
        assert_eq!(first_preferred["title"], "insert `;`");
        for d in [&e0305, &e0101] {
            let preferred = quick
                .iter()
                .filter(|a| a["diagnostics"][0]["code"] == d["code"] && a["isPreferred"] == true)
                .count();
            assert!(preferred <= 1, "{actions:#?}");
        }
    }
    assert_eq!(s.shutdown(), Some(0));
}
