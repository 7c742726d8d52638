//! The machine description of the GPUs and host present: what device
//! discovery (and `mapwright calibrate`) measures, turned into a
//! [`Machine`] the mapper and the simulator use.
//!
//! Peak figures come from the device attributes (SM count, clock, compute
//! capability, memory clock and bus width) and the per-SM throughput of
//! each architecture (NVIDIA's CUDA C Programming Guide, "Arithmetic
//! Instructions" throughput table); host figures from `/proc/cpuinfo`,
//! `/proc/meminfo` and the thread count. Measured figures, where
//! `calibrate` gives them, replace the derived ones. Nothing here needs
//! CUDA: the attribute reading lives in the `cuda` feature's `gpu` module.

use crate::machine::{
    Affinity, LinkKind, Machine, MemGroup, MemKind, Node, ProcGroup, ProcKind, Scope,
};

/// What the driver reports about one GPU.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuInfo {
    pub ordinal: usize,
    pub name: String,
    /// Compute capability (major, minor).
    pub cc: (i32, i32),
    pub sms: u32,
    /// SM clock, kHz.
    pub clock_khz: u32,
    /// Memory clock, kHz.
    pub mem_clock_khz: u32,
    pub bus_width_bits: u32,
    pub total_mem: u64,
    /// Whether it can access each other GPU's memory directly.
    pub peers: Vec<bool>,
}

pub use crate::machine::host::{host_info, HostInfo};

/// Figures `mapwright calibrate` measures (all optional).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Calibration {
    /// Host to device over pinned memory, GB/s.
    pub h2d_gbps: Option<f64>,
    /// Device to host into pinned memory, GB/s.
    pub d2h_gbps: Option<f64>,
    /// Device-to-device copy, GB/s of bytes read plus written.
    pub d2d_gbps: Option<f64>,
    /// Between two GPUs, GB/s.
    pub peer_gbps: Option<f64>,
    /// cuBLAS DGEMM / SGEMM rate, GFLOP/s.
    pub dgemm_gflops: Option<f64>,
    pub sgemm_gflops: Option<f64>,
    /// Empty-kernel launch plus completion, microseconds.
    pub launch_us: Option<f64>,
    /// A kernel writing every double of mapped pinned (zero-copy) host
    /// memory, GB/s (what `calibrate` measures and prints as "zero-copy
    /// kernel writes"). Writes cross PCIe as posted transactions; a kernel
    /// reading zero-copy memory waits a round trip per request, so this is
    /// an upper bound for reads.
    pub zero_copy_gbps: Option<f64>,
}

/// FP64 and FP32 operations per SM per clock (an FMA counts as two) for a
/// compute capability.
pub fn flops_per_sm_clock(cc: (i32, i32)) -> (f64, f64) {
    match cc {
        (6, 0) | (7, 0) | (8, 0) => (64.0, 128.0),
        (9, 0) | (10, 0) => (128.0, 256.0),
        (6, _) => (4.0, 256.0),
        (7, 5) => (4.0, 128.0),
        (8, _) | (12, _) => (4.0, 256.0),
        (10, _) | (11, _) => (4.0, 256.0),
        _ => (4.0, 128.0),
    }
}

/// Peak FP64 and FP32 GFLOP/s of a GPU from its attributes.
pub fn peak_gflops(g: &GpuInfo) -> (f64, f64) {
    let (d, s) = flops_per_sm_clock(g.cc);
    let ghz = f64::from(g.clock_khz) / 1e6;
    let sms = f64::from(g.sms);
    (sms * ghz * d, sms * ghz * s)
}

/// Peak memory bandwidth of a GPU, GB/s: double data rate times the bus
/// width.
pub fn peak_mem_gbps(g: &GpuInfo) -> f64 {
    2.0 * f64::from(g.mem_clock_khz) * 1e3 * f64::from(g.bus_width_bits) / 8.0 / 1e9
}

/// A guess at the host-to-device bandwidth from the GPU generation (PCIe
/// Gen3 on Pascal/Volta/Turing, Gen4 on Ampere/Ada, Gen5 on Hopper and
/// later), GB/s achieved per direction.
pub fn pcie_guess_gbps(cc: (i32, i32)) -> f64 {
    match cc.0 {
        0..=7 => 12.0,
        8 => 25.0,
        _ => 55.0,
    }
}

const GIB: u64 = 1 << 30;

