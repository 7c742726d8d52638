//! The fuzzer's long run, independent of the `mapwright` binary:
//!
//! ```sh
//! cargo run --release -p mapwright-tests --bin fuzz -- --seconds 600 [--seed N] [--execs N] [--corpus DIR] [--out DIR] [--heavy-every N] [--jobs N] [--trace FILE] [--progress SECONDS]
//! ```
//!
//! `--trace FILE` writes each input to FILE before running it, so a crash
//! that cannot be caught (an abort, the OOM killer) leaves its input there.
//!
//! `--jobs N` (default 1): N worker threads with seeds `seed` .. `seed +
//! N - 1`; the figures are their sum, and a crash in any is written with
//! its input and its worker's seed. With N > 1, `--trace FILE` writes
//! `FILE.0`, `FILE.1`, ...
//!
//! `--progress SECONDS` prints the running totals (executions, rate,
//! crashes) to stderr that often, so a long run stopped early still says
//! how far it got.
//!
//! `--heavy-every N` (default 8): one execution in N resolves against an
//! application or is an editor session, the others run the cheap passes
//! only (see `src/fuzz.rs`).
//!
//! Prints executions per second, the total, the count of each kind and its
//! mean cost and share of the time; writes each crashing input to `--out`
//! (default `fuzz-crashes/`) and exits 1 if there was one.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mapwright_tests::fuzz::{load_seeds, run, Config};
use mapwright_tests::passes::builtin_targets;

/// mimalloc, as in the shipped `mapwright` binary: the passes allocate
/// many small nodes, and under the system allocator a fifth of a run went
/// to `malloc` and `free` (perf; README.md's git history), time that says nothing about
/// the code under test; it also fuzzes the allocator the users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let mut seconds = 60u64;
    let mut execs = u64::MAX;
    let mut seed = 1u64;
    let mut corpus = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus"));
    let mut out = PathBuf::from("fuzz-crashes");
    let mut all_targets = false;
    let mut trace = None;
    let mut heavy_every = 8u64;
    let mut jobs = 1usize;
    let mut progress = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match flag.as_str() {
            "--seconds" => seconds = value().parse().unwrap_or(seconds),
            "--execs" => execs = value().parse().unwrap_or(execs),
            "--seed" => seed = value().parse().unwrap_or(seed),
            "--corpus" => corpus = PathBuf::from(value()),
            "--out" => out = PathBuf::from(value()),
            "--all-targets" => all_targets = true,
            "--trace" => trace = Some(PathBuf::from(value())),
            "--heavy-every" => heavy_every = value().parse().unwrap_or(heavy_every),
            "--jobs" => jobs = value().parse().unwrap_or(jobs).max(1),
            "--progress" => {
                progress = value()
                    .parse()
                    .ok()
                    .filter(|&s| s > 0)
                    .map(Duration::from_secs)
            }
            _ => {
                eprintln!("usage: fuzz [--seconds N] [--execs N] [--seed N] [--corpus DIR] [--out DIR] [--all-targets] [--heavy-every N] [--jobs N] [--trace FILE] [--progress SECONDS]");
                return ExitCode::from(2);
            }
        }
    }
    let seeds = load_seeds(&corpus);
    if seeds.is_empty() {
        eprintln!("no seeds under {}", corpus.display());
        return ExitCode::from(2);
    }
    let targets = builtin_targets();
    let report = run(
        &seeds,
        &targets,
        &Config {
            seed,
            max_execs: execs,
            max_time: Duration::from_secs(seconds),
            all_targets_each_time: all_targets,
            heavy_every,
            trace,
            jobs,
            progress,
        },
    );
    println!(
        "{} executions in {:.1} s ({:.0}/s), {} worker(s), {} seeds, {} applications, {} crash(es)",
        report.execs,
        report.elapsed.as_secs_f64(),
        report.execs_per_second(),
        report.workers,
        seeds.len(),
        targets.len(),
        report.crashes.len()
    );
    println!(
        "per kind: {} light (parse, check, render, fmt), {} resolving ({} resolutions + explain), {} editor sessions (one in {heavy_every} heavy)",
        report.light, report.resolve, report.resolutions, report.editor
    );
    println!("cost per kind: {}", report.cost_summary());
    if report.crashes.is_empty() {
        return ExitCode::SUCCESS;
    }
    let _ = std::fs::create_dir_all(&out);
    for (i, c) in report.crashes.iter().enumerate() {
        let path = out.join(format!("crash-{}-{i}.mapper", c.seed));
        let _ = std::fs::write(&path, &c.input);
        println!("crash {i}: {} -> {}", c.message, path.display());
    }
    ExitCode::from(1)
}
