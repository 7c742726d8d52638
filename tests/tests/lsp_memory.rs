//! Resident memory of `mapwright lsp` with 100 open documents, through the
//! real binary (ignored by default; run in release):
//!
//! ```text
//! cargo test --release -p mapwright-tests --test lsp_memory -- --ignored --nocapture
//! ```
//!
//! Per scenario (no application; circuit on p100x4; cannon on p100x4) and
//! per run (3 runs, each a fresh server): 100 documents are opened (the
//! public corpus mappers, then generated mappers of 1,000 to 5,000 lines
//! made of corpus statements with different seeds), then every document is
//! exercised: three `didChange` edits, hover, completion, semantic tokens
//! (full), inlay hints and code actions over the whole file. The server's
//! `VmRSS` after it settles is the steady figure, `VmHWM` the peak. The
//! report gives the mean and the worst of the runs. Target: under 50 MB.
//!
//! Not ignored: the server keeps only the most recently used analyses and
//! mapping resolutions; answers that read an evicted one (recomputed) are
//! the same as before the eviction.

mod lsp_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use lsp_support::*;
use mapwright::lsp::analysis_cache::KEPT_ANALYSES;
use mapwright::lsp::target::KEPT_RESOLUTIONS;
use serde_json::{json, Value};

const DOCS: usize = 100;
const GENERATED: usize = 10;
const RUNS: usize = 3;

fn corpus_texts() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/public");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the public corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "mapper"))
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

/// Blank-line separated blocks of the corpus (statements, functions).
fn blocks(corpus: &[String]) -> Vec<String> {
    corpus
        .iter()
        .flat_map(|t| t.split("\n\n"))
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
        .collect()
}

/// A mapper of at least `lines` lines: corpus blocks picked by a seeded LCG.
fn generated(blocks: &[String], lines: usize, seed: u64) -> String {
    let mut s = String::from("# generated for the memory benchmark\n");
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut n = 1;
    while n < lines {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let b = &blocks[(x >> 33) as usize % blocks.len()];
        s.push_str(b);
        s.push_str("\n\n");
        n += b.lines().count() + 1;
    }
    s
}

fn proc_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("a /proc/PID/status field")
}

fn settings(extra: Value) -> Value {
    let mut v = json!({"diagnostics": {"debounceMs": 0}});
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in e {
            o.insert(k.clone(), x.clone());
        }
    }
    v
}

/// Exercises one open document; returns its text after the edits.
fn exercise(s: &mut Server, uri: &str, text: &str) -> String {
    let mut text = text.to_string();
    let enc = s.encoding;
    for (k, frac) in [(2, 3), (3, 2), (4, 5)] {
        // An edit at the start of a line near `len / frac`: a comment line.
        let mut at = text.len() / frac;
        while at > 0 && !text.is_char_boundary(at) {
            at -= 1;
        }
        at = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let insert = format!("# edit {k}\n");
        s.change(uri, k, range(&text, at, at, enc), &insert);
        text.insert_str(at, &insert);
        s.diagnostics(uri, k);
    }
    let mid = {
        let mut m = text.len() / 2;
        while !text.is_char_boundary(m) {
            m -= 1;
        }
        m
    };
    let whole = range(&text, 0, text.len(), enc);
    s.request("textDocument/hover", s.at(uri, &text, mid));
    s.request("textDocument/completion", s.at(uri, &text, mid));
    s.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": uri}}),
    );
    s.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": whole}),
    );
    s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": whole,
               "context": {"diagnostics": []}}),
    );
    text
}

/// The answers to each of `methods` just after the start of each of
/// `needles` in `text`.
fn ask_at(s: &mut Server, uri: &str, text: &str, needles: &[&str], methods: &[&str]) -> Vec<Value> {
    let mut out = Vec::new();
    for needle in needles {
        let at = text.find(needle).expect("needle in the mapper") + 1;
        for method in methods {
            out.push(s.request(method, s.at(uri, text, at)));
        }
    }
    out
}

