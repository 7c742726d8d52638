//! `workspace/executeCommand`: explain, run and optimize on blocking threads
//! with `$/progress`, cancellation, and applying the optimized mapper.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tower_lsp::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp::lsp_types::*;
use tower_lsp::Client;

use crate::lsp::commands::{self, CommandArgs, Setup, Step};
use crate::lsp::diff::minimal_edits;
use crate::lsp::provider_api::LastRun;
use crate::lsp::state::{Document, State};
use crate::optimize::changes::render_changes;

use super::sync::publish;
use super::*;

/// Cleans up after `mapwright.optimize` however its future ends: marks the
/// document free, forgets the progress token, and if the request was
/// dropped before it finished (`$/cancelRequest`), stops the loop and ends
/// the progress.
struct Running {
    state: Arc<State>,
    client: Client,
    uri: Url,
    token: Option<ProgressToken>,
    cancel: Arc<AtomicBool>,
    done: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.state.stop_optimizing(&self.uri);
        if let Some(t) = &self.token {
            self.state.end_progress(&token_key(t));
        }
        if self.done {
            return;
        }
        self.cancel.store(true, Ordering::SeqCst);
        if let (Some(token), Ok(handle)) =
            (self.token.clone(), tokio::runtime::Handle::try_current())
        {
            let client = self.client.clone();
            handle.spawn(async move {
                client
                    .send_notification::<notification::Progress>(ProgressParams {
                        token,
                        value: ProgressParamsValue::WorkDone(WorkDoneProgress::End(
                            WorkDoneProgressEnd {
                                message: Some("cancelled".into()),
                            },
                        )),
                    })
                    .await;
            });
        }
    }
}

impl Backend {
    pub(super) async fn handle_execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> Result<Option<Value>> {
        // A command sent right after `initialized` runs with the configured
        // settings, not the defaults (see `State::set_ready`).
        self.state
            .wait_ready(crate::lsp::lifecycle::READY_FALLBACK)
            .await;
        let command = params.command.as_str();
        match command {
            DEBUG_PANIC_COMMAND => {
                self.guarded("mapwright.debugPanic", || -> Option<Value> {
                    panic!("mapwright.debugPanic was called (deliberate panic)")
                })
                .await
            }
            commands::EXPLAIN | commands::RUN | commands::OPTIMIZE => {
                let args = commands::parse_args(&params.arguments)
                    .map_err(|e| Error::invalid_params(format!("{command}: {e}")))?;
                let result = match command {
                    commands::EXPLAIN => self.explain(args).await,
                    commands::RUN => self.run_mapper(args).await,
                    _ => {
                        self.optimize(args, params.work_done_progress_params.work_done_token)
                            .await
                    }
                };
                if let Err(e) = &result {
                    self.log(
                        MessageType::WARNING,
                        format!("mapwright: {command} failed: {}", e.message),
                    )
                    .await;
                }
                result
            }
            other => Err(Error::invalid_params(format!("unknown command `{other}`"))),
        }
    }

    /// `window/workDoneProgress/cancel`: stops the work behind the token.
    pub async fn work_done_progress_cancel(&self, params: WorkDoneProgressCancelParams) {
        let key = token_key(&params.token);
        if !self.state.cancel_progress(&key) {
            self.log(
                MessageType::INFO,
                format!("mapwright: cancel for unknown progress token {key}"),
            )
            .await;
        }
    }

    /// The open document at `uri`, or an error for the command.
    pub(super) fn open_doc(&self, uri: &Url) -> Result<Arc<Document>> {
        self.state
            .doc(uri)
            .ok_or_else(|| Error::invalid_params(format!("{uri} is not open")))
    }

    /// What a run of `uri` needs (settings and project file), or why not.
    pub(super) fn setup(&self, uri: &Url) -> Result<Setup> {
        let target = self.state.target(uri);
        let project = self.state.project(uri);
        Setup::new(
            target.as_deref(),
            project.as_deref(),
            &self.state.settings(),
        )
        .map_err(Error::invalid_params)
    }

