//! From decisions to a plan the engine can execute: for every task the
//! processor each of its point tasks runs on, the memory each region
//! argument lives in (after the fallbacks a real DSL mapper applies), the
//! bytes each argument moves, and the cross-piece data flows.
//!
//! Planning also finds the mapping failures Legion reports before a task
//! runs: a launch point placed on a node or processor that does not exist.

use mapwright_grammar::fast_hash::FastMap;

use crate::app::{App, FlowKind, Launch, Privilege, RegionArg, Task};
use crate::decisions::{Decisions, InstanceKind, Order, PointPlacement, TaskDecision};
use crate::machine::{Machine, MemKind, ProcKind};

use super::model;
pub use super::task_plan::{ArgPlan, FlowPlan, GridStep, LaunchArg, TaskPlan, Unit};
use super::topology::{ProcId, Topo};
use super::Failure;

/// Everything the engine needs.
pub struct Plan<'a> {
    pub app: &'a App,
    pub topo: Topo<'a>,
    pub tasks: Vec<TaskPlan<'a>>,
    pub flows: Vec<FlowPlan>,
    /// The dimension order the application's kernels walk fastest.
    pub native: Order,
    /// The per-step communication schedule of a DISTAL matrix
    /// multiplication (`sim::gemm`); its flows are not in `flows`.
    pub gemm: Option<super::gemm::GemmPlan>,
    /// How many field ids [`ArgPlan::fields`] uses (ids are `0..field_count`).
    pub field_count: usize,
}

/// Processor kinds in the order a default mapper prefers them.
const DEFAULT_KINDS: [ProcKind; 3] = [ProcKind::Gpu, ProcKind::Omp, ProcKind::Cpu];

impl<'a> Plan<'a> {
    /// Builds the plan, or the failure a real run reports while mapping.
    pub fn build(
        decisions: &'a Decisions,
        app: &'a App,
        topo: Topo<'a>,
    ) -> Result<Plan<'a>, Failure> {
        let by_name: FastMap<&str, &TaskDecision> = decisions
            .tasks
            .iter()
            .map(|d| (d.task.as_str(), d))
            .collect();
        let native = app
            .library_constraints
            .iter()
            .find_map(|c| c.order)
            .map_or(Order::F, |o| match o {
                crate::app::DimOrder::COrder => Order::C,
                crate::app::DimOrder::FOrder => Order::F,
            });

        let mut names = Interner::default();
        let mut fields = Interner::default();
        // Bytes per element of every (region, field), for struct widths:
        // per region, the widest of each field by field id (0 where the
        // region has no such field, which adds nothing), summed in id
        // order so the sums round the same way in every process.
        let mut field_width: Vec<Option<Vec<f64>>> = Vec::new();
        // Each argument's field ids, kept for `plan_args` (interning is the
        // costly part of planning): ranges of `field_ids` by argument, in
        // task and argument order.
        let mut field_ids: Vec<u32> = Vec::new();
        let mut arg_fields: Vec<Option<(usize, usize)>> = Vec::new();
        for t in &app.tasks {
            for r in &t.regions {
                if r.fields.is_empty() || r.elements == 0 {
                    arg_fields.push(None);
                    continue;
                }
                let w = r.bytes as f64 / r.elements as f64 / r.fields.len() as f64;
                let region = names.id(&r.name) as usize;
                if field_width.len() <= region {
                    field_width.resize(region + 1, None);
                }
                let start = field_ids.len();
                for f in &r.fields {
                    let id = fields.id(f);
                    field_ids.push(id);
                    let widths = field_width[region].get_or_insert_with(Vec::new);
                    if widths.len() <= id as usize {
                        widths.resize(id as usize + 1, 0.0);
                    }
                    widths[id as usize] = widths[id as usize].max(w);
                }
                arg_fields.push(Some((start, field_ids.len())));
            }
        }
        let struct_width: Vec<Option<f64>> = field_width
            .iter()
            .map(|w| w.as_ref().map(|w| w.iter().fold(0.0, |sum, x| sum + x)))
            .collect();
        let ctx = ArgContext::new(
            app,
            decisions,
            &by_name,
            &topo,
            struct_width,
            ArgFields {
                ids: &field_ids,
                ranges: &arg_fields,
            },
        );

