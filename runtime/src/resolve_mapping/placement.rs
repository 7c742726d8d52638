//! Launch placement: the IndexTaskMap/SingleTaskMap function for the task
//! (else for its kind), else Legion's default slicing; bounded, with the
//! failures reported on the responsible statements.

use std::collections::BTreeMap;

use mapwright_grammar::ast::{self, ExprKind, ParamType, StmtKind};
use mapwright_grammar::{Diagnostic, Fix, Span};

use crate::app::{App, Launch, Task};
use crate::decisions::PointPlacement;
use crate::machine::ProcKind;

use super::placer::{check_bounds, LaunchPlacer, ParentPoint, PlacementError};
use super::resolver::Resolver;
use super::rules::MapRule;

/// The key an IndexTaskMap/SingleTaskMap statement for a processor kind is
/// stored under; only these three are consulted (`should_fall_back`).
pub(super) fn map_kind_key(k: ProcKind) -> Option<&'static str> {
    match k {
        ProcKind::Cpu => Some("CPU"),
        ProcKind::Gpu => Some("GPU"),
        ProcKind::Omp => Some("OMP"),
        _ => None,
    }
}

impl<'a> Resolver<'a> {
    /// The IndexTaskMap/SingleTaskMap entry for a task (`should_fall_back`).
    pub(super) fn map_rule(&self, task: &Task, kind: ProcKind) -> Option<&MapRule<'a>> {
        let table = match task.launch {
            Launch::Index => &self.rules.index_map,
            Launch::Single => &self.rules.single_map,
        };
        table
            .get(&task.name)
            .or_else(|| map_kind_key(kind).and_then(|k| table.get(k)))
    }
}

/// At most this many points of one launch are placed (and shown).
pub const MAX_PLACED_POINTS: u64 = 4096;

/// At most this many mapping-function calls per resolution, and at most
/// this much time for all of them: a hostile file must not stall a language
/// server. Real mappers need a few hundred calls of a few hundred steps.
const MAX_EVALUATIONS: usize = 16_384;

const PLACEMENT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// Evaluation steps allowed per mapping-function call (the evaluator's
/// default is a million; real functions take a few hundred).
pub(super) const STEPS_PER_CALL: u64 = 100_000;

/// The points of a launch domain in row-major order (first dimension
/// slowest), at most [`MAX_PLACED_POINTS`].
pub(super) fn domain_points(domain: &[u64]) -> Vec<Vec<i64>> {
    if domain.is_empty() || domain.contains(&0) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut p = vec![0i64; domain.len()];
    loop {
        out.push(p.clone());
        if out.len() as u64 >= MAX_PLACED_POINTS {
            return out;
        }
        let mut d = domain.len();
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            p[d] += 1;
            if (p[d] as u64) < domain[d] {
                break;
            }
            p[d] = 0;
        }
    }
}

/// Legion's `default_select_num_blocks`: factor the processor count into
/// primes and hand them out, largest first, to the dimension with the most
/// points per block.
pub(super) fn default_num_blocks(procs: u64, domain: &[u64]) -> Vec<u64> {
    let mut result = vec![1u64; domain.len()];
    if procs <= 1 || domain.is_empty() {
        return result;
    }
    let mut factor = procs;
    let mut primes = Vec::new();
    let mut p = 2u64;
    while p * p <= factor {
        while factor.is_multiple_of(p) {
            primes.push(p);
            factor /= p;
        }
        p += 1;
    }
    if factor > 1 {
        primes.push(factor);
    }
    let mut chunks: Vec<f64> = domain.iter().map(|&d| d as f64).collect();
    for &prime in primes.iter().rev() {
        let mut best = 0;
        for (i, c) in chunks.iter().enumerate() {
            if *c > chunks[best] {
                best = i;
            }
        }
        result[best] *= prime;
        chunks[best] /= prime as f64;
    }
    result
}

