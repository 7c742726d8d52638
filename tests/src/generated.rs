//! Generated big mappers with many diagnostics of every kind, shared by
//! the keystroke benchmark (`tests/lsp_bench.rs`) and the incremental
//! checking property test (`tests/incremental_check.rs`): copies of the
//! public corpus's mappers with their names renamed per copy, half of them
//! with tasks of their own, and a statement that raises a diagnostic after
//! about one statement in three. Deterministic per seed. Also the
//! benchmark's keystrokes ([`keystrokes`]), so that the in-process replay
//! in `tests/incremental_check.rs` types exactly what the benchmark types.

use std::path::{Path, PathBuf};

pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/public")
}

/// Every `.mapper` file of the public corpus, largest first.
pub fn corpus_files() -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(corpus_dir())
        .expect("the public corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "mapper"))
        .filter_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)))
        .collect();
    files.sort_by_key(|(p, t)| (std::cmp::Reverse(t.len()), p.clone()));
    files
}

/// A small deterministic generator (splitmix64): the same seed gives the
/// same file and the same keystrokes on every build compared.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The corpus's files that parse cleanly, each as its top-level
/// statements' texts and the names it defines (globals and functions).
pub struct CorpusMapper {
    pub stmts: Vec<String>,
    pub defined: Vec<String>,
    /// Task and region names its mapping rules select.
    pub selected: Vec<String>,
}

pub fn corpus_mappers() -> Vec<CorpusMapper> {
    use mapwright_grammar::ast::{RegionSel, StmtKind, TaskSel};
    let mut out = Vec::new();
    for (_, text) in corpus_files() {
        let parsed = mapwright_grammar::parser::parse(&text);
        if parsed.has_errors() || parsed.program.stmts.is_empty() {
            continue;
        }
        let mut defined = Vec::new();
        let mut selected = Vec::new();
        let mut select = |tasks: &TaskSel, region: Option<&RegionSel>| {
            if let TaskSel::Names(names) = tasks {
                selected.extend(names.iter().map(|n| n.name.clone()));
            }
            if let Some(RegionSel::Name(n)) = region {
                selected.push(n.name.clone());
            }
        };
        for s in &parsed.program.stmts {
            match &s.kind {
                StmtKind::Assign { name, .. } => defined.push(name.name.clone()),
                StmtKind::FuncDef { name, .. } => defined.push(name.name.clone()),
                StmtKind::Task { tasks, .. }
                | StmtKind::IndexTaskMap { tasks, .. }
                | StmtKind::SingleTaskMap { tasks, .. } => select(tasks, None),
                StmtKind::Region { task, region, .. }
                | StmtKind::Layout { task, region, .. }
                | StmtKind::CollectMemory { task, region } => select(task, Some(region)),
                _ => {}
            }
        }
        out.push(CorpusMapper {
            stmts: parsed
                .program
                .stmts
                .iter()
                .map(|s| text[s.span.start()..s.span.end()].to_string())
                .collect(),
            defined,
            selected,
        });
    }
    out
}

/// `stmt` with each identifier of `defined` suffixed by `_b{block}`, so
/// copies of one corpus mapper do not define the same names.
fn renamed(stmt: &str, defined: &[String], block: usize) -> String {
    let mut out = String::with_capacity(stmt.len() + 16);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(word);
        if defined.iter().any(|d| d == word) {
            out.push_str(&format!("_b{block}"));
        }
        word.clear();
    };
    let mut in_string = false;
    for c in stmt.chars() {
        if !in_string && (c.is_ascii_alphanumeric() || c == '_') {
            if word.is_empty() && c.is_ascii_digit() {
                out.push(c);
            } else {
                word.push(c);
            }
            continue;
        }
        flush(&mut word, &mut out);
        if c == '"' {
            in_string = !in_string;
        }
        out.push(c);
    }
    flush(&mut word, &mut out);
    out
}