fn affinity(
    proc: ProcKind,
    mem: MemKind,
    scope: Scope,
    class: u32,
    gbps: f64,
    latency_us: f64,
    notes: &str,
) -> Affinity {
    Affinity {
        proc,
        mem,
        scope,
        legion_bandwidth: class,
        bandwidth_gbps: gbps,
        latency_us,
        notes: notes.into(),
        guess: None,
    }
}

/// The machine description of `gpus` on `host`, with measured figures from
/// `cal` where present. The processor configuration follows the presets:
/// CPU processors min(4, cores), one OMP processor of half the cores, two
/// utility processors; Legion's bandwidth classes as the wrapper logs print
/// them (own framebuffer 200, peer 10, zero-copy from a GPU 20, system
/// memory from a CPU 100, zero-copy from a CPU 40).
pub fn machine_from(gpus: &[GpuInfo], host: &HostInfo, cal: &Calibration) -> Machine {
    let ngpu = gpus.len() as u32;
    let g0 = gpus.first();
    let (peak64, peak32) = g0.map_or((0.0, 0.0), peak_gflops);
    let eff_gemm = crate::sim::model::GEMM_EFF_GPU;
    let eff_stream = crate::sim::model::STREAM_EFF_GPU;
    // Measured GEMM rates become the peak the simulator's GEMM efficiency
    // turns back into them.
    let fp64 = cal.dgemm_gflops.map_or(peak64, |m| m / eff_gemm);
    let fp32 = cal.sgemm_gflops.map_or(peak32, |m| m / eff_gemm);
    let hbm = cal
        .d2d_gbps
        .map_or_else(|| g0.map_or(100.0, peak_mem_gbps), |m| m / eff_stream);
    let pcie = cal
        .h2d_gbps
        .zip(cal.d2h_gbps)
        .map(|(a, b)| a.min(b))
        .or(cal.h2d_gbps)
        .unwrap_or_else(|| g0.map_or(12.0, |g| pcie_guess_gbps(g.cc)));
    let zc = cal.zero_copy_gbps.unwrap_or(pcie);
    let all_peers = gpus
        .iter()
        .all(|g| g.peers.iter().filter(|p| **p).count() + 1 >= gpus.len());
    let peer = cal.peer_gbps.unwrap_or(pcie);
    let peer_kind = if peer > 1.5 * pcie {
        LinkKind::Nvlink
    } else {
        LinkKind::Pcie
    };
    let launch = cal.launch_us.unwrap_or(5.0);
    let measured = |m: Option<f64>| if m.is_some() { "measured" } else { "derived" };

    let cores = host.cores.max(1);
    let core_fp64 = host.mhz / 1000.0 * host.flops_per_cycle;
    let dram = (f64::from(cores) * 10.0).clamp(20.0, 300.0);
    let core_bw = 12.0;
    let host_guess =
        Some("host rates from /proc/cpuinfo (clock x vector width); DRAM bandwidth guessed".into());
    let mut processors = vec![ProcGroup {
        kind: ProcKind::Cpu,
        count: cores.min(4),
        cores: 1,
        gflops_fp64: core_fp64,
        gflops_fp32: 2.0 * core_fp64,
        launch_overhead_us: 2.0,
        model: host.model.clone(),
        notes: format!("{cores} host cores at {:.0} MHz", host.mhz),
        guess: host_guess.clone(),
    }];
    if ngpu > 0 {
        let g = g0.expect("at least one GPU");
        processors.push(ProcGroup {
            kind: ProcKind::Gpu,
            count: ngpu,
            cores: 1,
            gflops_fp64: fp64,
            gflops_fp32: fp32,
            launch_overhead_us: launch,
            model: g.name.clone(),
            notes: format!(
                "compute capability {}.{}, {} SMs at {} MHz: peak {:.0} / {:.0} GFLOP/s FP64 / \
                 FP32; GEMM rates {}, launch overhead {}",
                g.cc.0,
                g.cc.1,
                g.sms,
                g.clock_khz / 1000,
                peak64,
                peak32,
                measured(cal.dgemm_gflops),
                if cal.launch_us.is_some() {
                    "measured"
                } else {
                    "guessed"
                }
            ),
            guess: cal
                .launch_us
                .is_none()
                .then(|| "launch overhead (run `mapwright calibrate`)".to_string()),
        });
    }
    processors.push(ProcGroup {
        kind: ProcKind::Omp,
        count: 1,
        cores: (cores / 2).max(1),
        gflops_fp64: core_fp64 * f64::from((cores / 2).max(1)),
        gflops_fp32: 2.0 * core_fp64 * f64::from((cores / 2).max(1)),
        launch_overhead_us: 2.0,
        model: format!("{} host threads", (cores / 2).max(1)),
        notes: String::new(),
        guess: host_guess.clone(),
    });
    processors.push(ProcGroup {
        kind: ProcKind::Util,
        count: 2,
        cores: 1,
        gflops_fp64: core_fp64,
        gflops_fp32: 2.0 * core_fp64,
        launch_overhead_us: 2.0,
        model: host.model.clone(),
        notes: String::new(),
        guess: host_guess.clone(),
    });

    let mut memories = vec![MemGroup {
        kind: MemKind::Sysmem,
        count: 1,
        capacity_bytes: host.mem_bytes / 4 * 3,
        bandwidth_gbps: dram,
        model: "host DRAM".into(),
        notes: "three quarters of MemTotal".into(),
        guess: Some("DRAM bandwidth".into()),
    }];
    let mut affinities = Vec::new();
    for kind in [ProcKind::Cpu, ProcKind::Omp, ProcKind::Util] {
        let bw = if kind == ProcKind::Omp {
            dram * 0.6
        } else {
            core_bw
        };
        affinities.push(affinity(
            kind,
            MemKind::Sysmem,
            Scope::Shared,
            100,
            bw,
            0.1,
            "Legion class 100",
        ));
        if ngpu > 0 {
            affinities.push(affinity(
                kind,
                MemKind::Zcmem,
                Scope::Shared,
                40,
                bw,
                0.1,
                "pinned host DRAM; Legion class 40",
            ));
        }
    }
    let mut links = Vec::new();
    if ngpu > 0 {
        let total = gpus.iter().map(|g| g.total_mem).min().unwrap_or(0);
        memories.push(MemGroup {
            kind: MemKind::Fbmem,
            count: ngpu,
            capacity_bytes: total / 20 * 19,
            bandwidth_gbps: hbm,
            model: g0.map(|g| g.name.clone()).unwrap_or_default(),
            notes: format!(
                "95 % of {} bytes; bandwidth {} ({:.0} GB/s peak from the memory clock and bus)",
                total,
                measured(cal.d2d_gbps),
                g0.map_or(0.0, peak_mem_gbps)
            ),
            guess: None,
        });
        memories.push(MemGroup {
            kind: MemKind::Zcmem,
            count: 1,
            capacity_bytes: 2 * GIB,
            bandwidth_gbps: dram,
            model: "pinned host DRAM".into(),
            notes: "-ll:zsize 2048 as in the Legion run scripts".into(),
            guess: Some("DRAM bandwidth".into()),
        });
        affinities.push(affinity(
            ProcKind::Gpu,
            MemKind::Fbmem,
            Scope::Own,
            200,
            hbm,
            0.5,
            "own framebuffer; Legion class 200",
        ));
        if ngpu > 1 && all_peers {
            affinities.push(affinity(
                ProcKind::Gpu,
                MemKind::Fbmem,
                Scope::Peer,
                10,
                peer,
                1.5,
                "peer framebuffer; Legion class 10",
            ));
        }
        affinities.push(affinity(
            ProcKind::Gpu,
            MemKind::Zcmem,
            Scope::Shared,
            20,
            zc,
            1.5,
            "zero-copy over the host link; Legion class 20",
        ));
        let link =
            |kind, from, to, gbps, lat: f64, notes: &str, guessed: bool| crate::machine::Link {
                kind,
                from,
                to,
                inter_node: false,
                bandwidth_gbps: gbps,
                latency_us: lat,
                notes: notes.into(),
                guess: guessed.then(|| "run `mapwright calibrate` to measure".into()),
            };
        let pcie_guessed = cal.h2d_gbps.is_none();
        links.push(link(
            LinkKind::Pcie,
            MemKind::Fbmem,
            MemKind::Sysmem,
            pcie,
            5.0,
            "host link",
            pcie_guessed,
        ));
        links.push(link(
            LinkKind::Pcie,
            MemKind::Fbmem,
            MemKind::Zcmem,
            pcie,
            5.0,
            "host link",
            pcie_guessed,
        ));
        if ngpu > 1 {
            links.push(link(
                peer_kind,
                MemKind::Fbmem,
                MemKind::Fbmem,
                peer,
                2.0,
                "between GPUs",
                cal.peer_gbps.is_none(),
            ));
        }
        links.push(link(
            LinkKind::Dram,
            MemKind::Sysmem,
            MemKind::Zcmem,
            dram / 2.0,
            1.0,
            "a copy reads and writes DRAM",
            true,
        ));
    }
    let name = match g0 {
        Some(g) => format!(
            "local-{}x{}",
            ngpu,
            g.name
                .split_whitespace()
                .last()
                .unwrap_or("gpu")
                .to_ascii_lowercase()
        ),
        None => "local-host".into(),
    };
    Machine {
        name,
        description: format!(
            "This machine: {ngpu} x {} and {cores} host cores ({})",
            g0.map_or("no GPU", |g| g.name.as_str()),
            host.model
        ),
        nodes: 1,
        notes: vec![
            "Discovered by mapwright's cuda backend (runtime/CUDA.md).".into(),
            if cal == &Calibration::default() {
                "Figures derived from device attributes; `mapwright calibrate --backend cuda` \
                 measures them."
                    .into()
            } else {
                format!(
                    "Calibrated: {}",
                    serde_json::to_string(cal).unwrap_or_default()
                )
            },
        ],
        node: Node {
            processors,
            memories,
            affinities,
        },
        links,
    }
}

