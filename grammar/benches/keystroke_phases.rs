//! Where a language-server keystroke's analysis goes, phase by phase, on
//! big files: the consuming re-parse (`incremental::reparse_owned`), the
//! memoised check (`check::check_incremental`) and freeing the previous
//! analysis, as `Analysis::after_edit_consuming` in the server runs them.
//!
//! Files: the paths given after `--` (the LSP benchmark's generated files,
//! for instance), else three 5,000-line files of accepted corpus mappers
//! from three starting points. On each, 400 one-character edits: a short
//! word typed at a random place and erased again, as `lsp_bench` types.
//! Prints the mean of each phase, the p50 / p99 / worst of their sum, and
//! the allocations the check makes per edit (count and bytes, from a
//! counting global allocator: fresh memory is what a language server pays
//! for in page faults and cache misses on every keystroke).
//! With `--cold`, 64 MB are read between edits (not timed), as the rest of
//! a language server and its editor do between keystrokes: the check then
//! starts from cold caches, as in the server, where it took about twice
//! its warm time (`perf`), and work that chases pointers shows its cost.
//! Run with `cargo bench -p mapwright-grammar --bench keystroke_phases [-- [--cold] FILE...]`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use mapwright_grammar::check::{
    check_after_reparse, check_incremental, Checked, OldCheck, Previous,
};
use mapwright_grammar::incremental::reparse_owned;
use mapwright_grammar::{analyze_remembering, Analysis, Parsed};

/// The system allocator, counting allocations and their bytes.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to `System` unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        ALLOCATED.fetch_add(layout.size(), Relaxed);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        ALLOCATED.fetch_add(new_size, Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Allocations and bytes allocated so far.
fn allocated() -> (usize, usize) {
    (ALLOCATIONS.load(Relaxed), ALLOCATED.load(Relaxed))
}

/// splitmix64: reproducible positions without a dependency.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n.max(1) as u64) as usize
    }
}

fn corpus_files() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/public");
    let expect = std::fs::read_to_string(dir.join("EXPECT")).unwrap_or_default();
    let files: Vec<String> = expect
        .lines()
        .filter(|l| l.ends_with(" accept"))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|f| std::fs::read_to_string(dir.join(f)).ok())
        .collect();
    if files.is_empty() {
        return Vec::new();
    }
    [0, 7, 19]
        .iter()
        .map(|&start| {
            let mut out = String::new();
            let mut i = start;
            while out.lines().count() < 5_000 {
                out.push_str(&files[i % files.len()]);
                out.push('\n');
                i += 1;
            }
            out
        })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let files: Vec<String> = if args.is_empty() {
        corpus_files()
    } else {
        args.iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect()
    };
    if files.is_empty() {
        eprintln!("no input files");
        return;
    }
    let cold = std::env::args().any(|a| a == "--cold");
    println!(
        "{} files{}",
        files.len(),
        if cold {
            ", caches cooled between edits"
        } else {
            ""
        }
    );
    // Both ways in one run, alternated per file, so that the VM's drift
    // does not favour one: the names resolved again in the whole file
    // (`check_incremental`), and only in the re-parsed window, as the
    // server does (`check_after_reparse`).
    let mut whole = Phases::default();
    let mut window = Phases::default();
    for (seed, text) in files.iter().enumerate() {
        type_into(text, seed as u64, false, cold, &mut whole);
        type_into(text, seed as u64, true, cold, &mut window);
    }
    whole.print("names resolved in the whole file");
    window.print("names resolved in the window (the server's way)");
}

/// The time of each phase over many edits.
#[derive(Default)]
struct Phases {
    parse: Duration,
    check: Duration,
    free: Duration,
    totals: Vec<Duration>,
    names_reused: usize,
    shadowed_reused: usize,
    /// Statements replayed, and of those the records trusted (replayed
    /// with only their symbol numbers read).
    replayed: usize,
    trusted: usize,
    /// Allocations and bytes allocated by the checks.
    check_allocations: usize,
    check_bytes: usize,
}