    /// With `runtime = "legion"`, makes sure real Legion is set up before a
    /// run: the first time, it is fetched and the mapper and the programs
    /// are built (a minute or two), which the editor shows as progress, one
    /// message per step. Afterwards this finds everything in place.
    pub(super) async fn legion_setup(&self, uri: &Url) -> Result<()> {
        let legion = self
            .state
            .project(uri)
            .is_some_and(|p| p.runtime.as_deref().map(str::trim) == Some("legion"));
        if !legion {
            return Ok(());
        }
        let cancel = Arc::new(AtomicBool::new(false));
        let token = self.progress_token(None, &cancel).await;
        self.progress(
            &token,
            WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: "Setting up real Legion".into(),
                cancellable: Some(false),
                message: Some("checking the Legion SDK, the mapper and the programs".into()),
                percentage: None,
            }),
        )
        .await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let handle = tokio::task::spawn_blocking(move || {
            mapwright_runtime::backend::legion::LegionConfig::locate_with_progress(
                mapwright_runtime::backend::legion::default_cpus(),
                0,
                &mut |step| {
                    let _ = tx.send(step.to_string());
                },
            )
            .map(|_| ())
        });
        while let Some(step) = rx.recv().await {
            self.progress(
                &token,
                WorkDoneProgress::Report(WorkDoneProgressReport {
                    cancellable: Some(false),
                    message: Some(step),
                    percentage: None,
                }),
            )
            .await;
        }
        let result = match handle.await {
            Ok(r) => r,
            Err(e) => Err(e.to_string()),
        };
        self.progress(
            &token,
            WorkDoneProgress::End(WorkDoneProgressEnd {
                message: Some(match &result {
                    Ok(()) => "real Legion is ready".into(),
                    Err(e) => format!("real Legion could not be set up: {e}"),
                }),
            }),
        )
        .await;
        result.map_err(|e| Error::invalid_params(format!("runtime = \"legion\": {e}")))
    }

    /// Runs `f` on a blocking thread under [`guard::catch`]; a panic
    /// becomes an internal error (logged).
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        what: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        let msg = match tokio::task::spawn_blocking(move || guard::catch(f)).await {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(m)) => m,
            Err(e) => e.to_string(),
        };
        let text = format!("mapwright: internal error in {what}: {msg}");
        self.log(MessageType::ERROR, &text).await;
        Err(Error {
            code: ErrorCode::InternalError,
            message: text.into(),
            data: None,
        })
    }

    /// Shows a command's long text: written to a file (under `.mapwright/`
    /// next to the mapper, else in the temporary directory), opened as a
    /// document when the client can (`window/showDocument`), else named in
    /// a one-line message the client can follow (issue 39: eglot has no
    /// `showDocument`, and a whole explanation as a message filled its echo
    /// area). Only when no file can be written is the text the message.
    pub(super) async fn show_text(&self, uri: &Url, name: &str, text: &str) {
        let Some((file, file_uri)) = write_shown_text(uri, name, text) else {
            self.client.show_message(MessageType::INFO, text).await;
            return;
        };
        if self.state.flags().show_document {
            let shown = self
                .client
                .show_document(ShowDocumentParams {
                    uri: file_uri.clone(),
                    external: Some(false),
                    take_focus: Some(true),
                    selection: None,
                })
                .await;
            if matches!(shown, Ok(true)) {
                return;
            }
        }
        let lines = text.lines().count();
        let message = format!(
            "mapwright {name}: {lines} lines written to {} ({file_uri})",
            file.display()
        );
        // Straight to the output, so it precedes the command's response
        // (see `Outbox::show_message`).
        match self.state.outbox() {
            Some(outbox) => outbox.show_message(MessageType::INFO, &message),
            None => self.client.show_message(MessageType::INFO, message).await,
        }
    }

    /// `mapwright.explain`: the decisions as text (`text`, `summary`).
    pub(super) async fn explain(&self, args: CommandArgs) -> Result<Option<Value>> {
        let doc = self.open_doc(&args.uri)?;
        let setup = self.setup(&args.uri)?;
        let target = self
            .state
            .target(&args.uri)
            .ok_or_else(|| Error::invalid_params("no application is configured"))?;
        let d = doc.clone();
        let text = self
            .blocking("mapwright.explain", move || {
                let r = d.resolution(&target);
                r.decisions.as_ref().map(|decisions| {
                    mapwright_runtime::resolve_mapping::render_decisions(
                        decisions,
                        &d.text,
                        &setup.app,
                        &setup.machine,
                    )
                })
            })
            .await?
            .ok_or_else(|| Error::invalid_params("the mapping could not be resolved"))?;
        if args.show {
            self.show_text(&args.uri, "explain", &text).await;
        }
        let summary = text.lines().take(2).collect::<Vec<_>>().join("; ");
        Ok(Some(json!({
            "text": text,
            "summary": summary,
            "version": doc.version,
        })))
    }

    /// `mapwright.run`: runs the mapper once; shows the result as a message
    /// and AutoGuide's feedback as diagnostics until the next edit.
    pub(super) async fn run_mapper(&self, args: CommandArgs) -> Result<Option<Value>> {
        let doc = self.open_doc(&args.uri)?;
        self.legion_setup(&args.uri).await?;
        let setup = self.setup(&args.uri)?;
        let text = doc.text.clone();
        let result = self
            .blocking("mapwright.run", move || commands::run_once(&setup, &text))
            .await?
            .map_err(Error::invalid_params)?;
        let diags = commands::feedback_diagnostics(
            &doc.text,
            doc.version,
            &result,
            self.state.encoding(),
            self.state.flags().diagnostic_fields.code_description,
        );
        self.state.set_run_feedback(&doc.uri, doc.version, diags);
        self.state.set_last_run(
            &doc.uri,
            LastRun {
                version: doc.version,
                metrics: result.metrics.clone(),
                what: format!("the run on {}", self.setup(&args.uri)?.machine.name),
            },
        );
        publish(&self.state, &self.client, doc.clone()).await;
        self.refresh_pulled_diagnostics().await;
        let ty = if result.ok() {
            MessageType::INFO
        } else {
            MessageType::WARNING
        };
        self.client
            .show_message(ty, format!("Mapper run: {}", result.summary))
            .await;
        Ok(Some(result.to_json()))
    }

    pub(super) async fn progress(&self, token: &Option<ProgressToken>, value: WorkDoneProgress) {
        if let Some(token) = token {
            self.client
                .send_notification::<notification::Progress>(ProgressParams {
                    token: token.clone(),
                    value: ProgressParamsValue::WorkDone(value),
                })
                .await;
        }
    }

    /// Reports the optimizer's steps as `$/progress` reports, at most one
    /// every [`REPORT_INTERVAL`] (the loop can take ~140 steps a second,
    /// more than an editor can show): the first step is reported at once, a
    /// step arriving too soon after the last report waits, replaced by any
    /// newer one, until the interval has passed; the last step is always
    /// reported before the loop's end (once its turn comes), so the final
    /// state is never lost. Returns when the last report went out, for the
    /// `end` notification to wait its turn too.
    async fn report_steps(
        &self,
        token: &Option<ProgressToken>,
        steps: &mut tokio::sync::mpsc::UnboundedReceiver<Step>,
    ) -> Option<tokio::time::Instant> {
        let mut last_report: Option<tokio::time::Instant> = None;
        let mut pending: Option<Step> = None;
        loop {
            let due = last_report.map(|t| t + REPORT_INTERVAL);
            let step = tokio::select! {
                next = steps.recv() => match next {
                    Some(step) => step,
                    None => break,
                },
                _ = tokio::time::sleep_until(due.unwrap_or_else(tokio::time::Instant::now)),
                    if pending.is_some() => match pending.take() {
                    // The interval has passed with a step waiting: report it.
                    Some(step) => step,
                    None => continue,
                }
            };
            let now = tokio::time::Instant::now();
            if due.is_some_and(|d| now < d) {
                pending = Some(step);
                continue;
            }
            pending = None;
            last_report = Some(now);
            self.report_step(token, &step).await;
        }
        if let Some(step) = pending {
            wait_for_turn(last_report).await;
            last_report = Some(tokio::time::Instant::now());
            self.report_step(token, &step).await;
        }
        last_report
    }

    async fn report_step(&self, token: &Option<ProgressToken>, step: &Step) {
        self.progress(
            token,
            WorkDoneProgress::Report(WorkDoneProgressReport {
                cancellable: Some(true),
                message: Some(step.message()),
                percentage: Some(step.percentage()),
            }),
        )
        .await;
    }

    /// The token to report progress with: the client's, or one the server
    /// creates when the client supports that; its cancel flag is `cancel`.
    pub(super) async fn progress_token(
        &self,
        given: Option<ProgressToken>,
        cancel: &Arc<AtomicBool>,
    ) -> Option<ProgressToken> {
        let token = match given {
            Some(t) => t,
            None if self.state.flags().work_done_progress => {
                let t =
                    NumberOrString::String(self.state.next_progress_token("mapwright-optimize"));
                let created = self
                    .client
                    .send_request::<request::WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                        token: t.clone(),
                    })
                    .await;
                if let Err(e) = created {
                    self.log(
                        MessageType::WARNING,
                        format!("mapwright: window/workDoneProgress/create failed: {e}"),
                    )
                    .await;
                    return None;
                }
                t
            }
            None => return None,
        };
        self.state
            .register_progress(token_key(&token), cancel.clone());
        Some(token)
    }

    /// `mapwright.optimize`: the optimizer loop in the background with
    /// progress, then the best mapper applied as one edit of minimal text
    /// changes if the document did not change meanwhile, else offered as a
    /// new document.
    pub(super) async fn optimize(
        &self,
        args: CommandArgs,
        given_token: Option<ProgressToken>,
    ) -> Result<Option<Value>> {
        let uri = args.uri.clone();
        let doc = self.open_doc(&uri)?;
        self.legion_setup(&uri).await?;
        let setup = self.setup(&uri)?;
        // Configuration problems are reported before anything starts.
        setup.proposer().map_err(Error::invalid_params)?;
        setup.executor().map_err(Error::invalid_params)?;
        let cancel = Arc::new(AtomicBool::new(false));
        if !self.state.start_optimizing(&uri, cancel.clone()) {
            return Err(Error::invalid_params(format!(
                "{uri} is already being optimized"
            )));
        }
        let token = self.progress_token(given_token, &cancel).await;
        let mut running = Running {
            state: self.state.clone(),
            client: self.client.clone(),
            uri: uri.clone(),
            token: token.clone(),
            cancel: cancel.clone(),
            done: false,
        };
        self.progress(
            &token,
            WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: "Optimizing mapper".into(),
                cancellable: Some(true),
                message: Some(format!(
                    "{} · {} iterations · {} on {} ({})",
                    setup.proposer,
                    setup.optimize.iterations,
                    setup.app.name,
                    setup.machine.name,
                    setup.runtime_name()
                )),
                percentage: Some(0),
            }),
        )
        .await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Step>();
        let text = doc.text.clone();
        let path = uri.to_file_path().ok();
        let loop_setup = setup.clone();
        let loop_cancel = cancel.clone();
        let handle = tokio::task::spawn_blocking(move || {
            guard::catch(move || {
                let mut step = |s: Step| {
                    let _ = tx.send(s);
                };
                commands::optimize_blocking(
                    &loop_setup,
                    &text,
                    path.as_deref(),
                    loop_cancel,
                    &mut step,
                )
            })
        });
        let last_report = self.report_steps(&token, &mut rx).await;
        let failure = match handle.await {
            Ok(Ok(Ok(optimized))) => {
                let value = self.finish_optimize(&doc, &setup, optimized).await;
                let summary = value["summary"].as_str().unwrap_or("done").to_string();
                wait_for_turn(last_report).await;
                self.progress(
                    &token,
                    WorkDoneProgress::End(WorkDoneProgressEnd {
                        message: Some(summary),
                    }),
                )
                .await;
                running.done = true;
                return Ok(Some(value));
            }
            Ok(Ok(Err(msg))) => Error::invalid_params(msg),
            Ok(Err(panic)) => Error {
                code: ErrorCode::InternalError,
                message: format!("mapwright: internal error in mapwright.optimize: {panic}").into(),
                data: None,
            },
            Err(join) => Error {
                code: ErrorCode::InternalError,
                message: format!("mapwright: internal error in mapwright.optimize: {join}").into(),
                data: None,
            },
        };
        wait_for_turn(last_report).await;
        self.progress(
            &token,
            WorkDoneProgress::End(WorkDoneProgressEnd {
                message: Some(failure.message.to_string()),
            }),
        )
        .await;
        running.done = true;
        Err(failure)
    }

    /// Applies or offers the best mapper; returns the command's result.
    pub(super) async fn finish_optimize(
        &self,
        doc: &Arc<Document>,
        setup: &Setup,
        optimized: commands::Optimized,
    ) -> Value {
        let report = &optimized.report;
        let pictures = optimized.pictures.as_ref().map(|p| p.as_ref());
        if let Some(r) = report.records.get(report.best_iteration) {
            self.state.set_last_run(
                &doc.uri,
                LastRun {
                    version: doc.version,
                    metrics: r.evaluation.metrics.clone(),
                    what: format!(
                        "the optimizer's best candidate (iteration {}) on {}",
                        report.best_iteration, setup.machine.name
                    ),
                },
            );
        }
        let best = report.best_mapper.clone();
        let initial = report.records.first().and_then(|r| r.normalized);
        let candidates = report.records.len().saturating_sub(1);
        let mut new_document: Option<Url> = None;
        let mut applied = false;
        let summary = if report.cancelled {
            let best_so_far = match (
                report.trajectory.last(),
                report.trajectory_basis.relative_to.as_str(),
            ) {
                (Some(x), "expert") if *x > 0.0 => {
                    format!(" (best so far {x:.2}x the expert mapper)")
                }
                (Some(x), "start") if *x > 0.0 => format!(" (best so far {x:.2}x yours)"),
                _ => String::new(),
            };
            format!(
                "cancelled after {candidates} candidate(s); the mapper was left unchanged{best_so_far}"
            )
        } else if !report.improved() || best == *doc.text {
            let against = match (initial, report.trajectory_basis.relative_to.as_str()) {
                (Some(x), _) => format!(" ({x:.2}x the expert mapper)"),
                // What the best candidate measured against the start.
                (None, "start") => best_relative(report)
                    .map(|x| format!(" (the best candidate measured {x:.2}x yours)"))
                    .unwrap_or_default(),
                _ => String::new(),
            };
            format!(
                "no candidate beat the mapper as written{against} after {candidates} candidate(s); nothing to apply"
            )
        } else if !report.worth_applying() {
            format!(
                "{}; the mapper was left unchanged",
                report.not_applied(optimized.report_dir.as_deref(), "in the command's result")
            )
        } else {
            let current = self.state.doc(&doc.uri);
            let result = match &current {
                Some(c) if c.version == doc.version => self.apply_in_place(doc, &best).await,
                Some(c) => Err(format!(
                    "the mapper changed while the optimizer ran (version {} -> {})",
                    doc.version, c.version
                )),
                None => Err("the mapper was closed while the optimizer ran".to_string()),
            };
            match result {
                Ok(()) => {
                    applied = true;
                    let changes = render_changes(&report.changes);
                    let listed = if changes.is_empty() {
                        String::new()
                    } else {
                        format!(". Changes (gain when first made): {}", changes.join(" · "))
                    };
                    format!(
                        "applied the best mapper (iteration {}): {}{listed}",
                        report.best_iteration,
                        gain_text(report, initial)
                    )
                }
                Err(why) => {
                    new_document = self.offer_document(&doc.uri, &best).await;
                    let offered = match &new_document {
                        Some(u) => format!("; it is offered as {u}"),
                        None => "; it is in the command's result".to_string(),
                    };
                    format!(
                        "{why}, so the best mapper (iteration {}: {}) was not applied{offered}",
                        report.best_iteration,
                        gain_text(report, initial)
                    )
                }
            }
        };
        let ty = if applied || report.cancelled || !report.worth_applying() {
            MessageType::INFO
        } else {
            MessageType::WARNING
        };
        self.client
            .show_message(ty, format!("Mapper optimize: {summary}"))
            .await;
        json!({
            "best_normalized": report.best_normalized,
            "best_iteration": report.best_iteration,
            "initial_normalized": initial,
            "applied": applied,
            "cancelled": report.cancelled,
            "candidates": candidates,
            "summary": summary,
            "report_dir": optimized.report_dir.as_ref().map(|d| d.display().to_string()),
            "report_svg": pictures.and_then(|p| p.ok()).map(|p| p.plot.display().to_string()),
            "timeline_svg": pictures
                .and_then(|p| p.ok())
                .and_then(|p| p.timeline.as_ref())
                .map(|t| t.display().to_string()),
            "report_error": pictures.and_then(|p| p.err()),
            "new_document": new_document,
            "best_mapper": best,
            "verdict": report.verdict,
            "changes": report.changes,
            "change_lines": render_changes(&report.changes),
            "pinned": report.pinned,
            "proposer": setup.proposer,
            "runtime": setup.runtime_name(),
        })
    }

    /// One `workspace/applyEdit` of minimal changes from `doc`'s text to
    /// `best`, versioned when the client supports it.
    pub(super) async fn apply_in_place(
        &self,
        doc: &Arc<Document>,
        best: &str,
    ) -> std::result::Result<(), String> {
        let flags = self.state.flags();
        if !flags.apply_edit {
            return Err("the editor cannot apply workspace edits".into());
        }
        let enc = self.state.encoding();
        let edits = guard::catch(|| {
            let a = doc.analysis();
            proto::text_edits(&a, &minimal_edits(&doc.text, best), enc)
        })
        .map_err(|msg| format!("internal error computing the edit: {msg}"))?;
        let edit = if flags.document_changes {
            WorkspaceEdit {
                document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier {
                        uri: doc.uri.clone(),
                        version: Some(doc.version),
                    },
                    edits: edits.into_iter().map(OneOf::Left).collect(),
                }])),
                ..Default::default()
            }
        } else {
            proto::workspace_edit(&doc.uri, edits)
        };
        let response = self
            .client
            .send_request::<request::ApplyWorkspaceEdit>(ApplyWorkspaceEditParams {
                label: Some("Optimize mapper".into()),
                edit,
            })
            .await
            .map_err(|e| format!("workspace/applyEdit failed: {e}"))?;
        if response.applied {
            Ok(())
        } else {
            Err(format!(
                "the editor did not apply the edit{}",
                response
                    .failure_reason
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            ))
        }
    }

    /// Offers `best` as `NAME.optimized.mapper` next to the mapper: created
    /// through the editor when it can create files, else written to disk;
    /// shown when the editor can show documents.
    pub(super) async fn offer_document(&self, uri: &Url, best: &str) -> Option<Url> {
        let path = uri.to_file_path().ok()?;
        let new_path = commands::optimized_path(&path);
        let new_uri = Url::from_file_path(&new_path).ok()?;
        let flags = self.state.flags();
        let mut created = false;
        if flags.apply_edit && flags.document_changes && flags.create_files {
            let edit = WorkspaceEdit {
                document_changes: Some(DocumentChanges::Operations(vec![
                    DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                        uri: new_uri.clone(),
                        options: Some(CreateFileOptions {
                            overwrite: Some(true),
                            ignore_if_exists: None,
                        }),
                        annotation_id: None,
                    })),
                    DocumentChangeOperation::Edit(TextDocumentEdit {
                        text_document: OptionalVersionedTextDocumentIdentifier {
                            uri: new_uri.clone(),
                            version: None,
                        },
                        edits: vec![OneOf::Left(TextEdit::new(
                            Range::default(),
                            best.to_string(),
                        ))],
                    }),
                ])),
                ..Default::default()
            };
            created = self
                .client
                .send_request::<request::ApplyWorkspaceEdit>(ApplyWorkspaceEditParams {
                    label: Some("Optimized mapper".into()),
                    edit,
                })
                .await
                .is_ok_and(|r| r.applied);
        }
        if !created && std::fs::write(&new_path, best).is_err() {
            return None;
        }
        if flags.show_document {
            let _ = self
                .client
                .show_document(ShowDocumentParams {
                    uri: new_uri.clone(),
                    external: Some(false),
                    take_focus: Some(true),
                    selection: None,
                })
                .await;
        }
        Some(new_uri)
    }
}

