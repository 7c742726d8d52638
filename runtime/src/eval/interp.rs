//! The interpreter proper: one evaluation (the top level or one entry
//! call) with its bookkeeping for limits and errors, and the top-level
//! statements.

use mapwright_grammar::ast::{self, Expr, ParamType, Program, Stmt, StmtKind, TaskSel};
use mapwright_grammar::Span;

use crate::mspace::MSpaceError;

use super::env::{Frame, State};
use super::error::{EvalError, EvalErrorKind, Failure, R};
use super::evaluator::{EntryKind, MappingKind, MappingStmt};
use super::expr::fits_int;
use super::value::{reference_print, Value};

/// One evaluation (the top level or one entry call): the reference's
/// `local_symbol` stack plus the bookkeeping for limits and errors.
pub(super) struct Interp<'p, 's> {
    pub(super) program: &'p Program,
    pub(super) st: &'s mut State,
    pub(super) frames: Vec<Frame<'p>>,
    pub(super) calls: Vec<(String, Span)>,
    pub(super) nesting: usize,
    pub(super) steps: u64,
}

impl<'p, 's> Interp<'p, 's> {
    pub(super) fn new(program: &'p Program, st: &'s mut State) -> Self {
        Interp {
            program,
            st,
            frames: Vec::new(),
            calls: Vec::new(),
            nesting: 0,
            steps: 0,
        }
    }

    pub(super) fn error(
        &self,
        kind: EvalErrorKind,
        span: Span,
        message: impl Into<String>,
    ) -> Failure {
        Box::new(EvalError {
            kind,
            message: message.into(),
            span,
            call_stack: self.calls.clone(),
            mspace: None,
        })
    }

    pub(super) fn fail<T>(
        &self,
        kind: EvalErrorKind,
        span: Span,
        message: impl Into<String>,
    ) -> R<T> {
        Err(self.error(kind, span, message))
    }

    pub(super) fn mspace_error(&self, err: MSpaceError, span: Span) -> Failure {
        let mut e = self.error(EvalErrorKind::MachineModel, span, err.to_string());
        e.mspace = Some(Box::new(err));
        e
    }

