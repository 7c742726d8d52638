//! The `mapwright` binary: parses the command line and runs a subcommand.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc: the analysis allocates many small nodes (see Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = mapwright::cli::Cli::parse();
    match mapwright::cli::run(args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
