//! Semantic tokens: every token classified (keywords, kinds, properties,
//! and names by what they resolve to), encoded in the LSP's relative form,
//! and the delta between two encodings.

use std::collections::HashMap;

use mapwright_grammar::line_index::Encoding;
use mapwright_grammar::resolve::SymbolKind;
use mapwright_grammar::token::TokenKind as T;
use mapwright_grammar::Span;

use super::analysis::Analysis;
use super::docs::prop_of_token;
use super::name_facts::{mapping_names, NameRole};

/// The token types, in legend order (indices are what the encoding uses).
pub const TOKEN_TYPES: &[&str] = &[
    "keyword",    // 0
    "type",       // 1
    "enumMember", // 2: processor and memory kinds
    "property",   // 3
    "method",     // 4
    "function",   // 5
    "parameter",  // 6
    "variable",   // 7
    "number",     // 8
    "string",     // 9
    "comment",    // 10
    "operator",   // 11
    "class",      // 12: task names
    "struct",     // 13: region names
    "modifier",   // 14: layout constraints
];

/// The token modifiers, in legend order (bit `1 << index`).
pub const TOKEN_MODIFIERS: &[&str] = &["declaration", "defaultLibrary"];

const KEYWORD: u32 = 0;
const TYPE: u32 = 1;
const ENUM_MEMBER: u32 = 2;
const PROPERTY: u32 = 3;
const METHOD: u32 = 4;
const FUNCTION: u32 = 5;
const PARAMETER: u32 = 6;
const VARIABLE: u32 = 7;
const NUMBER: u32 = 8;
const STRING: u32 = 9;
const COMMENT: u32 = 10;
const OPERATOR: u32 = 11;
const CLASS: u32 = 12;
const STRUCT: u32 = 13;
const MODIFIER: u32 = 14;

const DECLARATION: u32 = 1 << 0;
const DEFAULT_LIBRARY: u32 = 1 << 1;

/// One classified token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    pub span: Span,
    pub ty: u32,
    pub modifiers: u32,
}

/// Classifies every token and comment, in source order.
pub fn classify(a: &Analysis) -> Vec<Classified> {
    let names = name_classes(a);
    // `*` in a mapping statement is a wildcard, not an operator.
    let mapping_spans: Vec<Span> = a
        .program()
        .stmts
        .iter()
        .filter(|s| {
            !matches!(
                s.kind,
                mapwright_grammar::ast::StmtKind::Assign { .. }
                    | mapwright_grammar::ast::StmtKind::FuncDef { .. }
                    | mapwright_grammar::ast::StmtKind::Print { .. }
                    | mapwright_grammar::ast::StmtKind::Return { .. }
            )
        })
        .map(|s| s.span)
        .collect();
    let mut out: Vec<Classified> = Vec::with_capacity(a.parsed.tokens.len());
    for t in &a.parsed.tokens {
        let (ty, modifiers) = match t.kind {
            T::Ident => match names.get(&t.span.start()) {
                Some(&c) => c,
                None if t.span.text(&a.text) == "Machine" => (FUNCTION, DEFAULT_LIBRARY),
                None => (VARIABLE, 0),
            },
            T::Int => (NUMBER, 0),
            T::Str | T::UnterminatedStr => (STRING, 0),
            T::KwTask if names.contains_key(&t.span.start()) => names[&t.span.start()],
            k if k.is_proc_kind() || k.is_mem_kind() => (ENUM_MEMBER, DEFAULT_LIBRARY),
            k if k.is_simple_constraint() || k == T::Align => (MODIFIER, 0),
            k if k.is_type() && k != T::KwTask => (TYPE, 0),
            k if k.is_property() => match prop_of_token(k) {
                Some(p) if p.is_method() => (METHOD, DEFAULT_LIBRARY),
                _ => (PROPERTY, DEFAULT_LIBRARY),
            },
            k if k.is_keyword() => (KEYWORD, 0),
            T::Star if in_spans(&mapping_spans, t.span.start()) => continue,
            T::Plus
            | T::Minus
            | T::Star
            | T::Slash
            | T::Percent
            | T::Assign
            | T::Lt
            | T::Gt
            | T::Le
            | T::Ge
            | T::EqEq
            | T::Ne
            | T::AndAnd
            | T::OrOr
            | T::Question
            | T::Colon
            | T::Bang => (OPERATOR, 0),
            _ => continue,
        };
        out.push(Classified {
            span: t.span,
            ty,
            modifiers,
        });
    }
    for c in &a.parsed.comments {
        let text = c.span.text(&a.text);
        let trimmed = text.trim_end_matches('\r');
        out.push(Classified {
            span: Span::new(c.span.start(), c.span.start() + trimmed.len()),
            ty: COMMENT,
            modifiers: 0,
        });
    }
    out.sort_by_key(|c| c.span.start());
    out
}

/// True if `offset` is inside one of `spans` (sorted, non-overlapping).
fn in_spans(spans: &[Span], offset: usize) -> bool {
    let i = spans.partition_point(|s| s.end() <= offset);
    spans.get(i).is_some_and(|s| s.contains(offset))
}

