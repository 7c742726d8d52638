//! One mapwright mapper per Legion process: the mapper file checked at
//! start-up, then each launch resolved by `resolve_mapping`, the code that
//! `explain` and the simulator use, so the DSL's rules live in one place.
//!
//! Resolution works on the application as far as the mapper has seen it
//! ([`SeenApp`]); a launch of the same shape as an earlier one (same task,
//! domain, variants and region names) is answered from a cache, so a
//! time-step loop costs one resolution per task.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mapwright_grammar::render::{render_diagnostic, Style};
use mapwright_grammar::{analyze, Diagnostic, LineIndex, Parsed, Severity};

use crate::app::Launch;
use crate::decisions::{RuntimeFailure, TaskDecision};
use crate::machine::Machine;
use crate::resolve_mapping::{
    resolve_parsed_with, EvalPlacer, LaunchPlacer, NoPlacer, RegionNaming, ResolveOptions,
};

use super::host::HostFacts;
use super::launch::{LaunchInfo, SeenApp};
use super::log::DecisionLog;
use super::recorder::{AppRecorder, RegionShape};

/// How the mapper was started (its command-line flags).
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// `-tm:use_semantic_name`: regions are matched by name, not index.
    pub semantic_names: bool,
    /// Where to write the decision log (JSON lines), if anywhere.
    pub decision_log: Option<PathBuf>,
    /// Where to write this host's machine description, if anywhere.
    pub machine_out: Option<PathBuf>,
    /// Where to write the program's application description as it ran
    /// (`-mapwright:app`), if anywhere.
    pub app_out: Option<PathBuf>,
}

/// What the mapper does for one launch.
#[derive(Debug, Clone)]
pub struct LaunchDecision {
    /// The task's decisions, as `explain` would show them.
    pub task: TaskDecision,
    /// What a real run aborts with for this launch (a mapping function
    /// failing on a point, a processor index out of bounds, ...).
    pub fatal: Option<RuntimeFailure>,
    /// Domain lower bounds of the launch: placements are kept relative to
    /// them.
    lo: Vec<i64>,
}

impl LaunchDecision {
    /// Where launch point `point` (index launches) runs, or, for a single
    /// task, where it runs when launched from parent point `point` (empty:
    /// its parent is a single task). `(node, processor index within the
    /// kind)`; None when the point was not placed.
    pub fn place(&self, point: &[i64]) -> Option<(u32, u32)> {
        let placements = &self.task.placement;
        if self.task.launch == Launch::Single {
            let found = placements
                .iter()
                .find(|p| p.point == point)
                .or_else(|| placements.first());
            return found.map(|p| (p.node, p.proc));
        }
        let relative: Vec<i64> = point
            .iter()
            .zip(self.lo.iter().chain(std::iter::repeat(&0)))
            .map(|(p, l)| p - l)
            .collect();
        placements
            .iter()
            .find(|p| p.point == relative)
            .map(|p| (p.node, p.proc))
    }
}

/// The mapper's state for one process.
pub struct MapperSession {
    source: String,
    parsed: Parsed,
    machine: Machine,
    placer: Option<EvalPlacer>,
    seen: SeenApp,
    naming: RegionNaming,
    cache: HashMap<LaunchInfo, Arc<LaunchDecision>>,
    log: Option<DecisionLog>,
    /// The application description being gathered (`-mapwright:app`).
    recorder: Option<AppRecorder>,
    /// Every launch decided so far, as the log and the application
    /// description need it (with either only):
    /// a mapped task's line names its launch by index, so that logging
    /// a task describes nothing again.
    launches: Vec<LoggedLaunch>,
    /// Warnings from the start-up check, rendered, for the caller to print.
    pub warnings: String,
}

/// What a decision-log line needs of a launch.
#[derive(Debug, Clone)]
pub struct LoggedLaunch {
    pub task: String,
    pub parent: Option<String>,
    pub inner: bool,
    /// The layout asked for each physical region argument, by index, as
    /// `explain` prints it.
    pub layouts: Vec<(u32, String)>,
    /// Whether a task of it is in the log.
    pub logged: bool,
}

