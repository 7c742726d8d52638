//! Document links in `mapwright.toml`: the application and machine
//! description files it names (`app = "apps/mine.json"`, `machine =
//! "cluster.toml"`) link to those files, resolved relative to the project
//! file's folder (an absolute path stays as it is).
//!
//! A value that names no file gets no link: a built-in application or a
//! machine preset (`app = "circuit"`) is not a file, and a path to a missing
//! file is already reported where it matters, on the mapper the project file
//! configures ("configured in mapwright.toml"). A file that does not parse
//! as TOML gets no links either (the same reader rejects it for the mapper).
//!
//! Pure: no LSP types; byte spans of the toml text in, paths out.

use std::path::{Path, PathBuf};

use mapwright_grammar::Span;
use serde::Deserialize;
use toml::Spanned;

/// A description file named in a project file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescriptionLink {
    /// The path's text inside the string's quotes.
    pub span: Span,
    /// The file it names (exists when the link was made).
    pub target: PathBuf,
    /// `app` or `machine`.
    pub key: &'static str,
}

/// The keys of a project file that may name description files (every
/// other key is ignored here; the project reader checks them).
#[derive(Deserialize)]
struct DescriptionKeys {
    app: Option<Spanned<String>>,
    machine: Option<Spanned<String>>,
}

/// The links of project file `text`, whose folder is `dir`.
pub fn description_links(text: &str, dir: &Path) -> Vec<DescriptionLink> {
    let Ok(keys) = toml::from_str::<DescriptionKeys>(text) else {
        return Vec::new();
    };
    [("app", keys.app), ("machine", keys.machine)]
        .into_iter()
        .filter_map(|(key, value)| {
            let value = value?;
            let path = Path::new(value.get_ref());
            let target = if path.is_absolute() {
                path.to_path_buf()
            } else {
                dir.join(path)
            };
            if value.get_ref().is_empty() || !target.is_file() {
                return None;
            }
            Some(DescriptionLink {
                span: inside_quotes(text, value.span()),
                target,
                key,
            })
        })
        .collect()
}

/// The contents of a one-line string literal at `literal` (`"x"` or `'x'`);
/// the whole literal for the multi-line forms.
fn inside_quotes(text: &str, literal: std::ops::Range<usize>) -> Span {
    let raw = text.get(literal.clone()).unwrap_or("");
    let multi_line = raw.starts_with("\"\"\"") || raw.starts_with("'''");
    let quoted = raw.len() >= 2 && (raw.starts_with('"') || raw.starts_with('\''));
    if quoted && !multi_line {
        Span::new(literal.start + 1, literal.end - 1)
    } else {
        Span::new(literal.start, literal.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_dir, TempDir};

    /// A test's project folder, removed when the test ends.
    fn project_dir(name: &str) -> TempDir {
        let dir = temp_dir("mapwright-document-link", name);
        std::fs::create_dir_all(dir.join("apps")).unwrap();
        std::fs::write(dir.join("apps/mine.json"), "{}").unwrap();
        std::fs::write(dir.join("cluster.toml"), "").unwrap();
        dir
    }

    #[test]
    fn description_paths_link_to_their_files_relative_to_the_project() {
        let dir = project_dir("relative");
        let text = "# project\napp = \"apps/mine.json\"\nmachine = 'cluster.toml'\nproposer = \"search\"\n";
        let links = description_links(text, &dir);
        assert_eq!(links.len(), 2, "{links:?}");
        assert_eq!(links[0].key, "app");
        assert_eq!(links[0].span.text(text), "apps/mine.json");
        assert_eq!(links[0].target, dir.join("apps/mine.json"));
        assert_eq!(links[1].key, "machine");
        assert_eq!(links[1].span.text(text), "cluster.toml");
        assert_eq!(links[1].target, dir.join("cluster.toml"));
    }

    #[test]
    fn absolute_paths_stay_and_names_or_missing_files_get_no_link() {
        let dir = project_dir("absolute");
        let abs = dir.join("cluster.toml");
        let text = format!("app = \"circuit\"\nmachine = \"{}\"\n", abs.display());
        let links = description_links(&text, Path::new("/nonexistent"));
        assert_eq!(links.len(), 1, "{links:?}");
        assert_eq!(links[0].target, abs);
        let missing = "app = \"apps/gone.json\"\nmachine = \"p100x4\"\n";
        assert!(description_links(missing, &dir).is_empty());
        assert!(description_links("app = \"apps/mine.json\" oops", &dir).is_empty());
        assert!(description_links("app = \"\"\n", &dir).is_empty());
    }
}