        let mut tasks: Vec<TaskPlan<'a>> = Vec::with_capacity(app.tasks.len());
        let mut first_arg = 0;
        for task in &app.tasks {
            let dec = by_name.get(task.name.as_str()).copied();
            let kind = choose_kind(task, dec, topo.machine);
            let group = topo.machine.processor(kind);
            let gemm = app
                .library_constraints
                .iter()
                .any(|c| c.library.eq_ignore_ascii_case("cublas") && c.tasks.contains(&task.name));
            let active = !task.inner && (task.per_iteration > 0 || task.setup_launches > 0);
            let args = plan_args(
                task,
                first_arg,
                dec,
                kind,
                &topo,
                &mut names,
                &mut fields,
                &ctx,
            );
            first_arg += task.regions.len();
            tasks.push(TaskPlan {
                task,
                kind,
                group,
                units: Vec::new(),
                launches: task.per_iteration,
                setup_launches: task.setup_launches,
                args,
                gemm,
                instance_limit: dec.and_then(|d| d.instance_limit),
                collect_memory: dec.is_some_and(|d| d.collect_memory),
                active,
            });
        }

        // Placement: index launches and plain single tasks first, then single
        // tasks launched from the points of an index parent.
        for t in tasks.iter_mut() {
            if parent_index(app, t.task).is_some() {
                continue;
            }
            let dec = by_name.get(t.task.name.as_str()).copied();
            t.units = place_points(t.task, dec, t.kind, &topo)?;
        }
        for i in 0..tasks.len() {
            let task = tasks[i].task;
            let Some(p) = parent_index(app, task) else {
                continue;
            };
            let dec = by_name.get(task.name.as_str()).copied();
            let (units, launches) = place_children(task, dec, tasks[i].kind, &tasks[p], &topo)?;
            tasks[i].units = units;
            tasks[i].launches = launches;
        }

        let mut flows = plan_flows(app, &tasks);
        let gemm = super::gemm::GemmPlan::build(app, &tasks, &mut flows);
        Ok(Plan {
            field_count: fields.ids.len(),
            app,
            topo,
            tasks,
            flows,
            native,
            gemm,
        })
    }
}

/// Interns names into dense ids.
#[derive(Default)]
struct Interner<'a> {
    // Borrowed from the application and the decisions: a plan is built for
    // every simulation, and owned keys were an allocation per name.
    ids: FastMap<&'a str, u32>,
}

impl<'a> Interner<'a> {
    fn id(&mut self, s: &'a str) -> u32 {
        let next = self.ids.len() as u32;
        *self.ids.entry(s).or_insert(next)
    }
}

/// The processor kind a task runs on: the decided one when the task has a
/// variant for it and the machine has such processors; otherwise the next
/// kind a default mapper would try (GPU, OMP, CPU), as the DSL mapper
/// silently skips a kind without a variant. Shared with the CUDA backend.
pub(crate) fn choose_kind(task: &Task, dec: Option<&TaskDecision>, machine: &Machine) -> ProcKind {
    let usable = |k: ProcKind| task.has_variant(k) && machine.procs_per_node(k) > 0;
    if let Some(d) = dec {
        if usable(d.proc_kind) {
            return d.proc_kind;
        }
    }
    DEFAULT_KINDS
        .iter()
        .copied()
        .find(|&k| usable(k))
        .or_else(|| {
            task.variants
                .iter()
                .copied()
                .find(|&k| machine.procs_per_node(k) > 0)
        })
        .unwrap_or(ProcKind::Cpu)
}

/// Where an argument's data lives when a task on `kind` is given `mem`:
/// a memory the node lacks falls back to the processor's best memory; a
/// host processor given a memory it cannot reach falls back to system
/// memory (the DSL mapper turns `Region * * CPU FBMEM` into SYSMEM); a GPU
/// given one it cannot reach keeps the data there and stages it.
fn effective_memory(kind: ProcKind, mem: MemKind, topo: &Topo) -> (MemKind, bool) {
    let m = topo.machine;
    let best = || {
        m.reachable(kind)
            .first()
            .copied()
            .unwrap_or(MemKind::Sysmem)
    };
    if m.memory(mem).is_none() {
        return (best(), false);
    }
    if m.can_reach(kind, mem) {
        return (mem, false);
    }
    if model::is_gpu(kind) && m.memory(MemKind::Fbmem).is_some() {
        return (mem, true);
    }
    if m.can_reach(kind, MemKind::Sysmem) {
        (MemKind::Sysmem, false)
    } else {
        (best(), false)
    }
}

/// The field ids of every argument with fields, interned once per plan.
struct ArgFields<'f> {
    ids: &'f [u32],
    /// Per argument (all tasks' arguments in order): its range of `ids`.
    ranges: &'f [Option<(usize, usize)>],
}