impl MapperSession {
    /// Checks the mapper file at `path` and prepares to decide on the host
    /// `facts` describe. Errors (syntax, names, types, a top level that
    /// aborts) come back rendered as `mapwright check` prints them: the
    /// program must stop before any task runs.
    pub fn open(
        path: &Path,
        facts: &HostFacts,
        options: SessionOptions,
    ) -> Result<MapperSession, String> {
        let source = std::fs::read_to_string(path)
            .map_err(|e| format!("error: cannot read the mapper file {}: {e}", path.display()))?;
        Self::from_source(&path.display().to_string(), source, facts, options)
    }

    /// [`MapperSession::open`] on mapper text already read; `display` names
    /// it in diagnostics.
    pub fn from_source(
        display: &str,
        source: String,
        facts: &HostFacts,
        options: SessionOptions,
    ) -> Result<MapperSession, String> {
        let machine = facts.machine();
        let analysis = analyze(&source);
        let diagnostics = analysis.diagnostics();
        let index = LineIndex::new(&source);
        let render = |ds: &[&Diagnostic]| -> String {
            ds.iter()
                .map(|d| render_diagnostic(d, display, &source, &index, Style { color: false }))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let errors: Vec<&Diagnostic> = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        let warnings: Vec<&Diagnostic> = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .collect();
        if !errors.is_empty() {
            return Err(format!(
                "{}\nerror: mapwright's mapper stops: {} error(s) in {display}; no task was run",
                render(&errors),
                errors.len()
            ));
        }
        // The top level runs once, at registration, as in the reference:
        // `m = Machine(GPU)` and friends are evaluated against this host.
        let placer = match EvalPlacer::new(&analysis.parsed.program, &machine) {
            Ok(p) => Some(p),
            Err(e) => {
                return Err(format!(
                    "error: {display}: the mapper's top level fails on this host: {e}\n\
                     error: mapwright's mapper stops; no task was run"
                ))
            }
        };
        if let Some(out) = &options.machine_out {
            let text = machine
                .to_json_pretty()
                .map_err(|e| format!("error: cannot describe this host: {e}"))?;
            std::fs::write(out, text).map_err(|e| {
                format!(
                    "error: cannot write the machine description {}: {e}",
                    out.display()
                )
            })?;
        }
        let log = match &options.decision_log {
            Some(p) => {
                let mut log = DecisionLog::create(p)?;
                // First, the host's processors: the measured metrics count
                // the ones no task ran on as idle.
                log.write(&super::log::HostLine::of(&machine));
                Some(log)
            }
            None => None,
        };
        let seen = SeenApp::new(options.semantic_names);
        let naming = if seen.semantic() {
            RegionNaming::Semantic
        } else {
            RegionNaming::Index
        };
        Ok(MapperSession {
            warnings: render(&warnings),
            source,
            parsed: analysis.parsed,
            machine,
            placer,
            seen,
            naming,
            cache: HashMap::new(),
            log,
            recorder: options.app_out.clone().map(AppRecorder::new),
            launches: Vec::new(),
        })
    }

    /// The decisions for `launch`; None only if resolution left the task
    /// out, which it never does for a task of the application.
    pub fn decide(&mut self, launch: &LaunchInfo) -> Option<Arc<LaunchDecision>> {
        if let Some(d) = self.cache.get(launch) {
            return Some(d.clone());
        }
        let app = self.seen.record(launch).clone();
        let options = ResolveOptions {
            naming: Some(self.naming),
            fixes: false,
            memo: None,
        };
        let mut fresh = self.placer.clone();
        let placer: &mut dyn LaunchPlacer = match fresh.as_mut() {
            Some(p) => p,
            None => &mut NoPlacer,
        };
        let decisions = resolve_parsed_with(
            &self.parsed,
            &self.source,
            &app,
            &self.machine,
            placer,
            options,
        );
        let task = decisions
            .tasks
            .iter()
            .find(|t| t.task == launch.task)
            .cloned()?;
        // The run's first fatal problem. An earlier launch's own problem
        // would have stopped the program at that launch, so what is left
        // is this launch's (or one this launch brings about, such as two
        // tasks asking one region for different layouts).
        let decision = Arc::new(LaunchDecision {
            task,
            fatal: decisions.fatal,
            lo: launch.lo.clone(),
        });
        self.cache.insert(launch.clone(), decision.clone());
        Some(decision)
    }

    /// Whether a decision log is being written.
    pub fn logging(&self) -> bool {
        self.log.is_some()
    }

    /// Whether the application description is being gathered.
    pub fn recording(&self) -> bool {
        self.recorder.is_some()
    }

    /// Records where and when one mapped task ran.
    pub fn log_ran(&mut self, ran: &crate::legion::log::RanTask) {
        if let Some(log) = &mut self.log {
            log.write(ran);
        }
        if let Some(recorder) = &mut self.recorder {
            recorder.ran(ran);
        }
    }

    /// One point task of the launch `launch_id` mapped (for the
    /// application description; [`MapperSession::log_mapped`] writes it).
    pub fn mapped(&mut self, launch_id: u32) {
        if let Some(recorder) = &mut self.recorder {
            recorder.mapped(launch_id);
        }
    }

    /// One launch of the launch [`MapperSession::remember_launch`] kept
    /// (for the application description).
    pub fn launched(&mut self, launch_id: u32) {
        if let Some(recorder) = &mut self.recorder {
            recorder.launched(launch_id);
        }
    }

    /// The regions behind the arguments of a mapped point of a launch (for
    /// the application description).
    pub fn region_shapes(&mut self, launch_id: u32, shapes: Vec<RegionShape>) {
        if let Some(recorder) = &mut self.recorder {
            recorder.shapes(launch_id, shapes);
        }
    }

    /// Keeps what the log and the application description need of a
    /// decided launch and returns its index (`u32::MAX` with neither:
    /// nothing is kept).
    pub fn remember_launch(&mut self, info: &LaunchInfo, decision: &LaunchDecision) -> u32 {
        if self.log.is_none() && self.recorder.is_none() {
            return u32::MAX;
        }
        if let Some(recorder) = &mut self.recorder {
            recorder.remember(self.launches.len() as u32, info);
        }
        self.launches.push(LoggedLaunch {
            task: info.task.clone(),
            parent: info.parent.clone(),
            inner: info.inner,
            layouts: decision
                .task
                .regions
                .iter()
                .map(|r| (r.index, crate::resolve_mapping::layout_text(&r.layout)))
                .collect(),
            logged: false,
        });
        (self.launches.len() - 1) as u32
    }

    /// A launch [`MapperSession::remember_launch`] kept.
    pub fn launch(&self, id: u32) -> Option<&LoggedLaunch> {
        self.launches.get(id as usize)
    }

    /// Writes out what the log holds so far, and the application
    /// description as far as the run has gone. A description that cannot
    /// be written is reported on stderr: the run itself is not failed.
    pub fn flush_log(&mut self) {
        if let Some(log) = &mut self.log {
            log.flush();
        }
        if let Some(recorder) = &self.recorder {
            if let Err(message) = recorder.write(&program_name(), &self.machine) {
                eprintln!("{message}");
            }
        }
    }

    /// Records one copy or fill made for a mapped task's argument.
    pub fn log_copy(&mut self, copy: &crate::legion::log::CopiedData) {
        if let Some(log) = &mut self.log {
            log.write(copy);
        }
    }

    /// Records what was realised for one mapped task: its line
    /// ([`super::log::MappedTaskLine`]), serialized.
    ///
    /// The first task of each launch (`launch_id`, from
    /// [`MapperSession::remember_launch`]) goes into the file at once: a
    /// layout or placement that makes a program abort does so on its
    /// launch's first task, and an abort skips the exit hook. The others
    /// are written in batches: a write a task cost 10-20 µs a `map_task`.
    pub fn log_mapped(&mut self, launch_id: u32, line: &[u8]) {
        let Some(log) = &mut self.log else {
            return;
        };
        match self.launches.get_mut(launch_id as usize) {
            Some(launch) if !launch.logged => {
                launch.logged = true;
                log.write_line(line);
                log.flush();
            }
            _ => log.write_line(line),
        }
    }
}

/// The program's name: its executable's file name.
fn program_name() -> String {
    std::env::args()
        .next()
        .map(PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "legion-program".into())
}
