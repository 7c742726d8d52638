//! What the `cuda` backend executes: the workload of a built-in benchmark at
//! a chosen problem scale, and where each of its tasks runs and keeps its
//! data under a mapper's decisions.
//!
//! - [`scale_app`] shrinks an application description (region sizes, work,
//!   flows) so a run fits a time budget; the simulator is given the same
//!   scaled description, so its prediction and the measurement describe the
//!   same problem.
//! - [`Workload::of`] reads the sizes the kernels run at from that scaled
//!   description (pieces, rows, nodes, wires, zones, tile size).
//! - [`place`] turns decisions into processors and memories per launch
//!   point and region argument, with the fallbacks a real DSL mapper applies.
//!
//! No CUDA here: all of it is tested on every machine.

use crate::app::{App, Launch, Task};
use crate::decisions::{Decisions, InstanceKind, LayoutDecision, PointPlacement};
use crate::machine::{Machine, MemKind, ProcKind};

use super::CudaError;

/// The six distributed matrix multiplications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GemmAlgo {
    Cannon,
    Summa,
    Pumma,
    Johnson,
    Solomonik,
    Cosma,
}

/// The problem a benchmark's core loop runs, at the scaled size.
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    /// A 2-D star stencil of radius `radius` over `pieces` blocks of rows,
    /// each `rows` x `cols` plus `radius` ghost rows above and below.
    Stencil {
        pieces: usize,
        rows: u64,
        cols: u64,
        radius: u64,
    },
    /// A circuit graph: per piece `private` + `shared` nodes and `wires`
    /// wires; a wire may end on a neighbouring piece's shared node (a ghost).
    Circuit {
        pieces: usize,
        private: u64,
        shared: u64,
        wires: u64,
        steps: u32,
    },
    /// A quadrilateral mesh of `zx` x `zy` zones per piece (pieces stacked
    /// along y), with its points and four sides per zone.
    Pennant { pieces: usize, zx: u64, zy: u64 },
    /// Tiled `C = A x B`-style products (`A += B x C` in DISTAL's names) of
    /// `n` x `n` tiles on a `grid` of (i, j, k) tiles.
    Gemm {
        algo: GemmAlgo,
        n: u64,
        grid: [usize; 3],
        /// Every (i, j, k) is its own launch point and partial products are
        /// reduced (johnson, cosma); otherwise each (i, j) point runs the
        /// `k` steps one after another.
        three_d: bool,
    },
}

/// Radius of the stencil (the PRK stencil's default).
pub const STENCIL_RADIUS: u64 = 2;
/// Inner time steps of circuit's `calculate_new_currents`.
pub const CIRCUIT_STEPS: u32 = 10;

/// The application's tasks the backend runs kernels for, per family.
pub fn kernel_tasks(w: &Workload) -> &'static [&'static str] {
    match w {
        Workload::Stencil { .. } => &["stencil", "increment"],
        Workload::Circuit { .. } => &[
            "calculate_new_currents",
            "distribute_charge",
            "update_voltages",
        ],
        Workload::Pennant { .. } => &["adv_pos_half", "calc_centers", "calc_volumes"],
        Workload::Gemm { .. } => &["task_4"],
    }
}

fn gemm_algo(name: &str) -> Option<GemmAlgo> {
    Some(match name {
        "cannon" => GemmAlgo::Cannon,
        "summa" => GemmAlgo::Summa,
        "pumma" => GemmAlgo::Pumma,
        "johnson" => GemmAlgo::Johnson,
        "solomonik" => GemmAlgo::Solomonik,
        "cosma" => GemmAlgo::Cosma,
        _ => return None,
    })
}

fn task<'a>(app: &'a App, name: &str) -> Result<&'a Task, CudaError> {
    app.task(name).ok_or_else(|| {
        CudaError::Plan(format!(
            "application `{}` has no task `{name}` (the cuda backend runs the built-in \
             benchmarks' core loops)",
            app.name
        ))
    })
}

fn region_elements(t: &Task, index: u32) -> u64 {
    t.region_at(index).map_or(1, |r| r.elements.max(1))
}

