//! What one resolution leaves for the next against the same application
//! ([`ResolveMemo`]).
//!
//! A language server resolves a document against its application on every
//! keystroke, and a keystroke leaves most of what a resolution works out
//! as it was. Two things were worth keeping (`perf` of the server with
//! cannon on a 5,000-line mapper written for other applications):
//! - the nearest task name to each unknown one (W0309's fix): 320 distinct
//!   unknown names, each measured against every task name, were a tenth
//!   of a resolution;
//! - how many diagnostics the last resolution made: the resolver's list
//!   grew by doubling to some 700 diagnostics, moved at each step, another
//!   tenth. It now starts at the last count.
//!
//! Answers are only as good as the application they were measured
//! against: the memo keeps its task names and starts over when it is
//! handed another application. It is bounded ([`MAX_NEAREST_ANSWERS`]),
//! and a resolution that finds it in use (a code action's resolution
//! beside a keystroke's) works without it rather than wait.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use mapwright_grammar::fast_hash::FastMap;
use mapwright_grammar::suggest::closest;

/// The most unknown names whose nearest task a memo keeps; past it, it
/// starts over (a file does not name that many distinct unknown tasks;
/// typing one does, a prefix at a time).
pub const MAX_NEAREST_ANSWERS: usize = 4096;

/// Kept by the caller across resolutions of one application (the language
/// server keeps one per loaded target) and handed to each through
/// [`ResolveOptions::memo`](super::ResolveOptions::memo). Never changes a
/// resolution's result, only its time.
#[derive(Debug, Default)]
pub struct ResolveMemo {
    nearest: Mutex<NearestTasks>,
    /// How many diagnostics the last resolution made.
    diagnostics: AtomicUsize,
}

impl ResolveMemo {
    /// The nearest-task answers for an application with `task_names`
    /// (emptied first if they were measured against other names); `None`
    /// while another resolution holds them.
    pub(super) fn nearest_tasks(
        &self,
        task_names: &[&str],
    ) -> Option<MutexGuard<'_, NearestTasks>> {
        let mut held = match self.nearest.try_lock() {
            Ok(held) => held,
            // A resolution that panicked with them left nothing half-made:
            // each answer is inserted whole.
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        held.measure_against(task_names);
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

/// The nearest task name to each unknown name asked, as an index into the
/// task names they were measured against.
#[derive(Debug, Default)]
pub(super) struct NearestTasks {
    task_names: Vec<String>,
    answers: FastMap<Box<str>, Option<u32>>,
}

impl NearestTasks {
    /// Starts over unless the answers were measured against `task_names`.
    pub(super) fn measure_against(&mut self, task_names: &[&str]) {
        if !self
            .task_names
            .iter()
            .map(String::as_str)
            .eq(task_names.iter().copied())
        {
            self.task_names = task_names.iter().map(|n| n.to_string()).collect();
            self.answers.clear();
        }
    }

    /// [`closest`]'s answer for `name` among `task_names` (the names this
    /// was last measured against), measured once.
    pub(super) fn nearest<'n>(&mut self, name: &str, task_names: &[&'n str]) -> Option<&'n str> {
        debug_assert!(self
            .task_names
            .iter()
            .map(String::as_str)
            .eq(task_names.iter().copied()));
        if let Some(answer) = self.answers.get(name) {
            return answer.and_then(|i| task_names.get(i as usize).copied());
        }
        let best = closest(name, task_names.iter().copied());
        let index = best.and_then(|b| task_names.iter().position(|t| std::ptr::eq(*t, b)));
        if self.answers.len() >= MAX_NEAREST_ANSWERS {
            self.answers.clear();
        }
        self.answers
            .insert(name.into(), index.and_then(|i| u32::try_from(i).ok()));
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASKS: [&str; 3] = ["init_cells", "calculate_new_currents", "distribute_charge"];

    #[test]
    fn answers_are_closest_answers_and_asked_once() {
        let memo = ResolveMemo::default();
        let mut nearest = memo.nearest_tasks(&TASKS).expect("free");
        for name in [
            "init_cell",
            "calc_new_currents",
            "nothing_like_it",
            "Init_Cells",
        ] {
            let want = closest(name, TASKS.iter().copied());
            assert_eq!(nearest.nearest(name, &TASKS), want, "{name}");
            // The second answer is the kept one.
            assert_eq!(nearest.nearest(name, &TASKS), want, "{name}, again");
        }
        assert_eq!(nearest.answers.len(), 4);
    }

    #[test]
    fn another_application_starts_over() {
        let memo = ResolveMemo::default();
        memo.nearest_tasks(&TASKS)
            .expect("free")
            .nearest("init_cell", &TASKS);
        let other = ["init_cell_grid", "stencil"];
        let mut nearest = memo.nearest_tasks(&other).expect("free");
        assert!(nearest.answers.is_empty());
        assert_eq!(
            nearest.nearest("init_cell", &other),
            closest("init_cell", other.iter().copied())
        );
    }

    #[test]
    fn in_use_elsewhere_is_not_waited_for_and_the_bound_holds() {
        let memo = ResolveMemo::default();
        let mut held = memo.nearest_tasks(&TASKS).expect("free");
        assert!(memo.nearest_tasks(&TASKS).is_none());
        for i in 0..MAX_NEAREST_ANSWERS + 10 {
            held.nearest(&format!("unknown_{i}"), &TASKS);
        }
        assert!(held.answers.len() <= MAX_NEAREST_ANSWERS);
    }

    /// Resolutions handed one memo, across edits and applications, give
    /// what resolutions without one give.
    #[test]
    fn a_memo_changes_no_resolution() {
        use crate::app::App;
        use crate::machine::Machine;
        use crate::resolve_mapping::{resolve_parsed_with, EvalPlacer, ResolveOptions};

        let machine = Machine::preset("p100x4").expect("p100x4");
        let texts = [
            "Task * GPU,CPU;\nTask init_cell CPU;\nRegion calc_new_currents * GPU FBMEM;\nTask dgemm GPU;\n",
            "Task * GPU,CPU;\nTask init_cells CPU;\nRegion calc_new_currents * GPU FBMEM;\nTask dgem GPU;\nTask nope CPU;\n",
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
