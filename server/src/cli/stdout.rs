//! Standard output of the subcommands: `out!` and `outln!` (for the
//! modules of `cli`), [`reader_gone`] and [`exit_code`]; `errln!` for
//! standard error.
//!
//! `println!` panics when standard output is a pipe whose reader has gone
//! (`mapwright check big.mapper | head`): the user got a panic message and
//! a backtrace instead of the command's status. With these, a closed pipe
//! ends the output, not the command: every later write is skipped, the
//! command finishes its work (`optimize --in-place` still writes the
//! mapper) and exits with its own status (`check` 1 if it found errors,
//! `run` 1 if the run failed), quietly. A loop with costly output asks
//! [`reader_gone`] to skip it. Any other failure (a full disk behind
//! `> file`) is an error naming standard output.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;

/// Set when a write found standard output's reader gone.
static READER_GONE: AtomicBool = AtomicBool::new(false);

/// Whether standard output's reader has gone (a write found the pipe
/// closed): what is printed from now on is thrown away.
pub fn reader_gone() -> bool {
    READER_GONE.load(Ordering::Relaxed)
}

/// Writes `args` to standard output (what `print!` does, without its
/// panic; nothing once the reader has gone).
pub fn write(args: fmt::Arguments<'_>) -> anyhow::Result<()> {
    if reader_gone() {
        return Ok(());
    }
    match io::stdout().lock().write_fmt(args) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            READER_GONE.store(true, Ordering::Relaxed);
            Ok(())
        }
        other => other.context("cannot write to standard output"),
    }
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

/// The exit status of a command that ended with `result`: its own, or 2
/// after the error on standard error.
pub fn exit_code(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) => {
            errln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_told_and_exits_2() {
        let full = anyhow::Error::new(io::Error::other("no space left on device"))
            .context("cannot write to standard output");
        assert_eq!(exit_code(Err(full)), ExitCode::from(2));
        assert_eq!(exit_code(Ok(ExitCode::from(1))), ExitCode::from(1));
    }
}
