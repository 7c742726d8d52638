//! Physical-sanity and behaviour tests of the simulator.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::reference::{
    all_cpu, build, default_gpu, expert_like, native_layout, zero_copy, Recipe, Spread,
};
use super::*;
use crate::app::{RegionArg, Task};
use crate::decisions::{InstanceKind, LayoutDecision, Order, PointPlacement, RuntimeFailure};
use crate::machine::{MemKind, ProcKind};

fn app(name: &str) -> App {
    App::builtin(name).expect("built-in app")
}

fn p100() -> Machine {
    Machine::preset("p100x4").expect("preset")
}

fn run(d: &Decisions, a: &App, m: &Machine) -> RunOutcome {
    simulate(d, a, m, 0, 0.0)
}

fn elapsed(o: &RunOutcome) -> f64 {
    assert!(o.status.is_ok(), "{}: {}", o.status, o.raw_output);
    o.elapsed_s.expect("elapsed")
}

/// A two-task application: `produce` read-writes piece `i` of region `x`
/// (`bytes` per piece) and `consume` reads it, both over `points` points.
fn pipeline(points: u64, bytes: u64, flops: f64) -> App {
    let task = |name: &str, privilege: &str| {
        format!(
            r#"{{"name":"{name}","launch":"index","domain":[{points}],"variants":["CPU","GPU"],
            "per_iteration":1,"regions":[{{"name":"x","index":0,"privilege":"{privilege}",
            "fields":["a","b","c","d"],"dims":1,"elements":{el},"bytes":{bytes}}}],
            "work":{{"flops":{flops},"bytes":{bytes}}}}}"#,
            el = bytes / 16
        )
    };
    let json = format!(
        r#"{{"name":"pipeline","timed_iterations":10,"performance_output":"ELAPSED TIME = %7.3f s",
        "tasks":[{},{}]}}"#,
        task("produce", "read_write"),
        task("consume", "read")
    );
    App::from_json_str(&json).expect("synthetic app")
}

/// Every task on `kind` with every region in `mem`, blockwise.
fn uniform(a: &App, m: &Machine, kind: ProcKind, mem: MemKind) -> Decisions {
    build(
        a,
        m,
        &Recipe {
            kinds: vec![kind],
            memory: &move |_, _: &Task, _: &RegionArg| mem,
            layout: native_layout(a),
            spread: &|_, _| Spread::Blockwise,
            instance_limits: Vec::new(),
            collect_memory: Vec::new(),
        },
    )
}

/// Shifts every point of task `name` to the next processor of its kind.
fn shift_points(d: &mut Decisions, name: &str, procs: u32) {
    let t = d.tasks.iter_mut().find(|t| t.task == name).expect("task");
    for p in &mut t.placement {
        p.proc = (p.proc + 1) % procs;
    }
}

fn nvlink_gbps(m: &Machine) -> f64 {
    m.link(MemKind::Fbmem, MemKind::Fbmem, false)
        .expect("nvlink")
        .bandwidth_gbps
}

// ---------------------------------------------------------------------------
// Physical sanity
// ---------------------------------------------------------------------------

#[test]
fn a_copy_never_beats_its_link() {
    let m = p100();
    for bytes in [1u64 << 10, 1 << 20, 100 << 20, 1 << 30] {
        let a = pipeline(4, bytes, 0.0);
        let mut d = uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem);
        shift_points(&mut d, "consume", 4);
        let o = run(&d, &a, &m);
        elapsed(&o);
        let iters = f64::from(a.timed_iterations);
        // One piece per GPU crosses one NVLink per iteration.
        let moved: f64 = o.metrics.copy_bytes.values().sum();
        assert_eq!(
            moved,
            4.0 * bytes as f64 * iters,
            "{:?}",
            o.metrics.copy_bytes
        );
        let floor = bytes as f64 / (nvlink_gbps(&m) * 1e9) * iters;
        assert!(
            o.metrics.copy_time_s >= floor,
            "{bytes}: {} < {floor}",
            o.metrics.copy_time_s
        );
        // ...and the consumer cannot finish before its data arrived.
        assert!(o.metrics.task_time_s["consume"] >= floor);
    }
}

#[test]
fn copies_on_one_link_share_its_bandwidth() {
    let m = p100();
    let a = pipeline(4, 100 << 20, 0.0);
    let mut d = uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem);
    // Every consumer point on GPU 0: three pieces arrive over three links,
    // and in the model each link carries one; now make them all come from
    // GPU 1 by putting every producer there.
    for p in &mut d.tasks[0].placement {
        p.proc = 1;
    }
    for p in &mut d.tasks[1].placement {
        p.proc = 0;
    }
    let o = run(&d, &a, &m);
    elapsed(&o);
    let per_iter = o.metrics.copy_time_s / f64::from(a.timed_iterations);
    let all_four = 4.0 * (100u64 << 20) as f64 / (nvlink_gbps(&m) * 1e9);
    assert!(per_iter >= all_four, "{per_iter} < {all_four}");
}

#[test]
fn doubling_a_region_never_shortens_its_copy() {
    let m = p100();
    let mut last = 0.0;
    for bytes in [1u64 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20] {
        let a = pipeline(4, bytes, 0.0);
        let mut d = uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem);
        shift_points(&mut d, "consume", 4);
        let o = run(&d, &a, &m);
        let t = o.metrics.copy_time_s;
        assert!(t >= last, "{bytes}: {t} < {last}");
        assert!(elapsed(&o) > 0.0);
        last = t;
    }
}

