//! Standard output of the subcommands: `out!` and `outln!` (for the
//! modules of `cli`), and [`exit_code`]; `errln!` for standard error.
//!
//! `println!` panics when standard output is a pipe whose reader has gone
//! (`mapwright check big.mapper | head`): the user got a panic message and
//! a backtrace, and the command went on rendering for nobody. These write
//! the same text and return an error instead: [`ReaderGone`] for a closed
//! pipe, which [`exit_code`] turns into a quiet exit with status 0 (the
//! reader took what it wanted, as `rg ... | head` does), and any other
//! failure (a full disk behind `> file`) as an error naming standard
//! output.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;

/// Standard output is a pipe whose reader closed it: nothing more can be
/// shown, and nothing went wrong.
#[derive(Debug)]
pub struct ReaderGone;

impl fmt::Display for ReaderGone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("standard output was closed by its reader")
    }
}

impl std::error::Error for ReaderGone {}

/// Writes `args` to standard output (what `print!` does, without its
/// panic).
pub fn write(args: fmt::Arguments<'_>) -> anyhow::Result<()> {
    io::stdout().lock().write_fmt(args).map_err(|e| {
        if e.kind() == io::ErrorKind::BrokenPipe {
            anyhow::Error::new(ReaderGone)
        } else {
            anyhow::Error::new(e).context("cannot write to standard output")
        }
    })
}

/// `print!` that returns an error instead of panicking (see the module
/// doc): `out!("{x}")?`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::stdout::write(format_args!($($arg)*))
    };
}

/// `println!` that returns an error instead of panicking (see the module
/// doc): `outln!("{x}")?`.
macro_rules! outln {
    () => {
        $crate::cli::stdout::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` without its panic: standard error is where failures are
/// told, so a failure to write there (`2>/dev/full`) cannot be told
/// anywhere and is ignored (`eprintln!` panicked: status 101, no message).
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// The exit status of a command that ended with `result`: its own, 0 if
/// its reader went away ([`ReaderGone`]), otherwise 2 after the error on
/// standard error.
pub fn exit_code(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) if err.downcast_ref::<ReaderGone>().is_some() => ExitCode::SUCCESS,
        Err(err) => {
            // Standard error may be gone too: nothing else to tell then.
            let _ = writeln!(io::stderr(), "error: {err:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gone_reader_is_told_apart_from_other_failures() {
        let gone = anyhow::Error::new(ReaderGone).context("while printing the diagnostics");
        assert!(gone.downcast_ref::<ReaderGone>().is_some());
        let full = anyhow::Error::new(io::Error::other("no space left on device"))
            .context("cannot write to standard output");
        assert!(full.downcast_ref::<ReaderGone>().is_none());
        assert_eq!(exit_code(Err(gone)), ExitCode::SUCCESS);
        assert_eq!(exit_code(Err(full)), ExitCode::from(2));
    }
}
