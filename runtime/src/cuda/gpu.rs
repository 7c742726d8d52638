//! The GPUs present, through cudarc (driver, NVRTC, cuBLAS, all loaded at
//! run time): discovery, and the [`Device`] the executor runs on.
//!
//! - One primary context per physical GPU; logical GPU `g` runs on physical
//!   GPU `g % count` with its own stream, so several logical processors
//!   sharing one GPU overlap as Legion's would.
//! - FBMEM: `cuMemAlloc`; ZCMEM: `cuMemHostAlloc(DEVICEMAP | PORTABLE)`
//!   with its device pointer from `cuMemHostGetDevicePointer`; pageable
//!   SYSMEM is the executor's own host memory, reached through copies.
//! - Kernels: `kernels::CUDA_SOURCE` compiled by NVRTC for each GPU's
//!   compute capability; GEMMs: cuBLAS DGEMM on the unit's stream.
//! - Copies: `cuMemcpyHtoDAsync` / `DtoH` / `DtoD`, and `cuMemcpyPeerAsync`
//!   between GPUs (peer access enabled where the GPUs allow it).
//! - Ordering between streams and timing: CUDA events.
//!
//! cudarc panics when a library or symbol is missing; every entry point
//! here is wrapped so that becomes a [`CudaError`].

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cudarc::cublas;
use cudarc::driver::{result, sys, CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc;

use super::discover::GpuInfo;
use super::exec::{Alloc, Device, GemmCall};
use super::kernels::{blas_call, cuda_args, Kernel, KernelArg, CUDA_SOURCE};
use super::layout::{InstParams, Rect};

use super::plan::Loc;
use super::CudaError;

fn drv(what: &str) -> impl Fn(result::DriverError) -> CudaError + '_ {
    move |e| CudaError::Driver(format!("{what}: {e}"))
}

/// Runs `f`, turning a panic of the bindings (a missing library or
/// symbol) into an error.
pub(crate) fn guard<T>(
    what: &str,
    f: impl FnOnce() -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown failure".into());
            Err(CudaError::NoDevice(format!("{what}: {msg}")))
        }
    }
}

/// Loads the driver and counts the GPUs; an error when either is missing.
pub(crate) fn driver_gpus() -> Result<usize, CudaError> {
    guard("loading the CUDA driver", || {
        // SAFETY: only probes whether the library can be opened.
        if !unsafe { sys::is_culib_present() } {
            return Err(CudaError::NoDevice(
                "the CUDA driver library (libcuda.so) could not be loaded".into(),
            ));
        }
        result::init().map_err(|e| CudaError::NoDevice(format!("cuInit failed: {e}")))?;
        let n = result::device::get_count()
            .map_err(|e| CudaError::NoDevice(format!("cuDeviceGetCount failed: {e}")))?;
        if n <= 0 {
            return Err(CudaError::NoDevice("the CUDA driver reports no GPU".into()));
        }
        Ok(n as usize)
    })
}

/// What the driver reports about every GPU.
pub(crate) fn gpu_infos() -> Result<Vec<GpuInfo>, CudaError> {
    let n = driver_gpus()?;
    guard("reading device attributes", || {
        use sys::CUdevice_attribute::*;
        let mut out = Vec::with_capacity(n);
        let devs: Vec<sys::CUdevice> = (0..n)
            .map(|i| result::device::get(i as i32).map_err(drv("cuDeviceGet")))
            .collect::<Result<_, _>>()?;
        for (i, &d) in devs.iter().enumerate() {
            // SAFETY: `d` came from cuDeviceGet.
            let attr = |a| unsafe { result::device::get_attribute(d, a) }.unwrap_or(0);
            let mut peers = Vec::with_capacity(n);
            for (j, &e) in devs.iter().enumerate() {
                let mut can = 0i32;
                if i != j {
                    // SAFETY: both devices are valid handles.
                    let _ = unsafe { sys::cuDeviceCanAccessPeer(&mut can, d, e) };
                }
                peers.push(i != j && can != 0);
            }
            out.push(GpuInfo {
                ordinal: i,
                name: result::device::get_name(d).unwrap_or_else(|_| format!("GPU {i}")),
                cc: (
                    attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                    attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
                ),
                sms: attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).max(0) as u32,
                clock_khz: attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE).max(0) as u32,
                mem_clock_khz: attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).max(0) as u32,
                bus_width_bits: attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH).max(0) as u32,
                // SAFETY: as above.
                total_mem: unsafe { result::device::total_mem(d) }.unwrap_or(0) as u64,
                peers,
            });
        }
        Ok(out)
    })
}

