//! Verified quick fixes for layout errors: each candidate edit, from the
//! narrowest scope to a rewrite of the deciding statement, is applied and
//! the text resolved again; the first that removes the problem without
//! adding a layout problem is offered.
//!
//! Safe or not ([`Verdict`]): a fix for a library's layout constraint
//! (E0305) is safe, so editors prefer it and apply it with "fix all", when
//! the edited text resolves every layout it does not repair exactly as
//! before. The repaired instances are the rejected ones and the instances
//! sharing their layout-cache entry (memory kind and field space): the DSL
//! mapper gives one entry one layout, so they cannot keep another without a
//! conflict. Fixes for contradictory layouts (W0306) and shadowed
//! statements (W0307) stay unsafe: the layout they keep is a choice among
//! the user's own statements, not one a library dictates.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use mapwright_grammar::ast::{self, StmtKind};
use mapwright_grammar::diagnostic::line_extent;
use mapwright_grammar::{Fix, Span};

use crate::decisions::{InstanceKind, LayoutDecision};

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
        let fix = Fix::unsafe_("", edits.to_vec());
        let Some(text) = fix.apply(self.source) else {
            return Verdict::Rejected;
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
        let shadows_ok = matches!(goal, FixGoal::Shadow) || new.shadows <= old.shadows;
        let base = new.violations.is_subset(&old.violations)
            && shadows_ok
            && new.parse_errors <= old.parse_errors;
        let repaired = base
            && match goal {
                FixGoal::Library(want) => {
                    new.conflicts <= old.conflicts
                        && want.iter().all(|&(ti, ai, _)| {
                            let t = &self.app.tasks[ti];
                            match t.regions.get(ai) {
                                Some(a) => !new.violations.contains(&(t.name.clone(), a.index)),
                                None => true,
                            }
                        })
                }
                FixGoal::Conflict => new.conflicts < old.conflicts,
                FixGoal::Shadow => new.shadows < old.shadows && new.conflicts <= old.conflicts,
            };
        match goal {
            _ if !repaired => Verdict::Rejected,
            FixGoal::Library(want) if self.changes_only_repaired_layouts(&r, want) => {
                Verdict::RepairsOnly
            }
            _ => Verdict::Repairs,
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
        for (title, cand) in cands {
            let Some((edits, rewrite_title)) = self.candidate_edits_titled(&cand, decider) else {
                continue;
            };
            if edits.is_empty() {
                continue;
            }
            let verdict = self.verify(&edits, &goal);
            if verdict != Verdict::Rejected {
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
                return Some(match verdict {
                    Verdict::RepairsOnly => Fix::safe(title, edits),
                    _ => Fix::unsafe_(title, edits),
                });
            }
        }
        None
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
        // task_4 alone in C_order contradicts the other members of its
        // cache entry: a new conflict.
        let v = verdict_of(&source, |s| {
            before_f_order(s, "Layout task_4 * FBMEM SOA C_order;\n")
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
