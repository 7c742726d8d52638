//! `mapwright optimize` end to end through the real binary: the JSON report,
//! writing the best mapper in place, saving and resuming a run, the plot,
//! and every built-in proposer.

mod support;

use support::cli::mapwright;

use std::path::Path;
use std::process::Command;

const NAIVE: &str = "# A first mapper.\nTask * GPU,CPU;\n";

fn temp_dir(name: &str) -> support::cli::TempDir {
    support::cli::temp_dir("mapwright-opt", name)
}

#[test]
fn search_repairs_a_failing_mapper_and_reaches_the_expert() {
    let dir = temp_dir("json");
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    let (ok, stdout, stderr) = mapwright(
        &[
            "optimize",
            "m.mapper",
            "--app",
            "cannon",
            "--machine",
            "p100x4",
            "--json",
            "--no-save",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(
        report["records"][0]["evaluation"]["status"], "cublas_illegal_parameter",
        "the naive mapper fails as a real run would"
    );
    let best = report["best_normalized"].as_f64().unwrap();
    assert!(best >= 0.99, "best {best}");
    assert_eq!(report["trajectory"].as_array().unwrap().len(), 11);
    // Written as edits of the user's statements, not as a tuned block.
    let best_mapper = report["best_mapper"].as_str().unwrap();
    assert!(
        !best_mapper.contains("mapwright: tuned rules"),
        "{best_mapper}"
    );
    assert!(
        best_mapper.starts_with(NAIVE.lines().next().unwrap()),
        "{best_mapper}"
    );
    // One wildcard decides the layouts; no task-specific line repeats it.
    assert!(
        best_mapper.contains("Layout * * * SOA C_order;")
            && !best_mapper.contains("Layout task_4 * * SOA C_order;"),
        "{best_mapper}"
    );
    // The file was not touched without --in-place.
    assert_eq!(
        std::fs::read_to_string(dir.join("m.mapper")).unwrap(),
        NAIVE
    );
}

#[test]
fn in_place_writes_a_mapper_that_runs() {
    let dir = temp_dir("inplace");
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    let (ok, _, stderr) = mapwright(
        &[
            "optimize",
            "m.mapper",
            "--app",
            "cannon",
            "--in-place",
            "--no-save",
            "--iterations",
            "3",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    let text = std::fs::read_to_string(dir.join("m.mapper")).unwrap();
    assert!(
        text.starts_with("# A first mapper.\n"),
        "the user's header comment stays first:\n{text}"
    );
    let (ok, stdout, stderr) = mapwright(&["run", "m.mapper", "--app", "cannon", "--json"], &dir);
    assert!(ok, "{stdout}{stderr}");
    let run: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(run["status"], "ok");
    let (ok, _, stderr) = mapwright(&["check", "m.mapper", "--app", "cannon"], &dir);
    assert!(ok, "the written mapper checks without errors: {stderr}");
}

#[test]
fn runs_are_saved_and_can_be_resumed() {
    let dir = temp_dir("resume");
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    let (ok, _, stderr) = mapwright(
        &[
            "optimize",
            "m.mapper",
            "--app",
            "stencil",
            "--iterations",
            "2",
            "--run-dir",
            "run",
            "--report",
            "plot.svg",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    for f in [
        "run/report.json",
        "run/candidate-000.mapper",
        "run/output-002.txt",
        "run/feedback-001.json",
        "plot.svg",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let (ok, stdout, stderr) = mapwright(
        &[
            "optimize",
            "m.mapper",
            "--app",
            "stencil",
            "--iterations",
            "4",
            "--resume",
            "run",
            "--json",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let records = report["records"].as_array().unwrap();
    assert_eq!(
        records.len(),
        5,
        "2 proposals resumed + 2 more + the original"
    );
    assert!(std::fs::read_to_string(dir.join("plot.svg"))
        .unwrap()
        .contains("<polyline"));
}

#[test]
fn every_builtin_proposer_runs() {
    let dir = temp_dir("proposers");
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    for proposer in ["search", "random", "scalar"] {
        let (ok, stdout, stderr) = mapwright(
            &[
                "optimize",
                "m.mapper",
                "--app",
                "circuit",
                "--proposer",
                proposer,
                "--iterations",
                "5",
                "--json",
                "--no-save",
                "--seed",
                "7",
            ],
            &dir,
        );
        assert!(ok, "{proposer}: {stderr}");
        let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(report["proposer"], proposer);
        assert_eq!(report["records"].as_array().unwrap().len(), 6);
        assert!(report["parameter_entropy"].as_f64().is_some());
    }
    // The LLM proposer without an endpoint is a clear error, not a crash.
    let (ok, _, stderr) = mapwright(
        &[
            "optimize",
            "m.mapper",
            "--app",
            "circuit",
            "--proposer",
            "llm",
            "--no-save",
        ],
        &dir,
    );
    assert!(!ok);
    assert!(stderr.contains("--llm-base-url"), "{stderr}");
}

/// Normalized result and rationales of a `--json` optimize run.
fn optimize_json(dir: &Path, app: &str, feedback: &str, iterations: &str) -> (f64, Vec<String>) {
    let (ok, stdout, stderr) = mapwright(
        &[
            "optimize",
            "m.mapper",
            "--app",
            app,
            "--feedback",
            feedback,
            "--iterations",
            iterations,
            "--json",
            "--no-save",
        ],
        dir,
    );
    assert!(ok, "{feedback}: {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rationales = report["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rationale"].as_str().unwrap_or_default().to_string())
        .collect();
    (report["best_normalized"].as_f64().unwrap(), rationales)
}

#[test]
fn search_reads_only_the_feedback_its_mode_allows() {
    // johnson from the placement-only start (bench/starts: one `cyclic`
    // function for every GPU index launch): AutoGuide's diagnosis puts the
    // placement moves first. With the score alone the search goes through
    // processors, memories and layouts first. (From the one-line naive
    // start the simulator's johnson no longer trails: its default placement
    // runs as fast as the expert's since the GEMM double-count fix,
    // runtime/SIMULATION.md "Several nodes".)
    let dir = temp_dir("feedback");
    let start = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/starts/06-placement-only.mapper"),
    )
    .unwrap();
    std::fs::write(dir.join("m.mapper"), start).unwrap();
    let (with_diagnosis, _) = optimize_json(&dir, "johnson", "explain", "6");
    let (with_suggestions, _) = optimize_json(&dir, "johnson", "suggest", "6");
    let (score_only, rationales) = optimize_json(&dir, "johnson", "execution-only", "6");
    assert!(with_diagnosis >= 0.99, "explain: {with_diagnosis}");
    assert!(with_suggestions >= 0.99, "suggest: {with_suggestions}");
    assert!(
        score_only < with_diagnosis - 0.01,
        "execution-only {score_only} should trail explain {with_diagnosis} after 6 iterations"
    );
    assert!(
        rationales.iter().all(|r| !r.contains("AutoGuide")),
        "execution-only must not apply AutoGuide's edits: {rationales:?}"
    );
}

#[test]
fn bench_optimize_reports_every_proposer_mode_and_the_targets() {
    let dir = temp_dir("bench");
    let args = [
        "bench",
        "optimize",
        "--apps",
        "cannon,johnson",
        "--seeds",
        "1",
        "--scalar-long",
        "30",
        "--feedback",
        "execution-only,suggest",
    ];
    let (ok, stdout, stderr) = mapwright(&[&args[..], &["--json"]].concat(), &dir);
    assert!(ok, "{stderr}");
    let out: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    let rows: Vec<serde_json::Value> = out["rows"].as_array().expect("rows").clone();
    let row = |proposer: &str, feedback: &str, iterations: u64, app: &str| {
        rows.iter()
            .find(|r| {
                r["proposer"] == proposer
                    && r["feedback"] == feedback
                    && r["iterations"] == iterations
                    && r["app"] == app
            })
            .unwrap_or_else(|| panic!("no row {proposer}/{feedback}/{iterations}/{app}: {rows:?}"))
    };
    // search x 2 modes, random, scalar@10 and scalar@30, on 2 apps.
    assert_eq!(rows.len(), 2 * 5, "{rows:?}");
    for app in ["cannon", "johnson"] {
        let search = row("search", "suggest", 10, app)["mean"].as_f64().unwrap();
        assert!(search >= 0.99, "{app}: search {search}");
        row("search", "execution-only", 10, app);
        row("random", "-", 10, app);
        row("scalar", "-", 30, app);
    }
    // The table names the targets and says whether they are met.
    let (ok, table, stderr) = mapwright(&args, &dir);
    assert!(ok, "{stderr}");
    assert!(table.contains("feedback"), "{table}");
    assert!(
        table.contains("target: search (suggest) >= 0.95x on every start, app and seed"),
        "{table}"
    );
    assert!(
        table.contains("target: search@10 mean within 2% of scalar@30 mean"),
        "{table}"
    );
}

#[test]
fn bench_space_and_evaluate_speak_the_external_tuner_protocol() {
    use std::io::Write;
    use std::process::Stdio;
    let dir = temp_dir("protocol");
    let (ok, stdout, stderr) = mapwright(&["bench", "space", "--app", "cannon"], &dir);
    assert!(ok, "{stderr}");
    let space: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(space["procs"]["task_4"], serde_json::json!(["GPU"]));
    assert!(space["index_fns"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("linear_cyclic")));
    assert!(space["memories"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("ZCMEM")));

    let mut child = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args(["bench", "evaluate", "--app", "cannon"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let points = [
        // The naive mapper: GEMM pieces in the order cuBLAS rejects.
        "{}",
        // Not a point: answered, and the session goes on.
        "{\"procs\": {\"no_such_task\": \"GPU\"}}",
        "not json",
        // The layout cuBLAS needs and the GEMMs spread over the GPUs.
        "{\"layouts\": {\"task_4\": {\"soa\": true, \"c_order\": true}}, \
          \"same_point\": {\"task_4\": true, \"task_6\": true}, \"collect\": {\"task_4\": true}}",
    ];
    let mut stdin = child.stdin.take().unwrap();
    for p in points {
        writeln!(stdin, "{p}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let answers: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), points.len(), "{answers:?}");
    assert_eq!(answers[0]["status"], "cublas_illegal_parameter");
    assert_eq!(answers[0]["normalized"], 0.0);
    assert_eq!(answers[1]["status"], "bad_request");
    assert!(answers[1]["error"]
        .as_str()
        .unwrap()
        .contains("no_such_task"));
    assert_eq!(answers[2]["status"], "bad_request");
    assert_eq!(answers[3]["status"], "ok");
    // Without the expert's `InstanceLimit task_4 1` the next GEMM step's
    // tiles are copied during the current one (runtime sim::gemm): ~4.5 %
    // faster than the expert.
    let n = answers[3]["normalized"].as_f64().unwrap();
    assert!(n > 1.0 && n < 1.06, "{n}");
}

#[test]
#[cfg_attr(
    not(have_python3),
    ignore = "needs python3 (the OpenTuner driver's self-test; CI installs it)"
)]
fn opentuner_driver_encodes_points_as_mapwright_evaluates_them() {
    // The driver's parameter encoding, checked against this binary; the
    // driver needs no OpenTuner for its self-test. CI installs python3.
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/opentuner/driver.py");
    let out = match Command::new("python3")
        .arg(&driver)
        .args([
            "--mapwright",
            env!("CARGO_BIN_EXE_mapwright"),
            "--self-test",
        ])
        .output()
    {
        Ok(out) => out,
        Err(e) => panic!("python3 did not start: {e}"),
    };
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("self-test passed"));
}

#[test]
fn a_killed_run_resumes_from_its_record_log() {
    let dir = temp_dir("killed");
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    let args = |iterations: &'static str, extra: &'static str| {
        vec![
            "optimize",
            "m.mapper",
            "--app",
            "cannon",
            "--iterations",
            iterations,
            extra,
            "run",
            "--json",
        ]
    };
    let (ok, stdout, stderr) = mapwright(&args("3", "--run-dir"), &dir);
    assert!(ok, "{stderr}");
    let finished: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let log = std::fs::read_to_string(dir.join("run/records.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 4, "one line per record");

    // What a kill leaves: report.json as written at the start (no records)
    // and a log whose last line was cut mid-write.
    let mut header = finished.clone();
    header["records"] = serde_json::json!([]);
    std::fs::write(dir.join("run/report.json"), header.to_string()).unwrap();
    // Marked, so that records read back are told from records re-run.
    let marked: String = log
        .lines()
        .map(|l| {
            let mut r: serde_json::Value = serde_json::from_str(l).unwrap();
            r["rationale"] = serde_json::json!(format!("logged: {}", r["rationale"]));
            format!("{r}\n")
        })
        .collect();
    std::fs::write(
        dir.join("run/records.jsonl"),
        format!("{marked}{{\"iteration\": 4, \"sour"),
    )
    .unwrap();

    let (ok, stdout, stderr) = mapwright(&args("5", "--resume"), &dir);
    assert!(ok, "{stderr}");
    let resumed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let records = resumed["records"].as_array().unwrap();
    assert_eq!(records.len(), 6, "4 logged records + 2 new proposals");
    for i in 0..4 {
        assert_eq!(records[i]["source"], finished["records"][i]["source"]);
        assert!(
            records[i]["rationale"]
                .as_str()
                .unwrap()
                .starts_with("logged: "),
            "record {i} comes from the log"
        );
    }
    assert!(!records[4]["rationale"]
        .as_str()
        .unwrap()
        .starts_with("logged: "));
    assert!(resumed["parameter_entropy"].as_f64().is_some());
}

#[test]
fn the_plot_compares_every_run_saved_for_the_mapper() {
    let dir = temp_dir("plot-runs");
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    let run = |proposer: &str, extra: &[&str]| {
        let mut args = vec![
            "optimize",
            "m.mapper",
            "--app",
            "johnson",
            "--iterations",
            "3",
            "--proposer",
            proposer,
        ];
        args.extend_from_slice(extra);
        let (ok, _, stderr) = mapwright(&args, &dir);
        assert!(ok, "{proposer}: {stderr}");
    };
    run("search", &[]);
    run("scalar", &[]);
    // Another application's run is not comparable: left out.
    let (ok, _, stderr) = mapwright(
        &[
            "optimize",
            "m.mapper",
            "--app",
            "cannon",
            "--iterations",
            "2",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    run("random", &["--report", "plot.svg"]);
    let runs = std::fs::read_dir(dir.join(".mapwright/runs"))
        .unwrap()
        .count();
    assert_eq!(runs, 4, "every run has its own folder");
    let svg = std::fs::read_to_string(dir.join("plot.svg")).unwrap();
    assert_eq!(svg.matches("<polyline").count(), 3, "{svg}");
    assert!(svg.contains("search (seed 0,"), "{svg}");
    assert!(svg.contains("scalar (seed 0,"), "{svg}");
    assert!(svg.contains("random (seed 0, this run)"), "{svg}");
}

#[test]
fn optimize_runs_candidates_on_a_real_program() {
    // The "real program" is `mapwright run` itself: a separate process per
    // candidate whose printed time is what the optimizer reads.
    let dir = temp_dir("command");
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    let template = format!(
        "{} run {{mapper}} --app {{app}} --machine {{machine}} --no-normalize",
        env!("CARGO_BIN_EXE_mapwright")
    );
    let (ok, stdout, stderr) = mapwright(
        &[
            "optimize",
            "m.mapper",
            "--app",
            "cannon",
            "--iterations",
            "3",
            "--backend",
            "command",
            "--command",
            &template,
            "--json",
            "--no-save",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let first = &report["records"][0]["evaluation"];
    assert_ne!(
        first["status"], "ok",
        "the naive mapper fails in the child too"
    );
    assert!(
        first["raw_output"]
            .as_str()
            .unwrap()
            .contains("DGEMM  parameter number 8"),
        "{first}"
    );
    let best = report["best_normalized"].as_f64().unwrap();
    // At least the expert's speed; a candidate without its InstanceLimit
    // prefetches the next step's tiles (~4.5 % faster).
    assert!(
        best > 1.0 - 1e-3 && best < 1.06,
        "normalized by the expert run the same way: {best}"
    );
}

#[test]
fn optimize_runs_candidates_on_a_runtime_service() {
    let service = support::serve::Service::start("MW_OPT_TEST_TOKEN", "secret");
    let url = service.url.clone();

    let dir = temp_dir("service");
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    // The runtime named in mapwright.toml, the token from the environment.
    std::fs::write(
        dir.join("mapwright.toml"),
        format!("app = \"stencil\"\nruntime = \"{url}\"\n"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args([
            "optimize",
            "m.mapper",
            "--iterations",
            "2",
            "--json",
            "--no-save",
        ])
        .env("MAPWRIGHT_TOKEN", "secret")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["records"][0]["evaluation"]["status"], "ok");
    assert!(report["best_normalized"].as_f64().unwrap() > 0.99);

    // Without the token every run is the service's refusal, not a crash.
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args([
            "run",
            "m.mapper",
            "--runtime",
            &url,
            "--json",
            "--no-normalize",
        ])
        .env_remove("MAPWRIGHT_TOKEN")
        .current_dir(&dir)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "service_error", "{v}");
    assert!(v["raw_output"].as_str().unwrap().contains("401"));
}

#[test]
fn a_project_file_can_name_the_users_program_as_the_runtime() {
    let dir = temp_dir("project-command");
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    std::fs::write(
        dir.join("mapwright.toml"),
        format!(
            "app = \"stencil\"\nruntime = \"command\"\n[command]\ntemplate = \"{} run {{mapper}} --app {{app}} --machine {{machine}} --no-normalize\"\n",
            env!("CARGO_BIN_EXE_mapwright")
        ),
    )
    .unwrap();
    let (ok, stdout, stderr) = mapwright(&["run", "m.mapper", "--json"], &dir);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["backend"], "command", "{v}");
    assert_eq!(v["status"], "ok");
    let (ok, stdout, stderr) = mapwright(
        &[
            "optimize",
            "m.mapper",
            "--iterations",
            "1",
            "--json",
            "--no-save",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(report["records"][0]["evaluation"]["raw_output"]
        .as_str()
        .unwrap()
        .contains("mapwright run: stencil"));
    // `--backend sim` names the simulator whatever the file says.
    let (ok, stdout, stderr) = mapwright(&["run", "m.mapper", "--backend", "sim", "--json"], &dir);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["backend"], "sim", "{v}");
    // A backend and a runtime at once: one would be ignored, so neither is.
    let (ok, _, stderr) = mapwright(
        &[
            "run",
            "m.mapper",
            "--backend",
            "command",
            "--runtime",
            "http://127.0.0.1:1",
        ],
        &dir,
    );
    assert!(!ok);
    assert!(stderr.contains("pass one of them"), "{stderr}");
}

#[test]
fn an_unreachable_runtime_is_reported_before_the_loop_not_fatal() {
    let dir = temp_dir("unreachable");
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    let (ok, stdout, stderr) = mapwright(
        &[
            "optimize",
            "m.mapper",
            "--app",
            "stencil",
            "--runtime",
            "http://127.0.0.1:1",
            "--iterations",
            "1",
            "--no-save",
            "--json",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("did not run here (service_error)") && stderr.contains("127.0.0.1:1"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        report["records"][1]["evaluation"]["status"],
        "service_error"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("m.mapper")).unwrap(),
        NAIVE,
        "the file is untouched"
    );
}

#[test]
fn bench_sim_validate_prints_the_table_and_the_orderings() {
    let dir = temp_dir("validate");
    // The shared wrapper logs, when this checkout sits next to them.
    let logs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/apps/wrapper-logs");
    let logs = logs.to_string_lossy().into_owned();
    let (ok, table, stderr) = mapwright(&["bench", "sim-validate", "--logs", &logs], &dir);
    assert!(ok, "{stderr}");
    for needle in [
        "predicted",
        "measured",
        "ratio",
        "ordering",
        "circuit",
        "cannon.log",
    ] {
        assert!(table.contains(needle), "{needle}: {table}");
    }
    let last = table.lines().last().unwrap_or("");
    assert!(
        last.ends_with("orderings match") && last.contains(" of "),
        "{table}"
    );
    // The paper's circuit 1.34x is a row the model says it cannot explain.
    assert!(table.contains("not explained"), "{table}");
}
