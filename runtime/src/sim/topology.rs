//! The machine as the simulator indexes it: every processor and memory of
//! every node gets a dense id, and a copy between two memories gets a route
//! (the shared resources it occupies, each with a bandwidth and latency).
//!
//! Resources are what contention is computed on: copies that share one
//! (the same NVLink direction, one GPU's PCIe lane, a node's network port)
//! share its bandwidth.

use crate::machine::{LinkKind, Machine, MemKind, ProcKind};

use super::model;

/// Dense processor id: `node * procs_per_node + offset(kind) + index`.
pub type ProcId = usize;
/// Dense memory id: `node * mems_per_node + offset(kind) + index`.
pub type MemId = usize;

/// A shared resource a copy occupies: copies on the same resource share
/// its bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resource {
    /// A direct link between two memories of a node, one direction
    /// (framebuffer pairs over NVLink, socket memories over QPI/X-Bus).
    Peer(LinkKind, MemId, MemId),
    /// A GPU's own link to host memory, host to device (PCIe lane or the
    /// Power9 CPU NVLink); the id is the framebuffer's.
    ToDevice(LinkKind, MemId),
    /// The same link, device to host.
    FromDevice(LinkKind, MemId),
    /// Copies between host memories of a node, which share its DRAM.
    HostCopies(u32),
    /// A node's network port, sending.
    NetOut(u32),
    /// A node's network port, receiving.
    NetIn(u32),
    /// A copy the description has no link for, staged at the slower
    /// memory's bandwidth.
    Staged(MemId, MemId),
}

/// One leg of a copy.
#[derive(Debug, Clone, Copy)]
pub struct Hop {
    pub res: Resource,
    /// Sustained bandwidth, bytes per second.
    pub bytes_per_s: f64,
    /// Fixed cost of one transfer, seconds.
    pub latency_s: f64,
}

/// The legs of one copy (at most three: device, network, device).
#[derive(Debug, Clone, Copy, Default)]
pub struct Route {
    pub hops: [Option<Hop>; 3],
}

impl Route {
    fn push(&mut self, hop: Hop) {
        if let Some(slot) = self.hops.iter_mut().find(|h| h.is_none()) {
            *slot = Some(hop);
        }
    }

    /// The legs present.
    pub fn legs(&self) -> impl Iterator<Item = &Hop> {
        self.hops.iter().flatten()
    }
}

/// Dense ids over a machine.
///
/// Every node has the same processors and memories, so the tables below
/// are per node (indexed by the id's offset within its node) and built once
/// per simulation: the schedule asks for a processor's kind, its home
/// memory and its access costs thousands of times per run, and each answer
/// is one index instead of scans over the description.
pub struct Topo<'m> {
    pub machine: &'m Machine,
    procs_per_node: usize,
    mems_per_node: usize,
    /// (kind, count, offset) per processor group.
    proc_groups: Vec<(ProcKind, u32, usize)>,
    /// (kind, count, offset) per memory group.
    mem_groups: Vec<(MemKind, u32, usize)>,
    /// (kind, index within its group) per processor offset.
    proc_local: Vec<(ProcKind, u32)>,
    /// (group, index within it) per memory offset.
    mem_local: Vec<(usize, u32)>,
    /// Per memory group: capacity (bytes), peak bandwidth (bytes/s), and
    /// whether the node has a single memory of the kind (shared).
    mem_facts: Vec<(u64, f64, bool)>,
    /// The home memory's offset per (processor offset, memory group).
    home_local: Vec<Option<usize>>,
    /// [`Topo::access`] per (processor offset, memory offset), worked out
    /// on first use (a run touches a few of the pairs).
    access_local: Vec<std::cell::OnceCell<Option<(f64, f64)>>>,
    /// The best memory each processor group's kind reaches
    /// ([`Machine::reachable`]'s first), asked once per task.
    best_mem: Vec<(ProcKind, Option<MemKind>)>,
}

