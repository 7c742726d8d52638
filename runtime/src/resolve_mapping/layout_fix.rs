//! Verified quick fixes for layout errors: each candidate edit is applied
//! and the text resolved again; only an edit that does what it promises is
//! offered.
//!
//! A library's layout error (E0305) gets a fix computed for that error
//! alone (issue 39): the fix must remove it and add no error, and may leave
//! a warning (a contradictory layout, W0306, which has its own fix). The
//! smallest edit comes first: the constraint word of the deciding
//! statement (`F_order` -> `C_order`), taken when the statement decides no
//! other layout that the change would move; otherwise the narrowest
//! statement that overrides it (task+region, task, region, memory kind,
//! then several), the first that changes nothing else and adds no
//! warning; failing that, the best of the rest, the word edit first.
//!
//! Safe or not ([`Verdict`]): a fix for a library's layout constraint
//! (E0305) is safe, so editors prefer it and apply it with "fix all", when
//! the edited text resolves every layout it does not repair exactly as
//! before and adds no warning; likely (offered, never preferred) when it
//! only adds a warning. The repaired instances are the rejected ones and
//! the instances sharing their layout-cache entry (memory kind and field
//! space): the DSL mapper gives one entry one layout, so they cannot keep
//! another without a conflict. Fixes for contradictory layouts (W0306)
//! and shadowed statements (W0307) stay unsafe: the layout they keep is a
//! choice among the user's own statements, not one a library dictates.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use mapwright_grammar::ast::{self, Constraint, StmtKind};
use mapwright_grammar::diagnostic::line_extent;
use mapwright_grammar::{Fix, Span};

use crate::decisions::{InstanceKind, LayoutDecision, Order};

use super::entry::RegionNaming;
use super::layout::{layout_text, LayoutEdit};
use super::memory::dsl_mem;
use super::resolver::{short, Edits, Resolver};
use super::rules::mem_sel_span;

/// The first sentence of a long note.
pub(super) fn short_note(notes: &str) -> String {
    let first = notes.split(". ").next().unwrap_or(notes);
    if first.len() > 240 {
        let cut: String = first.chars().take(237).collect();
        format!("{cut}...")
    } else {
        first.trim_end_matches('.').to_string() + "."
    }
}

/// What a layout quick fix must achieve (judged on the re-resolved text).
pub(super) enum FixGoal {
    /// These (task, argument) pairs must satisfy their library constraints,
    /// with the layout given (the repaired one).
    Library(Vec<(usize, usize, LayoutDecision)>),
    /// Fewer instances with contradictory layouts.
    Conflict,
    /// Fewer shadowed Layout statements, no new conflicts.
    Shadow,
}

/// What resolving the edited text says about a candidate fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// The problem stays, or the edit adds one: not offered.
    Rejected,
    /// Repairs the problem, but other layouts change too (or the goal is a
    /// choice among the user's statements): offered as unsafe.
    Repairs,
    /// Repairs a library constraint and changes nothing else: every layout
    /// outside the repaired instances' cache entries is as before, and the
    /// repaired ones have the wanted layout. Offered as safe.
    RepairsOnly,
}

/// A [`Verdict`] and whether the edit leaves a new layout warning behind
/// (a contradictory or shadowed layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Judgement {
    pub(super) verdict: Verdict,
    pub(super) adds_warning: bool,
}

/// A candidate layout fix: statements to add (or rewrite when their key
/// exists), or one existing statement to rewrite.
pub(super) enum Candidate {
    Add(Vec<LayoutEdit>),
    Rewrite(usize, LayoutDecision),
}

impl<'a> Resolver<'a> {
    /// Where a new Layout statement goes: before statement `before`, else
    /// after the last Layout (or Task/Region) statement, else at the top.
    fn insertion_point(&self, before: Option<usize>) -> usize {
        if let Some(i) = before {
            return line_extent(self.source, self.stmt_span(i)).0;
        }
        let last = |f: &dyn Fn(&StmtKind) -> bool| {
            self.program
                .stmts
                .iter()
                .rev()
                .find(|s| f(&s.kind))
                .map(|s| s.span)
        };
        if let Some(sp) = last(&|k| matches!(k, StmtKind::Layout { .. }))
            .or_else(|| last(&|k| matches!(k, StmtKind::Task { .. } | StmtKind::Region { .. })))
        {
            return line_extent(self.source, sp).1;
        }
        self.program
            .stmts
            .first()
            .map(|s| line_extent(self.source, s.span).0)
            .unwrap_or(0)
    }

