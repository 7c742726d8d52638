//! `mapwright optimize` from a mapper that does not compile and whose
//! error has no quick fix (`ControlReplicate *;`, E0100): whatever the
//! proposer, the first candidate makes it compile (the statement dropped,
//! said in the report), and the proposals build on that text instead of
//! spending every iteration at 0.00x.

mod support;

use std::process::Command;

use support::fake_llm::{FakeLlm, Reply};

const BROKEN: &str = "# Replicate everything.\nControlReplicate *;\nTask * GPU,CPU;\n";

fn run(proposer: &str, extra: &[&str]) -> serde_json::Value {
    let dir = support::cli::temp_dir("mapwright-broken", proposer);
    std::fs::write(dir.join("m.mapper"), BROKEN).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args([
            "optimize",
            "m.mapper",
            "--app",
            "circuit",
            "--iterations",
            "3",
        ])
        .args(["--proposer", proposer, "--json", "--no-save"])
        .args(extra)
        .current_dir(&dir)
        .output()
        .expect("run mapwright");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON report")
}

fn assert_repaired_first(proposer: &str, report: &serde_json::Value) {
    let records = report["records"].as_array().unwrap();
    assert_eq!(records[0]["evaluation"]["status"], "compile_error");
    let first = &records[1];
    let rationale = first["rationale"].as_str().unwrap();
    assert!(
        rationale.starts_with("make it compile: dropped `ControlReplicate *;` (E0100"),
        "{proposer}: {rationale}"
    );
    assert_eq!(first["evaluation"]["status"], "ok", "{proposer}");
    assert_eq!(
        first["source"],
        "# Replicate everything.\nTask * GPU,CPU;\n"
    );
    let best = report["best_normalized"].as_f64().unwrap();
    assert!(best > 0.5, "{proposer}: best {best}");
}

#[test]
fn every_score_and_search_proposer_first_makes_it_compile() {
    for proposer in ["search", "random", "scalar"] {
        assert_repaired_first(proposer, &run(proposer, &[]));
    }
}

#[test]
fn the_llm_proposers_first_make_it_compile_and_then_build_on_it() {
    let answer =
        r#"{"tasks": [], "regions": [], "layouts": [], "placements": [], "reason": "keep"}"#;
    for proposer in ["llm", "hybrid"] {
        let server = FakeLlm::start(vec![Reply::content(answer, 10, 5)]);
        let report = run(
            proposer,
            &[
                "--llm-base-url",
                &server.base_url,
                "--llm-output",
                "structured",
            ],
        );
        assert_repaired_first(proposer, &report);
        // The LLM sees the repaired mapper's decisions, not an empty one.
        let requests = server.requests.lock().unwrap();
        let user = requests[0]["messages"][1]["content"].as_str().unwrap();
        assert!(user.contains("\"processor\":\"GPU\""), "{user}");
    }
}
