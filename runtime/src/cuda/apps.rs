//! The core loops of the nine benchmarks, driven through the
//! [`Executor`]: their regions, initial data, one iteration's launches and
//! data movement (halos, ghosts, tiles, reductions), and the checks of the
//! results.
//!
//! Each driver takes the placements ([`TaskPlace`]) of its kernel tasks, so
//! the same code runs a mapper's decisions on GPUs and CPUs, and the CPU
//! reference ([`reference_places`]: everything on host threads, in host
//! memory, default layout).

use crate::decisions::LayoutDecision;
use crate::machine::{MemKind, ProcKind};

use super::exec::{Access, Executor, InstId, RegionSpec};
use super::kernels::Kernel;
use super::layout::Rect;
use super::plan::{ArgPlace, Loc, Proc, TaskPlace, Workload};
use super::tiles::{Operand, TileGrid};
use super::CudaError;

/// Time step of circuit's kernels.
const CIRCUIT_DT: f64 = 1e-3;
/// Half time step of pennant's `adv_pos_half` (a power of two, so the
/// positions stay exact).
const PENNANT_DT: f64 = 0.125;

/// The regions of a workload (with their pieces).
pub fn regions(w: &Workload) -> Vec<RegionSpec> {
    let spec = |name: &str, fields: usize, pieces: Vec<[u64; 2]>| RegionSpec {
        name: name.to_string(),
        fields,
        pieces,
    };
    match *w {
        Workload::Stencil {
            pieces,
            rows,
            cols,
            radius,
        } => vec![spec("private", 2, vec![[rows + 2 * radius, cols]; pieces])],
        Workload::Circuit {
            pieces,
            private,
            shared,
            wires,
            ..
        } => {
            let ghost = (neighbours(0, pieces).len() as u64 * shared).max(1);
            vec![
                spec("rp_private", 4, vec![[private, 1]; pieces]),
                spec("rp_shared", 4, vec![[shared, 1]; pieces]),
                spec("rp_ghost", 4, vec![[ghost, 1]; pieces]),
                spec("rp_wires", 6, vec![[wires, 1]; pieces]),
            ]
        }
        Workload::Pennant { pieces, zx, zy } => vec![
            spec(
                "rp_all_private_p",
                4,
                vec![[(zx + 1) * (zy + 1), 1]; pieces],
            ),
            spec("rz_all_p", 4, vec![[zx * zy, 1]; pieces]),
            spec("rs_all_p", 4, vec![[4 * zx * zy, 1]; pieces]),
        ],
        Workload::Gemm { n, grid, .. } => {
            let [gi, gj, gk] = grid;
            vec![
                spec("A", 1, vec![[n, n]; gi * gj]),
                spec("B", 1, vec![[n, n]; gi * gk]),
                spec("C", 1, vec![[n, n]; gk * gj]),
                spec("partial", 1, vec![[n, n]; gi * gj * gk]),
            ]
        }
    }
}

/// The pieces a circuit piece takes ghost nodes from: its neighbours on a
/// ring, without itself and without repeats.
pub fn neighbours(p: usize, pieces: usize) -> Vec<usize> {
    let mut v = Vec::new();
    for q in [(p + pieces - 1) % pieces.max(1), (p + 1) % pieces.max(1)] {
        if q != p && !v.contains(&q) {
            v.push(q);
        }
    }
    v
}

/// Placements that run everything on host threads in host memory with
/// Legion's default layout: the CPU reference.
pub fn reference_places(w: &Workload, threads: usize) -> Vec<TaskPlace> {
    super::plan::kernel_tasks(w)
        .iter()
        .map(|t| TaskPlace {
            task: t.to_string(),
            kind: ProcKind::Omp,
            units: vec![Proc::Omp(0, threads.max(1)); w.units()],
            args: vec![
                ArgPlace {
                    mem: MemKind::Sysmem,
                    layout: LayoutDecision::default(),
                };
                8
            ],
        })
        .collect()
}