    /// The edit that replaces a Layout statement's constraints.
    fn rewrite_edit(&self, stmt: usize, layout: &LayoutDecision) -> Option<(Span, String)> {
        let s = self.stmt(stmt)?;
        let StmtKind::Layout { mem, .. } = &s.kind else {
            return None;
        };
        let semi = s.span.end().checked_sub(1)?;
        if self.source.get(semi..s.span.end()) != Some(";") {
            return None;
        }
        Some((
            Span::new(mem_sel_span(mem).end(), semi),
            format!(" {}", layout_text(layout)),
        ))
    }

    /// The text edits of a candidate.
    pub(super) fn candidate_edits(
        &self,
        cand: &Candidate,
        before: Option<usize>,
    ) -> Option<Vec<(Span, String)>> {
        self.candidate_edits_titled(cand, before).map(|(e, _)| e)
    }

    /// [`Resolver::candidate_edits`], with a title when the candidate turned
    /// into a rewrite of one existing statement (its key already exists, so
    /// an added statement would be shadowed by it).
    fn candidate_edits_titled(
        &self,
        cand: &Candidate,
        before: Option<usize>,
    ) -> Option<(Edits, Option<String>)> {
        match cand {
            Candidate::Rewrite(stmt, l) => self.rewrite_edit(*stmt, l).map(|e| (vec![e], None)),
            Candidate::Add(adds) => {
                let mut edits = Vec::new();
                let mut text = String::new();
                let mut rewritten = HashSet::new();
                let mut title = None;
                for a in adds {
                    let existing = self
                        .rules
                        .layout
                        .get(&a.task, &a.region)
                        .and_then(|l| l.iter().find(|e| e.mem == a.mem));
                    match existing {
                        Some(e) => {
                            if rewritten.insert(e.stmt) {
                                edits.push(self.rewrite_edit(e.stmt, &a.layout)?);
                                title = Some(format!(
                                    "change `{}` to `{}`",
                                    short(self.stmt_span(e.stmt).text(self.source)),
                                    a.text()
                                ));
                            }
                        }
                        None => {
                            text.push_str(&a.text());
                            text.push('\n');
                        }
                    }
                }
                if !text.is_empty() {
                    let at = self.insertion_point(before);
                    if at == self.source.len()
                        && !self.source.is_empty()
                        && !self.source.ends_with('\n')
                    {
                        text.insert(0, '\n');
                    }
                    edits.push((Span::at(at), text));
                }
                let title = if edits.len() == 1 { title } else { None };
                Some((edits, title))
            }
        }
    }

    /// Resolves the edited text (layouts only) and judges it.
    pub(super) fn verify(&self, edits: &[(Span, String)], goal: &FixGoal) -> Verdict {
        self.judge(edits, goal).verdict
    }

    /// [`Resolver::verify`], and whether the edit adds a layout warning.
    ///
    /// A library fix (E0305) is judged by its own error alone: it must
    /// remove that error and add no error, but may leave a contradictory
    /// (W0306) or shadowed (W0307) layout behind, which has its own fix;
    /// such a fix is then never safe. Conflict and shadow fixes must not
    /// add either.
    pub(super) fn judge(&self, edits: &[(Span, String)], goal: &FixGoal) -> Judgement {
        let rejected = Judgement {
            verdict: Verdict::Rejected,
            adds_warning: false,
        };
        let fix = Fix::unsafe_("", edits.to_vec());
        let Some(text) = fix.apply(self.source) else {
            return rejected;
        };
        // The resolver reads the parse only: no check of the edited text.
        // Re-parsed from this resolution's parse, which an edit of one or
        // two statements leaves mostly as it is: a full parse of a big file
        // for each candidate was most of a keystroke's time with an
        // application whenever a layout problem had a fix (`perf`: 64 % of
        // the server's samples on a generated 5,000-line file with cannon).
        let (parsed, _) = mapwright_grammar::incremental::reparse(self.parsed, self.source, &text);
        let mut r = Resolver::new(&parsed, &text, self.app, self.machine, self.naming, false);
        r.run(None);
        let new = &r.summary;
        let old = &self.summary;
        let adds_warning = new.conflicts > old.conflicts || new.shadows > old.shadows;
        let base =
            new.violations.is_subset(&old.violations) && new.parse_errors <= old.parse_errors;
        let repaired = base
            && match goal {
                FixGoal::Library(want) => want.iter().all(|&(ti, ai, _)| {
                    let t = &self.app.tasks[ti];
                    match t.regions.get(ai) {
                        Some(a) => !new.violations.contains(&(t.name.clone(), a.index)),
                        None => true,
                    }
                }),
                FixGoal::Conflict => new.shadows <= old.shadows && new.conflicts < old.conflicts,
                FixGoal::Shadow => new.shadows < old.shadows && new.conflicts <= old.conflicts,
            };
        let verdict = match goal {
            _ if !repaired => Verdict::Rejected,
            FixGoal::Library(want) if self.changes_only_repaired_layouts(&r, want) => {
                Verdict::RepairsOnly
            }
            _ => Verdict::Repairs,
        };
        Judgement {
            verdict,
            adds_warning,
        }
    }

