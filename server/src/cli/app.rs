//! `mapwright app import LOG`: a Legion mapper-logging-wrapper log becomes an
//! application description and a machine description.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Context};
use clap::{Args, Subcommand};
use mapwright_runtime::import::import_wrapper_log_named;

use super::read_input;

#[derive(Debug, Subcommand)]
pub enum AppCommand {
    /// Turn a mapper-logging-wrapper log into application and machine
    /// descriptions (tasks, launches, domains, region arguments with
    /// privileges, sizes and fields; memories, capacities, bandwidth classes).
    Import(ImportArgs),
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The log (`-` for standard input).
    pub log: String,
    /// Name of the application (default: the program the log names).
    #[arg(long)]
    pub name: Option<String>,
    /// Where to write the application description (default: <name>.app.json).
    #[arg(long)]
    pub app_out: Option<PathBuf>,
    /// Where to write the machine description (default: <name>.machine.json;
    /// `.toml` writes TOML).
    #[arg(long)]
    pub machine_out: Option<PathBuf>,
    /// Print both descriptions as one JSON object instead of writing files.
    #[arg(long)]
    pub stdout: bool,
}

pub fn run(command: AppCommand) -> anyhow::Result<ExitCode> {
    let AppCommand::Import(args) = command;
    let text = read_input(&args.log)?;
    let (app, machine) = import_wrapper_log_named(&text, args.name.as_deref())
        .map_err(|e| anyhow!("cannot import {}: {e}", args.log))?;
    if args.stdout {
        let value = serde_json::json!({ "app": app, "machine": machine });
        outln!("{}", serde_json::to_string_pretty(&value)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let app_path = args
        .app_out
        .unwrap_or_else(|| PathBuf::from(format!("{}.app.json", app.name)));
    let machine_path = args
        .machine_out
        .unwrap_or_else(|| PathBuf::from(format!("{}.machine.json", app.name)));
    std::fs::write(&app_path, app.to_json_pretty().map_err(|e| anyhow!("{e}"))?)
        .with_context(|| format!("cannot write {}", app_path.display()))?;
    let machine_text = if machine_path.extension().is_some_and(|e| e == "toml") {
        machine.to_toml().map_err(|e| anyhow!("{e}"))?
    } else {
        machine.to_json_pretty().map_err(|e| anyhow!("{e}"))?
    };
    std::fs::write(&machine_path, machine_text)
        .with_context(|| format!("cannot write {}", machine_path.display()))?;
    let regions: usize = app.tasks.iter().map(|t| t.regions.len()).sum();
    errln!(
        "imported `{}`: {} tasks, {} region arguments -> {}; {} node(s) -> {}",
        app.name,
        app.tasks.len(),
        regions,
        app_path.display(),
        machine.nodes(),
        machine_path.display()
    );
    Ok(ExitCode::SUCCESS)
}
