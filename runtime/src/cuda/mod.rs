//! The `cuda` backend: a mapper's decisions executed for real, with real
//! allocations and kernels on the GPUs present (`runtime/CUDA.md`).
//!
//! The parts that need no GPU are always compiled and tested:
//! - [`layout`]   instance layouts (SOA/AOS, C/F order, alignment): strides,
//!   kernel indexing, allocation sizes.
//! - [`plan`]     the scaled workload of each built-in benchmark and the
//!   placement of its tasks and data under a mapper's decisions.
//! - [`kernels`]  the kernels, as host code (CPU variants and the CPU
//!   reference) and as CUDA C source for NVRTC.
//! - [`exec`]     the executor: instances, coherence, copies, launches, on
//!   host threads and through the [`exec::Device`] trait on GPUs.
//! - [`apps`]     the benchmarks' core loops and their result checks.
//! - [`tiles`]    a DISTAL GEMM's tile grid: tiles, owners, products.
//! - [`discover`] a machine description from device attributes, host
//!   facts and calibration figures.
//!
//! With the `cuda` feature (cudarc, loaded at run time):
//! - `gpu`        the [`exec::Device`] of the GPUs present: contexts,
//!   streams per logical processor, FBMEM/ZCMEM allocations, NVRTC
//!   kernels, cuBLAS GEMMs, peer copies, CUDA events.
//! - `backend`    [`CudaBackend`], the [`crate::backend::Backend`].
//! - [`calibrate`] bandwidth, GEMM-rate and launch-overhead measurements.
//!
//! [`run_workload`] is the core both share: it scales the application,
//! places it, runs warm-up and timed iterations, checks the results
//! against the closed forms and the CPU reference, and returns what it
//! measured; [`outcome`] prints it the way the simulator does.

pub mod apps;
pub mod discover;
#[cfg(test)]
mod emulate;
pub mod exec;
pub mod kernels;
pub mod layout;
pub mod plan;
pub mod tiles;

#[cfg(feature = "cuda")]
mod backend;
#[cfg(feature = "cuda")]
pub mod calibrate;
#[cfg(feature = "cuda")]
mod gpu;

#[cfg(feature = "cuda")]
pub use backend::{discover_machine, CudaBackend};

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::app::App;
use crate::backend::{Metrics, RunOutcome, RunStatus};
use crate::decisions::Decisions;
use crate::machine::Machine;

use exec::{Device, Executor, Stats};
use plan::{Proc, Workload};

/// Why a run of the `cuda` backend could not produce a measurement.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CudaError {
    /// No driver library, no GPU, or a missing CUDA library.
    #[error("no CUDA driver/GPU found: {0}")]
    NoDevice(String),
    /// A CUDA call failed.
    #[error("CUDA error: {0}")]
    Driver(String),
    /// A real allocation failed.
    #[error("{0}")]
    OutOfMemory(String),
    /// Only the built-in benchmarks have kernels.
    #[error(
        "the cuda backend runs the nine built-in benchmarks; `{0}` is not one of them \
         (use --backend command for other programs)"
    )]
    UnsupportedApp(String),
    /// The decisions cannot be executed as given.
    #[error("{0}")]
    Plan(String),
    /// The mapping changed the results: a bug, never acceptable.
    #[error("results differ from the CPU reference: {0}")]
    Mismatch(String),
}

impl CudaError {
    /// The run-status kind of an outcome for this error.
    pub fn kind(&self) -> &'static str {
        match self {
            CudaError::NoDevice(_) => "no_device",
            CudaError::OutOfMemory(_) => "out_of_memory",
            CudaError::Mismatch(_) => "wrong_result",
            CudaError::Plan(s) if s.contains("out of bound") => "slice_out_of_bound",
            _ => "error",
        }
    }
}

/// How a run is sized and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CudaConfig {
    /// Fraction of the application's data the run uses (0 < scale <= 1).
    pub scale: f64,
    /// Untimed iterations before the timed ones (at most the
    /// application's own untimed count).
    pub warmup: u32,
    /// Timed iterations (None: the application's own count).
    pub iterations: Option<u32>,
    /// Compare the results with the CPU reference.
    pub verify: bool,
}

impl Default for CudaConfig {
    fn default() -> Self {
        CudaConfig {
            scale: 1.0 / 64.0,
            warmup: 1,
            iterations: None,
            verify: true,
        }
    }
}

