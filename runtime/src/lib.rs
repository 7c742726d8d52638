//! mapwright-runtime: what a mapper does when it runs.
//!
//! Module map:
//! - [`mspace`]   the machine-model (MSpace) transformations of the reference
//!   (`merge`, `split`, `swap`, `slice`, `reverse`, `balance_split`,
//!   `auto_split`, `greedy_split`), as pure functions over extents.
//! - [`machine`]  machine descriptions (serde JSON/TOML) and named presets.
//! - [`app`]      application descriptions and the nine built-in benchmarks.
//! - [`decisions`] concrete mapping decisions (per task: processor kind, memory
//!   and layout per region, processor per launch point) and runtime failures.
//! - [`eval`]     the evaluator of DSL programs and mapping functions, with the
//!   reference's run-time semantics and step/depth limits.
//! - [`import`]   `mapwright app import`: Legion mapper-logging-wrapper logs ->
//!   application + machine descriptions.

pub mod app;
pub mod decisions;
pub mod eval;
pub mod import;
pub mod machine;
pub mod mspace;
