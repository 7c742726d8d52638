//! End-to-end tests live in `tests/tests/`. This library holds what they
//! share with the `fuzz` command:
//! - [`passes`]: one mapper text through every pass a user can reach
//!   (check, the rendered diagnostics, fmt, resolution and `explain`
//!   against every built-in application), with panics caught.
//! - [`fuzz`]: a coverage-free mutation fuzzer over the shared corpus that
//!   runs on the stable toolchain.

pub mod fuzz;
pub mod passes;
