//! `mapwright serve` under stress, through the real binary on 127.0.0.1:
//! a load of 1,000 requests 32 at a time, bodies over the size limit,
//! slowloris clients, malformed JSON, and wrong or missing tokens. Figures
//! (requests/s, p99 latency, errors) are printed (`--nocapture`); the
//! README quotes them.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `mapwright serve` on a free loopback port, killed on drop.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(extra: &[&str], token: Option<&str>) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mapwright-under-test"));
        cmd.args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--token-env",
            "MW_STRESS_TOKEN",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
        match token {
            Some(t) => cmd.env("MW_STRESS_TOKEN", t),
            None => cmd.env_remove("MW_STRESS_TOKEN"),
        };
        let mut child = cmd.spawn().expect("mapwright serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Server { child, addr }
    }

    /// Sends raw bytes, returns the status code (0 if the connection ended
    /// without an answer) and the body.
    fn raw(&self, request: &[u8]) -> (u16, String) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let _ = s.write_all(request);
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        status_and_body(&answer)
    }

    fn call(&self, method: &str, path: &str, body: &str, token: Option<&str>) -> (u16, String) {
        let auth = token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.raw(req.as_bytes())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn status_and_body(answer: &str) -> (u16, String) {
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

const RUN: &str = r#"{"mapper": "Task * GPU;", "app": "circuit", "seed": 1}"#;

#[test]
fn a_thousand_requests_32_at_a_time_all_get_answers() {
    let server = Arc::new(Server::start(&["--workers", "2", "--queue", "64"], None));
    let next = Arc::new(AtomicUsize::new(0));
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let errors = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let clients: Vec<_> = (0..32)
        .map(|_| {
            let (server, next) = (server.clone(), next.clone());
            let (latencies, errors) = (latencies.clone(), errors.clone());
            std::thread::spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= 1000 {
                    return;
                }
                let t = Instant::now();
                // Half runs, half cheap reads: the load mixes both.
                let (status, body) = if i % 2 == 0 {
                    server.call("POST", "/v1/run", RUN, None)
                } else {
                    server.call("GET", "/v1/machine", "", None)
                };
                latencies.lock().unwrap().push(t.elapsed());
                if status != 200 {
                    errors.lock().unwrap().push(format!("{status} {body}"));
                }
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    let wall = started.elapsed();
    let mut l = latencies.lock().unwrap().clone();
    l.sort();
    let p99 = l[l.len() * 99 / 100 - 1];
    let errors = errors.lock().unwrap();
    eprintln!(
        "serve load: 1000 requests (500 runs, 500 reads), 32 at a time: {:.0} requests/s, p50 {:.1} ms, p99 {:.1} ms, {} errors",
        1000.0 / wall.as_secs_f64(),
        l[l.len() / 2].as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        errors.len()
    );
    assert_eq!(l.len(), 1000);
    assert!(
        errors.is_empty(),
        "{} errors, first: {:?}",
        errors.len(),
        errors.first()
    );
}

#[test]
fn bodies_over_the_limit_are_refused() {
    let server = Server::start(&["--max-body", "4096"], None);
    // Announced too large: refused before reading it.
    let (status, _) =
        server.raw(b"POST /v1/run HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n{}");
    assert_eq!(status, 413);
    // Really sent too large.
    let big = format!(
        r#"{{"mapper": "{}", "app": "circuit"}}"#,
        "x".repeat(10_000)
    );
    let (status, body) = server.call("POST", "/v1/run", &big, None);
    assert_eq!(status, 413, "{body}");
    // The server still answers.
    assert_eq!(server.call("POST", "/v1/run", RUN, None).0, 200);
}

#[test]
fn a_slowloris_client_is_cut_off_at_the_read_deadline() {
    let server = Server::start(&["--read-timeout", "2"], None);
    let mut slow = TcpStream::connect(&server.addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let start = Instant::now();
    let head = format!(
        "POST /v1/run HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        RUN.len()
    );
    let mut answer = Vec::new();
    // One byte a second, as long as the server keeps the connection.
    for b in head.bytes().chain(RUN.bytes()) {
        if slow.write_all(&[b]).is_err() {
            break;
        }
        let mut buf = [0u8; 512];
        match slow.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                break;
            }
            Err(_) => {}
        }
        assert!(start.elapsed() < Duration::from_secs(20), "still held");
        std::thread::sleep(Duration::from_millis(950));
    }
    let held = start.elapsed();
    let (status, _) = status_and_body(&String::from_utf8_lossy(&answer));
    eprintln!(
        "slowloris: cut off after {:.1} s with status {status}",
        held.as_secs_f64()
    );
    assert!(held < Duration::from_secs(6), "held for {held:?}");
    assert_eq!(status, 408);
    // Others were served meanwhile and after.
    assert_eq!(server.call("GET", "/healthz", "", None).0, 200);
}

#[test]
fn malformed_json_and_requests_get_400() {
    let server = Server::start(&[], None);
    for body in [
        "{",
        "null",
        "[1,2]",
        r#"{"mapper": 5}"#,
        "\u{0}\u{1}garbage",
    ] {
        let (status, answer) = server.call("POST", "/v1/run", body, None);
        assert_eq!(status, 400, "{body:?}: {answer}");
        assert!(answer.contains("error"), "{answer}");
    }
    assert_eq!(server.raw(b"GARBAGE\r\n\r\n").0, 400);
    assert_eq!(server.call("POST", "/v1/run", RUN, None).0, 200);
}

#[test]
fn a_wrong_or_missing_token_gets_401_when_a_token_is_set() {
    let server = Server::start(&[], Some("s3cret"));
    assert_eq!(server.call("POST", "/v1/run", RUN, None).0, 401);
    assert_eq!(server.call("POST", "/v1/run", RUN, Some("wrong")).0, 401);
    assert_eq!(server.call("GET", "/v1/apps", "", Some("s3cre")).0, 401);
    assert_eq!(server.call("POST", "/v1/run", RUN, Some("s3cret")).0, 200);
    // Health needs no token.
    assert_eq!(server.call("GET", "/healthz", "", None).0, 200);
}

/// A command backend whose program hangs, floods its output or dies by a
/// signal: each request still gets its answer, at the program's timeout.
#[test]
fn command_programs_that_hang_flood_or_die_are_stopped() {
    let dir = std::env::temp_dir().join(format!("mw-serve-stress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, body, expected) in [
        ("hang.sh", "sleep 60\n", "timeout"),
        ("flood.sh", "yes flood\n", "timeout"),
        ("die.sh", "kill -KILL $$\n", "error"),
    ] {
        let prog = dir.join(name);
        std::fs::write(&prog, format!("#!/bin/sh\n{body}")).unwrap();
        let template = format!("sh {} {{mapper}}", prog.display());
        let server = Server::start(
            &[
                "--backend",
                "command",
                "--command",
                &template,
                "--run-timeout",
                "3",
            ],
            None,
        );
        let t0 = Instant::now();
        let (status, body) = server.call("POST", "/v1/run", RUN, None);
        let took = t0.elapsed();
        assert!(took < Duration::from_secs(10), "{name}: {took:?}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let outcome = v["status"].as_str().unwrap_or("");
        eprintln!(
            "command {name}: HTTP {status}, run status {outcome}, after {:.1} s",
            took.as_secs_f64()
        );
        assert_eq!((status, outcome), (200, expected), "{name}: {body}");
        // The command backend keeps at most 1 MiB of a program's output.
        let output = v["raw_output"].as_str().unwrap_or("");
        assert!(
            output.len() <= (1 << 20) + 200,
            "{name}: output not capped ({} bytes)",
            output.len()
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
