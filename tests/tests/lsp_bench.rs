//! Benchmarks of `mapwright lsp` through the real binary (ignored by
//! default; run in release):
//!
//! ```text
//! cargo test --release -p mapwright-tests --test lsp_bench -- --ignored --nocapture
//! MAPWRIGHT_BIN=/path/to/other/mapwright cargo test --release ...   # another build
//! ```
//!
//! `MAPWRIGHT_BIN` runs the same benchmark against another binary (how
//! every "before" figure of the past runs was measured). Current figures:
//! bench/lsp_bench/RESULTS.md.
//! `LSP_BENCH_VERSUS=/path/to/other/mapwright` measures two builds in
//! pairs instead: both servers open the file, and each keystroke is sent
//! to one and then to the other (in turn first), so that the machine's
//! drift, which moves a whole run by 10-30 % on a 2-core VM, falls on both
//! alike. Each row then gives both builds' p50 / p99 and the median of the
//! per-keystroke ratios (the other build's latency over this one's).
//! `LSP_BENCH_SEEDS=4,5,6` generates the files from other seeds.
//! `LSP_BENCH_ONLY=TEXT` runs only the rows whose setting or file label
//! contains TEXT (`seed 1`, `no app`), e.g. under a profiler.
//! `LSP_BENCH_FILES=a.mapper,b.mapper` adds files of your own (each row
//! on its own, like the corpus file's), to measure the kind of file you
//! edit.
//! `LSP_BENCH_DUMP=DIR` writes each row's keystrokes (offset, text typed,
//! latency in microseconds) to a file in DIR, to see which are slow.
//! `LSP_BENCH_KEYSTROKES=N` types N keystrokes per file instead of 100: of
//! 100, the p99 is the second-slowest keystroke, one scheduler hiccup on a
//! 2-core machine; of 1,000 it is the tenth.
//! `LSP_BENCH_ROUNDS=N` measures every setting N times in turn and ends
//! with each setting's median and spread over the rounds.
//!
//! - Keystroke-to-diagnostics latency, the way an editor types: one
//!   `didChange` range edit per character, at a different place of the file
//!   every few keystrokes (a short word typed, then erased with backspace),
//!   from sending the change to having read the whole `publishDiagnostics`
//!   of that version (before the client parses it). 100 keystrokes (or
//!   `LSP_BENCH_KEYSTROKES`) after 10 of warm-up; p50, p99, max and the
//!   mean publish size.
//! - Files: three generated 5,000-line mappers (seeds 1-3) made of the
//!   public corpus's statements with diagnostics of every kind mixed in
//!   (unused names and functions, second assignments and definitions,
//!   undefined names, type errors, wrong calls, unreachable code, rules
//!   shadowed by repeated corpus rules, a few syntax errors), and the
//!   largest file of the public corpus.
//! - Settings per file: debounce 0 with no application; the default
//!   debounce (50 ms) with no application; debounce 0 with application
//!   cannon, and circuit, on p100x4 (each keystroke also resolves the
//!   mapping).
//! - What each field of the published diagnostics costs (bytes), on the
//!   first publish of each generated file.
//! - Resident memory (`VmRSS`) of the server with 100 open documents, with
//!   and without an application configured.
//!
//! Targets (issue 16): p99 under 5 ms on every generated file and under
//! 1 ms on the corpus file (debounce 0, no application); publish under
//! 100 KB on the generated files; RSS under 50 MB.

mod lsp_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use lsp_support::*;
use mapwright_tests::generated::{corpus_files, corpus_mappers, generated, keystrokes};
use serde_json::{json, Value};

const KEYSTROKES: usize = 100;

/// How many keystrokes each file is typed: [`KEYSTROKES`], or
/// `LSP_BENCH_KEYSTROKES`.
fn keystroke_count() -> usize {
    std::env::var("LSP_BENCH_KEYSTROKES")
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(KEYSTROKES)
}
const WARMUP: usize = 10;
const SEEDS: [u64; 3] = [1, 2, 3];

