//! Benchmarks of `mapwright lsp` through the real binary (ignored by
//! default; run in release):
//!
//! ```text
//! cargo test --release -p mapwright-tests --test lsp_bench -- --ignored --nocapture
//! ```
//!
//! - Keystroke-to-diagnostics latency: the time from sending a `didChange`
//!   of one character to receiving `publishDiagnostics` for that version,
//!   with the debounce set to 0, over 200 keystrokes (after 20 of warm-up)
//!   typed into the middle of the file: p50, p99 and max. On the largest
//!   file of the public corpus and on a generated 5,000-line mapper; and on
//!   the corpus file with its application configured (so every keystroke
//!   also runs the mapping resolution with verified quick fixes).
//! - Resident memory (`VmRSS`) of the server with 100 open documents, with
//!   and without an application configured.
//!
//! Targets: p99 under 10 ms, RSS under 50 MB.

mod lsp_support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_support::*;
use serde_json::{json, Value};

const KEYSTROKES: usize = 200;
const WARMUP: usize = 20;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/public")
}

/// Every `.mapper` file of the public corpus, largest first.
fn corpus_files() -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(corpus_dir())
        .expect("the public corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "mapper"))
        .filter_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)))
        .collect();
    files.sort_by_key(|(p, t)| (std::cmp::Reverse(t.len()), p.clone()));
    files
}

/// A realistic mapper of at least `lines` lines: machine models, mapping
/// functions and every kind of statement, repeated with fresh names.
fn generated(lines: usize) -> String {
    let mut s = String::from(
        "# generated for the latency benchmark — é\nmgpu = Machine(GPU);\nmcpu = Machine(CPU);\n",
    );
    let mut i = 0;
    while s.lines().count() < lines {
        s.push_str(&format!(
            "Task t{i} GPU,CPU;\n\
             Region t{i} r{i} GPU FBMEM;\n\
             Layout t{i} * * SOA C_order;\n\
             m{i} = mgpu.split(1, 2);\n\
             def f{i}(Task task) {{\n    ip = task.ipoint;\n    return m{i}[ip[0] % m{i}.size[0], ip[1] % m{i}.size[1], 0];\n}}\n\
             IndexTaskMap t{i} f{i};\n"
        ));
        i += 1;
    }
    s
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Types `KEYSTROKES + WARMUP` characters at the start of the middle line
/// of `text` (a statement, character by character, over and over) and
/// returns the latency of each measured keystroke.
fn type_into(s: &mut Server, uri: &str, text: &str) -> Vec<Duration> {
    let mut current = text.to_string();
    let middle_line = current.lines().count() / 2;
    let mut offset = current
        .match_indices('\n')
        .nth(middle_line.saturating_sub(1))
        .map_or(0, |(i, _)| i + 1);
    let typed = "Region * * GPU FBMEM;\n";
    let mut out = Vec::new();
    let mut version = 1;
    for k in 0..KEYSTROKES + WARMUP {
        let c = typed.chars().nth(k % typed.len()).unwrap();
        let at = pos(&current, offset, s.encoding);
        version += 1;
        let start = Instant::now();
        s.change(
            uri,
            version,
            json!({"start": at, "end": at}),
            &c.to_string(),
        );
        s.wait_for("diagnostics of the keystroke", |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == json!(version)
        });
        let took = start.elapsed();
        if k >= WARMUP {
            out.push(took);
        }
        current.insert(offset, c);
        offset += c.len_utf8();
    }
    out
}

fn report(what: &str, mut latencies: Vec<Duration>) -> (f64, f64) {
    latencies.sort();
    let p50 = ms(percentile(&latencies, 0.50));
    let p99 = ms(percentile(&latencies, 0.99));
    let max = ms(*latencies.last().unwrap());
    let mean = latencies.iter().map(|d| ms(*d)).sum::<f64>() / latencies.len() as f64;
    println!(
        "{what}: {} keystrokes: p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms, mean {mean:.2} ms [{}]",
        latencies.len(),
        if p99 < 10.0 { "p99 < 10 ms: ok" } else { "p99 >= 10 ms: over target" }
    );
    (p50, p99)
}

fn no_debounce(extra: Value) -> Value {
    let mut v = json!({"diagnostics": {"debounceMs": 0}});
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in e {
            o.insert(k.clone(), x.clone());
        }
    }
    v
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

#[test]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
fn keystroke_to_diagnostics_latency() {
    let files = corpus_files();
    let (path, text) = files.first().expect("a corpus file");
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    println!(
        "largest public corpus file: {name} ({} bytes, {} lines)",
        text.len(),
        text.lines().count()
    );

    let mut s = Server::start_with(json!({}), no_debounce(json!({})), None);
    let uri = doc_uri("bench-corpus");
    s.open(&uri, text);
    report(
        &format!("{name}, no application"),
        type_into(&mut s, &uri, text),
    );
    s.shutdown();

    let big = generated(5_000);
    println!(
        "generated mapper: {} bytes, {} lines",
        big.len(),
        big.lines().count()
    );
    let mut s = Server::start_with(json!({}), no_debounce(json!({})), None);
    let uri = doc_uri("bench-5000");
    s.open(&uri, &big);
    report(
        "5,000-line file, no application",
        type_into(&mut s, &uri, &big),
    );
    s.shutdown();

    // The corpus file written for COSMA, with COSMA on the paper's machine:
    // each keystroke also resolves the mapping (and verifies its fixes).
    let mut s = Server::start_with(
        json!({}),
        no_debounce(json!({"app": "cosma", "machine": "p100x4"})),
        None,
    );
    let uri = doc_uri("bench-corpus-app");
    s.open(&uri, text);
    report(
        &format!("{name}, application cosma on p100x4"),
        type_into(&mut s, &uri, text),
    );
    s.shutdown();
}

#[test]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
fn resident_memory_with_100_open_documents() {
    let files = corpus_files();
    for (label, settings) in [
        ("no application", no_debounce(json!({}))),
        (
            "application circuit on p100x4",
            no_debounce(json!({"app": "circuit", "machine": "p100x4"})),
        ),
    ] {
        let dir = temp_dir("bench-rss");
        let mut s = Server::start_with(json!({}), settings, None);
        let baseline = rss_kib(s.pid());
        let mut bytes = 0;
        for i in 0..100 {
            let (_, text) = &files[i % files.len()];
            let uri = file_uri(&dir.join(format!("doc{i}.mapper")));
            bytes += text.len();
            s.open(&uri, text);
        }
        let rss = rss_kib(s.pid());
        println!(
            "{label}: VmRSS {:.1} MB with 100 open documents ({:.1} KB of text; idle server {:.1} MB) [{}]",
            rss as f64 / 1024.0,
            bytes as f64 / 1024.0,
            baseline as f64 / 1024.0,
            if rss < 50 * 1024 { "< 50 MB: ok" } else { ">= 50 MB: over target" }
        );
        s.shutdown();
    }
}
