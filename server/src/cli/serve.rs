//! `mapwright serve`: exposes a backend over HTTP+JSON (see
//! `mapwright_runtime::service`). Binds 127.0.0.1:7878 by default; any other
//! address needs a token, read from an environment variable (never from the
//! command line, where other users could see it). Clients cannot choose the
//! command: `--backend command` runs the template given here, on this
//! machine only.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use clap::{Args, ValueEnum};
use mapwright_runtime::backend::command::{CommandBackend, CommandConfig};
use mapwright_runtime::backend::Backend;
use mapwright_runtime::service::{Service, ServiceConfig};
use mapwright_runtime::sim::SimBackend;

use crate::project::load_machine;

/// The backend the service exposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ServeBackend {
    /// The embedded simulator.
    Sim,
    /// A real program run from `--command`.
    Command,
    /// The built-in benchmarks on real Legion with mapwright's Legion
    /// mapper, on this machine (docs/legion.md).
    Legion,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub bind: SocketAddr,
    /// Environment variable holding the bearer token (required for a
    /// non-loopback address).
    #[arg(long, default_value = "MAPWRIGHT_TOKEN")]
    pub token_env: String,
    /// Backend.
    #[arg(long, value_enum, default_value = "sim")]
    pub backend: ServeBackend,
    /// Command template for `--backend command` (`{mapper}` = candidate path).
    #[arg(long)]
    pub command: Option<String>,
    /// The machine runs use (preset or description); with `--backend
    /// command` the one the program really runs on. Default: p100x4, or
    /// with `--backend legion` this host as Legion reports it.
    #[arg(long)]
    pub machine: Option<String>,
    #[command(flatten)]
    pub legion: super::backend_args::LegionArgs,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Runs that may wait for a worker before requests get 429.
    #[arg(long, default_value_t = 64)]
    pub queue: usize,
    /// Largest request body, bytes.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_body: usize,
    /// Longest a request waits for its run, seconds.
    #[arg(long, default_value_t = 600.0)]
    pub run_timeout: f64,
    /// Longest a client may take to send its whole request, seconds (one
    /// deadline, so a client trickling a byte at a time is cut off).
    #[arg(long, default_value_t = 10.0)]
    pub read_timeout: f64,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let legion = match args.backend {
        ServeBackend::Legion => Some(args.legion.backend(Some(args.run_timeout * 0.9))?),
        _ => None,
    };
    let machine = match (&args.machine, &legion) {
        (Some(m), _) => load_machine(m, None)?,
        (None, Some(l)) => l
            .host_machine()
            .map_err(|e| anyhow!("--backend legion: {e}"))?,
        (None, None) => load_machine("p100x4", None)?,
    };
    if !(args.run_timeout.is_finite() && args.run_timeout > 0.0) {
        bail!("--run-timeout must be a positive number of seconds");
    }
    if !(args.read_timeout.is_finite() && args.read_timeout > 0.0) {
        bail!("--read-timeout must be a positive number of seconds");
    }
    let token = std::env::var(&args.token_env)
        .ok()
        .filter(|t| !t.is_empty());
    let (backend, allow_machine): (Arc<dyn Backend>, bool) = match args.backend {
        ServeBackend::Sim => (Arc::new(SimBackend::embedded()), true),
        ServeBackend::Command => {
            let template = args
                .command
                .clone()
                .filter(|t| t.contains("{mapper}"))
                .ok_or_else(|| {
                    anyhow!("--backend command needs --command TEMPLATE with {{mapper}}")
                })?;
            let mut config = CommandConfig::new(template);
            // The program's own timeout ends before the request's.
            config.timeout = Duration::from_secs_f64(args.run_timeout * 0.9);
            (Arc::new(CommandBackend::new(config)), false)
        }
        ServeBackend::Legion => match legion {
            // Runs happen on this host: clients cannot pick another machine.
            Some(l) => (Arc::new(l), false),
            None => bail!("--backend legion: the backend was not set up"),
        },
    };
    let mut config = ServiceConfig::new(machine);
    config.bind = args.bind;
    config.token = token;
    config.allow_machine = allow_machine;
    config.workers = args.workers.max(1);
    config.queue = args.queue.max(1);
    config.max_body = args.max_body;
    config.run_timeout = Duration::from_secs_f64(args.run_timeout);
    config.read_timeout = Duration::from_secs_f64(args.read_timeout);
    let machine_name = config.machine.name.clone();
    let authed = config.token.is_some();
    let service = Service::start(config, backend.clone()).context("starting the service")?;
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "mapwright serve: listening on http://{} (backend {}, machine {machine_name}, {})",
            service.addr(),
            backend.name(),
            if authed {
                "bearer token required"
            } else {
                "no token"
            }
        );
        let _ = out.flush();
    }
    service.wait();
    Ok(ExitCode::SUCCESS)
}
