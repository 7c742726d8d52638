//! Settings and project files.
//!
//! Settings come from the client (`initializationOptions`, then
//! `workspace/configuration` section `mapwright`, which wins). The project
//! file `mapwright.toml` is found by walking up from the mapper file (and no
//! further than its workspace folder) and read by [`crate::project`]; for now
//! the server keeps its `app` and `machine` keys (which application and
//! machine the mapper is written for) so application- and machine-aware
//! features can use them. Both are plain data here: the server decides when
//! to (re)load them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::project::PROJECT_FILE;

/// Client-side settings (`mapwright.*` in an editor's configuration).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    pub diagnostics: DiagnosticsSettings,
    pub completion: CompletionSettings,
    pub inlay_hints: InlayHintSettings,
    /// Application to assume when no `mapwright.toml` names one.
    pub app: Option<String>,
    /// Machine to assume when no `mapwright.toml` names one.
    pub machine: Option<String>,
    /// Where `mapwright.run` and `mapwright.optimize` run mappers: the URL of
    /// a `mapwright serve` instance (`http://host:port`); unset: the
    /// embedded simulator. `runtime` in `mapwright.toml` wins.
    pub runtime_url: Option<String>,
    /// The optimizer's proposer (`search`, `random`, `scalar`, `llm`,
    /// `hybrid`); `proposer` in `mapwright.toml` wins.
    pub proposer: Option<String>,
    /// `mapwright.llm.*`: the endpoint of the `llm` and `hybrid` proposers.
    pub llm: LlmSettings,
    /// `mapwright.optimize.*`
    pub optimize: OptimizeSettings,
}

/// `mapwright.llm.*` (each key of `[llm]` in `mapwright.toml` wins).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LlmSettings {
    /// Base URL of an OpenAI-compatible API (`http://127.0.0.1:8000/v1`).
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// Name of the environment variable holding the API key (the key itself
    /// never travels in settings).
    pub api_key_env: Option<String>,
}

/// `mapwright.optimize.*`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OptimizeSettings {
    /// Proposals after the mapper as written.
    pub iterations: usize,
    /// Seed of the proposers and the measurement noise.
    pub seed: u64,
    /// The relative gain over the mapper as written below which the best
    /// candidate is not applied on the simulator (0.02: 2 %);
    /// `[optimize] min_gain` in `mapwright.toml` wins.
    pub min_gain: f64,
    /// Save candidates and `report.json` under `.mapwright/runs/` next to
    /// the mapper file.
    pub save_runs: bool,
    /// Testing hook: pause this long after each candidate, so a test can
    /// edit the document or cancel while the loop runs. Keep 0.
    pub delay_ms: u64,
}

impl Default for OptimizeSettings {
    fn default() -> Self {
        OptimizeSettings {
            iterations: 10,
            seed: 0,
            min_gain: crate::optimize::verdict::DEFAULT_MIN_GAIN,
            save_runs: true,
            delay_ms: 0,
        }
    }
}

/// `mapwright.diagnostics.*`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DiagnosticsSettings {
    pub enable: bool,
    /// Quiet time after the last keystroke before diagnostics are computed.
    pub debounce_ms: u64,
    /// Most diagnostics sent to the editor per document (0: all); see
    /// [`super::publish_limit`] for which are chosen.
    pub max_published: usize,
}

impl Default for DiagnosticsSettings {
    fn default() -> Self {
        DiagnosticsSettings {
            enable: true,
            debounce_ms: 50,
            max_published: super::publish_limit::DEFAULT_MAX_PUBLISHED,
        }
    }
}

/// `mapwright.completion.*`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CompletionSettings {
    /// Offer statement templates with placeholders (when the client can).
    pub snippets: bool,
}

impl Default for CompletionSettings {
    fn default() -> Self {
        CompletionSettings { snippets: true }
    }
}

/// `mapwright.inlayHints.*`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct InlayHintSettings {
    /// Parameter names before the arguments of machine-model methods.
    pub parameter_names: bool,
}

impl Default for InlayHintSettings {
    fn default() -> Self {
        InlayHintSettings {
            parameter_names: true,
        }
    }
}

impl Settings {
    /// Reads settings from a JSON value: either the settings object itself
    /// or an object with a `mapwright` key (clients differ). Unknown keys are
    /// ignored; a value of the wrong type falls back to the current settings
    /// and is reported in the error.
    pub fn merged(&self, value: &serde_json::Value) -> Result<Settings, String> {
        let value = match value.get("mapwright") {
            Some(inner) => inner,
            None => value,
        };
        if value.is_null() {
            return Ok(self.clone());
        }
        let mut base = serde_json::to_value(self).map_err(|e| e.to_string())?;
        merge_json(&mut base, value);
        serde_json::from_value(base).map_err(|e| format!("invalid mapwright settings: {e}"))
    }
}

