//! The LLM proposer end to end against a local server that speaks the real
//! chat-completions protocol, with scripted answers including malformed ones.

mod support;

use mapwright::autoguide::FeedbackMode;
use mapwright::optimize::proposers::llm::{LlmConfig, LlmProposer, OutputMode};
use mapwright::optimize::proposers::{ProposalContext, ProposeError, Proposer};
use mapwright::optimize::space::Space;
use mapwright_runtime::app::App;
use mapwright_runtime::decisions::Decisions;
use mapwright_runtime::machine::Machine;
use support::fake_llm::{FakeLlm, Reply};
use support::tls::TestCa;

const GOOD: &str = "I moved everything to the GPU.\n```mapper\nTask * GPU,CPU;\nRegion * * GPU FBMEM;\n```\nThis keeps data in the framebuffer.";

/// An application, the p100x4 machine and a base mapper that nothing
/// resolves: what a proposal context borrows.
struct Fixture {
    app: App,
    machine: Machine,
    space: Space,
    decisions: Decisions,
    base: &'static str,
}

fn no_resolve(_: &str) -> Option<Decisions> {
    None
}

impl Fixture {
    fn new(app: &str, base: &'static str) -> Fixture {
        let app = App::builtin(app).expect("a built-in app");
        let machine = Machine::preset("p100x4").expect("p100x4");
        let space = Space::new(&app, &machine);
        Fixture {
            app,
            machine,
            space,
            decisions: Decisions::default(),
            base,
        }
    }

    fn ctx(&self) -> ProposalContext<'_> {
        ProposalContext {
            base: self.base,
            base_decisions: &self.decisions,
            app: &self.app,
            machine: &self.machine,
            space: &self.space,
            history: &[],
            feedback_mode: FeedbackMode::Suggest,
            resolve: &no_resolve,
            as_block: false,
        }
    }
}

fn propose(server: &FakeLlm, retries: usize) -> (Result<String, ProposeError>, LlmProposer) {
    let fixture = Fixture::new("circuit", "Task * CPU;\n");
    let ctx = fixture.ctx();
    let config = LlmConfig {
        base_url: server.base_url.clone(),
        model: "fake-model".into(),
        api_key: Some("sk-test".into()),
        max_retries: retries,
        price_prompt_per_mtok: 2.5,
        price_completion_per_mtok: 10.0,
        output: OutputMode::Text,
        ..LlmConfig::default()
    };
    let mut p = LlmProposer::new(config).expect("no CA file");
    let result = p.propose(&ctx).map(|p| p.source);
    (result, p)
}

#[test]
fn a_good_answer_becomes_the_candidate_and_is_accounted() {
    let server = FakeLlm::start(vec![Reply::content(GOOD, 1000, 200)]);
    let (result, proposer) = propose(&server, 2);
    assert_eq!(
        result.expect("proposal"),
        "Task * GPU,CPU;\nRegion * * GPU FBMEM;\n"
    );
    let usage = proposer.usage().expect("usage");
    assert_eq!(
        (usage.requests, usage.prompt_tokens, usage.completion_tokens),
        (1, 1000, 200)
    );
    assert!((usage.cost_usd - (1000.0 * 2.5 + 200.0 * 10.0) / 1e6).abs() < 1e-12);
    let requests = server.requests.lock().unwrap();
    let body = &requests[0];
    assert_eq!(body["model"], "fake-model");
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(messages[0]["role"], "system");
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("IndexTaskMap"),
        "the DSL guide is in the prompt"
    );
    let user = messages[1]["content"].as_str().unwrap();
    assert!(
        user.contains("calculate_new_currents"),
        "the application is in the prompt"
    );
    assert!(user.contains("\"nodes\""), "the machine is in the prompt");
    assert_eq!(
        server.auth_headers.lock().unwrap()[0],
        "Authorization: Bearer sk-test"
    );
}

#[test]
fn an_answer_without_code_is_retried_with_a_reminder() {
    let server = FakeLlm::start(vec![
        Reply::content("Sure! Map everything to GPUs.", 10, 5),
        Reply::content(GOOD, 10, 5),
    ]);
    let (result, proposer) = propose(&server, 2);
    assert!(result.is_ok());
    let usage = proposer.usage().unwrap();
    assert_eq!((usage.requests, usage.retries), (2, 1));
    let requests = server.requests.lock().unwrap();
    let second = requests[1]["messages"].as_array().unwrap();
    assert!(second.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .contains("no fenced code block"));
}

#[test]
fn malformed_and_failing_answers_become_errors_not_panics() {
    let server = FakeLlm::start(vec![
        Reply::raw(200, "this is not json"),
        Reply::raw(500, "{\"error\":\"overloaded\"}"),
        Reply::raw(200, "{\"choices\":[]}"),
    ]);
    let (result, proposer) = propose(&server, 2);
    match result {
        Err(ProposeError::Request(msg)) => assert!(msg.contains("choices"), "{msg}"),
        other => panic!("expected a request error, got {other:?}"),
    }
    assert_eq!(proposer.usage().unwrap().requests, 3);
}