/// Legion's default slicing of an index launch over `procs` processors
/// (`DefaultMapper::slice_task` with its one-level decomposition and
/// `default_decompose_points`): one block per processor, blocks visited
/// with the first dimension fastest and dealt to the processors in turn.
/// Returns each point's processor ordinal.
pub(super) fn default_slicing(domain: &[u64], procs: u64) -> BTreeMap<Vec<i64>, u64> {
    let mut out = BTreeMap::new();
    if domain.is_empty() || procs == 0 || domain.contains(&0) {
        return out;
    }
    let volume = domain.iter().fold(1u64, |a, &d| a.saturating_mul(d));
    if volume > MAX_PLACED_POINTS {
        return out;
    }
    let blocks = if domain.len() == 1 {
        vec![procs]
    } else {
        default_num_blocks(procs, domain)
    };
    let mut b = vec![0u64; domain.len()];
    let mut next = 0u64;
    loop {
        let lo: Vec<u64> = (0..domain.len())
            .map(|d| domain[d] * b[d] / blocks[d])
            .collect();
        let hi: Vec<u64> = (0..domain.len())
            .map(|d| domain[d] * (b[d] + 1) / blocks[d])
            .collect();
        if lo.iter().zip(&hi).all(|(l, h)| h > l) {
            let proc = next % procs;
            next += 1;
            // Every point of the block [lo, hi).
            let mut p = lo.clone();
            loop {
                out.insert(p.iter().map(|&x| x as i64).collect(), proc);
                let mut d = 0;
                loop {
                    if d == p.len() {
                        break;
                    }
                    p[d] += 1;
                    if p[d] < hi[d] {
                        break;
                    }
                    p[d] = lo[d];
                    d += 1;
                }
                if d == p.len() {
                    break;
                }
            }
        }
        // Next block, first dimension fastest.
        let mut d = 0;
        loop {
            if d == b.len() {
                return out;
            }
            b[d] += 1;
            if b[d] < blocks[d] {
                break;
            }
            b[d] = 0;
            d += 1;
        }
    }
}

/// Failures met while placing one task's points.
#[derive(Default)]
pub(super) struct PlaceFailures {
    pub(super) outside: Vec<(Vec<i64>, String, String, Option<Span>)>,
    pub(super) wrong_kind: Option<(ProcKind, ProcKind)>,
    /// The point, the evaluator's message and where it failed.
    pub(super) tuple: Option<(Vec<i64>, String, Option<Span>)>,
    pub(super) failed: Option<(String, String, String, Option<Span>)>,
}

impl<'a> Resolver<'a> {
    /// Tasks ordered so that each comes after its parent.
    fn parent_first_order(&self) -> Vec<usize> {
        let app = self.app;
        let mut order = Vec::new();
        let mut state = vec![0u8; app.tasks.len()]; // 0 new, 1 visiting, 2 done
        fn visit(app: &App, i: usize, state: &mut [u8], order: &mut Vec<usize>) {
            if state[i] != 0 {
                return;
            }
            state[i] = 1;
            if let Some(p) = &app.tasks[i].parent {
                if let Some(pi) = app.tasks.iter().position(|t| &t.name == p) {
                    visit(app, pi, state, order);
                }
            }
            state[i] = 2;
            order.push(i);
        }
        for i in 0..app.tasks.len() {
            visit(app, i, &mut state, &mut order);
        }
        order
    }

    /// Whether a mapping statement survives loading (its function exists,
    /// is defined before it and takes one Task), so it can run.
    fn map_statement_runs(&self, stmt: usize, func: &str) -> bool {
        let Some(def) =
            self.program.stmts.iter().position(
                |s| matches!(&s.kind, StmtKind::FuncDef { name, .. } if name.name == func),
            )
        else {
            return false;
        };
        def < stmt
            && self
                .function_def(func)
                .is_some_and(|(params, _)| params.len() == 1 && params[0].ty == ParamType::Task)
    }

