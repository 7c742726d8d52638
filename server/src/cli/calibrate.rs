//! `mapwright calibrate --backend cuda [--out machine.json] [--report
//! report.json] [--quick]`: measures this machine's GPUs and host
//! (bandwidths, GEMM rate, launch overhead) and writes a machine
//! description the simulator can use (`--machine machine.json`).
//!
//! The subcommand is always present; a build without the `cuda` feature
//! says that it needs it and exits 2, as does a machine without a driver or
//! GPU.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

/// What to calibrate with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CalibrateBackend {
    /// Local NVIDIA GPUs through CUDA (needs the `cuda` feature).
    Cuda,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Backend whose machine is measured.
    #[arg(long, value_enum, default_value = "cuda")]
    pub backend: CalibrateBackend,
    /// Where to write the machine description (`.json` or `.toml`);
    /// standard output when absent.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write the measurements and peaks as JSON here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Smaller sizes (seconds instead of tens of seconds).
    #[arg(long)]
    pub quick: bool,
    /// Describe N logical GPUs sharing the physical ones (each with its
    /// share of the rates and memory; the cuda backend gives each its own
    /// stream), for mappers written for more GPUs per node than there are.
    #[arg(long, value_name = "N")]
    pub logical_gpus: Option<u32>,
    /// Measure nothing: describe the machine from the device attributes
    /// alone (datasheet rates), to compare the simulator's predictions
    /// with and without calibration.
    #[arg(long, conflicts_with = "quick")]
    pub uncalibrated: bool,
}

#[cfg(not(feature = "cuda"))]
pub fn run(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    errln!(
        "error: `mapwright calibrate --backend cuda` measures local GPUs and needs a mapwright \
         built with the `cuda` feature (cargo build -p mapwright --features cuda); this build \
         has no CUDA support."
    );
    Ok(ExitCode::from(2))
}

#[cfg(feature = "cuda")]
pub fn run(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    let CalibrateBackend::Cuda = args.backend;
    let measured = if args.uncalibrated {
        mapwright_runtime::cuda::calibrate::describe()
    } else {
        mapwright_runtime::cuda::calibrate::calibrate(args.quick)
    };
    let mut report = match measured {
        Ok(r) => r,
        Err(e) => {
            errln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if let Some(n) = args.logical_gpus {
        report.machine = mapwright_runtime::cuda::discover::with_logical_gpus(&report.machine, n);
    }
    let toml = args
        .out
        .as_ref()
        .and_then(|p| p.extension())
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    let text = if toml {
        report.machine.to_toml()?
    } else {
        format!("{}\n", report.machine.to_json_pretty()?)
    };
    match &args.out {
        Some(p) => std::fs::write(p, &text).with_context(|| format!("writing {}", p.display()))?,
        None => out!("{text}")?,
    }
    if let Some(p) = &args.report {
        std::fs::write(p, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("writing {}", p.display()))?;
    }
    errln!("{}", report.summary().trim_end());
    if let Some(p) = &args.out {
        errln!("machine description written to {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}
