//! A [`Device`] emulated on the host, for tests that run everywhere: GPU
//! memory is host memory the executor must still treat as device memory
//! (no host address), kernels run their host twins after their CUDA
//! launch arguments are built, GEMMs run as a column-major BLAS would with
//! the operands and transposes the cuBLAS path computes, and copies are
//! counted by kind. Everything completes at once, so ordering is trivially
//! kept; what this checks is the data path of GPU mappings (framebuffer,
//! zero-copy and staged instances, peer copies, packing on the device
//! side, layouts), not the streams.

use std::collections::HashMap;
use std::time::Instant;

use super::exec::{Alloc, Device, GemmCall};
use super::kernels::{blas_call, cuda_args, run_parallel, Kernel};
use super::layout::InstParams;
use super::plan::Loc;
use super::CudaError;

#[derive(Default)]
pub struct Emulated {
    pub physical: usize,
    mem: HashMap<u64, Vec<u64>>,
    next: u64,
    pub copies: HashMap<&'static str, u64>,
    pub launches: u64,
    pub gemms: u64,
    marks: Vec<Instant>,
    /// Fail allocations in framebuffers above this many bytes in total.
    pub fb_limit: Option<u64>,
    fb_used: u64,
}

impl Emulated {
    pub fn new(physical: usize) -> Emulated {
        Emulated {
            physical,
            ..Emulated::default()
        }
    }
}

/// `out (+)= op(x) op(y)`, column-major with leading dimensions.
///
/// # Safety
/// The addresses must hold `n x n` matrices with the given leading
/// dimensions.
#[allow(clippy::too_many_arguments)]
unsafe fn colmajor(
    n: i64,
    tx: bool,
    x: *const f64,
    ldx: i64,
    ty: bool,
    y: *const f64,
    ldy: i64,
    out: *mut f64,
    ldo: i64,
    beta: f64,
) {
    let get = |m: *const f64, t: bool, ld: i64, r: i64, c: i64| {
        if t {
            *m.offset((c + r * ld) as isize)
        } else {
            *m.offset((r + c * ld) as isize)
        }
    };
    for r in 0..n {
        for c in 0..n {
            let mut acc = 0.0;
            for l in 0..n {
                acc += get(x, tx, ldx, r, l) * get(y, ty, ldy, l, c);
            }
            let o = out.offset((r + c * ldo) as isize);
            *o = beta * *o + acc;
        }
    }
}

impl Device for Emulated {
    fn gpus(&self) -> usize {
        self.physical
    }

    fn alloc(&mut self, loc: Loc, bytes: u64) -> Result<Alloc, CudaError> {
        if let (Loc::Fb(_), Some(limit)) = (loc, self.fb_limit) {
            if self.fb_used + bytes > limit {
                return Err(CudaError::OutOfMemory(format!(
                    "failed allocation of size {bytes} bytes in GPU_FB_MEM"
                )));
            }
            self.fb_used += bytes;
        }
        self.next += 1;
        let v = vec![0u64; bytes.div_ceil(8) as usize + 1];
        let addr = v.as_ptr() as u64;
        self.mem.insert(self.next, v);
        Ok(Alloc {
            id: self.next,
            host: if loc == Loc::Pinned { addr } else { 0 },
            dev: addr,
        })
    }

    fn free(&mut self, a: Alloc) {
        self.mem.remove(&a.id);
    }

    fn launch(&mut self, _g: usize, k: &Kernel, args: &[InstParams]) -> Result<(), CudaError> {
        let launch_args = cuda_args(k, args).ok_or_else(|| CudaError::Plan("no kernel".into()))?;
        assert!(!launch_args.is_empty());
        self.launches += 1;
        // SAFETY: the executor passes live allocations (emulated device
        // memory is host memory).
        unsafe { run_parallel(k, args, 1) };
        Ok(())
    }

    fn gemm(&mut self, _g: usize, c: &GemmCall) -> Result<(), CudaError> {
        self.gemms += 1;
        let b = blas_call(&c.a, &c.b, &c.c, c.n);
        // SAFETY: as in `launch`.
        unsafe {
            colmajor(
                c.n as i64,
                b.trans_first,
                b.first.base as *const f64,
                b.ld_first,
                b.trans_second,
                b.second.base as *const f64,
                b.ld_second,
                c.a.base as *mut f64,
                b.ld_out,
                if c.accumulate { 1.0 } else { 0.0 },
            )
        };
        Ok(())
    }

    fn copy(
        &mut self,
        _g: usize,
        dst: (Loc, u64),
        src: (Loc, u64),
        bytes: u64,
    ) -> Result<(), CudaError> {
        let kind = match (src.0, dst.0) {
            (Loc::Fb(a), Loc::Fb(b)) if a % self.physical.max(1) == b % self.physical.max(1) => {
                "d2d"
            }
            (Loc::Fb(_), Loc::Fb(_)) => "peer",
            (Loc::Fb(_), _) => "d2h",
            (_, Loc::Fb(_)) => "h2d",
            _ => "h2h",
        };
        *self.copies.entry(kind).or_insert(0) += bytes;
        // SAFETY: both are live allocations of at least `bytes`.
        unsafe {
            std::ptr::copy_nonoverlapping(src.1 as *const u8, dst.1 as *mut u8, bytes as usize)
        };
        Ok(())
    }