/// The seeds of the generated files: [`SEEDS`], or those listed in
/// `LSP_BENCH_SEEDS` (`4,5,6`), to check that a figure holds on files the
/// work was not measured on.
fn bench_seeds() -> Vec<u64> {
    let listed: Vec<u64> = std::env::var("LSP_BENCH_SEEDS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    if listed.is_empty() {
        SEEDS.to_vec()
    } else {
        listed
    }
}
const GENERATED_LINES: usize = 5_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The latency and publish size of each measured keystroke.
#[derive(Default)]
struct Typed {
    latencies: Vec<Duration>,
    bytes: Vec<usize>,
    /// Per keystroke measured: where, and what was typed ("" erases).
    keys: Vec<(usize, String)>,
}

impl Typed {
    /// The latencies, shortest first.
    fn sorted(&self) -> Vec<Duration> {
        let mut sorted = self.latencies.clone();
        sorted.sort();
        sorted
    }
}

/// A word typed at a random place, then erased: `keystroke_count() + WARMUP`
/// one-character edits in all, each waited for.
fn type_into(s: &mut Server, uri: &str, text: &str, seed: u64) -> Typed {
    let mut typed = type_into_each(&mut [s], uri, text, seed);
    typed.pop().expect("one server, one record")
}

/// [`type_into`] several servers with `text` open: each keystroke is sent
/// to every one, one after the other, the first of them in turn
/// (`LSP_BENCH_VERSUS` types into two).
fn type_into_each(servers: &mut [&mut Server], uri: &str, text: &str, seed: u64) -> Vec<Typed> {
    let mut current = text.to_string();
    let mut out: Vec<Typed> = servers.iter().map(|_| Typed::default()).collect();
    for (k, key) in keystrokes(text, seed, keystroke_count() + WARMUP)
        .into_iter()
        .enumerate()
    {
        let version = k as i64 + 2;
        for turn in 0..servers.len() {
            let i = (k + turn) % servers.len();
            let s = &mut *servers[i];
            let range = json!({"start": pos(&current, key.from, s.encoding),
                               "end": pos(&current, key.to, s.encoding)});
            let start = Instant::now();
            s.change(uri, version, range, &key.insert);
            let (_, arrival) = s
                .try_wait_for_arrival(TIMEOUT, &|m| {
                    m["method"] == "textDocument/publishDiagnostics"
                        && m["params"]["uri"] == uri
                        && m["params"]["version"] == json!(version)
                })
                .expect("diagnostics of the keystroke");
            if k >= WARMUP {
                out[i].latencies.push(arrival.at.duration_since(start));
                out[i].bytes.push(arrival.bytes);
                out[i].keys.push((key.from, key.insert.clone()));
            }
        }
        current.replace_range(key.from..key.to, &key.insert);
    }
    out
}

/// One row of `LSP_BENCH_VERSUS`: this build's and the other's p50 / p99
/// on `file`, and the median of the other's latency over this one's, per
/// keystroke.
fn measure_pair(file: &BenchFile, setting: &Setting, other: &Path) -> String {
    let uri = doc_uri(&format!("bench-{}", file.seed));
    let mut a = Server::start_with(json!({}), setting.options.clone(), None);
    let mut b = Server::start_binary_with(other, json!({}), setting.options.clone(), None);
    open(&mut a, &uri, &file.text);
    open(&mut b, &uri, &file.text);
    let mut typed = type_into_each(&mut [&mut a, &mut b], &uri, &file.text, file.seed);
    let (typed_b, typed_a) = (typed.pop().expect("two"), typed.pop().expect("two"));
    a.shutdown();
    b.shutdown();
    let mut ratios: Vec<f64> = typed_a
        .latencies
        .iter()
        .zip(&typed_b.latencies)
        .map(|(x, y)| y.as_secs_f64() / x.as_secs_f64().max(1e-9))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let median_ratio = ratios[ratios.len() / 2];
    let summary = |t: &Typed| {
        let sorted = t.sorted();
        (ms(percentile(&sorted, 0.5)), ms(percentile(&sorted, 0.99)))
    };
    let ((p50_a, p99_a), (p50_b, p99_b)) = (summary(&typed_a), summary(&typed_b));
    format!(
        "{:<34} this build p50 {p50_a:6.2} ms, p99 {p99_a:6.2} ms | other p50 {p50_b:6.2} ms, p99 {p99_b:6.2} ms | other / this, median per keystroke {median_ratio:.3}",
        file.label
    )
}

