//! The binaries' allocator: mimalloc, with the options a long-running
//! language server needs ([`set_options`]) and scratch heaps
//! ([`compacted`]) that let a large transient computation give all its
//! memory back.
//!
//! Why scratch heaps: mimalloc hands out small blocks from 64 KiB pages.
//! Resolving a mapper against an application allocates megabytes of
//! short-lived data (the evaluator, the resolver's tables, a full parse of
//! the edited text per verified quick fix) interleaved with the few hundred
//! kilobytes of the [`crate::lsp::target::Resolution`] that the server
//! keeps. Once the transient data is freed, every page that holds one kept
//! block stays resident. [`compacted`] runs the computation with its
//! allocations on a heap of its own, copies the result out to the thread's
//! ordinary heap and drops the original: the scratch heap's pages are then
//! empty and go back to the system.
//!
//! The scratch heap is one for the process, made on first use and never
//! deleted (each thread allocates from its own part of it, mimalloc's
//! "theap"). A fresh heap per computation, as before, cost 0.11-0.16 ms
//! each time (a thread-local slot and a theap made and freed, and a forced
//! collect), 4x the resolution of a 110-line mapper itself (0.03-0.04 ms),
//! with outliers of 4 ms (see the keystroke runs in README.md's git history).
//!
//! The binaries install [`Allocator`] as the global allocator; in a binary
//! that does not (the unit tests), [`compacted`] still returns the same
//! value, it just compacts nothing.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::ffi::{c_int, c_long, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

// Indices in `mi_option_t` of the mimalloc 3 sources that libmimalloc-sys
// 0.1.49 builds (that crate names options and heaps only behind its
// `extended` feature, which adds a dependency).
const MI_OPTION_ARENA_EAGER_COMMIT: c_int = 4;
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// An opaque `mi_heap_t`.
type Heap = *mut c_void;

extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
    fn mi_collect(force: bool);
    fn mi_heap_new() -> Heap;
    fn mi_heap_delete(heap: Heap);
    fn mi_heap_collect(heap: Heap, force: bool);
    fn mi_heap_malloc_aligned(heap: Heap, size: usize, alignment: usize) -> *mut c_void;
    fn mi_heap_zalloc_aligned(heap: Heap, size: usize, alignment: usize) -> *mut c_void;
    fn mi_heap_realloc_aligned(
        heap: Heap,
        p: *mut c_void,
        newsize: usize,
        alignment: usize,
    ) -> *mut c_void;
}

/// Makes mimalloc give freed memory back to the system. A language server
/// frees a document's old analysis and resolution on every keystroke and
/// then sits idle; with mimalloc's defaults that memory stayed resident.
/// Measured in release with the same binary and these options set from the
/// environment (`tests/tests/lsp_memory.rs`, 100 open documents, steady
/// VmRSS mean, no application / circuit): defaults 133 / 207 MB; purge
/// delay 0 (freed pages are decommitted at once instead of after 1 s,
/// which only elapses when the allocator is used again) 105 / 168 MB; plus
/// no eager commit of arenas (on Linux mimalloc otherwise commits a whole
/// arena up front) 60 / 90 MB. See docs/performance.md and the memory runs in
/// README.md's git history.
///
/// The cost: keystroke-to-diagnostics on the 5,000-line file of
/// `lsp_bench` went from a p50 of 12-16 ms to 20 ms (same binary, options
/// from the environment, a loaded 2-core machine); no eager commit alone
/// costs nothing measurable but only reaches 95 / 135 MB, and a purge
/// delay of 10 ms was no faster and kept 74 / 106 MB. Dropping the
/// purge-delay line below is the switch if latency matters more.
///
/// The binaries call it before `main` (an ELF constructor): Rust's runtime
/// allocates before `main`, and mimalloc fixes the commit mode of its first
/// arena when it reserves it at that first allocation.
pub extern "C" fn set_options() {
    // SAFETY: plain C calls with valid option indices; mimalloc allows
    // setting options at any time (they apply to what it reserves next).
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
    }
}

