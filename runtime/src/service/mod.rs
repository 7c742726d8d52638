//! The runtime service (`mapwright serve`): one [`Backend`] behind HTTP and
//! JSON, and the client the optimizer and the language server use to reach
//! it ([`client::RemoteBackend`]).
//!
//! Endpoints:
//! - `GET /healthz` -> `{"status":"ok","backend":...}` (no token needed).
//! - `GET /v1/apps` -> the built-in applications and their tasks.
//! - `GET /v1/machine` -> the service's machine description and the presets.
//! - `POST /v1/run` with `{"mapper": TEXT, "app": NAME | DESCRIPTION,
//!   "machine": NAME | DESCRIPTION (optional), "seed": N, "noise": X}` ->
//!   the [`crate::backend::RunOutcome`] as JSON.
//!
//! Safety: the service binds 127.0.0.1 unless told otherwise, and refuses
//! any other address without a bearer token (checked on every `/v1/`
//! request). A client can never choose the command that runs: the backend,
//! and for the command backend its template, are fixed when the service
//! starts; a client's machine is accepted only where the configuration
//! allows it (the simulator), never for a real program. Limits: request
//! heads of 16 KiB, bodies of `max_body` bytes, one deadline for reading
//! a whole request (slowloris clients are cut off), a bounded number of open connections (503 beyond), a worker
//! pool with a bounded queue (429 with `Retry-After` when full), and a
//! per-run timeout (503). A run that times out keeps its worker until the
//! backend returns (the command backend kills its program at its own
//! timeout, which should be shorter).

pub mod client;
pub mod http;

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::app::{App, Launch};
use crate::backend::{Backend, RunOutcome, RunRequest};
use crate::machine::Machine;

/// How the service runs.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Address to bind (default 127.0.0.1:7878; port 0 picks one).
    pub bind: SocketAddr,
    /// Bearer token required on `/v1/` requests. Mandatory for a
    /// non-loopback bind.
    pub token: Option<String>,
    /// The machine runs use unless the request names one.
    pub machine: Machine,
    /// Whether a request may name or describe its own machine (true for the
    /// simulator; false for a real program on real hardware).
    pub allow_machine: bool,
    /// Worker threads running the backend.
    pub workers: usize,
    /// Requests waiting for a worker before new ones get 429.
    pub queue: usize,
    /// Largest request body, bytes.
    pub max_body: usize,
    /// Longest a request waits for its run (queueing included).
    pub run_timeout: Duration,
    /// Longest a connection may take to send its whole request (one
    /// deadline, so a client sending a byte at a time is cut off too).
    pub read_timeout: Duration,
    /// Most connections open at once (503 beyond).
    pub max_connections: usize,
}

impl ServiceConfig {
    /// Loopback, no token, the given machine, 2 workers, 64 queued, 1 MiB
    /// bodies, 10-minute runs.
    pub fn new(machine: Machine) -> ServiceConfig {
        ServiceConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 7878)),
            token: None,
            machine,
            allow_machine: true,
            workers: 2,
            queue: 64,
            max_body: 1 << 20,
            run_timeout: Duration::from_secs(600),
            read_timeout: Duration::from_secs(10),
            max_connections: 256,
        }
    }
}

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error(
        "refusing to bind {0} without a token: only loopback addresses may be served without \
         authentication"
    )]
    TokenRequired(SocketAddr),
    #[error("the token must not be empty")]
    EmptyToken,
    #[error("cannot bind {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// A job for the worker pool.
struct Job {
    request: RunRequest,
    reply: mpsc::Sender<RunOutcome>,
}

