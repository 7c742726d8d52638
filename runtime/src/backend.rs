//! Execution backends: something that runs a mapper for an application on a
//! machine and reports what the run printed.
//!
//! A [`Backend`] takes a [`RunRequest`] (mapper source, application,
//! machine, seed, noise) and returns a [`RunOutcome`]: a status (`ok` or
//! the kind of failure), the elapsed time and throughput the program
//! reported, the raw text it printed (what AutoGuide reads), and structured
//! [`Metrics`] where the backend can observe them.
//!
//! Backends:
//! - [`crate::sim::SimBackend`]: the embedded, deterministic simulator.
//! - [`command::CommandBackend`]: a real program run from a command template.
//! - [`legion::LegionBackend`]: the built-in benchmarks as real Legion
//!   programs with mapwright's own Legion mapper.
//!
//! A backend never panics on a request and never returns a Rust error for a
//! failed run: every failure is an outcome with raw output, because a failed
//! mapper is information for the optimizer, not an exception.

pub mod command;
pub mod legion;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::app::App;
use crate::decisions::Decisions;
use crate::machine::Machine;

/// What to run.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The mapper's source text.
    pub mapper: String,
    /// The application it maps.
    pub app: Arc<App>,
    /// The machine it runs on.
    pub machine: Arc<Machine>,
    /// Seed of the measurement noise (and of anything else random).
    pub seed: u64,
    /// Relative standard deviation of the measurement noise (0 = none;
    /// 0.01 = 1 %). Backends that measure real runs ignore it.
    pub noise: f64,
    /// The name the user knows the mapper by (their file's path): a
    /// backend that runs a temporary copy of it shows this name wherever
    /// the program's output names the copy (diagnostics, errors).
    pub source_name: Option<String>,
    /// Set by the caller to stop the run: a backend that runs a program
    /// (`command`, `legion`) kills its process group and reports the
    /// failure kind `cancelled`.
    pub cancel: Option<Arc<std::sync::atomic::AtomicBool>>,
}

impl RunRequest {
    /// A request without noise, seed 0.
    pub fn new(mapper: impl Into<String>, app: Arc<App>, machine: Arc<Machine>) -> RunRequest {
        RunRequest {
            mapper: mapper.into(),
            app,
            machine,
            seed: 0,
            noise: 0.0,
            source_name: None,
            cancel: None,
        }
    }
}

/// Whether a run succeeded, and if not, what kind of failure it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStatus {
    /// The program ran to completion and reported its performance.
    Ok,
    /// The run failed; the stable kind (`out_of_memory`, `stride_mismatch`,
    /// `cublas_illegal_parameter`, `slice_out_of_bound`, `event_exists`,
    /// `timeout`, `error`, ...). See `shared/apps/ERRORS.md`.
    Error(String),
}

impl RunStatus {
    /// `ok` or the failure kind.
    pub fn as_str(&self) -> &str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Error(kind) => kind,
        }
    }

    /// Whether the run succeeded.
    pub fn is_ok(&self) -> bool {
        matches!(self, RunStatus::Ok)
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RunStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RunStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(if s == "ok" {
            RunStatus::Ok
        } else {
            RunStatus::Error(s)
        })
    }
}

/// What a run reported.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunOutcome {
    /// `ok` or the failure kind.
    pub status: RunStatus,
    /// The time the program reports, seconds (for the DISTAL programs, which
    /// print one time per iteration, the mean of those). None on failure.
    pub elapsed_s: Option<f64>,
    /// The throughput the program reports (or, where it prints none, the
    /// one the model derives), in `throughput_unit`. None on failure.
    pub throughput: Option<f64>,
    /// Unit of `throughput` (`GFLOPS`, `GFLOPS per node`, ...); empty when
    /// there is no throughput.
    #[serde(default)]
    pub throughput_unit: String,
    /// Exactly what the run printed (stdout and stderr), Legion-style.
    pub raw_output: String,
    /// Structured measurements, where the backend can observe them.
    #[serde(default)]
    pub metrics: Metrics,
}

