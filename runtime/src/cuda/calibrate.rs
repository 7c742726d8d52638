//! `mapwright calibrate --backend cuda`: measures this machine and writes
//! a machine description the simulator uses.
//!
//! Measured with CUDA events on one stream (after a warm-up of each):
//! host-to-device and device-to-host copies over pinned memory, a
//! device-to-device copy (bytes read plus written), a copy between two
//! GPUs when there are several, a kernel writing mapped pinned memory
//! (zero-copy), cuBLAS DGEMM on square matrices, and the launch overhead
//! (an empty kernel launched and waited for, wall clock). The figures go
//! into [`super::discover::machine_from`], which turns them into the
//! description's peaks so that the simulator's efficiency factors give the
//! measured rates back.

use std::time::Instant;

use crate::machine::Machine;

use super::discover::{host_info, machine_from, peak_gflops, peak_mem_gbps, Calibration, GpuInfo};
use super::exec::{Device, GemmCall};
use super::gpu::{guard, Gpus};
use super::kernels::Kernel;
use super::layout::InstParams;
use super::plan::Loc;
use super::CudaError;

/// What calibration measured, with the peaks to compare against.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    pub gpus: Vec<GpuInfo>,
    pub calibration: Calibration,
    /// GPU 0's peaks from its attributes.
    pub peak_fp64_gflops: f64,
    /// FP64 tensor-core peak where the architecture has one (A100, H100,
    /// H200: twice the vector peak), which DGEMM uses.
    pub peak_fp64_tensor_gflops: Option<f64>,
    pub peak_fp32_gflops: f64,
    pub peak_mem_gbps: f64,
    /// The GEMM size measured.
    pub gemm_n: u64,
    pub machine: Machine,
}

impl Report {
    /// A few lines for people.
    pub fn summary(&self) -> String {
        let c = &self.calibration;
        let g = self.gpus.first();
        let name = g.map_or("GPU", |g| g.name.as_str());
        if self.gemm_n == 0 {
            return format!(
                "described {} x {name} from its attributes (nothing measured)\n  \
                 peaks: {:.0} GB/s memory, {:.2} TFLOP/s FP64{}\n",
                self.gpus.len(),
                self.peak_mem_gbps,
                self.peak_fp64_tensor_gflops
                    .unwrap_or(self.peak_fp64_gflops)
                    / 1e3,
                if self.peak_fp64_tensor_gflops.is_some() {
                    " (tensor cores)"
                } else {
                    ""
                }
            );
        }
        let mut s = format!("calibrated {} x {name}\n", self.gpus.len());
        let f = |v: Option<f64>| v.map_or("n/a".to_string(), |x| format!("{x:.1}"));
        s.push_str(&format!(
            "  host->device {} GB/s, device->host {} GB/s (pinned)\n",
            f(c.h2d_gbps),
            f(c.d2h_gbps)
        ));
        s.push_str(&format!(
            "  device copy {} GB/s read+written, {:.0} GB/s peak ({:.0} %)\n",
            f(c.d2d_gbps),
            self.peak_mem_gbps,
            c.d2d_gbps.unwrap_or(0.0) / self.peak_mem_gbps.max(1e-9) * 100.0
        ));
        if c.peer_gbps.is_some() {
            s.push_str(&format!("  GPU0->GPU1 {} GB/s\n", f(c.peer_gbps)));
        }
        s.push_str(&format!(
            "  zero-copy kernel writes {} GB/s\n",
            f(c.zero_copy_gbps)
        ));
        let peak = self
            .peak_fp64_tensor_gflops
            .unwrap_or(self.peak_fp64_gflops);
        s.push_str(&format!(
            "  DGEMM n={}: {:.2} TFLOP/s, {:.2} TFLOP/s FP64 peak ({:.0} %){}\n",
            self.gemm_n,
            c.dgemm_gflops.unwrap_or(0.0) / 1e3,
            peak / 1e3,
            c.dgemm_gflops.unwrap_or(0.0) / peak.max(1e-9) * 100.0,
            if self.peak_fp64_tensor_gflops.is_some() {
                " (tensor-core peak)"
            } else {
                ""
            }
        ));
        s.push_str(&format!("  kernel launch + wait {} us\n", f(c.launch_us)));
        s
    }
}

/// Seconds per repetition of `f` on logical GPU `g`'s stream, by events.
fn timed(
    d: &mut Gpus,
    g: usize,
    reps: u32,
    mut f: impl FnMut(&mut Gpus) -> Result<(), CudaError>,
) -> Result<f64, CudaError> {
    f(d)?;
    d.sync()?;
    let a = d.mark(g)?;
    for _ in 0..reps {
        f(d)?;
    }
    let b = d.mark(g)?;
    d.sync()?;
    let s = d.elapsed(a, b)?;
    d.clear_marks();
    Ok(s / f64::from(reps.max(1)))
}

fn square(base: u64, n: u64) -> InstParams {
    // F order: element (i, j) at i + j n.
    InstParams {
        base,
        s0: 1,
        s1: n as i64,
        n0: n as i64,
        n1: n as i64,
        ..InstParams::default()
    }
}

/// Measures this machine (`quick`: smaller sizes, for tests and short
/// device checks).
pub fn calibrate(quick: bool) -> Result<Report, CudaError> {
    let mut d = Gpus::open()?;
    guard("calibrating", || measure(&mut d, quick))
}

