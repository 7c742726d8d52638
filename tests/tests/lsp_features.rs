//! `mapwright lsp` end to end: completion, hover, signature help,
//! navigation and rename, symbols, folding, semantic tokens, inlay hints.

mod lsp_support;

use lsp_support::*;
use mapwright_grammar::line_index::Encoding;
use serde_json::{json, Value};

/// A clean mapper (no diagnostics) used by most tests.
const MAPPER: &str = "# Circuit mapper — é 😀\n# second comment line\nTask * GPU,CPU;\nRegion * rp_shared GPU ZCMEM;\nLayout * * * SOA C_order;\n\nmgpu = Machine(GPU);\n\ndef linear(Task task) {\n    ip = task.ipoint;\n    m2 = mgpu.split(0, 2);\n    return m2[ip[0] % m2.size[0], 0, 0];\n}\n\nIndexTaskMap calc_currents linear;\nTask calc_currents GPU;\n";

fn at(word: &str) -> usize {
    MAPPER
        .find(word)
        .unwrap_or_else(|| panic!("`{word}` not in the mapper"))
}

fn open_mapper(s: &mut Server, name: &str) -> String {
    let uri = doc_uri(name);
    let diags = s.open(&uri, MAPPER);
    assert!(diags.is_empty(), "the fixture should be clean: {diags:#?}");
    uri
}

/// Completion labels with `text` inserted at the end of a fresh document.
fn complete_after(s: &mut Server, uri: &str, version: i64, text: &str) -> Value {
    s.change_full(uri, version, text);
    s.request("textDocument/completion", s.at(uri, text, text.len()))
}

