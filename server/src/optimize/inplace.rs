//! Writing a point of the search space as minimal edits to the user's own
//! statements: the default form of every candidate and of the mapper the
//! optimizer applies.
//!
//! The block form ([`super::space::render`]) stacks tuned rules at the top of
//! the file. It is always right, but it shadows the user's lines and leaves
//! them in place, dead. Here the same decisions are reached by editing the
//! statement that decides each parameter:
//! - the statement that decides a parameter is rewritten when every task it
//!   decides wants the new value (`C_order` becomes `F_order` in the `Layout`
//!   line, `Task * CPU;` becomes `Task * GPU,CPU;`);
//! - a wildcard that must stay for most tasks is rewritten to what most of
//!   them want, and a task-specific statement is added right beside it for
//!   the others;
//! - a statement is added only where none decides (the default policy);
//! - statements the change leaves deciding nothing are removed.
//!
//! Comments and formatting elsewhere are untouched. Correctness does not rest
//! on these rules: the edited text is resolved and its decisions compared
//! with those of the block form ([`signature`]); on any difference
//! [`render_in_place`] answers `None` and the caller uses the block.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use mapwright_grammar::analyze;
use mapwright_grammar::ast::{Constraint, MemSel, Program, Stmt, StmtKind, TaskSel};
use mapwright_grammar::pin::pinned_statements;
use mapwright_grammar::{Analysis, Span};
use mapwright_runtime::app::App;
use mapwright_runtime::decisions::{Decisions, Order};
use mapwright_runtime::machine::{Machine, MemKind, ProcKind};
use mapwright_runtime::resolve_mapping::RegionNaming;

use super::space::{
    dsl_mem, dsl_proc, fn_name, function_def, machine_var, render, same_point_def, same_point_name,
    IndexFn, LayoutChoice, Spec,
};
use crate::autoguide::edits::whole_line;

/// Mapper text -> its decisions (`None` when the text does not compile).
pub type ResolveFn<'a> = &'a dyn Fn(&str) -> Option<Decisions>;

/// Everything that decides how a run goes, without the spans of the
/// statements that decided it: two texts with equal signatures run alike.
pub fn signature(d: &Decisions) -> String {
    let mut s = String::new();
    for t in &d.tasks {
        let points: Vec<(u32, u32)> = t.placement.iter().map(|p| (p.node, p.proc)).collect();
        let _ = write!(
            s,
            "{}|{:?}|{:?}|{:?}|{}|{}|",
            t.task, t.proc_kind, points, t.instance_limit, t.control_replicated, t.collect_memory
        );
        for r in &t.regions {
            let _ = write!(
                s,
                "{}:{}:{:?}:{:?}:{:?}:{};",
                r.region, r.index, r.memory, r.layout, r.instance, r.collect
            );
            for l in &r.launches {
                let _ = write!(
                    s,
                    "+{}:{:?}:{:?}:{:?};",
                    l.region, l.memory, l.layout, l.instance
                );
            }
        }
        s.push('\n');
    }
    if let Some(f) = &d.fatal {
        let _ = write!(s, "fatal:{}", f.kind);
    }
    s
}

/// Renders `spec` (relative to `base`, whose decisions are
/// `base_decisions`) as edits of `base`'s own statements. `None` when the
/// edited text would not decide exactly what the block form decides.
pub fn render_in_place(
    base: &str,
    base_decisions: &Decisions,
    spec: &Spec,
    app: &App,
    machine: &Machine,
    resolve: ResolveFn<'_>,
) -> Option<String> {
    let block = render(base, base_decisions, spec, app);
    if block == base {
        return Some(block);
    }
    let target = signature(&resolve(&block)?);
    // First with one wildcard where every default-decided key wants the
    // same value (what an expert writes), then line by line.
    [true, false].into_iter().find_map(|wildcards| {
        attempt(
            base,
            base_decisions,
            spec,
            app,
            machine,
            resolve,
            &target,
            wildcards,
        )
    })
}

/// One in-place rendering; `None` unless it decides what `target` says.
#[allow(clippy::too_many_arguments)]
fn attempt(
    base: &str,
    base_decisions: &Decisions,
    spec: &Spec,
    app: &App,
    machine: &Machine,
    resolve: ResolveFn<'_>,
    target: &str,
    wildcards: bool,
) -> Option<String> {
    let mut writer = Writer::new(base, app, machine);
    writer.wildcards = wildcards;
    let mut decisions = base_decisions.clone();
    if !spec.procs.is_empty() {
        writer.tasks(&decisions, spec);
        decisions = resolve(&writer.text())?;
    }
    if !spec.memories.is_empty() {
        writer.regions(&decisions, spec);
        decisions = resolve(&writer.text())?;
    }
    if !spec.layouts.is_empty() {
        writer.layouts(&decisions, spec);
        decisions = resolve(&writer.text())?;
    }
    writer.placements(&decisions, spec);
    if writer.touches_pinned() {
        // A pinned statement is never edited: the caller writes the block.
        return None;
    }
    let edited = writer.text();
    let edited_decisions = resolve(&edited)?;
    if signature(&edited_decisions) != target {
        return None;
    }
    // Statements the change left deciding nothing, removed when that keeps
    // the decisions (it should; the check is cheap).
    if writer.remove_dead(base_decisions, &edited_decisions) {
        let pruned = writer.text();
        if resolve(&pruned).is_some_and(|d| signature(&d) == target) {
            return Some(pruned);
        }
    }
    Some(edited)
}

