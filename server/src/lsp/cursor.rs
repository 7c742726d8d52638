//! What is being typed at a cursor: the word under it and the syntactic
//! context (a field of a mapping statement, after `.`, inside a call, ...).
//!
//! Works on the token stream, not the tree, because the text being typed is
//! usually not a complete statement yet: the tokens since the last `;`, `{`
//! or `}` say where the cursor is even when the parser gave up on them.

use mapwright_grammar::ast::{Expr, ExprKind, ParamType, Prop, StmtKind};
use mapwright_grammar::resolve::SymbolKind;
use mapwright_grammar::token::{Token, TokenKind as T};
use mapwright_grammar::Span;

use super::analysis::{is_word, Analysis};
use super::docs::prop_of_token;

/// The syntactic context of the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Context {
    /// Inside a comment or a string: nothing to offer.
    Nothing,
    /// Where a statement begins.
    StatementStart,
    /// In field `field` (0-based, after the keyword) of a mapping statement:
    /// `Region * r GPU |` is field 3 of `Region`.
    MappingField { keyword: T, field: usize },
    /// Right after `.`: a property or method of `base`.
    AfterDot { base: DotBase },
    /// At a parameter's type in `def f(`.
    ParamType,
    /// Where the user invents a name (after `def`, a parameter's type, ...).
    NewName,
    /// Inside an expression; `call` is the innermost call around the cursor.
    Expression { call: Option<CallSite> },
}

/// What the expression before a `.` is, as far as the syntax tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DotBase {
    Task,
    Machine,
    Unknown,
}

/// The call whose argument list contains the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSite {
    pub callee: Callee,
    /// 0-based index of the argument under the cursor.
    pub active_arg: usize,
    /// Offset of the `(`.
    pub open_paren: usize,
}

/// Who is being called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Callee {
    /// `m.split(`
    Method(Prop),
    /// `Machine(`
    Machine,
    /// `print(`
    Print,
    /// A user function (or an unknown name).
    Function(String),
}

/// The cursor: its context, the word being typed, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub context: Context,
    /// The part of the word before the cursor that a completion replaces
    /// (empty at the cursor when no word is being typed).
    pub prefix: Span,
    /// The top-level `def` statement containing the cursor.
    pub function: Option<usize>,
}

/// Computes the cursor context at byte `offset` (clamped to the text).
pub fn cursor_at(a: &Analysis, offset: usize) -> Cursor {
    let mut offset = offset.min(a.text.len());
    while !a.text.is_char_boundary(offset) {
        offset -= 1;
    }
    let function = a.enclosing_function(offset);
    let nothing = |prefix| Cursor {
        context: Context::Nothing,
        prefix,
        function,
    };
    if a.in_comment(offset) {
        return nothing(Span::at(offset));
    }
    let tokens = &a.parsed.tokens;
    let end = tokens.partition_point(|t| t.span.end() <= offset);
    // A token that straddles the cursor: a string (nothing to offer) or a word
    // being edited in the middle.
    let mut prefix = Span::at(offset);
    if let Some(t) = tokens.get(end) {
        if t.span.start() < offset {
            if matches!(t.kind, T::Str | T::UnterminatedStr) {
                return nothing(prefix);
            }
            if is_word(t.kind) {
                prefix = Span::new(t.span.start(), offset);
            }
        }
    }
    let mut before = &tokens[..end];
    if prefix.is_empty() {
        if let Some(last) = before.last() {
            if last.span.end() == offset && (is_word(last.kind) || last.kind == T::Int) {
                prefix = last.span;
                before = &before[..before.len() - 1];
            } else if last.kind == T::UnterminatedStr {
                return nothing(prefix);
            }
        }
    }
    let start = statement_start(before);
    let stmt = &before[start..];
    Cursor {
        context: classify(a, stmt, function),
        prefix,
        function,
    }
}

/// Index of the first token of the statement the cursor is in.
fn statement_start(before: &[Token]) -> usize {
    before
        .iter()
        .rposition(|t| matches!(t.kind, T::Semi | T::LBrace | T::RBrace))
        .map_or(0, |i| i + 1)
}

