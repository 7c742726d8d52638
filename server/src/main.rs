//! The `mapwright` binary: parses the command line and runs a subcommand.

use std::ffi::{c_int, c_long};
use std::process::ExitCode;

use clap::Parser;

/// mimalloc: the analysis allocates many small nodes (see Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

// Indices in `mi_option_t` of the mimalloc 3 sources that libmimalloc-sys
// 0.1.49 builds (that crate names options only behind its `extended`
// feature, which adds a dependency).
const MI_OPTION_ARENA_EAGER_COMMIT: c_int = 4;
const MI_OPTION_PURGE_DELAY: c_int = 15;

extern "C" {
    /// mimalloc's option setter (linked through the `mimalloc` crate).
    fn mi_option_set(option: c_int, value: c_long);
}

/// Makes mimalloc give freed memory back to the system. A language server
/// frees a document's old analysis and resolution on every keystroke and
/// then sits idle; with mimalloc's defaults that memory stayed resident.
/// Measured in release with the same binary and these options set from the
/// environment (`tests/tests/lsp_memory.rs`, 100 open documents, steady
/// VmRSS mean, no application / circuit): defaults 133 / 207 MB; purge
/// delay 0 (freed pages are decommitted at once instead of after 1 s,
/// which only elapses when the allocator is used again) 105 / 168 MB; plus
/// no eager commit of arenas (on Linux mimalloc otherwise commits a whole
/// arena up front) 60 / 90 MB. See the README's memory table.
///
/// The cost: keystroke-to-diagnostics on the 5,000-line file of
/// `lsp_bench` went from a p50 of 12-16 ms to 20 ms (same binary, options
/// from the environment, a loaded 2-core machine); no eager commit alone
/// costs nothing measurable but only reaches 95 / 135 MB, and a purge
/// delay of 10 ms was no faster and kept 74 / 106 MB. Dropping the
/// purge-delay line below is the switch if latency matters more.
extern "C" fn set_allocator_options() {
    // SAFETY: plain C calls with valid option indices; mimalloc allows
    // setting options at any time (they apply to what it reserves next).
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
    }
}

/// Runs [`set_allocator_options`] before `main`, as an ELF constructor
/// (after mimalloc's own, which has a higher priority): Rust's runtime
/// allocates before `main`, and mimalloc fixes the commit mode of its
/// first arena when it reserves it at that first allocation.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static SET_ALLOCATOR_OPTIONS: extern "C" fn() = set_allocator_options;

fn main() -> ExitCode {
    // Elsewhere the options apply from here on.
    #[cfg(not(target_os = "linux"))]
    set_allocator_options();
    let args = mapwright::cli::Cli::parse();
    match mapwright::cli::run(args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
