//! The kernels of the `cuda` backend, once for the host and once as CUDA C
//! source compiled at run time with NVRTC.
//!
//! A [`Kernel`] runs over a one-dimensional domain of items
//! ([`Kernel::items`]); item `t` does the same arithmetic on the host
//! ([`run_items`]) as CUDA thread `t` does on a GPU ([`CUDA_SOURCE`]), and
//! every instance is reached through its [`InstParams`] (base plus the
//! layout's indexing), so a CPU variant, the CPU reference and a GPU run
//! compute the same values whatever the layouts.
//!
//! The core loops (representative, not the full programs):
//! - stencil: the PRK star stencil of radius R (`out += sum_k w_k
//!   (in(i, j+k) - in(i, j-k) + in(i+k, j) - in(i-k, j))`, with
//!   `w_k = 1 / (2kR)`) and `increment` (`in += 1`). With `in = i + j`
//!   every interior point gains exactly 2 per iteration.
//! - circuit: `calculate_new_currents` (ten explicit steps of
//!   `I += dt ((V_in - V_out) - R I) / L` per wire), `distribute_charge`
//!   (`charge_in -= dt I`, `charge_out += dt I`, atomically) and
//!   `update_voltages` (`V = (V + charge / C) (1 - leakage)`, `charge = 0`).
//! - pennant: `adv_pos_half` (`px += dt pu`), `calc_centers` (zone centre =
//!   mean of its corners through the side map) and `calc_volumes` (side
//!   areas as triangle areas around the centre, zone area = their sum).
//! - the matmuls: a tile GEMM `A (+)= B x C` (cuBLAS DGEMM on a GPU).
//! - data movement: `pack` / `unpack` (optionally accumulating) between an
//!   instance's rectangle and a dense buffer, and `fill`.
//!
//! No CUDA is needed to compile or test this module.

use std::sync::atomic::{AtomicU64, Ordering};

use super::layout::{InstParams, Rect, MAX_FIELDS};

/// A kernel and its scalar arguments. Instance arguments are passed
/// separately, as [`InstParams`], in the order each variant documents.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kernel {
    /// `[inst]`: sets `field` to `value` at every point.
    Fill { field: usize, value: f64 },
    /// `[piece]` (fields 0 = input, 1 = output): the star stencil at rows
    /// `rows.0..rows.1` and columns `cols.0..cols.1`.
    Stencil {
        radius: u64,
        rows: (u64, u64),
        cols: (u64, u64),
    },
    /// `[piece]`: `input += 1` at rows `rows.0..rows.1`, every column.
    Increment { rows: (u64, u64) },
    /// `[wires, private, shared, ghost]`.
    Currents {
        steps: u32,
        dt: f64,
        private: u64,
        shared: u64,
    },
    /// `[wires, private, shared, ghost]`.
    Charge { dt: f64, private: u64, shared: u64 },
    /// `[nodes]`.
    Voltages,
    /// `[points]`: `px += dt pu` at points `range.0..range.1`.
    AdvPos { dt: f64, range: (u64, u64) },
    /// `[zones, sides, points]`.
    Centers,
    /// `[zones, sides, points]`.
    Volumes,
    /// `[src, dense]`: copies `fields` of `rect` of `src` into the dense
    /// buffer (field-major, see [`super::layout::packed_index`]).
    Pack { rect: Rect, fields: FieldList },
    /// `[dense, dst]`: the reverse of `Pack` at `rect` of `dst`, adding to
    /// what is there when `accumulate`.
    Unpack {
        rect: Rect,
        fields: FieldList,
        accumulate: bool,
    },
    /// `[a, b, c]`: `a = b x c` (`a += b x c` when `accumulate`) on `n` x
    /// `n` tiles, field 0 of each. The host variant; GPUs call cuBLAS.
    Gemm { n: u64, accumulate: bool },
}

/// Up to [`MAX_FIELDS`] field indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldList {
    pub len: usize,
    pub ids: [usize; MAX_FIELDS],
}

impl FieldList {
    pub fn new(ids: &[usize]) -> FieldList {
        let mut out = FieldList {
            len: ids.len().min(MAX_FIELDS),
            ids: [0; MAX_FIELDS],
        };
        out.ids[..out.len].copy_from_slice(&ids[..out.len]);
        out
    }

    pub fn as_slice(&self) -> &[usize] {
        &self.ids[..self.len]
    }
}

impl Kernel {
    /// Items of the kernel's domain (threads on a GPU), given its
    /// instance arguments.
    pub fn items(&self, args: &[InstParams]) -> u64 {
        let n = |k: usize| args.get(k).map_or(0, |p| (p.n0 * p.n1).max(0) as u64);
        match *self {
            Kernel::Fill { .. } | Kernel::Voltages => n(0),
            Kernel::Stencil { rows, cols, .. } => {
                rows.1.saturating_sub(rows.0) * cols.1.saturating_sub(cols.0)
            }
            Kernel::Increment { rows } => {
                rows.1.saturating_sub(rows.0) * args.first().map_or(0, |p| p.n1 as u64)
            }
            Kernel::Currents { .. } | Kernel::Charge { .. } => n(0),
            Kernel::AdvPos { range, .. } => range.1.saturating_sub(range.0),
            Kernel::Centers | Kernel::Volumes => n(0),
            Kernel::Pack { rect, .. } | Kernel::Unpack { rect, .. } => rect.points(),
            Kernel::Gemm { n, .. } => n * n,
        }
    }

    /// Floating-point operations of one item (for reports).
    pub fn flops_per_item(&self) -> f64 {
        match *self {
            Kernel::Stencil { radius, .. } => 5.0 * radius as f64 + 1.0,
            Kernel::Increment { .. } => 1.0,
            Kernel::Currents { steps, .. } => 6.0 * f64::from(steps),
            Kernel::Charge { .. } => 3.0,
            Kernel::Voltages => 4.0,
            Kernel::AdvPos { .. } => 4.0,
            Kernel::Centers => 10.0,
            Kernel::Volumes => 40.0,
            Kernel::Gemm { n, .. } => 2.0 * n as f64,
            _ => 0.0,
        }
    }