#[test]
fn completion_is_context_aware() {
    let mut s = Server::start();
    let uri = open_mapper(&mut s, "completion");
    let base = MAPPER;

    // Statement start: snippets with a `(Task task)` skeleton for def.
    let r = complete_after(&mut s, &uri, 2, &format!("{base}\n"));
    let labels = completion_labels(&r);
    for kw in [
        "Task",
        "Region",
        "Layout",
        "IndexTaskMap",
        "SingleTaskMap",
        "InstanceLimit",
        "CollectMemory",
        "ControlReplicate",
        "def",
    ] {
        assert!(labels.contains(&kw.to_string()), "{kw} missing: {labels:?}");
    }
    let def = completion_item(&r, "def");
    assert_eq!(def["insertTextFormat"], 2, "snippet");
    assert!(def["textEdit"]["newText"]
        .as_str()
        .unwrap()
        .contains("(Task ${2:task})"));

    // Region's 4th field: processor kinds; its 5th: memory kinds.
    let labels = completion_labels(&complete_after(
        &mut s,
        &uri,
        3,
        &format!("{base}Region * rp_shared "),
    ));
    assert!(
        labels.contains(&"GPU".to_string()) && !labels.contains(&"FBMEM".to_string()),
        "{labels:?}"
    );
    let labels = completion_labels(&complete_after(
        &mut s,
        &uri,
        4,
        &format!("{base}Region * rp_shared GPU "),
    ));
    assert!(
        labels.contains(&"FBMEM".to_string()) && !labels.contains(&"GPU".to_string()),
        "{labels:?}"
    );
    // The region field offers region names from the file.
    let labels = completion_labels(&complete_after(
        &mut s,
        &uri,
        5,
        &format!("{base}Region * "),
    ));
    assert!(labels.contains(&"rp_shared".to_string()), "{labels:?}");
    // Layout's 4th field: memory kinds; after it: constraints.
    let labels = completion_labels(&complete_after(
        &mut s,
        &uri,
        6,
        &format!("{base}Layout * * "),
    ));
    assert!(
        labels.contains(&"FBMEM".to_string()) && !labels.contains(&"GPU".to_string()),
        "{labels:?}"
    );
    let labels = completion_labels(&complete_after(
        &mut s,
        &uri,
        7,
        &format!("{base}Layout * * FBMEM SOA "),
    ));
    for c in ["AOS", "C_order", "F_order", "Compact", "Exact", "Align"] {
        assert!(labels.contains(&c.to_string()), "{c} missing: {labels:?}");
    }
    // Task names known to the file; functions for IndexTaskMap.
    let labels = completion_labels(&complete_after(&mut s, &uri, 8, &format!("{base}Task ")));
    assert!(labels.contains(&"calc_currents".to_string()), "{labels:?}");
    let labels = completion_labels(&complete_after(
        &mut s,
        &uri,
        9,
        &format!("{base}IndexTaskMap calc_currents "),
    ));
    assert_eq!(labels, ["linear"]);

    // `task.` properties, with docs; machine methods after an MSpace.
    let body = base.replace("    return m2", "    x = task.\n    return m2");
    let cut = body.find("task.\n").unwrap() + 5;
    s.change_full(&uri, 10, &body);
    let r = s.request("textDocument/completion", s.at(&uri, &body, cut));
    let mut labels = completion_labels(&r);
    labels.sort();
    assert_eq!(labels, ["ipoint", "ispace", "parent", "processor"]);
    let ipoint = completion_item(&r, "ipoint");
    assert!(ipoint["documentation"]["value"]
        .as_str()
        .unwrap()
        .contains("launch point"));
    let body = base.replace("    return m2", "    x = mgpu.\n    return m2");
    let cut = body.find("mgpu.\n").unwrap() + 5;
    s.change_full(&uri, 11, &body);
    let r = s.request("textDocument/completion", s.at(&uri, &body, cut));
    let labels = completion_labels(&r);
    assert!(labels.contains(&"split".to_string()) && labels.contains(&"size".to_string()));
    assert!(!labels.contains(&"ipoint".to_string()));
    let split = completion_item(&r, "split");
    assert_eq!(split["textEdit"]["newText"], "split(${1:dim}, ${2:factor})");

    // Names in scope inside a function: globals, functions, params, locals.
    let body = base.replace("    return m2", "    y = m\n    return m2");
    let cut = body.find("y = m\n").unwrap() + 5;
    s.change_full(&uri, 12, &body);
    let r = s.request("textDocument/completion", s.at(&uri, &body, cut));
    let labels = completion_labels(&r);
    for n in ["mgpu", "m2", "ip", "task", "linear", "Machine"] {
        assert!(labels.contains(&n.to_string()), "{n} missing: {labels:?}");
    }
    // The completion replaces the typed prefix `m`.
    let mgpu = completion_item(&r, "mgpu");
    let range = &mgpu["textEdit"]["range"];
    assert_eq!(
        range["end"]["character"].as_u64().unwrap() - range["start"]["character"].as_u64().unwrap(),
        1
    );
    // Nothing in comments.
    let labels = completion_labels(&complete_after(&mut s, &uri, 13, &format!("{base}# Task ")));
    assert!(labels.is_empty(), "{labels:?}");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn completion_without_snippets_inserts_plain_text() {
    let mut s = Server::start_with(json!({}), json!({"completion": {"snippets": false}}), None);
    let uri = doc_uri("completion-plain");
    s.open(&uri, "");
    let r = s.request("textDocument/completion", s.at(&uri, "", 0));
    let task = completion_item(&r, "Task");
    assert_eq!(task["insertTextFormat"], 1);
    assert_eq!(task["textEdit"]["newText"], "Task ");
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn hover_documents_keywords_properties_and_names() {
    let mut s = Server::start();
    let uri = open_mapper(&mut s, "hover");
    let hover = |s: &mut Server, offset: usize| -> String {
        let r = s.request("textDocument/hover", s.at(&uri, MAPPER, offset));
        assert_eq!(r["contents"]["kind"], "markdown");
        r["contents"]["value"].as_str().unwrap().to_string()
    };
    assert!(hover(&mut s, at("Region") + 2).contains("Memory placement"));
    assert!(hover(&mut s, at("Layout") + 1).contains("*memory* kind"));
    assert!(hover(&mut s, at("ZCMEM") + 1).contains("zero-copy"));
    assert!(hover(&mut s, at("SOA") + 1).contains("Struct of arrays"));
    assert!(hover(&mut s, at("IndexTaskMap") + 1).contains("Index-launch placement"));
    assert!(hover(&mut s, at("def") + 1).contains("Defines a function"));
    let split = hover(&mut s, at("split") + 2);
    assert!(
        split.contains("split(int dim, int factor) -> MSpace"),
        "{split}"
    );
    assert!(hover(&mut s, at("ipoint") + 1).contains("launch point"));
    // Names: what they are, their definition, and their inferred type.
    let mgpu = hover(&mut s, at("mgpu.split") + 1);
    assert!(
        mgpu.contains("mgpu = Machine(GPU)") && mgpu.contains("global variable"),
        "{mgpu}"
    );
    assert!(mgpu.contains("MSpace"), "{mgpu}");
    let linear = hover(&mut s, at("linear;") + 1);
    assert!(
        linear.contains("def linear(Task task)")
            && linear.contains("IndexTaskMap calc_currents linear"),
        "{linear}"
    );
    let task = hover(&mut s, at("task.ipoint") + 1);
    assert!(
        task.contains("Task task") && task.contains("parameter of `linear`"),
        "{task}"
    );
    // The range is the word under the cursor, in UTF-16 after the emoji line.
    let r = s.request("textDocument/hover", s.at(&uri, MAPPER, at("ip[0]")));
    assert_eq!(r["range"]["start"]["line"], 11);
    // Nothing to say inside a comment.
    let r = s.request("textDocument/hover", s.at(&uri, MAPPER, at("Circuit")));
    assert_eq!(r, Value::Null);
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn signature_help_for_machine_methods_and_user_functions() {
    let mut s = Server::start();
    let uri = doc_uri("signature");
    let text = "mgpu = Machine(GPU);\ndef g(int a, Task t) { return a; }\nx = mgpu.slice(0, 1, ";
    s.open(&uri, text);
    let r = s.request("textDocument/signatureHelp", s.at(&uri, text, text.len()));
    let sig = &r["signatures"][0];
    assert_eq!(sig["label"], "slice(int dim, int lo, int hi) -> MSpace");
    assert_eq!(r["activeParameter"], 2);
    let label = sig["label"].as_str().unwrap();
    let p = &sig["parameters"][2]["label"];
    let (a, b) = (
        p[0].as_u64().unwrap() as usize,
        p[1].as_u64().unwrap() as usize,
    );
    assert_eq!(&label[a..b], "int hi");

    let text2 = "mgpu = Machine(GPU);\ndef g(int a, Task t) { return a; }\nx = g(mgpu.size[0], ";
    s.change_full(&uri, 2, text2);
    let r = s.request("textDocument/signatureHelp", s.at(&uri, text2, text2.len()));
    assert_eq!(r["signatures"][0]["label"], "g(int a, Task t)");
    assert_eq!(r["activeParameter"], 1);
    for (v, call) in [
        (3, "x = Machine("),
        (4, "x = mgpu.split(0, "),
        (5, "x = mgpu.merge("),
        (6, "x = mgpu.swap("),
        (7, "x = mgpu.reverse("),
        (8, "x = mgpu.balance_split("),
        (9, "x = mgpu.auto_split("),
        (10, "x = mgpu.greedy_split("),
        (11, "x = mgpu[0, 0].has("),
    ] {
        let t = format!("mgpu = Machine(GPU);\n{call}");
        s.change_full(&uri, v, &t);
        let r = s.request("textDocument/signatureHelp", s.at(&uri, &t, t.len()));
        assert!(
            !r["signatures"][0]["label"].is_null(),
            "no signature for {call}"
        );
    }
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn definition_references_highlight_and_rename() {
    let mut s = Server::start();
    let uri = open_mapper(&mut s, "navigation");
    let use_of = at("mgpu.split") + 2;
    // Definition of a global, from a use inside a function.
    let r = s.request("textDocument/definition", s.at(&uri, MAPPER, use_of));
    assert_eq!(r["uri"], uri.as_str());
    assert_eq!(
        r["range"],
        range(MAPPER, at("mgpu ="), at("mgpu =") + 4, Encoding::Utf16)
    );
    // The function named by IndexTaskMap.
    let r = s.request("textDocument/definition", s.at(&uri, MAPPER, at("linear;")));
    assert_eq!(
        r["range"]["start"],
        pos(MAPPER, at("linear("), Encoding::Utf16)
    );

    let mut params = s.at(&uri, MAPPER, use_of);
    params["context"] = json!({"includeDeclaration": true});
    let refs = s.request("textDocument/references", params.clone());
    assert_eq!(refs.as_array().unwrap().len(), 2);
    params["context"] = json!({"includeDeclaration": false});
    let refs = s.request("textDocument/references", params);
    assert_eq!(refs.as_array().unwrap().len(), 1);
    // Task names: references across mapping statements.
    let mut params = s.at(&uri, MAPPER, at("calc_currents"));
    params["context"] = json!({"includeDeclaration": true});
    assert_eq!(
        s.request("textDocument/references", params)
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Highlight: the definition writes, the uses read.
    let hs = s.request(
        "textDocument/documentHighlight",
        s.at(&uri, MAPPER, at("m2 =")),
    );
    let kinds: Vec<i64> = hs
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_i64().unwrap())
        .collect();
    assert_eq!(kinds, [3, 2, 2], "write, read, read");

    // Rename a parameter: prepareRename gives the range and the name.
    let r = s.request(
        "textDocument/prepareRename",
        s.at(&uri, MAPPER, at("task.ipoint")),
    );
    assert_eq!(r["placeholder"], "task");
    let r = s.request(
        "textDocument/prepareRename",
        s.at(&uri, MAPPER, at("Region")),
    );
    assert_eq!(r, Value::Null, "keywords cannot be renamed");
    let mut params = s.at(&uri, MAPPER, at("task.ipoint"));
    params["newName"] = json!("t");
    let edit = s.request("textDocument/rename", params.clone());
    let edits = edit["changes"][uri.as_str()].as_array().unwrap();
    let renamed = apply_edits(MAPPER, edits, Encoding::Utf16);
    assert!(
        renamed.contains("def linear(Task t) {\n    ip = t.ipoint;"),
        "{renamed}"
    );
    assert!(renamed.contains("# Circuit mapper — é 😀"));
    // Invalid or clashing names are refused with a message.
    params["newName"] = json!("split");
    let err = s
        .try_request("textDocument/rename", params.clone())
        .unwrap_err();
    assert!(
        err["message"].as_str().unwrap().contains("reserved"),
        "{err}"
    );
    params["newName"] = json!("ip");
    let err = s.try_request("textDocument/rename", params).unwrap_err();
    assert!(
        err["message"].as_str().unwrap().contains("already defined"),
        "{err}"
    );
    // Rename a global used in a function.
    let mut params = s.at(&uri, MAPPER, at("mgpu ="));
    params["newName"] = json!("gpus");
    let edit = s.request("textDocument/rename", params);
    let renamed = apply_edits(
        MAPPER,
        edit["changes"][uri.as_str()].as_array().unwrap(),
        Encoding::Utf16,
    );
    assert!(renamed.contains("gpus = Machine(GPU);") && renamed.contains("m2 = gpus.split(0, 2);"));
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn document_and_workspace_symbols() {
    let mut s = Server::start();
    let uri = open_mapper(&mut s, "symbols");
    let other = doc_uri("symbols-other");
    s.open(&other, "mcpu = Machine(CPU);\ndef block(Task t) { return mcpu[t.ipoint[0], 0]; }\nIndexTaskMap init block;\n");
    let r = s.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    let names: Vec<&str> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Task * GPU,CPU",
            "Region * rp_shared GPU ZCMEM",
            "Layout * * * SOA C_order",
            "mgpu",
            "linear",
            "IndexTaskMap calc_currents linear",
            "Task calc_currents GPU"
        ]
    );
    let linear = &r[4];
    assert_eq!(linear["kind"], 12, "function");
    assert_eq!(linear["detail"], "def linear(Task task)");
    let kids: Vec<&str> = linear["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(kids, ["task", "ip", "m2"]);
    // Workspace symbols: functions and globals of every open document.
    let r = s.request("workspace/symbol", json!({"query": "lin"}));
    let found: Vec<&str> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["linear"]);
    let r = s.request("workspace/symbol", json!({"query": ""}));
    let mut found: Vec<&str> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    found.sort();
    assert_eq!(found, ["block", "linear", "mcpu", "mgpu"]);
    let block = r
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "block")
        .unwrap();
    assert_eq!(block["location"]["uri"], other.as_str());
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn folding_ranges_cover_bodies_and_comment_blocks() {
    let mut s = Server::start();
    let uri = open_mapper(&mut s, "folding");
    let r = s.request(
        "textDocument/foldingRange",
        json!({"textDocument": {"uri": uri}}),
    );
    let folds: Vec<(u64, u64, &str)> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["startLine"].as_u64().unwrap(),
                f["endLine"].as_u64().unwrap(),
                f["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(folds, [(0, 1, "comment"), (8, 11, "region")]);
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn semantic_tokens_full_and_delta() {
    let mut s = Server::start();
    let uri = open_mapper(&mut s, "semantic");
    let init_legend = {
        let mut s2 = Server::spawn();
        let r = s2.request("initialize", json!({"processId": null, "capabilities": {}}));
        r["capabilities"]["semanticTokensProvider"]["legend"]["tokenTypes"].clone()
    };
    let types: Vec<&str> = init_legend
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let full = s.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": uri}}),
    );
    let data: Vec<u64> = full["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(data.len() % 5, 0);
    // Decode: absolute positions and type names.
    let mut decoded = Vec::new();
    let (mut line, mut col) = (0, 0);
    for t in data.chunks(5) {
        if t[0] > 0 {
            line += t[0];
            col = t[1];
        } else {
            col += t[1];
        }
        decoded.push((line, col, t[2], types[t[3] as usize]));
    }
    // The first comment: 23 UTF-16 units (the emoji counts 2).
    assert_eq!(decoded[0], (0, 0, 23, "comment"));
    let kind_of = |line: u64, col: u64| {
        decoded
            .iter()
            .find(|d| d.0 == line && d.1 == col)
            .map(|d| d.3)
    };
    assert_eq!(kind_of(2, 0), Some("keyword")); // Task
    assert_eq!(kind_of(2, 7), Some("enumMember")); // GPU
    assert_eq!(kind_of(8, 4), Some("function")); // linear
    assert_eq!(kind_of(8, 11), Some("type")); // Task (parameter type)
    assert_eq!(kind_of(8, 16), Some("parameter")); // task
    assert_eq!(kind_of(14, 13), Some("class")); // calc_currents (a task)

    // An edit on one line: the delta replaces only the tokens that changed.
    let edited = MAPPER.replace(
        "Layout * * * SOA C_order;",
        "Layout * * * SOA C_order Exact;",
    );
    s.change_full(&uri, 2, &edited);
    let delta = s.request(
        "textDocument/semanticTokens/full/delta",
        json!({"textDocument": {"uri": uri}, "previousResultId": full["resultId"]}),
    );
    let edits = delta["edits"]
        .as_array()
        .unwrap_or_else(|| panic!("a delta: {delta}"));
    assert_eq!(edits.len(), 1);
    assert!(edits[0]["data"].as_array().unwrap().len() < data.len() / 2);
    assert_ne!(delta["resultId"], full["resultId"]);
    // An unknown previous result gets the full tokens.
    let r = s.request(
        "textDocument/semanticTokens/full/delta",
        json!({"textDocument": {"uri": uri}, "previousResultId": "nope"}),
    );
    assert!(r["data"].is_array());
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn inlay_hints_name_machine_method_parameters() {
    let mut s = Server::start();
    let uri = open_mapper(&mut s, "inlay");
    let r = s.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": range(MAPPER, 0, MAPPER.len(), Encoding::Utf16)}),
    );
    let hints = r.as_array().unwrap();
    let labels: Vec<&str> = hints.iter().map(|h| h["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["dim:", "factor:"]);
    assert_eq!(
        hints[0]["position"],
        pos(MAPPER, at("0, 2)"), Encoding::Utf16)
    );
    assert_eq!(hints[0]["kind"], 2, "parameter");
    assert_eq!(s.shutdown(), Some(0));
}
