//! mapwright's Legion mapper against Legion's own (`mapwright bench
//! mapper`): the same program binary run with Legion's `DefaultMapper` (no
//! `-mapping`), with mapwright's mapper and a given mapper file, and with
//! any other build of `libmapwright_mapper.so` a user names (the reference
//! DSL mapper, built by hand), in interleaved rounds so that a noisy host
//! slows every contender alike.
//!
//! Besides the program's elapsed time, each contender's mapper calls are
//! timed (`-mapwright:stats`, written by the mapper at exit): calls and
//! microseconds per `select_task_options`, `slice_task`, `map_task` and
//! `select_tasks_to_map`. For `DefaultMapper` one extra run times its
//! calls (`-mapwright:default-mapper`, Legion's DefaultMapper with a timer
//! around each call) apart from the timed rounds, whose runs have no
//! mapwright code in them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::app::App;
use crate::backend::command::{shell_quote, CommandBackend, CommandConfig};
use crate::backend::legion::LegionBackend;
use crate::backend::{Backend, RunRequest, RunStatus};
use crate::machine::Machine;

/// Who maps the program.
#[derive(Debug, Clone, PartialEq)]
pub enum MapperUnderTest {
    /// Legion's `DefaultMapper`: the program without `-mapping`.
    LegionDefault,
    /// Legion's `DefaultMapper` with a timer around each call
    /// (`-mapwright:default-mapper`): the run that measures its call cost.
    LegionDefaultTimed,
    /// mapwright's mapper with this mapper file, as a drop-in for the
    /// reference runs in a user's program: no decision log, so no
    /// measurement (`MAPWRIGHT_LOG` empty).
    Mapwright { mapper: String },
    /// The same writing its decision log with Realm's measurements, as
    /// every `legion` and `command` run of mapwright does: what measuring
    /// costs (`bench mapper --measure-cost`). Not a mapper the others are
    /// held against.
    MapwrightMeasured { mapper: String },
    /// mapwright's mapper with a mapper file of the user's (`bench mapper
    /// --mapper`), run as [`MapperUnderTest::Mapwright`]: a row of its own,
    /// which no other row is held against.
    Yours { mapper: String },
    /// Another `libmapwright_mapper.so` (a folder holding it, put first on
    /// the library path, so that the program loads it instead of ours),
    /// with this mapper file: how the reference DSL mapper joins in.
    Library { dir: PathBuf, mapper: String },
}

/// One row's contender: its name and mapper.
#[derive(Debug, Clone)]
pub struct Contender {
    pub name: String,
    pub mapper: MapperUnderTest,
}

/// Calls of one mapper callback and their cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CallCost {
    pub calls: u64,
    /// Microseconds spent in those calls, in all.
    pub us: f64,
}

impl CallCost {
    /// Microseconds per call (None without calls).
    pub fn per_call(&self) -> Option<f64> {
        (self.calls > 0).then(|| self.us / self.calls as f64)
    }
}

/// What `-mapwright:stats` writes.
#[derive(Debug, Clone, Default, Deserialize)]
struct StatsFile {
    calls: BTreeMap<String, CallCost>,
}

/// A contender's runs.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    pub name: String,
    /// Elapsed times of the runs that succeeded, sorted.
    pub times: Vec<f64>,
    /// How the first failed run ended, with the end of its output.
    pub failure: Option<String>,
    /// Per callback, summed over the timed runs (calls per run: divide by
    /// `stats_runs`).
    pub calls: BTreeMap<String, CallCost>,
    /// Runs whose call stats were read.
    pub stats_runs: u32,
    /// mapwright's mapper with measurement on: only what measuring costs
    /// is read from it.
    #[serde(default)]
    pub measuring: bool,
    /// Whether the other rows are held against it (not the measuring row,
    /// nor a user's own mapper file).
    pub baseline: bool,
}

impl Measured {
    pub fn median(&self) -> Option<f64> {
        (!self.times.is_empty()).then(|| self.times[self.times.len() / 2])
    }
    pub fn min(&self) -> Option<f64> {
        self.times.first().copied()
    }
    pub fn max(&self) -> Option<f64> {
        self.times.last().copied()
    }
    /// Microseconds per call of `callback`.
    pub fn per_call(&self, callback: &str) -> Option<f64> {
        self.calls.get(callback).and_then(CallCost::per_call)
    }
    /// Calls of `callback` in one run.
    pub fn calls_per_run(&self, callback: &str) -> Option<f64> {
        let c = self.calls.get(callback)?;
        (self.stats_runs > 0).then(|| c.calls as f64 / f64::from(self.stats_runs))
    }
}

