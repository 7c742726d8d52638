//! End-to-end tests live in `tests/tests/`. This library holds what they
//! share with the `fuzz` command:
//! - [`passes`]: one mapper text through every pass a user can reach
//!   (check, the rendered diagnostics, fmt, resolution and `explain`
//!   against every built-in application), with panics caught.
//! - [`generated`]: big generated mappers with diagnostics of every kind
//!   (the keystroke benchmark's and the incremental-check test's input).
//! - [`fuzz`]: a coverage-free mutation fuzzer over the shared corpus that
//!   runs on the stable toolchain.

pub mod fuzz;
pub mod generated;
pub mod passes;