    /// The CUDA function implementing it (GEMM: none, cuBLAS does it).
    pub fn cuda_name(&self) -> Option<&'static str> {
        Some(match self {
            Kernel::Fill { .. } => "mw_fill",
            Kernel::Stencil { .. } => "mw_stencil",
            Kernel::Increment { .. } => "mw_increment",
            Kernel::Currents { .. } => "mw_currents",
            Kernel::Charge { .. } => "mw_charge",
            Kernel::Voltages => "mw_voltages",
            Kernel::AdvPos { .. } => "mw_adv_pos",
            Kernel::Centers => "mw_centers",
            Kernel::Volumes => "mw_volumes",
            Kernel::Pack { .. } => "mw_pack",
            Kernel::Unpack { .. } => "mw_unpack",
            Kernel::Gemm { .. } => return None,
        })
    }
}

/// Address of element `(i, j)` of field `f`.
///
/// # Safety
/// `p` must describe a live allocation and `(f, i, j)` lie inside it.
#[inline]
unsafe fn at(p: &InstParams, f: usize, i: i64, j: i64) -> *mut f64 {
    (p.base as *mut f64).offset((p.f[f] + i * p.s0 + j * p.s1) as isize)
}

/// Element `i` of a 1-D instance's field `f`.
#[inline]
unsafe fn at1(p: &InstParams, f: usize, i: i64) -> *mut f64 {
    at(p, f, i, 0)
}

/// Adds `v` to `*x` atomically (compare-and-swap on the bits).
#[inline]
unsafe fn atomic_add(x: *mut f64, v: f64) {
    let a = &*(x as *const AtomicU64);
    let mut cur = a.load(Ordering::Relaxed);
    loop {
        let new = (f64::from_bits(cur) + v).to_bits();
        match a.compare_exchange_weak(cur, new, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break,
            Err(c) => cur = c,
        }
    }
}

/// The node a circuit wire end points at: private, shared or ghost.
#[inline]
unsafe fn node(
    code: f64,
    private: u64,
    shared: u64,
    p: &InstParams,
    s: &InstParams,
    g: &InstParams,
    f: usize,
) -> *mut f64 {
    let c = code as i64;
    let (np, ns) = (private as i64, shared as i64);
    if c < np {
        at1(p, f, c)
    } else if c < np + ns {
        at1(s, f, c - np)
    } else {
        at1(g, f, c - np - ns)
    }
}

/// Runs items `lo..hi` of `k` on the calling thread.
///
/// # Safety
/// Every `args[i].base` must be a live host address of an instance with
/// the indexing the params describe, large enough for the kernel's items;
/// no other thread may write the items' outputs concurrently except through
/// the atomic adds of `Charge` and accumulating `Unpack`s of distinct items.
pub unsafe fn run_items(k: &Kernel, args: &[InstParams], lo: u64, hi: u64) {
    for t in lo..hi {
        item(k, args, t);
    }
}

#[inline]
unsafe fn item(k: &Kernel, a: &[InstParams], t: u64) {
    let t = t as i64;
    match *k {
        Kernel::Fill { field, value } => {
            let p = &a[0];
            *at(p, field, t / p.n1, t % p.n1) = value;
        }
        Kernel::Stencil { radius, rows, cols } => {
            let p = &a[0];
            let w = cols.1 as i64 - cols.0 as i64;
            let i = rows.0 as i64 + t / w;
            let j = cols.0 as i64 + t % w;
            let r = radius as i64;
            let mut acc = 0.0;
            for k in 1..=r {
                let wk = 1.0 / (2.0 * k as f64 * r as f64);
                acc += wk
                    * (*at(p, 0, i, j + k) - *at(p, 0, i, j - k) + *at(p, 0, i + k, j)
                        - *at(p, 0, i - k, j));
            }
            *at(p, 1, i, j) += acc;
        }
        Kernel::Increment { rows } => {
            let p = &a[0];
            let i = rows.0 as i64 + t / p.n1;
            let j = t % p.n1;
            *at(p, 0, i, j) += 1.0;
        }
        Kernel::Currents {
            steps,
            dt,
            private,
            shared,
        } => {
            let (w, p, s, g) = (&a[0], &a[1], &a[2], &a[3]);
            let vin = *node(*at1(w, 0, t), private, shared, p, s, g, 3);
            let vout = *node(*at1(w, 1, t), private, shared, p, s, g, 3);
            let l = *at1(w, 2, t);
            let r = *at1(w, 3, t);
            let mut cur = *at1(w, 5, t);
            for _ in 0..steps {
                cur += dt * ((vin - vout) - r * cur) / l;
            }
            *at1(w, 5, t) = cur;
        }
        Kernel::Charge {
            dt,
            private,
            shared,
        } => {
            let (w, p, s, g) = (&a[0], &a[1], &a[2], &a[3]);
            let q = dt * *at1(w, 5, t);
            atomic_add(node(*at1(w, 0, t), private, shared, p, s, g, 2), -q);
            atomic_add(node(*at1(w, 1, t), private, shared, p, s, g, 2), q);
        }
        Kernel::Voltages => {
            let p = &a[0];
            let v = (*at1(p, 3, t) + *at1(p, 2, t) / *at1(p, 0, t)) * (1.0 - *at1(p, 1, t));
            *at1(p, 3, t) = v;
            *at1(p, 2, t) = 0.0;
        }
        Kernel::AdvPos { dt, range } => {
            let p = &a[0];
            let i = range.0 as i64 + t;
            *at1(p, 0, i) += dt * *at1(p, 2, i);
            *at1(p, 1, i) += dt * *at1(p, 3, i);
        }
        Kernel::Centers => {
            let (z, s, p) = (&a[0], &a[1], &a[2]);
            let (mut x, mut y) = (0.0, 0.0);
            for k in 0..4 {
                let p1 = *at1(s, 1, 4 * t + k) as i64;
                x += *at1(p, 0, p1);
                y += *at1(p, 1, p1);
            }
            *at1(z, 0, t) = 0.25 * x;
            *at1(z, 1, t) = 0.25 * y;
        }
        Kernel::Volumes => {
            let (z, s, p) = (&a[0], &a[1], &a[2]);
            let cx = *at1(z, 0, t);
            let cy = *at1(z, 1, t);
            let mut area = 0.0;
            for k in 0..4 {
                let side = 4 * t + k;
                let p1 = *at1(s, 1, side) as i64;
                let p2 = *at1(s, 2, side) as i64;
                let (x1, y1) = (*at1(p, 0, p1) - cx, *at1(p, 1, p1) - cy);
                let (x2, y2) = (*at1(p, 0, p2) - cx, *at1(p, 1, p2) - cy);
                let sa = 0.5 * (x1 * y2 - x2 * y1);
                *at1(s, 3, side) = sa;
                area += sa;
            }
            *at1(z, 2, t) = area;
            *at1(z, 3, t) = area;
        }
        Kernel::Pack { rect, fields } => {
            let (src, dense) = (&a[0], &a[1]);
            let (ra, rb) = (t / rect.len[1] as i64, t % rect.len[1] as i64);
            for (k, &f) in fields.as_slice().iter().enumerate() {
                let v = *at(src, f, rect.lo[0] as i64 + ra, rect.lo[1] as i64 + rb);
                *(dense.base as *mut f64).add(k * rect.points() as usize + t as usize) = v;
            }
        }
        Kernel::Unpack {
            rect,
            fields,
            accumulate,
        } => {
            let (dense, dst) = (&a[0], &a[1]);
            let (ra, rb) = (t / rect.len[1] as i64, t % rect.len[1] as i64);
            for (k, &f) in fields.as_slice().iter().enumerate() {
                let v = *(dense.base as *const f64).add(k * rect.points() as usize + t as usize);
                let x = at(dst, f, rect.lo[0] as i64 + ra, rect.lo[1] as i64 + rb);
                if accumulate {
                    *x += v;
                } else {
                    *x = v;
                }
            }
        }
        Kernel::Gemm { n, accumulate } => {
            let (ta, tb, tc) = (&a[0], &a[1], &a[2]);
            let n = n as i64;
            let (r, c) = (t / n, t % n);
            let mut acc = 0.0;
            for l in 0..n {
                acc += *at(tb, 0, r, l) * *at(tc, 0, l, c);
            }
            let x = at(ta, 0, r, c);
            if accumulate {
                *x += acc;
            } else {
                *x = acc;
            }
        }
    }
}

