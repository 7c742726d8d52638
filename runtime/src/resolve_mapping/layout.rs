//! Layout: the first `Layout` entry of the four lookup keys wins outright;
//! and the layout errors (library constraints, conflicting layouts in one
//! memory kind, shadowed statements).

use mapwright_grammar::fast_hash::FastMap;
use std::collections::BTreeMap;

use mapwright_grammar::ast::{self, Constraint, StmtKind};
use mapwright_grammar::{Diagnostic, Fix, Span};

use crate::app::{App, DimOrder, FieldLayout, LibraryConstraint, Privilege};
use crate::decisions::{LayoutDecision, Order};
use crate::machine::MemKind;

use super::layout_fix::{short_note, Candidate, FixGoal, Verdict};
use super::memory::dsl_mem;
use super::resolver::{LayoutHit, Members, Resolver};
use super::rules::{LayoutRule, TaskLookup};

/// The layout one `Layout` statement's constraints give: Legion's default
/// (SOA, F_order) updated constraint by constraint, later ones of a family
/// overriding earlier ones (`ConstraintsNode::update`).
pub(super) fn fold_constraints(constraints: &[Constraint]) -> LayoutDecision {
    let mut l = LayoutDecision::default();
    for c in constraints {
        match c {
            Constraint::Soa(_) => l.soa = true,
            Constraint::Aos(_) => l.soa = false,
            Constraint::COrder(_) => l.order = Order::C,
            Constraint::FOrder(_) => l.order = Order::F,
            Constraint::Compact(_) => l.compact = true,
            Constraint::Exact(_) => l.exact = true,
            Constraint::Align { op, value, .. } => l.align = Some((*op, *value)),
        }
    }
    l
}

/// The DSL text of a layout, e.g. `SOA C_order Align==128`.
pub fn layout_text(l: &LayoutDecision) -> String {
    let mut parts = vec![
        if l.soa { "SOA" } else { "AOS" }.to_string(),
        match l.order {
            Order::C => "C_order",
            Order::F => "F_order",
        }
        .to_string(),
    ];
    if l.compact {
        parts.push("Compact".into());
    }
    if l.exact {
        parts.push("Exact".into());
    }
    if let Some((op, v)) = l.align {
        parts.push(format!("Align{}{v}", op.text()));
    }
    parts.join(" ")
}

/// Whether `l` satisfies a library constraint.
fn satisfies(l: &LayoutDecision, c: &LibraryConstraint) -> bool {
    let order_ok = match c.order {
        Some(DimOrder::COrder) => l.order == Order::C,
        Some(DimOrder::FOrder) => l.order == Order::F,
        None => true,
    };
    let field_ok = match c.field_layout {
        Some(FieldLayout::Soa) => l.soa,
        Some(FieldLayout::Aos) => !l.soa,
        None => true,
    };
    order_ok && field_ok
}

/// `l` changed just enough to satisfy `c`.
fn repaired(l: &LayoutDecision, c: &LibraryConstraint) -> LayoutDecision {
    let mut out = *l;
    match c.order {
        Some(DimOrder::COrder) => out.order = Order::C,
        Some(DimOrder::FOrder) => out.order = Order::F,
        None => {}
    }
    match c.field_layout {
        Some(FieldLayout::Soa) => out.soa = true,
        Some(FieldLayout::Aos) => out.soa = false,
        None => {}
    }
    out
}

/// What a library constraint requires, in DSL words.
fn requirement_text(c: &LibraryConstraint) -> String {
    let mut parts = Vec::new();
    if let Some(o) = c.field_layout {
        parts.push(match o {
            FieldLayout::Soa => "SOA",
            FieldLayout::Aos => "AOS",
        });
    }
    if let Some(o) = c.order {
        parts.push(match o {
            DimOrder::COrder => "C_order",
            DimOrder::FOrder => "F_order",
        });
    }
    parts.join(" ")
}