/// Deep-merges `patch` into `base` (objects key by key; anything else replaces).
fn merge_json(base: &mut serde_json::Value, patch: &serde_json::Value) {
    match (base, patch) {
        (serde_json::Value::Object(b), serde_json::Value::Object(p)) => {
            for (k, v) in p {
                merge_json(b.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

/// The parts of a `mapwright.toml` the server uses.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProjectConfig {
    /// The file it was read from (empty: the settings' fallback).
    pub path: PathBuf,
    /// `app = "circuit"` (a built-in name or a path to a description).
    pub app: Option<String>,
    /// `machine = "..."` (a preset or a path to a description).
    pub machine: Option<String>,
    /// `runtime = "embedded"`, `"command"` (the `[command]` program) or the
    /// URL of a `mapwright serve` instance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// `proposer = "search"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposer: Option<String>,
    /// `[llm] base_url`, `model`, `api_key_env`, `timeout_s`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_base_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_api_key_env: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_timeout_s: Option<u64>,
    /// `[llm] ca_file` as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_ca_file: Option<String>,
    /// `[optimize] min_gain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_gain: Option<f64>,
    /// `[command] template` and `timeout_s` (used when `runtime = "command"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_template: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_timeout_s: Option<u64>,
}

impl ProjectConfig {
    /// Reads a project file with the same reader as the CLI
    /// ([`crate::project::load`]), so both accept and reject the same files,
    /// and keeps the keys the server uses.
    pub fn load(path: &Path) -> Result<ProjectConfig, String> {
        let file = crate::project::load(path).map_err(|e| format!("{e:#}"))?;
        Ok(ProjectConfig {
            path: path.to_path_buf(),
            app: file.app,
            machine: file.machine,
            runtime: file.runtime,
            proposer: file.proposer,
            llm_base_url: file.llm.base_url,
            llm_model: file.llm.model,
            llm_api_key_env: file.llm.api_key_env,
            llm_timeout_s: file.llm.timeout_s,
            llm_ca_file: file.llm.ca_file,
            min_gain: file.optimize.min_gain,
            command_template: file.command.as_ref().map(|c| c.template.clone()),
            command_timeout_s: file.command.as_ref().and_then(|c| c.timeout_s),
        })
    }

    /// The folder relative paths in the file are read from (`None` for the
    /// settings' fallback).
    pub fn dir(&self) -> Option<&Path> {
        if self.path.as_os_str().is_empty() {
            None
        } else {
            self.path.parent()
        }
    }
}

/// The nearest `mapwright.toml` at or above the directory of `file`,
/// stopping after `root` (the workspace folder) when the file is inside it.
pub fn find_project_file(file: &Path, root: Option<&Path>) -> Option<PathBuf> {
    crate::project::find_from(file.parent()?, root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_merge_partial_objects_and_the_wrapped_form() {
        let s = Settings::default()
            .merged(&serde_json::json!({"mapwright": {"diagnostics": {"debounceMs": 5}}}))
            .unwrap();
        assert_eq!(s.diagnostics.debounce_ms, 5);
        assert!(s.diagnostics.enable);
        assert_eq!(s.diagnostics.max_published, 200);
        let all = s
            .merged(&serde_json::json!({"diagnostics": {"maxPublished": 0}}))
            .unwrap();
        assert_eq!(
            (all.diagnostics.max_published, all.diagnostics.debounce_ms),
            (0, 5)
        );
        let s = s
            .merged(&serde_json::json!({"completion": {"snippets": false}, "app": "circuit"}))
            .unwrap();
        assert_eq!(s.diagnostics.debounce_ms, 5);
        assert!(!s.completion.snippets);
        assert_eq!(s.app.as_deref(), Some("circuit"));
        assert!(s.merged(&serde_json::json!({"diagnostics": 3})).is_err());
        assert_eq!(s.merged(&serde_json::Value::Null).unwrap(), s);
    }

    #[test]
    fn runtime_optimizer_and_llm_settings_use_the_editors_names() {
        let s = Settings::default()
            .merged(&serde_json::json!({
                "runtimeUrl": "http://127.0.0.1:7878",
                "proposer": "hybrid",
                "llm": {"baseUrl": "http://localhost:11434/v1", "model": "qwen", "apiKeyEnv": "K"},
                "optimize": {"iterations": 3, "delayMs": 5, "minGain": 0.05},
            }))
            .unwrap();
        assert_eq!(s.runtime_url.as_deref(), Some("http://127.0.0.1:7878"));
        assert_eq!(s.proposer.as_deref(), Some("hybrid"));
        assert_eq!(s.llm.base_url.as_deref(), Some("http://localhost:11434/v1"));
        assert_eq!(s.llm.model.as_deref(), Some("qwen"));
        assert_eq!(s.llm.api_key_env.as_deref(), Some("K"));
        assert_eq!(s.optimize.iterations, 3);
        assert_eq!(s.optimize.delay_ms, 5);
        assert_eq!(s.optimize.min_gain, 0.05);
        assert_eq!(Settings::default().optimize.min_gain, 0.02);
        assert!(s.optimize.save_runs);
        // The editors send `null` for unset values.
        let s = s
            .merged(&serde_json::json!({"runtimeUrl": null, "llm": {"model": null}}))
            .unwrap();
        assert_eq!(s.runtime_url, None);
        assert_eq!(s.llm.model, None);
    }

    #[test]
    fn project_files_are_found_upwards_and_parsed() {
        let dir = std::env::temp_dir().join(format!("mapwright-config-{}", std::process::id()));
        let nested = dir.join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::write(
            dir.join(PROJECT_FILE),
            "app = \"circuit\"\nmachine = \"p100x4\"\nproposer = \"search\"\n",
        )
        .unwrap();
        let found = find_project_file(&nested.join("m.mapper"), None).unwrap();
        assert_eq!(found, dir.join(PROJECT_FILE));
        let cfg = ProjectConfig::load(&found).unwrap();
        assert_eq!(cfg.app.as_deref(), Some("circuit"));
        assert_eq!(cfg.machine.as_deref(), Some("p100x4"));
        assert_eq!(cfg.proposer.as_deref(), Some("search"));
        assert_eq!(cfg.dir(), Some(dir.as_path()));
        // The search stops at the workspace root.
        assert_eq!(
            find_project_file(&nested.join("m.mapper"), Some(&dir.join("a"))),
            None
        );
        for bad in ["app = 3", "app = ", "unknown_key = 1"] {
            std::fs::write(dir.join(PROJECT_FILE), bad).unwrap();
            let err = ProjectConfig::load(&found).unwrap_err();
            assert!(err.contains(PROJECT_FILE), "{err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