/// What planning an argument needs to know about the other arguments.
struct ArgContext<'a, 'f> {
    /// Bytes per element of each region's whole struct (by interned name;
    /// None for a region no argument gives fields).
    struct_width: Vec<Option<f64>>,
    fields: ArgFields<'f>,
    /// Elements of each region where an argument has it as its primary name.
    elements: FastMap<&'a str, u64>,
    /// The memory decided for a region name on a processor kind, from
    /// arguments launched once per iteration under that primary name.
    memory: FastMap<(&'a str, ProcKind), MemKind>,
}

impl<'a, 'f> ArgContext<'a, 'f> {
    fn new(
        app: &'a App,
        decisions: &Decisions,
        by_name: &FastMap<&str, &TaskDecision>,
        topo: &Topo,
        struct_width: Vec<Option<f64>>,
        fields: ArgFields<'f>,
    ) -> ArgContext<'a, 'f> {
        let mut elements: FastMap<&str, u64> = FastMap::default();
        let mut memory = FastMap::default();
        for t in &app.tasks {
            for r in &t.regions {
                if r.elements > 0 && r.privilege.accesses() {
                    let e = elements.entry(r.name.as_str()).or_insert(0);
                    *e = (*e).max(r.elements);
                }
            }
            let Some(d) = by_name.get(t.name.as_str()) else {
                continue;
            };
            if t.per_iteration > 1 {
                continue;
            }
            let kind = choose_kind(t, Some(d), topo.machine);
            for rd in d
                .regions
                .iter()
                .filter(|x| x.instance == InstanceKind::Physical)
            {
                if let Some(r) = t.region_at(rd.index) {
                    memory.entry((r.name.as_str(), kind)).or_insert(rd.memory);
                }
            }
        }
        let _ = decisions;
        ArgContext {
            struct_width,
            fields,
            elements,
            memory,
        }
    }
}

/// The arguments of `task` that need instances; `first_arg` is the index
/// of its first argument among all tasks' arguments ([`ArgFields`]).
#[allow(clippy::too_many_arguments)]
fn plan_args<'a>(
    task: &'a Task,
    first_arg: usize,
    dec: Option<&'a TaskDecision>,
    kind: ProcKind,
    topo: &Topo,
    names: &mut Interner<'a>,
    fields: &mut Interner<'a>,
    ctx: &ArgContext,
) -> Vec<ArgPlan<'a>> {
    let mut out = Vec::new();
    if task.inner {
        return out;
    }
    let weight = |r: &RegionArg| {
        let twice = matches!(r.privilege, Privilege::ReadWrite | Privilege::Reduce);
        r.bytes as f64 * if twice { 2.0 } else { 1.0 }
    };
    let needs = |r: &RegionArg| r.privilege.accesses() && !r.virtual_by_app && r.bytes > 0;
    let total: f64 = task.regions.iter().filter(|r| needs(r)).map(weight).sum();
    // The work's byte count is authoritative; arguments share it in
    // proportion to their size.
    let scale = if total > 0.0 && task.work.bytes > 0.0 {
        task.work.bytes / total
    } else {
        1.0
    };
    let default_mem = topo.best_memory(kind).unwrap_or(MemKind::Sysmem);
    for (ai, r) in task.regions.iter().enumerate().filter(|(_, r)| needs(r)) {
        let rd = dec.and_then(|d| d.regions.iter().find(|x| x.index == r.index));
        // A mapper's VIRTUAL on a leaf task that touches the data cannot
        // avoid the access; the data is then where Legion's default puts it.
        let rd = rd.filter(|x| x.instance != InstanceKind::VirtualByMapper);
        let decided = rd.map_or(default_mem, |x| x.memory);
        let (mem, staged) = effective_memory(kind, decided, topo);
        let region = names.id(&r.name);
        // One entry per launch of an iteration. Launched several times with
        // different regions, each launch takes its own region's size and,
        // where the application lists the launches' names, the memory the
        // mapper gave that launch; without such a decision (descriptions
        // without the list, hand-made decisions) a later launch takes the
        // memory its region gets where other tasks name it alone.
        let launches = if task.per_iteration > 1 && !r.launches.is_empty() {
            (task.per_iteration as usize).min(1 + r.launches.len())
        } else if task.per_iteration > 1 && !r.aliases.is_empty() {
            (task.per_iteration as usize).min(1 + r.aliases.len())
        } else {
            1
        };
        let mut per_launch = Vec::with_capacity(launches);
        for k in 0..launches {
            let decided_k = rd
                .and_then(|x| x.launches.get(k.wrapping_sub(1)))
                .filter(|_| k > 0);
            let name = match (k, decided_k) {
                (0, _) => &r.name,
                (_, Some(l)) => &l.region,
                (_, None) => r
                    .launches
                    .get(k - 1)
                    .and_then(|l| l.first())
                    .unwrap_or_else(|| &r.aliases[k - 1]),
            };
            let own = match decided_k {
                Some(l) => Some(l.memory),
                None if k > 0 => ctx.memory.get(&(name.as_str(), kind)).copied(),
                None => None,
            };
            let (m, st) = match own {
                Some(m) => effective_memory(kind, m, topo),
                None => (mem, staged),
            };
            let size = match ctx.elements.get(name.as_str()) {
                Some(&e) if k > 0 && r.elements > 0 => (e as f64 / r.elements as f64).min(1.0),
                _ => 1.0,
            };
            per_launch.push(LaunchArg {
                region: names.id(name),
                mem: m,
                staged: st,
                scale: size,
            });
        }
        let nf = r.fields.len().max(1) as f64;
        let per_field = r.bytes as f64 / nf;
        let fl: Vec<(u32, f64)> = match ctx.fields.ranges.get(first_arg + ai).copied().flatten() {
            Some((start, end)) => ctx.fields.ids[start..end]
                .iter()
                .map(|&id| (id, per_field))
                .collect(),
            None => r.fields.iter().map(|f| (fields.id(f), per_field)).collect(),
        };
        let accessed = if r.elements > 0 {
            r.bytes as f64 / r.elements as f64
        } else {
            0.0
        };
        out.push(ArgPlan {
            arg: r,
            mem: per_launch.first().map_or(mem, |l| l.mem),
            staged: per_launch.first().map_or(staged, |l| l.staged),
            per_launch,
            layout: rd.map(|x| x.layout).unwrap_or_default(),
            collect: rd.is_some_and(|x| x.collect),
            touch_bytes: weight(r) * scale,
            fields: fl,
            accessed_per_elem: accessed,
            struct_per_elem: ctx
                .struct_width
                .get(region as usize)
                .copied()
                .flatten()
                .unwrap_or(accessed),
        });
    }
    out
}

