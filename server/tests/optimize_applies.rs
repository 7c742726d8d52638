//! The optimizer applies only what it can defend (issue 40), through the
//! real binary: a minimum gain, no redundant statements in what it writes,
//! each change explained, and statements pinned by `# mapwright: keep`
//! left alone by every proposer.

mod support;

use support::cli::mapwright;

use std::path::Path;

use mapwright::optimize::inplace::signature;
use mapwright_grammar::analyze;
use mapwright_grammar::ast::StmtKind;
use mapwright_grammar::pin::pinned_statements;
use mapwright_runtime::app::App;
use mapwright_runtime::decisions::Decisions;
use mapwright_runtime::machine::{Machine, MemKind, ProcKind};
use support::fake_llm::{FakeLlm, Reply};

const NAIVE_CANNON: &str = "# A first mapper.\nTask * GPU,CPU;\n";

/// The pinned line every proposer must leave alone.
const PIN: &str = "Region * rp_ghost GPU ZCMEM;  # mapwright: keep";

/// The circuit mapper of the reference DSL mapper's README (corpus).
fn readme_circuit() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/public/dslmapper-readme-circuit.mapper");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The README circuit mapper with its `rp_ghost` line pinned.
fn pinned_circuit() -> String {
    let text = readme_circuit();
    assert!(text.contains("Region * rp_ghost GPU ZCMEM;\n"));
    text.replace("Region * rp_ghost GPU ZCMEM;\n", &format!("{PIN}\n"))
}

fn temp_dir(name: &str) -> support::cli::TempDir {
    support::cli::temp_dir("mapwright-applies", name)
}

fn resolve(text: &str, app: &str) -> Option<Decisions> {
    let app = App::builtin(app).expect("built-in app");
    let machine = Machine::preset("p100x4").expect("preset");
    let analysis = analyze(text);
    if analysis.diagnostics().iter().any(|d| d.is_error()) {
        return None;
    }
    Some(mapwright_runtime::resolve_mapping::resolve_mapping(
        &analysis, text, &app, &machine,
    ))
}

