//! The simulator's constants: the efficiency factors that turn a machine
//! description's peak figures into the rates a real kernel or copy reaches,
//! and the per-task costs of the Legion runtime itself.
//!
//! Peak figures (flop rates, memory and link bandwidths, capacities, kernel
//! launch overheads) are not here: they come from the [`Machine`]
//! description, whose presets cite their data sheets
//! (`runtime/src/machine/presets.rs`). What is here is how far below peak real code
//! runs, each with the source or reasoning behind it; figures no source
//! gives are marked "guess". `runtime/SIMULATION.md` repeats them.
//!
//! [`Machine`]: crate::machine::Machine

use mapwright_grammar::ast::AlignOp;

use crate::decisions::{LayoutDecision, Order};
use crate::machine::ProcKind;

/// Fraction of FP64/FP32 peak a cuBLAS/BLAS GEMM reaches on a GPU. cuBLAS
/// DGEMM on large square matrices runs at ~90 % of peak on P100/V100
/// (NVIDIA's cuBLAS performance figures; DISTAL, PLDI'22, reports its GPU
/// GEMMs near the cuBLAS roofline).
pub const GEMM_EFF_GPU: f64 = 0.90;

/// Fraction of peak a multithreaded host BLAS GEMM reaches (MKL/OpenBLAS
/// DGEMM on Broadwell-EP: ~80 % of AVX2 FMA peak; Intel MKL benchmarks).
pub const GEMM_EFF_HOST: f64 = 0.80;

/// Fraction of peak a compiler-generated GPU kernel (Regent/DISTAL CUDA
/// codegen) reaches when it is compute-bound. Guess: no published figure
/// for these kernels; half of peak is typical of untuned CUDA loops.
pub const KERNEL_EFF_GPU: f64 = 0.50;

/// Fraction of peak a generated host loop reaches (partly vectorised,
/// one core per task). Guess, as above; scalar code would be 1/4..1/8.
pub const KERNEL_EFF_HOST: f64 = 0.30;

/// Fraction of a GPU framebuffer's data-sheet bandwidth a streaming kernel
/// sustains: BabelStream measures ~550 of 732 GB/s on P100 and ~800 of 900
/// on V100 (Deakin et al., "Evaluating attainable memory bandwidth of
/// parallel programming models via BabelStream", 2018).
pub const STREAM_EFF_GPU: f64 = 0.75;

/// Fraction of the affinity bandwidth a host core sustains. The machine
/// presets already give per-core sustained figures, so 1.
pub const STREAM_EFF_HOST: f64 = 1.0;

/// Fraction of PCIe bandwidth a GPU kernel gets reading zero-copy memory
/// directly: loads arrive as 32..128-byte PCIe read requests instead of
/// large DMA bursts (NVIDIA CUDA C Best Practices Guide, "Zero Copy": only
/// worthwhile when data is read once and access is coalesced). Guess: 1/2.
pub const ZEROCOPY_EFF_GPU: f64 = 0.50;

/// Extra latency one zero-copy access stream adds per task, microseconds
/// (PCIe round trip ~1-2 us; the affinity latency is added on top). Guess.
pub const ZEROCOPY_TASK_US: f64 = 2.0;

/// Cost of the Legion runtime per point task on top of the processor's
/// launch overhead (dependence analysis, mapping; cheap under `-dm:memoize`
/// tracing, which all benchmark scripts pass), microseconds. Guess.
pub const LEGION_TASK_US: f64 = 10.0;

/// Cost of one launch (index or single) on the launching processor,
/// microseconds: the launch is issued before any of its points can start.
/// Guess, as above.
pub const LEGION_LAUNCH_US: f64 = 20.0;

/// Kernel efficiency when a multi-dimensional instance's dimension order is
/// not the one the kernel walks fastest: on a GPU each 8-byte element then
/// sits in its own 32-byte sector (1/4 of the fetched bytes are used; CUDA
/// C Best Practices Guide, "Coalesced Access to Global Memory").
pub const WRONG_ORDER_EFF_GPU: f64 = 0.25;

/// The same on a host core: 8 of every 64-byte cache line used, partly
/// rescued by the hardware prefetcher and the L2. Guess: 1/4.
pub const WRONG_ORDER_EFF_HOST: f64 = 0.25;

