//! The command line: one module per subcommand (`bench_optimize` holds
//! `bench optimize`, `bench_external` holds `bench space` and `bench
//! evaluate`), `backend_args`, the backend options `run` and `optimize`
//! share, and `stdout`, what they print with (a reader that goes away ends
//! a command quietly, see [`stdout::exit_code`]).

// First: its `out!` and `outln!` are for the modules below.
#[macro_use]
pub mod stdout;

mod app;
mod apps;
mod backend_args;
mod bench_external;
mod bench_mapper;
mod bench_optimize;
mod bench_validate;
mod calibrate;
mod check;
mod explain;
mod fmt;
mod init;
mod lsp;
mod optimize;
mod run;
mod serve;

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
    /// Explain what a mapper decides for an application on a machine:
    /// processor kinds, memories, layouts, launch-point placement.
    Explain(explain::ExplainArgs),
    /// Run the language server on standard input and output.
    Lsp(lsp::LspArgs),
    /// Run a mapper on a backend (simulator by default); print its output
    /// and time, throughput and speed relative to the expert mapper.
    Run(run::RunArgs),
    /// List the built-in applications, their tasks and expert mappers.
    Apps(apps::AppsArgs),
    /// Serve a backend over HTTP+JSON (loopback by default).
    Serve(serve::ServeArgs),
    /// Improve a mapper by measurement: propose, check, run, AutoGuide, repeat;
    /// keep the best (`--in-place` writes it back).
    Optimize(Box<optimize::OptimizeArgs>),
    /// Make a project of your own Legion program: run it once with
    /// mapwright's mapper (`mapwright init -- ./prog ARGS`) and write
    /// mapwright.toml, its application and machine descriptions and a
    /// starting mapper.
    Init(init::InitArgs),
    /// Application descriptions (`mapwright app import LOG`).
    #[command(subcommand)]
    App(app::AppCommand),
    /// Measure this machine's GPUs (bandwidths, GEMM rate, launch
    /// overhead) and write a machine description for the simulator (needs
    /// the `cuda` feature).
    Calibrate(calibrate::CalibrateArgs),
    /// Benchmarks (`mapwright bench optimize`).
    #[command(subcommand)]
    Bench(BenchCommand),
}

/// `mapwright bench ...`
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Every proposer on every built-in application, several seeds: normalized
    /// throughput after N iterations, and the scalar tuner after many more.
    Optimize(Box<bench_optimize::BenchOptimizeArgs>),
    /// The optimizer's search space for an application, as JSON (for an
    /// external tuner such as OpenTuner).
    Space(bench_external::SpaceArgs),
    /// Evaluates points of the space read as JSON lines on standard input,
    /// one JSON answer line each (the external tuners' protocol).
    Evaluate(bench_external::EvaluateArgs),
    /// The simulator against every measured figure available (the ASI
    /// paper's relative results, the wrapper logs' timing lines): predicted
    /// vs measured, ratio, whether the ordering of variants matches.
    SimValidate(bench_validate::SimValidateArgs),
    /// mapwright's Legion mapper against Legion's DefaultMapper on the same
    /// programs: median and min-max of repeated real runs, the ratio, and
    /// microseconds per mapper call.
    Mapper(bench_mapper::BenchMapperArgs),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Fmt(args) => fmt::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Lsp(args) => lsp::run(args),
        Command::Run(args) => run::run(args),
        Command::Apps(args) => apps::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Optimize(args) => optimize::run(*args),
        Command::App(command) => app::run(command),
        Command::Init(args) => init::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Bench(BenchCommand::Optimize(args)) => bench_optimize::bench(*args),
        Command::Bench(BenchCommand::Space(args)) => bench_external::space(args),
        Command::Bench(BenchCommand::Evaluate(args)) => bench_external::evaluate(args),
        Command::Bench(BenchCommand::SimValidate(args)) => bench_validate::run(args),
        Command::Bench(BenchCommand::Mapper(args)) => bench_mapper::run(args),
    }
}

/// Reads a file, or standard input for `-`.
pub(crate) fn read_input(path: &str) -> anyhow::Result<String> {
    let bytes = read_bytes(path)?;
    // Non-UTF-8 bytes can only be errors in this language; keep going with
    // replacement characters so they are reported at their position.
    Ok(String::from_utf8(bytes).unwrap_or_else(|e| lossy(&e.into_bytes())))
}

/// Reads a file, or standard input for `-`, that must be UTF-8: for a
/// command that writes the text back (`optimize --apply`), where reading
/// with replacement characters would replace the bytes that are not.
pub(crate) fn read_utf8(path: &str) -> anyhow::Result<String> {
    String::from_utf8(read_bytes(path)?).map_err(|e| {
        anyhow::anyhow!(
            "`{path}` is not UTF-8 (byte {}); `mapwright check` shows where",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The bytes of `path` (`-`: standard input).
pub(crate) fn read_bytes(path: &str) -> anyhow::Result<Vec<u8>> {
    use anyhow::Context;
    use std::io::Read;
    if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
        return Ok(bytes);
    }
    std::fs::read(path).with_context(|| format!("cannot read `{path}`"))
}

/// `String::from_utf8_lossy(bytes)` (each invalid sequence one U+FFFD) in
/// one block of the exact size: the lossy copy grew by doubling next to
/// the bytes read, and random bytes (a third of them 3-byte replacement
/// characters) then held four times their size (see bench/memory).
fn lossy(bytes: &[u8]) -> String {
    let size = |chunk: std::str::Utf8Chunk<'_>| {
        let replaced = if chunk.invalid().is_empty() { 0 } else { 3 };
        chunk.valid().len() + replaced
    };
    let mut text = String::with_capacity(bytes.utf8_chunks().map(size).sum());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            text.push(char::REPLACEMENT_CHARACTER);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::lossy;

    #[test]
    fn lossy_reading_equals_the_standard_one_in_an_exact_block() {
        let cases: [&[u8]; 7] = [
            b"",
            b"plain",
            b"\xff",
            b"a\xffb\xfe\xfdc",
            b"\xe2\x82",
            b"ok \xe2\x82\xac \xf0\x9f\x98 \xc3",
            &[0x80; 40],
        ];
        for bytes in cases {
            let text = lossy(bytes);
            assert_eq!(text, String::from_utf8_lossy(bytes), "{bytes:?}");
            assert_eq!(text.capacity(), text.len(), "{bytes:?}");
        }
    }
}
