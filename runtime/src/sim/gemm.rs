//! Per-algorithm communication schedules of the six DISTAL matrix
//! multiplications (cannon, summa, pumma, solomonik, johnson, cosma).
//!
//! The generic flows of an application description say only "B shifts",
//! "B is broadcast"; this module derives, from the algorithm's DISTAL
//! schedule (`communicate`, `divide`, `stagger` statements of
//! `test/tests-distributed.cpp` in Anjiang-Wei/taco, cited per pattern in
//! `runtime/SIMULATION.md`), which tile each GEMM step reads, from the
//! processor the placement tasks put it on, and which steps' copies can
//! overlap which GEMMs:
//!
//! - **Stepped** (cannon, summa, pumma, solomonik): the GEMM is a single
//!   task launched `K` times from every point `(i, j)` of an inner index
//!   launch. Step `s` reads `B(i, k)` and `C(k, j)`, the panel `k` its
//!   [`Stagger`] gives: `k = s` (SUMMA's broadcast), the node step
//!   staggered by the node row (PUMMA), node and GPU steps staggered by
//!   `in + jn` and `iln + jln` (Cannon), or Cannon's stagger within each
//!   replica layer (Solomonik). `A(i, j)` stays put; Solomonik's layers
//!   beyond the first reduce theirs into A's placement.
//! - **Projected** (johnson, cosma): the GEMM is an index launch over a
//!   3-D grid; point `(i, j, k)` reads the `B` tile placed on the face
//!   `(i, 0, k)`, the `C` tile on `(0, j, k)` (each placement domain is the
//!   GEMM grid with one axis collapsed), and its partial `A(i, j)` is
//!   reduced into the placement of `A` on `(i, j, 0)`.
//!
//! Overlap: the points of an index launch are all mapped at once, so every
//! copy is issued when the launch starts and a processor runs its GEMMs as
//! their inputs arrive. The steps of a stepped GEMM are mapped ahead too,
//! unless `InstanceLimit` on the GEMM task caps the tasks in flight at one
//! per processor (the DISTAL experts' `InstanceLimit task_4 1`): the next
//! step is then mapped, and its tiles copied, only when the previous step
//! finished (the wrapper log `cannon.log` shows it: a GPU's next `task_4`
//! is mapped one GEMM time after the previous one).

use crate::app::{App, FlowKind, Launch};

use super::task_plan::{FlowPlan, TaskPlan};
use super::topology::{MemId, ProcId, Resource, Route, Topo};

/// Which `k` panel a stepped GEMM point reads at each step: the
/// `stagger` statements of its DISTAL schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stagger {
    /// SUMMA: step `s` reads panel `s` everywhere (a broadcast).
    None,
    /// PUMMA: `stagger(ko, {in}, kos)` at the node level only: node row
    /// `in` starts at node panel `in`; inside the node, a broadcast.
    NodeRows,
    /// Cannon: `stagger(ko, {in, jn}, kos)` at the node level and
    /// `stagger(kio, {iln, jln}, kios)` inside it.
    Cannon,
    /// Solomonik: `stagger(k1, {in, jn}, k1s)` within each of the `c`
    /// layers of the grid, layer `kn` owning panels `kn K .. (kn+1) K`.
    Layers,
}

/// How the GEMM task's points find their tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A single task launched `K` times per point of `parent`; `stagger`
    /// says which panel each step reads.
    Stepped { parent: usize, stagger: Stagger },
    /// An index launch whose points project onto the placement grids.
    Projected,
}

/// Which operand of `A += B * C`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    B,
    C,
}

/// One input operand the GEMM reads from a placement task's tiles.
#[derive(Debug, Clone)]
pub struct Input {
    pub operand: Operand,
    /// The placement task (task_2 / task_3) and its argument.
    pub placement: usize,
    pub placement_arg: usize,
    /// The GEMM task's argument.
    pub arg: usize,
    /// Bytes of one tile.
    pub bytes: f64,
}

/// The partial results a 3-D GEMM reduces into the placement of `A`.
#[derive(Debug, Clone)]
pub struct Reduce {
    pub placement: usize,
    pub placement_arg: usize,
    pub arg: usize,
    pub bytes: f64,
}

