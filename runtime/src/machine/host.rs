//! This host's CPU and memory as `/proc` and the standard library report
//! them: what the CUDA backend's machine description and the Legion
//! backend's host description start from.

/// What the host reports.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostInfo {
    pub cores: u32,
    pub model: String,
    pub mhz: f64,
    pub mem_bytes: u64,
    /// FP64 flops per cycle per core from the vector extensions.
    pub flops_per_cycle: f64,
}

/// The host as `/proc` and the standard library report it.
pub fn host_info() -> HostInfo {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let model = field("model name").unwrap_or_else(|| "unknown host CPU".into());
    let mhz = field("cpu MHz")
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(2500.0);
    let flags = field("flags").unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    let flops_per_cycle = if has("avx512f") {
        32.0
    } else if has("fma") && has("avx2") {
        16.0
    } else if has("avx") {
        8.0
    } else {
        4.0
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_bytes = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(16 << 30, |kb| kb * 1024);
    HostInfo {
        cores,
        model,
        mhz,
        mem_bytes,
        flops_per_cycle,
    }
}