fn classify(a: &Analysis, stmt: &[Token], function: Option<usize>) -> Context {
    let Some(first) = stmt.first() else {
        return Context::StatementStart;
    };
    let last = stmt[stmt.len() - 1];
    if last.kind == T::Dot {
        return Context::AfterDot {
            base: dot_base(a, &stmt[..stmt.len() - 1], function),
        };
    }
    match first.kind {
        T::KwTask
        | T::KwRegion
        | T::KwLayout
        | T::KwInstanceLimit
        | T::KwCollectMemory
        | T::KwIndexTaskMap
        | T::KwSingleTaskMap
        | T::KwControlReplicate => Context::MappingField {
            keyword: first.kind,
            field: current_field(&stmt[1..]),
        },
        T::KwDef => def_context(stmt),
        T::Ident if stmt.len() == 1 => Context::NewName,
        _ => Context::Expression {
            call: call_site(a, stmt),
        },
    }
}

/// The field the cursor is in, given the tokens of the statement after its
/// keyword: comma-joined lists (`a,b`) and `Align OP N` are one field.
fn current_field(tokens: &[Token]) -> usize {
    let mut groups = 0usize;
    let mut continues = false;
    for (i, t) in tokens.iter().enumerate() {
        if t.kind == T::Comma {
            continues = true;
            continue;
        }
        let prev = i.checked_sub(1).map(|j| tokens[j].kind);
        let joins = continues
            || matches!(
                prev,
                Some(T::Align | T::Lt | T::Le | T::Gt | T::Ge | T::EqEq | T::Ne)
            );
        if !joins {
            groups += 1;
        }
        continues = false;
    }
    let ends_in_group = continues
        || tokens.last().is_some_and(|t| {
            matches!(
                t.kind,
                T::Align | T::Lt | T::Le | T::Gt | T::Ge | T::EqEq | T::Ne
            )
        });
    if ends_in_group {
        groups.saturating_sub(1)
    } else {
        groups
    }
}

fn def_context(stmt: &[Token]) -> Context {
    let Some(open) = stmt.iter().position(|t| t.kind == T::LParen) else {
        return Context::NewName;
    };
    if stmt[open..].iter().any(|t| t.kind == T::RParen) {
        return Context::Nothing;
    }
    match stmt.last().map(|t| t.kind) {
        Some(T::LParen | T::Comma) => Context::ParamType,
        Some(k) if k.is_type() => Context::NewName,
        _ => Context::Nothing,
    }
}

/// The innermost unclosed `(` before the cursor that belongs to a call.
fn call_site(a: &Analysis, stmt: &[Token]) -> Option<CallSite> {
    let mut depth = 0usize;
    let mut commas = 0usize;
    for i in (0..stmt.len()).rev() {
        match stmt[i].kind {
            T::RParen | T::RBracket => depth += 1,
            T::LBracket if depth == 0 => return None,
            T::LParen if depth == 0 => {
                let callee_tok = i.checked_sub(1).map(|j| stmt[j])?;
                let callee = match callee_tok.kind {
                    T::Ident if callee_tok.span.text(&a.text) == "Machine" => Callee::Machine,
                    T::Ident => Callee::Function(callee_tok.span.text(&a.text).to_string()),
                    T::KwPrint => Callee::Print,
                    k => Callee::Method(prop_of_token(k)?),
                };
                return Some(CallSite {
                    callee,
                    active_arg: commas,
                    open_paren: stmt[i].span.start(),
                });
            }
            T::LParen | T::LBracket => depth -= 1,
            T::Comma if depth == 0 => commas += 1,
            _ => {}
        }
    }
    None
}

