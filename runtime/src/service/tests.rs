//! Tests against a real service on 127.0.0.1: endpoints, auth, limits,
//! timeouts, malformed requests, a full queue, concurrent clients.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use super::client::RemoteBackend;
use super::*;
use crate::backend::RunStatus;
use crate::sim::{reference, simulate, SimBackend};

/// A backend that takes `delay` per run and always succeeds.
struct Slow(Duration);

impl Backend for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn run(&self, _: &RunRequest) -> RunOutcome {
        thread::sleep(self.0);
        RunOutcome {
            status: RunStatus::Ok,
            elapsed_s: Some(1.0),
            throughput: None,
            throughput_unit: String::new(),
            raw_output: "ELAPSED TIME =   1.000 s\n".into(),
            metrics: Default::default(),
        }
    }
}

fn sim_backend() -> Arc<dyn Backend> {
    Arc::new(SimBackend::new(Arc::new(
        |_: &str, a: &App, m: &Machine| reference::expert_like(a, m),
    )))
}

fn config() -> ServiceConfig {
    let mut c = ServiceConfig::new(Machine::preset("p100x4").unwrap());
    c.bind = SocketAddr::from(([127, 0, 0, 1], 0));
    c
}

fn client(s: &Service, token: Option<&str>) -> RemoteBackend {
    RemoteBackend::new(&format!("http://{}", s.addr()), token.map(str::to_string)).unwrap()
}

fn request(app: &str) -> RunRequest {
    RunRequest::new(
        "Task * GPU;",
        Arc::new(App::builtin(app).unwrap()),
        Arc::new(Machine::preset("p100x4").unwrap()),
    )
}

