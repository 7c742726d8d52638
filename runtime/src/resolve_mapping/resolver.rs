//! The resolver's state, the traces the diagnostics read, the order in
//! which a run meets things ([`Resolver::run`]), and the per-task loop that
//! asks each decision in turn ([`Resolver::resolve_tasks`]).

use mapwright_grammar::fast_hash::FastSet;
use std::collections::BTreeSet;

use mapwright_grammar::ast::{self, Stmt};
use mapwright_grammar::{Diagnostic, Parsed, Span};

use crate::app::{App, RegionArg};
use crate::decisions::{
    Decisions, LaunchRegionDecision, PointPlacement, RegionDecision, RuntimeFailure, TaskDecision,
};
use crate::machine::{Machine, ProcKind, RankView};

use super::entry::RegionNaming;
use super::instances::instance_kind;
use super::memo::ResolveMemo;
use super::placer::LaunchPlacer;
use super::rules::Rules;

/// Why a kind of a `Task` list was passed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SkipReason {
    /// The machine has no processor of the kind.
    NoProcessor,
    /// The task has no variant for the kind.
    NoVariant,
}

/// What happened to one memory candidate of a region argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MemOutcome {
    Chosen,
    Virtual,
    /// The machine has no memory of the kind.
    Absent,
    /// The memory exists but the processor has no affinity to it.
    Unreachable,
}

/// One consulted memory candidate (in the reference's order).
#[derive(Debug, Clone, Copy)]
pub(super) struct MemCandidate {
    pub(super) mem: ast::MemKind,
    pub(super) token: Span,
    pub(super) stmt: usize,
    pub(super) outcome: MemOutcome,
}

/// The layout rule that decided an instance: statement index and the key it
/// was stored under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LayoutHit {
    pub(super) stmt: usize,
    pub(super) task: String,
    pub(super) region: String,
    pub(super) mem: Option<ast::MemKind>,
}

/// How a region argument was resolved.
#[derive(Debug, Clone)]
pub(super) struct RegionTrace {
    pub(super) names: Vec<String>,
    pub(super) candidates: Vec<MemCandidate>,
    pub(super) layout_hit: Option<LayoutHit>,
}

/// How a task was resolved.
#[derive(Debug, Clone)]
pub(super) struct TaskTrace {
    pub(super) kind_stmt: Option<usize>,
    pub(super) skipped: Vec<(ast::ProcKind, Span, usize, SkipReason)>,
    pub(super) regions: Vec<RegionTrace>,
    pub(super) map_stmt: Option<usize>,
    pub(super) map_func: Option<String>,
    /// The machine can run one of the task's variants (else E0318, and
    /// nothing else is reported for the task).
    pub(super) runnable: bool,
}

/// (task index, argument index) pairs: instances of region arguments.
pub(super) type Members = Vec<(usize, usize)>;

/// Text edits of a quick fix.
pub(super) type Edits = Vec<(Span, String)>;

/// A fatal failure with its position in the run (phase, then order).
pub(super) struct Fatal {
    pub(super) phase: u8,
    pub(super) order: usize,
    pub(super) failure: RuntimeFailure,
}

/// Counts used to judge a candidate quick fix by resolving the edited text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct LayoutSummary {
    /// (task, argument index) pairs whose layout a library rejects.
    pub(super) violations: BTreeSet<(String, u32)>,
    pub(super) conflicts: usize,
    pub(super) shadows: usize,
    pub(super) parse_errors: usize,
}

pub(super) struct Resolver<'a> {
    /// The parse (the checker's results are not needed).
    pub(super) parsed: &'a Parsed,
    pub(super) source: &'a str,
    pub(super) program: &'a ast::Program,
    pub(super) app: &'a App,
    pub(super) machine: &'a Machine,
    pub(super) naming: RegionNaming,
    pub(super) fixes: bool,
    pub(super) rules: Rules<'a>,
    pub(super) tasks: Vec<TaskDecision>,
    pub(super) traces: Vec<TaskTrace>,
    pub(super) diags: Vec<Diagnostic>,
    pub(super) fatals: Vec<Fatal>,
    pub(super) summary: LayoutSummary,
    /// Tasks already reported for E0302 / E0312 (no duplicates from the
    /// evaluator; their points are not placed).
    pub(super) reported_kind: FastSet<String>,
    pub(super) reported_tuple: FastSet<String>,
    /// The machine as the mapper sees it (one node per rank).
    pub(super) view: RankView<'a>,
    /// Each task's placement in the mapper's coordinates (rank, processor
    /// within the rank), by task index: what `task.parent.processor(m)`
    /// sees. `tasks[i].placement` is the physical one.
    pub(super) logical: Vec<Vec<PointPlacement>>,
    /// Tasks with a static E0311 (an unconditional `ipoint[k]` past the
    /// launch's dimensionality): placing their points still runs and gives
    /// the run's failure, without a second diagnostic.
    pub(super) static_tuple: FastSet<String>,
    /// What the last resolution against the same application left (see
    /// [`ResolveMemo`]).
    pub(super) memo: Option<&'a ResolveMemo>,
}

