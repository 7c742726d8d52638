//! One test per AutoGuide rule: the outcome (mapper + raw output), what
//! AutoGuide explains and suggests, its edit applied, and the result re-checked.

use mapwright::autoguide::{guide, Context, FeedbackMode};
use mapwright_grammar::diagnostic::apply_edits;
use mapwright_grammar::{analyze, Severity};
use mapwright_runtime::app::App;

fn report(source: &str, raw_output: &str, app: Option<&str>) -> String {
    let app = app.and_then(App::builtin);
    let analysis = analyze(source);
    let ctx = Context::new(source, &analysis, None, raw_output, app.as_ref(), None);
    let feedback = guide(&ctx);
    let mut out = format!("--- mapper\n{source}\n--- raw output\n{raw_output}\n--- feedback\n");
    for f in &feedback {
        out.push_str(&format!(
            "[{}] {:?}\n{}\n",
            f.rule,
            f.category,
            f.render(FeedbackMode::Suggest)
        ));
    }
    if let Some(edit) = feedback.iter().find_map(|f| f.edit.clone()) {
        let fixed = apply_edits(source, &edit).expect("edit applies");
        let errors = analyze(&fixed)
            .diagnostics()
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        out.push_str(&format!("--- after the edit ({errors} errors)\n{fixed}"));
    } else {
        out.push_str("--- no edit\n");
    }
    out
}

macro_rules! case {
    ($name:ident, $src:expr, $raw:expr, $app:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(report($src, $raw, $app));
        }
    };
}

case!(
    colon_in_function_definition,
    "m = Machine(GPU);\ndef f(Task task):\n    return m[0, 0];\nIndexTaskMap t f;\n",
    "Error at line 2:\n\tsyntax error, unexpected ':', expecting '{'",
    None
);
case!(
    index_task_map_function_undefined,
    "m = Machine(GPU);\nIndexTaskMap t f;\ndef f(Task task) {\n    return m[0, 0];\n}\n",
    "IndexTaskMap's function undefined",
    None
);
case!(
    mgpu_not_found,
    "def f(Task task) {\n    return mgpu[0, task.ipoint[0] % mgpu.size[1]];\n}\nIndexTaskMap t f;\n",
    "mgpu not found",
    None
);
// A model one edit away (`mcpu`): the respelling is only likely, so the
// safe definition the rule suggests is the edit.
case!(
    mgpu_not_found_next_to_mcpu,
    "mcpu = Machine(CPU);\ndef f(Task task) {\n    return mgpu[0, task.ipoint[0] % mgpu.size[1]];\n}\nIndexTaskMap t f;\ndef g(Task task) {\n    return mcpu[0, 0];\n}\nIndexTaskMap u g;\n",
    "mgpu not found",
    None
);
case!(
    stride_does_not_match,
    "Task * GPU;\nLayout * * * SOA C_order;\n",
    "assertion failed: stride does not match expected value",
    Some("stencil")
);
case!(
    dgemm_illegal_parameter,
    "Task * GPU;\nLayout * * * SOA F_order;\n",
    " ** On entry to DGEMM  parameter number 8 had an illegal value\nInternal TACO CUBLAS failure with error code 7 in file cudalibs.cu at line 70",
    Some("cannon")
);
case!(
    slice_processor_index_out_of_bound,
    "m = Machine(GPU);\ndef f(Task task) {\n    ip = task.ipoint;\n    return m[ip[0] / 4, ip[0] + 1];\n}\nIndexTaskMap t f;\n",
    "Slice processor index out of bound!\n5 >= 4",
    None
);
case!(
    event_exists_assertion,
    "Task * GPU;\nInstanceLimit task_4 1; # backpressure\nCollectMemory task_4 *;\n",
    "cannon: dsl_mapper.cc:1627: virtual void NSMapper::report_profiling(...): Assertion `event.exists()' failed.",
    Some("cannon")
);
case!(
    out_of_memory,
    "Task * GPU;\nRegion * * GPU FBMEM;\n",
    "Default mapper failed allocation of size 17179869184 bytes for region  requirement 0 of task task_4 (UID 12) in memory 1e00000000000003 (GPU_FB_MEM) for processor 1d00000000000003 (TOC_PROC).",
    Some("cannon")
);
case!(
    unreachable_memory,
    "Task * GPU;\nRegion * * GPU SYSMEM;\n",
    "Invalid mapper output from invocation of 'map_task' on mapper DSL. Mapper selected an instance for region requirement 0 in memory 1e00000000000000 which is not visible from the target processors for task task_4 (ID 7).",
    Some("cannon")
);
case!(
    plain_execution_time,
    "Task * CPU;\n",
    "ELAPSED TIME =   1.234 s",
    Some("circuit")
);
case!(
    throughput,
    "Task * GPU;\n",
    "Execution time: 120 ms.\nExecution time: 118 ms.\nOn 1 nodes achieved GFLOPS per node: 4877.000000.",
    Some("cannon")
);