/// Describes this machine from the device attributes and `/proc` alone,
/// measuring nothing: the uncalibrated description the simulator's
/// predictions are compared against calibrated ones with.
pub fn describe() -> Result<Report, CudaError> {
    let d = Gpus::open()?;
    Ok(report(d.infos.clone(), Calibration::default(), 0))
}

/// The report of `cal` measured on `gpus` (GEMM size `gemm_n`, 0 when none
/// was measured), with GPU 0's peaks.
fn report(gpus: Vec<GpuInfo>, cal: Calibration, gemm_n: u64) -> Report {
    let g0 = &gpus[0];
    let (p64, p32) = peak_gflops(g0);
    let tensor = matches!(g0.cc, (8, 0) | (9, 0)).then_some(2.0 * p64);
    let machine = machine_from(&gpus, &host_info(), &cal);
    Report {
        peak_fp64_gflops: p64,
        peak_fp64_tensor_gflops: tensor,
        peak_fp32_gflops: p32,
        peak_mem_gbps: peak_mem_gbps(g0),
        gemm_n,
        calibration: cal,
        gpus,
        machine,
    }
}

fn measure(d: &mut Gpus, quick: bool) -> Result<Report, CudaError> {
    let gpus = d.infos.clone();
    let mib = 1u64 << 20;
    let copy_bytes = if quick { 64 * mib } else { 512 * mib };
    let mut cal = Calibration::default();

    let pinned = d.alloc(Loc::Pinned, copy_bytes)?;
    let dev_a = d.raw_device(0, copy_bytes)?;
    let dev_b = d.raw_device(0, copy_bytes)?;
    let gb = |bytes: u64, s: f64| bytes as f64 / s.max(1e-12) / 1e9;
    let t = timed(d, 0, 5, |d| {
        d.copy(0, (Loc::Fb(0), dev_a), (Loc::Host, pinned.host), copy_bytes)
    })?;
    cal.h2d_gbps = Some(gb(copy_bytes, t));
    let t = timed(d, 0, 5, |d| {
        d.copy(0, (Loc::Host, pinned.host), (Loc::Fb(0), dev_a), copy_bytes)
    })?;
    cal.d2h_gbps = Some(gb(copy_bytes, t));
    let t = timed(d, 0, 10, |d| {
        d.copy(0, (Loc::Fb(0), dev_b), (Loc::Fb(0), dev_a), copy_bytes)
    })?;
    cal.d2d_gbps = Some(gb(2 * copy_bytes, t));
    if gpus.len() > 1 {
        let dev_c = d.raw_device(1, copy_bytes)?;
        let t = timed(d, 1, 5, |d| {
            d.copy(1, (Loc::Fb(1), dev_c), (Loc::Fb(0), dev_a), copy_bytes)
        })?;
        cal.peer_gbps = Some(gb(copy_bytes, t));
    }
    // Zero-copy: a kernel writing every double of the pinned buffer.
    let words = copy_bytes / 8;
    let zc = InstParams {
        base: pinned.dev,
        s0: 1,
        s1: 1,
        n0: words as i64,
        n1: 1,
        ..InstParams::default()
    };
    let fill = Kernel::Fill {
        field: 0,
        value: 1.0,
    };
    let t = timed(d, 0, 3, |d| d.launch(0, &fill, &[zc]))?;
    cal.zero_copy_gbps = Some(gb(copy_bytes, t));

    // DGEMM.
    let n: u64 = if quick { 2048 } else { 8192 };
    let bytes = n * n * 8;
    let mats: Vec<u64> = (0..3)
        .map(|_| d.raw_device(0, bytes))
        .collect::<Result<_, _>>()?;
    for &m in &mats {
        d.launch(0, &fill, &[square(m, n)])?;
    }
    let call = GemmCall {
        a: square(mats[0], n),
        b: square(mats[1], n),
        c: square(mats[2], n),
        n,
        accumulate: false,
    };
    let reps = if quick { 3 } else { 10 };
    let t = timed(d, 0, reps, |d| d.gemm(0, &call))?;
    cal.dgemm_gflops = Some(2.0 * (n as f64).powi(3) / t.max(1e-12) / 1e9);

    // Launch overhead: one tiny kernel launched and waited for.
    let tiny = square(mats[0], 1);
    d.launch(0, &fill, &[tiny])?;
    d.sync()?;
    let count = 200;
    let t0 = Instant::now();
    for _ in 0..count {
        d.launch(0, &fill, &[tiny])?;
        d.sync()?;
    }
    cal.launch_us = Some(t0.elapsed().as_secs_f64() / f64::from(count) * 1e6);
    Ok(report(gpus, cal, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Measures on a GPU when one is present; prints SKIPPED otherwise.
    #[test]
    fn quick_calibration_or_skip() {
        match calibrate(true) {
            Ok(r) => {
                r.machine.validate().unwrap();
                assert!(r.calibration.dgemm_gflops.unwrap() > 0.0);
                eprintln!("{}", r.summary());
            }
            Err(e) => {
                eprintln!("SKIPPED: {e}");
                assert!(e.to_string().starts_with("no CUDA driver/GPU found: "));
            }
        }
    }

    /// The uncalibrated description measures nothing and says so.
    #[test]
    fn description_without_measuring_or_skip() {
        match describe() {
            Ok(r) => {
                r.machine.validate().unwrap();
                assert_eq!(r.calibration, Calibration::default());
                assert!(r.summary().contains("nothing measured"), "{}", r.summary());
            }
            Err(e) => {
                eprintln!("SKIPPED: {e}");
                assert!(e.to_string().starts_with("no CUDA driver/GPU found: "));
            }
        }
    }
}
