//! `mapwright explain FILE --app NAME|FILE --machine PRESET|FILE [--json]`:
//! what the mapper decides for the application on the machine. Per task the
//! processor kind, each region argument's memory and layout, each with the
//! statement that decided it, and the launch-point-to-processor grid; then
//! the diagnostics (syntax, semantics and resolution) and, if a real run
//! would abort, its first message. `--json` prints the decisions as one
//! object (diagnostics with line/column positions).
//!
//! Exit status: 0 (even when the mapper has errors: explaining them is the
//! point), 2 for usage errors.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;
use mapwright_grammar::{analyze, Diagnostic, LineIndex};
use mapwright_runtime::resolve_mapping::{render_decisions, resolve_mapping};

use super::check::resolution_target;
use super::read_input;
use crate::render::{diagnostic_json, render_diagnostic, Style};

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The mapper file (`-` for standard input).
    pub file: String,
    /// Built-in application name or application description (JSON).
    /// Default: `app` in mapwright.toml.
    #[arg(long)]
    pub app: Option<String>,
    /// Machine preset or description (JSON/TOML). Default: mapwright.toml,
    /// else p100x4.
    #[arg(long)]
    pub machine: Option<String>,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let color = !args.json && std::io::stdout().is_terminal();
    out!("{}", explain_text(&args, color)?)?;
    Ok(ExitCode::SUCCESS)
}

/// What `explain` prints.
pub(crate) fn explain_text(args: &ExplainArgs, color: bool) -> anyhow::Result<String> {
    let source = read_input(&args.file)?;
    let Some((app, machine)) =
        resolution_target(&args.file, args.app.as_deref(), args.machine.as_deref())?
    else {
        anyhow::bail!("which application? pass --app NAME|FILE or set `app` in mapwright.toml");
    };
    let analysis = analyze(&source);
    let decisions = resolve_mapping(&analysis, &source, &app, &machine);
    let index = LineIndex::new(&source);
    let display = if args.file == "-" {
        "<stdin>"
    } else {
        args.file.as_str()
    };
    let mut diagnostics: Vec<Diagnostic> = analysis.diagnostics();
    diagnostics.extend(decisions.diagnostics.iter().cloned());
    diagnostics.sort_by_key(|d| (d.span.start(), d.span.end()));
    if args.json {
        let mut value = serde_json::to_value(&decisions)?;
        if let Some(obj) = value.as_object_mut() {
            obj.insert(
                "diagnostics".into(),
                serde_json::Value::Array(
                    diagnostics
                        .iter()
                        .map(|d| diagnostic_json(d, display, &index, &source))
                        .collect(),
                ),
            );
        }
        return Ok(format!("{}\n", serde_json::to_string_pretty(&value)?));
    }
    let style = Style { color };
    let mut out = render_decisions(&decisions, &source, &app, &machine);
    if diagnostics.is_empty() {
        out.push_str("\nno diagnostics\n");
    } else {
        out.push_str("\ndiagnostics:\n");
        for d in &diagnostics {
            out.push_str(&render_diagnostic(d, display, &source, &index, style));
            out.push('\n');
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_dir, TempDir};
    use std::path::PathBuf;

    fn args(file: &str, json: bool) -> ExplainArgs {
        ExplainArgs {
            file: file.to_string(),
            app: Some("cannon".into()),
            machine: Some("p100x4".into()),
            json,
        }
    }

    /// The expert mapper of `name` in a file of its own: tests run in
    /// parallel, and two writing one file would read each other's halves.
    /// The folder is removed when the returned guard is dropped.
    fn expert_file(name: &str) -> (TempDir, PathBuf) {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = temp_dir("mapwright-explain", &format!("{name}-{n}"));
        let path = dir.join(format!("{name}.mapper"));
        let text = mapwright_runtime::app::expert_mapper_text(name).expect("expert");
        std::fs::write(&path, text).expect("write");
        (dir, path)
    }

    #[test]
    fn explains_the_cannon_expert_as_tables_and_grids() {
        let (_dir, path) = expert_file("cannon");
        let out = explain_text(&args(&path.to_string_lossy(), false), false).expect("explain");
        assert!(
            out.starts_with("application `cannon` on machine `p100x4`"),
            "{out}"
        );
        assert!(
            out.contains("task task_4: single launch on GPU (line 1)"),
            "{out}"
        );
        assert!(out.contains("SOA C_order (line 10)"), "{out}");
        // The 2-D launch of task_1 as a matrix.
        assert!(
            out.contains(
                "         j=0  j=1
    i=0  0,0  0,2
    i=1  0,1  0,3"
            ),
            "{out}"
        );
        assert!(out.contains("the run does not abort"), "{out}");
    }

    #[test]
    fn json_output_is_the_decisions() {
        let (_dir, path) = expert_file("cannon");
        let out = explain_text(&args(&path.to_string_lossy(), true), false).expect("explain");
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(v["app"], "cannon");
        assert_eq!(v["tasks"].as_array().map(Vec::len), Some(11));
        assert!(v["diagnostics"].is_array());
        assert!(v["fatal"].is_null());
    }

    #[test]
    fn a_pinned_statement_is_shown_as_pinned() {
        let dir = temp_dir("mapwright-explain", "pin");
        let path = dir.join("pinned.mapper");
        std::fs::write(
            &path,
            "Task * GPU,CPU;\nRegion * rp_ghost GPU ZCMEM;  # mapwright: keep\n",
        )
        .expect("write");
        let mut a = args(&path.to_string_lossy(), false);
        a.app = Some("circuit".into());
        let out = explain_text(&a, false).expect("explain");
        assert!(out.contains("ZCMEM (line 2, pinned)"), "{out}");
        assert!(
            out.contains("line 2: Region * rp_ghost GPU ZCMEM;  [pinned: # mapwright: keep]"),
            "{out}"
        );
        assert!(!out.contains("line 1, pinned"), "{out}");
    }

    #[test]
    fn an_application_is_required() {
        let (_dir, path) = expert_file("circuit");
        let mut a = args(&path.to_string_lossy(), false);
        a.app = None;
        a.machine = None;
        assert!(explain_text(&a, false).is_err());
    }
}