/// Lowest efficiency an array-of-structs instance can cost: a kernel that
/// reads a few fields of a wide struct still pays whole 32-byte sectors
/// (GPU) or 64-byte lines (host), so the fraction of useful bytes
/// `accessed / struct` is the efficiency, floored here (sector granularity
/// means a struct wider than 8 sectors cannot get worse per field).
pub const AOS_MIN_EFF: f64 = 0.125;

/// GPU efficiency of an instance without an explicit alignment (Legion
/// aligns instances to 16 bytes by default, so a warp's accesses may
/// straddle one extra 32-byte sector). Measured on Pascal: a streaming
/// copy kernel offset by 0..22 floats (0..88 bytes) from a 256-byte
/// aligned base ran at 533.2-537.6 GB/s against 533.8 GB/s aligned (NVIDIA
/// developer forums, "Unexpected Performance Results for Misaligned Memory
/// Access on Pascal", thread 69476): no offset was more than 0.12 % slower
/// (the post gives no cause; the L2 serving the straddled sector to the
/// neighbouring warp would explain it). Was 0.98 (a guess).
pub const DEFAULT_ALIGN_EFF_GPU: f64 = 1.0;

/// GPU efficiency of an explicit alignment below the 32-byte sector or not
/// a power of two. The same Pascal measurement covers every offset a
/// small alignment can leave (4..88 bytes): no measurable loss. Was 0.90
/// (a guess).
pub const SMALL_ALIGN_EFF_GPU: f64 = 1.0;

/// Copy latency used when a machine description has no link between two
/// memories and the copy is staged through host memory, microseconds.
pub const FALLBACK_COPY_LATENCY_US: f64 = 10.0;

/// Largest relative measurement noise accepted (a standard deviation of
/// 50 %); larger requests are clamped.
pub const MAX_NOISE: f64 = 0.5;

/// Whether `kind` is a GPU-like processor (launches kernels on device
/// memory).
pub fn is_gpu(kind: ProcKind) -> bool {
    kind == ProcKind::Gpu
}

/// Fraction of peak a generated GPU stencil kernel reaches when it is
/// compute-bound. Stencil's kernels are bandwidth-bound at every mapping the
/// simulator can express (a 2-D radius-2 star: ~9 flop per 16 B streamed,
/// 0.6 flop/B against the P100's 7 flop/B balance), so this figure never
/// decides a time; their rate is [`STREAM_EFF_GPU`]'s (BabelStream).
pub const STENCIL_EFF_GPU: f64 = KERNEL_EFF_GPU;

/// Fraction of peak circuit's irregular GPU kernels reach when
/// compute-bound (`calculate_new_currents`: per-wire RK steps with
/// pointer-indexed node reads, divergent branches on the wire's node kind).
/// Guess, as [`KERNEL_EFF_GPU`]: no published figure for the Regent
/// kernels; its host counterpart is [`KERNEL_EFF_HOST`].
pub const IRREGULAR_EFF_GPU: f64 = KERNEL_EFF_GPU;

/// The class of kernel a task runs, which decides the fraction of peak it
/// reaches: a library GEMM, a structured stencil, an irregular
/// (pointer-indexed) graph or mesh kernel, or other generated code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// A cuBLAS / BLAS GEMM (the DISTAL matmuls' leaf task).
    Gemm,
    /// A structured-grid stencil (stencil's `stencil`, `increment`).
    Stencil,
    /// Graph or unstructured-mesh kernels that index through pointers
    /// (circuit, pennant).
    Irregular,
    /// Anything else (fills, placement and validation tasks).
    Generic,
}

impl Kernel {
    /// The kernel class of a task: GEMMs are the tasks a cuBLAS
    /// constraint names; the others follow the application's
    /// communication pattern (`halo`: stencil; `ghost-exchange`,
    /// `unstructured-halo`: circuit, pennant).
    pub fn of(gemm: bool, pattern: &str) -> Kernel {
        if gemm {
            Kernel::Gemm
        } else if pattern == "halo" {
            Kernel::Stencil
        } else if pattern == "ghost-exchange" || pattern == "unstructured-halo" {
            Kernel::Irregular
        } else {
            Kernel::Generic
        }
    }
}

