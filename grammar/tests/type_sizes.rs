//! Pins the sizes of the front end's most numerous values. Each is stored
//! once per token, node, symbol or diagnostic, so memory grows with them:
//! a test here fails if one grows back. The README's memory section says
//! what each shrink saved. Sizes are those of a 64-bit target.

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