impl<'a> Resolver<'a> {
    /// The layout (`query_constraint`).
    pub(super) fn resolve_layout(
        &self,
        table: &TaskLookup<'_, LayoutRule<'_>>,
        keys: &[(&str, &str)],
        mem: MemKind,
    ) -> (LayoutDecision, Option<LayoutHit>) {
        let want = dsl_mem(mem);
        for key in keys {
            let Some(list) = table.get(key.0, key.1) else {
                continue;
            };
            let entry = list
                .iter()
                .find(|r| r.mem.is_some() && r.mem == want)
                .or_else(|| list.iter().find(|r| r.mem.is_none()));
            if let Some(e) = entry {
                return (
                    fold_constraints(e.constraints),
                    Some(LayoutHit {
                        stmt: e.stmt,
                        task: key.0.to_string(),
                        region: key.1.to_string(),
                        mem: e.mem,
                    }),
                );
            }
        }
        (LayoutDecision::default(), None)
    }
}

/// A Layout statement to add (or an existing one to rewrite): the scope
/// (task key, region key, memory) and the constraints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LayoutEdit {
    pub(super) task: String,
    pub(super) region: String,
    pub(super) mem: Option<ast::MemKind>,
    pub(super) layout: LayoutDecision,
}

impl LayoutEdit {
    pub(super) fn text(&self) -> String {
        format!(
            "Layout {} {} {} {};",
            self.task,
            self.region,
            self.mem.map_or("*", |m| m.name()),
            layout_text(&self.layout)
        )
    }
}

/// Union-find over region names: arguments sharing a name or alias are one
/// logical region (one field space). Keys borrow the application's names.
fn region_families(app: &App) -> FastMap<&str, usize> {
    let mut parent: Vec<usize> = Vec::new();
    let mut ids: FastMap<&str, usize> = FastMap::default();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for t in &app.tasks {
        for a in &t.regions {
            let mut first: Option<usize> = None;
            for n in std::iter::once(&a.name).chain(a.aliases.iter()) {
                let id = *ids.entry(n.as_str()).or_insert_with(|| {
                    parent.push(parent.len());
                    parent.len() - 1
                });
                match first {
                    None => first = Some(id),
                    Some(f) => {
                        let (a, b) = (find(&mut parent, f), find(&mut parent, id));
                        if a != b {
                            parent[b] = a;
                        }
                    }
                }
            }
        }
    }
    for v in ids.values_mut() {
        *v = find(&mut parent, *v);
    }
    ids
}

impl<'a> Resolver<'a> {
    /// Specificity of a deciding rule (higher: more specific).
    fn hit_rank(hit: &Option<LayoutHit>) -> u8 {
        match hit {
            None => 0,
            Some(h) => {
                1 + 4 * u8::from(h.task != "*")
                    + 2 * u8::from(h.region != "*")
                    + u8::from(h.mem.is_some())
            }
        }
    }

    /// The span a layout problem is reported on when no statement decided:
    /// the statement that put the task on its processor kind, else the map
    /// statement, else the first statement.
    fn default_anchor(&self, ti: usize) -> Span {
        self.traces[ti]
            .kind_stmt
            .or(self.traces[ti].map_stmt)
            .map(|s| self.stmt_span(s))
            .or_else(|| self.program.stmts.first().map(|s| s.span))
            .unwrap_or_default()
    }

    /// The constraint token of a Layout statement that sets a family the
    /// library constraint cares about, to point at it.
    fn offending_token(
        &self,
        stmt: usize,
        c: &LibraryConstraint,
        l: &LayoutDecision,
    ) -> Option<Span> {
        let StmtKind::Layout { constraints, .. } = &self.stmt(stmt)?.kind else {
            return None;
        };
        constraints.iter().rev().find_map(|k| match k {
            Constraint::COrder(s) if c.order == Some(DimOrder::FOrder) && l.order == Order::C => {
                Some(*s)
            }
            Constraint::FOrder(s) if c.order == Some(DimOrder::COrder) && l.order == Order::F => {
                Some(*s)
            }
            Constraint::Soa(s) if c.field_layout == Some(FieldLayout::Aos) => Some(*s),
            Constraint::Aos(s) if c.field_layout == Some(FieldLayout::Soa) => Some(*s),
            _ => None,
        })
    }

