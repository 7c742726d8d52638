//! No recursion limit a user can hit (issue 14): every expression shape,
//! nested or chained 100,000 times, gets E0125 from the parser, and the
//! deepest trees the parser accepts go through every later pass on a 2 MiB
//! stack (the size of a test thread, and of tokio's worker threads in the
//! language server) in this debug build.

mod lsp_support;

use std::process::Command;

use lsp_support::*;
use mapwright_tests::passes::{builtin_targets, run, run_caught};
use serde_json::json;

const N: usize = 100_000;

/// Each shape repeated `n` times, as a whole statement.
fn shapes(n: usize) -> Vec<(&'static str, String)> {
    vec![
        (
            "method chain",
            format!("m = Machine(GPU);\nx = m{};\n", ".merge(0, 1)".repeat(n)),
        ),
        ("property chain", format!("x = t{};\n", ".size".repeat(n))),
        ("index chain", format!("x = t{};\n", "[0]".repeat(n))),
        ("slice chain", format!("x = t{};\n", "[0:1]".repeat(n))),
        ("call chain", format!("x = f{};\n", "(1)".repeat(n))),
        (
            "nested calls",
            format!("x = {}1{};\n", "f(".repeat(n), ")".repeat(n)),
        ),
        (
            "nested indices",
            format!("x = {}0{};\n", "t[".repeat(n), "]".repeat(n)),
        ),
        ("unary minus", format!("x = {}1;\n", "-".repeat(n))),
        (
            "unpack",
            format!("x = t[{}t{}];\n", "*(".repeat(n), ")".repeat(n)),
        ),
        ("negation", format!("x = {}a;\n", "!".repeat(n))),
        (
            "parentheses",
            format!("x = {}1{};\n", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "nested tuples",
            format!("x = {}1{};\n", "(1, ".repeat(n), ")".repeat(n)),
        ),
        ("ternary chain", format!("x = a{};\n", " ? 1 : a".repeat(n))),
        (
            "nested ternaries",
            format!("x = {}1{};\n", "a ? ".repeat(n), " : 2".repeat(n)),
        ),
        ("binary chain", format!("x = 1{};\n", " + 1".repeat(n))),
        ("comparison chain", format!("x = a{};\n", " == a".repeat(n))),
        (
            "nested comprehensions",
            format!("x = {}1{};\n", "tuple(".repeat(n), " for i in t)".repeat(n)),
        ),
        (
            "return in a function",
            format!("def f(int a) {{ return a{}; }}\n", " * a".repeat(n)),
        ),
        ("print", format!("print(\"%d\", 1{});\n", " % 1".repeat(n))),
    ]
}

#[test]
fn every_shape_at_one_hundred_thousand_is_e0125_not_a_stack_overflow() {
    // The default test thread: 2 MiB of stack.
    for (name, src) in shapes(N) {
        let outcome = run(&src, &[]);
        assert!(
            outcome.codes.contains(&"E0125"),
            "{name}: {:?}",
            outcome.codes
        );
        // Diagnostics stay small: no snippet prints the 100,000-long line.
        assert!(outcome.rendered_bytes < 4 * src.len() + 10_000, "{name}");
    }
}

#[test]
fn every_shape_is_resolved_against_an_application_without_overflow() {
    let targets = builtin_targets();
    for (name, src) in shapes(N) {
        let with_mapping = format!("Task * GPU;\n{src}");
        assert!(run_caught(&with_mapping, &targets[..1]).is_ok(), "{name}");
    }
}

/// Depth of `x = t.size.size...` with `n` links, plus the assignment.
fn chain(n: usize) -> String {
    format!("x = t{};\n", ".size".repeat(n))
}

#[test]
fn the_limit_is_exact_and_accepted_trees_are_kept() {
    use mapwright_grammar::parser::{parse, MAX_NESTING};
    // The parser counts its two entry levels (expression, operand) and each
    // link: a chain of MAX_NESTING - 2 links is the longest accepted.
    let ok = parse(&chain(MAX_NESTING - 2));
    assert!(!ok.diagnostics.iter().any(|d| d.code == "E0125"));
    let bad = parse(&chain(MAX_NESTING - 1));
    assert!(bad.diagnostics.iter().any(|d| d.code == "E0125"));
    // Mixed: a nested operand, then a chain. The parser's counter restarts
    // after the operand; the tree check still sees the whole depth.
    let mixed = format!(
        "x = {}t{}{};\n",
        "(".repeat(MAX_NESTING / 2 - 1),
        ")".repeat(MAX_NESTING / 2 - 1),
        ".size".repeat(MAX_NESTING - 2)
    );
    let parsed = parse(&mixed);
    assert!(parsed.diagnostics.iter().any(|d| d.code == "E0125"));
    for stmt in &parsed.program.stmts {
        for e in stmt.exprs() {
            assert!(e.deeper_than(MAX_NESTING).is_none());
        }
    }
}

/// The deepest program the parser accepts, for every shape: one function
/// per shape, each calling the previous one (the checker infers return types
/// through calls, so its recursion multiplies), and mapping statements that
/// make resolution and the evaluator run them.
fn deepest_accepted() -> String {
    use mapwright_grammar::parser::{parse, MAX_NESTING};
    // Shapes that evaluate without error first, so the evaluator runs them
    // (it stops at the first runtime error).
    let bodies = [
        |n: usize| format!("1{}", " + 1".repeat(n)),
        |n: usize| format!("{}1", "-".repeat(n)),
        |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n)),
        |n: usize| format!("{}a{}", "g(".repeat(n), ")".repeat(n)),
        |n: usize| format!("{}1{}", "a > 0 ? ".repeat(n), " : 2".repeat(n)),
        |n: usize| format!("{}1{}", "(1, ".repeat(n), ")".repeat(n)),
        |n: usize| format!("m{}", "[0]".repeat(n)),
        |n: usize| format!("m{}", ".size".repeat(n)),
    ];
    let mut src = String::from(
        "Task * GPU;\nIndexTaskMap * f0;\nmgpu = Machine(GPU);\ndef g(int a) { return a; }\n",
    );
    let mut fi = 0;
    for body in bodies {
        // The deepest body this shape allows (the search keeps the test honest
        // when the limit or the tree shapes change).
        let mut n = 1;
        while n < 4 * MAX_NESTING {
            let probe = format!("def p(int a) {{ m = mgpu; return {}; }}\n", body(n + 1));
            if parse(&probe).diagnostics.iter().any(|d| d.code == "E0125") {
                break;
            }
            n += 1;
        }
        for _ in 0..3 {
            src.push_str(&format!(
                "def f{fi}(Task task) {{ m = mgpu; a = 1; x = {}; return f{}(task); }}\n",
                body(n),
                fi + 1
            ));
            fi += 1;
        }
    }
    src.push_str(&format!("def f{fi}(Task task) {{ return mgpu[0, 0]; }}\n"));
    assert!(
        !parse(&src).diagnostics.iter().any(|d| d.code == "E0125"),
        "the program must be accepted"
    );
    src
}

