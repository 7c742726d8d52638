//! `mapwright check FILE...`: parse and check, print diagnostics.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;
use mapwright_grammar::{analyze, LineIndex, Severity};

use super::{read_input, OutputFormat};
use crate::render::{diagnostic_json, render_diagnostic, Style};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Mapper files (`-` for standard input).
    #[arg(required = true)]
    pub files: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: OutputFormat,
}

pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let style = Style {
        color: std::io::stdout().is_terminal(),
    };
    let mut errors = 0usize;
    let mut warnings = 0usize;
    let mut json = Vec::new();
    for path in &args.files {
        let source = read_input(path)?;
        let analysis = analyze(&source);
        let index = LineIndex::new(&source);
        let display = if path == "-" {
            "<stdin>"
        } else {
            path.as_str()
        };
        for d in &analysis.diagnostics() {
            match d.severity {
                Severity::Error => errors += 1,
                Severity::Warning => warnings += 1,
                _ => {}
            }
            match args.format {
                OutputFormat::Human => {
                    println!("{}", render_diagnostic(d, display, &source, &index, style))
                }
                OutputFormat::Json => json.push(diagnostic_json(d, display, &index, &source)),
            }
        }
    }
    match args.format {
        OutputFormat::Json => println!("{}", serde_json::Value::Array(json)),
        OutputFormat::Human => {
            let files = args.files.len();
            let noun = if files == 1 { "file" } else { "files" };
            if errors + warnings == 0 {
                eprintln!("checked {files} {noun}: no problems");
            } else {
                eprintln!("checked {files} {noun}: {errors} error(s), {warnings} warning(s)");
            }
        }
    }
    Ok(if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
