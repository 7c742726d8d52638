//! A coverage-free mutation fuzzer that runs on the stable toolchain
//! (cargo-fuzz needs nightly, which is not available here).
//!
//! Each execution takes one or two seeds (the shared corpus, the built-in
//! expert mappers), applies one to four mutations, and runs the result
//! through every pass ([`crate::passes`]) under `catch_unwind`. Mutations
//! work on the lexer's tokens where they can, so most inputs stay close to
//! real mappers and reach the checker, the evaluator and the resolution
//! rather than stopping at the first syntax error:
//! - token insert (a token copied from any seed or a DSL keyword), delete,
//!   duplicate, swap;
//! - byte flips (then read back as UTF-8, lossily: the passes take `&str`);
//! - splicing of two seeds at token boundaries;
//! - repetition of a token span (deep nesting and long chains).
//!
//! Executions are light or heavy. A light one runs the cheap passes: parse,
//! check, rendered and JSON diagnostics, whole and range formatting. One in
//! [`Config::heavy_every`] is heavy: resolution and `explain` against one
//! application (rotating over the nine), or, one heavy execution in four, an
//! editor session ([`crate::passes::run_editor`]): a seed edited by
//! `didChange` range edits at random positions (past line ends, inside
//! characters, in UTF-8 or UTF-16), with the language server's features run
//! after each edit. Heavy executions cost 10-50 times a light one, so the
//! fraction decides the speed; [`Report`] counts each kind, so a figure says
//! what ran.
//!
//! The run is deterministic for a seed, bounded by a count and a time, and
//! reports executions per second. A crash is returned with its input, so a
//! failing run says exactly what to turn into a regression test.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mapwright_grammar::token::lex;

use mapwright_grammar::line_index::Encoding;

use crate::passes::{run_caught, run_editor_caught, Target};

/// A small, fast, seedable generator (xorshift64*); the fuzzer needs no
/// statistical quality, only reproducibility without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Words and punctuation of the DSL, inserted as tokens.
const DICTIONARY: &[&str] = &[
    "Task",
    "Region",
    "Layout",
    "InstanceLimit",
    "CollectMemory",
    "IndexTaskMap",
    "SingleTaskMap",
    "ControlReplicate",
    "def",
    "return",
    "print",
    "tuple",
    "for",
    "in",
    "Machine",
    "GPU",
    "CPU",
    "OMP",
    "IO",
    "PY",
    "PROC",
    "SYSMEM",
    "FBMEM",
    "ZCMEM",
    "RDMEM",
    "SOCKMEM",
    "VIRTUAL",
    "SOA",
    "AOS",
    "C_order",
    "F_order",
    "Align",
    "Compact",
    "Exact",
    "Task",
    "int",
    "bool",
    "IPoint",
    "ISpace",
    "MSpace",
    ".size",
    ".split",
    ".merge",
    ".swap",
    ".slice",
    ".reverse",
    ".balance_split",
    ".auto_split",
    ".greedy_split",
    ".volume",
    ".has",
    ".len",
    ".ipoint",
    ".ispace",
    ".parent",
    ".processor",
    "*",
    "-",
    "+",
    "/",
    "%",
    "==",
    "!=",
    "<",
    ">",
    "<=",
    ">=",
    "&&",
    "||",
    "?",
    ":",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    "=",
    "!",
    ".",
    "0",
    "1",
    "2",
    "-1",
    "2147483648",
    "99999999999999999999",
    "\"%d\"",
    "\"",
    "#",
    "//",
    "/*",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "é",
    "𝕏",
    "\u{0}",
    "True",
    "False",
    "m",
    "x",
    "task",
    "mgpu",
];

/// Inputs are kept below this size: larger ones slow the run without
/// reaching new code (the deep-input tests cover size separately).
const MAX_INPUT: usize = 64 * 1024;

/// The fuzzer's seeds: every `.mapper` file under `dir` (recursively) and
/// every built-in expert mapper.
pub fn load_seeds(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    collect_mappers(dir, &mut files);
    files.sort();
    let mut seeds: Vec<String> = files
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    for name in mapwright_runtime::app::App::builtin_names() {
        if let Some(text) = mapwright_runtime::app::expert_mapper_text(name) {
            seeds.push(text.to_string());
        }
    }
    seeds
}

fn collect_mappers(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_mappers(&path, out);
        } else if path.extension().is_some_and(|e| e == "mapper") {
            out.push(path);
        }
    }
}