    fn order(&mut self, _from: usize, _to: usize) -> Result<(), CudaError> {
        Ok(())
    }

    fn barrier(&mut self) -> Result<(), CudaError> {
        Ok(())
    }

    fn sync(&mut self) -> Result<(), CudaError> {
        Ok(())
    }

    fn mark(&mut self, _g: usize) -> Result<usize, CudaError> {
        self.marks.push(Instant::now());
        Ok(self.marks.len() - 1)
    }

    fn elapsed(&mut self, start: usize, end: usize) -> Result<f64, CudaError> {
        Ok(self.marks[end]
            .duration_since(self.marks[start])
            .as_secs_f64())
    }

    fn clear_marks(&mut self) {
        self.marks.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::App;
    use crate::cuda::{run_workload, CudaConfig, CudaError, TOLERANCE};
    use crate::machine::Machine;
    use crate::sim::reference;

    fn cfg() -> CudaConfig {
        CudaConfig {
            scale: 1.0 / 4096.0,
            warmup: 1,
            iterations: Some(2),
            verify: true,
        }
    }

    /// Small enough for unoptimised test builds: the emulated GEMM is a
    /// naive triple loop.
    fn cfg_for(app: &App) -> CudaConfig {
        let gemm = !matches!(app.name.as_str(), "stencil" | "circuit" | "pennant");
        CudaConfig {
            scale: if gemm { 1.0 / 65536.0 } else { 1.0 / 4096.0 },
            warmup: 1,
            iterations: Some(2),
            verify: true,
        }
    }

    /// Every built-in app, under the default, expert-like and zero-copy
    /// decisions, on a 4-GPU description run on 1 and on 4 emulated GPUs:
    /// the results match the CPU reference.
    #[test]
    fn gpu_mappings_keep_the_results_on_emulated_gpus() {
        let p100 = Machine::preset("p100x4").unwrap();
        let h200 = Machine::preset("h200").unwrap();
        for name in App::builtin_names() {
            let app = App::builtin(name).unwrap();
            for (machine, physical) in [(&p100, 4), (&p100, 1), (&h200, 1)] {
                for (what, d) in [
                    ("default", reference::default_gpu(&app, machine)),
                    ("expert", reference::expert_like(&app, machine)),
                    ("zero-copy", reference::zero_copy(&app, machine)),
                ] {
                    let mut dev = Emulated::new(physical);
                    let r = run_workload(Some(&mut dev), &app, &d, machine, &cfg_for(&app));
                    let m = r.unwrap_or_else(|e| {
                        panic!("{name} {what} on {} ({physical}): {e}", machine.name)
                    });
                    assert!(m.used_gpu, "{name} {what}");
                    assert!(m.max_difference.unwrap() <= TOLERANCE);
                    assert!(dev.launches + dev.gemms > 0);
                }
            }
        }
    }

    #[test]
    fn data_moves_over_the_links_the_mapping_implies() {
        let p100 = Machine::preset("p100x4").unwrap();
        // Cannon's tiles on four GPUs: peer copies between framebuffers.
        let app = App::builtin("cannon").unwrap();
        let mut dev = Emulated::new(4);
        let d = reference::default_gpu(&app, &p100);
        let m = run_workload(Some(&mut dev), &app, &d, &p100, &cfg_for(&app)).unwrap();
        assert!(
            dev.copies.get("peer").copied().unwrap_or(0) > 0,
            "{:?}",
            dev.copies
        );
        assert!(m.stats.copy_bytes.keys().any(|k| k.contains("peer GPU")));
        // The same on one physical GPU: the copies stay on the device.
        let mut one = Emulated::new(1);
        run_workload(Some(&mut one), &app, &d, &p100, &cfg_for(&app)).unwrap();
        assert_eq!(one.copies.get("peer"), None);
        assert!(one.copies.get("d2d").copied().unwrap_or(0) > 0);
        // Stencil with its data in pageable host memory on GPUs: staged
        // copies in and out of the framebuffer every launch.
        let app = App::builtin("stencil").unwrap();
        let mut d = reference::default_gpu(&app, &p100);
        for t in &mut d.tasks {
            for r in &mut t.regions {
                r.memory = crate::machine::MemKind::Sysmem;
            }
        }
        let mut dev = Emulated::new(4);
        run_workload(Some(&mut dev), &app, &d, &p100, &cfg()).unwrap();
        assert!(dev.copies["h2d"] > 0 && dev.copies["d2h"] > 0);
    }

    #[test]
    fn a_real_allocation_failure_is_an_out_of_memory_outcome() {
        let h200 = Machine::preset("h200").unwrap();
        let app = App::builtin("stencil").unwrap();
        let d = reference::default_gpu(&app, &h200);
        let mut dev = Emulated::new(1);
        dev.fb_limit = Some(1000);
        let e = run_workload(Some(&mut dev), &app, &d, &h200, &cfg()).unwrap_err();
        assert!(matches!(e, CudaError::OutOfMemory(_)), "{e}");
        let o = crate::cuda::failure(&e);
        assert_eq!(o.status.as_str(), "out_of_memory");
        assert_eq!(
            crate::backend::classify_output(&o.raw_output),
            Some("out_of_memory")
        );
    }
}
