//! The fuzzer's bounded run in `cargo test` (and so in CI), and its
//! regressions. The long run is `cargo run --release -p mapwright-tests
//! --bin fuzz -- --seconds 600` (see `src/fuzz.rs`).
//!
//! Every crash the fuzzer ever found is a file in `tests/fuzz-regressions/`,
//! run through every pass here.

use std::path::Path;
use std::time::Duration;

use mapwright_tests::fuzz::{load_seeds, run, Config};
use mapwright_tests::passes::{builtin_targets, run_caught};

/// The shipped binary's allocator (see `src/bin/fuzz.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn corpus() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus"))
}

#[test]
fn a_bounded_fuzz_run_finds_no_crash() {
    let seeds = load_seeds(corpus());
    assert!(
        seeds.len() > 100,
        "the shared corpus is missing: {}",
        corpus().display()
    );
    let targets = builtin_targets();
    // A different seed per day covers more ground over time; a failure prints
    // the seed and the input, so it reproduces. MAPWRIGHT_FUZZ_SEED pins it.
    let seed = std::env::var("MAPWRIGHT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() / 86_400)
                .unwrap_or(1)
        });
    let report = run(
        &seeds,
        &targets,
        &Config {
            seed,
            max_execs: 20_000,
            max_time: Duration::from_secs(30),
            all_targets_each_time: false,
            heavy_every: 4,
            trace: None,
            jobs: 1,
            progress: None,
        },
    );
    eprintln!(
        "fuzz: seed {seed}: {} executions in {:.1} s ({:.0}/s, debug build): {} light, {} resolving, {} editor sessions",
        report.execs,
        report.elapsed.as_secs_f64(),
        report.execs_per_second(),
        report.light,
        report.resolve,
        report.editor
    );
    assert_eq!(report.light + report.resolve + report.editor, report.execs);
    assert!(report.execs > 0);
    if let Some(c) = report.crashes.first() {
        panic!(
            "seed {seed}: {} crash(es); the first: {}\n--- input ---\n{}\n--- end ---",
            report.crashes.len(),
            c.message,
            c.input
        );
    }
}

#[test]
fn every_crash_found_so_far_stays_fixed() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz-regressions"));
    let targets = builtin_targets();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "mapper"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        if let Err(message) = run_caught(&text, &targets) {
            panic!("{}: {message}", path.display());
        }
    }
}

/// `--jobs`: the workers run the seeds `seed`, `seed + 1`, ... and share
/// out the count, so two workers do exactly what two one-worker runs with
/// those seeds do, and the report is their sum.
#[test]
fn two_workers_run_what_two_seeded_runs_run() {
    let seeds = load_seeds(corpus());
    let targets = builtin_targets();
    let config = |seed, max_execs, jobs| Config {
        seed,
        max_execs,
        max_time: Duration::from_secs(600),
        all_targets_each_time: false,
        heavy_every: 3,
        trace: None,
        jobs,
        progress: None,
    };
    let both = run(&seeds, &targets, &config(40, 120, 2));
    let first = run(&seeds, &targets, &config(40, 60, 1));
    let second = run(&seeds, &targets, &config(41, 60, 1));
    assert_eq!(both.workers, 2);
    assert_eq!(both.execs, 120);
    let kinds = |r: &mapwright_tests::fuzz::Report| (r.light, r.resolve, r.resolutions, r.editor);
    assert_eq!(
        kinds(&both),
        (
            first.light + second.light,
            first.resolve + second.resolve,
            first.resolutions + second.resolutions,
            first.editor + second.editor
        )
    );
    // With a heavy share of one in three, 60 executions cannot all be light.
    assert!(first.resolve + first.editor > 0 && second.resolve + second.editor > 0);
    assert!(both.crashes.is_empty(), "{:?}", both.crashes.first());
}