#[test]
fn more_gpus_never_slow_down_a_parallel_task() {
    let a = pipeline(12, 1 << 20, 5e10);
    let mut last = f64::INFINITY;
    for gpus in 1..=4u32 {
        let mut m = p100();
        for p in &mut m.node.processors {
            if p.kind == ProcKind::Gpu {
                p.count = gpus;
            }
        }
        for mem in &mut m.node.memories {
            if mem.kind == MemKind::Fbmem {
                mem.count = gpus;
            }
        }
        let t = elapsed(&run(
            &uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem),
            &a,
            &m,
        ));
        assert!(t <= last * (1.0 + 1e-12), "{gpus} GPUs: {t} > {last}");
        last = t;
    }
    // Across the cluster presets as well.
    let a = pipeline(64, 1 << 20, 5e10);
    let mut last = f64::INFINITY;
    for name in ["2x4gpu", "4x4gpu", "16x4gpu"] {
        let m = Machine::preset(name).unwrap();
        let t = elapsed(&run(
            &uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem),
            &a,
            &m,
        ));
        assert!(t <= last, "{name}: {t} > {last}");
        last = t;
    }
}

#[test]
fn framebuffer_beats_zero_copy_for_a_bandwidth_bound_gpu_task() {
    let m = p100();
    let a = pipeline(4, 256 << 20, 1e6);
    let fb = elapsed(&run(
        &uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem),
        &a,
        &m,
    ));
    let zc = elapsed(&run(
        &uniform(&a, &m, ProcKind::Gpu, MemKind::Zcmem),
        &a,
        &m,
    ));
    // HBM2 at ~550 GB/s against PCIe at ~12 GB/s shared by four GPUs.
    assert!(zc > 10.0 * fb, "fb {fb} zc {zc}");
}

#[test]
fn a_gpu_given_system_memory_pays_staging_copies() {
    let m = p100();
    let a = pipeline(4, 64 << 20, 1e6);
    let fb = run(&uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem), &a, &m);
    // `uniform` would repair an unreachable memory; force SYSMEM by hand.
    let mut d = uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem);
    for t in &mut d.tasks {
        for r in &mut t.regions {
            r.memory = MemKind::Sysmem;
        }
    }
    let sys = run(&d, &a, &m);
    assert!(elapsed(&sys) > elapsed(&fb));
    assert!(
        sys.metrics.copy_bytes.keys().any(|k| k.starts_with("PCIe")),
        "{:?}",
        sys.metrics.copy_bytes
    );
}

#[test]
fn layout_effects_follow_access_patterns() {
    let m = p100();
    // A 2-D bandwidth-bound kernel: the wrong order costs, AOS costs when
    // the kernel reads one field of four.
    let json = r#"{"name":"grid","timed_iterations":5,"performance_output":"ELAPSED TIME",
      "tasks":[{"name":"sweep","launch":"index","domain":[4],"variants":["GPU"],"per_iteration":1,
        "regions":[{"name":"g","index":0,"privilege":"read","fields":["u"],"dims":2,
          "shape":[4096,4096],"elements":16777216,"bytes":134217728},
          {"name":"h","index":1,"privilege":"read_write","fields":["v"],"dims":1,
          "elements":16777216,"bytes":134217728}],
        "work":{"flops":1e6,"bytes":402653184}},
       {"name":"fill","launch":"index","domain":[4],"variants":["GPU"],"per_iteration":1,
        "regions":[{"name":"h","index":0,"privilege":"read_write","fields":["v","w","x","y"],"dims":1,
          "elements":16777216,"bytes":536870912}],"work":{"flops":1e6,"bytes":1073741824}}]}"#;
    let a = App::from_json_str(json).unwrap();
    let with = |layout: LayoutDecision| {
        let mut d = uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem);
        for t in &mut d.tasks {
            for r in &mut t.regions {
                r.layout = layout;
            }
        }
        d
    };
    let base = LayoutDecision::default();
    let t_f = elapsed(&run(&with(base), &a, &m));
    let t_c = elapsed(&run(
        &with(LayoutDecision {
            order: Order::C,
            ..base
        }),
        &a,
        &m,
    ));
    let t_aos = elapsed(&run(&with(LayoutDecision { soa: false, ..base }), &a, &m));
    assert!(t_c > t_f, "C {t_c} F {t_f}");
    assert!(t_aos > t_f, "AOS {t_aos} SOA {t_f}");
}

#[test]
fn one_processor_for_every_point_is_imbalanced() {
    let m = p100();
    let a = pipeline(4, 1 << 20, 5e10);
    let spread = uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem);
    let mut lumped = spread.clone();
    for t in &mut lumped.tasks {
        for p in &mut t.placement {
            p.proc = 0;
        }
    }
    let o1 = run(&spread, &a, &m);
    let o2 = run(&lumped, &a, &m);
    assert!((o1.metrics.imbalance - 1.0).abs() < 1e-9);
    assert!(
        (o2.metrics.imbalance - 4.0).abs() < 1e-9,
        "{}",
        o2.metrics.imbalance
    );
    assert!(elapsed(&o2) > 3.5 * elapsed(&o1));
}

// ---------------------------------------------------------------------------
// The built-in applications
// ---------------------------------------------------------------------------