impl RunOutcome {
    /// A failed run with the given kind and text.
    pub fn failure(kind: impl Into<String>, raw_output: impl Into<String>) -> RunOutcome {
        RunOutcome {
            status: RunStatus::Error(kind.into()),
            elapsed_s: None,
            throughput: None,
            throughput_unit: String::new(),
            raw_output: raw_output.into(),
            metrics: Metrics::default(),
        }
    }

    /// Performance of this run relative to `baseline` (>1: this run is
    /// better): the throughput ratio when both report one, else the inverse
    /// time ratio. None when either run failed or reported nothing usable.
    pub fn normalized_to(&self, baseline: &RunOutcome) -> Option<f64> {
        if !self.status.is_ok() || !baseline.status.is_ok() {
            return None;
        }
        let ratio = match (self.throughput, baseline.throughput) {
            (Some(t), Some(b)) if b > 0.0 && self.throughput_unit == baseline.throughput_unit => {
                t / b
            }
            _ => match (self.elapsed_s, baseline.elapsed_s) {
                (Some(t), Some(b)) if t > 0.0 => b / t,
                _ => return None,
            },
        };
        ratio.is_finite().then_some(ratio)
    }
}

/// Structured measurements of a run. Maps are keyed by readable labels so
/// they serialise as they are; empty when the backend cannot observe them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Metrics {
    /// A measured run's timeline (task runs per processor, copies), for
    /// the optimizer's report; not serialised (a run's can be thousands of
    /// entries).
    #[serde(skip)]
    pub timeline: Option<std::sync::Arc<crate::legion::timeline::Timeline>>,
    /// Time each task contributes to the timed part of the run, seconds
    /// (its copies plus its slowest processor, summed over its launches).
    pub task_time_s: BTreeMap<String, f64>,
    /// Bytes copied over each link during the timed part, keyed like
    /// `node0 NVLink GPU0->GPU1` or `node0 PCIe host->GPU2`.
    pub copy_bytes: BTreeMap<String, f64>,
    /// Busy time of each processor during the timed part, seconds, keyed
    /// like `node0 GPU1`.
    pub proc_busy_s: BTreeMap<String, f64>,
    /// Peak bytes held in each memory, keyed like `node0 FBMEM1`.
    pub memory_bytes: BTreeMap<String, f64>,
    /// Load imbalance: the busiest processor's busy time over the mean busy
    /// time of the processors of the kinds the timed tasks use (1 = perfect).
    pub imbalance: f64,
    /// Seconds the timed part spends in copies that no computation hides.
    pub copy_time_s: f64,
    /// Where these figures come from: the simulator's model, or Realm's
    /// measurements of a real run (`none` where the backend observes none).
    pub basis: MetricsBasis,
    /// Per task: how often it ran, how long, where, and what was copied in
    /// for it (filled from measurements; empty where the backend has none).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tasks: BTreeMap<String, TaskFigures>,
    /// What a measurement covers (how many task runs and copies), in a
    /// sentence; empty for the model.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub coverage: String,
}

/// Where a run's [`Metrics`] come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricsBasis {
    /// The backend observes nothing but the program's output.
    #[default]
    None,
    /// The simulator's prediction.
    Model,
    /// Realm's measurements of a real run, through the mapper.
    Measured,
}

impl MetricsBasis {
    /// `measured` / `model`: the word a report puts next to a figure.
    pub fn word(self) -> &'static str {
        match self {
            MetricsBasis::None => "none",
            MetricsBasis::Model => "model",
            MetricsBasis::Measured => "measured",
        }
    }
}