/// The schedule of an application's GEMM task.
#[derive(Debug, Clone)]
pub struct GemmPlan {
    /// The GEMM (cuBLAS) task.
    pub task: usize,
    pub shape: Shape,
    pub inputs: Vec<Input>,
    pub reduce: Option<Reduce>,
}

/// The schedule a communication pattern names, if it is one of the six
/// matrix multiplications': `Some(Some(stagger))` for a stepped GEMM,
/// `Some(None)` for a 3-D one.
fn shape_of(pattern: &str) -> Option<Option<Stagger>> {
    match pattern {
        "systolic" => Some(Some(Stagger::Cannon)),
        "2.5d" => Some(Some(Stagger::Layers)),
        "broadcast" => Some(Some(Stagger::None)),
        "skewed-broadcast" => Some(Some(Stagger::NodeRows)),
        "3d-broadcast-reduce" | "3d-grid" => Some(None),
        _ => None,
    }
}

impl GemmPlan {
    /// The GEMM schedule of `app`, or `None` for other applications. The
    /// flows it takes over are removed from `flows`.
    pub fn build(app: &App, tasks: &[TaskPlan], flows: &mut Vec<FlowPlan>) -> Option<GemmPlan> {
        let stagger = shape_of(app.communication.pattern.as_str())?;
        let task = tasks.iter().position(|t| t.gemm && t.active)?;
        let shape = if let Some(stagger) = stagger {
            let t = tasks[task].task;
            if t.launch != Launch::Single {
                return None;
            }
            let parent = tasks
                .iter()
                .position(|p| Some(p.task.name.as_str()) == t.parent.as_deref())?;
            Shape::Stepped { parent, stagger }
        } else {
            if tasks[task].task.launch != Launch::Index {
                return None;
            }
            Shape::Projected
        };
        let mut inputs = Vec::new();
        let mut reduce = None;
        flows.retain(|f| {
            let region = tasks[f.to].args.get(f.to_arg).map(|a| a.arg.name.as_str());
            match f.kind {
                FlowKind::Shift | FlowKind::Broadcast if f.to == task => {
                    let operand = match region {
                        Some("B") => Operand::B,
                        Some("C") => Operand::C,
                        _ => return true,
                    };
                    inputs.push(Input {
                        operand,
                        placement: f.from,
                        placement_arg: f.from_arg,
                        arg: f.to_arg,
                        bytes: f.bytes,
                    });
                    false
                }
                // Solomonik folds its layers' partial A tiles as the 3-D
                // GEMMs do (`reduction_copies` skips layer 0, whose A is
                // the placement's own piece, followed by coherence).
                FlowKind::Reduction if f.from == task => {
                    reduce = Some(Reduce {
                        placement: f.to,
                        placement_arg: f.to_arg,
                        arg: f.from_arg,
                        bytes: f.bytes,
                    });
                    false
                }
                _ => true,
            }
        });
        Some(GemmPlan {
            task,
            shape,
            inputs,
            reduce,
        })
    }
}

/// Row-major coordinates of linear point `p` in `domain`.
fn coords(p: u64, domain: &[u64]) -> [u64; 3] {
    let mut out = [0u64; 3];
    let mut rest = p;
    for d in (0..domain.len().min(3)).rev() {
        let e = domain[d].max(1);
        out[d] = rest % e;
        rest /= e;
    }
    out
}

/// Linear index in `domain` of `c`, each coordinate scaled from extent
/// `ext` to the domain's (a collapsed face axis maps to 0).
fn linear(c: &[u64; 3], ext: &[u64; 3], domain: &[u64]) -> u64 {
    let mut p = 0u64;
    for (d, &e) in domain.iter().enumerate().take(3) {
        let e = e.max(1);
        let x = (c[d] * e / ext[d].max(1)).min(e - 1);
        p = p * e + x;
    }
    p
}

fn ext3(domain: &[u64]) -> [u64; 3] {
    let mut e = [1u64; 3];
    for (d, x) in domain.iter().enumerate().take(3) {
        e[d] = (*x).max(1);
    }
    e
}