    /// Whether `edited` (the edited text resolved) gives every physical
    /// instance the layout this resolution gives it, except the repaired
    /// ones, which may only take their wanted layout: the `want` instances,
    /// and the other members of their layout-cache entry when that entry had
    /// one layout (they share it at run time; an entry that already
    /// contradicted itself is a choice, so its other members must stay).
    /// Virtual and absent instances have no layout to keep.
    fn changes_only_repaired_layouts(
        &self,
        edited: &Resolver,
        want: &[(usize, usize, LayoutDecision)],
    ) -> bool {
        let mut repaired: BTreeMap<(usize, usize), LayoutDecision> =
            want.iter().map(|&(ti, ai, l)| ((ti, ai), l)).collect();
        for members in self.layout_cache_entries().into_values() {
            let wanted = members.iter().find_map(|m| repaired.get(m).copied());
            let layout_of = |&(ti, ai): &(usize, usize)| self.tasks[ti].regions[ai].layout;
            let one_layout = members
                .iter()
                .all(|m| layout_of(m) == layout_of(&members[0]));
            if let (Some(l), true) = (wanted, one_layout) {
                for &m in &members {
                    repaired.entry(m).or_insert(l);
                }
            }
        }
        if edited.tasks.len() != self.tasks.len() {
            return false;
        }
        let kept = |at: (usize, usize),
                    before: (LayoutDecision, InstanceKind),
                    after: (LayoutDecision, InstanceKind)| {
            let physical = before.1.is_physical() || after.1.is_physical();
            !physical || after.0 == before.0 || repaired.get(&at) == Some(&after.0)
        };
        self.tasks
            .iter()
            .zip(&edited.tasks)
            .enumerate()
            .all(|(ti, (old, new))| {
                old.regions.len() == new.regions.len()
                    && old
                        .regions
                        .iter()
                        .zip(&new.regions)
                        .enumerate()
                        .all(|(ai, (o, n))| {
                            kept((ti, ai), (o.layout, o.instance), (n.layout, n.instance))
                                && o.launches.len() == n.launches.len()
                                && o.launches.iter().zip(&n.launches).all(|(ol, nl)| {
                                    kept(
                                        (ti, ai),
                                        (ol.layout, ol.instance),
                                        (nl.layout, nl.instance),
                                    )
                                })
                        })
            })
    }