impl CudaConfig {
    /// The defaults, overridden by `MAPWRIGHT_CUDA_SCALE` (a fraction,
    /// e.g. `0.25` or `1/16`), `MAPWRIGHT_CUDA_ITERATIONS`,
    /// `MAPWRIGHT_CUDA_WARMUP` and `MAPWRIGHT_CUDA_VERIFY=0`.
    pub fn from_env() -> CudaConfig {
        let mut c = CudaConfig::default();
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        if let Some(s) = var("MAPWRIGHT_CUDA_SCALE").and_then(|v| parse_fraction(&v)) {
            c.scale = s;
        }
        if let Some(n) = var("MAPWRIGHT_CUDA_ITERATIONS").and_then(|v| v.trim().parse().ok()) {
            c.iterations = Some(n);
        }
        if let Some(n) = var("MAPWRIGHT_CUDA_WARMUP").and_then(|v| v.trim().parse().ok()) {
            c.warmup = n;
        }
        if let Some(v) = var("MAPWRIGHT_CUDA_VERIFY") {
            c.verify = !matches!(v.trim(), "0" | "false" | "no" | "off");
        }
        c
    }
}

/// `0.25`, `1/16` -> a fraction in (0, 1]; anything else -> None.
pub fn parse_fraction(s: &str) -> Option<f64> {
    let s = s.trim();
    let v = match s.split_once('/') {
        Some((a, b)) => a.trim().parse::<f64>().ok()? / b.trim().parse::<f64>().ok()?,
        None => s.parse::<f64>().ok()?,
    };
    (v.is_finite() && v > 0.0 && v <= 1.0).then_some(v)
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// The scaled application the kernels ran (and the simulator is given).
    pub app: App,
    pub workload: Workload,
    /// Seconds of each timed iteration.
    pub iter_s: Vec<f64>,
    /// Seconds of the warm-up iterations.
    pub warmup_s: f64,
    pub warmup: u32,
    /// Flops of one iteration (the scaled description's count).
    pub flops: f64,
    pub stats: Stats,
    /// Largest relative difference from the CPU reference (None: not
    /// compared).
    pub max_difference: Option<f64>,
    /// Whether the run touched a GPU.
    pub used_gpu: bool,
}

/// Relative difference from the reference a run may show: atomics on GPUs
/// add in another order than the host does.
pub const TOLERANCE: f64 = 1e-9;

type RefKey = (String, u64, u32);

fn reference_cache() -> &'static Mutex<HashMap<RefKey, Arc<apps::State>>> {
    static CACHE: OnceLock<Mutex<HashMap<RefKey, Arc<apps::State>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The CPU reference's final state for a workload after `iterations`
/// iterations: everything on host threads, in host memory, default
/// layouts. Cached per (application, scale, iterations).
pub fn reference_state(
    app_name: &str,
    scale: f64,
    w: &Workload,
    iterations: u32,
) -> Result<Arc<apps::State>, CudaError> {
    let key = (app_name.to_string(), scale.to_bits(), iterations);
    if let Some(s) = reference_cache()
        .lock()
        .ok()
        .and_then(|c| c.get(&key).cloned())
    {
        return Ok(s);
    }
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let places = apps::reference_places(w, threads);
    let mut ex = Executor::new(None, apps::regions(w));
    apps::init(&mut ex, w, &places)?;
    for _ in 0..iterations {
        apps::iteration(&mut ex, w, &places)?;
        ex.finish_iteration()?;
    }
    let s = Arc::new(apps::state(&mut ex, w)?);
    if let Ok(mut c) = reference_cache().lock() {
        if c.len() > 16 {
            c.clear();
        }
        c.insert(key, s.clone());
    }
    Ok(s)
}