fn status_of(c: &RemoteBackend, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    let (s, b) = c.call(method, path, body).unwrap();
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

#[test]
fn endpoints_answer_and_runs_match_local_simulation() {
    let s = Service::start(config(), sim_backend()).unwrap();
    let c = client(&s, None);
    let (code, v) = status_of(&c, "GET", "/healthz", None);
    assert_eq!((code, v["status"].as_str()), (200, Some("ok")));
    let (code, v) = status_of(&c, "GET", "/v1/apps", None);
    assert_eq!(code, 200);
    assert_eq!(v.as_array().unwrap().len(), 9);
    let (code, v) = status_of(&c, "GET", "/v1/machine", None);
    assert_eq!(code, 200);
    assert_eq!(v["machine"]["name"], "p100x4");
    // A run through the service is the run a local simulation gives.
    let mut r = request("circuit");
    r.seed = 7;
    r.noise = 0.01;
    let remote = c.run(&r);
    let local = simulate(
        &reference::expert_like(&r.app, &r.machine),
        &r.app,
        &r.machine,
        7,
        0.01,
    );
    assert_eq!(remote.status, RunStatus::Ok, "{}", remote.raw_output);
    assert_eq!(remote.raw_output, local.raw_output);
    // The time crosses JSON: serde_json's default float parser (without its
    // `float_roundtrip` feature) may land one ulp off the printed shortest
    // representation, so compare to a few ulps; the raw output above is
    // compared exactly.
    let (a, b) = (remote.elapsed_s.unwrap(), local.elapsed_s.unwrap());
    assert!((a - b).abs() <= 4.0 * f64::EPSILON * b.abs(), "{a} != {b}");
    // A custom machine travels as a description.
    let mut m = Machine::preset("p100x4").unwrap();
    m.name = "my-box".into();
    let r2 = RunRequest {
        machine: Arc::new(m),
        ..request("stencil")
    };
    assert!(c.run(&r2).status.is_ok());
    s.shutdown();
}

#[test]
fn tokens_guard_the_api_but_not_health() {
    let mut cfg = config();
    cfg.token = Some("s3cret".into());
    let s = Service::start(cfg, sim_backend()).unwrap();
    let anon = client(&s, None);
    assert_eq!(status_of(&anon, "GET", "/healthz", None).0, 200);
    assert_eq!(status_of(&anon, "GET", "/v1/apps", None).0, 401);
    let o = anon.run(&request("circuit"));
    assert_eq!(o.status.as_str(), "service_error");
    assert!(o.raw_output.contains("401"), "{}", o.raw_output);
    let wrong = client(&s, Some("s3cres"));
    assert_eq!(status_of(&wrong, "GET", "/v1/machine", None).0, 401);
    let right = client(&s, Some("s3cret"));
    assert!(right.run(&request("circuit")).status.is_ok());
}

#[test]
fn other_addresses_need_a_token() {
    let mut cfg = config();
    cfg.bind = SocketAddr::from(([0, 0, 0, 0], 0));
    assert!(matches!(
        Service::start(cfg.clone(), sim_backend()),
        Err(ServiceError::TokenRequired(_))
    ));
    cfg.token = Some(" ".into());
    assert!(matches!(
        Service::start(cfg.clone(), sim_backend()),
        Err(ServiceError::EmptyToken)
    ));
    cfg.token = Some("t".into());
    let s = Service::start(cfg, sim_backend()).unwrap();
    s.shutdown();
}

#[test]
fn malformed_and_oversized_requests_get_clear_answers() {
    let mut cfg = config();
    cfg.max_body = 4096;
    cfg.allow_machine = false;
    let s = Service::start(cfg, sim_backend()).unwrap();
    let c = client(&s, None);
    let cases: Vec<(&str, &str, String, u16, &str)> = vec![
        (
            "POST",
            "/v1/run",
            "{not json".into(),
            400,
            "malformed run request",
        ),
        (
            "POST",
            "/v1/run",
            r#"{"mapper":"x","app":"circuit","bogus":1}"#.into(),
            400,
            "unknown field",
        ),
        (
            "POST",
            "/v1/run",
            r#"{"mapper":"x","app":"nbody"}"#.into(),
            400,
            "unknown application",
        ),
        (
            "POST",
            "/v1/run",
            r#"{"mapper":"x","app":"circuit","machine":"h200"}"#.into(),
            400,
            "cannot choose",
        ),
        (
            "POST",
            "/v1/run",
            r#"{"mapper":"x","app":"circuit","noise":-1}"#.into(),
            400,
            "noise",
        ),
        (
            "POST",
            "/v1/run",
            format!(r#"{{"mapper":"{}","app":"circuit"}}"#, "x".repeat(5000)),
            413,
            "exceeds",
        ),
        ("GET", "/v1/run", String::new(), 405, "POST"),
        ("POST", "/v1/apps", String::new(), 405, "GET"),
        (
            "GET",
            "/v2/anything",
            String::new(),
            404,
            "no such endpoint",
        ),
    ];
    for (method, path, body, want, text) in cases {
        let (code, v) = status_of(&c, method, path, Some(&body));
        assert_eq!(code, want, "{method} {path} {body:.60}: {v}");
        assert!(v["error"].as_str().unwrap_or("").contains(text), "{v}");
    }
    // The service's own machine, by name, is accepted.
    let (code, _) = status_of(
        &c,
        "POST",
        "/v1/run",
        Some(r#"{"mapper":"x","app":"circuit","machine":"p100x4"}"#),
    );
    assert_eq!(code, 200);
    // A raw connection sending garbage or a huge head gets 400 / 431.
    use std::io::{Read, Write};
    for (raw, want) in [
        (b"NONSENSE\r\n\r\n".to_vec(), "400"),
        (
            format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20_000)).into_bytes(),
            "431",
        ),
    ] {
        let mut t = TcpStream::connect(s.addr()).unwrap();
        let _ = t.write_all(&raw);
        let mut out = String::new();
        let _ = t.read_to_string(&mut out);
        assert!(out.starts_with(&format!("HTTP/1.1 {want}")), "{out}");
    }
}

#[test]
fn a_full_queue_answers_429_and_slow_runs_503() {
    let mut cfg = config();
    cfg.workers = 1;
    cfg.queue = 1;
    let s = Service::start(cfg, Arc::new(Slow(Duration::from_millis(400)))).unwrap();
    let c = client(&s, None);
    let handles: Vec<_> = (0..5)
        .map(|_| {
            let c = c.clone();
            thread::spawn(move || c.run(&request("circuit")).status.as_str().to_string())
        })
        .collect();
    let results: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(results.iter().any(|r| r == "ok"), "{results:?}");
    assert!(results.iter().any(|r| r == "service_busy"), "{results:?}");
    s.shutdown();

    let mut cfg = config();
    cfg.run_timeout = Duration::from_millis(100);
    let s = Service::start(cfg, Arc::new(Slow(Duration::from_millis(800)))).unwrap();
    let c = client(&s, None);
    let t0 = Instant::now();
    let o = c.run(&request("circuit"));
    assert!(t0.elapsed() < Duration::from_millis(700));
    assert_eq!(o.status.as_str(), "timeout", "{}", o.raw_output);
    let (code, v) = status_of(
        &c,
        "POST",
        "/v1/run",
        Some(r#"{"mapper":"x","app":"circuit"}"#),
    );
    assert_eq!((code, v["status"].as_str()), (503, Some("timeout")));
}

#[test]
fn concurrent_clients_all_get_their_answers() {
    let s = Service::start(config(), sim_backend()).unwrap();
    let c = client(&s, None);
    let want = c.run(&request("pennant")).raw_output;
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let c = c.clone();
            thread::spawn(move || {
                (0..4)
                    .map(|_| {
                        let app = if i % 2 == 0 { "pennant" } else { "cannon" };
                        let o = c.run(&request(app));
                        (app, o.status.is_ok(), o.raw_output)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for h in handles {
        for (app, ok, raw) in h.join().unwrap() {
            assert!(ok, "{app}: {raw}");
            if app == "pennant" {
                assert_eq!(raw, want);
            }
        }
    }
}

#[test]
fn an_unreachable_service_is_a_failed_run() {
    // Bind and drop to find a port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let c = RemoteBackend::new(&format!("http://127.0.0.1:{port}"), None).unwrap();
    let o = c.run(&request("circuit"));
    assert_eq!(o.status.as_str(), "service_error");
    assert!(RemoteBackend::new("https://x", None).is_err());
    assert!(RemoteBackend::new("http:///v1", None).is_err());
}
