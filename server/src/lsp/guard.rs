//! Panic containment: tower-lsp catches no panics, and a panic in any
//! handler future would end the whole server. Every handler runs its
//! synchronous work through [`catch`]; the server turns the error into an
//! error response and a log message and keeps serving.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, turning a panic into `Err(message)`.
///
/// `AssertUnwindSafe` is sound here because the closures only read shared
/// snapshots (`Arc<Analysis>`) or build fresh values; a panic leaves no
/// half-updated shared state behind (document updates swap in a new `Arc`
/// only after the new text is complete).
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "unknown panic payload".to_string()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_errors() {
        assert_eq!(catch(|| 1), Ok(1));
        let r = catch(|| -> i32 { panic!("boom {}", 1) });
        let s = catch(|| -> i32 { panic!("static") });
        assert_eq!(r, Err("boom 1".to_string()));
        assert_eq!(s, Err("static".to_string()));
    }
}