impl<'a> Resolver<'a> {
    pub(super) fn new(
        parsed: &'a Parsed,
        source: &'a str,
        app: &'a App,
        machine: &'a Machine,
        naming: RegionNaming,
        fixes: bool,
    ) -> Resolver<'a> {
        let program = &parsed.program;
        Resolver {
            parsed,
            source,
            program,
            app,
            machine,
            naming,
            fixes,
            rules: Rules::build(program),
            tasks: Vec::new(),
            traces: Vec::new(),
            diags: Vec::new(),
            fatals: Vec::new(),
            summary: LayoutSummary::default(),
            reported_kind: FastSet::default(),
            reported_tuple: FastSet::default(),
            static_tuple: FastSet::default(),
            view: RankView::new(machine, app.ranks_per_node.on(machine)),
            logical: vec![Vec::new(); app.tasks.len()],
            memo: None,
        }
    }

    pub(super) fn stmt(&self, i: usize) -> Option<&'a Stmt> {
        self.program.stmt(i)
    }

    /// A placement in the mapper's coordinates as the machine's processor
    /// (out-of-range points, which are reported, are kept as they are).
    pub(super) fn to_physical(&self, kind: ProcKind, p: &PointPlacement) -> PointPlacement {
        match self.view.to_physical(kind, p.node, p.proc) {
            Some((node, proc)) => PointPlacement {
                point: p.point.clone(),
                node,
                proc,
            },
            None => p.clone(),
        }
    }

    pub(super) fn stmt_span(&self, i: usize) -> Span {
        self.stmt(i).map(|s| s.span).unwrap_or_default()
    }

    pub(super) fn line(&self, offset: usize) -> usize {
        self.source
            .get(..offset.min(self.source.len()))
            .map(|s| s.matches('\n').count())
            .unwrap_or(0)
            + 1
    }

    /// `line N `<statement>`` for messages.
    pub(super) fn describe_stmt(&self, i: usize) -> String {
        let span = self.stmt_span(i);
        format!(
            "`{}` (line {})",
            short(span.text(self.source)),
            self.line(span.start())
        )
    }

    pub(super) fn fatal(
        &mut self,
        phase: u8,
        order: usize,
        kind: &str,
        raw: String,
        rule: Option<Span>,
    ) {
        self.fatals.push(Fatal {
            phase,
            order,
            failure: RuntimeFailure {
                kind: kind.to_string(),
                raw_output: raw,
                rule,
            },
        });
    }

    /// Everything, in the order a run meets it.
    pub(super) fn run(&mut self, placer: Option<&mut dyn LaunchPlacer>) {
        let full = placer.is_some();
        if full {
            self.syntax_fatal();
            self.top_level_fatal();
            self.name_checks();
            self.statement_checks();
        }
        self.resolve_tasks();
        if full {
            self.kind_diagnostics();
            self.memory_diagnostics();
            self.never_applies();
        }
        self.layout_checks();
        if let Some(placer) = placer {
            self.function_checks();
            self.place_all(placer);
        }
    }

    pub(super) fn finish(self) -> Decisions {
        let Resolver {
            app,
            machine,
            tasks,
            mut diags,
            mut fatals,
            ..
        } = self;
        diags.sort_by_key(|d| (d.span.start(), d.span.end(), d.code));
        fatals.sort_by_key(|f| (f.phase, f.order));
        Decisions {
            app: app.name.clone(),
            machine: machine.name.clone(),
            tasks,
            diagnostics: diags,
            fatal: fatals.into_iter().next().map(|f| f.failure),
        }
    }

    /// The names a region argument is matched by in this run, on launch
    /// `k` of its task ([`RegionArg::launch_names`]).
    fn arg_names(&self, arg: &RegionArg, k: usize) -> Vec<String> {
        let mut names = Vec::new();
        if self.naming != RegionNaming::Index {
            names.extend(arg.launch_names(k).into_iter().map(String::from));
        }
        if self.naming != RegionNaming::Semantic {
            names.push(arg.index.to_string());
        }
        dedup_keep_first(&mut names);
        names
    }

    /// The four lookup keys in the reference's order.
    pub(super) fn lookup_keys<'k>(task: &'k str, names: &'k [String]) -> Vec<(&'k str, &'k str)> {
        let mut keys: Vec<(&str, &str)> = Vec::with_capacity(2 * names.len() + 2);
        for n in names {
            keys.push((task, n));
        }
        keys.push((task, "*"));
        for n in names {
            keys.push(("*", n));
        }
        keys.push(("*", "*"));
        dedup_keep_first(&mut keys);
        keys
    }

    fn resolve_tasks(&mut self) {
        let app = self.app;
        let any_replicate = !self.rules.replicate.is_empty();
        for (ti, task) in app.tasks.iter().enumerate() {
            let (kind, kind_stmt, skipped, ok) = self.resolve_kind(task);
            if !ok {
                let span = kind_stmt
                    .map(|s| self.stmt_span(s))
                    .or_else(|| self.program.stmts.first().map(|s| s.span))
                    .unwrap_or_default();
                let variants: Vec<String> = task.variants.iter().map(|k| k.to_string()).collect();
                self.diags.push(
                    Diagnostic::error(
                        "E0318",
                        span,
                        format!(
                            "`{}` has variants for {} only, and machine `{}` has no such processor",
                            task.name,
                            variants.join(", "),
                            self.machine.name
                        ),
                    )
                    .with_note("Legion's default mapper aborts: it finds no variant to run"),
                );
                self.fatal(
                    1,
                    ti * 10,
                    "mapping_error",
                    format!(
                        "Default mapper was unable to find any variants for task {}. The application must register at least one variant for all task kinds.",
                        task.name
                    ),
                    None,
                );
            }
            let mut regions = Vec::new();
            let mut traces = Vec::new();
            // The task's own and `*` entries, found once for all its
            // arguments.
            let region_table = self.rules.region.for_task(&task.name);
            let layout_table = self.rules.layout.for_task(&task.name);
            for arg in &task.regions {
                let names = self.arg_names(arg, 0);
                // The same keys answer the memory and the layout question.
                let keys = Self::lookup_keys(&task.name, &names);
                let (memory, mem_stmt, is_virtual, candidates) =
                    self.resolve_memory(&region_table, kind, &keys);
                let instance = instance_kind(task, arg, is_virtual);
                let (layout, hit) = self.resolve_layout(&layout_table, &keys, memory);
                regions.push(RegionDecision {
                    region: arg.name.clone(),
                    index: arg.index,
                    memory,
                    memory_rule: mem_stmt.map(|s| self.stmt_span(s)),
                    layout,
                    layout_rule: hit.as_ref().map(|h| self.stmt_span(h.stmt)),
                    instance,
                    collect: self.collects(task, arg, &names),
                    launches: (1..=arg.launches.len())
                        .map(|k| {
                            let names = self.arg_names(arg, k);
                            let keys = Self::lookup_keys(&task.name, &names);
                            let (memory, stmt, is_virtual, _) =
                                self.resolve_memory(&region_table, kind, &keys);
                            let (layout, hit) = self.resolve_layout(&layout_table, &keys, memory);
                            LaunchRegionDecision {
                                // The region's own name, whatever the run
                                // matches by (an index run's first key is
                                // the argument index).
                                region: arg
                                    .launch_names(k)
                                    .first()
                                    .map(|n| n.to_string())
                                    .unwrap_or_default(),
                                memory,
                                memory_rule: stmt.map(|s| self.stmt_span(s)),
                                layout,
                                layout_rule: hit.as_ref().map(|h| self.stmt_span(h.stmt)),
                                instance: instance_kind(task, arg, is_virtual),
                            }
                        })
                        .collect(),
                });
                traces.push(RegionTrace {
                    names,
                    candidates,
                    layout_hit: hit,
                });
            }
            let control_replicated = if any_replicate {
                self.rules.replicate.contains_key(&task.name)
            } else {
                // Default: the top-level task is replicated on several nodes
                // (one shard per rank).
                task.parent.is_none() && self.view.nodes() > 1
            };
            let (map_stmt, map_func) = match self.map_rule(task, kind) {
                Some(r) => (Some(r.stmt), Some(r.func.name.clone())),
                None => (None, None),
            };
            self.tasks.push(TaskDecision {
                task: task.name.clone(),
                launch: task.launch,
                proc_kind: kind,
                proc_rule: kind_stmt.map(|s| self.stmt_span(s)),
                regions,
                placement: Vec::new(),
                map_rule: map_stmt.map(|s| self.stmt_span(s)),
                instance_limit: self.instance_limit(task),
                control_replicated,
                collect_memory: false,
            });
            let collect = self
                .tasks
                .last()
                .map(|t| t.regions.iter().any(|r| r.collect))
                .unwrap_or(false);
            if let Some(t) = self.tasks.last_mut() {
                t.collect_memory = collect;
            }
            self.traces.push(TaskTrace {
                kind_stmt,
                skipped,
                regions: traces,
                map_stmt,
                map_func,
                runnable: ok,
            });
        }
    }
}

/// A statement's text shortened for a message.
pub(super) fn short(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 60 {
        let cut: String = one_line.chars().take(57).collect();
        format!("{cut}...")
    } else {
        one_line
    }
}

/// Drops repeated items, keeping each one's first occurrence in order (the
/// lists are a handful of names: a scan beats hashing and cloning).
fn dedup_keep_first<T: PartialEq>(items: &mut Vec<T>) {
    let mut i = 0;
    while i < items.len() {
        if items[..i].contains(&items[i]) {
            items.remove(i);
        } else {
            i += 1;
        }
    }
}