/// The index of the task that launches `task` from each of its points, if
/// `task` is a single task with an index-launched parent.
fn parent_index(app: &App, task: &Task) -> Option<usize> {
    if task.launch != Launch::Single {
        return None;
    }
    let p = task.parent.as_deref()?;
    let i = app.tasks.iter().position(|t| t.name == p)?;
    (app.tasks[i].launch == Launch::Index).then_some(i)
}

/// The processor of one placement, or the error the DSL mapper prints.
fn proc_of(topo: &Topo, kind: ProcKind, pl: &PointPlacement) -> Result<ProcId, Failure> {
    let nodes = topo.nodes();
    if pl.node >= nodes {
        return Err(Failure::new(
            "slice_out_of_bound",
            format!(
                "Sharding node index out of bound!\n{} >= {}\n",
                pl.node, nodes
            ),
        ));
    }
    let per = topo.procs_of(kind);
    if pl.proc >= per {
        return Err(Failure::new(
            "slice_out_of_bound",
            format!(
                "Slice processor index out of bound!\n{} >= {}\n",
                pl.proc, per
            ),
        ));
    }
    topo.proc_id(pl.node, kind, pl.proc).ok_or_else(|| {
        Failure::new(
            "mapping_error",
            format!("no {kind} processor {} on node {}\n", pl.proc, pl.node),
        )
    })
}

/// Legion's default distribution: point `p` of `n` goes to processor
/// `p * total / n` of the kind, numbering processors node by node.
fn blockwise(topo: &Topo, kind: ProcKind, p: u64, n: u64) -> PointPlacement {
    let per = u64::from(topo.procs_of(kind).max(1));
    let total = per * u64::from(topo.nodes().max(1));
    let g = (p * total).checked_div(n).unwrap_or(0);
    PointPlacement {
        point: vec![p as i64],
        node: (g / per) as u32,
        proc: (g % per) as u32,
    }
}

fn place_points(
    task: &Task,
    dec: Option<&TaskDecision>,
    kind: ProcKind,
    topo: &Topo,
) -> Result<Vec<Unit>, Failure> {
    let n = task.points();
    let given = dec.map_or(&[][..], |d| d.placement.as_slice());
    let mut units = Vec::with_capacity(n as usize);
    for p in 0..n {
        let proc = match given.get(p as usize) {
            Some(pl) => proc_of(topo, kind, pl)?,
            None if given.is_empty() || task.launch == Launch::Single => {
                proc_of(topo, kind, &blockwise(topo, kind, p, n))?
            }
            // Fewer placements than points: the rest repeat the pattern.
            None => proc_of(topo, kind, &given[(p as usize) % given.len()])?,
        };
        units.push(Unit {
            proc,
            piece: p as u32,
            execs: 1,
        });
    }
    Ok(units)
}