/// One application's comparison.
#[derive(Debug, Clone, Serialize)]
pub struct AppComparison {
    pub app: String,
    pub contenders: Vec<Measured>,
}

impl AppComparison {
    /// What measuring costs: the median of the measuring contender over
    /// that of the contender named `unmeasured`, the same mapper without
    /// (1.02: 2 % slower with the log and Realm's measurements). None
    /// unless both completed every run.
    pub fn measurement_cost(&self, unmeasured: &str) -> Option<f64> {
        let median = |m: &Measured| m.failure.is_none().then(|| m.median()).flatten();
        let on = self.contenders.iter().find(|m| m.measuring)?;
        let off = self.contenders.iter().find(|m| m.name == unmeasured)?;
        Some(median(on)? / median(off)?)
    }

    /// `index`'s median over the best median of the other contenders;
    /// a contender that failed a run has none (its successful runs do not
    /// count: a mapper that fails the result check is no baseline).
    pub fn ratio_to_best_other(&self, index: usize) -> Option<f64> {
        let median = |m: &Measured| m.failure.is_none().then(|| m.median()).flatten();
        let own = median(self.contenders.get(index)?)?;
        let best_other = self
            .contenders
            .iter()
            .enumerate()
            .filter(|(i, m)| *i != index && m.baseline)
            .filter_map(|(_, m)| median(m))
            .min_by(f64::total_cmp)?;
        Some(own / best_other)
    }
}

