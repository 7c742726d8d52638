//! Resolution never panics and keeps its invariants on every corpus file
//! (real mappers and parser probes) against every built-in application, and
//! on mutilated versions of them (truncated, lines dropped): the decisions
//! cover every task, placed points lie inside the machine, every diagnostic
//! span and quick fix fits the source.

mod resolve;

use std::path::{Path, PathBuf};

use mapwright_grammar::analyze;
use mapwright_runtime::app::App;
use mapwright_runtime::machine::Machine;
use mapwright_runtime::resolve_mapping::resolve_mapping;

fn corpus_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    let mut files = Vec::new();
    for dir in ["public", "probes"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "mapper") {
                files.push(p);
            }
        }
    }
    // The built-in experts too, so the test means something without the
    // shared corpus.
    let experts = Path::new(env!("CARGO_MANIFEST_DIR")).join("apps/experts");
    if let Ok(entries) = std::fs::read_dir(experts) {
        files.extend(entries.flatten().map(|e| e.path()));
    }
    files.sort();
    files
}

fn check_invariants(source: &str, app: &App, machine: &Machine, what: &str) {
    let analysis = analyze(source);
    let d = resolve_mapping(&analysis, source, app, machine);
    assert_eq!(d.tasks.len(), app.tasks.len(), "{what}");
    for (t, a) in d.tasks.iter().zip(&app.tasks) {
        assert_eq!(t.task, a.name, "{what}");
        assert_eq!(t.regions.len(), a.regions.len(), "{what}");
        for p in &t.placement {
            assert!(
                p.node < machine.nodes(),
                "{what}: {} placed on node {}",
                a.name,
                p.node
            );
            assert!(
                p.proc < machine.procs_per_node(t.proc_kind),
                "{what}: {} placed on {} {}",
                a.name,
                t.proc_kind,
                p.proc
            );
        }
    }
    for diag in &d.diagnostics {
        assert!(
            diag.span.end() <= source.len(),
            "{what}: {} span past the end",
            diag.code
        );
        assert!(
            diag.span.start() <= diag.span.end(),
            "{what}: {}",
            diag.code
        );
        for f in &diag.fixes {
            assert!(
                f.apply(source).is_some(),
                "{what}: fix `{}` of {} does not apply",
                f.title,
                diag.code
            );
        }
    }
}

#[test]
fn every_corpus_file_against_every_app() {
    let files = corpus_files();
    assert!(!files.is_empty());
    let machine = Machine::preset("p100x4").expect("preset");
    for path in &files {
        let bytes = std::fs::read(path).unwrap_or_default();
        let source = String::from_utf8_lossy(&bytes).into_owned();
        for name in App::builtin_names() {
            let app = App::builtin(name).expect("built-in");
            check_invariants(
                &source,
                &app,
                &machine,
                &format!("{} / {name}", path.display()),
            );
        }
    }
}

#[test]
fn every_corpus_file_on_other_machines() {
    let machines = [
        Machine::preset("h200").expect("preset"),
        Machine::preset("16x4gpu").expect("preset"),
        resolve::p100x4_rank_per_gpu(),
    ];
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap_or_default();
        let source = String::from_utf8_lossy(&bytes).into_owned();
        for (i, name) in ["circuit", "cannon", "johnson"].iter().enumerate() {
            let app = App::builtin(name).expect("built-in");
            let m = &machines[i % machines.len()];
            check_invariants(
                &source,
                &app,
                m,
                &format!("{} / {name} / {}", path.display(), m.name),
            );
        }
    }
}

/// A small deterministic generator (no external crate): truncations at
/// pseudo-random byte offsets and files with lines dropped.
#[test]
fn mutilated_corpus_files_never_panic() {
    let machine = Machine::preset("p100x4").expect("preset");
    let apps: Vec<App> = ["stencil", "cannon", "pennant"]
        .iter()
        .map(|n| App::builtin(n).expect("built-in"))
        .collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (fi, path) in corpus_files().iter().enumerate() {
        let bytes = std::fs::read(path).unwrap_or_default();
        let source = String::from_utf8_lossy(&bytes).into_owned();
        if source.is_empty() {
            continue;
        }
        let app = &apps[fi % apps.len()];
        for round in 0..3 {
            let mutated = if round == 0 {
                let mut cut = (next() as usize) % source.len();
                while !source.is_char_boundary(cut) {
                    cut -= 1;
                }
                source[..cut].to_string()
            } else {
                source
                    .lines()
                    .filter(|_| next() % 4 != 0)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            check_invariants(
                &mutated,
                app,
                &machine,
                &format!("{} (mutation {round})", path.display()),
            );
        }
    }
}
