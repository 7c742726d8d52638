//! No source file holds more than 1,500 lines of non-test code (issue 16:
//! a newcomer finds one concern per file). Counted: every line of a `.rs`
//! file of every crate (grammar, runtime, server, the Legion ABI crate and
//! the tests' support library) up to its inline `#[cfg(test)] mod tests`,
//! and every line of the C and C++ sources under `runtime/legion/` (the
//! mapper's shell and the benchmark programs), comments and blank lines
//! included. Test code is left out: files named `tests.rs` and files under
//! a `tests/` or `benches/` folder.

use std::path::{Path, PathBuf};

/// The most lines of non-test code a file may have.
const MAX_LINES: usize = 1_500;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository")
        .to_path_buf()
}

/// The files under `dir` whose extension is one of `exts`, recursively.
fn source_files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            source_files(&path, exts, out);
        } else if path
            .extension()
            .is_some_and(|e| exts.iter().any(|x| e == *x))
        {
            out.push(path);
        }
    }
}

/// The files of `files` (path relative to the repository, text) over the
/// limit, with their counts, sorted.
fn over_limit(files: &[(String, String)]) -> Vec<(usize, String)> {
    let mut over: Vec<(usize, String)> = files
        .iter()
        .filter(|(path, _)| !is_test_file(Path::new(path)))
        .filter_map(|(path, text)| {
            let lines = non_test_lines(text);
            (lines > MAX_LINES).then(|| (lines, path.clone()))
        })
        .collect();
    over.sort();
    over
}

fn is_test_file(relative: &Path) -> bool {
    relative.file_name().is_some_and(|n| n == "tests.rs")
        || relative
            .components()
            .any(|c| c.as_os_str() == "tests" || c.as_os_str() == "benches")
}

/// The lines of `text` before its inline test module.
fn non_test_lines(text: &str) -> usize {
    // (`mod tests;`, a test module in its own file, is not a cut.)
    let code = match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => text,
    };
    code.lines().count()
}

#[test]
fn no_file_has_more_than_1500_lines_of_non_test_code() {
    let root = repo_root();
    let mut files = Vec::new();
    for krate in [
        "grammar/src",
        "runtime/src",
        "server/src",
        "runtime/legion/abi/src",
        "tests/src",
    ] {
        source_files(&root.join(krate), &["rs"], &mut files);
    }
    let rust = files.len();
    source_files(&root.join("runtime/legion"), &["cc", "h", "c"], &mut files);
    assert!(rust > 100, "only {rust} Rust files found");
    assert!(
        files.len() - rust >= 15,
        "the Legion C++ sources were not found"
    );
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|path| {
            let relative = path.strip_prefix(&root).unwrap().display().to_string();
            (relative, std::fs::read_to_string(path).unwrap())
        })
        .collect();
    let over = over_limit(&texts);
    assert!(
        over.is_empty(),
        "files over {MAX_LINES} lines of non-test code: {over:?}"
    );
}

#[test]
fn a_1501_line_cpp_file_is_over_the_limit() {
    let long = "int x;\n".repeat(1_501);
    let files = vec![
        ("runtime/legion/apps/big.cc".to_string(), long.clone()),
        (
            "runtime/legion/apps/ok.cc".to_string(),
            "int x;\n".repeat(1_500),
        ),
    ];
    assert_eq!(
        over_limit(&files),
        vec![(1_501, "runtime/legion/apps/big.cc".to_string())]
    );
}

#[test]
fn the_count_stops_at_the_inline_test_module_and_skips_test_files() {
    let text = "fn a() {}\n\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n";
    assert_eq!(non_test_lines(text), 2);
    assert_eq!(non_test_lines("fn a() {}\nfn b() {}\n"), 2);
    let declared = "#[cfg(test)]\nmod tests;\n\nfn a() {}\nfn b() {}\n";
    assert_eq!(non_test_lines(declared), 5);
    assert!(is_test_file(Path::new("runtime/src/eval/tests.rs")));
    assert!(is_test_file(Path::new("server/tests/lsp_module_graph.rs")));
    assert!(!is_test_file(Path::new("grammar/src/check/mod.rs")));
}
