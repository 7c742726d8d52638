//! `mapwright lsp` end to end: `mapwright.optimize` (progress, the applied
//! edit, the stale-version case, cancellation) and `mapwright.run` (result,
//! AutoGuide diagnostics until the next edit, a remote runtime).
//!
//! The optimizer starts from the mapper a user writes first for cannon,
//! `Task * GPU,CPU;`, which fails (cuBLAS rejects the default layout) and
//! which the search repairs within a few iterations. The settings
//! `mapwright.optimize.iterations` and the testing hook
//! `mapwright.optimize.delayMs` (a pause after each candidate) make the
//! stale-version and cancellation cases deterministic: the test edits or
//! cancels after the first progress report, long before the loop ends.

mod lsp_support;

use std::path::Path;

use lsp_support::*;
use serde_json::{json, Value};

const NAIVE: &str = "# A first mapper: everything on the GPU where possible.\nTask * GPU,CPU;\n";

/// Window and workspace capabilities for the commands.
fn caps() -> Value {
    json!({
        "window": {"workDoneProgress": true, "showDocument": {"support": true}},
        "workspace": {
            "applyEdit": true,
            "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"]},
        },
    })
}

/// A folder with `mapwright.toml` for cannon on the paper's machine, and a
/// server started on it with `settings`.
fn start(name: &str, settings: Value) -> (Server, TempDir, String) {
    let root = temp_dir(name);
    std::fs::write(
        root.join("mapwright.toml"),
        "app = \"cannon\"\nmachine = \"p100x4\"\n",
    )
    .unwrap();
    let s = Server::start_with(caps(), settings, Some(&root));
    let uri = file_uri(&root.join("cannon.mapper"));
    (s, root, uri)
}

/// The progress values of one kind (`begin`, `report`, `end`).
fn progress_of<'a>(values: &'a [Value], kind: &str) -> Vec<&'a Value> {
    values.iter().filter(|v| v["kind"] == kind).collect()
}