impl Workload {
    /// The workload of a (scaled) built-in application.
    pub fn of(app: &App) -> Result<Workload, CudaError> {
        let pieces = |t: &Task| (t.points() as usize).max(1);
        match app.name.as_str() {
            "stencil" => {
                let t = task(app, "stencil")?;
                let shape = t.region_at(0).map(|r| r.shape.clone()).unwrap_or_default();
                let r = STENCIL_RADIUS;
                Ok(Workload::Stencil {
                    pieces: pieces(t),
                    rows: shape.first().copied().unwrap_or(64).max(r),
                    cols: shape.get(1).copied().unwrap_or(64).max(2 * r + 1),
                    radius: r,
                })
            }
            "circuit" => {
                let t = task(app, "calculate_new_currents")?;
                Ok(Workload::Circuit {
                    pieces: pieces(t),
                    private: region_elements(t, 0),
                    shared: region_elements(t, 1),
                    wires: region_elements(t, 3),
                    steps: CIRCUIT_STEPS,
                })
            }
            "pennant" => {
                let t = task(app, "calc_centers")?;
                let zones = region_elements(t, 0).max(2);
                let zx = ((zones as f64).sqrt().round() as u64).max(2);
                Ok(Workload::Pennant {
                    pieces: pieces(t),
                    zx,
                    zy: (zones / zx).max(1),
                })
            }
            name => {
                let algo = gemm_algo(name).ok_or_else(|| CudaError::UnsupportedApp(name.into()))?;
                let t4 = task(app, "task_4")?;
                let n = t4
                    .region_at(1)
                    .and_then(|r| r.shape.first().copied())
                    .unwrap_or(256)
                    .max(1);
                let (grid, three_d) = if t4.launch == Launch::Index && t4.domain.len() == 3 {
                    let d = |k: usize| t4.domain[k].max(1) as usize;
                    ([d(0), d(1), d(2)], true)
                } else {
                    let parent = t4
                        .parent
                        .as_deref()
                        .and_then(|p| app.task(p))
                        .filter(|p| p.launch == Launch::Index);
                    let dom = parent
                        .map(|p| p.domain.clone())
                        .unwrap_or_else(|| vec![2, 2]);
                    let gi = dom.first().copied().unwrap_or(1).max(1) as usize;
                    let gj = dom.get(1).copied().unwrap_or(1).max(1) as usize;
                    let per = t4.per_iteration.max(1) as usize;
                    ([gi, gj, (per / (gi * gj)).max(1)], false)
                };
                Ok(Workload::Gemm {
                    algo,
                    n,
                    grid,
                    three_d,
                })
            }
        }
    }

    /// Launch points of the kernel tasks.
    pub fn units(&self) -> usize {
        match self {
            Workload::Stencil { pieces, .. }
            | Workload::Circuit { pieces, .. }
            | Workload::Pennant { pieces, .. } => *pieces,
            Workload::Gemm { grid, three_d, .. } => {
                if *three_d {
                    grid[0] * grid[1] * grid[2]
                } else {
                    grid[0] * grid[1]
                }
            }
        }
    }

    /// Bytes of data the workload keeps (all instances once).
    pub fn footprint_bytes(&self) -> u64 {
        match *self {
            Workload::Stencil {
                pieces,
                rows,
                cols,
                radius,
            } => pieces as u64 * (rows + 2 * radius) * cols * 2 * 8,
            Workload::Circuit {
                pieces,
                private,
                shared,
                wires,
                ..
            } => pieces as u64 * ((private + 3 * shared) * 4 + wires * 6) * 8,
            Workload::Pennant { pieces, zx, zy } => {
                pieces as u64 * ((zx + 1) * (zy + 1) * 4 + zx * zy * 4 + 4 * zx * zy * 4) * 8
            }
            Workload::Gemm { n, grid, .. } => {
                let [gi, gj, gk] = grid.map(|g| g as u64);
                (gi * gj * (1 + gk) + gi * gk + gk * gj) * n * n * 8
            }
        }
    }
}