/// The shortest time between two `$/progress` reports of one command: at
/// most 10 a second.
const REPORT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// Waits until [`REPORT_INTERVAL`] has passed since `last_report` (the
/// last `$/progress` sent), so that no notification of one command comes
/// sooner than that after another.
async fn wait_for_turn(last_report: Option<tokio::time::Instant>) {
    if let Some(last) = last_report {
        tokio::time::sleep_until(last + REPORT_INTERVAL).await;
    }
}

/// The key of a progress token in the state's cancel table.
pub(super) fn token_key(t: &ProgressToken) -> String {
    match t {
        NumberOrString::Number(n) => format!("#{n}"),
        NumberOrString::String(s) => s.clone(),
    }
}

/// Writes a command's text for [`Backend::show_text`]: `<stem>.<name>.txt`
/// in `.mapwright/` beside the mapper file, or (an unsaved buffer, a
/// read-only folder) `mapwright-<stem>.<name>.txt` in the temporary
/// directory. The path and its URI, or `None` when neither can be written.
/// The best candidate's speed relative to the user's mapper as written
/// (both ran), as the run measured it.
fn best_relative(report: &crate::optimize::Report) -> Option<f64> {
    let start = report.records.first().filter(|r| r.score > 0.0)?;
    report
        .records
        .iter()
        .skip(1)
        .filter(|r| r.evaluation.ok())
        .map(|r| r.score / start.score)
        .max_by(f64::total_cmp)
}