#[test]
fn optimize_reports_progress_and_applies_the_best_mapper_as_minimal_edits() {
    let (mut s, root, uri) = start("opt-apply", json!({"optimize": {"iterations": 3}}));
    // The resolution already knows why it fails.
    let diags = s.open(&uri, NAIVE);
    assert!(diags.iter().any(|d| d["code"] == "E0305"), "{diags:#?}");
    let id = s.send_request(
        "workspace/executeCommand",
        json!({"command": "mapwright.optimize", "arguments": [uri]}),
    );
    // The server creates a progress token, then reports on it.
    let create = s.wait_for("workDoneProgress/create", |m| {
        m["method"] == "window/workDoneProgress/create"
    });
    let token = create["params"]["token"].clone();
    let progress: Vec<Value> = s
        .progress_to_the_end(&token, lsp_support::TIMEOUT)
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    let begin = progress_of(&progress, "begin");
    assert_eq!(begin.len(), 1);
    let begin = begin[0];
    assert_eq!(begin["cancellable"], true);
    assert!(begin["message"]
        .as_str()
        .unwrap()
        .contains("search · 3 iterations · cannon on p100x4"));
    let reports = progress_of(&progress, "report");
    // The run of the mapper as written is reported at once; the steps that
    // follow within 100 ms of a report are folded into the next one (the
    // progress test below), but the final state is always reported.
    assert!((2..=5).contains(&reports.len()), "{reports:#?}");
    let first = reports[0]["message"].as_str().unwrap();
    assert_eq!(
        first,
        "running your mapper as written · nothing has run yet"
    );
    // Its result, where it was not folded into a later step.
    for r in &reports {
        let m = r["message"].as_str().unwrap();
        assert!(
            !m.starts_with("iteration 0/")
                || m.starts_with("iteration 0/3: cublas_illegal_parameter"),
            "{m}"
        );
    }
    let last = reports[reports.len() - 1]["message"].as_str().unwrap();
    // At or above the expert (the simulator's GEMM schedules let a mapper
    // without the expert's InstanceLimit beat it).
    let best: f64 = last
        .rsplit("best ")
        .next()
        .and_then(|b| b.trim_end_matches('x').parse().ok())
        .unwrap_or(0.0);
    assert!(last.contains("iteration 3/3") && best >= 0.995, "{last}");
    assert_eq!(reports[reports.len() - 1]["percentage"], 100);

    // One workspace edit, versioned, of minimal changes: an insertion.
    let apply = s.wait_for("workspace/applyEdit", |m| {
        m["method"] == "workspace/applyEdit"
    });
    let change = &apply["params"]["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"]["uri"], uri.as_str());
    assert_eq!(change["textDocument"]["version"], 1);
    let edits = change["edits"].as_array().unwrap();
    assert_eq!(edits.len(), 1, "{edits:#?}");
    assert_eq!(edits[0]["range"]["start"], edits[0]["range"]["end"]);
    let optimized = apply_edits(NAIVE, edits, s.encoding);
    // The user's lines are kept as they are; what they lack is added
    // after them as plain statements (no stacked tuned block).
    assert!(optimized.starts_with(NAIVE), "{optimized}");
    // One wildcard, not a task-specific line that repeats it.
    assert!(
        optimized.contains("\nLayout * * * SOA C_order;\n") && !optimized.contains("Layout task_4"),
        "{optimized}"
    );
    assert!(!optimized.contains("mapwright: tuned rules"), "{optimized}");

    let result = s.response(id).unwrap();
    assert_eq!(result["applied"], true, "{result:#}");
    assert!(
        result["best_normalized"].as_f64().unwrap() >= 0.99,
        "{result:#}"
    );
    assert!(result["best_iteration"].as_u64().unwrap() >= 1);
    assert!(result["summary"]
        .as_str()
        .unwrap()
        .starts_with("applied the best mapper"));
    let dir = result["report_dir"].as_str().unwrap();
    assert!(Path::new(dir).starts_with(root.join(".mapwright/runs")));
    assert!(Path::new(dir).join("report.json").is_file());
    let shown = s.wait_for("a message", |m| m["method"] == "window/showMessage");
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(message.contains("applied the best mapper"), "{message}");
    // Each changed statement with the decision it changes and its gain.
    assert!(
        message.contains(
            "Changes (gain when first made): line 3 `Layout * * * SOA C_order;`: layout of"
        ) && message.contains("made it run"),
        "{message}"
    );
    assert_eq!(result["verdict"]["apply"], true, "{result:#}");
    assert!(!result["change_lines"].as_array().unwrap().is_empty());

    // The editor applies the edit; the result resolves and runs.
    s.change_full(&uri, 2, &optimized);
    let diags = s.diagnostics(&uri, 2);
    assert!(diags.iter().all(|d| d["severity"] != 1), "{diags:#?}");
    let run = s.request(
        "workspace/executeCommand",
        json!({"command": "mapwright.run", "arguments": [uri]}),
    );
    assert_eq!(run["status"], "ok", "{run:#}");
    assert!(run["normalized"].as_f64().unwrap() >= 0.99, "{run:#}");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn a_gain_below_the_minimum_leaves_the_mapper_alone_with_a_message() {
    let root = temp_dir("opt-min-gain");
    std::fs::write(
        root.join("mapwright.toml"),
        "app = \"circuit\"\nmachine = \"p100x4\"\n",
    )
    .unwrap();
    let mut s = Server::start_with(
        caps(),
        json!({"optimize": {"iterations": 4, "saveRuns": false}}),
        Some(&root),
    );
    let uri = file_uri(&root.join("circuit.mapper"));
    // The README's circuit mapper: its ZCMEM lines are the expert's choice,
    // and moving them to FBMEM gains the simulator 0.03 %.
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/corpus/public/dslmapper-readme-circuit.mapper"),
    )
    .unwrap();
    s.open(&uri, &readme);
    let result = s.request(
        "workspace/executeCommand",
        json!({"command": "mapwright.optimize", "arguments": [uri]}),
    );
    assert_eq!(result["applied"], false, "{result:#}");
    assert_eq!(result["verdict"]["apply"], false, "{result:#}");
    let summary = result["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("no change worth applying: the best candidate is only +")
            && summary.contains("within the minimum gain of 2 %")
            && summary.contains("is in the command's result, to take by hand"),
        "{summary}"
    );
    assert_ne!(result["best_mapper"].as_str().unwrap(), readme);
    let shown = s.wait_for("a message", |m| m["method"] == "window/showMessage");
    assert_eq!(shown["params"]["type"], 3, "{shown:#}");
    assert!(shown["params"]["message"]
        .as_str()
        .unwrap()
        .contains("no change worth applying"));
    // Nothing was applied: the document is as the user wrote it.
    assert!(
        s.try_wait_for(std::time::Duration::from_millis(300), &|m| {
            m["method"] == "workspace/applyEdit"
        })
        .is_none(),
        "no edit is sent"
    );
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn progress_is_reported_at_most_ten_times_a_second_and_ends_on_the_final_state() {
    // Enough candidates, each a run of a program that prints its time at
    // once, proposed at random (the search and the simulator are slow in a
    // debug build), for the loop to run
    // much faster than 10 steps a second.
    const ITERATIONS: u64 = 60;
    let root =
        random_proposals_run_by("opt-rate", "cannon", "echo 'ELAPSED TIME = 1.0 s' {mapper}");
    let (mut s, id) = optimize_in_project(&root, ITERATIONS, "rate");
    // Every progress notification with the time it arrived.
    let seen = s.progress_to_the_end(&json!("rate"), std::time::Duration::from_secs(120));
    let result = s.response(id).unwrap();
    assert_eq!(result["candidates"], ITERATIONS, "{result:#}");
    assert_eq!(seen[0].1["kind"], "begin", "{seen:#?}");
    assert_eq!(seen[seen.len() - 1].1["kind"], "end");
    let reports: Vec<&(std::time::Instant, Value)> =
        seen.iter().filter(|(_, v)| v["kind"] == "report").collect();
    let elapsed = seen[seen.len() - 1].0 - seen[0].0;
    // The loop outran the limit, so unthrottled it would have sent more
    // than 10 reports a second (one per candidate and the mapper as
    // written).
    let steps_per_second = (ITERATIONS + 1) as f64 / elapsed.as_secs_f64();
    assert!(
        steps_per_second > 10.0,
        "the loop took {elapsed:?} for {ITERATIONS} candidates"
    );
    // No second holds more than 10 reports, counting the `end` (it waits
    // its turn after the last report too). The window is 0.9 s rather
    // than 1 s: reports 100 ms apart on the server can arrive a little
    // closer after the pipe and the scheduler.
    let paced: Vec<&(std::time::Instant, Value)> =
        seen.iter().filter(|(_, v)| v["kind"] != "begin").collect();
    for (i, (t, _)) in paced.iter().enumerate() {
        let in_window = paced[i..]
            .iter()
            .take_while(|(u, _)| *u - *t < std::time::Duration::from_millis(900))
            .count();
        assert!(
            in_window <= 10,
            "{in_window} reports within 0.9 s ({} reports in {elapsed:?})",
            reports.len()
        );
    }
    // The first step is reported at once and the final state is kept.
    let message = |r: &(std::time::Instant, Value)| r.1["message"].as_str().unwrap().to_string();
    assert!(
        message(reports[0]).starts_with("running your mapper as written"),
        "{}",
        message(reports[0])
    );
    // The bar keeps room for the 4 runs that would confirm a gain on this
    // measuring backend (the mapper as written and the best candidate, 2
    // more each); every candidate measures the same here, so none is a
    // gain and the bar stops short of them.
    let last = reports[reports.len() - 1];
    assert!(
        message(last).starts_with(&format!("iteration {ITERATIONS}/{ITERATIONS}")),
        "{}",
        message(last)
    );
    assert_eq!(
        last.1["percentage"],
        (ITERATIONS + 1) * 100 / (ITERATIONS + 1 + 4)
    );
    assert!(
        !seen.iter().any(|(_, v)| v["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("confirming"))),
        "{seen:#?}"
    );
    assert!(
        (reports.len() as u64) < ITERATIONS / 2,
        "{} reports for {ITERATIONS} candidates",
        reports.len()
    );
    assert_eq!(s.shutdown(), Some(0));
}

/// On a measuring backend the mapper as written and the best candidate run
/// again before the best is applied; progress shows those runs, the last
/// state kept, and the bar counts them.
/// Optimizes `circuit.mapper` (every task on a CPU) in `root` for
/// `iterations`, following the progress under `token` to its end: the
/// server, the progress reports and the command's result.
fn optimize_circuit_watching(
    root: &Path,
    iterations: u64,
    token: &str,
) -> (Server, Vec<Value>, Value) {
    let mut s = Server::start_with(
        caps(),
        json!({"optimize": {"iterations": iterations, "saveRuns": false}}),
        Some(root),
    );
    let uri = file_uri(&root.join("circuit.mapper"));
    s.open(&uri, "# Every task on a CPU.\nTask * CPU;\n");
    let id = s.send_request(
        "workspace/executeCommand",
        json!({"command": "mapwright.optimize", "arguments": [uri],
               "workDoneToken": token}),
    );
    let reports: Vec<Value> = s
        .progress_to_the_end(&json!(token), std::time::Duration::from_secs(120))
        .into_iter()
        .map(|(_, v)| v)
        .filter(|v| v["kind"] == "report")
        .collect();
    let result = s.response(id).unwrap();
    // The bar never goes back.
    let bar: Vec<u64> = reports
        .iter()
        .map(|r| r["percentage"].as_u64().unwrap())
        .collect();
    assert!(bar.windows(2).all(|w| w[0] <= w[1]), "{bar:?}");
    (s, reports, result)
}

/// The program's time follows the mapper's length: the longer, the
/// faster (so a candidate that adds statements beats the two-line start).
const FASTER_WHEN_LONGER: &str = r#"echo \"ELAPSED TIME = $((100000 / $(wc -c < {mapper}))) s\""#;

#[test]
fn the_runs_that_confirm_a_gain_show_in_progress() {
    const ITERATIONS: u64 = 3;
    let root = random_proposals_run_by("opt-confirm", "circuit", FASTER_WHEN_LONGER);
    let (s, reports, result) = optimize_circuit_watching(&root, ITERATIONS, "confirm");
    let summary = result["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("medians of 3 runs"), "{result:#}");
    let last = &reports[reports.len() - 1];
    assert!(
        last["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("confirming 4/4: yours and the best run again")),
        "{reports:#?}"
    );
    assert_eq!(
        last["percentage"],
        (ITERATIONS + 4) * 100 / (ITERATIONS + 1 + 4)
    );
    assert_eq!(s.shutdown(), Some(0));
}

/// A real run takes seconds: while one runs, progress says which, where
/// it showed the last result as if nothing were under way. (Each run here
/// takes 0.4 s, longer than the 0.1 s between two reports.)
#[test]
fn each_candidate_shows_in_progress_while_it_runs() {
    const ITERATIONS: u64 = 2;
    let slow = format!("sleep 0.4; {FASTER_WHEN_LONGER}");
    let root = random_proposals_run_by("opt-running", "circuit", &slow);
    let (s, reports, result) = optimize_circuit_watching(&root, ITERATIONS, "running");
    assert!(result["summary"].is_string(), "{result:#}");
    let messages: Vec<&str> = reports
        .iter()
        .filter_map(|r| r["message"].as_str())
        .collect();
    assert!(
        messages[0].starts_with("running your mapper as written · nothing has run yet"),
        "{messages:#?}"
    );
    assert_eq!(reports[0]["percentage"], 0);
    let at = |prefix: &str| messages.iter().position(|m| m.starts_with(prefix));
    let mut shown = 0;
    for k in 1..=ITERATIONS {
        let result_at = at(&format!("iteration {k}/{ITERATIONS}:"));
        if let Some(running_at) = at(&format!("running candidate {k}/{ITERATIONS} · best ")) {
            shown += 1;
            assert!(result_at.is_none_or(|r| running_at < r), "{messages:#?}");
        }
    }
    // (A random proposal that breaks nothing runs; one that is not run
    // has no such message.)
    assert!(shown > 0, "{messages:#?}");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn an_edit_during_optimization_gets_the_result_as_a_new_document() {
    let (mut s, root, uri) = start(
        "opt-stale",
        json!({"optimize": {"iterations": 3, "delayMs": 400, "saveRuns": false}}),
    );
    s.open(&uri, NAIVE);
    let id = s.send_request(
        "workspace/executeCommand",
        json!({"command": "mapwright.optimize", "arguments": [{"uri": uri}]}),
    );
    s.wait_for("the first report", |m| {
        m["method"] == "$/progress" && m["params"]["value"]["kind"] == "report"
    });
    // The user types while the loop runs.
    let edited = format!("{NAIVE}# edited meanwhile\n");
    s.change_full(&uri, 2, &edited);
    let result = s.response(id).unwrap();
    assert_eq!(result["applied"], false, "{result:#}");
    let summary = result["summary"].as_str().unwrap();
    assert!(
        summary.contains("the mapper changed while the optimizer ran (version 1 -> 2)"),
        "{summary}"
    );
    let new_uri = file_uri(&root.join("cannon.optimized.mapper"));
    assert_eq!(result["new_document"], new_uri.as_str());
    assert_eq!(result["report_dir"], Value::Null);
    // The result arrives as a created file, not as an edit of the mapper.
    let apply = s.wait_for("workspace/applyEdit", |m| {
        m["method"] == "workspace/applyEdit"
    });
    let ops = apply["params"]["edit"]["documentChanges"]
        .as_array()
        .unwrap();
    assert_eq!(ops[0]["kind"], "create");
    assert_eq!(ops[0]["uri"], new_uri.as_str());
    assert_eq!(ops[1]["textDocument"]["uri"], new_uri.as_str());
    let text = ops[1]["edits"][0]["newText"].as_str().unwrap();
    assert_eq!(text, result["best_mapper"].as_str().unwrap());
    assert!(text.contains("Layout * * * SOA C_order;"), "{text}");
    let shown = s.wait_for("showDocument", |m| m["method"] == "window/showDocument");
    assert_eq!(shown["params"]["uri"], new_uri.as_str());
    let warning = s.wait_for("a warning", |m| {
        m["method"] == "window/showMessage" && m["params"]["type"] == 2
    });
    assert!(warning["params"]["message"]
        .as_str()
        .unwrap()
        .contains("changed while the optimizer ran"));
    // No edit ever targeted the mapper itself.
    let stray = s.try_wait_for(std::time::Duration::from_millis(300), &|m: &Value| {
        m["method"] == "workspace/applyEdit"
    });
    assert!(stray.is_none(), "{stray:#?}");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn cancelling_the_progress_stops_the_loop_and_leaves_the_mapper_alone() {
    let (mut s, _root, uri) = start(
        "opt-cancel",
        json!({"optimize": {"iterations": 50, "delayMs": 300, "saveRuns": false}}),
    );
    s.open(&uri, NAIVE);
    // The client supplies its own token (no create request then).
    let id = s.send_request(
        "workspace/executeCommand",
        json!({"command": "mapwright.optimize", "arguments": [uri],
               "workDoneToken": "client-token-7"}),
    );
    s.wait_for("the first report", |m| {
        m["method"] == "$/progress"
            && m["params"]["token"] == "client-token-7"
            && m["params"]["value"]["kind"] == "report"
    });
    s.notify(
        "window/workDoneProgress/cancel",
        json!({"token": "client-token-7"}),
    );
    let result = s.response(id).unwrap();
    assert_eq!(result["cancelled"], true, "{result:#}");
    assert_eq!(result["applied"], false);
    assert!(result["candidates"].as_u64().unwrap() < 50);
    assert!(result["summary"]
        .as_str()
        .unwrap()
        .starts_with("cancelled after"));
    let end = s.wait_for("the end of the progress", |m| {
        m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end"
    });
    assert!(end["params"]["value"]["message"]
        .as_str()
        .unwrap()
        .starts_with("cancelled"));
    assert!(s
        .try_wait_for(std::time::Duration::from_millis(300), &|m: &Value| {
            m["method"] == "workspace/applyEdit" || m["method"] == "window/workDoneProgress/create"
        })
        .is_none());
    // `$/cancelRequest` on the command request stops the loop too.
    let id = s.send_request(
        "workspace/executeCommand",
        json!({"command": "mapwright.optimize", "arguments": [uri],
               "workDoneToken": "client-token-8"}),
    );
    s.wait_for("the first report", |m| {
        m["method"] == "$/progress"
            && m["params"]["token"] == "client-token-8"
            && m["params"]["value"]["kind"] == "report"
    });
    s.notify("$/cancelRequest", json!({"id": id}));
    let err = s.response(id).unwrap_err();
    assert_eq!(err["code"], -32800, "{err}");
    let end = s.wait_for("the end of the cancelled progress", |m| {
        m["method"] == "$/progress"
            && m["params"]["token"] == "client-token-8"
            && m["params"]["value"]["kind"] == "end"
    });
    assert_eq!(end["params"]["value"]["message"], "cancelled");

    // The document is free again: a new (short) run starts right away.
    s.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"mapwright": {"optimize": {"iterations": 1, "delayMs": 0}}}}),
    );
    let result = s.request(
        "workspace/executeCommand",
        json!({"command": "mapwright.optimize", "arguments": [uri],
               "workDoneToken": "client-token-9"}),
    );
    assert_eq!(result["candidates"], 1, "{result:#}");
    assert_eq!(result["cancelled"], false);
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn run_shows_the_result_and_autoguide_feedback_until_the_next_edit() {
    let (mut s, _root, uri) = start("run", json!({}));
    s.open(&uri, NAIVE);
    let result = s.request(
        "workspace/executeCommand",
        json!({"command": "mapwright.run", "arguments": [uri]}),
    );
    assert_eq!(result["status"], "cublas_illegal_parameter", "{result:#}");
    assert_eq!(result["normalized"], Value::Null);
    assert!(result["summary"]
        .as_str()
        .unwrap()
        .starts_with("cannon on p100x4 (simulator): cublas_illegal_parameter"));
    let message = s.wait_for("a message", |m| m["method"] == "window/showMessage");
    assert_eq!(message["params"]["type"], 2);
    // AutoGuide's feedback is published with the version that ran.
    let msg = s.wait_for("autoguide diagnostics", |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["source"] == "autoguide"))
    });
    assert_eq!(msg["params"]["version"], 1);
    let diags = msg["params"]["diagnostics"].as_array().unwrap();
    let guide = diags.iter().find(|d| d["source"] == "autoguide").unwrap();
    assert_eq!(guide["severity"], 1);
    // Its code (the rule) links to the rule's section of the rules page,
    // which the server wrote out.
    let rule = guide["code"].as_str().unwrap();
    let href = guide["codeDescription"]["href"].as_str().unwrap();
    let (page, anchor) = href.split_once('#').unwrap();
    assert_eq!(anchor, rule, "{href}");
    let page = page.strip_prefix("file://").unwrap();
    let page = std::fs::read_to_string(page).unwrap();
    assert!(page.contains(&format!("\n## {rule}\n")), "{href}");
    let text = guide["message"].as_str().unwrap();
    assert!(
        text.contains("Explain:") && text.contains("Suggest:"),
        "{text}"
    );
    // Its edit is a quick fix.
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": guide["range"],
               "context": {"diagnostics": [guide], "only": ["quickfix"]}}),
    );
    let fix = &actions[0];
    assert!(fix["title"].as_str().unwrap().starts_with("AutoGuide: "));
    let edits = fix["edit"]["changes"][uri.as_str()].as_array().unwrap();
    let repaired = apply_edits(NAIVE, edits, s.encoding);
    assert_ne!(repaired, NAIVE);

    // The next edit drops the feedback; the repaired mapper gets further
    // (its instances no longer fit in the GPUs' memory) and new feedback.
    s.change_full(&uri, 2, &repaired);
    let diags = s.diagnostics(&uri, 2);
    assert!(
        diags.iter().all(|d| d["source"] != "autoguide"),
        "{diags:#?}"
    );
    let result = s.request(
        "workspace/executeCommand",
        json!({"command": "mapwright.run", "arguments": [uri]}),
    );
    assert_eq!(result["status"], "out_of_memory", "{result:#}");
    assert_eq!(result["feedback"][0]["rule"], "out-of-memory");
    let msg = s.wait_for("new autoguide diagnostics", |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["version"] == 2
            && m["params"]["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["code"] == "out-of-memory"))
    });
    assert!(msg["params"]["diagnostics"].is_array());
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn run_uses_a_remote_runtime_from_the_settings() {
    // `mapwright serve` on a free port; its first line says where.
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_mapwright-under-test"));
    command.args(["serve", "--bind", "127.0.0.1:0"]);
    let (mut serve, url, _) = start_serve(command);
    let (mut s, _root, uri) = start("run-remote", json!({"runtimeUrl": url}));
    s.open(&uri, NAIVE);
    let result = s.request(
        "workspace/executeCommand",
        json!({"command": "mapwright.run", "arguments": [uri]}),
    );
    let _ = serve.kill();
    let _ = serve.wait();
    assert_eq!(result["status"], "cublas_illegal_parameter", "{result:#}");
    assert!(
        result["summary"]
            .as_str()
            .unwrap()
            .contains(&format!("cannon on p100x4 ({url})")),
        "{result:#}"
    );
    assert_eq!(s.shutdown(), Some(0));
}