/// Scales an application description to `scale` of its data (0 < scale
/// <= 1): region elements and bytes by `scale` (2-D shapes by its square
/// root per dimension), work bytes by `scale`, flops by `scale` (the
/// matmuls' GEMMs, whose flops grow as n^3, by `scale^1.5`), flows by
/// their region's ratio. Fixed costs, launch counts and iteration counts
/// are unchanged.
pub fn scale_app(app: &App, scale: f64) -> App {
    let s = if scale.is_finite() {
        scale.clamp(1e-9, 1.0)
    } else {
        1.0
    };
    let mut out = app.clone();
    if s == 1.0 {
        return out;
    }
    let gemm_tasks: Vec<String> = app
        .library_constraints
        .iter()
        .filter(|c| c.library.eq_ignore_ascii_case("cublas"))
        .flat_map(|c| c.tasks.clone())
        .collect();
    let mut ratios: Vec<(String, f64)> = Vec::new();
    for t in &mut out.tasks {
        for r in &mut t.regions {
            let old = r.bytes as f64;
            if !r.shape.is_empty() {
                let per = s.powf(1.0 / r.shape.len() as f64);
                for x in &mut r.shape {
                    *x = ((*x as f64 * per).round() as u64).max(1);
                }
                let per_elem = if r.elements > 0 {
                    r.bytes as f64 / r.elements as f64
                } else {
                    0.0
                };
                r.elements = r.shape.iter().product::<u64>().max(1);
                r.bytes = (per_elem * r.elements as f64).round() as u64;
            } else {
                r.elements = ((r.elements as f64 * s).round() as u64).max(1);
                r.bytes = (r.bytes as f64 * s).round() as u64;
            }
            if old > 0.0 && !ratios.iter().any(|(n, _)| *n == r.name) {
                ratios.push((r.name.clone(), r.bytes as f64 / old));
            }
        }
        let flop_scale = if gemm_tasks.contains(&t.name) {
            s.powf(1.5)
        } else {
            s
        };
        t.work.flops *= flop_scale;
        t.work.bytes *= s;
    }
    for f in &mut out.communication.flows {
        let ratio = ratios
            .iter()
            .find(|(n, _)| *n == f.region)
            .map_or(s, |(_, r)| *r);
        f.bytes_per_point = (f.bytes_per_point as f64 * ratio).round() as u64;
    }
    out.description = format!("{} (scaled to {s} of its data)", app.description);
    out
}

/// Flops of one timed iteration of an application description (timed,
/// active tasks: work per point x points x launches).
pub fn timed_flops(app: &App) -> f64 {
    app.tasks
        .iter()
        .filter(|t| t.timed && !t.inner && t.per_iteration > 0)
        .map(|t| t.work.flops * t.points().max(1) as f64 * f64::from(t.per_iteration))
        .sum()
}

/// A processor of the machine the run uses (node 0): a kind the CUDA
/// backend can execute with its index, not a processor kind (those are
/// [`crate::machine::ProcKind`], turned into a `Proc` by `proc_of` below).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Proc {
    /// Logical GPU processor `i` (several may share one physical GPU).
    Gpu(usize),
    /// CPU processor `i`: one host thread.
    Cpu(usize),
    /// OMP processor `i`: `threads` host threads.
    Omp(usize, usize),
}

impl Proc {
    pub fn label(&self) -> String {
        match self {
            Proc::Gpu(i) => format!("node0 GPU{i}"),
            Proc::Cpu(i) => format!("node0 CPU{i}"),
            Proc::Omp(i, _) => format!("node0 OMP{i}"),
        }
    }

    pub fn is_gpu(&self) -> bool {
        matches!(self, Proc::Gpu(_))
    }
}

/// Where an instance lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Loc {
    /// Pageable host memory (SYSMEM; also SOCKMEM, RDMEM and the other
    /// host kinds): GPUs reach it only through staged copies.
    Host,
    /// Pinned host memory mapped into the GPUs' address space (ZCMEM):
    /// kernels read and write it over the bus.
    Pinned,
    /// The framebuffer of logical GPU `i` (FBMEM).
    Fb(usize),
}

impl Loc {
    pub fn label(&self) -> String {
        match self {
            Loc::Host => "node0 SYSMEM0".into(),
            Loc::Pinned => "node0 ZCMEM0".into(),
            Loc::Fb(i) => format!("node0 FBMEM{i}"),
        }
    }
}

/// One region argument of a placed task.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgPlace {
    /// The memory kind after fallbacks.
    pub mem: MemKind,
    pub layout: LayoutDecision,
}