    pub(super) fn place_all(&mut self, placer: &mut dyn LaunchPlacer) {
        let app = self.app;
        // Everything here is in the mapper's coordinates (a node is a rank,
        // see `RankView`); `to_physical` turns the result into the
        // machine's processors.
        let nodes = i64::from(self.view.nodes());
        let started = std::time::Instant::now();
        let mut evaluations = 0usize;
        for ti in self.parent_first_order() {
            if !self.traces[ti].runnable {
                continue;
            }
            let task = &app.tasks[ti];
            let kind = self.tasks[ti].proc_kind;
            let ppn = i64::from(self.view.procs_per_node(kind));
            let parent = task
                .parent
                .as_ref()
                .and_then(|p| app.tasks.iter().position(|t| &t.name == p));
            let parent_points: Vec<ParentPoint> = match parent {
                Some(pi) => {
                    let pk = self.tasks[pi].proc_kind;
                    let placed = &self.logical[pi];
                    if placed.is_empty() {
                        vec![ParentPoint {
                            task: app.tasks[pi].name.clone(),
                            point: Vec::new(),
                            kind: pk,
                            node: 0,
                            proc: 0,
                        }]
                    } else {
                        placed
                            .iter()
                            .map(|p| ParentPoint {
                                task: app.tasks[pi].name.clone(),
                                point: p.point.clone(),
                                kind: pk,
                                node: i64::from(p.node),
                                proc: i64::from(p.proc),
                            })
                            .collect()
                    }
                }
                None => Vec::new(),
            };
            let rule = match (self.traces[ti].map_stmt, self.traces[ti].map_func.clone()) {
                (Some(s), Some(f)) if self.map_statement_runs(s, &f) => Some((s, f)),
                _ => None,
            };
            let mut placement = Vec::new();
            let mut fails = PlaceFailures::default();
            match rule {
                None => match task.launch {
                    Launch::Index if !task.node_local.is_empty() => {
                        placement = self.node_local_default(ti, ppn);
                    }
                    Launch::Index => {
                        let procs = u64::try_from(nodes * ppn).unwrap_or(0);
                        for (point, ord) in default_slicing(&task.domain, procs) {
                            let ppn = ppn.max(1) as u64;
                            placement.push(PointPlacement {
                                point,
                                node: u32::try_from(ord / ppn).unwrap_or(0),
                                proc: u32::try_from(ord % ppn).unwrap_or(0),
                            });
                        }
                    }
                    Launch::Single => {
                        if parent_points.is_empty() {
                            placement.push(PointPlacement {
                                point: Vec::new(),
                                node: 0,
                                proc: 0,
                            });
                        }
                        for p in &parent_points {
                            placement.push(PointPlacement {
                                point: p.point.clone(),
                                node: u32::try_from(p.node).unwrap_or(0),
                                proc: 0,
                            });
                        }
                    }
                },
                Some((_, func)) => {
                    if self.reported_kind.contains(&task.name)
                        || self.reported_tuple.contains(&task.name)
                    {
                        // Already known to abort; nothing to place.
                    } else {
                        let domain: Vec<i64> = task.domain.iter().map(|&d| d as i64).collect();
                        let jobs: Vec<(Vec<i64>, Option<&ParentPoint>)> = match task.launch {
                            Launch::Index => domain_points(&task.domain)
                                .into_iter()
                                .map(|p| (p, None))
                                .collect(),
                            Launch::Single if parent_points.is_empty() => vec![(Vec::new(), None)],
                            Launch::Single => parent_points
                                .iter()
                                .map(|p| (p.point.clone(), Some(p)))
                                .collect(),
                        };
                        for (point, parent) in jobs {
                            evaluations += 1;
                            // The clock is read every eighth evaluation: a
                            // remembered result costs less than reading it.
                            if evaluations > MAX_EVALUATIONS
                                || (evaluations.is_multiple_of(8)
                                    && started.elapsed() > PLACEMENT_DEADLINE)
                            {
                                // Out of budget: leave the rest unplaced.
                                placement.clear();
                                break;
                            }
                            let res = match task.launch {
                                Launch::Index => {
                                    placer.place_index_point(&func, task, &point, &domain, kind)
                                }
                                Launch::Single => placer.place_single(&func, task, parent, kind),
                            };
                            let res = res.and_then(|mp| check_bounds(mp, nodes, ppn));
                            match res {
                                Ok(mp) => placement.push(PointPlacement {
                                    point,
                                    node: u32::try_from(mp.node).unwrap_or(0),
                                    proc: u32::try_from(mp.proc).unwrap_or(0),
                                }),
                                Err(PlacementError::Unavailable) => {
                                    placement.clear();
                                    break;
                                }
                                Err(PlacementError::OutsideMachine { message, raw, at }) => {
                                    fails.outside.push((point, message, raw, at));
                                }
                                Err(PlacementError::WrongModelKind { actual, model, .. }) => {
                                    fails.wrong_kind = Some((actual, model));
                                    break;
                                }
                                Err(PlacementError::TupleIndexOutOfBound { message, at }) => {
                                    fails.tuple = Some((point, message, at));
                                    break;
                                }
                                Err(PlacementError::Failed {
                                    kind,
                                    message,
                                    raw,
                                    at,
                                }) => {
                                    fails.failed = Some((kind, message, raw, at));
                                    break;
                                }
                            }
                        }
                    }
                }
            }
            self.tasks[ti].placement = placement
                .iter()
                .map(|p| self.to_physical(kind, p))
                .collect();
            self.logical[ti] = placement;
            self.report_placement_failures(ti, fails);
        }
        self.load_imbalance();
    }

