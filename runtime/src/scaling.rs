//! Weak scaling of the six DISTAL matrix multiplications to the machine.
//!
//! The application descriptions give each matmul at the size its
//! benchmark script runs on one node (n = 20000, four GPUs). On more nodes
//! the real benchmarks do not keep that problem: `scripts/benchmark_lassen.py`
//! (Anjiang-Wei/taco@46ac234) grows it with the machine, and the generated
//! code (`test/tests-distributed.cpp`) cuts it by the grid the script
//! chooses:
//!
//! - every matmul: `n = int(20000 * sqrt(nodes))`, made even
//!   (`DMMBench.problemSize`);
//! - cannon: `gy = getgx(nodes)`, `gx = nodes / gy`; summa and pumma:
//!   `gx = getgx(nodes)`, `gy = nodes / gx` (`getgx`: the square root when
//!   `nodes` is a square, else the square root of `nodes / 2`). The node
//!   grid is `(gx, gy)`, inside a node the GPUs form a fixed 2x2 grid, the
//!   placement tiles are `(n / 2gx) x (n / 2gy)`, and the k loop runs `gx`
//!   node steps of 2 GPU steps each;
//! - solomonik: `(rpoc, c, rpoc3)` from the script's table keyed by the
//!   total GPU count, grid `(rpoc, rpoc, c)`, `rpoc3` steps per point;
//! - johnson: `gdim` from its table, grid `gdim^3`;
//! - cosma: `(gx, gy, gz)` from its table.
//!
//! [`App::on_machine`] rewrites a description for the machine: launch
//! domains, region shapes and bytes, GEMM flops and launch counts, and the
//! flows' bytes. A one-node machine keeps the description as it is (the
//! formulas give it back anyway for four GPUs), as does an application
//! without `weak_scaling` or a GPU count the script's tables do not list.
//!
//! One simplification: the real 2-D programs launch the GPU-level task
//! (`task_5`, a 2x2 domain) from each node's `task_6`, once per node step.
//! The model has one index launch over the whole GPU grid `(2gx, 2gy)`,
//! each point running the `2gx` GEMM steps of all node steps in order,
//! marked `node_local = [2, 2]`: without a mapping function its point
//! `(2 in + iln, 2 jn + jln)` runs where Legion's default puts the real
//! point `(iln, jln)`, on the node of `task_7`'s point `(in, jn)`; a
//! mapping function sees the global point where the real mapper sees
//! `(iln, jln)`.

use crate::app::{App, Task};
use crate::machine::{Machine, ProcKind};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Which benchmark script's scaling an application follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    Cannon,
    Summa,
    Pumma,
    Solomonik,
    Johnson,
    Cosma,
}

/// How an application grows with the machine (`weak_scaling` in its
/// description).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeakScaling {
    /// The benchmark whose grid formulas apply.
    pub algorithm: Algorithm,
    /// The one-node problem size (`initialProblemSize`).
    pub n: u64,
    /// Where the formulas come from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

/// `nearestSquare` of the script: the largest integer whose square is at
/// most `max`.
fn nearest_square(max: u64) -> u64 {
    let mut v = 1u64;
    while (v + 1) * (v + 1) <= max {
        v += 1;
    }
    v
}

/// `getgx` of the script's Cannon/SUMMA classes.
fn getgx(procs: u64) -> u64 {
    let ns = nearest_square(procs);
    if ns * ns == procs {
        ns
    } else {
        nearest_square(procs / 2).max(1)
    }
}

/// `DMMBench.problemSize`: weak scaling in the node count, made even.
fn problem_size(n0: u64, nodes: u64) -> u64 {
    let n = (n0 as f64 * (nodes as f64).sqrt()) as u64;
    n - n % 2
}

/// `SolomonikGPUBench.params`: (rpoc, c, rpoc3) by total GPUs.
fn solomonik_params(gpus: u64) -> Option<(u64, u64, u64)> {
    Some(match gpus {
        4 => (2, 1, 2),
        8 => (2, 2, 2),
        16 => (4, 1, 4),
        32 => (4, 2, 4),
        64 => (8, 1, 8),
        128 => (8, 2, 8),
        256 => (16, 1, 16),
        512 => (16, 2, 16),
        1024 => (32, 1, 32),
        _ => return None,
    })
}

/// `JohnsonGPUBench.dims`: gdim by total GPUs.
fn johnson_gdim(gpus: u64) -> Option<u64> {
    Some(match gpus {
        4 | 8 => 2,
        16 | 32 | 64 => 4,
        128 => 6,
        256 => 7,
        _ => return None,
    })
}

