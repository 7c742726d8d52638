//! The executor: instances, coherence, copies and kernel launches of one
//! run, on the host and (through the [`Device`] trait) on GPUs.
//!
//! Every region piece may have instances in several places (a GPU's
//! framebuffer, mapped pinned host memory, pageable host memory), each with
//! its own layout. Like Legion, the executor tracks which instances hold
//! valid data; a task that needs a piece where no valid copy is gets one
//! copied in (a raw copy when the layouts place elements identically, else
//! pack -> transfer -> unpack), and a write leaves only the written
//! instance valid. A GPU task whose data lives in pageable host memory
//! gets it staged into its framebuffer and written back after the launch.
//!
//! Host work (CPU and OMP processors, host-side packing) runs on host
//! threads; GPU work goes to the device's streams, one per logical GPU.
//! Without a device the executor runs everything on the host: that is how
//! the CPU reference runs, and how the tests exercise all of this without a
//! GPU.

use std::collections::HashMap;
use std::time::Instant;

use crate::decisions::LayoutDecision;

use super::kernels::{run_parallel, FieldList, Kernel};
use super::layout::{InstParams, InstanceLayout, Rect};
use super::plan::{Loc, Proc};
use super::CudaError;

/// An allocation made by a [`Device`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alloc {
    /// The device's handle, for [`Device::free`].
    pub id: u64,
    /// Host address (pinned memory), 0 if none.
    pub host: u64,
    /// Device address, 0 if none.
    pub dev: u64,
}

/// A tile GEMM on a GPU: `a (+)= b x c`, `n` x `n`, each operand's field 0
/// with its indexing.
#[derive(Debug, Clone, Copy)]
pub struct GemmCall {
    pub a: InstParams,
    pub b: InstParams,
    pub c: InstParams,
    pub n: u64,
    pub accumulate: bool,
}

/// What the executor needs from GPUs. Logical GPU `g` is any non-negative
/// index: the device maps it to a physical GPU and gives it its own stream.
pub trait Device {
    /// Physical GPUs.
    fn gpus(&self) -> usize;
    /// Allocates `bytes` in `loc` (`Fb` or `Pinned`).
    fn alloc(&mut self, loc: Loc, bytes: u64) -> Result<Alloc, CudaError>;
    /// Frees an allocation (after the work using it has finished).
    fn free(&mut self, a: Alloc);
    /// Launches a kernel on logical GPU `g`'s stream.
    fn launch(&mut self, g: usize, k: &Kernel, args: &[InstParams]) -> Result<(), CudaError>;
    /// A GEMM on logical GPU `g`'s stream.
    fn gemm(&mut self, g: usize, call: &GemmCall) -> Result<(), CudaError>;
    /// Copies `bytes` from `src` to `dst` (each a location and the address
    /// usable there: device address for `Fb`, host address otherwise) on
    /// logical GPU `g`'s stream. Host-to-host copies never come here.
    fn copy(
        &mut self,
        g: usize,
        dst: (Loc, u64),
        src: (Loc, u64),
        bytes: u64,
    ) -> Result<(), CudaError>;
    /// Makes logical GPU `to`'s stream wait for what `from`'s stream has
    /// been given so far.
    fn order(&mut self, from: usize, to: usize) -> Result<(), CudaError>;
    /// Makes every stream used so far wait for all of them.
    fn barrier(&mut self) -> Result<(), CudaError>;
    /// Waits on the host for everything issued.
    fn sync(&mut self) -> Result<(), CudaError>;
    /// Records a timing event on logical GPU `g`'s stream; returns its id.
    fn mark(&mut self, g: usize) -> Result<usize, CudaError>;
    /// Seconds between two recorded events (after [`Device::sync`]).
    fn elapsed(&mut self, start: usize, end: usize) -> Result<f64, CudaError>;
    /// Forgets recorded events.
    fn clear_marks(&mut self);
}

/// Page-aligned-or-better pageable host memory.
struct HostBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl HostBuf {
    fn new(bytes: u64, align: u64) -> Result<HostBuf, CudaError> {
        let align = (align.max(64)).next_power_of_two() as usize;
        let layout = std::alloc::Layout::from_size_align(bytes.max(8) as usize, align)
            .map_err(|e| CudaError::Plan(format!("host allocation of {bytes} bytes: {e}")))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(CudaError::OutOfMemory(format!(
                "failed allocation of size {bytes} bytes in host memory"
            )));
        }
        Ok(HostBuf { ptr, layout })
    }
}