#[test]
fn the_readme_circuit_mapper_is_left_unchanged_on_the_simulator_with_a_message() {
    let dir = temp_dir("readme");
    let start = readme_circuit();
    std::fs::write(dir.join("c.mapper"), &start).unwrap();
    let (ok, stdout, stderr) = mapwright(
        &[
            "optimize",
            "c.mapper",
            "--app",
            "circuit",
            "--machine",
            "p100x4",
            "--in-place",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.join("c.mapper")).unwrap(),
        start,
        "the expert's ZCMEM lines stay"
    );
    assert!(
        stderr.contains("no change worth applying")
            && stderr.contains("within the minimum gain of 2 %")
            && stderr.contains("c.mapper left unchanged"),
        "{stderr}"
    );
    // The best candidate and its gain are shown, and saved to take by hand.
    assert!(
        stdout.contains("no change worth applying: the best candidate is only +"),
        "{stdout}"
    );
    let saved = stderr
        .split("saved as ")
        .nth(1)
        .and_then(|s| s.split(", to take by hand").next())
        .expect("where the best candidate is");
    let best = std::fs::read_to_string(dir.join(saved)).expect("best.mapper");
    assert_ne!(best, start);
    assert!(resolve(&best, "circuit").is_some(), "{best}");

    // With the minimum gain at 0 the same run applies it: the threshold
    // is what held it back.
    let (ok, _, stderr) = mapwright(
        &[
            "optimize",
            "c.mapper",
            "--app",
            "circuit",
            "--in-place",
            "--no-save",
            "--min-gain",
            "0",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    assert!(stderr.contains("applied the best mapper"), "{stderr}");
    assert_ne!(
        std::fs::read_to_string(dir.join("c.mapper")).unwrap(),
        start
    );
}

#[test]
fn the_minimum_gain_comes_from_the_project_file_and_a_bad_one_is_refused() {
    let dir = temp_dir("toml");
    std::fs::write(dir.join("c.mapper"), readme_circuit()).unwrap();
    std::fs::write(
        dir.join("mapwright.toml"),
        "app = \"circuit\"\n[optimize]\nmin_gain = 0.0\n",
    )
    .unwrap();
    let (ok, stdout, stderr) = mapwright(&["optimize", "c.mapper", "--json", "--no-save"], &dir);
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["verdict"]["min_gain"], 0.0);
    assert_eq!(report["verdict"]["apply"], true);
    // The flag wins over the file.
    let (ok, stdout, stderr) = mapwright(
        &[
            "optimize",
            "c.mapper",
            "--json",
            "--no-save",
            "--min-gain",
            "0.5",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["verdict"]["apply"], false);
    let (ok, _, stderr) = mapwright(
        &["optimize", "c.mapper", "--no-save", "--min-gain=-1"],
        &dir,
    );
    assert!(!ok);
    assert!(stderr.contains("minimum gain"), "{stderr}");
}

#[test]
fn on_a_measuring_backend_the_gain_must_beat_the_spread_of_repeated_runs() {
    let dir = temp_dir("noise");
    let start = readme_circuit();
    std::fs::write(dir.join("c.mapper"), &start).unwrap();
    // The simulator with 5 % noise measures like a real machine: the luckiest
    // candidate looks more than 2 % faster.
    let (ok, stdout, stderr) = mapwright(
        &[
            "optimize",
            "c.mapper",
            "--app",
            "circuit",
            "--noise",
            "0.05",
            "--seed",
            "1",
            "--in-place",
            "--no-save",
            "--json",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let v = &report["verdict"];
    assert!(v["gain"].as_f64().unwrap() > 1.02, "{v:#}");
    // Both ran three times; the candidate's slowest run does not beat the
    // start's fastest, so nothing is applied.
    assert_eq!(v["start_runs"].as_array().unwrap().len(), 3, "{v:#}");
    assert_eq!(v["best_runs"].as_array().unwrap().len(), 3, "{v:#}");
    assert_eq!(v["apply"], false, "{v:#}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("within the spread of 3 repeated runs"),
        "{v:#}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("c.mapper")).unwrap(),
        start
    );
}

/// Whether `text`, resolved for `app`, decides the same without the line
/// of each of its mapping statements: the statements that decide nothing
/// the others do not.
fn redundant_statements(text: &str, app: &str) -> Vec<String> {
    let full = signature(&resolve(text, app).expect("the result compiles"));
    let analysis = analyze(text);
    let pinned = pinned_statements(&analysis.parsed.program, &analysis.parsed.comments, text);
    analysis
        .parsed
        .program
        .stmts
        .iter()
        .filter(|s| {
            matches!(
                s.kind,
                StmtKind::Task { .. }
                    | StmtKind::Region { .. }
                    | StmtKind::Layout { .. }
                    | StmtKind::IndexTaskMap { .. }
                    | StmtKind::SingleTaskMap { .. }
                    | StmtKind::CollectMemory { .. }
                    | StmtKind::InstanceLimit { .. }
            ) && !pinned.contains(&s.span)
        })
        .filter(|s| {
            let without = format!("{}{}", &text[..s.span.start()], &text[s.span.end()..]);
            resolve(&without, app).is_some_and(|d| signature(&d) == full)
        })
        .map(|s| s.span.text(text).to_string())
        .collect()
}

#[test]
fn a_failing_start_is_still_fixed_with_no_redundant_statement_and_each_change_explained() {
    let dir = temp_dir("cannon");
    std::fs::write(dir.join("m.mapper"), NAIVE_CANNON).unwrap();
    let (ok, stdout, stderr) = mapwright(
        &[
            "optimize",
            "m.mapper",
            "--app",
            "cannon",
            "--machine",
            "p100x4",
            "--in-place",
            "--no-save",
        ],
        &dir,
    );
    assert!(ok, "{stderr}");
    assert!(stderr.contains("applied the best mapper"), "{stderr}");
    assert!(
        stdout.contains(
            "worth applying: the mapper as written does not run (cublas_illegal_parameter)"
        ),
        "{stdout}"
    );
    let text = std::fs::read_to_string(dir.join("m.mapper")).unwrap();
    assert!(text.starts_with("# A first mapper.\n"), "{text}");
    let (ok, ran, stderr) = mapwright(&["run", "m.mapper", "--app", "cannon", "--json"], &dir);
    assert!(ok, "{ran}{stderr}");
    let run: serde_json::Value = serde_json::from_str(&ran).unwrap();
    assert_eq!(run["status"], "ok", "the fixed mapper runs:\n{text}");
    // The line the issue reported is gone, and so is any other statement
    // the others already decide.
    assert!(!text.contains("Layout task_4 * * SOA C_order;"), "{text}");
    assert_eq!(
        redundant_statements(&text, "cannon"),
        Vec::<String>::new(),
        "{text}"
    );
    // Every statement the optimizer wrote is listed with what it changes.
    let changes = stdout
        .split("changes of the best mapper (gain when first made):\n")
        .nth(1)
        .expect("a change list");
    for line in text.lines().skip(1) {
        let decides = [
            "Layout",
            "Region",
            "Task ",
            "IndexTaskMap",
            "SingleTaskMap",
            "CollectMemory",
        ]
        .iter()
        .any(|k| line.starts_with(k));
        if decides && line != "Task * GPU,CPU;" {
            assert!(
                changes.contains(&format!("`{line}`")),
                "{line} not explained:\n{changes}"
            );
        }
    }
    assert!(changes.contains("made it run"), "{changes}");
}

/// `optimize --json` of `text` on circuit with `proposer` (extra flags
/// after), the minimum gain at 0 so that the best candidate is applied.
fn optimize_pinned(name: &str, proposer: &str, extra: &[&str]) -> (serde_json::Value, String) {
    let dir = temp_dir(name);
    std::fs::write(dir.join("c.mapper"), pinned_circuit()).unwrap();
    let mut args = vec![
        "optimize",
        "c.mapper",
        "--app",
        "circuit",
        "--proposer",
        proposer,
        "--iterations",
        "8",
        "--min-gain",
        "0",
        "--in-place",
        "--no-save",
        "--json",
        "--seed",
        "3",
    ];
    args.extend_from_slice(extra);
    let (ok, stdout, stderr) = mapwright(&args, &dir);
    assert!(ok, "{proposer}: {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    let written = std::fs::read_to_string(dir.join("c.mapper")).unwrap();
    (report, written)
}

/// Every candidate that ran kept the pinned line, and in every one of them
/// `rp_ghost` of each GPU task is in zero-copy memory; the written mapper
/// too. Returns how many candidates were rejected for changing it.
fn assert_pin_survives(proposer: &str, report: &serde_json::Value, written: &str) -> usize {
    assert_eq!(
        report["pinned"][0], "Region * rp_ghost GPU ZCMEM;",
        "{proposer}"
    );
    let mut rejected = 0;
    for r in report["records"].as_array().unwrap() {
        let source = r["source"].as_str().unwrap();
        if r["evaluation"]["status"] == "pinned_changed" {
            rejected += 1;
            continue;
        }
        assert!(
            source.contains(PIN),
            "{proposer}: iteration {} lost the pin:\n{source}",
            r["iteration"]
        );
        assert_ghost_in_zcmem(proposer, source);
    }
    assert!(
        written.contains(PIN),
        "{proposer}: the written mapper lost the pin:\n{written}"
    );
    assert_ghost_in_zcmem(proposer, written);
    rejected
}

fn assert_ghost_in_zcmem(proposer: &str, source: &str) {
    let Some(d) = resolve(source, "circuit") else {
        return;
    };
    for t in d.tasks.iter().filter(|t| t.proc_kind == ProcKind::Gpu) {
        for r in t.regions.iter().filter(|r| r.region == "rp_ghost") {
            assert_eq!(
                r.memory,
                MemKind::Zcmem,
                "{proposer}: {} rp_ghost in\n{source}",
                t.task
            );
        }
    }
}

#[test]
fn a_pin_survives_the_search_proposer() {
    let (report, written) = optimize_pinned("pin-search", "search", &[]);
    assert_eq!(assert_pin_survives("search", &report, &written), 0);
    // Something else was applied: the pin did not stop the run.
    assert_ne!(written, pinned_circuit(), "search applied nothing");
}

#[test]
fn a_pin_survives_the_random_proposer() {
    let (report, written) = optimize_pinned("pin-random", "random", &[]);
    assert_eq!(assert_pin_survives("random", &report, &written), 0);
}

#[test]
fn a_pin_survives_the_scalar_proposer() {
    let (report, written) = optimize_pinned("pin-scalar", "scalar", &[]);
    assert_eq!(assert_pin_survives("scalar", &report, &written), 0);
}

/// The LLM's answer: the README circuit mapper with the pinned line moved
/// to FBMEM (what the simulator prefers), or kept with another change.
fn llm_answers() -> Vec<Reply> {
    let breaks = pinned_circuit().replace(PIN, "Region * rp_ghost GPU FBMEM;");
    let keeps = pinned_circuit().replace(
        "Region * rp_shared GPU ZCMEM;",
        "Region * rp_shared GPU FBMEM;",
    );
    vec![
        Reply::content(
            &format!("Faster:\n```mapper\n{breaks}```\nGhosts in FBMEM."),
            900,
            100,
        ),
        Reply::content(
            &format!("Then:\n```mapper\n{keeps}```\nShared in FBMEM."),
            900,
            100,
        ),
    ]
}

#[test]
fn a_pin_survives_the_llm_proposer() {
    let server = FakeLlm::start(llm_answers());
    let (report, written) = optimize_pinned(
        "pin-llm",
        "llm",
        &["--llm-base-url", &server.base_url, "--llm-model", "fake"],
    );
    // The first answer broke the pin: recorded, never run, never applied.
    assert_eq!(
        report["records"][1]["evaluation"]["status"],
        "pinned_changed"
    );
    assert!(report["records"][1]["evaluation"]["raw_output"]
        .as_str()
        .unwrap()
        .contains("pinned statement `Region * rp_ghost GPU ZCMEM;`"));
    assert!(assert_pin_survives("llm", &report, &written) >= 1);
    // The model was told, and saw the rejection in its next prompt.
    let requests = server.requests.lock().unwrap();
    let first = requests[0]["messages"][1]["content"].as_str().unwrap();
    assert!(first.contains(&format!("`{PIN}`")), "{first}");
    let second = requests[1]["messages"][1]["content"].as_str().unwrap();
    assert!(second.contains("rejected before running"), "{second}");
}

#[test]
fn a_pin_survives_the_hybrid_proposer() {
    let server = FakeLlm::start(llm_answers());
    let (report, written) = optimize_pinned(
        "pin-hybrid",
        "hybrid",
        &["--llm-base-url", &server.base_url, "--llm-model", "fake"],
    );
    assert_eq!(
        report["records"][1]["evaluation"]["status"],
        "pinned_changed"
    );
    assert!(assert_pin_survives("hybrid", &report, &written) >= 1);
}
