//! The AutoGuide rule table. Each row recognises one kind of outcome and says
//! what it means, what to do, and (optionally) how to do it mechanically.
//! Order matters: more specific rules first; performance rules last.

use super::edits;
use super::measured;
use super::{Category, Context};

/// Computes a mechanical repair of the mapper, if there is one.
pub type EditFn = fn(&Context<'_>) -> Option<Vec<mapwright_grammar::TextEdit>>;

/// A row of the table.
pub struct Rule {
    pub id: &'static str,
    pub category: Category,
    /// Whether the rule applies to this outcome.
    pub matches: fn(&Context<'_>) -> bool,
    /// The explanation (may quote details of the outcome).
    pub explain: fn(&Context<'_>) -> String,
    pub suggest: &'static str,
    /// The mechanical repair, when there is one.
    pub edit: Option<EditFn>,
    /// A catch-all: fires only when no other rule of its category did.
    pub fallback: bool,
}

fn raw_has(ctx: &Context<'_>, needle: &str) -> bool {
    ctx.raw_output.contains(needle)
}

fn has_code(ctx: &Context<'_>, code: &str) -> bool {
    ctx.diagnostics
        .iter()
        .any(|d| d.code == code && d.is_error())
}

/// The table. See each row's `suggest` for the advice it gives.
pub static RULES: &[Rule] = &[
    Rule {
        id: "colon-function-definition",
        category: Category::CompileError,
        matches: |c| has_code(c, "E0102") || raw_has(c, "unexpected ':', expecting '{'"),
        explain: |_| "The function is written Python-style, `def f(Task t):` with an indented body; the mapper DSL requires braces and a `;` after every statement.".into(),
        suggest: "Replace the colon with `{`, end each statement with `;`, and close the body with `}`.",
        edit: Some(|c| edits::first_fix(c, &["E0102"])),
        fallback: false,
    },
    Rule {
        id: "missing-semicolon",
        category: Category::CompileError,
        matches: |c| has_code(c, "E0101") || (raw_has(c, "syntax error") && raw_has(c, "expecting ',' or ';'")),
        explain: |_| "A statement is missing its terminating `;`; the reference parser reports the error on the line of the next statement.".into(),
        suggest: "End every statement (except `def`) with `;`.",
        edit: Some(|c| edits::all_fixes(c, &["E0101"])),
        fallback: false,
    },
    Rule {
        id: "unknown-constraint",
        category: Category::CompileError,
        matches: |c| has_code(c, "E0103"),
        explain: |_| "A Layout statement uses a constraint the DSL does not have (for example `No_Align`).".into(),
        suggest: "Use only SOA, AOS, C_order, F_order, Compact, Exact and `Align OP N`; leave out Align for no alignment constraint.",
        edit: Some(|c| edits::all_fixes(c, &["E0103"])),
        fallback: false,
    },
    Rule {
        id: "index-task-map-function-undefined",
        category: Category::CompileError,
        matches: |c| has_code(c, "E0202") || has_code(c, "E0203") || raw_has(c, "TaskMap's function undefined"),
        explain: |_| "An IndexTaskMap/SingleTaskMap statement names a function that is not defined when the statement runs; statements run in order.".into(),
        suggest: "Define the IndexTaskMap function first before using it.",
        edit: Some(|c| edits::first_fix(c, &["E0203", "E0202"])),
        fallback: false,
    },
    Rule {
        id: "machine-not-found",
        category: Category::CompileError,
        matches: |c| has_code(c, "E0201") || raw_has(c, " not found"),
        explain: |c| match edits::undefined_name(c) {
            Some(name) => format!("`{name}` is used but never assigned, so the mapper aborts with \"{name} not found\"."),
            None => "A variable is used but never assigned.".into(),
        },
        suggest: "Include mgpu = Machine(GPU); in the generated code (define every machine model before using it).",
        edit: Some(|c| edits::first_fix(c, &["E0201"])),
        fallback: false,
    },
    Rule {
        id: "compile-error",
        category: Category::CompileError,
        matches: |c| c.diagnostics.iter().any(|d| d.is_error()) || raw_has(c, "syntax error"),
        explain: |c| match c.diagnostics.iter().find(|d| d.is_error()) {
            Some(d) => format!("The mapper does not compile: {} ({}).", d.message, d.code),
            None => "The mapper does not compile.".into(),
        },
        suggest: "Fix the reported error; the checker's quick fix applies where one exists.",
        edit: Some(edits::first_fix_any),
        fallback: true,
    },
    Rule {
        id: "stride-mismatch",
        category: Category::ExecutionError,
        matches: |c| raw_has(c, "stride does not match expected value"),
        explain: |_| "Regent tasks require the first dimension of every field to be the fastest (Fortran order); a C_order layout on a multi-dimensional region breaks Regent's stride check.".into(),
        suggest: "Use F_order (or no ordering constraint) for the Regent tasks' regions instead of C_order.",
        edit: Some(edits::c_order_to_f_order),
        fallback: false,
    },
    Rule {
        id: "dgemm-illegal-parameter",
        category: Category::ExecutionError,
        matches: |c| raw_has(c, "DGEMM") && raw_has(c, "illegal value"),
        explain: |_| "cuBLAS rejected the GEMM's leading dimension: the matrix tiles handed to the GEMM task are not laid out in the ordering the library call assumes.".into(),
        suggest: "Give the GEMM task's regions the ordering cuBLAS expects (C_order, SOA) with a Layout statement specific to that task.",
        edit: Some(edits::gemm_layout),
        fallback: false,
    },
    Rule {
        id: "slice-out-of-bound",
        category: Category::ExecutionError,
        matches: |c| raw_has(c, "Slice processor index out of bound") || raw_has(c, "Sharding node index out of bound"),
        explain: |c| {
            let which = if raw_has(c, "Sharding") { "node (first)" } else { "processor (second)" };
            format!("A mapping function returned a {which} index beyond the machine model's size, so a launch point maps to a processor that does not exist.")
        },
        suggest: "Ensure every index of the machine model stays in range: end each index expression with `% m.size[k]` for dimension k.",
        edit: Some(edits::wrap_indices_with_modulo),
        fallback: false,
    },
    Rule {
        id: "instance-limit-assertion",
        category: Category::ExecutionError,
        matches: |c| raw_has(c, "event.exists()"),
        explain: |_| "The InstanceLimit (backpressure) statement makes the mapper track in-flight tasks per processor, and a profiling response arrived for a task it was not tracking: the assertion `event.exists()` fails.".into(),
        suggest: "Remove the InstanceLimit statements.",
        edit: Some(edits::drop_instance_limits),
        fallback: false,
    },
    Rule {
        id: "out-of-memory",
        category: Category::ExecutionError,
        matches: |c| raw_has(c, "failed allocation") || raw_has(c, "out of memory"),
        explain: |c| match edits::failing_task(c) {
            Some(t) => format!("The instances of task `{t}` do not fit in the memory the mapper chose (its capacity is exceeded)."),
            None => "A memory's capacity is exceeded by the instances the mapper placed in it.".into(),
        },
        suggest: "Place the region that does not fit in another memory (ZCMEM instead of a full FBMEM, FBMEM instead of a full ZCMEM), or spread the launch over more processors.",
        edit: Some(edits::relieve_full_memory),
        fallback: false,
    },
    Rule {
        id: "unreachable-memory",
        category: Category::ExecutionError,
        matches: |c| raw_has(c, "not visible from the target processors"),
        explain: |_| "A region was placed in a memory its processor cannot access (for example SYSMEM for a GPU task).".into(),
        suggest: "Give GPU tasks FBMEM or ZCMEM, and CPU tasks SYSMEM or SOCKMEM.",
        edit: Some(edits::replace_unreachable_memories),
        fallback: false,
    },
    Rule {
        id: "machine-model-kind-mismatch",
        category: Category::ExecutionError,
        matches: |c| raw_has(c, "is actually mapped to") && raw_has(c, "but machine model is for"),
        explain: |_| "A task runs on one processor kind but its mapping function returns a processor of a machine model built for another kind.".into(),
        suggest: "Map the task with a function over `Machine(KIND)` of the kind it runs on, or map it to the kind the function uses (on a machine without that kind, build the models over the kind the tasks run on).",
        edit: Some(edits::retarget_machine_model),
        fallback: false,
    },
    Rule {
        id: "tuple-index-out-of-bound",
        category: Category::ExecutionError,
        matches: |c| raw_has(c, "Index out of bound for TupleIntNode"),
        explain: |_| "A mapping function indexes a tuple past its length, typically `task.ipoint[1]` on a 1-D launch.".into(),
        suggest: "Use only as many `ipoint` components as the launch has dimensions (check the task's launch domain).",
        edit: None,
        fallback: false,
    },
    Rule {
        id: "mapping-function-failed",
        category: Category::ExecutionError,
        matches: |c| {
            c.decisions
                .and_then(|d| d.fatal.as_ref())
                .is_some_and(|f| f.kind == "mapping_error")
                || raw_has(c, "machine point has")
        },
        explain: |_| "A mapping function fails while placing a launch's points: the machine point it builds does not fit the machine model, or it reads what the launch does not have.".into(),
        suggest: "Fix the function for these launches, or drop the IndexTaskMap/SingleTaskMap statement so that Legion's default placement applies.",
        edit: Some(edits::drop_failing_task_map),
        fallback: false,
    },
    Rule {
        id: "execution-failed",
        category: Category::ExecutionError,
        matches: |c| raw_has(c, "Assertion") || raw_has(c, "assert") || raw_has(c, "error") || raw_has(c, "Error"),
        explain: |_| "The run aborted.".into(),
        suggest: "Read the raw output for the failing statement; revert the last change if it introduced the failure.",
        edit: None,
        fallback: true,
    },
    Rule {
        id: "measured-load-imbalance",
        category: Category::Performance,
        matches: |c| measured::imbalance(c).is_some(),
        explain: |c| measured::imbalance(c).map(|i| i.text).unwrap_or_default(),
        suggest: "Spread the crowded launch over every processor of its kind: an IndexTaskMap with a cyclic placement function (the quick fix adds one).",
        edit: Some(measured::spread_culprit),
        fallback: false,
    },
    Rule {
        id: "measured-copy-bound",
        category: Category::Performance,
        matches: |c| measured::copy_bound(c).is_some(),
        explain: |c| measured::copy_bound(c).unwrap_or_default(),
        suggest: "Keep the argument that is copied most where the task that reads it runs: place the reading task on the processor of the task that wrote it (SingleTaskMap / the same IndexTaskMap function), or its region in a memory both can reach.",
        edit: None,
        fallback: false,
    },
    Rule {
        id: "measured-memory-pressure",
        category: Category::Performance,
        matches: |c| measured::memory_pressure(c).is_some(),
        explain: |c| measured::memory_pressure(c).unwrap_or_default(),
        suggest: "Let read-only copies go once they are used (CollectMemory on the task that reads them), or place the largest regions in another memory.",
        edit: None,
        fallback: false,
    },
    Rule {
        id: "load-imbalance",
        category: Category::Performance,
        matches: |c| !measured::has_measurements(c) && edits::worst_imbalance(c).is_some(),
        explain: |c| edits::worst_imbalance(c).map(|(text, _)| text).unwrap_or_default(),
        suggest: "Distribute the launch points evenly: a cyclic or linearized IndexTaskMap function over all processors.",
        edit: None,
        fallback: false,
    },
    Rule {
        id: "execution-time",
        category: Category::Performance,
        matches: |c| raw_has(c, "ELAPSED TIME") || raw_has(c, "Execution time") || raw_has(c, "Elapsed time"),
        explain: |c| match edits::elapsed_seconds(c.raw_output) {
            Some(t) => format!("Execution time is {t:.3}s."),
            None => "The run succeeded.".into(),
        },
        suggest: "Move more tasks to GPU to reduce execution time.",
        edit: Some(edits::move_tasks_to_gpu),
        fallback: false,
    },
    Rule {
        id: "throughput",
        category: Category::Performance,
        matches: |c| raw_has(c, "GFLOPS"),
        explain: |c| match edits::throughput(c.raw_output) {
            Some(t) => format!("Achieved throughput = {t:.0} GFLOPS."),
            None => "The run reports its throughput.".into(),
        },
        suggest: "Try using different IndexTaskMap or SingleTaskMap statements to maximize throughput.",
        edit: None,
        fallback: false,
    },
];
