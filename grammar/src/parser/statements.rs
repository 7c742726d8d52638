//! The mapping statements: Task, Region, Layout, InstanceLimit, CollectMemory,
//! IndexTaskMap/SingleTaskMap, ControlReplicate, assignments and print.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn top_stmt(&mut self) -> PResult<Stmt> {
        let start = self.cur_span().start();
        let kind = match self.peek() {
            Some(T::KwTask) => self.task_stmt()?,
            Some(T::KwRegion) => self.region_stmt()?,
            Some(T::KwLayout) => self.layout_stmt()?,
            Some(T::KwInstanceLimit) => self.instance_limit_stmt()?,
            Some(T::KwCollectMemory) => self.collect_stmt()?,
            Some(T::KwIndexTaskMap) => self.task_map_stmt(true)?,
            Some(T::KwSingleTaskMap) => self.task_map_stmt(false)?,
            Some(T::KwControlReplicate) => self.control_replicate_stmt()?,
            Some(T::KwDef) => self.func_def()?,
            Some(T::KwPrint) => self.print_stmt()?,
            Some(T::Ident) => self.assign_stmt()?,
            Some(T::Semi) => {
                let span = self.cur_span();
                return self.fail(
                    Diagnostic::error("E0116", span, "empty statement: the DSL has no `;;`")
                        .with_label("extra `;`")
                        .with_fix(Fix::safe(
                            "remove the extra `;`",
                            vec![(span, String::new())],
                        )),
                );
            }
            Some(T::KwReturn) => {
                return self.fail(
                    Diagnostic::error("E0112", self.cur_span(), "`return` outside a function")
                        .with_label("only allowed inside `def ... { }`"),
                );
            }
            Some(k) if k.is_keyword() && self.peek_at(1) == Some(T::Assign) => {
                self.assign_stmt()?
            }
            _ => return self.expected("a statement"),
        };
        Ok(Stmt {
            kind,
            span: Span::new(start, self.prev_end()),
        })
    }

    pub(super) fn task_sel(&mut self, allow_kinds: bool, what: &str) -> PResult<TaskSel> {
        match self.peek() {
            Some(T::Star) => Ok(TaskSel::Star(self.bump())),
            Some(k @ (T::ProcCpu | T::ProcGpu | T::ProcOmp)) if allow_kinds => {
                let kind = proc_kind(k).unwrap_or(ProcKind::CPU);
                Ok(TaskSel::Kind(kind, self.bump()))
            }
            Some(k) if allow_kinds && k.is_proc_kind() => self.fail(
                Diagnostic::error(
                    "E0100",
                    self.cur_span(),
                    format!(
                        "`{}` cannot select tasks here: only CPU, GPU and OMP can",
                        self.cur_text()
                    ),
                )
                .with_label("expected a task name, `*`, CPU, GPU or OMP"),
            ),
            Some(T::Ident) => {
                let mut names = vec![self.ident(what)?];
                while self.at(T::Comma) {
                    self.bump();
                    if self.at(T::Ident) {
                        names.push(self.ident(what)?);
                    } else if self.at(T::Star) {
                        return self.fail(
                            Diagnostic::error(
                                "E0100",
                                self.cur_span(),
                                "a task list holds names only, not `*`",
                            )
                            .with_label("expected a task name"),
                        );
                    } else {
                        return self.expected(what);
                    }
                }
                Ok(TaskSel::Names(names))
            }
            Some(k) if k.is_keyword() && !k.starts_statement() && !k.is_proc_kind() => {
                Ok(TaskSel::Names(vec![self.keyword_as_name(what)]))
            }
            _ => self.expected(&format!("{what} or `*`")),
        }
    }

    pub(super) fn task_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let tasks = self.task_sel(false, "a task name")?;
        let procs = self.proc_list()?;
        self.expect_semi("`,` or `;`")?;
        Ok(StmtKind::Task { tasks, procs })
    }

    pub(super) fn proc_list(&mut self) -> PResult<Vec<(ProcKind, Span)>> {
        let mut procs = Vec::new();
        loop {
            match self.peek().and_then(proc_kind) {
                Some(kind) => procs.push((kind, self.bump())),
                None => {
                    return self
                        .expected_kind("a processor kind (CPU, GPU, OMP, IO, PY, PROC)", true)
                }
            }
            if !self.at(T::Comma) {
                if self.peek().is_some_and(|k| k.is_proc_kind()) && !self.on_new_line() {
                    return self.missing_comma("processor kinds");
                }
                return Ok(procs);
            }
            self.bump();
        }
    }

    pub(super) fn mem_list(&mut self) -> PResult<Vec<(MemKind, Span)>> {
        let mut mems = Vec::new();
        loop {
            match self.peek().and_then(mem_kind) {
                Some(kind) => mems.push((kind, self.bump())),
                None => {
                    return self.expected_kind(
                        "a memory kind (FBMEM, ZCMEM, SYSMEM, SOCKMEM, RDMEM, VIRTUAL)",
                        false,
                    )
                }
            }
            if !self.at(T::Comma) {
                if self.peek().is_some_and(|k| k.is_mem_kind()) && !self.on_new_line() {
                    return self.missing_comma("memory kinds");
                }
                return Ok(mems);
            }
            self.bump();
        }
    }

    /// "expected a processor kind", with a fix when the word is a kind in the
    /// wrong case (`gpu`) .
    pub(super) fn expected_kind<R>(&mut self, what: &str, proc: bool) -> PResult<R> {
        if self.at(T::Ident) {
            let word = self.cur_text();
            let names: Vec<&str> = if proc {
                ProcKind::ALL.iter().map(|k| k.name()).collect()
            } else {
                MemKind::ALL.iter().map(|k| k.name()).collect()
            };
            if let Some(best) = closest(word, names.iter().copied()) {
                let span = self.cur_span();
                return self.fail(
                    Diagnostic::error("E0100", span, format!("expected {what}, found `{word}`"))
                        .with_label(format!("did you mean `{best}`?"))
                        .with_fix(Fix::respell_keyword(
                            format!("replace with `{best}`"),
                            span,
                            word,
                            best,
                            names.iter().copied(),
                        )),
                );
            }
        }
        self.expected(what)
    }

    /// Two kinds of a priority list written without the `,` between them.
    pub(super) fn missing_comma<R>(&mut self, what: &str) -> PResult<R> {
        let at = self.prev_end();
        let span = self.cur_span();
        self.fail(
            Diagnostic::error(
                "E0100",
                span,
                format!("expected `,` or `;`, found {}", self.found()),
            )
            .with_label("expected `,` or `;`")
            .with_note(format!("{what} in a priority list are separated by `,`"))
            .with_fix(Fix::safe(
                "insert `,`",
                vec![(Span::new(at, span.start()), ",".into())],
            )),
        )
    }

    pub(super) fn region_field(&mut self, allow_index: bool) -> PResult<RegionSel> {
        match self.peek() {
            Some(T::Star) => Ok(RegionSel::Star(self.bump())),
            Some(T::Ident) => Ok(RegionSel::Name(self.ident("a region name")?)),
            Some(T::Int) if allow_index => {
                let span = self.bump();
                Ok(RegionSel::Index(int_value(span.text(self.src)), span))
            }
            Some(T::Int) => self.fail(
                Diagnostic::error(
                    "E0100",
                    self.cur_span(),
                    "only `Region` accepts an argument index; here the region must be named or `*`",
                )
                .with_label("expected a region name or `*`"),
            ),
            Some(k)
                if k.is_keyword()
                    && !k.starts_statement()
                    && !k.is_proc_kind()
                    && !k.is_mem_kind() =>
            {
                Ok(RegionSel::Name(self.keyword_as_name("a region name")))
            }
            _ => self.expected(if allow_index {
                "a region name, argument index or `*`"
            } else {
                "a region name or `*`"
            }),
        }
    }

    /// The identifier the reference parses in a kind slot and then asserts to be `*`.
    pub(super) fn ident_in_kind_slot(&mut self, proc: bool) {
        let span = self.bump();
        let word = span.text(self.src);
        let (field, names): (&str, Vec<&str>) = if proc {
            (
                "processor",
                ProcKind::ALL.iter().map(|k| k.name()).collect(),
            )
        } else {
            ("memory", MemKind::ALL.iter().map(|k| k.name()).collect())
        };
        let mut d = Diagnostic::error(
            "E0106",
            span,
            format!("`{word}` is not a {field} kind; this field takes a {field} kind or `*`"),
        )
        .with_label(format!("expected a {field} kind or `*`"))
        .with_note("the reference parses any name here and then aborts with an assertion failure");
        if let Some(best) = closest(word, names.iter().copied()) {
            d = d.with_fix(Fix::respell_keyword(
                format!("replace with `{best}`"),
                span,
                word,
                best,
                names.iter().copied(),
            ));
        }
        d = d.with_fix(Fix::unsafe_("replace with `*`", vec![(span, "*".into())]));
        self.push(d);
    }

    pub(super) fn region_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let task = self.single_task_or_star()?;
        let region = self.region_field(true)?;
        let proc = match self.peek() {
            Some(k) if k.is_proc_kind() => {
                let kind = proc_kind(k).unwrap_or(ProcKind::CPU);
                ProcSel::Kind(kind, self.bump())
            }
            Some(T::Star) => ProcSel::Star(self.bump()),
            Some(T::Ident) => {
                let span = self.cur_span();
                self.ident_in_kind_slot(true);
                ProcSel::Star(span)
            }
            Some(k) if k.is_mem_kind() => {
                let at = self.cur_span().start();
                self.push(
                    Diagnostic::error(
                        "E0124",
                        self.cur_span(),
                        "missing processor field in `Region`",
                    )
                    .with_label("expected a processor kind or `*` before the memory")
                    .with_note("the form is `Region TASK REGION PROC MEM[,MEM...];`")
                    .with_fix(Fix::safe(
                        "insert `*` (any processor)",
                        vec![(Span::at(at), "* ".into())],
                    )),
                );
                return Err(Failed);
            }
            _ => return self.expected("a processor kind or `*`"),
        };
        let mems = self.mem_list()?;
        self.expect_semi("`,` or `;`")?;
        Ok(StmtKind::Region {
            task,
            region,
            proc,
            mems,
        })
    }

    pub(super) fn layout_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let task = self.single_task_or_star()?;
        let region = self.region_field(false)?;
        let mem = match self.peek() {
            Some(k) if k.is_mem_kind() => {
                let kind = mem_kind(k).unwrap_or(MemKind::SYSMEM);
                MemSel::Kind(kind, self.bump())
            }
            Some(T::Star) => MemSel::Star(self.bump()),
            Some(T::Ident) => {
                let span = self.cur_span();
                self.ident_in_kind_slot(false);
                MemSel::Star(span)
            }
            Some(k) if k.is_proc_kind() => {
                let span = self.cur_span();
                let word = span.text(self.src);
                let suggested = if k == T::ProcGpu { "FBMEM" } else { "SYSMEM" };
                return self.fail(
                    Diagnostic::error(
                        "E0105",
                        span,
                        format!("`{word}` is a processor kind, but Layout's third field is a memory kind"),
                    )
                    .with_label("expected a memory kind or `*`")
                    .with_note(
                        "unlike `Region`, whose third field is a processor, `Layout TASK REGION MEM CONSTRAINTS;` names the memory that holds the instance",
                    )
                    .with_fix(Fix::safe(
                        format!("use `{suggested}`, the memory {word} tasks use by default"),
                        vec![(span, suggested.into())],
                    ))
                    .with_fix(Fix::unsafe_("use `*` (any memory)", vec![(span, "*".into())])),
                );
            }
            Some(k) if k.is_simple_constraint() || k == T::Align => {
                let at = self.cur_span().start();
                return self.fail(
                    Diagnostic::error("E0124", self.cur_span(), "missing memory field in `Layout`")
                        .with_label("expected a memory kind or `*` before the constraints")
                        .with_note("the form is `Layout TASK REGION MEM CONSTRAINT*;`")
                        .with_fix(Fix::safe(
                            "insert `*` (any memory)",
                            vec![(Span::at(at), "* ".into())],
                        )),
                );
            }
            _ => return self.expected("a memory kind or `*`"),
        };
        let constraints = self.constraints()?;
        self.expect_semi("a layout constraint or `;`")?;
        Ok(StmtKind::Layout {
            task,
            region,
            mem,
            constraints,
        })
    }

    pub(super) fn single_task_or_star(&mut self) -> PResult<TaskSel> {
        match self.peek() {
            Some(T::Star) => Ok(TaskSel::Star(self.bump())),
            _ => Ok(TaskSel::Names(vec![
                self.ident_or_expected("a task name or `*`")?
            ])),
        }
    }

    pub(super) fn ident_or_expected(&mut self, what: &str) -> PResult<Ident> {
        match self.peek() {
            Some(T::Ident) => self.ident(what),
            Some(k)
                if k.is_keyword()
                    && !k.starts_statement()
                    && !k.is_proc_kind()
                    && !k.is_mem_kind() =>
            {
                Ok(self.keyword_as_name(what))
            }
            _ => self.expected(what),
        }
    }

    pub(super) fn constraints(&mut self) -> PResult<Vec<Constraint>> {
        let mut out = Vec::new();
        loop {
            let span = self.cur_span();
            let c = match self.peek() {
                Some(T::Soa) => Constraint::Soa(span),
                Some(T::Aos) => Constraint::Aos(span),
                Some(T::COrder) => Constraint::COrder(span),
                Some(T::FOrder) => Constraint::FOrder(span),
                Some(T::Compact) => Constraint::Compact(span),
                Some(T::Exact) => Constraint::Exact(span),
                Some(T::Align) => {
                    out.push(self.align()?);
                    continue;
                }
                Some(T::Ident) if !self.on_new_line() => {
                    self.unknown_constraint();
                    continue;
                }
                _ => return Ok(out),
            };
            self.bump();
            out.push(c);
        }
    }

    pub(super) fn align(&mut self) -> PResult<Constraint> {
        let start = self.bump();
        let op_span = self.cur_span();
        let op = match self.peek() {
            Some(T::Lt) => AlignOp::Lt,
            Some(T::Le) => AlignOp::Le,
            Some(T::Gt) => AlignOp::Gt,
            Some(T::Ge) => AlignOp::Ge,
            Some(T::EqEq) => AlignOp::Eq,
            Some(T::Ne) => AlignOp::Ne,
            Some(T::Assign) => {
                self.push(
                    Diagnostic::error(
                        "E0113",
                        op_span,
                        "`Align` needs a comparison operator; `=` is assignment",
                    )
                    .with_label("use `==`")
                    .with_fix(Fix::safe(
                        "replace `=` with `==`",
                        vec![(op_span, "==".into())],
                    )),
                );
                AlignOp::Eq
            }
            _ => {
                return self
                    .expected("a comparison after `Align` (`==`, `<`, `<=`, `>`, `>=`, `!=`)")
            }
        };
        self.bump();
        let value_span = self.expect(T::Int, "an integer (the alignment in bytes)")?;
        Ok(Constraint::Align {
            op,
            value: int_value(value_span.text(self.src)),
            span: start.to(value_span),
        })
    }

    pub(super) fn unknown_constraint(&mut self) {
        let span = self.cur_span();
        let word = span.text(self.src);
        let mut d = Diagnostic::error("E0103", span, format!("unknown layout constraint `{word}`"))
            .with_label("not a layout constraint")
            .with_note(
                "constraints are SOA, AOS, C_order, F_order, Compact, Exact and `Align OP N`",
            );
        // Remove the word together with the blank before it.
        let mut del_start = span.start();
        while del_start > 0 && matches!(self.src.as_bytes()[del_start - 1], b' ' | b'\t') {
            del_start -= 1;
        }
        let removal = (Span::new(del_start, span.end()), String::new());
        let lower = word.to_ascii_lowercase();
        if lower.starts_with("no_") || lower.starts_with("no") && lower.contains("align") {
            d = d
                .with_note(format!("`{word}` is not in the DSL: leaving out `Align` already means no alignment constraint"))
                .with_fix(Fix::safe(format!("remove `{word}`"), vec![removal]));
        } else if let Some(best) =
            closest(word, CONSTRAINT_NAMES.iter().copied()).filter(|b| *b != "Align")
        {
            d = d.with_fix(Fix::respell_keyword(
                format!("replace with `{best}`"),
                span,
                word,
                best,
                CONSTRAINT_NAMES.iter().copied(),
            ));
        } else {
            d = d.with_fix(Fix::unsafe_(format!("remove `{word}`"), vec![removal]));
        }
        self.push(d);
        self.bump();
    }

    pub(super) fn instance_limit_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        if self.at(T::Star) {
            return self.fail(
                Diagnostic::error(
                    "E0100",
                    self.cur_span(),
                    "`InstanceLimit` needs a task name; `*` is not allowed",
                )
                .with_label("expected a task name"),
            );
        }
        let task = self.ident_or_expected("a task name")?;
        if let Some(k) = self.peek() {
            if k.is_proc_kind() && self.peek_at(1) == Some(T::Int) {
                let span = self.cur_span();
                let mut end = span.end();
                while end < self.src.len() && matches!(self.src.as_bytes()[end], b' ' | b'\t') {
                    end += 1;
                }
                self.push(
                    Diagnostic::error(
                        "E0108",
                        span,
                        "legacy `InstanceLimit TASK PROC N;`: the current form has no processor field",
                    )
                    .with_label("remove the processor kind")
                    .with_note("the limit applies to the task wherever it runs: `InstanceLimit TASK N;`")
                    .with_fix(Fix::safe(
                        format!("migrate to `InstanceLimit {} N;`", task.name),
                        vec![(Span::new(span.start(), end), String::new())],
                    )),
                );
                self.bump();
            }
        }
        let limit_span = self.expect(T::Int, "an integer limit")?;
        self.expect_semi("`;`")?;
        Ok(StmtKind::InstanceLimit {
            task,
            limit: int_value(limit_span.text(self.src)),
            limit_span,
        })
    }

    pub(super) fn collect_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let task = self.single_task_or_star()?;
        let region = self.region_field(false)?;
        self.expect_semi("`;`")?;
        Ok(StmtKind::CollectMemory { task, region })
    }

    pub(super) fn task_map_stmt(&mut self, index: bool) -> PResult<StmtKind> {
        let kw = self.bump();
        let tasks = self.task_sel(true, "a task name")?;
        let func = self.ident_or_expected("the name of a mapping function")?;
        if self.at(T::Ident) && !self.on_new_line() {
            // Legacy `IndexTaskMap TASK MACHINE FUNC;`: FUNC(IPoint, ISpace, MSpace) returned a tuple.
            let legacy_func = self.ident("a function name")?;
            let machine = func;
            self.legacy_task_map(kw, &tasks, &machine, &legacy_func, index);
            self.expect_semi("`;`")?;
            let stmt_kind = if index {
                StmtKind::IndexTaskMap {
                    tasks,
                    func: legacy_func,
                }
            } else {
                StmtKind::SingleTaskMap {
                    tasks,
                    func: legacy_func,
                }
            };
            return Ok(stmt_kind);
        }
        self.expect_semi("`;`")?;
        Ok(if index {
            StmtKind::IndexTaskMap { tasks, func }
        } else {
            StmtKind::SingleTaskMap { tasks, func }
        })
    }

    pub(super) fn legacy_task_map(
        &mut self,
        kw: Span,
        tasks: &TaskSel,
        machine: &Ident,
        func: &Ident,
        index: bool,
    ) {
        let keyword = if index {
            "IndexTaskMap"
        } else {
            "SingleTaskMap"
        };
        let wrapper = format!("{}_{}", func.name, machine.name);
        let def = format!(
            "def {wrapper}(Task task) {{\n    return {m}[*{f}(task.ipoint, task.ispace, {m})];\n}}\n",
            m = machine.name,
            f = func.name
        );
        let task_text = Span::new(
            match tasks {
                TaskSel::Star(s) | TaskSel::Kind(_, s) => s.start(),
                TaskSel::Names(n) => n
                    .first()
                    .map(|i| i.span.start())
                    .unwrap_or(machine.span.start()),
            },
            match tasks {
                TaskSel::Star(s) | TaskSel::Kind(_, s) => s.end(),
                TaskSel::Names(n) => n
                    .last()
                    .map(|i| i.span.end())
                    .unwrap_or(machine.span.start()),
            },
        )
        .text(self.src)
        .to_string();
        let mut edits = vec![(kw.to(func.span), format!("{keyword} {task_text} {wrapper}"))];
        // (A search of the whole text: skipped where the fix is dropped,
        // past the cap or in a list of spans only, such as the streaming
        // check's first pass.)
        if self.diags.keeps_the_next_whole() && !self.src.contains(&format!("def {wrapper}(")) {
            edits.push((Span::at(kw.start()), def));
        }
        self.push(
            Diagnostic::error(
                "E0107",
                func.span,
                format!("legacy `{keyword} TASK MACHINE FUNC;`: the current form is `{keyword} TASK FUNC;`"),
            )
            .with_label("unexpected third field")
            .with_related(machine.span, "the machine model belongs inside the mapping function now")
            .with_note(format!(
                "the mapping function now takes the task (`def f(Task task)`) and returns a processor of a machine model; the old `{}(IPoint, ISpace, MSpace)` returned the machine point as a tuple",
                func.name
            ))
            .with_fix(Fix::safe(
                format!("migrate: wrap `{}` in `{wrapper}(Task task)`", func.name),
                edits,
            )),
        );
    }

    pub(super) fn control_replicate_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        if self.at(T::Star) {
            return self.fail(
                Diagnostic::error(
                    "E0100",
                    self.cur_span(),
                    "`ControlReplicate` needs task names; `*` is not supported",
                )
                .with_label("expected a task name"),
            );
        }
        let mut tasks = vec![self.ident_or_expected("a task name")?];
        while self.eat(T::Comma).is_some() {
            tasks.push(self.ident_or_expected("a task name")?);
        }
        self.expect_semi("`,` or `;`")?;
        Ok(StmtKind::ControlReplicate { tasks })
    }

    pub(super) fn assign_stmt(&mut self) -> PResult<StmtKind> {
        let name = if self.at(T::Ident) {
            self.ident("a variable name")?
        } else {
            self.keyword_as_name("a variable name")
        };
        if !self.at(T::Assign) {
            return self.not_an_assignment(&name);
        }
        self.bump();
        let value = self.statement_expr()?;
        self.expect_semi("`;`")?;
        Ok(StmtKind::Assign { name, value })
    }

    /// `NAME` at the start of a statement not followed by `=`: usually a
    /// mistyped statement keyword.
    pub(super) fn not_an_assignment<R>(&mut self, name: &Ident) -> PResult<R> {
        if self.peek() == Some(T::BadChar) {
            return Err(Failed);
        }
        let statements = || crate::token::statement_keywords().chain(["return"]);
        if let Some(best) = closest(&name.name, statements()) {
            return self.fail(
                Diagnostic::error(
                    "E0117",
                    name.span,
                    format!(
                        "unknown statement `{}`; keywords are case-sensitive",
                        name.name
                    ),
                )
                .with_label(format!("did you mean `{best}`?"))
                .with_fix(Fix::respell_keyword(
                    format!("replace with `{best}`"),
                    name.span,
                    &name.name,
                    best,
                    statements(),
                )),
            );
        }
        if name.name == "TaskSteal" {
            return self.fail(
                Diagnostic::error("E0117", name.span, "`TaskSteal` is not part of the current DSL")
                    .with_note("it exists only on DSLMapper's `main` branch; the reference (`default`) rejects it"),
            );
        }
        let found = self.found();
        self.fail(
            Diagnostic::error(
                "E0100",
                self.cur_span(),
                format!("expected `=` after `{}`, found {found}", name.name),
            )
            .with_label("expected `=`")
            .with_note("a statement that starts with a name is an assignment: `NAME = EXPR;`"),
        )
    }

    pub(super) fn print_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        self.expect(T::LParen, "`(`")?;
        if !self.at(T::Str) {
            return self.fail(
                Diagnostic::error(
                    "E0100",
                    self.cur_span(),
                    format!(
                        "`print` needs a format string first, found {}",
                        self.found()
                    ),
                )
                .with_label("expected a string such as \"{}\"")
                .with_note("write `print(\"value: {}\", x);`"),
            );
        }
        let format_span = self.bump();
        let raw = format_span.text(self.src);
        if raw.len() < 2 || !raw.ends_with('"') {
            // Unterminated: the lexer reported it and the string swallowed the
            // rest of the line; anything said about that line would be noise.
            return Err(Failed);
        }
        let format = raw
            .trim_start_matches('"')
            .trim_end_matches('"')
            .to_string();
        let mut args = Vec::new();
        while self.eat(T::Comma).is_some() {
            args.push(self.statement_expr()?);
        }
        self.expect(T::RParen, "`,` or `)`")?;
        self.expect_semi("`;`")?;
        Ok(StmtKind::Print {
            format,
            format_span,
            args,
        })
    }
}
