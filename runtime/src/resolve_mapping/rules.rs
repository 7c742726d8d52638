//! The statement tables, built as the reference builds them: every table
//! is filled with `unordered_map::insert`, so the first statement for a key
//! wins.

use crate::eval::fast_hash::{FastMap, FastSet};

use mapwright_grammar::ast::{self, Constraint, MemSel, ProcSel, RegionSel, StmtKind, TaskSel};
use mapwright_grammar::Span;

/// `Task` entry: priority list of kinds.
pub(super) struct TaskRule<'a> {
    pub(super) stmt: usize,
    pub(super) kinds: &'a [(ast::ProcKind, Span)],
}

/// One `Region` statement's entry under a (task, region) key.
pub(super) struct RegionRule<'a> {
    pub(super) stmt: usize,
    pub(super) proc: Option<ast::ProcKind>,
    pub(super) mems: &'a [(ast::MemKind, Span)],
}

/// One `Layout` statement's entry under a (task, region) key.
#[derive(Clone, Copy)]
pub(super) struct LayoutRule<'a> {
    pub(super) stmt: usize,
    pub(super) mem: Option<ast::MemKind>,
    pub(super) constraints: &'a [Constraint],
}

/// An IndexTaskMap/SingleTaskMap entry.
pub(super) struct MapRule<'a> {
    pub(super) stmt: usize,
    pub(super) func: &'a ast::Ident,
}

/// Every mapping table, filled in statement order with first-insert-wins.
#[derive(Default)]
pub(super) struct Rules<'a> {
    pub(super) task: FastMap<String, TaskRule<'a>>,
    pub(super) region: PairTable<RegionRule<'a>>,
    pub(super) layout: PairTable<LayoutRule<'a>>,
    /// Every (task key, region key, entry) in statement order, including
    /// entries shadowed by an earlier identical key (those are flagged by
    /// the grammar's W0218 and ignored here).
    pub(super) layout_entries: Vec<(String, String, LayoutRule<'a>)>,
    pub(super) limit: FastMap<String, (i64, usize)>,
    pub(super) collect: FastSet<(String, String)>,
    pub(super) index_map: FastMap<String, MapRule<'a>>,
    pub(super) single_map: FastMap<String, MapRule<'a>>,
    pub(super) replicate: FastMap<String, usize>,
}

/// A table keyed by (task key, region key), looked up with borrowed names
/// (resolution asks it for every region argument: no key is allocated).
pub(super) struct PairTable<V> {
    by_task: FastMap<String, FastMap<String, Vec<V>>>,
}

impl<V> Default for PairTable<V> {
    fn default() -> Self {
        PairTable {
            by_task: FastMap::default(),
        }
    }
}

impl<V> PairTable<V> {
    /// The entries of (task, region), created empty if absent.
    fn entry(&mut self, task: String, region: String) -> &mut Vec<V> {
        self.by_task
            .entry(task)
            .or_default()
            .entry(region)
            .or_default()
    }

    /// The entries of (task, region), if any.
    pub(super) fn get(&self, task: &str, region: &str) -> Option<&Vec<V>> {
        self.by_task.get(task).and_then(|m| m.get(region))
    }

    /// A lookup for one task: its own entries and the `*` entries, each
    /// found once, so the keys of every region argument cost one hash each.
    pub(super) fn for_task<'t>(&'t self, task: &'t str) -> TaskLookup<'t, V> {
        TaskLookup {
            task,
            own: self.by_task.get(task),
            star: self.by_task.get("*"),
        }
    }
}

/// [`PairTable::for_task`].
pub(super) struct TaskLookup<'t, V> {
    task: &'t str,
    own: Option<&'t FastMap<String, Vec<V>>>,
    star: Option<&'t FastMap<String, Vec<V>>>,
}

