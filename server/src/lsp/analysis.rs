//! One document's analysis: the parse, the resolved names, the inferred
//! types, every diagnostic and the line index, computed once per document
//! version and shared (as an `Arc`) by every feature. Also the small queries
//! every feature needs (token at an offset, enclosing function).

use mapwright_grammar::fast_hash::FastMap;

use mapwright_grammar::ast::{Program, Stmt, StmtKind};
use std::sync::Arc;

use mapwright_grammar::check::{check_after_reparse, CheckMemo, OldCheck, SymbolTypes, Ty};
use mapwright_grammar::incremental::{reanalyze_remembering, reparse_owned};
use mapwright_grammar::resolve::{Resolved, Scope, SymbolKind};
use mapwright_grammar::token::{Token, TokenKind};
use mapwright_grammar::{analyze_remembering, Diagnostic, LineIndex, Parsed, Span};

/// Everything the features derive from one version of a document's text.
#[derive(Debug)]
pub struct Analysis {
    /// The document's text, shared with it and with [`Analysis::index`].
    pub text: Arc<String>,
    /// Shared so that the mapping can be resolved from the parse while the
    /// check runs (see [`Analysis::after_edit_consuming`]).
    pub parsed: Arc<Parsed>,
    pub index: LineIndex,
    pub resolved: Resolved,
    /// Inferred type of each symbol (index into `resolved.symbols`).
    pub symbol_types: SymbolTypes,
    /// Inferred return type of each function, by name.
    pub returns: FastMap<std::sync::Arc<str>, Ty>,
    /// The semantic diagnostics, in source order. The syntax ones stay in
    /// `parsed` (the next re-parse reuses them from there):
    /// [`Analysis::diagnostics`] lists both.
    pub check_diagnostics: Vec<Diagnostic>,
    /// Each statement's check, reused by the analysis of the next edit.
    pub check_memo: CheckMemo,
}

impl Analysis {
    /// Parses, resolves and checks `text` with the grammar's front end. Never
    /// panics on any input (the grammar's invariant); the LSP layer still
    /// guards against it.
    pub fn new(text: &str) -> Analysis {
        Analysis::sharing(Arc::new(text.to_string()))
    }

    /// [`Analysis::new`] of a text it shares (the document's).
    pub fn sharing(text: Arc<String>) -> Analysis {
        let front = analyze_remembering(&text);
        Analysis::from_front_end(text, front)
    }

    /// The analysis of `text`, an edited version of `prev`'s text: only the
    /// top-level statements the edit can affect are parsed again, and only
    /// the statements whose check can have changed are checked again (see
    /// `mapwright_grammar::incremental` and `check::memo`); the result
    /// equals [`Analysis::new`].
    pub fn after_edit(prev: &Analysis, text: &str) -> Analysis {
        let (front, _, _) = reanalyze_remembering(&prev.parsed, &prev.check_memo, &prev.text, text);
        Analysis::from_front_end(Arc::new(text.to_string()), front)
    }