/// `LgCOSMABench.decomp`: (gx, gy, gz) by total GPUs.
fn cosma_decomp(gpus: u64) -> Option<(u64, u64, u64)> {
    Some(match gpus {
        2 => (2, 1, 1),
        4 => (1, 2, 2),
        8 => (2, 2, 2),
        16 => (2, 2, 4),
        32 => (2, 4, 4),
        64 => (4, 4, 4),
        128 => (4, 4, 8),
        256 => (4, 8, 8),
        512 => (8, 8, 8),
        _ => return None,
    })
}

/// The problem and grid one benchmark run uses on a machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    /// Matrix size.
    pub n: u64,
    /// The algorithm's grid: `(gx, gy, 1)` for the 2-D node grids,
    /// `(rpoc, rpoc, c)`, `(gdim, gdim, gdim)`, `(gx, gy, gz)`.
    pub dims: [u64; 3],
    /// Steps per GEMM point: `2 gx` (2-D), `rpoc3` (solomonik), 1 (3-D).
    pub steps: u64,
}

impl WeakScaling {
    /// The grid the benchmark script runs on `nodes` nodes of `gpus_per_node`
    /// GPUs, or `None` where its tables have no entry.
    pub fn grid(&self, nodes: u64, gpus_per_node: u64) -> Option<Grid> {
        let n = problem_size(self.n, nodes);
        let gpus = nodes * gpus_per_node;
        Some(match self.algorithm {
            Algorithm::Cannon => {
                let gy = getgx(nodes);
                let gx = nodes / gy;
                Grid {
                    n,
                    dims: [gx, gy, 1],
                    steps: 2 * gx,
                }
            }
            Algorithm::Summa | Algorithm::Pumma => {
                let gx = getgx(nodes);
                let gy = nodes / gx;
                Grid {
                    n,
                    dims: [gx, gy, 1],
                    steps: 2 * gx,
                }
            }
            Algorithm::Solomonik => {
                let (rpoc, c, rpoc3) = solomonik_params(gpus)?;
                Grid {
                    n,
                    dims: [rpoc, rpoc, c],
                    steps: rpoc3,
                }
            }
            Algorithm::Johnson => {
                let g = johnson_gdim(gpus)?;
                Grid {
                    n,
                    dims: [g, g, g],
                    steps: 1,
                }
            }
            Algorithm::Cosma => {
                let (x, y, z) = cosma_decomp(gpus)?;
                Grid {
                    n,
                    dims: [x, y, z],
                    steps: 1,
                }
            }
        })
    }
}

impl App {
    /// This application as it runs on `machine`: the description itself
    /// on one node, the benchmark script's weak-scaled problem on several
    /// (see the module documentation).
    pub fn on_machine(&self, machine: &Machine) -> Cow<'_, App> {
        let Some(ws) = &self.weak_scaling else {
            return Cow::Borrowed(self);
        };
        let nodes = u64::from(machine.nodes);
        let gpn = u64::from(machine.procs_per_node(ProcKind::Gpu));
        if nodes <= 1 || gpn == 0 {
            return Cow::Borrowed(self);
        }
        let Some(grid) = ws.grid(nodes, gpn) else {
            return Cow::Borrowed(self);
        };
        let mut app = self.clone();
        rescale(&mut app, ws.algorithm, grid, nodes * gpn);
        Cow::Owned(app)
    }
}

/// Sets argument `name` of `task` to a `rows x cols` tile of doubles.
fn set_tile(task: &mut Task, name: &str, rows: u64, cols: u64) {
    if let Some(r) = task.regions.iter_mut().find(|r| r.name == name) {
        r.shape = vec![rows, cols];
        r.elements = rows * cols;
        r.bytes = rows * cols * 8;
    }
}

/// Work bytes as the descriptions count them: each argument once, a
/// read-write or reduction argument twice.
fn work_bytes(task: &Task) -> f64 {
    use crate::app::Privilege;
    task.regions
        .iter()
        .map(|r| {
            let twice = matches!(r.privilege, Privilege::ReadWrite | Privilege::Reduce);
            r.bytes as f64 * if twice { 2.0 } else { 1.0 }
        })
        .sum()
}