/// The `k` panel unit `c` reads at step `s` of its `steps`, and how many
/// panels there are along `k` (`layers` is the grid's third extent).
fn panel(stagger: Stagger, c: [u64; 3], s: u64, steps: u64, layers: u64) -> (u64, u64) {
    let steps = steps.max(1);
    match stagger {
        Stagger::None => (s % steps, steps),
        Stagger::NodeRows | Stagger::Cannon => {
            // `gx` node steps of 2 GPU steps each (`divide(k, ko, ki, gx)`,
            // `divide(ki, kio, kii, 2)`); unit (i, j) is GPU (iln, jln) of
            // node (in, jn) in the 2x2 GPU grid of every node.
            let inner = if steps.is_multiple_of(2) { 2 } else { 1 };
            let outer = steps / inner;
            let (ko, kio) = (s / inner, s % inner);
            let (i_n, j_n, i_l, j_l) = (c[0] / 2, c[1] / 2, c[0] % 2, c[1] % 2);
            let (ko, kio) = if stagger == Stagger::Cannon {
                ((ko + i_n + j_n) % outer, (kio + i_l + j_l) % inner)
            } else {
                ((ko + i_n) % outer, kio)
            };
            (ko * inner + kio, steps)
        }
        Stagger::Layers => (
            c[2] * steps + (s + c[0] + c[1]) % steps,
            steps * layers.max(1),
        ),
    }
}

/// The placement indices along one axis of extent `p` that coordinate `x`
/// of extent `ext` covers (several when the placement is finer).
fn span(x: u64, ext: u64, p: u64) -> std::ops::Range<u64> {
    let (ext, p) = (ext.max(1), p.max(1));
    let lo = (x * p / ext).min(p - 1);
    let hi = ((x + 1) * p).div_ceil(ext).clamp(lo + 1, p);
    lo..hi
}

/// The placement pieces holding `input`'s tile read by GEMM unit
/// `unit_piece` at step `s`, each with the share of the tile it holds,
/// into `out`.
fn tiles(
    tasks: &[TaskPlan],
    g: &GemmPlan,
    input: &Input,
    unit_piece: u32,
    s: u32,
    steps: u32,
    out: &mut Vec<(u64, f64)>,
) {
    out.clear();
    let pdom = &tasks[input.placement].task.domain;
    match g.shape {
        Shape::Stepped { parent, stagger } => {
            let dom = &tasks[parent].task.domain;
            let c = coords(u64::from(unit_piece), dom);
            let e = ext3(dom);
            let (k, k_ext) = panel(stagger, c, u64::from(s), u64::from(steps), e[2]);
            let p = ext3(pdom);
            let (rows, cols) = match input.operand {
                Operand::B => (span(c[0], e[0], p[0]), span(k, k_ext, p[1])),
                Operand::C => (span(k, k_ext, p[0]), span(c[1], e[1], p[1])),
            };
            let share = 1.0 / ((rows.end - rows.start) * (cols.end - cols.start)) as f64;
            for r in rows {
                for q in cols.clone() {
                    out.push(((r * p[1] + q) * p[2], share));
                }
            }
        }
        Shape::Projected => {
            let dom = &tasks[g.task].task.domain;
            let c = coords(u64::from(unit_piece), dom);
            out.push((linear(&c, &ext3(dom), pdom), 1.0));
        }
    }
}

/// One copy a GEMM step waits for.
struct Fetch {
    /// Index of the (unit, step) job.
    job: usize,
    route: Route,
    bytes: f64,
}

/// What one timed launch of the GEMM task took.
pub struct Launched {
    pub span: f64,
    pub exposed: f64,
}

