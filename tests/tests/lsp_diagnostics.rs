//! `mapwright lsp` end to end: published diagnostics (versions, codes,
//! related information, fixes in `data`, clearing on close), position
//! encodings with non-ASCII text and CRLF, and typing character by character.

mod lsp_support;

use lsp_support::*;
use mapwright_grammar::line_index::Encoding;
use serde_json::{json, Value};

/// Comments and a string with 1- to 4-byte characters, CRLF line endings.
const UNICODE_CRLF: &str =
    "# café ☕ 😀\r\nx = 1; y = \"😀é\";\r\nTask * GPU\r\n# ünï\r\nRegion * * GPU FBMEM;\r\n";

fn by_code<'a>(diags: &'a [Value], code: &str) -> &'a Value {
    diags
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {diags:#?}"))
}

fn lc(v: &Value) -> (u64, u64) {
    (
        v["line"].as_u64().unwrap(),
        v["character"].as_u64().unwrap(),
    )
}

#[test]
fn diagnostics_carry_version_code_related_information_and_fixes() {
    let mut s = Server::start();
    let uri = doc_uri("diag-basic");
    let diags = s.open(&uri, UNICODE_CRLF);
    let semi = by_code(&diags, "E0101");
    assert_eq!(semi["severity"], 1);
    assert_eq!(semi["source"], "mapwright");
    assert_eq!(lc(&semi["range"]["start"]), (2, 10));
    let related = &semi["relatedInformation"][0];
    assert_eq!(related["location"]["uri"], uri.as_str());
    assert_eq!(lc(&related["location"]["range"]["start"]), (4, 0));
    assert_eq!(lc(&related["location"]["range"]["end"]), (4, 6));
    assert!(related["message"]
        .as_str()
        .unwrap()
        .contains("next statement"));
    // `data` names the version; the fixes are not published (payload) but
    // computed by the code action, already in LSP coordinates.
    let data = &semi["data"];
    assert_eq!(data["version"], 1);
    assert!(data.get("fixes").is_none(), "{data}");
    let fixes = s.quick_fixes(&uri, semi);
    assert_eq!(fixes[0]["title"], "insert `;`");
    assert_eq!(fixes[0]["isPreferred"], true);
    let edit = &fixes[0]["edit"]["changes"][uri.as_str()][0];
    assert_eq!(edit["newText"], ";");
    // Semantic diagnostics come along (same as `mapwright check`).
    let unused = by_code(&diags, "W0214");
    assert_eq!(unused["severity"], 2);
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn utf16_columns_with_non_ascii_text_and_crlf() {
    let mut s = Server::start();
    assert_eq!(s.encoding, Encoding::Utf16);
    let uri = doc_uri("diag-utf16");
    let diags = s.open(&uri, UNICODE_CRLF);
    // `"😀é"` starts at column 11; the emoji is 2 UTF-16 units, `é` one.
    let string = by_code(&diags, "E0118");
    assert_eq!(lc(&string["range"]["start"]), (1, 11));
    assert_eq!(lc(&string["range"]["end"]), (1, 16));

    // Delete the emoji by its UTF-16 range: the string shrinks by 2 units.
    s.change(
        &uri,
        2,
        json!({"start": {"line": 1, "character": 12}, "end": {"line": 1, "character": 14}}),
        "",
    );
    let diags = s.diagnostics(&uri, 2);
    assert_eq!(lc(&by_code(&diags, "E0118")["range"]["end"]), (1, 14));

    // Insert after the emoji of the comment (column 11 in UTF-16) and fix
    // the missing `;` with a position past the end of the line (clamped
    // before the CR).
    s.change(
        &uri,
        3,
        json!({"start": {"line": 0, "character": 11}, "end": {"line": 0, "character": 11}}),
        "!",
    );
    s.change(
        &uri,
        4,
        json!({"start": {"line": 2, "character": 80}, "end": {"line": 2, "character": 80}}),
        ";",
    );
    let diags = s.diagnostics(&uri, 4);
    assert!(diags.iter().all(|d| d["code"] != "E0101"), "{diags:#?}");
    // The comment token grew by one unit: 12 UTF-16 units now.
    let tokens = s.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": uri}}),
    );
    let data: Vec<u64> = tokens["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(&data[..3], &[0, 0, 12]);
    // Formatting sees exactly the text an editor has: nothing to change on
    // the statements that parse, CRLF kept.
    let edits = s.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": uri}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    let expected_text = UNICODE_CRLF
        .replace("😀\r\n", "😀!\r\n")
        .replace("\"😀é\"", "\"é\"")
        .replace("GPU\r\n#", "GPU;\r\n#");
    let formatted = apply_edits(&expected_text, edits.as_array().unwrap(), Encoding::Utf16);
    assert!(formatted.contains("# café ☕ 😀!\r\n"), "{formatted:?}");
    assert!(
        !formatted.contains("\n\n") && formatted.contains("\r\n"),
        "{formatted:?}"
    );
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn utf8_columns_when_the_client_offers_utf8() {
    let mut s = Server::start_with(
        json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}}),
        Value::Null,
        None,
    );
    assert_eq!(s.encoding, Encoding::Utf8);
    let uri = doc_uri("diag-utf8");
    let diags = s.open(&uri, UNICODE_CRLF);
    let string = by_code(&diags, "E0118");
    assert_eq!(lc(&string["range"]["start"]), (1, 11));
    // 1 quote + 4 bytes + 2 bytes + 1 quote.
    assert_eq!(lc(&string["range"]["end"]), (1, 19));
    // Delete the emoji by its UTF-8 range.
    s.change(
        &uri,
        2,
        json!({"start": {"line": 1, "character": 12}, "end": {"line": 1, "character": 16}}),
        "",
    );
    let diags = s.diagnostics(&uri, 2);
    assert_eq!(lc(&by_code(&diags, "E0118")["range"]["end"]), (1, 15));
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn diagnostics_are_cleared_on_close() {
    let mut s = Server::start();
    let uri = doc_uri("diag-close");
    assert!(!s.open(&uri, "Task * GPU\n").is_empty());
    s.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    let msg = s.wait_for("cleared diagnostics", |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri.as_str()
            && m["params"]["diagnostics"] == json!([])
    });
    assert!(msg["params"]["version"].is_null());
    // Closed means forgotten: requests get empty answers.
    let r = s.request("textDocument/hover", s.at(&uri, "Task", 1));
    assert_eq!(r, Value::Null);
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn saving_republishes_the_current_version() {
    let mut s = Server::start();
    let uri = doc_uri("diag-save");
    s.open(&uri, "Task * GPU\n");
    s.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(s.diagnostics(&uri, 1).len(), 1);
    assert_eq!(s.shutdown(), Some(0));
}

