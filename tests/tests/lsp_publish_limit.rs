//! The publish limit end to end through the real binary: on a generated
//! 5,000-line file with over 1,500 diagnostics the editor gets at most
//! `diagnostics.maxPublished` of them in under 100 KB, errors first, then
//! the ones nearest the last edit, with one `I0001` counting the rest;
//! `maxPublished: 0` sends every one, and a pulling client gets the same
//! choice.

mod lsp_support;

use lsp_support::*;
use mapwright_tests::generated::{corpus_mappers, generated};
use serde_json::{json, Value};

fn big_file() -> String {
    generated(1, 5_000, &corpus_mappers())
}

fn is_note(d: &Value) -> bool {
    d["code"] == "I0001" && d["message"].as_str().unwrap().contains("not shown here")
}

/// The count the note says was left out.
fn omitted(note: &Value) -> usize {
    let msg = note["message"].as_str().unwrap();
    msg.split_whitespace().next().unwrap().parse().unwrap()
}

fn errors(diags: &[Value]) -> usize {
    diags.iter().filter(|d| d["severity"] == 1).count()
}

fn lines(diags: &[Value]) -> Vec<u64> {
    diags
        .iter()
        .filter(|d| !is_note(d))
        .map(|d| d["range"]["start"]["line"].as_u64().unwrap())
        .collect()
}

/// How many of `lines` are within 300 lines of `line`.
fn near_to(lines: &[u64], line: usize) -> usize {
    lines
        .iter()
        .filter(|&&l| l.abs_diff(line as u64) < 300)
        .count()
}

#[test]
fn a_big_file_publishes_the_nearest_under_the_limit_and_counts_the_rest() {
    let text = big_file();
    let opts = json!({"diagnostics": {"debounceMs": 0}});
    let mut s = Server::start_with(json!({}), opts, None);
    let uri = doc_uri("publish-limit");
    let first = s.open(&uri, &text);

    // Every diagnostic, for reference: the same file with no limit.
    let opts_all = json!({"diagnostics": {"debounceMs": 0, "maxPublished": 0}});
    let mut all_server = Server::start_with(json!({}), opts_all, None);
    let all = all_server.open(&uri, &text);
    assert!(all.len() > 1_500, "{}", all.len());
    assert!(!all.iter().any(is_note));

    // The limited publish: at most 200 plus the note (and the checker's
    // own I0001s, always sent), under 100 KB.
    let note = first
        .iter()
        .find(|d| is_note(d))
        .expect("a note counting the rest");
    assert_eq!(note["range"]["start"], json!({"line": 0, "character": 0}));
    assert_eq!(note["severity"], 3);
    let sent: Vec<&Value> = first.iter().filter(|d| !is_note(d)).collect();
    let checker_notes = sent.iter().filter(|d| d["code"] == "I0001").count();
    assert!(sent.len() - checker_notes <= 200, "{}", sent.len());
    assert_eq!(
        sent.len() + omitted(note),
        all.len(),
        "sent + omitted = all"
    );
    let bytes = serde_json::to_string(&first).unwrap().len();
    assert!(bytes < 100 * 1024, "{bytes} bytes");
    eprintln!(
        "all {} ({} errors), sent {} ({} errors), {} bytes",
        all.len(),
        errors(&all),
        sent.len(),
        errors(&first),
        bytes
    );
    // Each one sent is one of all (same code, range and message).
    for d in &sent {
        assert!(
            all.iter().any(|a| a["code"] == d["code"]
                && a["range"] == d["range"]
                && a["message"] == d["message"]),
            "{d:#}"
        );
    }
    // Errors first: either every error is sent, or only errors are.
    let sent_errors = errors(&first);
    assert!(
        sent_errors == errors(&all) || sent_errors == sent.len() - checker_notes,
        "{sent_errors} of {} errors sent",
        errors(&all)
    );

    // An edit far down the file: the diagnostics sent move to it.
    let at_line = 4_200;
    let offset: usize = text.split_inclusive('\n').take(at_line).map(str::len).sum();
    let p = pos(&text, offset, s.encoding);
    s.change(&uri, 2, json!({"start": p, "end": p}), "\n");
    let after = s.diagnostics(&uri, 2);
    let before_lines = lines(&first);
    let after_lines = lines(&after);
    let near = |ls: &[u64]| near_to(ls, at_line);
    assert!(
        near(&after_lines) > near(&before_lines),
        "near line {at_line}: {} before, {} after",
        near(&before_lines),
        near(&after_lines)
    );
    assert!(after.iter().any(is_note));

    // A client that syncs the whole text: the edit is where the texts
    // start to differ.
    let mut edited = text.clone();
    edited.insert(offset, '\n');
    let at_line = 1_000;
    let offset2: usize = edited
        .split_inclusive('\n')
        .take(at_line)
        .map(str::len)
        .sum();
    edited.insert(offset2, '\n');
    s.change_full(&uri, 3, &edited);
    let moved = lines(&s.diagnostics(&uri, 3));
    assert!(
        near_to(&moved, at_line) > near_to(&after_lines, at_line),
        "near line {at_line}: {} before, {} after",
        near_to(&after_lines, at_line),
        near_to(&moved, at_line)
    );
    s.shutdown();
    all_server.shutdown();
}

#[test]
fn a_client_that_pulls_gets_the_same_limit() {
    let text = big_file();
    let mut s = Server::start_with(
        json!({"textDocument": {"diagnostic": {"dynamicRegistration": false}}}),
        json!({"diagnostics": {"debounceMs": 0, "maxPublished": 50}}),
        None,
    );
    let uri = doc_uri("publish-limit-pull");
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "mapper", "version": 1, "text": text}}),
    );
    let report = s.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": uri}}),
    );
    let items = report["items"].as_array().unwrap();
    let note = items.iter().find(|d| is_note(d)).expect("a note");
    let checker_notes = items
        .iter()
        .filter(|d| d["code"] == "I0001" && !is_note(d))
        .count();
    assert_eq!(items.len() - 1 - checker_notes, 50);
    assert!(omitted(note) > 1_400, "{note:#}");
    s.shutdown();
}