    /// Charges `n` steps to the budget.
    pub(super) fn tick(&mut self, n: u64, span: Span) -> R<()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.st.limits.max_steps {
            return self.fail(
                EvalErrorKind::StepLimit,
                span,
                format!(
                    "evaluation exceeded {} steps: the mapper does not finish in reasonable time (unbounded recursion or a huge computation?)",
                    self.st.limits.max_steps
                ),
            );
        }
        Ok(())
    }

    pub(super) fn int(&self, v: i64, span: Span) -> R<Value> {
        if fits_int(v) {
            Ok(Value::Int(v))
        } else {
            self.fail(
                EvalErrorKind::Overflow,
                span,
                format!("integer overflow: {v} does not fit the reference's 32-bit int"),
            )
        }
    }

    fn write_output(&mut self, text: &str) {
        if self.st.output_truncated {
            return;
        }
        let room = self
            .st
            .limits
            .max_output
            .saturating_sub(self.st.output.len());
        if text.len() <= room {
            self.st.output.push_str(text);
        } else {
            let mut cut = room;
            while cut > 0 && !text.is_char_boundary(cut) {
                cut -= 1;
            }
            self.st.output.push_str(&text[..cut]);
            self.st.output.push_str("\n[output truncated]\n");
            self.st.output_truncated = true;
        }
    }

    /// Runs top-level statement `index` (the reference's `Stmt::run` with an
    /// empty local stack).
    pub(super) fn exec_top(&mut self, index: usize) -> R<()> {
        let program = self.program;
        let Some(stmt) = program.stmts.get(index) else {
            return Ok(());
        };
        self.tick(1, stmt.span)?;
        let record = |st: &mut State, kind| st.mapping.push(MappingStmt { stmt: index, kind });
        match &stmt.kind {
            StmtKind::Assign { name, value } => {
                let v = self.eval(value)?;
                self.check_assignable(&v, value.span)?;
                if self.st.globals.contains_key(&name.name) {
                    return self.fail(
                        EvalErrorKind::GlobalConflict,
                        name.span,
                        format!(
                            "AssignNode multiple {} cause conflicts in global_symbol!",
                            name.name
                        ),
                    );
                }
                self.define_global(&name.name, v);
            }
            StmtKind::Print { format, args, .. } => self.print(format, args, stmt.span)?,
            StmtKind::FuncDef { name, .. } => {
                // First definition wins, silently (FuncDefNode::run).
                if !self.st.globals.contains_key(&name.name) {
                    self.define_global(
                        &name.name,
                        Value::Function {
                            name: name.name.clone(),
                            stmt: index,
                        },
                    );
                }
            }
            StmtKind::IndexTaskMap { tasks, func } => {
                self.register_entry(EntryKind::Index, tasks, func)?;
                record(self.st, MappingKind::IndexTaskMap);
            }
            StmtKind::SingleTaskMap { tasks, func } => {
                self.register_entry(EntryKind::Single, tasks, func)?;
                record(self.st, MappingKind::SingleTaskMap);
            }
            StmtKind::Task { .. } => record(self.st, MappingKind::Task),
            StmtKind::Region { .. } => record(self.st, MappingKind::Region),
            StmtKind::Layout { .. } => record(self.st, MappingKind::Layout),
            StmtKind::InstanceLimit { .. } => record(self.st, MappingKind::InstanceLimit),
            StmtKind::CollectMemory { .. } => record(self.st, MappingKind::CollectMemory),
            StmtKind::ControlReplicate { .. } => record(self.st, MappingKind::ControlReplicate),
            StmtKind::Return { .. } => {
                return self.fail(
                    EvalErrorKind::Syntax,
                    stmt.span,
                    "`return` outside a function",
                )
            }
            StmtKind::Error => {
                return self.fail(
                    EvalErrorKind::Syntax,
                    stmt.span,
                    "this statement did not parse",
                )
            }
        }
        Ok(())
    }

    /// `IndexTaskMap`/`SingleTaskMap`: the function must exist already and
    /// take one `Task`; each task key maps to the first function given.
    fn register_entry(&mut self, entry: EntryKind, tasks: &TaskSel, func: &ast::Ident) -> R<()> {
        let stmt = match self.st.globals.get(&func.name) {
            None => {
                return self.fail(
                    EvalErrorKind::UndefinedFunction,
                    func.span,
                    format!(
                        "{}'s function undefined: `{}` is not defined before this statement",
                        entry.stmt(),
                        func.name
                    ),
                )
            }
            Some(Value::Function { stmt, .. }) => *stmt,
            Some(other) => {
                return self.fail(
                    EvalErrorKind::UndefinedFunction,
                    func.span,
                    format!(
                        "{}'s mapping function is undefined: `{}` is {}",
                        entry.stmt(),
                        func.name,
                        other.describe()
                    ),
                )
            }
        };
        let keys: Vec<String> = match tasks {
            TaskSel::Star(_) => vec![String::from("*")],
            TaskSel::Names(names) => names.iter().map(|n| n.name.clone()).collect(),
            TaskSel::Kind(k, _) => vec![k.name().to_string()],
        };
        let table = match entry {
            EntryKind::Index => &mut self.st.index_funcs,
            EntryKind::Single => &mut self.st.single_funcs,
        };
        for key in keys {
            table.entry(key).or_insert_with(|| func.name.clone());
        }
        let ok = matches!(
            self.program.stmt(stmt),
            Some(Stmt { kind: StmtKind::FuncDef { params, .. }, .. })
                if params.len() == 1 && params.first().is_some_and(|p| p.ty == ParamType::Task)
        );
        if !ok {
            return self.fail(
                EvalErrorKind::EntrySignature,
                func.span,
                entry.signature_message(),
            );
        }
        Ok(())
    }

    /// `print("...{}...", args)`: each `{}` prints the next argument in the
    /// reference's format; arguments without a `{}` are never evaluated.
    pub(super) fn print(&mut self, format: &str, args: &'p [Expr], span: Span) -> R<()> {
        let mut rest = format;
        let mut i = 0usize;
        while let Some(pos) = rest.find("{}") {
            let (before, after) = rest.split_at(pos);
            self.write_output(before);
            let Some(arg) = args.get(i) else {
                return Err(self.print_arguments_error(args.len(), span));
            };
            let v = self.eval(arg)?;
            self.write_value(&v);
            rest = after.get(2..).unwrap_or("");
            i += 1;
        }
        self.write_output(rest);
        self.write_output("\n");
        Ok(())
    }

    fn write_value(&mut self, v: &Value) {
        let mut text = String::new();
        reference_print(v, self.program, &mut text, 0);
        self.write_output(&text);
    }

    #[cold]
    #[inline(never)]
    fn print_arguments_error(&self, count: usize, span: Span) -> Failure {
        self.error(
            EvalErrorKind::PrintArguments,
            span,
            format!(
                "Not enough arguments for print(): the format has more `{{}}` than the {count} argument(s)"
            ),
        )
    }
}
