//! The engine: checks a plan the way a real run would fail, then schedules
//! one steady-state iteration of the main loop.
//!
//! Checks, in program order (task by task in description order): the
//! instances a task needs must fit the memories they go to (else Legion's
//! default-mapper allocation failure), its instances must satisfy the layout
//! its libraries require (else cuBLAS's or Regent's complaint), and
//! `InstanceLimit` must not be put on an index launch (else the DSL mapper's
//! `event.exists()` assertion).
//!
//! Schedule: the loop's tasks run in description order, each launch after
//! the previous one (each consumes what the previous produced). A launch is
//! a copy phase then a compute phase per processor:
//! - copies: a piece read in a memory that holds no valid copy of it is
//!   copied from the fastest valid one (Legion's coherence; written pieces
//!   invalidate other copies); cross-piece flows of the application (halo,
//!   shift, broadcast, reduction, gather) copy when producer and consumer
//!   instances differ; a GPU given memory it cannot reach stages its data
//!   in and out. Copies on the same link share its bandwidth; a processor
//!   starts computing when the links feeding it have drained.
//! - compute: each point task takes `max(flops / rate, bytes / bandwidth)`
//!   (a roofline) plus launch costs; points on one processor run one after
//!   another; shared memories split their bandwidth among the processors
//!   using them. The launch ends with its slowest processor (imbalance).
//!
//! The loop is run twice and the second pass measured, so the copies are
//! those of the steady state, not of the first touch.

use mapwright_grammar::fast_hash::FastMap;

use crate::app::FlowKind;
use crate::app::Launch;
use crate::machine::ProcKind;

use super::model;
use super::plan::{ArgPlan, Plan, TaskPlan, Unit};
use super::topology::{MemId, ProcId, Resource, Route};
use super::Failure;

