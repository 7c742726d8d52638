//! The table of diagnostic codes. Codes are stable: a code is never reused for
//! a different meaning. `E0xxx` are lexical, `E01xx` syntactic, `E02xx`/`W02xx`
//! semantic (names and types), `E03xx`/`W03xx`/`I03xx` mapping resolution
//! against an application and machine.

/// One row of the table: code and a one-line summary.
pub struct CodeInfo {
    pub code: &'static str,
    pub summary: &'static str,
}

/// Every code this crate and its users emit, with a summary.
pub const CODES: &[CodeInfo] = &[
    CodeInfo {
        code: "E0001",
        summary: "unrecognized character (or non-ASCII outside a comment)",
    },
    CodeInfo {
        code: "E0002",
        summary: "unterminated string",
    },
    CodeInfo {
        code: "I0001",
        summary: "more diagnostics than reported (at most 1000 per file and stage)",
    },
    CodeInfo {
        code: "E0100",
        summary: "syntax error: unexpected token",
    },
    CodeInfo {
        code: "E0101",
        summary: "missing `;` at the end of a statement",
    },
    CodeInfo {
        code: "E0102",
        summary: "Python-style `def f(...):` with an indented body; the DSL uses braces",
    },
    CodeInfo {
        code: "E0103",
        summary: "unknown layout constraint (e.g. `No_Align`)",
    },
    CodeInfo {
        code: "E0104",
        summary: "a reserved keyword used as a name",
    },
    CodeInfo {
        code: "E0105",
        summary: "a processor kind in Layout's memory field",
    },
    CodeInfo {
        code: "E0106",
        summary: "an identifier in a processor/memory field (the reference asserts `*`)",
    },
    CodeInfo {
        code: "E0107",
        summary: "legacy `IndexTaskMap TASK MACHINE FUNC;` form",
    },
    CodeInfo {
        code: "E0108",
        summary: "legacy `InstanceLimit TASK PROC N;` form",
    },
    CodeInfo {
        code: "E0109",
        summary: "empty program: a mapper needs at least one statement",
    },
    CodeInfo {
        code: "E0110",
        summary: "empty function body",
    },
    CodeInfo {
        code: "E0111",
        summary: "`!` is not an operator of the DSL",
    },
    CodeInfo {
        code: "E0112",
        summary: "a statement that is not allowed here (inside a function or at top level)",
    },
    CodeInfo {
        code: "E0113",
        summary: "`Align=N`: Align needs a comparison operator",
    },
    CodeInfo {
        code: "E0114",
        summary: "a call without arguments",
    },
    CodeInfo {
        code: "E0115",
        summary: "floating-point literal",
    },
    CodeInfo {
        code: "E0116",
        summary: "empty statement (extra `;`)",
    },
    CodeInfo {
        code: "E0117",
        summary: "unknown statement keyword (keywords are case-sensitive)",
    },
    CodeInfo {
        code: "E0118",
        summary: "string outside `print`",
    },
    CodeInfo {
        code: "E0119",
        summary: "a property used as a function (`len(t)` instead of `t.len`)",
    },
    CodeInfo {
        code: "E0120",
        summary: "unknown property after `.`",
    },
    CodeInfo {
        code: "E0121",
        summary: "parameter without a type",
    },
    CodeInfo {
        code: "E0122",
        summary: "unclosed `{` or `(`",
    },
    CodeInfo {
        code: "E0123",
        summary: "a slice must be the whole index",
    },
    CodeInfo {
        code: "E0124",
        summary: "missing processor or memory field",
    },
    CodeInfo {
        code: "E0125",
        summary: "expression nested too deeply (more than 64 levels)",
    },
    CodeInfo {
        code: "W0126",
        summary: "integer literal too large",
    },
    CodeInfo {
        code: "E0201",
        summary: "undefined name",
    },
    CodeInfo {
        code: "E0202",
        summary: "a mapping statement names something that is not a defined function",
    },
    CodeInfo {
        code: "E0203",
        summary: "a mapping statement names a function defined later in the file",
    },
    CodeInfo {
        code: "E0204",
        summary: "a mapping function must take exactly one `Task` parameter",
    },
    CodeInfo {
        code: "E0205",
        summary: "a function that never returns",
    },
    CodeInfo {
        code: "W0206",
        summary: "unreachable statement after `return`",
    },
    CodeInfo {
        code: "E0207",
        summary: "wrong number of arguments in a call",
    },
    CodeInfo {
        code: "E0208",
        summary: "a call that passes or expects a Task",
    },
    CodeInfo {
        code: "E0209",
        summary: "operands of the wrong type",
    },
    CodeInfo {
        code: "E0210",
        summary: "wrong number of indices for a machine model",
    },
    CodeInfo {
        code: "E0211",
        summary: "a property or method applied to a value of the wrong type",
    },
    CodeInfo {
        code: "E0212",
        summary: "fewer arguments than `{}` placeholders in `print`",
    },
    CodeInfo {
        code: "W0212",
        summary: "more arguments than `{}` placeholders in `print`",
    },
    CodeInfo {
        code: "W0213",
        summary: "unused function",
    },
    CodeInfo {
        code: "W0214",
        summary: "unused variable or parameter",
    },
    CodeInfo {
        code: "E0215",
        summary: "a name defined twice (a function and a variable, or two kinds)",
    },
    CodeInfo {
        code: "W0216",
        summary: "a second definition of a function, ignored",
    },
    CodeInfo {
        code: "W0217",
        summary: "a second assignment to a name, ignored",
    },
    CodeInfo {
        code: "W0218",
        summary: "a mapping rule shadowed by an earlier rule for the same selection",
    },
    CodeInfo {
        code: "E0219",
        summary: "a value that cannot be stored in a variable",
    },
    CodeInfo {
        code: "E0220",
        summary: "a mapping function that does not return a processor",
    },
    CodeInfo {
        code: "W0220",
        summary:
            "a mapping function that returns a plain tuple, not a processor of a machine model",
    },
    CodeInfo {
        code: "E0221",
        summary: "a call of something that is not a function",
    },
    CodeInfo {
        code: "W0222",
        summary: "a layout constraint overridden later in the same statement",
    },
];

/// The summary of `code`, if it is known.
pub fn summary(code: &str) -> Option<&'static str> {
    CODES.iter().find(|c| c.code == code).map(|c| c.summary)
}

#[cfg(test)]
mod tests {
    #[test]
    fn codes_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for c in super::CODES {
            assert!(seen.insert(c.code), "duplicate code {}", c.code);
        }
    }
}
