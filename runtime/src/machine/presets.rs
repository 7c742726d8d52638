//! The built-in machine presets ([`Machine::preset`]): the ASI paper's
//! single node with four P100s, a single H200 node, and 2/4/16-node clusters
//! of four V100-class GPUs per node. Every figure cites its source; figures
//! no source gives are marked as guesses.

use super::{
    Affinity, Link, LinkKind, Machine, MemGroup, MemKind, Node, ProcGroup, ProcKind, Scope,
};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

// Legion memory sizes as the benchmark run scripts configure them (the
// figures the wrapper log headers print; see shared/apps/README.md).
/// `-ll:fsize 15000` (MiB) in every Legion/DISTAL Lassen script; the logs
/// print GPU_FB_MEM 15,728,640,000 bytes.
const FB_FSIZE_15000: u64 = 15_000 * MIB;
/// `-ll:zsize 2048` (MiB); the logs print Z_COPY_MEM 2,147,483,648 bytes.
const ZC_ZSIZE_2048: u64 = 2_048 * MIB;
/// `-ll:csize 150000` (MiB); the logs print SYSTEM_MEM 157,286,400,000 bytes.
const SYS_CSIZE_150000: u64 = 150_000 * MIB;
/// `-ll:rsize 512` (MiB); the logs print REGDMA_MEM 536,870,912 bytes.
const RD_RSIZE_512: u64 = 512 * MIB;

// Legion's bandwidth classes, as printed in the logs' "can see" lines
// (Realm's CUDA and core modules assign these fixed values).
const BW_OWN_FB: u32 = 200;
const BW_PEER_FB: u32 = 10;
const BW_GPU_ZC: u32 = 20;
const BW_CPU_SYS: u32 = 100;
const BW_CPU_ZC: u32 = 40;
const BW_CPU_RD: u32 = 80;

// ---- NVIDIA Tesla P100 SXM2 16 GB (NVIDIA Tesla P100 data sheet, 2016) ----
/// FP64 peak, GFLOP/s: 5.3 TFLOPS (SXM2; the PCIe card is 4.7).
const P100_FP64: f64 = 5_300.0;
/// FP32 peak, GFLOP/s: 10.6 TFLOPS (SXM2; PCIe 9.3).
const P100_FP32: f64 = 10_600.0;
/// CoWoS HBM2 bandwidth, GB/s: 732.
const P100_HBM: f64 = 732.0;
/// NVLink 1.0: 20 GB/s per direction per link, four links per P100. In a
/// four-GPU all-to-all board each pair gets at least one link (guess: one).
const NVLINK1_LINK: f64 = 20.0;
/// PCIe 3.0 x16: 15.75 GB/s per direction theoretical, ~12 GB/s achieved
/// by cudaMemcpy (commonly measured figure).
const PCIE3_X16: f64 = 12.0;

// ---- Intel Xeon E5-2640 v4 (Intel ARK) ----
/// 10 cores, 2.4 GHz base; AVX2 with two FMA units = 16 FP64 FLOP/cycle:
/// 2.4 x 16 = 38.4 GFLOP/s per core (FP32 twice that).
const E5_2640V4_CORE_FP64: f64 = 38.4;
/// Four DDR4-2133 channels: 68.3 GB/s per socket (ARK "max memory bandwidth").
const E5_2640V4_DRAM: f64 = 68.3;
/// Two QPI links at 8 GT/s: 16 GB/s per direction each.
const QPI_8GT: f64 = 16.0;

// ---- NVIDIA V100 SXM2 16 GB (NVIDIA V100 data sheet) ----
/// FP64 peak, GFLOP/s: 7.8 TFLOPS.
const V100_FP64: f64 = 7_800.0;
/// FP32 peak, GFLOP/s: 15.7 TFLOPS.
const V100_FP32: f64 = 15_700.0;
/// HBM2 bandwidth, GB/s: 900.
const V100_HBM: f64 = 900.0;
/// NVLink 2.0: 25 GB/s per direction per link. On IBM AC922 nodes with four
/// V100s (Lassen), each GPU has three links to its socket peer GPU and
/// three to its Power9 CPU: 75 GB/s per direction each way.
const NVLINK2_X3: f64 = 75.0;
/// IBM X-Bus between the two Power9 sockets: 64 GB/s (IBM AC922 guide);
/// cross-socket GPU peers go through it.
const XBUS: f64 = 64.0;