/// "is actually mapped to CPU, but machine model is for GPU" on a host
/// without GPUs (the DISTAL experts on a CPU-only Legion): the edit builds
/// the GPU models over the CPUs, and the OpenMP ones where the host has no
/// OpenMP processors either, leaving comments alone; where GPUs exist the
/// mismatch is the mapper's choice, so no edit.
#[test]
fn a_machine_model_for_a_kind_the_host_lacks_is_rebuilt_over_the_tasks_kind() {
    use mapwright_runtime::machine::{Machine, ProcKind};
    let source = "Task * GPU,CPU;\n# m = Machine(GPU) in a comment stays\nm_2d = Machine(GPU);\nm_omp = Machine(OMP);\ndef f(Task task) {\n    return m_2d[0, 0];\n}\nIndexTaskMap t f;\n";
    let raw = "t is actually mapped to CPU, but machine model is for GPU";
    let analysis = analyze(source);
    let edit_on = |machine: &Machine| {
        let ctx = Context::new(source, &analysis, None, raw, None, Some(machine));
        guide(&ctx)
            .into_iter()
            .find(|f| f.rule == "machine-model-kind-mismatch")
            .expect("the rule matches")
            .edit
    };
    let mut with_omp = Machine::preset("p100x4").unwrap();
    with_omp.node.processors.retain(|p| p.kind != ProcKind::Gpu);
    assert!(with_omp.procs_per_node(ProcKind::Omp) > 0);
    let edit = edit_on(&with_omp).expect("an edit on a host without GPUs");
    let fixed = apply_edits(source, &edit).unwrap();
    assert!(fixed.contains("\nm_2d = Machine(CPU);\n"), "{fixed}");
    assert!(
        fixed.contains("# m = Machine(GPU) in a comment stays"),
        "{fixed}"
    );
    assert!(fixed.contains("m_omp = Machine(OMP);"), "{fixed}");
    let mut cpu_only = with_omp.clone();
    cpu_only.node.processors.retain(|p| p.kind != ProcKind::Omp);
    let fixed = apply_edits(source, &edit_on(&cpu_only).unwrap()).unwrap();
    assert!(fixed.contains("m_omp = Machine(CPU);"), "{fixed}");
    assert!(edit_on(&Machine::preset("p100x4").unwrap()).is_none());
}

/// A real run's measurements (as the Legion mapper reports them) with
/// every point of circuit's `calculate_new_currents` on one of four CPUs.
fn crowded_circuit_metrics() -> mapwright_runtime::backend::Metrics {
    use mapwright_runtime::backend::{Metrics, MetricsBasis, TaskFigures};
    let mut m = Metrics {
        basis: MetricsBasis::Measured,
        ..Metrics::default()
    };
    for (p, busy) in [(0, 2.4), (1, 0.02), (2, 0.01), (3, 0.03)] {
        m.proc_busy_s.insert(format!("node0 CPU{p}"), busy);
    }
    m.imbalance = 2.4 / (2.46 / 4.0);
    let mut t = TaskFigures {
        runs: 40,
        mean_s: 0.058,
        max_s: 0.07,
        ..TaskFigures::default()
    };
    t.points_per_proc.insert("node0 CPU0".into(), 40);
    m.tasks.insert("calculate_new_currents".into(), t);
    m.task_time_s.insert("calculate_new_currents".into(), 2.32);
    m
}