    /// The narrowest Layout change that gives each (task, argument) its
    /// wanted layout without new layout problems: one statement for the
    /// task+region, the task, the region, or the memory kind, then a rewrite
    /// of the deciding statement, then several statements.
    pub(super) fn layout_fix(
        &self,
        decider: Option<usize>,
        want: &[(usize, usize, LayoutDecision)],
        goal: FixGoal,
    ) -> Option<Fix> {
        let &(_, _, target) = want.first()?;
        let same_target = want.iter().all(|(_, _, l)| *l == target);
        let names = self.naming != RegionNaming::Index;
        let mut trm: BTreeSet<(String, String, Option<ast::MemKind>)> = BTreeSet::new();
        let mut tm: BTreeSet<(String, Option<ast::MemKind>)> = BTreeSet::new();
        let mut rm: BTreeSet<(String, Option<ast::MemKind>)> = BTreeSet::new();
        let mut m: BTreeSet<Option<ast::MemKind>> = BTreeSet::new();
        for &(ti, ai, _) in want {
            let r = &self.tasks[ti].regions[ai];
            let mem = dsl_mem(r.memory);
            trm.insert((self.tasks[ti].task.clone(), r.region.clone(), mem));
            tm.insert((self.tasks[ti].task.clone(), mem));
            rm.insert((r.region.clone(), mem));
            m.insert(mem);
        }
        let edit = |t: &str, r: &str, mem: Option<ast::MemKind>| LayoutEdit {
            task: t.to_string(),
            region: r.to_string(),
            mem,
            layout: target,
        };
        let mut cands: Vec<(String, Candidate)> = Vec::new();
        if same_target {
            if names && trm.len() == 1 {
                if let Some((t, r, mem)) = trm.first() {
                    let e = edit(t, r, *mem);
                    cands.push((format!("add `{}`", e.text()), Candidate::Add(vec![e])));
                }
            }
            if tm.len() == 1 {
                if let Some((t, mem)) = tm.first() {
                    let e = edit(t, "*", *mem);
                    cands.push((format!("add `{}`", e.text()), Candidate::Add(vec![e])));
                }
            }
            if names && rm.len() == 1 {
                if let Some((r, mem)) = rm.first() {
                    let e = edit("*", r, *mem);
                    cands.push((format!("add `{}`", e.text()), Candidate::Add(vec![e])));
                }
            }
            if m.len() == 1 {
                if let Some(mem) = m.first() {
                    let e = edit("*", "*", *mem);
                    cands.push((format!("add `{}`", e.text()), Candidate::Add(vec![e])));
                }
            }
            if let Some(s) = decider {
                cands.push((
                    format!("change this statement to `{}`", layout_text(&target)),
                    Candidate::Rewrite(s, target),
                ));
            }
        }
        // Several statements, one per (task, memory), each with its target.
        let mut per_tm: BTreeMap<(String, Option<ast::MemKind>), LayoutDecision> = BTreeMap::new();
        for &(ti, ai, l) in want {
            let r = &self.tasks[ti].regions[ai];
            per_tm
                .entry((self.tasks[ti].task.clone(), dsl_mem(r.memory)))
                .or_insert(l);
        }
        if (2..=4).contains(&per_tm.len()) {
            let adds: Vec<LayoutEdit> = per_tm
                .iter()
                .map(|((t, mem), l)| LayoutEdit {
                    task: t.clone(),
                    region: "*".into(),
                    mem: *mem,
                    layout: *l,
                })
                .collect();
            cands.push((
                format!("add {} Layout statements", adds.len()),
                Candidate::Add(adds),
            ));
        }
        if same_target && (2..=3).contains(&m.len()) {
            let adds: Vec<LayoutEdit> = m.iter().map(|mem| edit("*", "*", *mem)).collect();
            cands.push((
                format!("add {} Layout statements", adds.len()),
                Candidate::Add(adds),
            ));
        }
        let library = matches!(goal, FixGoal::Library(_));
        let mut fallback: Option<(u8, Fix)> = None;
        if let (true, true, Some(s)) = (library, same_target, decider) {
            // The smallest edit first: the constraint word of the deciding
            // statement. Taken at once unless it changes a layout it need
            // not (a task or region it decides for that has no part in
            // the error).
            if let Some((edits, title)) = self.word_edits(s, &target) {
                let j = self.judge(&edits, &goal);
                if j.verdict == Verdict::RepairsOnly {
                    return Some(library_fix(title, edits, j));
                }
                if j.verdict != Verdict::Rejected {
                    fallback = Some((rank(j), library_fix(title, edits, j)));
                }
            }
        }
        for (title, cand) in cands {
            if library && matches!(cand, Candidate::Rewrite(..)) {
                // Replaced by the word edit above.
                continue;
            }
            let Some((edits, rewrite_title)) = self.candidate_edits_titled(&cand, decider) else {
                continue;
            };
            if edits.is_empty() {
                continue;
            }
            let j = self.judge(&edits, &goal);
            if j.verdict == Verdict::Rejected {
                continue;
            }
            let title = match (&cand, rewrite_title) {
                (_, Some(t)) => t,
                (Candidate::Add(adds), None) if adds.len() == 1 && edits.len() == 1 => {
                    match decider {
                        Some(s) => format!(
                            "{title} before `{}`",
                            short(self.stmt_span(s).text(self.source))
                        ),
                        None => title,
                    }
                }
                _ => title,
            };
            if !library {
                return Some(match j.verdict {
                    Verdict::RepairsOnly => Fix::safe(title, edits),
                    _ => Fix::unsafe_(title, edits),
                });
            }
            // A library fix: the first that changes nothing else and adds
            // no warning wins; otherwise the best seen, the word edit
            // first among equals.
            let r = rank(j);
            if r == 0 {
                return Some(library_fix(title, edits, j));
            }
            // (A match: `Option::is_none_or` is newer than our minimum Rust.)
            let better = match &fallback {
                None => true,
                Some((best, _)) => r < *best,
            };
            if better {
                fallback = Some((r, library_fix(title, edits, j)));
            }
        }
        fallback.map(|(_, f)| f)
    }