#[test]
fn an_unreachable_endpoint_is_an_error() {
    let config = LlmConfig {
        base_url: "http://127.0.0.1:9/v1".into(),
        max_retries: 0,
        ..LlmConfig::default()
    };
    let fixture = Fixture::new("stencil", "Task * GPU;\n");
    let ctx = fixture.ctx();
    assert!(matches!(
        LlmProposer::new(config).expect("no CA file").propose(&ctx),
        Err(ProposeError::Request(_))
    ));
}

fn propose_structured(server: &FakeLlm, output: OutputMode) -> Result<String, ProposeError> {
    let fixture = Fixture::new("circuit", "Task * CPU;\n");
    let ctx = fixture.ctx();
    let config = LlmConfig {
        base_url: server.base_url.clone(),
        max_retries: 1,
        max_tokens: 300,
        output,
        ..LlmConfig::default()
    };
    LlmProposer::new(config)
        .expect("no CA file")
        .propose(&ctx)
        .map(|p| p.source)
}

#[test]
fn a_structured_answer_becomes_edits_and_the_schema_names_the_decisions() {
    let answer = r#"{"tasks": [{"task": "calculate_new_currents", "processor": "GPU"}], "regions": [], "layouts": [{"task": "calculate_new_currents", "layout": "SOA F_order"}], "reason": "GPU"}"#;
    let server = FakeLlm::start(vec![Reply::content(answer, 10, 5)]);
    let source = propose_structured(&server, OutputMode::Auto).expect("proposal");
    assert!(
        source.contains("Task calculate_new_currents GPU;"),
        "{source}"
    );
    assert!(source.contains("F_order"), "{source}");
    let requests = server.requests.lock().unwrap();
    let body = &requests[0];
    assert_eq!(body["max_tokens"], 300);
    assert_eq!(body["response_format"]["type"], "json_schema");
    let schema = &body["response_format"]["json_schema"]["schema"];
    let tasks = schema["properties"]["tasks"]["items"]["properties"]["task"]["enum"]
        .as_array()
        .expect("task names");
    assert!(tasks.iter().any(|t| t == "calculate_new_currents"));
    // The prompt is JSON and short: no DSL guide.
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(user.starts_with('{') && user.contains("\"processors_per_node\""));
    assert!(!body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("IndexTaskMap"));
}

#[test]
fn names_outside_the_schema_are_left_out_and_non_json_is_retried() {
    let server = FakeLlm::start(vec![
        Reply::content("I think GPUs are best.", 10, 5),
        Reply::content(
            r#"{"tasks": [{"task": "no_such_task", "processor": "GPU"}, {"task": "calculate_new_currents", "processor": "GPU"}], "regions": [], "layouts": [], "reason": ""}"#,
            10,
            5,
        ),
    ]);
    let source = propose_structured(&server, OutputMode::Structured).expect("proposal");
    assert!(
        source.contains("Task calculate_new_currents GPU;"),
        "{source}"
    );
    assert!(!source.contains("no_such_task"), "{source}");
    let requests = server.requests.lock().unwrap();
    let retry = requests[1]["messages"].as_array().unwrap();
    assert!(retry.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .contains("JSON object only"));
}

#[test]
fn an_endpoint_without_structured_output_gets_text() {
    let server = FakeLlm::start(vec![
        Reply::raw(400, r#"{"error":"response_format is not supported"}"#),
        Reply::content(GOOD, 10, 5),
    ]);
    let source = propose_structured(&server, OutputMode::Auto).expect("proposal");
    assert_eq!(source, "Task * GPU,CPU;\nRegion * * GPU FBMEM;\n");
    let requests = server.requests.lock().unwrap();
    assert!(requests[0].get("response_format").is_some());
    assert!(requests[1].get("response_format").is_none());
}

#[test]
fn a_cancel_aborts_the_request_to_a_model_that_does_not_answer() {
    // A server that accepts the connection, never answers, and notes when
    // its client goes away (as llama.cpp's server stops generating then).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (closed_tx, closed_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::Read;
        let Some(Ok(mut conn)) = listener.incoming().next() else {
            return;
        };
        conn.set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .unwrap();
        let mut buf = [0u8; 4096];
        // The request, then nothing until the client closes its end.
        while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
        let _ = closed_tx.send(std::time::Instant::now());
    });
    let proposer = LlmProposer::new(LlmConfig {
        base_url,
        timeout: std::time::Duration::from_secs(60),
        ..LlmConfig::default()
    })
    .expect("no CA file");
    cancel_and_see_the_server_notice(proposer, 300, closed_rx);
}