/// A small deterministic hash (splitmix64's finaliser).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Where an argument's instance is for a unit on `proc`: a GPU given
/// pageable host memory works on a staged copy in its framebuffer.
fn where_for(proc: Proc, ap: &ArgPlace) -> (Loc, bool) {
    match (proc, ap.loc(proc)) {
        (Proc::Gpu(g), Loc::Host) => (Loc::Fb(g), true),
        (_, l) => (l, false),
    }
}

/// An argument acquired for one unit; written-back after the kernel when
/// it was staged and written.
struct Used {
    region: usize,
    piece: usize,
    id: InstId,
    staged: bool,
    access: Access,
    layout: LayoutDecision,
}

fn use_arg(
    ex: &mut Executor,
    proc: Proc,
    region: usize,
    piece: usize,
    ap: &ArgPlace,
    access: Access,
) -> Result<Used, CudaError> {
    let (loc, staged) = where_for(proc, ap);
    if staged {
        // The data's home is host memory: make sure a host instance exists
        // (the first touch), then copy in.
        ex.instance(region, piece, Loc::Host, &ap.layout)?;
    }
    let id = ex.acquire(proc, region, piece, loc, &ap.layout, access)?;
    Ok(Used {
        region,
        piece,
        id,
        staged,
        access,
        layout: ap.layout,
    })
}

/// Copies staged, written arguments back to host memory (on the unit's
/// stream, after its kernel), so host memory is again the data's only home.
fn write_back(ex: &mut Executor, proc: Proc, used: &[Used]) -> Result<(), CudaError> {
    for u in used {
        if u.staged && u.access != Access::Read {
            ex.acquire(
                proc,
                u.region,
                u.piece,
                Loc::Host,
                &u.layout,
                Access::ReadWrite,
            )?;
        }
    }
    Ok(())
}

fn ids(used: &[Used]) -> Vec<InstId> {
    used.iter().map(|u| u.id).collect()
}