/// One task's figures in a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskFigures {
    /// Runs measured (points of its launches, or single launches).
    pub runs: u32,
    /// Mean and longest run, seconds.
    pub mean_s: f64,
    pub max_s: f64,
    /// How many of its runs each processor took (`node0 CPU1`).
    pub points_per_proc: BTreeMap<String, u32>,
    /// Bytes copied in for each region argument (by index).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub copy_bytes_per_arg: BTreeMap<u32, f64>,
}

/// Turns a mapper's source into decisions (mapping resolution). The sim
/// backend takes one so that it does not depend on how resolution is done.
pub type Resolver = Arc<dyn Fn(&str, &App, &Machine) -> Decisions + Send + Sync>;

/// Something that runs a mapper and reports what happened.
pub trait Backend: Send + Sync {
    /// Short name (`sim`, `command`, ...).
    fn name(&self) -> &str;

    /// Runs one request. Never panics; failures are outcomes.
    fn run(&self, request: &RunRequest) -> RunOutcome;
}

/// Recognises the failure texts of `shared/apps/ERRORS.md` in a real run's
/// output and returns their stable kind, most specific first. None when no
/// known text occurs.
pub fn classify_output(text: &str) -> Option<&'static str> {
    const KNOWN: [(&str, &str); 17] = [
        ("failed allocation of size", "out_of_memory"),
        (
            "instance allocation failed - out of memory",
            "out_of_memory",
        ),
        ("Failed to allocate DeferredBuffer", "out_of_memory"),
        ("stride does not match expected value", "stride_mismatch"),
        ("strides do not match", "stride_mismatch"),
        ("had an illegal value", "cublas_illegal_parameter"),
        ("Slice processor index out of bound", "slice_out_of_bound"),
        ("Sharding node index out of bound", "slice_out_of_bound"),
        ("Assertion `event.exists()' failed", "event_exists"),
        ("function undefined", "function_undefined"),
        ("mapping function is undefined", "function_undefined"),
        ("Index out of bound for TupleIntNode", "index_out_of_bound"),
        ("but machine model is for", "processor_kind_mismatch"),
        ("Invalid mapper output", "mapping_error"),
        ("Error at line", "syntax_error"),
        ("Unrecognized character", "syntax_error"),
        (" not found", "name_not_found"),
    ];
    KNOWN
        .iter()
        .find(|(needle, _)| text.contains(needle))
        .map(|(_, kind)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(elapsed: f64, thr: Option<f64>) -> RunOutcome {
        RunOutcome {
            status: RunStatus::Ok,
            elapsed_s: Some(elapsed),
            throughput: thr,
            throughput_unit: if thr.is_some() {
                "GFLOPS".into()
            } else {
                String::new()
            },
            raw_output: String::new(),
            metrics: Metrics::default(),
        }
    }

    #[test]
    fn normalization_prefers_throughput_then_time() {
        assert_eq!(
            ok(2.0, Some(50.0)).normalized_to(&ok(1.0, Some(100.0))),
            Some(0.5)
        );
        assert_eq!(ok(2.0, None).normalized_to(&ok(1.0, None)), Some(0.5));
        let failed = RunOutcome::failure("out_of_memory", "x");
        assert_eq!(failed.normalized_to(&ok(1.0, None)), None);
        assert_eq!(ok(1.0, None).normalized_to(&failed), None);
    }

    #[test]
    fn status_serialises_as_its_kind() {
        let o = RunOutcome::failure("event_exists", "boom");
        let v = serde_json::to_value(&o).unwrap();
        assert_eq!(v["status"], "event_exists");
        assert_eq!(serde_json::to_value(RunStatus::Ok).unwrap(), "ok");
    }

    #[test]
    fn known_error_texts_are_classified() {
        assert_eq!(
            classify_output(" ** On entry to DGEMM  parameter number 8 had an illegal value"),
            Some("cublas_illegal_parameter")
        );
        assert_eq!(
            classify_output("Slice processor index out of bound!\n4 >= 4"),
            Some("slice_out_of_bound")
        );
        assert_eq!(classify_output("all good"), None);
    }
}
