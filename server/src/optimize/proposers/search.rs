//! The built-in search proposer (the default; no LLM).
//!
//! A local search over the structured space — processor kind per task,
//! memory per region, layout per task, placement function per index launch —
//! that builds on what it learns:
//! - Every move starts from the *anchor*: the best mapper so far, or, while
//!   nothing runs yet, the most promising failed one (one that got past the
//!   anchor's error, even into another). A candidate that beats the anchor
//!   becomes the anchor, so what a move or a repair found is kept while the
//!   next problem is worked on.
//! - When the latest candidate or the anchor failed and AutoGuide has a
//!   mechanical edit, the next candidate is that edit applied to it
//!   (`suggest` mode): repairs compose with the moves that led there.
//! - The diagnosis orders the moves: tasks first go to their fastest
//!   processor kind, then the fastest memories and the layouts libraries
//!   require; out-of-memory puts spreading and zero-copy moves first;
//!   placement functions come only once kinds, memories and layouts run, and
//!   load imbalance moves them ahead of the remaining memory and layout
//!   alternatives.
//!
//! The feedback mode limits what it may read, for the paper's ablation:
//! `execution-only` leaves it the score alone (a fixed move order, no
//! repairs), `explain` adds the diagnosis (which rule fired: the move
//! order), `suggest` adds AutoGuide's mechanical edits (the repairs).
//! Texts already evaluated are never proposed again.

use std::collections::{HashSet, VecDeque};

use mapwright_grammar::diagnostic::apply_edits;
use mapwright_runtime::app::Privilege;
use mapwright_runtime::decisions::Decisions;
use mapwright_runtime::machine::{MemKind, ProcKind};

use super::{Proposal, ProposalContext, ProposeError, Proposer};
use crate::autoguide::FeedbackMode;
use crate::optimize::history::Record;
use crate::optimize::rng::Rng;
use crate::optimize::space::{
    memories_for, propagated_layout, render, required_layout, IndexFn, LayoutChoice, Spec,
};

/// The rationale of a candidate that applies AutoGuide's edit.
const REPAIR: &str = "apply AutoGuide's edit";

/// A candidate move: a label and the spec (relative to the anchor) it leads to.
type Move = (String, Spec);

/// The mapper moves start from.
#[derive(Debug, Clone)]
struct Anchor {
    text: String,
    decisions: Decisions,
    score: f64,
    /// How far a failure got: 0 does not compile, 1 compiles but the run
    /// fails, 2 runs.
    stage: u8,
    /// Its run's status (`ok`, or which failure).
    status: String,
}

impl Anchor {
    fn of(record: &Record, ctx: &ProposalContext<'_>) -> Anchor {
        let decisions = record
            .evaluation
            .decisions
            .clone()
            .or_else(|| (ctx.resolve)(&record.source))
            .unwrap_or_default();
        Anchor {
            text: record.source.clone(),
            decisions,
            score: record.score,
            stage: stage(record),
            status: record.evaluation.status.clone(),
        }
    }
}

fn stage(r: &Record) -> u8 {
    if r.score > 0.0 {
        2
    } else if r.evaluation.status == "compile_error" || r.evaluation.status == "proposer_error" {
        0
    } else {
        1
    }
}

pub struct SearchProposer {
    rng: Rng,
    anchor: Option<Anchor>,
    queue: VecDeque<Move>,
    /// Whether `queue` was planned for the current anchor.
    planned: bool,
    tried: HashSet<String>,
    /// How many history records have been read.
    seen: usize,
    /// The label of the move proposed last, until its outcome is read.
    pending: Option<String>,
    /// Moves whose outcome did not beat the anchor they started from.
    unhelpful: HashSet<String>,
}

impl SearchProposer {
    pub fn new(seed: u64) -> SearchProposer {
        SearchProposer {
            rng: Rng::new(seed),
            anchor: None,
            queue: VecDeque::new(),
            planned: false,
            tried: HashSet::new(),
            seen: 0,
            pending: None,
            unhelpful: HashSet::new(),
        }
    }