/// Creates the workload's data where its first task keeps it.
pub fn init(ex: &mut Executor, w: &Workload, places: &[TaskPlace]) -> Result<(), CudaError> {
    let home = |t: usize, arg: usize, unit: usize| {
        let proc = places[t].units[unit];
        let ap = places[t].arg(arg);
        (where_for(proc, &ap), ap.layout)
    };
    match *w {
        Workload::Stencil {
            pieces,
            rows,
            radius,
            ..
        } => {
            for p in 0..pieces {
                let ((loc, staged), l) = home(0, 0, p);
                let loc = if staged { Loc::Host } else { loc };
                let base = p as u64 * rows;
                ex.init(0, p, loc, &l, &|f, i, j| {
                    if f == 0 {
                        (base + i) as f64 - radius as f64 + j as f64
                    } else {
                        0.0
                    }
                })?;
            }
        }
        Workload::Circuit {
            pieces,
            private,
            shared,
            ..
        } => {
            for p in 0..pieces {
                let seed = p as u64;
                for (region, arg) in [(0usize, 0usize), (1, 1)] {
                    let ((loc, staged), l) = home(0, arg, p);
                    let loc = if staged { Loc::Host } else { loc };
                    ex.init(region, p, loc, &l, &|f, i, _| {
                        let h = mix(seed << 40 ^ (region as u64) << 32 ^ i);
                        match f {
                            0 => 1.0 + (h % 4) as f64 * 0.25,
                            1 => 0.01 * (1 + h % 3) as f64,
                            2 => 0.0,
                            _ => (h % 1000) as f64 / 1000.0,
                        }
                    })?;
                }
                let ((loc, staged), l) = home(0, 2, p);
                let loc = if staged { Loc::Host } else { loc };
                ex.init(2, p, loc, &l, &|_, _, _| 0.0)?;
                let ghosts = neighbours(p, pieces).len() as u64 * shared;
                let ((loc, staged), l) = home(0, 4, p);
                let loc = if staged { Loc::Host } else { loc };
                ex.init(3, p, loc, &l, &|f, i, _| {
                    let h = mix(seed << 40 ^ 0xabc << 20 ^ i);
                    let local = private + shared;
                    match f {
                        0 => (h % local) as f64,
                        1 => {
                            if ghosts > 0 && (h >> 20).is_multiple_of(5) {
                                (local + (h >> 24) % ghosts) as f64
                            } else {
                                ((h >> 24) % local) as f64
                            }
                        }
                        2 => 1.0 + ((h >> 8) % 4) as f64 * 0.25,
                        3 => 0.5 + ((h >> 12) % 4) as f64 * 0.5,
                        4 => 1.0,
                        _ => 0.0,
                    }
                })?;
            }
        }
        Workload::Pennant { pieces, zx, zy } => {
            let cols = zx + 1;
            for p in 0..pieces {
                let ((loc, staged), l) = home(0, 1, p);
                let loc = if staged { Loc::Host } else { loc };
                ex.init(0, p, loc, &l, &|f, i, _| {
                    let (r, c) = (i / cols, i % cols);
                    match f {
                        0 => c as f64,
                        1 => (p as u64 * zy + r) as f64,
                        2 => 1.0,
                        _ => 0.5,
                    }
                })?;
                let ((loc, staged), l) = home(1, 1, p);
                let loc = if staged { Loc::Host } else { loc };
                ex.init(1, p, loc, &l, &|_, _, _| 0.0)?;
                let ((loc, staged), l) = home(1, 4, p);
                let loc = if staged { Loc::Host } else { loc };
                ex.init(2, p, loc, &l, &|f, i, _| {
                    let (z, k) = (i / 4, i % 4);
                    let (r, c) = (z / zx, z % zx);
                    let corner = |k: u64| match k % 4 {
                        0 => r * cols + c,
                        1 => r * cols + c + 1,
                        2 => (r + 1) * cols + c + 1,
                        _ => (r + 1) * cols + c,
                    };
                    match f {
                        0 => z as f64,
                        1 => corner(k) as f64,
                        2 => corner(k + 1) as f64,
                        _ => 0.0,
                    }
                })?;
            }
        }
        Workload::Gemm { n, .. } => {
            let Some(grid) = TileGrid::of(w) else {
                return Ok(());
            };
            for operand in [Operand::A, Operand::B, Operand::C] {
                let region = operand.region();
                for t in grid.tiles(operand) {
                    let ((loc, staged), l) = home(0, region, t.owner);
                    let loc = if staged { Loc::Host } else { loc };
                    let (r0, c0) = (t.row as u64 * n, t.col as u64 * n);
                    ex.init(region, t.piece, loc, &l, &|_, r, c| match operand {
                        Operand::A => 0.0,
                        Operand::B => b_value(r0 + r, c0 + c),
                        Operand::C => c_value(r0 + r, c0 + c),
                    })?;
                }
            }
        }
    }
    Ok(())
}

/// Global `B(r, c)`: small dyadic rationals, so every product and sum of
/// the GEMMs is exact in `f64` whatever the summation order.
pub fn b_value(r: u64, c: u64) -> f64 {
    ((r * 7 + c * 3) % 11) as f64 / 4.0 - 1.25
}

/// Global `C(r, c)`, as [`b_value`].
pub fn c_value(r: u64, c: u64) -> f64 {
    ((r * 5 + c * 9) % 13) as f64 / 8.0 - 0.75
}

