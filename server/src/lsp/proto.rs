//! The pure analysis results -> LSP types (positions in the negotiated
//! encoding). Nothing here decides anything; it only translates.

use std::collections::HashMap;

use mapwright_grammar::line_index::Encoding;
use mapwright_grammar::{Span, TextEdit};
use tower_lsp::lsp_types as lsp;

use super::analysis::Analysis;
use super::convert::range;
use super::folding::{Fold, FoldKind};
use super::navigation::Access;
use super::plain_text::markdown_to_plain;
use super::provider_api::{
    Completion, CompletionKind, Completions, HoverSection, InlayHint, InlayKind,
};
use super::signature::Signature;
use super::symbols::{OutlineItem, OutlineKind};

/// Byte edits -> LSP edits.
pub fn text_edits(a: &Analysis, edits: &[TextEdit], enc: Encoding) -> Vec<lsp::TextEdit> {
    edits
        .iter()
        .map(|e| lsp::TextEdit::new(range(&a.index, e.span, enc), e.text.clone()))
        .collect()
}

/// A workspace edit touching one document.
pub fn workspace_edit(uri: &lsp::Url, edits: Vec<lsp::TextEdit>) -> lsp::WorkspaceEdit {
    let mut changes = HashMap::new();
    changes.insert(uri.clone(), edits);
    lsp::WorkspaceEdit::new(changes)
}

/// Completion items replacing the typed prefix.
pub fn completion(
    a: &Analysis,
    c: Completions,
    enc: Encoding,
    snippets: bool,
    markdown: bool,
) -> lsp::CompletionResponse {
    let replace = range(&a.index, c.replace, enc);
    let items = c
        .items
        .into_iter()
        .map(|item| completion_item(item, replace, snippets, markdown))
        .collect();
    lsp::CompletionResponse::List(lsp::CompletionList {
        is_incomplete: false,
        items,
    })
}

/// One item; its documentation as Markdown, or as plain text for a client
/// that does not declare Markdown ([`documentation`]).
fn completion_item(
    c: Completion,
    replace: lsp::Range,
    snippets: bool,
    markdown: bool,
) -> lsp::CompletionItem {
    let (text, format) = match (&c.snippet, snippets) {
        (Some(s), true) => (s.clone(), lsp::InsertTextFormat::SNIPPET),
        _ => (
            c.plain.clone().unwrap_or_else(|| c.label.clone()),
            lsp::InsertTextFormat::PLAIN_TEXT,
        ),
    };
    let kind = match c.kind {
        CompletionKind::Keyword => lsp::CompletionItemKind::KEYWORD,
        CompletionKind::Snippet => lsp::CompletionItemKind::SNIPPET,
        CompletionKind::Function => lsp::CompletionItemKind::FUNCTION,
        CompletionKind::Variable => lsp::CompletionItemKind::VARIABLE,
        CompletionKind::Parameter => lsp::CompletionItemKind::VARIABLE,
        CompletionKind::Kind => lsp::CompletionItemKind::ENUM_MEMBER,
        CompletionKind::Property => lsp::CompletionItemKind::PROPERTY,
        CompletionKind::Method => lsp::CompletionItemKind::METHOD,
        CompletionKind::Type => lsp::CompletionItemKind::TYPE_PARAMETER,
        CompletionKind::Constraint => lsp::CompletionItemKind::CONSTANT,
        CompletionKind::Task => lsp::CompletionItemKind::CLASS,
        CompletionKind::Region => lsp::CompletionItemKind::FIELD,
    };
    lsp::CompletionItem {
        sort_text: Some(format!("{}{}", c.rank, c.label)),
        filter_text: Some(c.label.clone()),
        label: c.label,
        kind: Some(kind),
        detail: c.detail,
        documentation: c.documentation.map(|d| documentation(d, markdown)),
        insert_text_format: Some(format),
        text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit::new(
            replace, text,
        ))),
        ..Default::default()
    }
}

/// A hover: Markdown, or plain text (the Markdown rendered, not merely
/// labelled) for a client that does not declare Markdown.
pub fn hover(a: &Analysis, h: HoverSection, enc: Encoding, markdown: bool) -> lsp::Hover {
    lsp::Hover {
        contents: lsp::HoverContents::Markup(markup_content(h.markdown, markdown)),
        range: Some(range(&a.index, h.span, enc)),
    }
}

/// `text` (Markdown) as the client can show it.
fn markup_content(text: String, markdown: bool) -> lsp::MarkupContent {
    if markdown {
        lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: text,
        }
    } else {
        lsp::MarkupContent {
            kind: lsp::MarkupKind::PlainText,
            value: markdown_to_plain(&text),
        }
    }
}

