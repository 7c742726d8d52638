//! Which documents keep their analysis in memory.
//!
//! An [`Analysis`] (tokens, tree, names, types, diagnostics, line index) is
//! about 25 times its text. Editors ask about the few documents on screen,
//! so only the most recently used analyses stay: at most [`KEPT_ANALYSES`]
//! documents and [`KEPT_TEXT_BYTES`] of their text (the most recent one is
//! always kept, however large). A document holds its analysis weakly
//! through an [`AnalysisSlot`]; the strong references are in a process-wide
//! recently-used list (the server has one set of open documents). A request
//! that holds an analysis keeps it alive until it answers, whatever the
//! list says; an evicted analysis is computed again on the next request,
//! with the same result (analysis is a pure function of the text), so a
//! client sees no difference but the time.
//!
//! What eviction costs: the next request on that document parses and checks
//! it in full (an edit of it is no longer re-analysed incrementally).

use std::collections::VecDeque;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use super::analysis::Analysis;
use super::recent::RecentlyUsed;

/// At most this many analyses stay in memory, most recently used first.
pub const KEPT_ANALYSES: usize = 12;

/// And at most this much text (summed over the kept analyses' documents):
/// about 6 MB of analyses. (The text itself is shared with the document;
/// its length stands for the size of the analysis made from it.)
pub const KEPT_TEXT_BYTES: usize = 256 * 1024;

/// The strong references to the most recently used analyses.
static RECENT: RecentlyUsed<Analysis> = RecentlyUsed::new();

/// Marks `a` as just used, dropping the least recently used ones beyond the
/// bounds.
fn keep_recent(a: &Arc<Analysis>) {
    let evicted = RECENT.touch(a, |recent| {
        how_many_to_keep(recent.iter().map(|kept| kept.text.len()))
    });
    drop_elsewhere(evicted);
}

/// Drops evicted analyses on a thread of their own. Why: after an edit of
/// a big file the previous version's analysis is evicted while its
/// successor is computed for the publish, and freeing its tree (tens of
/// thousands of nodes) was about 7 % of the server's time on a 5,000-line file
/// (`perf`, see the keystroke runs in README.md's git history); the publish need not
/// wait for it.
fn drop_elsewhere(evicted: VecDeque<Arc<Analysis>>) {
    if !evicted.is_empty() {
        drop_in_background(Box::new(evicted));
    }
}

