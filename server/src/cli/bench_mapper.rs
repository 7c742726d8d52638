//! `mapwright bench mapper`: mapwright's Legion mapper against Legion's
//! `DefaultMapper` on the same program binaries
//! (`mapwright_runtime::legion::bench`): per built program, the median and
//! min-max of repeated runs for each mapper, each one's ratio to the best
//! of the others, and what its mapper calls cost (microseconds per call).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::anyhow;
use clap::Args;
use mapwright_runtime::app::{expert_mapper_text, App};
use mapwright_runtime::legion::bench::{self, AppComparison, Contender, MapperUnderTest};
use mapwright_runtime::validate::real;

use crate::optimize::executors::legion_backend;

/// The target: mapwright's mapper with the expert at most this many times
/// the best of the other mappers' medians.
pub const TARGET_RATIO: f64 = 1.05;

/// The row of `--measure-cost`.
const MEASURING: &str = "mapwright, expert, measuring";
/// The row it is held against (bench::standard_contenders' second).
const UNMEASURED: &str = "mapwright, expert on CPUs";

/// The callbacks whose cost is shown.
const CALLBACKS: [&str; 3] = ["select_task_options", "slice_task", "map_task"];

#[derive(Debug, Args)]
pub struct BenchMapperArgs {
    /// Programs to run (default: every built program).
    #[arg(long, value_delimiter = ',')]
    pub apps: Vec<String>,
    /// Runs per mapper and program, interleaved (median and min-max).
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Legion CPU processors (`-ll:cpu`). 4 by default, whatever the
    /// cores: the experts' placement functions, adapted to CPUs, index the
    /// four processors the paper's node had (circuit's fails its slicing
    /// with fewer).
    #[arg(long, default_value_t = 4)]
    pub legion_cpus: u32,
    /// Another build of `libmapwright_mapper.so` to compare, as
    /// `NAME=FOLDER` (the folder holding it): the reference DSL mapper,
    /// built by hand (docs/performance.md says how). It runs with the
    /// expert on CPUs, as mapwright's mapper does. Repeatable.
    #[arg(long = "also", value_name = "NAME=FOLDER")]
    pub also: Vec<String>,
    /// A mapper file of your own, as `NAME=FILE`, run by mapwright's mapper
    /// beside the others (every program of `--apps` runs it): a row of its
    /// own, which the others are not held against. Repeatable.
    #[arg(long = "mapper", value_name = "NAME=FILE")]
    pub mappers: Vec<String>,
    /// Add mapwright's mapper with the expert writing its decision log with
    /// Realm's measurements (as `--backend legion` runs it; the other rows
    /// run as a drop-in in a user's program does, without a log), and
    /// report what measuring costs: its median over the expert's.
    #[arg(long)]
    pub measure_cost: bool,
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: BenchMapperArgs) -> anyhow::Result<ExitCode> {
    let backend = legion_backend(args.legion_cpus, 0, None)
        .map_err(|e| anyhow!("bench mapper needs real Legion: {e}"))?;
    let host = backend
        .host_machine()
        .map_err(|e| anyhow!("bench mapper: {e}"))?;
    let also: Vec<(String, PathBuf)> = args
        .also
        .iter()
        .map(|a| {
            a.split_once('=')
                .map(|(n, d)| (n.to_string(), PathBuf::from(d)))
                .ok_or_else(|| anyhow!("--also takes NAME=FOLDER, not {a:?}"))
        })
        .collect::<anyhow::Result<_>>()?;
    for (name, dir) in &also {
        if !dir.join("libmapwright_mapper.so").is_file() {
            return Err(anyhow!(
                "--also {name}: {} holds no libmapwright_mapper.so",
                dir.display()
            ));
        }
    }
    let yours: Vec<(String, String)> = args
        .mappers
        .iter()
        .map(|a| {
            let (name, file) = a
                .split_once('=')
                .ok_or_else(|| anyhow!("--mapper takes NAME=FILE, not {a:?}"))?;
            let text = std::fs::read_to_string(file)
                .map_err(|e| anyhow!("--mapper {name}: cannot read {file}: {e}"))?;
            Ok((name.to_string(), text))
        })
        .collect::<anyhow::Result<_>>()?;
    let apps = super::bench_validate::programs_to_run(&backend, &args.apps)?;
    errln!(
        "bench mapper: {} program(s), {} runs per mapper, {} Legion CPU processors",
        apps.len(),
        args.repeats,
        backend.config.cpus
    );
    let mut results = Vec::new();
    for name in &apps {
        let (Some(app), Some(expert)) = (App::builtin(name), expert_mapper_text(name)) else {
            return Err(anyhow!("`{name}` is not a built-in application"));
        };
        let expert = real::on_cpus(expert);
        let mut contenders = bench::standard_contenders(&expert);
        for (label, dir) in &also {
            contenders.push(Contender {
                name: label.clone(),
                mapper: MapperUnderTest::Library {
                    dir: dir.clone(),
                    mapper: expert.clone(),
                },
            });
        }
        for (label, mapper) in &yours {
            contenders.push(Contender {
                name: label.clone(),
                mapper: MapperUnderTest::Yours {
                    mapper: mapper.clone(),
                },
            });
        }
        if args.measure_cost {
            contenders.push(Contender {
                name: MEASURING.into(),
                mapper: MapperUnderTest::MapwrightMeasured {
                    mapper: expert.clone(),
                },
            });
        }
        let result = bench::compare(
            &backend,
            &app,
            &host,
            &contenders,
            args.repeats,
            &mut |who, what| errln!("{name:<10} {who:<28} {what}"),
        );
        results.push(result);
    }
    if args.json {
        out!("{}", serde_json::to_string_pretty(&json(&results))?)?;
    } else {
        out!("{}", render(&results))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The comparisons as JSON, with each contender's ratio.
fn json(results: &[AppComparison]) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            let contenders: Vec<serde_json::Value> = r
                .contenders
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    serde_json::json!({
                        "name": m.name,
                        "median_s": m.median(),
                        "min_s": m.min(),
                        "max_s": m.max(),
                        "times_s": m.times,
                        "failure": m.failure,
                        "ratio_to_best_other": (!m.measuring).then(|| r.ratio_to_best_other(i)).flatten(),
                        "baseline": m.baseline,
                        "us_per_call": m.calls.keys().map(|c| (c.clone(), m.per_call(c))).collect::<std::collections::BTreeMap<_, _>>(),
                        "calls_per_run": m.calls.keys().map(|c| (c.clone(), m.calls_per_run(c))).collect::<std::collections::BTreeMap<_, _>>(),
                    })
                })
                .collect();
            serde_json::json!({"app": r.app, "contenders": contenders, "measurement_cost": r.measurement_cost(UNMEASURED)})
        })
        .collect();
    serde_json::json!({ "target_ratio": TARGET_RATIO, "apps": rows })
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