/// The description with `n` logical GPU processors per node sharing the
/// physical ones (the `cuda` backend runs logical GPU `g` on physical GPU
/// `g % count`, each on its own stream): each logical GPU gets its share
/// of the flop rate, framebuffer capacity and bandwidth, and copies between
/// logical GPUs on one physical GPU travel at device-copy speed. This is
/// how mappers written for several GPUs per node (the experts assume four)
/// run on a machine with fewer. Unchanged when `n` is not above the
/// physical count.
pub fn with_logical_gpus(m: &Machine, n: u32) -> Machine {
    let physical = m.procs_per_node(ProcKind::Gpu);
    if physical == 0 || n <= physical {
        return m.clone();
    }
    let share = f64::from(n) / f64::from(physical);
    let mut out = m.clone();
    for g in out
        .node
        .processors
        .iter_mut()
        .filter(|g| g.kind == ProcKind::Gpu)
    {
        g.count = n;
        g.gflops_fp64 /= share;
        g.gflops_fp32 /= share;
        g.notes = format!("{}; {n} logical GPUs share {physical}", g.notes);
    }
    let mut fb_bw = 0.0;
    for mg in out
        .node
        .memories
        .iter_mut()
        .filter(|x| x.kind == MemKind::Fbmem)
    {
        mg.count = n;
        mg.capacity_bytes = (mg.capacity_bytes as f64 / share) as u64;
        mg.bandwidth_gbps /= share;
        fb_bw = mg.bandwidth_gbps;
    }
    for a in out
        .node
        .affinities
        .iter_mut()
        .filter(|a| a.proc == ProcKind::Gpu && a.mem == MemKind::Fbmem)
    {
        a.bandwidth_gbps /= share;
    }
    if !out
        .node
        .affinities
        .iter()
        .any(|a| a.proc == ProcKind::Gpu && a.mem == MemKind::Fbmem && a.scope == Scope::Peer)
    {
        out.node.affinities.push(affinity(
            ProcKind::Gpu,
            MemKind::Fbmem,
            Scope::Peer,
            10,
            fb_bw,
            1.0,
            "another logical GPU on the same physical GPU",
        ));
    }
    if out.link(MemKind::Fbmem, MemKind::Fbmem, false).is_none() {
        out.links.push(crate::machine::Link {
            kind: LinkKind::Nvlink,
            from: MemKind::Fbmem,
            to: MemKind::Fbmem,
            inter_node: false,
            bandwidth_gbps: fb_bw,
            latency_us: 2.0,
            notes: "logical GPUs on one physical GPU: a device-to-device copy".into(),
            guess: None,
        });
    }
    out.name = format!("{}-as-{n}", m.name);
    out.notes.push(format!(
        "{n} logical GPUs on {physical} physical: each has 1/{share} of a GPU's rates and \
         memory."
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn h200_like() -> GpuInfo {
        GpuInfo {
            ordinal: 0,
            name: "NVIDIA H200".into(),
            cc: (9, 0),
            sms: 132,
            clock_khz: 1_980_000,
            mem_clock_khz: 3_201_000,
            bus_width_bits: 6144,
            total_mem: 150_000_000_000,
            peers: vec![false],
        }
    }

    fn host() -> HostInfo {
        HostInfo {
            cores: 16,
            model: "test CPU".into(),
            mhz: 2500.0,
            mem_bytes: 128 << 30,
            flops_per_cycle: 16.0,
        }
    }

    #[test]
    fn an_h200_has_its_data_sheet_peaks() {
        let (d, s) = peak_gflops(&h200_like());
        // 132 SMs x 1.98 GHz x 128 = 33.45 TFLOP/s FP64 (data sheet: 34).
        assert!((d - 33_454.0).abs() < 10.0, "{d}");
        assert!((s - 66_908.0).abs() < 10.0, "{s}");
        // 2 x 3.201 GHz x 768 bytes = 4.92 TB/s (data sheet: 4.8).
        assert!((peak_mem_gbps(&h200_like()) - 4916.7).abs() < 1.0);
    }

    #[test]
    fn discovered_machines_are_valid_and_usable_by_the_simulator() {
        let m = machine_from(&[h200_like()], &host(), &Calibration::default());
        m.validate().unwrap();
        assert_eq!(m.procs_per_node(ProcKind::Gpu), 1);
        assert_eq!(m.procs_per_node(ProcKind::Cpu), 4);
        assert!(m.can_reach(ProcKind::Gpu, MemKind::Zcmem));
        assert_eq!(m.reachable(ProcKind::Gpu)[0], MemKind::Fbmem);
        let app = crate::app::App::builtin("stencil").unwrap();
        let d = crate::sim::reference::default_gpu(&app, &m);
        let o = crate::sim::simulate(&d, &app, &m, 0, 0.0);
        assert!(o.status.is_ok(), "{}", o.raw_output);
        // Text round trip.
        let back = Machine::from_json_str(&m.to_json_pretty().unwrap()).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn calibration_replaces_derived_figures() {
        let mut four = Vec::new();
        for i in 0..4 {
            let mut g = h200_like();
            g.ordinal = i;
            g.peers = vec![true; 4];
            four.push(g);
        }
        let cal = Calibration {
            h2d_gbps: Some(50.0),
            d2h_gbps: Some(40.0),
            d2d_gbps: Some(3600.0),
            peer_gbps: Some(300.0),
            dgemm_gflops: Some(54_000.0),
            launch_us: Some(3.0),
            ..Calibration::default()
        };
        let m = machine_from(&four, &host(), &cal);
        m.validate().unwrap();
        let g = m.processor(ProcKind::Gpu).unwrap();
        assert!((g.gflops_fp64 - 60_000.0).abs() < 1e-6);
        assert_eq!(g.launch_overhead_us, 3.0);
        let fb = m.memory(MemKind::Fbmem).unwrap();
        assert!((fb.bandwidth_gbps - 4800.0).abs() < 1e-6);
        let peer = m.link(MemKind::Fbmem, MemKind::Fbmem, false).unwrap();
        assert_eq!(peer.kind, LinkKind::Nvlink);
        assert_eq!(
            m.link(MemKind::Fbmem, MemKind::Sysmem, false)
                .unwrap()
                .bandwidth_gbps,
            40.0
        );
    }

    #[test]
    fn logical_gpus_share_the_physical_ones() {
        let m = machine_from(&[h200_like()], &host(), &Calibration::default());
        let four = with_logical_gpus(&m, 4);
        four.validate().unwrap();
        assert_eq!(four.procs_per_node(ProcKind::Gpu), 4);
        assert_eq!(four.mems_per_node(MemKind::Fbmem), 4);
        let g1 = m.processor(ProcKind::Gpu).unwrap().gflops_fp64;
        let g4 = four.processor(ProcKind::Gpu).unwrap().gflops_fp64;
        assert!((g1 / g4 - 4.0).abs() < 1e-9);
        assert!(four.link(MemKind::Fbmem, MemKind::Fbmem, false).is_some());
        assert_eq!(with_logical_gpus(&m, 1), m);
        // The experts, written for four GPUs per node, map onto it.
        let app = crate::app::App::builtin("stencil").unwrap();
        let text = crate::app::expert_mapper_text("stencil").unwrap();
        let d = (crate::sim::default_resolver())(text, &app, &four);
        let o = crate::sim::simulate(&d, &app, &four, 0, 0.0);
        assert!(o.status.is_ok(), "{}", o.raw_output);
    }

    #[test]
    fn host_info_reads_this_machine() {
        let h = host_info();
        assert!(h.cores >= 1 && h.mhz > 0.0 && h.mem_bytes > 0);
        let m = machine_from(&[], &h, &Calibration::default());
        m.validate().unwrap();
        assert_eq!(m.procs_per_node(ProcKind::Gpu), 0);
    }
}