/// A clean mapper with non-ASCII comments, typed one character at a time.
const TYPED: &str = "# placement — é 😀\nTask * GPU, CPU;\nRegion * * GPU FBMEM;\n\nmgpu = Machine(GPU);\n\ndef linear(Task task) {\n    ip = task.ipoint;\n    return mgpu[ip[0] % mgpu.size[0], 0];\n}\n\nIndexTaskMap calc linear;\n";

#[test]
fn typing_character_by_character_converges_to_the_final_diagnostics() {
    let mut s = Server::start();
    let uri = doc_uri("typing");
    // An empty file is an error (a mapper needs a statement).
    let first = s.open(&uri, "");
    assert_eq!(first.len(), 1, "{first:#?}");

    let mut text = String::new();
    let mut version = 1;
    let mut midway_checked = false;
    for ch in TYPED.chars() {
        // Insert at the end, in UTF-16 coordinates of the current text,
        // exactly as an editor sends each keystroke.
        let end = pos(&text, text.len(), Encoding::Utf16);
        version += 1;
        s.change(
            &uri,
            version,
            json!({"start": end, "end": end}),
            &ch.to_string(),
        );
        text.push(ch);
        if text.ends_with("Task * GPU, CPU") && !midway_checked {
            // Pause mid-statement: the missing `;` is reported for exactly
            // this version.
            let diags = s.diagnostics(&uri, version);
            assert!(diags.iter().any(|d| d["code"] == "E0101"), "{diags:#?}");
            midway_checked = true;
        }
    }
    let last = s.diagnostics(&uri, version);
    assert!(last.is_empty(), "final text should be clean: {last:#?}");
    let info = s.request(
        "mapwright/documentInfo",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(info["version"], version);
    // The debounce coalesced the burst: far fewer publications than keystrokes.
    let mut published = 0;
    while s
        .try_wait_for(std::time::Duration::from_millis(1), &|m| {
            m["method"] == "textDocument/publishDiagnostics"
        })
        .is_some()
    {
        published += 1;
    }
    let keystrokes = TYPED.chars().count();
    assert!(
        published < keystrokes / 2,
        "{published} publications for {keystrokes} keystrokes"
    );
    // And the server's text is the editor's text: formatting finds nothing.
    let edits = s.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": uri}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    assert_eq!(edits, json!([]));
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn diagnostics_can_be_disabled_by_settings() {
    let mut s = Server::start_with(json!({}), json!({"diagnostics": {"enable": false}}), None);
    let uri = doc_uri("diag-disabled");
    assert!(s.open(&uri, "Task * GPU\n").is_empty());
    assert_eq!(s.shutdown(), Some(0));
}

/// Optional diagnostic fields go only to clients that advertise them:
/// without `tagSupport`, `codeDescriptionSupport`, `dataSupport` and
/// `relatedInformation`, none of them is published (related notes are
/// appended to the message instead), and quick fixes still work.
#[test]
fn optional_diagnostic_fields_follow_the_client_capabilities() {
    let mut s = Server::start_with(
        json!({"textDocument": {"publishDiagnostics": {
            "relatedInformation": false, "tagSupport": null,
            "codeDescriptionSupport": false, "dataSupport": false}}}),
        Value::Null,
        None,
    );
    let uri = doc_uri("bare-fields");
    let text = "m = Machine(GPU);\nx = 1;\ndef f(Task t) {\n    return mm[0, 0];\n}\nIndexTaskMap foo f;\n";
    let diags = s.open(&uri, text);
    assert!(!diags.is_empty());
    for d in &diags {
        for field in ["tags", "codeDescription", "data", "relatedInformation"] {
            assert!(d.get(field).is_none(), "{field} in {d:#}");
        }
    }
    let undefined = diags.iter().find(|d| d["code"] == "E0201").unwrap();
    assert!(!s.quick_fixes(&uri, undefined).is_empty());
    assert_eq!(s.shutdown(), Some(0));
}
