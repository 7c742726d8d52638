//! The backend options `run` and `optimize` share: which runtime runs a
//! mapper (the embedded simulator, the user's real program, a remote
//! `mapwright serve`, local GPUs) and how to read a real program's output.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail};
use clap::{Args, ValueEnum};
use mapwright_runtime::app::App;
use mapwright_runtime::backend::command::{CommandBackend, CommandConfig, Pattern};
use mapwright_runtime::backend::Backend;
use mapwright_runtime::machine::Machine;
use mapwright_runtime::service::client::RemoteBackend;

use crate::optimize::executors::{remote_backend, BackendExecutor, SimExecutor};
use crate::optimize::runner::Execute;
use crate::project::ProjectFile;

/// Which backend runs the mapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendKind {
    /// The embedded simulator (deterministic), or the `mapwright serve` named
    /// by `--runtime` / `runtime` in mapwright.toml.
    Sim,
    /// A real program, from `--command` or `[command]` in mapwright.toml.
    Command,
    /// Real kernels on local GPUs (needs the `cuda` feature).
    Cuda,
}

#[derive(Debug, Clone, Args)]
pub struct BackendArgs {
    /// Backend.
    #[arg(long, value_enum, default_value = "sim")]
    pub backend: BackendKind,
    /// URL of a `mapwright serve` runtime service to run on instead of the
    /// embedded simulator (default: `runtime` in mapwright.toml; `embedded`
    /// for the simulator). Its bearer token is read from MAPWRIGHT_TOKEN.
    #[arg(long)]
    pub runtime: Option<String>,
    /// Command template for `--backend command`: `{mapper}` is the
    /// candidate's path (also `{app}`, `{machine}`, `{seed}`).
    #[arg(long)]
    pub command: Option<String>,
    /// Timeout of one command run, seconds.
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Extra prefix before the elapsed time in a command's output
    /// (repeatable; tried before the built-in ones).
    #[arg(long = "elapsed-prefix")]
    pub elapsed_prefix: Vec<String>,
    /// Extra prefix before the throughput in a command's output (repeatable).
    #[arg(long = "throughput-prefix")]
    pub throughput_prefix: Vec<String>,
}

impl BackendArgs {
    /// The remote service to use, if any: `--runtime`, else the project
    /// file's `runtime` (`embedded`/`sim`/empty mean the simulator).
    pub fn runtime_url(&self, project: Option<&ProjectFile>) -> Option<String> {
        self.runtime
            .clone()
            .or_else(|| project.and_then(|p| p.runtime.clone()))
            .map(|u| u.trim().to_string())
            .filter(|u| !u.is_empty() && u != "embedded" && u != "sim")
    }

    /// A connection to the remote service named by `url`.
    pub fn remote(url: &str) -> anyhow::Result<RemoteBackend> {
        remote_backend(url).map_err(|e| anyhow!("--runtime {url}: {e}"))
    }

    /// The command backend from these options and the project's `[command]`.
    pub fn command_backend(&self, project: Option<&ProjectFile>) -> anyhow::Result<CommandBackend> {
        let section = project.and_then(|p| p.command.as_ref());
        let template = self
            .command
            .clone()
            .or_else(|| section.map(|c| c.template.clone()))
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| {
                anyhow!(
                    "--backend command needs a command template: pass --command 'PROG ... {{mapper}}' \
                     or set [command] template in mapwright.toml"
                )
            })?;
        if !template.contains("{mapper}") {
            bail!("the command template must contain {{mapper}} (the candidate mapper's path)");
        }
        let mut config = CommandConfig::new(template);
        let timeout = self
            .timeout
            .or_else(|| section.and_then(|c| c.timeout_s).map(|s| s as f64));
        if let Some(t) = timeout {
            if !(t.is_finite() && t > 0.0) {
                bail!("--timeout must be a positive number of seconds");
            }
            config.timeout = Duration::from_secs_f64(t);
        }
        for (i, p) in self.elapsed_prefix.iter().enumerate() {
            config.elapsed.insert(i, Pattern::time(p.clone()));
        }
        for (i, p) in self.throughput_prefix.iter().enumerate() {
            config.throughput.insert(i, Pattern::rate(p.clone(), ""));
        }
        Ok(CommandBackend::new(config))
    }

    /// What runs the optimizer's candidates: the simulator on the resolved
    /// decisions, or a backend that takes the mapper text.
    pub fn executor(
        &self,
        project: Option<&ProjectFile>,
        app: &Arc<App>,
        machine: &Arc<Machine>,
        noise: f64,
    ) -> anyhow::Result<Box<dyn Execute>> {
        let backend: Box<dyn Backend> = match (self.backend, self.runtime_url(project)) {
            (BackendKind::Sim, None) => {
                return Ok(Box::new(SimExecutor {
                    app: app.clone(),
                    machine: machine.clone(),
                    noise,
                }))
            }
            (BackendKind::Sim, Some(url)) => Box::new(Self::remote(&url)?),
            (BackendKind::Command, _) => Box::new(self.command_backend(project)?),
            (BackendKind::Cuda, _) => cuda_backend()?,
        };
        Ok(Box::new(BackendExecutor {
            backend,
            app: app.clone(),
            machine: machine.clone(),
        }))
    }
}

#[cfg(feature = "cuda")]
fn cuda_backend() -> anyhow::Result<Box<dyn Backend>> {
    let b = mapwright_runtime::cuda::CudaBackend::embedded();
    b.open().map_err(|e| anyhow!("{e}"))?;
    Ok(Box::new(b))
}

#[cfg(not(feature = "cuda"))]
fn cuda_backend() -> anyhow::Result<Box<dyn Backend>> {
    bail!(
        "the `cuda` backend runs real kernels on local GPUs and needs a mapwright built with \
         the `cuda` feature on a machine with an NVIDIA GPU; this build has no CUDA support. \
         Use `--backend sim` (the default) or `--backend command`."
    )
}