/// Runs the decisions for `app` on `machine`: GPUs through `dev` (None:
/// host threads only, which fails for decisions that use a GPU). See the
/// module documentation.
pub fn run_workload(
    dev: Option<&mut dyn Device>,
    app: &App,
    decisions: &Decisions,
    machine: &Machine,
    cfg: &CudaConfig,
) -> Result<Measured, CudaError> {
    let scaled = plan::scale_app(app, cfg.scale);
    let w = Workload::of(&scaled)?;
    let places = plan::place(&scaled, &w, decisions, machine)?;
    let used_gpu = places.iter().any(|p| p.units.iter().any(Proc::is_gpu));
    if used_gpu && dev.is_none() {
        return Err(CudaError::NoDevice(
            "the decisions put tasks on GPUs but no GPU is attached".into(),
        ));
    }
    let timed = cfg.iterations.unwrap_or(app.timed_iterations).max(1);
    let warmup = cfg.warmup.min(app.untimed_iterations);
    let mut ex = Executor::new(dev, apps::regions(&w));
    apps::init(&mut ex, &w, &places)?;
    let t0 = Instant::now();
    for _ in 0..warmup {
        apps::iteration(&mut ex, &w, &places)?;
        ex.finish_iteration()?;
    }
    let warmup_s = t0.elapsed().as_secs_f64();
    ex.stats = Stats {
        mem_bytes: std::mem::take(&mut ex.stats.mem_bytes),
        ..Stats::default()
    };
    ex.timed = true;
    let mut iter_s = Vec::with_capacity(timed as usize);
    for _ in 0..timed {
        let t = Instant::now();
        apps::iteration(&mut ex, &w, &places)?;
        ex.finish_iteration()?;
        iter_s.push(t.elapsed().as_secs_f64());
    }
    ex.timed = false;
    let state = apps::state(&mut ex, &w)?;
    let total = warmup + timed;
    apps::check_closed_form(&w, &state, total).map_err(CudaError::Mismatch)?;
    let max_difference = if cfg.verify && !matches!(w, Workload::Gemm { .. }) {
        let reference = reference_state(&app.name, cfg.scale, &w, total)?;
        let d = apps::max_difference(&state, &reference).map_err(CudaError::Mismatch)?;
        if d > TOLERANCE {
            return Err(CudaError::Mismatch(format!(
                "largest relative difference {d:e} (tolerance {TOLERANCE:e})"
            )));
        }
        Some(d)
    } else if matches!(w, Workload::Gemm { .. }) {
        // Freivalds' check above is the GEMM's reference comparison.
        Some(0.0)
    } else {
        None
    };
    let stats = ex.stats.clone();
    Ok(Measured {
        flops: plan::timed_flops(&scaled),
        app: scaled,
        workload: w,
        iter_s,
        warmup_s,
        warmup,
        stats,
        max_difference,
        used_gpu,
    })
}

/// A short description of the problem a run used.
pub fn describe(w: &Workload) -> String {
    match *w {
        Workload::Stencil {
            pieces, rows, cols, ..
        } => format!("{pieces} pieces of {rows} x {cols} points"),
        Workload::Circuit {
            pieces,
            private,
            shared,
            wires,
            ..
        } => format!("{pieces} pieces of {private}+{shared} nodes and {wires} wires"),
        Workload::Pennant { pieces, zx, zy } => {
            format!("{pieces} pieces of {zx} x {zy} zones")
        }
        Workload::Gemm { n, grid, .. } => {
            format!("{} x {} x {} tiles of {n} x {n}", grid[0], grid[1], grid[2])
        }
    }
}

/// The outcome of a measured run, printed as the simulator (and the real
/// program) prints it, plus one line saying what was run. `predicted` is
/// the simulator's time for the same scaled problem, when known.
pub fn outcome(m: &Measured, scale: f64, predicted: Option<f64>) -> RunOutcome {
    use crate::sim::output;
    let style = output::Style::of(&m.app);
    let (mut text, elapsed, throughput) =
        output::success(style, &m.iter_s, m.flops, 0.0, m.warmup_s, 1);
    let check = match m.max_difference {
        Some(d) => format!("results match the CPU reference (largest difference {d:.1e})"),
        None => "results not compared with the CPU reference".to_string(),
    };
    let pred = predicted
        .map(|p| format!("; the simulator predicts {p:.6} s for this size"))
        .unwrap_or_default();
    text.push_str(&format!(
        "[mapwright cuda] {} at {} of its data ({}), {} warm-up + {} timed iterations; {check}{pred}\n",
        m.app.name,
        fraction_text(scale),
        describe(&m.workload),
        m.warmup,
        m.iter_s.len()
    ));
    // Timed on the device as the run executes.
    let mut metrics = Metrics {
        basis: crate::backend::MetricsBasis::Measured,
        ..Metrics::default()
    };
    for (k, v) in &m.stats.task_s {
        metrics.task_time_s.insert(k.clone(), *v);
    }
    for (k, v) in &m.stats.copy_bytes {
        metrics.copy_bytes.insert(k.clone(), *v);
    }
    for (k, v) in &m.stats.busy_s {
        metrics.proc_busy_s.insert(k.clone(), *v);
    }
    for (k, v) in &m.stats.mem_bytes {
        metrics.memory_bytes.insert(k.clone(), *v);
    }
    metrics.copy_time_s = m.stats.copy_s;
    metrics.imbalance = imbalance(&m.stats.busy_s);
    RunOutcome {
        status: RunStatus::Ok,
        elapsed_s: Some(elapsed),
        throughput: Some(throughput),
        throughput_unit: style.unit().to_string(),
        raw_output: text,
        metrics,
    }
}