    /// Legion's default placement of a task launched once per point of its
    /// nearest index-launched ancestor over `node_local` (see
    /// [`crate::app::Task::node_local`]): each local launch is sliced over
    /// the processors of the node its ancestor point was placed on.
    fn node_local_default(&self, ti: usize, ppn: i64) -> Vec<PointPlacement> {
        let app = self.app;
        let task = &app.tasks[ti];
        let local = &task.node_local;
        // The nearest ancestor launched over an index space.
        let mut ancestor = task.parent.as_deref();
        let mut owner: Option<usize> = None;
        while let Some(name) = ancestor {
            let Some(ai) = app.tasks.iter().position(|t| t.name == name) else {
                break;
            };
            if app.tasks[ai].launch == Launch::Index {
                owner = Some(ai);
                break;
            }
            ancestor = app.tasks[ai].parent.as_deref();
        }
        let owners: &[PointPlacement] = owner.map_or(&[], |ai| &self.logical[ai]);
        let slicing = default_slicing(local, u64::try_from(ppn.max(1)).unwrap_or(1));
        let mut out = Vec::new();
        for point in domain_points(&task.domain) {
            let block: Vec<i64> = point
                .iter()
                .zip(local)
                .map(|(&x, &l)| x / l.max(1) as i64)
                .collect();
            let inside: Vec<i64> = point
                .iter()
                .zip(local)
                .map(|(&x, &l)| x % l.max(1) as i64)
                .collect();
            let node = owners
                .iter()
                .find(|o| o.point == block)
                .map_or(0, |o| o.node);
            let proc = slicing.get(&inside).copied().unwrap_or(0);
            out.push(PointPlacement {
                point,
                node,
                proc: u32::try_from(proc).unwrap_or(0),
            });
        }
        out
    }

