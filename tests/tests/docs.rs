//! The docs cannot drift from the tree or the code:
//! - every relative link and anchor in README.md, `docs/`, the editor
//!   packages' pages and the benchmarks' RESULTS and README files
//!   resolves (anchors as GitHub makes them from headings);
//! - every `mapwright` command in the README's shell blocks parses with the
//!   real command line (clap), and the applications and machines they name
//!   load;
//! - `bench/` holds no file that no page names;
//! - `docs/settings.md` lists exactly the settings the code reads: the
//!   server's `Settings`, the VS Code extension's configuration and the
//!   keys `mapwright.toml` accepts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::Parser;
use serde::de::{self, Deserialize, Visitor};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

// ----- Markdown, as much of it as links and headings need ---------------

/// The text outside fenced code blocks, line by line (fence lines and the
/// lines inside are blanked, so line numbers stay).
fn prose_lines(text: &str) -> Vec<String> {
    let mut fence: Option<&str> = None;
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            match fence {
                Some(f) if trimmed.starts_with(f) => {
                    fence = None;
                    String::new()
                }
                Some(_) => String::new(),
                None if trimmed.starts_with("```") || trimmed.starts_with("~~~") => {
                    fence = Some(&trimmed[..3]);
                    String::new()
                }
                None => line.to_string(),
            }
        })
        .collect()
}

/// `line` with the inside of each inline code span blanked (a `](` there is
/// no link).
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(c);
        } else if in_code {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// The targets of inline links and images on a line: `[text](target)`.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut targets = Vec::new();
    let mut rest = line.as_str();
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let Some(end) = after.find(')') else { break };
        // `(target "title")`: the target is the first word.
        if let Some(target) = after[..end].split_whitespace().next() {
            targets.push(target.trim_matches(|c| c == '<' || c == '>').to_string());
        }
        rest = &after[end..];
    }
    targets
}

/// GitHub's anchor for a heading: the rendered text lower-cased, with
/// everything but letters, digits, `-`, `_` and spaces dropped, and spaces
/// as `-`.
fn slug(heading: &str) -> String {
    // A link in a heading renders as its text.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor a Markdown file has: its headings' slugs (a repeated one
/// gets `-1`, `-2`, ...) and explicit `<a id=..>` / `<a name=..>`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(line[hashes..].trim().trim_end_matches('#'));
            let n = seen.entry(base.clone()).or_insert(0);
            out.insert(if *n == 0 {
                base.clone()
            } else {
                format!("{base}-{n}")
            });
            *n += 1;
        }
        for attr in ["id=\"", "name=\""] {
            let mut rest = line.as_str();
            while let Some(i) = rest.find(attr) {
                let after = &rest[i + attr.len()..];
                let end = after.find('"').unwrap_or(after.len());
                out.insert(after[..end].to_lowercase());
                rest = &after[end..];
            }
        }
    }
    out
}

/// The pages whose links are checked.
fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut pages = vec![
        root.join("README.md"),
        root.join("editors/README.md"),
        root.join("editors/vscode/README.md"),
        root.join("editors/nvim/README.md"),
    ];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("docs/ exists").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    for entry in std::fs::read_dir(root.join("bench"))
        .expect("bench/")
        .flatten()
    {
        for name in ["RESULTS.md", "README.md"] {
            let page = entry.path().join(name);
            if page.is_file() {
                pages.push(page);
            }
        }
    }
    pages.sort();
    pages
}