impl ArgPlace {
    /// Where the instance this argument uses lives for a unit on `proc`.
    pub fn loc(&self, proc: Proc) -> Loc {
        match (self.mem, proc) {
            (MemKind::Fbmem, Proc::Gpu(g)) => Loc::Fb(g),
            (MemKind::Zcmem, _) => Loc::Pinned,
            _ => Loc::Host,
        }
    }
}

/// Where one task's launch points run and its arguments live.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPlace {
    pub task: String,
    pub kind: ProcKind,
    /// Processor of each unit (launch point, or parent point for a task
    /// launched from every point of an index launch).
    pub units: Vec<Proc>,
    /// Per region argument index of the application's task.
    pub args: Vec<ArgPlace>,
}

impl TaskPlace {
    /// The argument with index `i` (the default placement when the task has
    /// fewer arguments).
    pub fn arg(&self, i: usize) -> ArgPlace {
        self.args.get(i).cloned().unwrap_or(ArgPlace {
            mem: MemKind::Sysmem,
            layout: LayoutDecision::default(),
        })
    }
}

use crate::sim::plan::choose_kind;

/// The memory an argument ends up in on `kind`: the decided one where the
/// machine has it and the kind can use it; a host processor given FBMEM
/// gets SYSMEM (the DSL mapper's fallback); a GPU given a host kind keeps
/// it (and stages); a `VIRTUAL` or missing decision gets the kind's best
/// memory.
pub fn effective_memory(kind: ProcKind, decided: Option<MemKind>, machine: &Machine) -> MemKind {
    let best = || {
        machine
            .reachable(kind)
            .first()
            .copied()
            .unwrap_or(if kind == ProcKind::Gpu {
                MemKind::Fbmem
            } else {
                MemKind::Sysmem
            })
    };
    let Some(m) = decided else {
        return best();
    };
    if machine.memory(m).is_none() {
        return best();
    }
    match (kind, m) {
        (ProcKind::Gpu, _) => m,
        (_, MemKind::Fbmem) => MemKind::Sysmem,
        _ => m,
    }
}

fn proc_of(kind: ProcKind, pl: &PointPlacement, machine: &Machine) -> Result<Proc, CudaError> {
    let count = machine.procs_per_node(kind);
    if pl.node >= machine.nodes.max(1) || pl.node > 0 {
        return Err(CudaError::Plan(format!(
            "launch point placed on node {}: the cuda backend runs on one node",
            pl.node
        )));
    }
    if pl.proc >= count {
        return Err(CudaError::Plan(format!(
            "Slice processor index out of bound!\n{} >= {count}",
            pl.proc
        )));
    }
    let i = pl.proc as usize;
    Ok(match kind {
        ProcKind::Gpu => Proc::Gpu(i),
        ProcKind::Omp => Proc::Omp(
            i,
            machine
                .processor(ProcKind::Omp)
                .map_or(1, |g| g.cores.max(1)) as usize,
        ),
        _ => Proc::Cpu(i),
    })
}

/// Legion's default distribution: unit `u` of `n` on processor
/// `u * count / n`.
fn blockwise(kind: ProcKind, u: usize, n: usize, machine: &Machine) -> PointPlacement {
    let count = machine.procs_per_node(kind).max(1) as usize;
    PointPlacement {
        point: vec![u as i64],
        node: 0,
        proc: (u * count / n.max(1)) as u32,
    }
}