#[test]
fn experts_beat_poor_mappings_on_the_paper_machine() {
    let m = p100();
    for name in App::builtin_names() {
        let a = app(name);
        let expert = elapsed(&run(&expert_like(&a, &m), &a, &m));
        let default = elapsed(&run(&default_gpu(&a, &m), &a, &m));
        let cpu = run(&all_cpu(&a, &m), &a, &m);
        // Within a few percent of the default GPU mapping, or better.
        assert!(
            expert <= default * 1.05,
            "{name}: expert {expert} default {default}"
        );
        if ["circuit", "stencil", "pennant"].contains(name) {
            assert!(
                elapsed(&cpu) > 10.0 * expert,
                "{name}: cpu {:?} expert {expert}",
                cpu.elapsed_s
            );
        } else {
            // The GEMM tasks have only GPU variants: all-CPU falls back to
            // GPUs, without the expert's `InstanceLimit task_4 1`, so the
            // next step's tiles are copied during the current GEMM
            // (`sim::gemm`): up to one tile copy per step faster.
            assert!(elapsed(&cpu) >= expert * 0.9, "{name}");
        }
        let one_gpu = build(
            &a,
            &m,
            &Recipe {
                kinds: vec![ProcKind::Gpu, ProcKind::Omp, ProcKind::Cpu],
                memory: &|k, _: &Task, _: &RegionArg| {
                    if k == ProcKind::Gpu {
                        MemKind::Fbmem
                    } else {
                        MemKind::Sysmem
                    }
                },
                layout: native_layout(&a),
                spread: &|_, _| Spread::First,
                instance_limits: Vec::new(),
                collect_memory: vec!["task_4".into()],
            },
        );
        let o = run(&one_gpu, &a, &m);
        if o.status.is_ok() {
            assert!(
                elapsed(&o) > 2.0 * expert,
                "{name}: one GPU {:?} expert {expert}",
                o.elapsed_s
            );
        } else {
            // Four pieces on one 15 GB framebuffer do not fit.
            assert_eq!(o.status.as_str(), "out_of_memory", "{name}");
        }
    }
}

#[test]
fn success_output_follows_each_program() {
    let m = p100();
    for name in App::builtin_names() {
        let a = app(name);
        let o = run(&expert_like(&a, &m), &a, &m);
        let text = &o.raw_output;
        match *name {
            "circuit" => {
                assert!(text.starts_with("ELAPSED TIME = "));
                assert!(text.contains("\nGFLOPS = ") && text.ends_with(" GFLOPS\n"));
                assert_eq!(o.throughput_unit, "GFLOPS");
            }
            "stencil" => assert!(text.starts_with("ELAPSED TIME = ") && text.lines().count() == 1),
            "pennant" => {
                assert!(text.contains("\nElapsed time = ") && text.ends_with(" (total)\n"));
            }
            _ => {
                assert_eq!(
                    text.matches("Execution time: ").count(),
                    a.timed_iterations as usize
                );
                // Legion's node count is its address spaces: johnson and
                // cosma run one rank per GPU.
                let nodes = if ["johnson", "cosma"].contains(name) {
                    4
                } else {
                    1
                };
                assert!(
                    text.contains(&format!("On {nodes} nodes achieved GFLOPS per node: ")),
                    "{name}: {text}"
                );
                assert_eq!(o.throughput_unit, "GFLOPS per node");
            }
        }
        let e = o.elapsed_s.unwrap();
        let t = o.throughput.unwrap();
        assert!(
            e.is_finite() && e > 0.0 && t.is_finite() && t > 0.0,
            "{name}"
        );
    }
}

#[test]
fn same_seed_same_run_and_noise_is_optional() {
    let m = p100();
    let a = app("cannon");
    let d = expert_like(&a, &m);
    let x = simulate(&d, &a, &m, 1, 0.02);
    let y = simulate(&d, &a, &m, 1, 0.02);
    let z = simulate(&d, &a, &m, 2, 0.02);
    assert_eq!(x.raw_output, y.raw_output);
    assert_ne!(x.raw_output, z.raw_output);
    let quiet1 = simulate(&d, &a, &m, 1, 0.0);
    let quiet2 = simulate(&d, &a, &m, 2, 0.0);
    assert_eq!(quiet1.raw_output, quiet2.raw_output);
    let rel = (x.elapsed_s.unwrap() / quiet1.elapsed_s.unwrap() - 1.0).abs();
    assert!(rel < 0.05, "{rel}");
    // Absurd noise is clamped, never negative time.
    let wild = simulate(&d, &a, &m, 3, 1e9);
    assert!(wild.elapsed_s.unwrap() > 0.0);
}

// ---------------------------------------------------------------------------
// Failures, with the texts of shared/apps/ERRORS.md
// ---------------------------------------------------------------------------

#[test]
fn cublas_rejects_f_order() {
    let m = p100();
    for name in ["cannon", "summa", "pumma", "johnson", "solomonik", "cosma"] {
        let a = app(name);
        let mut d = expert_like(&a, &m);
        for t in &mut d.tasks {
            for r in &mut t.regions {
                r.layout.order = Order::F;
            }
        }
        let o = run(&d, &a, &m);
        assert_eq!(o.status.as_str(), "cublas_illegal_parameter", "{name}");
        assert!(o
            .raw_output
            .starts_with(" ** On entry to DGEMM  parameter number 8 had an illegal value\n"));
        assert!(o
            .raw_output
            .contains("Internal TACO CUBLAS failure with error code 7 in file "));
        assert!(o.elapsed_s.is_none() && o.throughput.is_none());
    }
}

