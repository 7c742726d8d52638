//! What one resolution leaves for the next against the same application
//! ([`ResolveMemo`]).
//!
//! A language server resolves a document against its application on every
//! keystroke, and a keystroke leaves most of what a resolution works out
//! as it was. Two things were worth keeping (`perf` of the server on a
//! 5,000-line mapper written for other applications):
//! - the nearest name to each unknown task or region name (the fixes of
//!   W0309 and W0310): with cannon, 320 distinct unknown task names, each
//!   measured against every task name, were a tenth of a resolution; with
//!   circuit, the unknown region names (each with a set of every argument
//!   name made for it) were a fifth;
//! - how many diagnostics the last resolution made: the resolver's list
//!   grew by doubling to some 700 diagnostics, moved at each step, another
//!   tenth. It now starts at the last count.
//!
//! Answers are only as good as the application they were measured
//! against: the memo keeps the application's task and argument names and
//! starts over when it is handed another. It is bounded
//! ([`MAX_NEAREST_ANSWERS`]), and a resolution that finds it in use (a
//! code action's resolution beside a keystroke's) works without it rather
//! than wait.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use mapwright_grammar::fast_hash::FastMap;
use mapwright_grammar::suggest::closest;

use crate::app::App;

/// The most answers a memo keeps; past it, it starts over (a file does not
/// name that many distinct unknown names; typing one does, a prefix at a
/// time).
pub const MAX_NEAREST_ANSWERS: usize = 4096;

/// Kept by the caller across resolutions of one application (the language
/// server keeps one per loaded target) and handed to each through
/// [`ResolveOptions::memo`](super::ResolveOptions::memo). Never changes a
/// resolution's result, only its time.
#[derive(Debug, Default)]
pub struct ResolveMemo {
    nearest: Mutex<Nearest>,
    /// How many diagnostics the last resolution made.
    diagnostics: AtomicUsize,
}

/// Runs its argument with allocations that outlive the resolution in
/// progress (see [`ResolveMemo::keeping_with`]).
pub type KeptAllocations = fn(&mut dyn FnMut());

impl ResolveMemo {
    /// A memo whose answers are allocated through `keep`. A caller that
    /// runs each resolution on a scratch heap, given back as a whole
    /// afterwards (the language server), hands a function that runs its
    /// argument on the ordinary heap: answers kept on the scratch heap
    /// would hold its pages resident.
    pub fn keeping_with(keep: KeptAllocations) -> ResolveMemo {
        ResolveMemo {
            nearest: Mutex::new(Nearest {
                keep: Some(keep),
                ..Nearest::default()
            }),
            diagnostics: AtomicUsize::new(0),
        }
    }

    /// The nearest-name answers for `app` (emptied first if they were
    /// measured against another application); `None` while another
    /// resolution holds them.
    pub(super) fn nearest(&self, app: &App) -> Option<MutexGuard<'_, Nearest>> {
        let mut held = match self.nearest.try_lock() {
            Ok(held) => held,
            // A resolution that panicked with them left nothing half-made:
            // each answer is inserted whole.
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        held.measure_against(app);
        Some(held)
    }

    /// How many diagnostics the last resolution made (0 before the first).
    pub(super) fn last_diagnostics(&self) -> usize {
        self.diagnostics.load(Ordering::Relaxed)
    }

    pub(super) fn set_last_diagnostics(&self, count: usize) {
        self.diagnostics.store(count, Ordering::Relaxed);
    }
}

/// The names a nearest name is chosen from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Pool {
    /// The application's task names.
    Tasks,
    /// Every argument name and alias of the application.
    AllArguments,
    /// The argument names and aliases of these tasks (indices in the
    /// application, in the statement's order).
    ArgumentsOf(Box<[u32]>),
    /// The argument names (no aliases) of one task.
    ArgumentNamesOf(u32),
}

/// [`closest`]'s answers, by pool and name asked.
#[derive(Debug, Default)]
pub(super) struct Nearest {
    /// The application's task names, each followed by its arguments'
    /// names and aliases: what the answers were measured against.
    signature: Vec<Box<str>>,
    answers: FastMap<Pool, FastMap<Box<str>, Option<Box<str>>>>,
    count: usize,
    /// Where kept answers are allocated (see [`ResolveMemo::keeping_with`]).
    keep: Option<KeptAllocations>,
}

