//! A coverage-free mutation fuzzer that runs on the stable toolchain
//! (cargo-fuzz needs nightly, which is not available here).
//!
//! Each execution takes one or two seeds (the shared corpus, the built-in
//! expert mappers), applies one to four mutations, and runs the result
//! through every pass ([`crate::passes`]) under `catch_unwind`. Mutations
//! work on the lexer's tokens where they can, so most inputs stay close to
//! real mappers and reach the checker, the evaluator and the resolution
//! rather than stopping at the first syntax error:
//! - token insert (a token copied from any seed or a DSL keyword), delete,
//!   duplicate, swap;
//! - byte flips (then read back as UTF-8, lossily: the passes take `&str`);
//! - splicing of two seeds at token boundaries;
//! - repetition of a token span (deep nesting and long chains).
//!
//! Executions are light or heavy. A light one runs the cheap passes: parse,
//! check, rendered and JSON diagnostics, whole and range formatting. One in
//! [`Config::heavy_every`] is heavy: resolution and `explain` against one
//! application (rotating over the nine), or, one heavy execution in four, an
//! editor session ([`crate::passes::run_editor`]): a seed edited by
//! `didChange` range edits at random positions (past line ends, inside
//! characters, in UTF-8 or UTF-16), with the language server's features run
//! after each edit. Heavy executions cost 10-50 times a light one, so the
//! fraction decides the speed; [`Report`] counts each kind, so a figure says
//! what ran.
//!
//! The run is deterministic for a seed, bounded by a count and a time, and
//! reports executions per second and the time spent in each kind (and in
//! making the inputs). A crash is returned with its input, so a failing run
//! says exactly what to turn into a regression test. [`Config::jobs`] runs
//! several workers on threads, each with its own seed (`seed`, `seed + 1`,
//! ...); the report sums them.
//!
//! Module map:
//! - this file: [`Config`], [`run`], the workers and the [`Report`];
//! - [`mutate`]: the corpus with its tokens lexed once, the mutations and
//!   the random editor sessions.

use std::panic;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::passes::{run_caught, run_editor_caught, Target};

pub mod mutate;

pub use mutate::{load_seeds, Corpus, Rng};

/// How long and how much to fuzz.
#[derive(Debug, Clone)]
pub struct Config {
    pub seed: u64,
    /// Executions, summed over the workers.
    pub max_execs: u64,
    pub max_time: Duration,
    /// Resolve against every target each execution (slower), or against one,
    /// rotating, so each target sees a share of the inputs.
    pub all_targets_each_time: bool,
    /// One execution in this many is heavy (resolution or an editor
    /// session); 1 makes every execution heavy.
    pub heavy_every: u64,
    /// Write each input here before running it: what a crash that
    /// `catch_unwind` cannot catch (an abort, the OOM killer) leaves behind.
    /// With several workers, worker `i` writes to this path with `.i`
    /// appended.
    pub trace: Option<PathBuf>,
    /// Worker threads (at least 1), each fuzzing with its own seed.
    pub jobs: usize,
    /// Print the running totals to stderr this often, so a long run that is
    /// stopped early (or killed) still says how far it got.
    pub progress: Option<Duration>,
}

/// A crash: the input, the panic message and the seed of the worker that
/// found it.
#[derive(Debug, Clone)]
pub struct Crash {
    pub input: String,
    pub message: String,
    pub seed: u64,
}

/// The most crashes a run keeps (per worker).
const MAX_CRASHES: usize = 20;

/// A worker's stack: the main thread's usual 8 MiB, so a worker sees an
/// input as a one-threaded run on the main thread does.
const WORKER_STACK: usize = 8 << 20;

/// The result of a run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub execs: u64,
    /// Light executions (parse, check, render, fmt only).
    pub light: u64,
    /// Heavy executions that resolved against applications (after the
    /// light passes), and how many resolutions they ran in all.
    pub resolve: u64,
    pub resolutions: u64,
    /// Heavy executions that were editor sessions.
    pub editor: u64,
    /// Time in the passes of each kind, and in making the inputs
    /// (mutations, editor sessions, the trace file), summed over workers.
    pub light_time: Duration,
    pub resolve_time: Duration,
    pub editor_time: Duration,
    pub input_time: Duration,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
    pub workers: usize,
    pub crashes: Vec<Crash>,
}