/// Proposes, cancels after `after_ms`, and checks that the proposal ends at
/// once and that the request was aborted, not abandoned: `closed` (when the
/// server saw its client go) comes right after the cancel, not at the 60 s
/// timeout.
fn cancel_and_see_the_server_notice(
    mut proposer: LlmProposer,
    after_ms: u64,
    closed: std::sync::mpsc::Receiver<std::time::Instant>,
) {
    let fixture = Fixture::new("stencil", "Task * GPU;\n");
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    proposer.set_cancel(flag.clone());
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(after_ms));
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let t0 = std::time::Instant::now();
    let result = proposer.propose(&fixture.ctx());
    assert!(matches!(result, Err(ProposeError::Cancelled)), "{result:?}");
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(proposer.usage().unwrap().requests, 1, "not retried");
    let closed = closed
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("the connection stayed open after the cancel");
    assert!(closed.duration_since(t0) < std::time::Duration::from_secs(5));
}

/// The LLM proposer (text mode, no retry) for `https://127.0.0.1:PORT/v1`,
/// trusting `ca_file` besides the usual roots.
fn https_proposer(port: u16, ca_file: Option<std::path::PathBuf>) -> LlmProposer {
    LlmProposer::new(LlmConfig {
        base_url: format!("https://127.0.0.1:{port}/v1"),
        timeout: std::time::Duration::from_secs(60),
        max_retries: 0,
        output: OutputMode::Text,
        ca_file,
        ..LlmConfig::default()
    })
    .expect("the CA file loads")
}

#[test]
fn a_cancel_aborts_an_https_request_too() {
    // An HTTPS server that starts its answer and then sends a byte of it
    // every 100 ms, never finishing (a model generating), and notes when
    // its client goes away.
    let ca = TestCa::new("cancel");
    let (closed_tx, closed_rx) = std::sync::mpsc::channel();
    let port = ca.serve_one(move |tls, raw| {
        use std::io::Write;
        let _ = tls.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        raw.set_read_timeout(Some(std::time::Duration::from_millis(100)))
            .unwrap();
        loop {
            if tls.write_all(b"1\r\n \r\n").and_then(|_| tls.flush()).is_err() {
                break;
            }
            // The client sends nothing more while it waits: anything it
            // does (an end of stream, a reset) means it went.
            match raw.peek(&mut [0u8; 1]) {
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                _ => break,
            }
        }
        let _ = closed_tx.send(std::time::Instant::now());
    });
    let proposer = https_proposer(port, Some(ca.ca_file()));
    cancel_and_see_the_server_notice(proposer, 500, closed_rx);
}

#[test]
fn an_https_endpoint_behind_a_private_ca_needs_its_ca_file() {
    let ca = TestCa::new("trust");
    let fixture = Fixture::new("circuit", "Task * CPU;\n");
    // Without the CA file its certificate is refused.
    let port = ca.serve_one(|_, _| {});
    let refused = https_proposer(port, None).propose(&fixture.ctx());
    let text = format!("{:?}", refused.as_ref().map(|p| &p.source));
    assert!(
        text.contains("UnknownIssuer"),
        "the certificate was not refused: {text}"
    );
    // With it, the answer is used.
    let port = ca.serve_one(|tls, _| {
        support::tls::answer(tls, &Reply::content(GOOD, 10, 10).body);
    });
    let source = https_proposer(port, Some(ca.ca_file()))
        .propose(&fixture.ctx())
        .map(|p| p.source)
        .expect("a proposal over HTTPS");
    assert_eq!(source, "Task * GPU,CPU;\nRegion * * GPU FBMEM;\n");
    // A CA file that holds no certificate is said so at once.
    let empty = ca.dir.join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let err = LlmProposer::new(LlmConfig {
        ca_file: Some(empty),
        ..LlmConfig::default()
    })
    .err()
    .expect("an empty CA file is an error");
    assert!(err.contains("no PEM certificate"), "{err}");
}

#[test]
fn a_structured_answer_cut_at_max_tokens_keeps_its_complete_entries() {
    let cut = r#"{"tasks": [{"task": "calculate_new_currents", "processor": "GPU"}, {"task": "distribute_charge", "proc"#;
    let body = serde_json::json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": cut}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 300}
    });
    let server = FakeLlm::start(vec![Reply::raw(200, &body.to_string())]);
    let source = propose_structured(&server, OutputMode::Structured).expect("proposal");
    assert!(
        source.contains("Task calculate_new_currents GPU;"),
        "{source}"
    );
    assert!(!source.contains("distribute_charge"), "{source}");
    assert_eq!(server.requests.lock().unwrap().len(), 1, "no retry needed");
}