/// Times one launch of the GEMM task: the tile copies of every step
/// (shared links share bandwidth among the copies issued together) and the
/// GEMMs run one after another on each processor as their tiles arrive.
///
/// `base` are the launch's other copies (coherence, staging) per
/// destination processor, `per_exec` the seconds of one execution of each
/// unit. Bytes per resource are added to `totals`, busy time to `busy`.
#[allow(clippy::too_many_arguments)]
pub fn launch(
    (tasks, topo): (&[TaskPlan], &Topo),
    g: &GemmPlan,
    t: &TaskPlan,
    base: &[(ProcId, Route, f64)],
    per_exec: &[f64],
    totals: &mut Vec<(Resource, f64)>,
    busy: &mut [f64],
) -> Launched {
    // Jobs: (unit index, step), in the order each processor runs them.
    let mut jobs: Vec<(usize, u32)> = Vec::new();
    for (ui, u) in t.units.iter().enumerate() {
        for s in 0..u.execs.max(1) {
            jobs.push((ui, s));
        }
    }
    // Steps mapped ahead unless InstanceLimit holds the next one back.
    let serial =
        matches!(g.shape, Shape::Stepped { .. }) && t.instance_limit.is_some_and(|n| n <= 1);
    let collect = t.collect_memory;
    let mut fetches: Vec<Fetch> = Vec::new();
    // (operand, tile, destination memory, job or 0) already copied.
    let mut seen: Vec<(Operand, u64, MemId, u32)> = Vec::new();
    let mut pieces: Vec<(u64, f64)> = Vec::new();
    for (job, &(ui, s)) in jobs.iter().enumerate() {
        let u = &t.units[ui];
        for input in &g.inputs {
            let Some(ca) = t.args.get(input.arg) else {
                continue;
            };
            let Some(dst) = topo.home(u.proc, ca.mem) else {
                continue;
            };
            let placement = &tasks[input.placement];
            let Some(pa) = placement.args.get(input.placement_arg) else {
                continue;
            };
            tiles(tasks, g, input, u.piece, s, u.execs, &mut pieces);
            for &(piece, share) in &pieces {
                let Some(owner) = placement.units.iter().find(|x| u64::from(x.piece) == piece)
                else {
                    continue;
                };
                let Some(src) = topo.home(owner.proc, pa.mem) else {
                    continue;
                };
                if src == dst {
                    continue;
                }
                // A tile already copied into this memory is reused: within the
                // steps mapped together, and across steps unless CollectMemory
                // frees each step's instances.
                // Steps run one at a time and CollectMemory frees each one's
                // instances: no reuse. Otherwise an instance once made stays.
                let key_group = if serial && collect { job as u32 } else { 0 };
                let key = (input.operand, piece, dst, key_group);
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
                fetches.push(Fetch {
                    job,
                    route: topo.route(src, dst),
                    bytes: input.bytes * share,
                });
            }
        }
    }

    // Contention per group of copies issued together: all of them when
    // the steps are mapped ahead, one step at a time when they are not.
    let groups = if serial {
        jobs.iter().map(|j| j.1).max().unwrap_or(0) + 1
    } else {
        1
    };
    let mut ready = vec![0.0f64; jobs.len()];
    let mut base_ready: Vec<(ProcId, f64)> = Vec::new();
    let mut res: Vec<(Resource, f64, f64, f64)> = Vec::new();
    for group in 0..groups {
        res.clear();
        let in_group = |f: &Fetch| !serial || jobs[f.job].1 == group;
        let add = |res: &mut Vec<(Resource, f64, f64, f64)>, route: &Route, bytes: f64| {
            for h in route.legs() {
                match res.iter_mut().find(|r| r.0 == h.res) {
                    Some(r) => {
                        r.1 += bytes;
                        r.2 = r.2.max(h.latency_s);
                    }
                    None => res.push((h.res, bytes, h.latency_s, h.bytes_per_s)),
                }
            }
        };
        if group == 0 {
            for (_, route, bytes) in base {
                add(&mut res, route, *bytes);
            }
        }
        for f in fetches.iter().filter(|f| in_group(f)) {
            add(&mut res, &f.route, f.bytes);
        }
        let finish = |res: &[(Resource, f64, f64, f64)], route: &Route| {
            let mut fin: f64 = 0.0;
            for h in route.legs() {
                if let Some(r) = res.iter().find(|r| r.0 == h.res) {
                    fin = fin.max(r.2 + r.1 / r.3);
                }
            }
            fin
        };
        if group == 0 {
            for (p, route, _) in base {
                let fin = finish(&res, route);
                match base_ready.iter_mut().find(|x| x.0 == *p) {
                    Some(x) => x.1 = x.1.max(fin),
                    None => base_ready.push((*p, fin)),
                }
            }
        }
        for f in fetches.iter().filter(|f| in_group(f)) {
            ready[f.job] = ready[f.job].max(finish(&res, &f.route));
        }
        for r in &res {
            match totals.iter_mut().find(|x| x.0 == r.0) {
                Some(x) => x.1 += r.1,
                None => totals.push((r.0, r.1)),
            }
        }
    }

    // Each processor runs its jobs in order.
    // (proc, clock, compute, whether a job ran on it yet)
    let mut procs: Vec<(ProcId, f64, f64, bool)> = Vec::new();
    for (job, &(ui, _)) in jobs.iter().enumerate() {
        let p = t.units[ui].proc;
        let start = base_ready.iter().find(|x| x.0 == p).map_or(0.0, |x| x.1);
        let slot = match procs.iter().position(|x| x.0 == p) {
            Some(i) => i,
            None => {
                procs.push((p, start, 0.0, false));
                procs.len() - 1
            }
        };
        let exec = per_exec.get(ui).copied().unwrap_or(0.0);
        let clock = procs[slot].1;
        let first = !procs[slot].3;
        procs[slot].3 = true;
        procs[slot].1 = if serial && !first {
            // Mapped when the previous step finished: its copies start then.
            clock + ready[job] + exec
        } else if serial {
            // The first step's copies were issued with the launch's other
            // copies, from its start, as `start` was: wait for both, once.
            start.max(ready[job]) + exec
        } else {
            clock.max(start + ready[job]) + exec
        };
        procs[slot].2 += exec;
    }
    let mut span: f64 = 0.0;
    let mut exposed: f64 = 0.0;
    for &(p, clock, compute, _) in &procs {
        span = span.max(clock);
        exposed = exposed.max(clock - compute);
        busy[p] += compute;
    }
    Launched { span, exposed }
}