    fn report_placement_failures(&mut self, ti: usize, fails: PlaceFailures) {
        let app = self.app;
        let task = &app.tasks[ti];
        let Some(stmt) = self.traces[ti].map_stmt else {
            return;
        };
        let func = self.traces[ti].map_func.clone().unwrap_or_default();
        let span = self.selector_span_for(stmt, &task.name);
        let rule = Some(self.stmt_span(stmt));
        let def = self.function_name_span(&func);
        if let Some((point, message, raw, at)) = fails.outside.first().cloned() {
            let total = match task.launch {
                Launch::Index => task.points().min(MAX_PLACED_POINTS) as usize,
                Launch::Single => fails.outside.len() + self.tasks[ti].placement.len(),
            };
            let mut d = Diagnostic::error(
                "E0301",
                span,
                format!(
                    "`{func}` maps {} of `{}` outside the machine ({} of {total} points): {message}",
                    if point.is_empty() { "the launch".to_string() } else { format!("point {}", tuple_text(&point)) },
                    task.name,
                    fails.outside.len()
                ),
            )
            .with_label("outside the machine")
            .with_note(self.machine_shape_note(self.tasks[ti].proc_kind));
            match at {
                Some(at) if at != span => d = d.with_related(at, "this machine point is outside"),
                _ => {
                    if let Some(def) = def {
                        d = d.with_related(def, "the mapping function");
                    }
                }
            }
            let coordinate = if raw.starts_with("Sharding") { 0 } else { 1 };
            if let Some(fix) = self.modulo_fix(&func, coordinate) {
                d = d.with_fix(fix);
            }
            self.diags.push(d);
            self.fatal(1, ti * 10 + 1, "slice_out_of_bound", raw, rule);
        }
        if let Some((actual, model)) = fails.wrong_kind {
            if self.reported_kind.insert(task.name.clone()) {
                let mut d = Diagnostic::error(
                    "E0302",
                    span,
                    format!("`{}` runs on {actual}, but `{func}` returns a processor of a `Machine({model})` model", task.name),
                )
                .with_label("machine model of the wrong kind")
                .with_note(self.wrong_kind_note(&task.name, actual, model));
                if let Some(def) = def {
                    d = d.with_related(def, "the mapping function");
                }
                self.diags.push(d);
                self.fatal(
                    1,
                    ti * 10 + 2,
                    "mapping_error",
                    format!(
                        "{} is actually mapped to {actual}, but machine model is for {model}",
                        task.name
                    ),
                    rule,
                );
            }
        }
        if let Some((point, message, at)) = fails.tuple {
            if !self.static_tuple.contains(&task.name)
                && self.reported_tuple.insert(task.name.clone())
            {
                let what = if point.is_empty() {
                    format!("`{}`", task.name)
                } else {
                    format!("point {} of `{}`", tuple_text(&point), task.name)
                };
                let detail = message
                    .strip_prefix("Index out of bound for TupleIntNode")
                    .map(|m| m.trim_start_matches([':', ' ']))
                    .unwrap_or(&message);
                let detail = if detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({detail})")
                };
                let mut d = Diagnostic::error(
                    "E0311",
                    span,
                    format!("`{func}` indexes a tuple past its end while placing {what}{detail}"),
                )
                .with_label("tuple index out of bound")
                .with_note("the reference aborts with \"Index out of bound for TupleIntNode\"");
                match at {
                    Some(at) if at != span => d = d.with_related(at, "indexed here"),
                    _ => {
                        if let Some(def) = def {
                            d = d.with_related(def, "the mapping function");
                        }
                    }
                }
                self.diags.push(d);
            }
            self.fatal(
                1,
                ti * 10 + 1,
                "index_out_of_bound",
                "Index out of bound for TupleIntNode\n".into(),
                rule,
            );
        }
        if let Some((kind, message, raw, at)) = fails.failed {
            let mut d = Diagnostic::error(
                "E0319",
                span,
                format!("`{func}` fails while placing `{}`: {message}", task.name),
            )
            .with_label("mapping function fails");
            match at {
                Some(at) if at != span => d = d.with_related(at, "fails here"),
                _ => {
                    if let Some(def) = def {
                        d = d.with_related(def, "the mapping function");
                    }
                }
            }
            self.diags.push(d);
            self.fatal(1, ti * 10 + 3, &kind, raw, rule);
        }
    }

    /// What the reference does where mapwright stops on a function whose
    /// model is of another kind than the processor `task` runs on (E0302).
    /// It makes that check only where the machine has processors of the
    /// model's kind. On a machine without any (an expert for GPUs on a
    /// CPU-only host) it evaluates the function over the empty model first
    /// and dies there: measured with the reference on Legion 25.12, a
    /// division by the model's size (SIGFPE, exit 136: circuit, stencil,
    /// solomonik) or "Slice processor index out of bound! 0 >= 0" and an
    /// assertion in `MSpace::get_node_proc` (exit 134: the other DISTAL
    /// programs), depending on what the function computes first.
    pub(super) fn wrong_kind_note(&self, task: &str, actual: ProcKind, model: ProcKind) -> String {
        let check = format!(
            "the reference aborts with \"{task} is actually mapped to {actual}, but machine model is for {model}\""
        );
        if self.machine.procs_per_node(model) > 0 {
            return check;
        }
        format!(
            "this machine has no {model}: the reference never gets to its check (\"{task} is actually \
             mapped to {actual}, but machine model is for {model}\") here, it evaluates the function \
             over the empty `Machine({model})` first and dies there, with a division by zero (SIGFPE) \
             where the function divides by the model's size, or with \"Slice processor index out of \
             bound! 0 >= 0\" and a failed assertion where it indexes it; mapwright stops with the check's \
             message instead"
        )
    }

    /// What `Machine(kind)` is on this run, for E0301's note.
    fn machine_shape_note(&self, kind: ProcKind) -> String {
        let v = &self.view;
        if v.ranks_per_node() > 1 {
            format!(
                "`{}` runs {} ranks per node, and the mapper sees each rank as a node: machine `{}` is {} node(s) with {} {kind} processor(s) each (Machine({kind}) is ({}, {})); end each index with `% m.size[k]` to stay inside",
                self.app.name,
                v.ranks_per_node(),
                self.machine.name,
                v.nodes(),
                v.procs_per_node(kind),
                v.nodes(),
                v.procs_per_node(kind)
            )
        } else {
            format!(
                "machine `{}` has {} node(s) with {} {kind} processor(s) each; end each index with `% m.size[k]` to stay inside",
                self.machine.name,
                self.machine.nodes(),
                self.machine.procs_per_node(kind)
            )
        }
    }

    /// The fix the paper's hint gives for a point outside the machine: end
    /// the offending index of `return m[a, b];` with `% m.size[k]`, when `m`
    /// is a plain `Machine(KIND)` model.
    fn modulo_fix(&self, func: &str, coordinate: usize) -> Option<Fix> {
        let (_, body) = self.function_def(func)?;
        let value = body.iter().find_map(|s| match &s.kind {
            StmtKind::Return { value } => Some(value),
            _ => None,
        })?;
        let ExprKind::Index { base, indices } = &value.kind else {
            return None;
        };
        let ExprKind::Name(m) = &base.kind else {
            return None;
        };
        let plain = self.program.stmts.iter().any(|s| {
            matches!(&s.kind, StmtKind::Assign { name, value } if name.name == *m && value.as_machine_ctor().is_some())
        });
        if !plain
            || indices.len() != 2
            || indices
                .iter()
                .any(|i| matches!(i.kind, ExprKind::Unpack(_)))
        {
            return None;
        }
        let idx = &indices[coordinate];
        if matches!(
            idx.kind,
            ExprKind::Binary {
                op: ast::BinOp::Mod,
                ..
            }
        ) {
            return None;
        }
        let text = idx.span.text(self.source);
        let wrapped = match idx.kind {
            ExprKind::Binary { .. } | ExprKind::Ternary { .. } => {
                format!("({text}) % {m}.size[{coordinate}]")
            }
            _ => format!("{text} % {m}.size[{coordinate}]"),
        };
        Some(Fix::unsafe_(
            format!("wrap the index around the machine: `{wrapped}`"),
            vec![(idx.span, wrapped)],
        ))
    }

    /// I0313: a mapping statement that gives some processors more points
    /// than an even spread would.
    fn load_imbalance(&mut self) {
        let app = self.app;
        // (statement, domain, message) -> tasks: one report per statement
        // and launch shape.
        let mut groups: BTreeMap<(usize, Vec<u64>, String), Vec<String>> = BTreeMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            let decided = &self.tasks[ti];
            let Some(stmt) = self.traces[ti].map_stmt else {
                continue;
            };
            let points = task.points();
            if task.launch != Launch::Index
                || points < 2
                || decided.placement.len() as u64 != points
            {
                continue;
            }
            let kind = decided.proc_kind;
            let total = self.machine.total_procs(kind);
            if total == 0 {
                continue;
            }
            let ideal = points.div_ceil(total);
            let counts = decided.points_per_processor();
            let max = counts.iter().map(|(_, c)| *c as u64).max().unwrap_or(0);
            if max <= ideal {
                continue;
            }
            let mut sorted = counts.clone();
            sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let mut parts: Vec<String> = sorted
                .iter()
                .take(4)
                .enumerate()
                .map(|(i, ((n, p), c))| {
                    if i == 0 {
                        format!("{kind} ({n},{p}) gets {c}")
                    } else {
                        format!("({n},{p}) gets {c}")
                    }
                })
                .collect();
            if sorted.len() > 4 {
                parts.push(format!("{} more busy", sorted.len() - 4));
            }
            let idle = total.saturating_sub(counts.len() as u64);
            let mut text = format!("{points} points on {total} {kind}s: {}", parts.join(", "));
            if idle > 0 {
                text.push_str(&format!("; {idle} {kind}(s) get none"));
            }
            groups
                .entry((stmt, task.domain.clone(), text))
                .or_default()
                .push(format!("`{}`", task.name));
        }
        for ((stmt, _, text), tasks) in groups {
            let span = match self.stmt(stmt).map(|s| &s.kind) {
                Some(StmtKind::IndexTaskMap { func, .. }) => func.span,
                _ => self.stmt_span(stmt),
            };
            self.diags.push(
                Diagnostic::info(
                    "I0313",
                    span,
                    format!("load imbalance for {}: {text}", tasks.join(", ")),
                )
                .with_label("uneven placement")
                .with_note(
                    "an even spread gives each processor at most ceil(points / processors) points",
                ),
            );
        }
    }
}

/// `(a, b)` / `(a)`.
pub(super) fn tuple_text(p: &[i64]) -> String {
    let parts: Vec<String> = p.iter().map(|x| x.to_string()).collect();
    format!("({})", parts.join(","))
}