// ---- IBM POWER9 (22-core SMT4 parts in LLNL Lassen nodes) ----
/// 3.45 GHz x 8 FP64 FLOP/cycle (two 2-wide FMA VSX pipes) = 27.6 GFLOP/s
/// per core. Lassen node figure (LLNL: 44 cores per node).
const POWER9_CORE_FP64: f64 = 27.6;
/// Eight DDR4-2666 channels per socket: 170 GB/s per socket.
const POWER9_DRAM: f64 = 170.0;

// ---- Mellanox EDR InfiniBand (Lassen: dual rail) ----
/// 100 Gb/s per rail = 12.5 GB/s per direction; one transfer uses one rail.
const EDR_RAIL: f64 = 12.5;
/// MPI-level small-message latency on EDR is ~1 us; Realm/GASNet adds
/// active-message handling (guess: 3 us total).
const EDR_LATENCY_US: f64 = 3.0;

// ---- NVIDIA H200 SXM (NVIDIA H200 Tensor Core GPU data sheet) ----
/// FP64 vector peak 34 TFLOPS (FP64 Tensor Core 67; DGEMM can use the latter).
const H200_FP64: f64 = 34_000.0;
/// FP32 peak 67 TFLOPS.
const H200_FP32: f64 = 67_000.0;
/// HBM3e: 141 GB at 4.8 TB/s.
const H200_HBM: f64 = 4_800.0;
/// 141 GB (data sheet). The device this project may borrow reports about
/// 139 GiB usable; 141e9 bytes stays below either.
const H200_FB: u64 = 141_000_000_000;
/// PCIe Gen5 x16: 128 GB/s bidirectional = 64 GB/s per direction
/// (theoretical; ~55 GB/s achieved).
const PCIE5_X16: f64 = 55.0;

// Per-task start costs. A CUDA kernel launch costs ~3-5 us on the host; a
// Legion task adds its own bookkeeping. These are guesses, marked as such.
const GPU_LAUNCH_US: f64 = 5.0;
const CPU_LAUNCH_US: f64 = 2.0;

fn guess(s: &str) -> Option<String> {
    Some(s.to_string())
}

#[allow(clippy::too_many_arguments)]
fn proc_group(
    kind: ProcKind,
    count: u32,
    cores: u32,
    fp64: f64,
    launch_us: f64,
    model: &str,
    notes: &str,
    g: Option<String>,
) -> ProcGroup {
    ProcGroup {
        kind,
        count,
        cores,
        gflops_fp64: fp64 * f64::from(cores),
        // Host cores and both GPU generations here run FP32 at twice the FP64
        // rate, except where a caller overrides it.
        gflops_fp32: 2.0 * fp64 * f64::from(cores),
        launch_overhead_us: launch_us,
        model: model.into(),
        notes: notes.into(),
        guess: g,
    }
}

fn mem_group(
    kind: MemKind,
    count: u32,
    capacity: u64,
    gbps: f64,
    model: &str,
    notes: &str,
    g: Option<String>,
) -> MemGroup {
    MemGroup {
        kind,
        count,
        capacity_bytes: capacity,
        bandwidth_gbps: gbps,
        model: model.into(),
        notes: notes.into(),
        guess: g,
    }
}

#[allow(clippy::too_many_arguments)]
fn affinity(
    proc: ProcKind,
    mem: MemKind,
    scope: Scope,
    legion_bw: u32,
    gbps: f64,
    latency_us: f64,
    notes: &str,
    g: Option<String>,
) -> Affinity {
    Affinity {
        proc,
        mem,
        scope,
        legion_bandwidth: legion_bw,
        bandwidth_gbps: gbps,
        latency_us,
        notes: notes.into(),
        guess: g,
    }
}

