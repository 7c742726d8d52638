//! Pull diagnostics (`textDocument/diagnostic`, LSP 3.17) end to end
//! through the real binary: full and unchanged reports keyed by result id,
//! no push to a client that pulls, a refresh request when diagnostics
//! change without an edit.

mod lsp_support;

use std::time::Duration;

use lsp_support::*;
use serde_json::{json, Value};

fn pull(s: &mut Server, uri: &str, previous: Option<&str>) -> Value {
    s.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": uri}, "previousResultId": previous}),
    )
}

fn codes(report: &Value) -> Vec<String> {
    report["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_client_that_pulls_gets_reports_by_result_id_and_no_pushes() {
    let mut s = Server::spawn();
    let init = s.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {
            "textDocument": {"diagnostic": {"dynamicRegistration": false}},
        }, "initializationOptions": {"diagnostics": {"debounceMs": 0}}}),
    );
    let provider = &init["capabilities"]["diagnosticProvider"];
    assert_eq!(provider["interFileDependencies"], json!(false));
    assert_eq!(provider["workspaceDiagnostics"], json!(false));
    s.notify("initialized", json!({}));

    let uri = doc_uri("pull");
    let text = "m = Machine(GPU);\ndef f(Task t) {\n    return mx[0, 0];\n}\nIndexTaskMap * f;\n";
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "mapper", "version": 1, "text": text}}),
    );
    let first = pull(&mut s, &uri, None);
    assert_eq!(first["kind"], "full");
    assert!(codes(&first).contains(&"E0201".to_string()), "{first:#}");
    let id1 = first["resultId"].as_str().expect("a result id").to_string();

    // Same version, same id: unchanged, with the id again.
    let again = pull(&mut s, &uri, Some(&id1));
    assert_eq!(again, json!({"kind": "unchanged", "resultId": id1}));

    // An edit: a new id and the new diagnostics.
    s.change_full(&uri, 2, &text.replace("mx[", "m["));
    let second = pull(&mut s, &uri, Some(&id1));
    assert_eq!(second["kind"], "full");
    assert_ne!(second["resultId"], json!(id1));
    assert!(!codes(&second).contains(&"E0201".to_string()), "{second:#}");
    let id2 = second["resultId"].as_str().unwrap().to_string();

    // New settings change diagnostics without an edit: the server asks the
    // client to pull again, and the old id is no longer current.
    s.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"mapwright": {"diagnostics": {"enable": false}}}}),
    );
    s.wait_for("a refresh request", |m| {
        m["method"] == "workspace/diagnostic/refresh"
    });
    let third = pull(&mut s, &uri, Some(&id2));
    assert_eq!(third["kind"], "full");
    assert_eq!(third["items"], json!([]));

    // Nothing was ever pushed.
    let pushed = s.try_wait_for(Duration::from_millis(300), &|m| {
        m["method"] == "textDocument/publishDiagnostics"
    });
    assert!(pushed.is_none(), "{pushed:#?}");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn a_document_that_is_not_open_gets_an_empty_report() {
    let mut s = Server::start_with(
        json!({"textDocument": {"diagnostic": {}}}),
        Value::Null,
        None,
    );
    let report = pull(&mut s, &doc_uri("never-opened"), None);
    assert_eq!(report["kind"], "full");
    assert_eq!(report["items"], json!([]));
    assert_eq!(s.shutdown(), Some(0));
}
