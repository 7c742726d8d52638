//! The built-in search proposer (the default; no LLM).
//!
//! It walks the structured space — processor kind per task, memory per
//! region, layout per task, placement function per index launch — as a
//! greedy local search from the best mapper so far, and lets AutoGuide steer
//! it:
//! - a failed candidate with a mechanical AutoGuide edit is repaired first
//!   (the edit applied to that candidate's text);
//! - "move more tasks to GPU" puts the processor moves first;
//! - load imbalance and "try other IndexTaskMap functions" put the placement
//!   moves first; out-of-memory puts zero-copy moves first.
//!
//! The feedback mode limits what it may read, for the paper's ablation:
//! `execution-only` leaves it the score alone (no diagnosis, no edits),
//! `explain` adds the diagnosis (which rule fired: the move order),
//! `suggest` adds AutoGuide's mechanical edits (the repairs).
//!
//! Every move starts from the best spec; a move is kept only if it improves
//! the score; texts already evaluated are never proposed again.

use std::collections::{HashSet, VecDeque};

use mapwright_grammar::diagnostic::apply_edits;
use mapwright_runtime::decisions::Decisions;
use mapwright_runtime::machine::{MemKind, ProcKind};

use super::{Proposal, ProposalContext, ProposeError, Proposer};
use crate::autoguide::FeedbackMode;
use crate::optimize::rng::Rng;
use crate::optimize::space::{
    memories_for, propagated_layout, render, required_layout, IndexFn, LayoutChoice, Spec,
};

/// A candidate move: a label and the spec it leads to.
type Move = (String, Spec);

pub struct SearchProposer {
    rng: Rng,
    best: Spec,
    best_score: f64,
    /// Set once a repair produced a mapper that compiles and runs: later
    /// candidates build on it.
    repaired_base: Option<(String, Decisions)>,
    pending: Option<Move>,
    queue: VecDeque<Move>,
    tried: HashSet<String>,
    /// How many history records `tried` holds (each is added once).
    tried_records: usize,
    planned_once: bool,
}

impl SearchProposer {
    pub fn new(seed: u64) -> SearchProposer {
        SearchProposer {
            rng: Rng::new(seed),
            best: Spec::default(),
            best_score: f64::NAN,
            repaired_base: None,
            pending: None,
            queue: VecDeque::new(),
            tried: HashSet::new(),
            tried_records: 0,
            planned_once: false,
        }
    }

    /// The kind a task ends up on under `spec`.
    fn kind_of(spec: &Spec, base: &Decisions, task: &str) -> Option<ProcKind> {
        spec.procs.get(task).copied().or_else(|| {
            base.tasks
                .iter()
                .find(|t| t.task == task)
                .map(|t| t.proc_kind)
        })
    }