/// The table: one line per program and mapper, then the verdict.
pub fn render(results: &[AppComparison]) -> String {
    let mut out = format!(
        "{:<10} {:<28} {:>8} {:>15} {:>7}  {:>22}  {:>18}\n",
        "app",
        "mapper",
        "median",
        "min-max (s)",
        "ratio",
        "us/call opts slice map",
        "map_task calls/run"
    );
    let mut misses = Vec::new();
    let mut unmatched = Vec::new();
    let mut costs = Vec::new();
    for r in results {
        if let Some(c) = r.measurement_cost(UNMEASURED) {
            // The mapper's own share: its report_profiling calls a run.
            let in_mapper = r
                .contenders
                .iter()
                .find(|m| m.measuring)
                .and_then(|m| {
                    Some(m.calls_per_run("report_profiling")? * m.per_call("report_profiling")?)
                })
                .map(|us| format!(" ({:.1} ms a run in report_profiling)", us / 1e3))
                .unwrap_or_default();
            costs.push(format!("{} {:+.1} %{in_mapper}", r.app, (c - 1.0) * 100.0));
        }
        for (i, m) in r.contenders.iter().enumerate() {
            let ratio = (!m.measuring).then(|| r.ratio_to_best_other(i)).flatten();
            let spread = match (m.min(), m.max()) {
                (Some(lo), Some(hi)) => format!("{lo:.3}-{hi:.3}"),
                _ => "-".into(),
            };
            let costs: Vec<String> = CALLBACKS.iter().map(|c| opt(m.per_call(c), 1)).collect();
            let median = match (&m.failure, m.median()) {
                (Some(_), _) => "fails".to_string(),
                (None, t) => opt(t, 3),
            };
            out.push_str(&format!(
                "{:<10} {:<28} {:>8} {:>15} {:>7}  {:>22}  {:>18}\n",
                r.app,
                m.name,
                median,
                spread,
                ratio.map_or("-".into(), |x| format!("{x:.2}x")),
                costs.join(" "),
                opt(m.calls_per_run("map_task"), 0),
            ));
            if let Some(f) = &m.failure {
                out.push_str(&format!("{:<10}   {}\n", "", f));
            }
        }
        // Row 1 is mapwright's mapper with the expert.
        let ours_failed = r.contenders.get(1).is_some_and(|m| m.failure.is_some());
        match r.ratio_to_best_other(1) {
            Some(x) if x > TARGET_RATIO => misses.push(format!("{} {x:.2}x", r.app)),
            None if ours_failed => misses.push(format!("{} (a run failed)", r.app)),
            None => unmatched.push(r.app.clone()),
            _ => {}
        }
    }
    if !costs.is_empty() {
        out.push_str(&format!(
            "measuring (decision log and Realm's measurements) costs, median over median: {}\n",
            costs.join(", ")
        ));
    }
    if !unmatched.is_empty() {
        out.push_str(&format!(
            "no other mapper completed every run on: {}\n",
            unmatched.join(", ")
        ));
    }
    out.push_str(&if misses.is_empty() {
        format!(
            "target met: mapwright's mapper with the expert is within {TARGET_RATIO}x of the best other mapper wherever another completed\n"
        )
    } else {
        format!(
            "target missed (over {TARGET_RATIO}x the best other mapper): {}\n",
            misses.join(", ")
        )
    });
    out
}
