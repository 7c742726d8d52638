//! `codeAction/resolve` end to end through the real binary: a client that
//! resolves edits gets code actions without them, resolving fills the edit
//! in, and an action offered for an older version is refused.

mod lsp_support;

use lsp_support::*;
use serde_json::{json, Value};

#[test]
fn actions_come_without_edits_and_resolve_checks_the_version() {
    let mut s = Server::start_with(
        json!({"textDocument": {"codeAction": {
            "dataSupport": true, "resolveSupport": {"properties": ["edit"]}}}}),
        Value::Null,
        None,
    );
    let uri = doc_uri("resolve");
    let text = "Task * GPU;\ndef f(Task t) { return mgpu[t.ipoint[0] % mgpu.size[0], 0]; }\nIndexTaskMap * f;\n";
    let diags = s.open(&uri, text);
    let undefined = diags
        .iter()
        .find(|d| d["code"] == "E0201")
        .expect("E0201")
        .clone();
    let actions = s.quick_fixes(&uri, &undefined);
    assert!(!actions.is_empty());
    for a in &actions {
        assert!(a.get("edit").is_none_or(Value::is_null), "{a:#}");
        assert!(a["data"].is_object(), "{a:#}");
    }
    let resolved = s.request("codeAction/resolve", actions[0].clone());
    let edits = resolved["edit"]["changes"][&uri]
        .as_array()
        .expect("the resolved edit");
    assert!(!edits.is_empty(), "{resolved:#}");
    assert_eq!(resolved["title"], actions[0]["title"]);

    // After an edit, the old action is refused (ContentModified).
    s.change_full(&uri, 2, &format!("{text}# changed\n"));
    s.diagnostics(&uri, 2);
    let err = s
        .try_request("codeAction/resolve", actions[0].clone())
        .expect_err("a stale action");
    assert_eq!(err["code"], json!(-32801), "{err:#}");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn a_client_without_resolve_support_gets_the_edits_at_once() {
    let mut s = Server::start();
    let uri = doc_uri("no-resolve");
    let text = "Task * GPU;\ndef f(Task t) { return mgpu[0, 0]; }\nIndexTaskMap * f;\n";
    let diags = s.open(&uri, text);
    let undefined = diags.iter().find(|d| d["code"] == "E0201").unwrap().clone();
    let actions = s.quick_fixes(&uri, &undefined);
    assert!(!actions.is_empty());
    assert!(
        actions.iter().all(|a| a["edit"].is_object()),
        "{actions:#?}"
    );
    assert_eq!(s.shutdown(), Some(0));
}
