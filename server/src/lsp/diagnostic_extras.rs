//! What editors show besides a diagnostic's text: tags (`Unnecessary`
//! greys out unused and unreachable code, `Deprecated` strikes through
//! legacy forms) and the `codeDescription` link to the code's section of
//! the codes page (`docs/codes.md`), or for AutoGuide's feedback after a
//! run, to its rule's section of the rules page (`docs/autoguide.md`).
//!
//! Link target: each page is compiled into the binary and written once per
//! version to the user's cache (`~/.cache/mapwright/pages-<version>/codes.md`,
//! see [`crate::user_cache`]),
//! and each diagnostic links to `file://…/codes.md#e0201`. So the link works
//! offline, without a checkout, and always describes the codes this binary
//! emits (a URL into a repository would describe whatever version is there,
//! and the project has no public address to point at). If the file cannot
//! be written, diagnostics go out without a link.
//!
//! Both are sent only to clients that advertise them
//! (`publishDiagnostics.tagSupport`, `codeDescriptionSupport`): see
//! [`crate::lsp::convert::DiagnosticFields`].

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use tower_lsp::lsp_types::{CodeDescription, DiagnosticTag, Url};

/// The codes page, as shipped.
pub const CODES_PAGE: &str = include_str!("../../../docs/codes.md");

/// The AutoGuide rules page, as shipped.
pub const AUTOGUIDE_PAGE: &str = include_str!("../../../docs/autoguide.md");

/// Codes whose span is code that does nothing: unused, unreachable, or a
/// rule or constraint that never takes effect.
const UNNECESSARY: &[&str] = &[
    "W0206", // unreachable statement after `return`
    "W0213", // unused function
    "W0214", // unused variable or parameter
    "W0216", // second definition of a function, ignored
    "W0217", // second assignment, ignored
    "W0218", // mapping rule shadowed by an earlier one
    "W0222", // constraint overridden in the same statement
    "W0307", // Layout statement silently shadowed
    "W0308", // `IndexTaskMap *` never consulted
    "W0309", // entry naming a task the application lacks never applies
    "W0310", // entry naming a region argument the task lacks never matches
    "W0314", // `Exact` without `Compact` has no effect
    "W0315", // rule for a kind never used never applies
    "W0316", // map statement of the wrong launch kind never applies
];

/// Legacy statement forms the DSL no longer accepts.
const DEPRECATED: &[&str] = &["E0107", "E0108"];

/// The tags an editor should show for `code`.
pub fn tags(code: &str) -> Option<Vec<DiagnosticTag>> {
    if UNNECESSARY.contains(&code) {
        Some(vec![DiagnosticTag::UNNECESSARY])
    } else if DEPRECATED.contains(&code) {
        Some(vec![DiagnosticTag::DEPRECATED])
    } else {
        None
    }
}

/// The link to `code`'s section of `page` (a URL of the codes page, or
/// of the rules page for an AutoGuide rule).
pub fn code_link(page: &Url, code: &str) -> Url {
    let mut url = page.clone();
    url.set_fragment(Some(&code.to_ascii_lowercase()));
    url
}

/// The URL of `content` written out for this binary as `name`, if it
/// could be (kept in `slot`: written once per process).
fn written_page(
    slot: &'static OnceLock<Option<Url>>,
    name: &str,
    content: &str,
) -> Option<&'static Url> {
    slot.get_or_init(|| {
        let dir = crate::user_cache::dir().join(format!("pages-{}", env!("CARGO_PKG_VERSION")));
        let path = dir.join(name);
        let current = std::fs::read_to_string(&path).is_ok_and(|t| t == content);
        if !current {
            std::fs::create_dir_all(&dir).ok()?;
            std::fs::write(&path, content).ok()?;
        }
        Url::from_file_path(&path).ok()
    })
    .as_ref()
}

/// The URL of the codes page written out for this binary, if it could be.
fn page_url() -> Option<&'static Url> {
    static PAGE: OnceLock<Option<Url>> = OnceLock::new();
    written_page(&PAGE, "codes.md", CODES_PAGE)
}

/// The `codeDescription` of AutoGuide's feedback from `rule`: a link to
/// the rule's section of the rules page. (Not cached as the codes' links
/// are: a run's feedback is a few diagnostics.)
pub fn rule_description(rule: &str) -> Option<CodeDescription> {
    static PAGE: OnceLock<Option<Url>> = OnceLock::new();
    let page = written_page(&PAGE, "autoguide.md", AUTOGUIDE_PAGE)?;
    // (Rule ids are lower-case already, so the anchor is the id.)
    Some(CodeDescription {
        href: code_link(page, rule),
    })
}

/// The `codeDescription` of `code`: a link to its section of the codes
/// page (built once per code: a URL is parsed and copied, which adds up
/// over a thousand diagnostics).
pub fn code_description(code: &'static str) -> Option<CodeDescription> {
    static LINKS: OnceLock<Mutex<HashMap<&'static str, Url>>> = OnceLock::new();
    let page = page_url()?;
    let mut links = LINKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let href = links
        .entry(code)
        .or_insert_with(|| code_link(page, code))
        .clone();
    Some(CodeDescription { href })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tagged_code_is_a_known_code_with_a_section_on_the_page() {
        for code in UNNECESSARY.iter().chain(DEPRECATED) {
            let known = mapwright_grammar::codes::summary(code)
                .or_else(|| mapwright_runtime::resolve_mapping::code_summary(code));
            assert!(known.is_some(), "{code} is not in the codes tables");
            assert!(CODES_PAGE.contains(&format!("\n## {code}\n")), "{code}");
        }
    }

    /// `docs/autoguide.md` has one section per rule of the table, in its
    /// order, each with the rule's suggestion word for word and an `Edit:`
    /// line exactly when the rule makes an edit.
    #[test]
    fn the_rules_page_has_one_section_per_rule_with_its_suggestion() {
        let sections: Vec<(&str, &str)> = AUTOGUIDE_PAGE
            .split("\n## ")
            .skip(1)
            .map(|s| s.split_once('\n').unwrap_or((s, "")))
            .collect();
        let rules = crate::autoguide::rules::RULES;
        let listed: Vec<&str> = sections.iter().map(|(id, _)| id.trim()).collect();
        let table: Vec<&str> = rules.iter().map(|r| r.id).collect();
        assert_eq!(
            listed, table,
            "docs/autoguide.md sections vs the rule table"
        );
        for ((id, body), rule) in sections.iter().zip(rules) {
            assert!(
                body.contains(&format!("\nSuggests: {}\n", rule.suggest)),
                "{id}: the suggestion differs from the table"
            );
            assert_eq!(
                body.contains("\nEdit: ") || body.contains("\nEdit (with an application): "),
                rule.edit.is_some(),
                "{id}: an `Edit:` line where the rule has an edit, none elsewhere"
            );
            assert!(body.contains("\nReads: "), "{id}: what it reads");
        }
    }

    #[test]
    fn links_point_at_the_code_section() {
        let page = Url::parse("file:///tmp/mapwright-0/codes.md").unwrap();
        assert_eq!(
            code_link(&page, "E0201").as_str(),
            "file:///tmp/mapwright-0/codes.md#e0201"
        );
        assert_eq!(tags("W0214"), Some(vec![DiagnosticTag::UNNECESSARY]));
        assert_eq!(tags("E0107"), Some(vec![DiagnosticTag::DEPRECATED]));
        assert_eq!(tags("E0201"), None);
    }
}
