//! The `mapwright` binary: parses the command line and runs a subcommand.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc (the analysis allocates many small nodes, see Cargo.toml), with
/// scratch heaps for transient work (see [`mapwright::alloc`]).
#[global_allocator]
static ALLOCATOR: mapwright::alloc::Allocator = mapwright::alloc::Allocator;

/// Runs [`mapwright::alloc::set_options`] before `main`, as an ELF
/// constructor (after mimalloc's own, which has a higher priority): Rust's
/// runtime allocates before `main`, and mimalloc fixes the commit mode of
/// its first arena when it reserves it at that first allocation.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static SET_ALLOCATOR_OPTIONS: extern "C" fn() = mapwright::alloc::set_options;

fn main() -> ExitCode {
    // Elsewhere the options apply from here on.
    #[cfg(not(target_os = "linux"))]
    mapwright::alloc::set_options();
    let args = mapwright::cli::Cli::parse();
    mapwright::cli::stdout::exit_code(mapwright::cli::run(args))
}