/// Cancelling an optimize that runs the user's program (`runtime =
/// "command"`) kills the program under way, its whole process group, not
/// only the loop after it: the result comes back at once, the program's
/// child process is gone, and the mapper file is left alone.
#[test]
fn cancelling_kills_the_users_program_under_way() {
    let root = temp_dir("opt-cancel-command");
    let started = root.join("started");
    // The program: a child that would sleep a minute, its pid written
    // down; killed, it never prints its time.
    std::fs::write(
        root.join("mapwright.toml"),
        format!(
            "app = \"cannon\"\nmachine = \"p100x4\"\nruntime = \"command\"\n[command]\n\
             template = \"sleep 60 & echo $! > {} ; wait ; echo 'ELAPSED TIME = 1.0 s' {{mapper}}\"\n",
            started.display()
        ),
    )
    .unwrap();
    let (mut s, id) = optimize_in_project(&root, 3, "kill-it");
    let t0 = std::time::Instant::now();
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&started)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(t0.elapsed().as_secs() < 60, "the program never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    let cancelled_at = std::time::Instant::now();
    s.notify(
        "window/workDoneProgress/cancel",
        json!({"token": "kill-it"}),
    );
    let result = s.response(id).unwrap();
    assert!(
        cancelled_at.elapsed().as_secs() < 20,
        "the loop waited for the program: {:?}",
        cancelled_at.elapsed()
    );
    assert_eq!(result["cancelled"], true, "{result:#}");
    assert_eq!(result["applied"], false);
    // The sleeping child went with its process group (a zombie at most
    // until init reaps it).
    let gone = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|st| st.split_whitespace().nth(2) == Some("Z"))
            .unwrap_or(true)
    };
    let t1 = std::time::Instant::now();
    while !gone(pid) && t1.elapsed().as_secs() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(gone(pid), "the program's child {pid} still runs");
    assert!(!root.join("cannon.mapper").exists(), "nothing written");
    assert_eq!(s.shutdown(), Some(0));
}