/// Classes of identifiers (and of `Task` used as a type), by start offset.
fn name_classes(a: &Analysis) -> HashMap<usize, (u32, u32)> {
    let mut map = HashMap::new();
    let class_of = |k: SymbolKind| match k {
        SymbolKind::Function => FUNCTION,
        SymbolKind::Parameter => PARAMETER,
        SymbolKind::Global | SymbolKind::Local | SymbolKind::LoopVar => VARIABLE,
    };
    for s in &a.resolved.symbols {
        for d in &s.defs {
            map.insert(d.start(), (class_of(s.kind), DECLARATION));
        }
    }
    for r in &a.resolved.references {
        if let Some(s) = a.resolved.symbols.get(r.symbol) {
            map.insert(r.span.start(), (class_of(s.kind), 0));
        }
    }
    for (span, role) in mapping_names(&a.program().stmts) {
        let ty = match role {
            NameRole::Task => CLASS,
            NameRole::Region => STRUCT,
        };
        map.insert(span.start(), (ty, 0));
    }
    for s in &a.program().stmts {
        if let mapwright_grammar::ast::StmtKind::FuncDef { params, .. } = &s.kind {
            for p in params {
                map.insert(p.ty_span.start(), (TYPE, 0));
            }
        }
    }
    map
}

/// Encodes classified tokens in the LSP form: five integers per token
/// (delta line, delta start, length, type, modifiers), columns and lengths
/// in `enc` units.
pub fn encode(a: &Analysis, tokens: &[Classified], enc: Encoding) -> Vec<u32> {
    let mut out = Vec::with_capacity(tokens.len() * 5);
    let (mut prev_line, mut prev_col) = (0u32, 0u32);
    for t in tokens {
        let start = a.index.line_col(t.span.start(), enc);
        let end = a.index.line_col(t.span.end(), enc);
        if end.line != start.line || end.col <= start.col {
            continue;
        }
        let delta_line = start.line - prev_line;
        let delta_col = if delta_line == 0 {
            start.col - prev_col
        } else {
            start.col
        };
        out.extend([
            delta_line,
            delta_col,
            end.col - start.col,
            t.ty,
            t.modifiers,
        ]);
        prev_line = start.line;
        prev_col = start.col;
    }
    out
}

/// One edit of a semantic-tokens delta, in integers (not tokens).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokensEdit {
    pub start: u32,
    pub delete_count: u32,
    pub data: Vec<u32>,
}

/// The single edit turning `old` into `new` (common prefix and suffix kept,
/// on token boundaries); none if they are equal.
pub fn delta(old: &[u32], new: &[u32]) -> Vec<TokensEdit> {
    if old == new {
        return Vec::new();
    }
    let prefix_tokens = old
        .chunks(5)
        .zip(new.chunks(5))
        .take_while(|(a, b)| a == b)
        .count();
    let prefix = prefix_tokens * 5;
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix_tokens = old[prefix..]
        .rchunks(5)
        .zip(new[prefix..].rchunks(5))
        .take_while(|(a, b)| a == b)
        .count()
        .min(max_suffix / 5);
    let suffix = suffix_tokens * 5;
    vec![TokensEdit {
        start: prefix as u32,
        delete_count: (old.len() - prefix - suffix) as u32,
        data: new[prefix..new.len() - suffix].to_vec(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types_of(src: &str) -> Vec<(String, &'static str)> {
        let a = Analysis::new(src);
        classify(&a)
            .into_iter()
            .map(|c| (c.span.text(src).to_string(), TOKEN_TYPES[c.ty as usize]))
            .collect()
    }

    #[test]
    fn names_are_classified_by_resolution() {
        let src = "m = Machine(GPU); # c\r\ndef f(Task t) { return m[t.ipoint[0], 0]; }\r\nRegion foo rp GPU FBMEM;\r\n";
        let t = types_of(src);
        let get = |w: &str| t.iter().find(|(x, _)| *x == w).map(|(_, ty)| *ty);
        assert_eq!(get("Machine"), Some("function"));
        assert_eq!(get("GPU"), Some("enumMember"));
        assert_eq!(get("# c"), Some("comment"));
        assert_eq!(get("f"), Some("function"));
        assert_eq!(get("Task"), Some("type"));
        assert_eq!(get("t"), Some("parameter"));
        assert_eq!(get("ipoint"), Some("property"));
        assert_eq!(get("foo"), Some("class"));
        assert_eq!(get("rp"), Some("struct"));
        assert_eq!(get("Region"), Some("keyword"));
    }

    #[test]
    fn encoding_is_relative_and_in_utf16_units() {
        let src = "# é😀\nTask * GPU;";
        let a = Analysis::new(src);
        let data = encode(&a, &classify(&a), Encoding::Utf16);
        // comment: line 0 col 0, length 1 + 1 + 1 + 2 = 5 UTF-16 units.
        assert_eq!(&data[..5], &[0, 0, 5, COMMENT, 0]);
        // `Task` on the next line, then `GPU` 7 columns later.
        assert_eq!(&data[5..10], &[1, 0, 4, KEYWORD, 0]);
        assert_eq!(&data[10..15], &[0, 7, 3, ENUM_MEMBER, DEFAULT_LIBRARY]);
        let utf8 = encode(&a, &classify(&a), Encoding::Utf8);
        assert_eq!(utf8[2], 8);
    }

    #[test]
    fn delta_keeps_common_prefix_and_suffix() {
        let old = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        let mut new = old.to_vec();
        new[6] = 99;
        let d = delta(&old, &new);
        assert_eq!(
            d,
            vec![TokensEdit {
                start: 5,
                delete_count: 5,
                data: new[5..10].to_vec()
            }]
        );
        assert!(delta(&old, &old).is_empty());
        let shorter = delta(&old, &old[..10]);
        assert_eq!(shorter[0].start, 10);
        assert_eq!(shorter[0].delete_count, 5);
        let apply = |old: &[u32], e: &TokensEdit| {
            let mut v = old.to_vec();
            v.splice(
                e.start as usize..(e.start + e.delete_count) as usize,
                e.data.iter().copied(),
            );
            v
        };
        let grown: Vec<u32> = [&old[..], &old[..]].concat();
        assert_eq!(apply(&old, &delta(&old, &grown)[0]), grown);
    }
}
