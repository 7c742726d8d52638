//! Property tests: the lexer, parser and formatter never panic; formatting is
//! idempotent, keeps every comment and never changes the syntax tree — on every
//! corpus file, on mutated corpus files, on token soup and on generated programs.

use std::path::Path;

use mapwright_grammar::ast::without_spans;
use mapwright_grammar::format::{format, format_parsed, format_range};
use mapwright_grammar::token::{lex, KEYWORDS, OPERATORS};
use mapwright_grammar::{analyze, analyze_tree, parse, parse_tree, report, report_whole, Span};
use proptest::prelude::*;

fn corpus_files() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for folder in ["public", "probes"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/corpus")
            .join(folder);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".mapper") {
                let bytes = std::fs::read(e.path()).unwrap_or_default();
                out.push((name, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    out.sort();
    out
}

/// The parser lexes on demand and, in `parse_tree`, forgets tokens as it
/// goes: the outcome must be exactly that of lexing the whole file first
/// (same tree, same diagnostics under the cap, same tokens and comments).
fn streaming_agrees(source: &str) -> Result<(), String> {
    let full = parse(source);
    let tree = parse_tree(source);
    let lexed = lex(source);
    if full.tokens != lexed.tokens || full.comments != lexed.comments {
        return Err(format!("tokens differ from lex() on {source:?}"));
    }
    if tree.program != full.program || tree.diagnostics != full.diagnostics {
        return Err(format!("parse_tree differs from parse on {source:?}"));
    }
    if !tree.tokens.is_empty() || !tree.comments.is_empty() {
        return Err("parse_tree kept tokens".into());
    }
    let analyzed = analyze_tree(source).into_diagnostics();
    if analyzed != analyze(source).diagnostics() {
        return Err(format!("analyze_tree differs from analyze on {source:?}"));
    }
    // `mapwright check` keeps the diagnostics packed (`report`), and
    // checks one statement at a time.
    let report = report(source);
    if report.len() != analyzed.len() || !report.diagnostics().eq(analyzed) {
        return Err(format!("report differs from analyze_tree on {source:?}"));
    }
    if !report.diagnostics().eq(report_whole(source).diagnostics()) {
        return Err(format!("report differs from report_whole on {source:?}"));
    }
    // `format` parses keeping only where errors start (light diagnostics).
    if format(source) != format_parsed(source, &full) {
        return Err(format!("format differs from format_parsed on {source:?}"));
    }
    Ok(())
}

/// The streaming check collects each kind of diagnostic apart and applies
/// the cap kind by kind at the end: past the cap in each kind, and in all
/// of them at once, it keeps and counts what the whole-file check does.
#[test]
fn streaming_check_agrees_past_the_cap_of_each_kind() {
    let many = |n: usize, each: &dyn Fn(usize) -> String| (0..n).map(each).collect::<String>();
    let sources = [
        // second definitions and shadowed rules
        many(1200, &|i| format!("x = {i};\nTask a{} GPU;\n", i % 7)),
        // undefined names (a machine's name: its fix only once)
        many(1300, &|i| format!("x{i} = y{i} + mgpu[0];\n")),
        // unused functions, parameters and locals; a mapping function
        many(800, &|i| {
            format!("def f{i}(int a, int b, Task t) {{ c = 1; return m[0]; }}\n")
        }) + "m = Machine(GPU);\nIndexTaskMap t f1;\n",
        // uses before assignment
        many(1200, &|i| format!("x{i} = y{i};\n")) + &many(1200, &|i| format!("y{i} = 1;\n")),
        // statements' own diagnostics, entry functions defined later
        many(700, &|i| {
            format!("m = Machine(GPU);\nx{i} = m + 1;\nIndexTaskMap k{i} h{i};\ndef h{i}(Task t) {{ a = t.ipoint; return a; }}\n")
        }),
        // every kind, interleaved
        many(1500, &|i| {
            format!(
                "x{} = q{i} + z;\nTask a{} GPU;\ndef g{i}(int p) {{ return p + r; }}\nIndexTaskMap t g{};\nw{i} = v{};\nv{i} = 2;\n",
                i % 900,
                i % 3,
                i + 1,
                i + 5
            )
        }),
    ];
    for source in &sources {
        let streamed: Vec<_> = report(source).diagnostics().collect();
        let whole: Vec<_> = report_whole(source).diagnostics().collect();
        assert!(
            streamed.iter().any(|d| d.code == "I0001"),
            "not past the cap: {}",
            &source[..80]
        );
        if let Some(i) =
            (0..streamed.len().max(whole.len())).find(|&i| streamed.get(i) != whole.get(i))
        {
            panic!(
                "differs at #{i} on {}...: streamed {:?}, whole {:?}",
                &source[..80],
                streamed.get(i),
                whole.get(i)
            );
        }
    }
}

#[test]
fn streaming_parse_agrees_on_the_corpus_and_past_the_diagnostics_cap() {
    let mut sources: Vec<String> = corpus_files().into_iter().map(|(_, s)| s).collect();
    assert!(!sources.is_empty(), "no corpus");
    // Over the cap: lexical and syntax diagnostics interleaved, reserved
    // words as names (their fix renames across the file), bad runs.
    sources.push("x = ;\n$ @ !\nTask = 1;\ny = m[;\n\"abc\n".repeat(700));
    sources.push("def f(Task t):\n  return 0\n$$ é #c\r\nz = (1\n".repeat(400));
    // Recovery forgets the tokens it skips: a statement that fails early
    // (nested too deep, an unmatched `{`, a keyword on a new line) and
    // what follows it.
    let deep = format!("x = {}1{};\n", "(".repeat(5000), ")".repeat(5000));
    sources.push(format!("a = 1;\n{deep}b = a;\n{deep}Task * GPU;\n"));
    sources.push("y = { 1 + (2 ;\nTask t GPU;\nz = m[1 {\n}\n;\nw = 2;\n".repeat(50));
    sources.push(format!(
        "p = {}\nTask * GPU;\nq = 1 +\n",
        "(1 + ".repeat(3000)
    ));
    // `check` (`report`) leaves broken top-level statements out of its
    // tree, but a missing machine is inserted where the first statement
    // starts, broken or not (found by `mutated_corpus_files_never_panic`).
    sources.push(
        "def f task) {\n  return mgpu[0];\n}\n\ndef g(Task t) {\n  return mgpu[0];\n}\n".into(),
    );
    sources.push("Task GPU\n$ @\nx = mgpu[0];\n".into());
    // An error where one statement ends and the next begins, with no space
    // between: it touches both, and the streaming formatter once forgot it
    // for the second (found by `token_soup_never_panics_and_keeps_comments`).
    sources.push("Task;tuple=TaskTask;".into());
    // The streaming check's corner cases: a function reading a machine
    // assigned later, a name first a global then a function (and the
    // reverse), parameters named twice, a mapping function defined after
    // its statement or assigned as a variable, recursion, top-level
    // comprehension variables, rules repeated under several keys.
    sources.push(
        "def f(Task t) { return m[0, 1, 2] + m; }\nIndexTaskMap a f;\nm = Machine(GPU);\nq = m[0,0,0];\n"
            .into(),
    );
    sources.push("f = 1;\ndef f(int a, Task a) { return f(a); }\ndef g(Task t) { x = 1; x = 2; return g; }\ng = 2;\nSingleTaskMap t g;\nIndexTaskMap t f;\n".into());
    sources.push("IndexTaskMap a,b late;\nx = y + mgpu;\ny = tuple(i for i in (1, 2));\ndef late(Task t) { return mgpu[tuple(j for j in t.ipoint)]; }\nz = mgpu;\nv = y;\n".into());
    sources.push("Task a,b GPU;\nTask b CPU;\nRegion * r GPU FBMEM;\nRegion * r GPU ZCMEM;\nLayout a 0 * SOA;\nLayout a 0 * AOS F_order C_order;\nInstanceLimit a 1;\nInstanceLimit a 2;\n".into());
    // A tuple spread into itself doubles: past 2^55 elements the streaming
    // check keeps the length whole (found by review), and past 2^64 the
    // length is unknown, not an overflow (a panic in debug builds); an
    // `auto_split` by an empty tuple of a machine merged down to nothing.
    let doubling: String = (1..70)
        .map(|i| format!("a{i} = (*a{}, *a{});\n", i - 1, i - 1))
        .collect();
    sources.push(format!(
        "a0 = (1, 2);\n{doubling}b = a54 + (1, 2);\nc = a69 + (1, 2);\nd = m[*a69];\n"
    ));
    sources.push(
        "m = Machine(GPU);\nt = (1, 2);\nx = m.merge(0,1).merge(0,0).auto_split(0, t[0:0]);\n"
            .into(),
    );
    // Function bodies parsed again (the streaming check keeps only the
    // headers): return types inferred by calls before the definitions,
    // through a chain of later functions, definitions right after a
    // statement missing its `;`, after a comment, after a broken
    // statement, and with `;`-less (Python-style) bodies.
    sources.push(
        "x = f(1) + 1;\ny = m[*g(2)];\nz = h;\ndef f(int a) { return g(a); }\n# g\ndef g(int b) { return (b, b * 2); }\nm = Machine(GPU)\ndef h(Task t) {\n  u = 1\n  return m[0, 0]\n}\nw = )( ;\ndef k(Task t) { return t.parent; }\nIndexTaskMap t h;\nv = k(1)[0] + f(1);\ndef never(Task t) { q = 1; }\nn = never(1) + 1;\n"
            .into(),
    );
    // Bodies parsed again with a keyword used as a name (whose fix, were
    // it built, lexes the whole file) and a broken statement, called
    // before and after the definition.
    sources.push(format!(
        "{}def f(int a) {{ size = a; x = (; return size; }}\ny = f(2);\n",
        "x0 = f(1);\n".repeat(30)
    ));
    for source in &sources {
        if let Err(e) = streaming_agrees(source) {
            panic!("{}", &e[..e.len().min(400)]);
        }
    }
}

fn comments_of(source: &str) -> Vec<String> {
    let mut c: Vec<String> = parse(source)
        .comments
        .iter()
        .map(|t| t.span.text(source).trim_end().to_string())
        .collect();
    c.sort();
    c
}

/// The invariants every formatter output must satisfy.
fn check_format_invariants(source: &str) -> Result<(), String> {
    let parsed = parse(source);
    let out = format(source);
    if comments_of(&out) != comments_of(source) {
        return Err(format!("comments changed:\n{source}\n=>\n{out}"));
    }
    if !parsed.has_errors() {
        let reparsed = parse(&out);
        if reparsed.has_errors() {
            return Err(format!(
                "formatting introduced errors:\n{source}\n=>\n{out}"
            ));
        }
        if without_spans(&reparsed.program) != without_spans(&parsed.program) {
            return Err(format!(
                "formatting changed the syntax tree:\n{source}\n=>\n{out}"
            ));
        }
        let again = format(&out);
        if again != out {
            return Err(format!("not idempotent:\n{out}\n=>\n{again}"));
        }
    }
    Ok(())
}

#[test]
fn formatter_invariants_hold_on_every_corpus_file() {
    let files = corpus_files();
    assert!(files.len() > 100, "corpus not found");
    for (name, source) in &files {
        if let Err(e) = check_format_invariants(source) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn range_formatting_agrees_with_whole_file_formatting_on_clean_files() {
    for (name, source) in corpus_files() {
        let parsed = parse(&source);
        if parsed.has_errors() {
            continue;
        }
        // Formatting every statement one by one gives the whole-file result
        // modulo blank lines between statements.
        let mut text = source.clone();
        let count = parsed.program.stmts.len();
        for i in (0..count).rev() {
            let stmts = parse(&text).program.stmts;
            let span = stmts[i].span;
            if let Some(edit) = format_range(&text, Span::new(span.start(), span.start())) {
                text = mapwright_grammar::diagnostic::apply_edits(&text, &[edit])
                    .expect("edit applies");
            }
        }
        assert_eq!(
            without_spans(&parse(&text).program),
            without_spans(&parsed.program),
            "{name}"
        );
        assert_eq!(comments_of(&text), comments_of(&source), "{name}");
    }
}

/// Pieces the generated sources are made of: every keyword and operator
/// of the lexer's tables, then names, numbers, strings, comments,
/// whitespace and characters the language does not know.
static TOKENS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    let tables = KEYWORDS.iter().chain(OPERATORS).map(|(_, text)| *text);
    tables
        .chain([
            "Machine", "x", "m", "f", "task", "0", "1", "42", "\"{}\"", "\"abc", "&", "# c\n",
            "// d\n", "\n", " ", "\t", "\r\n", "é", "$", "😀",
        ])
        .collect()
});

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec((0..TOKENS.len(), prop::bool::ANY), 0..80).prop_map(|picks| {
        let mut s = String::new();
        for (i, space) in picks {
            s.push_str(TOKENS[i]);
            if space {
                s.push(' ');
            }
        }
        s
    })
}

fn expr(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        (0u32..20).prop_map(|n| n.to_string()),
        prop::sample::select(vec!["x", "m", "task.ipoint", "m.size", "True", "GPU", "*"])
            .prop_map(String::from),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let sub = expr(depth - 1);
    prop_oneof![
        leaf,
        (
            sub.clone(),
            prop::sample::select(vec!["+", "-", "*", "/", "%", "<", "==", "&&", "||"]),
            sub.clone()
        )
            .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        (sub.clone(), sub.clone(), sub.clone()).prop_map(|(a, b, c)| format!("{a} ? {b} : {c}")),
        sub.clone().prop_map(|a| format!("-{a}")),
        sub.clone().prop_map(|a| format!("({a})")),
        (sub.clone(), sub.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
        (sub.clone(), sub.clone()).prop_map(|(a, b)| format!("m[{a}, {b}]")),
        sub.clone().prop_map(|a| format!("m[{a}:]")),
        sub.clone().prop_map(|a| format!("f({a})")),
        sub.clone().prop_map(|a| format!("m[*({a})]")),
        sub.clone()
            .prop_map(|a| format!("tuple({a} for i in m.size)")),
        sub.prop_map(|a| format!("m.split(0, {a})")),
    ]
    .boxed()
}

fn statement() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "Task * GPU,CPU;",
            "Task a,b OMP;",
            "Region * * GPU FBMEM,ZCMEM;",
            "Region t 0 * SYSMEM;",
            "Layout * r FBMEM SOA C_order Align==64;",
            "InstanceLimit t 4;",
            "CollectMemory * *;",
            "IndexTaskMap t f;",
            "SingleTaskMap GPU g;",
            "ControlReplicate main,t;",
        ])
        .prop_map(String::from),
        expr(3).prop_map(|e| format!("x = {e};")),
        (expr(2), expr(2)).prop_map(|(a, b)| format!("print(\"{{}} {{}}\", {a}, {b});")),
        (expr(2), expr(3))
            .prop_map(|(a, b)| format!("def f(Task task, int k) {{ y = {a}; return {b}; }}")),
    ]
}

