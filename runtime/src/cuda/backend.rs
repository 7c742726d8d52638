//! [`CudaBackend`]: resolves a mapper like the simulator does, checks the
//! decisions for the failures a real run reports before doing any work
//! (with the simulator's checks), then executes them on the GPUs present
//! and reports the measurement in the simulator's format.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use crate::app::App;
use crate::backend::{Backend, Resolver, RunOutcome, RunRequest};
use crate::machine::Machine;
use crate::sim::{default_resolver, simulate};

use super::discover::{host_info, machine_from, Calibration, GpuInfo};
use super::gpu::{gpu_infos, Gpus};
use super::{failure, outcome, plan, run_workload, CudaConfig, CudaError, Measured};

/// The machine description of this machine's GPUs and host (figures from
/// the device attributes; `calibrate` measures them), and the GPUs.
pub fn discover_machine() -> Result<(Machine, Vec<GpuInfo>), CudaError> {
    let gpus = gpu_infos()?;
    let m = machine_from(&gpus, &host_info(), &Calibration::default());
    Ok((m, gpus))
}

/// A run's outcome with what the backend knows beside it.
#[derive(Debug, Clone)]
pub struct CudaRun {
    pub outcome: RunOutcome,
    /// The simulator's time for the same scaled problem on the request's
    /// machine (None when the mapping fails first).
    pub predicted_s: Option<f64>,
    /// The measurement, when the run executed.
    pub measured: Option<Measured>,
}

/// The `cuda` backend. GPUs are opened on the first run and kept.
pub struct CudaBackend {
    resolver: Resolver,
    config: CudaConfig,
    gpus: Mutex<Option<Gpus>>,
}

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBackend")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl CudaBackend {
    pub fn new(resolver: Resolver, config: CudaConfig) -> CudaBackend {
        CudaBackend {
            resolver,
            config,
            gpus: Mutex::new(None),
        }
    }

    /// The crate's own mapping resolution and [`CudaConfig::from_env`].
    pub fn embedded() -> CudaBackend {
        CudaBackend::new(default_resolver(), CudaConfig::from_env())
    }

    pub fn config(&self) -> &CudaConfig {
        &self.config
    }

    /// Opens the GPUs now (so a missing driver is reported before any
    /// run).
    pub fn open(&self) -> Result<(), CudaError> {
        let mut g = self
            .gpus
            .lock()
            .map_err(|_| CudaError::Driver("GPU state poisoned".into()))?;
        if g.is_none() {
            *g = Some(Gpus::open()?);
        }
        Ok(())
    }

    /// Runs one mapper and returns the outcome with the prediction and the
    /// measurement.
    pub fn run_detailed(&self, mapper: &str, app: &App, machine: &Machine, seed: u64) -> CudaRun {
        let resolved = catch_unwind(AssertUnwindSafe(|| (self.resolver)(mapper, app, machine)));
        let Ok(decisions) = resolved else {
            return CudaRun {
                outcome: RunOutcome::failure(
                    "internal_error",
                    "mapwright: mapping resolution failed internally (a bug; please report it)\n",
                ),
                predicted_s: None,
                measured: None,
            };
        };
        // What a real run reports before doing any work: the fatal mapping
        // errors, and the simulator's checks (memory capacity at the real
        // problem size, library layout requirements, InstanceLimit on an
        // index launch).
        let full = simulate(&decisions, app, machine, seed, 0.0);
        if !full.status.is_ok() {
            return CudaRun {
                outcome: full,
                predicted_s: None,
                measured: None,
            };
        }
        let scaled = plan::scale_app(app, self.config.scale);
        let predicted_s = simulate(&decisions, &scaled, machine, seed, 0.0).elapsed_s;
        let mut guard = match self.gpus.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if guard.is_none() {
            match Gpus::open() {
                Ok(g) => *guard = Some(g),
                Err(e) => {
                    return CudaRun {
                        outcome: failure(&e),
                        predicted_s,
                        measured: None,
                    }
                }
            }
        }
        let result = {
            let dev = guard.as_mut().map(|g| g as &mut dyn super::exec::Device);
            super::gpu::guard("running the kernels", || {
                run_workload(dev, app, &decisions, machine, &self.config)
            })
        };
        match result {
            Ok(m) => CudaRun {
                outcome: outcome(&m, self.config.scale, predicted_s),
                predicted_s,
                measured: Some(m),
            },
            Err(e) => {
                // A CUDA error may leave the contexts unusable: reopen next time.
                if matches!(e, CudaError::Driver(_) | CudaError::NoDevice(_)) {
                    *guard = None;
                }
                CudaRun {
                    outcome: failure(&e),
                    predicted_s,
                    measured: None,
                }
            }
        }
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &str {
        "cuda"
    }

    fn run(&self, request: &RunRequest) -> RunOutcome {
        self.run_detailed(
            &request.mapper,
            &request.app,
            &request.machine,
            request.seed,
        )
        .outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs on a GPU when one is present; prints SKIPPED otherwise.
    #[test]
    fn gpu_runs_match_the_reference_or_skip() {
        let (machine, _) = match discover_machine() {
            // The experts assume four GPUs per node.
            Ok((m, g)) => (super::super::discover::with_logical_gpus(&m, 4), g),
            Err(e) => {
                eprintln!("SKIPPED: {e}");
                assert!(e.to_string().starts_with("no CUDA driver/GPU found: "));
                return;
            }
        };
        let b = CudaBackend::new(
            default_resolver(),
            CudaConfig {
                scale: 1.0 / 1024.0,
                warmup: 1,
                iterations: Some(2),
                verify: true,
            },
        );
        for name in App::builtin_names() {
            let app = App::builtin(name).unwrap();
            let mapper = crate::app::expert_mapper_text(name).unwrap();
            let r = b.run_detailed(mapper, &app, &machine, 0);
            assert!(r.outcome.status.is_ok(), "{name}: {}", r.outcome.raw_output);
            eprintln!("{name}: {}", r.outcome.raw_output.trim_end());
        }
    }
}
