//! End-to-end tests of `mapwright run` and `mapwright apps`, including the
//! command backend pointed at `mapwright run` itself.

mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_mapwright")
}

fn expert(file: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../runtime/apps/experts")
        .join(file)
        .display()
        .to_string()
}

fn mapwright(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin())
        .args(args)
        .output()
        .expect("run mapwright");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn run_prints_the_programs_lines_and_a_summary() {
    let file = expert("legion-circuit.mapper");
    let (code, out, err) = mapwright(&["run", &file, "--app", "circuit", "--machine", "p100x4"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("ELAPSED TIME = "), "{out}");
    assert!(out.contains("\nGFLOPS = "));
    assert!(
        out.contains("normalized: 1.000x the expert mapper"),
        "{out}"
    );
}

#[test]
fn run_json_is_one_object() {
    let file = expert("taco-cannonMM-cuda.mapper");
    let (code, out, _) = mapwright(&[
        "run", &file, "--app", "cannon", "--seed", "5", "--noise", "0.01", "--json",
    ]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["status"], "ok");
    assert!(v["elapsed_s"].as_f64().unwrap() > 0.0);
    assert!(v["throughput"].as_f64().unwrap() > 0.0);
    assert!((v["normalized"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    assert!(v["raw_output"]
        .as_str()
        .unwrap()
        .contains("achieved GFLOPS per node"));
}

#[test]
fn cuda_backend_explains_itself() {
    let file = expert("legion-circuit.mapper");
    let (code, _, err) = mapwright(&["run", &file, "--app", "circuit", "--backend", "cuda"]);
    assert_ne!(code, 0);
    assert!(err.contains("`cuda` feature"), "{err}");
}

#[test]
fn apps_lists_the_nine_with_their_experts() {
    let (code, out, _) = mapwright(&["apps", "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let apps = v.as_array().unwrap();
    assert_eq!(apps.len(), 9);
    for a in apps {
        let path = a["expert_mapper"].as_str().unwrap();
        let text = std::fs::read_to_string(path).expect("expert path exists");
        assert!(text.contains("Task "), "{path}");
        assert!(!a["tasks"].as_array().unwrap().is_empty());
    }
    let (code, out, _) = mapwright(&["apps"]);
    assert_eq!(code, 0);
    assert!(out.contains("expert mapper: ") && out.contains("cosma"));
}

#[test]
fn the_command_backend_runs_mapwright_run_itself() {
    let file = expert("legion-stencil.mapper");
    let template = format!(
        "{} run {{mapper}} --app {{app}} --machine {{machine}} --seed {{seed}}",
        bin()
    );
    let (code, out, err) = mapwright(&[
        "run",
        &file,
        "--app",
        "stencil",
        "--backend",
        "command",
        "--command",
        &template,
        "--json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "ok", "{out}");
    assert_eq!(v["backend"], "command");
    // The child printed `ELAPSED TIME = %7.3f s`: the same time to 3 decimals.
    let (_, sim, _) = mapwright(&["run", &file, "--app", "stencil", "--json"]);
    let sim: Value = serde_json::from_str(&sim).unwrap();
    let a = v["elapsed_s"].as_f64().unwrap();
    let b = sim["elapsed_s"].as_f64().unwrap();
    assert!((a - b).abs() < 5e-4, "{a} vs {b}");
    assert!((v["normalized"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    // A failing child is a failed run with its output, exit status 1.
    let template = format!("{} run {{mapper}} --app {{app}} --machine nosuch", bin());
    let (code, out, _) = mapwright(&[
        "run",
        &file,
        "--app",
        "stencil",
        "--backend",
        "command",
        "--command",
        &template,
        "--no-normalize",
    ]);
    assert_eq!(code, 1);
    assert!(out.contains("unknown machine `nosuch`"), "{out}");
    assert!(out.contains("exited with status 2"), "{out}");
}

#[test]
fn bench_reports_evaluations_per_second() {
    let file = expert("legion-circuit.mapper");
    let (code, out, _) = mapwright(&["run", &file, "--app", "circuit", "--bench", "50", "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["simulate_evals_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(v["status"], "ok");
}

#[test]
fn serve_answers_the_client_and_guards_its_api() {
    use mapwright_runtime::app::{expert_mapper_text, App};
    use mapwright_runtime::backend::{Backend, RunRequest};
    use mapwright_runtime::machine::Machine;
    use mapwright_runtime::service::client::RemoteBackend;
    use std::sync::Arc;

    let service = support::serve::Service::start("MAPWRIGHT_TEST_TOKEN", "tok");
    let url = service.url.clone();
    let request = RunRequest::new(
        expert_mapper_text("circuit").unwrap(),
        Arc::new(App::builtin("circuit").unwrap()),
        Arc::new(Machine::preset("p100x4").unwrap()),
    );
    let ok = RemoteBackend::new(&url, Some("tok".into()))
        .unwrap()
        .run(&request);
    assert!(ok.status.is_ok(), "{}", ok.raw_output);
    assert!(ok.raw_output.starts_with("ELAPSED TIME = "));
    let denied = RemoteBackend::new(&url, None).unwrap().run(&request);
    assert_eq!(denied.status.as_str(), "service_error");
    assert!(denied.raw_output.contains("401"));
    // Serving every interface without a token is refused.
    let out = Command::new(bin())
        .args([
            "serve",
            "--bind",
            "0.0.0.0:0",
            "--token-env",
            "MAPWRIGHT_NO_SUCH_VAR",
        ])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without a token"));
}