/// Tile shapes `(rows, cols)` of A, B, C as one GEMM step reads them.
fn gemm_tiles(algorithm: Algorithm, g: Grid) -> [(u64, u64); 3] {
    let n = g.n;
    let [x, y, z] = g.dims;
    match algorithm {
        Algorithm::Cannon | Algorithm::Summa | Algorithm::Pumma => {
            let (m, nn, k) = (n / (2 * x), n / (2 * y), n / (2 * x));
            [(m, nn), (m, k), (k, nn)]
        }
        Algorithm::Solomonik => {
            let t = n / x;
            let k = n / (z * g.steps);
            [(t, t), (t, k), (k, t)]
        }
        Algorithm::Johnson | Algorithm::Cosma => {
            let (m, nn, k) = (n / x, n / y, n / z);
            [(m, nn), (m, k), (k, nn)]
        }
    }
}

fn rescale(app: &mut App, algorithm: Algorithm, g: Grid, total_gpus: u64) {
    let n = g.n;
    let [x, y, z] = g.dims;
    let [ta, tb, tc] = gemm_tiles(algorithm, g);
    let two_d = matches!(
        algorithm,
        Algorithm::Cannon | Algorithm::Summa | Algorithm::Pumma
    );
    for task in &mut app.tasks {
        let name = task.name.clone();
        match name.as_str() {
            "init_cublas" => task.domain = vec![total_gpus],
            "task_4" => {
                set_tile(task, "A", ta.0, ta.1);
                set_tile(task, "B", tb.0, tb.1);
                set_tile(task, "C", tc.0, tc.1);
                task.work.flops = 2.0 * ta.0 as f64 * ta.1 as f64 * tb.1 as f64;
                task.work.bytes = work_bytes(task);
                if two_d {
                    task.per_iteration = (4 * x * y * g.steps) as u32;
                } else if algorithm == Algorithm::Solomonik {
                    task.per_iteration = (x * y * z * g.steps) as u32;
                } else {
                    task.domain = vec![x, y, z];
                }
            }
            other if two_d => rescale_2d(task, other, n, x, y),
            other => rescale_3d(task, other, algorithm, g),
        }
    }
    for f in &mut app.communication.flows {
        f.bytes_per_point = match f.region.as_str() {
            "A" => ta.0 * ta.1 * 8,
            "B" => tb.0 * tb.1 * 8,
            "C" => tc.0 * tc.1 * 8,
            _ => f.bytes_per_point,
        };
    }
}

/// cannon, summa, pumma: node grid `(x, y)`, GPU grid `(2x, 2y)`.
fn rescale_2d(task: &mut Task, name: &str, n: u64, x: u64, y: u64) {
    let (tr, tcol) = (n / (2 * x), n / (2 * y));
    match name {
        "taco_fill" | "task_1" | "task_2" | "task_3" | "taco_validate" => {
            task.domain = vec![2 * x, 2 * y];
            for r in ["A", "B", "C"] {
                set_tile(task, r, tr, tcol);
            }
            if name == "taco_validate" {
                task.work.flops = (tr * tcol) as f64;
            }
            task.work.bytes = work_bytes(task);
        }
        "task_7" => {
            task.domain = vec![x, y];
            set_tile(task, "A", n / x, n / y);
            set_tile(task, "B", n / x, n);
            set_tile(task, "C", n, n / y);
        }
        "task_6" => {
            // One per node and node step.
            task.per_iteration = (x * y * x) as u32;
            set_tile(task, "A", n / x, n / y);
            set_tile(task, "B", n / x, n / x);
            set_tile(task, "C", n / x, n / y);
        }
        "task_5" => {
            task.domain = vec![2 * x, 2 * y];
            task.node_local = vec![2, 2];
            set_tile(task, "A", tr, tcol);
            set_tile(task, "B", tr, n / x);
            set_tile(task, "C", n / x, tcol);
        }
        _ => {}
    }
}