#[test]
fn the_deepest_accepted_program_passes_every_pass_on_a_2_mib_stack() {
    let src = deepest_accepted();
    let targets = builtin_targets();
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || run(&src, &targets).codes.len())
        .unwrap();
    handle.join().expect("no overflow, no panic");
}

#[test]
fn check_binary_reports_e0125_for_a_long_method_chain() {
    let dir = std::env::temp_dir().join(format!("mapwright-deep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("chain.mapper");
    std::fs::write(&file, &shapes(N)[0].1).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright-under-test"))
        .args(["check", file.to_str().unwrap(), "--app", "circuit"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("error[E0125]"), "{stdout}");
    // The 1.2 MB line is not printed whole.
    assert!(stdout.len() < 5_000, "{} bytes", stdout.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn language_server_survives_deep_documents_and_serves_every_feature_on_them() {
    let mut s = Server::start();
    let uri = "file:///deep.mapper";
    let deep = shapes(N)[0].1.clone();
    let diags = s.open(uri, &deep);
    assert!(diags.iter().any(|d| d["code"] == "E0125"), "{diags:?}");
    // The deepest accepted program: every feature at many positions.
    let src = deepest_accepted();
    let uri2 = "file:///deepest.mapper";
    s.open(uri2, &src);
    let doc = json!({"uri": uri2});
    s.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": doc}),
    );
    s.request("textDocument/documentSymbol", json!({"textDocument": doc}));
    s.request("textDocument/foldingRange", json!({"textDocument": doc}));
    s.request(
        "textDocument/formatting",
        json!({"textDocument": doc, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    let lines = src.lines().count() as u32;
    s.request(
        "textDocument/inlayHint",
        json!({"textDocument": doc, "range": {"start": {"line": 0, "character": 0}, "end": {"line": lines, "character": 0}}}),
    );
    for offset in (0..src.len()).step_by(97) {
        let at = s.at(uri2, &src, offset);
        s.request("textDocument/hover", at.clone());
        s.request("textDocument/completion", at.clone());
        s.request("textDocument/signatureHelp", at.clone());
        s.request("textDocument/definition", at);
    }
    assert_eq!(s.shutdown(), Some(0));
}
