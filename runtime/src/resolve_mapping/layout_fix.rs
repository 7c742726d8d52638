//! Verified quick fixes for layout errors: each candidate edit, from the
//! narrowest scope to a rewrite of the deciding statement, is applied and
//! the text resolved again; the first that removes the problem without
//! adding a layout problem is offered.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use mapwright_grammar::ast::{self, StmtKind};
use mapwright_grammar::diagnostic::line_extent;
use mapwright_grammar::{Fix, Span};

use crate::decisions::LayoutDecision;

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
    /// These (task, argument) pairs must satisfy their library constraints.
    Library(Vec<(usize, usize)>),
    /// Fewer instances with contradictory layouts.
    Conflict,
    /// Fewer shadowed Layout statements, no new conflicts.
    Shadow,
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
        let semi = s.span.end.checked_sub(1)?;
        if self.source.get(semi..s.span.end) != Some(";") {
            return None;
        }
        Some((
            Span::new(mem_sel_span(mem).end, semi),
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
    pub(super) fn verify(&self, edits: &[(Span, String)], goal: &FixGoal) -> bool {
        let fix = Fix::unsafe_("", edits.to_vec());
        let Some(text) = fix.apply(self.source) else {
            return false;
        };
        let analysis = mapwright_grammar::analyze(&text);
        let mut r = Resolver::new(&analysis, &text, self.app, self.machine, self.naming, false);
        r.run(None);
        let new = &r.summary;
        let old = &self.summary;
        let shadows_ok = matches!(goal, FixGoal::Shadow) || new.shadows <= old.shadows;
        let base = new.violations.is_subset(&old.violations)
            && shadows_ok
            && new.parse_errors <= old.parse_errors;
        base && match goal {
            FixGoal::Library(items) => {
                new.conflicts <= old.conflicts
                    && items.iter().all(|&(ti, ai)| {
                        let t = &self.app.tasks[ti];
                        match t.regions.get(ai) {
                            Some(a) => !new.violations.contains(&(t.name.clone(), a.index)),
                            None => true,
                        }
                    })
            }
            FixGoal::Conflict => new.conflicts < old.conflicts,
            FixGoal::Shadow => new.shadows < old.shadows && new.conflicts <= old.conflicts,
        }
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
            if self.verify(&edits, &goal) {
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
                return Some(Fix::unsafe_(title, edits));
            }
        }
        None
    }
}
