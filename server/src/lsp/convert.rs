//! The LSP boundary for positions and diagnostics: byte offsets <-> LSP
//! positions in the negotiated encoding, and grammar diagnostics -> LSP
//! diagnostics.
//!
//! Out-of-range positions are clamped (editors send positions past a line's
//! end, and a request can race an edit), never rejected.

use mapwright_grammar::diagnostic::{Applicability, Severity};
use mapwright_grammar::line_index::{Encoding, LineCol};
use mapwright_grammar::{LineIndex, Span};
use serde::{Deserialize, Serialize};
use tower_lsp::lsp_types::{
    self as lsp, DiagnosticRelatedInformation, Location, NumberOrString, Position, Range, Url,
};

/// Byte offset of an LSP position (clamped to the text).
pub fn offset(index: &LineIndex, pos: Position, enc: Encoding) -> usize {
    index.offset(
        LineCol {
            line: pos.line,
            col: pos.character,
        },
        enc,
    )
}

/// LSP position of a byte offset.
pub fn position(index: &LineIndex, offset: usize, enc: Encoding) -> Position {
    let lc = index.line_col(offset, enc);
    Position::new(lc.line, lc.col)
}

/// LSP range of a byte span.
pub fn range(index: &LineIndex, span: Span, enc: Encoding) -> Range {
    Range::new(
        position(index, span.start(), enc),
        position(index, span.end(), enc),
    )
}

/// Byte span of an LSP range; a reversed range is put in order.
pub fn span(index: &LineIndex, range: Range, enc: Encoding) -> Span {
    let a = offset(index, range.start, enc);
    let b = offset(index, range.end, enc);
    Span::new(a.min(b), a.max(b))
}

/// Applies one `didChange` content change to `text`. A change without a
/// range replaces the whole text.
pub fn apply_change(
    text: &mut String,
    change: &lsp::TextDocumentContentChangeEvent,
    enc: Encoding,
) {
    apply_change_indexed(text, change, enc, None);
}

/// [`apply_change`] with the line index of `text` if one is at hand (the
/// analysis of the version being edited has it: building it again is a
/// pass over the whole text on every keystroke). Returns the byte offset
/// where a ranged change starts (`None` for a whole-text change).
pub fn apply_change_indexed(
    text: &mut String,
    change: &lsp::TextDocumentContentChangeEvent,
    enc: Encoding,
    index: Option<&LineIndex>,
) -> Option<usize> {
    match change.range {
        None => {
            *text = change.text.clone();
            None
        }
        Some(r) => {
            let built;
            let index = match index {
                Some(index) => index,
                None => {
                    built = LineIndex::new(text);
                    &built
                }
            };
            let s = span(index, r, enc);
            // `LineIndex::offset` only returns character boundaries.
            text.replace_range(s.start()..s.end(), &change.text);
            Some(s.start())
        }
    }
}

/// One fix of a diagnostic as carried in the LSP diagnostic's `data`, with
/// its edits already converted, so a code action needs no server-side cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixData {
    pub title: String,
    /// Safe fixes may be preferred / applied without review.
    pub safe: bool,
    pub edits: Vec<lsp::TextEdit>,
}

/// The `data` of every diagnostic mapwright publishes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticData {
    /// The document version the fixes were computed for; fixes for another
    /// version are not offered.
    pub version: i32,
    /// Empty in published diagnostics: a big file's fixes would be most of
    /// each publish (hundreds of KB), so code actions recompute them from
    /// the analysis of `version`. Filled where one diagnostic's fixes are
    /// wanted (code actions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<FixData>,
}

/// Which optional fields of a diagnostic the client said it uses
/// (`textDocument.publishDiagnostics` capabilities). A field the client did
/// not advertise is left out of what is published: a 5,000-line file has
/// over a thousand diagnostics, and each field is paid for in every publish.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiagnosticFields {
    /// `relatedInformation`; without it the related notes are appended to
    /// the message (they carry information the message lacks).
    pub related_information: bool,
    /// `codeDescription` (the link to the code's section of the codes page).
    pub code_description: bool,
    /// `tags` (`Unnecessary`, `Deprecated`).
    pub tags: bool,
    /// `data` (the version the diagnostic was computed for, which lets a
    /// code action refuse a stale one; without it code actions match the
    /// diagnostic to the current version's by code and range).
    pub data: bool,
}

impl DiagnosticFields {
    /// Every field: for diagnostics that go back into a code action.
    pub const ALL: DiagnosticFields = DiagnosticFields {
        related_information: true,
        code_description: true,
        tags: true,
        data: true,
    };
}

/// Converts grammar diagnostics to LSP diagnostics for document `uri` at
/// `version`, with the optional `fields` the client uses; `with_fixes`
/// puts each diagnostic's fixes in its `data` (publishing leaves them out,
/// see [`DiagnosticData::fixes`]).
pub fn diagnostics(
    uri: &Url,
    version: i32,
    index: &LineIndex,
    diags: &[mapwright_grammar::Diagnostic],
    enc: Encoding,
    fields: DiagnosticFields,
    with_fixes: bool,
) -> Vec<lsp::Diagnostic> {
    diags
        .iter()
        .map(|d| diagnostic(uri, version, index, d, enc, fields, with_fixes))
        .collect()
}

