//! Hand-built decisions: the mappings the simulator's tests, tables and
//! benchmarks compare, built directly rather than resolved from mapper
//! source (so they do not depend on mapping resolution).
//!
//! - [`default_gpu`]: every task on a GPU where it has a variant (else OMP,
//!   else CPU), GPU data in FBMEM, host data in SYSMEM, the application's
//!   native layout, points blockwise — what `Task * GPU,OMP,CPU;
//!   Region * * GPU FBMEM; Region * * CPU SYSMEM;` plus the right `Layout`
//!   gives.
//! - [`all_cpu`]: every task on a CPU core, data in SYSMEM.
//! - [`zero_copy`]: GPUs as in [`default_gpu`] but every region in ZCMEM.
//! - [`expert_like`]: the decisions of each built-in application's expert
//!   mapper (`runtime/apps/experts/`) as the wrapper logs show them.

use crate::app::{App, Launch, RegionArg, Task};
use crate::decisions::{
    Decisions, InstanceKind, LayoutDecision, Order, PointPlacement, RegionDecision, TaskDecision,
};
use crate::machine::{Machine, MemKind, ProcKind};

/// How launch points are spread over processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// Point `p` of `n` on processor `p * total / n` (Legion's default).
    Blockwise,
    /// Every point on node 0, processor 0 (a mapper that forgets to
    /// distribute).
    First,
    /// Blockwise over nodes, always the node's first processor (the
    /// experts' `block_shard_cpu` for host tasks).
    FirstPerNode,
}

/// A recipe for [`build`].
pub struct Recipe<'f> {
    /// Processor kinds in priority order (`Task * GPU,OMP,CPU;`).
    pub kinds: Vec<ProcKind>,
    /// The memory of one argument of a task running on a kind.
    pub memory: &'f dyn Fn(ProcKind, &Task, &RegionArg) -> MemKind,
    /// The layout of every instance.
    pub layout: LayoutDecision,
    /// How each task's points are spread, by the kind it runs on.
    pub spread: &'f dyn Fn(ProcKind, &Task) -> Spread,
    /// `InstanceLimit` statements.
    pub instance_limits: Vec<(String, u64)>,
    /// `CollectMemory` statements (task names).
    pub collect_memory: Vec<String>,
}

/// The layout the application's kernels and libraries want: `C_order` when
/// a library asks for it (cuBLAS in the matmuls), else Legion's default
/// `F_order` (which Regent needs); struct-of-arrays.
pub fn native_layout(app: &App) -> LayoutDecision {
    let order =
        app.library_constraints
            .iter()
            .find_map(|c| c.order)
            .map_or(Order::F, |o| match o {
                crate::app::DimOrder::COrder => Order::C,
                crate::app::DimOrder::FOrder => Order::F,
            });
    LayoutDecision {
        order,
        ..LayoutDecision::default()
    }
}

/// Decisions following `recipe`. Tasks take the first kind of the list they
/// have a variant for and the machine has (else their first variant the
/// machine has); a memory the kind cannot reach becomes its best one.
pub fn build(app: &App, machine: &Machine, recipe: &Recipe) -> Decisions {
    let mut tasks: Vec<TaskDecision> = Vec::with_capacity(app.tasks.len());
    for task in &app.tasks {
        let usable = |k: ProcKind| task.has_variant(k) && machine.procs_per_node(k) > 0;
        let kind = recipe
            .kinds
            .iter()
            .copied()
            .find(|&k| usable(k))
            .or_else(|| task.variants.iter().copied().find(|&k| usable(k)))
            .unwrap_or(ProcKind::Cpu);
        let regions = task
            .regions
            .iter()
            .map(|r| {
                let mut mem = (recipe.memory)(kind, task, r);
                if !machine.can_reach(kind, mem) {
                    mem = machine
                        .reachable(kind)
                        .first()
                        .copied()
                        .unwrap_or(MemKind::Sysmem);
                }
                RegionDecision {
                    region: r.name.clone(),
                    index: r.index,
                    memory: mem,
                    memory_rule: None,
                    layout: recipe.layout,
                    layout_rule: None,
                    instance: instance_kind(task, r),
                    collect: recipe.collect_memory.contains(&task.name)
                        && r.privilege == crate::app::Privilege::Read,
                    // The reference recipes decide by argument; the
                    // simulator's per-launch fallback applies.
                    launches: Vec::new(),
                }
            })
            .collect();
        let placement = placement(
            app,
            machine,
            task,
            kind,
            (recipe.spread)(kind, task),
            &tasks,
        );
        tasks.push(TaskDecision {
            task: task.name.clone(),
            launch: task.launch,
            proc_kind: kind,
            proc_rule: None,
            regions,
            placement,
            map_rule: None,
            instance_limit: recipe
                .instance_limits
                .iter()
                .find(|(t, _)| *t == task.name)
                .map(|(_, n)| *n),
            control_replicated: false,
            collect_memory: recipe.collect_memory.contains(&task.name),
        });
    }
    Decisions {
        app: app.name.clone(),
        machine: machine.name.clone(),
        tasks,
        diagnostics: Vec::new(),
        fatal: None,
    }
}

