//! The language server's modules (`server/src/lsp/`) must not import each
//! other in a circle: providers depend on the analysis and on the shared
//! provider types, never on each other (issue 16). This test reads the
//! sources, parses every path into a sibling module (`use super::...`,
//! grouped imports, `crate::lsp::...` and inline `super::name::` paths) in
//! the non-test code of each file, and checks the graph has no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module name -> the sibling modules it refers to.
type Graph = BTreeMap<String, BTreeSet<String>>;

fn lsp_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/lsp")
}

/// The code of a file without its `#[cfg(test)]` module and without comment
/// lines (doc links such as [`super::app_aware`] are not imports).
fn non_test_code(text: &str) -> String {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first segments of the items of a `{...}` group starting at `s[0]`.
fn group_heads(s: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut item_start = true;
    for (i, c) in s.char_indices() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    item_start = true;
                    continue;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => {
                item_start = true;
                continue;
            }
            _ => {}
        }
        if depth == 1 && item_start && !c.is_whitespace() {
            item_start = false;
            let name = ident_at(&s[i..]);
            if !name.is_empty() {
                heads.push(name.to_string());
            }
        }
    }
    heads
}

/// Every sibling module named after `prefix` (`super::` or `crate::lsp::`).
fn referenced_modules(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut from = 0;
    while let Some(found) = code[from..].find(prefix) {
        let at = from + found;
        let before = code[..at].chars().last();
        let after = &code[at + prefix.len()..];
        from = at + prefix.len();
        // `super::super::x` or `a::super::` are not sibling paths.
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if after.starts_with('{') {
            out.extend(group_heads(after));
        } else {
            let name = ident_at(after);
            if !name.is_empty() && name != "super" {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// The import graph of `dir`'s modules: `name.rs` is module `name`; the
/// files of a folder `name/` belong to module `name` (their `super::` is that
/// module itself, so only their `crate::lsp::` paths count).
fn module_graph(dir: &Path) -> Graph {
    module_graph_of(dir, "crate::lsp::")
}

/// [`module_graph`] of any folder whose modules are `prefix...` from the
/// crate root (`crate::optimize::`).
fn module_graph_of(dir: &Path, prefix: &str) -> Graph {
    let mut graph = Graph::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read the module folder")
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let mut subs: Vec<PathBuf> = std::fs::read_dir(&path)
                .expect("read submodule folder")
                .map(|e| e.expect("dir entry").path())
                .filter(|p| p.extension().is_some_and(|x| x == "rs"))
                .collect();
            subs.sort();
            for sub in subs {
                let code = non_test_code(&std::fs::read_to_string(&sub).unwrap());
                graph
                    .entry(stem.clone())
                    .or_default()
                    .extend(referenced_modules(&code, prefix));
            }
            continue;
        }
        if path.extension().is_none_or(|x| x != "rs") || stem == "mod" {
            continue;
        }
        let code = non_test_code(&std::fs::read_to_string(&path).unwrap());
        let mut deps = referenced_modules(&code, "super::");
        deps.extend(referenced_modules(&code, prefix));
        graph.entry(stem).or_default().extend(deps);
    }
    for (name, deps) in graph.iter_mut() {
        deps.remove(name);
    }
    graph
}

/// A cycle of the graph (its modules in order), if it has one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &Graph,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = path.iter().position(|n| n == node).unwrap();
                let mut cycle = path[from..].to_vec();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_string(), Mark::Open);
        path.push(node.to_string());
        for dep in graph.get(node).into_iter().flatten() {
            // Only edges between modules of the folder.
            if graph.contains_key(dep) {
                if let Some(c) = visit(dep, graph, marks, path) {
                    return Some(c);
                }
            }
        }
        path.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if let Some(c) = visit(node, graph, &mut marks, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn lsp_modules_import_each_other_without_a_cycle() {
    let graph = module_graph(&lsp_dir());
    // The parse sees the modules and the imports it must see.
    for m in [
        "providers",
        "completion",
        "hover",
        "inlay",
        "app_aware",
        "server",
    ] {
        assert!(graph.contains_key(m), "module {m} not found: {graph:?}");
    }
    assert!(graph["providers"].contains("completion"), "{graph:?}");
    assert!(graph["server"].contains("state"), "{graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "the LSP modules import each other in a circle: {}",
            cycle.join(" -> ")
        );
    }
}

/// The optimizer's modules, its proposers and the simulator's import each
/// other in no circle either (issue 48: `llm` and `structured` did, and
/// `space` and `pins`, and `sim/gemm` and `sim/plan`).
#[test]
fn optimizer_proposer_and_simulator_modules_import_each_other_without_a_cycle() {
    let server = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let runtime = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../runtime/src");
    for (dir, prefix, must) in [
        (
            server.join("optimize"),
            "crate::optimize::",
            ["space", "pins"],
        ),
        (
            server.join("optimize/proposers"),
            "crate::optimize::proposers::",
            ["llm", "structured"],
        ),
        (runtime.join("sim"), "crate::sim::", ["gemm", "plan"]),
    ] {
        let graph = module_graph_of(&dir, prefix);
        let dir = dir.display();
        for m in must {
            assert!(
                graph.contains_key(m),
                "{dir}: module {m} not found: {graph:?}"
            );
        }
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "{dir}: modules import each other in a circle: {}",
                cycle.join(" -> ")
            );
        }
    }
}

#[test]
fn the_parser_reads_grouped_inline_and_crate_paths() {
    let code = non_test_code(
        "use super::a::X;\nuse super::{b::{Y, Z}, c, d::e::F};\n\
         // see [`super::commented`]\n\
         fn f() { super::g::h(); crate::lsp::i::J; super::super::k::L; }\n\
         #[cfg(test)]\nmod tests { use super::*; use super::tested::T; }\n",
    );
    let mut found = referenced_modules(&code, "super::");
    found.extend(referenced_modules(&code, "crate::lsp::"));
    let expect: BTreeSet<String> = ["a", "b", "c", "d", "g", "i"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, expect);
}

#[test]
fn a_cycle_is_found_and_named() {
    let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")];
    let mut graph = Graph::new();
    for (from, to) in edges {
        graph.entry(from.into()).or_default().insert(to.into());
        graph.entry(to.into()).or_default();
    }
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    graph.get_mut("c").unwrap().remove("a");
    assert_eq!(find_cycle(&graph), None);
}
