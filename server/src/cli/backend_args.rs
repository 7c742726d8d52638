//! The backend options `run` and `optimize` share: which runtime runs a
//! mapper (the embedded simulator, the user's real program, a remote
//! `mapwright serve`, local GPUs) and how to read a real program's output.

use std::sync::Arc;

use anyhow::{anyhow, bail};
use clap::{Args, ValueEnum};
use mapwright_runtime::app::App;
use mapwright_runtime::backend::command::CommandBackend;
use mapwright_runtime::backend::Backend;
use mapwright_runtime::machine::Machine;
use mapwright_runtime::service::client::RemoteBackend;

use crate::optimize::executors::{
    command_backend, legion_backend, remote_backend, BackendExecutor, SimExecutor,
};
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
    /// The built-in benchmarks as real Legion programs with mapwright's
    /// Legion mapper, on this host (docs/legion.md).
    Legion,
}

/// Where a benchmark (`bench optimize`, `bench sim-validate`) runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchBackend {
    /// The embedded simulator.
    Sim,
    /// The built-in benchmarks' real Legion programs on this host.
    Legion,
    /// The simulator on what `legion` runs: each program's description at
    /// its size, on this host's model with measured rates (a prediction of
    /// the `legion` figures).
    HostModel,
}

/// Where runs happen, once flags and mapwright.toml are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeChoice {
    /// The embedded simulator.
    Embedded,
    /// The user's program (`--command` or `[command]`).
    Command,
    /// A `mapwright serve` at this URL.
    Remote(String),
    /// Local GPUs.
    Cuda,
    /// Real Legion on this host.
    Legion,
}

#[derive(Debug, Clone, Args)]
pub struct BackendArgs {
    /// Backend (default: `runtime` in mapwright.toml, else the embedded
    /// simulator; `sim` names the simulator whatever the file says).
    #[arg(long, value_enum)]
    pub backend: Option<BackendKind>,
    /// URL of a `mapwright serve` runtime service to run on instead of the
    /// embedded simulator (default: `runtime` in mapwright.toml, where
    /// `embedded` means the simulator and `command` the `[command]`
    /// program). Its bearer token is read from MAPWRIGHT_TOKEN.
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
    #[command(flatten)]
    pub legion: LegionArgs,
}

/// The options of real Legion runs (`--backend legion`), one declaration
/// for every command that makes them.
#[derive(Debug, Clone, Args)]
pub struct LegionArgs {
    /// Legion CPU processors for `--backend legion` (`-ll:cpu`; default:
    /// one per core of this machine).
    #[arg(long, default_value_t = mapwright_runtime::backend::legion::default_cpus())]
    pub legion_cpus: u32,
    /// Legion GPU processors for `--backend legion` (`-ll:gpu`; needs a
    /// driver).
    #[arg(long, default_value_t = 0)]
    pub legion_gpus: u32,
    /// Write Legion Prof's logs of every `--backend legion` run under DIR
    /// (`DIR/run-N/prof_*`; `-lg:prof`, docs/legion.md says how to read
    /// them).
    #[arg(long, value_name = "DIR")]
    pub legion_profile: Option<std::path::PathBuf>,
}

impl LegionArgs {
    /// The legion backend these options describe; `timeout`: of one run,
    /// seconds (its own default where None).
    pub fn backend(
        &self,
        timeout: Option<f64>,
    ) -> anyhow::Result<mapwright_runtime::backend::legion::LegionBackend> {
        let mut backend = legion_backend(self.legion_cpus, self.legion_gpus, timeout)
            .map_err(|e| anyhow!("--backend legion: {e}"))?;
        backend.config.profile_dir = self.legion_profile.clone();
        Ok(backend)
    }
}

impl BackendArgs {
    /// A connection to the remote service named by `url`.
    pub fn remote(url: &str) -> anyhow::Result<RemoteBackend> {
        remote_backend(url).map_err(|e| anyhow!("--runtime {url}: {e}"))
    }

    /// The legion backend from these options.
    pub fn legion_backend(
        &self,
    ) -> anyhow::Result<mapwright_runtime::backend::legion::LegionBackend> {
        self.legion.backend(self.timeout)
    }