    /// Builds the ordered list of moves from the best spec, steered by the
    /// feedback rules AutoGuide attached to the latest outcome.
    fn plan(&mut self, ctx: &ProposalContext<'_>, base: &Decisions, rules: &[&str]) {
        let best = self.best.clone();
        let space = ctx.space;
        let mut procs_moves: Vec<Move> = Vec::new();
        let mut memory_moves: Vec<Move> = Vec::new();
        let mut layout_moves: Vec<Move> = Vec::new();
        let mut index_moves: Vec<Move> = Vec::new();

        // Processors: every task on its preferred kind (GPU > OMP > CPU).
        let mut all_fast = best.clone();
        for (task, kinds) in &space.procs {
            if let Some(k) = kinds.first() {
                all_fast.procs.insert(task.clone(), *k);
            }
        }
        // ...with every region in the fastest memory its processor reaches.
        let mut fast_mem = all_fast.clone();
        for (task, region) in &space.regions {
            if let Some(kind) = Self::kind_of(&fast_mem, base, task) {
                if let Some(m) = memories_for(kind, ctx.machine).first() {
                    fast_mem.memories.insert((task.clone(), region.clone()), *m);
                }
            }
        }
        // Layouts the libraries require (and the tasks sharing their regions).
        let with_required_layouts = |mut spec: Spec| {
            for task in &space.layout_tasks {
                if let Some(l) = propagated_layout(ctx.app, task) {
                    spec.layouts.insert(task.clone(), l);
                }
            }
            spec
        };
        // The informed default: fast kinds, fast memories, required layouts,
        // spread single launches, all at once (for a mapper that fails).
        let mut informed = with_required_layouts(fast_mem.clone());
        for t in &space.child_tasks {
            informed.same_point.insert(t.clone(), true);
            informed.collect.insert(t.clone(), true);
        }
        procs_moves.push(("all tasks on their fastest processor kind".into(), all_fast));
        memory_moves.push((
            "fastest processor kinds and fastest reachable memories".into(),
            fast_mem,
        ));
        layout_moves.push((
            "layouts the libraries require".into(),
            with_required_layouts(best.clone()),
        ));

        // Placement functions, first for all index launches at once, then per task.
        let order = [
            IndexFn::GridBlock,
            IndexFn::LinearBlock,
            IndexFn::NodeBlockProcCyclic,
            IndexFn::LinearCyclic,
            IndexFn::GridCyclic,
        ];
        for f in order {
            let mut s = best.clone();
            for task in &space.index_tasks {
                s.index_fns.insert(task.clone(), f);
            }
            index_moves.push((format!("place every index launch with {}", f.name()), s));
        }
        let mut by_size: Vec<&String> = space.index_tasks.iter().collect();
        by_size.sort_by_key(|t| {
            std::cmp::Reverse(
                ctx.app
                    .task(t)
                    .map(|t| t.domain.iter().product::<u64>())
                    .unwrap_or(0),
            )
        });
        for task in by_size {
            for f in IndexFn::ALL {
                if best.index_fns.get(task) == Some(&f) {
                    continue;
                }
                let mut s = best.clone();
                s.index_fns.insert(task.clone(), f);
                index_moves.push((format!("place `{task}` with {}", f.name()), s));
            }
        }

        // Zero-copy for a region name across tasks (shared/ghost data read by many).
        let mut region_names: Vec<&String> = space.regions.iter().map(|(_, r)| r).collect();
        region_names.sort();
        region_names.dedup();
        for name in region_names {
            let mut s = best.clone();
            let mut changed = false;
            for (task, region) in space.regions.iter().filter(|(_, r)| r == name) {
                if Self::kind_of(&s, base, task) == Some(ProcKind::Gpu) {
                    s.memories
                        .insert((task.clone(), region.clone()), MemKind::Zcmem);
                    changed = true;
                }
            }
            if changed {
                memory_moves.push((format!("`{name}` in zero-copy memory"), s));
            }
        }
        // Arguments a task only writes (initialisation, fills) produced
        // straight into zero-copy memory, so they do not occupy and then
        // leave a framebuffer; setup tasks with all their arguments.
        for t in ctx.app.tasks.iter().filter(|t| !t.regions.is_empty()) {
            if Self::kind_of(&best, base, &t.name) != Some(ProcKind::Gpu) {
                continue;
            }
            let written: Vec<&String> = t
                .regions
                .iter()
                .filter(|r| !t.timed || r.privilege == mapwright_runtime::app::Privilege::Write)
                .map(|r| &r.name)
                .collect();
            if written.is_empty() {
                continue;
            }
            let mut s = best.clone();
            for r in &written {
                s.memories
                    .insert((t.name.clone(), (*r).clone()), MemKind::Zcmem);
            }
            // Targeted, so tried before the per-region-name moves.
            memory_moves.insert(
                1.min(memory_moves.len()),
                (
                    format!(
                        "`{}` writes its output straight into zero-copy memory",
                        t.name
                    ),
                    s,
                ),
            );
        }
        // Layout alternatives for unconstrained tasks.
        for task in &space.layout_tasks {
            if required_layout(ctx.app, task).is_some() {
                continue;
            }
            for (soa, c_order) in [(true, false), (false, false), (true, true)] {
                let mut s = best.clone();
                s.layouts
                    .insert(task.clone(), LayoutChoice { soa, c_order });
                layout_moves.push((
                    format!(
                        "`{task}` {} {}",
                        if soa { "SOA" } else { "AOS" },
                        if c_order { "C_order" } else { "F_order" }
                    ),
                    s,
                ));
            }
        }

        // Spreading single launches onto their parent point's processor and
        // letting the runtime collect instances: what keeps per-point pieces
        // (GEMM tiles) from piling up in one framebuffer.
        let mut spread_moves: Vec<Move> = Vec::new();
        if !space.child_tasks.is_empty() {
            let mut s = best.clone();
            for t in &space.child_tasks {
                s.same_point.insert(t.clone(), true);
                s.collect.insert(t.clone(), true);
            }
            spread_moves.push((
                "run single launches on their parent point's processor and collect their instances"
                    .into(),
                s,
            ));
            let mut s = best.clone();
            for t in &space.child_tasks {
                s.same_point.insert(t.clone(), true);
            }
            spread_moves.push((
                "run single launches on their parent point's processor".into(),
                s,
            ));
        }
        for t in &space.collect_tasks {
            if best.collect.get(t) == Some(&true) {
                continue;
            }
            let mut s = best.clone();
            s.collect.insert(t.clone(), true);
            spread_moves.push((format!("collect `{t}`'s instances after use"), s));
        }
        // AutoGuide decides the order.
        let mut ordered: Vec<Vec<Move>> = Vec::new();
        if self.best_score <= 0.0 {
            ordered.push(vec![(
                "fast kinds and memories, required layouts, single launches spread".into(),
                informed,
            )]);
        }
        if rules.contains(&"out-of-memory") {
            ordered.push(std::mem::take(&mut spread_moves));
            ordered.push(
                std::mem::take(&mut memory_moves)
                    .into_iter()
                    .rev()
                    .collect(),
            );
        }
        if rules.contains(&"load-imbalance") || rules.contains(&"throughput") {
            ordered.push(std::mem::take(&mut index_moves));
        }
        ordered.push(procs_moves);
        ordered.push(memory_moves);
        ordered.push(layout_moves);
        ordered.push(spread_moves);
        ordered.push(index_moves);
        self.queue = ordered.into_iter().flatten().collect();
    }