/// Byte ranges of the lexer's tokens and comments, in source order: the
/// units of the token mutations.
fn token_spans(text: &str) -> Vec<(usize, usize)> {
    let lexed = lex(text);
    let mut spans: Vec<(usize, usize)> = lexed
        .tokens
        .iter()
        .chain(lexed.comments.iter())
        .map(|t| (t.span.start, t.span.end))
        .filter(|&(s, e)| s < e && e <= text.len())
        .collect();
    spans.sort_unstable();
    spans
}

/// One mutation of `text`; `seeds` supplies splice partners and tokens.
pub fn mutate(text: &str, seeds: &[String], rng: &mut Rng) -> String {
    let spans = token_spans(text);
    let pick = |rng: &mut Rng| spans[rng.below(spans.len())];
    let choice = rng.below(9);
    if spans.is_empty() && choice < 6 {
        return format!("{text}{}", DICTIONARY[rng.below(DICTIONARY.len())]);
    }
    match choice {
        // Insert a token before another, with a space or not.
        0 | 1 => {
            let (at, _) = pick(rng);
            let word = if rng.below(2) == 0 {
                DICTIONARY[rng.below(DICTIONARY.len())].to_string()
            } else {
                let other = &seeds[rng.below(seeds.len())];
                let other_spans = token_spans(other);
                match other_spans.get(rng.below(other_spans.len().max(1))) {
                    Some(&(s, e)) => other[s..e].to_string(),
                    None => ";".to_string(),
                }
            };
            let sep = if rng.below(2) == 0 { " " } else { "" };
            format!("{}{word}{sep}{}", &text[..at], &text[at..])
        }
        // Delete a token.
        2 => {
            let (s, e) = pick(rng);
            format!("{}{}", &text[..s], &text[e..])
        }
        // Duplicate a token.
        3 => {
            let (s, e) = pick(rng);
            format!("{}{}{}", &text[..e], &text[s..e], &text[e..])
        }
        // Swap two tokens.
        4 => {
            let (a, b) = (pick(rng), pick(rng));
            let (first, second) = if a.0 <= b.0 { (a, b) } else { (b, a) };
            if first.1 > second.0 {
                return text.to_string();
            }
            format!(
                "{}{}{}{}{}",
                &text[..first.0],
                &text[second.0..second.1],
                &text[first.1..second.0],
                &text[first.0..first.1],
                &text[second.1..]
            )
        }
        // Repeat a run of tokens many times (nesting, chains).
        5 => {
            let (s, _) = pick(rng);
            let (_, e) = pick(rng);
            if s >= e {
                return text.to_string();
            }
            let times = 1 + rng.below(200);
            let piece = &text[s..e];
            if piece.len() * times > MAX_INPUT {
                return text.to_string();
            }
            format!("{}{}{}", &text[..s], piece.repeat(times), &text[e..])
        }
        // Flip bytes.
        6 => {
            let mut bytes = text.as_bytes().to_vec();
            if bytes.is_empty() {
                bytes.push(b'x');
            }
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(bytes.len());
                bytes[i] ^= 1 << rng.below(8);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        // Splice: a prefix of this text and a suffix of another seed, both
        // cut at token boundaries.
        _ => {
            let other = &seeds[rng.below(seeds.len())];
            let other_spans = token_spans(other);
            let cut_a = if spans.is_empty() { 0 } else { pick(rng).0 };
            let cut_b = match other_spans.get(rng.below(other_spans.len().max(1))) {
                Some(&(s, _)) => s,
                None => 0,
            };
            format!("{}{}", &text[..cut_a], &other[cut_b..])
        }
    }
}

/// A random editor session on `text`: range edits and query offsets.
#[allow(clippy::type_complexity)]
fn editor_session(
    text: &str,
    seeds: &[String],
    rng: &mut Rng,
) -> (Vec<(u32, u32, u32, u32, String)>, Vec<usize>, Encoding) {
    let lines = text.lines().count() as u32 + 2;
    let mut edits = Vec::new();
    for _ in 0..1 + rng.below(6) {
        let line = |rng: &mut Rng| rng.below(lines as usize) as u32;
        let col = |rng: &mut Rng| rng.below(90) as u32;
        let (sl, sc) = (line(rng), col(rng));
        // Mostly short edits near the start, as typing is.
        let (el, ec) = if rng.below(3) == 0 {
            (line(rng), col(rng))
        } else {
            (sl, sc + rng.below(4) as u32)
        };
        let new_text = match rng.below(4) {
            0 => String::new(),
            1 => DICTIONARY[rng.below(DICTIONARY.len())].to_string(),
            _ => {
                let piece = mutate(&seeds[rng.below(seeds.len())], seeds, rng);
                let start = rng.below(piece.len().max(1));
                let mut end = (start + 1 + rng.below(40)).min(piece.len());
                let mut start = start.min(end);
                while !piece.is_char_boundary(start) {
                    start -= 1;
                }
                while !piece.is_char_boundary(end) {
                    end += 1;
                }
                piece[start..end].to_string()
            }
        };
        edits.push((sl, sc, el, ec, new_text));
    }
    let offsets = (0..3).map(|_| rng.below(text.len() + 64)).collect();
    let enc = if rng.below(2) == 0 {
        Encoding::Utf16
    } else {
        Encoding::Utf8
    };
    (edits, offsets, enc)
}

/// How long and how much to fuzz.
#[derive(Debug, Clone)]
pub struct Config {
    pub seed: u64,
    pub max_execs: u64,
    pub max_time: Duration,
    /// Resolve against every target each execution (slower), or against one,
    /// rotating, so each target sees a share of the inputs.
    pub all_targets_each_time: bool,
    /// One execution in this many is heavy (resolution or an editor
    /// session); 1 makes every execution heavy.
    pub heavy_every: u64,
    /// Write each input here before running it: what a crash that
    /// `catch_unwind` cannot catch (an abort, the OOM killer) leaves behind.
    pub trace: Option<PathBuf>,
}

/// A crash: the input and the panic message.
#[derive(Debug, Clone)]
pub struct Crash {
    pub input: String,
    pub message: String,
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct Report {
    pub execs: u64,
    /// Light executions (parse, check, render, fmt only).
    pub light: u64,
    /// Heavy executions that resolved against applications (after the
    /// light passes), and how many resolutions they ran in all.
    pub resolve: u64,
    pub resolutions: u64,
    /// Heavy executions that were editor sessions.
    pub editor: u64,
    pub elapsed: Duration,
    pub crashes: Vec<Crash>,
}

impl Report {
    pub fn execs_per_second(&self) -> f64 {
        self.execs as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Fuzzes until `config`'s count or time runs out. Panics are caught (and
/// the default hook's message silenced for the run); each crash is kept,
/// at most 20.
pub fn run(seeds: &[String], targets: &[Target], config: &Config) -> Report {
    assert!(!seeds.is_empty(), "the fuzzer needs at least one seed");
    let mut rng = Rng::new(config.seed);
    let start = Instant::now();
    let mut crashes = Vec::new();
    let mut execs = 0u64;
    let (mut light, mut resolve, mut resolutions, mut editor_sessions) = (0u64, 0u64, 0u64, 0u64);
    let heavy_every = config.heavy_every.max(1);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    while execs < config.max_execs && start.elapsed() < config.max_time {
        let mut input = seeds[rng.below(seeds.len())].clone();
        for _ in 0..1 + rng.below(4) {
            input = mutate(&input, seeds, &mut rng);
        }
        if input.len() > MAX_INPUT {
            let mut cut = MAX_INPUT;
            while !input.is_char_boundary(cut) {
                cut -= 1;
            }
            input.truncate(cut);
        }
        let heavy = execs.is_multiple_of(heavy_every);
        let editor = heavy && rng.below(4) == 0;
        if editor {
            editor_sessions += 1;
            let (edits, offsets, enc) = editor_session(&input, seeds, &mut rng);
            if let Some(path) = &config.trace {
                let _ = std::fs::write(
                    path,
                    format!(
                        "{input}\n--- edits ({enc:?}) ---\n{edits:?}\n--- offsets ---\n{offsets:?}"
                    ),
                );
            }
            if let Err(message) = run_editor_caught(&input, &edits, &offsets, enc) {
                if crashes.len() < 20 {
                    crashes.push(Crash {
                        input: format!("{input}\n--- edits ({enc:?}) ---\n{edits:?}\n--- offsets ---\n{offsets:?}"),
                        message,
                    });
                }
            }
            execs += 1;
            continue;
        }
        if let Some(path) = &config.trace {
            let _ = std::fs::write(path, &input);
        }
        let chosen: &[Target] = if !heavy || targets.is_empty() {
            &[]
        } else if config.all_targets_each_time {
            targets
        } else {
            let i = (resolve as usize) % targets.len();
            &targets[i..i + 1]
        };
        if chosen.is_empty() {
            light += 1;
        } else {
            resolve += 1;
            resolutions += chosen.len() as u64;
        }
        if let Err(message) = run_caught(&input, chosen) {
            if crashes.len() < 20 {
                crashes.push(Crash { input, message });
            }
        }
        execs += 1;
    }
    std::panic::set_hook(hook);
    Report {
        execs,
        light,
        resolve,
        resolutions,
        editor: editor_sessions,
        elapsed: start.elapsed(),
        crashes,
    }
}