/// Fraction of peak flop rate a kernel of class `kernel` reaches on `kind`.
pub fn compute_eff(kind: ProcKind, kernel: Kernel) -> f64 {
    match (is_gpu(kind), kernel) {
        (true, Kernel::Gemm) => GEMM_EFF_GPU,
        (true, Kernel::Stencil) => STENCIL_EFF_GPU,
        (true, Kernel::Irregular) => IRREGULAR_EFF_GPU,
        (true, Kernel::Generic) => KERNEL_EFF_GPU,
        (false, Kernel::Gemm) => GEMM_EFF_HOST,
        (false, _) => KERNEL_EFF_HOST,
    }
}

/// Efficiency of accessing one instance with `layout`, for a kernel on
/// `kind` that walks `native` order fastest. `dims` is the instance's
/// dimensionality; `accessed` and `struct_bytes` are the bytes per element
/// the argument reads and the bytes per element of the whole instance
/// (all fields any task keeps in it).
pub fn layout_eff(
    kind: ProcKind,
    layout: &LayoutDecision,
    native: Order,
    dims: u32,
    accessed: f64,
    struct_bytes: f64,
) -> f64 {
    let gpu = is_gpu(kind);
    let mut eff = 1.0;
    if dims >= 2 && layout.order != native {
        eff *= if gpu {
            WRONG_ORDER_EFF_GPU
        } else {
            WRONG_ORDER_EFF_HOST
        };
    }
    if !layout.soa && struct_bytes > accessed && accessed > 0.0 {
        eff *= (accessed / struct_bytes).max(AOS_MIN_EFF);
    }
    if gpu {
        eff *= match layout.align {
            None => DEFAULT_ALIGN_EFF_GPU,
            Some((op, n)) => align_eff_gpu(op, n),
        };
    }
    eff
}

/// GPU efficiency of an `Align OP n` constraint (see the constants above).
fn align_eff_gpu(op: AlignOp, n: i64) -> f64 {
    match op {
        // Only an exact or lower-bound alignment pins the alignment; the
        // other operators leave Legion's default in place.
        AlignOp::Eq | AlignOp::Ge => {
            let pow2 = n > 0 && (n & (n - 1)) == 0;
            if !pow2 || n < 32 {
                SMALL_ALIGN_EFF_GPU
            } else if n >= 128 {
                1.0
            } else {
                DEFAULT_ALIGN_EFF_GPU
            }
        }
        _ => DEFAULT_ALIGN_EFF_GPU,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(soa: bool, order: Order, align: Option<(AlignOp, i64)>) -> LayoutDecision {
        LayoutDecision {
            soa,
            order,
            align,
            ..LayoutDecision::default()
        }
    }

    #[test]
    fn layout_factors_are_in_range_and_ordered() {
        let g = ProcKind::Gpu;
        let soa_f = layout_eff(g, &layout(true, Order::F, None), Order::F, 2, 8.0, 8.0);
        let soa_c = layout_eff(g, &layout(true, Order::C, None), Order::F, 2, 8.0, 8.0);
        assert!(soa_c < soa_f && soa_c > 0.0);
        // Order does not matter in 1-D.
        let one_d = layout_eff(g, &layout(true, Order::C, None), Order::F, 1, 8.0, 8.0);
        assert_eq!(one_d, soa_f);
        // AOS costs only when the kernel reads part of the struct.
        let aos_all = layout_eff(g, &layout(false, Order::F, None), Order::F, 1, 32.0, 32.0);
        let aos_part = layout_eff(g, &layout(false, Order::F, None), Order::F, 1, 4.0, 32.0);
        assert_eq!(aos_all, soa_f);
        assert!(aos_part < aos_all);
        // No alignment costs or gains anything on a GPU: a Pascal copy
        // kernel ran as fast at every offset below 128 bytes (see
        // DEFAULT_ALIGN_EFF_GPU).
        let a128 = layout_eff(
            g,
            &layout(true, Order::F, Some((AlignOp::Eq, 128))),
            Order::F,
            1,
            8.0,
            8.0,
        );
        let a8 = layout_eff(
            g,
            &layout(true, Order::F, Some((AlignOp::Eq, 8))),
            Order::F,
            1,
            8.0,
            8.0,
        );
        assert_eq!(a128, soa_f);
        assert_eq!(a8, soa_f);
        for e in [soa_f, soa_c, aos_part, a128, a8] {
            assert!(e > 0.0 && e <= 1.0);
        }
    }
}