/// Busiest processor over the mean, among the processors of the kind with
/// the most busy time.
fn imbalance(busy: &HashMap<String, f64>) -> f64 {
    let mut kinds: HashMap<&str, Vec<f64>> = HashMap::new();
    for (label, s) in busy {
        let kind = label
            .split_whitespace()
            .last()
            .unwrap_or("")
            .trim_end_matches(|c: char| c.is_ascii_digit());
        kinds.entry(kind).or_default().push(*s);
    }
    let Some(v) = kinds
        .values()
        .max_by(|a, b| a.iter().sum::<f64>().total_cmp(&b.iter().sum::<f64>()))
    else {
        return 1.0;
    };
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    let max = v.iter().copied().fold(0.0, f64::max);
    if mean > 0.0 {
        max / mean
    } else {
        1.0
    }
}

/// `1/64` for reciprocals of whole numbers, else the decimal.
pub fn fraction_text(s: f64) -> String {
    let inv = 1.0 / s;
    if (inv - inv.round()).abs() < 1e-9 {
        format!("1/{}", inv.round() as u64)
    } else {
        format!("{s}")
    }
}

/// An outcome for an error of the backend.
pub fn failure(e: &CudaError) -> RunOutcome {
    let text = match e {
        CudaError::Plan(s) if s.contains("out of bound") => format!("{s}\n"),
        _ => format!("mapwright cuda backend: {e}\n"),
    };
    RunOutcome::failure(e.kind(), text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::reference;

    fn small() -> CudaConfig {
        CudaConfig {
            scale: 1.0 / 4096.0,
            warmup: 1,
            iterations: Some(2),
            verify: true,
        }
    }

    #[test]
    fn all_cpu_mappings_run_everywhere_and_match_the_reference() {
        let m = Machine::preset("h200").unwrap();
        for name in ["stencil", "circuit", "pennant"] {
            let app = App::builtin(name).unwrap();
            let d = reference::all_cpu(&app, &m);
            let r = run_workload(None, &app, &d, &m, &small()).unwrap();
            assert_eq!(r.iter_s.len(), 2, "{name}");
            assert!(r.max_difference.unwrap() <= TOLERANCE);
            assert!(!r.used_gpu);
            let o = outcome(&r, small().scale, Some(0.5));
            assert!(o.status.is_ok());
            assert!(o.raw_output.contains("ELAPSED TIME ="), "{}", o.raw_output);
            assert!(o.raw_output.contains("[mapwright cuda]"));
            assert!(crate::backend::classify_output(&o.raw_output).is_none());
            assert!(!o.metrics.proc_busy_s.is_empty());
            assert!(o.metrics.memory_bytes.contains_key("node0 SYSMEM0"));
        }
    }

    #[test]
    fn gpu_decisions_without_a_device_say_so() {
        let m = Machine::preset("h200").unwrap();
        let app = App::builtin("stencil").unwrap();
        let d = reference::default_gpu(&app, &m);
        let e = run_workload(None, &app, &d, &m, &small()).unwrap_err();
        assert!(
            e.to_string().starts_with("no CUDA driver/GPU found: "),
            "{e}"
        );
        let o = failure(&e);
        assert_eq!(o.status.as_str(), "no_device");
    }

    #[test]
    fn fractions_parse_and_print() {
        assert_eq!(parse_fraction("1/16"), Some(0.0625));
        assert_eq!(parse_fraction("0.5"), Some(0.5));
        assert_eq!(parse_fraction("2"), None);
        assert_eq!(parse_fraction("x"), None);
        assert_eq!(fraction_text(1.0 / 64.0), "1/64");
        assert_eq!(fraction_text(0.3), "0.3");
    }

    #[test]
    fn the_distal_output_prints_each_iteration() {
        let m = Measured {
            app: App::builtin("cannon").unwrap(),
            workload: Workload::Gemm {
                algo: plan::GemmAlgo::Cannon,
                n: 8,
                grid: [2, 2, 2],
                three_d: false,
            },
            iter_s: vec![0.002, 0.003],
            warmup_s: 0.0,
            warmup: 1,
            flops: 1e9,
            stats: Stats::default(),
            max_difference: Some(0.0),
            used_gpu: true,
        };
        let o = outcome(&m, 1.0 / 64.0, None);
        assert!(o
            .raw_output
            .starts_with("Execution time: 2 ms.\nExecution time: 3 ms.\n"));
        assert_eq!(o.throughput_unit, "GFLOPS per node");
    }
}
