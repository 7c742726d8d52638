//! The typed syntax tree. Every node carries its byte span; names keep their
//! text. The tree is what the reference grammar accepts; statements that did
//! not parse are kept as [`StmtKind::Error`] so tools can still see the rest.

use std::sync::Arc;

use serde::Serialize;

use crate::Span;

/// A name with its location.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// Processor kinds (`CPU GPU IO PY PROC OMP`): the DSL's keyword set, what
/// a mapper can write. It is separate from the runtime's
/// `mapwright_runtime::machine::ProcKind`, the kinds a machine has (which
/// include `UTIL`, that the DSL cannot name), because this crate knows
/// nothing of machines; the runtime converts (`From<ast::ProcKind>` and
/// `machine::ProcKind::dsl_kind`, the only conversions: other code goes
/// through them). The lexer's `TokenKind::ProcCpu`, ... are tokens, not a
/// third kind set: the parser turns them into this enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ProcKind {
    CPU,
    GPU,
    IO,
    PY,
    PROC,
    OMP,
}

/// Memory kinds (`SYSMEM FBMEM RDMEM ZCMEM SOCKMEM VIRTUAL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum MemKind {
    SYSMEM,
    FBMEM,
    RDMEM,
    ZCMEM,
    SOCKMEM,
    VIRTUAL,
}

impl ProcKind {
    pub const ALL: [ProcKind; 6] = [
        ProcKind::CPU,
        ProcKind::GPU,
        ProcKind::IO,
        ProcKind::PY,
        ProcKind::PROC,
        ProcKind::OMP,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProcKind::CPU => "CPU",
            ProcKind::GPU => "GPU",
            ProcKind::IO => "IO",
            ProcKind::PY => "PY",
            ProcKind::PROC => "PROC",
            ProcKind::OMP => "OMP",
        }
    }

    pub fn from_name(s: &str) -> Option<ProcKind> {
        ProcKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

impl MemKind {
    pub const ALL: [MemKind; 6] = [
        MemKind::SYSMEM,
        MemKind::FBMEM,
        MemKind::RDMEM,
        MemKind::ZCMEM,
        MemKind::SOCKMEM,
        MemKind::VIRTUAL,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MemKind::SYSMEM => "SYSMEM",
            MemKind::FBMEM => "FBMEM",
            MemKind::RDMEM => "RDMEM",
            MemKind::ZCMEM => "ZCMEM",
            MemKind::SOCKMEM => "SOCKMEM",
            MemKind::VIRTUAL => "VIRTUAL",
        }
    }

    pub fn from_name(s: &str) -> Option<MemKind> {
        MemKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

impl std::fmt::Display for ProcKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for MemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A whole mapper file.
///
/// The top-level statements are shared (`Arc`): the re-parse after an
/// edit (`crate::incremental`) reuses the statements before the edit as
/// they are, so a keystroke copies and frees only the statements whose
/// spans move, not the whole tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Program {
    pub stmts: Vec<Arc<Stmt>>,
}

impl Program {
    /// The top-level statement at `index` (a function value's `stmt`).
    pub fn stmt(&self, index: usize) -> Option<&Stmt> {
        self.stmts.get(index).map(|s| &**s)
    }

    /// The functions `IndexTaskMap`/`SingleTaskMap` statements name, in
    /// statement order (repeats kept).
    pub fn mapping_function_names(&self) -> Vec<&str> {
        self.stmts
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::IndexTaskMap { func, .. } | StmtKind::SingleTaskMap { func, .. } => {
                    Some(func.name.as_str())
                }
                _ => None,
            })
            .collect()
    }
}

/// A statement (top level or inside a function body).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stmt {
    pub kind: StmtKind,
    /// From the first token to the `;` or `}` that ends it.
    pub span: Span,
}

/// Which tasks a statement applies to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum TaskSel {
    /// `*`: every task without a more specific rule.
    Star(Span),
    /// One name or a comma-separated list.
    Names(Vec<Ident>),
    /// `CPU`, `GPU` or `OMP` (IndexTaskMap/SingleTaskMap only): all tasks of that kind.
    Kind(ProcKind, Span),
}

/// The region field of a `Region` statement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum RegionSel {
    Star(Span),
    Name(Ident),
    /// A 0-based argument index (Region only).
    Index(i64, Span),
}

/// A processor field: a kind or `*`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ProcSel {
    Star(Span),
    Kind(ProcKind, Span),
}

