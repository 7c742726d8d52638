//! `textDocument/semanticTokens/range`: the tokens of the visible part of
//! a document, so a client can colour a big file's viewport first. The
//! encoding is the full request's (deltas start from the range's first
//! token, as the protocol says).

use mapwright_grammar::line_index::Encoding;
use mapwright_grammar::Span;

use super::analysis::Analysis;
use super::semantic_tokens::{classify, encode};

/// Encoded tokens overlapping `range`.
pub fn tokens_in_range(a: &Analysis, range: Span, enc: Encoding) -> Vec<u32> {
    let tokens: Vec<_> = classify(a)
        .into_iter()
        .filter(|t| t.span.end() > range.start() && t.span.start() < range.end())
        .collect();
    encode(a, &tokens, enc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_holds_its_tokens_only_and_the_whole_file_equals_full() {
        let src = "Task * GPU;\nm = Machine(GPU);\nRegion * * GPU FBMEM;\n";
        let a = Analysis::new(src);
        let full = encode(&a, &classify(&a), Encoding::Utf16);
        assert_eq!(
            tokens_in_range(&a, Span::new(0, src.len()), Encoding::Utf16),
            full
        );
        let second = src.find('m').unwrap();
        let line2 = tokens_in_range(&a, Span::new(second, second + 17), Encoding::Utf16);
        assert!(!line2.is_empty() && line2.len() < full.len());
        // The first token's line is absolute: line 1 (0-based).
        assert_eq!(line2[0], 1);
    }
}
