//! End-to-end tests live in `tests/tests/`. This library holds what they
//! share:
//! - [`passes`]: one mapper text through every pass a user can reach
//!   (check, the rendered diagnostics, fmt, resolution and `explain`
//!   against every built-in application), with panics caught.

pub mod passes;
