//! `mapwright lsp` end to end: formatting and range formatting as minimal
//! edits, quick fixes from diagnostic data, and source actions.

mod lsp_support;

use lsp_support::*;
use mapwright_grammar::line_index::Encoding;
use serde_json::{json, Value};

const FORMAT_OPTIONS: &str = r#"{"tabSize": 4, "insertSpaces": true}"#;

fn options() -> Value {
    serde_json::from_str(FORMAT_OPTIONS).unwrap()
}

const MESSY: &str = "# keep this comment — é\nTask  *   GPU,CPU;\nmgpu=Machine(GPU);\ndef f(Task task){\nreturn mgpu[task.ipoint[0]%mgpu.size[0],0];   # trailing\n}\nIndexTaskMap  calc   f;\n";

#[test]
fn formatting_returns_minimal_edits_that_reproduce_the_formatter() {
    let mut s = Server::start();
    let uri = doc_uri("fmt-doc");
    s.open(&uri, MESSY);
    let edits = s.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": uri}, "options": options()}),
    );
    let edits = edits.as_array().unwrap();
    let formatted = apply_edits(MESSY, edits, Encoding::Utf16);
    assert_eq!(formatted, mapwright_grammar::format::format(MESSY));
    assert!(formatted.contains("mgpu = Machine(GPU);"));
    assert!(formatted.contains("# keep this comment — é"));
    // Minimal: no edit replaces a whole line, and the comment is untouched.
    assert!(edits.len() > 3, "{edits:#?}");
    for e in edits {
        let new_text = e["newText"].as_str().unwrap();
        assert!(new_text.len() <= 5, "large edit {e}");
        assert!(
            e["range"]["start"]["line"] != 0,
            "the comment line was edited: {e}"
        );
    }
    // Once formatted, there is nothing to do.
    s.change_full(&uri, 2, &formatted);
    let again = s.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": uri}, "options": options()}),
    );
    assert_eq!(again, json!([]));
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn range_formatting_touches_only_the_selected_statements() {
    let mut s = Server::start();
    let uri = doc_uri("fmt-range");
    s.open(&uri, MESSY);
    let start = MESSY.find("mgpu=").unwrap();
    let edits = s.request(
        "textDocument/rangeFormatting",
        json!({"textDocument": {"uri": uri}, "options": options(),
               "range": range(MESSY, start, start + 4, Encoding::Utf16)}),
    );
    let out = apply_edits(MESSY, edits.as_array().unwrap(), Encoding::Utf16);
    assert!(
        out.contains("Task  *   GPU,CPU;"),
        "other statements untouched: {out}"
    );
    assert!(out.contains("mgpu = Machine(GPU);"));
    assert!(out.contains("IndexTaskMap  calc   f;"));
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn quick_fixes_come_from_diagnostic_data_and_single_safe_fixes_are_preferred() {
    let mut s = Server::start();
    let uri = doc_uri("fix-data");
    let text = "Task * GPU\nRegion * * cpu SYSMEM;\n";
    let diags = s.open(&uri, text);
    let semi = diags.iter().find(|d| d["code"] == "E0101").unwrap().clone();
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": semi["range"],
               "context": {"diagnostics": [semi], "only": ["quickfix"]}}),
    );
    let actions = actions.as_array().unwrap();
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert_eq!(actions[0]["title"], "insert `;`");
    assert_eq!(actions[0]["kind"], "quickfix");
    assert_eq!(actions[0]["isPreferred"], true);
    let edits = actions[0]["edit"]["changes"][uri.as_str()]
        .as_array()
        .unwrap();
    let fixed = apply_edits(text, edits, Encoding::Utf16);
    assert_eq!(fixed, "Task * GPU;\nRegion * * cpu SYSMEM;\n");

    // A diagnostic with several fixes: all offered, none preferred.
    let (slot, n) = diags
        .iter()
        .map(|d| (d.clone(), s.quick_fixes(&uri, d).len()))
        .find(|(_, n)| *n > 1)
        .unwrap_or_else(|| panic!("a diagnostic with several fixes: {diags:#?}"));
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": slot["range"],
               "context": {"diagnostics": [slot], "only": ["quickfix"]}}),
    );
    let actions = actions.as_array().unwrap();
    assert_eq!(actions.len(), n);
    assert!(
        actions.iter().all(|a| a["isPreferred"].is_null()),
        "{actions:#?}"
    );

    // A client that drops `data` still gets the fix (recomputed).
    let mut bare = semi_without_data(&s, &uri, text);
    bare.as_object_mut().unwrap().remove("data");
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": bare["range"],
               "context": {"diagnostics": [bare]}}),
    );
    assert!(actions
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["title"] == "insert `;`"));
    assert_eq!(s.shutdown(), Some(0));
}

/// The E0101 diagnostic as the test knows it from the text alone.
fn semi_without_data(s: &Server, _uri: &str, text: &str) -> Value {
    let at = text.find('\n').unwrap();
    json!({
        "range": range(text, at, at, s.encoding),
        "code": "E0101",
        "source": "mapwright",
        "message": "missing `;` at the end of the statement",
    })
}

