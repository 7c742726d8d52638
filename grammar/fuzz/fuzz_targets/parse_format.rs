//! Fuzz target: any bytes through lexer, parser, fixes and formatter must not
//! panic; on inputs without errors formatting must be idempotent.
//! Run: `cd grammar/fuzz && cargo +nightly fuzz run parse_format`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mapwright_grammar::format::format;
use mapwright_grammar::parse;

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    let parsed = parse(&source);
    for d in &parsed.diagnostics {
        for f in &d.fixes {
            let _ = f.apply(&source);
        }
    }
    let out = format(&source);
    if !parsed.has_errors() {
        assert_eq!(format(&out), out);
    }
});