fn program_with_comments() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            statement(),
            prop::sample::select(vec!["", " # trailing", "\n# own line", "\n\n\n", "\n// x"]),
        ),
        1..12,
    )
    .prop_map(|items| {
        let mut s = String::new();
        for (stmt, after) in items {
            s.push_str(&stmt);
            s.push_str(after);
            s.push('\n');
        }
        s
    })
}

/// A statement of a program whose few names are defined, redefined, used
/// before and after their definitions, shadowed and left unused in every
/// combination: globals, functions (with parameters, locals and
/// comprehension variables, calling each other), mapping statements and
/// rules. The streaming check resolves and types one statement at a time
/// against a table of the globals; these are its corner cases.
fn name_statement() -> impl Strategy<Value = String> {
    let name = || prop::sample::select(vec!["a", "b", "f", "g", "m", "mgpu", "_u", "t", "Task"]);
    let ty = || prop::sample::select(vec!["Task", "int", "tuple", "MSpace", "bool"]);
    let value = || {
        prop_oneof![
            Just("Machine(GPU)".to_string()),
            Just("1".to_string()),
            Just("(1, 2)".to_string()),
            name().prop_map(String::from),
            (name(), name()).prop_map(|(x, y)| format!("{x} + {y}")),
            (name(), name()).prop_map(|(x, y)| format!("{x}({y})")),
            (name(), name()).prop_map(|(x, y)| format!("{x}[{y}, 0]")),
            name().prop_map(|x| format!("{x}[0, 1, 2]")),
            name().prop_map(|x| format!("{x} + 1")),
            (name(), name()).prop_map(|(x, y)| format!("tuple({x} + i for i in {y})")),
            name().prop_map(|x| format!("{x}.size")),
        ]
    };
    prop_oneof![
        (name(), value()).prop_map(|(n, v)| format!("{n} = {v};")),
        (
            name(),
            prop::collection::vec((ty(), name()), 0..3),
            prop::collection::vec((name(), value()), 0..3),
            value()
        )
            .prop_map(|(n, params, locals, ret)| {
                let params: Vec<String> = params.iter().map(|(t, p)| format!("{t} {p}")).collect();
                let body: String = locals.iter().map(|(l, v)| format!(" {l} = {v};")).collect();
                format!("def {n}({}) {{{body} return {ret}; }}", params.join(", "))
            }),
        (name(), name()).prop_map(|(t, f)| format!("IndexTaskMap {t} {f};")),
        (name(), name()).prop_map(|(t, f)| format!("SingleTaskMap {t},b {f};")),
        name().prop_map(|t| format!("Task {t} GPU;")),
        (name(), name()).prop_map(|(t, r)| format!("Region {t} {r} GPU FBMEM;")),
        (name(), name()).prop_map(|(t, r)| format!("Layout {t} {r} * SOA F_order C_order;")),
        name().prop_map(|t| format!("InstanceLimit {t} 2;")),
        (value(), value()).prop_map(|(x, y)| format!("print(\"{{}} {{}}\", {x}, {y});")),
        Just("x = ;".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn the_streaming_check_agrees_on_programs_of_few_names(stmts in prop::collection::vec(name_statement(), 1..14)) {
        let source = stmts.join("\n");
        if let Err(e) = streaming_agrees(&source) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let source = String::from_utf8_lossy(&bytes).into_owned();
        if let Err(e) = streaming_agrees(&source) {
            prop_assert!(false, "{}", e);
        }
        let parsed = parse(&source);
        let _ = analyze(&source);
        let _ = format(&source);
        let _ = format_range(&source, Span::new(0, source.len() / 2));
        for d in &parsed.diagnostics {
            prop_assert!(d.span.end() <= source.len());
            for f in &d.fixes {
                let _ = f.apply(&source);
            }
        }
    }

    #[test]
    fn token_soup_never_panics_and_keeps_comments(source in token_soup()) {
        if let Err(e) = streaming_agrees(&source) {
            prop_assert!(false, "{}", e);
        }
        let parsed = parse(&source);
        for d in analyze(&source).diagnostics() {
            for f in &d.fixes {
                prop_assert!(f.apply(&source).is_some(), "fix `{}` does not apply to {:?}", f.title, source);
            }
        }
        for d in &parsed.diagnostics {
            for f in &d.fixes {
                prop_assert!(f.apply(&source).is_some(), "fix `{}` does not apply to {:?}", f.title, source);
            }
        }
        if let Err(e) = check_format_invariants(&source) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn mutated_corpus_files_never_panic(pick in any::<prop::sample::Index>(), edits in prop::collection::vec((any::<prop::sample::Index>(), 0..TOKENS.len(), prop::bool::ANY), 1..6)) {
        let files = corpus_files();
        prop_assume!(!files.is_empty());
        let (_, original) = &files[pick.index(files.len())];
        let mut source = original.clone();
        for (at, tok, delete) in edits {
            let mut pos = at.index(source.len() + 1);
            while !source.is_char_boundary(pos) { pos -= 1; }
            if delete {
                let mut end = (pos + 3).min(source.len());
                while !source.is_char_boundary(end) { end -= 1; }
                source.replace_range(pos..end, "");
            } else {
                source.insert_str(pos, TOKENS[tok]);
            }
        }
        let _ = analyze(&source);
        if let Err(e) = streaming_agrees(&source) {
            prop_assert!(false, "{}", e);
        }
        if let Err(e) = check_format_invariants(&source) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn generated_programs_parse_and_format_stably(source in program_with_comments()) {
        let _ = analyze(&source);
        let parsed = parse(&source);
        prop_assert!(!parsed.has_errors(), "generated program rejected: {:?}\n{}", parsed.diagnostics.first(), source);
        if let Err(e) = check_format_invariants(&source) {
            prop_assert!(false, "{}", e);
        }
    }
}
