//! Pins the sizes of the front end's most numerous values. Each is stored
//! once per token, node, symbol or diagnostic, so memory grows with them:
//! a test here fails if one grows back. The memory runs in README.md's git
//! history say what each shrink saved. Sizes are those of a 64-bit target.

use mapwright_grammar as g;
use std::mem::size_of;

#[test]
#[cfg(target_pointer_width = "64")]
fn spans_and_tokens() {
    // Two u32 offsets (was two usize: 16).
    assert_eq!(size_of::<g::Span>(), 8);
    // Kind and span (was 24).
    assert_eq!(size_of::<g::token::Token>(), 12);
    // Name and span (was 40).
    assert_eq!(size_of::<g::ast::Ident>(), 32);
}

#[test]
#[cfg(target_pointer_width = "64")]
fn tree_nodes() {
    // `Comprehension`'s loop variable is boxed, so the common forms set
    // the size (was 72 with 16-byte spans, 56 with 8-byte ones).
    assert!(
        size_of::<g::ast::ExprKind>() <= 40,
        "{}",
        size_of::<g::ast::ExprKind>()
    );
    assert!(
        size_of::<g::ast::Expr>() <= 48,
        "{}",
        size_of::<g::ast::Expr>()
    );
    // Was 144.
    assert!(
        size_of::<g::ast::Stmt>() <= 104,
        "{}",
        size_of::<g::ast::Stmt>()
    );
}