/// Raw parameters that may cross threads (the addresses stay valid for
/// the duration of [`run_parallel`]).
#[derive(Clone, Copy)]
struct SendParams<'a>(&'a [InstParams]);
// SAFETY: the params are plain addresses; `run_parallel`'s caller
// guarantees the memory outlives the scoped threads and that items write
// disjoint elements (or use atomics).
unsafe impl Send for SendParams<'_> {}
unsafe impl Sync for SendParams<'_> {}

/// Runs all items of `k` on `threads` host threads (contiguous chunks).
///
/// # Safety
/// As [`run_items`].
pub unsafe fn run_parallel(k: &Kernel, args: &[InstParams], threads: usize) {
    let n = k.items(args);
    let threads = threads.clamp(1, 256) as u64;
    if threads == 1 || n < 4096 {
        run_items(k, args, 0, n);
        return;
    }
    let chunk = n.div_ceil(threads);
    let shared = SendParams(args);
    std::thread::scope(|s| {
        for c in 0..threads {
            let lo = c * chunk;
            let hi = (lo + chunk).min(n);
            if lo >= hi {
                break;
            }
            let p = shared;
            let k = *k;
            s.spawn(move || {
                let p = p;
                // SAFETY: as the caller guarantees for the whole domain.
                unsafe { run_items(&k, p.0, lo, hi) }
            });
        }
    });
}

/// One argument of a CUDA kernel launch, in the order the kernel's
/// signature in [`CUDA_SOURCE`] declares them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KernelArg {
    Inst(InstParams),
    U64(u64),
    F64(f64),
    Rect(Rect),
    Fields(FieldList),
}

/// The launch arguments of `k` over instances `args` (the item count
/// last), or None for the GEMM, which is no kernel of ours.
pub fn cuda_args(k: &Kernel, args: &[InstParams]) -> Option<Vec<KernelArg>> {
    use KernelArg::{Fields, Inst, Rect as R, F64, U64};
    let insts = |n: usize| args.iter().take(n).map(|a| Inst(*a)).collect::<Vec<_>>();
    let mut v = match *k {
        Kernel::Fill { field, value } => vec![Inst(args[0]), U64(field as u64), F64(value)],
        Kernel::Stencil { radius, rows, cols } => vec![
            Inst(args[0]),
            U64(radius),
            U64(rows.0),
            U64(cols.0),
            U64(cols.1.saturating_sub(cols.0)),
        ],
        Kernel::Increment { rows } => vec![Inst(args[0]), U64(rows.0)],
        Kernel::Currents {
            steps,
            dt,
            private,
            shared,
        } => {
            let mut v = insts(4);
            v.extend([U64(u64::from(steps)), F64(dt), U64(private), U64(shared)]);
            v
        }
        Kernel::Charge {
            dt,
            private,
            shared,
        } => {
            let mut v = insts(4);
            v.extend([F64(dt), U64(private), U64(shared)]);
            v
        }
        Kernel::Voltages => insts(1),
        Kernel::AdvPos { dt, range } => vec![Inst(args[0]), F64(dt), U64(range.0)],
        Kernel::Centers | Kernel::Volumes => insts(3),
        Kernel::Pack { rect, fields } => {
            vec![Inst(args[0]), Inst(args[1]), R(rect), Fields(fields)]
        }
        Kernel::Unpack {
            rect,
            fields,
            accumulate,
        } => vec![
            Inst(args[0]),
            Inst(args[1]),
            R(rect),
            Fields(fields),
            U64(u64::from(accumulate)),
        ],
        Kernel::Gemm { .. } => return None,
    };
    v.push(U64(k.items(args)));
    Some(v)
}

