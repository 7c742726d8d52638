//! Diagnostics for people and tools: the renderer lives in the grammar crate
//! ([`mapwright_grammar::render`]) so that mapwright's Legion mapper prints
//! exactly what `mapwright check` prints; re-exported here for the CLI.

pub use mapwright_grammar::render::{diagnostic_json, render_diagnostic, Style};