#[allow(clippy::too_many_arguments)]
fn link(
    kind: LinkKind,
    from: MemKind,
    to: MemKind,
    inter_node: bool,
    gbps: f64,
    latency_us: f64,
    notes: &str,
    g: Option<String>,
) -> Link {
    Link {
        kind,
        from,
        to,
        inter_node,
        bandwidth_gbps: gbps,
        latency_us,
        notes: notes.into(),
        guess: g,
    }
}

/// Affinities every host-side processor kind (CPU, OMP, UTIL) gets, with the
/// Legion classes the logs print (SYSMEM 100, ZCMEM 40, RDMEM 80 — OMP
/// processors do not see RDMEM in the cannon log, so `with_rdmem` is false
/// for them).
fn host_affinities(
    kind: ProcKind,
    per_proc_dram_gbps: f64,
    with_rdmem: bool,
    with_sockmem: Option<(f64, f64)>,
) -> Vec<Affinity> {
    let lat = 0.1; // DRAM load latency ~100 ns
    let mut v = vec![
        affinity(
            kind,
            MemKind::Sysmem,
            Scope::Shared,
            BW_CPU_SYS,
            per_proc_dram_gbps,
            lat,
            "Legion class 100 from the log headers",
            guess("GB/s one processor sustains (not a data-sheet figure)"),
        ),
        affinity(
            kind,
            MemKind::Zcmem,
            Scope::Shared,
            BW_CPU_ZC,
            per_proc_dram_gbps,
            lat,
            "zero-copy memory is pinned host DRAM; Legion class 40 from the log headers",
            guess("GB/s one processor sustains (not a data-sheet figure)"),
        ),
    ];
    if with_rdmem {
        v.push(affinity(
            kind,
            MemKind::Rdmem,
            Scope::Shared,
            BW_CPU_RD,
            per_proc_dram_gbps,
            lat,
            "registered host DRAM; Legion class 80 from the log headers",
            guess("GB/s one processor sustains (not a data-sheet figure)"),
        ));
    }
    if let Some((own, peer)) = with_sockmem {
        v.push(affinity(
            kind,
            MemKind::Sockmem,
            Scope::Own,
            100,
            own,
            lat,
            "the processor's own NUMA domain",
            guess("Legion class (Realm NUMA module) and GB/s not in any log"),
        ));
        v.push(affinity(
            kind,
            MemKind::Sockmem,
            Scope::Peer,
            80,
            peer,
            0.2,
            "the other socket's NUMA domain, across the socket interconnect",
            guess("Legion class (Realm NUMA module) and GB/s not in any log"),
        ));
    }
    v
}

/// GPU affinities: own FB 200, peer FB 10, ZC 20 (log headers).
fn gpu_affinities(hbm: f64, peer: Option<f64>, zc: f64, zc_note: &str) -> Vec<Affinity> {
    let mut v = vec![affinity(
        ProcKind::Gpu,
        MemKind::Fbmem,
        Scope::Own,
        BW_OWN_FB,
        hbm,
        0.5,
        "HBM bandwidth from the GPU data sheet; Legion class 200 from the log headers",
        None,
    )];
    if let Some(p) = peer {
        v.push(affinity(
            ProcKind::Gpu,
            MemKind::Fbmem,
            Scope::Peer,
            BW_PEER_FB,
            p,
            1.5,
            "peer access over NVLink; Legion class 10 from the log headers",
            None,
        ));
    }
    v.push(affinity(
        ProcKind::Gpu,
        MemKind::Zcmem,
        Scope::Shared,
        BW_GPU_ZC,
        zc,
        1.5,
        zc_note,
        None,
    ));
    v
}

