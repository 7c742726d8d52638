//! A real `mapwright serve` on 127.0.0.1 for the tests, killed when dropped.

#![allow(dead_code)]

use std::io::BufRead;
use std::process::{Child, Command, Stdio};

/// The running service; the process is killed when this is dropped (so a
/// failed assertion leaks no server).
pub struct Service {
    child: Child,
    /// `http://127.0.0.1:PORT`
    pub url: String,
}

impl Service {
    /// Starts `mapwright serve` on a free port, requiring the bearer token
    /// `token` (passed in the environment variable `token_env`).
    pub fn start(token_env: &str, token: &str) -> Service {
        let child = Command::new(env!("CARGO_BIN_EXE_mapwright"))
            .args(["serve", "--bind", "127.0.0.1:0", "--token-env", token_env])
            .env(token_env, token)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mapwright serve");
        // Owned by the guard first, so a failure below still kills it.
        let mut service = Service {
            child,
            url: String::new(),
        };
        let mut line = String::new();
        std::io::BufReader::new(service.child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the address line");
        service.url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .expect("address line")
            .to_string();
        service
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
