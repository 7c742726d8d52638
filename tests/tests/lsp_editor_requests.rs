//! `mapwright lsp` end to end, for what editors ask besides the basics:
//! diagnostic tags and code links, selection ranges, semantic tokens of a
//! range, on-type formatting, document links, declarations, formatting
//! options.

mod lsp_support;

use lsp_support::*;
use serde_json::Value;

fn by_code<'a>(diags: &'a [Value], code: &str) -> &'a Value {
    diags
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {diags:#?}"))
}

#[test]
fn unused_and_unreachable_code_is_tagged_and_every_code_links_to_its_page_section() {
    let mut s = Server::start();
    let uri = doc_uri("diag-tags");
    let text = "m = Machine(GPU);\nx = 1;\ndef f(Task t) {\n    return m[0, 0];\n    y = 2;\n}\nIndexTaskMap foo f;\nIndexTaskMap foo undefined_fn;\n";
    let diags = s.open(&uri, text);
    // DiagnosticTag.Unnecessary is 1.
    assert_eq!(by_code(&diags, "W0214")["tags"], serde_json::json!([1]));
    assert_eq!(by_code(&diags, "W0206")["tags"], serde_json::json!([1]));
    let undefined = by_code(&diags, "E0202");
    assert!(undefined.get("tags").is_none_or(Value::is_null));
    for d in &diags {
        let code = d["code"].as_str().unwrap().to_ascii_lowercase();
        let href = d["codeDescription"]["href"].as_str().unwrap_or_default();
        assert!(href.starts_with("file://"), "{href}");
        assert!(href.ends_with(&format!("codes.md#{code}")), "{href}");
        // The linked page exists and has the code's section.
        let path = href
            .trim_start_matches("file://")
            .split('#')
            .next()
            .unwrap();
        let page = std::fs::read_to_string(path).expect("the codes page was written");
        assert!(page.contains(&format!("\n## {}\n", code.to_ascii_uppercase())));
    }
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn selection_ranges_grow_outwards_and_declaration_is_the_first_definition() {
    let mut s = Server::start();
    let uri = doc_uri("selection");
    let text = "m = Machine(GPU);\nm = Machine(CPU);\ndef f(Task t) {\n    return m[0, t.ipoint[0] + 1];\n}\nIndexTaskMap foo f;\n";
    s.open(&uri, text);
    let enc = mapwright_grammar::line_index::Encoding::Utf16;
    let at = text.find("ipoint").unwrap() + 2;
    let result = s.request(
        "textDocument/selectionRange",
        serde_json::json!({"textDocument": {"uri": uri}, "positions": [pos(text, at, enc)]}),
    );
    let mut texts = Vec::new();
    let mut node = &result[0];
    while !node.is_null() {
        let start = offset(text, &node["range"]["start"], enc);
        let end = offset(text, &node["range"]["end"], enc);
        texts.push(&text[start..end]);
        node = &node["parent"];
    }
    assert_eq!(texts[0], "ipoint");
    assert!(texts.contains(&"t.ipoint[0] + 1"), "{texts:?}");
    assert!(
        texts.contains(&"return m[0, t.ipoint[0] + 1];"),
        "{texts:?}"
    );
    assert_eq!(*texts.last().unwrap(), text);

    // `m` is defined twice; the first definition wins and is the declaration.
    let use_at = text.find("return m").unwrap() + 7;
    let params = s.at(&uri, text, use_at);
    let definitions = s.request("textDocument/definition", params.clone());
    assert_eq!(definitions.as_array().map(Vec::len), Some(2));
    let declaration = s.request("textDocument/declaration", params);
    assert_eq!(offset(text, &declaration["range"]["start"], enc), 0);
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn typing_a_semicolon_formats_that_statement_only() {
    let mut s = Server::start();
    let uri = doc_uri("on-type");
    let text = "Task  *  GPU;\nRegion  * *  GPU FBMEM;\n";
    s.open(&uri, text);
    let enc = mapwright_grammar::line_index::Encoding::Utf16;
    let after = text.find("FBMEM;").unwrap() + 6;
    let edits = s.request(
        "textDocument/onTypeFormatting",
        serde_json::json!({
            "textDocument": {"uri": uri},
            "position": pos(text, after, enc),
            "ch": ";",
            "options": {"tabSize": 4, "insertSpaces": true},
        }),
    );
    let edits = edits.as_array().cloned().unwrap_or_default();
    assert_eq!(
        apply_edits(text, &edits, enc),
        "Task  *  GPU;\nRegion * * GPU FBMEM;\n"
    );
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
fn semantic_tokens_of_a_range_are_those_of_the_full_result_on_its_lines() {
    let mut s = Server::start();
    let uri = doc_uri("semantic-range");
    let text = "Task * GPU;\nm = Machine(GPU);\nRegion * * GPU FBMEM;\n";
    s.open(&uri, text);
    let enc = mapwright_grammar::line_index::Encoding::Utf16;
    let full = s.request(
        "textDocument/semanticTokens/full",
        serde_json::json!({"textDocument": {"uri": uri}}),
    );
    let all = s.request(
        "textDocument/semanticTokens/range",
        serde_json::json!({"textDocument": {"uri": uri}, "range": range(text, 0, text.len(), enc)}),
    );
    assert_eq!(all["data"], full["data"]);
    let line2 = text.find('m').unwrap();
    let part = s.request(
        "textDocument/semanticTokens/range",
        serde_json::json!({"textDocument": {"uri": uri}, "range": range(text, line2, line2 + 17, enc)}),
    );
    let part = part["data"].as_array().unwrap();
    assert!(!part.is_empty() && part.len() < full["data"].as_array().unwrap().len());
    assert_eq!(part[0], 1, "the first token is on line 1");
    assert_eq!(s.shutdown(), Some(0));
}

/// `textDocument/documentLink` in `mapwright.toml`: a description file it
/// names links to that file (relative to the project's folder), a built-in
/// name or a missing file gets no link. Editors do not open the project
/// file with the server: it is read from disk. A mapper has no links.
#[test]
fn description_files_in_the_project_file_are_links() {
    let root = temp_dir("document-links");
    std::fs::create_dir_all(root.join("descriptions")).unwrap();
    let app = root.join("descriptions/my app.json");
    std::fs::write(&app, "{}").unwrap();
    let toml = "# the project\napp = \"descriptions/my app.json\"\nmachine = \"p100x4\"\n";
    let project = root.join("mapwright.toml");
    std::fs::write(&project, toml).unwrap();

    let mut s = Server::spawn();
    let init = s.request(
        "initialize",
        serde_json::json!({"processId": null, "capabilities": {}}),
    );
    assert_eq!(
        init["capabilities"]["documentLinkProvider"]["resolveProvider"], false,
        "{init:#}"
    );
    s.notify("initialized", serde_json::json!({}));
    let toml_uri = file_uri(&project);
    let links = s.request(
        "textDocument/documentLink",
        serde_json::json!({"textDocument": {"uri": toml_uri}}),
    );
    let links = links.as_array().unwrap_or_else(|| panic!("{links:#}"));
    assert_eq!(links.len(), 1, "{links:#?}");
    let start = toml.find("descriptions/").unwrap();
    let end = toml.find(".json").unwrap() + ".json".len();
    assert_eq!(links[0]["range"], range(toml, start, end, s.encoding));
    // A URI: the space is percent-encoded.
    assert_eq!(
        links[0]["target"],
        file_uri(&app).replace(' ', "%20").as_str()
    );

    // The named file disappears: no link.
    std::fs::remove_file(&app).unwrap();
    let links = s.request(
        "textDocument/documentLink",
        serde_json::json!({"textDocument": {"uri": toml_uri}}),
    );
    assert_eq!(links, serde_json::json!([]));

    // A mapper has no links.
    let mapper = file_uri(&root.join("a.mapper"));
    s.open(&mapper, "Task * GPU;\n");
    let links = s.request(
        "textDocument/documentLink",
        serde_json::json!({"textDocument": {"uri": mapper}}),
    );
    assert!(links.is_null(), "{links:#}");
    assert_eq!(s.shutdown(), Some(0));
}
