//! Code actions computed from the document (diagnostic fixes travel in the
//! diagnostics' `data`; see [`super::convert`]): the "Add missing
//! `mgpu = Machine(GPU);`" source action.

use mapwright_grammar::ast::ProcKind;
use mapwright_grammar::Span;

use super::analysis::Analysis;

/// A machine-model global that is used but never defined, and the edit that
/// defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingMachine {
    /// `mgpu`
    pub name: String,
    pub kind: ProcKind,
    /// Where the definition goes: the start of the first top-level
    /// statement that uses the name, so it runs before every use.
    pub insert_at: usize,
    /// `mgpu = Machine(GPU);\n`
    pub text: String,
    /// The uses, for the action's diagnostics.
    pub uses: Vec<Span>,
}

/// The conventional machine-model names (`mcpu`, `mgpu`, `momp`, ...) that
/// are used without a definition.
pub fn missing_machines(a: &Analysis) -> Vec<MissingMachine> {
    let mut out: Vec<MissingMachine> = Vec::new();
    for (name, span) in &a.resolved.unresolved {
        let Some(kind) = conventional_kind(name) else {
            continue;
        };
        if let Some(m) = out.iter_mut().find(|m| &m.name == name) {
            m.uses.push(*span);
            continue;
        }
        let stmt_start = a
            .program()
            .stmts
            .iter()
            .find(|s| s.span.start() <= span.start() && span.start() <= s.span.end())
            .map_or(span.start(), |s| s.span.start());
        let line_start = a.index.line_span(a.index.line_of(stmt_start)).0;
        let newline = if a.text.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        out.push(MissingMachine {
            name: name.clone(),
            kind,
            insert_at: line_start,
            text: format!("{name} = Machine({kind});{newline}"),
            uses: vec![*span],
        });
    }
    out
}

/// `mgpu` -> GPU, `mcpu` -> CPU, ... (the names the DSL's own examples use).
fn conventional_kind(name: &str) -> Option<ProcKind> {
    let rest = name.strip_prefix('m')?;
    ProcKind::ALL
        .into_iter()
        .find(|k| k.name().eq_ignore_ascii_case(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_undefined_machine_names() {
        let src = "Task * GPU;\ndef f(Task t) {\n    return mgpu[0, mgpu.size[1] - 1];\n}\nx = mcpu;\ny = other;\n";
        let a = Analysis::new(src);
        let m = missing_machines(&a);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].name, "mgpu");
        assert_eq!(m[0].uses.len(), 2);
        assert_eq!(m[0].insert_at, src.find("def").unwrap());
        assert_eq!(m[0].text, "mgpu = Machine(GPU);\n");
        assert_eq!(m[1].text, "mcpu = Machine(CPU);\n");
        let ok = Analysis::new("mgpu = Machine(GPU);\nx = mgpu;\n");
        assert!(missing_machines(&ok).is_empty());
    }
}
