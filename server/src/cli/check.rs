//! `mapwright check FILE... [--app NAME|FILE] [--machine PRESET|FILE]`:
//! parse and check, print diagnostics. With an application (from `--app`,
//! `--machine` or `mapwright.toml`) the mapping is also resolved against it,
//! so what a real run would do wrong is reported too (codes E03xx/W03xx/
//! I03xx), with the run's first fatal message.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use mapwright_grammar::{analyze, report, Diagnostic, LineIndex, Severity};
use mapwright_runtime::app::App;
use mapwright_runtime::machine::Machine;
use mapwright_runtime::resolve_mapping::resolve_mapping;

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
    /// Built-in application name or application description (JSON): resolve
    /// the mapping against it (default: `app` in mapwright.toml).
    #[arg(long)]
    pub app: Option<String>,
    /// Machine preset or description (JSON/TOML) for the resolution
    /// (default: mapwright.toml, else p100x4).
    #[arg(long)]
    pub machine: Option<String>,
}

/// The application and machine to resolve `path` against, if any: flags
/// first, then the project file; none when neither names an application.
pub(crate) fn resolution_target(
    path: &str,
    app: Option<&str>,
    machine: Option<&str>,
) -> anyhow::Result<Option<(App, Machine)>> {
    let mapper = (path != "-").then(|| Path::new(path));
    let project_has_app = match mapper {
        Some(m) => crate::project::for_mapper(m)?.is_some_and(|(p, _)| p.app.is_some()),
        None => false,
    };
    if app.is_none() && machine.is_none() && !project_has_app {
        return Ok(None);
    }
    let (app, machine, _) = crate::project::target(mapper, app, machine)?;
    Ok(Some((app, machine)))
}

pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    // Asked when the first diagnostic is printed: the first use of
    // standard output allocates its buffer, which would otherwise be held
    // while the file is checked (1 KB of a 1 KB file's peak, see
    // bench/memory).
    let style = std::cell::OnceCell::new();
    let style = || {
        *style.get_or_init(|| Style {
            color: std::io::stdout().is_terminal(),
        })
    };
    let mut errors = 0usize;
    let mut warnings = 0usize;
    let mut json = Vec::new();
    for path in &args.files {
        let source = read_input(path)?;
        let display = if path == "-" {
            "<stdin>"
        } else {
            path.as_str()
        };
        let target = resolution_target(path, args.app.as_deref(), args.machine.as_deref())?;
        let mut fatal = None;
        let mut emit = |d: &Diagnostic, index: &LineIndex| {
            match d.severity {
                Severity::Error => errors += 1,
                Severity::Warning => warnings += 1,
                _ => {}
            }
            match args.format {
                // (Not rendered for nobody: the count still decides the
                // status.)
                OutputFormat::Human if super::stdout::reader_gone() => {}
                OutputFormat::Human => {
                    outln!("{}", render_diagnostic(d, display, &source, index, style()))?
                }
                OutputFormat::Json => json.push(diagnostic_json(d, display, index, &source)),
            }
            anyhow::Ok(())
        };
        match target {
            // Only the resolution reads the tokens, and the whole analysis.
            Some((app, machine)) => {
                let analysis = analyze(&source);
                let decisions = resolve_mapping(&analysis, &source, &app, &machine);
                fatal = decisions.fatal;
                let mut all = analysis.into_diagnostics();
                all.extend(decisions.diagnostics);
                all.sort_by_key(|d| (d.span.start(), d.span.end()));
                let index = LineIndex::new(&source);
                for d in &all {
                    emit(d, &index)?;
                }
            }
            // Without an application only the diagnostics are kept, packed,
            // and each is built back when it is printed (see bench/memory).
            None => {
                let report = report(&source);
                let index = LineIndex::new(&source);
                for d in report.diagnostics() {
                    emit(&d, &index)?;
                }
            }
        }
        if let (Some(f), OutputFormat::Human) = (fatal, args.format) {
            let first = f
                .raw_output
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            errln!("{display}: a real run aborts with: {}", first.trim());
        }
    }
    match args.format {
        OutputFormat::Json => outln!("{}", serde_json::Value::Array(json))?,
        OutputFormat::Human => {
            let files = args.files.len();
            let noun = if files == 1 { "file" } else { "files" };
            if errors + warnings == 0 {
                errln!("checked {files} {noun}: no problems");
            } else {
                errln!("checked {files} {noun}: {errors} error(s), {warnings} warning(s)");
            }
        }
    }
    Ok(if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
