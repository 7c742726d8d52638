//! The diagnostic codes mapping resolution raises (`E03xx`, `W03xx`,
//! `I03xx`), with their one-line summaries.

use mapwright_grammar::codes::CodeInfo;

/// The diagnostic codes mapping resolution emits (`E03xx` errors, `W03xx`
/// warnings, `I03xx` information), with one-line summaries. Codes are
/// stable and never reused.
pub const CODES: &[CodeInfo] = &[
    CodeInfo {
        code: "E0301",
        summary: "a launch point is mapped outside the machine (slice/sharding index out of bound)",
    },
    CodeInfo {
        code: "E0302",
        summary: "a mapping function returns a processor of another kind than the task runs on",
    },
    CodeInfo {
        code: "W0303",
        summary: "a `Task` statement names a processor kind the task has no variant for (or the machine lacks)",
    },
    CodeInfo {
        code: "W0304",
        summary: "a `Region` statement names a memory the processor cannot use; another memory is used",
    },
    CodeInfo {
        code: "E0305",
        summary: "a layout the task's variant cannot accept (library constraint: cuBLAS, Regent)",
    },
    CodeInfo {
        code: "W0306",
        summary: "contradictory layouts for the same instance (one region, one memory kind) across statements",
    },
    CodeInfo {
        code: "W0307",
        summary: "a Layout statement silently shadowed by a less specific-looking one that the lookup order prefers",
    },
    CodeInfo {
        code: "W0308",
        summary: "`IndexTaskMap *`/`SingleTaskMap *` is never consulted by the reference mapper",
    },
    CodeInfo {
        code: "W0309",
        summary: "a statement names a task the application does not have",
    },
    CodeInfo {
        code: "W0310",
        summary: "a statement names a region argument the task(s) do not have, or one the run cannot match",
    },
    CodeInfo {
        code: "E0311",
        summary: "a mapping function reads `ipoint[k]`/`ispace[k]` beyond the launch's dimensionality",
    },
    CodeInfo {
        code: "E0312",
        summary: "a mapping function uses a task property its launch kind does not have (`parent` of an index launch, `ipoint` of a single launch)",
    },
    CodeInfo {
        code: "I0313",
        summary: "load imbalance: some processors receive more launch points than others",
    },
    CodeInfo {
        code: "W0314",
        summary: "`Exact` without `Compact` has no effect",
    },
    CodeInfo {
        code: "W0315",
        summary: "a Region/Layout/mapping statement for a named task never applies (processor or memory kind never used)",
    },
    CodeInfo {
        code: "W0316",
        summary: "IndexTaskMap on a single launch or SingleTaskMap on an index launch never applies",
    },
    CodeInfo {
        code: "W0317",
        summary: "InstanceLimit on an index launch (backpressure bookkeeping aborts: `event.exists()`)",
    },
    CodeInfo {
        code: "E0318",
        summary: "a task has no variant for any processor kind of this machine",
    },
    CodeInfo {
        code: "E0319",
        summary: "a mapping function fails while placing launch points",
    },
];

/// The summary of a resolution code, if it is one.
pub fn code_summary(code: &str) -> Option<&'static str> {
    CODES.iter().find(|c| c.code == code).map(|c| c.summary)
}