/// One pending edit of the base text. Insertions at one position keep the
/// order of `seq`.
#[derive(Debug, Clone)]
struct Edit {
    span: Span,
    text: String,
    seq: u32,
}

/// Accumulates edits against the base text and answers questions about
/// intermediate texts in the base's coordinates.
struct Writer<'a> {
    base: &'a str,
    analysis: Analysis,
    app: &'a App,
    machine: &'a Machine,
    edits: Vec<Edit>,
    seq: u32,
    /// Base statement start -> index in `analysis`'s top-level statements.
    by_start: HashMap<usize, usize>,
    /// Write one wildcard where every key the default policy decides
    /// wants the same value.
    wildcards: bool,
    /// Spans of the statements pinned by `# mapwright: keep`: never edited,
    /// never removed.
    pinned: Vec<Span>,
}

/// The DSL's name of a grammar processor kind as a runtime kind.
fn runtime_kind(k: mapwright_grammar::ast::ProcKind) -> Option<ProcKind> {
    match k.name() {
        "CPU" => Some(ProcKind::Cpu),
        "GPU" => Some(ProcKind::Gpu),
        "OMP" => Some(ProcKind::Omp),
        "IO" => Some(ProcKind::Io),
        _ => None,
    }
}

fn runtime_mem(m: mapwright_grammar::ast::MemKind) -> Option<MemKind> {
    match m.name() {
        "SYSMEM" => Some(MemKind::Sysmem),
        "FBMEM" => Some(MemKind::Fbmem),
        "ZCMEM" => Some(MemKind::Zcmem),
        "SOCKMEM" => Some(MemKind::Sockmem),
        "RDMEM" => Some(MemKind::Rdmem),
        _ => None,
    }
}

/// The span from the first to the last item of a comma-separated list.
fn list_span<T>(items: &[(T, Span)]) -> Option<Span> {
    Some(Span::new(items.first()?.1.start(), items.last()?.1.end()))
}

/// Picks the list whose first usable entry gives the most keys what they
/// want (ties: the earlier candidate, so the user's own list when it is as
/// good). Returns it with the keys it leaves unsatisfied.
fn best_list<K: Clone, V: Copy + PartialEq>(
    candidates: &[Vec<V>],
    keys: &[(K, V)],
    first_usable: impl Fn(&K, &[V]) -> Option<V>,
) -> (Vec<V>, Vec<(K, V)>) {
    let mut best: Option<(usize, &Vec<V>)> = None;
    for c in candidates {
        let hits = keys
            .iter()
            .filter(|(k, want)| first_usable(k, c) == Some(*want))
            .count();
        if best.is_none_or(|(h, _)| hits > h) {
            best = Some((hits, c));
        }
    }
    let list = best.map(|(_, c)| c.clone()).unwrap_or_default();
    let unsatisfied = keys
        .iter()
        .filter(|(k, want)| first_usable(k, &list) != Some(*want))
        .cloned()
        .collect();
    (list, unsatisfied)
}