/// What applying the best mapper gains, as the run measured it: over the
/// user's mapper (`1.82x faster than yours (1.53 s → 0.84 s, medians of 3
/// runs)`) and, where an expert figure exists, against the expert mapper.
fn gain_text(report: &crate::optimize::Report, initial: Option<f64>) -> String {
    let measured = report.measured_gain();
    let expert = match (report.best_normalized, initial) {
        (Some(b), Some(i)) => Some(format!("{b:.2}x the expert mapper, was {i:.2}x")),
        (Some(b), None) => Some(format!("{b:.2}x the expert mapper")),
        _ => None,
    };
    match (measured, expert) {
        (Some(m), Some(e)) => format!("{m}; {e}"),
        (Some(m), None) => m,
        (None, Some(e)) => e,
        (None, None) => "no run measured it".into(),
    }
}

fn write_shown_text(uri: &Url, name: &str, text: &str) -> Option<(std::path::PathBuf, Url)> {
    let path = uri.to_file_path().ok();
    let stem = path
        .as_ref()
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "mapper".into());
    let beside = path
        .as_ref()
        .and_then(|p| p.parent())
        .map(|dir| dir.join(".mapwright").join(format!("{stem}.{name}.txt")));
    let cached = crate::user_cache::dir()
        .join("shown")
        .join(format!("{stem}.{name}.txt"));
    beside.into_iter().chain([cached]).find_map(|file| {
        let dir = file.parent()?;
        std::fs::create_dir_all(dir).ok()?;
        std::fs::write(&file, text).ok()?;
        let file_uri = Url::from_file_path(&file).ok()?;
        Some((file, file_uri))
    })
}

#[cfg(test)]
mod shown_text_tests {
    use super::*;

    #[test]
    fn the_text_goes_beside_the_mapper_else_in_the_users_cache() {
        let dir = std::env::temp_dir().join(format!("mapwright-shown-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let uri = Url::from_file_path(dir.join("m.mapper")).unwrap();
        let (file, file_uri) = write_shown_text(&uri, "explain", "a\nb\n").unwrap();
        assert_eq!(file, dir.join(".mapwright/m.explain.txt"));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nb\n");
        assert_eq!(file_uri.to_file_path().unwrap(), file);
        let untitled = Url::parse("untitled:Untitled-1").unwrap();
        let (file, _) = write_shown_text(&untitled, "explain", "c").unwrap();
        assert_eq!(
            file,
            crate::user_cache::dir().join("shown/mapper.explain.txt")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