    /// The machine runs are described with: `machine` as named, except
    /// that unless a machine was named (`named`) the legion backend
    /// describes this host as Legion reports it, and a remote service its
    /// own machine.
    pub fn machine_for(
        &self,
        project: Option<&ProjectFile>,
        named: bool,
        machine: Machine,
    ) -> anyhow::Result<Machine> {
        if named {
            return Ok(machine);
        }
        match self.choice(project)? {
            RuntimeChoice::Legion => self
                .legion_backend()?
                .host_machine()
                .map_err(|e| anyhow!("--backend legion: {e}")),
            // A service runs on its own machine; an unreachable one is
            // reported by the run itself.
            RuntimeChoice::Remote(url) => Ok(Self::remote(&url)?.machine().unwrap_or(machine)),
            _ => Ok(machine),
        }
    }

    /// The application as the chosen backend runs it: on real Legion a
    /// built-in application is its program as built (CPU variants, no
    /// cuBLAS set-up task, the program's own size), so that resolution and
    /// AutoGuide see what runs; anything else unchanged.
    pub fn app_for(&self, project: Option<&ProjectFile>, app: App) -> anyhow::Result<App> {
        if self.choice(project)? != RuntimeChoice::Legion
            || App::builtin(&app.name).as_ref() != Some(&app)
        {
            return Ok(app);
        }
        Ok(mapwright_runtime::validate::real::program_description(&app.name).unwrap_or(app))
    }

    /// The command backend from these options and the project's `[command]`
    /// (run in the project file's folder when the template comes from it).
    pub fn command_backend(&self, project: Option<&ProjectFile>) -> anyhow::Result<CommandBackend> {
        let section = project.and_then(|p| p.command.as_ref());
        let (template, workdir) = match (&self.command, section) {
            (Some(t), _) => (t.clone(), None),
            (None, Some(c)) => (c.template.clone(), project.and_then(|p| p.dir.clone())),
            (None, None) => bail!(
                "--backend command needs a command template: pass --command 'PROG ... {{mapper}}' \
                 or set [command] template in mapwright.toml"
            ),
        };
        let timeout = self
            .timeout
            .or_else(|| section.and_then(|c| c.timeout_s).map(|s| s as f64));
        command_backend(
            &template,
            workdir,
            timeout,
            &self.elapsed_prefix,
            &self.throughput_prefix,
        )
        .map_err(|e| anyhow!("--backend command: {e}"))
    }

    /// Where runs happen: `--backend`, then `--runtime`, then `runtime` in
    /// mapwright.toml, then the embedded simulator. Naming both a backend
    /// and a runtime is an error (one would be silently ignored).
    pub fn choice(&self, project: Option<&ProjectFile>) -> anyhow::Result<RuntimeChoice> {
        if let (Some(kind), Some(url)) = (self.backend, &self.runtime) {
            bail!("--backend {kind:?} and --runtime {url} both say where to run: pass one of them");
        }
        Ok(match self.backend {
            Some(BackendKind::Command) => RuntimeChoice::Command,
            Some(BackendKind::Cuda) => RuntimeChoice::Cuda,
            Some(BackendKind::Legion) => RuntimeChoice::Legion,
            Some(BackendKind::Sim) => RuntimeChoice::Embedded,
            None => {
                let named = self
                    .runtime
                    .clone()
                    .or_else(|| project.and_then(|p| p.runtime.clone()))
                    .map(|u| u.trim().to_string())
                    .unwrap_or_default();
                match named.as_str() {
                    "" | "embedded" | "sim" => RuntimeChoice::Embedded,
                    "command" => RuntimeChoice::Command,
                    "legion" => RuntimeChoice::Legion,
                    _ => RuntimeChoice::Remote(named),
                }
            }
        })
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
        let backend: Box<dyn Backend> = match self.choice(project)? {
            RuntimeChoice::Embedded => {
                return Ok(Box::new(SimExecutor {
                    app: app.clone(),
                    machine: machine.clone(),
                    noise,
                }))
            }
            RuntimeChoice::Remote(url) => Box::new(Self::remote(&url)?),
            RuntimeChoice::Command => Box::new(self.command_backend(project)?),
            RuntimeChoice::Cuda => cuda_backend()?,
            RuntimeChoice::Legion => Box::new(self.legion_backend()?),
        };
        Ok(Box::new(BackendExecutor {
            backend,
            app: app.clone(),
            machine: machine.clone(),
            cancel: None,
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