    /// [`Analysis::after_edit`] that consumes `prev` where nothing else
    /// holds it (no request is using it; the caller takes it out of the
    /// recently-used list first): its parse is then moved and shifted in
    /// place rather than copied (see `incremental::reparse_owned`), its
    /// names are resolved again only where the re-parse replaced
    /// statements (`resolve::resolve_after_edit`), and what is left of it
    /// is handed to `free` (the server frees it on its dropping thread).
    /// Equal to [`Analysis::after_edit`] either way.
    ///
    /// `on_parsed` is handed the new parse as soon as it exists, before the
    /// check: the server starts resolving the mapping from it on its
    /// resolving thread, so that the two run side by side on a big file
    /// with an application, where one followed the other. (Not called
    /// where the previous analysis or its parse is still shared: that
    /// path parses and checks in one.)
    pub fn after_edit_consuming(
        prev: Arc<Analysis>,
        text: &Arc<String>,
        free: impl Fn(Box<dyn Send>),
        on_parsed: impl FnOnce(&Arc<Parsed>),
    ) -> Analysis {
        let prev = match Arc::try_unwrap(prev) {
            Ok(prev) => prev,
            Err(shared) => {
                let front =
                    reanalyze_remembering(&shared.parsed, &shared.check_memo, &shared.text, text).0;
                let next = Analysis::from_front_end(text.clone(), front);
                // (If its other holder let go meanwhile, this is the last
                // reference: freed off this path all the same.)
                free(Box::new(shared));
                return next;
            }
        };
        let Analysis {
            text: old_text,
            parsed,
            check_memo,
            index,
            resolved,
            symbol_types,
            returns,
            check_diagnostics,
        } = prev;
        let old_lines = index.into_line_starts();
        // (The old check's diagnostics go to the next check, which takes
        // over those the edit left as they were.)
        let rest = (symbol_types, returns);
        free(Box::new(rest));
        // (Shared only while an earlier resolution still reads it: then
        // re-analysed from it, as from a shared analysis above.)
        let parsed = match Arc::try_unwrap(parsed) {
            Ok(parsed) => parsed,
            Err(shared) => {
                let front = reanalyze_remembering(&shared, &check_memo, &old_text, text).0;
                free(Box::new((
                    shared,
                    check_memo,
                    old_text,
                    resolved,
                    check_diagnostics,
                )));
                return Analysis::from_front_end(text.clone(), front);
            }
        };
        let (parsed, how, unused) = reparse_owned(parsed, &old_text, text);
        let parsed = Arc::new(parsed);
        on_parsed(&parsed);
        // (The old names, line starts and diagnostics are reused after an
        // incremental re-parse; the names and diagnostics are handed back
        // after a full one.)
        let old = OldCheck {
            memo: &check_memo,
            source: &old_text,
            names: resolved,
            lines: old_lines,
            diagnostics: check_diagnostics,
        };
        let (checked, _, leftovers) = check_after_reparse(&parsed, text, &how, old);
        free(Box::new((old_text, check_memo, unused, leftovers)));
        Analysis::with_checked(text.clone(), parsed, checked)
    }

    fn from_front_end(text: Arc<String>, front: mapwright_grammar::Analysis) -> Analysis {
        let mapwright_grammar::Analysis { parsed, checked } = front;
        Analysis::with_checked(text, Arc::new(parsed), checked)
    }

    fn with_checked(
        text: Arc<String>,
        parsed: Arc<Parsed>,
        checked: mapwright_grammar::check::Checked,
    ) -> Analysis {
        Analysis {
            index: LineIndex::sharing(text.clone(), checked.lines),
            text,
            parsed,
            resolved: checked.resolved,
            symbol_types: checked.symbol_types,
            returns: checked.returns,
            check_diagnostics: checked.diagnostics,
            check_memo: checked.memo,
        }
    }

    /// Syntax and semantic diagnostics, in source order (what `mapwright
    /// check` reports, as `mapwright_grammar::Analysis::diagnostics` orders
    /// them: a stable sort by span, syntax first at equal spans). Borrowed:
    /// a copy of the parse's diagnostics on every keystroke (hundreds in a
    /// big file with many mistakes, each with its texts and fixes) was a
    /// large part of the analysis's time, and of its memory.
    pub fn diagnostics(&self) -> Vec<&Diagnostic> {
        mapwright_grammar::diagnostic::in_source_order(
            &self.parsed.diagnostics,
            &self.check_diagnostics,
        )
    }

    /// The inferred type of symbol `id`, if known.
    pub fn symbol_type(&self, id: usize) -> Option<Ty> {
        self.symbol_types.get(id).filter(|t| *t != Ty::Unknown)
    }

    pub fn program(&self) -> &Program {
        &self.parsed.program
    }

    /// The significant token under the cursor at `offset`: one that contains
    /// it, or else one that ends exactly there (the cursor right after a
    /// word). Words win over punctuation when both touch the cursor.
    pub fn token_at(&self, offset: usize) -> Option<Token> {
        let tokens = &self.parsed.tokens;
        let i = tokens.partition_point(|t| t.span.end() < offset);
        let candidates = tokens[i..]
            .iter()
            .take(2)
            .filter(|t| t.span.start() <= offset && offset <= t.span.end());
        let mut best: Option<Token> = None;
        for t in candidates {
            let wordy = is_word(t.kind);
            match best {
                None => best = Some(*t),
                Some(b) if !is_word(b.kind) && wordy => best = Some(*t),
                _ => {}
            }
        }
        best
    }

    /// True if `offset` is inside a comment (after its first character).
    pub fn in_comment(&self, offset: usize) -> bool {
        self.parsed
            .comments
            .iter()
            .any(|c| c.span.start() < offset && offset <= c.span.end())
    }