    /// The edit of Layout statement `stmt`'s constraint words that gives it
    /// `target`'s dimension order and field layout: the last word of each
    /// family that differs is replaced (the last one of a family wins), or
    /// the word is added when the statement has none of that family. One
    /// word in the common case (`F_order` -> `C_order`), and every other
    /// word of the statement (Align, Compact, comments) kept.
    pub(super) fn word_edits(
        &self,
        stmt: usize,
        target: &LayoutDecision,
    ) -> Option<(Edits, String)> {
        let s = self.stmt(stmt)?;
        let StmtKind::Layout {
            mem, constraints, ..
        } = &s.kind
        else {
            return None;
        };
        let current = super::layout::fold_constraints(constraints);
        let order_word = match target.order {
            Order::C => "C_order",
            Order::F => "F_order",
        };
        let field_word = if target.soa { "SOA" } else { "AOS" };
        let last_of = |order: bool| {
            constraints.iter().rev().find_map(|c| match c {
                Constraint::COrder(sp) | Constraint::FOrder(sp) if order => Some(*sp),
                Constraint::Soa(sp) | Constraint::Aos(sp) if !order => Some(*sp),
                _ => None,
            })
        };
        // Added words go after the last constraint (or the memory field).
        let end = constraints
            .last()
            .map(|c| c.span().end())
            .unwrap_or_else(|| mem_sel_span(mem).end());
        let mut edits: Edits = Vec::new();
        let mut changes: Vec<String> = Vec::new();
        for (differs, order, word) in [
            (current.soa != target.soa, false, field_word),
            (current.order != target.order, true, order_word),
        ] {
            if !differs {
                continue;
            }
            match last_of(order) {
                Some(sp) => {
                    changes.push(format!("change `{}` to `{word}`", sp.text(self.source)));
                    edits.push((sp, word.to_string()));
                }
                None => {
                    changes.push(format!("add `{word}`"));
                    edits.push((Span::at(end), format!(" {word}")));
                }
            }
        }
        if edits.is_empty() {
            return None;
        }
        // Two insertions at one offset: keep their order in the text.
        edits.sort_by_key(|(sp, _)| sp.start());
        let title = format!(
            "{} in `{}`",
            changes.join(" and "),
            short(s.span.text(self.source))
        );
        Some((edits, title))
    }
}

/// How good an accepted library fix is (lower is better): 0 changes no
/// layout but the repaired ones and adds no warning; 1 adds a warning; 2
/// changes other layouts too; 3 both.
fn rank(j: Judgement) -> u8 {
    u8::from(j.adds_warning) + 2 * u8::from(j.verdict != Verdict::RepairsOnly)
}