#[test]
fn fixes_computed_for_an_older_version_are_not_offered() {
    let mut s = Server::start();
    let uri = doc_uri("fix-stale");
    let diags = s.open(&uri, "Task * GPU\n");
    let old = diags[0].clone();
    // The user typed something before asking for the fix.
    s.change_full(&uri, 2, "# a new first line\nTask * GPU\n");
    s.diagnostics(&uri, 2);
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": old["range"],
               "context": {"diagnostics": [old], "only": ["quickfix"]}}),
    );
    assert_eq!(actions, json!([]));
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn a_stale_diagnostic_in_the_context_does_not_hide_the_current_fixes() {
    let mut s = Server::start();
    let uri = doc_uri("fix-stale-context");
    let diags = s.open(&uri, "Task * GPU\n");
    let old = diags[0].clone();
    // The user typed above it, and asks for fixes on the statement before
    // the editor has the new diagnostics: it sends the old one.
    let text = "# a new first line\nTask * GPU\n";
    s.change_full(&uri, 2, text);
    s.diagnostics(&uri, 2);
    let at = text.find("Task").unwrap();
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(text, at, text.len() - 1, s.encoding),
               "context": {"diagnostics": [old], "only": ["quickfix"]}}),
    );
    let titles: Vec<&str> = actions
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["title"].as_str())
        .collect();
    assert_eq!(titles, ["insert `;`"], "{actions:#?}");
    // The fix edits the current text.
    let edit = &actions[0]["edit"]["changes"][uri.as_str()];
    let fixed = apply_edits(text, edit.as_array().unwrap(), s.encoding);
    assert_eq!(fixed, "# a new first line\nTask * GPU;\n");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn source_actions_format_and_add_missing_machine() {
    let mut s = Server::start();
    let uri = doc_uri("source-actions");
    let text = "Task  *  GPU;\ndef f(Task task) {\n    return mgpu[task.ipoint[0] % mgpu.size[0], 0];\n}\nIndexTaskMap calc f;\n";
    s.open(&uri, text);
    let whole = range(text, 0, text.len(), Encoding::Utf16);
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(text, 0, 0, Encoding::Utf16),
               "context": {"diagnostics": [], "only": ["source"]}}),
    );
    let actions = actions.as_array().unwrap();
    let titles: Vec<&str> = actions
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&"Format"), "{titles:?}");
    let add = actions
        .iter()
        .find(|a| a["title"] == "Add missing `mgpu = Machine(GPU);`")
        .unwrap_or_else(|| panic!("{titles:?}"));
    assert_eq!(add["kind"], "source.addMissingMachine");
    let edits = add["edit"]["changes"][uri.as_str()].as_array().unwrap();
    let fixed = apply_edits(text, edits, Encoding::Utf16);
    assert!(
        fixed.starts_with("Task  *  GPU;\nmgpu = Machine(GPU);\ndef f"),
        "{fixed}"
    );
    let format = actions.iter().find(|a| a["title"] == "Format").unwrap();
    assert_eq!(format["kind"], "source.format");
    let edits = format["edit"]["changes"][uri.as_str()].as_array().unwrap();
    assert!(apply_edits(text, edits, Encoding::Utf16).starts_with("Task * GPU;\n"));

    // With the cursor on a use, the definition is also one quick fix (the
    // E0201 diagnostic's, found without the client sending it).
    let at = text.find("mgpu").unwrap();
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(text, at, at + 2, Encoding::Utf16),
               "context": {"diagnostics": []}}),
    );
    assert_eq!(
        mgpu_definitions(&actions, "quickfix").len(),
        1,
        "{actions:#?}"
    );
    // Only quick fixes requested: no source actions.
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": whole,
               "context": {"diagnostics": [], "only": ["quickfix"]}}),
    );
    assert!(actions
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["kind"] == "quickfix"));
    assert_eq!(s.shutdown(), Some(0));
}

/// The actions of `kind` whose edit defines `mgpu`.
fn mgpu_definitions<'a>(actions: &'a Value, kind: &str) -> Vec<&'a Value> {
    actions
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == kind && a["edit"].to_string().contains("mgpu = Machine("))
        .collect()
}