/// What the expression ending just before a `.` is.
fn dot_base(a: &Analysis, before_dot: &[Token], function: Option<usize>) -> DotBase {
    let Some(last) = before_dot.last() else {
        return DotBase::Unknown;
    };
    match last.kind {
        T::PropParent => DotBase::Task,
        T::Ident => name_base(a, last.span, function, 0),
        T::RParen => {
            // `m.split(0, 2).` or `Machine(GPU).`: find the matching `(`.
            let mut depth = 0usize;
            for i in (0..before_dot.len()).rev() {
                match before_dot[i].kind {
                    T::RParen => depth += 1,
                    T::LParen => {
                        depth -= 1;
                        if depth == 0 {
                            let callee = i.checked_sub(1).map(|j| before_dot[j]);
                            return match callee {
                                Some(t) if t.kind == T::Ident => {
                                    if t.span.text(&a.text) == "Machine" {
                                        DotBase::Machine
                                    } else {
                                        DotBase::Unknown
                                    }
                                }
                                Some(t) => match prop_of_token(t.kind) {
                                    Some(p) if p.returns_machine() => DotBase::Machine,
                                    _ => DotBase::Unknown,
                                },
                                None => DotBase::Unknown,
                            };
                        }
                    }
                    _ => {}
                }
            }
            DotBase::Unknown
        }
        _ => DotBase::Unknown,
    }
}

/// What the name at `span` holds: a parameter's declared type, or the kind of
/// the value its definition assigns.
fn name_base(a: &Analysis, span: Span, function: Option<usize>, depth: u8) -> DotBase {
    let name = span.text(&a.text);
    // Resolution knows complete statements; the one being typed may not be,
    // so look the name up by scope as well.
    let symbol = a.resolved.symbol_at(span.start()).or_else(|| {
        a.visible_symbols(span.start())
            .into_iter()
            .rev()
            .find(|&s| a.resolved.symbols[s].name == name)
    });
    let Some(symbol) = symbol else {
        return if name == "task" {
            DotBase::Task
        } else {
            DotBase::Unknown
        };
    };
    let sym = &a.resolved.symbols[symbol];
    match sym.kind {
        SymbolKind::Parameter => {
            let ty = function.and_then(|f| match &a.program().stmts.get(f)?.kind {
                StmtKind::FuncDef { params, .. } => {
                    params.iter().find(|p| p.name.name == name).map(|p| p.ty)
                }
                _ => None,
            });
            match ty {
                Some(ParamType::Task) => DotBase::Task,
                Some(ParamType::MSpace) => DotBase::Machine,
                _ => DotBase::Unknown,
            }
        }
        SymbolKind::Global | SymbolKind::Local => {
            let Some(def) = sym.defs.first() else {
                return DotBase::Unknown;
            };
            match assigned_value(a, *def) {
                Some(value) if depth < 8 => expr_base(a, value, function, depth + 1),
                _ => DotBase::Unknown,
            }
        }
        _ => DotBase::Unknown,
    }
}