    /// The physical instances grouped by the DSL mapper's layout cache
    /// entry: (memory kind, field-space family), the family `None` for
    /// reduction instances (one entry per memory kind and reduction
    /// operator, whatever the region). The members of one entry get one
    /// layout at run time (the first task mapped fixes it).
    pub(super) fn layout_cache_entries(&self) -> BTreeMap<(MemKind, Option<usize>), Members> {
        let app = self.app;
        let families = region_families(app);
        let mut inst: BTreeMap<(MemKind, Option<usize>), Members> = BTreeMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            for (ai, arg) in task.regions.iter().enumerate() {
                let r = &self.tasks[ti].regions[ai];
                if !r.instance.is_physical() || !self.traces[ti].runnable {
                    continue;
                }
                let family = if arg.privilege == Privilege::Reduce {
                    None
                } else {
                    Some(
                        families
                            .get(arg.name.as_str())
                            .copied()
                            .unwrap_or(usize::MAX),
                    )
                };
                inst.entry((r.memory, family)).or_default().push((ti, ai));
            }
        }
        inst
    }

    pub(super) fn layout_checks(&mut self) {
        let app = self.app;
        self.summary.parse_errors = self
            .parsed
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .count();

        // --- library constraints (E0305) --------------------------------
        // (deciding statement, constraint) -> [(task, argument)]
        let mut groups: BTreeMap<(Option<usize>, usize), Members> = BTreeMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            let kind = self.tasks[ti].proc_kind;
            for (ai, arg) in task.regions.iter().enumerate() {
                let r = &self.tasks[ti].regions[ai];
                if !r.instance.is_physical() || !self.traces[ti].runnable {
                    continue;
                }
                for c in app.constraints_for(task, kind, arg) {
                    if satisfies(&r.layout, c) {
                        continue;
                    }
                    let ci = app
                        .library_constraints
                        .iter()
                        .position(|x| std::ptr::eq(x, c))
                        .unwrap_or(0);
                    self.summary
                        .violations
                        .insert((task.name.clone(), arg.index));
                    let decider = self.traces[ti].regions[ai]
                        .layout_hit
                        .as_ref()
                        .map(|h| h.stmt);
                    groups.entry((decider, ci)).or_default().push((ti, ai));
                }
            }
        }

        // --- one instance, several layouts (W0306) ------------------------
        let mut conflicts = Vec::new();
        for ((mem, family), items) in self.layout_cache_entries() {
            let mut layouts: Vec<(LayoutDecision, Vec<(usize, usize)>)> = Vec::new();
            for (ti, ai) in items {
                let l = self.tasks[ti].regions[ai].layout;
                match layouts.iter_mut().find(|(x, _)| *x == l) {
                    Some((_, v)) => v.push((ti, ai)),
                    None => layouts.push((l, vec![(ti, ai)])),
                }
            }
            if layouts.len() > 1 {
                self.summary.conflicts += layouts.len() - 1;
                conflicts.push((mem, family.is_none(), layouts));
            }
        }

        // --- shadowed statements (W0307) ------------------------------------
        let shadows = self.find_shadowed_layouts();
        self.summary.shadows = shadows.len();

        // The summary is complete: candidate fixes can be judged against it.
        for ((decider, ci), items) in groups {
            self.library_violation(decider, ci, &items);
        }
        for (mem, reduce, layouts) in conflicts {
            self.layout_conflict(mem, reduce, &layouts);
        }
        self.report_shadowed_layouts(shadows);
    }

    fn library_violation(&mut self, decider: Option<usize>, ci: usize, items: &[(usize, usize)]) {
        let app = self.app;
        let Some(c) = app.library_constraints.get(ci) else {
            return;
        };
        let Some(&(t0, a0)) = items.first() else {
            return;
        };
        let layout = self.tasks[t0].regions[a0].layout;
        let need = requirement_text(c);
        let mut by_task: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for &(ti, ai) in items {
            by_task
                .entry(ti)
                .or_default()
                .push(format!("`{}`", self.tasks[ti].regions[ai].region));
        }
        let who: Vec<String> = by_task
            .iter()
            .map(|(ti, rs)| format!("`{}` ({})", self.tasks[*ti].task, rs.join(", ")))
            .collect();
        let source = match decider {
            Some(s) => format!(
                "{} gives them {}",
                self.describe_stmt(s),
                layout_text(&layout)
            ),
            None => format!(
                "no Layout statement applies, so they get Legion's default {}",
                layout_text(&layout)
            ),
        };
        let span = match decider {
            Some(s) => self
                .offending_token(s, c, &layout)
                .unwrap_or_else(|| self.stmt_span(s)),
            None => self.default_anchor(t0),
        };
        let first_error = c.error.lines().next().unwrap_or("").trim().to_string();
        let mut d = Diagnostic::error(
            "E0305",
            span,
            format!(
                "{} needs {need} for {}; {source}",
                c.library,
                who.join(", ")
            ),
        )
        .with_label(format!("{} rejects this layout", c.library))
        .with_note(format!("the run fails with: {first_error}"));
        if !c.notes.is_empty() {
            d = d.with_note(short_note(&c.notes));
        }
        if let Some(ts) = self.traces[t0].kind_stmt.map(|s| self.stmt_span(s)) {
            if !ts.contains(span.start()) {
                d = d.with_related(
                    ts,
                    format!(
                        "`{}` runs on {} here",
                        self.tasks[t0].task, self.tasks[t0].proc_kind
                    ),
                );
            }
        }
        if self.fixes {
            let target = repaired(&layout, c);
            let want: Vec<(usize, usize, LayoutDecision)> =
                items.iter().map(|&(ti, ai)| (ti, ai, target)).collect();
            if let Some(fix) = self.layout_fix(decider, &want, FixGoal::Library(want.clone())) {
                d = d.with_fix(fix);
            }
        }
        self.diags.push(d);
        let kind = match c.library.as_str() {
            "cuBLAS" => "cublas_illegal_parameter",
            "Regent" => "stride_mismatch",
            _ => "layout_constraint",
        };
        let rule = decider.map(|s| self.stmt_span(s));
        self.fatal(1, t0 * 10 + 5, kind, c.error.clone(), rule);
    }

    fn layout_conflict(
        &mut self,
        mem: MemKind,
        reduce: bool,
        layouts: &[(LayoutDecision, Vec<(usize, usize)>)],
    ) {
        let app = self.app;
        // The layout to keep: one a library needs, else the most
        // specifically requested one.
        // The layout to keep: one that satisfies every library constraint
        // of every member (if there are any), the most specifically
        // requested among those.
        let mut required: Vec<&LibraryConstraint> = Vec::new();
        for (_, members) in layouts {
            for &(ti, ai) in members {
                let task = &app.tasks[ti];
                for c in app.constraints_for(task, self.tasks[ti].proc_kind, &task.regions[ai]) {
                    if !required.iter().any(|r| std::ptr::eq(*r, c)) {
                        required.push(c);
                    }
                }
            }
        }
        let rank = |i: usize| {
            let best = layouts[i]
                .1
                .iter()
                .map(|&(ti, ai)| Self::hit_rank(&self.traces[ti].regions[ai].layout_hit))
                .max()
                .unwrap_or(0);
            (best, std::cmp::Reverse(i))
        };
        let acceptable: Vec<usize> = (0..layouts.len())
            .filter(|&i| required.iter().all(|c| satisfies(&layouts[i].0, c)))
            .collect();
        let fixable = !acceptable.is_empty();
        let wanted = acceptable
            .iter()
            .copied()
            .max_by_key(|&i| rank(i))
            .or_else(|| (0..layouts.len()).max_by_key(|&i| rank(i)))
            .unwrap_or(0);
        let (w_layout, w_members) = &layouts[wanted];
        let describe = |members: &[(usize, usize)], l: &LayoutDecision| -> String {
            let mut tasks: Vec<String> = Vec::new();
            for &(ti, ai) in members {
                let s = format!(
                    "`{}` (`{}`)",
                    self.tasks[ti].task, self.tasks[ti].regions[ai].region
                );
                if !tasks.contains(&s) {
                    tasks.push(s);
                }
            }
            let extra = tasks.len().saturating_sub(3);
            tasks.truncate(3);
            if extra > 0 {
                tasks.push(format!("{extra} more"));
            }
            format!("{} for {}", layout_text(l), tasks.join(", "))
        };
        // Report on the statement that asked for the kept layout, or (if the
        // default gives it) on one that asked for another.
        let anchor_member = w_members
            .iter()
            .find(|&&(ti, ai)| self.traces[ti].regions[ai].layout_hit.is_some())
            .copied();
        let other_stmt = layouts
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != wanted)
            .flat_map(|(_, (_, m))| m.iter())
            .find_map(|&(ti, ai)| {
                self.traces[ti].regions[ai]
                    .layout_hit
                    .as_ref()
                    .map(|h| h.stmt)
            });
        let span = match anchor_member {
            Some((ti, ai)) => self.traces[ti].regions[ai]
                .layout_hit
                .as_ref()
                .map(|h| self.stmt_span(h.stmt))
                .unwrap_or_default(),
            None => other_stmt
                .map(|s| self.stmt_span(s))
                .unwrap_or_else(|| self.default_anchor(w_members[0].0)),
        };
        let others: Vec<String> = layouts
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != wanted)
            .map(|(_, (l, m))| describe(m, l))
            .collect();
        let what = if reduce {
            format!("reduction instances in {mem}")
        } else {
            let mut names: Vec<String> = Vec::new();
            for (_, m) in layouts {
                for &(ti, ai) in m {
                    let n = format!("`{}`", self.tasks[ti].regions[ai].region);
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
            }
            if names.len() == 1 {
                format!("region {} in {mem}", names[0])
            } else {
                format!("regions {} (one field space) in {mem}", names.join(", "))
            }
        };
        let mut d = Diagnostic::warning(
            "W0306",
            span,
            format!(
                "contradictory layouts for {what}: {} but {}",
                describe(w_members, w_layout),
                others.join("; ")
            ),
        )
        .with_label("layout may not apply")
        .with_note(if reduce {
            "the DSL mapper caches one reduction layout per memory kind and reduction operator (dsl_default_policy_select_layout_constraints): the first task mapped fixes it for the others"
        } else {
            "the DSL mapper caches one layout per memory kind and field space (dsl_default_policy_select_layout_constraints): whichever task maps first fixes the layout for the others, and the other statement silently does not apply"
        });
        let mut related: Vec<usize> = layouts
            .iter()
            .flat_map(|(_, m)| m.iter())
            .filter_map(|&(ti, ai)| {
                self.traces[ti].regions[ai]
                    .layout_hit
                    .as_ref()
                    .map(|h| h.stmt)
            })
            .collect();
        related.sort();
        related.dedup();
        for s in related {
            let sp = self.stmt_span(s);
            if sp != span {
                d = d.with_related(sp, "also decides this instance's layout");
            }
        }
        if self.fixes && fixable {
            let want: Vec<(usize, usize, LayoutDecision)> = layouts
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != wanted)
                .flat_map(|(_, (_, m))| m.iter())
                .map(|&(ti, ai)| (ti, ai, *w_layout))
                .collect();
            let decider = want.iter().find_map(|&(ti, ai, _)| {
                self.traces[ti].regions[ai]
                    .layout_hit
                    .as_ref()
                    .map(|h| h.stmt)
            });
            if let Some(fix) = self.layout_fix(decider, &want, FixGoal::Conflict) {
                d = d.with_fix(fix);
            }
        }
        self.diags.push(d);
    }

    /// W0307: a Layout statement that matches an instance but loses to a
    /// statement it is not a generalization of (the lookup prefers the task,
    /// then the region, and only then the memory kind).
    #[allow(clippy::type_complexity)]
    fn find_shadowed_layouts(&self) -> BTreeMap<(usize, usize), (Vec<String>, Vec<LayoutEdit>)> {
        let app = self.app;
        // (shadowed stmt, winning stmt) -> instances, meets
        let mut found: BTreeMap<(usize, usize), (Vec<String>, Vec<LayoutEdit>)> = BTreeMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            for (ai, rt) in self.traces[ti].regions.iter().enumerate() {
                let r = &self.tasks[ti].regions[ai];
                if !r.instance.is_physical() || !self.traces[ti].runnable {
                    continue;
                }
                let Some(win) = &rt.layout_hit else { continue };
                let mem = dsl_mem(r.memory);
                for (tk, rk, e) in &self.rules.layout_entries {
                    if e.stmt == win.stmt && *tk == win.task && *rk == win.region {
                        continue;
                    }
                    let matches = (tk == "*" || *tk == task.name)
                        && (rk == "*" || rt.names.contains(rk))
                        && (e.mem.is_none() || e.mem == mem);
                    if !matches || e.stmt == win.stmt {
                        continue;
                    }
                    let general = (tk == "*" || *tk == win.task)
                        && (rk == "*" || *rk == win.region)
                        && (e.mem.is_none() || e.mem == win.mem);
                    let shadow_layout = fold_constraints(e.constraints);
                    if general || shadow_layout == r.layout {
                        continue;
                    }
                    let meet = LayoutEdit {
                        task: if win.task != "*" {
                            win.task.clone()
                        } else {
                            tk.clone()
                        },
                        region: if win.region != "*" {
                            win.region.clone()
                        } else {
                            rk.clone()
                        },
                        mem: e.mem.or(win.mem),
                        layout: shadow_layout,
                    };
                    let entry = found.entry((e.stmt, win.stmt)).or_default();
                    let what = format!("`{}` (`{}`) in {}", task.name, r.region, r.memory);
                    if !entry.0.contains(&what) {
                        entry.0.push(what);
                    }
                    if !entry.1.contains(&meet) {
                        entry.1.push(meet);
                    }
                }
            }
        }
        found
    }

    #[allow(clippy::type_complexity)]
    fn report_shadowed_layouts(
        &mut self,
        found: BTreeMap<(usize, usize), (Vec<String>, Vec<LayoutEdit>)>,
    ) {
        for ((shadowed, winner), (instances, meets)) in found {
            let mut shown: Vec<String> = instances.iter().take(3).cloned().collect();
            if instances.len() > 3 {
                shown.push(format!("{} more", instances.len() - 3));
            }
            let mut d = Diagnostic::warning(
                "W0307",
                self.stmt_span(shadowed),
                format!(
                    "this layout never applies to {}: {} takes precedence",
                    shown.join(", "),
                    self.describe_stmt(winner)
                ),
            )
            .with_label("silently shadowed")
            .with_related(self.stmt_span(winner), "this statement wins")
            .with_note("the DSL mapper tries (task, region), (task, *), (*, region), (*, *) in that order and looks at the memory kind only within the first key that has a statement (Tree2Legion::query_constraint)");
            if self.fixes && meets.len() <= 4 {
                let title = if meets.len() == 1 {
                    format!("add `{}` so this layout applies there", meets[0].text())
                } else {
                    "add narrower Layout statements so this layout applies there".to_string()
                };
                let cand = Candidate::Add(meets);
                if let Some(edits) = self.candidate_edits(&cand, Some(shadowed)) {
                    if !edits.is_empty()
                        && self.verify(&edits, &FixGoal::Shadow) != Verdict::Rejected
                    {
                        d = d.with_fix(Fix::unsafe_(title, edits));
                    }
                }
            }
            self.diags.push(d);
        }
    }
}
