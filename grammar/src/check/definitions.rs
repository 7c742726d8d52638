//! What the checker needs to know of each global from its top-level
//! definitions, by symbol number: the type a function body sees of it
//! before it is checked in order, its first function definition, and
//! whether some assignment defines it. Made in one walk of the statements
//! beside the resolved globals, which come in the order of their first
//! definitions: only a later definition of a global is looked up by name
//! (and is what the second-definition pass reports). Why: three tables
//! keyed by name, each filled by hashing every definition's name, and a
//! fourth for the second definitions, were a sixth of a keystroke's check
//! on a 5,000-line file in a language server, whose caches are cold by
//! the next keystroke.

use super::{machine_ctor_dims, Ty};
use crate::ast::{Ident, Program, StmtKind};
use crate::resolve::{Resolved, SymbolKind};
use crate::Span;

/// Per global symbol (numbered as in [`Resolved`]), from the definitions.
#[derive(Debug, Default)]
pub(super) struct Definitions {
    /// The type of the first definition: a function, a machine model (its
    /// constructor), or unknown until checked.
    late: Vec<Ty>,
    /// The statement index of the first function definition of the name
    /// (`u32::MAX`: none).
    first_function: Vec<u32>,
    /// Whether some top-level assignment defines the name.
    assigned: Vec<bool>,
}

/// A definition of a global after its first: the name as defined there,
/// the statement, and the first definition (its name's span, and whether
/// it was a function's).
pub(super) struct SecondDefinition<'p> {
    pub name: &'p Ident,
    pub stmt: Span,
    pub is_function: bool,
    pub first: (Span, bool),
}

impl Definitions {
    /// The definitions of `program`'s globals (`resolved`, its names),
    /// handing each definition after a global's first to `second`, and
    /// the name of each function definition to `function`, in statement
    /// order.
    pub(super) fn new<'p>(
        program: &'p Program,
        resolved: &Resolved,
        source: &str,
        mut second: impl FnMut(SecondDefinition<'p>),
        mut function: impl FnMut(&'p str),
    ) -> Definitions {
        let globals = resolved.global_count();
        let mut out = Definitions {
            late: vec![Ty::Unknown; globals],
            first_function: vec![u32::MAX; globals],
            assigned: vec![false; globals],
        };
        let symbols = &resolved.symbols[..globals];
        let mut next = 0;
        for (i, stmt) in program.stmts.iter().enumerate() {
            let (name, is_function, late) = match &stmt.kind {
                StmtKind::Assign { name, value } => {
                    (name, false, machine_ctor_dims(value).unwrap_or(Ty::Unknown))
                }
                StmtKind::FuncDef { name, .. } => {
                    function(name.name.as_str());
                    (name, true, Ty::Function)
                }
                _ => continue,
            };
            let first = symbols
                .get(next)
                .is_some_and(|s| s.defs.first() == Some(&name.span));
            let id = if first {
                next += 1;
                out.late[next - 1] = late;
                next - 1
            } else {
                // (The name as the text spells it: the same, and read in
                // file order.)
                let Some(id) = resolved.global(name.span.text(source)) else {
                    continue;
                };
                let sym = &symbols[id];
                second(SecondDefinition {
                    name,
                    stmt: stmt.span,
                    is_function,
                    first: (
                        sym.defs.first().copied().unwrap_or(name.span),
                        sym.kind == SymbolKind::Function,
                    ),
                });
                id
            };
            if is_function && out.first_function[id] == u32::MAX {
                out.first_function[id] = u32::try_from(i).unwrap_or(u32::MAX);
            }
            if !is_function {
                out.assigned[id] = true;
            }
        }
        out
    }

    /// What a function body sees of global `name` before it is checked
    /// in order (`None`: no such global).
    pub(super) fn late(&self, resolved: &Resolved, name: &str) -> Option<Ty> {
        self.late.get(resolved.global(name)?).copied()
    }

    /// The statement index of the first function definition of `name`.
    pub(super) fn first_function(&self, resolved: &Resolved, name: &str) -> Option<usize> {
        let at = *self.first_function.get(resolved.global(name)?)?;
        (at != u32::MAX).then_some(at as usize)
    }

    /// Whether some top-level assignment defines `name`.
    pub(super) fn assigned(&self, resolved: &Resolved, name: &str) -> bool {
        resolved
            .global(name)
            .and_then(|id| self.assigned.get(id))
            .copied()
            .unwrap_or(false)
    }
}
