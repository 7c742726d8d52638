//! `mapwright lsp` end to end: the published diagnostics of a document
//! being typed into reuse the JSON of the previous publish
//! (`server/src/lsp/publish_cache.rs`); after every keystroke they must be
//! exactly what a server that never saw the earlier versions publishes for
//! the same text and version.

mod lsp_support;

use lsp_support::*;
use mapwright_tests::generated::{corpus_mappers, generated, keystrokes, Keystroke};
use serde_json::{json, Value};

/// The diagnostics a server publishes for `text` opened afresh at `version`
/// (closed first, so nothing of the earlier publishes is kept).
fn fresh(s: &mut Server, uri: &str, text: &str, version: i64) -> Vec<Value> {
    s.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "mapper", "version": version, "text": text}}),
    );
    s.diagnostics(uri, version)
}

/// `diags` without their `data` (which names the version).
fn without_data(diags: &[Value]) -> Vec<Value> {
    diags
        .iter()
        .map(|d| {
            let mut d = d.clone();
            if let Some(o) = d.as_object_mut() {
                o.remove("data");
            }
            d
        })
        .collect()
}

fn typed_matches_fresh(mut typed: Server, mut reference: Server, seed: u64) {
    let uri = doc_uri(&format!("publish-cache-{seed}"));
    // A few hundred lines with diagnostics of every kind, CRLF-free but
    // with a non-ASCII first line (UTF-16 columns).
    let text = generated(seed, 400, &corpus_mappers());
    let first = typed.open(&uri, &text);
    assert!(first.len() > 50, "{} diagnostics", first.len());
    assert_eq!(first, fresh(&mut reference, &uri, &text, 1));
    let mut current = text.clone();
    let mut moved = 0;
    // The benchmark's keystrokes, then a line break typed and erased in
    // the middle of the file (every later diagnostic moves a line down and
    // back up).
    let mut edits = keystrokes(&text, seed, 24);
    let middle = text[..text.len() / 2].rfind('\n').map_or(0, |i| i + 1);
    for (from, to, insert) in [(middle, middle, "\n"), (middle, middle + 1, "")] {
        edits.push(Keystroke {
            from,
            to,
            insert: insert.to_string(),
        });
    }
    for (k, key) in edits.into_iter().enumerate() {
        let version = k as i64 + 2;
        let range = range(&current, key.from, key.to, typed.encoding);
        typed.change(&uri, version, range, &key.insert);
        current.replace_range(key.from..key.to, &key.insert);
        let got = typed.diagnostics(&uri, version);
        let want = fresh(&mut reference, &uri, &current, version);
        assert_eq!(got.len(), want.len(), "keystroke {k}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g, w, "keystroke {k}");
        }
        moved += usize::from(without_data(&got) != without_data(&first));
    }
    // The edits did move or change diagnostics (the test would not see a
    // stale range otherwise).
    assert!(moved > 0);
    assert_eq!(typed.shutdown(), Some(0));
    assert_eq!(reference.shutdown(), Some(0));
}

#[test]
fn diagnostics_after_keystrokes_equal_a_fresh_servers_with_every_field() {
    typed_matches_fresh(Server::start(), Server::start(), 7);
}

#[test]
fn diagnostics_after_keystrokes_equal_a_fresh_servers_without_optional_fields() {
    // No optional field: related notes go into the message with their line
    // numbers, which move with the edits.
    let caps = json!({"textDocument": {"publishDiagnostics": {
        "relatedInformation": false, "versionSupport": true,
        "tagSupport": null, "codeDescriptionSupport": false, "dataSupport": false}}});
    typed_matches_fresh(
        Server::start_with(caps.clone(), Value::Null, None),
        Server::start_with(caps, Value::Null, None),
        8,
    );
}