/// Runs one iteration of the workload's core loop.
pub fn iteration(ex: &mut Executor, w: &Workload, places: &[TaskPlace]) -> Result<(), CudaError> {
    match *w {
        Workload::Stencil {
            pieces,
            rows,
            cols,
            radius: r,
        } => {
            let total = pieces as u64 * rows;
            ex.begin_launch("stencil");
            for p in 0..pieces {
                let proc = places[0].units[p];
                let used = vec![use_arg(
                    ex,
                    proc,
                    0,
                    p,
                    &places[0].arg(0),
                    Access::ReadWrite,
                )?];
                let dst = used[0].id;
                let l = Rect {
                    lo: [0, 0],
                    len: [r, cols],
                };
                // Halo rows from the neighbours' current data.
                if p > 0 {
                    let src = valid_src(ex, 0, p - 1, ex.loc(dst))?;
                    let rect = Rect { lo: [rows, 0], ..l };
                    ex.copy_rect(proc, src, rect, dst, [0, 0], &[0], false)?;
                }
                if p + 1 < pieces {
                    let src = valid_src(ex, 0, p + 1, ex.loc(dst))?;
                    let rect = Rect { lo: [r, 0], ..l };
                    ex.copy_rect(proc, src, rect, dst, [rows + r, 0], &[0], false)?;
                }
                ex.written(dst);
                // Rows whose global index is at least r from either edge.
                let base = p as u64 * rows;
                let lo = r.max((2 * r).saturating_sub(base));
                let hi = (r + rows).min((total + r).saturating_sub(base + r));
                if hi > lo && cols > 2 * r {
                    let k = Kernel::Stencil {
                        radius: r,
                        rows: (lo, hi),
                        cols: (r, cols - r),
                    };
                    ex.kernel(proc, k, &[dst])?;
                }
                write_back(ex, proc, &used)?;
            }
            ex.end_launch()?;
            ex.begin_launch("increment");
            for p in 0..pieces {
                let proc = places[1].units[p];
                let used = vec![use_arg(
                    ex,
                    proc,
                    0,
                    p,
                    &places[1].arg(0),
                    Access::ReadWrite,
                )?];
                ex.kernel(
                    proc,
                    Kernel::Increment {
                        rows: (r, r + rows),
                    },
                    &ids(&used),
                )?;
                write_back(ex, proc, &used)?;
            }
            ex.end_launch()?;
        }
        Workload::Circuit {
            pieces,
            private,
            shared,
            steps,
            ..
        } => {
            // calculate_new_currents: refresh ghost voltages (and clear
            // their charges) from the neighbours' shared nodes first.
            ex.begin_launch("calculate_new_currents");
            for p in 0..pieces {
                let proc = places[0].units[p];
                let pl = &places[0];
                let mut used = vec![
                    use_arg(ex, proc, 3, p, &pl.arg(4), Access::ReadWrite)?,
                    use_arg(ex, proc, 0, p, &pl.arg(0), Access::Read)?,
                    use_arg(ex, proc, 1, p, &pl.arg(1), Access::Read)?,
                ];
                let ghost = use_arg(ex, proc, 2, p, &pl.arg(2), Access::ReadWrite)?;
                for (k, q) in neighbours(p, pieces).into_iter().enumerate() {
                    let src = valid_src(ex, 1, q, ex.loc(ghost.id))?;
                    let rect = Rect {
                        lo: [0, 0],
                        len: [shared, 1],
                    };
                    ex.copy_rect(
                        proc,
                        src,
                        rect,
                        ghost.id,
                        [k as u64 * shared, 0],
                        &[2, 3],
                        false,
                    )?;
                }
                ex.written(ghost.id);
                used.push(ghost);
                let k = Kernel::Currents {
                    steps,
                    dt: CIRCUIT_DT,
                    private,
                    shared,
                };
                ex.kernel(proc, k, &ids(&used))?;
                write_back(ex, proc, &used)?;
            }
            ex.end_launch()?;
            ex.begin_launch("distribute_charge");
            for p in 0..pieces {
                let proc = places[1].units[p];
                let pl = &places[1];
                let used = vec![
                    use_arg(ex, proc, 3, p, &pl.arg(3), Access::Read)?,
                    use_arg(ex, proc, 0, p, &pl.arg(0), Access::ReadWrite)?,
                    use_arg(ex, proc, 1, p, &pl.arg(1), Access::ReadWrite)?,
                    use_arg(ex, proc, 2, p, &pl.arg(2), Access::ReadWrite)?,
                ];
                let k = Kernel::Charge {
                    dt: CIRCUIT_DT,
                    private,
                    shared,
                };
                ex.kernel(proc, k, &ids(&used))?;
                write_back(ex, proc, &used)?;
            }
            ex.end_launch()?;
            // The ghost charges fold into their owners' shared nodes.
            ex.begin_launch("distribute_charge");
            for p in 0..pieces {
                let proc = places[1].units[p];
                for (k, q) in neighbours(p, pieces).into_iter().enumerate() {
                    let dst = valid_src(ex, 1, q, None)?;
                    let src = valid_src(ex, 2, p, Some(ex.loc(dst)))?;
                    let rect = Rect {
                        lo: [k as u64 * shared, 0],
                        len: [shared, 1],
                    };
                    ex.copy_rect(proc, src, rect, dst, [0, 0], &[2], true)?;
                    ex.written(dst);
                }
            }
            ex.end_launch()?;
            ex.begin_launch("update_voltages");
            for p in 0..pieces {
                let proc = places[2].units[p];
                let pl = &places[2];
                for (region, arg) in [(0usize, 1usize), (1, 3)] {
                    let used = vec![use_arg(
                        ex,
                        proc,
                        region,
                        p,
                        &pl.arg(arg),
                        Access::ReadWrite,
                    )?];
                    ex.kernel(proc, Kernel::Voltages, &ids(&used))?;
                    write_back(ex, proc, &used)?;
                }
            }
            ex.end_launch()?;
        }
        Workload::Pennant { pieces, zx, zy } => {
            let cols = zx + 1;
            for _ in 0..2 {
                ex.begin_launch("adv_pos_half");
                for p in 0..pieces {
                    let proc = places[0].units[p];
                    let used = vec![use_arg(
                        ex,
                        proc,
                        0,
                        p,
                        &places[0].arg(1),
                        Access::ReadWrite,
                    )?];
                    // The top row belongs to the next piece (its ghost here).
                    let own_rows = if p + 1 < pieces { zy } else { zy + 1 };
                    let k = Kernel::AdvPos {
                        dt: PENNANT_DT,
                        range: (0, own_rows * cols),
                    };
                    ex.kernel(proc, k, &ids(&used))?;
                    write_back(ex, proc, &used)?;
                }
                ex.end_launch()?;
                ex.begin_launch("adv_pos_half");
                for p in 0..pieces.saturating_sub(1) {
                    let proc = places[0].units[p];
                    let dst = valid_src(ex, 0, p, None)?;
                    let src = valid_src(ex, 0, p + 1, Some(ex.loc(dst)))?;
                    let rect = Rect {
                        lo: [0, 0],
                        len: [cols, 1],
                    };
                    ex.copy_rect(proc, src, rect, dst, [zy * cols, 0], &[0, 1], false)?;
                    ex.written(dst);
                }
                ex.end_launch()?;
            }
            for (t, name, sides_arg, sides_access, kernel) in [
                (
                    1usize,
                    "calc_centers",
                    4usize,
                    Access::Read,
                    Kernel::Centers,
                ),
                (2, "calc_volumes", 5, Access::ReadWrite, Kernel::Volumes),
            ] {
                ex.begin_launch(name);
                for p in 0..pieces {
                    let proc = places[t].units[p];
                    let pl = &places[t];
                    let used = vec![
                        use_arg(ex, proc, 1, p, &pl.arg(1), Access::ReadWrite)?,
                        use_arg(ex, proc, 2, p, &pl.arg(sides_arg), sides_access)?,
                        use_arg(ex, proc, 0, p, &pl.arg(2), Access::Read)?,
                    ];
                    ex.kernel(proc, kernel, &ids(&used))?;
                    write_back(ex, proc, &used)?;
                }
                ex.end_launch()?;
            }
        }
        Workload::Gemm { n, .. } => {
            let Some(grid) = TileGrid::of(w) else {
                return Ok(());
            };
            let pl = &places[0];
            // taco_fill: A cleared where it lives; B and C refilled at their
            // homes, which invalidates the copies other units made.
            ex.begin_launch("taco_fill");
            for t in grid.tiles(Operand::A) {
                let proc = pl.units[t.owner];
                let used = vec![use_arg(ex, proc, 0, t.piece, &pl.arg(0), Access::Write)?];
                ex.kernel(
                    proc,
                    Kernel::Fill {
                        field: 0,
                        value: 0.0,
                    },
                    &ids(&used),
                )?;
                write_back(ex, proc, &used)?;
            }
            for operand in [Operand::B, Operand::C] {
                let region = operand.region();
                for t in grid.tiles(operand) {
                    let (loc, staged) = where_for(pl.units[t.owner], &pl.arg(region));
                    let loc = if staged { Loc::Host } else { loc };
                    let home = ex.instance(region, t.piece, loc, &pl.arg(region).layout)?;
                    let home = if is_valid(ex, region, t.piece, home) {
                        home
                    } else {
                        valid_src(ex, region, t.piece, Some(loc))?
                    };
                    ex.invalidate_except(region, t.piece, home);
                }
            }
            ex.end_launch()?;
            // A 3-D algorithm writes each product into its own piece of the
            // partial products (region 3), then reduces them into A; a 2-D
            // one accumulates into A, one launch per step.
            let (launches, out, access, accumulate) = if grid.three_d {
                (1, 3, Access::Write, false)
            } else {
                (grid.gk, 0, Access::ReadWrite, true)
            };
            for s in 0..launches {
                ex.begin_launch("task_4");
                for p in grid.products(s) {
                    let proc = pl.units[p.unit];
                    let out_piece = if grid.three_d { p.unit } else { p.a };
                    let used = vec![
                        use_arg(ex, proc, out, out_piece, &pl.arg(0), access)?,
                        use_arg(ex, proc, 1, p.b, &pl.arg(1), Access::Read)?,
                        use_arg(ex, proc, 2, p.c, &pl.arg(2), Access::Read)?,
                    ];
                    ex.kernel(proc, Kernel::Gemm { n, accumulate }, &ids(&used))?;
                    write_back(ex, proc, &used)?;
                }
                ex.end_launch()?;
            }
            if grid.three_d {
                // Reduction of the partial products into A's owner.
                ex.begin_launch("task_4");
                for t in grid.tiles(Operand::A) {
                    let dst = valid_src(ex, 0, t.piece, None)?;
                    for k in 0..grid.gk {
                        let u = grid.unit(t.row, t.col, k);
                        let src = valid_src(ex, 3, u, Some(ex.loc(dst)))?;
                        let rect = Rect {
                            lo: [0, 0],
                            len: [n, n],
                        };
                        ex.copy_rect(pl.units[u], src, rect, dst, [0, 0], &[0], true)?;
                    }
                    ex.written(dst);
                }
                ex.end_launch()?;
            }
        }
    }
    Ok(())
}