    /// A random perturbation of the best spec, when the planned moves are used up.
    fn perturb(&mut self, ctx: &ProposalContext<'_>, base: &Decisions) -> Move {
        let mut s = self.best.clone();
        match self.rng.below(3) {
            0 => {
                if let Some(task) = self.rng.pick(&ctx.space.index_tasks).cloned() {
                    if let Some(f) = self.rng.pick(&IndexFn::ALL) {
                        s.index_fns.insert(task, *f);
                    }
                }
            }
            1 => {
                if let Some((task, region)) = self.rng.pick(&ctx.space.regions).cloned() {
                    if let Some(kind) = Self::kind_of(&s, base, &task) {
                        if let Some(m) = self.rng.pick(&memories_for(kind, ctx.machine)) {
                            s.memories.insert((task, region), *m);
                        }
                    }
                }
            }
            _ => {
                if let Some((task, kinds)) = self.rng.pick(&ctx.space.procs).cloned() {
                    if let Some(k) = self.rng.pick(&kinds) {
                        s.procs.insert(task, *k);
                    }
                }
            }
        }
        ("random perturbation of the best mapper".into(), s)
    }
}

impl Proposer for SearchProposer {
    fn name(&self) -> &str {
        "search"
    }

    fn propose(&mut self, ctx: &ProposalContext<'_>) -> Result<Proposal, ProposeError> {
        for r in ctx.history.iter().skip(self.tried_records) {
            self.tried.insert(r.source.clone());
        }
        self.tried_records = ctx.history.len();
        if self.best_score.is_nan() {
            self.best_score = ctx.history.first().map(|r| r.score).unwrap_or(0.0);
        }
        let last = ctx.history.last();
        let mut improved = false;
        if let Some(last) = last {
            match self.pending.take() {
                Some((_, spec)) if last.score > self.best_score => {
                    self.best_score = last.score;
                    self.best = spec;
                    improved = true;
                }
                // A repaired text (no spec) that beats the best becomes the
                // base later moves build on.
                None if last.iteration > 0 && last.score > self.best_score => {
                    if let Some(decisions) = (ctx.resolve)(&last.source) {
                        self.best_score = last.score;
                        self.repaired_base = Some((last.source.clone(), decisions));
                        self.best = Spec::default();
                        improved = true;
                    }
                }
                _ => {}
            }
        }

        // Repair: the best so far fails, and AutoGuide knows a mechanical edit
        // (after the planned structured moves, which fix capacity problems
        // better than moving one region to slow memory).
        let may_repair = ctx.feedback_mode == FeedbackMode::Suggest;
        if may_repair && self.best_score <= 0.0 && self.planned_once && self.queue.is_empty() {
            if let Some(failed) = ctx
                .history
                .iter()
                .rev()
                .find(|r| r.score <= 0.0 && r.edit().is_some())
            {
                if let Some(edit) = failed.edit() {
                    if let Some(text) = apply_edits(&failed.source, edit) {
                        if !self.tried.contains(&text) {
                            let rule = failed
                                .evaluation
                                .feedback
                                .iter()
                                .find(|f| f.edit.is_some())
                                .map(|f| f.rule.as_str())
                                .unwrap_or("autoguide");
                            return Ok(Proposal {
                                source: text,
                                spec: None,
                                rationale: format!("apply AutoGuide's edit ({rule})"),
                            });
                        }
                    }
                }
            }
        }
        let (base_text, base_decisions) = match &self.repaired_base {
            Some((t, d)) => (t.clone(), d.clone()),
            None => (ctx.base.to_string(), ctx.base_decisions.clone()),
        };

        if improved || !self.planned_once {
            let may_read_diagnosis = ctx.feedback_mode != FeedbackMode::ExecutionOnly;
            let rules: Vec<&str> = last
                .filter(|_| may_read_diagnosis)
                .map(|r| {
                    r.evaluation
                        .feedback
                        .iter()
                        .map(|f| f.rule.as_str())
                        .collect()
                })
                .unwrap_or_default();
            self.plan(ctx, &base_decisions, &rules);
            self.planned_once = true;
        }
        for _ in 0..1000 {
            let mv = match self.queue.pop_front() {
                Some(mv) => mv,
                None => self.perturb(ctx, &base_decisions),
            };
            let source = render(&base_text, &base_decisions, &mv.1, ctx.app);
            if self.tried.insert(source.clone()) {
                let rationale = mv.0.clone();
                self.pending = Some(mv.clone());
                return Ok(Proposal {
                    source,
                    spec: Some(mv.1),
                    rationale,
                });
            }
        }
        Err(ProposeError::Exhausted)
    }
}