fn p100x4() -> Machine {
    let cpu_note = "Intel Xeon E5-2640 v4 core: 2.4 GHz x 16 FP64 FLOP/cycle (Intel ARK)";
    let mut affinities = gpu_affinities(
        P100_HBM,
        Some(NVLINK1_LINK),
        PCIE3_X16,
        "zero-copy reads cross PCIe 3.0 x16 (~12 GB/s achieved); Legion class 20",
    );
    // One CPU core streams ~12 GB/s on Broadwell-EP; ten OMP threads on one
    // socket approach the socket's 68.3 GB/s.
    let core_bw = 12.0;
    let socket_bw = E5_2640V4_DRAM * 0.8;
    affinities.extend(host_affinities(
        ProcKind::Cpu,
        core_bw,
        true,
        Some((core_bw, core_bw.min(QPI_8GT))),
    ));
    affinities.extend(host_affinities(
        ProcKind::Omp,
        socket_bw,
        false,
        Some((socket_bw, QPI_8GT)),
    ));
    affinities.extend(host_affinities(ProcKind::Util, core_bw, true, None));
    Machine {
        name: "p100x4".into(),
        description: "The ASI paper's machine: one node, two 10-core Intel Xeon E5-2640 v4, \
                      256 GB DRAM, four NVIDIA P100 16 GB"
            .into(),
        nodes: 1,
        notes: vec![
            "Hardware from the ASI paper (arXiv 2410.15625, section 5.1).".into(),
            "Legion memory sizes follow the benchmark run flags (-ll:fsize 15000, \
             -ll:zsize 2048, -ll:csize 150000, -ll:rsize 512; DISTAL's Sapling scripts add \
             -ll:nsize 30G per socket), since Legion only uses what it is told to."
                .into(),
            "The paper does not say whether its P100s are SXM2 (NVLink) or PCIe cards; \
             SXM2 figures are used (guess)."
                .into(),
            "Legion processor counts are a configuration, not hardware: 4 CPU processors \
             (one per GPU; -ll:cpu is not published, and 4 keeps the circuit expert's \
             block_shard_cpu, ipoint / Machine(CPU).size[1], on node 0 as the wrapper log \
             shows), 1 OMP processor of 10 threads (-ll:ocpu 1 -ll:othr 10 in the DISTAL \
             scripts), 2 utility processors (-ll:util 2 in the Legion scripts)."
                .into(),
        ],
        node: Node {
            processors: vec![
                proc_group(
                    ProcKind::Cpu,
                    4,
                    1,
                    E5_2640V4_CORE_FP64,
                    CPU_LAUNCH_US,
                    "Intel Xeon E5-2640 v4 core",
                    cpu_note,
                    guess("count (4 CPU processors) and launch overhead"),
                ),
                {
                    let mut g = proc_group(
                        ProcKind::Gpu,
                        4,
                        1,
                        P100_FP64,
                        GPU_LAUNCH_US,
                        "NVIDIA Tesla P100 SXM2 16 GB",
                        "5.3 TFLOPS FP64, 10.6 TFLOPS FP32 (P100 SXM2 data sheet)",
                        guess("SXM2 rather than PCIe; launch overhead"),
                    );
                    g.gflops_fp32 = P100_FP32;
                    g
                },
                proc_group(
                    ProcKind::Omp,
                    1,
                    10,
                    E5_2640V4_CORE_FP64,
                    CPU_LAUNCH_US,
                    "10 threads on one E5-2640 v4 socket",
                    "-ll:ocpu 1 -ll:othr 10 (DISTAL run scripts)",
                    guess("launch overhead"),
                ),
                proc_group(
                    ProcKind::Util,
                    2,
                    1,
                    E5_2640V4_CORE_FP64,
                    CPU_LAUNCH_US,
                    "Intel Xeon E5-2640 v4 core",
                    "-ll:util 2 (Legion run scripts)",
                    guess("launch overhead"),
                ),
            ],
            memories: vec![
                mem_group(
                    MemKind::Sysmem,
                    1,
                    SYS_CSIZE_150000,
                    2.0 * E5_2640V4_DRAM,
                    "DDR4-2133, 8 channels over 2 sockets",
                    "-ll:csize 150000 (of 256 GB); 2 x 68.3 GB/s (Intel ARK)",
                    None,
                ),
                mem_group(
                    MemKind::Sockmem,
                    2,
                    30 * GIB,
                    E5_2640V4_DRAM,
                    "DDR4-2133, 4 channels per socket",
                    "-ll:nsize 30G (DISTAL Sapling scripts); 68.3 GB/s per socket",
                    None,
                ),
                mem_group(
                    MemKind::Fbmem,
                    4,
                    FB_FSIZE_15000,
                    P100_HBM,
                    "P100 HBM2 16 GB",
                    "-ll:fsize 15000 of 16 GB; 732 GB/s (P100 data sheet)",
                    None,
                ),
                mem_group(
                    MemKind::Zcmem,
                    1,
                    ZC_ZSIZE_2048,
                    E5_2640V4_DRAM,
                    "pinned host DRAM",
                    "-ll:zsize 2048 (Legion run scripts)",
                    None,
                ),
                mem_group(
                    MemKind::Rdmem,
                    1,
                    RD_RSIZE_512,
                    E5_2640V4_DRAM,
                    "registered host DRAM",
                    "-ll:rsize 512 (Legion run scripts)",
                    None,
                ),
            ],
            affinities,
        },
        links: vec![
            link(
                LinkKind::Nvlink,
                MemKind::Fbmem,
                MemKind::Fbmem,
                false,
                NVLINK1_LINK,
                2.0,
                "NVLink 1.0, 20 GB/s per direction per link",
                guess("one link per GPU pair; copy latency"),
            ),
            link(
                LinkKind::Pcie,
                MemKind::Fbmem,
                MemKind::Sysmem,
                false,
                PCIE3_X16,
                5.0,
                "PCIe 3.0 x16 (15.75 GB/s theoretical)",
                guess("achieved bandwidth and copy latency"),
            ),
            link(
                LinkKind::Pcie,
                MemKind::Fbmem,
                MemKind::Zcmem,
                false,
                PCIE3_X16,
                5.0,
                "PCIe 3.0 x16",
                guess("achieved bandwidth and copy latency"),
            ),
            link(
                LinkKind::Pcie,
                MemKind::Fbmem,
                MemKind::Sockmem,
                false,
                PCIE3_X16,
                5.0,
                "PCIe 3.0 x16",
                guess("achieved bandwidth and copy latency"),
            ),
            link(
                LinkKind::Smp,
                MemKind::Sockmem,
                MemKind::Sockmem,
                false,
                QPI_8GT,
                1.0,
                "QPI 8 GT/s, 16 GB/s per direction per link",
                guess("copy latency"),
            ),
            link(
                LinkKind::Dram,
                MemKind::Sysmem,
                MemKind::Zcmem,
                false,
                E5_2640V4_DRAM / 2.0,
                1.0,
                "a copy reads and writes DRAM: half the socket bandwidth",
                guess("copy bandwidth and latency"),
            ),
        ],
    }
}