fn is_valid(ex: &Executor, region: usize, piece: usize, id: InstId) -> bool {
    ex.is_valid(region, piece, id)
}

/// A valid instance of a piece, preferring one in `near`.
fn valid_src(
    ex: &Executor,
    region: usize,
    piece: usize,
    near: impl Into<Option<Loc>>,
) -> Result<InstId, CudaError> {
    ex.valid_instance(region, piece, near.into())
}

/// The state the checks compare: per region, per piece, per field, the
/// canonical values. GEMM partials are left out.
pub type State = Vec<Vec<Vec<Vec<f64>>>>;

/// Reads back the workload's result state.
pub fn state(ex: &mut Executor, w: &Workload) -> Result<State, CudaError> {
    let specs = regions(w);
    let mut out = Vec::new();
    for (r, spec) in specs.iter().enumerate() {
        if spec.name == "partial" {
            continue;
        }
        let mut pieces = Vec::new();
        for p in 0..spec.pieces.len() {
            pieces.push(ex.read(r, p)?);
        }
        out.push(pieces);
    }
    Ok(out)
}

/// The largest relative difference between two states (`|a - b| / max(1,
/// |b|)`), or a description of the first shape mismatch.
pub fn max_difference(a: &State, b: &State) -> Result<f64, String> {
    let mut worst: f64 = 0.0;
    if a.len() != b.len() {
        return Err("different numbers of regions".into());
    }
    for (r, (ra, rb)) in a.iter().zip(b).enumerate() {
        if ra.len() != rb.len() {
            return Err(format!("region {r}: different numbers of pieces"));
        }
        for (pa, pb) in ra.iter().zip(rb) {
            for (fa, fb) in pa.iter().zip(pb) {
                if fa.len() != fb.len() {
                    return Err(format!("region {r}: different piece sizes"));
                }
                for (x, y) in fa.iter().zip(fb) {
                    let d = (x - y).abs() / y.abs().max(1.0);
                    if !d.is_finite() {
                        return Ok(f64::INFINITY);
                    }
                    worst = worst.max(d);
                }
            }
        }
    }
    Ok(worst)
}