#[test]
fn regent_rejects_c_order_on_2d_regions() {
    let m = p100();
    let a = app("stencil");
    let mut d = expert_like(&a, &m);
    for t in &mut d.tasks {
        for r in &mut t.regions {
            r.layout.order = Order::C;
        }
    }
    let o = run(&d, &a, &m);
    assert_eq!(o.status.as_str(), "stride_mismatch");
    assert_eq!(
        o.raw_output,
        "assertion failed: stride does not match expected value\n"
    );
    // 1-D regions do not care (circuit's expert itself uses C_order).
    let a = app("circuit");
    assert!(run(&expert_like(&a, &m), &a, &m).status.is_ok());
}

#[test]
fn too_much_in_one_framebuffer_is_out_of_memory() {
    let m = p100();
    let a = app("pennant");
    let mut d = expert_like(&a, &m);
    // Two pieces per GPU: ~19 GB of sides, zones and points per 15 GB FB.
    for t in &mut d.tasks {
        if t.proc_kind == ProcKind::Gpu {
            for p in &mut t.placement {
                p.proc /= 2;
            }
        }
    }
    let o = run(&d, &a, &m);
    assert_eq!(o.status.as_str(), "out_of_memory", "{}", o.raw_output);
    let text = &o.raw_output;
    assert!(text.starts_with("Default mapper failed allocation of size "));
    assert!(text.contains("bytes for region  requirement "));
    assert!(text.contains("(GPU_FB_MEM) for processor "));
    assert!(text.contains("(TOC_PROC). This means the working set of your application is too big"));
    // Zero-copy memory (2 GiB) cannot hold a stencil tile.
    let a = app("stencil");
    let o = run(&zero_copy(&a, &m), &a, &m);
    assert_eq!(o.status.as_str(), "out_of_memory");
    assert!(o.raw_output.contains("(Z_COPY_MEM)"));
}

#[test]
fn instance_limit_on_an_index_launch_trips_the_assertion() {
    let m = p100();
    let a = app("circuit");
    let mut d = expert_like(&a, &m);
    let t = d
        .tasks
        .iter_mut()
        .find(|t| t.task == "calculate_new_currents")
        .unwrap();
    t.instance_limit = Some(1);
    let o = run(&d, &a, &m);
    assert_eq!(o.status.as_str(), "event_exists");
    assert!(o.raw_output.starts_with("circuit: "));
    assert!(o.raw_output.contains("Assertion `event.exists()' failed."));
    // The DISTAL experts' InstanceLimit on the single GEMM task is fine.
    let a = app("cannon");
    assert!(run(&expert_like(&a, &m), &a, &m).status.is_ok());
}

#[test]
fn points_outside_the_machine_are_reported() {
    let m = p100();
    let a = app("circuit");
    let mut d = expert_like(&a, &m);
    let t = d
        .tasks
        .iter_mut()
        .find(|t| t.task == "update_voltages")
        .unwrap();
    t.placement[3] = PointPlacement {
        point: vec![3],
        node: 0,
        proc: 4,
    };
    let o = run(&d, &a, &m);
    assert_eq!(o.status.as_str(), "slice_out_of_bound");
    assert_eq!(
        o.raw_output,
        "Slice processor index out of bound!\n4 >= 4\n"
    );
    t_node(&m, &a);
}

fn t_node(m: &Machine, a: &App) {
    let mut d = expert_like(a, m);
    d.tasks[0].placement = vec![PointPlacement {
        point: vec![],
        node: 1,
        proc: 0,
    }];
    let o = run(&d, a, m);
    assert_eq!(o.raw_output, "Sharding node index out of bound!\n1 >= 1\n");
}

#[test]
fn a_resolver_failure_is_passed_through() {
    let m = p100();
    let a = app("circuit");
    let mut d = expert_like(&a, &m);
    d.fatal = Some(RuntimeFailure {
        kind: "name_not_found".into(),
        raw_output: "mgpu not found\n".into(),
        rule: None,
    });
    let o = run(&d, &a, &m);
    assert_eq!(o.status.as_str(), "name_not_found");
    assert_eq!(o.raw_output, "mgpu not found\n");
}

#[test]
fn virtual_and_missing_decisions_do_not_break_the_model() {
    let m = p100();
    let a = app("circuit");
    // No decisions at all: Legion's defaults everywhere.
    let o = run(&Decisions::default(), &a, &m);
    assert!(o.status.is_ok(), "{}", o.raw_output);
    // A mapper's VIRTUAL on a leaf task's data does not make it free.
    let mut d = expert_like(&a, &m);
    for t in &mut d.tasks {
        for r in &mut t.regions {
            r.instance = InstanceKind::VirtualByMapper;
        }
    }
    let v = run(&d, &a, &m);
    assert!(elapsed(&v) >= 0.9 * elapsed(&o));
}