impl Report {
    pub fn execs_per_second(&self) -> f64 {
        self.execs as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Adds a worker's counts and times (not its wall-clock time).
    fn absorb(&mut self, other: Report) {
        self.execs += other.execs;
        self.light += other.light;
        self.resolve += other.resolve;
        self.resolutions += other.resolutions;
        self.editor += other.editor;
        self.light_time += other.light_time;
        self.resolve_time += other.resolve_time;
        self.editor_time += other.editor_time;
        self.input_time += other.input_time;
        self.workers += other.workers;
        self.crashes.extend(other.crashes);
    }

    /// Per kind: the count, the mean time of one execution in
    /// microseconds and the share of all the time measured; then the time
    /// making inputs, per execution and as a share.
    pub fn cost_summary(&self) -> String {
        let total = (self.light_time + self.resolve_time + self.editor_time + self.input_time)
            .as_secs_f64()
            .max(1e-9);
        let kind = |name: &str, n: u64, t: Duration| {
            format!(
                "{name} {n} x {:.0} us ({:.1}%)",
                t.as_secs_f64() * 1e6 / n.max(1) as f64,
                100.0 * t.as_secs_f64() / total
            )
        };
        format!(
            "{}, {}, {}, {}",
            kind("light", self.light, self.light_time),
            kind("resolving", self.resolve, self.resolve_time),
            kind("editor", self.editor, self.editor_time),
            kind("making inputs", self.execs, self.input_time)
        )
    }
}

/// Fuzzes until `config`'s count or time runs out, on `config.jobs`
/// workers. Panics are caught (and the default hook's message silenced for
/// the run); each crash is kept, at most 20 per worker.
pub fn run(seeds: &[String], targets: &[Target], config: &Config) -> Report {
    let corpus = Corpus::new(seeds.to_vec());
    let jobs = config.jobs.max(1);
    let start = Instant::now();
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let mut report = Report::default();
    let tally = Tally::default();
    std::thread::scope(|scope| {
        if let Some(every) = config.progress {
            let tally = &tally;
            scope.spawn(move || tally.print_every(every, start));
        }
        let workers: Vec<_> = (0..jobs)
            .map(|i| {
                let worker = Worker {
                    seed: config.seed.wrapping_add(i as u64),
                    // The count is shared out; the first workers take the rest.
                    max_execs: config.max_execs / jobs as u64
                        + u64::from((i as u64) < config.max_execs % jobs as u64),
                    trace: config.trace.as_ref().map(|p| {
                        if jobs == 1 {
                            p.clone()
                        } else {
                            let mut name = p.clone().into_os_string();
                            name.push(format!(".{i}"));
                            PathBuf::from(name)
                        }
                    }),
                };
                let (corpus, tally) = (&corpus, &tally);
                std::thread::Builder::new()
                    .name(format!("fuzz-{i}"))
                    .stack_size(WORKER_STACK)
                    .spawn_scoped(scope, move || {
                        worker.run(corpus, targets, config, start, tally)
                    })
                    .expect("a fuzz worker thread starts")
            })
            .collect();
        for w in workers {
            match w.join() {
                Ok(r) => report.absorb(r),
                // Only a bug of the harness itself can get here: the passes
                // run under `catch_unwind`.
                Err(_) => report.crashes.push(Crash {
                    input: String::new(),
                    message: "a fuzz worker panicked outside the passes".to_string(),
                    seed: config.seed,
                }),
            }
        }
        tally.finished.store(true, Ordering::Relaxed);
    });
    panic::set_hook(hook);
    report.elapsed = start.elapsed();
    report
}

/// Running totals over all workers, read by the progress printer.
#[derive(Default)]
struct Tally {
    execs: AtomicU64,
    crashes: AtomicU64,
    finished: AtomicBool,
}

impl Tally {
    /// Prints the totals every `every` until the workers are done (checked
    /// each second, so the run does not wait a whole interval at its end).
    fn print_every(&self, every: Duration, start: Instant) {
        let mut next = every;
        while !self.finished.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_secs(1).min(every));
            let elapsed = start.elapsed();
            if elapsed >= next {
                next += every;
                let execs = self.execs.load(Ordering::Relaxed);
                eprintln!(
                    "fuzz: {:.0} s, {execs} executions ({:.0}/s), {} crash(es)",
                    elapsed.as_secs_f64(),
                    execs as f64 / elapsed.as_secs_f64().max(1e-9),
                    self.crashes.load(Ordering::Relaxed)
                );
            }
        }
    }
}

/// One worker's share of a run.
struct Worker {
    seed: u64,
    max_execs: u64,
    trace: Option<PathBuf>,
}

impl Worker {
    fn run(
        self,
        corpus: &Corpus,
        targets: &[Target],
        config: &Config,
        start: Instant,
        tally: &Tally,
    ) -> Report {
        let mut rng = Rng::new(self.seed);
        let mut r = Report {
            workers: 1,
            ..Report::default()
        };
        let heavy_every = config.heavy_every.max(1);
        let mut clock = Instant::now();
        // Time is read once per execution: `lap` charges the time since
        // the last lap to one account.
        let mut lap = |account: &mut Duration| {
            let now = Instant::now();
            *account += now - clock;
            clock = now;
        };
        while r.execs < self.max_execs && start.elapsed() < config.max_time {
            let input = corpus.input(&mut rng);
            let heavy = r.execs.is_multiple_of(heavy_every);
            let editor = heavy && rng.below(4) == 0;
            let result = if editor {
                r.editor += 1;
                let (edits, offsets, enc) = mutate::editor_session(&input, corpus, &mut rng);
                let described = || {
                    format!(
                        "{input}\n--- edits ({enc:?}) ---\n{edits:?}\n--- offsets ---\n{offsets:?}"
                    )
                };
                if let Some(path) = &self.trace {
                    let _ = std::fs::write(path, described());
                }
                lap(&mut r.input_time);
                let result = run_editor_caught(&input, &edits, &offsets, enc).map(|_| ());
                lap(&mut r.editor_time);
                result.map_err(|message| (described(), message))
            } else {
                if let Some(path) = &self.trace {
                    let _ = std::fs::write(path, &input);
                }
                let chosen: &[Target] = if !heavy || targets.is_empty() {
                    &[]
                } else if config.all_targets_each_time {
                    targets
                } else {
                    let i = (r.resolve as usize) % targets.len();
                    &targets[i..i + 1]
                };
                lap(&mut r.input_time);
                let result = run_caught(&input, chosen).map(|_| ());
                if chosen.is_empty() {
                    r.light += 1;
                    lap(&mut r.light_time);
                } else {
                    r.resolve += 1;
                    r.resolutions += chosen.len() as u64;
                    lap(&mut r.resolve_time);
                }
                result.map_err(|message| (input, message))
            };
            if let Err((input, message)) = result {
                tally.crashes.fetch_add(1, Ordering::Relaxed);
                if r.crashes.len() < MAX_CRASHES {
                    r.crashes.push(Crash {
                        input,
                        message,
                        seed: self.seed,
                    });
                }
            }
            r.execs += 1;
            tally.execs.fetch_add(1, Ordering::Relaxed);
        }
        r
    }
}