/// A column-major (cuBLAS) GEMM call for a [`super::exec::GemmCall`]:
/// which operand goes first, whether each is transposed, and the leading
/// dimensions. `first`/`second` are B and C, or C and B (see
/// [`gemm_operands`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlasCall {
    pub first: InstParams,
    pub second: InstParams,
    pub trans_first: bool,
    pub trans_second: bool,
    pub ld_first: i64,
    pub ld_second: i64,
    pub ld_out: i64,
}

/// The cuBLAS call computing `a (+)= b x c` for `n` x `n` tiles stored
/// in any order.
pub fn blas_call(a: &InstParams, b: &InstParams, c: &InstParams, n: u64) -> BlasCall {
    let row_major = |p: &InstParams| p.s1 == 1 && n > 1;
    let ld = |p: &InstParams| p.s0.max(p.s1).max(1);
    let (first_b, t1, t2) = gemm_operands(row_major(a), row_major(b), row_major(c));
    let (x, y) = if first_b { (*b, *c) } else { (*c, *b) };
    BlasCall {
        first: x,
        second: y,
        trans_first: t1,
        trans_second: t2,
        ld_first: ld(&x),
        ld_second: ld(&y),
        ld_out: ld(a),
    }
}

/// How to call a column-major GEMM (cuBLAS) for `A (+)= B x C` when each
/// matrix is stored in `C` (row-major) or `F` (column-major) order: a
/// row-major buffer read column-major is the transpose. Returns (first
/// operand is B, transpose the first operand, transpose the second): with
/// A in F order the call is `A = op(B) op(C)`; in C order it computes
/// `A^T = op(C) op(B)` instead.
pub fn gemm_operands(a_c: bool, b_c: bool, c_c: bool) -> (bool, bool, bool) {
    if a_c {
        (false, !c_c, !b_c)
    } else {
        (true, b_c, c_c)
    }
}

/// The CUDA C source of every kernel but the GEMM. `Inst` matches
/// [`InstParams`] field for field; each kernel takes its instances by value
/// and its scalars after them, and runs one item per thread.
pub const CUDA_SOURCE: &str = r#"
struct Inst {
    double* base;
    long long s0, s1, n0, n1;
    long long f[8];
};
struct RectP { unsigned long long lo0, lo1, len0, len1; };
struct Fields { unsigned long long len; unsigned long long ids[8]; };