#[test]
fn the_missing_machine_fix_is_offered_once_and_as_a_source_action() {
    let mut s = Server::start();
    let uri = doc_uri("machine-once");
    let text = "Task * GPU;\ndef f(Task task) {\n    return mgpu[task.ipoint[0] % mgpu.size[0], 0];\n}\nIndexTaskMap calc f;\n";
    let diags = s.open(&uri, text);
    let at = text.find("mgpu").unwrap();
    let first_use = diags
        .iter()
        .find(|d| d["code"] == "E0201" && offset(text, &d["range"]["start"], s.encoding) == at)
        .unwrap_or_else(|| panic!("{diags:#?}"))
        .clone();
    // The editor's lightbulb at the first use, with its diagnostic.
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": first_use["range"],
               "context": {"diagnostics": [first_use]}}),
    );
    assert_eq!(
        mgpu_definitions(&actions, "quickfix").len(),
        1,
        "{actions:#?}"
    );
    // A `source` request at the same place finds it with a source kind.
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": first_use["range"],
               "context": {"diagnostics": [], "only": ["source"]}}),
    );
    assert_eq!(
        mgpu_definitions(&actions, "source.addMissingMachine").len(),
        1,
        "{actions:#?}"
    );
    assert!(mgpu_definitions(&actions, "quickfix").is_empty());
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn fix_all_applies_every_safe_fix_at_once() {
    let mut s = Server::start();
    let uri = doc_uri("fix-all");
    // A missing `;` and an undefined machine model: one safe fix each.
    let text = "Task * GPU\ndef f(Task task) {\n    return mgpu[task.ipoint[0] % mgpu.size[0], 0];\n}\nIndexTaskMap calc f;\nRegion * * GPU FBMEM\n";
    let diags = s.open(&uri, text);
    assert!(diags.iter().any(|d| d["code"] == "E0101"), "{diags:#?}");
    assert!(diags.iter().any(|d| d["code"] == "E0201"), "{diags:#?}");
    // Not offered unless asked for by kind (it is for fix-on-save).
    let plain = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(text, 0, 0, s.encoding),
               "context": {"diagnostics": []}}),
    );
    assert!(!plain.to_string().contains("source.fixAll"), "{plain:#?}");
    let edits = s.fix_all_edits(&uri, text);
    let fixed = apply_edits(text, &edits, s.encoding);
    assert!(fixed.contains("Task * GPU;\n"), "{fixed}");
    assert!(fixed.contains("mgpu = Machine(GPU);\n"), "{fixed}");
    assert!(fixed.contains("Region * * GPU FBMEM;\n"), "{fixed}");
    // The fixed text has no errors left.
    s.change_full(&uri, 2, &fixed);
    let after = s.diagnostics(&uri, 2);
    assert!(after.iter().all(|d| d["severity"] != 1), "{after:#?}");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn fix_all_leaves_nearest_spelling_guesses_alone() {
    let mut s = Server::start();
    let uri = doc_uri("fix-all-guesses");
    // `f2` may be defined next; `mgpx` may be a typo of `mgpu` or not;
    // `TPU` is as near `CPU` as `GPU`. Only case alone is no guess.
    let text = "mgpu = Machine(GPU);\ndef f1(Task task) {\n    return mgpu[task.ipoint[0] % mgpu.size[0], 0];\n}\nIndexTaskMap calc f2;\nx = mgpx;\nz1 = 3;\ny = Z1;\nTask * TPU;\nTask * gpu;\n";
    let diags = s.open(&uri, text);
    for code in ["E0202", "E0201", "E0100"] {
        assert!(
            diags.iter().any(|d| d["code"] == code),
            "{code}: {diags:#?}"
        );
    }
    let edits = s.fix_all_edits(&uri, text);
    let fixed = apply_edits(text, &edits, s.encoding);
    assert!(fixed.contains("IndexTaskMap calc f2;\n"), "{fixed}");
    assert!(fixed.contains("x = mgpx;\n"), "{fixed}");
    assert!(fixed.contains("Task * TPU;\n"), "{fixed}");
    assert!(fixed.contains("y = z1;\n"), "{fixed}");
    assert!(fixed.contains("Task * GPU;\n"), "{fixed}");
    // The guesses are still offered, one keystroke away, but not
    // preferred (not applied by a bulk "fix preferred").
    let at = text.find("f2;").unwrap();
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(text, at, at + 2, s.encoding),
               "context": {"diagnostics": []}}),
    );
    let guess = actions
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["title"] == "use `f1`")
        .unwrap_or_else(|| panic!("{actions:#?}"));
    assert_ne!(guess["isPreferred"], true, "{guess:#?}");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn quick_fixes_are_offered_without_diagnostics_in_the_context() {
    let mut s = Server::start();
    let uri = doc_uri("fix-no-context");
    let text = "Task * GPU\nRegion * * GPU FBMEM;\n";
    s.open(&uri, text);
    let at = text.find('\n').unwrap();
    // The cursor at the end of the first line; the context is empty.
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(text, at, at, s.encoding),
               "context": {"diagnostics": []}}),
    );
    let fix = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "insert `;`")
        .unwrap_or_else(|| panic!("{actions:#?}"));
    assert_eq!(fix["kind"], "quickfix");
    assert_eq!(fix["isPreferred"], true);
    assert_eq!(fix["diagnostics"][0]["code"], "E0101");
    let edits = fix["edit"]["changes"][uri.as_str()].as_array().unwrap();
    assert_eq!(
        apply_edits(text, edits, s.encoding),
        "Task * GPU;\nRegion * * GPU FBMEM;\n"
    );
    // Away from the problem: no quick fix.
    let far = text.len() - 3;
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(text, far, far, s.encoding),
               "context": {"diagnostics": [], "only": ["quickfix"]}}),
    );
    assert_eq!(actions, json!([]));
    assert_eq!(s.shutdown(), Some(0));
}
