//! What the workspace's tests share: a temporary folder removed however the
//! test that made it ends. Here, in the library every test crate already
//! uses, so that the server's unit tests, its integration tests and the
//! end-to-end tests (`tests/`) keep one guard, not one each.

use std::path::{Path, PathBuf};

/// An empty folder `PREFIX-NAME-PID` under the temporary directory (made
/// afresh), removed when the returned guard is dropped.
pub fn temp_dir(prefix: &str, name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("{prefix}-{name}-{}", std::process::id()));
    TempDir::fresh(dir, false)
}

/// An empty folder `GROUP-PID/NAME` under the temporary directory (made
/// afresh); the guard removes it, and the `GROUP-PID` folder too once no
/// other test's folder is left in it.
pub fn temp_dir_in(group: &str, name: &str) -> TempDir {
    let dir = std::env::temp_dir()
        .join(format!("{group}-{}", std::process::id()))
        .join(name);
    TempDir::fresh(dir, true)
}

/// A folder [`temp_dir`] or [`temp_dir_in`] made; removed when dropped.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
    /// Whether its parent is a group folder to remove once empty.
    in_group: bool,
}

impl TempDir {
    fn fresh(path: PathBuf, in_group: bool) -> TempDir {
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("cannot make {}: {e}", path.display()));
        TempDir { path, in_group }
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for TempDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        if self.in_group {
            if let Some(group) = self.path.parent() {
                // Fails while another test's folder is still in it.
                let _ = std::fs::remove_dir(group);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_go_when_their_guard_does() {
        let flat = temp_dir("mapwright-testing", "flat");
        let a = temp_dir_in("mapwright-testing-group", "a");
        let b = temp_dir_in("mapwright-testing-group", "b");
        let (flat_path, a_path) = (flat.to_path_buf(), a.to_path_buf());
        let group = a_path.parent().unwrap().to_path_buf();
        assert!(flat_path.is_dir() && a_path.is_dir() && b.is_dir());
        drop(flat);
        drop(a);
        assert!(!flat_path.exists() && !a_path.exists());
        assert!(group.is_dir(), "b is still in the group");
        drop(b);
        assert!(!group.exists());
    }
}