/// solomonik, johnson, cosma: the placement grids are the algorithm's grid
/// with one axis collapsed.
fn rescale_3d(task: &mut Task, name: &str, algorithm: Algorithm, g: Grid) {
    let n = g.n;
    let [x, y, z] = g.dims;
    let [ta, tb, tc] = gemm_tiles(algorithm, g);
    let solomonik = algorithm == Algorithm::Solomonik;
    match name {
        "task_1" => {
            task.domain = vec![x, y, 1];
            set_tile(task, "A", ta.0, ta.1);
        }
        "task_2" if solomonik => {
            task.domain = vec![x, y, 1];
            set_tile(task, "B", n / x, n / y);
        }
        "task_3" if solomonik => {
            task.domain = vec![x, y, 1];
            set_tile(task, "C", n / x, n / y);
        }
        "task_2" => {
            task.domain = vec![x, 1, z];
            set_tile(task, "B", tb.0, tb.1);
        }
        "task_3" => {
            task.domain = vec![1, y, z];
            set_tile(task, "C", tc.0, tc.1);
        }
        "task_5" if solomonik => {
            task.domain = vec![x, y, z];
            set_tile(task, "A", ta.0, ta.1);
            set_tile(task, "B", n / x, n / z);
            set_tile(task, "C", n / z, n / y);
        }
        _ => return,
    }
    task.work.bytes = work_bytes(task);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaled(app: &str, machine: &str) -> App {
        let app = App::builtin(app).unwrap();
        let m = Machine::preset(machine).unwrap();
        app.on_machine(&m).into_owned()
    }

    fn shape(app: &App, task: &str, region: &str) -> Vec<u64> {
        let t = app.tasks.iter().find(|t| t.name == task).unwrap();
        t.regions
            .iter()
            .find(|r| r.name == region)
            .unwrap()
            .shape
            .clone()
    }

    #[test]
    fn the_script_grids() {
        // benchmark_lassen.py: 2 nodes give n = 28284, cannon (2,1),
        // summa and pumma (1,2); 4 nodes n = 40000, (2,2).
        assert_eq!(problem_size(20000, 2), 28284);
        assert_eq!(problem_size(20000, 4), 40000);
        let g = |a| WeakScaling {
            algorithm: a,
            n: 20000,
            source: String::new(),
        };
        assert_eq!(g(Algorithm::Cannon).grid(2, 4).unwrap().dims, [2, 1, 1]);
        assert_eq!(g(Algorithm::Summa).grid(2, 4).unwrap().dims, [1, 2, 1]);
        assert_eq!(g(Algorithm::Pumma).grid(4, 4).unwrap().dims, [2, 2, 1]);
        assert_eq!(g(Algorithm::Solomonik).grid(2, 4).unwrap().dims, [2, 2, 2]);
        assert_eq!(g(Algorithm::Johnson).grid(4, 4).unwrap().dims, [4, 4, 4]);
        assert_eq!(g(Algorithm::Cosma).grid(4, 4).unwrap().dims, [2, 2, 4]);
    }

    #[test]
    fn two_node_shapes_match_the_wrapper_log() {
        // shared/apps/wrapper-logs/cannon.log (2 nodes): task_4's pieces
        // A 7071x14142, B 7071x7071, C 7071x14142; SUMMA/PUMMA A
        // 14142x7071, B 14142x14142, C 14142x7071 (cannon.json notes).
        let c = scaled("cannon", "2x4gpu");
        assert_eq!(shape(&c, "task_4", "A"), vec![7071, 14142]);
        assert_eq!(shape(&c, "task_4", "B"), vec![7071, 7071]);
        assert_eq!(shape(&c, "task_4", "C"), vec![7071, 14142]);
        let s = scaled("summa", "2x4gpu");
        assert_eq!(shape(&s, "task_4", "A"), vec![14142, 7071]);
        assert_eq!(shape(&s, "task_4", "B"), vec![14142, 14142]);
        assert_eq!(shape(&s, "task_4", "C"), vec![14142, 7071]);
        assert!(c.validate().is_ok() && s.validate().is_ok());
    }

    #[test]
    fn one_node_is_unchanged_and_the_flop_count_is_the_problem() {
        let m = Machine::preset("p100x4").unwrap();
        for name in ["cannon", "summa", "pumma", "solomonik", "johnson", "cosma"] {
            let app = App::builtin(name).unwrap();
            assert!(matches!(app.on_machine(&m), Cow::Borrowed(_)), "{name}");
            for machine in ["2x4gpu", "4x4gpu"] {
                let s = scaled(name, machine);
                s.validate().unwrap();
                let t = s.tasks.iter().find(|t| t.name == "task_4").unwrap();
                let total = t.work.flops * t.per_iteration.max(1) as f64 * t.points() as f64;
                let n = problem_size(20000, Machine::preset(machine).unwrap().nodes.into()) as f64;
                let want = 2.0 * n * n * n;
                assert!(
                    (total / want - 1.0).abs() < 1e-3,
                    "{name} {machine}: {total} vs {want}"
                );
            }
        }
    }
}
