//! The user's cache folder for what mapwright writes once and reads again:
//! the expert mapper files `mapwright apps` points at, the documentation
//! pages diagnostics link to, and the text `explain` shows for a document
//! that has no folder of its own.
//!
//! Why not the system temporary directory: it is shared by every user, so
//! a fixed name there (`/tmp/mapwright-0.1.0`) can be made first, and
//! filled, by someone else; and it is where tests must leave nothing.

use std::path::PathBuf;

/// `$XDG_CACHE_HOME/mapwright` (an absolute path only, as the XDG
/// specification asks), else `~/.cache/mapwright`, else the system
/// temporary directory's `mapwright-<user id>` where there is no home.
pub fn dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .map(|base| base.join("mapwright"))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("mapwright-{}", user_id())))
}

/// The user's id, to keep users apart in the shared temporary directory.
fn user_id() -> String {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m).to_string())
        .unwrap_or_else(|_| "user".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_the_users_not_the_temporary_directory() {
        let dir = dir();
        assert!(dir.ends_with("mapwright") || dir.starts_with(std::env::temp_dir()));
        if std::env::var_os("HOME").is_some_and(|h| !h.is_empty()) {
            assert!(!dir.starts_with(std::env::temp_dir()), "{}", dir.display());
        }
    }
}