/// What the schedule measured for one iteration.
#[derive(Debug, Default)]
pub struct Measured {
    /// Time of one timed iteration, seconds.
    pub iteration_s: f64,
    /// Per task: seconds per iteration.
    pub task_s: Vec<f64>,
    /// Per task: processor seconds of its point runs per iteration, and how
    /// many point runs (their ratio is the model's time of one run).
    pub task_compute_s: Vec<f64>,
    pub task_execs: Vec<u64>,
    /// Per processor: busy seconds per iteration.
    pub busy_s: Vec<f64>,
    /// Per resource: bytes per iteration.
    pub copy_bytes: Vec<(Resource, f64)>,
    /// Copy time no computation hides, seconds per iteration.
    pub copy_s: f64,
    /// Flops of one timed iteration.
    pub flops: f64,
    /// Time of the launches outside the loop, seconds.
    pub setup_s: f64,
    /// Peak bytes per memory.
    pub mem_bytes: Vec<u64>,
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

/// Memory usage after placing every instance, or the first failure.
pub fn check(plan: &Plan) -> Result<Vec<u64>, Failure> {
    let topo = &plan.topo;
    let mut usage = vec![0u64; topo.mem_count()];
    // Fields already held per (region, piece, memory, copy slot): a bit
    // per field id, in `words` words at the offset the map gives (one
    // allocation for all keys instead of a list per key).
    let words = plan.field_count.div_ceil(64).max(1);
    let mut held: FastMap<(u32, u32, MemId, u32), usize> = FastMap::default();
    let mut held_bits: Vec<u64> = Vec::new();
    let mut uid: u64 = 0x15;
    for (ti, t) in plan.tasks.iter().enumerate() {
        if !t.active {
            continue;
        }
        uid += 1 + ti as u64;
        let launches = t.launches.max(u32::from(t.setup_launches > 0)).max(1);
        for u in &t.units {
            for a in &t.args {
                // Read-only pieces of successive executions pile up unless
                // CollectMemory lets the mapper free them.
                let slots = if !t.collect_memory
                    && !a.collect
                    && u.execs > 1
                    && !a.writes()
                    && !a.reduces()
                {
                    u.execs
                } else {
                    1
                };
                for l in 0..launches.min(a.per_launch.len() as u32).max(1) {
                    let on = a.on(l);
                    let Some(home) = topo.home(u.proc, on.mem) else {
                        continue;
                    };
                    // The instance, and the framebuffer copy of staged data.
                    let staged_fb = on
                        .staged
                        .then(|| topo.home(u.proc, crate::machine::MemKind::Fbmem))
                        .flatten();
                    for slot in 0..slots {
                        for mem in std::iter::once(home).chain(staged_fb) {
                            let at =
                                *held
                                    .entry((on.region, u.piece, mem, slot))
                                    .or_insert_with(|| {
                                        held_bits.resize(held_bits.len() + words, 0);
                                        held_bits.len() - words
                                    });
                            let have = &mut held_bits[at..at + words];
                            let mut add = 0.0;
                            for &(f, b) in &a.fields {
                                let (w, bit) = (f as usize / 64, 1u64 << (f % 64));
                                if (have[w] & bit) == 0 {
                                    have[w] |= bit;
                                    add += b * on.scale;
                                }
                            }
                            if add <= 0.0 {
                                continue;
                            }
                            let add = add.round() as u64;
                            usage[mem] = usage[mem].saturating_add(add);
                            if usage[mem] > topo.capacity(mem) {
                                return Err(out_of_memory(plan, t, a, u, mem, add, uid));
                            }
                        }
                    }
                }
            }
        }
        if !t.units.is_empty() {
            check_constraints(plan, t)?;
        }
        if t.instance_limit.is_some() && t.task.launch == Launch::Index {
            return Err(Failure::new(
                "event_exists",
                format!(
                    "{prog}: /DSLMapper/src/dsl_mapper.cc:1627: virtual void \
                     NSMapper::report_profiling(Legion::Mapping::MapperContext, const \
                     Legion::Task&, const Legion::Mapping::Mapper::TaskProfilingInfo&): \
                     Assertion `event.exists()' failed.\n",
                    prog = super::output::program_name(plan.app)
                ),
            ));
        }
    }
    Ok(usage)
}

/// Legion's default-mapper allocation failure (ERRORS.md section 3).
fn out_of_memory(
    plan: &Plan,
    t: &TaskPlan,
    a: &ArgPlan,
    u: &Unit,
    mem: MemId,
    size: u64,
    uid: u64,
) -> Failure {
    let topo = &plan.topo;
    let (_, mkind, _) = topo.mem_info(mem);
    let (_, pkind, _) = topo.proc_info(u.proc);
    Failure::new(
        "out_of_memory",
        format!(
            "Default mapper failed allocation of size {size} bytes for region  requirement {req} \
             of task {task} (UID {uid}) in memory {mid:x} ({mname}) for processor {pid:x} \
             ({pname}). This means the working set of your application is too big for the \
             allotted capacity of the given memory under the default mapper's mapping scheme. \
             You have three choices: ask Realm to allocate more memory, write a custom mapper to \
             better manage working sets, or find a bigger machine.\n",
            req = a.arg.index,
            task = t.task.name,
            mid = topo.realm_mem_id(mem),
            mname = mkind.legion_name(),
            pid = topo.realm_proc_id(u.proc),
            pname = pkind.legion_name(),
        ),
    )
}

/// The layout requirements of the libraries a task calls (cuBLAS's
/// ordering, Regent's stride check).
fn check_constraints(plan: &Plan, t: &TaskPlan) -> Result<(), Failure> {
    for a in &t.args {
        for c in plan.app.constraints_for(t.task, t.kind, a.arg) {
            let order_ok = match c.order {
                Some(crate::app::DimOrder::COrder) => a.layout.order == crate::decisions::Order::C,
                Some(crate::app::DimOrder::FOrder) => a.layout.order == crate::decisions::Order::F,
                None => true,
            };
            let fields_ok = match c.field_layout {
                Some(crate::app::FieldLayout::Soa) => a.layout.soa,
                Some(crate::app::FieldLayout::Aos) => !a.layout.soa,
                None => true,
            };
            if order_ok && fields_ok {
                continue;
            }
            let kind = if c.library.eq_ignore_ascii_case("cublas") {
                "cublas_illegal_parameter"
            } else {
                crate::backend::classify_output(&c.error).unwrap_or("library_constraint")
            };
            // The sources keep printf placeholders; a run prints the call
            // site, which no source gives: the generated kernel file.
            let mut text = c
                .error
                .replacen("%s", "taco-generated.cu", 1)
                .replacen("%d", "0", 1);
            if !text.ends_with('\n') {
                text.push('\n');
            }
            return Err(Failure::new(kind, text));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Schedule
// ---------------------------------------------------------------------------

/// Valid copies of each (region, piece).
#[derive(Default)]
struct Coherence {
    valid: FastMap<(u32, u32), Vec<MemId>>,
}

/// Copies and compute of one launch, per processor. One is reused for
/// every launch of a run (cleared, not reallocated).
#[derive(Default)]
struct Phase {
    /// (destination processor, route, bytes).
    copies: Vec<(ProcId, Route, f64)>,
    /// (processor, seconds).
    compute: Vec<(ProcId, f64)>,
    /// (shared memory, processor using it) in this launch.
    sharers: Vec<(MemId, ProcId)>,
}

/// Runs the loop twice and measures the second pass.
pub fn schedule(plan: &Plan, mem_bytes: Vec<u64>) -> Measured {
    let topo = &plan.topo;
    let mut m = Measured {
        task_s: vec![0.0; plan.tasks.len()],
        task_compute_s: vec![0.0; plan.tasks.len()],
        task_execs: vec![0; plan.tasks.len()],
        busy_s: vec![0.0; topo.proc_count()],
        mem_bytes,
        ..Measured::default()
    };
    let mut coh = Coherence::default();
    let mut resources: Vec<(Resource, f64, f64, f64)> = Vec::new();
    let mut copy_finish = vec![0.0f64; topo.proc_count()];
    let mut compute = vec![0.0f64; topo.proc_count()];
    // Bytes per resource in first-use order, so that the per-link totals
    // (several resources can share one label) add up in the same order in
    // every process.
    let mut copy_totals = OrderedTotals::default();
    let mut gemm_totals: Vec<(Resource, f64)> = Vec::new();
    let mut phase = Phase::default();
    let mut touched: Vec<ProcId> = Vec::new();
    for pass in 0..2 {
        let measure = pass == 1;
        for (ti, t) in plan.tasks.iter().enumerate() {
            if !t.active || t.launches == 0 || t.units.is_empty() {
                continue;
            }
            let timed = t.task.timed && measure;
            for l in 0..t.launches {
                // An untimed launch (the warm-up pass, untimed tasks) only
                // moves the valid copies: its copies and compute are not
                // worked out, since nothing would read them.
                launch_phase(plan, ti, t, l, &mut coh, timed, &mut phase);
                if !timed {
                    continue;
                }
                m.task_compute_s[ti] += phase.compute.iter().map(|c| c.1).sum::<f64>();
                m.task_execs[ti] += t.units.iter().map(|u| u64::from(u.execs)).sum::<u64>();
                if let Some(g) = plan.gemm.as_ref().filter(|g| g.task == ti) {
                    // The matmul's GEMM: per-step tile copies and overlap.
                    let per_exec: Vec<f64> = t
                        .units
                        .iter()
                        .zip(&phase.compute)
                        .map(|(u, c)| c.1 / f64::from(u.execs.max(1)))
                        .collect();
                    let r = super::gemm::launch(
                        (&plan.tasks, &plan.topo),
                        g,
                        t,
                        &phase.copies,
                        &per_exec,
                        &mut gemm_totals,
                        &mut m.busy_s,
                    );
                    let launch_s = r.span + model::LEGION_LAUNCH_US * 1e-6;
                    m.task_s[ti] += launch_s;
                    m.iteration_s += launch_s;
                    m.copy_s += r.exposed;
                    continue;
                }
                // Contention: copies on one resource share its bandwidth.
                resources.clear();
                for (_, route, bytes) in &phase.copies {
                    for h in route.legs() {
                        match resources.iter_mut().find(|r| r.0 == h.res) {
                            Some(r) => {
                                r.1 += bytes;
                                r.2 = r.2.max(h.latency_s);
                            }
                            None => resources.push((h.res, *bytes, h.latency_s, h.bytes_per_s)),
                        }
                    }
                }
                touched.clear();
                for (p, route, _) in &phase.copies {
                    let mut fin: f64 = 0.0;
                    for h in route.legs() {
                        if let Some(r) = resources.iter().find(|r| r.0 == h.res) {
                            fin = fin.max(r.2 + r.1 / r.3);
                        }
                    }
                    if copy_finish[*p] == 0.0 && compute[*p] == 0.0 {
                        touched.push(*p);
                    }
                    copy_finish[*p] = copy_finish[*p].max(fin);
                }
                for (p, s) in &phase.compute {
                    if copy_finish[*p] == 0.0 && compute[*p] == 0.0 {
                        touched.push(*p);
                    }
                    compute[*p] += s;
                }
                let mut span: f64 = 0.0;
                let mut exposed: f64 = 0.0;
                for &p in &touched {
                    span = span.max(copy_finish[p] + compute[p]);
                    exposed = exposed.max(copy_finish[p]);
                    m.busy_s[p] += compute[p];
                    copy_finish[p] = 0.0;
                    compute[p] = 0.0;
                }
                let launch_s = span + model::LEGION_LAUNCH_US * 1e-6;
                m.task_s[ti] += launch_s;
                m.iteration_s += launch_s;
                m.copy_s += exposed;
                for r in &resources {
                    copy_totals.add(r.0, r.1);
                }
            }
            if measure && t.task.timed {
                for u in &t.units {
                    m.flops += t.task.work.flops * f64::from(u.execs) * f64::from(t.launches);
                }
            }
        }
    }
    for (r, b) in gemm_totals {
        copy_totals.add(r, b);
    }
    m.copy_bytes = copy_totals.totals;
    m.setup_s = setup_time(plan);
    m
}

/// The copies and compute of launch `l` of task `t` into `phase`,
/// updating coherence; with `costed` false only coherence is updated (the
/// phase is left empty).
fn launch_phase(
    plan: &Plan,
    ti: usize,
    t: &TaskPlan,
    l: u32,
    coh: &mut Coherence,
    costed: bool,
    phase: &mut Phase,
) {
    let topo = &plan.topo;
    phase.copies.clear();
    phase.compute.clear();
    phase.sharers.clear();
    // The GEMM's input operands are read tile by tile as its schedule says
    // (`gemm::launch`), not as the piece the point is named after: no
    // coherence copy of that piece.
    let gemm_inputs: &[super::gemm::Input] = match plan.gemm.as_ref() {
        Some(g) if g.task == ti => &g.inputs,
        _ => &[],
    };
    let cohered = |ai: usize, a: &super::plan::ArgPlan| {
        !a.reduces() && !gemm_inputs.iter().any(|i| i.arg == ai)
    };
    if !costed {
        for u in &t.units {
            for (ai, a) in t.args.iter().enumerate() {
                let on = a.on(l);
                if !cohered(ai, a) {
                    continue;
                }
                let Some(home) = topo.home(u.proc, on.mem) else {
                    continue;
                };
                let valid = coh.valid.entry((on.region, u.piece)).or_default();
                cohere(valid, home, a.reads(), a.writes(), |_| ());
            }
        }
        return;
    }
    // Processors sharing each shared memory in this launch.
    let mut sharers = std::mem::take(&mut phase.sharers);
    for u in &t.units {
        for a in &t.args {
            if let Some(h) = topo.home(u.proc, a.on(l).mem) {
                if topo.is_shared(h) && !sharers.iter().any(|s| s.0 == h && s.1 == u.proc) {
                    sharers.push((h, u.proc));
                }
            }
        }
    }
    let sharing = |mem: MemId| sharers.iter().filter(|s| s.0 == mem).count().max(1) as f64;

    for u in &t.units {
        let execs = f64::from(u.execs);
        for (ai, a) in t.args.iter().enumerate() {
            let on = a.on(l);
            let Some(home) = topo.home(u.proc, on.mem) else {
                continue;
            };
            let bytes = a.arg.bytes as f64 * on.scale;
            // Coherence of the piece this unit works on.
            if cohered(ai, a) {
                let valid = coh.valid.entry((on.region, u.piece)).or_default();
                cohere(valid, home, a.reads(), a.writes(), |valid| {
                    let src = fastest_source(plan, valid, home);
                    phase.copies.push((u.proc, topo.route(src, home), bytes));
                });
            }
            // A GPU staging data it cannot reach: in before, out after.
            if on.staged {
                if let Some(fb) = topo.home(u.proc, crate::machine::MemKind::Fbmem) {
                    if a.reads() || a.reduces() {
                        phase
                            .copies
                            .push((u.proc, topo.route(home, fb), bytes * execs));
                    }
                    if a.writes() || a.reduces() {
                        phase
                            .copies
                            .push((u.proc, topo.route(fb, home), bytes * execs));
                    }
                }
            }
        }
        // Cross-piece flows into this task.
        for f in plan.flows.iter().filter(|f| f.to == ti) {
            flow_copies(plan, f, t, u, &mut phase.copies);
        }
        // A 3-D matmul's partial A tiles fold into A's placement when it
        // is read after the GEMMs (the placement task's last launch).
        if let Some(g) = plan.gemm.as_ref() {
            if g.reduce.as_ref().is_some_and(|r| r.placement == ti) && l + 1 == t.launches {
                super::gemm::reduction_copies(
                    (&plan.tasks, &plan.topo),
                    g,
                    t,
                    u.proc,
                    u.piece,
                    &mut phase.copies,
                );
            }
        }
        phase
            .compute
            .push((u.proc, execs * point_time(plan, t, u, l, &sharing)));
    }
    phase.sharers = sharers;
}

/// Legion coherence of one piece accessed in `home`: a read where no valid
/// copy is calls `copy` with the valid copies (before `home` joins them);
/// a write leaves `home` the only valid copy.
fn cohere(
    valid: &mut Vec<MemId>,
    home: MemId,
    reads: bool,
    writes: bool,
    copy: impl FnOnce(&[MemId]),
) {
    if reads && !valid.is_empty() && !valid.contains(&home) {
        copy(valid);
        valid.push(home);
    }
    if writes || valid.is_empty() {
        valid.clear();
        valid.push(home);
    }
}

/// Sums per resource, kept in the order each resource was first seen.
#[derive(Default)]
struct OrderedTotals {
    index: FastMap<Resource, usize>,
    totals: Vec<(Resource, f64)>,
}

impl OrderedTotals {
    fn add(&mut self, r: Resource, bytes: f64) {
        let i = *self.index.entry(r).or_insert_with(|| {
            self.totals.push((r, 0.0));
            self.totals.len() - 1
        });
        self.totals[i].1 += bytes;
    }
}

/// The valid copy nearest `dst` (Legion's `-tm:select_source_by_bandwidth`):
/// the one whose route has the highest bottleneck bandwidth.
fn fastest_source(plan: &Plan, valid: &[MemId], dst: MemId) -> MemId {
    let mut best = valid[0];
    let mut best_bw = -1.0;
    for &src in valid {
        let r = plan.topo.route(src, dst);
        let bw = r
            .legs()
            .map(|h| h.bytes_per_s)
            .fold(f64::INFINITY, f64::min);
        if bw > best_bw {
            best_bw = bw;
            best = src;
        }
    }
    best
}

/// Copies one consumer unit needs along a cross-piece flow.
fn flow_copies(
    plan: &Plan,
    f: &super::plan::FlowPlan,
    consumer: &TaskPlan,
    u: &Unit,
    out: &mut Vec<(ProcId, Route, f64)>,
) {
    let topo = &plan.topo;
    let producer = &plan.tasks[f.from];
    let (Some(pa), Some(ca)) = (producer.args.get(f.from_arg), consumer.args.get(f.to_arg)) else {
        return;
    };
    let np = producer.units.len();
    let nc = consumer.units.len().max(1);
    if np == 0 {
        return;
    }
    let Some(dst) = topo.home(u.proc, ca.mem) else {
        return;
    };
    // One copy from producer point `j` (none when both instances share a
    // memory).
    let mut copy_from = |j: usize, bytes: f64| {
        let Some(pu) = producer.units.get(j) else {
            return;
        };
        let Some(src) = topo.home(pu.proc, pa.mem) else {
            return;
        };
        if src != dst && bytes > 0.0 {
            out.push((u.proc, topo.route(src, dst), bytes));
        }
    };
    // The partition's grid of tiles (stencil's ghost strips, pennant's
    // column of pieces, circuit's superpieces): one producer per flow, at
    // the flow's offset from this consumer; a tile on the grid's edge has
    // none there. Worked out without a list: these flows are most of the
    // Regent apps' and this runs per unit per launch.
    if let Some(step) = f.step.filter(|s| {
        matches!(f.kind, FlowKind::Halo | FlowKind::Reduction) && s.tiles() == np as u64 && np == nc
    }) {
        if let Some(j) = step.neighbour(u.piece) {
            copy_from(j as usize, f.bytes * f64::from(u.execs));
        }
        return;
    }
    let i = consumer
        .units
        .iter()
        .position(|x| x.piece == u.piece)
        .unwrap_or(0);
    // The producer piece "opposite" consumer piece i.
    let ip = i * np / nc;
    let mut sources: Vec<usize> = Vec::new();
    let mut share = 1.0;
    match f.kind {
        FlowKind::Halo | FlowKind::Reduction if np <= nc => {
            // Neighbouring pieces of a 1-D decomposition.
            if ip > 0 {
                sources.push(ip - 1);
            }
            if ip + 1 < np {
                sources.push(ip + 1);
            }
            share = 1.0 / sources.len().max(1) as f64;
        }
        FlowKind::Reduction => {
            // Partial results of several producer points fold into one
            // owner; each partial is a whole piece.
            sources.extend((0..np).filter(|j| j * nc / np == i));
        }
        FlowKind::Shift | FlowKind::Broadcast => sources.push((ip + 1) % np),
        FlowKind::Gather => {
            sources.extend(0..np);
            share = 1.0 / np as f64;
        }
        FlowKind::Halo | FlowKind::SamePoint => {}
    }
    let bytes = f.bytes * share * f64::from(u.execs);
    for j in sources {
        copy_from(j, bytes);
    }
}

/// Seconds one execution of a point task takes on its processor.
fn point_time(plan: &Plan, t: &TaskPlan, u: &Unit, l: u32, sharing: &dyn Fn(MemId) -> f64) -> f64 {
    let topo = &plan.topo;
    let work = &t.task.work;
    let (rate, launch_us) = match t.group {
        Some(g) => {
            let peak = match work.precision {
                crate::app::Precision::Fp64 => g.gflops_fp64,
                crate::app::Precision::Fp32 => g.gflops_fp32,
            };
            (
                peak * 1e9
                    * model::compute_eff(
                        t.kind,
                        model::Kernel::of(t.gemm, &plan.app.communication.pattern),
                    ),
                g.launch_overhead_us,
            )
        }
        None => (1e9, 0.0),
    };
    let t_flops = if work.flops > 0.0 {
        work.flops / rate.max(1.0)
    } else {
        0.0
    };
    // Local accesses (a GPU's own framebuffer, a host core's memories)
    // overlap with computation (roofline); remote ones (zero-copy over
    // PCIe, staged data) stall warps on microsecond latencies that
    // occupancy cannot hide, so their time adds.
    let mut t_local = 0.0;
    let mut t_remote = 0.0;
    let mut latency = 0.0f64;
    let mut touched = 0.0;
    for a in &t.args {
        let on = a.on(l);
        let Some(mut mem) = topo.home(u.proc, on.mem) else {
            continue;
        };
        if on.staged {
            if let Some(fb) = topo.home(u.proc, crate::machine::MemKind::Fbmem) {
                mem = fb;
            }
        }
        let (mut bw, lat) = topo.access(u.proc, mem).unwrap_or((1e9, 1e-5));
        if topo.is_shared(mem) {
            bw = bw.min(topo.mem_bandwidth(mem) / sharing(mem));
        }
        let eff = model::layout_eff(
            t.kind,
            &a.layout,
            plan.native,
            a.arg.dims,
            a.accessed_per_elem,
            a.struct_per_elem,
        );
        let bytes = a.touch_bytes * on.scale;
        let s = bytes / (bw * eff).max(1.0);
        touched += bytes;
        let (_, mkind, _) = topo.mem_info(mem);
        if model::is_gpu(t.kind) && mkind != crate::machine::MemKind::Fbmem {
            t_remote += s;
            latency += model::ZEROCOPY_TASK_US * 1e-6;
        } else {
            t_local += s;
        }
        latency = latency.max(lat);
    }
    if touched == 0.0 && work.bytes > 0.0 {
        // Work without region arguments streams from the processor's best
        // memory.
        let (_, kind, _) = topo.proc_info(u.proc);
        let best = topo
            .machine
            .reachable(kind)
            .first()
            .copied()
            .and_then(|k| topo.home(u.proc, k));
        let bw = best
            .and_then(|m| topo.access(u.proc, m))
            .map_or(1e9, |x| x.0);
        t_local = work.bytes / bw;
    }
    t_flops.max(t_local)
        + t_remote
        + latency
        + (launch_us + work.fixed_us + model::LEGION_TASK_US) * 1e-6
}

/// Time of the launches outside the loop: for each, its slowest point.
fn setup_time(plan: &Plan) -> f64 {
    let none = |_: MemId| 1.0;
    let mut total = 0.0;
    for t in &plan.tasks {
        if !t.active || t.setup_launches == 0 {
            continue;
        }
        let mut per_proc: Vec<(ProcId, f64)> = Vec::new();
        let single_exec = t.task.per_iteration == 0;
        for u in &t.units {
            let execs = if single_exec { f64::from(u.execs) } else { 1.0 };
            let s = execs * point_time(plan, t, u, 0, &none);
            match per_proc.iter_mut().find(|x| x.0 == u.proc) {
                Some(x) => x.1 += s,
                None => per_proc.push((u.proc, s)),
            }
        }
        let slowest = per_proc.iter().map(|x| x.1).fold(0.0, f64::max);
        let launches = if single_exec && t.task.launch == Launch::Single && t.units.len() > 1 {
            1.0
        } else {
            f64::from(t.setup_launches)
        };
        total += launches * (slowest + model::LEGION_LAUNCH_US * 1e-6);
    }
    total
}

/// Processor kinds the timed tasks run on.
pub fn timed_kinds(plan: &Plan) -> Vec<ProcKind> {
    let mut kinds: Vec<ProcKind> = Vec::new();
    for t in &plan.tasks {
        if t.active && t.task.timed && t.launches > 0 && !kinds.contains(&t.kind) {
            kinds.push(t.kind);
        }
    }
    kinds
}
