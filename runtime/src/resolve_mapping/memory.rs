//! Memory: the concatenated `Region` candidate lists, the first memory the
//! processor can reach, else the default mapper's best-bandwidth memory;
//! and the W0304 warning on memories a processor cannot use.

use mapwright_grammar::fast_hash::FastSet;
use std::collections::{BTreeMap, BTreeSet};

use mapwright_grammar::ast::{self, StmtKind};
use mapwright_grammar::{Diagnostic, Fix, Span};

use crate::decisions::InstanceKind;
use crate::machine::{MemKind, ProcKind};

use super::resolver::{MemCandidate, MemOutcome, Resolver};
use super::rules::{RegionRule, TaskLookup};

/// The machine's memory kind for a DSL memory keyword (`VIRTUAL`: none).
pub(super) fn mem_of(k: ast::MemKind) -> Option<MemKind> {
    match k {
        ast::MemKind::SYSMEM => Some(MemKind::Sysmem),
        ast::MemKind::FBMEM => Some(MemKind::Fbmem),
        ast::MemKind::RDMEM => Some(MemKind::Rdmem),
        ast::MemKind::ZCMEM => Some(MemKind::Zcmem),
        ast::MemKind::SOCKMEM => Some(MemKind::Sockmem),
        ast::MemKind::VIRTUAL => None,
    }
}

/// The DSL keyword of a memory kind, if the DSL can name it.
pub(super) fn dsl_mem(k: MemKind) -> Option<ast::MemKind> {
    match k {
        MemKind::Sysmem => Some(ast::MemKind::SYSMEM),
        MemKind::Fbmem => Some(ast::MemKind::FBMEM),
        MemKind::Rdmem => Some(ast::MemKind::RDMEM),
        MemKind::Zcmem => Some(ast::MemKind::ZCMEM),
        MemKind::Sockmem => Some(ast::MemKind::SOCKMEM),
        _ => None,
    }
}

impl<'a> Resolver<'a> {
    /// The memory (`query_memory_list` + `query_best_memory_for_proc`, else
    /// the default mapper's best-bandwidth visible memory).
    pub(super) fn resolve_memory(
        &self,
        table: &TaskLookup<'_, RegionRule<'_>>,
        kind: ProcKind,
        keys: &[(&str, &str)],
    ) -> (MemKind, Option<usize>, bool, Vec<MemCandidate>) {
        let mut candidates = Vec::new();
        let want = kind.dsl_kind();
        for &(task_key, region_key) in keys {
            let Some(list) = table.get(task_key, region_key) else {
                continue;
            };
            let entry = list
                .iter()
                .find(|r| r.proc.is_some() && r.proc == want)
                .or_else(|| list.iter().find(|r| r.proc.is_none()));
            if let Some(e) = entry {
                for &(m, token) in e.mems {
                    candidates.push(MemCandidate {
                        mem: m,
                        token,
                        stmt: e.stmt,
                        outcome: MemOutcome::Absent,
                    });
                }
            }
        }
        // Legion's default is worked out only when no candidate decides
        // (`reachable` sorts the machine's affinities: not per argument).
        let mut consulted = Vec::new();
        for mut c in candidates {
            match mem_of(c.mem) {
                None => {
                    c.outcome = MemOutcome::Virtual;
                    let stmt = c.stmt;
                    consulted.push(c);
                    return (self.default_memory(kind), Some(stmt), true, consulted);
                }
                Some(m) if self.machine.memory(m).is_none() => c.outcome = MemOutcome::Absent,
                Some(m) if !self.machine.can_reach(kind, m) => c.outcome = MemOutcome::Unreachable,
                Some(m) => {
                    c.outcome = MemOutcome::Chosen;
                    let stmt = c.stmt;
                    consulted.push(c);
                    return (m, Some(stmt), false, consulted);
                }
            }
            consulted.push(c);
        }
        (self.default_memory(kind), None, false, consulted)
    }

    /// `DefaultMapper::default_policy_select_target_memory`: the visible
    /// memory with the highest bandwidth class.
    fn default_memory(&self, kind: ProcKind) -> MemKind {
        self.machine
            .reachable(kind)
            .first()
            .copied()
            .unwrap_or(MemKind::Sysmem)
    }