/// One benchmarked file.
struct BenchFile {
    label: String,
    text: String,
    seed: u64,
    generated: bool,
}

/// The settings a row is measured with.
struct Setting {
    label: &'static str,
    options: Value,
}

fn settings() -> Vec<Setting> {
    vec![
        Setting {
            label: "debounce 0, no app",
            options: json!({"diagnostics": {"debounceMs": 0}}),
        },
        Setting {
            label: "debounce 50 (default), no app",
            options: json!({}),
        },
        Setting {
            label: "debounce 0, app cannon on p100x4",
            options: json!({"diagnostics": {"debounceMs": 0}, "app": "cannon", "machine": "p100x4"}),
        },
        Setting {
            label: "debounce 0, app circuit on p100x4",
            options: json!({"diagnostics": {"debounceMs": 0}, "app": "circuit", "machine": "p100x4"}),
        },
    ]
}

/// One row of results.
struct Row {
    p50: f64,
    p99: f64,
    max: f64,
    open_bytes: usize,
    diagnostics: usize,
    mean_bytes: f64,
}

/// Opens `text` at `uri` in `s`: its first publish, and when it came.
fn open(s: &mut Server, uri: &str, text: &str) -> (Value, Arrival) {
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "mapper", "version": 1, "text": text}}),
    );
    s.try_wait_for_arrival(TIMEOUT, &|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri
            && m["params"]["version"] == json!(1)
    })
    .expect("diagnostics of the opened file")
}

fn measure(file: &BenchFile, setting: &Setting) -> (Row, Value) {
    let mut s = Server::start_with(json!({}), setting.options.clone(), None);
    let uri = doc_uri(&format!("bench-{}", file.seed));
    let (first, arrival) = open(&mut s, &uri, &file.text);
    let typed = type_into(&mut s, &uri, &file.text, file.seed);
    s.shutdown();
    if let Ok(dir) = std::env::var("LSP_BENCH_DUMP") {
        let name: String = format!("{} {}", setting.label, file.label)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let lines: String = typed
            .keys
            .iter()
            .zip(&typed.latencies)
            .map(|((at, text), t)| format!("{at}\t{text:?}\t{}\n", t.as_micros()))
            .collect();
        std::fs::write(Path::new(&dir).join(format!("{name}.tsv")), lines)
            .expect("LSP_BENCH_DUMP is a writable folder");
    }
    let sorted = typed.sorted();
    let row = Row {
        p50: ms(percentile(&sorted, 0.50)),
        p99: ms(percentile(&sorted, 0.99)),
        max: ms(*sorted.last().unwrap()),
        open_bytes: arrival.bytes,
        diagnostics: first["params"]["diagnostics"]
            .as_array()
            .map_or(0, |d| d.len()),
        mean_bytes: typed.bytes.iter().sum::<usize>() as f64 / typed.bytes.len() as f64,
    };
    (row, first)
}

/// How many diagnostics of each code a publish holds.
fn code_counts(publish: &Value) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for d in publish["params"]["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let code = d["code"].as_str().unwrap_or("-").to_string();
        *counts.entry(code).or_insert(0) += 1;
    }
    counts
}