/// Hover on several names, inlay hints and code actions over the whole
/// document (with the published diagnostics as context).
fn resolution_answers(s: &mut Server, uri: &str, text: &str, diags: &[Value]) -> Vec<Value> {
    let needles = [
        "IndexTaskMap",
        "m = Machine",
        "calculate_new_currents f",
        "update_voltages",
    ];
    let mut out = ask_at(s, uri, text, &needles, &["textDocument/hover"]);
    let whole = range(text, 0, text.len(), s.encoding);
    out.push(s.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": whole}),
    ));
    out.push(s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": whole,
               "context": {"diagnostics": diags}}),
    ));
    out
}

/// Only the most recently used resolutions stay in memory; once more
/// documents than that were resolved after it, the first document's
/// resolution is recomputed on the next request, and every answer that
/// reads it is identical to the answer before the eviction.
#[test]
fn answers_after_a_resolution_was_evicted_are_identical() {
    let dir = temp_dir("mem-evict");
    let mut s = Server::start_with(
        json!({}),
        settings(json!({"app": "circuit", "machine": "p100x4"})),
        None,
    );
    let uri = file_uri(&dir.join("first.mapper"));
    let diags = s.open(&uri, CIRCUIT_MAPPER);
    assert!(
        diags.iter().any(|d| d["code"] == "W0309"),
        "the resolution's diagnostics are published: {diags:#?}"
    );
    let before = resolution_answers(&mut s, &uri, CIRCUIT_MAPPER, &diags);
    let hover = before[0]["contents"]["value"].as_str().unwrap_or("");
    assert!(hover.contains("calculate_new_currents"), "{hover}");
    assert!(
        before[5].as_array().is_some_and(|a| !a.is_empty()),
        "code actions: {:#}",
        before[5]
    );
    // Each open publishes the document's diagnostics, which resolves it.
    for i in 0..KEPT_RESOLUTIONS + 2 {
        let other = file_uri(&dir.join(format!("other{i}.mapper")));
        let text = format!("{CIRCUIT_MAPPER}# other {i}\n");
        let d = s.open(&other, &text);
        assert!(d.iter().any(|d| d["code"] == "W0309"), "{d:#?}");
    }
    let after = resolution_answers(&mut s, &uri, CIRCUIT_MAPPER, &diags);
    assert_eq!(before, after);
    s.shutdown();
}

/// A mapper with diagnostics of several kinds (unused, undefined, a
/// misspelled task) and the quick fixes they offer.
const NOISY_MAPPER: &str = "Task * GPU,CPU;
Task calculate_new_curents GPU;
m = Machine(GPU);
unused = m.size[0];
def f(Task task) {
    ip = task.ipoint;
    return mx[0, ip[0] + 1];
}
def g(Task task) {
    return m[0, 0];
}
IndexTaskMap calculate_new_currents f;
# a comment
";

/// What a client asks about one document: hover and completion at several
/// places, full semantic tokens (without their result id, which counts
/// requests), code actions over the whole file with and without the
/// published diagnostics, pulled diagnostics, symbols, folding and inlay
/// hints.
fn analysis_answers(s: &mut Server, uri: &str, text: &str, diags: &[Value]) -> Vec<Value> {
    let needles = [
        "Machine",
        "m.size",
        "ipoint",
        "mx[",
        "calculate_new_currents f",
    ];
    let methods = ["textDocument/hover", "textDocument/completion"];
    let mut out = ask_at(s, uri, text, &needles, &methods);
    let doc = json!({"textDocument": {"uri": uri}});
    let mut tokens = s.request("textDocument/semanticTokens/full", doc.clone());
    if let Some(t) = tokens.as_object_mut() {
        t.remove("resultId");
    }
    out.push(tokens);
    let whole = range(text, 0, text.len(), s.encoding);
    for context in [json!([]), json!(diags)] {
        out.push(s.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": whole,
                   "context": {"diagnostics": context}}),
        ));
    }
    out.push(s.request("textDocument/diagnostic", doc.clone()));
    out.push(s.request("textDocument/documentSymbol", doc.clone()));
    out.push(s.request("textDocument/foldingRange", doc));
    out.push(s.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": whole}),
    ));
    out
}

