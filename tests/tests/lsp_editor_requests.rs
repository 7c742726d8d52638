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