/// What is wrong with each link of `page`, as `page:line: message`.
fn broken_links(page: &Path) -> Vec<String> {
    let text = read(page);
    let dir = page.parent().expect("a page has a folder");
    let mut broken = Vec::new();
    for (n, line) in prose_lines(&text).iter().enumerate() {
        for target in link_targets(line) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                page.to_path_buf()
            } else {
                dir.join(path)
            };
            let at = format!("{}:{}: `{target}`", page.display(), n + 1);
            if !file.exists() {
                broken.push(format!("{at}: no such file {}", file.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if file.extension().is_none_or(|e| e != "md") {
                broken.push(format!("{at}: an anchor into a file that is not Markdown"));
            } else if !anchors(&read(&file)).contains(&anchor.to_lowercase()) {
                broken.push(format!("{at}: no heading with anchor #{anchor}"));
            }
        }
    }
    broken
}

#[test]
fn slugs_are_githubs() {
    assert_eq!(slug("Which fixes are safe"), "which-fixes-are-safe");
    assert_eq!(slug("`mapwright.toml`"), "mapwrighttoml");
    assert_eq!(slug("Neovim (`editors/nvim`)"), "neovim-editorsnvim");
    assert_eq!(
        slug("Validation (`mapwright bench sim-validate`)"),
        "validation-mapwright-bench-sim-validate"
    );
    assert_eq!(slug("Real GPU (`cuda` backend)"), "real-gpu-cuda-backend");
    assert_eq!(slug("See [the codes](codes.md) here"), "see-the-codes-here");
    let doubled = anchors("# A\n## B\n```\n# not a heading\n```\n## B\n");
    assert_eq!(
        doubled.into_iter().collect::<Vec<_>>(),
        ["a", "b", "b-1"].map(String::from)
    );
}

#[test]
fn a_link_to_a_missing_file_or_heading_is_found() {
    let dir = std::env::temp_dir().join(format!("mapwright-docs-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("page.md");
    std::fs::write(
        &page,
        "# Top\n[ok](#top) [bad](#nowhere) [gone](missing.md) `[code](x.md)`\n\
         ```\n[fenced](y.md)\n```\n",
    )
    .unwrap();
    let broken = broken_links(&page);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(broken.len(), 2, "{broken:#?}");
    assert!(broken[0].contains("#nowhere"), "{broken:#?}");
    assert!(broken[1].contains("missing.md"), "{broken:#?}");
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let pages = pages();
    assert!(pages.len() > 10, "{pages:?}");
    let broken: Vec<String> = pages.iter().flat_map(|p| broken_links(p)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// `bench/` holds the benchmarks' scripts, inputs and RESULTS files, not
/// the raw output of past runs (the git history keeps that): every file
/// there is a README or RESULTS page, or a page names it.
#[test]
fn bench_holds_nothing_the_docs_do_not_cite() {
    let text: String = pages().iter().map(|p| read(p)).collect();
    let mut uncited = Vec::new();
    let mut dirs = vec![root().join("bench")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a folder").flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "__pycache__" {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let stem = name.split('.').next().unwrap_or(&name);
            if !matches!(name.as_str(), "README.md" | "RESULTS.md") && !text.contains(stem) {
                uncited.push(path.display().to_string());
            }
        }
    }
    assert!(
        uncited.is_empty(),
        "files under bench/ that no page names (raw output belongs in the git history, \
         the figures in a RESULTS.md): {uncited:#?}"
    );
}

#[test]
fn the_readme_is_short() {
    let lines = read(&root().join("README.md")).lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; move detail into docs/"
    );
}

// ----- The README's commands ----------------------------------------------

/// Splits a shell command line into words (single and double quotes, `\`
/// escapes); enough for the README's commands.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                    in_word = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, '#') if !in_word => break,
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The commands of the README's ```sh blocks, continuation lines joined,
/// comments and `export`s dropped.
fn readme_shell_commands() -> Vec<String> {
    let readme = read(&root().join("README.md"));
    let mut commands = Vec::new();
    for block in readme.split("```sh\n").skip(1) {
        let body = block.split("```").next().unwrap_or("");
        let mut pending = String::new();
        for line in body.lines() {
            let line = line.trim();
            if let Some(start) = line.strip_suffix('\\') {
                pending.push_str(start);
                pending.push(' ');
                continue;
            }
            pending.push_str(line);
            let command = std::mem::take(&mut pending);
            if !command.is_empty() && !command.starts_with('#') {
                commands.push(command);
            }
        }
    }
    commands
}

/// The `mapwright` arguments of a command that runs the CLI (`mapwright
/// ...` or `cargo run ... -p mapwright -- ...`), or `None`.
fn cli_arguments(command: &str) -> Option<Vec<String>> {
    let words = shell_words(command);
    match words.first().map(String::as_str) {
        Some("mapwright") => Some(words[1..].to_vec()),
        Some("cargo") if words.get(1).is_some_and(|w| w == "run") => {
            let package = words.windows(2).find(|w| w[0] == "-p").map(|w| &w[1]);
            if package.is_some_and(|p| p == "mapwright") {
                let dashes = words.iter().position(|w| w == "--")?;
                Some(words[dashes + 1..].to_vec())
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Parses `args` with the real command line and loads the application and
/// machine they name.
fn check_cli_arguments(command: &str, args: &[String]) {
    let argv = std::iter::once("mapwright".to_string()).chain(args.iter().cloned());
    if let Err(e) = mapwright::cli::Cli::try_parse_from(argv) {
        panic!("`{command}` does not parse:\n{e}");
    }
    let value = |flag: &str| args.windows(2).find(|w| w[0] == flag).map(|w| w[1].clone());
    let root = root();
    if let Some(app) = value("--app") {
        let loaded = mapwright::project::load_app(&app, Some(&root));
        assert!(loaded.is_ok(), "`{command}`: --app {app}: {loaded:?}");
    }
    if let Some(machine) = value("--machine") {
        let loaded = mapwright::project::load_machine(&machine, Some(&root));
        assert!(
            loaded.is_ok(),
            "`{command}`: --machine {machine}: {loaded:?}"
        );
    }
}

#[test]
fn the_first_screen_commands_exist() {
    let commands = readme_shell_commands();
    let (run, test) = (&commands[0], &commands[1]);
    let args = cli_arguments(run).unwrap_or_else(|| panic!("`{run}` runs the CLI"));
    check_cli_arguments(run, &args);
    // The mapper it names ships with the repository.
    let mapper = args
        .iter()
        .find(|a| a.ends_with(".mapper"))
        .unwrap_or_else(|| panic!("`{run}` names a mapper"));
    assert!(root().join(mapper).is_file(), "{mapper}");
    // `cargo test --workspace` needs a workspace manifest.
    assert_eq!(test, "cargo test --workspace");
    assert!(read(&root().join("Cargo.toml")).contains("[workspace]"));
}

#[test]
fn every_cli_command_in_the_readme_parses() {
    let commands = readme_shell_commands();
    let cli: Vec<_> = commands
        .iter()
        .filter_map(|c| cli_arguments(c).map(|a| (c, a)))
        .collect();
    assert!(cli.len() >= 3, "{commands:#?}");
    for (command, args) in cli {
        check_cli_arguments(command, &args);
    }
}

#[test]
fn a_misspelt_flag_does_not_parse() {
    let args = cli_arguments("mapwright optimize m.mapper --app cannon --dif").unwrap();
    let argv = std::iter::once("mapwright".to_string()).chain(args);
    assert!(mapwright::cli::Cli::try_parse_from(argv).is_err());
    assert_eq!(
        shell_words("a --command './x -m {mapper}' \"b c\" # comment"),
        ["a", "--command", "./x -m {mapper}", "b c"]
    );
}

// ----- Settings -------------------------------------------------------------

/// The first cells (backquoted) of the table rows under the `## ` heading
/// that starts with `heading`.
fn table_keys(page: &str, heading: &str) -> BTreeSet<String> {
    let lines = prose_lines(page);
    let start = lines
        .iter()
        .position(|l| l.starts_with("## ") && l[3..].starts_with(heading))
        .unwrap_or_else(|| panic!("a `## {heading}` section"));
    lines[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with("## "))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(key, _)| key.to_string()))
        .collect()
}

/// `prefix.key` for every leaf of a JSON object.
fn leaves(value: &serde_json::Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value.as_object() {
        Some(map) if !map.is_empty() => {
            for (k, v) in map {
                leaves(v, &format!("{prefix}.{k}"), out);
            }
        }
        _ => {
            out.insert(prefix.to_string());
        }
    }
}

/// The settings the VS Code extension declares (`contributes.configuration`).
fn vscode_settings() -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let package: serde_json::Value =
        serde_json::from_str(&read(&root().join("editors/vscode/package.json"))).unwrap();
    let configuration = &package["contributes"]["configuration"];
    let sections = match configuration.as_array() {
        Some(list) => list.clone(),
        None => vec![configuration.clone()],
    };
    for section in sections {
        let properties = section["properties"].as_object().expect("properties");
        keys.extend(properties.keys().cloned());
    }
    keys
}

/// The settings the code reads: the server's and the VS Code extension's.
fn settings_in_code() -> BTreeSet<String> {
    let mut keys = vscode_settings();
    let server = serde_json::to_value(mapwright::lsp::config::Settings::default()).unwrap();
    leaves(&server, "mapwright", &mut keys);
    keys
}

/// A deserializer that answers nothing and records the fields a struct
/// asks for: serde's own list of the keys a type accepts.
struct FieldNames<'a>(&'a mut Vec<&'static str>);

#[derive(Debug)]
struct Recorded;

impl std::fmt::Display for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("fields recorded")
    }
}

impl std::error::Error for Recorded {}

impl de::Error for Recorded {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Recorded
    }
}

impl<'de> de::Deserializer<'de> for FieldNames<'_> {
    type Error = Recorded;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Recorded> {
        Err(Recorded)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Recorded> {
        self.0.extend_from_slice(fields);
        Err(Recorded)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

fn fields_of<T: for<'de> Deserialize<'de>>() -> Vec<&'static str> {
    let mut fields = Vec::new();
    let _ = T::deserialize(FieldNames(&mut fields));
    assert!(
        !fields.is_empty(),
        "{} is a struct",
        std::any::type_name::<T>()
    );
    fields
}

/// The keys `mapwright.toml` accepts, a section's as `section.key`.
fn project_keys_in_code() -> BTreeSet<String> {
    use mapwright::project::{CommandSection, LlmSection, OptimizeSection, ProjectFile};
    let sections = [
        ("llm", fields_of::<LlmSection>()),
        ("optimize", fields_of::<OptimizeSection>()),
        ("command", fields_of::<CommandSection>()),
    ];
    let mut keys = BTreeSet::new();
    for field in fields_of::<ProjectFile>() {
        match sections.iter().find(|(name, _)| *name == field) {
            Some((name, inner)) => keys.extend(inner.iter().map(|k| format!("{name}.{k}"))),
            None => {
                keys.insert(field.to_string());
            }
        }
    }
    keys
}

/// Fails with what `page` lists and `code` does not, and the reverse.
fn assert_lists_exactly(page: &str, listed: &BTreeSet<String>, code: &BTreeSet<String>) {
    let missing: Vec<_> = code.difference(listed).collect();
    let extra: Vec<_> = listed.difference(code).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{page} vs the code: not listed {missing:?}; listed but not in the code {extra:?}"
    );
}

#[test]
fn the_settings_page_lists_exactly_the_settings_the_code_reads() {
    let page = read(&root().join("docs/settings.md"));
    let listed = table_keys(&page, "Editor settings");
    let code = settings_in_code();
    assert_lists_exactly("docs/settings.md", &listed, &code);
}

#[test]
fn the_settings_page_lists_exactly_the_project_file_keys() {
    let page = read(&root().join("docs/settings.md"));
    let listed = table_keys(&page, "`mapwright.toml`");
    let code = project_keys_in_code();
    assert!(
        code.contains("app") && code.contains("llm.base_url"),
        "{code:?}"
    );
    assert_lists_exactly("docs/settings.md", &listed, &code);
}

/// The extension's own page (shown in VS Code's Extensions view) lists the
/// settings it declares.
#[test]
fn the_extension_page_lists_the_extensions_settings() {
    let page = read(&root().join("editors/vscode/README.md"));
    let listed = table_keys(&page, "Settings");
    let declared = vscode_settings();
    assert_lists_exactly("editors/vscode/README.md", &listed, &declared);
}
