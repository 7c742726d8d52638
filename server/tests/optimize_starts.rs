//! The optimizer from the starts users bring (`bench/starts/`): one test per
//! class of start checks that the loop takes AutoGuide's mechanical edit when
//! one exists, builds on it, and reaches the expert; the result is written
//! as edits of the user's own statements.

use std::sync::Arc;

use mapwright::optimize::executors::SimExecutor;
use mapwright::optimize::proposers::scalar::ScalarProposer;
use mapwright::optimize::proposers::search::SearchProposer;
use mapwright::optimize::proposers::Proposer;
use mapwright::optimize::runner::Runner;
use mapwright::optimize::{optimize, Config, Report};
use mapwright_runtime::app::App;
use mapwright_runtime::machine::Machine;

fn start(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bench/starts")
        .join(format!("{name}.mapper"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `iterations` proposals of `proposer` from `text` on `app` (p100x4, the
/// simulator, suggest feedback).
fn run(
    text: &str,
    app: &str,
    proposer: &mut dyn Proposer,
    iterations: usize,
    as_block: bool,
) -> Report {
    let app = Arc::new(App::builtin(app).expect("built-in app"));
    let machine = Arc::new(Machine::preset("p100x4").expect("preset"));
    let executor = SimExecutor {
        app: app.clone(),
        machine: machine.clone(),
        noise: 0.0,
    };
    let runner = Runner::new(&app, &machine, &executor);
    let config = Config {
        as_block,
        ..Config::new(iterations, 0)
    };
    optimize(
        text,
        &runner,
        proposer,
        &config,
        runner.expert_score(0),
        None,
        &mut |_| {},
    )
}

/// Ten iterations of search from `text` on `app`.
fn optimize_from(text: &str, app: &str) -> Report {
    run(text, app, &mut SearchProposer::new(0), 10, false)
}

/// The start fails with `status`, AutoGuide has an edit for it, and the
/// first proposal applies that edit (rule `rule`); the run reaches 0.95x.
fn takes_the_edit(start_name: &str, app: &str, status: &str, rule: &str) -> Report {
    let report = optimize_from(&start(start_name), app);
    let first = &report.records[0];
    assert_eq!(first.evaluation.status, status, "{start_name} on {app}");
    assert!(first.edit().is_some(), "AutoGuide has an edit for {status}");
    if status == "compile_error" {
        // The loop makes a start compile first, with the checker's fix
        // (what AutoGuide's edit applies too), for every proposer.
        assert!(
            report.records[1].rationale.starts_with("make it compile: "),
            "{start_name} on {app}: {}",
            report.records[1].rationale
        );
        assert_eq!(
            Some(report.records[1].source.as_str()),
            mapwright_grammar::diagnostic::apply_edits(
                &first.source,
                first.edit().expect("an edit")
            )
            .as_deref(),
            "{start_name} on {app}: the same text as AutoGuide's edit ({rule})"
        );
    } else {
        assert_eq!(
            report.records[1].rationale,
            format!("apply AutoGuide's edit ({rule})"),
            "{start_name} on {app}: the first proposal applies AutoGuide's edit"
        );
    }
    let best = report.best_normalized.unwrap_or(0.0);
    assert!(best >= 0.95, "{start_name} on {app}: best {best}");
    assert!(
        !report.best_mapper.contains("mapwright: tuned rules"),
        "{}",
        report.best_mapper
    );
    report
}

#[test]
fn broken_layouts_get_a_one_word_fix() {
    let text = start("02-c-order-everywhere");
    let report = takes_the_edit(
        "02-c-order-everywhere",
        "stencil",
        "stride_mismatch",
        "stride-mismatch",
    );
    // The one line that decides changes, by one word; comments stay.
    let before: Vec<&str> = text.lines().collect();
    let after: Vec<&str> = report.best_mapper.lines().collect();
    assert_eq!(before.len(), after.len(), "{}", report.best_mapper);
    let changed: Vec<(&str, &str)> = before
        .iter()
        .zip(&after)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| (*a, *b))
        .collect();
    assert_eq!(
        changed,
        vec![("Layout * * * SOA C_order;", "Layout * * * SOA F_order;")]
    );
}

#[test]
fn library_layouts_are_fixed_for_the_gemm() {
    let report = takes_the_edit(
        "03-aos-f-order",
        "cannon",
        "cublas_illegal_parameter",
        "dgemm-illegal-parameter",
    );
    // The user's wildcard now says what the GEMMs need, so no
    // task-specific line repeats it (issue 40).
    assert!(
        report.best_mapper.contains("Layout * * * SOA C_order;")
            && !report.best_mapper.contains("Layout task_4"),
        "{}",
        report.best_mapper
    );
}

#[test]
fn zero_copy_everywhere_keeps_the_layout_fix_while_memories_move() {
    let report = takes_the_edit(
        "05-zero-copy-everywhere",
        "cannon",
        "cublas_illegal_parameter",
        "dgemm-illegal-parameter",
    );
    // Both repairs compose in the best mapper: the GEMM layout and the
    // framebuffer instead of zero-copy memory, on the user's own line.
    assert!(
        report.best_mapper.contains("Layout * * * SOA C_order;")
            && !report.best_mapper.contains("Layout task_4"),
        "{}",
        report.best_mapper
    );
    assert!(
        report.best_mapper.contains("Region * * GPU FBMEM;"),
        "{}",
        report.best_mapper
    );
    assert!(!report.best_mapper.contains("Region * * GPU ZCMEM;"));
}

#[test]
fn all_cpu_moves_tasks_to_gpus_first() {
    let report = optimize_from(&start("04-all-cpu"), "circuit");
    assert_eq!(report.records[0].evaluation.status, "ok");
    let first = report.records[0].normalized.unwrap_or(0.0);
    assert!(first < 0.1, "all-CPU runs slowly: {first}");
    assert_eq!(
        report.records[1].rationale, "all tasks on their fastest processor kind",
        "plain execution time on CPUs: tasks go to GPUs before any placement move"
    );
    assert!(report.best_normalized.unwrap_or(0.0) >= 0.95);
    // The user's wildcard is rewritten, not shadowed.
    assert!(
        report.best_mapper.contains("Task * GPU,CPU;"),
        "{}",
        report.best_mapper
    );
}

#[test]
fn out_of_range_placement_gets_the_modulo_fix() {
    takes_the_edit(
        "08-out-of-range-placement",
        "cosma",
        "slice_out_of_bound",
        "slice-out-of-bound",
    );
}

/// A start that does not compile: the first candidate is the loop's
/// repair (the checker's fixes, statements without one dropped) and
/// compiles, and the run reaches 0.95x on circuit.
fn repairs_a_compile_error(start_name: &str) {
    let report = optimize_from(&start(start_name), "circuit");
    assert_eq!(report.records[0].evaluation.status, "compile_error");
    assert!(report.records[1].rationale.starts_with("make it compile: "));
    assert_ne!(report.records[1].evaluation.status, "compile_error");
    assert!(report.best_normalized.unwrap_or(0.0) >= 0.95);
}

#[test]
fn python_style_compiles_through_repeated_repairs() {
    repairs_a_compile_error("09-python-style");
}

#[test]
fn a_corpus_file_gets_its_missing_machine_defined() {
    takes_the_edit(
        "10-corpus-common-pattern",
        "stencil",
        "compile_error",
        "machine-not-found",
    );
}

#[test]
fn another_apps_expert_drops_the_placement_that_fails() {
    takes_the_edit(
        "12-expert-of-cannon",
        "cosma",
        "mapping_error",
        "mapping-function-failed",
    );
}

#[test]
fn legacy_forms_are_migrated() {
    repairs_a_compile_error("14-legacy-forms");
}

#[test]
fn as_block_keeps_the_stacked_form() {
    let report = run(
        &start("04-all-cpu"),
        "circuit",
        &mut SearchProposer::new(0),
        3,
        true,
    );
    assert!(report.best_mapper.contains("mapwright: tuned rules"));
    assert!(report.best_mapper.contains("Task * CPU;"));
}

#[test]
fn a_sampling_proposers_best_is_given_in_place_too() {
    let report = run(
        &start("04-all-cpu"),
        "circuit",
        &mut ScalarProposer::new(1),
        20,
        false,
    );
    assert!(report.improved(), "scalar improves on all-CPU in 20 runs");
    // The candidates were stacked blocks; the result is not.
    assert!(report.records[report.best_iteration]
        .source
        .contains("mapwright: tuned rules"));
    assert!(
        !report.best_mapper.contains("mapwright: tuned rules"),
        "{}",
        report.best_mapper
    );
    assert!(report.best_mapper.starts_with("# Everything on the CPUs"));
    // ...and it decides what the best candidate decided.
    let best = optimize_from(&report.best_mapper, "circuit");
    assert!((best.records[0].score - report.best_score).abs() <= 1e-9 * report.best_score);
}