/// Units of a single task launched from every point of `parent`: its
/// launches per iteration are shared out over the parent's points, one after
/// another on each. A placement per parent point is used as given; a single
/// placement that is the parent's first point's processor (what
/// `task.parent.processor(m)` gives) or no placement at all means "where the
/// parent runs" — Legion's default for a subtask; any other single placement
/// puts every launch there.
fn place_children(
    task: &Task,
    dec: Option<&TaskDecision>,
    kind: ProcKind,
    parent: &TaskPlan,
    topo: &Topo,
) -> Result<(Vec<Unit>, u32), Failure> {
    let per = if task.per_iteration > 0 {
        task.per_iteration
    } else {
        task.setup_launches
    };
    let n = parent.units.len().max(1) as u32;
    let given = dec.map_or(&[][..], |d| d.placement.as_slice());
    let same_kind = parent.kind == kind;
    let follow = |i: usize| -> Option<ProcId> {
        let pu = parent.units.get(i)?;
        if same_kind {
            Some(pu.proc)
        } else {
            // A different kind: the first processor of that kind on the
            // parent's node.
            let (node, _, _) = topo.proc_info(pu.proc);
            topo.proc_id(node, kind, 0)
        }
    };
    let mut units = Vec::with_capacity(n as usize);
    for i in 0..n {
        let execs = per / n + u32::from(i < per % n);
        if execs == 0 {
            continue;
        }
        let proc = if given.len() as u32 == n && n > 1 {
            proc_of(topo, kind, &given[i as usize])?
        } else if let Some(pl) = given.first() {
            let p = proc_of(topo, kind, pl)?;
            let parent0 = follow(0);
            if Some(p) == parent0 {
                follow(i as usize).unwrap_or(p)
            } else {
                p
            }
        } else {
            match follow(i as usize) {
                Some(p) => p,
                None => proc_of(topo, kind, &blockwise(topo, kind, 0, 1))?,
            }
        };
        units.push(Unit {
            proc,
            piece: i,
            execs,
        });
    }
    // All of a task's launches from one parent point are one launch of the
    // whole set (the parent points run in parallel); launches outside the
    // loop are not part of it.
    Ok((units, u32::from(task.per_iteration > 0)))
}

/// The argument of `task` that a flow on `region` reads or writes: one that
/// answers to the name; failing that, for a producer, the smallest argument
/// it writes (boundary data is the small part), and for a consumer the
/// first one it reads.
fn flow_arg(t: &TaskPlan, region: &str, producer: bool) -> Option<usize> {
    if let Some(i) = t.args.iter().position(|a| a.arg.answers_to(region)) {
        return Some(i);
    }
    // Pennant names partitions `x_p` and their parents `x`.
    let stem = region.trim_end_matches("_p");
    if let Some(i) = t.args.iter().position(|a| {
        a.arg.name.trim_end_matches("_p") == stem
            || a.arg
                .aliases
                .iter()
                .any(|x| x.trim_end_matches("_p") == stem)
    }) {
        return Some(i);
    }
    if producer {
        t.args
            .iter()
            .enumerate()
            .filter(|(_, a)| a.writes() || a.reduces())
            .min_by_key(|(_, a)| a.arg.bytes)
            .map(|(i, _)| i)
    } else {
        t.args.iter().position(|a| a.reads() || a.reduces())
    }
}

fn plan_flows(app: &App, tasks: &[TaskPlan]) -> Vec<FlowPlan> {
    let mut out = Vec::new();
    for f in &app.communication.flows {
        // Same-piece data is followed by the engine's coherence tracking.
        if f.kind == FlowKind::SamePoint {
            continue;
        }
        let (Some(from), Some(to)) = (
            tasks.iter().position(|t| t.task.name == f.from),
            tasks.iter().position(|t| t.task.name == f.to),
        ) else {
            continue;
        };
        let (Some(from_arg), Some(to_arg)) = (
            flow_arg(
                &tasks[from],
                f.from_region.as_deref().unwrap_or(&f.region),
                true,
            ),
            flow_arg(&tasks[to], &f.region, false),
        ) else {
            continue;
        };
        out.push(FlowPlan {
            from,
            to,
            from_arg,
            to_arg,
            kind: f.kind,
            bytes: f.bytes_per_point as f64,
            step: GridStep::of(f),
        });
    }
    out
}
