//! Processor kind: the `Task` list for the task (else `*`), else Legion's
//! default ranking; and the W0303 warning on kinds that are passed over.

use mapwright_grammar::ast::{self, StmtKind, TaskSel};
use mapwright_grammar::{Diagnostic, Fix, Span};

use crate::app::Task;
use crate::machine::ProcKind;

use super::resolver::{Resolver, SkipReason};

/// Legion's default ranking of processor kinds
/// (`DefaultMapper::default_policy_rank_processor_kinds`); CPU is always
/// ranked, the others only when the node has such processors.
const DEFAULT_RANKING: [ProcKind; 6] = [
    ProcKind::Gpu,
    ProcKind::Omp,
    ProcKind::ProcSet,
    ProcKind::Cpu,
    ProcKind::Io,
    ProcKind::Py,
];

impl<'a> Resolver<'a> {
    /// The processor kind (`dsl_default_policy_select_initial_processor`).
    #[allow(clippy::type_complexity)]
    pub(super) fn resolve_kind(
        &self,
        task: &Task,
    ) -> (
        ProcKind,
        Option<usize>,
        Vec<(ast::ProcKind, Span, usize, SkipReason)>,
        bool,
    ) {
        let mut skipped = Vec::new();
        let rule = self
            .rules
            .task
            .get(&task.name)
            .or_else(|| self.rules.task.get("*"));
        if let Some(rule) = rule {
            for &(k, span) in rule.kinds {
                let pk = ProcKind::from(k);
                if self.machine.procs_per_node(pk) == 0 {
                    skipped.push((k, span, rule.stmt, SkipReason::NoProcessor));
                } else if !task.has_variant(pk) {
                    skipped.push((k, span, rule.stmt, SkipReason::NoVariant));
                } else {
                    return (pk, Some(rule.stmt), skipped, true);
                }
            }
        }
        let (kind, ok) = self.default_kind(task);
        (kind, None, skipped, ok)
    }

    /// Legion's default choice; `false` when the task has no variant the
    /// machine can run.
    fn default_kind(&self, task: &Task) -> (ProcKind, bool) {
        for k in DEFAULT_RANKING {
            let present = k == ProcKind::Cpu || self.machine.procs_per_node(k) > 0;
            if present && task.has_variant(k) {
                return (k, true);
            }
        }
        (
            task.variants.first().copied().unwrap_or(ProcKind::Cpu),
            false,
        )
    }

    /// W0303: a named task's `Task` list names a kind that is skipped.
    pub(super) fn kind_diagnostics(&mut self) {
        let app = self.app;
        let mut out = Vec::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            let trace = &self.traces[ti];
            let decided = &self.tasks[ti];
            // Only statements that name the task: for `*` a skipped kind is
            // the intended "if supported" fallback.
            let Some(rule) = self.rules.task.get(&task.name) else {
                continue;
            };
            let Some(stmt) = self.stmt(rule.stmt) else {
                continue;
            };
            let StmtKind::Task { tasks: sel, procs } = &stmt.kind else {
                continue;
            };
            let single_name = matches!(sel, TaskSel::Names(ns) if ns.len() == 1);
            let how = if trace.kind_stmt.is_some() {
                format!("the next kind in the list, {}", decided.proc_kind)
            } else {
                format!(
                    "{} (Legion's default: GPU > OMP > CPU among its variants)",
                    decided.proc_kind
                )
            };
            for &(k, span, _, reason) in &trace.skipped {
                let why = match reason {
                    SkipReason::NoVariant => {
                        let vs: Vec<String> = task.variants.iter().map(|v| v.to_string()).collect();
                        format!(
                            "`{}` has no {k} variant (it has {})",
                            task.name,
                            vs.join(", ")
                        )
                    }
                    SkipReason::NoProcessor => {
                        format!("machine `{}` has no {k} processor", self.machine.name)
                    }
                };
                let mut d = Diagnostic::warning(
                    "W0303",
                    span,
                    format!("{why}: this choice is skipped and `{}` runs on {how}", task.name),
                )
                .with_label(format!("{k} not used"))
                .with_note("the reference tries each kind in order and silently skips kinds without a variant or processor (dsl_default_policy_select_initial_processor)");
                if single_name {
                    let fix = if procs.len() > 1 {
                        // Remove the kind and one adjacent comma.
                        let pos = procs.iter().position(|(_, s)| *s == span).unwrap_or(0);
                        let remove = if pos + 1 < procs.len() {
                            Span::new(span.start(), procs[pos + 1].1.start())
                        } else {
                            Span::new(procs[pos - 1].1.end(), span.end())
                        };
                        Fix::safe(
                            format!("remove {k} from the list"),
                            vec![(remove, String::new())],
                        )
                    } else {
                        Fix::unsafe_(
                            format!("map `{}` to {} explicitly", task.name, decided.proc_kind),
                            vec![(span, decided.proc_kind.to_string())],
                        )
                    };
                    d = d.with_fix(fix);
                }
                out.push(d);
            }
        }
        self.diags.extend(out);
    }
}