/// A memory field: a kind or `*`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum MemSel {
    Star(Span),
    Kind(MemKind, Span),
}

/// Comparison used by `Align`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum AlignOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl AlignOp {
    pub fn text(self) -> &'static str {
        match self {
            AlignOp::Lt => "<",
            AlignOp::Le => "<=",
            AlignOp::Gt => ">",
            AlignOp::Ge => ">=",
            AlignOp::Eq => "==",
            AlignOp::Ne => "!=",
        }
    }

    /// Whether `value` satisfies `value OP bound`.
    pub fn holds(self, value: i64, bound: i64) -> bool {
        match self {
            AlignOp::Lt => value < bound,
            AlignOp::Le => value <= bound,
            AlignOp::Gt => value > bound,
            AlignOp::Ge => value >= bound,
            AlignOp::Eq => value == bound,
            AlignOp::Ne => value != bound,
        }
    }
}

/// One layout constraint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Constraint {
    Soa(Span),
    Aos(Span),
    COrder(Span),
    FOrder(Span),
    Compact(Span),
    Exact(Span),
    Align { op: AlignOp, value: i64, span: Span },
}

impl Constraint {
    pub fn span(&self) -> Span {
        match self {
            Constraint::Soa(s)
            | Constraint::Aos(s)
            | Constraint::COrder(s)
            | Constraint::FOrder(s)
            | Constraint::Compact(s)
            | Constraint::Exact(s) => *s,
            Constraint::Align { span, .. } => *span,
        }
    }
}

/// Parameter types of a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ParamType {
    Int,
    Bool,
    IPoint,
    ISpace,
    MSpace,
    Task,
}

impl ParamType {
    pub fn name(self) -> &'static str {
        match self {
            ParamType::Int => "int",
            ParamType::Bool => "bool",
            ParamType::IPoint => "IPoint",
            ParamType::ISpace => "ISpace",
            ParamType::MSpace => "MSpace",
            ParamType::Task => "Task",
        }
    }
}

/// `TYPE name` in a function signature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    pub ty: ParamType,
    pub ty_span: Span,
    pub name: Ident,
}

/// Statement kinds: the eleven of the reference plus `return` (function bodies
/// only) and `Error` for a statement that did not parse.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum StmtKind {
    /// `Task SEL PROC,...;`
    Task {
        tasks: TaskSel,
        procs: Vec<(ProcKind, Span)>,
    },
    /// `Region TASK REGION PROC MEM,...;`
    Region {
        task: TaskSel,
        region: RegionSel,
        proc: ProcSel,
        mems: Vec<(MemKind, Span)>,
    },
    /// `Layout TASK REGION MEM CONSTRAINT*;`
    Layout {
        task: TaskSel,
        region: RegionSel,
        mem: MemSel,
        constraints: Vec<Constraint>,
    },
    /// `InstanceLimit TASK N;`
    InstanceLimit {
        task: Ident,
        limit: i64,
        limit_span: Span,
    },
    /// `CollectMemory TASK REGION;`
    CollectMemory { task: TaskSel, region: RegionSel },
    /// `IndexTaskMap SEL FUNC;`
    IndexTaskMap { tasks: TaskSel, func: Ident },
    /// `SingleTaskMap SEL FUNC;`
    SingleTaskMap { tasks: TaskSel, func: Ident },
    /// `ControlReplicate NAME,...;`
    ControlReplicate { tasks: Vec<Ident> },
    /// `NAME = EXPR;`
    Assign { name: Ident, value: Expr },
    /// `print("fmt", args...);`
    Print {
        format: String,
        format_span: Span,
        args: Vec<Expr>,
    },
    /// `def NAME(PARAMS) { BODY }`
    FuncDef {
        name: Ident,
        params: Vec<Param>,
        body: Vec<Stmt>,
        body_span: Span,
    },
    /// `return EXPR;` (function bodies only)
    Return { value: Expr },
    /// A statement that failed to parse; its diagnostics say why.
    Error,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinOp {
    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

/// Properties and methods after `.`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Prop {
    Size,
    Split,
    Merge,
    Swap,
    Slice,
    Reverse,
    BalanceSplit,
    AutoSplit,
    GreedySplit,
    Volume,
    Has,
    Len,
    Ipoint,
    Ispace,
    Parent,
    Processor,
}