impl Drop for HostBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

enum Storage {
    Host(HostBuf),
    Device(Alloc),
}

/// A logical region of the workload: pieces, each with extents and fields.
#[derive(Debug, Clone)]
pub struct RegionSpec {
    pub name: String,
    pub fields: usize,
    /// Extents of each piece.
    pub pieces: Vec<[u64; 2]>,
}

/// An instance id.
pub type InstId = usize;

struct Instance {
    region: usize,
    piece: usize,
    loc: Loc,
    layout: InstanceLayout,
    /// Host address of the aligned base (Host, Pinned), 0 if none.
    host: u64,
    /// Device address of the aligned base (Fb, Pinned), 0 if none.
    dev: u64,
    _storage: Storage,
}

/// How a task uses an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    ReadWrite,
}

impl Access {
    fn reads(self) -> bool {
        self != Access::Write
    }
    fn writes(self) -> bool {
        self != Access::Read
    }
}

/// Measurements of one run.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Bytes copied per link label.
    pub copy_bytes: HashMap<String, f64>,
    /// Busy seconds per processor label (timed iterations only).
    pub busy_s: HashMap<String, f64>,
    /// Seconds per task (slowest processor per launch, timed only).
    pub task_s: HashMap<String, f64>,
    /// Bytes allocated per memory label.
    pub mem_bytes: HashMap<String, f64>,
    /// Seconds spent in timed copies on GPU streams.
    pub copy_s: f64,
}

struct HostJob {
    proc: Proc,
    kernel: Kernel,
    args: Vec<InstParams>,
}

struct GpuSpan {
    proc: Proc,
    task: String,
    start: usize,
    end: usize,
}

/// Runs a workload's operations. See the module documentation.
pub struct Executor<'d> {
    dev: Option<&'d mut dyn Device>,
    regions: Vec<RegionSpec>,
    insts: Vec<Instance>,
    by_key: HashMap<(usize, usize, Loc, LayoutKey), InstId>,
    valid: HashMap<(usize, usize), Vec<InstId>>,
    scratch: HashMap<(u64, Loc), (u64, u64, Storage)>,
    host_jobs: Vec<HostJob>,
    gpu_pending: bool,
    /// Whether the current operations are timed.
    pub timed: bool,
    task: String,
    spans: Vec<GpuSpan>,
    open: HashMap<Proc, usize>,
    pub stats: Stats,
    /// Host threads for host-side packing of large rectangles.
    pub host_threads: usize,
}

/// A layout's identity for instance lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct LayoutKey {
    soa: bool,
    c_order: bool,
    align: u64,
}

fn key_of(l: &LayoutDecision) -> LayoutKey {
    LayoutKey {
        soa: l.soa,
        c_order: l.order == crate::decisions::Order::C,
        align: super::layout::alignment(l.align),
    }
}

fn link_label(dst: Loc, src: Loc) -> String {
    match (src, dst) {
        (Loc::Fb(a), Loc::Fb(b)) if a == b => format!("node0 GPU{a} device copy"),
        (Loc::Fb(a), Loc::Fb(b)) => format!("node0 peer GPU{a}->GPU{b}"),
        (Loc::Fb(a), _) => format!("node0 GPU{a} -> host"),
        (_, Loc::Fb(b)) => format!("node0 host -> GPU{b}"),
        _ => "node0 host memcpy".to_string(),
    }
}