/// Whether an argument gets an instance, as the application dictates.
fn instance_kind(task: &Task, r: &RegionArg) -> InstanceKind {
    if !r.privilege.accesses() {
        InstanceKind::NoAccess
    } else if r.virtual_by_app {
        InstanceKind::VirtualByApp
    } else if task.inner {
        InstanceKind::InnerTask
    } else {
        InstanceKind::Physical
    }
}

fn placement(
    app: &App,
    machine: &Machine,
    task: &Task,
    kind: ProcKind,
    spread: Spread,
    earlier: &[TaskDecision],
) -> Vec<PointPlacement> {
    let per = u64::from(machine.procs_per_node(kind).max(1));
    let total = per * u64::from(machine.nodes.max(1));
    if task.launch == Launch::Single {
        // A subtask of an index launch of the same kind runs where each
        // parent point runs (`task.parent.processor(m)`).
        if let Some(parent) = task.parent.as_deref().and_then(|p| app.task(p)) {
            if parent.launch == Launch::Index {
                if let Some(pd) = earlier.iter().find(|d| d.task == parent.name) {
                    if pd.proc_kind == kind {
                        return pd.placement.clone();
                    }
                }
            }
        }
        return vec![PointPlacement {
            point: Vec::new(),
            node: 0,
            proc: 0,
        }];
    }
    let n = task.points();
    let mut out = Vec::with_capacity(n as usize);
    let mut idx = vec![0u64; task.domain.len()];
    for p in 0..n {
        let g = (p * total).checked_div(n).unwrap_or(0);
        let (node, proc) = match spread {
            Spread::Blockwise => (g / per, g % per),
            Spread::First => (0, 0),
            Spread::FirstPerNode => (p * u64::from(machine.nodes.max(1)) / n.max(1), 0),
        };
        out.push(PointPlacement {
            point: idx.iter().map(|&i| i as i64).collect(),
            node: node as u32,
            proc: proc as u32,
        });
        // Next point, last dimension fastest.
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < task.domain[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

fn host_memory(machine: &Machine) -> MemKind {
    if machine.memory(MemKind::Sysmem).is_some() {
        MemKind::Sysmem
    } else {
        machine
            .mem_kinds()
            .first()
            .copied()
            .unwrap_or(MemKind::Sysmem)
    }
}

/// All tasks on GPUs where they can run, FBMEM, native layout, blockwise.
pub fn default_gpu(app: &App, machine: &Machine) -> Decisions {
    let host = host_memory(machine);
    let memory = move |k: ProcKind, _: &Task, _: &RegionArg| {
        if k == ProcKind::Gpu {
            MemKind::Fbmem
        } else {
            host
        }
    };
    build(
        app,
        machine,
        &Recipe {
            kinds: vec![ProcKind::Gpu, ProcKind::Omp, ProcKind::Cpu],
            memory: &memory,
            layout: native_layout(app),
            spread: &|_, _| Spread::Blockwise,
            instance_limits: Vec::new(),
            collect_memory: Vec::new(),
        },
    )
}

/// Every task on a CPU core, data in system memory.
pub fn all_cpu(app: &App, machine: &Machine) -> Decisions {
    let host = host_memory(machine);
    build(
        app,
        machine,
        &Recipe {
            kinds: vec![ProcKind::Cpu, ProcKind::Omp],
            memory: &move |_, _, _| host,
            layout: native_layout(app),
            spread: &|_, _| Spread::Blockwise,
            instance_limits: Vec::new(),
            collect_memory: Vec::new(),
        },
    )
}

/// GPUs where possible, but every region in zero-copy memory.
pub fn zero_copy(app: &App, machine: &Machine) -> Decisions {
    let host = host_memory(machine);
    let memory = move |k: ProcKind, _: &Task, _: &RegionArg| {
        if k == ProcKind::Gpu {
            MemKind::Zcmem
        } else {
            host
        }
    };
    build(
        app,
        machine,
        &Recipe {
            kinds: vec![ProcKind::Gpu, ProcKind::Omp, ProcKind::Cpu],
            memory: &memory,
            layout: native_layout(app),
            spread: &|_, _| Spread::Blockwise,
            instance_limits: Vec::new(),
            collect_memory: Vec::new(),
        },
    )
}

/// The decisions of the built-in application's expert mapper, as its
/// statements and the wrapper logs show them (`runtime/apps/experts/`):
/// - circuit, pennant: `Task * GPU,CPU`; shared/ghost regions of GPU tasks in
///   ZCMEM, the rest in FBMEM; SOA C_order; GPU points blockwise; host
///   index tasks on each node's first CPU.
/// - stencil: the same without zero-copy, SOA F_order.
/// - the matmuls: `Task * GPU,OMP,CPU`; FBMEM for GPUs, SOCKMEM/SYSMEM for
///   the host; SOA C_order; `InstanceLimit task_4 1`, `task_6 1`;
///   `CollectMemory task_4`; GEMMs where their parent point runs.
///
/// Pennant's tasks launched once with the private and once with the shared
/// points carry one memory per argument here, chosen by the argument's
/// primary (private) name. Unknown applications get [`default_gpu`].
pub fn expert_like(app: &App, machine: &Machine) -> Decisions {
    let host = host_memory(machine);
    let sock = if machine.can_reach(ProcKind::Omp, MemKind::Sockmem)
        || machine.can_reach(ProcKind::Cpu, MemKind::Sockmem)
    {
        MemKind::Sockmem
    } else {
        host
    };
    let host_first = |k: ProcKind, t: &Task| {
        if k == ProcKind::Gpu || t.launch == Launch::Single {
            Spread::Blockwise
        } else {
            Spread::FirstPerNode
        }
    };
    let c_order = LayoutDecision {
        order: Order::C,
        ..LayoutDecision::default()
    };
    match app.name.as_str() {
        "circuit" | "pennant" => {
            let zc: &[&str] = if app.name == "circuit" {
                &["rp_shared", "rp_ghost"]
            } else {
                &["rp_all_shared_p", "rp_all_ghost_p"]
            };
            let memory = move |k: ProcKind, _: &Task, r: &RegionArg| match k {
                ProcKind::Gpu if zc.contains(&r.name.as_str()) => MemKind::Zcmem,
                ProcKind::Gpu => MemKind::Fbmem,
                _ => host,
            };
            build(
                app,
                machine,
                &Recipe {
                    kinds: vec![ProcKind::Gpu, ProcKind::Cpu],
                    memory: &memory,
                    layout: c_order,
                    spread: &host_first,
                    instance_limits: Vec::new(),
                    collect_memory: Vec::new(),
                },
            )
        }
        "stencil" => {
            let memory = move |k: ProcKind, _: &Task, _: &RegionArg| {
                if k == ProcKind::Gpu {
                    MemKind::Fbmem
                } else {
                    host
                }
            };
            build(
                app,
                machine,
                &Recipe {
                    kinds: vec![ProcKind::Gpu, ProcKind::Cpu],
                    memory: &memory,
                    layout: LayoutDecision::default(),
                    spread: &host_first,
                    instance_limits: Vec::new(),
                    collect_memory: Vec::new(),
                },
            )
        }
        "cannon" | "summa" | "pumma" | "johnson" | "solomonik" | "cosma" => {
            let memory = move |k: ProcKind, _: &Task, _: &RegionArg| {
                if k == ProcKind::Gpu {
                    MemKind::Fbmem
                } else {
                    sock
                }
            };
            let limits = if app.name == "johnson" || app.name == "cosma" {
                Vec::new()
            } else {
                vec![("task_4".to_string(), 1), ("task_6".to_string(), 1)]
            };
            build(
                app,
                machine,
                &Recipe {
                    kinds: vec![ProcKind::Gpu, ProcKind::Omp, ProcKind::Cpu],
                    memory: &memory,
                    layout: c_order,
                    spread: &|_, _| Spread::Blockwise,
                    instance_limits: limits,
                    collect_memory: vec!["task_4".to_string()],
                },
            )
        }
        _ => default_gpu(app, machine),
    }
}