/// Drops `garbage` on the server's dropping thread (see [`drop_elsewhere`]),
/// or here if that thread cannot be started.
pub fn drop_in_background(garbage: Box<dyn Send>) {
    type Garbage = Box<dyn Send>;
    static DROPPER: OnceLock<Option<Mutex<Sender<Garbage>>>> = OnceLock::new();
    let dropper = DROPPER.get_or_init(|| {
        let (tx, rx) = channel::<Garbage>();
        std::thread::Builder::new()
            .name("mapwright-drop".into())
            .spawn(move || {
                yield_to_other_threads();
                for batch in rx {
                    drop(batch);
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let unsent = match dropper {
        Some(tx) => tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(garbage)
            .err()
            .map(|e| e.0),
        None => Some(garbage),
    };
    drop(unsent);
}

/// Lowers the calling thread to the least priority, where the system
/// allows it (Linux: the nice value is the thread's own). Freeing the last
/// version's analysis is work nobody waits for, but its thread woke while a
/// keystroke's check and resolution held both cores of a small machine,
/// and took its turn from one of them.
fn yield_to_other_threads() {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn setpriority(
                which: std::ffi::c_int,
                who: std::ffi::c_uint,
                prio: std::ffi::c_int,
            ) -> std::ffi::c_int;
        }
        const PRIO_PROCESS: std::ffi::c_int = 0;
        // SAFETY: a plain system call on the calling thread (`who` 0); a
        // failure leaves the priority as it was, which is harmless.
        unsafe {
            setpriority(PRIO_PROCESS, 0, 19);
        }
    }
}

/// Takes `a` out of the recently-used list: its document version was
/// superseded, and the analysis of the next version is about to be made
/// from it, consuming it where nothing else holds it (see
/// `Analysis::after_edit_consuming`).
pub fn release(a: &Arc<Analysis>) {
    drop(RECENT.take(a));
}

/// How many of the analyses, most recent first, whose documents' text
/// lengths are `lens`, stay within the bounds (at least one).
fn how_many_to_keep(lens: impl Iterator<Item = usize>) -> usize {
    let mut keep = 0;
    let mut bytes = 0;
    for len in lens {
        bytes += len;
        if keep > 0 && (keep == KEPT_ANALYSES || bytes > KEPT_TEXT_BYTES) {
            break;
        }
        keep += 1;
    }
    keep
}

/// Where a document version keeps its analysis: held weakly (the strong
/// reference is in the recently-used list, or with a request using it).
#[derive(Debug, Default)]
pub struct AnalysisSlot {
    inner: Mutex<Weak<Analysis>>,
}

impl AnalysisSlot {
    /// The analysis, from `compute` unless it is held; marked as just used.
    /// Concurrent callers wait for one computation.
    pub fn get_or_analyse(&self, compute: impl FnOnce() -> Analysis) -> Arc<Analysis> {
        let mut slot = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let a = slot.upgrade().unwrap_or_else(|| {
            let a = Arc::new(compute());
            *slot = Arc::downgrade(&a);
            a
        });
        drop(slot);
        keep_recent(&a);
        a
    }

    /// The analysis if it is still in memory (not marked as used).
    pub fn held(&self) -> Option<Arc<Analysis>> {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .upgrade()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// The dropping thread's priority is its own: lowered there, the
    /// others' stays.
    #[cfg(target_os = "linux")]
    #[test]
    fn only_the_calling_thread_yields() {
        extern "C" {
            fn getpriority(which: std::ffi::c_int, who: std::ffi::c_uint) -> std::ffi::c_int;
        }
        // SAFETY: plain system calls on the calling thread.
        let nice = || unsafe { getpriority(0, 0) };
        let before = nice();
        let lowered = std::thread::spawn(move || {
            yield_to_other_threads();
            nice()
        })
        .join()
        .expect("the thread ends");
        assert_eq!(lowered, 19);
        assert_eq!(nice(), before);
    }

    const SRC: &str = "m = Machine(GPU);\nTask * GPU;\nx = y;\n";

    #[test]
    fn a_held_analysis_is_not_computed_again() {
        let slot = AnalysisSlot::default();
        let computed = AtomicUsize::new(0);
        let compute = || {
            computed.fetch_add(1, Ordering::SeqCst);
            Analysis::new(SRC)
        };
        let first = slot.get_or_analyse(compute);
        // Held here, so no eviction (by other tests either) can drop it.
        let again = slot.get_or_analyse(compute);
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(computed.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_evicted_analysis_is_computed_again_and_equal() {
        let slot = AnalysisSlot::default();
        let computed = AtomicUsize::new(0);
        let compute = || {
            computed.fetch_add(1, Ordering::SeqCst);
            Analysis::new(SRC)
        };
        let before = slot.get_or_analyse(compute);
        let program = before.parsed.program.clone();
        let diagnostics: Vec<_> = before.diagnostics().into_iter().cloned().collect();
        drop(before);
        // More recently used analyses push it out.
        let others: Vec<AnalysisSlot> = (0..KEPT_ANALYSES)
            .map(|_| AnalysisSlot::default())
            .collect();
        for o in &others {
            o.get_or_analyse(|| Analysis::new(SRC));
        }
        // (Evicted analyses are dropped on another thread: wait for it.)
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while slot.held().is_some() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(slot.held().is_none(), "evicted");
        let after = slot.get_or_analyse(compute);
        assert_eq!(computed.load(Ordering::SeqCst), 2);
        assert_eq!(after.parsed.program, program);
        assert_eq!(after.diagnostics(), diagnostics.iter().collect::<Vec<_>>());
    }

    #[test]
    fn the_bounds_count_documents_and_bytes_and_keep_the_newest() {
        assert_eq!(how_many_to_keep([].into_iter()), 0);
        assert_eq!(how_many_to_keep([10; 100].into_iter()), KEPT_ANALYSES);
        // The newest stays although it alone is over the byte bound.
        assert_eq!(how_many_to_keep([KEPT_TEXT_BYTES * 2, 10].into_iter()), 1);
        let half = KEPT_TEXT_BYTES / 2;
        assert_eq!(how_many_to_keep([half, half, 1, 1].into_iter()), 2);
        assert_eq!(how_many_to_keep([half, half + 1, 1].into_iter()), 1);
    }
}
