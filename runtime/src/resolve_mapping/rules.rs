//! The statement tables, built as the reference builds them: every table
//! is filled with `unordered_map::insert`, so the first statement for a key
//! wins.

use mapwright_grammar::fast_hash::{FastMap, FastSet};

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
    by_task: FastMap<String, RegionEntries<V>>,
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
        self.by_task.entry(task).or_default().entry(region)
    }

    /// The entries of (task, region), if any.
    pub(super) fn get(&self, task: &str, region: &str) -> Option<&Vec<V>> {
        self.by_task.get(task).and_then(|m| m.get(region))
    }

    /// A lookup for one task: its own entries and the `*` entries, each
    /// found once per task, so the keys of its region arguments cost no
    /// task-name hashing.
    pub(super) fn for_task<'t>(&'t self, task: &'t str) -> TaskLookup<'t, V> {
        TaskLookup {
            task,
            own: self.by_task.get(task),
            star: self.by_task.get("*"),
        }
    }
}

/// One task key's entries by region key, in insertion order. A mapper
/// has a handful of statements per task key, and resolution asks for every
/// name of every region argument, most of which have no entry: comparing a
/// few lengths is cheaper than hashing the name, so the list is scanned
/// until it grows past [`INDEX_FROM`] entries, and then indexed by hash.
pub(super) struct RegionEntries<V> {
    list: Vec<(String, Vec<V>)>,
    index: Option<FastMap<String, usize>>,
}

/// The length from which [`RegionEntries`] keeps a hash index.
const INDEX_FROM: usize = 8;

impl<V> Default for RegionEntries<V> {
    fn default() -> Self {
        RegionEntries {
            list: Vec::new(),
            index: None,
        }
    }
}

impl<V> RegionEntries<V> {
    fn position(&self, region: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(region).copied(),
            None => self.list.iter().position(|(k, _)| k == region),
        }
    }

    /// The entries of `region`, created empty if absent.
    fn entry(&mut self, region: String) -> &mut Vec<V> {
        let i = match self.position(&region) {
            Some(i) => i,
            None => {
                let i = self.list.len();
                if let Some(index) = &mut self.index {
                    index.insert(region.clone(), i);
                }
                self.list.push((region, Vec::new()));
                if self.index.is_none() && self.list.len() > INDEX_FROM {
                    self.index = Some(
                        self.list
                            .iter()
                            .enumerate()
                            .map(|(i, (k, _))| (k.clone(), i))
                            .collect(),
                    );
                }
                i
            }
        };
        &mut self.list[i].1
    }

    /// The entries of `region`, if any.
    fn get(&self, region: &str) -> Option<&Vec<V>> {
        self.position(region).map(|i| &self.list[i].1)
    }
}

/// [`PairTable::for_task`].
pub(super) struct TaskLookup<'t, V> {
    task: &'t str,
    own: Option<&'t RegionEntries<V>>,
    star: Option<&'t RegionEntries<V>>,
}

impl<'t, V> TaskLookup<'t, V> {
    /// The entries of (task key, region key), the task key being this
    /// task's name or `*`.
    pub(super) fn get(&self, task: &str, region: &str) -> Option<&'t Vec<V>> {
        // The keys are built from the task's own name, so the address
        // usually answers before the bytes are compared.
        let own = task.len() == self.task.len()
            && (std::ptr::eq(task.as_ptr(), self.task.as_ptr()) || task == self.task);
        let map = if own {
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
