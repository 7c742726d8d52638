//! Running the real `mapwright` binary from a test, in a folder of its own.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

// (Not every test binary that includes this module makes a folder.)
#[allow(unused_imports)]
pub use mapwright::testing::{temp_dir, TempDir};

/// Runs `mapwright ARGS` in `cwd`: (success, stdout, stderr).
pub fn mapwright(args: &[&str], cwd: &Path) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run mapwright");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