/// The value assigned by the assignment whose name is at `name_span`.
fn assigned_value(a: &Analysis, name_span: Span) -> Option<&Expr> {
    for s in &a.program().stmts {
        match &s.kind {
            StmtKind::Assign { name, value } if name.span == name_span => return Some(value),
            StmtKind::FuncDef { body, .. } if s.span.contains(name_span.start()) => {
                for b in body {
                    if let StmtKind::Assign { name, value } = &b.kind {
                        if name.span == name_span {
                            return Some(value);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    None
}

fn expr_base(a: &Analysis, e: &Expr, function: Option<usize>, depth: u8) -> DotBase {
    if e.as_machine_ctor().is_some() {
        return DotBase::Machine;
    }
    match &e.kind {
        ExprKind::Call { callee, .. } => match &callee.kind {
            ExprKind::Prop { prop, .. } if prop.returns_machine() => DotBase::Machine,
            _ => DotBase::Unknown,
        },
        ExprKind::Prop {
            prop: Prop::Parent, ..
        } => DotBase::Task,
        ExprKind::Paren(inner) => expr_base(a, inner, function, depth),
        ExprKind::Name(_) => name_base(a, e.span, function, depth),
        _ => DotBase::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The context at the `$0` marker.
    fn at(src: &str) -> Cursor {
        let offset = src.find("$0").expect("marker");
        let text = src.replace("$0", "");
        cursor_at(&Analysis::new(&text), offset)
    }

    fn ctx(src: &str) -> Context {
        at(src).context
    }

    #[test]
    fn mapping_statement_fields() {
        let field = |src| match ctx(src) {
            Context::MappingField { field, .. } => field,
            other => panic!("{src}: {other:?}"),
        };
        assert_eq!(field("Region $0"), 0);
        assert_eq!(field("Region * $0"), 1);
        assert_eq!(field("Region * r $0"), 2);
        assert_eq!(field("Region * r G$0"), 2);
        assert_eq!(field("Region * r GPU $0"), 3);
        assert_eq!(field("Region * r GPU FBMEM,$0"), 3);
        assert_eq!(field("Region a,b,$0"), 0);
        assert_eq!(field("Region a, b r $0"), 2);
        assert_eq!(field("Layout * * FBMEM SOA Align==128 $0"), 5);
        assert_eq!(field("Layout * * FBMEM Align <= $0"), 3);
        assert_eq!(
            ctx("Task * GPU;\nLayout * * $0\nmgpu = 1;"),
            Context::MappingField {
                keyword: T::KwLayout,
                field: 2
            }
        );
    }

    #[test]
    fn prefix_is_the_word_before_the_cursor() {
        let c = at("Task * GP$0");
        assert_eq!(c.prefix, Span::new(7, 9));
        let c = at("Task * $0");
        assert!(c.prefix.is_empty());
    }

    #[test]
    fn statement_starts_and_names() {
        assert_eq!(ctx("$0"), Context::StatementStart);
        assert_eq!(ctx("Task * GPU;\n$0"), Context::StatementStart);
        assert_eq!(ctx("Task * GPU;\nTa$0"), Context::StatementStart);
        assert_eq!(ctx("def f(Task t) {\n    $0\n}"), Context::StatementStart);
        assert_eq!(ctx("def $0"), Context::NewName);
        assert_eq!(ctx("def f($0"), Context::ParamType);
        assert_eq!(ctx("def f(Task t, $0"), Context::ParamType);
        assert_eq!(ctx("def f(Task $0"), Context::NewName);
        assert_eq!(ctx("# Task $0"), Context::Nothing);
        assert_eq!(ctx("print(\"a $0\", 1);"), Context::Nothing);
    }

    #[test]
    fn after_dot_guesses_the_base() {
        let base = |src| match ctx(src) {
            Context::AfterDot { base } => base,
            other => panic!("{src}: {other:?}"),
        };
        assert_eq!(base("def f(Task t) { x = t.$0"), DotBase::Task);
        assert_eq!(base("def f(Task t) { x = t.parent.$0"), DotBase::Task);
        assert_eq!(base("m = Machine(GPU);\nx = m.$0"), DotBase::Machine);
        assert_eq!(
            base("m = Machine(GPU);\nn = m.split(0, 2);\nx = n.$0"),
            DotBase::Machine
        );
        assert_eq!(base("x = Machine(GPU).merge(0, 1).$0"), DotBase::Machine);
        assert_eq!(base("x = (1, 2).$0"), DotBase::Unknown);
    }

    #[test]
    fn call_sites_and_active_argument() {
        let call = |src| match ctx(src) {
            Context::Expression { call } => call,
            other => panic!("{src}: {other:?}"),
        };
        let c = call("m = Machine($0").unwrap();
        assert_eq!((c.callee, c.active_arg), (Callee::Machine, 0));
        let c = call("x = m.split(0, $0").unwrap();
        assert_eq!((c.callee, c.active_arg), (Callee::Method(Prop::Split), 1));
        let c = call("x = f(g(1, 2), (3, 4), $0").unwrap();
        assert_eq!((c.callee, c.active_arg), (Callee::Function("f".into()), 2));
        assert_eq!(call("x = m[f(1), $0"), None);
        assert_eq!(call("x = (1, $0"), None);
    }
}