/// Copies of the partial `A` tiles into the placement of `A` (3-D GEMMs),
/// for consumer unit `piece` of the placement task on processor `proc`.
pub fn reduction_copies(
    (tasks, topo): (&[TaskPlan], &Topo),
    g: &GemmPlan,
    consumer: &TaskPlan,
    proc: ProcId,
    piece: u32,
    out: &mut Vec<(ProcId, Route, f64)>,
) {
    let Some(r) = &g.reduce else {
        return;
    };
    let gemm = &tasks[g.task];
    let (Some(ga), Some(ca)) = (gemm.args.get(r.arg), consumer.args.get(r.placement_arg)) else {
        return;
    };
    let Some(dst) = topo.home(proc, ca.mem) else {
        return;
    };
    // A stepped GEMM's units are its parent's points; their layer-0 A
    // tiles are the placement's own pieces, which coherence follows.
    let (dom, stepped) = match g.shape {
        Shape::Stepped { parent, .. } => (&tasks[parent].task.domain, true),
        Shape::Projected => (&gemm.task.domain, false),
    };
    let pdom = &consumer.task.domain;
    for u in &gemm.units {
        let c = coords(u64::from(u.piece), dom);
        if stepped && c[2] == 0 {
            continue;
        }
        if linear(&c, &ext3(dom), pdom) != u64::from(piece) {
            continue;
        }
        let Some(src) = topo.home(u.proc, ga.mem) else {
            continue;
        };
        if src != dst {
            out.push((proc, topo.route(src, dst), r.bytes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_are_row_major_and_faces_collapse() {
        assert_eq!(coords(3, &[2, 2]), [1, 1, 0]);
        assert_eq!(coords(5, &[2, 2, 2]), [1, 0, 1]);
        // Johnson's B placement (2,1,2): point (1,1,1) reads the tile on (1,0,1).
        assert_eq!(linear(&[1, 1, 1], &[2, 2, 2], &[2, 1, 2]), 3);
        // Its C placement (1,2,2): (1,1,1) reads (0,1,1).
        assert_eq!(linear(&[1, 1, 1], &[2, 2, 2], &[1, 2, 2]), 3);
        assert_eq!(linear(&[1, 0, 0], &[2, 2, 1], &[2, 2, 1]), 2);
    }
}