/// Only the most recently used analyses stay in memory; once more
/// documents than that were analysed after it, the first document's
/// analysis is computed again on the next request, and every answer is
/// identical to the answer before the eviction.
#[test]
fn answers_after_an_analysis_was_evicted_are_identical() {
    let dir = temp_dir("mem-evict-analysis");
    let mut s = Server::start_with(json!({}), settings(json!({})), None);
    let uri = file_uri(&dir.join("first.mapper"));
    let diags = s.open(&uri, NOISY_MAPPER);
    for code in ["W0214", "E0201", "W0213"] {
        assert!(
            diags.iter().any(|d| d["code"] == code),
            "{code} is published: {diags:#?}"
        );
    }
    let before = analysis_answers(&mut s, &uri, NOISY_MAPPER, &diags);
    let hover = before[0]["contents"]["value"].as_str().unwrap_or("");
    assert!(hover.contains("Machine"), "{hover}");
    let fixes = &before[before.len() - 5];
    assert!(
        fixes.as_array().is_some_and(|a| !a.is_empty()),
        "code actions: {fixes:#}"
    );
    assert_eq!(before[before.len() - 4]["kind"], "full");
    // Each open publishes the document's diagnostics, which analyses it.
    for i in 0..KEPT_ANALYSES + 2 {
        let other = file_uri(&dir.join(format!("other{i}.mapper")));
        s.open(&other, &format!("{NOISY_MAPPER}# other {i}\n"));
    }
    let after = analysis_answers(&mut s, &uri, NOISY_MAPPER, &diags);
    assert_eq!(before, after);
    s.shutdown();
}

#[test]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
fn resident_memory_100_documents_exercised() {
    let corpus = corpus_texts();
    let blocks = blocks(&corpus);
    let mut texts: Vec<String> = corpus.iter().take(DOCS - GENERATED).cloned().collect();
    for g in 0..GENERATED {
        let lines = 1_000 + g * 4_000 / (GENERATED - 1);
        texts.push(generated(&blocks, lines, g as u64 + 1));
    }
    while texts.len() < DOCS {
        texts.push(corpus[texts.len() % corpus.len()].clone());
    }
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    let lines: usize = texts.iter().map(|t| t.lines().count()).sum();
    println!(
        "{DOCS} documents ({GENERATED} generated of 1,000-5,000 lines): {:.1} KB, {lines} lines",
        bytes as f64 / 1024.0
    );
    for (label, extra) in [
        ("no application", json!({})),
        (
            "circuit on p100x4",
            json!({"app": "circuit", "machine": "p100x4"}),
        ),
        (
            "cannon on p100x4",
            json!({"app": "cannon", "machine": "p100x4"}),
        ),
    ] {
        let mut steady = Vec::new();
        let mut peak = Vec::new();
        for run in 0..RUNS {
            let dir = temp_dir(&format!("bench-mem-{run}"));
            let mut s = Server::start_with(json!({}), settings(extra.clone()), None);
            let uris: Vec<String> = (0..DOCS)
                .map(|i| file_uri(&dir.join(format!("doc{i}.mapper"))))
                .collect();
            for (uri, text) in uris.iter().zip(&texts) {
                s.open(uri, text);
            }
            for (uri, text) in uris.iter().zip(&texts) {
                exercise(&mut s, uri, text);
            }
            std::thread::sleep(Duration::from_millis(1500));
            steady.push(proc_kib(s.pid(), "VmRSS:") as f64 / 1024.0);
            peak.push(proc_kib(s.pid(), "VmHWM:") as f64 / 1024.0);
            s.shutdown();
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let worst = |v: &[f64]| v.iter().cloned().fold(f64::MIN, f64::max);
        println!(
            "{label}: steady VmRSS mean {:.1} MB, worst {:.1} MB; peak VmHWM mean {:.1} MB, worst {:.1} MB ({RUNS} runs) [{}]",
            mean(&steady),
            worst(&steady),
            mean(&peak),
            worst(&peak),
            if worst(&steady) < 50.0 { "steady < 50 MB: ok" } else { "steady >= 50 MB: over target" }
        );
    }
}