#[test]
fn random_decisions_never_panic() {
    let mut rng = SplitMix64::new(42);
    let kinds = ProcKind::ALL;
    let mems = MemKind::ALL;
    for name in App::builtin_names() {
        let a = app(name);
        for preset in Machine::preset_names() {
            let m = Machine::preset(preset).unwrap();
            for _ in 0..8 {
                let mut d = default_gpu(&a, &m);
                for t in &mut d.tasks {
                    if rng.next_f64() < 1.0 / 3.0 {
                        t.proc_kind = kinds[(rng.next_u64() % kinds.len() as u64) as usize];
                    }
                    for r in &mut t.regions {
                        r.memory = mems[(rng.next_u64() % mems.len() as u64) as usize];
                        r.layout.soa = rng.next_f64() < 1.0 / 2.0;
                        r.layout.order = if rng.next_f64() < 1.0 / 2.0 {
                            Order::C
                        } else {
                            Order::F
                        };
                    }
                    for p in &mut t.placement {
                        p.proc = (rng.next_u64() % 6) as u32;
                        p.node = (rng.next_u64() % 2) as u32 * (rng.next_u64() % 20) as u32;
                    }
                    if rng.next_f64() < 1.0 / 5.0 {
                        t.placement.clear();
                    }
                    if rng.next_f64() < 1.0 / 9.0 {
                        t.instance_limit = Some(1);
                    }
                }
                let o = simulate(&d, &a, &m, rng.next_u64(), 0.01);
                if o.status.is_ok() {
                    let e = o.elapsed_s.unwrap();
                    assert!(e.is_finite() && e > 0.0, "{name} on {preset}");
                } else {
                    assert!(!o.raw_output.is_empty());
                    assert!(o.elapsed_s.is_none());
                }
            }
        }
    }
}

#[test]
fn the_backend_resolves_then_simulates() {
    let resolver: crate::backend::Resolver = Arc::new(|src: &str, a: &App, m: &Machine| {
        if src.contains("CPU") {
            all_cpu(a, m)
        } else {
            expert_like(a, m)
        }
    });
    let b = SimBackend::new(resolver);
    assert_eq!(b.name(), "sim");
    let req = RunRequest::new("Task * GPU;", Arc::new(app("stencil")), Arc::new(p100()));
    let fast = b.run(&req);
    let slow = b.run(&RunRequest {
        mapper: "Task * CPU;".into(),
        ..req.clone()
    });
    assert!(slow.normalized_to(&fast).unwrap() < 0.1);
    // A resolver that panics is a failed run, not a crash.
    let b = SimBackend::new(Arc::new(|_: &str, _: &App, _: &Machine| -> Decisions {
        panic!("boom")
    }));
    let o = b.run(&req);
    assert_eq!(o.status.as_str(), "internal_error");
}

/// Every built-in under four kinds of mapper on p100x4 either runs, with
/// sane figures, or fails with a kind a real run prints; the table is
/// printed for a reader (`--nocapture`).
#[test]
fn every_app_under_four_mappers_runs_or_fails_as_a_real_run_would() {
    let m = p100();
    let known = [
        "out_of_memory",
        "stride_mismatch",
        "cublas_illegal_parameter",
        "slice_out_of_bound",
        "processor_kind_mismatch",
        "mapping_error",
    ];
    for name in App::builtin_names() {
        let a = app(name);
        for (label, d) in [
            ("expert", expert_like(&a, &m)),
            ("default", default_gpu(&a, &m)),
            ("cpu", all_cpu(&a, &m)),
            ("zc", zero_copy(&a, &m)),
        ] {
            let o = simulate(&d, &a, &m, 0, 0.0);
            println!(
                "{name:10} {label:8} {:25} t={:?} thr={:?} imb={:.2} copy={:.3}",
                o.status.as_str(),
                o.elapsed_s,
                o.throughput,
                o.metrics.imbalance,
                o.metrics.copy_time_s
            );
            if o.status.is_ok() {
                let t = o.elapsed_s.unwrap_or(0.0);
                assert!(t > 0.0 && t.is_finite(), "{name} {label}: {t}");
                assert!(o.throughput.is_some_and(|x| x > 0.0), "{name} {label}");
                assert!(o.metrics.imbalance >= 1.0 - 1e-9, "{name} {label}");
                assert!(o.metrics.copy_time_s >= 0.0, "{name} {label}");
                assert!(!o.metrics.task_time_s.is_empty(), "{name} {label}");
            } else {
                assert!(
                    known.contains(&o.status.as_str()),
                    "{name} {label}: {}",
                    o.status.as_str()
                );
            }
        }
        // The expert-like mapper runs every app.
        assert!(
            simulate(&expert_like(&a, &m), &a, &m, 0, 0.0)
                .status
                .is_ok(),
            "{name}: expert-like"
        );
    }
}

#[test]
fn resolved_experts_run_and_beat_resolved_cpu_mappers() {
    let resolve = default_resolver();
    let m = p100();
    let cpu_text = "Task * CPU;\nRegion * * * SYSMEM;\nLayout * * * SOA F_order;\n";
    for name in App::builtin_names() {
        let a = app(name);
        let text = crate::app::expert_mapper_text(name).unwrap();
        // Every expert runs, johnson's and cosma's included: DISTAL runs
        // them one rank per GPU (`ranks_per_node`), as their
        // `m_2d[ipoint[0], 0]` assumes.
        let o = simulate(&resolve(text, &a, &m), &a, &m, 0, 0.0);
        assert!(o.status.is_ok(), "{name}: {}", o.raw_output);
        // The hand-built expert decisions agree with resolution.
        let reference = elapsed(&run(&expert_like(&a, &m), &a, &m));
        let e = elapsed(&o);
        assert!(
            (e / reference - 1.0).abs() < 0.1,
            "{name}: resolved {e} reference {reference}"
        );
        let cpu = simulate(&resolve(cpu_text, &a, &m), &a, &m, 0, 0.0);
        if ["circuit", "stencil", "pennant"].contains(name) {
            assert!(elapsed(&cpu) > 10.0 * e, "{name}");
        }
    }
}