#[test]
fn a_truncated_text_answer_is_asked_again_for_less_without_quoting_it() {
    let body = serde_json::json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "```mapper\nTask * GPU"}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1024}
    });
    let server = FakeLlm::start(vec![
        Reply::raw(200, &body.to_string()),
        Reply::content(GOOD, 10, 5),
    ]);
    let (result, _) = propose(&server, 2);
    assert!(result.is_ok());
    let requests = server.requests.lock().unwrap();
    let second = requests[1]["messages"].as_array().unwrap();
    assert_eq!(second.len(), 3, "{second:?}");
    assert!(second[2]["content"].as_str().unwrap().contains("cut off"));
}

/// A record of a run that measured `mean_ms` per `calculate_new_currents`
/// point, all on one of four CPUs (or the model's figures).
fn measured_record(
    iteration: usize,
    mean_ms: f64,
    measured: bool,
) -> mapwright::optimize::history::Record {
    use mapwright::optimize::runner::Evaluation;
    use mapwright_runtime::backend::{Metrics, MetricsBasis, TaskFigures};
    let mut metrics = Metrics {
        basis: if measured {
            MetricsBasis::Measured
        } else {
            MetricsBasis::Model
        },
        imbalance: 3.9,
        copy_time_s: 0.0123,
        ..Metrics::default()
    };
    for (i, task) in [
        "calculate_new_currents",
        "distribute_charge",
        "update_voltages",
        "init_nodes",
        "init_wires",
        "parse_input",
    ]
    .iter()
    .enumerate()
    {
        let mut t = TaskFigures {
            runs: 40,
            mean_s: mean_ms * 1e-3 / (i + 1) as f64,
            max_s: 0.1,
            ..TaskFigures::default()
        };
        t.points_per_proc.insert("node0 CPU0".into(), 40);
        t.copy_bytes_per_arg.insert(2, 1.5e6);
        metrics
            .task_time_s
            .insert(task.to_string(), t.mean_s * 40.0);
        metrics.tasks.insert(task.to_string(), t);
    }
    mapwright::optimize::history::Record {
        iteration,
        proposer: "search".into(),
        rationale: String::new(),
        source: "Task * CPU;\n".into(),
        evaluation: Evaluation {
            status: "ok".into(),
            elapsed_s: Some(1.0),
            throughput: None,
            raw_output: "ELAPSED TIME = 1.0 s\n".into(),
            decisions: None,
            feedback: Vec::new(),
            metrics,
        },
        score: 1.0,
        normalized: None,
        parameters: Default::default(),
        spec: None,
        seconds: 1.0,
    }
}

/// The structured prompt carries the last two measured runs' figures per
/// task (the five that took the most time: runs, mean, processors, the
/// busiest one's share, megabytes copied in per argument), the model's
/// figures never, and none with `--llm-no-measurements`; compactly.
#[test]
fn the_prompt_carries_the_last_real_runs_measured_figures() {
    use mapwright::optimize::proposers::structured::prompt;
    let fixture = Fixture::new("circuit", "Task * CPU;\n");
    let history = vec![
        measured_record(0, 11.0, true),
        measured_record(1, 22.0, false),
        measured_record(2, 33.0, true),
        measured_record(3, 44.0, true),
    ];
    let mut ctx = fixture.ctx();
    ctx.history = &history;
    let with = prompt(&ctx, 6, true);
    let body: serde_json::Value =
        serde_json::from_str(with.lines().next().unwrap()).expect("the prompt's JSON");
    let tried = body["tried"].as_array().unwrap();
    let shown: Vec<bool> = tried.iter().map(|t| t.get("measured").is_some()).collect();
    assert_eq!(shown, [false, false, true, true], "{with}");
    let last = &tried[3]["measured"];
    assert_eq!(last["imbalance"], 3.9);
    assert_eq!(last["copy_time_not_hidden_s"], 0.0123);
    let cnc = &last["tasks"]["calculate_new_currents"];
    assert_eq!(cnc["mean_ms"], 44.0);
    assert_eq!(
        (cnc["runs"].as_u64(), cnc["processors"].as_u64()),
        (Some(40), Some(1))
    );
    assert_eq!(cnc["busiest_processor_share"], 1.0);
    assert_eq!(cnc["copied_in_mb"]["arg 2"], 1.5);
    assert_eq!(
        last["tasks"].as_object().unwrap().len(),
        5,
        "the five with the most time"
    );
    assert!(last["tasks"].get("parse_input").is_none());
    let without = prompt(&ctx, 6, false);
    assert!(!without.contains("\"measured\""), "{without}");
    // Compact: two runs' figures add well under a thousand tokens (about
    // four characters each) to a prompt for a 4,096-token context.
    assert!(
        with.len() - without.len() < 2_000,
        "{} more characters",
        with.len() - without.len()
    );
}