/// A statement that raises a common diagnostic (`i` makes names unique).
fn faulty(rng: &mut Rng, i: usize) -> String {
    // Most are statement-level mistakes (the checker keeps at most 1,000
    // diagnostics per file, and the corpus's own unused names and shadowed
    // rules fill much of that).
    let pick = if rng.unit() < 0.8 {
        9 + rng.below(5)
    } else {
        rng.below(9)
    };
    match pick {
        0 | 1 => format!("unused_{i} = {};", rng.below(100)), // W0214
        // W0217 (a second assignment, ignored)
        2 => format!(
            "def h_{i}(int a) {{ x = a; x = x + 1; return x; }}\nprint(\"{{}}\", h_{i}(1));"
        ),
        3 | 4 => format!("y_{i} = undefined_{i} + 1;"), // E0201
        5 => format!("te_{i} = (1, 2) + (1, 2, 3);"),   // E0209
        // W0213, E0201, W0206
        6 => format!("def unused_f{i}(Task t) {{\n    return nowhere_{i}[0, 0];\n    x = 1;\n}}"),
        7 => format!("print(\"{{}} and {{}}\", {i});"), // E0212
        8 => format!("def g_{i}(int a, int b) {{ return a + b; }}\nprint(\"{{}}\", g_{i}(1));"), // E0207
        // Statement-level mistakes the parser reports.
        9 => "Layout * * * SOA Corder;".to_string(), // E0103
        10 => format!("InstanceLimit task_{i} GPU 1;"), // E0108
        11 => format!("f_{i} = 1.5;"),               // E0115
        12 => format!("task t_{i} GPU;"),            // E0117
        _ => "Layout * * GPU SOA C_order;".to_string(), // E0105
    }
}

/// A mapper of at least `lines` lines, as a big project's might look:
/// copies of the corpus's mappers one after another (their names renamed
/// per copy, their mapping rules repeating and shadowing each other, half
/// of them for tasks of their own), with
/// statements that raise each common diagnostic mixed in (after about
/// one statement in three).
pub fn generated(seed: u64, lines: usize, corpus: &[CorpusMapper]) -> String {
    let mut rng = Rng(seed);
    let mut s = String::from("# generated for the latency benchmark — é\n");
    let mut n = 1;
    let mut i = 0;
    let mut block = 0;
    while n < lines {
        let mapper = &corpus[rng.below(corpus.len())];
        // Half the copies map tasks of their own (another application's):
        // their rules shadow nothing unless they select `*`.
        let mut names = mapper.defined.clone();
        if rng.unit() < 0.5 {
            names.extend(mapper.selected.iter().cloned());
        }
        let mut out = Vec::new();
        for stmt in &mapper.stmts {
            out.push(renamed(stmt, &names, block));
            if rng.unit() < 0.35 {
                out.push(faulty(&mut rng, i));
                i += 1;
            }
        }
        for stmt in out {
            n += stmt.matches('\n').count() + 1;
            s.push_str(&stmt);
            s.push('\n');
        }
        block += 1;
    }
    s
}

/// One keystroke of [`keystrokes`]: replace bytes `from..to` of the
/// current text with `insert`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keystroke {
    pub from: usize,
    pub to: usize,
    pub insert: String,
}

/// `count` one-character edits the way the keystroke benchmark types
/// them into `text`: a short word typed at a random place (never
/// splitting a character or a CRLF), then erased, then the next word
/// elsewhere. Each edit applies to the text the ones before left.
pub fn keystrokes(text: &str, seed: u64, count: usize) -> Vec<Keystroke> {
    const WORDS: [&str; 6] = ["x", "ab", " 1", "+1", "q;", "_z"];
    let mut rng = Rng(seed ^ 0x5EED);
    let mut current = text.to_string();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let mut at = rng.below(current.len() + 1);
        while !current.is_char_boundary(at) || (at > 0 && current.as_bytes()[at - 1] == b'\r') {
            at -= 1;
        }
        let word = WORDS[rng.below(WORDS.len())];
        let typed = word.char_indices().map(|(j, c)| Keystroke {
            from: at + j,
            to: at + j,
            insert: c.to_string(),
        });
        let erased = word.char_indices().rev().map(|(j, c)| Keystroke {
            from: at + j,
            to: at + j + c.len_utf8(),
            insert: String::new(),
        });
        for k in typed.chain(erased).take(count - out.len()) {
            current.replace_range(k.from..k.to, &k.insert);
            out.push(k);
        }
    }
    out
}
