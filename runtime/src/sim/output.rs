//! What a successful simulated run prints, the way each real program prints
//! it (`shared/apps/ERRORS.md`, section 5), and the seeded measurement noise.

use crate::app::App;

/// How a program reports its performance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// circuit: `ELAPSED TIME = %7.3f s` and `GFLOPS = %7.3f GFLOPS`.
    ElapsedGflops,
    /// stencil: `ELAPSED TIME = %7.3f s` only.
    Elapsed,
    /// pennant: `ELAPSED TIME = %7.3f s`, then `Elapsed time = %.6e (total)`.
    ElapsedTotal,
    /// the DISTAL matmuls: `Execution time: %lld ms.` per timed iteration,
    /// then `On %ld nodes achieved GFLOPS per node: %lf.`
    Distal,
}

impl Style {
    /// The style of an application, read from its `performance_output`.
    pub fn of(app: &App) -> Style {
        let p = &app.performance_output;
        if p.contains("Execution time:") {
            Style::Distal
        } else if p.contains("GFLOPS = ") {
            Style::ElapsedGflops
        } else if p.contains("Elapsed time = ") {
            Style::ElapsedTotal
        } else {
            Style::Elapsed
        }
    }

    /// Unit of the throughput reported for this style.
    pub fn unit(self) -> &'static str {
        match self {
            Style::ElapsedGflops => "GFLOPS",
            Style::Distal => "GFLOPS per node",
            // These programs print no throughput; the model's flop rate is
            // reported instead, marked as derived.
            Style::Elapsed | Style::ElapsedTotal => "GFLOP/s (model)",
        }
    }
}

/// The executable name a run's assertion messages start with.
pub fn program_name(app: &App) -> String {
    match app.name.as_str() {
        "cannon" | "summa" | "pumma" | "johnson" | "solomonik" => format!("{}MM-cuda", app.name),
        "cosma" => "cosma-cuda".into(),
        other => other.to_string(),
    }
}

/// What the program prints for timed iterations `iters` (seconds each),
/// `flops` per iteration, `setup_s` outside the loop plus `untimed_s` of
/// untimed iterations, on `nodes` nodes. Returns (text, elapsed_s,
/// throughput).
pub fn success(
    style: Style,
    iters: &[f64],
    flops: f64,
    setup_s: f64,
    untimed_s: f64,
    nodes: u32,
) -> (String, f64, f64) {
    let total: f64 = iters.iter().sum();
    let n = iters.len().max(1) as f64;
    match style {
        Style::Distal => {
            let mut text = String::new();
            for t in iters {
                // The program prints whole milliseconds (`%lld ms`).
                text.push_str(&format!(
                    "Execution time: {} ms.\n",
                    (t * 1e3).round() as i64
                ));
            }
            let mean = total / n;
            let per_node = flops / mean.max(1e-12) / 1e9 / f64::from(nodes.max(1));
            text.push_str(&format!(
                "On {} nodes achieved GFLOPS per node: {per_node:.6}.\n",
                nodes.max(1)
            ));
            (text, mean, per_node)
        }
        Style::ElapsedGflops => {
            let gflops = flops * n / total.max(1e-12) / 1e9;
            let text = format!("ELAPSED TIME = {total:7.3} s\nGFLOPS = {gflops:7.3} GFLOPS\n");
            (text, total, gflops)
        }
        Style::Elapsed => {
            let rate = flops * n / total.max(1e-12) / 1e9;
            (format!("ELAPSED TIME = {total:7.3} s\n"), total, rate)
        }
        Style::ElapsedTotal => {
            let rate = flops * n / total.max(1e-12) / 1e9;
            let all = total + setup_s + untimed_s;
            let text = format!(
                "ELAPSED TIME = {total:7.3} s\nElapsed time = {} (total)\n",
                c_exp(all, 6)
            );
            (text, total, rate)
        }
    }
}

/// C's `%.*e`: `1.234560e+01`.
pub fn c_exp(x: f64, precision: usize) -> String {
    let s = format!("{x:.precision$e}");
    match s.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
/// generators", 2014): a tiny, good-enough generator for measurement noise.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.next_f64().max(1e-300);
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Per-iteration multiplicative noise factors: `1 + noise * z`, z standard
/// normal clamped to +-3, so a run's iteration times scatter like repeated
/// measurements; noise 0 gives exactly 1.
pub fn noise_factors(seed: u64, noise: f64, n: usize) -> Vec<f64> {
    let noise = if noise.is_finite() {
        noise.clamp(0.0, super::model::MAX_NOISE)
    } else {
        0.0
    };
    if noise == 0.0 {
        return vec![1.0; n];
    }
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| (1.0 + noise * rng.normal().clamp(-3.0, 3.0)).max(0.05))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_exp_matches_printf() {
        assert_eq!(c_exp(12.3456, 6), "1.234560e+01");
        assert_eq!(c_exp(0.000123, 6), "1.230000e-04");
        assert_eq!(c_exp(0.0, 6), "0.000000e+00");
    }

    #[test]
    fn noise_is_seeded_small_and_optional() {
        assert_eq!(noise_factors(7, 0.0, 3), vec![1.0; 3]);
        let a = noise_factors(7, 0.02, 100);
        assert_eq!(a, noise_factors(7, 0.02, 100));
        assert_ne!(a, noise_factors(8, 0.02, 100));
        assert!(a.iter().all(|f| (0.94..=1.06).contains(f)));
        let mean = a.iter().sum::<f64>() / 100.0;
        assert!((mean - 1.0).abs() < 0.01);
    }

    #[test]
    fn printed_lines_follow_the_programs() {
        let (t, e, g) = success(Style::ElapsedGflops, &[0.5, 0.5], 1e9, 0.0, 0.0, 1);
        assert_eq!(t, "ELAPSED TIME =   1.000 s\nGFLOPS =   2.000 GFLOPS\n");
        assert_eq!((e, g), (1.0, 2.0));
        let (t, e, g) = success(Style::Distal, &[0.25, 0.25], 1e12, 0.0, 0.0, 1);
        assert_eq!(
            t,
            "Execution time: 250 ms.\nExecution time: 250 ms.\n\
             On 1 nodes achieved GFLOPS per node: 4000.000000.\n"
        );
        assert_eq!((e, g), (0.25, 4000.0));
        let (t, _, _) = success(Style::ElapsedTotal, &[1.0], 0.0, 0.5, 0.5, 1);
        assert_eq!(
            t,
            "ELAPSED TIME =   1.000 s\nElapsed time = 2.000000e+00 (total)\n"
        );
    }
}