/// Bytes each diagnostic field takes in a publish (`"key":value,`), and
/// the whole message.
fn field_costs(publish: &Value) -> (BTreeMap<String, usize>, usize) {
    let mut costs = BTreeMap::new();
    for d in publish["params"]["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
    {
        for (k, v) in d.as_object().into_iter().flatten() {
            *costs.entry(k.clone()).or_insert(0) += k.len() + 4 + v.to_string().len();
        }
    }
    (costs, publish.to_string().len())
}

fn kb(bytes: f64) -> String {
    format!("{:.1} KB", bytes / 1000.0)
}

#[test]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
fn keystroke_to_diagnostics_latency() {
    println!("binary: {}", binary().display());
    let corpus = corpus_mappers();
    let mut files: Vec<BenchFile> = bench_seeds()
        .into_iter()
        .map(|seed| BenchFile {
            label: format!("generated seed {seed}"),
            text: generated(seed, GENERATED_LINES, &corpus),
            seed,
            generated: true,
        })
        .collect();
    let corpus = corpus_files();
    let (path, text) = corpus.first().expect("a corpus file");
    files.push(BenchFile {
        label: path.file_name().unwrap().to_string_lossy().into_owned(),
        text: text.clone(),
        seed: 0,
        generated: false,
    });
    // Files of the user's own (`LSP_BENCH_FILES`), measured like the
    // corpus file: each row on its own, not in the generated files' mean.
    for (i, path) in std::env::var("LSP_BENCH_FILES")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .enumerate()
    {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("LSP_BENCH_FILES: {path}: {e}"));
        files.push(BenchFile {
            label: Path::new(path)
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            text,
            seed: 1_000 + i as u64,
            generated: false,
        });
    }
    for f in &files {
        println!(
            "file {}: {} lines, {} bytes",
            f.label,
            f.text.lines().count(),
            f.text.len()
        );
    }
    let rounds = bench_rounds();
    let mut summaries: Vec<(&str, Vec<Summary>)> = Vec::new();
    for round in 1..=rounds {
        if rounds > 1 {
            println!("\n#### round {round} of {rounds}");
        }
        for setting in settings() {
            if let Some(summary) = measure_setting(&setting, &files) {
                match summaries
                    .iter_mut()
                    .find(|(label, _)| *label == setting.label)
                {
                    Some((_, all)) => all.push(summary),
                    None => summaries.push((setting.label, vec![summary])),
                }
            }
        }
    }
    if rounds > 1 {
        println!(
            "\n== generated files over {rounds} rounds: the rounds' median (lowest-highest) =="
        );
        for (label, all) in &summaries {
            let spread = |f: &dyn Fn(&Summary) -> f64| {
                let mut v: Vec<f64> = all.iter().map(f).collect();
                v.sort_by(f64::total_cmp);
                format!(
                    "{:.2} ({:.2}-{:.2}) ms",
                    v[v.len() / 2],
                    v[0],
                    v[v.len() - 1]
                )
            };
            println!(
                "{label:<34} mean p50 {}, mean p99 {}, worst file's p99 {}",
                spread(&|s| s.mean_p50),
                spread(&|s| s.mean_p99),
                spread(&|s| s.worst_p99),
            );
        }
    }
}