impl<'d> Executor<'d> {
    /// An executor for `regions`, with GPUs through `dev` (None: host only).
    pub fn new(dev: Option<&'d mut dyn Device>, regions: Vec<RegionSpec>) -> Executor<'d> {
        Executor {
            dev,
            regions,
            insts: Vec::new(),
            by_key: HashMap::new(),
            valid: HashMap::new(),
            scratch: HashMap::new(),
            host_jobs: Vec::new(),
            gpu_pending: false,
            timed: false,
            task: String::new(),
            spans: Vec::new(),
            open: HashMap::new(),
            stats: Stats::default(),
            host_threads: std::thread::available_parallelism().map_or(4, |n| n.get()),
        }
    }

    fn device(&mut self) -> Result<&mut (dyn Device + 'd), CudaError> {
        match self.dev.as_deref_mut() {
            Some(d) => Ok(d),
            None => Err(CudaError::NoDevice(
                "a GPU location was used but no GPU is attached".into(),
            )),
        }
    }

    /// Whether GPUs are attached.
    pub fn has_device(&self) -> bool {
        self.dev.is_some()
    }

    /// Extents of a region piece.
    pub fn extents(&self, region: usize, piece: usize) -> [u64; 2] {
        self.regions[region].pieces[piece]
    }

    /// Waits for all GPU work, so the host may read what it wrote.
    pub fn sync(&mut self) -> Result<(), CudaError> {
        if self.gpu_pending {
            self.device()?.sync()?;
            self.gpu_pending = false;
        }
        Ok(())
    }

    fn alloc_storage(
        &mut self,
        loc: Loc,
        bytes: u64,
        align: u64,
    ) -> Result<(u64, u64, Storage), CudaError> {
        match loc {
            Loc::Host => {
                let b = HostBuf::new(bytes, align)?;
                let addr = b.ptr as u64;
                Ok((addr, 0, Storage::Host(b)))
            }
            _ => {
                let a = self.device()?.alloc(loc, bytes)?;
                Ok((a.host, a.dev, Storage::Device(a)))
            }
        }
    }

    /// The instance of a piece in `loc` with `layout`, made if needed
    /// (without valid data).
    pub fn instance(
        &mut self,
        region: usize,
        piece: usize,
        loc: Loc,
        layout: &LayoutDecision,
    ) -> Result<InstId, CudaError> {
        let key = (region, piece, loc, key_of(layout));
        if let Some(&id) = self.by_key.get(&key) {
            return Ok(id);
        }
        let spec = &self.regions[region];
        let l = InstanceLayout::new(&spec.pieces[piece], spec.fields, layout)
            .map_err(|e| CudaError::Plan(e.to_string()))?;
        let bytes = l.alloc_bytes();
        let (host, dev, storage) = self.alloc_storage(loc, bytes, l.align)?;
        *self.stats.mem_bytes.entry(loc.label()).or_insert(0.0) += bytes as f64;
        // Move the base to the alignment the layout asks for.
        let base_addr = if dev != 0 { dev } else { host };
        let off = l.base_offset(base_addr);
        let id = self.insts.len();
        self.insts.push(Instance {
            region,
            piece,
            loc,
            layout: l,
            host: if host != 0 { host + off } else { 0 },
            dev: if dev != 0 { dev + off } else { 0 },
            _storage: storage,
        });
        self.by_key.insert(key, id);
        Ok(id)
    }

    /// Creates the first instance of a piece and fills it on the host with
    /// `value(field, i, j)`; it becomes the only valid one.
    pub fn init(
        &mut self,
        region: usize,
        piece: usize,
        loc: Loc,
        layout: &LayoutDecision,
        value: &dyn Fn(usize, u64, u64) -> f64,
    ) -> Result<InstId, CudaError> {
        let id = self.instance(region, piece, loc, layout)?;
        let l = self.insts[id].layout.clone();
        let staging = if loc == Loc::Host || loc == Loc::Pinned {
            None
        } else {
            Some(HostBuf::new(l.alloc_bytes(), l.align)?)
        };
        self.sync()?;
        let base = match &staging {
            Some(b) => b.ptr as u64 + l.base_offset(b.ptr as u64),
            None => self.insts[id].host,
        };
        // SAFETY: `base` is the aligned base of an allocation of
        // `alloc_bytes`, and every index of the layout lies inside it.
        unsafe {
            let p = base as *mut f64;
            for f in 0..l.fields {
                for i in 0..l.extents[0] {
                    for j in 0..l.extents[1] {
                        *p.add(l.index(f, i, j)) = value(f, i, j);
                    }
                }
            }
        }
        if let Some(b) = staging {
            let dst = (loc, self.insts[id].dev);
            let g = gpu_of(loc);
            self.device()?
                .copy(g, dst, (Loc::Host, base), l.size_bytes)?;
            self.device()?.sync()?;
            drop(b);
        }
        self.valid.insert((region, piece), vec![id]);
        Ok(id)
    }

    /// Reads a piece back in canonical order: per field, point `(i, j)` at
    /// `i * extents[1] + j`.
    pub fn read(&mut self, region: usize, piece: usize) -> Result<Vec<Vec<f64>>, CudaError> {
        let src = self.any_valid(region, piece, None)?;
        let l = self.insts[src].layout.clone();
        let host_ok = matches!(self.insts[src].loc, Loc::Host | Loc::Pinned);
        self.sync()?;
        let (buf, base) = if host_ok {
            (None, self.insts[src].host)
        } else {
            let b = HostBuf::new(l.alloc_bytes(), l.align)?;
            let base = b.ptr as u64 + l.base_offset(b.ptr as u64);
            let loc = self.insts[src].loc;
            let dev = self.insts[src].dev;
            self.device()?
                .copy(gpu_of(loc), (Loc::Host, base), (loc, dev), l.size_bytes)?;
            self.device()?.sync()?;
            (Some(b), base)
        };
        let mut out = vec![Vec::with_capacity(l.points() as usize); l.fields];
        // SAFETY: as in `init`.
        unsafe {
            let p = base as *const f64;
            for (f, v) in out.iter_mut().enumerate() {
                for i in 0..l.extents[0] {
                    for j in 0..l.extents[1] {
                        v.push(*p.add(l.index(f, i, j)));
                    }
                }
            }
        }
        drop(buf);
        Ok(out)
    }

    /// A valid instance of a piece, preferring one in `near`.
    fn any_valid(
        &self,
        region: usize,
        piece: usize,
        near: Option<Loc>,
    ) -> Result<InstId, CudaError> {
        let v = self
            .valid
            .get(&(region, piece))
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                CudaError::Plan(format!(
                    "region {} piece {piece} has no valid instance",
                    self.regions[region].name
                ))
            })?;
        let rank = |id: &InstId| {
            let l = self.insts[*id].loc;
            match (near, l) {
                (Some(n), l) if n == l => 0,
                (_, Loc::Pinned) => 1,
                (Some(Loc::Fb(_)), Loc::Fb(_)) => 2,
                (_, Loc::Host) => 3,
                _ => 4,
            }
        };
        Ok(*v.iter().min_by_key(|id| rank(id)).unwrap_or(&v[0]))
    }

    /// Whether instance `id` holds valid data of its piece.
    pub fn is_valid(&self, region: usize, piece: usize, id: InstId) -> bool {
        self.valid
            .get(&(region, piece))
            .is_some_and(|v| v.contains(&id))
    }

    /// A valid instance of a piece, preferring one in `near` (then pinned
    /// memory, another framebuffer, host memory).
    pub fn valid_instance(
        &self,
        region: usize,
        piece: usize,
        near: Option<Loc>,
    ) -> Result<InstId, CudaError> {
        self.any_valid(region, piece, near)
    }

    /// Drops every valid copy of a piece but those in `keep` (a refill at
    /// the data's home, as the matmuls' `taco_fill` does every iteration).
    pub fn invalidate_except(&mut self, region: usize, piece: usize, keep: InstId) {
        if let Some(v) = self.valid.get_mut(&(region, piece)) {
            v.retain(|&i| i == keep);
        }
    }

    /// The instance a unit on `proc` uses for a piece it accesses with
    /// `access`, in `loc` with `layout`: made valid here (copied in) when
    /// read, made the only valid one when written.
    pub fn acquire(
        &mut self,
        proc: Proc,
        region: usize,
        piece: usize,
        loc: Loc,
        layout: &LayoutDecision,
        access: Access,
    ) -> Result<InstId, CudaError> {
        let id = self.instance(region, piece, loc, layout)?;
        let valid_here = self
            .valid
            .get(&(region, piece))
            .is_some_and(|v| v.contains(&id));
        if access.reads() && !valid_here {
            let src = self.any_valid(region, piece, Some(loc))?;
            self.copy_whole(proc, src, id)?;
        }
        let v = self.valid.entry((region, piece)).or_default();
        if access.writes() {
            v.clear();
            v.push(id);
        } else if !v.contains(&id) {
            v.push(id);
        }
        Ok(id)
    }

    /// Makes `id` the only valid instance of its piece (after a write the
    /// executor did not see, such as an unpack into it).
    pub fn written(&mut self, id: InstId) {
        let (r, p) = (self.insts[id].region, self.insts[id].piece);
        self.valid.insert((r, p), vec![id]);
    }

    /// The location of an instance.
    pub fn loc(&self, id: InstId) -> Loc {
        self.insts[id].loc
    }

    fn params_for(&self, id: InstId, on_gpu: bool) -> Result<InstParams, CudaError> {
        let i = &self.insts[id];
        let base = if on_gpu { i.dev } else { i.host };
        if base == 0 {
            return Err(CudaError::Plan(format!(
                "instance of {} in {} is not reachable from {}",
                self.regions[i.region].name,
                i.loc.label(),
                if on_gpu { "a GPU" } else { "the host" }
            )));
        }
        Ok(i.layout.params(base))
    }

    /// Starts the timing span of a unit's work in the current launch.
    fn open_span(&mut self, proc: Proc) -> Result<(), CudaError> {
        if let (true, Proc::Gpu(g)) = (self.timed, proc) {
            if !self.open.contains_key(&proc) {
                let m = self.device()?.mark(g)?;
                self.open.insert(proc, m);
            }
        }
        Ok(())
    }

    /// Runs kernel `k` for a unit on `proc` over instances `args`.
    pub fn kernel(&mut self, proc: Proc, k: Kernel, args: &[InstId]) -> Result<(), CudaError> {
        match proc {
            Proc::Gpu(g) => {
                let params = args
                    .iter()
                    .map(|&a| self.params_for(a, true))
                    .collect::<Result<Vec<_>, _>>()?;
                self.open_span(proc)?;
                if let Kernel::Gemm { n, accumulate } = k {
                    let call = GemmCall {
                        a: params[0],
                        b: params[1],
                        c: params[2],
                        n,
                        accumulate,
                    };
                    self.device()?.gemm(g, &call)?;
                } else {
                    self.device()?.launch(g, &k, &params)?;
                }
                self.gpu_pending = true;
            }
            _ => {
                let params = args
                    .iter()
                    .map(|&a| self.params_for(a, false))
                    .collect::<Result<Vec<_>, _>>()?;
                self.host_jobs.push(HostJob {
                    proc,
                    kernel: k,
                    args: params,
                });
            }
        }
        Ok(())
    }

    /// A scratch buffer of `bytes` in `loc` for copy site `site`, reused
    /// across iterations. Returns (host address, device address).
    fn scratch(&mut self, site: u64, loc: Loc, bytes: u64) -> Result<(u64, u64), CudaError> {
        if let Some((h, d, s)) = self.scratch.get(&(site, loc)) {
            let big_enough = match s {
                Storage::Host(b) => b.layout.size() as u64 >= bytes,
                Storage::Device(_) => true,
            };
            if big_enough {
                return Ok((*h, *d));
            }
        }
        let (h, d, s) = self.alloc_storage(loc, bytes, 64)?;
        self.scratch.insert((site, loc), (h, d, s));
        Ok((h, d))
    }

    /// Copies a whole instance's data into another of the same piece.
    fn copy_whole(&mut self, proc: Proc, src: InstId, dst: InstId) -> Result<(), CudaError> {
        let rect = Rect::whole(&self.insts[src].layout);
        let fields: Vec<usize> = (0..self.insts[src].layout.fields).collect();
        self.copy_rect(proc, src, rect, dst, rect.lo, &fields, false)
    }

    /// Copies `fields` of rectangle `rect` of `src` to the rectangle at
    /// `dst_lo` of `dst` (adding when `accumulate`), on behalf of a unit on
    /// `proc` (whose stream issues GPU-side transfers).
    #[allow(clippy::too_many_arguments)]
    pub fn copy_rect(
        &mut self,
        proc: Proc,
        src: InstId,
        rect: Rect,
        dst: InstId,
        dst_lo: [u64; 2],
        fields: &[usize],
        accumulate: bool,
    ) -> Result<(), CudaError> {
        let (sl, dl) = (self.insts[src].loc, self.insts[dst].loc);
        let dst_rect = Rect {
            lo: dst_lo,
            len: rect.len,
        };
        if !rect.inside(&self.insts[src].layout) || !dst_rect.inside(&self.insts[dst].layout) {
            return Err(CudaError::Plan("copy outside an instance".into()));
        }
        let fl = FieldList::new(fields);
        let bytes = rect.points() * fields.len() as u64 * 8;
        let label = link_label(dl, sl);
        *self.stats.copy_bytes.entry(label).or_insert(0.0) += bytes as f64;
        let issuer = match (proc, sl, dl) {
            (_, _, Loc::Fb(g)) => Some(g),
            (_, Loc::Fb(g), _) => Some(g),
            (Proc::Gpu(g), _, _) => Some(g),
            _ => None,
        };
        if let Some(g) = issuer {
            self.open_span(Proc::Gpu(g))?;
        }
        // Fast path: the whole instance, identical placement: one transfer.
        let whole = rect == Rect::whole(&self.insts[src].layout)
            && self.insts[src]
                .layout
                .same_placement(&self.insts[dst].layout)
            && fields.len() == self.insts[src].layout.fields
            && !accumulate;
        if whole {
            let n = self.insts[src].layout.size_bytes;
            return self.transfer(issuer, dst, src, n);
        }
        let site = copy_site(src, dst, &rect, dst_lo, fields, accumulate);
        // Pack where the source is.
        let src_side = side(sl);
        let dst_side = side(dl);
        let (sh, sd) = self.scratch(site, src_side, bytes)?;
        let dense_src = InstParams {
            base: if src_side == Loc::Host { sh } else { sd },
            ..InstParams::default()
        };
        let pack = Kernel::Pack { rect, fields: fl };
        self.run_now(sl, src, dense_src, pack, true)?;
        // Move the packed data to where the destination is.
        let dense_dst = if src_side == dst_side {
            dense_src
        } else {
            let (dh, dd) = self.scratch(site ^ 0x5bd1_e995, dst_side, bytes)?;
            let g = issuer.unwrap_or(0);
            let src_addr = if src_side == Loc::Host { sh } else { sd };
            let dst_addr = if dst_side == Loc::Host { dh } else { dd };
            if let (Loc::Fb(a), Loc::Fb(b)) = (src_side, dst_side) {
                // Pack ran on `a`'s stream; the transfer goes on `b`'s.
                self.device()?.order(a, b)?;
            }
            self.device()?
                .copy(g, (dst_side, dst_addr), (src_side, src_addr), bytes)?;
            self.gpu_pending = true;
            InstParams {
                base: if dst_side == Loc::Host { dh } else { dd },
                ..InstParams::default()
            }
        };
        let unpack = Kernel::Unpack {
            rect: dst_rect,
            fields: fl,
            accumulate,
        };
        self.run_now(dl, dst, dense_dst, unpack, false)
    }

    /// Runs a pack (dense second) or unpack (dense first) right away on
    /// the side of instance `id`.
    fn run_now(
        &mut self,
        loc: Loc,
        id: InstId,
        dense: InstParams,
        k: Kernel,
        pack: bool,
    ) -> Result<(), CudaError> {
        match loc {
            Loc::Fb(g) => {
                let p = self.params_for(id, true)?;
                let args = if pack { [p, dense] } else { [dense, p] };
                self.device()?.launch(g, &k, &args)?;
                self.gpu_pending = true;
            }
            _ => {
                self.sync()?;
                let p = self.params_for(id, false)?;
                let args = if pack { [p, dense] } else { [dense, p] };
                // SAFETY: both addresses are live host allocations sized for
                // the rectangle (checked by `copy_rect`).
                unsafe { run_parallel(&k, &args, self.host_threads) };
            }
        }
        Ok(())
    }

    /// A raw copy of `bytes` from `src`'s base to `dst`'s base.
    fn transfer(
        &mut self,
        issuer: Option<usize>,
        dst: InstId,
        src: InstId,
        bytes: u64,
    ) -> Result<(), CudaError> {
        let (sl, dl) = (self.insts[src].loc, self.insts[dst].loc);
        if side(sl) == Loc::Host && side(dl) == Loc::Host {
            self.sync()?;
            // SAFETY: both are live host allocations of at least `bytes`
            // from their aligned bases, and distinct instances.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.insts[src].host as *const u8,
                    self.insts[dst].host as *mut u8,
                    bytes as usize,
                );
            }
            return Ok(());
        }
        let addr = |i: &Instance| {
            if side(i.loc) == Loc::Host {
                i.host
            } else {
                i.dev
            }
        };
        let s = (side(sl), addr(&self.insts[src]));
        let d = (side(dl), addr(&self.insts[dst]));
        let g = issuer.unwrap_or(0);
        if side(sl) == Loc::Host {
            // The host may have just written the source.
            self.flush_host()?;
        }
        self.device()?.copy(g, d, s, bytes)?;
        self.gpu_pending = true;
        Ok(())
    }

    /// Runs the pending host jobs now (before a transfer reads their
    /// output).
    fn flush_host(&mut self) -> Result<(), CudaError> {
        if self.host_jobs.is_empty() {
            return Ok(());
        }
        self.sync()?;
        let jobs = std::mem::take(&mut self.host_jobs);
        self.run_host_jobs(jobs);
        Ok(())
    }

    fn run_host_jobs(&mut self, jobs: Vec<HostJob>) {
        let mut by_proc: Vec<(Proc, Vec<HostJob>)> = Vec::new();
        for j in jobs {
            match by_proc.iter_mut().find(|(p, _)| *p == j.proc) {
                Some((_, v)) => v.push(j),
                None => by_proc.push((j.proc, vec![j])),
            }
        }
        struct Jobs(Vec<HostJob>);
        // SAFETY: the jobs hold addresses of live allocations owned by the
        // executor, which outlives the scoped threads; jobs of different
        // processors touch different pieces (Legion's launch semantics).
        unsafe impl Send for Jobs {}
        let times: Vec<(Proc, f64)> = std::thread::scope(|s| {
            let handles: Vec<_> = by_proc
                .into_iter()
                .map(|(proc, jobs)| {
                    let jobs = Jobs(jobs);
                    s.spawn(move || {
                        let jobs = jobs;
                        let t0 = Instant::now();
                        let threads = match proc {
                            Proc::Omp(_, t) => t,
                            _ => 1,
                        };
                        for j in &jobs.0 {
                            // SAFETY: see `Jobs`.
                            unsafe { run_parallel(&j.kernel, &j.args, threads) };
                        }
                        (proc, t0.elapsed().as_secs_f64())
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        if self.timed {
            let mut slowest: f64 = 0.0;
            for (p, t) in times {
                *self.stats.busy_s.entry(p.label()).or_insert(0.0) += t;
                slowest = slowest.max(t);
            }
            *self.stats.task_s.entry(self.task.clone()).or_insert(0.0) += slowest;
        }
    }

    /// Starts a launch of `task` (for timing).
    pub fn begin_launch(&mut self, task: &str) {
        self.task = task.to_string();
    }

    /// Ends a launch: runs its host work, closes its GPU timing spans, and
    /// orders every later operation after it.
    pub fn end_launch(&mut self) -> Result<(), CudaError> {
        let open: Vec<(Proc, usize)> = self.open.drain().collect();
        for (proc, start) in open {
            if let Proc::Gpu(g) = proc {
                let end = self.device()?.mark(g)?;
                self.spans.push(GpuSpan {
                    proc,
                    task: self.task.clone(),
                    start,
                    end,
                });
            }
        }
        let jobs = std::mem::take(&mut self.host_jobs);
        if !jobs.is_empty() {
            self.sync()?;
            self.run_host_jobs(jobs);
        }
        if self.gpu_pending {
            self.device()?.barrier()?;
        }
        Ok(())
    }

    /// Waits for everything and books the GPU timing spans of the timed
    /// launches.
    pub fn finish_iteration(&mut self) -> Result<(), CudaError> {
        self.end_launch()?;
        if let Some(d) = self.dev.as_deref_mut() {
            d.sync()?;
            self.gpu_pending = false;
            let mut per_launch: HashMap<String, f64> = HashMap::new();
            for s in std::mem::take(&mut self.spans) {
                let t = d.elapsed(s.start, s.end)?;
                *self.stats.busy_s.entry(s.proc.label()).or_insert(0.0) += t;
                let e = per_launch.entry(s.task).or_insert(0.0);
                *e = e.max(t);
            }
            for (task, t) in per_launch {
                *self.stats.task_s.entry(task).or_insert(0.0) += t;
            }
            d.clear_marks();
        }
        Ok(())
    }
}

impl Drop for Executor<'_> {
    /// Frees the device allocations once the device has finished with them.
    fn drop(&mut self) {
        let mut allocs = Vec::new();
        for i in self.insts.drain(..) {
            if let Storage::Device(a) = i._storage {
                allocs.push(a);
            }
        }
        for (_, (_, _, s)) in self.scratch.drain() {
            if let Storage::Device(a) = s {
                allocs.push(a);
            }
        }
        if let Some(d) = self.dev.as_deref_mut() {
            let _ = d.sync();
            for a in allocs {
                d.free(a);
            }
        }
    }
}

/// Logical GPU of a framebuffer location (0 for host ones).
fn gpu_of(loc: Loc) -> usize {
    match loc {
        Loc::Fb(g) => g,
        _ => 0,
    }
}

/// Where packing for an instance in `loc` runs: on its GPU, or on the
/// host for host and pinned memory.
fn side(loc: Loc) -> Loc {
    match loc {
        Loc::Fb(g) => Loc::Fb(g),
        _ => Loc::Host,
    }
}

fn copy_site(
    src: InstId,
    dst: InstId,
    rect: &Rect,
    lo: [u64; 2],
    fields: &[usize],
    acc: bool,
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (src, dst, rect.lo, rect.len, lo, fields, acc).hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decisions::Order;

    fn layout(soa: bool, order: Order) -> LayoutDecision {
        LayoutDecision {
            soa,
            order,
            ..LayoutDecision::default()
        }
    }

    fn one_region() -> Vec<RegionSpec> {
        vec![RegionSpec {
            name: "r".into(),
            fields: 2,
            pieces: vec![[4, 3], [4, 3]],
        }]
    }

    #[test]
    fn coherence_copies_between_layouts_and_invalidates_on_write() {
        let mut ex = Executor::new(None, one_region());
        let a = ex
            .init(0, 0, Loc::Host, &layout(true, Order::F), &|f, i, j| {
                (f * 100 + i as usize * 10 + j as usize) as f64
            })
            .unwrap();
        // A reader with another layout gets a converted copy.
        let b = ex
            .acquire(
                Proc::Cpu(0),
                0,
                0,
                Loc::Pinned,
                &layout(false, Order::C),
                Access::Read,
            )
            .unwrap_err();
        // Pinned memory needs a device: the host-only executor says so.
        assert!(matches!(b, CudaError::NoDevice(_)));
        let c = ex
            .acquire(
                Proc::Cpu(0),
                0,
                0,
                Loc::Host,
                &layout(false, Order::C),
                Access::ReadWrite,
            )
            .unwrap();
        assert_ne!(a, c);
        ex.kernel(Proc::Cpu(0), Kernel::Increment { rows: (0, 4) }, &[c])
            .unwrap();
        ex.end_launch().unwrap();
        let v = ex.read(0, 0).unwrap();
        assert_eq!(v[0][5], 12.0 + 1.0); // (1, 2) field 0, incremented
        assert_eq!(v[1][5], 112.0);
        // The write left only the AOS copy valid; reading in SOA again
        // copies it back.
        let again = ex
            .acquire(
                Proc::Cpu(0),
                0,
                0,
                Loc::Host,
                &layout(true, Order::F),
                Access::Read,
            )
            .unwrap();
        assert_eq!(again, a);
        assert_eq!(ex.valid[&(0, 0)].len(), 2);
    }

    #[test]
    fn rectangles_move_between_pieces_and_accumulate() {
        let mut ex = Executor::new(None, one_region());
        let a = ex
            .init(0, 0, Loc::Host, &layout(true, Order::C), &|_, i, j| {
                (i * 3 + j) as f64
            })
            .unwrap();
        let b = ex
            .init(0, 1, Loc::Host, &layout(false, Order::F), &|_, _, _| 1.0)
            .unwrap();
        let rows = Rect {
            lo: [3, 0],
            len: [1, 3],
        };
        ex.copy_rect(Proc::Cpu(0), a, rows, b, [0, 0], &[0], true)
            .unwrap();
        ex.copy_rect(Proc::Cpu(0), a, rows, b, [1, 0], &[1], false)
            .unwrap();
        let v = ex.read(0, 1).unwrap();
        assert_eq!(&v[0][..3], &[10.0, 11.0, 12.0]);
        assert_eq!(&v[1][3..6], &[9.0, 10.0, 11.0]);
        assert_eq!(v[1][0], 1.0);
        assert!(ex.stats.copy_bytes["node0 host memcpy"] > 0.0);
    }

    #[test]
    fn host_jobs_of_different_processors_run_and_are_timed() {
        let mut ex = Executor::new(None, one_region());
        ex.timed = true;
        let l = layout(true, Order::F);
        for p in 0..2 {
            ex.init(0, p, Loc::Host, &l, &|_, _, _| 0.0).unwrap();
        }
        ex.begin_launch("inc");
        for p in 0..2 {
            let i = ex
                .acquire(Proc::Cpu(p), 0, p, Loc::Host, &l, Access::ReadWrite)
                .unwrap();
            ex.kernel(Proc::Cpu(p), Kernel::Increment { rows: (0, 4) }, &[i])
                .unwrap();
        }
        ex.finish_iteration().unwrap();
        assert_eq!(ex.read(0, 1).unwrap()[0], vec![1.0; 12]);
        assert!(ex.stats.busy_s.contains_key("node0 CPU1"));
        assert!(ex.stats.task_s.contains_key("inc"));
    }
}
