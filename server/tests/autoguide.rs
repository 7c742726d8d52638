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