impl<'m> Topo<'m> {
    pub fn new(machine: &'m Machine) -> Topo<'m> {
        let mut proc_groups = Vec::new();
        let mut proc_local = Vec::new();
        let mut off = 0usize;
        for p in &machine.node.processors {
            proc_groups.push((p.kind, p.count, off));
            proc_local.extend((0..p.count).map(|i| (p.kind, i)));
            off += p.count as usize;
        }
        let procs_per_node = off;
        let mut mem_groups = Vec::new();
        let mut mem_local = Vec::new();
        let mut mem_facts = Vec::new();
        let mut off = 0usize;
        for (g, m) in machine.node.memories.iter().enumerate() {
            mem_groups.push((m.kind, m.count, off));
            mem_local.extend((0..m.count).map(|i| (g, i)));
            // As `Machine::capacity`, `Machine::memory` and
            // `Machine::mems_per_node` answer for the kind: the first group
            // of that kind.
            let first = machine.memory(m.kind);
            mem_facts.push((
                first.map_or(0, |f| f.capacity_bytes),
                first.map_or(1e9, |f| f.bandwidth_gbps * 1e9),
                machine.mems_per_node(m.kind) <= 1,
            ));
            off += m.count as usize;
        }
        let mems_per_node = off;
        let mut home_local = Vec::with_capacity(procs_per_node * mem_groups.len());
        for &(pkind, idx) in &proc_local {
            for &(mkind, _, _) in &mem_groups {
                home_local.push(Self::home_offset(machine, &mem_groups, pkind, idx, mkind));
            }
        }
        let best_mem = proc_groups
            .iter()
            .map(|g| (g.0, machine.reachable(g.0).first().copied()))
            .collect();
        Topo {
            machine,
            best_mem,
            procs_per_node,
            mems_per_node,
            proc_groups,
            mem_groups,
            proc_local,
            mem_local,
            mem_facts,
            home_local,
            access_local: (0..procs_per_node * mems_per_node)
                .map(|_| std::cell::OnceCell::new())
                .collect(),
        }
    }

    /// The offset within a node of processor `idx` of `pkind`'s memory of
    /// `mkind`: its own one when the node has several of that kind (a
    /// GPU's framebuffer, a socket's memory), the node's single one
    /// otherwise.
    fn home_offset(
        machine: &Machine,
        mem_groups: &[(MemKind, u32, usize)],
        pkind: ProcKind,
        idx: u32,
        mkind: MemKind,
    ) -> Option<usize> {
        let count = machine.mems_per_node(mkind);
        let index = if count <= 1 {
            0
        } else {
            machine.own_memory_index(pkind, idx, mkind).unwrap_or(0)
        };
        let g = mem_groups.iter().find(|g| g.0 == mkind)?;
        (index < g.1).then(|| g.2 + index as usize)
    }

    pub fn nodes(&self) -> u32 {
        self.machine.nodes
    }

    /// Total processor ids.
    pub fn proc_count(&self) -> usize {
        self.procs_per_node * self.machine.nodes as usize
    }

    /// Total memory ids.
    pub fn mem_count(&self) -> usize {
        self.mems_per_node * self.machine.nodes as usize
    }

    /// Processors of `kind` per node.
    pub fn procs_of(&self, kind: ProcKind) -> u32 {
        self.proc_groups
            .iter()
            .find(|g| g.0 == kind)
            .map_or(0, |g| g.1)
    }

    /// The id of processor `index` of `kind` on `node`, if it exists.
    pub fn proc_id(&self, node: u32, kind: ProcKind, index: u32) -> Option<ProcId> {
        if node >= self.machine.nodes {
            return None;
        }
        let g = self.proc_groups.iter().find(|g| g.0 == kind)?;
        (index < g.1).then(|| node as usize * self.procs_per_node + g.2 + index as usize)
    }

    /// (node, kind, index) of a processor id.
    pub fn proc_info(&self, id: ProcId) -> (u32, ProcKind, u32) {
        let node = id / self.procs_per_node.max(1);
        let rest = id % self.procs_per_node.max(1);
        match self.proc_local.get(rest) {
            Some(&(kind, idx)) => (node as u32, kind, idx),
            None => (node as u32, ProcKind::Cpu, 0),
        }
    }

    /// The id of memory `index` of `kind` on `node`, if it exists.
    pub fn mem_id(&self, node: u32, kind: MemKind, index: u32) -> Option<MemId> {
        if node >= self.machine.nodes {
            return None;
        }
        let g = self.mem_groups.iter().find(|g| g.0 == kind)?;
        (index < g.1).then(|| node as usize * self.mems_per_node + g.2 + index as usize)
    }

    /// (node, kind, index) of a memory id.
    pub fn mem_info(&self, id: MemId) -> (u32, MemKind, u32) {
        let node = id / self.mems_per_node.max(1);
        let rest = id % self.mems_per_node.max(1);
        match self.mem_local.get(rest) {
            Some(&(g, idx)) => (node as u32, self.mem_groups[g].0, idx),
            None => (node as u32, MemKind::Sysmem, 0),
        }
    }

    /// The memory of `kind` processor `proc` uses: its own one when the
    /// node has several of that kind (a GPU's framebuffer, a socket's
    /// memory), the node's single one otherwise.
    pub fn home(&self, proc: ProcId, kind: MemKind) -> Option<MemId> {
        let ppn = self.procs_per_node.max(1);
        let (node, rest) = (proc / ppn, proc % ppn);
        if node >= self.machine.nodes as usize || rest >= self.proc_local.len() {
            return None;
        }
        let g = self.mem_groups.iter().position(|g| g.0 == kind)?;
        let local = self.home_local[rest * self.mem_groups.len() + g]?;
        Some(node * self.mems_per_node + local)
    }

    /// The memory kind `kind` reaches best (Legion's default target
    /// memory), if any.
    pub fn best_memory(&self, kind: ProcKind) -> Option<MemKind> {
        match self.best_mem.iter().find(|b| b.0 == kind) {
            Some(b) => b.1,
            None => self.machine.reachable(kind).first().copied(),
        }
    }

    /// Per-group facts of a memory id.
    fn facts(&self, mem: MemId) -> Option<&(u64, f64, bool)> {
        let rest = mem % self.mems_per_node.max(1);
        let &(g, _) = self.mem_local.get(rest)?;
        self.mem_facts.get(g)
    }

    /// Capacity of a memory, bytes.
    pub fn capacity(&self, mem: MemId) -> u64 {
        self.facts(mem).map_or(0, |f| f.0)
    }

    /// Bandwidth (bytes/s) and latency (s) at which processor `proc`
    /// accesses memory `mem` directly; None when it cannot.
    pub fn access(&self, proc: ProcId, mem: MemId) -> Option<(f64, f64)> {
        let ppn = self.procs_per_node.max(1);
        let mpn = self.mems_per_node.max(1);
        if proc / ppn != mem / mpn {
            return None;
        }
        match self.access_local.get((proc % ppn) * mpn + mem % mpn) {
            Some(cell) => *cell.get_or_init(|| self.access_uncached(proc, mem)),
            None => self.access_uncached(proc, mem),
        }
    }

    /// [`Topo::access`] worked out from the description.
    fn access_uncached(&self, proc: ProcId, mem: MemId) -> Option<(f64, f64)> {
        let (pnode, pkind, pidx) = self.proc_info(proc);
        let (mnode, mkind, midx) = self.mem_info(mem);
        if pnode != mnode {
            return None;
        }
        let a = self.machine.access(pkind, pidx, mkind, midx)?;
        let mut bw = a.bandwidth_gbps * 1e9;
        // A processor never reads faster than the memory itself delivers.
        if let Some(m) = self.machine.memory(mkind) {
            bw = bw.min(m.bandwidth_gbps * 1e9);
        }
        let eff = match (model::is_gpu(pkind), mkind) {
            (true, MemKind::Fbmem) => model::STREAM_EFF_GPU,
            (true, _) => model::ZEROCOPY_EFF_GPU,
            (false, _) => model::STREAM_EFF_HOST,
        };
        Some((bw * eff, a.latency_us * 1e-6))
    }

    /// Peak bandwidth of a memory, bytes/s (what all its users share).
    pub fn mem_bandwidth(&self, mem: MemId) -> f64 {
        self.facts(mem).map_or(1e9, |f| f.1)
    }

    /// Whether several processors share this memory (one per node).
    pub fn is_shared(&self, mem: MemId) -> bool {
        self.facts(mem).is_none_or(|f| f.2)
    }

    fn hop(res: Resource, gbps: f64, latency_us: f64) -> Hop {
        Hop {
            res,
            bytes_per_s: gbps * 1e9,
            latency_s: latency_us * 1e-6,
        }
    }

    /// The route of a copy from `src` to `dst` (empty when they are the same
    /// memory). Within a node: the link the description gives between the
    /// two kinds; a framebuffer's link to the host is that GPU's own (its
    /// PCIe lane or CPU NVLink), per direction; framebuffer pairs get their
    /// own link per direction; host-to-host copies share the node's DRAM.
    /// Between nodes: each node's network port, plus the device legs when a
    /// framebuffer is involved and the description routes through the host.
    pub fn route(&self, src: MemId, dst: MemId) -> Route {
        let mut route = Route::default();
        if src == dst {
            return route;
        }
        let (sn, sk, _) = self.mem_info(src);
        let (dn, dk, _) = self.mem_info(dst);
        if sn != dn {
            match self.machine.link(sk, dk, true) {
                Some(l) => {
                    let gbps = l.bandwidth_gbps;
                    route.push(Self::hop(Resource::NetOut(sn), gbps, l.latency_us));
                    route.push(Self::hop(Resource::NetIn(dn), gbps, 0.0));
                }
                None => {
                    let gbps = self.mem_bandwidth(src).min(self.mem_bandwidth(dst)) / 1e9;
                    route.push(Self::hop(
                        Resource::Staged(src, dst),
                        gbps,
                        model::FALLBACK_COPY_LATENCY_US,
                    ));
                }
            }
            return route;
        }
        if let Some(hop) = self.direct_hop(src, dst) {
            route.push(hop);
            return route;
        }
        // No direct link: stage through the node's system memory.
        if let Some(sys) = self.mem_id(sn, MemKind::Sysmem, 0) {
            if sys != src && sys != dst {
                if let (Some(a), Some(b)) = (self.direct_hop(src, sys), self.direct_hop(sys, dst)) {
                    route.push(a);
                    route.push(b);
                    return route;
                }
            }
        }
        let gbps = self.mem_bandwidth(src).min(self.mem_bandwidth(dst)) / 1e9;
        route.push(Self::hop(
            Resource::Staged(src, dst),
            gbps,
            model::FALLBACK_COPY_LATENCY_US,
        ));
        route
    }

    /// A single-link copy within a node, if the description has the link.
    fn direct_hop(&self, src: MemId, dst: MemId) -> Option<Hop> {
        let (node, sk, _) = self.mem_info(src);
        let (_, dk, _) = self.mem_info(dst);
        let l = self.machine.link(sk, dk, false)?;
        let res = match (sk == MemKind::Fbmem, dk == MemKind::Fbmem) {
            (true, true) => Resource::Peer(l.kind, src, dst),
            (true, false) => Resource::FromDevice(l.kind, src),
            (false, true) => Resource::ToDevice(l.kind, dst),
            (false, false) => match l.kind {
                LinkKind::Smp => Resource::Peer(l.kind, src, dst),
                _ => Resource::HostCopies(node),
            },
        };
        Some(Self::hop(res, l.bandwidth_gbps, l.latency_us))
    }

    /// A readable name for a resource (metrics).
    pub fn resource_label(&self, res: Resource) -> String {
        let name = |k: LinkKind| match k {
            LinkKind::Nvlink => "NVLink",
            LinkKind::Pcie => "PCIe",
            LinkKind::Smp => "socket link",
            LinkKind::Dram => "DRAM",
            LinkKind::Network => "network",
        };
        match res {
            Resource::Peer(k, a, b) => {
                format!("{} {} -> {}", name(k), self.mem_label(a), self.mem_label(b))
            }
            Resource::ToDevice(k, fb) => format!("{} host -> {}", name(k), self.mem_label(fb)),
            Resource::FromDevice(k, fb) => format!("{} {} -> host", name(k), self.mem_label(fb)),
            Resource::HostCopies(n) => format!("node{n} host DRAM copies"),
            Resource::NetOut(n) => format!("node{n} network out"),
            Resource::NetIn(n) => format!("node{n} network in"),
            Resource::Staged(a, b) => {
                format!("staged {} -> {}", self.mem_label(a), self.mem_label(b))
            }
        }
    }

    /// `node0 GPU1`.
    pub fn proc_label(&self, id: ProcId) -> String {
        let (node, kind, idx) = self.proc_info(id);
        format!("node{node} {}{idx}", kind.dsl_name())
    }

    /// `node0 FBMEM1`.
    pub fn mem_label(&self, id: MemId) -> String {
        let (node, kind, idx) = self.mem_info(id);
        let name = kind.dsl_name().unwrap_or(kind.legion_name());
        format!("node{node} {name}{idx}")
    }

    /// A Realm-style hex id of a memory (`1e000000000000NN`), for error texts.
    pub fn realm_mem_id(&self, id: MemId) -> u64 {
        let (node, _, _) = self.mem_info(id);
        let local = id % self.mems_per_node.max(1);
        0x1e00_0000_0000_0000 | (u64::from(node) << 40) | local as u64
    }

    /// A Realm-style hex id of a processor (`1d000000000000NN`).
    pub fn realm_proc_id(&self, id: ProcId) -> u64 {
        let (node, _, _) = self.proc_info(id);
        let local = id % self.procs_per_node.max(1);
        0x1d00_0000_0000_0000 | (u64::from(node) << 40) | local as u64
    }
}