/// Documentation (Markdown) as the client can show it.
fn documentation(text: String, markdown: bool) -> lsp::Documentation {
    lsp::Documentation::MarkupContent(markup_content(text, markdown))
}

pub fn signature_help(s: Signature) -> lsp::SignatureHelp {
    // Parameter labels as offsets: UTF-16 units of the label, which is ASCII
    // (names and types of the language), so bytes are units.
    let params = s
        .params
        .iter()
        .map(|(r, doc)| lsp::ParameterInformation {
            label: lsp::ParameterLabel::LabelOffsets([r.start as u32, r.end as u32]),
            documentation: (!doc.is_empty()).then(|| markup(doc.clone())),
        })
        .collect();
    lsp::SignatureHelp {
        signatures: vec![lsp::SignatureInformation {
            label: s.label,
            documentation: Some(markup(s.documentation)),
            parameters: Some(params),
            active_parameter: Some(s.active_param as u32),
        }],
        active_signature: Some(0),
        active_parameter: Some(s.active_param as u32),
    }
}

fn markup(value: String) -> lsp::Documentation {
    documentation(value, true)
}

pub fn locations(
    a: &Analysis,
    uri: &lsp::Url,
    spans: &[Span],
    enc: Encoding,
) -> Vec<lsp::Location> {
    spans
        .iter()
        .map(|s| lsp::Location::new(uri.clone(), range(&a.index, *s, enc)))
        .collect()
}

pub fn highlights(
    a: &Analysis,
    hs: &[(Span, Access)],
    enc: Encoding,
) -> Vec<lsp::DocumentHighlight> {
    hs.iter()
        .map(|(s, access)| lsp::DocumentHighlight {
            range: range(&a.index, *s, enc),
            kind: Some(match access {
                Access::Read => lsp::DocumentHighlightKind::READ,
                Access::Write => lsp::DocumentHighlightKind::WRITE,
            }),
        })
        .collect()
}

pub fn symbol_kind(k: OutlineKind) -> lsp::SymbolKind {
    match k {
        OutlineKind::Function => lsp::SymbolKind::FUNCTION,
        OutlineKind::Global => lsp::SymbolKind::VARIABLE,
        OutlineKind::Parameter => lsp::SymbolKind::VARIABLE,
        OutlineKind::Local => lsp::SymbolKind::VARIABLE,
        OutlineKind::Mapping => lsp::SymbolKind::KEY,
    }
}

#[allow(deprecated)] // `deprecated` is a required field of the struct.
pub fn document_symbol(a: &Analysis, item: OutlineItem, enc: Encoding) -> lsp::DocumentSymbol {
    lsp::DocumentSymbol {
        name: item.name,
        detail: item.detail,
        kind: symbol_kind(item.kind),
        tags: None,
        deprecated: None,
        range: range(&a.index, item.span, enc),
        selection_range: range(&a.index, item.selection, enc),
        children: (!item.children.is_empty()).then(|| {
            item.children
                .into_iter()
                .map(|c| document_symbol(a, c, enc))
                .collect()
        }),
    }
}

pub fn folding_range(f: Fold) -> lsp::FoldingRange {
    lsp::FoldingRange {
        start_line: f.start_line,
        end_line: f.end_line,
        kind: Some(match f.kind {
            FoldKind::Code => lsp::FoldingRangeKind::Region,
            FoldKind::Comment => lsp::FoldingRangeKind::Comment,
        }),
        ..Default::default()
    }
}

pub fn inlay_hint(a: &Analysis, h: InlayHint, enc: Encoding) -> lsp::InlayHint {
    lsp::InlayHint {
        position: super::convert::position(&a.index, h.offset, enc),
        label: lsp::InlayHintLabel::String(h.label),
        kind: Some(match h.kind {
            InlayKind::Parameter => lsp::InlayHintKind::PARAMETER,
            InlayKind::Type => lsp::InlayHintKind::TYPE,
        }),
        text_edits: None,
        tooltip: h.tooltip.map(lsp::InlayHintTooltip::String),
        padding_left: Some(h.kind == InlayKind::Type),
        padding_right: Some(h.kind == InlayKind::Parameter),
        data: None,
    }
}

/// Flat semantic-token integers -> LSP tokens.
pub fn semantic_tokens(data: &[u32]) -> Vec<lsp::SemanticToken> {
    data.chunks_exact(5)
        .map(|c| lsp::SemanticToken {
            delta_line: c[0],
            delta_start: c[1],
            length: c[2],
            token_type: c[3],
            token_modifiers_bitset: c[4],
        })
        .collect()
}
