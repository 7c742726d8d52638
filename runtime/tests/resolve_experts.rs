//! Every built-in application's expert mapper checks with zero errors
//! against its application on the paper's machine, and its decisions render
//! (`explain` snapshots).

mod resolve;

use mapwright_grammar::{analyze, Severity};
use mapwright_runtime::app::{expert_mapper_text, App, RanksPerNode};
use mapwright_runtime::machine::Machine;
use mapwright_runtime::resolve_mapping::{resolve_mapping, RegionNaming};

/// The applications DISTAL launches with one Legion rank per GPU
/// (`"ranks_per_node": "per_gpu"`: `jsrun -a 4 ... -ll:gpu 1`, see
/// `johnson.json`/`cosma.json`), whose experts are written for
/// `Machine(GPU)` = `(ranks, 1)`. The other four matmuls run one rank with
/// four GPUs (`jsrun -r 1 ... -ll:gpu 4`).
const RANK_PER_GPU: [&str; 2] = ["johnson", "cosma"];

fn errors(app: &App, machine: &Machine) -> Vec<String> {
    let source = expert_mapper_text(&app.name).expect("expert");
    let analysis = analyze(source);
    let decisions = resolve_mapping(&analysis, source, app, machine);
    let mut out: Vec<String> = analysis
        .diagnostics()
        .iter()
        .chain(decisions.diagnostics.iter())
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{} {}", d.code, d.message))
        .collect();
    if let Some(f) = decisions.fatal {
        out.push(format!("fatal {}: {}", f.kind, f.raw_output));
    }
    out
}

#[test]
fn every_expert_checks_without_errors_on_the_paper_machine() {
    let p100 = Machine::preset("p100x4").expect("p100x4");
    for name in App::builtin_names() {
        let app = App::builtin(name).expect("built-in");
        let errs = errors(&app, &p100);
        assert!(errs.is_empty(), "{name} on p100x4: {errs:#?}");
    }
}

#[test]
fn distal_apps_record_how_many_ranks_they_run() {
    for name in ["cannon", "summa", "pumma", "johnson", "solomonik", "cosma"] {
        let app = App::builtin(name).expect("built-in");
        let want = if RANK_PER_GPU.contains(&name) {
            RanksPerNode::PerGpu
        } else {
            RanksPerNode::Count(1)
        };
        assert_eq!(app.ranks_per_node, want, "{name}");
        assert!(
            !app.ranks_notes.is_empty(),
            "{name}: the source is documented"
        );
    }
    for name in ["circuit", "stencil", "pennant"] {
        let app = App::builtin(name).expect("built-in");
        assert_eq!(app.ranks_per_node, RanksPerNode::Count(1), "{name}");
    }
}

/// Modelled as ONE rank driving four GPUs (how the resolver used to see
/// every run), johnson's and cosma's `init_all_gpus`
/// (`m_2d[task.ipoint[0], 0]`) names node 1 of 1, which the reference
/// rejects ("Sharding node index out of bound!"); one rank per GPU, as the
/// descriptions now say DISTAL launches them, it names rank 1 of 4.
#[test]
fn rank_per_gpu_experts_need_one_rank_per_gpu() {
    let p100 = Machine::preset("p100x4").expect("p100x4");
    for name in RANK_PER_GPU {
        let mut app = App::builtin(name).expect("built-in");
        assert!(errors(&app, &p100).is_empty(), "{name}");
        app.ranks_per_node = RanksPerNode::Count(1);
        let errs = errors(&app, &p100);
        assert!(
            errs.iter()
                .any(|e| e.starts_with("E0301") && e.contains("init_cublas")),
            "{name}: {errs:#?}"
        );
        assert!(
            errs.iter()
                .any(|e| e.contains("Sharding node index out of bound!\n1 >= 1")),
            "{name}: {errs:#?}"
        );
    }
}

#[test]
fn every_expert_places_every_launch_point() {
    let p100 = Machine::preset("p100x4").expect("p100x4");
    // Four one-GPU nodes: one rank per GPU gives the same mapper's-eye
    // machine as p100x4 run one rank per GPU, on different hardware.
    let four_nodes = resolve::p100x4_rank_per_gpu();
    for name in App::builtin_names() {
        let app = App::builtin(name).expect("built-in");
        every_point_placed(name, &app, &p100);
        if RANK_PER_GPU.contains(name) {
            every_point_placed(name, &app, &four_nodes);
        }
    }
}