fn h200() -> Machine {
    // Host figures: the borrowed H200 machine has 16 CPU cores and 128 GiB;
    // its CPU model is unknown, so a modern server core is assumed.
    let core_fp64 = 40.0; // 2.5 GHz x 16 FP64 FLOP/cycle (AVX2, 2 FMA)
    let dram = 150.0; // GB/s, DDR5 server socket (guess)
    let core_bw = 15.0;
    let mut affinities = gpu_affinities(
        H200_HBM,
        None,
        PCIE5_X16,
        "zero-copy reads cross PCIe Gen5 x16 (64 GB/s per direction theoretical); Legion class 20",
    );
    affinities.extend(host_affinities(ProcKind::Cpu, core_bw, false, None));
    affinities.extend(host_affinities(ProcKind::Omp, dram * 0.6, false, None));
    affinities.extend(host_affinities(ProcKind::Util, core_bw, false, None));
    let host_guess = "host CPU model unknown: per-core rate, DRAM bandwidth, launch overhead";
    Machine {
        name: "h200".into(),
        description: "One node with one NVIDIA H200 (141 GB HBM3e) and 16 host cores".into(),
        nodes: 1,
        notes: vec![
            "GPU figures from the NVIDIA H200 data sheet (SXM).".into(),
            "Host: 16 cores and 128 GiB as the project's device machine reports; the CPU \
             model is not known, so host figures are guesses."
                .into(),
            "Legion configuration (guess): 4 CPU processors, 1 OMP processor of 8 threads, \
             2 utility processors; SYSMEM 96 GiB of 128; ZCMEM 2 GiB (-ll:zsize 2048)."
                .into(),
        ],
        node: Node {
            processors: vec![
                proc_group(
                    ProcKind::Cpu,
                    4,
                    1,
                    core_fp64,
                    CPU_LAUNCH_US,
                    "host CPU core",
                    "",
                    guess(host_guess),
                ),
                {
                    let mut g = proc_group(
                        ProcKind::Gpu,
                        1,
                        1,
                        H200_FP64,
                        GPU_LAUNCH_US,
                        "NVIDIA H200 SXM 141 GB",
                        "34 TFLOPS FP64 (67 with tensor cores), 67 TFLOPS FP32 (data sheet)",
                        guess("launch overhead"),
                    );
                    g.gflops_fp32 = H200_FP32;
                    g
                },
                proc_group(
                    ProcKind::Omp,
                    1,
                    8,
                    core_fp64,
                    CPU_LAUNCH_US,
                    "8 host threads",
                    "",
                    guess(host_guess),
                ),
                proc_group(
                    ProcKind::Util,
                    2,
                    1,
                    core_fp64,
                    CPU_LAUNCH_US,
                    "host CPU core",
                    "",
                    guess(host_guess),
                ),
            ],
            memories: vec![
                mem_group(
                    MemKind::Sysmem,
                    1,
                    96 * GIB,
                    dram,
                    "host DRAM",
                    "96 GiB of the 128 GiB host memory given to Legion",
                    guess("Legion share of host memory and DRAM bandwidth"),
                ),
                mem_group(
                    MemKind::Fbmem,
                    1,
                    H200_FB,
                    H200_HBM,
                    "H200 HBM3e 141 GB",
                    "141 GB at 4.8 TB/s (H200 data sheet)",
                    None,
                ),
                mem_group(
                    MemKind::Zcmem,
                    1,
                    ZC_ZSIZE_2048,
                    dram,
                    "pinned host DRAM",
                    "-ll:zsize 2048 as in the Legion run scripts",
                    guess("DRAM bandwidth"),
                ),
            ],
            affinities,
        },
        links: vec![
            link(
                LinkKind::Pcie,
                MemKind::Fbmem,
                MemKind::Sysmem,
                false,
                PCIE5_X16,
                5.0,
                "PCIe Gen5 x16, 64 GB/s per direction theoretical",
                guess("achieved bandwidth and copy latency"),
            ),
            link(
                LinkKind::Pcie,
                MemKind::Fbmem,
                MemKind::Zcmem,
                false,
                PCIE5_X16,
                5.0,
                "PCIe Gen5 x16",
                guess("achieved bandwidth and copy latency"),
            ),
            link(
                LinkKind::Dram,
                MemKind::Sysmem,
                MemKind::Zcmem,
                false,
                dram / 2.0,
                1.0,
                "a copy reads and writes DRAM: half the DRAM bandwidth",
                guess("copy bandwidth and latency"),
            ),
        ],
    }
}