/// `app`'s task names, each followed by its arguments' names and aliases.
fn signature(app: &App) -> impl Iterator<Item = &str> {
    app.tasks.iter().flat_map(|t| {
        std::iter::once(t.name.as_str()).chain(t.regions.iter().flat_map(|a| a.name_and_aliases()))
    })
}

impl Nearest {
    /// Runs `f`, through [`Nearest::keep`] where there is one.
    fn kept(keep: Option<KeptAllocations>, mut f: impl FnMut()) {
        match keep {
            Some(keep) => keep(&mut f),
            None => f(),
        }
    }

    /// Starts over unless the answers were measured against `app`'s names.
    fn measure_against(&mut self, app: &App) {
        if !self.signature.iter().map(|s| &**s).eq(signature(app)) {
            Self::kept(self.keep, || {
                self.signature = signature(app).map(Box::from).collect();
            });
            self.answers.clear();
            self.count = 0;
        }
    }

    /// [`closest`]'s answer for `name` among `candidates()` (the names of
    /// `pool` in the application last measured against), measured once
    /// (each time where there is no pool to keep it under).
    pub(super) fn nearest<'c>(
        &mut self,
        pool: impl Into<Option<Pool>>,
        name: &str,
        candidates: impl FnOnce() -> Vec<&'c str>,
    ) -> Option<String> {
        let Some(pool) = pool.into() else {
            return closest(name, candidates()).map(str::to_string);
        };
        if let Some(answer) = self.answers.get(&pool).and_then(|a| a.get(name)) {
            return answer.as_deref().map(str::to_string);
        }
        let best = closest(name, candidates());
        if self.count >= MAX_NEAREST_ANSWERS {
            self.answers.clear();
            self.count = 0;
        }
        self.count += 1;
        let answers = &mut self.answers;
        // (The pool made again inside: the caller's was made on the heap
        // of the resolution.)
        Self::kept(self.keep, || {
            answers
                .entry(pool.clone())
                .or_default()
                .insert(name.into(), best.map(Box::from));
        });
        best.map(str::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASKS: [&str; 3] = ["init_cells", "calculate_new_currents", "distribute_charge"];

    fn circuit() -> App {
        App::builtin("circuit").expect("built in")
    }

    #[test]
    fn answers_are_closest_answers_and_asked_once() {
        let memo = ResolveMemo::default();
        let mut nearest = memo.nearest(&circuit()).expect("free");
        for name in [
            "init_cell",
            "calc_new_currents",
            "nothing_like_it",
            "Init_Cells",
        ] {
            let want = closest(name, TASKS).map(str::to_string);
            assert_eq!(
                nearest.nearest(Pool::Tasks, name, || TASKS.to_vec()),
                want,
                "{name}"
            );
            // The second answer is the kept one: the candidates are not
            // asked for again.
            let again = nearest.nearest(Pool::Tasks, name, || panic!("asked again"));
            assert_eq!(again, want, "{name}, again");
        }
        // Without a pool, the answer is measured and not kept.
        let unkept = nearest.nearest(None, "init_cell", || TASKS.to_vec());
        assert_eq!(unkept, closest("init_cell", TASKS).map(str::to_string));
        assert_eq!(nearest.count, 4);
        // Another pool is another question.
        let other = nearest.nearest(Pool::ArgumentNamesOf(0), "init_cell", || vec!["x"]);
        assert_eq!(other, None);
        assert_eq!(nearest.count, 5);
    }

    /// A memo made with `keeping_with` allocates its answers through it,
    /// and only on a miss.
    #[test]
    fn kept_answers_are_made_through_the_callers_function() {
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        fn keep(f: &mut dyn FnMut()) {
            CALLS.fetch_add(1, Ordering::SeqCst);
            f();
        }
        let memo = ResolveMemo::keeping_with(keep);
        let mut nearest = memo.nearest(&circuit()).expect("free");
        let after_signature = CALLS.load(Ordering::SeqCst);
        assert_eq!(after_signature, 1);
        let first = nearest.nearest(Pool::Tasks, "init_cell", || TASKS.to_vec());
        let again = nearest.nearest(Pool::Tasks, "init_cell", || TASKS.to_vec());
        assert_eq!(first, again);
        assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn another_application_starts_over() {
        let memo = ResolveMemo::default();
        memo.nearest(&circuit())
            .expect("free")
            .nearest(Pool::Tasks, "init_cell", || TASKS.to_vec());
        let stencil = App::builtin("stencil").expect("built in");
        let mut nearest = memo.nearest(&stencil).expect("free");
        assert!(nearest.answers.is_empty());
        // The same application again (its own copy) keeps its answers.
        nearest.nearest(Pool::Tasks, "stencil", || vec!["stencil"]);
        drop(nearest);
        let nearest = memo
            .nearest(&App::builtin("stencil").unwrap())
            .expect("free");
        assert_eq!(nearest.count, 1);
        drop(nearest);
        // An argument renamed is another application.
        let mut renamed = App::builtin("stencil").unwrap();
        let arg = renamed.tasks.iter_mut().flat_map(|t| &mut t.regions).next();
        arg.expect("stencil's tasks have arguments").name.push('2');
        assert!(memo.nearest(&renamed).expect("free").answers.is_empty());
    }

    #[test]
    fn in_use_elsewhere_is_not_waited_for_and_the_bound_holds() {
        let memo = ResolveMemo::default();
        let app = circuit();
        let mut held = memo.nearest(&app).expect("free");
        assert!(memo.nearest(&app).is_none());
        for i in 0..MAX_NEAREST_ANSWERS + 10 {
            held.nearest(Pool::Tasks, &format!("unknown_{i}"), || TASKS.to_vec());
        }
        assert!(held.count <= MAX_NEAREST_ANSWERS);
        assert!(held.answers.values().map(|a| a.len()).sum::<usize>() <= MAX_NEAREST_ANSWERS);
    }

    /// Resolutions handed one memo, across edits and applications, give
    /// what resolutions without one give.
    #[test]
    fn a_memo_changes_no_resolution() {
        use crate::app::App;
        use crate::machine::Machine;
        use crate::resolve_mapping::{resolve_parsed_with, EvalPlacer, ResolveOptions};

        let machine = Machine::preset("p100x4").expect("p100x4");
        // Unknown task names, unknown argument names with no task, with
        // known tasks, and an argument of another task (W0309, W0310).
        let texts = [
            "Task * GPU,CPU;\nTask init_cell CPU;\nRegion calc_new_currents * GPU FBMEM;\nTask dgemm GPU;\nRegion * rp_privat GPU FBMEM;\nRegion calculate_new_currents rp_ghost_x GPU ZCMEM;\nRegion init_nodes rp_wires GPU FBMEM;\n",
            "Task * GPU,CPU;\nTask init_cells CPU;\nTask dgem GPU;\nTask nope CPU;\nRegion * rp_privat GPU FBMEM;\nRegion distribute_charge rp_sharde GPU FBMEM;\nRegion init_nodes rp_wires GPU SYSMEM;\nLayout get_elapsed all_time FBMEM SOA;\n",
        ];
        let memo = ResolveMemo::default();
        for app in ["circuit", "cannon", "circuit"] {
            let app = App::builtin(app).expect("built in");
            for text in texts {
                let analysis = mapwright_grammar::analyze(text);
                let resolve = |memo: Option<&ResolveMemo>| {
                    let mut placer =
                        EvalPlacer::new(&analysis.parsed.program, &machine).expect("placer");
                    let options = ResolveOptions {
                        memo,
                        ..ResolveOptions::default()
                    };
                    resolve_parsed_with(
                        &analysis.parsed,
                        text,
                        &app,
                        &machine,
                        &mut placer,
                        options,
                    )
                };
                let without = resolve(None);
                assert!(
                    without.diagnostics.iter().any(|d| d.code == "W0309"),
                    "{text}"
                );
                assert_eq!(
                    format!("{:?}", resolve(Some(&memo))),
                    format!("{without:?}"),
                    "{text}"
                );
                assert_eq!(memo.last_diagnostics(), without.diagnostics.len());
            }
        }
    }
}