/// One diagnostic of [`diagnostics`].
pub fn diagnostic(
    uri: &Url,
    version: i32,
    index: &LineIndex,
    d: &mapwright_grammar::Diagnostic,
    enc: Encoding,
    fields: DiagnosticFields,
    with_fixes: bool,
) -> lsp::Diagnostic {
    use super::diagnostic_extras::{code_description, tags};
    let mut message = d.message.clone();
    if let Some(label) = &d.label {
        if !label.is_empty() && !message.contains(&**label) {
            message.push_str(" (");
            message.push_str(label);
            message.push(')');
        }
    }
    for note in &d.notes {
        message.push('\n');
        message.push_str(note);
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .related
        .iter()
        .map(|r| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), range(index, r.span, enc)),
            message: r.message.to_string(),
        })
        .collect();
    if !fields.related_information {
        for r in &related {
            let line = r.location.range.start.line + 1;
            message.push_str(&format!("\n{} (line {line})", r.message));
        }
    }
    let data = (fields.data || with_fixes).then(|| DiagnosticData {
        version,
        fixes: d
            .fixes
            .iter()
            .filter(|_| with_fixes)
            .map(|f| FixData {
                title: f.title.to_string(),
                safe: f.applicability == Applicability::Safe,
                edits: f
                    .edits
                    .iter()
                    .map(|e| lsp::TextEdit::new(range(index, e.span, enc), e.text.clone()))
                    .collect(),
            })
            .collect(),
    });
    lsp::Diagnostic {
        range: range(index, d.span, enc),
        severity: Some(severity(d.severity)),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: fields
            .code_description
            .then(|| code_description(d.code))
            .flatten(),
        source: Some("mapwright".into()),
        message,
        related_information: (fields.related_information && !related.is_empty()).then_some(related),
        tags: fields.tags.then(|| tags(d.code)).flatten(),
        data: data.map(|data| data.to_json()),
    }
}

impl DiagnosticData {
    /// As JSON, built directly (no serializer round trip per diagnostic).
    pub fn to_json(&self) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        map.insert("version".into(), self.version.into());
        if !self.fixes.is_empty() {
            map.insert(
                "fixes".into(),
                serde_json::to_value(&self.fixes).unwrap_or_default(),
            );
        }
        serde_json::Value::Object(map)
    }
}

fn severity(s: Severity) -> lsp::DiagnosticSeverity {
    match s {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Info => lsp::DiagnosticSeverity::INFORMATION,
        Severity::Hint => lsp::DiagnosticSeverity::HINT,
    }
}

/// The encoding named by an LSP `positionEncoding`.
pub fn encoding_kind(enc: Encoding) -> lsp::PositionEncodingKind {
    match enc {
        Encoding::Utf8 => lsp::PositionEncodingKind::UTF8,
        Encoding::Utf16 => lsp::PositionEncodingKind::UTF16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_apply_in_both_encodings_and_clamp() {
        let change = |r: Option<Range>, t: &str| lsp::TextDocumentContentChangeEvent {
            range: r,
            range_length: None,
            text: t.into(),
        };
        let mut text = String::from("# é😀\r\nTask * GPU;\r\n");
        // UTF-16: `é` is 1 unit, the emoji 2; insert after the emoji.
        apply_change(
            &mut text,
            &change(
                Some(Range::new(Position::new(0, 5), Position::new(0, 5))),
                "!",
            ),
            Encoding::Utf16,
        );
        assert_eq!(text, "# é😀!\r\nTask * GPU;\r\n");
        // UTF-8: the same place is byte 8 (é is 2 bytes, the emoji 4).
        apply_change(
            &mut text,
            &change(
                Some(Range::new(Position::new(0, 8), Position::new(0, 9))),
                "?",
            ),
            Encoding::Utf8,
        );
        assert_eq!(text, "# é😀?\r\nTask * GPU;\r\n");
        // Past the end of a line: clamped before the CR.
        apply_change(
            &mut text,
            &change(
                Some(Range::new(Position::new(1, 99), Position::new(1, 99))),
                " ",
            ),
            Encoding::Utf16,
        );
        assert_eq!(text, "# é😀?\r\nTask * GPU; \r\n");
        // Past the end of the file: appended.
        apply_change(
            &mut text,
            &change(
                Some(Range::new(Position::new(9, 0), Position::new(9, 0))),
                "x",
            ),
            Encoding::Utf16,
        );
        assert!(text.ends_with("\r\nx"));
        apply_change(&mut text, &change(None, "new"), Encoding::Utf16);
        assert_eq!(text, "new");
    }

    #[test]
    fn a_change_applied_with_the_texts_index_is_the_same() {
        let text = "# é😀\r\nTask * GPU;\r\nx = 1;\n";
        for line in 0..4 {
            for col in 0..12 {
                for enc in [Encoding::Utf8, Encoding::Utf16] {
                    let c = lsp::TextDocumentContentChangeEvent {
                        range: Some(Range::new(
                            Position::new(line, col),
                            Position::new(line, col + 1),
                        )),
                        range_length: None,
                        text: "ab".into(),
                    };
                    let (mut plain, mut indexed) = (text.to_string(), text.to_string());
                    apply_change(&mut plain, &c, enc);
                    apply_change_indexed(&mut indexed, &c, enc, Some(&LineIndex::new(text)));
                    assert_eq!(plain, indexed, "{line}:{col} {enc:?}");
                }
            }
        }
    }
}