/// A mapping function that reads `ipoint[1]` only in the branch of a `?:`
/// that a 1-D launch never takes runs (the reference's ternary is lazy).
#[test]
fn guarded_ipoint_read_runs_on_a_1d_launch() {
    let resolve = default_resolver();
    let m = p100();
    let a = app("circuit");
    let text = "Task * GPU,CPU;\nRegion * * GPU FBMEM;\nRegion * * CPU SYSMEM;\nLayout * * * SOA C_order;\n\
        mgpu = Machine(GPU);\n\
        def lin(IPoint ip, ISpace sp) { return sp.len == 1 ? ip[0] : ip[0] * sp[1] + ip[1]; }\n\
        def f(Task task) { i = lin(task.ipoint, task.ispace); return mgpu[i / mgpu.size[1] % mgpu.size[0], i % mgpu.size[1]]; }\n\
        IndexTaskMap calculate_new_currents,distribute_charge,update_voltages f;\n";
    let d = resolve(text, &a, &m);
    assert!(d.fatal.is_none(), "{:?}", d.fatal);
    assert!(!d.diagnostics.iter().any(|x| x.code == "E0311"));
    let o = simulate(&d, &a, &m, 0, 0.0);
    assert!(o.status.is_ok(), "{}", o.raw_output);
    // The same read in the branch that runs fails as the reference does.
    let bad = text.replace(
        "sp.len == 1 ? ip[0] : ip[0] * sp[1] + ip[1]",
        "sp.len == 1 ? ip[1] : ip[0]",
    );
    let o = simulate(&resolve(&bad, &a, &m), &a, &m, 0, 0.0);
    assert_eq!(o.status.as_str(), "index_out_of_bound");
    assert_eq!(o.raw_output, "Index out of bound for TupleIntNode\n");
}

/// Ranks share their node's hardware: johnson run one rank per GPU on one
/// node moves data over the node's NVLink, never a network.
#[test]
fn ranks_on_one_node_share_its_links() {
    let resolve = default_resolver();
    let m = p100();
    for name in ["johnson", "cosma"] {
        let a = app(name);
        let text = crate::app::expert_mapper_text(name).unwrap();
        let o = simulate(&resolve(text, &a, &m), &a, &m, 0, 0.0);
        assert!(o.status.is_ok(), "{name}: {}", o.raw_output);
        assert!(o
            .raw_output
            .contains("On 4 nodes achieved GFLOPS per node: "));
        let links: Vec<&String> = o.metrics.copy_bytes.keys().collect();
        assert!(
            links
                .iter()
                .all(|k| k.starts_with("NVLink node0 ") && !k.contains("node1")),
            "{name}: {links:?}"
        );
        assert!(!links.is_empty(), "{name}");
    }
}

/// The printed throughput of `text` resolved and simulated for `name` on
/// `m` (the run must succeed).
fn resolved_throughput(m: &Machine, name: &str, text: &str) -> f64 {
    let a = app(name);
    let o = simulate(&default_resolver()(text, &a, m), &a, m, 0, 0.0);
    assert!(o.status.is_ok(), "{name} on {}: {}", m.name, o.raw_output);
    o.throughput.unwrap()
}

/// An expert mapper's text.
fn expert(name: &str) -> String {
    crate::app::expert_mapper_text(name).unwrap().to_string()
}

/// The expert without its `InstanceLimit task_4 1`.
fn no_limit(name: &str) -> String {
    expert(name).replace("InstanceLimit task_4 1;", "")
}

/// The matmuls' own schedules (`sim::gemm`): the same mapping change moves
/// them differently, for the reasons SIMULATION.md traces to their DISTAL
/// schedules.
#[test]
fn matmul_schedules_respond_differently_to_the_same_change() {
    let m = p100();
    let gflops = |name: &str, text: &str| resolved_throughput(&m, name, text);
    // One row of task_5 per GPU, steps mapped ahead: SUMMA's (and, inside a
    // node, PUMMA's) broadcast lets a row's two points share each B tile;
    // Cannon's skew gives them different tiles.
    let rows = |name: &str| {
        format!(
            "{}\ndef rowgpu(Task task) {{ return m_2d[0, task.ipoint[0]]; }}\n\
             IndexTaskMap task_5 rowgpu;\n",
            no_limit(name)
        )
    };
    let cannon = gflops("cannon", &rows("cannon"));
    let summa = gflops("summa", &rows("summa"));
    let pumma = gflops("pumma", &rows("pumma"));
    assert!(summa > cannon * 1.02, "summa {summa} cannon {cannon}");
    assert!(
        (summa / pumma - 1.0).abs() < 1e-9,
        "summa {summa} pumma {pumma}"
    );
    // Dropping InstanceLimit lets the stepped GEMMs prefetch their next
    // tiles; the 3-D GEMMs are index launches and were already overlapped.
    for name in ["cannon", "summa", "pumma", "solomonik"] {
        let (e, n) = (gflops(name, &expert(name)), gflops(name, &no_limit(name)));
        assert!(n > e * 1.02, "{name}: expert {e} without limit {n}");
    }
    for name in ["johnson", "cosma"] {
        let (e, n) = (gflops(name, &expert(name)), gflops(name, &no_limit(name)));
        assert!(
            (n / e - 1.0).abs() < 1e-9,
            "{name}: expert {e} without limit {n}"
        );
    }
    // The families' experts differ: Solomonik adds the timed placement of
    // A to Cannon's steps; cosma's one GEMM per GPU waits for a 1.6 GB B
    // tile and ends with a 1.6 GB partial A, where johnson's second GEMM
    // overlaps its tiles and one 800 MB A partial is exposed (johnson and
    // cosma print per rank: four ranks on the node).
    let c = gflops("cannon", &expert("cannon"));
    let s = gflops("solomonik", &expert("solomonik"));
    let j = 4.0 * gflops("johnson", &expert("johnson"));
    let k = 4.0 * gflops("cosma", &expert("cosma"));
    assert!(
        c > s && j > k,
        "cannon {c} solomonik {s} johnson {j} cosma {k}"
    );
}

