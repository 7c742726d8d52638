//! mapwright: the language server, the command-line interface, AutoGuide and
//! the optimizer for the Legion mapper DSL.
//!
//! Module map:
//! - [`render`]  diagnostics as rustc-style text with source snippets, or JSON.
//! - [`autoguide`] raw output -> explanation, suggestion, mechanical edit (a rule table).
//! - [`cli`]     the subcommands (`check`, `fmt`, ...), one module each.
//!
//! Layering: this crate may use `mapwright-runtime` and `mapwright-grammar`;
//! they never use it. LSP types stay in this crate.

pub mod autoguide;
pub mod cli;
pub mod render;