/// Every task of `app` is decided and every launch point placed on a
/// physical processor of `machine`.
fn every_point_placed(name: &str, app: &App, machine: &Machine) {
    let source = expert_mapper_text(name).expect("expert");
    let d = resolve_mapping(&analyze(source), source, app, machine);
    assert_eq!(d.tasks.len(), app.tasks.len());
    for (t, a) in d.tasks.iter().zip(&app.tasks) {
        assert_eq!(t.task, a.name);
        assert!(a.has_variant(t.proc_kind), "{name}/{}", a.name);
        assert!(!t.placement.is_empty(), "{name}/{} not placed", a.name);
        if a.launch == mapwright_runtime::app::Launch::Index {
            assert_eq!(t.placement.len() as u64, a.points(), "{name}/{}", a.name);
        }
        for p in &t.placement {
            assert!(p.node < machine.nodes(), "{name}/{}", a.name);
            assert!(
                p.proc < machine.procs_per_node(t.proc_kind),
                "{name}/{}",
                a.name
            );
        }
    }
}

/// One rank per GPU: johnson's four `init_cublas` points go to the four
/// GPUs of the one node (rank r's GPU is the node's GPU r), and every GEMM
/// runs on a GPU.
#[test]
fn ranks_map_back_to_the_node_s_gpus() {
    let p100 = Machine::preset("p100x4").expect("p100x4");
    for name in RANK_PER_GPU {
        let app = App::builtin(name).expect("built-in");
        let source = expert_mapper_text(name).expect("expert");
        let d = resolve_mapping(&analyze(source), source, &app, &p100);
        let init = d
            .tasks
            .iter()
            .find(|t| t.task == "init_cublas")
            .expect("init_cublas");
        let placed: Vec<(u32, u32)> = init.placement.iter().map(|p| (p.node, p.proc)).collect();
        assert_eq!(placed, vec![(0, 0), (0, 1), (0, 2), (0, 3)], "{name}");
        let top = d
            .tasks
            .iter()
            .find(|t| t.task == "top_level")
            .expect("top_level");
        assert!(top.control_replicated, "{name}: one shard per rank");
    }
}

#[test]
fn region_naming_follows_the_recorded_run_flags() {
    let naming: Vec<(&str, RegionNaming)> = App::builtin_names()
        .iter()
        .map(|n| {
            (
                *n,
                RegionNaming::of_app(&App::builtin(n).expect("built-in")),
            )
        })
        .collect();
    for (name, n) in naming {
        let want = if matches!(name, "circuit" | "pennant") {
            RegionNaming::Semantic
        } else {
            RegionNaming::Index
        };
        assert_eq!(n, want, "{name}");
    }
}

#[test]
fn explain_circuit() {
    let src = expert_mapper_text("circuit").expect("expert");
    insta::assert_snapshot!(resolve::explain(src, "circuit", "p100x4"));
}

#[test]
fn explain_cannon() {
    let src = expert_mapper_text("cannon").expect("expert");
    insta::assert_snapshot!(resolve::explain(src, "cannon", "p100x4"));
}

#[test]
fn explain_stencil() {
    let src = expert_mapper_text("stencil").expect("expert");
    insta::assert_snapshot!(resolve::explain(src, "stencil", "p100x4"));
}

#[test]
fn explain_solomonik() {
    let src = expert_mapper_text("solomonik").expect("expert");
    insta::assert_snapshot!(resolve::explain(src, "solomonik", "p100x4"));
}

#[test]
fn explain_johnson_one_rank_per_gpu() {
    let src = expert_mapper_text("johnson").expect("expert");
    insta::assert_snapshot!(resolve::explain(src, "johnson", "p100x4"));
}

#[test]
fn explain_circuit_on_two_nodes() {
    let src = expert_mapper_text("circuit").expect("expert");
    insta::assert_snapshot!(resolve::explain(src, "circuit", "2x4gpu"));
}

#[test]
fn explain_a_mapper_that_aborts() {
    let src = expert_mapper_text("stencil")
        .expect("expert")
        .replace("Layout * * * SOA F_order;", "Layout * * * SOA C_order;");
    insta::assert_snapshot!(resolve::explain(&src, "stencil", "p100x4"));
}