/// Places task `name` with `units` units under `decisions`. `parent` is
/// the placement of the index launch whose points launch this task (the
/// matmuls' GEMM), when there is one.
pub fn place_task(
    app: &App,
    name: &str,
    units: usize,
    decisions: &Decisions,
    machine: &Machine,
    parent: Option<&TaskPlace>,
) -> Result<TaskPlace, CudaError> {
    let t = task(app, name)?;
    let dec = decisions.tasks.iter().find(|d| d.task == name);
    let kind = choose_kind(t, dec, machine);
    let given = dec.map_or(&[][..], |d| d.placement.as_slice());
    let mut procs = Vec::with_capacity(units);
    for u in 0..units {
        let pl = if given.len() >= units {
            given[u].clone()
        } else if let Some(p) = parent.filter(|_| given.len() <= 1) {
            // A subtask runs where its parent point runs, unless a single
            // placement names another processor than the parent's first
            // point's (`task.parent.processor(m)`): then all go there.
            let follow = p.units.get(u).copied().filter(|q| {
                matches!(
                    (q, kind),
                    (Proc::Gpu(_), ProcKind::Gpu)
                        | (Proc::Cpu(_), ProcKind::Cpu)
                        | (Proc::Omp(..), ProcKind::Omp)
                )
            });
            let explicit = match given.first() {
                Some(g) => Some(proc_of(kind, g, machine)?),
                None => None,
            };
            let chosen = match (explicit, follow) {
                (Some(e), Some(_)) if Some(e) != p.units.first().copied() => Some(e),
                (_, Some(f)) => Some(f),
                (Some(e), None) => Some(e),
                (None, None) => None,
            };
            match chosen {
                Some(c) => {
                    procs.push(c);
                    continue;
                }
                None => blockwise(kind, u, units, machine),
            }
        } else if given.is_empty() {
            blockwise(kind, u, units, machine)
        } else {
            given[u % given.len()].clone()
        };
        procs.push(proc_of(kind, &pl, machine)?);
    }
    let args = t
        .regions
        .iter()
        .map(|r| {
            let rd = dec.and_then(|d| d.regions.iter().find(|x| x.index == r.index));
            let decided = rd
                .filter(|x| x.instance == InstanceKind::Physical)
                .map(|x| x.memory);
            ArgPlace {
                mem: effective_memory(kind, decided, machine),
                layout: rd.map(|x| x.layout).unwrap_or_default(),
            }
        })
        .collect();
    Ok(TaskPlace {
        task: name.to_string(),
        kind,
        units: procs,
        args,
    })
}