/// `LSP_BENCH_ROUNDS`: how many times every setting is measured, one
/// after the other (1 by default). With more, the run ends with each
/// setting's median and spread over the rounds: this VM moves a whole
/// run by 10-30 % from one minute to the next.
fn bench_rounds() -> usize {
    std::env::var("LSP_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

/// One setting's generated files, in one round.
struct Summary {
    mean_p50: f64,
    mean_p99: f64,
    worst_p99: f64,
}

/// Measures `setting` on `files` (those `LSP_BENCH_ONLY` keeps), printing
/// a row per file and the generated files' mean; returns that mean
/// (none where no generated file was measured on its own).
fn measure_setting(setting: &Setting, files: &[BenchFile]) -> Option<Summary> {
    println!("\n== {} ==", setting.label);
    let mut generated_rows = Vec::new();
    let only = std::env::var("LSP_BENCH_ONLY").unwrap_or_default();
    for f in files {
        if !f.label.contains(&only) && !setting.label.contains(&only) {
            continue;
        }
        if let Some(other) = std::env::var_os("LSP_BENCH_VERSUS") {
            println!("{}", measure_pair(f, setting, Path::new(&other)));
            continue;
        }
        let (row, first) = measure(f, setting);
        println!(
            "{:<34} {:>5} diagnostics, open publish {:>9}, keystroke publish mean {:>9}: p50 {:7.2} ms, p99 {:7.2} ms, max {:7.2} ms",
            f.label,
            row.diagnostics,
            kb(row.open_bytes as f64),
            kb(row.mean_bytes),
            row.p50,
            row.p99,
            row.max
        );
        if f.generated && setting.label == "debounce 0, no app" {
            let counts = code_counts(&first);
            println!(
                "    codes: {}",
                counts
                    .iter()
                    .map(|(c, n)| format!("{c} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let (costs, total) = field_costs(&first);
            println!(
                "    bytes per field: {}",
                costs
                    .iter()
                    .map(|(k, n)| format!(
                        "{k} {} ({:.0} %)",
                        kb(*n as f64),
                        100.0 * *n as f64 / total as f64
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if f.generated {
            generated_rows.push(row);
        }
    }
    if generated_rows.is_empty() {
        return None;
    }
    let n = generated_rows.len() as f64;
    let mean = |f: &dyn Fn(&Row) -> f64| generated_rows.iter().map(f).sum::<f64>() / n;
    let worst = |f: &dyn Fn(&Row) -> f64| generated_rows.iter().map(f).fold(0.0, f64::max);
    println!(
        "generated files, mean (worst): p50 {:.2} ({:.2}) ms, p99 {:.2} ({:.2}) ms, max {:.2} ({:.2}) ms, open publish {} ({}), keystroke publish {} ({})",
        mean(&|r| r.p50),
        worst(&|r| r.p50),
        mean(&|r| r.p99),
        worst(&|r| r.p99),
        mean(&|r| r.max),
        worst(&|r| r.max),
        kb(mean(&|r| r.open_bytes as f64)),
        kb(worst(&|r| r.open_bytes as f64)),
        kb(mean(&|r| r.mean_bytes)),
        kb(worst(&|r| r.mean_bytes)),
    );
    Some(Summary {
        mean_p50: mean(&|r| r.p50),
        mean_p99: mean(&|r| r.p99),
        worst_p99: worst(&|r| r.p99),
    })
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

/// The generated files are what the benchmark claims: 5,000 lines with
/// 1,500+ diagnostics of every kind the generator mixes in, different per
/// seed (checked with the front end directly, so this runs in every
/// `cargo test`). The checker keeps 1,000 diagnostics per file and stage
/// (the rest are counted in one `I0001`); these files reach that.
#[test]
fn generated_files_have_diagnostics_of_every_kind() {
    let corpus = corpus_mappers();
    let mut texts = Vec::new();
    // (`LSP_BENCH_SEEDS` checks other seeds' files too.)
    for seed in bench_seeds() {
        let text = generated(seed, GENERATED_LINES, &corpus);
        assert!(text.lines().count() >= GENERATED_LINES);
        let front = mapwright_grammar::analyze(&text);
        let diags = front.diagnostics();
        eprintln!(
            "seed {seed}: parsing {}, checking {}",
            front.parsed.diagnostics.len(),
            front.checked.diagnostics.len()
        );
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for d in &diags {
            *counts.entry(d.code).or_insert(0) += 1;
        }
        eprintln!("seed {seed}: {} diagnostics: {counts:?}", diags.len());
        assert!(diags.len() >= 1_500, "seed {seed}: {}", diags.len());
        for code in [
            "W0214", "W0217", "E0201", "E0209", "W0213", "W0206", "E0212", "E0207", "W0218",
        ] {
            assert!(counts.contains_key(code), "seed {seed}: no {code}");
        }
        assert!(diags
            .iter()
            .any(|d| d.code.starts_with("E00") || d.code.starts_with("E01")));
        texts.push(text);
    }
    assert!(texts[0] != texts[1] && texts[1] != texts[2]);
}