/// The three contenders of every program: Legion's `DefaultMapper`,
/// mapwright's mapper with the expert adapted to CPUs, and mapwright's
/// mapper with a mapper that asks for what the default does (`Task *
/// CPU;`), plus the expert's `Layout` statements where it has them: the
/// DISTAL programs' `dgemm` needs `C_order`, which `DefaultMapper`'s
/// default layout is not, so `DefaultMapper` itself fails their check.
pub fn standard_contenders(expert_on_cpus: &str) -> Vec<Contender> {
    let layouts: String = expert_on_cpus
        .lines()
        .filter(|l| l.trim_start().starts_with("Layout"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (default_name, default_mapper) = if layouts.is_empty() {
        (
            "mapwright, Task * CPU;".to_string(),
            "Task * CPU;\n".to_string(),
        )
    } else {
        (
            "mapwright, Task * CPU; + layouts".to_string(),
            format!("Task * CPU;\n{layouts}"),
        )
    };
    vec![
        Contender {
            name: "Legion's DefaultMapper".into(),
            mapper: MapperUnderTest::LegionDefault,
        },
        Contender {
            name: "mapwright, expert on CPUs".into(),
            mapper: MapperUnderTest::Mapwright {
                mapper: expert_on_cpus.to_string(),
            },
        },
        Contender {
            name: default_name,
            mapper: MapperUnderTest::Mapwright {
                mapper: default_mapper,
            },
        },
    ]
}

/// Runs `app`'s program `repeats` times per contender, round after round.
/// `progress` hears each run's outcome.
/// `host` names the machine in the requests (the programs describe the
/// host to the mapper themselves).
pub fn compare(
    backend: &LegionBackend,
    app: &App,
    host: &Machine,
    contenders: &[Contender],
    repeats: usize,
    progress: &mut dyn FnMut(&str, &str),
) -> AppComparison {
    let app_arc = Arc::new(app.clone());
    let machine = Arc::new(host.clone());
    let scratch =
        std::env::temp_dir().join(format!("mapwright-bench-mapper-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&scratch);
    let mut measured: Vec<Measured> = contenders
        .iter()
        .map(|c| Measured {
            name: c.name.clone(),
            times: Vec::new(),
            failure: None,
            calls: BTreeMap::new(),
            stats_runs: 0,
            measuring: matches!(c.mapper, MapperUnderTest::MapwrightMeasured { .. }),
            baseline: !matches!(
                c.mapper,
                MapperUnderTest::MapwrightMeasured { .. } | MapperUnderTest::Yours { .. }
            ),
        })
        .collect();
    for round in 0..repeats.max(1) {
        for (c, m) in contenders.iter().zip(measured.iter_mut()) {
            if m.failure.is_some() {
                continue;
            }
            let stats = scratch.join(format!("stats-{round}.json"));
            let _ = std::fs::remove_file(&stats);
            // DefaultMapper's timed rounds run the program as it is.
            let timed = !matches!(c.mapper, MapperUnderTest::LegionDefault);
            let outcome = run_once(
                backend,
                &app_arc,
                &machine,
                &c.mapper,
                timed.then_some(&stats),
            );
            match outcome {
                Ok(t) => {
                    m.times.push(t);
                    progress(&c.name, &format!("{t:.3} s"));
                    if timed {
                        add_stats(m, &stats);
                    }
                }
                Err(why) => {
                    progress(&c.name, &format!("failed: {}", first_line(&why)));
                    m.failure = Some(why);
                }
            }
        }
    }
    // DefaultMapper's calls, timed in one run of their own.
    for (c, m) in contenders.iter().zip(measured.iter_mut()) {
        if c.mapper == MapperUnderTest::LegionDefault && m.failure.is_none() {
            let stats = scratch.join("stats-default.json");
            let timed = MapperUnderTest::LegionDefaultTimed;
            if run_once(backend, &app_arc, &machine, &timed, Some(&stats)).is_ok() {
                add_stats(m, &stats);
            }
        }
        m.times.sort_by(f64::total_cmp);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    AppComparison {
        app: app.name.clone(),
        contenders: measured,
    }
}

fn add_stats(m: &mut Measured, path: &Path) {
    let Some(stats) = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<StatsFile>(&t).ok())
    else {
        return;
    };
    for (name, cost) in stats.calls {
        let total = m.calls.entry(name).or_default();
        total.calls += cost.calls;
        total.us += cost.us;
    }
    m.stats_runs += 1;
}

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

/// One run: its elapsed time, or why it failed.
fn run_once(
    backend: &LegionBackend,
    app: &Arc<App>,
    machine: &Arc<Machine>,
    mapper: &MapperUnderTest,
    stats: Option<&Path>,
) -> Result<f64, String> {
    let request_mapper = match mapper {
        MapperUnderTest::LegionDefault | MapperUnderTest::LegionDefaultTimed => "",
        MapperUnderTest::Mapwright { mapper }
        | MapperUnderTest::Yours { mapper }
        | MapperUnderTest::MapwrightMeasured { mapper }
        | MapperUnderTest::Library { mapper, .. } => mapper,
    };
    let request = RunRequest::new(request_mapper, app.clone(), machine.clone());
    let mut template = backend.template(&request)?;
    let stats_flag = stats
        .map(|p| format!(" -mapwright:stats {}", shell_quote(&p.to_string_lossy())))
        .unwrap_or_default();
    match mapper {
        MapperUnderTest::LegionDefault => {
            template = without_mapper(&template);
        }
        MapperUnderTest::LegionDefaultTimed => {
            template = format!("{} -mapwright:default-mapper", without_mapper(&template));
        }
        MapperUnderTest::Library { dir, .. } => {
            // The folder first on the template's library path.
            let dir = dir.to_string_lossy().replace('\'', "'\\''");
            template =
                template.replacen("LD_LIBRARY_PATH='", &format!("LD_LIBRARY_PATH='{dir}:"), 1);
        }
        MapperUnderTest::Mapwright { .. } | MapperUnderTest::Yours { .. } => {
            // An empty MAPWRIGHT_LOG: no log, as in a user's program.
            template = format!("MAPWRIGHT_LOG= {template}");
        }
        MapperUnderTest::MapwrightMeasured { .. } => {}
    }
    template.push_str(&stats_flag);
    let mut config = CommandConfig::new(template);
    config.timeout = backend.config.timeout;
    let out = CommandBackend::new(config).run(&request);
    match (&out.status, out.elapsed_s) {
        (RunStatus::Ok, Some(t)) => Ok(t),
        (status, _) => Err(format!("{}: {}", status.as_str(), tail(&out.raw_output))),
    }
}

/// The template without its `-mapping {mapper}` (and the semantic-name
/// flag, which only mapwright's mapper reads).
fn without_mapper(template: &str) -> String {
    template
        .replace(" -tm:use_semantic_name", "")
        .replace(" -mapping {mapper}", "")
}

/// The last lines of a failed run's output.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(name: &str, times: &[f64]) -> Measured {
        Measured {
            measuring: false,
            baseline: true,
            name: name.into(),
            times: times.to_vec(),
            failure: None,
            calls: BTreeMap::new(),
            stats_runs: 0,
        }
    }

    #[test]
    fn the_measuring_row_gives_the_cost_of_measuring_and_is_no_baseline() {
        let mut on = measured("measuring", &[0.9, 1.02, 1.1]);
        on.measuring = true;
        on.baseline = false;
        let r = AppComparison {
            app: "a".into(),
            contenders: vec![
                measured("default", &[1.2, 1.2, 1.2]),
                measured("ours", &[1.0, 1.0, 1.3]),
                on,
            ],
        };
        assert!((r.measurement_cost("ours").unwrap() - 1.02).abs() < 1e-12);
        // Held against DefaultMapper only, not against itself measuring.
        assert!((r.ratio_to_best_other(1).unwrap() - 1.0 / 1.2).abs() < 1e-12);
        assert_eq!(r.measurement_cost("nobody"), None);
    }

    #[test]
    fn a_users_own_mapper_has_a_ratio_but_is_no_baseline() {
        let mut yours = measured("yours", &[0.1, 0.1, 0.1]);
        yours.baseline = false;
        let r = AppComparison {
            app: "a".into(),
            contenders: vec![
                measured("default", &[1.2, 1.2, 1.2]),
                measured("ours", &[1.0, 1.0, 1.3]),
                yours,
            ],
        };
        assert!((r.ratio_to_best_other(1).unwrap() - 1.0 / 1.2).abs() < 1e-12);
        assert!((r.ratio_to_best_other(2).unwrap() - 0.1 / 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_ratio_is_to_the_best_of_the_others() {
        let c = AppComparison {
            app: "pennant".into(),
            contenders: vec![
                measured("default", &[0.30, 0.32, 0.40]),
                measured("ours", &[0.31, 0.33, 0.35]),
                measured("task cpu", &[0.20, 0.50, 0.60]),
            ],
        };
        // Medians 0.32, 0.33, 0.50: ours over the default's.
        assert!((c.ratio_to_best_other(1).unwrap() - 0.33 / 0.32).abs() < 1e-12);
        assert!((c.ratio_to_best_other(0).unwrap() - 0.32 / 0.33).abs() < 1e-12);
        // A contender that failed a run is nobody's baseline, nor has a ratio.
        let mut failed = c.clone();
        failed.contenders[0].failure = Some("error: CHECK FAILED".into());
        assert_eq!(failed.ratio_to_best_other(0), None);
        assert!((failed.ratio_to_best_other(1).unwrap() - 0.33 / 0.50).abs() < 1e-12);
    }

    #[test]
    fn stats_files_add_up_per_callback() {
        let dir = std::env::temp_dir().join(format!("mapwright-stats-t-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.json");
        std::fs::write(
            &path,
            r#"{"mapper":"mapwright","calls":{"map_task":{"calls":4,"us":20.0},"slice_task":{"calls":0,"us":0.0}}}"#,
        )
        .unwrap();
        let mut m = measured("ours", &[]);
        add_stats(&mut m, &path);
        add_stats(&mut m, &path);
        assert_eq!(m.stats_runs, 2);
        assert_eq!(m.per_call("map_task"), Some(5.0));
        assert_eq!(m.calls_per_run("map_task"), Some(4.0));
        assert_eq!(m.per_call("slice_task"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_default_like_mapper_keeps_the_experts_layouts() {
        let c = standard_contenders(
            "Task * CPU;\nLayout * * * SOA C_order; # dgemm\nInstanceLimit task_4 1;\n",
        );
        assert_eq!(c[0].mapper, MapperUnderTest::LegionDefault);
        assert_eq!(
            c[2].mapper,
            MapperUnderTest::Mapwright {
                mapper: "Task * CPU;\nLayout * * * SOA C_order; # dgemm\n".into()
            }
        );
        let plain = standard_contenders("Task * CPU;\n");
        assert_eq!(plain[2].name, "mapwright, Task * CPU;");
    }

    #[test]
    fn the_default_mappers_command_has_no_mapper_flags() {
        let t = "LD_LIBRARY_PATH='/x' exec '/b/circuit' -ll:cpu 4 -tm:use_semantic_name -mapping {mapper}";
        assert_eq!(
            without_mapper(t),
            "LD_LIBRARY_PATH='/x' exec '/b/circuit' -ll:cpu 4"
        );
    }
}