    /// The index of the top-level `def` statement whose text contains
    /// `offset`, if any.
    pub fn enclosing_function(&self, offset: usize) -> Option<usize> {
        self.program().stmts.iter().position(|s| {
            matches!(s.kind, StmtKind::FuncDef { .. }) && s.span.start() < offset && {
                // A body without its `}` yet runs to the next statement.
                offset <= s.span.end() || !self.text[s.span.start()..s.span.end()].ends_with('}')
            }
        })
    }

    /// The top-level statement that contains `offset`.
    pub fn statement_at(&self, offset: usize) -> Option<&Stmt> {
        self.program()
            .stmts
            .iter()
            .find(|s| s.span.start() <= offset && offset <= s.span.end())
            .map(|s| &**s)
    }

    /// Names visible at `offset`: every global and function, plus the
    /// parameters and locals of the enclosing function. Each symbol index once.
    pub fn visible_symbols(&self, offset: usize) -> Vec<usize> {
        let func = self.enclosing_function(offset);
        self.resolved
            .symbols
            .iter()
            .enumerate()
            .filter(|(_, s)| match (s.scope, s.kind) {
                (_, SymbolKind::LoopVar) => false,
                (Scope::Global, _) => true,
                (Scope::Function(f), _) => Some(f) == func,
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The `FuncDef` statement named `name`.
    pub fn function_named(&self, name: &str) -> Option<&Stmt> {
        self.program()
            .stmts
            .iter()
            .find(|s| matches!(&s.kind, StmtKind::FuncDef { name: n, .. } if n.name == name))
            .map(|s| &**s)
    }

    /// The source text of `span` with runs of whitespace collapsed and cut to
    /// `max` characters, for one-line labels.
    pub fn one_line(&self, span: Span, max: usize) -> String {
        one_line(span.text(&self.text), max)
    }
}

/// `text` with runs of whitespace collapsed, cut to `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= max {
        collapsed
    } else {
        let cut: String = collapsed.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// True for identifiers and keywords (tokens spelled with letters).
pub fn is_word(kind: TokenKind) -> bool {
    kind == TokenKind::Ident
        || kind
            .keyword_text()
            .is_some_and(|t| t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_at_prefers_words_and_touching_ends() {
        let a = Analysis::new("m = Machine(GPU);");
        assert_eq!(a.token_at(1).map(|t| t.kind), Some(TokenKind::Ident));
        // Between `Machine` and `(`: the word wins.
        assert_eq!(a.token_at(11).map(|t| t.kind), Some(TokenKind::Ident));
        assert_eq!(a.token_at(13).map(|t| t.kind), Some(TokenKind::ProcGpu));
        assert!(a.token_at(99).is_none());
    }

    #[test]
    fn an_analysis_after_an_edit_equals_a_fresh_one() {
        let before = "m = Machine(GPU);\nTask * GPU;\ndef f(Task t) {\n    return m[0, 0];\n}\nIndexTaskMap foo f;\nx = 1;\n";
        let prev = Analysis::new(before);
        for after in [
            before.replace("m[0, 0]", "m[1, 0]"),
            before.replace("x = 1;", "x = y;"),
            before.replace("}\n", ""),
        ] {
            let inc = Analysis::after_edit(&prev, &after);
            let full = Analysis::new(&after);
            assert_eq!(inc.parsed.program, full.parsed.program);
            assert_eq!(inc.diagnostics(), full.diagnostics());
            // The same list, in the same order, as the front end's.
            let front = mapwright_grammar::analyze(&after).diagnostics();
            assert_eq!(full.diagnostics(), front.iter().collect::<Vec<_>>());
            assert_eq!(inc.resolved.symbols, full.resolved.symbols);
            assert_eq!(inc.resolved.references, full.resolved.references);
            assert_eq!(inc.symbol_types, full.symbol_types);
            assert_eq!(inc.returns, full.returns);
            assert_eq!(*inc.text, after);
        }
    }

    #[test]
    fn a_consumed_analysis_gives_the_same_next_one() {
        let before = "m = Machine(GPU);\nTask * GPU;\ndef f(Task t) {\n    return m[0, 0];\n}\nIndexTaskMap foo f;\nx = 1;\ny = x;\n";
        let edits = [
            before.replace("m[0, 0]", "m[1, 0]"),
            before.replace("x = 1;", "x = y;"),
            before.replace("}\n", ""),
            before.replace("y = x;\n", ""),
        ];
        let same = |a: &Analysis, text: &str| {
            let full = Analysis::new(text);
            assert_eq!(a.parsed.program, full.parsed.program);
            assert_eq!(a.parsed.tokens, full.parsed.tokens);
            assert_eq!(a.diagnostics(), full.diagnostics());
            assert_eq!(a.resolved.symbols, full.resolved.symbols);
            assert_eq!(a.resolved.references, full.resolved.references);
            assert_eq!(a.symbol_types, full.symbol_types);
            let lines = |x: &Analysis| {
                (0..=x.text.len())
                    .map(|o| x.index.line_of(o))
                    .collect::<Vec<_>>()
            };
            assert_eq!(lines(a), lines(&full));
            assert_eq!(*a.text, text);
        };
        let edits: Vec<Arc<String>> = edits.into_iter().map(Arc::new).collect();
        for after in &edits {
            // Held only here: consumed, its statements shifted in place.
            // The parse it hands on before the check is the one it keeps.
            let alone = Arc::new(Analysis::new(before));
            let mut handed = None;
            let next =
                Analysis::after_edit_consuming(alone, after, drop, |p| handed = Some(p.clone()));
            same(&next, after);
            assert!(Arc::ptr_eq(&handed.unwrap(), &next.parsed));
            // Held by a request too: copied, and left as it was.
            let held = Arc::new(Analysis::new(before));
            let next = Analysis::after_edit_consuming(held.clone(), after, drop, |_| {});
            same(&next, after);
            same(&held, before);
            // Its parse still read by a resolution: re-analysed from it,
            // which is left as it was.
            let alone = Arc::new(Analysis::new(before));
            let reading = alone.parsed.clone();
            let next = Analysis::after_edit_consuming(alone, after, drop, |_| {});
            same(&next, after);
            assert_eq!(reading.program, Analysis::new(before).parsed.program);
        }
        // A chain of edits, each consuming the one before.
        let mut a = Arc::new(Analysis::new(before));
        for after in &edits {
            a = Arc::new(Analysis::after_edit_consuming(a, after, drop, |_| {}));
            same(&a, after);
        }
    }

    #[test]
    fn enclosing_function_tolerates_an_unclosed_body() {
        let src = "def f(Task t) {\n    x = 1;\n";
        let a = Analysis::new(src);
        assert_eq!(a.enclosing_function(src.len()), Some(0));
        let b = Analysis::new("m = 1;\ndef f(Task t) { return m; }\nx = 2;\n");
        assert_eq!(b.enclosing_function(1), None);
        assert_eq!(b.enclosing_function(24), Some(1));
        assert_eq!(b.enclosing_function(40), None);
    }
}

/// Every feature on a 10,000-line file, timed: a guard against accidentally
/// quadratic work (the budget is generous for debug builds on a busy CI).
#[cfg(test)]
mod scale {
    use std::time::{Duration, Instant};

    use mapwright_grammar::line_index::Encoding;
    use mapwright_grammar::Span;

    use super::Analysis;
    use crate::lsp::providers::{Providers, Query};
    use crate::lsp::{
        code_actions, folding, formatting, navigation, semantic_tokens, signature, symbols,
    };

    fn big_file(lines: usize) -> String {
        let mut s = String::from("mgpu = Machine(GPU);\n# a comment — é\n");
        let mut i = 0;
        while s.lines().count() < lines {
            s.push_str(&format!(
                "Task t{i} GPU,CPU;\nRegion * r{i} GPU FBMEM;\nLayout * * * SOA C_order;\ndef f{i}(Task task) {{\n    ip = task.ipoint;\n    return mgpu[ip[0] % mgpu.size[0], 0];\n}}\nIndexTaskMap t{i} f{i};\n"
            ));
            i += 1;
        }
        s
    }

    #[test]
    fn features_stay_fast_on_a_10000_line_file() {
        let text = big_file(10_000);
        let start = Instant::now();
        let a = Analysis::new(&text);
        let mid = text.len() / 2;
        let providers = Providers::builtin();
        let q = Query::plain(&a, mid);
        providers.complete(&q);
        providers.hover(&q);
        providers.inlay_hints(&crate::lsp::providers::InlayQuery::plain(
            &a,
            Span::new(0, text.len()),
        ));
        signature::signature_help(&a, mid);
        navigation::references(&a, 3, true);
        symbols::outline(&a);
        folding::folds(&a);
        let tokens = semantic_tokens::classify(&a);
        semantic_tokens::encode(&a, &tokens, Encoding::Utf16);
        formatting::format_document(&a);
        code_actions::missing_machines(&a);
        let took = start.elapsed();
        assert!(took < Duration::from_secs(20), "{took:?}");
        eprintln!("10,000 lines: every feature in {took:?}");
    }
}