/// A running service.
pub struct Service {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Service {
    /// Binds and starts serving `backend` in background threads.
    pub fn start(
        config: ServiceConfig,
        backend: Arc<dyn Backend>,
    ) -> Result<Service, ServiceError> {
        if config.token.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(ServiceError::EmptyToken);
        }
        if !config.bind.ip().is_loopback() && config.token.is_none() {
            return Err(ServiceError::TokenRequired(config.bind));
        }
        let listener = TcpListener::bind(config.bind).map_err(|source| ServiceError::Bind {
            addr: config.bind,
            source,
        })?;
        let addr = listener.local_addr().map_err(|source| ServiceError::Bind {
            addr: config.bind,
            source,
        })?;
        let (tx, rx) = mpsc::sync_channel::<Job>(config.queue.max(1));
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..config.workers.max(1) {
            let rx = rx.clone();
            let backend = backend.clone();
            std::thread::spawn(move || worker(rx, backend));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            config,
            backend_name: backend.name().to_string(),
            jobs: tx,
            open: AtomicUsize::new(0),
        });
        let stop2 = stop.clone();
        let accept = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let shared = shared.clone();
                if shared.open.fetch_add(1, Ordering::SeqCst) >= shared.config.max_connections {
                    shared.open.fetch_sub(1, Ordering::SeqCst);
                    let _ = http::write_json(
                        &stream,
                        503,
                        &error_json("too many connections"),
                        &[("Retry-After", "1".into())],
                    );
                    continue;
                }
                std::thread::spawn(move || {
                    handle(&shared, stream);
                    shared.open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        Ok(Service {
            addr,
            stop,
            accept: Some(accept),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting connections (requests in flight finish).
    pub fn shutdown(mut self) {
        self.stop_accepting();
    }

    /// Blocks until the service stops (for `mapwright serve`).
    pub fn wait(mut self) {
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }

    fn stop_accepting(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(self.addr);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if self.accept.is_some() {
            self.stop_accepting();
        }
    }
}

struct Shared {
    config: ServiceConfig,
    backend_name: String,
    jobs: SyncSender<Job>,
    open: AtomicUsize,
}

fn worker(rx: Arc<Mutex<Receiver<Job>>>, backend: Arc<dyn Backend>) {
    loop {
        let job = {
            let Ok(guard) = rx.lock() else { return };
            match guard.recv() {
                Ok(j) => j,
                Err(_) => return,
            }
        };
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| backend.run(&job.request)))
                .unwrap_or_else(|_| {
                    RunOutcome::failure("internal_error", "the backend failed internally\n")
                });
        let _ = job.reply.send(outcome);
    }
}

fn error_json(message: &str) -> String {
    json!({ "error": message }).to_string()
}

/// Constant-time comparison, so the token cannot be guessed byte by byte
/// from response times.
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn handle(shared: &Shared, stream: TcpStream) {
    let _ = stream.set_write_timeout(Some(shared.config.read_timeout));
    // One deadline for the whole request, not per read: see `http::Deadline`.
    let reader = http::Deadline::new(&stream, shared.config.read_timeout);
    let (status, body, extra) = match http::read_request(reader, shared.config.max_body) {
        Ok(req) => route(shared, &req),
        Err(e) => (e.status, error_json(&e.message), Vec::new()),
    };
    let _ = http::write_json(&stream, status, &body, &extra);
    let _ = (&stream).flush();
}

type Answer = (u16, String, Vec<(&'static str, String)>);

fn route(shared: &Shared, req: &http::Request) -> Answer {
    let cfg = &shared.config;
    if req.path == "/healthz" {
        return match req.method.as_str() {
            "GET" => (
                200,
                json!({"status": "ok", "backend": shared.backend_name}).to_string(),
                Vec::new(),
            ),
            _ => (405, error_json("use GET"), vec![("Allow", "GET".into())]),
        };
    }
    if let Some(token) = &cfg.token {
        let given = req
            .header("authorization")
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        if !given.is_some_and(|g| same(g, token)) {
            return (
                401,
                error_json("missing or wrong bearer token"),
                vec![("WWW-Authenticate", "Bearer".into())],
            );
        }
    }
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/v1/apps") => (200, apps_json().to_string(), Vec::new()),
        ("GET", "/v1/machine") => (
            200,
            json!({
                "machine": cfg.machine,
                "presets": Machine::preset_names(),
                "custom_machines": cfg.allow_machine,
                "backend": shared.backend_name,
            })
            .to_string(),
            Vec::new(),
        ),
        ("POST", "/v1/run") => run(shared, &req.body),
        (_, "/v1/apps" | "/v1/machine") => {
            (405, error_json("use GET"), vec![("Allow", "GET".into())])
        }
        (_, "/v1/run") => (405, error_json("use POST"), vec![("Allow", "POST".into())]),
        _ => (404, error_json("no such endpoint"), Vec::new()),
    }
}

fn apps_json() -> Value {
    let apps: Vec<Value> = App::builtin_names()
        .iter()
        .filter_map(|n| App::builtin(n))
        .map(|a| {
            json!({
                "name": a.name,
                "description": a.description,
                "expert_mapper": a.expert_mapper,
                "tasks": a.tasks.iter().map(|t| json!({
                    "name": t.name,
                    "launch": if t.launch == Launch::Index { "index" } else { "single" },
                    "domain": t.domain,
                    "variants": t.variants,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Value::Array(apps)
}

/// The body of `POST /v1/run`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunBody {
    mapper: String,
    app: Value,
    #[serde(default)]
    machine: Option<Value>,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    noise: f64,
}

fn bad(message: impl Into<String>) -> Answer {
    (400, error_json(&message.into()), Vec::new())
}

fn run(shared: &Shared, body: &[u8]) -> Answer {
    let cfg = &shared.config;
    let body: RunBody = match serde_json::from_slice(body) {
        Ok(b) => b,
        Err(e) => return bad(format!("malformed run request: {e}")),
    };
    let app = match &body.app {
        Value::String(name) => match App::builtin(name) {
            Some(a) => a,
            None => return bad(format!("unknown application `{name}`")),
        },
        v @ Value::Object(_) => match App::from_json_str(&v.to_string()) {
            Ok(a) => a,
            Err(e) => return bad(e.to_string()),
        },
        _ => return bad("`app` must be a built-in name or an application description"),
    };
    let machine = match &body.machine {
        None => cfg.machine.clone(),
        Some(Value::String(n)) if *n == cfg.machine.name => cfg.machine.clone(),
        // The service's own machine sent whole (what a client gets from
        // GET /v1/machine) is its machine, not a choice of another.
        Some(v @ Value::Object(_))
            if Machine::from_json_str(&v.to_string()).is_ok_and(|m| m == cfg.machine) =>
        {
            cfg.machine.clone()
        }
        Some(_) if !cfg.allow_machine => {
            return bad(format!(
                "this service runs on its own machine (`{}`); requests cannot choose another",
                cfg.machine.name
            ))
        }
        Some(Value::String(n)) => match Machine::preset(n) {
            Some(m) => m,
            None => return bad(format!("unknown machine preset `{n}`")),
        },
        Some(v @ Value::Object(_)) => match Machine::from_json_str(&v.to_string()) {
            Ok(m) => m,
            Err(e) => return bad(e.to_string()),
        },
        Some(_) => return bad("`machine` must be a preset name or a machine description"),
    };
    if !(body.noise.is_finite() && body.noise >= 0.0) {
        return bad("`noise` must be a non-negative number");
    }
    let mut request = RunRequest::new(body.mapper, Arc::new(app), Arc::new(machine));
    request.seed = body.seed;
    request.noise = body.noise;
    let (tx, rx) = mpsc::channel();
    match shared.jobs.try_send(Job { request, reply: tx }) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => {
            return (
                429,
                error_json("the run queue is full; retry later"),
                vec![("Retry-After", "1".into())],
            )
        }
        Err(TrySendError::Disconnected(_)) => {
            return (503, error_json("the service is shutting down"), Vec::new())
        }
    }
    match rx.recv_timeout(cfg.run_timeout) {
        Ok(outcome) => match serde_json::to_string(&outcome) {
            Ok(s) => (200, s, Vec::new()),
            Err(e) => (500, error_json(&format!("cannot encode the outcome: {e}")), Vec::new()),
        },
        Err(_) => (
            503,
            json!({
                "error": format!("the run did not finish within {:.1} s", cfg.run_timeout.as_secs_f64()),
                "status": "timeout",
            })
            .to_string(),
            Vec::new(),
        ),
    }
}

#[cfg(test)]
mod tests;
