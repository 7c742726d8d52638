//! Running the real `mapwright` binary from a test, in a folder of its own.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// An empty folder for one test (`prefix-name-pid` under the temp dir),
/// removed when the test ends, passed or failed.
pub fn temp_dir(prefix: &str, name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// A folder [`temp_dir`] made; removed when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TempDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