/// Gives back what this thread's heap holds but no longer uses: blocks
/// other threads freed (mimalloc queues them on the page until its owner
/// looks), and pages that became empty. A language server frees most of
/// what it allocates on another thread than the one that allocated it (an
/// analysis made while publishing is dropped by a later request), so
/// without this those pages stay resident until the owner allocates from
/// them again or ends.
pub fn collect() {
    // SAFETY: plain C calls on the current thread's heap and on its part of
    // the scratch heap (which is never deleted).
    unsafe {
        mi_collect(true);
        // (Only where this thread used it: collecting makes this thread's
        // part of the heap if there is none.)
        let scratch = SHARED_SCRATCH.load(Ordering::Acquire);
        if !scratch.is_null() && USED_SCRATCH.try_with(Cell::get).unwrap_or(false) {
            mi_heap_collect(scratch, true);
        }
    }
}

/// A cheap, unforced [`collect`] of this thread's heap: blocks other
/// threads freed and pages that emptied, without purging the arenas. For a
/// thread that runs many short jobs in a row (the resolving thread of
/// `lsp::resolve_thread`), after each one.
pub fn collect_light() {
    // SAFETY: a plain C call on the current thread's heap.
    unsafe { mi_collect(false) }
}

/// How often [`collect_when_idle`] collects, at most, per thread.
const IDLE_COLLECT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

thread_local! {
    /// When this thread last collected in [`collect_when_idle`].
    static LAST_COLLECT: Cell<Option<std::time::Instant>> = const { Cell::new(None) };
}

/// [`collect`], at most once per [`IDLE_COLLECT_INTERVAL`] on each thread:
/// for the language server's worker threads when they run out of work
/// (tokio's `on_thread_park`), which happens after every message.
pub fn collect_when_idle() {
    let now = std::time::Instant::now();
    let due = LAST_COLLECT
        .try_with(|last| match last.get() {
            Some(t) if now.duration_since(t) < IDLE_COLLECT_INTERVAL => false,
            _ => {
                last.set(Some(now));
                true
            }
        })
        .unwrap_or(false);
    if due {
        collect();
    }
}

thread_local! {
    /// The heap this thread allocates from inside [`compacted`] (null:
    /// mimalloc's default). Const-initialized and without a destructor, so
    /// reading it never allocates (the allocator itself reads it).
    static SCRATCH: Cell<Heap> = const { Cell::new(std::ptr::null_mut()) };
}

/// The current thread's scratch heap, or null.
fn scratch() -> Heap {
    SCRATCH.try_with(Cell::get).unwrap_or(std::ptr::null_mut())
}

/// mimalloc, allocating from the thread's scratch heap inside [`compacted`].
/// Freeing needs no heap: mimalloc finds a block's page from its address.
pub struct Allocator;

// SAFETY: every path returns mimalloc blocks of the requested size and
// alignment (or null), and frees and reallocates only mimalloc blocks.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let heap = scratch();
        if heap.is_null() {
            mimalloc::MiMalloc.alloc(layout)
        } else {
            mi_heap_malloc_aligned(heap, layout.size(), layout.align()).cast()
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let heap = scratch();
        if heap.is_null() {
            mimalloc::MiMalloc.alloc_zeroed(layout)
        } else {
            mi_heap_zalloc_aligned(heap, layout.size(), layout.align()).cast()
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        mimalloc::MiMalloc.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let heap = scratch();
        if heap.is_null() {
            mimalloc::MiMalloc.realloc(ptr, layout, new_size)
        } else {
            mi_heap_realloc_aligned(heap, ptr.cast(), new_size, layout.align()).cast()
        }
    }
}

thread_local! {
    /// Whether this thread allocated from the scratch heap.
    static USED_SCRATCH: Cell<bool> = const { Cell::new(false) };
}

/// The process's scratch heap (null until first used).
static SHARED_SCRATCH: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// The process's scratch heap, made on first use; null when mimalloc
/// cannot make one. Never deleted, so a block that escaped a computation
/// (a cache filled inside it) stays valid.
fn shared_scratch() -> Heap {
    let heap = SHARED_SCRATCH.load(Ordering::Acquire);
    if !heap.is_null() {
        return heap;
    }
    // SAFETY: a plain C call; null when mimalloc cannot make one.
    let made = unsafe { mi_heap_new() };
    if made.is_null() {
        return made;
    }
    let null = std::ptr::null_mut();
    match SHARED_SCRATCH.compare_exchange(null, made, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => made,
        Err(first) => {
            // Another thread made one first; ours was never used.
            // SAFETY: `made` came from `mi_heap_new` and is deleted once.
            unsafe { mi_heap_delete(made) };
            first
        }
    }
}

