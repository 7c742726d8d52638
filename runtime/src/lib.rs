//! mapwright-runtime: what a mapper does when it runs.
//!
//! Module map:
//! - [`eval`]     the evaluator: runs a mapper's top level and its mapping
//!   functions with the reference's run-time semantics, within limits. One
//!   file per concern (values, errors, environment, expressions, calls,
//!   machine-model operations); its module map lists them.
//! - [`mspace`]   the machine-model (MSpace) transformations of the reference
//!   (`merge`, `split`, `swap`, `slice`, `reverse`, `balance_split`,
//!   `auto_split`, `greedy_split`), as pure functions over extents.
//! - [`machine`]  machine descriptions (serde JSON/TOML) and named presets.
//! - [`app`]      application descriptions and the nine built-in benchmarks.
//! - [`scaling`]  the DISTAL matmuls' weak scaling: a description rewritten
//!   for the machine's node and GPU count as the benchmark scripts run it.
//! - [`decisions`] concrete mapping decisions (per task: processor kind, memory
//!   and layout per region, processor per launch point) and runtime failures.
//! - [`resolve_mapping`] program + application + machine -> decisions, with
//!   diagnostics on the responsible statements and the run's first fatal
//!   failure; renders decisions for `explain`. One file per decision
//!   (`kind`, `memory`, `layout`, `instances`, `placement`), each with the
//!   diagnostics it raises; its module map restates the precedence rules.
//! - [`import`]   `mapwright app import`: Legion mapper-logging-wrapper logs ->
//!   application + machine descriptions.
//! - [`backend`]  the `Backend` trait (run request -> outcome with raw output
//!   and metrics) and the `command` backend (a real program from a template).
//! - [`service`]  `mapwright serve`: a backend behind HTTP+JSON (loopback by
//!   default, bearer token otherwise, bounded queue) and its client.
//! - [`cuda`]     the `cuda` backend: the decisions executed with real
//!   allocations and kernels on local GPUs (feature `cuda`, cudarc loaded at
//!   run time); its layout, placement, kernel and executor logic is always
//!   built and runs on host threads as the CPU reference (`runtime/CUDA.md`).
//! - [`legion`]   the decisions of mapwright's Legion mapper (a C++ shell
//!   in `runtime/legion/` over the C ABI of `runtime/legion/abi`): the host
//!   Legion reports, each launch resolved by [`resolve_mapping`], and the
//!   decision log held against `explain`.
//! - [`sim`]      the `sim` backend: a deterministic model of a Legion run of
//!   resolved decisions on a machine (constants in `runtime/SIMULATION.md`).
//! - [`validate`] the simulator against measured figures (the ASI paper's
//!   relative results, wrapper-log timings): `bench sim-validate`.

pub mod app;
pub mod backend;
pub mod cuda;
pub mod decisions;
pub mod eval;
pub mod import;
pub mod legion;
pub mod machine;
pub mod mspace;
pub mod resolve_mapping;
pub mod scaling;
pub mod service;
pub mod sim;
pub mod validate;