__device__ __forceinline__ double* at(const Inst& p, int f, long long i, long long j) {
    return p.base + (p.f[f] + i * p.s0 + j * p.s1);
}
__device__ __forceinline__ unsigned long long tid() {
    return (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ double* node(double code, long long np, long long ns,
        const Inst& p, const Inst& s, const Inst& g, int f) {
    long long c = (long long)code;
    if (c < np) return at(p, f, c, 0);
    if (c < np + ns) return at(s, f, c - np, 0);
    return at(g, f, c - np - ns, 0);
}

extern "C" __global__ void mw_fill(Inst p, unsigned long long field, double value,
        unsigned long long items) {
    unsigned long long t = tid();
    if (t >= items) return;
    *at(p, (int)field, (long long)t / p.n1, (long long)t % p.n1) = value;
}

extern "C" __global__ void mw_stencil(Inst p, unsigned long long radius,
        unsigned long long r0, unsigned long long c0, unsigned long long width,
        unsigned long long items) {
    unsigned long long t = tid();
    if (t >= items) return;
    long long i = (long long)(r0 + t / width), j = (long long)(c0 + t % width);
    long long r = (long long)radius;
    double acc = 0.0;
    for (long long k = 1; k <= r; k++) {
        double wk = 1.0 / (2.0 * (double)k * (double)r);
        acc += wk * (*at(p, 0, i, j + k) - *at(p, 0, i, j - k) + *at(p, 0, i + k, j)
                     - *at(p, 0, i - k, j));
    }
    *at(p, 1, i, j) += acc;
}

extern "C" __global__ void mw_increment(Inst p, unsigned long long r0,
        unsigned long long items) {
    unsigned long long t = tid();
    if (t >= items) return;
    long long i = (long long)r0 + (long long)t / p.n1, j = (long long)t % p.n1;
    *at(p, 0, i, j) += 1.0;
}

extern "C" __global__ void mw_currents(Inst w, Inst p, Inst s, Inst g,
        unsigned long long steps, double dt, unsigned long long np, unsigned long long ns,
        unsigned long long items) {
    unsigned long long t = tid();
    if (t >= items) return;
    long long i = (long long)t;
    double vin = *node(*at(w, 0, i, 0), np, ns, p, s, g, 3);
    double vout = *node(*at(w, 1, i, 0), np, ns, p, s, g, 3);
    double l = *at(w, 2, i, 0), r = *at(w, 3, i, 0);
    double cur = *at(w, 5, i, 0);
    for (unsigned long long k = 0; k < steps; k++) {
        cur += dt * ((vin - vout) - r * cur) / l;
    }
    *at(w, 5, i, 0) = cur;
}

extern "C" __global__ void mw_charge(Inst w, Inst p, Inst s, Inst g, double dt,
        unsigned long long np, unsigned long long ns, unsigned long long items) {
    unsigned long long t = tid();
    if (t >= items) return;
    long long i = (long long)t;
    double q = dt * *at(w, 5, i, 0);
    atomicAdd(node(*at(w, 0, i, 0), np, ns, p, s, g, 2), -q);
    atomicAdd(node(*at(w, 1, i, 0), np, ns, p, s, g, 2), q);
}

extern "C" __global__ void mw_voltages(Inst p, unsigned long long items) {
    unsigned long long t = tid();
    if (t >= items) return;
    long long i = (long long)t;
    double v = (*at(p, 3, i, 0) + *at(p, 2, i, 0) / *at(p, 0, i, 0)) * (1.0 - *at(p, 1, i, 0));
    *at(p, 3, i, 0) = v;
    *at(p, 2, i, 0) = 0.0;
}

extern "C" __global__ void mw_adv_pos(Inst p, double dt, unsigned long long lo,
        unsigned long long items) {
    unsigned long long t = tid();
    if (t >= items) return;
    long long i = (long long)(lo + t);
    *at(p, 0, i, 0) += dt * *at(p, 2, i, 0);
    *at(p, 1, i, 0) += dt * *at(p, 3, i, 0);
}

extern "C" __global__ void mw_centers(Inst z, Inst s, Inst p, unsigned long long items) {
    unsigned long long t = tid();
    if (t >= items) return;
    long long i = (long long)t;
    double x = 0.0, y = 0.0;
    for (int k = 0; k < 4; k++) {
        long long p1 = (long long)*at(s, 1, 4 * i + k, 0);
        x += *at(p, 0, p1, 0);
        y += *at(p, 1, p1, 0);
    }
    *at(z, 0, i, 0) = 0.25 * x;
    *at(z, 1, i, 0) = 0.25 * y;
}

extern "C" __global__ void mw_volumes(Inst z, Inst s, Inst p, unsigned long long items) {
    unsigned long long t = tid();
    if (t >= items) return;
    long long i = (long long)t;
    double cx = *at(z, 0, i, 0), cy = *at(z, 1, i, 0);
    double area = 0.0;
    for (int k = 0; k < 4; k++) {
        long long side = 4 * i + k;
        long long p1 = (long long)*at(s, 1, side, 0);
        long long p2 = (long long)*at(s, 2, side, 0);
        double x1 = *at(p, 0, p1, 0) - cx, y1 = *at(p, 1, p1, 0) - cy;
        double x2 = *at(p, 0, p2, 0) - cx, y2 = *at(p, 1, p2, 0) - cy;
        double sa = 0.5 * (x1 * y2 - x2 * y1);
        *at(s, 3, side, 0) = sa;
        area += sa;
    }
    *at(z, 2, i, 0) = area;
    *at(z, 3, i, 0) = area;
}

extern "C" __global__ void mw_pack(Inst src, Inst dense, RectP r, Fields fl,
        unsigned long long items) {
    unsigned long long t = tid();
    if (t >= items) return;
    long long a = (long long)(t / r.len1), b = (long long)(t % r.len1);
    for (unsigned long long k = 0; k < fl.len; k++) {
        dense.base[k * items + t] = *at(src, (int)fl.ids[k], (long long)r.lo0 + a,
                                        (long long)r.lo1 + b);
    }
}

extern "C" __global__ void mw_unpack(Inst dense, Inst dst, RectP r, Fields fl,
        unsigned long long accumulate, unsigned long long items) {
    unsigned long long t = tid();
    if (t >= items) return;
    long long a = (long long)(t / r.len1), b = (long long)(t % r.len1);
    for (unsigned long long k = 0; k < fl.len; k++) {
        double v = dense.base[k * items + t];
        double* x = at(dst, (int)fl.ids[k], (long long)r.lo0 + a, (long long)r.lo1 + b);
        if (accumulate) *x += v; else *x = v;
    }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::layout::InstanceLayout;
    use crate::decisions::Order;

    /// A host instance for tests.
    struct Buf {
        data: Vec<f64>,
        layout: InstanceLayout,
    }

    impl Buf {
        fn new(ext: &[u64], nf: usize, soa: bool, order: Order) -> Buf {
            let layout = InstanceLayout::with(ext, nf, soa, order, 8).unwrap();
            Buf {
                data: vec![0.0; (layout.size_bytes / 8) as usize],
                layout,
            }
        }
        fn p(&mut self) -> InstParams {
            self.layout.params(self.data.as_mut_ptr() as u64)
        }
        fn get(&self, f: usize, i: u64, j: u64) -> f64 {
            self.data[self.layout.index(f, i, j)]
        }
        fn set(&mut self, f: usize, i: u64, j: u64, v: f64) {
            let x = self.layout.index(f, i, j);
            self.data[x] = v;
        }
    }

    #[test]
    fn stencil_on_a_linear_field_adds_two_in_every_layout() {
        for soa in [true, false] {
            for order in [Order::C, Order::F] {
                let mut b = Buf::new(&[9, 7], 2, soa, order);
                for i in 0..9 {
                    for j in 0..7 {
                        b.set(0, i, j, (i + j) as f64);
                    }
                }
                let k = Kernel::Stencil {
                    radius: 2,
                    rows: (2, 7),
                    cols: (2, 5),
                };
                let p = [b.p()];
                unsafe { run_parallel(&k, &p, 1) };
                assert_eq!(b.get(1, 4, 3), 2.0, "{soa} {order:?}");
                assert_eq!(b.get(1, 6, 4), 2.0);
                // Outside the updated rectangle nothing changes.
                assert_eq!(b.get(1, 1, 3), 0.0);
                assert_eq!(b.get(1, 4, 5), 0.0);
                let inc = Kernel::Increment { rows: (0, 9) };
                unsafe { run_parallel(&inc, &p, 1) };
                assert_eq!(b.get(0, 8, 6), 15.0);
            }
        }
    }

    #[test]
    fn circuit_kernels_move_charge_between_the_wire_ends() {
        // Two private nodes, one shared, one ghost; one wire 0 -> ghost.
        let mut p = Buf::new(&[2], 4, true, Order::F);
        let mut s = Buf::new(&[1], 4, false, Order::F);
        let mut g = Buf::new(&[1], 4, true, Order::F);
        let mut w = Buf::new(&[1], 6, false, Order::C);
        for (b, n) in [(&mut p, 2), (&mut s, 1), (&mut g, 1)] {
            for i in 0..n {
                b.set(0, i, 0, 2.0); // capacitance
                b.set(1, i, 0, 0.5); // leakage
            }
        }
        p.set(3, 0, 0, 3.0); // V_in
        g.set(3, 0, 0, 1.0); // V_out
        w.set(0, 0, 0, 0.0);
        w.set(1, 0, 0, 3.0); // code 3 = 2 private + 1 shared + ghost 0
        w.set(2, 0, 0, 1.0); // L
        w.set(3, 0, 0, 0.0); // R
        let args = [w.p(), p.p(), s.p(), g.p()];
        let cur = Kernel::Currents {
            steps: 2,
            dt: 0.25,
            private: 2,
            shared: 1,
        };
        unsafe { run_parallel(&cur, &args, 1) };
        // Two steps of I += 0.25 * (3 - 1) = 1.0.
        assert_eq!(w.get(5, 0, 0), 1.0);
        let ch = Kernel::Charge {
            dt: 0.5,
            private: 2,
            shared: 1,
        };
        unsafe { run_parallel(&ch, &args, 1) };
        assert_eq!(p.get(2, 0, 0), -0.5);
        assert_eq!(g.get(2, 0, 0), 0.5);
        let pa = [p.p()];
        unsafe { run_parallel(&Kernel::Voltages, &pa, 1) };
        // (3 + -0.5 / 2) * (1 - 0.5) = 1.375, charge cleared.
        assert_eq!(p.get(3, 0, 0), 1.375);
        assert_eq!(p.get(2, 0, 0), 0.0);
    }

    #[test]
    fn pennant_kernels_find_centres_and_unit_areas() {
        // One unit square zone: points (0,0) (1,0) (1,1) (0,1), moved by
        // dt * pu first.
        let mut pts = Buf::new(&[4], 4, true, Order::F);
        for (i, (x, y)) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
            .iter()
            .enumerate()
        {
            pts.set(0, i as u64, 0, *x);
            pts.set(1, i as u64, 0, *y);
            pts.set(2, i as u64, 0, 1.0);
            pts.set(3, i as u64, 0, 0.5);
        }
        let mut sides = Buf::new(&[4], 4, false, Order::F);
        for k in 0..4u64 {
            sides.set(1, k, 0, k as f64);
            sides.set(2, k, 0, ((k + 1) % 4) as f64);
        }
        let mut z = Buf::new(&[1], 4, true, Order::C);
        let adv = Kernel::AdvPos {
            dt: 0.25,
            range: (0, 4),
        };
        unsafe { run_parallel(&adv, &[pts.p()], 1) };
        assert_eq!(pts.get(0, 2, 0), 1.25);
        assert_eq!(pts.get(1, 2, 0), 1.125);
        let args = [z.p(), sides.p(), pts.p()];
        unsafe { run_parallel(&Kernel::Centers, &args, 1) };
        assert_eq!((z.get(0, 0, 0), z.get(1, 0, 0)), (0.75, 0.625));
        unsafe { run_parallel(&Kernel::Volumes, &args, 1) };
        assert_eq!(z.get(2, 0, 0), 1.0);
        assert_eq!(sides.get(3, 1, 0), 0.25);
    }

    #[test]
    fn pack_then_unpack_moves_a_rectangle_between_layouts() {
        let mut a = Buf::new(&[4, 3], 2, true, Order::C);
        let mut b = Buf::new(&[4, 3], 2, false, Order::F);
        for i in 0..4 {
            for j in 0..3 {
                a.set(0, i, j, (10 * i + j) as f64);
                a.set(1, i, j, -((10 * i + j) as f64));
                b.set(1, i, j, 1.0);
            }
        }
        let rect = Rect {
            lo: [1, 1],
            len: [2, 2],
        };
        let mut dense = vec![0.0f64; 8];
        let d = InstParams {
            base: dense.as_mut_ptr() as u64,
            ..InstParams::default()
        };
        let fl = FieldList::new(&[0, 1]);
        unsafe {
            run_parallel(&Kernel::Pack { rect, fields: fl }, &[a.p(), d], 1);
        }
        assert_eq!(
            dense,
            vec![11.0, 12.0, 21.0, 22.0, -11.0, -12.0, -21.0, -22.0]
        );
        let un = Kernel::Unpack {
            rect,
            fields: fl,
            accumulate: true,
        };
        unsafe { run_parallel(&un, &[d, b.p()], 1) };
        assert_eq!(b.get(0, 2, 2), 22.0);
        assert_eq!(b.get(1, 2, 2), -21.0);
        assert_eq!(b.get(1, 0, 0), 1.0);
    }

    #[test]
    fn host_gemm_matches_a_hand_product_in_any_order() {
        // B = [[1, 2], [3, 4]], C = [[5, 6], [7, 8]]: B C = [[19, 22], [43, 50]].
        for (oa, ob, oc) in [
            (Order::C, Order::C, Order::C),
            (Order::F, Order::C, Order::F),
            (Order::C, Order::F, Order::F),
        ] {
            let mut a = Buf::new(&[2, 2], 1, true, oa);
            let mut b = Buf::new(&[2, 2], 1, true, ob);
            let mut c = Buf::new(&[2, 2], 1, true, oc);
            for (i, j, v) in [(0, 0, 1.0), (0, 1, 2.0), (1, 0, 3.0), (1, 1, 4.0)] {
                b.set(0, i, j, v);
                c.set(0, i, j, v + 4.0);
            }
            a.set(0, 0, 0, 1.0);
            let k = Kernel::Gemm {
                n: 2,
                accumulate: true,
            };
            unsafe { run_parallel(&k, &[a.p(), b.p(), c.p()], 1) };
            assert_eq!(
                [
                    a.get(0, 0, 0),
                    a.get(0, 0, 1),
                    a.get(0, 1, 0),
                    a.get(0, 1, 1)
                ],
                [20.0, 22.0, 43.0, 50.0]
            );
        }
    }

    /// A column-major GEMM with optional transposes, as cuBLAS computes it.
    fn colmajor_gemm(ta: bool, tb: bool, a: &[f64], b: &[f64], n: usize) -> Vec<f64> {
        let get = |m: &[f64], t: bool, r: usize, c: usize| {
            if t {
                m[c + r * n]
            } else {
                m[r + c * n]
            }
        };
        let mut out = vec![0.0; n * n];
        for r in 0..n {
            for c in 0..n {
                out[r + c * n] = (0..n).map(|l| get(a, ta, r, l) * get(b, tb, l, c)).sum();
            }
        }
        out
    }

    #[test]
    fn cublas_operands_handle_every_order_combination() {
        let n = 3;
        let bm = |r: usize, c: usize| (r * 3 + c + 1) as f64;
        let cm = |r: usize, c: usize| (r as f64) - 2.0 * c as f64 + 0.5;
        let want = |r: usize, c: usize| (0..n).map(|l| bm(r, l) * cm(l, c)).sum::<f64>();
        let store = |f: &dyn Fn(usize, usize) -> f64, row_major: bool| {
            let mut v = vec![0.0; n * n];
            for r in 0..n {
                for c in 0..n {
                    v[if row_major { r * n + c } else { r + c * n }] = f(r, c);
                }
            }
            v
        };
        for a_c in [true, false] {
            for b_c in [true, false] {
                for c_c in [true, false] {
                    let b = store(&bm, b_c);
                    let c = store(&cm, c_c);
                    let (first_b, t1, t2) = gemm_operands(a_c, b_c, c_c);
                    let out = if first_b {
                        colmajor_gemm(t1, t2, &b, &c, n)
                    } else {
                        colmajor_gemm(t1, t2, &c, &b, n)
                    };
                    for r in 0..n {
                        for col in 0..n {
                            // `out` is A's buffer read column-major.
                            let got = if a_c {
                                out[col + r * n]
                            } else {
                                out[r + col * n]
                            };
                            assert_eq!(got, want(r, col), "{a_c} {b_c} {c_c}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn parallel_runs_match_serial_ones() {
        let mut a = Buf::new(&[300, 40], 2, true, Order::F);
        for i in 0..300 {
            for j in 0..40 {
                a.set(0, i, j, ((i * 7 + j * 3) % 11) as f64);
            }
        }
        let mut b = Buf {
            data: a.data.clone(),
            layout: a.layout.clone(),
        };
        let k = Kernel::Stencil {
            radius: 2,
            rows: (2, 298),
            cols: (2, 38),
        };
        unsafe {
            run_parallel(&k, &[a.p()], 1);
            run_parallel(&k, &[b.p()], 4);
        }
        assert_eq!(a.data, b.data);
        assert!(CUDA_SOURCE.contains("mw_stencil") && CUDA_SOURCE.contains("mw_unpack"));
    }

    /// A buffer for the CUDA-source check: data and layout (None: dense).
    struct CaseBuf {
        data: Vec<f64>,
        layout: Option<InstanceLayout>,
    }

    fn inst(ext: &[u64], nf: usize, soa: bool, order: Order, f: impl Fn(usize) -> f64) -> CaseBuf {
        let layout = InstanceLayout::with(ext, nf, soa, order, 8).unwrap();
        let data = (0..layout.size_bytes / 8).map(|i| f(i as usize)).collect();
        CaseBuf {
            data,
            layout: Some(layout),
        }
    }

    fn params_of(b: &mut CaseBuf) -> InstParams {
        let base = b.data.as_mut_ptr() as u64;
        match &b.layout {
            Some(l) => l.params(base),
            None => InstParams {
                base,
                ..InstParams::default()
            },
        }
    }

    fn cxx_inst(p: &InstParams, buf: usize) -> String {
        let f: Vec<String> = p.f.iter().map(|x| format!("{x}LL")).collect();
        format!(
            "Inst{{buf{buf}, {}LL, {}LL, {}LL, {}LL, {{{}}}}}",
            p.s0,
            p.s1,
            p.n0,
            p.n1,
            f.join(", ")
        )
    }

    /// The CUDA source, compiled as host C++ with one loop iteration per
    /// thread, computes exactly what the host kernels compute, with the
    /// launch arguments the GPU path passes. Needs a C++ compiler (ignored
    /// without one, see build.rs).
    #[test]
    #[cfg_attr(
        not(have_cxx),
        ignore = "needs a C++ compiler on PATH (c++, g++ or clang++)"
    )]
    fn the_cuda_source_matches_the_host_kernels() {
        let cxx = ["c++", "g++", "clang++"]
            .into_iter()
            .find(|c| {
                std::process::Command::new(c)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
            .expect("build.rs found a C++ compiler on PATH, and none runs");
        let val = |i: usize| ((i * 37 % 17) as f64) * 0.25 - 1.0;
        let mut bufs = vec![
            // 0: stencil piece, AOS C order.
            inst(&[9, 7], 2, false, Order::C, |i| (i % 23) as f64),
            // 1-4: circuit private, shared, ghost, wires.
            inst(&[3], 4, true, Order::F, |i| 1.0 + (i % 5) as f64 * 0.25),
            inst(&[2], 4, false, Order::F, |i| 1.5 + (i % 3) as f64 * 0.25),
            inst(&[2], 4, true, Order::C, |i| 2.0 + (i % 2) as f64 * 0.25),
            inst(&[4], 6, false, Order::C, |_| 0.0),
            // 5-7: pennant points, sides, zones.
            inst(&[9], 4, true, Order::F, val),
            inst(&[16], 4, false, Order::F, |_| 0.0),
            inst(&[4], 4, true, Order::C, |_| 0.0),
            // 8: a dense buffer; 9: an unpack target.
            CaseBuf {
                data: vec![0.0; 40],
                layout: None,
            },
            inst(&[4, 5], 2, false, Order::F, val),
        ];
        // Wire ends: private 0..3, shared 3..5, ghost 5..7.
        for (w, (a, b)) in [(0, 3), (1, 5), (4, 6), (2, 1)].iter().enumerate() {
            let l = bufs[4].layout.clone().unwrap();
            let w = w as u64;
            bufs[4].data[l.index(0, w, 0)] = *a as f64;
            bufs[4].data[l.index(1, w, 0)] = *b as f64;
            bufs[4].data[l.index(2, w, 0)] = 1.0 + w as f64 * 0.5;
            bufs[4].data[l.index(3, w, 0)] = 0.5;
        }
        // A 2 x 2-zone mesh: points 3 x 3, four sides per zone.
        {
            let l = bufs[6].layout.clone().unwrap();
            for z in 0..4u64 {
                let (r, c) = (z / 2, z % 2);
                let corners = [
                    r * 3 + c,
                    r * 3 + c + 1,
                    (r + 1) * 3 + c + 1,
                    (r + 1) * 3 + c,
                ];
                for k in 0..4u64 {
                    let side = 4 * z + k;
                    bufs[6].data[l.index(0, side, 0)] = z as f64;
                    bufs[6].data[l.index(1, side, 0)] = corners[k as usize] as f64;
                    bufs[6].data[l.index(2, side, 0)] = corners[((k + 1) % 4) as usize] as f64;
                }
            }
        }
        let rect = Rect {
            lo: [1, 1],
            len: [2, 3],
        };
        let launches: Vec<(Kernel, Vec<usize>)> = vec![
            (
                Kernel::Stencil {
                    radius: 2,
                    rows: (2, 7),
                    cols: (2, 5),
                },
                vec![0],
            ),
            (Kernel::Increment { rows: (1, 8) }, vec![0]),
            (
                Kernel::Fill {
                    field: 1,
                    value: 0.5,
                },
                vec![1],
            ),
            (
                Kernel::Currents {
                    steps: 3,
                    dt: 0.125,
                    private: 3,
                    shared: 2,
                },
                vec![4, 1, 2, 3],
            ),
            (
                Kernel::Charge {
                    dt: 0.25,
                    private: 3,
                    shared: 2,
                },
                vec![4, 1, 2, 3],
            ),
            (Kernel::Voltages, vec![1]),
            (Kernel::Voltages, vec![2]),
            (
                Kernel::AdvPos {
                    dt: 0.125,
                    range: (1, 8),
                },
                vec![5],
            ),
            (Kernel::Centers, vec![7, 6, 5]),
            (Kernel::Volumes, vec![7, 6, 5]),
            (
                Kernel::Pack {
                    rect,
                    fields: FieldList::new(&[1, 0]),
                },
                vec![0, 8],
            ),
            (
                Kernel::Unpack {
                    rect,
                    fields: FieldList::new(&[0, 1]),
                    accumulate: true,
                },
                vec![8, 9],
            ),
        ];
        // The C++ program.
        let mut src = String::from(
            "#include <cstdio>\n\
             struct MwDim { unsigned long long x, y, z; };\n\
             static MwDim blockIdx, blockDim, threadIdx;\n\
             #define __global__\n#define __device__\n#define __forceinline__ inline\n\
             static double atomicAdd(double* a, double v) { double o = *a; *a += v; return o; }\n",
        );
        src.push_str(CUDA_SOURCE);
        for (i, b) in bufs.iter().enumerate() {
            let v: Vec<String> = b.data.iter().map(|x| format!("{x:?}")).collect();
            src.push_str(&format!("static double buf{i}[] = {{{}}};\n", v.join(", ")));
        }
        src.push_str("int main() {\n  blockDim.x = 128;\n");
        for (k, on) in &launches {
            let params: Vec<InstParams> = on.iter().map(|&i| params_of(&mut bufs[i])).collect();
            let args = cuda_args(k, &params).unwrap();
            let mut next_inst = on.iter();
            let text: Vec<String> = args
                .iter()
                .map(|a| match a {
                    KernelArg::Inst(p) => cxx_inst(p, *next_inst.next().unwrap()),
                    KernelArg::U64(v) => format!("{v}ULL"),
                    KernelArg::F64(v) => format!("{v:?}"),
                    KernelArg::Rect(r) => format!(
                        "RectP{{{}ULL, {}ULL, {}ULL, {}ULL}}",
                        r.lo[0], r.lo[1], r.len[0], r.len[1]
                    ),
                    KernelArg::Fields(f) => {
                        let ids: Vec<String> = f.ids.iter().map(|x| format!("{x}ULL")).collect();
                        format!("Fields{{{}ULL, {{{}}}}}", f.len, ids.join(", "))
                    }
                })
                .collect();
            src.push_str(&format!(
                "  for (unsigned long long t = 0; t < {}ULL; t++) {{ blockIdx.x = t / 128; \
                 threadIdx.x = t % 128; {}({}); }}\n",
                k.items(&params),
                k.cuda_name().unwrap(),
                text.join(", ")
            ));
            // The host twin, on the Rust buffers.
            unsafe { run_parallel(k, &params, 1) };
        }
        for (i, b) in bufs.iter().enumerate() {
            src.push_str(&format!(
                "  for (int i = 0; i < {}; i++) printf(\"%.17g\\n\", buf{i}[i]);\n",
                b.data.len()
            ));
        }
        src.push_str("  return 0;\n}\n");
        let dir = std::env::temp_dir().join(format!("mw-cuda-src-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("kernels.cpp");
        let exe = dir.join("kernels");
        std::fs::write(&file, &src).unwrap();
        let out = std::process::Command::new(cxx)
            .args(["-std=c++17", "-O1", "-ffp-contract=off", "-w", "-o"])
            .arg(&exe)
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the CUDA source does not compile as C++:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run = std::process::Command::new(&exe).output().unwrap();
        assert!(run.status.success());
        let got: Vec<f64> = String::from_utf8_lossy(&run.stdout)
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        let want: Vec<f64> = bufs.iter().flat_map(|b| b.data.iter().copied()).collect();
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "value {i}: CUDA source {g}, host {w}"
            );
        }
        // Something happened in every kernel's buffer.
        assert!(want.iter().any(|v| *v != 0.0));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