/// The measured-imbalance rule quotes the busy times and the idle
/// processors' shares, and its edit deals the crowded launch over every
/// CPU: by replacing the function of the statement that names only that
/// task, or by taking it out of a shared list and giving it its own.
#[test]
fn a_measured_imbalance_is_quoted_and_its_edit_spreads_the_crowded_launch() {
    use mapwright_runtime::machine::Machine;
    use mapwright_runtime::resolve_mapping::resolve_mapping;
    let app = App::builtin("circuit").unwrap();
    let mut machine = Machine::preset("p100x4").unwrap();
    machine
        .node
        .processors
        .retain(|p| p.kind != mapwright_runtime::machine::ProcKind::Gpu);
    let metrics = crowded_circuit_metrics();
    let one =
        "Task * CPU;\nmcpu = Machine(CPU);\ndef one(Task task) {\n    return mcpu[0, 0];\n}\n";
    for source in [
        format!("{one}IndexTaskMap calculate_new_currents one;\n"),
        format!(
            "{one}IndexTaskMap distribute_charge, calculate_new_currents, update_voltages one;\n"
        ),
        format!("{one}IndexTaskMap calculate_new_currents, distribute_charge one;"),
    ] {
        let analysis = analyze(&source);
        let decisions = resolve_mapping(&analysis, &source, &app, &machine);
        let raw = "ELAPSED TIME =   2.500 s\n";
        let mut ctx = Context::new(
            &source,
            &analysis,
            Some(&decisions),
            raw,
            Some(&app),
            Some(&machine),
        );
        ctx.metrics = Some(&metrics);
        let feedback = guide(&ctx);
        let f = feedback
            .iter()
            .find(|f| f.rule == "measured-load-imbalance")
            .expect("the measured rule fires");
        assert!(
            f.explain.contains("node0 CPU0 was busy 2.400 s"),
            "{}",
            f.explain
        );
        assert!(f.explain.contains("node0 CPU2 0%"), "{}", f.explain);
        assert!(
            f.explain
                .contains("`calculate_new_currents` ran 40 of its 40 measured runs there"),
            "{}",
            f.explain
        );
        assert!(
            !feedback.iter().any(|f| f.rule == "load-imbalance"),
            "the static rule defers to the measurement"
        );
        let fixed = apply_edits(&source, f.edit.as_ref().expect("an edit")).unwrap();
        let analysis = analyze(&fixed);
        assert!(
            !analysis.diagnostics().iter().any(|d| d.is_error()),
            "{fixed}"
        );
        let after = resolve_mapping(&analysis, &fixed, &app, &machine);
        let spread = after
            .tasks
            .iter()
            .find(|t| t.task == "calculate_new_currents")
            .unwrap()
            .points_per_processor();
        assert_eq!(
            spread.len(),
            4,
            "every CPU gets points: {spread:?}\n{fixed}"
        );
        if !source.contains("distribute_charge") {
            continue;
        }
        // The others keep their function.
        let kept = after
            .tasks
            .iter()
            .find(|t| t.task == "distribute_charge")
            .unwrap()
            .points_per_processor();
        assert_eq!(kept.len(), 1, "{fixed}");
    }
}

/// Copies no task hid, and a memory nearly full, read from measurements
/// and quoted; neither fires on the model's figures.
#[test]
fn measured_copies_and_memory_use_are_quoted() {
    use mapwright_runtime::backend::{MetricsBasis, TaskFigures};
    use mapwright_runtime::machine::{Machine, MemKind};
    let machine = Machine::preset("p100x4").unwrap();
    let capacity = machine.capacity(MemKind::Sysmem).unwrap() as f64;
    let mut m = crowded_circuit_metrics();
    m.proc_busy_s.clear();
    m.imbalance = 1.0;
    m.copy_time_s = 0.5;
    m.copy_bytes
        .insert("node0 SYSMEM0 -> node0 SYSMEM0".into(), 3.0e8);
    let mut t = TaskFigures::default();
    t.copy_bytes_per_arg.insert(2, 2.5e8);
    m.tasks.insert("update_voltages".into(), t);
    m.memory_bytes
        .insert("node0 SYSMEM0".into(), 0.9 * capacity);
    let source = "Task * CPU;\n";
    let analysis = analyze(source);
    let raw = "ELAPSED TIME =   2.000 s\n";
    let rules = |m: &mapwright_runtime::backend::Metrics| {
        let mut ctx = Context::new(source, &analysis, None, raw, None, Some(&machine));
        ctx.metrics = Some(m);
        guide(&ctx)
    };
    let feedback = rules(&m);
    let copy = feedback
        .iter()
        .find(|f| f.rule == "measured-copy-bound")
        .expect("copy-bound fires");
    assert!(
        copy.explain.contains("0.500 s of the 2.000 s run (25%)"),
        "{}",
        copy.explain
    );
    assert!(
        copy.explain
            .contains("`update_voltages`'s argument 2 (250.0 MB)"),
        "{}",
        copy.explain
    );
    let memory = feedback
        .iter()
        .find(|f| f.rule == "measured-memory-pressure")
        .expect("memory pressure fires");
    assert!(memory.explain.contains("90% of its"), "{}", memory.explain);
    m.basis = MetricsBasis::Model;
    assert!(rules(&m).iter().all(|f| !f.rule.starts_with("measured-")));
}