/// Places every kernel task of the workload.
pub fn place(
    app: &App,
    w: &Workload,
    decisions: &Decisions,
    machine: &Machine,
) -> Result<Vec<TaskPlace>, CudaError> {
    let mut out = Vec::new();
    for name in kernel_tasks(w) {
        let parent = match w {
            Workload::Gemm { three_d: false, .. } => {
                // The GEMM follows its parent index launch (task_5) when the
                // decisions place it; compute that placement first.
                let p = app
                    .task(name)
                    .and_then(|t| t.parent.clone())
                    .filter(|p| app.task(p).is_some_and(|t| t.launch == Launch::Index));
                match p {
                    Some(p) => Some(place_task(app, &p, w.units(), decisions, machine, None)?),
                    None => None,
                }
            }
            _ => None,
        };
        out.push(place_task(
            app,
            name,
            w.units(),
            decisions,
            machine,
            parent.as_ref(),
        )?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::reference;

    fn h200() -> Machine {
        Machine::preset("h200").unwrap()
    }

    #[test]
    fn every_builtin_has_a_workload() {
        for name in App::builtin_names() {
            let app = App::builtin(name).unwrap();
            let w = Workload::of(&scale_app(&app, 1.0 / 64.0)).unwrap();
            assert!(w.units() >= 1, "{name}");
            assert!(w.footprint_bytes() > 0, "{name}");
        }
        let mut other = App::builtin("stencil").unwrap();
        other.name = "mine".into();
        assert!(matches!(
            Workload::of(&other),
            Err(CudaError::UnsupportedApp(_))
        ));
    }

    #[test]
    fn scaling_shrinks_data_and_gemm_flops_faster() {
        let app = App::builtin("cannon").unwrap();
        let s = scale_app(&app, 1.0 / 64.0);
        let t4 = s.task("task_4").unwrap();
        assert_eq!(t4.region_at(1).unwrap().shape, vec![1250, 1250]);
        let ratio = t4.work.flops / app.task("task_4").unwrap().work.flops;
        assert!((ratio - 1.0 / 512.0).abs() < 1e-12);
        assert_eq!(
            Workload::of(&s).unwrap(),
            Workload::Gemm {
                algo: GemmAlgo::Cannon,
                n: 1250,
                grid: [2, 2, 2],
                three_d: false
            }
        );
        let j = Workload::of(&scale_app(&App::builtin("johnson").unwrap(), 0.25)).unwrap();
        assert!(matches!(
            j,
            Workload::Gemm {
                grid: [2, 2, 2],
                three_d: true,
                n: 5000,
                ..
            }
        ));
        // Scale 1 is the identity.
        assert_eq!(scale_app(&app, 1.0), app);
    }

    #[test]
    fn stencil_sizes_follow_the_private_region() {
        let app = scale_app(&App::builtin("stencil").unwrap(), 1.0 / 100.0);
        match Workload::of(&app).unwrap() {
            Workload::Stencil {
                pieces,
                rows,
                cols,
                radius,
            } => {
                assert_eq!(pieces, 4);
                assert_eq!((rows, cols), (1500, 1500));
                assert_eq!(radius, 2);
            }
            w => panic!("{w:?}"),
        }
    }

    #[test]
    fn default_decisions_place_points_blockwise_on_gpus_in_fbmem() {
        let m = Machine::preset("p100x4").unwrap();
        let app = App::builtin("circuit").unwrap();
        let d = reference::default_gpu(&app, &m);
        let w = Workload::of(&app).unwrap();
        let p = place(&app, &w, &d, &m).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(
            p[0].units,
            vec![Proc::Gpu(0), Proc::Gpu(1), Proc::Gpu(2), Proc::Gpu(3)]
        );
        assert_eq!(p[0].arg(0).mem, MemKind::Fbmem);
        assert_eq!(p[0].arg(0).loc(Proc::Gpu(2)), Loc::Fb(2));
    }

    #[test]
    fn all_cpu_decisions_keep_data_in_host_memory() {
        let m = h200();
        let app = App::builtin("stencil").unwrap();
        let d = reference::all_cpu(&app, &m);
        let w = Workload::of(&app).unwrap();
        let p = place(&app, &w, &d, &m).unwrap();
        assert!(p[0].units.iter().all(|u| matches!(u, Proc::Cpu(_))));
        assert_eq!(p[0].arg(0).loc(p[0].units[0]), Loc::Host);
    }

    #[test]
    fn zero_copy_decisions_use_pinned_memory() {
        let m = h200();
        let app = App::builtin("pennant").unwrap();
        let d = reference::zero_copy(&app, &m);
        let w = Workload::of(&app).unwrap();
        let p = place(&app, &w, &d, &m).unwrap();
        assert_eq!(p[1].arg(0).loc(Proc::Gpu(0)), Loc::Pinned);
        // All four points of the one-GPU machine land on GPU 0.
        assert_eq!(p[1].units, vec![Proc::Gpu(0); 4]);
    }

    #[test]
    fn host_kinds_given_fbmem_fall_back_to_sysmem() {
        let m = h200();
        assert_eq!(
            effective_memory(ProcKind::Cpu, Some(MemKind::Fbmem), &m),
            MemKind::Sysmem
        );
        assert_eq!(
            effective_memory(ProcKind::Gpu, Some(MemKind::Sysmem), &m),
            MemKind::Sysmem
        );
        assert_eq!(effective_memory(ProcKind::Gpu, None, &m), MemKind::Fbmem);
        // SOCKMEM is absent on the h200 preset: the best memory instead.
        assert_eq!(
            effective_memory(ProcKind::Cpu, Some(MemKind::Sockmem), &m),
            MemKind::Sysmem
        );
    }

    #[test]
    fn gemm_follows_its_parent_points() {
        let m = Machine::preset("p100x4").unwrap();
        let app = App::builtin("cannon").unwrap();
        let d = reference::expert_like(&app, &m);
        let w = Workload::of(&app).unwrap();
        let p = place(&app, &w, &d, &m).unwrap();
        assert_eq!(p[0].kind, ProcKind::Gpu);
        assert_eq!(
            p[0].units,
            vec![Proc::Gpu(0), Proc::Gpu(1), Proc::Gpu(2), Proc::Gpu(3)]
        );
    }

    #[test]
    fn out_of_range_processors_are_errors() {
        let m = h200();
        let app = App::builtin("stencil").unwrap();
        let mut d = reference::default_gpu(&app, &m);
        for t in &mut d.tasks {
            for pl in &mut t.placement {
                pl.proc = 3;
            }
        }
        let w = Workload::of(&app).unwrap();
        let e = place(&app, &w, &d, &m).unwrap_err();
        assert!(e.to_string().contains("out of bound"), "{e}");
    }

    #[test]
    fn timed_flops_count_points_and_launches() {
        let app = App::builtin("cannon").unwrap();
        // task_4: 2e12 flops x 8 launches per iteration.
        assert!((timed_flops(&app) - 16e12).abs() / 16e12 < 1e-9);
    }
}
