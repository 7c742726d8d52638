//! Executors: run a resolved candidate on a backend. The simulator is the
//! embedded default; the command backend runs the user's real program.

use std::sync::Arc;

use mapwright_runtime::app::App;
use mapwright_runtime::backend::{Backend, RunOutcome, RunRequest};
use mapwright_runtime::decisions::Decisions;
use mapwright_runtime::machine::Machine;

use super::runner::Execute;

/// The user's real program as a backend: `template` runs one candidate
/// (`{mapper}` its path), in `workdir` (the project's folder; `None`: the
/// current one), killed after `timeout_s`; `elapsed`/`throughput` are extra
/// output prefixes tried before the benchmark programs' own.
pub fn command_backend(
    template: &str,
    workdir: Option<std::path::PathBuf>,
    timeout_s: Option<f64>,
    elapsed: &[String],
    throughput: &[String],
) -> Result<mapwright_runtime::backend::command::CommandBackend, String> {
    use mapwright_runtime::backend::command::{CommandBackend, CommandConfig, Pattern};
    if template.trim().is_empty() {
        return Err("the command template is empty".into());
    }
    if !template.contains("{mapper}") {
        return Err(
            "the command template must contain {mapper} (the candidate mapper's path)".into(),
        );
    }
    let mut config = CommandConfig::new(template);
    config.workdir = workdir;
    if let Some(t) = timeout_s {
        if !(t.is_finite() && t > 0.0) {
            return Err("the timeout must be a positive number of seconds".into());
        }
        config.timeout = std::time::Duration::from_secs_f64(t);
    }
    for (i, p) in elapsed.iter().enumerate() {
        config.elapsed.insert(i, Pattern::time(p.clone()));
    }
    for (i, p) in throughput.iter().enumerate() {
        config.throughput.insert(i, Pattern::rate(p.clone(), ""));
    }
    Ok(CommandBackend::new(config))
}

/// The built-in benchmarks on real Legion with mapwright's Legion mapper:
/// `cpus` and `gpus` Legion processors, runs killed after `timeout_s`.
/// Finds (or builds) the programs; the error says how to get them.
pub fn legion_backend(
    cpus: u32,
    gpus: u32,
    timeout_s: Option<f64>,
) -> Result<mapwright_runtime::backend::legion::LegionBackend, String> {
    use mapwright_runtime::backend::legion::{LegionBackend, LegionConfig};
    // The first use fetches Legion and builds the mapper and the programs
    // (a minute or two): say so as it goes. The language server's stderr
    // is its log; it shows set-up as progress itself (legion_setup).
    let mut config = LegionConfig::locate_with_progress(cpus, gpus, &mut |step| {
        eprintln!("mapwright: {step}");
    })?;
    if let Some(t) = timeout_s {
        if !(t.is_finite() && t > 0.0) {
            return Err("the timeout must be a positive number of seconds".into());
        }
        config.timeout = std::time::Duration::from_secs_f64(t);
    }
    Ok(LegionBackend::new(config))
}

/// Environment variable holding the bearer token of a remote `mapwright serve`.
pub const SERVICE_TOKEN_ENV: &str = "MAPWRIGHT_TOKEN";

/// A client of the `mapwright serve` at `url`, with the token from
/// [`SERVICE_TOKEN_ENV`] if set.
pub fn remote_backend(
    url: &str,
) -> Result<mapwright_runtime::service::client::RemoteBackend, String> {
    let token = std::env::var(SERVICE_TOKEN_ENV)
        .ok()
        .filter(|t| !t.is_empty());
    mapwright_runtime::service::client::RemoteBackend::new(url, token).map_err(|e| e.to_string())
}

/// The embedded simulator, run on the decisions the runner resolved.
pub struct SimExecutor {
    pub app: Arc<App>,
    pub machine: Arc<Machine>,
    /// Relative measurement noise (0 = deterministic).
    pub noise: f64,
}

impl Execute for SimExecutor {
    fn execute(&self, _source: &str, decisions: &Decisions, seed: u64) -> RunOutcome {
        mapwright_runtime::sim::simulate(decisions, &self.app, &self.machine, seed, self.noise)
    }

    /// The model is deterministic unless noise was asked for.
    fn measures(&self) -> bool {
        self.noise > 0.0
    }
}

/// Any backend that takes the mapper text (the command backend, a remote
/// `mapwright serve`).
pub struct BackendExecutor {
    pub backend: Box<dyn Backend>,
    pub app: Arc<App>,
    pub machine: Arc<Machine>,
    /// Stops a run under way when set (the editor's cancel): a program's
    /// process group is killed.
    pub cancel: Option<Arc<std::sync::atomic::AtomicBool>>,
}

impl Execute for BackendExecutor {
    fn execute(&self, source: &str, _decisions: &Decisions, seed: u64) -> RunOutcome {
        let mut request = RunRequest::new(source, self.app.clone(), self.machine.clone());
        request.seed = seed;
        request.cancel = self.cancel.clone();
        self.backend.run(&request)
    }
}
