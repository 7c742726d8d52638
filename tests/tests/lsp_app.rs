//! `mapwright lsp` end to end, aware of the application and machine named
//! by `mapwright.toml` (or the settings): diagnostics from the mapping
//! resolution (with related information and verified quick fixes), reloaded
//! when the project file changes; task and region completion from the
//! application; hover with machine-model sizes, task details and launch
//! distributions; inlay hints; code lenses; source actions; explain.

mod lsp_support;

use lsp_support::*;
use serde_json::{json, Value};

fn by_code<'a>(diags: &'a [Value], code: &str) -> &'a Value {
    diags
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {diags:#?}"))
}

fn project(name: &str, toml: &str) -> TempDir {
    let root = temp_dir(name);
    std::fs::write(root.join("mapwright.toml"), toml).unwrap();
    root
}

#[test]
fn diagnostics_come_from_the_mapping_resolution_with_related_information_and_fixes() {
    let root = project(
        "app-diagnostics",
        "app = \"circuit\"\nmachine = \"p100x4\"\n",
    );
    let mut s = Server::start_with(json!({}), Value::Null, Some(&root));
    let uri = file_uri(&root.join("circuit.mapper"));
    let text = CIRCUIT_MAPPER;
    let diags = s.open(&uri, text);

    let task = by_code(&diags, "W0309");
    assert_eq!(task["source"], "mapwright");
    assert_eq!(task["severity"], 2);
    assert!(task["message"]
        .as_str()
        .unwrap()
        .contains("application `circuit` has no task `calculate_new_curents`"));
    assert_eq!(
        s.quick_fixes(&uri, task)[0]["title"],
        "use `calculate_new_currents`"
    );
    let region = by_code(&diags, "W0310");
    assert_eq!(s.quick_fixes(&uri, region)[0]["title"], "use `rp_shared`");

    // Related information points at the other statement.
    let layouts = by_code(&diags, "W0306");
    let related = layouts["relatedInformation"].as_array().unwrap();
    assert!(!related.is_empty(), "{layouts:#}");
    assert_eq!(related[0]["location"]["uri"], uri.as_str());
    let lines: Vec<u64> = [
        &layouts["range"]["start"],
        &related[0]["location"]["range"]["start"],
    ]
    .iter()
    .map(|p| p["line"].as_u64().unwrap())
    .collect();
    assert!(lines.contains(&3) && lines.contains(&4), "{lines:?}");

    let off = by_code(&diags, "E0301");
    assert_eq!(off["severity"], 1);
    assert!(off["relatedInformation"].is_array(), "{off:#}");
    assert!(s.quick_fixes(&uri, off)[0]["title"]
        .as_str()
        .unwrap()
        .contains("% m.size[1]"));

    // The quick fix for the misspelt task, through codeAction.
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": task["range"],
               "context": {"diagnostics": [task], "only": ["quickfix"]}}),
    );
    let fix = &actions[0];
    assert_eq!(fix["title"], "use `calculate_new_currents`");
    let edits = fix["edit"]["changes"][uri.as_str()].as_array().unwrap();
    let fixed = apply_edits(text, edits, s.encoding);
    assert!(fixed.contains("Task calculate_new_currents GPU;"));
    s.change_full(&uri, 2, &fixed);
    let diags = s.diagnostics(&uri, 2);
    assert!(diags.iter().all(|d| d["code"] != "W0309"), "{diags:#?}");
    assert!(diags.iter().any(|d| d["code"] == "W0310"));

    // The project file changes: the application is reloaded.
    std::fs::write(root.join("mapwright.toml"), "app = \"stencil\"\n").unwrap();
    s.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&root.join("mapwright.toml")), "type": 2}]}),
    );
    let msg = s.wait_for("diagnostics against stencil", |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri.as_str()
            && m["params"]["diagnostics"].as_array().is_some_and(|d| {
                d.iter().any(|d| {
                    d["message"]
                        .as_str()
                        .unwrap_or("")
                        .contains("application `stencil` has no task `calculate_new_currents`")
                })
            })
    });
    assert_eq!(msg["params"]["version"], 2);

    // An unknown application is reported once, on the first character.
    std::fs::write(root.join("mapwright.toml"), "app = \"nope\"\n").unwrap();
    s.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&root.join("mapwright.toml")), "type": 2}]}),
    );
    let msg = s.wait_for("a project problem", |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["code"] == "project"))
    });
    let problem = by_code(msg["params"]["diagnostics"].as_array().unwrap(), "project");
    assert!(problem["message"]
        .as_str()
        .unwrap()
        .contains("unknown application `nope`"));
    assert_eq!(
        problem["relatedInformation"][0]["location"]["uri"],
        file_uri(&root.join("mapwright.toml")).as_str()
    );
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn an_application_description_file_is_reloaded_when_it_changes() {
    let root = project("app-file", "app = \"app.json\"\n");
    let builtin =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/apps/stencil.json");
    let original = std::fs::read_to_string(builtin).unwrap();
    let app_file = root.join("app.json");
    std::fs::write(&app_file, &original).unwrap();
    let mut s = Server::start_with(json!({}), Value::Null, Some(&root));
    let uri = file_uri(&root.join("stencil.mapper"));
    let diags = s.open(&uri, "Task stencil GPU;\n");
    assert!(diags.iter().all(|d| d["code"] != "W0309"), "{diags:#?}");

    // The task is renamed in the description; the watcher reports it.
    let renamed = original.replace("\"stencil\"", "\"stencil_kernel\"");
    assert_ne!(renamed, original, "the description names the task");
    std::fs::write(&app_file, &renamed).unwrap();
    s.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&app_file), "type": 2}]}),
    );
    s.wait_for("the renamed task reported", |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["diagnostics"].as_array().is_some_and(|d| {
                d.iter().any(|d| {
                    d["code"] == "W0309"
                        && d["message"]
                            .as_str()
                            .unwrap_or("")
                            .contains("no task `stencil`")
                })
            })
    });

    // Without a watcher notification (clients that have none) the change is
    // seen at the next edit.
    std::fs::write(&app_file, &original).unwrap();
    s.change_full(&uri, 2, "Task stencil GPU;\n# edited\n");
    let diags = s.diagnostics(&uri, 2);
    assert!(diags.iter().all(|d| d["code"] != "W0309"), "{diags:#?}");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn a_description_file_created_after_the_project_names_it_is_loaded() {
    let root = project("app-file-later", "app = \"later.json\"\n");
    let mut s = Server::start_with(json!({}), Value::Null, Some(&root));
    let uri = file_uri(&root.join("stencil.mapper"));
    let diags = s.open(&uri, "Task stencil GPU;\n");
    assert!(diags.iter().any(|d| d["code"] == "project"), "{diags:#?}");
    let builtin =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/apps/stencil.json");
    let later = root.join("later.json");
    std::fs::copy(builtin, &later).unwrap();
    s.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&later), "type": 1}]}),
    );
    s.wait_for("the project problem gone", |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().all(|d| d["code"] != "project"))
    });
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn completion_offers_task_and_region_names_from_the_application() {
    let root = project("app-completion", "app = \"circuit\"\n");
    let mut s = Server::start_with(json!({}), Value::Null, Some(&root));
    let uri = file_uri(&root.join("c.mapper"));
    let text = "Task * GPU;\nIndexTaskMap ";
    s.open(&uri, text);
    let result = s.request("textDocument/completion", s.at(&uri, text, text.len()));
    let item = completion_item(&result, "calculate_new_currents");
    let detail = item["detail"].as_str().unwrap();
    assert!(
        detail.contains("index launch (4)")
            && detail.contains("GPU")
            && detail.contains("regions: rp_private, rp_shared"),
        "{detail}"
    );
    assert!(item["documentation"]["value"]
        .as_str()
        .unwrap()
        .contains("| 0 | `rp_private` | read |"));
    // A single launch is offered last: IndexTaskMap would not apply to it.
    let single = completion_item(&result, "toplevel");
    assert!(single["detail"]
        .as_str()
        .unwrap()
        .contains("does not apply"));

    // Region names of the statement's task, after the task field.
    let text2 = "Region update_voltages ";
    s.change_full(&uri, 2, text2);
    let result = s.request("textDocument/completion", s.at(&uri, text2, text2.len()));
    let labels = completion_labels(&result);
    for name in ["rp_private", "rp_shared", "rp_times", "*"] {
        assert!(labels.contains(&name.to_string()), "{name}: {labels:?}");
    }
    assert!(!labels.contains(&"rp_wires".to_string()), "{labels:?}");
    let item = completion_item(&result, "rp_times");
    assert!(item["detail"]
        .as_str()
        .unwrap()
        .contains("argument 4 of update_voltages"));

    // The third field of a Region statement still offers processor kinds.
    let text3 = "Region * rp_private ";
    s.change_full(&uri, 3, text3);
    let result = s.request("textDocument/completion", s.at(&uri, text3, text3.len()));
    let labels = completion_labels(&result);
    assert!(labels.contains(&"GPU".to_string()));
    assert!(!labels.contains(&"calculate_new_currents".to_string()));
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn hover_inlay_hints_lenses_actions_and_explain_know_the_machine() {
    // No project file: the settings name the application and machine.
    let dir = temp_dir("app-hover");
    let uri = file_uri(&dir.join("h.mapper"));
    let mut s = Server::start_with(
        json!({"window": {"showDocument": {"support": true}}}),
        json!({"app": "circuit", "machine": "2x4gpu"}),
        None,
    );
    let text = "Task * GPU,CPU;
m_2d = Machine(GPU);
m_3d = m_2d.split(1, 2);
def f(Task task) {
    return m_2d[task.ipoint[0] / m_2d.size[1], task.ipoint[0] % m_2d.size[1]];
}
IndexTaskMap calculate_new_currents,update_voltages f;
";
    let diags = s.open(&uri, text);
    assert!(
        diags.iter().all(|d| d["severity"] != 1),
        "unexpected errors: {diags:#?}"
    );
    let hover = |s: &mut Server, needle: &str| -> String {
        let at = text.find(needle).unwrap() + 1;
        let h = s.request("textDocument/hover", s.at(&uri, text, at));
        h["contents"]["value"].as_str().unwrap_or("").to_string()
    };
    let h = hover(&mut s, "m_3d =");
    assert!(
        h.contains("`m_3d: MSpace, 3 dims, size (2,2,2)` on machine `2x4gpu`"),
        "{h}"
    );
    let h = hover(&mut s, "m_2d[");
    assert!(h.contains("size (2,4)"), "{h}");
    let h = hover(&mut s, "update_voltages f");
    assert!(h.contains("index launch over (4)"), "{h}");
    assert!(h.contains("variants: CPU, GPU"), "{h}");
    assert!(h.contains("runs on **GPU**"), "{h}");
    assert!(
        h.contains("| 4 | `rp_times`, `all_times` | read_write | FBMEM (default) |"),
        "{h}"
    );
    let h = hover(&mut s, "IndexTaskMap");
    assert!(h.contains("**calculate_new_currents**"), "{h}");
    assert!(
        h.contains("4 points on 4 of 8 GPU processor(s), 1 per processor"),
        "{h}"
    );
    assert!(h.contains("(3) → 0,3"), "{h}");

    let hints = s.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": range(text, 0, text.len(), s.encoding)}),
    );
    let labels: Vec<&str> = hints
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["kind"] == 1)
        .map(|h| h["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [": (2,4)", ": (2,2,2)", "4 pts: 1/GPU on 4 of 8 GPUs"]
    );

    let lenses = s.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let commands: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        commands,
        ["mapwright.optimize", "mapwright.run", "mapwright.explain"]
    );
    assert_eq!(
        lenses[0]["range"]["start"],
        json!({"line": 0, "character": 0})
    );

    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(text, 0, 0, s.encoding),
               "context": {"diagnostics": [], "only": ["source"]}}),
    );
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&"Explain mapping decisions"), "{titles:?}");
    assert!(titles.contains(&"Optimize this mapper"), "{titles:?}");
    let explain = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Explain mapping decisions")
        .unwrap();
    assert_eq!(explain["kind"], "source.explainMapping");
    let command = explain["command"].clone();

    // Run the action's command: the text comes back and is shown.
    let result = s.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    let text_out = result["text"].as_str().unwrap();
    assert!(
        text_out.contains("application `circuit` on machine `2x4gpu`"),
        "{text_out}"
    );
    assert!(
        text_out.contains("task calculate_new_currents"),
        "{text_out}"
    );
    let shown = s.wait_for("showDocument", |m| m["method"] == "window/showDocument");
    let shown_uri = shown["params"]["uri"].as_str().unwrap();
    assert!(
        shown_uri.ends_with(".mapwright/h.explain.txt"),
        "{shown_uri}"
    );
    let path = shown_uri.strip_prefix("file://").unwrap();
    assert_eq!(std::fs::read_to_string(path).unwrap(), text_out);

    // The editors' form (a bare URI) only returns the text.
    let result = s.request(
        "workspace/executeCommand",
        json!({"command": "mapwright.explain", "arguments": [uri]}),
    );
    assert_eq!(result["text"].as_str().unwrap(), text_out);
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn capabilities_advertise_the_commands_code_lenses_and_source_actions() {
    let mut s = Server::spawn();
    let r = s.request("initialize", json!({"processId": null, "capabilities": {}}));
    let caps = &r["capabilities"];
    assert_eq!(
        caps["executeCommandProvider"]["commands"],
        json!(["mapwright.optimize", "mapwright.run", "mapwright.explain"])
    );
    assert_eq!(caps["executeCommandProvider"]["workDoneProgress"], true);
    assert!(caps["codeLensProvider"].is_object());
    let kinds = caps["codeActionProvider"]["codeActionKinds"]
        .as_array()
        .unwrap();
    for k in ["source.explainMapping", "source.optimizeMapper"] {
        assert!(kinds.contains(&json!(k)), "{k}: {kinds:?}");
    }
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn commands_without_an_application_fail_cleanly() {
    let mut s = Server::start();
    let uri = doc_uri("app-none");
    s.open(&uri, "Task * GPU;\n");
    let lenses = s.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(lenses, Value::Null);
    for command in ["mapwright.explain", "mapwright.run", "mapwright.optimize"] {
        let err = s
            .try_request(
                "workspace/executeCommand",
                json!({"command": command, "arguments": [uri]}),
            )
            .unwrap_err();
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .contains("no application is configured"),
            "{command}: {err}"
        );
    }
    let err = s
        .try_request(
            "workspace/executeCommand",
            json!({"command": "mapwright.run", "arguments": [42]}),
        )
        .unwrap_err();
    assert_eq!(err["code"], -32602);
    // The server is still serving.
    assert!(s
        .request("textDocument/hover", s.at(&uri, "Task * GPU;\n", 1))
        .is_object());
    assert_eq!(s.shutdown(), Some(0));
}

