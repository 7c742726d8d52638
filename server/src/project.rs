//! `mapwright.toml`, the project file, and resolving `--app`/`--machine`
//! arguments. The file is found by walking up from the mapper file:
//!
//! ```toml
//! app = "circuit"            # a built-in name or a path to an application JSON
//! machine = "p100x4"         # a preset or a path to a machine JSON/TOML
//! runtime = "embedded"       # "command" ([command] below), "legion" (real Legion on this
//!                            # host, docs/legion.md), or the URL of a `mapwright serve`
//! proposer = "search"        # search | random | scalar | llm | hybrid
//!
//! [optimize]
//! min_gain = 0.02            # apply a candidate only above +2 % (simulator; see `optimize::verdict`)
//!
//! [llm]
//! base_url = "http://127.0.0.1:8000/v1"
//! model = "gpt-4o"
//! api_key_env = "OPENAI_API_KEY"   # the key itself never goes in a file
//! output = "auto"                  # auto | structured | text
//! timeout_s = 120                  # per request
//! max_tokens = 1024                # per answer
//! temperature = 0.7
//! ca_file = "certs/private-ca.pem" # https:// behind a private CA (relative to this file)
//! ```

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use mapwright_runtime::app::App;
use mapwright_runtime::machine::Machine;
use serde::Deserialize;

/// The project file's name.
pub const PROJECT_FILE: &str = "mapwright.toml";

/// The contents of `mapwright.toml` (every key optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProjectFile {
    pub app: Option<String>,
    pub machine: Option<String>,
    pub runtime: Option<String>,
    pub proposer: Option<String>,
    pub llm: LlmSection,
    pub optimize: OptimizeSection,
    pub command: Option<CommandSection>,
    /// The folder the file was read from (where `[command]` runs).
    #[serde(skip)]
    pub dir: Option<PathBuf>,
}

/// `[llm]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSection {
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// Name of the environment variable holding the API key.
    pub api_key_env: Option<String>,
    pub timeout_s: Option<u64>,
    /// `auto`, `structured` or `text`.
    pub output: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    /// PEM certificates to trust for an `https://` endpoint, besides the
    /// usual roots (relative to the project file's folder).
    pub ca_file: Option<String>,
    pub price_prompt_per_mtok: Option<f64>,
    pub price_completion_per_mtok: Option<f64>,
}

/// `[optimize]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OptimizeSection {
    /// The relative gain over the mapper as written below which the best
    /// candidate is not applied on a deterministic model (0.02: 2 %).
    pub min_gain: Option<f64>,
}

/// Checks a minimum gain from a flag, a setting or the project file: a
/// fraction, 0 or more (`0.02` is 2 %).
pub fn check_min_gain(value: f64) -> Result<f64, String> {
    if value.is_finite() && (0.0..=10.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "the minimum gain must be a fraction between 0 and 10 (0.02 is 2 %), not {value}"
        ))
    }
}

/// `[command]`: the external-program backend.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CommandSection {
    /// e.g. `./circuit -dslmapper -mapping {mapper} -ll:gpu 4`
    pub template: String,
    pub timeout_s: Option<u64>,
}

/// Walks up from `start` (a file or folder) to the nearest `mapwright.toml`.
pub fn find(start: &Path) -> Option<PathBuf> {
    let dir = if start.is_dir() {
        Some(start)
    } else {
        start.parent()
    };
    find_from(dir?, None)
}

/// The nearest `mapwright.toml` in `dir` or above it, not looking above
/// `root` when `dir` is inside it (the language server's workspace folder).
pub fn find_from(dir: &Path, root: Option<&Path>) -> Option<PathBuf> {
    let mut dir = Some(dir);
    while let Some(d) = dir {
        let candidate = d.join(PROJECT_FILE);
        if candidate.is_file() {
            return Some(candidate);
        }
        if root.is_some_and(|r| d == r) {
            return None;
        }
        dir = d.parent();
    }
    None
}

/// Reads a project file.
pub fn load(path: &Path) -> anyhow::Result<ProjectFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut file: ProjectFile = toml::from_str(&text)
        .with_context(|| format!("{} is not a valid project file", path.display()))?;
    file.dir = path.parent().map(Path::to_path_buf);
    Ok(file)
}

/// The project file governing `mapper`, if any (`relative_to`: its folder).
pub fn for_mapper(mapper: &Path) -> anyhow::Result<Option<(ProjectFile, PathBuf)>> {
    let abs = std::fs::canonicalize(mapper).unwrap_or_else(|_| mapper.to_path_buf());
    match find(&abs) {
        Some(p) => {
            let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
            Ok(Some((load(&p)?, dir)))
        }
        None => Ok(None),
    }
}

/// A built-in application name or a path to an application description.
pub fn load_app(arg: &str, relative_to: Option<&Path>) -> anyhow::Result<App> {
    if let Some(app) = App::builtin(arg) {
        return Ok(app);
    }
    let path = resolve_path(arg, relative_to);
    if path.is_file() {
        return App::load(&path).map_err(|e| anyhow!("{e}"));
    }
    Err(anyhow!(
        "unknown application `{arg}`: not a built-in ({}) and no such file",
        App::builtin_names().join(", ")
    ))
}

/// A machine preset name or a path to a machine description.
pub fn load_machine(arg: &str, relative_to: Option<&Path>) -> anyhow::Result<Machine> {
    if let Some(m) = Machine::preset(arg) {
        return Ok(m);
    }
    let path = resolve_path(arg, relative_to);
    if path.is_file() {
        return Machine::load(&path).map_err(|e| anyhow!("{e}"));
    }
    Err(anyhow!(
        "unknown machine `{arg}`: not a preset ({}) and no such file",
        Machine::preset_names().join(", ")
    ))
}

pub(crate) fn resolve_path(arg: &str, relative_to: Option<&Path>) -> PathBuf {
    let p = Path::new(arg);
    match relative_to {
        Some(dir) if p.is_relative() && !p.exists() => dir.join(p),
        _ => p.to_path_buf(),
    }
}

/// The application and machine for a command: flags first, then the
/// project file, then (for the machine) the paper's machine `p100x4`.
pub fn target(
    mapper: Option<&Path>,
    app: Option<&str>,
    machine: Option<&str>,
) -> anyhow::Result<(App, Machine, Option<ProjectFile>)> {
    let project = match mapper {
        Some(m) => for_mapper(m)?,
        None => None,
    };
    let dir = project.as_ref().map(|(_, d)| d.as_path());
    let file = project.as_ref().map(|(p, _)| p);
    let app_arg = app
        .map(str::to_string)
        .or_else(|| file.and_then(|f| f.app.clone()))
        .ok_or_else(|| {
            anyhow!("which application? pass --app NAME|FILE or set `app` in mapwright.toml")
        })?;
    let machine_arg = machine
        .map(str::to_string)
        .or_else(|| file.and_then(|f| f.machine.clone()))
        .unwrap_or_else(|| "p100x4".into());
    let app = load_app(&app_arg, if app.is_some() { None } else { dir })?;
    let machine = load_machine(&machine_arg, if machine.is_some() { None } else { dir })?;
    Ok((app, machine, project.map(|(p, _)| p)))
}