/// Checks the closed-form results a workload has after `iterations`
/// iterations: stencil's interior outputs are `2 x iterations`, pennant's
/// zone areas are 1, and the matmuls' `A = B C` (Freivalds' check with
/// three integer vectors, exact because every value is a small dyadic
/// rational). Returns a description of the first violation.
pub fn check_closed_form(w: &Workload, s: &State, iterations: u32) -> Result<(), String> {
    match *w {
        Workload::Stencil {
            pieces,
            rows,
            cols,
            radius: r,
        } => {
            let total = pieces as u64 * rows;
            let want = 2.0 * f64::from(iterations);
            for (p, piece) in s[0].iter().enumerate() {
                for lr in r..r + rows {
                    let g = p as u64 * rows + lr - r;
                    if g < r || g + r >= total {
                        continue;
                    }
                    for c in r..cols.saturating_sub(r) {
                        let v = piece[1][(lr * cols + c) as usize];
                        if v != want {
                            return Err(format!(
                                "stencil output at global ({g}, {c}) is {v}, expected {want}"
                            ));
                        }
                    }
                }
            }
            Ok(())
        }
        Workload::Pennant { .. } => {
            for (p, piece) in s[1].iter().enumerate() {
                if let Some((z, a)) = piece[2].iter().enumerate().find(|(_, a)| **a != 1.0) {
                    return Err(format!("pennant zone {z} of piece {p} has area {a}, not 1"));
                }
            }
            Ok(())
        }
        Workload::Circuit { .. } => {
            for piece in s.iter().flatten() {
                if piece.iter().flatten().any(|v| !v.is_finite()) {
                    return Err("circuit state holds a non-finite value".into());
                }
            }
            Ok(())
        }
        Workload::Gemm { n, grid, .. } => {
            let [gi, gj, gk] = grid;
            let n = n as usize;
            // Global matrices from the tiles.
            let rows_a = gi * n;
            let cols_a = gj * n;
            let inner = gk * n;
            let a_at = |r: usize, c: usize| s[0][(r / n) * gj + c / n][0][(r % n) * n + c % n];
            for v in 0..3u64 {
                let x: Vec<f64> = (0..cols_a)
                    .map(|c| ((mix(v * 7919 + c as u64) % 5) as f64) - 2.0)
                    .collect();
                let cx: Vec<f64> = (0..inner)
                    .map(|r| {
                        (0..cols_a)
                            .map(|c| c_value(r as u64, c as u64) * x[c])
                            .sum()
                    })
                    .collect();
                for r in 0..rows_a {
                    let bcx: f64 = (0..inner)
                        .map(|l| b_value(r as u64, l as u64) * cx[l])
                        .sum();
                    let ax: f64 = (0..cols_a).map(|c| a_at(r, c) * x[c]).sum();
                    if (ax - bcx).abs() > 1e-9 * bcx.abs().max(1.0) {
                        return Err(format!(
                            "A x != B (C x) at row {r}: {ax} vs {bcx} (GEMM result wrong)"
                        ));
                    }
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::plan::GemmAlgo;
    use crate::decisions::Order;
    use crate::machine::MemKind;

    fn run_host(w: &Workload, places: &[TaskPlace], iters: u32) -> State {
        let mut ex = Executor::new(None, regions(w));
        init(&mut ex, w, places).unwrap();
        for _ in 0..iters {
            iteration(&mut ex, w, places).unwrap();
            ex.finish_iteration().unwrap();
        }
        state(&mut ex, w).unwrap()
    }

    /// Placements on host threads with a given layout and several CPU
    /// processors (round robin), as a CPU-variant mapping would give.
    fn cpu_places(w: &Workload, layout: LayoutDecision, cpus: usize) -> Vec<TaskPlace> {
        super::super::plan::kernel_tasks(w)
            .iter()
            .map(|t| TaskPlace {
                task: t.to_string(),
                kind: ProcKind::Cpu,
                units: (0..w.units()).map(|u| Proc::Cpu(u % cpus)).collect(),
                args: vec![
                    ArgPlace {
                        mem: MemKind::Sysmem,
                        layout,
                    };
                    8
                ],
            })
            .collect()
    }

    fn aos_c() -> LayoutDecision {
        LayoutDecision {
            soa: false,
            order: Order::C,
            ..LayoutDecision::default()
        }
    }

    #[test]
    fn stencil_matches_its_closed_form_and_the_reference_in_any_layout() {
        let w = Workload::Stencil {
            pieces: 3,
            rows: 6,
            cols: 9,
            radius: 2,
        };
        let reference = run_host(&w, &reference_places(&w, 2), 3);
        check_closed_form(&w, &reference, 3).unwrap();
        let other = run_host(&w, &cpu_places(&w, aos_c(), 2), 3);
        assert_eq!(max_difference(&other, &reference).unwrap(), 0.0);
    }

    #[test]
    fn circuit_results_do_not_depend_on_the_mapping() {
        let w = Workload::Circuit {
            pieces: 3,
            private: 40,
            shared: 5,
            wires: 120,
            steps: 4,
        };
        let reference = run_host(&w, &reference_places(&w, 3), 4);
        check_closed_form(&w, &reference, 4).unwrap();
        let other = run_host(&w, &cpu_places(&w, aos_c(), 3), 4);
        assert!(max_difference(&other, &reference).unwrap() < 1e-12);
        // Charge moved: some voltages changed from their initial values.
        let fresh = {
            let mut ex = Executor::new(None, regions(&w));
            init(&mut ex, &w, &reference_places(&w, 1)).unwrap();
            state(&mut ex, &w).unwrap()
        };
        assert!(max_difference(&reference, &fresh).unwrap() > 0.0);
    }

    #[test]
    fn pennant_keeps_unit_areas_and_moves_points() {
        let w = Workload::Pennant {
            pieces: 2,
            zx: 4,
            zy: 3,
        };
        let reference = run_host(&w, &reference_places(&w, 1), 2);
        check_closed_form(&w, &reference, 2).unwrap();
        // Two iterations of two half steps: x moved by 4 * 0.125 * 1.
        assert_eq!(reference[0][0][0][0], 0.5);
        // The shared row of piece 0 follows piece 1's points.
        assert_eq!(reference[0][0][1][3 * 5], reference[0][1][1][0]);
        let other = run_host(&w, &cpu_places(&w, aos_c(), 2), 2);
        assert_eq!(max_difference(&other, &reference).unwrap(), 0.0);
    }

    #[test]
    fn every_matmul_algorithm_computes_the_product() {
        for (algo, grid, three_d) in [
            (GemmAlgo::Cannon, [2, 2, 2], false),
            (GemmAlgo::Summa, [2, 2, 2], false),
            (GemmAlgo::Johnson, [2, 2, 2], true),
            (GemmAlgo::Cosma, [1, 2, 2], true),
        ] {
            let w = Workload::Gemm {
                algo,
                n: 5,
                grid,
                three_d,
            };
            let s = run_host(&w, &reference_places(&w, 1), 2);
            check_closed_form(&w, &s, 2).unwrap();
            let other = run_host(&w, &cpu_places(&w, aos_c(), 3), 1);
            assert_eq!(max_difference(&other, &s).unwrap(), 0.0, "{algo:?}");
        }
    }

    #[test]
    fn a_wrong_product_is_caught() {
        let w = Workload::Gemm {
            algo: GemmAlgo::Summa,
            n: 3,
            grid: [2, 2, 2],
            three_d: false,
        };
        let mut s = run_host(&w, &reference_places(&w, 1), 1);
        s[0][1][0][4] += 0.5;
        assert!(check_closed_form(&w, &s, 1).is_err());
        let st = Workload::Stencil {
            pieces: 2,
            rows: 5,
            cols: 7,
            radius: 2,
        };
        let mut s = run_host(&st, &reference_places(&st, 1), 1);
        s[0][0][1][(4 * 7 + 3) as usize] = 0.0;
        assert!(check_closed_form(&st, &s, 1).is_err());
    }

    #[test]
    fn circuit_pieces_neighbour_around_a_ring() {
        assert_eq!(neighbours(0, 4), vec![3, 1]);
        assert_eq!(neighbours(0, 2), vec![1]);
        assert!(neighbours(0, 1).is_empty());
    }
}
