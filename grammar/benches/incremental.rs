//! How much work an edit re-does: incremental re-parse (and re-analysis)
//! against a full parse (and analysis), per keystroke, on 5,000-line files.
//!
//! Inputs vary: three synthetic files (accepted corpus files concatenated
//! from three different starting points) and, on each, 300 keystrokes at
//! positions drawn from three seeds: a letter typed into a name, or a digit
//! typed after a digit. Reports the mean and the worst case of each.
//! Run with `cargo bench -p mapwright-grammar --bench incremental`.

use std::path::Path;
use std::time::{Duration, Instant};

use mapwright_grammar::incremental::{reanalyze, reparse, Reparse};
use mapwright_grammar::token::TokenKind;
use mapwright_grammar::{analyze, parse};

fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/public");
    let expect = std::fs::read_to_string(dir.join("EXPECT")).unwrap_or_default();
    expect
        .lines()
        .filter(|l| l.ends_with(" accept"))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|f| std::fs::read_to_string(dir.join(f)).ok())
        .collect()
}

/// Accepted corpus files from the `start`-th on, until `lines` lines.
fn synthetic(files: &[String], start: usize, lines: usize) -> String {
    let mut out = String::new();
    let mut i = start;
    while out.lines().count() < lines {
        out.push_str(&files[i % files.len()]);
        out.push('\n');
        i += 1;
    }
    out
}

/// A small xorshift generator: reproducible positions without a dependency.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

#[derive(Default)]
struct Stat {
    total: Duration,
    worst: Duration,
    n: u32,
}
impl Stat {
    fn add(&mut self, d: Duration) {
        self.total += d;
        self.worst = self.worst.max(d);
        self.n += 1;
    }
    fn show(&self) -> String {
        let mean = self.total / self.n.max(1);
        format!(
            "mean {:>8.1} µs, worst {:>8.1} µs",
            us(mean),
            us(self.worst)
        )
    }
}
fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let files = corpus();
    if files.is_empty() {
        eprintln!("no corpus files");
        return;
    }
    let (mut inc_parse, mut full_parse, mut inc_analysis, mut full_analysis) = (
        Stat::default(),
        Stat::default(),
        Stat::default(),
        Stat::default(),
    );
    let (mut incremental, mut edits, mut reparsed_bytes, mut total_bytes) = (0, 0, 0usize, 0usize);
    let (mut reparsed_stmts, mut all_stmts) = (0usize, 0usize);
    for (start, seed) in [(0, 0x9e37_79b9_7f4a_7c15u64), (7, 0xdead_beef), (19, 42)] {
        let mut text = synthetic(&files, start, 5_000);
        let mut parsed = parse(&text);
        let mut rng = Rng(seed);
        for _ in 0..300 {
            // A name or number token, typed into.
            let t = loop {
                let t = parsed.tokens[rng.below(parsed.tokens.len())];
                if matches!(t.kind, TokenKind::Ident | TokenKind::Int) {
                    break t;
                }
            };
            let typed = if t.kind == TokenKind::Int { "7" } else { "q" };
            let next = format!("{}{typed}{}", &text[..t.span.end()], &text[t.span.end()..]);

            let clock = Instant::now();
            let (inc, how) = reparse(&parsed, &text, &next);
            inc_parse.add(clock.elapsed());
            let clock = Instant::now();
            std::hint::black_box(parse(&next));
            full_parse.add(clock.elapsed());
            let clock = Instant::now();
            std::hint::black_box(reanalyze(&parsed, &text, &next));
            inc_analysis.add(clock.elapsed());
            let clock = Instant::now();
            std::hint::black_box(analyze(&next));
            full_analysis.add(clock.elapsed());

            edits += 1;
            total_bytes += next.len();
            all_stmts += inc.program.stmts.len();
            match how {
                Reparse::Incremental {
                    reparsed_bytes: b,
                    reparsed_stmts: s,
                    ..
                } => {
                    incremental += 1;
                    reparsed_bytes += b;
                    reparsed_stmts += s;
                }
                Reparse::Full => {
                    reparsed_bytes += next.len();
                    reparsed_stmts += inc.program.stmts.len();
                }
            }
            text = next;
            parsed = inc;
        }
    }
    println!("{edits} keystrokes on three 5,000-line files, three seeds");
    println!(
        "incremental path taken: {incremental} of {edits}; re-parsed {:.3} % of the bytes, {:.3} % of the top-level statements",
        100.0 * reparsed_bytes as f64 / total_bytes as f64,
        100.0 * reparsed_stmts as f64 / all_stmts as f64
    );
    println!("parse,    incremental: {}", inc_parse.show());
    println!("parse,    full:        {}", full_parse.show());
    println!("analysis, incremental: {}", inc_analysis.show());
    println!("analysis, full:        {}", full_analysis.show());
}