/// Starts a server on the project `root` (its `mapwright.toml` written),
/// opens the naive mapper as `root/cannon.mapper` and asks for an optimize
/// of `iterations` candidates (no run folder), reporting progress under
/// `token`: the server and the request's id.
/// A project folder (`name`) for `app` on p100x4 whose candidates are
/// proposed at random and run by `template` (the command runtime).
fn random_proposals_run_by(name: &str, app: &str, template: &str) -> TempDir {
    let root = temp_dir(name);
    std::fs::write(
        root.join("mapwright.toml"),
        format!(
            "app = \"{app}\"\nmachine = \"p100x4\"\nproposer = \"random\"\nruntime = \"command\"\n\
             [command]\ntemplate = \"{template}\"\n"
        ),
    )
    .unwrap();
    root
}

fn optimize_in_project(root: &Path, iterations: u64, token: &str) -> (Server, i64) {
    let mut s = Server::start_with(
        caps(),
        json!({"optimize": {"iterations": iterations, "saveRuns": false}}),
        Some(root),
    );
    let uri = file_uri(&root.join("cannon.mapper"));
    s.open(&uri, NAIVE);
    let id = s.send_request(
        "workspace/executeCommand",
        json!({"command": "mapwright.optimize", "arguments": [uri],
               "workDoneToken": token}),
    );
    (s, id)
}