impl<'t, V> TaskLookup<'t, V> {
    /// The entries of (task key, region key), the task key being this
    /// task's name or `*`.
    pub(super) fn get(&self, task: &str, region: &str) -> Option<&'t Vec<V>> {
        let map = if task == self.task {
            self.own
        } else if task == "*" {
            self.star
        } else {
            None
        };
        map.and_then(|m| m.get(region))
    }
}

/// The keys a task selector stands for.
fn sel_keys(sel: &TaskSel) -> Vec<String> {
    match sel {
        TaskSel::Star(_) => vec!["*".to_string()],
        TaskSel::Names(ns) => ns.iter().map(|n| n.name.clone()).collect(),
        TaskSel::Kind(k, _) => vec![k.name().to_string()],
    }
}

/// The key of a region field.
pub(super) fn region_key(r: &RegionSel) -> String {
    match r {
        RegionSel::Star(_) => "*".to_string(),
        RegionSel::Name(n) => n.name.clone(),
        RegionSel::Index(i, _) => i.to_string(),
    }
}

pub(super) fn mem_sel_span(m: &MemSel) -> Span {
    match m {
        MemSel::Star(s) | MemSel::Kind(_, s) => *s,
    }
}

impl<'a> Rules<'a> {
    pub(super) fn build(program: &'a ast::Program) -> Rules<'a> {
        let mut rules = Rules::default();
        for (i, stmt) in program.stmts.iter().enumerate() {
            match &stmt.kind {
                StmtKind::Task { tasks, procs } => {
                    for k in sel_keys(tasks) {
                        rules.task.entry(k).or_insert(TaskRule {
                            stmt: i,
                            kinds: procs,
                        });
                    }
                }
                StmtKind::Region {
                    task,
                    region,
                    proc,
                    mems,
                } => {
                    let proc = match proc {
                        ProcSel::Star(_) => None,
                        ProcSel::Kind(k, _) => Some(*k),
                    };
                    for t in sel_keys(task) {
                        let list = rules.region.entry(t, region_key(region));
                        if !list.iter().any(|r| r.proc == proc) {
                            list.push(RegionRule {
                                stmt: i,
                                proc,
                                mems,
                            });
                        }
                    }
                }
                StmtKind::Layout {
                    task,
                    region,
                    mem,
                    constraints,
                } => {
                    let mem = match mem {
                        MemSel::Star(_) => None,
                        // The reference reads VIRTUAL as "no memory kind",
                        // the same key as `*` (MyMem2LegionMem).
                        MemSel::Kind(ast::MemKind::VIRTUAL, _) => None,
                        MemSel::Kind(k, _) => Some(*k),
                    };
                    let entry = LayoutRule {
                        stmt: i,
                        mem,
                        constraints,
                    };
                    for t in sel_keys(task) {
                        let rk = region_key(region);
                        let list = rules.layout.entry(t.clone(), rk.clone());
                        if !list.iter().any(|r| r.mem == mem) {
                            list.push(entry);
                            rules.layout_entries.push((t, rk, entry));
                        }
                    }
                }
                StmtKind::InstanceLimit { task, limit, .. } => {
                    rules.limit.entry(task.name.clone()).or_insert((*limit, i));
                }
                StmtKind::CollectMemory { task, region } => {
                    for t in sel_keys(task) {
                        rules.collect.insert((t, region_key(region)));
                    }
                }
                StmtKind::IndexTaskMap { tasks, func } => {
                    for k in sel_keys(tasks) {
                        rules
                            .index_map
                            .entry(k)
                            .or_insert(MapRule { stmt: i, func });
                    }
                }
                StmtKind::SingleTaskMap { tasks, func } => {
                    for k in sel_keys(tasks) {
                        rules
                            .single_map
                            .entry(k)
                            .or_insert(MapRule { stmt: i, func });
                    }
                }
                StmtKind::ControlReplicate { tasks } => {
                    for t in tasks {
                        rules.replicate.entry(t.name.clone()).or_insert(i);
                    }
                }
                _ => {}
            }
        }
        rules
    }
}