    /// Reads the records made since the last call: the first is the anchor,
    /// a better one replaces it, and while nothing runs, a failure that got
    /// past the anchor's own (further, or just elsewhere) replaces it too.
    fn learn(&mut self, ctx: &ProposalContext<'_>) {
        for r in ctx.history.iter().skip(self.seen) {
            self.tried.insert(r.source.clone());
            let adopt = match &self.anchor {
                None => true,
                Some(a) if r.score > a.score => true,
                Some(a) => {
                    a.score <= 0.0
                        && r.score <= 0.0
                        && r.source != a.text
                        && (stage(r) > a.stage
                            || (stage(r) == a.stage
                                && a.stage > 0
                                && r.evaluation.status != a.status))
                        // It compiled (the run kept its decisions).
                        && r.evaluation.decisions.is_some()
                }
            };
            let improved = self.anchor.as_ref().is_some_and(|a| r.score > a.score);
            if let Some(label) = self.pending.take() {
                if !improved {
                    self.unhelpful.insert(label);
                }
            }
            if adopt {
                self.anchor = Some(Anchor::of(r, ctx));
                self.planned = false;
                self.queue.clear();
            }
        }
        self.seen = ctx.history.len();
    }

    /// AutoGuide's repair of the latest candidate, or of the anchor, when
    /// it failed: the edit applied to that text.
    fn repair(&self, ctx: &ProposalContext<'_>) -> Option<Proposal> {
        let anchor = self.anchor.as_ref()?;
        // A repair that failed at run time the same way as what it repaired
        // made no progress: a planned move gets the next turn. (A mapper
        // that does not compile has only repairs to go on.)
        if let [.., before, last] = ctx.history {
            if last.rationale.starts_with(REPAIR)
                && last.score <= 0.0
                && stage(last) > 0
                && last.evaluation.status == before.evaluation.status
                && !self.queue.is_empty()
            {
                return None;
            }
        }
        // While the anchor runs, a failed move gets one repair, not a chain
        // of them: the moves from the anchor are the better use of a run.
        let latest = ctx.history.last().filter(|r| {
            r.score <= 0.0 && (anchor.score <= 0.0 || !r.rationale.starts_with(REPAIR))
        });
        let anchor_record = ctx
            .history
            .iter()
            .rev()
            .find(|r| r.source == anchor.text && r.score <= 0.0);
        for r in latest.into_iter().chain(anchor_record) {
            let Some(edit) = r.edit() else { continue };
            let Some(text) = apply_edits(&r.source, edit) else {
                continue;
            };
            // A repair that edits a pinned statement is not the user's to
            // receive (the loop would reject it unrun).
            if self.tried.contains(&text) || ctx.space.pins.violation(&text, None).is_some() {
                continue;
            }
            let rule = r
                .evaluation
                .feedback
                .iter()
                .find(|f| f.edit.is_some())
                .map(|f| f.rule.as_str())
                .unwrap_or("autoguide");
            return Some(Proposal {
                source: text,
                spec: None,
                rationale: format!("{REPAIR} ({rule})"),
            });
        }
        None
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

    /// The ordered moves from the anchor, steered by the rules AutoGuide
    /// attached to its outcome (empty in execution-only mode).
    fn plan(&mut self, ctx: &ProposalContext<'_>, rules: &[String]) {
        let Some(anchor) = self.anchor.clone() else {
            return;
        };
        let base = &anchor.decisions;
        let runs = anchor.score > 0.0;
        let space = ctx.space;
        let has = |rule: &str| rules.iter().any(|r| r == rule);

        // The fundamentals: fastest kinds, fastest memories, the layouts
        // the libraries require, single launches spread over their parents'
        // processors.
        // (Control tasks that only launch others are left where they are:
        // moving them costs a run and changes nothing measurable.)
        let mut all_fast = Spec::default();
        for (task, kinds) in &space.procs {
            let works = ctx.app.task(task).is_some_and(|t| !t.inner);
            if let Some(k) = kinds.first().filter(|_| works) {
                all_fast.procs.insert(task.clone(), *k);
            }
        }
        // The fastest memory each region's processor reaches, for the kinds
        // of `procs`.
        let fastest_memories = |procs: &Spec| {
            let mut spec = procs.clone();
            for (task, region) in &space.regions {
                if let Some(kind) = Self::kind_of(procs, base, task) {
                    if let Some(m) = memories_for(kind, ctx.machine).first() {
                        spec.memories.insert((task.clone(), region.clone()), *m);
                    }
                }
            }
            spec
        };
        let fast_mem = fastest_memories(&Spec::default());
        let with_required_layouts = |mut spec: Spec| {
            for task in &space.layout_tasks {
                if let Some(l) = propagated_layout(ctx.app, task) {
                    spec.layouts.insert(task.clone(), l);
                }
            }
            spec
        };
        let spread = |mut spec: Spec| {
            for t in &space.child_tasks {
                spec.same_point.insert(t.clone(), true);
                spec.collect.insert(t.clone(), true);
            }
            spec
        };
        let informed = spread(with_required_layouts(fastest_memories(&all_fast)));
        // Legion's default layout (SOA, F_order) where no library asks for
        // another: what Regent's stride checks and the kernels expect.
        let mut standard_layouts = with_required_layouts(Spec::default());
        for task in &space.layout_tasks {
            standard_layouts
                .layouts
                .entry(task.clone())
                .or_insert(LayoutChoice {
                    soa: true,
                    c_order: false,
                });
        }
        let fundamentals: Vec<Move> = vec![
            ("all tasks on their fastest processor kind".into(), all_fast),
            (
                "the fastest memory each region's processor reaches".into(),
                fast_mem,
            ),
            (
                "layouts the libraries require".into(),
                with_required_layouts(Spec::default()),
            ),
            (
                "layouts the libraries require, SOA F_order elsewhere".into(),
                standard_layouts,
            ),
        ];

        // Memory alternatives: outputs written straight into zero-copy
        // memory, then zero-copy per region name (shared data read by many).
        let mut memory_moves: Vec<Move> = Vec::new();
        for t in ctx.app.tasks.iter().filter(|t| !t.regions.is_empty()) {
            if Self::kind_of(&Spec::default(), base, &t.name) != Some(ProcKind::Gpu) {
                continue;
            }
            let written: Vec<&String> = t
                .regions
                .iter()
                .filter(|r| !t.timed || r.privilege == Privilege::Write)
                .map(|r| &r.name)
                .collect();
            if written.is_empty() {
                continue;
            }
            let mut s = Spec::default();
            for r in &written {
                s.memories
                    .insert((t.name.clone(), (*r).clone()), MemKind::Zcmem);
            }
            memory_moves.push((
                format!(
                    "`{}` writes its output straight into zero-copy memory",
                    t.name
                ),
                s,
            ));
        }
        let mut region_names: Vec<&String> = space.regions.iter().map(|(_, r)| r).collect();
        region_names.sort();
        region_names.dedup();
        for name in region_names {
            let mut s = Spec::default();
            for (task, region) in space.regions.iter().filter(|(_, r)| r == name) {
                if Self::kind_of(&s, base, task) == Some(ProcKind::Gpu) {
                    s.memories
                        .insert((task.clone(), region.clone()), MemKind::Zcmem);
                }
            }
            if !s.memories.is_empty() {
                memory_moves.push((format!("`{name}` in zero-copy memory"), s));
            }
        }

        // Layout alternatives for tasks no library constrains.
        let mut layout_moves: Vec<Move> = Vec::new();
        for task in &space.layout_tasks {
            if required_layout(ctx.app, task).is_some() {
                continue;
            }
            for (soa, c_order) in [(true, false), (false, false), (true, true)] {
                let mut s = Spec::default();
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

        // Spreading single launches and collecting instances: what keeps
        // per-point pieces (GEMM tiles) from piling up in one framebuffer.
        let mut spread_moves: Vec<Move> = Vec::new();
        if !space.child_tasks.is_empty() {
            spread_moves.push((
                "run single launches on their parent point's processor and collect their instances"
                    .into(),
                spread(Spec::default()),
            ));
            let mut s = Spec::default();
            for t in &space.child_tasks {
                s.same_point.insert(t.clone(), true);
            }
            spread_moves.push((
                "run single launches on their parent point's processor".into(),
                s,
            ));
        }
        let mut collect_moves: Vec<Move> = Vec::new();
        for t in &space.collect_tasks {
            let mut s = Spec::default();
            s.collect.insert(t.clone(), true);
            collect_moves.push((format!("collect `{t}`'s instances after use"), s));
        }

        // Placement functions: all index launches at once, then per task
        // (largest launch first).
        let mut index_moves: Vec<Move> = Vec::new();
        for f in [
            IndexFn::GridBlock,
            IndexFn::LinearBlock,
            IndexFn::NodeBlockProcCyclic,
            IndexFn::LinearCyclic,
            IndexFn::GridCyclic,
        ] {
            let mut s = Spec::default();
            for task in &space.index_tasks {
                s.index_fns.insert(task.clone(), f);
            }
            index_moves.push((format!("place every index launch with {}", f.name()), s));
        }
        // The evenest placement first: the points each processor gets,
        // read from the resolved candidates (no run needed).
        let imbalance = |spec: &Spec| -> f64 {
            // The stacked form decides the same points as the in-place one
            // (which is checked against it) for one resolve instead of several.
            let text = render(&anchor.text, base, spec, ctx.app);
            let Some(d) = (ctx.resolve)(&text) else {
                return f64::INFINITY;
            };
            d.tasks
                .iter()
                .filter(|t| t.placement.len() > 1)
                .map(|t| {
                    let counts = t.points_per_processor();
                    let max = counts.iter().map(|(_, n)| *n).max().unwrap_or(0) as f64;
                    let procs = f64::from(ctx.machine.nodes())
                        * f64::from(ctx.machine.procs_per_node(t.proc_kind));
                    max / (t.placement.len() as f64 / procs.max(1.0)).ceil().max(1.0)
                })
                .sum()
        };
        let mut ranked: Vec<(f64, Move)> = index_moves
            .drain(..)
            .map(|mv| (imbalance(&mv.1), mv))
            .collect();
        ranked.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
        index_moves = ranked.into_iter().map(|(_, mv)| mv).collect();
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
            for f in IndexFn::ALL.into_iter().skip(1) {
                let mut s = Spec::default();
                s.index_fns.insert(task.clone(), f);
                index_moves.push((format!("place `{task}` with {}", f.name()), s));
            }
        }

        let mut ordered: Vec<Vec<Move>> = Vec::new();
        if !runs {
            // Everything known to be right at once, then piece by piece.
            ordered.push(vec![(
                "fast kinds and memories, required layouts, single launches spread".into(),
                informed,
            )]);
        }
        // A placement function that fails: replace it for every launch.
        if [
            "slice-out-of-bound",
            "mapping-function-failed",
            "tuple-index-out-of-bound",
            "machine-model-kind-mismatch",
        ]
        .iter()
        .any(|r| has(r))
        {
            let (all_at_once, per_task): (Vec<Move>, Vec<Move>) = std::mem::take(&mut index_moves)
                .into_iter()
                .partition(|(label, _)| label.starts_with("place every"));
            ordered.push(all_at_once);
            index_moves = per_task;
        }
        if has("out-of-memory") {
            // Too much in one memory: spread the pieces (single launches,
            // then index launches evenly over all processors), then move
            // regions to zero-copy memory.
            ordered.push(std::mem::take(&mut spread_moves));
            let (all_at_once, per_task): (Vec<Move>, Vec<Move>) = std::mem::take(&mut index_moves)
                .into_iter()
                .partition(|(label, _)| label.starts_with("place every"));
            ordered.push(all_at_once);
            index_moves = per_task;
            memory_moves.reverse();
            ordered.push(std::mem::take(&mut memory_moves));
        }
        ordered.push(fundamentals);
        ordered.push(std::mem::take(&mut spread_moves));
        // Placement only once kinds, memories and layouts run; imbalance
        // puts it before the remaining alternatives.
        if runs && (has("load-imbalance") || has("throughput")) {
            ordered.push(std::mem::take(&mut index_moves));
        }
        ordered.push(memory_moves);
        ordered.push(layout_moves);
        if runs {
            ordered.push(index_moves);
        }
        ordered.push(collect_moves);
        // Moves that did not help from an earlier anchor go last.
        let (fresh, stale): (Vec<Move>, Vec<Move>) = ordered
            .into_iter()
            .flatten()
            .partition(|(label, _)| !self.unhelpful.contains(label));
        self.queue = fresh.into_iter().chain(stale).collect();
        self.planned = true;
    }

    /// A random perturbation of the anchor, when the planned moves are used up.
    fn perturb(&mut self, ctx: &ProposalContext<'_>) -> Move {
        let mut s = Spec::default();
        let Some(anchor) = &self.anchor else {
            return ("random perturbation".into(), s);
        };
        let base = &anchor.decisions;
        let runs = anchor.score > 0.0;
        match self.rng.below(if runs { 3 } else { 2 }) {
            0 => {
                if let Some((task, region)) = self.rng.pick(&ctx.space.regions).cloned() {
                    if let Some(kind) = Self::kind_of(&s, base, &task) {
                        if let Some(m) = self.rng.pick(&memories_for(kind, ctx.machine)) {
                            s.memories.insert((task, region), *m);
                        }
                    }
                }
            }
            1 => {
                if let Some((task, kinds)) = self.rng.pick(&ctx.space.procs).cloned() {
                    if let Some(k) = self.rng.pick(&kinds) {
                        s.procs.insert(task, *k);
                    }
                }
            }
            _ => {
                if let Some(task) = self.rng.pick(&ctx.space.index_tasks).cloned() {
                    if let Some(f) = self.rng.pick(&IndexFn::ALL) {
                        s.index_fns.insert(task, *f);
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
        self.learn(ctx);
        if self.anchor.is_none() {
            // No history (a proposer asked before the user's mapper ran).
            self.anchor = Some(Anchor {
                text: ctx.base.to_string(),
                decisions: ctx.base_decisions.clone(),
                score: 0.0,
                stage: 0,
                status: String::new(),
            });
        }
        if !self.planned {
            let rules: Vec<String> = if ctx.feedback_mode == FeedbackMode::ExecutionOnly {
                Vec::new()
            } else {
                let text = self.anchor.as_ref().map(|a| a.text.clone());
                ctx.history
                    .iter()
                    .rev()
                    .find(|r| Some(&r.source) == text.as_ref())
                    .map(|r| {
                        r.evaluation
                            .feedback
                            .iter()
                            .map(|f| f.rule.clone())
                            .collect()
                    })
                    .unwrap_or_default()
            };
            self.plan(ctx, &rules);
        }
        if ctx.feedback_mode == FeedbackMode::Suggest {
            if let Some(p) = self.repair(ctx) {
                return Ok(p);
            }
        }
        let Some(anchor) = self.anchor.clone() else {
            return Err(ProposeError::Exhausted);
        };
        for _ in 0..1000 {
            let (rationale, spec) = match self.queue.pop_front() {
                Some(mv) => mv,
                None => self.perturb(ctx),
            };
            let source = ctx.render(&anchor.text, &anchor.decisions, &spec);
            if self.tried.insert(source.clone()) {
                self.pending = Some(rationale.clone());
                return Ok(Proposal {
                    source,
                    spec: Some(spec),
                    rationale,
                });
            }
        }
        Err(ProposeError::Exhausted)
    }
}