/// Several nodes (the V100 clusters): the matmuls run the benchmark
/// scripts' weak-scaled problems (`crate::scaling`), and the orderings
/// their DISTAL schedules imply show (SIMULATION.md "Several nodes"):
/// - 2x4gpu: summa and pumma run on a (1, 2) node grid, where PUMMA's
///   node-level `stagger(ko, {in})` is the identity: equal. Cannon runs on
///   (2, 1) with other tiles: different.
/// - 4x4gpu (2x2 nodes): PUMMA's stagger spreads each step's panels over
///   both node rows, so one port carries half of what SUMMA's broadcast or
///   Cannon's two shifts (both from one node on a 2x2 grid) put on it.
/// - 16x4gpu (4x4 nodes): Cannon's shifts spread over neighbours, PUMMA's
///   over node rows only, SUMMA broadcasts from one owner: cannon > pumma
///   > summa.
/// - Without `InstanceLimit task_4 1` every step's tiles are issued at
///   once and each port drains the same total under the three schedules
///   (every GPU reads every panel of its row and column once): equal; so
///   the change gains cannon and summa more than pumma.
/// - johnson (gdim 2) and cosma (2, 2, 2) run the same grid and problem
///   on 8 GPUs: equal on 2x4gpu; on 16 GPUs gdim 4 against (2, 2, 4).
#[test]
fn matmuls_on_several_nodes_follow_their_schedules() {
    let same = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-9;
    let on = |machine: &str| Machine::preset(machine).expect("preset");
    let m2 = on("2x4gpu");
    let g = |m: &Machine, name: &str| resolved_throughput(m, name, &expert(name));
    let (c, s, p) = (g(&m2, "cannon"), g(&m2, "summa"), g(&m2, "pumma"));
    assert!(
        same(s, p) && !same(c, s),
        "2x4gpu: cannon {c} summa {s} pumma {p}"
    );
    let (j, k) = (g(&m2, "johnson"), g(&m2, "cosma"));
    assert!(same(j, k), "2x4gpu: johnson {j} cosma {k}");
    let so = g(&m2, "solomonik");
    assert!(!same(so, c) && !same(so, s), "2x4gpu: solomonik {so}");

    let m4 = on("4x4gpu");
    let (c, s, p) = (g(&m4, "cannon"), g(&m4, "summa"), g(&m4, "pumma"));
    assert!(p > c && p > s, "4x4gpu: cannon {c} summa {s} pumma {p}");
    let (j, k) = (g(&m4, "johnson"), g(&m4, "cosma"));
    assert!(!same(j, k), "4x4gpu: johnson {j} cosma {k}");
    let n = |name: &str| resolved_throughput(&m4, name, &no_limit(name));
    let (nc, ns, np) = (n("cannon"), n("summa"), n("pumma"));
    assert!(
        same(nc, ns) && same(ns, np),
        "4x4gpu without limit: {nc} {ns} {np}"
    );
    assert!(
        nc / c > np / p,
        "the same change: cannon {c} -> {nc}, pumma {p} -> {np}"
    );

    let m16 = on("16x4gpu");
    let (c, s, p) = (g(&m16, "cannon"), g(&m16, "summa"), g(&m16, "pumma"));
    assert!(c > p && p > s, "16x4gpu: cannon {c} pumma {p} summa {s}");
}

/// The bytes each NVLink direction `GPUa -> GPUb` of node 0 carries per
/// timed iteration, keyed `(a, b)`.
fn nvlink_bytes_per_iteration(o: &RunOutcome, iters: f64) -> BTreeMap<(u32, u32), f64> {
    let mut out = BTreeMap::new();
    for (k, b) in &o.metrics.copy_bytes {
        let Some(rest) = k.strip_prefix("NVLink node0 FBMEM") else {
            continue;
        };
        let (a, b_mem) = rest.split_once(" -> node0 FBMEM").expect("peer label");
        out.insert(
            (a.parse().expect("gpu"), b_mem.parse().expect("gpu")),
            b / iters,
        );
    }
    out
}

