//! The client of `mapwright serve`: a [`Backend`] that sends each run to a
//! service over HTTP. Built-in applications and preset machines travel by
//! name, anything else as its full description. Transport and service
//! errors become failed outcomes (`service_error`, `service_busy`,
//! `timeout`) with the service's message as raw output, so an optimizer
//! treats them like any other failed run.

use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde_json::{json, Value};

use super::http;
use crate::app::App;
use crate::backend::{Backend, RunOutcome, RunRequest};
use crate::machine::Machine;

/// Where a service is and how to talk to it.
#[derive(Debug, Clone)]
pub struct RemoteBackend {
    /// `host:port` of the service.
    host: String,
    /// Path prefix (empty, or e.g. `/mapwright`).
    prefix: String,
    token: Option<String>,
    /// How long one run may take, end to end.
    pub timeout: Duration,
    /// Largest response accepted.
    pub max_response: usize,
}

/// Why a service URL is not usable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UrlError {
    #[error("only http:// service URLs are supported (put a TLS proxy in front): `{0}`")]
    Scheme(String),
    #[error("the service URL has no host: `{0}`")]
    NoHost(String),
}

impl RemoteBackend {
    /// A client of the service at `url` (`http://host:port[/prefix]`).
    pub fn new(url: &str, token: Option<String>) -> Result<RemoteBackend, UrlError> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| UrlError::Scheme(url.to_string()))?;
        let (host, prefix) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        if host.is_empty() {
            return Err(UrlError::NoHost(url.to_string()));
        }
        let host = if host.contains(':') {
            host.to_string()
        } else {
            format!("{host}:80")
        };
        Ok(RemoteBackend {
            host,
            prefix: prefix.to_string(),
            token,
            timeout: Duration::from_secs(900),
            max_response: 16 << 20,
        })
    }

    /// One exchange: method, path, optional JSON body -> (status, body).
    pub fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> std::io::Result<(u16, Vec<u8>)> {
        let addr = self
            .host
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no address"))?;
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
        stream.set_read_timeout(Some(self.timeout))?;
        stream.set_write_timeout(Some(Duration::from_secs(30)))?;
        let body = body.unwrap_or("");
        let mut head = format!(
            "{method} {}{path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            self.prefix,
            self.host,
            body.len()
        );
        if let Some(t) = &self.token {
            head.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        stream.write_all(body.as_bytes())?;
        stream.flush()?;
        let r = http::read_response(&stream, self.max_response)?;
        Ok((r.status, r.body))
    }

    /// The machine the service runs on (`GET /v1/machine`): what a client
    /// describes its runs with when the user names none, since a service
    /// with its own machine (a real program, real Legion) refuses others.
    pub fn machine(&self) -> Result<Machine, String> {
        let (status, bytes) = self
            .call("GET", "/v1/machine", None)
            .map_err(|e| format!("cannot reach the runtime service at {}: {e}", self.host))?;
        if status != 200 {
            return Err(format!(
                "the runtime service answered {status} to GET /v1/machine"
            ));
        }
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| format!("the runtime service sent malformed JSON: {e}"))?;
        serde_json::from_value(v["machine"].clone())
            .map_err(|e| format!("the runtime service described no machine: {e}"))
    }

    /// The request body for `request`.
    fn body(request: &RunRequest) -> Value {
        let app = if App::builtin(&request.app.name).as_ref() == Some(&*request.app) {
            json!(request.app.name)
        } else {
            serde_json::to_value(&*request.app).unwrap_or(Value::Null)
        };
        let machine = if Machine::preset(&request.machine.name).as_ref() == Some(&*request.machine)
        {
            json!(request.machine.name)
        } else {
            serde_json::to_value(&*request.machine).unwrap_or(Value::Null)
        };
        json!({
            "mapper": request.mapper,
            "app": app,
            "machine": machine,
            "seed": request.seed,
            "noise": request.noise,
        })
    }
}

impl Backend for RemoteBackend {
    fn name(&self) -> &str {
        "remote"
    }

    fn run(&self, request: &RunRequest) -> RunOutcome {
        let body = Self::body(request).to_string();
        let (status, bytes) = match self.call("POST", "/v1/run", Some(&body)) {
            Ok(r) => r,
            Err(e) => {
                return RunOutcome::failure(
                    "service_error",
                    format!(
                        "mapwright: cannot reach the runtime service at {}: {e}\n",
                        self.host
                    ),
                )
            }
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if status == 200 {
            return serde_json::from_str(&text).unwrap_or_else(|e| {
                RunOutcome::failure(
                    "service_error",
                    format!("mapwright: the runtime service answered with an unreadable outcome ({e})\n"),
                )
            });
        }
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
            .unwrap_or(text);
        let kind = match status {
            429 => "service_busy",
            503 if message.contains("did not finish") => "timeout",
            _ => "service_error",
        };
        RunOutcome::failure(
            kind,
            format!("mapwright: the runtime service answered {status}: {message}\n"),
        )
    }
}