/// Nodes like the wrapper logs' cluster (LLNL Lassen: IBM AC922, two
/// POWER9 sockets, four V100 SXM2 16 GB, dual-rail EDR InfiniBand).
fn v100_cluster(name: &str, nodes: u32) -> Machine {
    let core_bw = 15.0; // GB/s one Power9 core streams (guess)
    let omp_bw = POWER9_DRAM * 0.6; // ten threads on one socket (guess)
    let mut affinities = gpu_affinities(
        V100_HBM,
        Some(NVLINK2_X3),
        NVLINK2_X3,
        "zero-copy reads cross the GPU's three NVLink 2.0 links to its Power9 socket; \
         Legion class 20",
    );
    affinities.extend(host_affinities(ProcKind::Cpu, core_bw, true, None));
    affinities.extend(host_affinities(ProcKind::Omp, omp_bw, false, None));
    affinities.extend(host_affinities(ProcKind::Util, core_bw, true, None));
    let mut links = vec![
        link(
            LinkKind::Nvlink,
            MemKind::Fbmem,
            MemKind::Fbmem,
            false,
            NVLINK2_X3,
            2.0,
            "three NVLink 2.0 links between socket-peer GPUs (75 GB/s per direction); \
             cross-socket pairs go through the X-Bus (64 GB/s)",
            guess("one figure for both pairings; copy latency"),
        ),
        link(
            LinkKind::Nvlink,
            MemKind::Fbmem,
            MemKind::Sysmem,
            false,
            NVLINK2_X3,
            3.0,
            "GPU to Power9 over three NVLink 2.0 links",
            guess("copy latency"),
        ),
        link(
            LinkKind::Nvlink,
            MemKind::Fbmem,
            MemKind::Zcmem,
            false,
            NVLINK2_X3,
            3.0,
            "GPU to Power9 over three NVLink 2.0 links",
            guess("copy latency"),
        ),
        link(
            LinkKind::Nvlink,
            MemKind::Fbmem,
            MemKind::Rdmem,
            false,
            NVLINK2_X3,
            3.0,
            "GPU to Power9 over three NVLink 2.0 links",
            guess("copy latency"),
        ),
        link(
            LinkKind::Dram,
            MemKind::Sysmem,
            MemKind::Zcmem,
            false,
            XBUS.min(POWER9_DRAM / 2.0),
            1.0,
            "a copy reads and writes DRAM",
            guess("copy bandwidth and latency"),
        ),
    ];
    if nodes > 1 {
        links.push(link(
            LinkKind::Network,
            MemKind::Sysmem,
            MemKind::Sysmem,
            true,
            EDR_RAIL,
            EDR_LATENCY_US,
            "EDR InfiniBand, 100 Gb/s per rail (Lassen has two rails per node)",
            guess("one rail per transfer; latency including Realm/GASNet"),
        ));
        links.push(link(
            LinkKind::Network,
            MemKind::Fbmem,
            MemKind::Fbmem,
            true,
            EDR_RAIL,
            EDR_LATENCY_US + 2.0,
            "GPUDirect RDMA over EDR InfiniBand",
            guess("GPUDirect availability and latency"),
        ));
    }
    Machine {
        name: name.into(),
        description: format!(
            "{nodes} node(s) x (two IBM POWER9, four NVIDIA V100 SXM2 16 GB), EDR InfiniBand, \
             like the cluster of the wrapper logs"
        ),
        nodes,
        notes: vec![
            "Modelled on LLNL Lassen (IBM AC922), where the wrapper logs in \
             shared/apps/wrapper-logs were recorded; memory sizes are the ones those logs \
             print (-ll:fsize 15000, -ll:zsize 2048, -ll:csize 150000, -ll:rsize 512)."
                .into(),
            "The logs also list GPU_DYNAMIC_MEM (the whole 16 GB card, for dynamic \
             allocations) and 128 MiB intermediate-buffer memories no processor sees; neither \
             can be named by the DSL, so they are left out."
                .into(),
            "The logs show 1 LOC_PROC per node; this preset uses 4 CPU processors (one per \
             GPU) so that the circuit expert's block_shard_cpu (ipoint / \
             Machine(CPU).size[1]) shards points 0-3 to node 0 and 4-7 to node 1, which is \
             the sharding the circuit log shows (guess)."
                .into(),
        ],
        node: Node {
            processors: vec![
                proc_group(
                    ProcKind::Cpu,
                    4,
                    1,
                    POWER9_CORE_FP64,
                    CPU_LAUNCH_US,
                    "IBM POWER9 core",
                    "3.45 GHz x 8 FP64 FLOP/cycle",
                    guess("count (logs show 1 LOC_PROC) and launch overhead"),
                ),
                {
                    let mut g = proc_group(
                        ProcKind::Gpu,
                        4,
                        1,
                        V100_FP64,
                        GPU_LAUNCH_US,
                        "NVIDIA V100 SXM2 16 GB",
                        "7.8 TFLOPS FP64, 15.7 TFLOPS FP32 (V100 data sheet); 4 TOC_PROC per node \
                         in the logs",
                        guess("launch overhead"),
                    );
                    g.gflops_fp32 = V100_FP32;
                    g
                },
                proc_group(
                    ProcKind::Omp,
                    1,
                    10,
                    POWER9_CORE_FP64,
                    CPU_LAUNCH_US,
                    "10 POWER9 threads",
                    "-ll:ocpu 1 -ll:othr 10 (DISTAL Lassen scripts; OMP_PROC in the cannon log)",
                    guess("launch overhead"),
                ),
                proc_group(
                    ProcKind::Util,
                    2,
                    1,
                    POWER9_CORE_FP64,
                    CPU_LAUNCH_US,
                    "IBM POWER9 core",
                    "2 UTIL_PROC per node in the circuit and pennant logs",
                    guess("launch overhead"),
                ),
            ],
            memories: vec![
                mem_group(
                    MemKind::Sysmem,
                    1,
                    SYS_CSIZE_150000,
                    2.0 * POWER9_DRAM,
                    "DDR4-2666, 16 channels over 2 sockets",
                    "SYSTEM_MEM 157,286,400,000 bytes in the logs; 2 x 170 GB/s",
                    None,
                ),
                mem_group(
                    MemKind::Fbmem,
                    4,
                    FB_FSIZE_15000,
                    V100_HBM,
                    "V100 HBM2 16 GB",
                    "GPU_FB_MEM 15,728,640,000 bytes in the logs; 900 GB/s (data sheet)",
                    None,
                ),
                mem_group(
                    MemKind::Zcmem,
                    1,
                    ZC_ZSIZE_2048,
                    POWER9_DRAM,
                    "pinned host DRAM",
                    "Z_COPY_MEM 2,147,483,648 bytes in the logs",
                    None,
                ),
                mem_group(
                    MemKind::Rdmem,
                    1,
                    RD_RSIZE_512,
                    POWER9_DRAM,
                    "registered host DRAM",
                    "REGDMA_MEM 536,870,912 bytes in the logs",
                    None,
                ),
            ],
            affinities,
        },
        links,
    }
}

/// Names of the built-in machine presets.
const PRESET_NAMES: [&str; 5] = ["p100x4", "h200", "2x4gpu", "4x4gpu", "16x4gpu"];

impl Machine {
    /// A built-in machine by name (see [`Machine::preset_names`]); None for
    /// an unknown name.
    pub fn preset(name: &str) -> Option<Machine> {
        match name {
            "p100x4" => Some(p100x4()),
            "h200" => Some(h200()),
            "2x4gpu" => Some(v100_cluster("2x4gpu", 2)),
            "4x4gpu" => Some(v100_cluster("4x4gpu", 4)),
            "16x4gpu" => Some(v100_cluster("16x4gpu", 16)),
            _ => None,
        }
    }

    /// The names [`Machine::preset`] accepts.
    pub fn preset_names() -> &'static [&'static str] {
        &PRESET_NAMES
    }
}
