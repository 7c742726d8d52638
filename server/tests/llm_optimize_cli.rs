//! `mapwright optimize --proposer llm|hybrid` through the real binary against
//! a local chat-completions server: the loop feeds each outcome back into the
//! next prompt (as much of AutoGuide's feedback as `--feedback` allows), keeps
//! the best mapper, and accounts the tokens; hybrid alternates LLM strategies
//! and search moves.

mod support;

use std::path::Path;
use std::process::Command;

use support::fake_llm::{FakeLlm, Reply};

const NAIVE: &str = "# A first mapper.\nTask * GPU,CPU;\n";

/// Fortran order: cuBLAS rejects the GEMM pieces (DGEMM parameter 8).
const F_ORDER: &str =
    "Here is a mapper.\n```mapper\nTask * GPU,CPU;\nLayout * * * SOA F_order;\n```\n";

fn expert_answer() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../runtime/apps/experts/taco-cannonMM-cuda.mapper");
    let text = std::fs::read_to_string(path).expect("cannon's expert mapper");
    format!("This one spreads the GEMMs.\n```mapper\n{text}```\n")
}

fn temp_dir(name: &str) -> support::cli::TempDir {
    let dir = support::cli::temp_dir("mapwright-llmopt", name);
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    dir
}

/// Runs `optimize --json` against `server` and returns the report.
fn optimize(
    dir: &Path,
    server: &FakeLlm,
    proposer: &str,
    feedback: &str,
    iterations: &str,
) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args([
            "optimize",
            "m.mapper",
            "--app",
            "cannon",
            "--proposer",
            proposer,
            "--feedback",
            feedback,
            "--iterations",
            iterations,
            "--llm-base-url",
            &server.base_url,
            "--llm-model",
            "fake-model",
            "--llm-output",
            "text",
            "--json",
            "--no-save",
        ])
        .current_dir(dir)
        .output()
        .expect("run mapwright");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON report")
}

/// The user message of request `i`.
fn prompt(server: &FakeLlm, i: usize) -> String {
    let requests = server.requests.lock().unwrap();
    requests[i]["messages"][1]["content"]
        .as_str()
        .expect("user message")
        .to_string()
}

#[test]
fn the_llm_sees_each_outcome_and_autoguide_feedback_in_its_next_prompt() {
    let server = FakeLlm::start(vec![
        Reply::content(F_ORDER, 1200, 100),
        Reply::content(&expert_answer(), 1500, 300),
    ]);
    let dir = temp_dir("suggest");
    let report = optimize(&dir, &server, "llm", "suggest", "2");
    let statuses: Vec<&str> = report["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["evaluation"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["cublas_illegal_parameter", "cublas_illegal_parameter", "ok"]
    );
    let best = report["best_normalized"].as_f64().unwrap();
    assert!(
        (best - 1.0).abs() < 1e-3,
        "the expert's answer wins: {best}"
    );
    assert_eq!(report["best_iteration"], 2);
    assert_eq!(report["usage"]["prompt_tokens"], 2700);
    assert_eq!(report["usage"]["completion_tokens"], 400);

    // The second prompt carries the first answer's raw failure and AutoGuide.
    let second = prompt(&server, 1);
    assert!(second.contains("SOA F_order"), "the candidate itself");
    assert!(
        second.contains("DGEMM  parameter number 8"),
        "the raw output: {second}"
    );
    assert!(second.contains("Explain:") && second.contains("Suggest:"));
}

#[test]
fn execution_only_feedback_keeps_autoguide_out_of_the_prompt() {
    let server = FakeLlm::start(vec![
        Reply::content(F_ORDER, 10, 10),
        Reply::content(&expert_answer(), 10, 10),
    ]);
    let dir = temp_dir("exec");
    optimize(&dir, &server, "llm", "execution-only", "2");
    let second = prompt(&server, 1);
    assert!(second.contains("DGEMM  parameter number 8"), "{second}");
    assert!(!second.contains("Explain:") && !second.contains("Suggest:"));
}

#[test]
fn hybrid_alternates_llm_strategies_and_search_moves() {
    // The LLM's strategy fails the way the naive mapper does; search
    // repairs the start and tunes it between LLM calls.
    let server = FakeLlm::start(vec![Reply::content(F_ORDER, 10, 10)]);
    let dir = temp_dir("hybrid");
    let report = optimize(&dir, &server, "hybrid", "suggest", "6");
    let rationales: Vec<&str> = report["records"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|r| r["rationale"].as_str().unwrap())
        .collect();
    assert_eq!(rationales.len(), 6);
    for (i, r) in rationales.iter().enumerate() {
        let from_llm = r.starts_with("LLM strategy");
        assert_eq!(from_llm, i % 3 == 0, "proposal {}: {r}", i + 1);
    }
    assert_eq!(server.requests.lock().unwrap().len(), 2);
    let best = report["best_normalized"].as_f64().unwrap();
    assert!(best >= 0.99, "search reaches the expert: {best}");
}