impl Phases {
    fn print(mut self, label: &str) {
        let n = self.totals.len().max(1) as u32;
        self.totals.sort();
        let totals = &self.totals;
        let at = |q: f64| ms(totals[((totals.len() - 1) as f64 * q) as usize]);
        println!(
            "{label}: {n} edits, names reused on {}, shadowed rules on {}, \
             records trusted {} of {} replayed",
            self.names_reused, self.shadowed_reused, self.trusted, self.replayed
        );
        println!(
            "  mean per edit: re-parse {:.3} ms, check {:.3} ms, freeing the old analysis {:.3} ms",
            ms(self.parse / n),
            ms(self.check / n),
            ms(self.free / n)
        );
        println!(
            "  check allocations per edit: {} ({:.2} MB)",
            self.check_allocations / n as usize,
            self.check_bytes as f64 / f64::from(n) / 1e6
        );
        println!(
            "  sum: p50 {:.3} ms, p99 {:.3} ms, worst {:.3} ms",
            at(0.5),
            at(0.99),
            ms(*totals.last().unwrap_or(&Duration::ZERO))
        );
    }
}

/// Bytes `--cold` walks between edits: more than the last-level cache.
const COOLER_BYTES: usize = 64 << 20;

/// Reads and writes every cache line of `buffer`, evicting what the last
/// edit left in the caches.
fn cool(buffer: &mut [u64]) {
    for word in buffer.iter_mut().step_by(8) {
        *word = word.wrapping_add(1);
    }
    std::hint::black_box(&buffer);
}

/// 400 one-character edits typed into `text` and erased again.
fn type_into(text: &str, seed: u64, reuse_names: bool, cold: bool, phases: &mut Phases) {
    let mut cooler = if cold {
        vec![1u64; COOLER_BYTES / 8]
    } else {
        Vec::new()
    };
    const WORDS: [&str; 6] = ["x", "ab", " 1", "+1", "q;", "_z"];
    let mut text = text.to_string();
    let mut analysis = analyze_remembering(&text);
    let mut rng = Rng(seed + 7);
    let mut edits = 0;
    while edits < 400 {
        let mut at = rng.below(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let word = WORDS[rng.below(WORDS.len())];
        let typed = word
            .char_indices()
            .map(|(j, c)| (at + j, at + j, c.to_string()));
        let erased = word
            .char_indices()
            .rev()
            .map(|(j, c)| (at + j, at + j + c.len_utf8(), String::new()));
        for (from, to, insert) in typed.chain(erased).collect::<Vec<_>>() {
            let mut next = text.clone();
            next.replace_range(from..to, &insert);
            cool(&mut cooler);
            let Analysis { parsed, checked } = analysis;
            let clock = Instant::now();
            let (parsed, how, unused) = reparse_owned(parsed, &text, &next);
            let parsed_at = Instant::now();
            let (allocations, bytes) = allocated();
            let Checked {
                memo,
                resolved,
                lines,
                diagnostics,
                ..
            } = checked;
            let (new_checked, reuse) = if reuse_names {
                let old = OldCheck {
                    memo: &memo,
                    source: &text,
                    names: resolved,
                    lines,
                    diagnostics,
                };
                let (checked, reuse, leftovers) = check_after_reparse(&parsed, &next, &how, old);
                drop(leftovers);
                (checked, reuse)
            } else {
                drop((resolved, diagnostics));
                let previous = Some(Previous {
                    memo: &memo,
                    source: &text,
                    window: how.window(),
                });
                check_incremental(&parsed, &next, previous)
            };
            let checked_at = Instant::now();
            let (allocations_after, bytes_after) = allocated();
            phases.check_allocations += allocations_after - allocations;
            phases.check_bytes += bytes_after - bytes;
            drop((memo, unused));
            let freed_at = Instant::now();
            phases.parse += parsed_at - clock;
            phases.check += checked_at - parsed_at;
            phases.free += freed_at - checked_at;
            phases.totals.push(freed_at - clock);
            phases.names_reused += reuse.names_reused as usize;
            phases.shadowed_reused += reuse.shadowed_reused as usize;
            phases.replayed += reuse.replayed;
            phases.trusted += reuse.trusted;
            analysis = Analysis {
                parsed,
                checked: new_checked,
            };
            text = next;
            edits += 1;
        }
    }
    std::hint::black_box::<&Parsed>(&analysis.parsed);
}