/// `#[repr(C)]` twins of the CUDA source's `RectP` and `Fields`.
#[repr(C)]
#[derive(Clone, Copy)]
struct RectP {
    lo0: u64,
    lo1: u64,
    len0: u64,
    len1: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct FieldsP {
    len: u64,
    ids: [u64; 8],
}

fn rect_p(r: &Rect) -> RectP {
    RectP {
        lo0: r.lo[0],
        lo1: r.lo[1],
        len0: r.len[0],
        len1: r.len[1],
    }
}

/// Kernel arguments, each in its own 8-byte-aligned slot.
#[derive(Default)]
struct Params {
    slots: Vec<Vec<u64>>,
}

impl Params {
    fn push<T: Copy>(&mut self, v: T) -> &mut Self {
        let words = std::mem::size_of::<T>().div_ceil(8).max(1);
        let mut slot = vec![0u64; words];
        // SAFETY: the slot holds at least size_of::<T>() bytes, 8-aligned.
        unsafe { std::ptr::write_unaligned(slot.as_mut_ptr() as *mut T, v) };
        self.slots.push(slot);
        self
    }

    fn pointers(&mut self) -> Vec<*mut c_void> {
        self.slots
            .iter_mut()
            .map(|s| s.as_mut_ptr() as *mut c_void)
            .collect()
    }
}

const KERNELS: [&str; 11] = [
    "mw_fill",
    "mw_stencil",
    "mw_increment",
    "mw_currents",
    "mw_charge",
    "mw_voltages",
    "mw_adv_pos",
    "mw_centers",
    "mw_volumes",
    "mw_pack",
    "mw_unpack",
];

enum Mem {
    Fb { phys: usize, ptr: sys::CUdeviceptr },
    Pinned { host: *mut c_void },
}

/// The GPUs of this machine as the executor's [`Device`].
pub struct Gpus {
    ctxs: Vec<Arc<CudaContext>>,
    pub(crate) infos: Vec<GpuInfo>,
    _modules: Vec<Arc<CudaModule>>,
    funcs: Vec<HashMap<&'static str, CudaFunction>>,
    streams: HashMap<usize, Arc<CudaStream>>,
    blas: HashMap<usize, cublas::sys::cublasHandle_t>,
    allocs: HashMap<u64, Mem>,
    next_alloc: u64,
    events: Vec<(usize, sys::CUevent)>,
    used: BTreeSet<usize>,
    peers_on: HashSet<(usize, usize)>,
}

// SAFETY: the raw handles (cuBLAS handles, events, pinned pointers) are
// driver objects usable from any thread once their context is bound, which
// every method does first; the backend keeps `Gpus` behind a mutex, so one
// thread uses it at a time.
unsafe impl Send for Gpus {}

impl Gpus {
    /// Opens every GPU: contexts, NVRTC-compiled kernels, and checks that
    /// cuBLAS loads.
    pub fn open() -> Result<Gpus, CudaError> {
        let infos = gpu_infos()?;
        guard("opening the GPUs", || {
            // SAFETY: only probes whether the libraries can be opened.
            if !unsafe { nvrtc::sys::is_culib_present() } {
                return Err(CudaError::NoDevice(
                    "the NVRTC library (libnvrtc.so) could not be loaded; add the CUDA \
                     toolkit's lib64 to LD_LIBRARY_PATH"
                        .into(),
                ));
            }
            // SAFETY: as above.
            if !unsafe { cublas::sys::is_culib_present() } {
                return Err(CudaError::NoDevice(
                    "the cuBLAS library (libcublas.so) could not be loaded; add the CUDA \
                     toolkit's lib64 to LD_LIBRARY_PATH"
                        .into(),
                ));
            }
            let mut ctxs = Vec::new();
            let mut modules = Vec::new();
            let mut funcs = Vec::new();
            let mut compiled: HashMap<(i32, i32), nvrtc::Ptx> = HashMap::new();
            for g in &infos {
                let ctx = CudaContext::new(g.ordinal).map_err(drv("creating a context"))?;
                let ptx = match compiled.get(&g.cc) {
                    Some(p) => p.clone(),
                    None => {
                        let opts = nvrtc::CompileOptions {
                            options: vec![format!(
                                "--gpu-architecture=compute_{}{}",
                                g.cc.0, g.cc.1
                            )],
                            ..Default::default()
                        };
                        let p = nvrtc::compile_ptx_with_opts(CUDA_SOURCE, opts).map_err(|e| {
                            CudaError::Driver(format!("NVRTC could not compile the kernels: {e:?}"))
                        })?;
                        compiled.insert(g.cc, p.clone());
                        p
                    }
                };
                let module = ctx.load_module(ptx).map_err(drv("loading the kernels"))?;
                let mut f = HashMap::new();
                for name in KERNELS {
                    f.insert(
                        name,
                        module
                            .load_function(name)
                            .map_err(drv("finding a kernel"))?,
                    );
                }
                ctxs.push(ctx);
                modules.push(module);
                funcs.push(f);
            }
            Ok(Gpus {
                ctxs,
                infos: infos.clone(),
                _modules: modules,
                funcs,
                streams: HashMap::new(),
                blas: HashMap::new(),
                allocs: HashMap::new(),
                next_alloc: 1,
                events: Vec::new(),
                used: BTreeSet::new(),
                peers_on: HashSet::new(),
            })
        })
    }

