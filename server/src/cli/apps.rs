//! `mapwright apps [--json]`: the built-in applications, their tasks and
//! where each one's expert mapper is.
//!
//! Expert mapper paths: the experts are compiled into the binary
//! (`runtime/apps/experts/`). `expert_mapper` is an absolute path to a
//! readable copy: the packaged file in the source tree the binary was built
//! from when it is still there, otherwise a copy written (once, and again if
//! it differs) to `$XDG_CACHE_HOME/mapwright/experts/` (or
//! `~/.cache/mapwright/experts/`, see [`crate::user_cache`]). So the
//! path always exists, whether the binary runs from a checkout or was
//! installed elsewhere.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use mapwright_runtime::app::{expert_mapper_file, expert_mapper_text, App, Launch};
use serde_json::json;

#[derive(Debug, Args)]
pub struct AppsArgs {
    /// Print one JSON array instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Where the packaged expert files are in the source tree of this build.
fn packaged_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../runtime/apps/experts"
    ))
}

fn cache_dir() -> PathBuf {
    crate::user_cache::dir().join("experts")
}

/// An absolute path to a readable copy of built-in `app`'s expert mapper
/// (see the module documentation), or None for an unknown name or when no
/// copy can be written.
pub(crate) fn expert_mapper_path(app: &str) -> Option<PathBuf> {
    let file = expert_mapper_file(app);
    let text = expert_mapper_text(app)?;
    let packaged = packaged_dir().join(file);
    if std::fs::read_to_string(&packaged).is_ok_and(|t| t == text) {
        return packaged.canonicalize().ok().or(Some(packaged));
    }
    let cached = cache_dir().join(file);
    if std::fs::read_to_string(&cached).is_ok_and(|t| t == text) {
        return Some(cached);
    }
    std::fs::create_dir_all(cached.parent()?).ok()?;
    std::fs::write(&cached, text).ok()?;
    Some(cached)
}

pub fn run(args: AppsArgs) -> anyhow::Result<ExitCode> {
    let mut list = Vec::new();
    let mut text = String::new();
    for name in App::builtin_names() {
        let Some(app) = App::builtin(name) else {
            continue;
        };
        let expert = expert_mapper_path(name);
        let expert_str = expert
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        if args.json {
            let tasks: Vec<_> = app
                .tasks
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name,
                        "launch": match t.launch { Launch::Index => "index", Launch::Single => "single" },
                        "domain": t.domain,
                        "variants": t.variants.iter().map(|v| v.dsl_name()).collect::<Vec<_>>(),
                        "per_iteration": t.per_iteration,
                        "regions": t.regions.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
                    })
                })
                .collect();
            list.push(json!({
                "name": name,
                "description": app.description,
                "tasks": tasks,
                "expert_mapper": expert_str,
                "expert_mapper_file": expert_mapper_file(name),
                "timed_iterations": app.timed_iterations,
                "performance_output": app.performance_output,
            }));
        } else {
            let loop_tasks: Vec<&str> = app
                .tasks
                .iter()
                .filter(|t| t.per_iteration > 0 && !t.inner)
                .map(|t| t.name.as_str())
                .collect();
            text.push_str(&format!("{name}\n  {}\n", app.description));
            text.push_str(&format!(
                "  tasks ({}): {}\n",
                app.tasks.len(),
                app.task_names().join(", ")
            ));
            text.push_str(&format!("  main loop: {}\n", loop_tasks.join(", ")));
            text.push_str(&format!("  expert mapper: {expert_str}\n\n"));
        }
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&list)?)?;
    } else {
        out!("{text}")?;
    }
    Ok(ExitCode::SUCCESS)
}
