//! The one thread that resolves documents against their application while
//! publishing: jobs run there one at a time, in arrival order, and the
//! thread stays up between them.
//!
//! Why not tokio's blocking pool, as before: with an application every
//! keystroke's publish is a blocking job, and the pool made two kinds of
//! outliers on a small document. A follow-up job collected the allocator's
//! heap after each resolution (mimalloc keeps pages freed by other threads
//! until their owner looks); it ran while the next keystroke was analysed,
//! and when the next resolution arrived before it had finished, the pool
//! started a new thread, whose heap then started empty (page faults). And
//! an idle pool thread ends after 0.5 s (kept short for memory, see
//! `lsp::run_stdio`), so the first keystroke after a pause paid a thread
//! start. Here the thread collects lightly after each job and in full
//! only once it has had no job for [`IDLE_COLLECT_AFTER`]: off the latency
//! path while someone types, and before the memory is looked at when they
//! stop.
//!
//! One thread also bounds the transient memory of resolving: opening many
//! documents at once resolves them one after another instead of on as many
//! pool threads (each with megabytes of transient work on a big mapper).
//! A job for a version that is no longer current returns at once (see
//! `server::sync`), so a queue of them costs little.

use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How long the thread must have been idle before it gives memory back
/// ([`crate::alloc::collect`]).
pub const IDLE_COLLECT_AFTER: Duration = Duration::from_millis(100);

type Job = Box<dyn FnOnce() + Send>;

/// The sender to the thread; `None` when it could not be started.
fn sender() -> Option<&'static Mutex<Sender<Job>>> {
    static SENDER: OnceLock<Option<Mutex<Sender<Job>>>> = OnceLock::new();
    SENDER
        .get_or_init(|| {
            let (tx, rx) = channel::<Job>();
            std::thread::Builder::new()
                .name("mapwright-resolve".into())
                .spawn(move || {
                    let mut dirty = false;
                    loop {
                        match rx.recv_timeout(IDLE_COLLECT_AFTER) {
                            Ok(job) => {
                                // (A job catches its own panics; this keeps
                                // the thread alive if one does not.)
                                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                                // Unforced, so cheap: it keeps the
                                // thread's heap from filling with blocks
                                // other threads freed while someone types
                                // (with it, the 110-line file's p99 with
                                // an application stayed at or under 1 ms
                                // in 5 quiet-machine runs, against two of
                                // 1.85-1.95 ms without; see the keystroke
                                // runs in README.md's git history).
                                crate::alloc::collect_light();
                                dirty = true;
                            }
                            Err(RecvTimeoutError::Timeout) => {
                                if dirty {
                                    crate::alloc::collect();
                                    dirty = false;
                                }
                            }
                            Err(RecvTimeoutError::Disconnected) => break,
                        }
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

/// Runs `job` on the resolving thread and waits for its result without
/// blocking the async worker. If the thread cannot be started (or has
/// gone), the job runs on tokio's blocking pool instead, as before.
/// `Err` only when the job panicked (a message, as `guard::catch` gives).
pub async fn run<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let wrapped: Job = Box::new(move || {
        let _ = tx.send(super::guard::catch(job));
    });
    let unsent = match sender() {
        Some(s) => s
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(wrapped)
            .err()
            .map(|e| e.0),
        None => Some(wrapped),
    };
    if let Some(job) = unsent {
        if let Err(e) = tokio::task::spawn_blocking(job).await {
            return Err(e.to_string());
        }
    }
    match rx.await {
        Ok(r) => r,
        Err(_) => Err("the resolving job ended without an answer".into()),
    }
}

/// Queues `job` on the resolving thread without waiting for it: work that
/// a later job there will read (a resolution started early, see
/// `Document::analysis_resolving`). A panic in it is caught and dropped
/// (the later job then does the work itself and reports it). If the thread
/// cannot be started, the job is dropped: it is only ever work a later job
/// would otherwise do.
pub fn submit(job: impl FnOnce() + Send + 'static) {
    if let Some(s) = sender() {
        let wrapped: Job = Box::new(move || {
            let _ = super::guard::catch(job);
        });
        let _ = s.lock().unwrap_or_else(|e| e.into_inner()).send(wrapped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_run_on_the_thread_and_a_panic_is_an_error() {
        let a = run(|| 1 + 1).await;
        assert_eq!(a, Ok(2));
        let p = run(|| -> i32 { panic!("inside") }).await;
        assert_eq!(p, Err("inside".to_string()));
        // The thread survives a panicking job.
        let b = run(|| std::thread::current().name().map(str::to_string)).await;
        assert_eq!(b, Ok(Some("mapwright-resolve".to_string())));
    }
}