    fn phys(&self, g: usize) -> usize {
        g % self.ctxs.len().max(1)
    }

    fn bind(&self, phys: usize) -> Result<(), CudaError> {
        self.ctxs[phys]
            .bind_to_thread()
            .map_err(drv("binding a context"))
    }

    /// Logical GPU `g`'s stream (made on first use), with its context bound.
    pub(crate) fn stream(&mut self, g: usize) -> Result<sys::CUstream, CudaError> {
        let phys = self.phys(g);
        self.bind(phys)?;
        if !self.streams.contains_key(&g) {
            let s = self.ctxs[phys]
                .new_stream()
                .map_err(drv("creating a stream"))?;
            self.streams.insert(g, s);
        }
        self.used.insert(g);
        Ok(self.streams[&g].cu_stream())
    }

    fn blas(&mut self, g: usize) -> Result<cublas::sys::cublasHandle_t, CudaError> {
        let stream = self.stream(g)?;
        if let Some(h) = self.blas.get(&g) {
            return Ok(*h);
        }
        let h = cublas::result::create_handle()
            .map_err(|e| CudaError::Driver(format!("creating a cuBLAS handle: {e}")))?;
        // SAFETY: a fresh handle and a live stream of the bound context.
        unsafe { cublas::result::set_stream(h, stream as _) }
            .map_err(|e| CudaError::Driver(format!("cublasSetStream: {e}")))?;
        self.blas.insert(g, h);
        Ok(h)
    }

    fn enable_peer(&mut self, from: usize, to: usize) {
        if from == to || self.peers_on.contains(&(from, to)) {
            return;
        }
        self.peers_on.insert((from, to));
        if self.infos[to].peers.get(from).copied().unwrap_or(false) && self.bind(to).is_ok() {
            // SAFETY: both contexts are live; an error (already enabled,
            // unsupported) leaves copies staged by the driver.
            let _ = unsafe { sys::cuCtxEnablePeerAccess(self.ctxs[from].cu_ctx(), 0) };
        }
    }

    fn event(&mut self, g: usize, timing: bool) -> Result<sys::CUevent, CudaError> {
        let stream = self.stream(g)?;
        let flags = if timing {
            sys::CUevent_flags::CU_EVENT_DEFAULT
        } else {
            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING
        };
        let e = result::event::create(flags).map_err(drv("cuEventCreate"))?;
        // SAFETY: a fresh event and a live stream of the bound context.
        unsafe { result::event::record(e, stream) }.map_err(drv("cuEventRecord"))?;
        Ok(e)
    }

    /// Allocates `bytes` on logical GPU `g` (calibration).
    pub(crate) fn raw_device(&mut self, g: usize, bytes: u64) -> Result<u64, CudaError> {
        Ok(self.alloc(Loc::Fb(g), bytes)?.dev)
    }
}

impl Device for Gpus {
    fn gpus(&self) -> usize {
        self.ctxs.len()
    }