/// A library fix at the applicability its judgement allows: safe (applied
/// by "fix all", preferred by editors) only when it changes nothing but
/// the repaired layouts and leaves no warning behind; likely when it only
/// leaves a warning (its own quick fix follows); unsafe when it changes
/// other layouts.
fn library_fix(title: String, edits: Edits, j: Judgement) -> Fix {
    match (j.verdict, j.adds_warning) {
        (Verdict::RepairsOnly, false) => Fix::safe(title, edits),
        (Verdict::RepairsOnly, true) => Fix::likely(title, edits),
        _ => Fix::unsafe_(title, edits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{expert_mapper_text, App};
    use crate::decisions::Order;
    use crate::machine::Machine;

    /// The cannon expert mapper with `* * *` giving F_order: cuBLAS rejects
    /// `task_4`'s arguments (E0305).
    fn cannon_f_order() -> String {
        expert_mapper_text("cannon")
            .expect("cannon expert")
            .replace("Layout * * * SOA C_order;", "Layout * * * SOA F_order;")
    }

    /// Judges `edit(source)` as a fix for the source's library violations
    /// (wanted: C_order), the way `layout_fix` does.
    fn verdict_of(source: &str, edit: impl Fn(&str) -> Vec<(Span, String)>) -> Verdict {
        let app = App::builtin("cannon").expect("cannon");
        let machine = Machine::preset("p100x4").expect("p100x4");
        let analysis = mapwright_grammar::analyze(source);
        let naming = RegionNaming::of_app(&app);
        let mut r = Resolver::new(&analysis.parsed, source, &app, &machine, naming, false);
        r.run(None);
        let mut want = Vec::new();
        for (name, index) in &r.summary.violations {
            let ti = app.tasks.iter().position(|t| &t.name == name).unwrap();
            let ai = app.tasks[ti]
                .regions
                .iter()
                .position(|a| a.index == *index)
                .unwrap();
            let layout = LayoutDecision {
                order: Order::C,
                ..r.tasks[ti].regions[ai].layout
            };
            want.push((ti, ai, layout));
        }
        assert!(
            !want.is_empty()
                && want
                    .iter()
                    .all(|&(ti, _, _)| app.tasks[ti].name == "task_4"),
            "the F_order cannon mapper violates cuBLAS on task_4: {:?}",
            r.summary.violations
        );
        r.verify(&edit(source), &FixGoal::Library(want))
    }

    fn before_f_order(source: &str, text: &str) -> Vec<(Span, String)> {
        let at = source.find("Layout * * * SOA F_order;").unwrap();
        vec![(Span::at(at), text.to_string())]
    }

    #[test]
    fn a_fix_that_changes_only_the_repaired_cache_entry_is_safe() {
        // On p100x4 every physical instance of cannon is in FBMEM, in the
        // layout-cache entry of task_4's A, B, C: they all move from F_order
        // to C_order together, whether the fix names FBMEM or rewrites
        // `* * *`.
        let source = cannon_f_order();
        let v = verdict_of(&source, |s| {
            before_f_order(s, "Layout * * FBMEM SOA C_order;\n")
        });
        assert_eq!(v, Verdict::RepairsOnly);
        assert_eq!(verdict_of(&source, rewrite_star), Verdict::RepairsOnly);
    }

    /// Rewrites `Layout * * * SOA F_order;` to C_order.
    fn rewrite_star(s: &str) -> Vec<(Span, String)> {
        let at = s.find("Layout * * * SOA F_order;").unwrap();
        let end = at + "Layout * * * SOA F_order;".len();
        vec![(Span::new(at, end), "Layout * * * SOA C_order;".to_string())]
    }

    #[test]
    fn a_fix_that_changes_another_layout_stays_unsafe() {
        // task_2's B in ZCMEM: another cache entry, decided by `* * *` too.
        let source = format!("Region task_2 * GPU ZCMEM;\n{}", cannon_f_order());
        // Adding an FBMEM statement leaves it alone: safe.
        let v = verdict_of(&source, |s| {
            before_f_order(s, "Layout * * FBMEM SOA C_order;\n")
        });
        assert_eq!(v, Verdict::RepairsOnly);
        // Rewriting `* * *` repairs task_4 and turns task_2's B to C_order.
        assert_eq!(verdict_of(&source, rewrite_star), Verdict::Repairs);
        // Repairing FBMEM while also changing ZCMEM: unsafe too.
        let v = verdict_of(&source, |s| {
            before_f_order(s, "Layout * * FBMEM SOA C_order;\nLayout * * ZCMEM AOS;\n")
        });
        assert_eq!(v, Verdict::Repairs);
    }

    #[test]
    fn an_edit_that_does_not_repair_is_rejected() {
        let source = cannon_f_order();
        let v = verdict_of(&source, |s| before_f_order(s, "# nothing\n"));
        assert_eq!(v, Verdict::Rejected);
        // F_order for task_4 by a narrower statement: the error stays.
        let v = verdict_of(&source, |s| {
            before_f_order(s, "Layout task_4 * FBMEM SOA F_order;\n")
        });
        assert_eq!(v, Verdict::Rejected);
    }

    #[test]
    fn conflict_fixes_are_never_safe() {
        let source = expert_mapper_text("cannon").expect("cannon").replace(
            "Layout * * * SOA C_order;",
            "Layout * * * SOA F_order;\nLayout task_4 * * SOA C_order;",
        );
        let app = App::builtin("cannon").expect("cannon");
        let machine = Machine::preset("p100x4").expect("p100x4");
        let analysis = mapwright_grammar::analyze(&source);
        let mut r = Resolver::new(
            &analysis.parsed,
            &source,
            &app,
            &machine,
            RegionNaming::of_app(&app),
            false,
        );
        r.run(None);
        assert!(r.summary.conflicts > 0);
        let at = source.find("Layout * * * SOA F_order;").unwrap();
        let edit = vec![(Span::at(at), "Layout * * FBMEM SOA C_order;\n".to_string())];
        assert_eq!(r.verify(&edit, &FixGoal::Conflict), Verdict::Repairs);
    }
}

#[cfg(test)]
mod word_fix_tests {
    use crate::app::App;
    use crate::machine::Machine;
    use crate::resolve_mapping::resolve_mapping;
    use mapwright_grammar::{Applicability, Fix, Span};

    /// The fixes of the one E0305 of `source` with cannon on p100x4.
    fn fixes_of(source: &str) -> Vec<Fix> {
        let app = App::builtin("cannon").expect("cannon");
        let machine = Machine::preset("p100x4").expect("p100x4");
        let analysis = mapwright_grammar::analyze(source);
        let d = resolve_mapping(&analysis, source, &app, &machine);
        let e: Vec<_> = d.diagnostics.iter().filter(|d| d.code == "E0305").collect();
        assert_eq!(e.len(), 1, "{:#?}", d.diagnostics);
        e[0].fixes.clone()
    }

    /// Issue 39's two files: `F_order` becomes `C_order` in the statement
    /// that decides. The other tasks sharing `A`, `B`, `C` keep Legion's
    /// default, so a contradictory layout (W0306, with its own fix) is
    /// left behind: likely, not safe.
    #[test]
    fn the_statement_that_decides_gets_a_one_word_fix() {
        for stmt in [
            "Layout task_4 * * SOA F_order;",
            "Layout task_4 * FBMEM SOA F_order;",
        ] {
            let src = format!("Task * GPU,CPU;\n{stmt}\n");
            let f = fixes_of(&src);
            assert_eq!(f.len(), 1);
            let at = src.find("F_order").unwrap();
            assert_eq!(f[0].edits.len(), 1);
            assert_eq!(f[0].edits[0].span, Span::new(at, at + "F_order".len()));
            assert_eq!(f[0].edits[0].text, "C_order");
            assert_eq!(
                f[0].title.to_string(),
                format!("change `F_order` to `C_order` in `{stmt}`")
            );
            assert_eq!(f[0].applicability, Applicability::Likely);
        }
    }

    /// A statement without an order word gets one added after its last
    /// word; its other words stay.
    #[test]
    fn a_missing_order_word_is_added() {
        let src = "Task * GPU,CPU;\nLayout task_4 * * SOA Align==128;\n";
        let f = fixes_of(src);
        let at = src.find(" Align==128;").unwrap() + " Align==128".len();
        assert_eq!(f[0].edits.len(), 1);
        assert_eq!(f[0].edits[0].span, Span::at(at));
        assert_eq!(f[0].edits[0].text, " C_order");
        assert_eq!(
            f[0].apply(src).unwrap(),
            "Task * GPU,CPU;\nLayout task_4 * * SOA Align==128 C_order;\n"
        );
    }

    /// A statement that also decides for instances outside the error
    /// (here `* * *` also gives task_2's `B` in ZCMEM, another cache
    /// entry, its layout) is left alone: the narrowest statement that
    /// overrides it and leaves no warning is added instead, safely.
    #[test]
    fn a_statement_deciding_for_others_is_overridden_not_rewritten() {
        let src = "Task * GPU,CPU;\nRegion task_2 * GPU ZCMEM;\nLayout * * * SOA F_order;\n";
        let f = fixes_of(src);
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].apply(src).unwrap(),
            "Task * GPU,CPU;\nRegion task_2 * GPU ZCMEM;\nLayout * * FBMEM SOA C_order;\nLayout * * * SOA F_order;\n"
        );
        assert_eq!(f[0].applicability, Applicability::Safe);
    }
}