impl Prop {
    pub const ALL: [Prop; 16] = [
        Prop::Size,
        Prop::Split,
        Prop::Merge,
        Prop::Swap,
        Prop::Slice,
        Prop::Reverse,
        Prop::BalanceSplit,
        Prop::AutoSplit,
        Prop::GreedySplit,
        Prop::Volume,
        Prop::Has,
        Prop::Len,
        Prop::Ipoint,
        Prop::Ispace,
        Prop::Parent,
        Prop::Processor,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Prop::Size => "size",
            Prop::Split => "split",
            Prop::Merge => "merge",
            Prop::Swap => "swap",
            Prop::Slice => "slice",
            Prop::Reverse => "reverse",
            Prop::BalanceSplit => "balance_split",
            Prop::AutoSplit => "auto_split",
            Prop::GreedySplit => "greedy_split",
            Prop::Volume => "volume",
            Prop::Has => "has",
            Prop::Len => "len",
            Prop::Ipoint => "ipoint",
            Prop::Ispace => "ispace",
            Prop::Parent => "parent",
            Prop::Processor => "processor",
        }
    }

    pub fn from_name(s: &str) -> Option<Prop> {
        Prop::ALL.into_iter().find(|p| p.name() == s)
    }

    /// True for the methods that must be called (`m.split(0, 2)`).
    pub fn is_method(self) -> bool {
        self.returns_machine() || matches!(self, Prop::Has | Prop::Processor)
    }

    /// True for the methods that turn a machine model into another one.
    pub fn returns_machine(self) -> bool {
        matches!(
            self,
            Prop::Split
                | Prop::Merge
                | Prop::Swap
                | Prop::Slice
                | Prop::Reverse
                | Prop::BalanceSplit
                | Prop::AutoSplit
                | Prop::GreedySplit
        )
    }
}

/// An expression with its span.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// Expression forms of the reference grammar.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ExprKind {
    Int(i64),
    Bool(bool),
    /// A name (`Machine` included: it is an identifier in the reference).
    Name(String),
    Proc(ProcKind),
    Mem(MemKind),
    /// A lone `*`: any point along that dimension.
    Star,
    /// `*e`: spread a tuple into an index or argument list.
    Unpack(Box<Expr>),
    /// `-e`
    Neg(Box<Expr>),
    Binary {
        op: BinOp,
        op_span: Span,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `c ? a : b`
    Ternary {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
        colon_span: Span,
    },
    /// `(e)`: kept so the formatter reproduces the user's grouping.
    Paren(Box<Expr>),
    /// `(e1, e2, ...)`, two or more elements.
    Tuple(Vec<Expr>),
    /// `f(a, ...)`, at least one argument.
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    /// `e[i, j, ...]`
    Index {
        base: Box<Expr>,
        indices: Vec<Expr>,
    },
    /// `e[lo:hi]` with either bound optional.
    Slice {
        base: Box<Expr>,
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
        colon_span: Span,
    },
    /// `e.prop`
    Prop {
        base: Box<Expr>,
        prop: Prop,
        prop_span: Span,
    },
    /// `tuple(body for var in iter)`. `var` is boxed because this rare
    /// form would otherwise set the size of every expression.
    Comprehension {
        body: Box<Expr>,
        var: Box<Ident>,
        iter: Box<Expr>,
    },
}

impl Expr {
    /// `Machine(KIND)`: the processor kind if this is the machine constructor.
    pub fn as_machine_ctor(&self) -> Option<ProcKind> {
        if let ExprKind::Call { callee, args } = &self.kind {
            if let (ExprKind::Name(n), [arg]) = (&callee.kind, args.as_slice()) {
                if n == "Machine" {
                    if let ExprKind::Proc(k) = arg.kind {
                        return Some(k);
                    }
                }
            }
        }
        None
    }