/// The scratch heap installed on this thread; uninstalled when dropped
/// (also when the computation panics), after a cheap collect of this
/// thread's part of it (pages mimalloc kept after they emptied).
struct ScratchHeap {
    heap: Heap,
    outer: Heap,
}

impl ScratchHeap {
    fn enter() -> Option<ScratchHeap> {
        let heap = shared_scratch();
        if heap.is_null() {
            return None;
        }
        let outer = SCRATCH.try_with(|s| s.replace(heap)).ok()?;
        let _ = USED_SCRATCH.try_with(|u| u.set(true));
        Some(ScratchHeap { heap, outer })
    }

    /// Back to the heap allocations used before [`ScratchHeap::enter`].
    fn leave(&self) {
        let _ = SCRATCH.try_with(|s| s.set(self.outer));
    }
}

impl Drop for ScratchHeap {
    fn drop(&mut self) {
        self.leave();
        // Not forced: a forced collect cost 0.11 ms a resolution, as much as
        // making a fresh heap (measured with the resolution of a 110-line
        // mapper, see the module documentation); the forced one runs when
        // the thread is idle ([`collect`]).
        // SAFETY: a plain C call on a heap that is never deleted.
        unsafe { mi_heap_collect(self.heap, false) }
    }
}

/// Runs `compute` with its allocations on a scratch heap and returns a copy
/// of its result made on the thread's ordinary heap (see the module
/// documentation). The value is the same as `compute()`'s; only where its
/// memory lies differs. Costs one clone of the result.
pub fn compacted<T: Clone>(compute: impl FnOnce() -> T) -> T {
    let Some(scratch) = ScratchHeap::enter() else {
        return compute();
    };
    let made = compute();
    scratch.leave();
    let kept = made.clone();
    drop(made);
    drop(scratch);
    kept
}

/// Runs `f` with its allocations on the thread's ordinary heap, also
/// inside [`compacted`]: for what a computation keeps past its end (a memo
/// of answers for the next computation), which on the scratch heap would
/// hold its pages resident.
pub fn outside_scratch(f: &mut dyn FnMut()) {
    struct Restore(Heap);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = SCRATCH.try_with(|s| s.set(self.0));
        }
    }
    let outer = SCRATCH.try_with(|s| s.replace(std::ptr::null_mut()));
    let _restore = outer.ok().map(Restore);
    f();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_is_the_computed_value_and_the_heap_is_restored() {
        let v = compacted(|| (0..1000).map(|i| format!("x{i}")).collect::<Vec<_>>());
        assert_eq!(v.len(), 1000);
        assert_eq!(v[999], "x999");
        assert!(scratch().is_null());
        // Nested: the inner one restores the outer scratch heap.
        let w = compacted(|| {
            let outer = scratch();
            let inner = compacted(|| vec![1u8; 100]);
            assert_eq!(scratch(), outer);
            inner
        });
        assert_eq!(w, vec![1u8; 100]);
        assert!(scratch().is_null());
    }

    #[test]
    fn outside_the_scratch_heap_and_back() {
        let mut inside = std::ptr::null_mut();
        compacted(|| {
            let scratch_heap = scratch();
            // (A scratch heap is installed here, or the test shows nothing.)
            assert!(!scratch_heap.is_null());
            outside_scratch(&mut || inside = scratch());
            assert_eq!(scratch(), scratch_heap);
        });
        assert!(inside.is_null());
        // And back after a panic.
        compacted(|| {
            let scratch_heap = scratch();
            let r = std::panic::catch_unwind(|| outside_scratch(&mut || panic!("inside")));
            assert!(r.is_err());
            assert_eq!(scratch(), scratch_heap);
        });
        assert!(scratch().is_null());
    }

    #[test]
    fn a_panic_inside_restores_the_heap() {
        let r = std::panic::catch_unwind(|| compacted::<Vec<u8>>(|| panic!("inside")));
        assert!(r.is_err());
        assert!(scratch().is_null());
    }
}
