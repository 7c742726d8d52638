//! `mapwright-heap SUBCOMMAND ARGS...`: runs one `mapwright` command line
//! (the same library code: [`mapwright::cli::run`]) under a counting
//! allocator, then prints its heap figures to standard error as one JSON
//! line: `{"heap_peak": B, "heap_before": B, "allocations": N}`.
//!
//! `heap_peak` is the most bytes live at once while the command ran,
//! counted from `heap_before`, what was live when it started (the parsed
//! command line). It is exact (requested sizes, no sampling) and free of
//! what resident memory adds: the binary's pages, libc, thread stacks,
//! allocator arenas and page granularity. `bench/memory/run.py` divides it
//! by the input size, next to the resident-memory measure.
//!
//! With `MAPWRIGHT_HEAP_TRACE=DIR` set, a background thread also appends
//! `MS LIVE PEAK RSS` (milliseconds since start, live and peak heap bytes,
//! resident bytes) every 100 ms to `DIR/heap.PID`: what a long-running
//! command (the language server) holds over time, next to what the system
//! sees (`tests/tests/lsp_memory.rs` runs the server this way when
//! `MAPWRIGHT_BIN` names this binary).
//!
//! A separate binary so that `mapwright` itself pays nothing for counting.

use std::alloc::{GlobalAlloc, Layout};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use clap::Parser;

/// `mapwright`'s allocator (mimalloc with scratch heaps), with live and
/// peak bytes counted.
struct Counting {
    inner: mapwright::alloc::Allocator,
    live: AtomicUsize,
    peak: AtomicUsize,
    allocations: AtomicUsize,
}

impl Counting {
    fn grew(&self, bytes: usize) {
        let live = self.live.fetch_add(bytes, Relaxed) + bytes;
        self.peak.fetch_max(live, Relaxed);
        self.allocations.fetch_add(1, Relaxed);
    }

    fn shrank(&self, bytes: usize) {
        self.live.fetch_sub(bytes, Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.inner.alloc(layout);
        if !p.is_null() {
            self.grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.inner.alloc_zeroed(layout);
        if !p.is_null() {
            self.grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.inner.dealloc(ptr, layout);
        self.shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.inner.realloc(ptr, layout, new_size);
        if !p.is_null() {
            // Counted as a new block then the old one freed: a moving
            // realloc holds both for a moment.
            self.grew(new_size);
            self.shrank(layout.size());
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting {
    inner: mapwright::alloc::Allocator,
    live: AtomicUsize::new(0),
    peak: AtomicUsize::new(0),
    allocations: AtomicUsize::new(0),
};

/// Resident bytes of this process (`/proc/self/statm`, Linux only).
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// The `MAPWRIGHT_HEAP_TRACE` thread (see the module documentation).
fn start_trace() {
    let Some(dir) = std::env::var_os("MAPWRIGHT_HEAP_TRACE") else {
        return;
    };
    let path = std::path::Path::new(&dir).join(format!("heap.{}", std::process::id()));
    let Ok(mut file) = std::fs::File::create(&path) else {
        eprintln!("mapwright-heap: cannot create {}", path.display());
        return;
    };
    let start = std::time::Instant::now();
    std::thread::spawn(move || loop {
        use std::io::Write;
        let line = format!(
            "{} {} {} {}\n",
            start.elapsed().as_millis(),
            live(),
            ALLOCATOR.peak.load(Relaxed),
            rss_bytes()
        );
        if file.write_all(line.as_bytes()).is_err() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    });
}

/// mimalloc's options as `mapwright` sets them (before `main`, see
/// `server/src/main.rs`), so that resident figures compare.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static SET_ALLOCATOR_OPTIONS: extern "C" fn() = mapwright::alloc::set_options;

fn main() -> ExitCode {
    #[cfg(not(target_os = "linux"))]
    mapwright::alloc::set_options();
    start_trace();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("--phases") {
        return phases(argv.get(1).map(String::as_str).unwrap_or("-"));
    }
    let args = std::iter::once("mapwright".to_string()).chain(argv);
    let cli = mapwright::cli::Cli::parse_from(args);
    let before = ALLOCATOR.live.load(Relaxed);
    ALLOCATOR.peak.store(before, Relaxed);
    let allocations_before = ALLOCATOR.allocations.load(Relaxed);
    let code = mapwright::cli::stdout::exit_code(mapwright::cli::run(cli));
    let peak = ALLOCATOR.peak.load(Relaxed);
    let allocations = ALLOCATOR.allocations.load(Relaxed) - allocations_before;
    eprintln!(
        "{{\"heap_peak\": {}, \"heap_before\": {before}, \"allocations\": {allocations}}}",
        peak - before
    );
    code
}

fn live() -> usize {
    ALLOCATOR.live.load(Relaxed)
}

/// `--phases FILE`: live heap after each phase of a check, to see where
/// the bytes go (sizes of the front end's types too).
fn phases(path: &str) -> ExitCode {
    use mapwright_grammar as g;
    let base = live();
    // As `mapwright check` reads it: invalid UTF-8 replaced, not refused.
    let bytes = std::fs::read(path).unwrap_or_default();
    let source = String::from_utf8_lossy(&bytes).into_owned();
    drop(bytes);
    let n = source.len().max(1) as f64;
    let show = |what: &str, bytes: usize| {
        eprintln!("{what:28} {bytes:>12} B {:>7.2}x", bytes as f64 / n);
    };
    show("source", live() - base);
    let parsed = g::parse(&source);
    show("+ parse (tokens kept)", live() - base);
    drop(parsed);
    let parsed = g::parse_tree(&source);
    show("+ parse_tree", live() - base);
    show("  peak so far", ALLOCATOR.peak.load(Relaxed) - base);
    let resolved = g::resolve::resolve(&parsed.program);
    show("+ resolve", live() - base);
    drop(resolved);
    let checked = g::check::check(&parsed, &source);
    show("+ check (resolve included)", live() - base);
    show("  peak so far", ALLOCATOR.peak.load(Relaxed) - base);
    drop(checked);
    drop(parsed);
    // What `mapwright check` runs without an application.
    let peak_from = live();
    ALLOCATOR.peak.store(peak_from, Relaxed);
    let report = g::report(&source);
    show("report (check's path)", live() - base);
    show("  its peak", ALLOCATOR.peak.load(Relaxed) - base);
    drop(report);
    eprintln!(
        "sizes: Token {} Stmt {} StmtKind {} Expr {} ExprKind {} Ident {} Diagnostic {} Symbol {}",
        std::mem::size_of::<g::token::Token>(),
        std::mem::size_of::<g::ast::Stmt>(),
        std::mem::size_of::<g::ast::StmtKind>(),
        std::mem::size_of::<g::ast::Expr>(),
        std::mem::size_of::<g::ast::ExprKind>(),
        std::mem::size_of::<g::ast::Ident>(),
        std::mem::size_of::<g::Diagnostic>(),
        std::mem::size_of::<g::resolve::Symbol>(),
    );
    ExitCode::SUCCESS
}
