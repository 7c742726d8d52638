//! `mapwright bench space` and `mapwright bench evaluate`: the search space
//! and its evaluation as a line protocol, so that an external tuner (the
//! real OpenTuner, `bench/opentuner/`) can be compared with the built-in
//! proposers on exactly the same points, simulator and normalization.
//!
//! `space` prints the parameters as JSON. `evaluate` reads one point per
//! line on standard input and answers one JSON line per point; a malformed
//! line is answered with `{"status": "bad_request", ...}` and the session
//! goes on.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::anyhow;
use clap::Args;
use mapwright_runtime::machine::{MemKind, ProcKind};
use serde::{Deserialize, Serialize};

use super::bench_optimize::NAIVE_MAPPER;
use crate::optimize::executors::SimExecutor;
use crate::optimize::runner::Runner;
use crate::optimize::space::{
    machine_memories, render, strip_block, IndexFn, LayoutChoice, Space, Spec,
};

#[derive(Debug, Args)]
pub struct SpaceArgs {
    /// Built-in application name or application description file.
    #[arg(long)]
    pub app: String,
    #[arg(long, default_value = "p100x4")]
    pub machine: String,
}

#[derive(Debug, Args)]
pub struct EvaluateArgs {
    /// Built-in application name or application description file.
    #[arg(long)]
    pub app: String,
    #[arg(long, default_value = "p100x4")]
    pub machine: String,
    /// The mapper the points are applied to (default: the benchmark's naive
    /// mapper, `Task * GPU,CPU;`).
    #[arg(long)]
    pub base: Option<std::path::PathBuf>,
}

/// The parameters of the space, for an external tuner.
#[derive(Debug, Serialize)]
struct SpaceJson {
    app: String,
    machine: String,
    /// Task -> processor kinds it has variants for here.
    procs: BTreeMap<String, Vec<ProcKind>>,
    /// (task, region) pairs.
    regions: Vec<(String, String)>,
    /// Every memory kind some processor kind here can reach (the enum an
    /// external tuner gets per region; unreachable combinations fail).
    memories: Vec<MemKind>,
    layout_tasks: Vec<String>,
    index_tasks: Vec<String>,
    index_fns: Vec<&'static str>,
    child_tasks: Vec<String>,
    collect_tasks: Vec<String>,
}

/// One point as an external tuner sends it. Absent entries mean "as the
/// base mapper decides".
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct PointJson {
    procs: BTreeMap<String, ProcKind>,
    /// (task, region, memory)
    memories: Vec<(String, String, MemKind)>,
    layouts: BTreeMap<String, LayoutJson>,
    index_fns: BTreeMap<String, String>,
    same_point: BTreeMap<String, bool>,
    collect: BTreeMap<String, bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LayoutJson {
    soa: bool,
    c_order: bool,
}

/// The answer for one point.
#[derive(Debug, Serialize)]
struct Answer {
    status: String,
    /// Relative to the expert mapper; 0 for a failure.
    normalized: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl PointJson {
    /// The spec, if every name in the point is a task (or task argument) of
    /// `app` and every index function is known.
    fn into_spec(self, app: &mapwright_runtime::app::App) -> Result<Spec, String> {
        let task_names = self
            .procs
            .keys()
            .chain(self.layouts.keys())
            .chain(self.index_fns.keys())
            .chain(self.same_point.keys())
            .chain(self.collect.keys())
            .chain(self.memories.iter().map(|(t, _, _)| t));
        for name in task_names {
            if app.task(name).is_none() {
                return Err(format!("`{}` has no task `{name}`", app.name));
            }
        }
        for (task, region, _) in &self.memories {
            let known = app
                .task(task)
                .is_some_and(|t| t.regions.iter().any(|r| r.answers_to(region)));
            if !known {
                return Err(format!("task `{task}` has no region argument `{region}`"));
            }
        }
        let mut index_fns = BTreeMap::new();
        for (task, name) in self.index_fns {
            let f = IndexFn::ALL
                .into_iter()
                .find(|f| f.name() == name)
                .ok_or_else(|| format!("unknown index function `{name}`"))?;
            index_fns.insert(task, f);
        }
        Ok(Spec {
            procs: self.procs,
            memories: self
                .memories
                .into_iter()
                .map(|(t, r, m)| ((t, r), m))
                .collect(),
            layouts: self
                .layouts
                .into_iter()
                .map(|(t, l)| {
                    (
                        t,
                        LayoutChoice {
                            soa: l.soa,
                            c_order: l.c_order,
                        },
                    )
                })
                .collect(),
            index_fns,
            same_point: self.same_point,
            collect: self.collect,
        })
    }
}

pub fn space(args: SpaceArgs) -> anyhow::Result<ExitCode> {
    let app = crate::project::load_app(&args.app, None)?;
    let machine = crate::project::load_machine(&args.machine, None)?;
    let space = Space::new(&app, &machine);
    let memories = machine_memories(&machine);
    let out = SpaceJson {
        app: app.name.clone(),
        machine: machine.name.clone(),
        procs: space.procs.into_iter().collect(),
        regions: space.regions,
        memories,
        layout_tasks: space.layout_tasks,
        index_tasks: space.index_tasks,
        index_fns: IndexFn::ALL.iter().map(|f| f.name()).collect(),
        child_tasks: space.child_tasks,
        collect_tasks: space.collect_tasks,
    };
    outln!("{}", serde_json::to_string(&out)?)?;
    Ok(ExitCode::SUCCESS)
}

pub fn evaluate(args: EvaluateArgs) -> anyhow::Result<ExitCode> {
    let app = Arc::new(crate::project::load_app(&args.app, None)?);
    let machine = Arc::new(crate::project::load_machine(&args.machine, None)?);
    let base = match &args.base {
        // A previous tuned block is replaced, as `optimize` does.
        Some(path) => strip_block(
            &std::fs::read_to_string(path)
                .map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?,
        ),
        None => NAIVE_MAPPER.to_string(),
    };
    let executor = SimExecutor {
        app: app.clone(),
        machine: machine.clone(),
        noise: 0.0,
    };
    let runner = Runner::new(&app, &machine, &executor);
    let expert = runner
        .expert_score(0)
        .ok_or_else(|| anyhow!("the expert mapper of {} does not run here", app.name))?;
    // A base that does not compile stays broken at every point (a tuner
    // that sees only scores cannot repair syntax): each answer is its
    // compile error, scored 0, as the built-in baselines see it.
    let base_decisions = runner.decisions(&base).unwrap_or_default();
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<PointJson>(&line)
            .map_err(|e| e.to_string())
            .and_then(|p| p.into_spec(&app))
        {
            Err(error) => Answer {
                status: "bad_request".into(),
                normalized: 0.0,
                error: Some(error),
            },
            Ok(spec) => {
                let text = render(&base, &base_decisions, &spec, &app);
                let e = runner.evaluate(&text, 0);
                Answer {
                    normalized: if e.ok() { e.score() / expert } else { 0.0 },
                    status: e.status,
                    error: None,
                }
            }
        };
        serde_json::to_writer(&mut stdout, &answer)?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}
