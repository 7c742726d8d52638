//! The server's life beyond `initialize`/`shutdown`/`exit`: ending when the
//! editor is gone even if it never said so.
//!
//! Two signals end the process (see `run_stdio`): the end of standard input
//! (the pipe closes when the editor exits or crashes), raised by the
//! transport, and the death of the process `initialize` named in
//! `processId`, watched here, as the specification asks ("If the parent
//! process is not alive then the server should exit"). Without them an
//! orphaned server lingers, and they pile up.

use std::sync::Arc;
use std::time::Duration;

use super::state::State;

/// How often the parent process is checked.
pub const PARENT_POLL: Duration = Duration::from_secs(1);

/// How long work in flight may finish after standard input ends (a client
/// that writes its last request and closes the pipe still gets answers;
/// a handler awaiting the vanished client's reply is abandoned).
pub const EOF_GRACE: Duration = Duration::from_secs(2);

/// How long diagnostics and commands wait for `initialized` and the first
/// configuration pull before going ahead with the settings they have.
pub const READY_FALLBACK: Duration = Duration::from_secs(10);

/// Polls process `pid` and asks the server to stop once it is gone.
pub async fn watch_parent(pid: u32, state: Arc<State>) {
    loop {
        tokio::time::sleep(PARENT_POLL).await;
        if !process_alive(pid) {
            state.request_stop();
            return;
        }
    }
}

/// Whether process `pid` is running. On Linux, `/proc/PID` exists and the
/// process is not a zombie (a dead parent that nobody reaped yet still has
/// an entry). Elsewhere on Unix, `kill -0 PID`. On other systems the parent
/// is assumed alive (the end of input still ends the server).
pub fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // The state follows the parenthesised command name, which may
            // itself contain `)`: take the last one.
            Ok(stat) => stat
                .rsplit_once(')')
                .map(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
                .unwrap_or(true),
            Err(_) => false,
        }
    } else if cfg!(unix) {
        std::process::Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(true)
    } else {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        assert!(process_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_alive(pid));
    }

    #[test]
    fn a_zombie_is_dead() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not reaped yet: a zombie once it has exited.
        std::thread::sleep(Duration::from_millis(300));
        assert!(!process_alive(pid));
        child.wait().unwrap();
    }
}