/// The cannon expert mapper with `Layout * * * SOA F_order;`: cuBLAS rejects
/// `task_4`'s layouts (E0305). The verified fix (one word of the deciding
/// statement, issue 39) changes nothing but the repaired layout-cache
/// entry, so it is safe: the quick fix is preferred and
/// `source.fixAll.mapwright` applies it.
#[test]
fn a_layout_fix_that_changes_nothing_else_is_preferred_and_in_fix_all() {
    let root = project("app-layout-fix", "app = \"cannon\"\nmachine = \"p100x4\"\n");
    let mut s = Server::start_with(json!({}), Value::Null, Some(&root));
    let uri = file_uri(&root.join("cannon.mapper"));
    let expert = mapwright_runtime::app::expert_mapper_text("cannon").expect("cannon expert");
    let text = expert.replace("Layout * * * SOA C_order;", "Layout * * * SOA F_order;");
    assert_ne!(text, expert);
    let diags = s.open(&uri, &text);
    let layout = by_code(&diags, "E0305");
    assert!(
        layout["message"]
            .as_str()
            .unwrap()
            .contains("cuBLAS needs C_order"),
        "{layout:#}"
    );
    let fixes = s.quick_fixes(&uri, layout);
    assert_eq!(fixes.len(), 1, "{fixes:#?}");
    assert_eq!(fixes[0]["isPreferred"], true, "{fixes:#?}");
    assert!(
        fixes[0]["title"]
            .as_str()
            .unwrap()
            .starts_with("change `F_order` to `C_order` in `Layout * * * SOA F_order;`"),
        "{fixes:#?}"
    );
    let fix_edits = fixes[0]["edit"]["changes"][uri.as_str()].clone();

    let edits = s.fix_all_edits(&uri, &text);
    // Fix-all carries the layout fix's edit.
    for e in fix_edits.as_array().unwrap() {
        assert!(edits.contains(e), "{e:#} not in {edits:#?}");
    }
    let fixed = apply_edits(&text, &edits, s.encoding);
    assert!(
        fixed.contains("\nLayout * * * SOA C_order; # Align==128 Compact\n"),
        "{fixed}"
    );
    s.change_full(&uri, 2, &fixed);
    let after = s.diagnostics(&uri, 2);
    assert!(after.iter().all(|d| d["code"] != "E0305"), "{after:#?}");
    assert!(after.iter().all(|d| d["severity"] != 1), "{after:#?}");
    assert_eq!(s.shutdown(), Some(0));
}
