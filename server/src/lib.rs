//! mapwright: the language server, the command-line interface, AutoGuide and
//! the optimizer for the Legion mapper DSL.
//!
//! Module map:
//! - [`alloc`]   the binaries' allocator: mimalloc's options and scratch heaps.
//! - [`render`]  diagnostics as rustc-style text with source snippets, or JSON.
//! - [`autoguide`] raw output -> explanation, suggestion, mechanical edit (a rule table).
//! - [`optimize`] the optimization loop, proposers, metrics, reports.
//! - [`project`] `mapwright.toml` and resolving `--app`/`--machine`.
//! - [`cli`]     the subcommands (`check`, `fmt`, `lsp`, ...), one module each.
//! - [`lsp`]     the language server (tower-lsp): protocol glue over pure
//!   analysis functions; see its module map.
//! - [`testing`] what the workspace's tests share (temporary folders).
//! - [`user_cache`] the user's cache folder (experts, linked pages, shown text).
//!
//! Layering: this crate may use `mapwright-runtime` and `mapwright-grammar`;
//! they never use it. LSP types stay in this crate.

pub mod alloc;
pub mod autoguide;
pub mod cli;
pub mod lsp;
pub mod optimize;
pub mod project;
pub mod render;
pub mod testing;
pub mod user_cache;