    /// Calls `f` on this expression and every sub-expression, parents first
    /// (children in source order).
    ///
    /// Iterative, with an explicit stack: no input can overflow the Rust
    /// stack here, whatever the depth of the tree.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        let mut stack = vec![self];
        let mut children = Vec::new();
        while let Some(e) = stack.pop() {
            f(e);
            e.for_each_child(&mut |c| children.push(c));
            // Reversed onto the stack, so the first child is visited first.
            stack.extend(children.drain(..).rev());
        }
    }

    /// Calls `f` on each direct sub-expression, in source order. Not
    /// recursive: the building block of bounded walks.
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Int(_)
            | ExprKind::Bool(_)
            | ExprKind::Name(_)
            | ExprKind::Proc(_)
            | ExprKind::Mem(_)
            | ExprKind::Star => {}
            ExprKind::Unpack(e) | ExprKind::Neg(e) | ExprKind::Paren(e) => f(e),
            ExprKind::Binary { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
                ..
            } => {
                f(cond);
                f(then);
                f(otherwise);
            }
            ExprKind::Tuple(items) => items.iter().for_each(f),
            ExprKind::Call { callee, args } => {
                f(callee);
                args.iter().for_each(f);
            }
            ExprKind::Index { base, indices } => {
                f(base);
                indices.iter().for_each(f);
            }
            ExprKind::Slice { base, lo, hi, .. } => {
                f(base);
                if let Some(lo) = lo {
                    f(lo);
                }
                if let Some(hi) = hi {
                    f(hi);
                }
            }
            ExprKind::Prop { base, .. } => f(base),
            ExprKind::Comprehension { body, iter, .. } => {
                f(body);
                f(iter);
            }
        }
    }

    /// The span of the first node (in walk order) that lies more than
    /// `limit` levels below this one (this node is level 1), if any.
    ///
    /// Iterative. The parser uses it to guarantee that no tree it hands on is
    /// deeper than [`crate::parser::MAX_NESTING`], which is what lets every
    /// later pass (checker, evaluator, formatter, resolution, the language
    /// server, and the derived `Clone`/`Drop`/`Debug`) recurse freely.
    pub fn deeper_than(&self, limit: usize) -> Option<Span> {
        let mut stack = vec![(self, 1usize)];
        while let Some((e, level)) = stack.pop() {
            if level > limit {
                return Some(e.span);
            }
            e.for_each_child(&mut |c| stack.push((c, level + 1)));
        }
        None
    }

    /// Drops a tree of any depth without recursion (the derived drop glue
    /// recurses once per level). For trees the parser rejects as too deep.
    pub fn dismantle(self) {
        let mut stack = vec![self];
        while let Some(mut e) = stack.pop() {
            let kind = std::mem::replace(&mut e.kind, ExprKind::Star);
            match kind {
                ExprKind::Int(_)
                | ExprKind::Bool(_)
                | ExprKind::Name(_)
                | ExprKind::Proc(_)
                | ExprKind::Mem(_)
                | ExprKind::Star => {}
                ExprKind::Unpack(x) | ExprKind::Neg(x) | ExprKind::Paren(x) => stack.push(*x),
                ExprKind::Binary { lhs, rhs, .. } => stack.extend([*lhs, *rhs]),
                ExprKind::Ternary {
                    cond,
                    then,
                    otherwise,
                    ..
                } => stack.extend([*cond, *then, *otherwise]),
                ExprKind::Tuple(items) => stack.extend(items),
                ExprKind::Call { callee, args } => {
                    stack.push(*callee);
                    stack.extend(args);
                }
                ExprKind::Index { base, indices } => {
                    stack.push(*base);
                    stack.extend(indices);
                }
                ExprKind::Slice { base, lo, hi, .. } => {
                    stack.push(*base);
                    stack.extend(lo.map(|b| *b));
                    stack.extend(hi.map(|b| *b));
                }
                ExprKind::Prop { base, .. } => stack.push(*base),
                ExprKind::Comprehension { body, iter, .. } => stack.extend([*body, *iter]),
            }
        }
    }
}

impl Stmt {
    /// Calls `f` on every expression directly in this statement (not in nested
    /// function bodies).
    pub fn exprs(&self) -> Vec<&Expr> {
        match &self.kind {
            StmtKind::Assign { value, .. } | StmtKind::Return { value } => vec![value],
            StmtKind::Print { args, .. } => args.iter().collect(),
            _ => Vec::new(),
        }
    }
}

/// Strips spans so two trees can be compared for meaning (the formatter's
/// "re-parse gives the same AST" check).
pub fn without_spans(program: &Program) -> String {
    // Spans are the only position-dependent data; render the tree with them
    // zeroed out via serde and compare the text.
    let mut value = serde_json::to_value(program).unwrap_or(serde_json::Value::Null);
    zero_spans(&mut value);
    value.to_string()
}

fn zero_spans(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            let is_span = map.len() == 2 && map.contains_key("start") && map.contains_key("end");
            if is_span {
                *v = serde_json::Value::Null;
                return;
            }
            for (_, child) in map.iter_mut() {
                zero_spans(child);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(zero_spans),
        _ => {}
    }
}