#[test]
fn grid_steps_find_the_tile_at_their_offset() {
    use super::plan::GridStep;
    // A 3 x 2 grid, tile p at (p % 3, p / 3).
    let step = |offset: [i32; 3]| GridStep {
        grid: [3, 2, 1],
        offset,
    };
    // Tile 1 = (1, 0): x neighbours 0 and 2, y+ neighbour 4, no y-.
    assert_eq!(step([-1, 0, 0]).neighbour(1), Some(0));
    assert_eq!(step([1, 0, 0]).neighbour(1), Some(2));
    assert_eq!(step([0, 1, 0]).neighbour(1), Some(4));
    assert_eq!(step([0, -1, 0]).neighbour(1), None);
    // Tile 5 = (2, 1), the far corner: nothing beyond it.
    assert_eq!(step([1, 0, 0]).neighbour(5), None);
    assert_eq!(step([0, 1, 0]).neighbour(5), None);
    assert_eq!(step([-1, 0, 0]).neighbour(5), Some(4));
    assert_eq!(step([0, -1, 0]).neighbour(5), Some(2));
    // Outside the grid altogether.
    assert_eq!(step([0, 0, 0]).neighbour(6), None);
    assert_eq!(step([0, 0, 0]).tiles(), 6);
}

#[test]
fn stencil_tiles_take_one_strip_from_each_grid_neighbour() {
    let m = p100();
    let mut a = app("stencil");
    // A tile twice as wide as tall would have y strips (along x) twice
    // the x strips' size: give them different sizes to see which is which.
    for f in &mut a.communication.flows {
        if f.region == "pym_in" || f.region == "pyp_in" {
            f.bytes_per_point *= 2;
        }
    }
    let bytes = |region: &str| {
        a.communication
            .flows
            .iter()
            .find(|f| f.region == region)
            .expect("strip flow")
            .bytes_per_point as f64
    };
    let (x, y) = (bytes("pxm_in"), bytes("pym_in"));
    assert_eq!(bytes("pxp_in"), x);
    assert_eq!(bytes("pyp_in"), y);
    assert!(y > x);
    // Tile i on GPU i: the 2 x 2 grid is (0 1 / 2 3), tile i at
    // (i % 2, i / 2) as stencil_fast.rg colours it.
    let d = uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem);
    let o = run(&d, &a, &m);
    elapsed(&o);
    let links = nvlink_bytes_per_iteration(&o, f64::from(a.timed_iterations));
    let expect: BTreeMap<(u32, u32), f64> = [
        // x strips between horizontal neighbours, both ways.
        ((1, 0), x),
        ((0, 1), x),
        ((3, 2), x),
        ((2, 3), x),
        // y strips between vertical neighbours, both ways.
        ((2, 0), y),
        ((0, 2), y),
        ((3, 1), y),
        ((1, 3), y),
    ]
    .into_iter()
    .collect();
    assert_eq!(links.len(), expect.len(), "{links:?}");
    for (k, want) in &expect {
        let got = links.get(k).copied().unwrap_or(0.0);
        assert!((got - want).abs() < 1e-6 * want, "{k:?}: {got} != {want}");
    }
    // Each corner of a 2 x 2 grid has two neighbours, so takes two
    // strips (the 1-D halo found one neighbour for tiles 0 and 3): GPU 0
    // receives from GPUs 1 and 2, one strip each; nothing crosses the
    // diagonals.
    let into0: Vec<_> = links.keys().filter(|k| k.1 == 0).collect();
    assert_eq!(into0, [&(1, 0), &(2, 0)]);
    assert!(!links.contains_key(&(3, 0)) && !links.contains_key(&(1, 2)));
}

#[test]
fn a_grid_must_match_the_launches_it_joins() {
    let mut a = app("stencil");
    assert!(a.validate().is_ok());
    a.communication.flows[0].grid = vec![4, 2];
    let err = a.validate().expect_err("8 tiles over 4 points").to_string();
    assert!(err.contains("8 tiles"), "{err}");
    a.communication.flows[0].grid = vec![2, 2];
    a.communication.flows[0].offset = vec![1];
    assert!(a.validate().is_err());
}

#[test]
fn pennant_reads_the_row_below_and_reduces_into_its_owner() {
    // -numpcx 1 -numpcy 4: a column of pieces; the row piece i shares with
    // piece i + 1 is owned by i (the lower colour). So piece i reads the
    // row owned by i - 1 and receives i + 1's partials of its own row.
    let m = p100();
    let a = app("pennant");
    let d = uniform(&a, &m, ProcKind::Gpu, MemKind::Fbmem);
    let o = run(&d, &a, &m);
    elapsed(&o);
    let links = nvlink_bytes_per_iteration(&o, f64::from(a.timed_iterations));
    let flow = |from: &str| {
        let f = a
            .communication
            .flows
            .iter()
            .find(|f| f.from == from)
            .expect("flow");
        // Copied on every launch of the consumer per iteration.
        let launches = a.task(&f.to).expect("consumer").per_iteration;
        f.bytes_per_point as f64 * f64::from(launches)
    };
    let up = flow("adv_pos_half");
    let down = flow("sum_point_force") + flow("sum_point_mass");
    let mut expect = BTreeMap::new();
    for i in 1..4u32 {
        expect.insert((i - 1, i), up);
        expect.insert((i, i - 1), down);
    }
    assert_eq!(links.len(), expect.len(), "{links:?}");
    for (k, want) in &expect {
        let got = links.get(k).copied().unwrap_or(0.0);
        assert!((got - want).abs() < 1e-6 * want, "{k:?}: {got} != {want}");
    }
}