    fn alloc(&mut self, loc: Loc, bytes: u64) -> Result<Alloc, CudaError> {
        let id = self.next_alloc;
        self.next_alloc += 1;
        let bytes = bytes.max(8);
        match loc {
            Loc::Fb(g) => {
                let phys = self.phys(g);
                self.bind(phys)?;
                // SAFETY: a plain allocation in the bound context.
                let ptr = unsafe { result::malloc_sync(bytes as usize) }.map_err(|e| {
                    if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
                        CudaError::OutOfMemory(format!(
                            "failed allocation of size {bytes} bytes in GPU_FB_MEM of GPU {phys}"
                        ))
                    } else {
                        CudaError::Driver(format!("cuMemAlloc: {e}"))
                    }
                })?;
                self.allocs.insert(id, Mem::Fb { phys, ptr });
                Ok(Alloc {
                    id,
                    host: 0,
                    dev: ptr,
                })
            }
            Loc::Pinned => {
                self.bind(0)?;
                let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
                // SAFETY: a plain allocation; zeroed below before any use.
                let host = unsafe { result::malloc_host(bytes as usize, flags) }.map_err(|e| {
                    CudaError::OutOfMemory(format!(
                        "failed allocation of size {bytes} bytes in Z_COPY_MEM: {e}"
                    ))
                })?;
                // SAFETY: `host` points to `bytes` writable bytes.
                unsafe { std::ptr::write_bytes(host as *mut u8, 0, bytes as usize) };
                let mut dev: sys::CUdeviceptr = 0;
                // SAFETY: `host` was allocated with DEVICEMAP.
                unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, host, 0) }
                    .result()
                    .map_err(drv("cuMemHostGetDevicePointer"))?;
                self.allocs.insert(id, Mem::Pinned { host });
                Ok(Alloc {
                    id,
                    host: host as u64,
                    dev,
                })
            }
            Loc::Host => Err(CudaError::Plan(
                "pageable host memory is the executor's, not the device's".into(),
            )),
        }
    }

    fn free(&mut self, a: Alloc) {
        match self.allocs.remove(&a.id) {
            Some(Mem::Fb { phys, ptr }) if self.bind(phys).is_ok() => {
                // SAFETY: allocated by cuMemAlloc in this context, freed once.
                let _ = unsafe { result::free_sync(ptr) };
            }
            Some(Mem::Pinned { host }) => {
                // SAFETY: allocated by cuMemHostAlloc, freed once.
                let _ = unsafe { result::free_host(host) };
            }
            _ => {}
        }
    }

    fn launch(&mut self, g: usize, k: &Kernel, args: &[InstParams]) -> Result<(), CudaError> {
        let items = k.items(args);
        let Some(name) = k.cuda_name() else {
            return Err(CudaError::Plan("GEMMs go through cuBLAS".into()));
        };
        if items == 0 {
            return Ok(());
        }
        let stream = self.stream(g)?;
        let phys = self.phys(g);
        let f = self.funcs[phys][name].cu_function();
        let mut p = Params::default();
        for a in cuda_args(k, args).unwrap_or_default() {
            match a {
                KernelArg::Inst(i) => p.push(i),
                KernelArg::U64(v) => p.push(v),
                KernelArg::F64(v) => p.push(v),
                KernelArg::Rect(r) => p.push(rect_p(&r)),
                KernelArg::Fields(fl) => {
                    let mut ids = [0u64; 8];
                    for (i, f) in fl.as_slice().iter().enumerate() {
                        ids[i] = *f as u64;
                    }
                    p.push(FieldsP {
                        len: fl.len as u64,
                        ids,
                    })
                }
            };
        }
        let block = 256u64;
        let grid = items.div_ceil(block).min(i32::MAX as u64) as u32;
        let mut ptrs = p.pointers();
        // SAFETY: the function comes from the module loaded in this
        // context; the parameter slots match its signature (kernels.rs)
        // and outlive the call (the driver copies them at launch); the
        // instance addresses are live allocations the executor owns.
        unsafe {
            result::launch_kernel(f, (grid, 1, 1), (block as u32, 1, 1), 0, stream, &mut ptrs)
        }
        .map_err(drv(name))
    }

    fn gemm(&mut self, g: usize, call: &GemmCall) -> Result<(), CudaError> {
        let h = self.blas(g)?;
        let n = call.n as i32;
        let bc = blas_call(&call.a, &call.b, &call.c, call.n);
        let op = |t: bool| {
            if t {
                cublas::sys::cublasOperation_t::CUBLAS_OP_T
            } else {
                cublas::sys::cublasOperation_t::CUBLAS_OP_N
            }
        };
        let alpha = 1.0f64;
        let beta = if call.accumulate { 1.0f64 } else { 0.0 };
        // SAFETY: the three tiles are live device (or mapped) allocations
        // of n x n doubles with the given leading dimensions; the handle's
        // stream is logical GPU `g`'s.
        unsafe {
            cublas::result::dgemm(
                h,
                op(bc.trans_first),
                op(bc.trans_second),
                n,
                n,
                n,
                &alpha,
                bc.first.base as *const f64,
                bc.ld_first as i32,
                bc.second.base as *const f64,
                bc.ld_second as i32,
                &beta,
                call.a.base as *mut f64,
                bc.ld_out as i32,
            )
        }
        .map_err(|e| CudaError::Driver(format!("cublasDgemm: {e}")))
    }

    fn copy(
        &mut self,
        g: usize,
        dst: (Loc, u64),
        src: (Loc, u64),
        bytes: u64,
    ) -> Result<(), CudaError> {
        let stream = self.stream(g)?;
        let n = bytes as usize;
        // SAFETY: the addresses are live allocations of at least `bytes`
        // (device addresses for framebuffers, host addresses otherwise);
        // the stream belongs to the bound context.
        let r = unsafe {
            match (src.0, dst.0) {
                (Loc::Fb(a), Loc::Fb(b)) => {
                    let (pa, pb) = (self.phys(a), self.phys(b));
                    if pa == pb {
                        sys::cuMemcpyDtoDAsync_v2(dst.1, src.1, n, stream)
                    } else {
                        self.enable_peer(pa, pb);
                        let stream = self.stream(g)?;
                        sys::cuMemcpyPeerAsync(
                            dst.1,
                            self.ctxs[pb].cu_ctx(),
                            src.1,
                            self.ctxs[pa].cu_ctx(),
                            n,
                            stream,
                        )
                    }
                }
                (Loc::Fb(_), _) => {
                    sys::cuMemcpyDtoHAsync_v2(dst.1 as *mut c_void, src.1, n, stream)
                }
                (_, Loc::Fb(_)) => {
                    sys::cuMemcpyHtoDAsync_v2(dst.1, src.1 as *const c_void, n, stream)
                }
                _ => {
                    std::ptr::copy_nonoverlapping(src.1 as *const u8, dst.1 as *mut u8, n);
                    sys::cudaError_enum::CUDA_SUCCESS
                }
            }
        };
        r.result().map_err(drv("cuMemcpy"))
    }

    fn order(&mut self, from: usize, to: usize) -> Result<(), CudaError> {
        if from == to {
            return Ok(());
        }
        let e = self.event(from, false)?;
        let s = self.stream(to)?;
        // SAFETY: a recorded event and a live stream; destroying the event
        // after the wait is allowed (it is released once complete).
        unsafe {
            result::stream::wait_event(s, e, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
                .map_err(drv("cuStreamWaitEvent"))?;
            let _ = result::event::destroy(e);
        }
        Ok(())
    }

    fn barrier(&mut self) -> Result<(), CudaError> {
        let used: Vec<usize> = self.used.iter().copied().collect();
        if used.len() < 2 {
            return Ok(());
        }
        let mut evs = Vec::with_capacity(used.len());
        for &g in &used {
            evs.push((g, self.event(g, false)?));
        }
        for &g in &used {
            let s = self.stream(g)?;
            for (h, e) in &evs {
                if *h != g {
                    // SAFETY: as in `order`.
                    unsafe {
                        result::stream::wait_event(
                            s,
                            *e,
                            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                        )
                    }
                    .map_err(drv("cuStreamWaitEvent"))?;
                }
            }
        }
        for (_, e) in evs {
            // SAFETY: recorded events no longer needed by the host.
            let _ = unsafe { result::event::destroy(e) };
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), CudaError> {
        let used: Vec<usize> = self.used.iter().copied().collect();
        for g in used {
            let s = self.stream(g)?;
            // SAFETY: a live stream of the bound context.
            unsafe { result::stream::synchronize(s) }.map_err(drv("synchronizing"))?;
        }
        Ok(())
    }

    fn mark(&mut self, g: usize) -> Result<usize, CudaError> {
        let e = self.event(g, true)?;
        self.events.push((self.phys(g), e));
        Ok(self.events.len() - 1)
    }

    fn elapsed(&mut self, start: usize, end: usize) -> Result<f64, CudaError> {
        let (pa, a) = self.events[start];
        let (_, b) = self.events[end];
        self.bind(pa)?;
        // SAFETY: both events were recorded and have completed (after sync).
        let ms = unsafe { result::event::elapsed(a, b) }.map_err(drv("cuEventElapsedTime"))?;
        Ok(f64::from(ms) / 1e3)
    }

    fn clear_marks(&mut self) {
        for (p, e) in std::mem::take(&mut self.events) {
            if self.bind(p).is_ok() {
                // SAFETY: events created by `mark`, destroyed once.
                let _ = unsafe { result::event::destroy(e) };
            }
        }
    }
}

impl Drop for Gpus {
    fn drop(&mut self) {
        let _ = self.sync();
        self.clear_marks();
        for (g, h) in std::mem::take(&mut self.blas) {
            let phys = self.phys(g);
            if self.bind(phys).is_ok() {
                // SAFETY: created by `blas`, destroyed once.
                let _ = unsafe { cublas::result::destroy_handle(h) };
            }
        }
        let ids: Vec<u64> = self.allocs.keys().copied().collect();
        for id in ids {
            self.free(Alloc {
                id,
                host: 0,
                dev: 0,
            });
        }
    }
}
