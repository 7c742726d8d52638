//! Simulated evaluations per second per core, per built-in application:
//! `cargo run --release -p mapwright-runtime --example sim_bench [N] [APP]`
//! (`APP` limits the run to one application, for profiling).
//!
//! Each application's expert mapper is resolved once; the decisions are
//! then simulated N times on one thread (`simulate only`), and the mapper
//! is resolved and simulated N times (`resolve + simulate`), on the
//! paper's machine (p100x4). Where the expert cannot run there (johnson and
//! cosma index the node dimension by launch point, written for one rank per
//! GPU), the simulation is timed on the default GPU decisions instead
//! (marked `default`).
//!
//! It runs with mimalloc, the global allocator of the `mapwright` binary
//! whose optimizer and language server make these evaluations.
//!
//! Rates are per second of this thread's CPU time (Linux
//! `/proc/thread-self/schedstat`), so a machine shared with other work
//! still gives the per-core figure; the wall-clock rate of resolve +
//! simulate is printed next to it (and stands in where the CPU time cannot
//! be read).

use std::time::Instant;

/// Wall-clock and on-CPU time of the current thread since `start`.
struct Clock {
    wall: Instant,
    cpu_ns: Option<u64>,
}

impl Clock {
    fn start() -> Clock {
        Clock {
            wall: Instant::now(),
            cpu_ns: thread_cpu_ns(),
        }
    }

    /// (on-CPU seconds, or wall seconds where unknown; wall seconds).
    fn elapsed(&self) -> (f64, f64) {
        let wall = self.wall.elapsed().as_secs_f64();
        let cpu = match (self.cpu_ns, thread_cpu_ns()) {
            (Some(a), Some(b)) if b > a => (b - a) as f64 * 1e-9,
            _ => wall,
        };
        (cpu, wall)
    }
}

/// Nanoseconds the current thread has run on a CPU (first field of
/// `/proc/thread-self/schedstat`).
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

use mapwright_runtime::app::{expert_mapper_text, App};
use mapwright_runtime::machine::Machine;
use mapwright_runtime::sim::{default_resolver, reference, simulate};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let only: Option<String> = std::env::args().nth(2);
    let machine = Machine::preset("p100x4").expect("preset");
    let resolve = default_resolver();
    println!(
        "{:<10} {:>16} {:>20} {:>13}  status",
        "app", "simulate/s", "resolve+simulate/s", "(wall clock)"
    );
    let mut rates: Vec<(&str, f64)> = Vec::new();
    for name in App::builtin_names() {
        if only.as_deref().is_some_and(|o| o != *name) {
            continue;
        }
        let (Some(app), Some(src)) = (App::builtin(name), expert_mapper_text(name)) else {
            continue;
        };
        let mut d = resolve(src, &app, &machine);
        let mut which = "expert";
        if d.fatal.is_some() {
            d = reference::default_gpu(&app, &machine);
            which = "default";
        }
        let mut sink = 0.0;
        let t = Clock::start();
        for i in 0..n {
            sink += simulate(&d, &app, &machine, i, 0.01)
                .elapsed_s
                .unwrap_or(0.0);
        }
        let sim = n as f64 / t.elapsed().0;
        let m = (n / 10).max(1);
        let t = Clock::start();
        for i in 0..m {
            let d = resolve(src, &app, &machine);
            sink += simulate(&d, &app, &machine, i, 0.01)
                .elapsed_s
                .unwrap_or(0.0);
        }
        let (cpu, wall) = t.elapsed();
        let (full, full_wall) = (m as f64 / cpu, m as f64 / wall);
        let status = simulate(&d, &app, &machine, 0, 0.0).status;
        println!(
            "{name:<10} {sim:>16.0} {full:>20.0} {full_wall:>13.0}  {status} ({which}, {sink:.0})"
        );
        rates.push((name, full));
    }
    // The target is per app, so the slowest app is the figure that counts.
    if let Some((worst, rate)) = rates.iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
        let mean = rates.iter().map(|r| r.1).sum::<f64>() / rates.len() as f64;
        println!(
            "resolve+simulate/s over {} apps: mean {mean:.0}, worst {rate:.0} ({worst})",
            rates.len()
        );
    }
}
