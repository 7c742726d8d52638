//! Go to definition, find references, document highlight and rename, on the
//! grammar's name resolution. Task and region names in mapping statements
//! (which name things of the application, not of the file) get references
//! and highlights by matching text, but no definition or rename.

use mapwright_grammar::resolve::{Scope, SymbolKind};
use mapwright_grammar::token::{lex, TokenKind};
use mapwright_grammar::Span;

use super::analysis::Analysis;
use super::name_facts::mapping_name_occurrences;

/// Whether an occurrence reads or writes the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// The symbol at `offset`, if the token there is a name.
fn symbol_at(a: &Analysis, offset: usize) -> Option<usize> {
    let token = a.token_at(offset)?;
    if token.kind != TokenKind::Ident {
        return None;
    }
    a.resolved.symbol_at(token.span.start())
}

/// The definitions of the name at `offset` (first = declaration).
pub fn definition(a: &Analysis, offset: usize) -> Vec<Span> {
    symbol_at(a, offset)
        .map(|s| a.resolved.symbols[s].defs.to_vec())
        .unwrap_or_default()
}

/// Every occurrence of the name at `offset`, in source order; definitions
/// only if `include_declaration`.
pub fn references(a: &Analysis, offset: usize, include_declaration: bool) -> Vec<Span> {
    if let Some(s) = symbol_at(a, offset) {
        let defs = &a.resolved.symbols[s].defs;
        return a
            .resolved
            .occurrences(s)
            .into_iter()
            .filter(|sp| include_declaration || !defs.contains(sp))
            .collect();
    }
    match a.token_at(offset) {
        Some(t) if t.kind == TokenKind::Ident => mapping_name_occurrences(a, t.span),
        _ => Vec::new(),
    }
}

/// Occurrences of the name at `offset` with how each uses it.
pub fn highlights(a: &Analysis, offset: usize) -> Vec<(Span, Access)> {
    if let Some(s) = symbol_at(a, offset) {
        let defs = &a.resolved.symbols[s].defs;
        return a
            .resolved
            .occurrences(s)
            .into_iter()
            .map(|sp| {
                let access = if defs.contains(&sp) {
                    Access::Write
                } else {
                    Access::Read
                };
                (sp, access)
            })
            .collect();
    }
    references(a, offset, true)
        .into_iter()
        .map(|s| (s, Access::Read))
        .collect()
}

/// The span and current name of the renameable name at `offset`.
pub fn prepare_rename(a: &Analysis, offset: usize) -> Option<(Span, String)> {
    let token = a.token_at(offset)?;
    if token.kind != TokenKind::Ident {
        return None;
    }
    a.resolved.symbol_at(token.span.start())?;
    Some((token.span, token.span.text(&a.text).to_string()))
}

/// Edits renaming the name at `offset` to `new_name`, or why not.
pub fn rename(a: &Analysis, offset: usize, new_name: &str) -> Result<Vec<(Span, String)>, String> {
    let Some(id) = symbol_at(a, offset) else {
        return Err("only functions, variables and parameters can be renamed".into());
    };
    let lexed = lex(new_name);
    let is_ident = lexed.diagnostics.is_empty()
        && lexed.comments.is_empty()
        && lexed.tokens.len() == 1
        && lexed.tokens[0].kind == TokenKind::Ident
        && lexed.tokens[0].span.len() == new_name.len();
    if !is_ident {
        let why = if lexed.tokens.len() == 1 && lexed.tokens[0].kind.is_keyword() {
            format!("`{new_name}` is a reserved word")
        } else {
            format!("`{new_name}` is not a valid name")
        };
        return Err(why);
    }
    if new_name == "Machine" {
        return Err("`Machine` is the machine-model constructor".into());
    }
    let sym = &a.resolved.symbols[id];
    if sym.name == new_name {
        return Ok(Vec::new());
    }
    if let Some(clash) = clash(a, id, new_name) {
        return Err(clash);
    }
    Ok(a.resolved
        .occurrences(id)
        .into_iter()
        .map(|s| (s, new_name.to_string()))
        .collect())
}

/// Why renaming symbol `id` to `new_name` would change what a name means.
fn clash(a: &Analysis, id: usize, new_name: &str) -> Option<String> {
    let r = &a.resolved;
    let sym = &r.symbols[id];
    let functions_using = |symbol: usize| -> Vec<usize> {
        r.references_to(symbol)
            .filter_map(|rf| a.enclosing_function(rf.span.start()))
            .collect()
    };
    for (other_id, other) in r.symbols.iter().enumerate() {
        if other_id == id || other.name != new_name || other.kind == SymbolKind::LoopVar {
            continue;
        }
        let conflict = match (sym.scope, other.scope) {
            (Scope::Global, Scope::Global) => sym.kind != SymbolKind::LoopVar,
            // A local of the new name would shadow the renamed global.
            (Scope::Global, Scope::Function(f)) => functions_using(id).contains(&f),
            (Scope::Function(f), Scope::Function(g)) => f == g,
            // The renamed local would shadow a global its function uses.
            (Scope::Function(f), Scope::Global) => functions_using(other_id).contains(&f),
        };
        if conflict {
            return Some(format!("`{new_name}` is already defined in this scope"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "mgpu = Machine(GPU);\ndef f(Task task) {\n    ip = task.ipoint;\n    return mgpu[ip[0] % mgpu.size[0], 0];\n}\nIndexTaskMap foo f;\nTask foo GPU;\n";

    fn at(word: &str, nth: usize) -> usize {
        SRC.match_indices(word).nth(nth).unwrap().0 + 1
    }

    #[test]
    fn definition_and_references() {
        let a = Analysis::new(SRC);
        assert_eq!(definition(&a, at("mgpu", 2)), vec![Span::new(0, 4)]);
        assert_eq!(references(&a, at("mgpu", 0), true).len(), 3);
        assert_eq!(references(&a, at("mgpu", 0), false).len(), 2);
        assert_eq!(definition(&a, at("f;", 0) - 1), vec![Span::new(25, 26)]);
        // Task names: by text, no definition.
        assert_eq!(references(&a, at("foo", 0), true).len(), 2);
        assert!(definition(&a, at("foo", 0)).is_empty());
        let h = highlights(&a, at("ip ", 0));
        assert_eq!(h.iter().filter(|(_, k)| *k == Access::Write).count(), 1);
        assert_eq!(h.len(), 2);
    }

    #[test]
    fn rename_checks_names_and_scopes() {
        let a = Analysis::new(SRC);
        assert_eq!(prepare_rename(&a, at("task.", 0)).unwrap().1, "task");
        assert!(prepare_rename(&a, at("Machine", 0)).is_none());
        assert!(prepare_rename(&a, at("foo", 0)).is_none());
        let edits = rename(&a, at("mgpu", 1), "gpus").unwrap();
        assert_eq!(edits.len(), 3);
        assert!(rename(&a, at("mgpu", 1), "size")
            .unwrap_err()
            .contains("reserved"));
        assert!(rename(&a, at("mgpu", 1), "a b").is_err());
        assert!(rename(&a, at("mgpu", 1), "ip")
            .unwrap_err()
            .contains("already"));
        assert!(rename(&a, at("ip ", 0), "mgpu")
            .unwrap_err()
            .contains("already"));
        assert!(rename(&a, at("ip ", 0), "task").is_err());
        assert_eq!(rename(&a, at("ip ", 0), "point").unwrap().len(), 2);
    }
}
