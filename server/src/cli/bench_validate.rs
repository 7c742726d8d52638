//! `mapwright bench sim-validate`: the simulator against every measured
//! figure available (`mapwright_runtime::validate`): the ASI paper's
//! relative results and the wrapper logs' timing lines, with predicted vs
//! measured, their ratio, whether the ordering of variants matches, and
//! "N of M orderings match".

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use mapwright_runtime::validate;

#[derive(Debug, Args)]
pub struct SimValidateArgs {
    /// Directory of the mapper-logging-wrapper logs (`cannon.log` is read
    /// for its `task_4` timing lines). Without it, or when the file is
    /// missing, the figures recorded from the shared logs are used.
    #[arg(long)]
    pub logs: Option<PathBuf>,
}

pub fn run(args: SimValidateArgs) -> anyhow::Result<ExitCode> {
    let cannon = args
        .logs
        .as_ref()
        .and_then(|d| std::fs::read_to_string(d.join("cannon.log")).ok());
    let rows = validate::rows(cannon.as_deref());
    out!("{}", validate::render(&rows))?;
    if args.logs.is_some() && cannon.is_none() {
        errln!("mapwright: no cannon.log in the logs directory; recorded figures used");
    }
    Ok(ExitCode::SUCCESS)
}
