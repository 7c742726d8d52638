//! The machine Legion reports, as a mapwright machine description.
//!
//! The mapper reads Legion's machine (`Machine::ProcessorQuery`,
//! `MemoryQuery`, `get_proc_mem_affinity`) and hands the counts here. What
//! Legion does not know (flop rates, DRAM bandwidth) comes from
//! `/proc/cpuinfo` as in the `cuda` backend's discovery, marked as guesses.
//! Legion's processor and memory counts are the machine the mapper's
//! `Machine(KIND)` sees, so they are taken as reported, never guessed.

use crate::machine::host::host_info;
use crate::machine::{Affinity, Machine, MemGroup, MemKind, Node, ProcGroup, ProcKind, Scope};

/// Processors of one kind on one node, as Legion counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostProcessors {
    pub kind: ProcKind,
    pub count: u32,
}

/// Memories of one kind on one node, as Legion counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostMemory {
    pub kind: MemKind,
    pub count: u32,
    /// Capacity of one memory, bytes.
    pub capacity_bytes: u64,
}

/// "Processors of `proc` see memories of `mem` with Legion's bandwidth class".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostAffinity {
    pub proc: ProcKind,
    pub mem: MemKind,
    pub scope: Scope,
    pub legion_bandwidth: u32,
}

/// What Legion reports about the machine: address spaces and, for the
/// local one (the DSL's `Machine(KIND)` assumes identical nodes), its
/// processors, memories and affinities.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostFacts {
    pub nodes: u32,
    pub processors: Vec<HostProcessors>,
    pub memories: Vec<HostMemory>,
    pub affinities: Vec<HostAffinity>,
}

impl HostFacts {
    /// The machine description of this host. Kinds with no processor or
    /// memory are left out, as Legion leaves them out of its queries.
    pub fn machine(&self) -> Machine {
        let host = host_info();
        let core_fp64 = host.mhz / 1000.0 * host.flops_per_cycle;
        let guess = || {
            Some("rates from /proc/cpuinfo (clock x vector width); bandwidths guessed".to_string())
        };
        let processors = self
            .processors
            .iter()
            .filter(|p| p.count > 0)
            .map(|p| {
                let gpu = p.kind == ProcKind::Gpu;
                ProcGroup {
                    kind: p.kind,
                    count: p.count,
                    cores: 1,
                    // A GPU's rate is not something Legion reports; the
                    // simulator's GPU figures need `mapwright calibrate`.
                    gflops_fp64: if gpu { 5000.0 } else { core_fp64 },
                    gflops_fp32: if gpu { 10000.0 } else { 2.0 * core_fp64 },
                    launch_overhead_us: if gpu { 10.0 } else { 2.0 },
                    model: if gpu {
                        "GPU (reported by Legion)".into()
                    } else {
                        host.model.clone()
                    },
                    notes: format!("{} {} processors reported by Legion", p.count, p.kind),
                    guess: guess(),
                }
            })
            .collect();
        let dram = (f64::from(host.cores.max(1)) * 10.0).clamp(20.0, 300.0);
        let memories = self
            .memories
            .iter()
            .filter(|m| m.count > 0)
            .map(|m| MemGroup {
                kind: m.kind,
                count: m.count,
                capacity_bytes: m.capacity_bytes,
                bandwidth_gbps: if m.kind == MemKind::Fbmem {
                    500.0
                } else {
                    dram
                },
                model: format!("{} reported by Legion", m.kind.legion_name()),
                notes: "capacity as Legion is configured to use it".into(),
                guess: guess(),
            })
            .collect();
        let affinities = self
            .affinities
            .iter()
            .map(|a| Affinity {
                proc: a.proc,
                mem: a.mem,
                scope: a.scope,
                legion_bandwidth: a.legion_bandwidth,
                bandwidth_gbps: if a.mem == MemKind::Fbmem && a.scope == Scope::Own {
                    500.0
                } else {
                    12.0
                },
                latency_us: 0.1,
                notes: format!("Legion class {}", a.legion_bandwidth),
                guess: guess(),
            })
            .collect();
        Machine {
            name: "legion-host".into(),
            description: format!(
                "This host as Legion reports it: {} node(s) of {}",
                self.nodes.max(1),
                self.processors
                    .iter()
                    .filter(|p| p.count > 0)
                    .map(|p| format!("{} {}", p.count, p.kind))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            nodes: self.nodes.max(1),
            notes: vec![
                "Written by mapwright's Legion mapper (runtime/legion) from Legion's machine \
                 query: processor and memory counts, capacities and bandwidth classes are \
                 Legion's; rates are guesses."
                    .into(),
            ],
            node: Node {
                processors,
                memories,
                affinities,
            },
            links: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_only_host_has_no_gpu_in_its_description() {
        let facts = HostFacts {
            nodes: 1,
            processors: vec![
                HostProcessors {
                    kind: ProcKind::Cpu,
                    count: 2,
                },
                HostProcessors {
                    kind: ProcKind::Gpu,
                    count: 0,
                },
            ],
            memories: vec![HostMemory {
                kind: MemKind::Sysmem,
                count: 1,
                capacity_bytes: 1 << 30,
            }],
            affinities: vec![HostAffinity {
                proc: ProcKind::Cpu,
                mem: MemKind::Sysmem,
                scope: Scope::Shared,
                legion_bandwidth: 100,
            }],
        };
        let m = facts.machine();
        assert_eq!(m.procs_per_node(ProcKind::Cpu), 2);
        assert_eq!(m.procs_per_node(ProcKind::Gpu), 0);
        assert_eq!(m.reachable(ProcKind::Cpu), vec![MemKind::Sysmem]);
        m.validate().expect("a valid description");
    }
}