impl<'a> Writer<'a> {
    fn new(base: &'a str, app: &'a App, machine: &'a Machine) -> Writer<'a> {
        let analysis = analyze(base);
        let by_start = analysis
            .parsed
            .program
            .stmts
            .iter()
            .enumerate()
            .map(|(i, s)| (s.span.start(), i))
            .collect();
        let pinned = pinned_statements(&analysis.parsed.program, &analysis.parsed.comments, base);
        Writer {
            base,
            analysis,
            app,
            machine,
            edits: Vec::new(),
            seq: 2,
            by_start,
            wildcards: false,
            pinned,
        }
    }

    /// Whether an edit replaces, removes or splits a pinned statement
    /// (an insertion before or after one is fine).
    fn touches_pinned(&self) -> bool {
        self.edits.iter().any(|e| {
            self.pinned.iter().any(|p| {
                if e.span.is_empty() {
                    p.start() < e.span.start() && e.span.start() < p.end()
                } else {
                    e.span.start() < p.end() && p.start() < e.span.end()
                }
            })
        })
    }

    /// Whether statement `i` is pinned.
    fn is_pinned(&self, i: usize) -> bool {
        self.pinned.contains(&self.stmt(i).span)
    }

    fn program(&self) -> &Program {
        &self.analysis.parsed.program
    }

    fn stmt(&self, i: usize) -> &Stmt {
        &self.program().stmts[i]
    }

    fn sorted_edits(&self) -> Vec<&Edit> {
        let mut sorted: Vec<&Edit> = self.edits.iter().collect();
        sorted.sort_by_key(|e| (e.span.start(), e.span.end(), e.seq));
        sorted
    }

    /// The base text with every edit applied.
    fn text(&self) -> String {
        let mut out = String::with_capacity(self.base.len() + 256);
        let mut cursor = 0;
        for e in self.sorted_edits() {
            if e.span.start() < cursor {
                continue; // overlapping edits are never made; skip defensively
            }
            out.push_str(&self.base[cursor..e.span.start()]);
            out.push_str(&e.text);
            cursor = e.span.end();
        }
        out.push_str(&self.base[cursor..]);
        out
    }

    /// A position of the current text in the base (`None` inside inserted text).
    fn to_base(&self, pos: usize) -> Option<usize> {
        let mut shift: isize = 0;
        let mut cursor = 0;
        for e in self.sorted_edits() {
            if e.span.start() < cursor {
                continue;
            }
            let new_start = (e.span.start() as isize + shift) as usize;
            if pos < new_start {
                break;
            }
            if pos < new_start + e.text.len() {
                return None;
            }
            shift += e.text.len() as isize - (e.span.end() - e.span.start()) as isize;
            cursor = e.span.end();
        }
        usize::try_from(pos as isize - shift).ok()
    }

    /// The base statement a decision's rule span (in the current text) names.
    fn deciding(&self, rule: Option<Span>) -> Option<usize> {
        self.by_start.get(&self.to_base(rule?.start())?).copied()
    }

    /// Whether an edit already touches the inside of statement `i`.
    fn edited(&self, i: usize) -> bool {
        let span = self.stmt(i).span;
        self.edits.iter().any(|e| {
            e.span.start() >= span.start() && e.span.end() <= span.end() && !e.span.is_empty()
        })
    }

    fn push(&mut self, span: Span, text: String) {
        self.edits.push(Edit {
            span,
            text,
            seq: self.seq,
        });
        // Steps of two leave room for text that must precede an edit at
        // the same position (function definitions before their first use).
        self.seq += 2;
    }

    fn line_start(&self, pos: usize) -> usize {
        self.base[..pos].rfind('\n').map(|i| i + 1).unwrap_or(0)
    }

    /// Inserts `line` (without newline) on its own line after statement `i`,
    /// with the statement's indentation.
    fn insert_after(&mut self, i: usize, line: &str) {
        let span = self.stmt(i).span;
        let start = self.line_start(span.start());
        let indent: String = self.base[start..span.start()]
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect();
        match self.base[span.end()..].find('\n') {
            Some(nl) => {
                let at = span.end() + nl + 1;
                self.push(Span::at(at), format!("{indent}{line}\n"));
            }
            None => {
                let at = self.base.len();
                self.push(Span::at(at), format!("\n{indent}{line}"));
            }
        }
    }

    /// Inserts `line` on its own line before statement `i`.
    fn insert_before(&mut self, i: usize, line: &str) {
        let span = self.stmt(i).span;
        let start = self.line_start(span.start());
        if self.base[start..span.start()].trim().is_empty() {
            let indent = &self.base[start..span.start()];
            self.push(Span::at(start), format!("{indent}{line}\n"));
        } else {
            self.push(Span::at(span.start()), format!("{line} "));
        }
    }

    /// The last top-level statement for which `pred` holds.
    fn last_stmt(&self, pred: impl Fn(&StmtKind) -> bool) -> Option<usize> {
        self.program().stmts.iter().rposition(|s| pred(&s.kind))
    }

    /// Where the file's leading comment lines end (a header stays a header).
    fn after_header(&self) -> usize {
        let mut at = 0;
        for line in self.base.split_inclusive('\n') {
            let t = line.trim();
            if t.starts_with('#') || t.starts_with("//") {
                at += line.len();
            } else {
                break;
            }
        }
        at
    }

    /// Inserts `line` after the last statement matching the first predicate
    /// that matches one, else after the header comments.
    fn insert_near(&mut self, preds: &[fn(&StmtKind) -> bool], line: &str) {
        self.insert_near_or(preds, line, false);
    }

    /// [`Self::insert_near`], falling back to the end of the file when
    /// `at_end` (placement statements close a mapper).
    fn insert_near_or(&mut self, preds: &[fn(&StmtKind) -> bool], line: &str, at_end: bool) {
        for pred in preds {
            if let Some(i) = self.last_stmt(pred) {
                self.insert_after(i, line);
                return;
            }
        }
        if at_end {
            let at = self.base.len();
            let sep = if at > 0 && !self.base.ends_with('\n') {
                "\n"
            } else {
                ""
            };
            self.push(Span::at(at), format!("{sep}{line}\n"));
            return;
        }
        let at = self.after_header();
        let sep = if at > 0 && !self.base[..at].ends_with('\n') {
            "\n"
        } else {
            ""
        };
        self.push(Span::at(at), format!("{sep}{line}\n"));
    }

    /// The first kind of `list` that `task` has a variant for here.
    fn first_kind(&self, task: &str, list: &[ProcKind]) -> Option<ProcKind> {
        let t = self.app.task(task)?;
        list.iter()
            .copied()
            .find(|k| t.variants.contains(k) && self.machine.procs_per_node(*k) > 0)
    }

    // ----- the phases ---------------------------------------------------

    /// Processor kinds (`Task` statements).
    fn tasks(&mut self, decisions: &Decisions, spec: &Spec) {
        let mut groups: BTreeMap<Option<usize>, Vec<(String, ProcKind)>> = BTreeMap::new();
        for (task, want) in &spec.procs {
            let Some(d) = decisions.tasks.iter().find(|t| &t.task == task) else {
                continue;
            };
            if d.proc_kind != *want {
                groups
                    .entry(self.deciding(d.proc_rule))
                    .or_default()
                    .push((task.clone(), *want));
            }
        }
        for (stmt, changes) in groups {
            let Some(i) = stmt else {
                for (task, want) in changes {
                    self.insert_near(
                        &[|k| matches!(k, StmtKind::Task { .. })],
                        &format!("Task {task} {};", dsl_proc(want)),
                    );
                }
                continue;
            };
            let StmtKind::Task { tasks, procs } = self.stmt(i).kind.clone() else {
                continue;
            };
            let Some(span) = list_span(&procs) else {
                continue;
            };
            // Every task this statement decides, with what it should get.
            let decided: Vec<(String, ProcKind)> = decisions
                .tasks
                .iter()
                .filter(|t| self.deciding(t.proc_rule) == Some(i))
                .map(|t| {
                    let want = spec.procs.get(&t.task).copied().unwrap_or(t.proc_kind);
                    (t.task.clone(), want)
                })
                .collect();
            let current: Vec<ProcKind> =
                procs.iter().filter_map(|(k, _)| runtime_kind(*k)).collect();
            let mut wants: Vec<ProcKind> = decided.iter().map(|(_, k)| *k).collect();
            wants.sort_by_key(|k| match k {
                ProcKind::Gpu => 0,
                ProcKind::Omp => 1,
                _ => 2,
            });
            wants.dedup();
            let mut candidates = Vec::new();
            if current.len() == procs.len() {
                candidates.push(current.clone());
            }
            candidates.push(wants.clone());
            for k in &wants {
                candidates.push(vec![*k]);
            }
            let (list, unsatisfied) =
                best_list(&candidates, &decided, |t, l| self.first_kind(t, l));
            if list != current {
                let text: Vec<&str> = list.iter().map(|k| dsl_proc(*k)).collect();
                self.push(span, text.join(","));
            }
            let several_names = matches!(&tasks, TaskSel::Names(n) if n.len() > 1);
            for (task, want) in unsatisfied {
                let line = format!("Task {task} {};", dsl_proc(want));
                // Between two name lists the first wins; a name beats `*`.
                if several_names {
                    self.insert_before(i, &line);
                } else {
                    self.insert_after(i, &line);
                }
            }
        }
    }

    /// Memories (`Region` statements).
    fn regions(&mut self, decisions: &Decisions, spec: &Spec) {
        // (task, region name) -> (kind, memory, deciding statement)
        let mut current: BTreeMap<(String, String), (ProcKind, MemKind, Option<usize>)> =
            BTreeMap::new();
        for t in &decisions.tasks {
            for r in &t.regions {
                current
                    .entry((t.task.clone(), r.region.clone()))
                    .or_insert((t.proc_kind, r.memory, self.deciding(r.memory_rule)));
                for l in &r.launches {
                    current
                        .entry((t.task.clone(), l.region.clone()))
                        .or_insert((t.proc_kind, l.memory, self.deciding(l.memory_rule)));
                }
            }
        }
        let mut groups: BTreeMap<Option<usize>, Vec<(String, String)>> = BTreeMap::new();
        for (key, want) in &spec.memories {
            if let Some((_, mem, stmt)) = current.get(key) {
                if mem != want {
                    groups.entry(*stmt).or_default().push(key.clone());
                }
            }
        }
        let app = self.app;
        let line = |(task, region): &(String, String), kind: ProcKind, mem: MemKind| {
            format!(
                "Region {task} {} {} {};",
                RegionNaming::field(app, task, region),
                dsl_proc(kind),
                dsl_mem(mem)
            )
        };
        for (stmt, keys) in groups {
            let Some(i) = stmt else {
                // Per kind: one `Region * * KIND MEM;` when every argument
                // the default decides on that kind wants MEM.
                let mut kinds: BTreeMap<ProcKind, Vec<MemKind>> = BTreeMap::new();
                for (key, (kind, mem, s)) in &current {
                    if s.is_none() {
                        let want = spec.memories.get(key).copied().unwrap_or(*mem);
                        kinds.entry(*kind).or_default().push(want);
                    }
                }
                let mut covered: Vec<ProcKind> = Vec::new();
                for (kind, wants) in &kinds {
                    let all_same = wants.windows(2).all(|w| w[0] == w[1]);
                    let changes = keys.iter().filter(|k| current[*k].0 == *kind).count();
                    if self.wildcards && all_same && changes > 1 {
                        let text = format!("Region * * {} {};", dsl_proc(*kind), dsl_mem(wants[0]));
                        self.insert_near(
                            &[
                                |k| matches!(k, StmtKind::Region { .. }),
                                |k| matches!(k, StmtKind::Task { .. }),
                            ],
                            &text,
                        );
                        covered.push(*kind);
                    }
                }
                for key in keys {
                    if covered.contains(&current[&key].0) {
                        continue;
                    }
                    let (kind, _, _) = current[&key];
                    let text = line(&key, kind, spec.memories[&key]);
                    self.insert_near(
                        &[
                            |k| matches!(k, StmtKind::Region { .. }),
                            |k| matches!(k, StmtKind::Task { .. }),
                        ],
                        &text,
                    );
                }
                continue;
            };
            let StmtKind::Region { mems, .. } = self.stmt(i).kind.clone() else {
                continue;
            };
            let Some(span) = list_span(&mems) else {
                continue;
            };
            let decided: Vec<((String, String), MemKind)> = current
                .iter()
                .filter(|(_, (_, _, s))| *s == Some(i))
                .map(|(key, (_, mem, _))| {
                    (key.clone(), spec.memories.get(key).copied().unwrap_or(*mem))
                })
                .collect();
            let own: Vec<MemKind> = mems.iter().filter_map(|(m, _)| runtime_mem(*m)).collect();
            let mut candidates = Vec::new();
            if own.len() == mems.len() {
                candidates.push(own.clone());
            }
            let mut wants: Vec<MemKind> = decided.iter().map(|(_, m)| *m).collect();
            wants.sort();
            wants.dedup();
            for m in &wants {
                candidates.push(vec![*m]);
                let mut with_rest = vec![*m];
                with_rest.extend(own.iter().copied().filter(|x| x != m));
                candidates.push(with_rest);
            }
            let machine = self.machine;
            let (list, unsatisfied) = best_list(&candidates, &decided, |key, l| {
                let kind = current.get(key)?.0;
                l.iter().copied().find(|m| machine.can_reach(kind, *m))
            });
            if list != own {
                let text: Vec<&str> = list.iter().map(|m| dsl_mem(*m)).collect();
                self.push(span, text.join(","));
            }
            for (key, want) in unsatisfied {
                let (kind, _, _) = current[&key];
                let text = line(&key, kind, want);
                self.insert_after(i, &text);
            }
        }
    }

    /// Layouts (`Layout` statements).
    fn layouts(&mut self, decisions: &Decisions, spec: &Spec) {
        // (task, region name) -> (layout, deciding statement)
        let mut current: BTreeMap<(String, String), (LayoutChoice, Option<usize>)> =
            BTreeMap::new();
        for t in &decisions.tasks {
            for r in &t.regions {
                let choice = |soa: bool, order: Order| LayoutChoice {
                    soa,
                    c_order: order == Order::C,
                };
                current
                    .entry((t.task.clone(), r.region.clone()))
                    .or_insert((
                        choice(r.layout.soa, r.layout.order),
                        self.deciding(r.layout_rule),
                    ));
                for l in &r.launches {
                    current
                        .entry((t.task.clone(), l.region.clone()))
                        .or_insert((
                            choice(l.layout.soa, l.layout.order),
                            self.deciding(l.layout_rule),
                        ));
                }
            }
        }
        let mut groups: BTreeMap<Option<usize>, BTreeSet<String>> = BTreeMap::new();
        for ((task, _), (layout, stmt)) in &current {
            if let Some(want) = spec.layouts.get(task) {
                if want != layout {
                    groups.entry(*stmt).or_default().insert(task.clone());
                }
            }
        }
        let line = |task: &str, l: LayoutChoice| {
            format!(
                "Layout {task} * * {} {};",
                if l.soa { "SOA" } else { "AOS" },
                if l.c_order { "C_order" } else { "F_order" }
            )
        };
        for (stmt, tasks) in groups {
            let Some(i) = stmt else {
                // One `Layout * * * ...;` when every instance the default
                // decides wants the same layout.
                let wants: Vec<LayoutChoice> = current
                    .iter()
                    .filter(|(_, (_, s))| s.is_none())
                    .map(|((task, _), (l, _))| spec.layouts.get(task).copied().unwrap_or(*l))
                    .collect();
                if self.wildcards && tasks.len() > 1 && wants.windows(2).all(|w| w[0] == w[1]) {
                    let text = line("*", wants[0]);
                    self.insert_near(
                        &[
                            |k| matches!(k, StmtKind::Layout { .. }),
                            |k| matches!(k, StmtKind::Region { .. }),
                            |k| matches!(k, StmtKind::Task { .. }),
                        ],
                        &text,
                    );
                    continue;
                }
                for task in tasks {
                    let text = line(&task, spec.layouts[&task]);
                    self.insert_near(
                        &[
                            |k| matches!(k, StmtKind::Layout { .. }),
                            |k| matches!(k, StmtKind::Region { .. }),
                            |k| matches!(k, StmtKind::Task { .. }),
                        ],
                        &text,
                    );
                }
                continue;
            };
            let StmtKind::Layout {
                mem, constraints, ..
            } = self.stmt(i).kind.clone()
            else {
                continue;
            };
            // What the keys this statement decides want, by count.
            let mut counts: BTreeMap<LayoutChoice, usize> = BTreeMap::new();
            for ((task, _), (layout, s)) in &current {
                if *s == Some(i) {
                    let want = spec.layouts.get(task).copied().unwrap_or(*layout);
                    *counts.entry(want).or_default() += 1;
                }
            }
            let mine = current
                .iter()
                .find(|(_, (_, s))| *s == Some(i))
                .map(|(_, (l, _))| *l);
            let Some(majority) = counts
                .iter()
                .max_by_key(|(l, n)| (**n, Some(**l) == mine))
                .map(|(l, _)| *l)
            else {
                continue;
            };
            if Some(majority) != mine {
                let mem_end = match mem {
                    MemSel::Star(s) | MemSel::Kind(_, s) => s.end(),
                };
                for (span, text) in layout_edits(&constraints, mem_end, majority) {
                    self.push(span, text);
                }
            }
            for task in tasks {
                let want = spec.layouts[&task];
                if want != majority {
                    let text = line(&task, want);
                    self.insert_after(i, &text);
                }
            }
        }
    }

    /// Placement functions (`IndexTaskMap`, `SingleTaskMap`) and `CollectMemory`.
    fn placements(&mut self, decisions: &Decisions, spec: &Spec) {
        let find = |task: &str| decisions.tasks.iter().find(|t| t.task == task);
        // (line start before which the functions must be defined)
        let mut first_use: Option<usize> = None;
        let mut defs: Vec<(String, String)> = Vec::new(); // (name, kind var key) with text
        let mut kinds: Vec<ProcKind> = Vec::new();
        let mut maps: Vec<(String, String, Option<usize>, bool)> = Vec::new(); // (task, func, stmt, index?)
        for (task, f) in &spec.index_fns {
            if *f == IndexFn::Original {
                continue;
            }
            let (Some(d), Some(t)) = (find(task), self.app.task(task)) else {
                continue;
            };
            let dims = t.domain.len().max(1);
            let name = fn_name(*f, d.proc_kind, dims);
            if !defs.iter().any(|(n, _)| *n == name) {
                let var = self.machine_name(d.proc_kind);
                defs.push((name.clone(), function_def(*f, d.proc_kind, dims, &var)));
            }
            if !kinds.contains(&d.proc_kind) {
                kinds.push(d.proc_kind);
            }
            maps.push((task.clone(), name, self.deciding(d.map_rule), true));
        }
        for (task, on) in &spec.same_point {
            let Some(d) = find(task).filter(|_| *on) else {
                continue;
            };
            let name = same_point_name(d.proc_kind);
            if !defs.iter().any(|(n, _)| *n == name) {
                let var = self.machine_name(d.proc_kind);
                defs.push((name.clone(), same_point_def(d.proc_kind, &var)));
            }
            if !kinds.contains(&d.proc_kind) {
                kinds.push(d.proc_kind);
            }
            maps.push((task.clone(), name, self.deciding(d.map_rule), false));
        }
        let mut first_map_seq: Option<u32> = None;
        for (task, name, stmt, index) in maps {
            first_map_seq.get_or_insert(self.seq);
            let keyword = if index {
                "IndexTaskMap"
            } else {
                "SingleTaskMap"
            };
            let line = format!("{keyword} {task} {name};");
            let use_at = match stmt {
                Some(i) => {
                    let (tasks, func) = match &self.stmt(i).kind {
                        StmtKind::IndexTaskMap { tasks, func }
                        | StmtKind::SingleTaskMap { tasks, func } => (tasks.clone(), func.clone()),
                        _ => continue,
                    };
                    if func.name == name {
                        continue;
                    }
                    let start = self.line_start(self.stmt(i).span.start());
                    match &tasks {
                        TaskSel::Names(n) if n.len() == 1 => {
                            self.push(func.span, name.clone());
                        }
                        // Between two name lists the first wins.
                        TaskSel::Names(_) => self.insert_before(i, &line),
                        // A name beats a kind or `*`.
                        _ => {
                            self.insert_after(i, &line);
                        }
                    }
                    start
                }
                None => {
                    let before = self.edits.len();
                    self.insert_near_or(
                        &[|k| {
                            matches!(
                                k,
                                StmtKind::IndexTaskMap { .. } | StmtKind::SingleTaskMap { .. }
                            )
                        }],
                        &line,
                        true,
                    );
                    self.edits.get(before).map(|e| e.span.start()).unwrap_or(0)
                }
            };
            first_use = Some(first_use.map_or(use_at, |u: usize| u.min(use_at)));
        }
        if let Some(at) = first_use {
            let mut text = String::new();
            for k in &kinds {
                if self.existing_machine(*k).is_none() {
                    let var = machine_var(*k);
                    if !self.base.contains(&format!("{var} =")) {
                        let _ = writeln!(text, "{var} = Machine({});", dsl_proc(*k));
                    }
                }
            }
            for (name, def) in &defs {
                if !self.base.contains(&format!("def {name}(")) {
                    text.push_str(def);
                }
            }
            if !text.is_empty() {
                let sep = if at > 0 && !self.base[..at].ends_with('\n') {
                    "\n"
                } else {
                    ""
                };
                // Right before the first statement that uses them.
                self.edits.push(Edit {
                    span: Span::at(at),
                    text: format!("{sep}{text}"),
                    seq: first_map_seq.map_or(0, |s| s.saturating_sub(1)),
                });
            }
        }
        for (task, on) in &spec.collect {
            let Some(d) = find(task) else { continue };
            if *on && !d.collect_memory {
                self.insert_near(
                    &[
                        |k| matches!(k, StmtKind::CollectMemory { .. }),
                        |k| matches!(k, StmtKind::Layout { .. }),
                        |k| matches!(k, StmtKind::Region { .. }),
                        |k| matches!(k, StmtKind::Task { .. }),
                    ],
                    &format!("CollectMemory {task} *;"),
                );
            }
        }
    }

    /// A top-level variable the user binds once, to `Machine(kind)`.
    fn existing_machine(&self, kind: ProcKind) -> Option<String> {
        let mut found: Option<String> = None;
        let mut assigned: HashMap<&str, usize> = HashMap::new();
        for s in &self.program().stmts {
            if let StmtKind::Assign { name, value } = &s.kind {
                *assigned.entry(name.name.as_str()).or_default() += 1;
                if found.is_none() && value.as_machine_ctor().and_then(runtime_kind) == Some(kind) {
                    found = Some(name.name.clone());
                }
            }
        }
        found.filter(|n| assigned.get(n.as_str()) == Some(&1))
    }

    /// The machine-model variable the generated functions use for `kind`.
    fn machine_name(&self, kind: ProcKind) -> String {
        self.existing_machine(kind)
            .unwrap_or_else(|| machine_var(kind))
    }

    /// Removes the base's mapping statements that decided something before
    /// the edits and decide nothing after them (and a function only such a
    /// statement named). Returns whether anything was removed.
    fn remove_dead(&mut self, before: &Decisions, after: &Decisions) -> bool {
        let rules = |d: &Decisions| -> Vec<Span> {
            let mut out = Vec::new();
            for t in &d.tasks {
                out.extend(t.proc_rule);
                out.extend(t.map_rule);
                for r in &t.regions {
                    out.extend(r.memory_rule);
                    out.extend(r.layout_rule);
                    for l in &r.launches {
                        out.extend(l.memory_rule);
                        out.extend(l.layout_rule);
                    }
                }
            }
            out
        };
        let used_before: BTreeSet<usize> = rules(before)
            .iter()
            .filter_map(|s| self.by_start.get(&s.start()).copied())
            .collect();
        let used_after: BTreeSet<usize> = rules(after)
            .iter()
            .filter_map(|s| self.deciding(Some(*s)))
            .collect();
        let dead: Vec<usize> = used_before
            .difference(&used_after)
            .copied()
            .filter(|i| {
                matches!(
                    self.stmt(*i).kind,
                    StmtKind::Task { .. }
                        | StmtKind::Region { .. }
                        | StmtKind::Layout { .. }
                        | StmtKind::IndexTaskMap { .. }
                        | StmtKind::SingleTaskMap { .. }
                ) && !self.edited(*i)
                    && !self.is_pinned(*i)
            })
            .collect();
        let mut removed = false;
        for i in dead {
            let span = whole_line(self.base, self.stmt(i).span);
            self.push(span, String::new());
            removed = true;
            // A function only this statement named goes too.
            if let StmtKind::IndexTaskMap { func, .. } | StmtKind::SingleTaskMap { func, .. } =
                &self.stmt(i).kind
            {
                let name = func.name.clone();
                let text = self.text();
                let uses = analyze(&text)
                    .parsed
                    .program
                    .mapping_function_names()
                    .iter()
                    .filter(|n| **n == name)
                    .count();
                let mentioned = count_word(&text, &name);
                if uses == 0 && mentioned == 1 {
                    if let Some(def) = self.program().stmts.iter().position(
                        |s| matches!(&s.kind, StmtKind::FuncDef { name: n, .. } if n.name == name),
                    ) {
                        let span = whole_line(self.base, self.stmt(def).span);
                        self.push(span, String::new());
                    }
                }
            }
        }
        removed
    }
}

/// How often `word` occurs in `text` as a whole identifier.
pub(crate) fn count_word(text: &str, word: &str) -> usize {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word)
        .filter(|(i, _)| {
            let before = text[..*i].chars().next_back();
            let after = text[i + word.len()..].chars().next();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
        .count()
}

/// The token edits that make a Layout statement's constraints say `want`
/// (`SOA` and `F_order` are the defaults, so they are added only when the
/// statement must say otherwise).
fn layout_edits(
    constraints: &[Constraint],
    mem_end: usize,
    want: LayoutChoice,
) -> Vec<(Span, String)> {
    let mut edits = Vec::new();
    let end = constraints
        .last()
        .map(|c| c.span().end())
        .unwrap_or(mem_end);
    let soa = constraints.iter().find_map(|c| match c {
        Constraint::Soa(s) => Some((true, *s)),
        Constraint::Aos(s) => Some((false, *s)),
        _ => None,
    });
    let mut appended = String::new();
    match soa {
        Some((is_soa, span)) if is_soa != want.soa => {
            edits.push((span, if want.soa { "SOA" } else { "AOS" }.to_string()))
        }
        None if !want.soa => appended.push_str(" AOS"),
        _ => {}
    }
    let order = constraints.iter().find_map(|c| match c {
        Constraint::COrder(s) => Some((true, *s)),
        Constraint::FOrder(s) => Some((false, *s)),
        _ => None,
    });
    match order {
        Some((is_c, span)) if is_c != want.c_order => edits.push((
            span,
            if want.c_order { "C_order" } else { "F_order" }.to_string(),
        )),
        None if want.c_order => appended.push_str(" C_order"),
        _ => {}
    }
    if !appended.is_empty() {
        edits.push((Span::at(end), appended));
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimize::space::Space;

    fn target(app: &str) -> (App, Machine) {
        (
            App::builtin(app).expect("built-in app"),
            Machine::preset("p100x4").expect("preset"),
        )
    }

    fn resolver<'a>(app: &'a App, machine: &'a Machine) -> impl Fn(&str) -> Option<Decisions> + 'a {
        move |text: &str| {
            let analysis = analyze(text);
            if analysis.diagnostics().iter().any(|d| d.is_error()) {
                return None;
            }
            Some(mapwright_runtime::resolve_mapping::resolve_mapping(
                &analysis, text, app, machine,
            ))
        }
    }

    /// Renders `spec` in place and checks it decides what the block does.
    fn in_place(base: &str, spec: &Spec, app: &App, machine: &Machine) -> String {
        let resolve = resolver(app, machine);
        let decisions = resolve(base).expect("the base compiles");
        let text = render_in_place(base, &decisions, spec, app, machine, &resolve)
            .expect("an in-place rendering");
        let block = render(base, &decisions, spec, app);
        assert_eq!(
            signature(&resolve(&text).unwrap()),
            signature(&resolve(&block).unwrap()),
            "{text}"
        );
        assert!(!text.contains("mapwright: tuned rules"), "{text}");
        text
    }

    #[test]
    fn a_wildcard_is_rewritten_when_every_task_it_decides_wants_the_change() {
        let (app, machine) = target("circuit");
        let space = Space::new(&app, &machine);
        let mut spec = Spec::default();
        for (task, kinds) in &space.procs {
            spec.procs.insert(task.clone(), kinds[0]);
        }
        let base = "# all on CPUs\nTask * CPU; # first try\nRegion * * CPU SYSMEM;\n";
        let text = in_place(base, &spec, &app, &machine);
        assert!(
            text.starts_with("# all on CPUs\nTask * GPU,CPU; # first try\n"),
            "{text}"
        );
    }

    #[test]
    fn a_layout_changes_by_one_word_in_the_line_that_decides() {
        let (app, machine) = target("stencil");
        let space = Space::new(&app, &machine);
        let mut spec = Spec::default();
        for task in &space.layout_tasks {
            spec.layouts.insert(
                task.clone(),
                LayoutChoice {
                    soa: true,
                    c_order: false,
                },
            );
        }
        let base = "Task * GPU,CPU;\n# the taco habit\nLayout * * * SOA C_order; # keep me\n";
        let text = in_place(base, &spec, &app, &machine);
        assert_eq!(
            text,
            "Task * GPU,CPU;\n# the taco habit\nLayout * * * SOA F_order; # keep me\n"
        );
    }

    #[test]
    fn one_argument_moving_gets_a_line_beside_the_wildcard() {
        let (app, machine) = target("circuit");
        let space = Space::new(&app, &machine);
        let base = "Task * GPU,CPU;\nRegion * * GPU FBMEM;\nLayout * * * SOA F_order;\n";
        let decisions = resolver(&app, &machine)(base).unwrap();
        let on_gpu = |t: &str| {
            decisions
                .tasks
                .iter()
                .any(|d| d.task == t && d.proc_kind == ProcKind::Gpu)
        };
        let (task, region) = space
            .regions
            .iter()
            .find(|(t, _)| on_gpu(t))
            .cloned()
            .expect("a GPU task");
        let mut spec = Spec::default();
        spec.memories
            .insert((task.clone(), region.clone()), MemKind::Zcmem);
        let text = in_place(base, &spec, &app, &machine);
        let field = RegionNaming::field(&app, &task, &region);
        assert_eq!(
            text,
            format!("Task * GPU,CPU;\nRegion * * GPU FBMEM;\nRegion {task} {field} GPU ZCMEM;\nLayout * * * SOA F_order;\n")
        );
    }

    #[test]
    fn statements_left_deciding_nothing_are_removed() {
        let (app, machine) = target("cannon");
        let space = Space::new(&app, &machine);
        let mut spec = Spec::default();
        for (task, kinds) in &space.procs {
            spec.procs.insert(task.clone(), kinds[0]);
        }
        let base = "# start\nTask * CPU;\nRegion * * CPU SYSMEM; # only CPUs\n";
        let text = in_place(base, &spec, &app, &machine);
        // Every cannon task has a GPU or OpenMP variant: no CPU task is left
        // for the Region statement to decide.
        assert!(!text.contains("Region * * CPU SYSMEM"), "{text}");
        assert!(text.starts_with("# start\n"), "{text}");
    }

    #[test]
    fn a_pinned_statement_is_never_edited_or_removed() {
        let (app, machine) = target("circuit");
        let resolve = resolver(&app, &machine);
        // Every argument of every GPU task to zero-copy: unpinned, the
        // writer rewrites the wildcard that decides them all.
        let spec_for = |base: &str| {
            let decisions = resolve(base).expect("compiles");
            let mut spec = Spec::default();
            for t in decisions
                .tasks
                .iter()
                .filter(|t| t.proc_kind == ProcKind::Gpu)
            {
                for r in &t.regions {
                    spec.memories
                        .insert((t.task.clone(), r.region.clone()), MemKind::Zcmem);
                }
            }
            (decisions, spec)
        };
        let plain = "Task * GPU,CPU;\nRegion * * GPU FBMEM;\n";
        let (decisions, spec) = spec_for(plain);
        let text = render_in_place(plain, &decisions, &spec, &app, &machine, &resolve)
            .expect("an in-place rendering");
        assert!(text.contains("Region * * GPU ZCMEM;"), "{text}");
        let pinned = "Task * GPU,CPU;\nRegion * * GPU FBMEM; # mapwright: keep\n";
        let (decisions, spec) = spec_for(pinned);
        // No in-place form keeps the pin here: the caller writes the block.
        assert_eq!(
            render_in_place(pinned, &decisions, &spec, &app, &machine, &resolve),
            None
        );
    }

    #[test]
    fn placement_functions_are_defined_before_their_first_use() {
        let (app, machine) = target("circuit");
        let space = Space::new(&app, &machine);
        let mut spec = Spec::default();
        for task in &space.index_tasks {
            spec.index_fns.insert(task.clone(), IndexFn::LinearCyclic);
        }
        let base = "Task * GPU,CPU;\nmgpu = Machine(GPU);\n";
        let text = in_place(base, &spec, &app, &machine);
        let def = text.find("def mw_linear_cyclic_gpu").expect("a definition");
        let first_use = text.find("IndexTaskMap").expect("a use");
        assert!(def < first_use, "{text}");
        // The user's machine model is reused, not a second one made.
        assert!(!text.contains("mw_gpu ="), "{text}");
        assert!(text.contains("mgpu.merge(0, 1)"), "{text}");
    }
}
