//! `mapwright lsp`: the language server over standard input and output.

use std::process::ExitCode;

use clap::Args;

#[derive(Debug, Args)]
pub struct LspArgs {
    /// Use standard input and output (the default and only transport;
    /// accepted because editor clients pass it).
    #[arg(long)]
    pub stdio: bool,
}

/// Exit code 0 after `shutdown` + `exit`, 1 if the client exited (or
/// closed the stream) without `shutdown`, as the protocol specifies.
pub fn run(_args: LspArgs) -> anyhow::Result<ExitCode> {
    let clean = crate::lsp::run_stdio()?;
    Ok(if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