#[test]
fn hybrid_search_turns_go_where_search_alone_goes_when_the_llm_strategies_fail() {
    // What SmolLM2-135M proposed on cannon (a real answer, structured,
    // rendered): it fails in cuBLAS like the start, every time.
    let failing = "Here.\n```mapper\nTask * GPU,CPU;\nTask taco_validate CPU;\nRegion taco_validate 0 CPU FBMEM;\nmw_cpu = Machine(CPU);\ndef mw_linear_block_cpu_2d(Task task) {\n    ip = task.ipoint;\n    sp = task.ispace;\n    flat = mw_cpu.merge(0, 1);\n    return flat[(ip[0] * sp[1] + ip[1]) * flat.size[0] / sp.volume];\n}\nIndexTaskMap taco_validate mw_linear_block_cpu_2d;\n```\n";
    let server = FakeLlm::start(vec![Reply::content(failing, 10, 10)]);
    let dir = temp_dir("hybrid-search");
    let hybrid = optimize(&dir, &server, "hybrid", "suggest", "10");
    let search = optimize(&dir, &server, "search", "suggest", "6");
    let proposals = |report: &serde_json::Value, from_search: bool| -> Vec<String> {
        report["records"].as_array().unwrap()[1..]
            .iter()
            .filter(|r| r["rationale"].as_str().unwrap().starts_with("LLM strategy") != from_search)
            .map(|r| r["source"].as_str().unwrap().to_string())
            .collect()
    };
    let llm_turns = proposals(&hybrid, false);
    assert_eq!(llm_turns.len(), 4, "iterations 1, 4, 7 and 10");
    // Search does not repair or tune the LLM's failures: its six turns are
    // the six proposals search makes alone, in order, and reach as far.
    assert_eq!(proposals(&hybrid, true), proposals(&search, true));
    let best = |r: &serde_json::Value| r["best_normalized"].as_f64().unwrap();
    assert!(
        best(&hybrid) >= best(&search),
        "{} < {}",
        best(&hybrid),
        best(&search)
    );
}

#[test]
fn an_unusable_answer_is_recorded_with_its_reason_and_is_no_proposal() {
    // Prose, then JSON, then a loop: none holds a mapper.
    let server = FakeLlm::start(vec![
        Reply::content("Sure! Map everything to GPUs.", 10, 5),
        Reply::content("{\"Task\": \"GPU\"}", 10, 5),
        Reply::content(
            "Task * GPU;\nTask * GPU;\nTask * GPU;\nTask * GPU;\n",
            10,
            5,
        ),
    ]);
    let dir = temp_dir("unusable");
    let report = optimize(&dir, &server, "llm", "suggest", "1");
    let r = &report["records"][1];
    assert_eq!(r["evaluation"]["status"], "proposer_error");
    let why = r["evaluation"]["raw_output"].as_str().unwrap();
    for reason in [
        "no code block",
        "JSON instead of a mapper code block",
        "repeated text",
    ] {
        assert!(why.contains(reason), "{reason}: {why}");
    }
    assert!(why.contains(" s, 10+5 tokens]"), "{why}");
    assert_eq!(r["parameters"], serde_json::json!({}), "not a proposal");
}

#[test]
fn an_https_endpoint_behind_a_private_ca_is_reached_with_the_project_ca_file() {
    let ca = support::tls::TestCa::new("cli");
    let port = ca.serve_one(|tls, _| {
        support::tls::answer(tls, &Reply::content(&expert_answer(), 100, 50).body);
    });
    let dir = temp_dir("https");
    std::fs::copy(ca.ca_file(), dir.join("private-ca.pem")).unwrap();
    std::fs::write(
        dir.join("mapwright.toml"),
        format!(
            "app = \"cannon\"\n[llm]\nbase_url = \"https://127.0.0.1:{port}/v1\"\nca_file = \"private-ca.pem\"\n"
        ),
    )
    .unwrap();
    // From another folder: `ca_file` is relative to the project file.
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mapwright"))
            .args(["optimize", &dir.join("m.mapper").to_string_lossy()])
            .args([
                "--proposer",
                "llm",
                "--iterations",
                "1",
                "--llm-output",
                "text",
            ])
            .args(["--llm-retries", "0", "--json", "--no-save"])
            .args(extra)
            .current_dir(std::env::temp_dir())
            .output()
            .expect("run mapwright")
    };
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a report");
    assert_eq!(report["records"][1]["evaluation"]["status"], "ok");
    let best = report["best_normalized"].as_f64().unwrap();
    assert!((best - 1.0).abs() < 1e-3, "the expert's answer: {best}");
    // A CA file that is not there stops the run before any request.
    let out = run(&["--llm-ca-file", "/nonexistent/ca.pem"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the CA file /nonexistent/ca.pem"), "{err}");
}
