//! The command line: one module per subcommand.

mod check;
mod fmt;
mod lsp;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Language tools and optimizer for the Legion mapper DSL.
#[derive(Debug, Parser)]
#[command(name = "mapwright", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Output format of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// rustc-style text with source snippets.
    Human,
    /// One JSON array of diagnostics.
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check mapper files and print diagnostics; exits 1 if any has errors.
    Check(check::CheckArgs),
    /// Format mapper files in place (or check that they are formatted).
    Fmt(fmt::FmtArgs),
    /// Run the language server on standard input and output.
    Lsp(lsp::LspArgs),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Fmt(args) => fmt::run(args),
        Command::Lsp(args) => lsp::run(args),
    }
}

/// Reads a file, or standard input for `-`.
pub(crate) fn read_input(path: &str) -> anyhow::Result<String> {
    use anyhow::Context;
    use std::io::Read;
    if path == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading standard input")?;
        return Ok(s);
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read `{path}`"))?;
    // Non-UTF-8 bytes can only be errors in this language; keep going with
    // replacement characters so they are reported at their position.
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}