    /// W0304: a memory a processor cannot use, consulted before the memory
    /// that was chosen. One diagnostic per memory token, listing the
    /// affected arguments.
    pub(super) fn memory_diagnostics(&mut self) {
        let app = self.app;
        // token -> (memory, processor kinds, affected, outcome, fallbacks)
        struct Hit {
            mem: ast::MemKind,
            stmt: usize,
            kinds: BTreeSet<ProcKind>,
            affected: Vec<String>,
            absent: bool,
            fallbacks: BTreeSet<String>,
        }
        let mut hits: BTreeMap<(usize, usize), Hit> = BTreeMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            let kind = self.tasks[ti].proc_kind;
            for (ai, rt) in self.traces[ti].regions.iter().enumerate() {
                let decided = &self.tasks[ti].regions[ai];
                // Memory matters only for instances the mapper places.
                if !self.traces[ti].runnable
                    || matches!(
                        decided.instance,
                        InstanceKind::NoAccess
                            | InstanceKind::InnerTask
                            | InstanceKind::VirtualByApp
                    )
                {
                    continue;
                }
                let stmt_usable: FastSet<usize> = rt
                    .candidates
                    .iter()
                    .filter(|c| matches!(c.outcome, MemOutcome::Chosen | MemOutcome::Virtual))
                    .map(|c| c.stmt)
                    .collect();
                let others_usable = |stmt: usize| {
                    // Another memory of the same statement exists on the
                    // machine (a portable fallback list): stay quiet.
                    rt.candidates
                        .iter()
                        .any(|c| c.stmt == stmt && c.outcome != MemOutcome::Absent)
                        || stmt_usable.contains(&stmt)
                };
                for c in &rt.candidates {
                    let report = match c.outcome {
                        MemOutcome::Unreachable => true,
                        MemOutcome::Absent => !others_usable(c.stmt),
                        _ => false,
                    };
                    if !report {
                        continue;
                    }
                    let fallback = match decided.instance {
                        InstanceKind::VirtualByMapper => "no instance (VIRTUAL)".to_string(),
                        _ => match decided.memory_rule {
                            Some(_) => decided.memory.to_string(),
                            None => format!("{} (the default)", decided.memory),
                        },
                    };
                    let h = hits.entry((c.token.start(), c.token.end())).or_insert(Hit {
                        mem: c.mem,
                        stmt: c.stmt,
                        kinds: BTreeSet::new(),
                        affected: Vec::new(),
                        absent: c.outcome == MemOutcome::Absent,
                        fallbacks: BTreeSet::new(),
                    });
                    h.kinds.insert(kind);
                    let what = format!("`{}` argument `{}`", task.name, decided.region);
                    if !h.affected.contains(&what) {
                        h.affected.push(what);
                    }
                    h.fallbacks.insert(fallback);
                }
            }
        }
        let mut out = Vec::new();
        for ((start, end), h) in hits {
            let token = Span::new(start, end);
            let kinds: Vec<String> = h.kinds.iter().map(|k| k.to_string()).collect();
            let what = if h.absent {
                format!("machine `{}` has no {}", self.machine.name, h.mem)
            } else {
                format!("{} processors cannot access {}", kinds.join("/"), h.mem)
            };
            let fallbacks: Vec<String> = h.fallbacks.iter().cloned().collect();
            let count = h.affected.len();
            let mut shown: Vec<String> = h.affected.iter().take(3).cloned().collect();
            if count > 3 {
                shown.push(format!("{} more", count - 3));
            }
            let mut d = Diagnostic::warning(
                "W0304",
                token,
                format!(
                    "{what}: the DSL mapper skips it and uses {} instead, for {}",
                    fallbacks.join(" or "),
                    shown.join(", ")
                ),
            )
            .with_label("not usable")
            .with_note("the reference takes the first listed memory with affinity to the processor (query_best_memory_for_proc), else the default mapper's choice; the run does not fail");
            if let Some(stmt) = self.stmt(h.stmt) {
                if let StmtKind::Region { mems, .. } = &stmt.kind {
                    if mems.len() > 1 {
                        let pos = mems.iter().position(|(_, s)| *s == token).unwrap_or(0);
                        let remove = if pos + 1 < mems.len() {
                            Span::new(token.start(), mems[pos + 1].1.start())
                        } else {
                            Span::new(mems[pos - 1].1.end(), token.end())
                        };
                        d = d.with_fix(Fix::safe(
                            format!("remove {} from the list", h.mem),
                            vec![(remove, String::new())],
                        ));
                    } else {
                        // Host memory for a GPU evidently means zero-copy
                        // memory; otherwise name what is used anyway.
                        let gpu_host = h.kinds.iter().all(|k| *k == ProcKind::Gpu)
                            && matches!(
                                h.mem,
                                ast::MemKind::SYSMEM | ast::MemKind::SOCKMEM | ast::MemKind::RDMEM
                            )
                            && self.machine.can_reach(ProcKind::Gpu, MemKind::Zcmem);
                        let replacement = if gpu_host {
                            Some("ZCMEM".to_string())
                        } else if h.fallbacks.len() == 1 {
                            let f = fallbacks[0].split(' ').next().unwrap_or("").to_string();
                            ast::MemKind::from_name(&f).map(|_| f)
                        } else {
                            None
                        };
                        if let Some(r) = replacement {
                            let title = if gpu_host {
                                "use ZCMEM (host memory GPUs can access)".to_string()
                            } else {
                                format!("use {r}")
                            };
                            d = d.with_fix(Fix::unsafe_(title, vec![(token, r)]));
                        }
                    }
                }
            }
            out.push(d);
        }
        self.diags.extend(out);
    }
}
