//! The server's state: open documents and what was negotiated or configured.
//!
//! Documents are immutable snapshots behind `Arc`: a change builds a new
//! `Document` and swaps it in, so a request that cloned the `Arc` keeps a
//! consistent view (text, version, analysis) however long it runs, and no
//! map guard is ever held across an `.await` (accessors return owned values).
//!
//! A document keeps its text and version for as long as it is open, but its
//! analysis only while it is among the recently used ones (see
//! [`super::analysis_cache`]): an evicted analysis is computed again when a
//! request or a publish needs it, with the same result.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use dashmap::DashMap;
use mapwright_grammar::line_index::Encoding;
use tower_lsp::lsp_types::{TextDocumentContentChangeEvent, Url};

use super::analysis::Analysis;
use super::analysis_cache::AnalysisSlot;
use super::config::{find_project_file, ProjectConfig, Settings};
use super::convert::{apply_change_indexed, DiagnosticFields};
use super::outbox::Outbox;
use super::providers::Providers;
use super::publish_cache::PublishCache;
use super::target::{
    resolve, resolve_parse, resolve_with, Resolution, ResolutionSlot, Target, TargetKey,
};

/// One version of an open document. Its analysis is computed on first use
/// (a burst of keystrokes parses only the versions someone asks about), and
/// again after it was evicted.
#[derive(Debug)]
pub struct Document {
    pub uri: Url,
    pub version: i32,
    /// Shared with its analysis (and the analysis's line index): the
    /// text is copied once per edit, when the edit is applied.
    pub text: Arc<String>,
    /// Byte offset of the last edit (where the user is typing; 0 for a
    /// document as opened): diagnostics nearest it are published first
    /// when there are too many (see [`super::publish_limit`]).
    pub focus: usize,
    analysis: AnalysisSlot,
    /// The last analysed earlier version, to re-analyse from incrementally;
    /// dropped once this version's analysis exists.
    base: Mutex<Option<Arc<Analysis>>>,
    /// This version resolved against the target it was last asked about,
    /// without quick fixes (what publishing, hovers and lenses read).
    resolution: ResolutionSlot,
    /// The same with the diagnostics' quick fixes, for code actions: made
    /// only when one asks (see [`super::target::resolve_with`]).
    with_fixes: ResolutionSlot,
}

impl Document {
    pub fn new(uri: Url, version: i32, text: String) -> Document {
        Document {
            uri,
            version,
            text: Arc::new(text),
            focus: 0,
            analysis: AnalysisSlot::default(),
            base: Mutex::new(None),
            resolution: ResolutionSlot::default(),
            with_fixes: ResolutionSlot::default(),
        }
    }

    /// The next version of `prev`, analysed (when asked) incrementally from
    /// `prev`'s analysis or, if `prev` was never analysed, from the one
    /// `prev` would have started from (from scratch if neither is in
    /// memory).
    /// `focus` is where the edit was (see [`Document::focus`]).
    pub fn edited(prev: &Document, version: i32, text: String, focus: usize) -> Document {
        let base = prev
            .analysis
            .held()
            .or_else(|| prev.base.lock().unwrap_or_else(|e| e.into_inner()).clone());
        let mut doc = Document::new(prev.uri.clone(), version, text);
        doc.focus = focus.min(doc.text.len());
        *doc.base.lock().unwrap_or_else(|e| e.into_inner()) = base;
        doc
    }

    /// This version resolved against `target` (computed once per target;
    /// again if it was evicted, see [`ResolutionSlot`]).
    /// Its diagnostics have no quick fixes: see [`Document::cached_resolution`].
    pub fn resolution(&self, target: &Arc<Target>) -> Arc<Resolution> {
        self.resolution
            .get_or_resolve(target, || resolve_with(&self.analysis(), target, false))
    }

    /// Whether this version's resolution against `target` is made and
    /// held now (see [`ResolutionSlot::ready`]).
    pub fn resolution_ready(&self, target: &Arc<Target>) -> bool {
        self.resolution.ready(target)
    }

    /// The resolution against `target` with its diagnostics' quick fixes,
    /// if this version was resolved against it already (published); made
    /// once, when a code action first asks.
    pub fn cached_resolution(&self, target: &Arc<Target>) -> Option<Arc<Resolution>> {
        self.resolution.resolved_against(target).then(|| {
            self.with_fixes
                .get_or_resolve(target, || resolve(&self.analysis(), target))
        })
    }

    /// The analysis of this version (computed once, and again if it was
    /// evicted).
    pub fn analysis(&self) -> Arc<Analysis> {
        self.analysis_then(|_| {})
    }

    /// [`Document::analysis`]; where it is made now, from an earlier
    /// version's, this version's resolution against `target` (without
    /// quick fixes, as [`Document::resolution`] makes it) starts on the
    /// resolving thread as soon as the parse exists, and runs beside the
    /// check: on a 5,000-line file with an application the two took about
    /// as long as each other, one after the other, on every keystroke.
    /// `wanted` is asked there first: a version superseded meanwhile is not
    /// resolved.
    pub fn analysis_resolving(
        self: &Arc<Self>,
        target: &Arc<Target>,
        wanted: impl FnOnce() -> bool + Send + 'static,
    ) -> Arc<Analysis> {
        self.analysis_then(|parsed| {
            let (doc, target, parsed) = (self.clone(), target.clone(), parsed.clone());
            super::resolve_thread::submit(move || {
                if wanted() {
                    doc.resolution.get_or_resolve(&target, || {
                        resolve_parse(&parsed, &doc.text, &target, false)
                    });
                }
                // (The parse is let go before the resolution is read: the
                // next edit's analysis then moves it instead of copying.)
                drop(parsed);
            });
        })
    }

    /// The analysis, with `on_parsed` handed the parse where it is made
    /// incrementally now (see [`Analysis::after_edit_consuming`]).
    fn analysis_then(
        &self,
        on_parsed: impl FnOnce(&Arc<mapwright_grammar::Parsed>),
    ) -> Arc<Analysis> {
        self.analysis.get_or_analyse(|| {
            let base = self.base.lock().unwrap_or_else(|e| e.into_inner()).take();
            match base {
                Some(prev) => {
                    // Superseded: out of the recently-used list, so that
                    // the next analysis can consume it.
                    super::analysis_cache::release(&prev);
                    Analysis::after_edit_consuming(
                        prev,
                        &self.text,
                        super::analysis_cache::drop_in_background,
                        on_parsed,
                    )
                }
                None => Analysis::sharing(self.text.clone()),
            }
        })
    }
}

/// What the client said it can do (from `initialize`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientFlags {
    pub snippets: bool,
    /// The optional diagnostic fields the client uses.
    pub diagnostic_fields: DiagnosticFields,
    /// `codeAction.resolveSupport` names `edit`: code actions go out
    /// without their edit, which `codeAction/resolve` computes.
    pub code_action_resolve: bool,
    /// `textDocument.diagnostic`: the client pulls diagnostics
    /// (`textDocument/diagnostic`), so none are pushed.
    pub pull_diagnostics: bool,
    /// `hover.contentFormat` includes Markdown (or is not given).
    pub markdown: bool,
    /// `completionItem.documentationFormat` includes Markdown; when not
    /// given, as for hovers.
    pub completion_markdown: bool,
    pub configuration: bool,
    pub watched_files_dynamic: bool,
    pub line_folding_only: bool,
    /// `window.workDoneProgress`: the server may create progress tokens.
    pub work_done_progress: bool,
    /// `window.showDocument.support`
    pub show_document: bool,
    /// `workspace.applyEdit`
    pub apply_edit: bool,
    /// `workspace.workspaceEdit.documentChanges` (versioned edits).
    pub document_changes: bool,
    /// `workspace.workspaceEdit.resourceOperations` includes `create`.
    pub create_files: bool,
    /// `workspace.codeLens.refreshSupport`
    pub code_lens_refresh: bool,
    /// `workspace.inlayHint.refreshSupport`
    pub inlay_hint_refresh: bool,
}

/// The outcome of a `didChange`.
#[derive(Debug)]
pub enum Change {
    Applied(Arc<Document>),
    /// The notification's version is not newer than the document's. It is
    /// applied all the same: the editor's text is the truth, and ignoring
    /// a change would let ours diverge from it silently. The server logs it.
    OutOfOrder {
        doc: Arc<Document>,
        have: i32,
    },
    /// The document is not open.
    Unknown,
}

/// Everything the handlers share.
#[derive(Default)]
pub struct State {
    docs: DashMap<Url, Arc<Document>>,
    /// The `mapwright.toml` of each open document (None: none found).
    projects: DashMap<Url, Option<Arc<ProjectConfig>>>,
    /// The last semantic-tokens result per document, for deltas.
    semantic: DashMap<Url, (String, Arc<Vec<u32>>)>,
    encoding: RwLock<Option<Encoding>>,
    flags: RwLock<ClientFlags>,
    settings: RwLock<Settings>,
    folders: RwLock<Vec<PathBuf>>,
    next_result_id: AtomicU64,
    /// Bumped when diagnostics change without an edit (settings, project
    /// files, a run's feedback): part of pulled diagnostics' result ids.
    diagnostics_generation: AtomicU64,
    shutdown: AtomicBool,
    pub providers: Providers,
    /// Loaded applications and machines, per project folder and names.
    targets: DashMap<TargetKey, Arc<Target>>,
    /// AutoGuide diagnostics of the last `mapwright.run`, per document, for
    /// the version that ran (dropped by the next edit).
    run_feedback: DashMap<Url, (i32, Vec<tower_lsp::lsp_types::Diagnostic>)>,
    /// The last run with measured figures, per document (kept across
    /// edits: hover says which version it was).
    last_runs: DashMap<Url, Arc<super::provider_api::LastRun>>,
    /// Cancel flags of running work-done progresses, by token.
    progress: DashMap<String, Arc<AtomicBool>>,
    /// Documents being optimized (one loop per document at a time).
    optimizing: DashMap<Url, Arc<AtomicBool>>,
    next_token: AtomicU64,
    /// Raised when the server must end without `exit`: the parent process
    /// named by `initialize`'s `processId` died.
    stop: tokio::sync::Notify,
    /// Set once `initialize`'s settings and the first configuration pull are
    /// in (see [`State::set_ready`]).
    ready: AtomicBool,
    ready_signal: tokio::sync::Notify,
    /// Where published diagnostics are written directly (set when serving
    /// stdio; without it they go through tower-lsp's client).
    outbox: OnceLock<Outbox>,
    /// The JSON of the last published document's diagnostics (see
    /// [`PublishCache`]).
    publish_cache: Mutex<PublishCache>,
}

impl State {
    /// Asks the server to end (see `run_stdio`).
    pub fn request_stop(&self) {
        // A stored permit: the signal is not lost if nobody waits yet.
        self.stop.notify_one();
    }

    /// Completes when [`State::request_stop`] was called.
    pub async fn stopped(&self) {
        self.stop.notified().await
    }

    /// Records that the settings are final for now: `initialize`'s options
    /// and the first `workspace/configuration` pull are applied. Until then
    /// no diagnostics are published and no command runs, so nothing is
    /// computed (and shown) with default settings and then again.
    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::SeqCst);
        self.ready_signal.notify_waiters();
    }

    /// Whether [`State::set_ready`] was called.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    /// Waits until the settings are final, at most `limit` (a client that
    /// never sends `initialized` or never answers the pull must not block
    /// commands forever).
    pub async fn wait_ready(&self, limit: std::time::Duration) {
        let notified = self.ready_signal.notified();
        tokio::pin!(notified);
        // Registered before the check, so a `set_ready` in between is seen.
        notified.as_mut().enable();
        if self.is_ready() {
            return;
        }
        let _ = tokio::time::timeout(limit, notified).await;
    }

    /// Records that the client sent `shutdown`.
    pub fn set_shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
    }

    /// Whether the client sent `shutdown`.
    pub fn shutdown_requested(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst)
    }

    /// The document at `uri` (an owned snapshot).
    pub fn doc(&self, uri: &Url) -> Option<Arc<Document>> {
        self.docs.get(uri).map(|d| d.clone())
    }

    /// Every open document (owned snapshots).
    pub fn all_docs(&self) -> Vec<Arc<Document>> {
        self.docs.iter().map(|d| d.clone()).collect()
    }

    /// True if `doc` is still the current version of its document.
    pub fn is_current(&self, doc: &Arc<Document>) -> bool {
        self.docs
            .get(&doc.uri)
            .is_some_and(|d| Arc::ptr_eq(&d, doc))
    }

    pub fn open(&self, uri: Url, version: i32, text: String) -> Arc<Document> {
        let doc = Arc::new(Document::new(uri.clone(), version, text));
        self.docs.insert(uri, doc.clone());
        doc
    }

    /// Applies a `didChange` (all its content changes, in order).
    pub fn change(
        &self,
        uri: &Url,
        version: i32,
        changes: &[TextDocumentContentChangeEvent],
    ) -> Change {
        let enc = self.encoding();
        let Some(mut entry) = self.docs.get_mut(uri) else {
            return Change::Unknown;
        };
        let have = entry.version;
        let mut text = String::clone(&entry.text);
        // The first change applies to the text of the current version,
        // whose analysis (if still in memory) has its line index.
        let analysis = entry.analysis.held().filter(|a| a.text.len() == text.len());
        let mut focus = entry.focus;
        for (i, c) in changes.iter().enumerate() {
            let index = analysis.as_ref().filter(|_| i == 0).map(|a| &a.index);
            if c.range.is_none() {
                // A whole-text change (clients that sync in full): the
                // edit is where the texts start to differ.
                focus = text
                    .bytes()
                    .zip(c.text.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
            }
            if let Some(at) = apply_change_indexed(&mut text, c, enc, index) {
                focus = at;
            }
        }
        // The document takes the editor's version, even a lower one: later
        // versioned edits and diagnostics must match what the editor has.
        // (Stale results are recognised by identity, not by version.)
        let doc = Arc::new(Document::edited(&entry, version, text, focus));
        *entry = doc.clone();
        if version <= have {
            Change::OutOfOrder { doc, have }
        } else {
            Change::Applied(doc)
        }
    }

    pub fn close(&self, uri: &Url) {
        self.docs.remove(uri);
        self.projects.remove(uri);
        self.semantic.remove(uri);
        self.run_feedback.remove(uri);
        self.last_runs.remove(uri);
        self.publish_cache().forget(uri);
    }

    /// The kept JSON of published diagnostics (one publish at a time).
    pub fn publish_cache(&self) -> std::sync::MutexGuard<'_, PublishCache> {
        self.publish_cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The loaded application and machine that apply to `uri` (`None` when
    /// no project file or setting names either). Loaded once per project
    /// folder and names; [`State::forget_targets`] reloads them.
    pub fn target(&self, uri: &Url) -> Option<Arc<Target>> {
        let project = self.project(uri)?;
        let key = TargetKey::of(&project)?;
        if let Some(t) = self.targets.get(&key) {
            if !t.is_stale() {
                return Some(t.clone());
            }
        }
        // (The read guard above is dropped before the entry is replaced.)
        self.targets.remove(&key);
        // The loaders never panic on bad files; a panic would still only
        // cost this target.
        let loaded = match super::guard::catch(|| Target::load(key.clone())) {
            Ok(t) => Arc::new(t),
            Err(msg) => Arc::new(Target {
                key: key.clone(),
                app: None,
                machine: None,
                shape: None,
                problems: vec![format!(
                    "internal error loading the application/machine: {msg}"
                )],
                files: Vec::new(),
                memo: Default::default(),
            }),
        };
        Some(self.targets.entry(key).or_insert(loaded).clone())
    }

    /// Drops every loaded target (a project file or the settings changed).
    pub fn forget_targets(&self) {
        self.targets.clear();
    }

    /// Whether some loaded target was read from `path` (an application or
    /// machine description file).
    pub fn target_reads(&self, path: &std::path::Path) -> bool {
        self.targets.iter().any(|t| t.value().reads(path))
    }

    /// Records a run's measured figures for hover and the code lenses;
    /// a run without measurements leaves the last measured one.
    pub fn set_last_run(&self, uri: &Url, run: super::provider_api::LastRun) {
        if run.metrics.basis == mapwright_runtime::backend::MetricsBasis::Measured {
            self.last_runs.insert(uri.clone(), Arc::new(run));
        }
    }

    /// The last run of `uri` with measured figures.
    pub fn last_run(&self, uri: &Url) -> Option<Arc<super::provider_api::LastRun>> {
        self.last_runs.get(uri).map(|r| r.clone())
    }

    /// Records the AutoGuide diagnostics of a run of `version`.
    pub fn set_run_feedback(
        &self,
        uri: &Url,
        version: i32,
        diags: Vec<tower_lsp::lsp_types::Diagnostic>,
    ) {
        self.run_feedback.insert(uri.clone(), (version, diags));
        self.diagnostics_changed();
    }

    /// Sets where published diagnostics are written (once).
    pub fn set_outbox(&self, outbox: Outbox) {
        let _ = self.outbox.set(outbox);
    }

    /// Where published diagnostics are written directly, if set.
    pub fn outbox(&self) -> Option<&Outbox> {
        self.outbox.get()
    }

    /// Records that diagnostics may differ for unchanged text (see
    /// [`State::diagnostics_result_id`]).
    pub fn diagnostics_changed(&self) {
        self.diagnostics_generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The result id of `doc`'s pulled diagnostics: its version and the
    /// generation of everything else they depend on, so the same id means
    /// the same diagnostics.
    pub fn diagnostics_result_id(&self, doc: &Document) -> String {
        format!(
            "{}.{}",
            doc.version,
            self.diagnostics_generation.load(Ordering::SeqCst)
        )
    }

    /// The run feedback of `uri` if it belongs to `version`; feedback of
    /// older versions is dropped.
    pub fn run_feedback(&self, uri: &Url, version: i32) -> Vec<tower_lsp::lsp_types::Diagnostic> {
        if let Some(entry) = self.run_feedback.get(uri) {
            if entry.0 == version {
                return entry.1.clone();
            }
        }
        // (The guard above is dropped before this removal.)
        self.run_feedback.remove_if(uri, |_, (v, _)| *v < version);
        Vec::new()
    }

    /// A fresh name for a server-created progress token.
    pub fn next_progress_token(&self, prefix: &str) -> String {
        let n = self.next_token.fetch_add(1, Ordering::Relaxed);
        format!("{prefix}-{n}")
    }

    /// Registers the cancel flag of a progress token.
    pub fn register_progress(&self, token: String, flag: Arc<AtomicBool>) {
        self.progress.insert(token, flag);
    }

    /// `window/workDoneProgress/cancel`: sets the token's cancel flag.
    /// Returns whether the token was known.
    pub fn cancel_progress(&self, token: &str) -> bool {
        match self.progress.get(token) {
            Some(flag) => {
                flag.store(true, Ordering::SeqCst);
                true
            }
            None => false,
        }
    }

    pub fn end_progress(&self, token: &str) {
        self.progress.remove(token);
    }

    /// Marks `uri` as being optimized; `false` if it already is.
    pub fn start_optimizing(&self, uri: &Url, cancel: Arc<AtomicBool>) -> bool {
        match self.optimizing.entry(uri.clone()) {
            dashmap::mapref::entry::Entry::Occupied(_) => false,
            dashmap::mapref::entry::Entry::Vacant(v) => {
                v.insert(cancel);
                true
            }
        }
    }

    pub fn stop_optimizing(&self, uri: &Url) {
        self.optimizing.remove(uri);
    }

    /// The negotiated position encoding (UTF-16 until negotiated).
    pub fn encoding(&self) -> Encoding {
        self.encoding
            .read()
            .ok()
            .and_then(|e| *e)
            .unwrap_or(Encoding::Utf16)
    }

    pub fn set_encoding(&self, enc: Encoding) {
        if let Ok(mut e) = self.encoding.write() {
            *e = Some(enc);
        }
    }

    pub fn flags(&self) -> ClientFlags {
        self.flags.read().map(|f| *f).unwrap_or_default()
    }

    pub fn set_flags(&self, flags: ClientFlags) {
        if let Ok(mut f) = self.flags.write() {
            *f = flags;
        }
    }

    pub fn settings(&self) -> Settings {
        self.settings.read().map(|s| s.clone()).unwrap_or_default()
    }

    /// Merges a settings object into the current settings.
    pub fn update_settings(&self, value: &serde_json::Value) -> Result<(), String> {
        let merged = self.settings().merged(value)?;
        if let Ok(mut s) = self.settings.write() {
            *s = merged;
        }
        Ok(())
    }

    pub fn folders(&self) -> Vec<PathBuf> {
        self.folders.read().map(|f| f.clone()).unwrap_or_default()
    }

    pub fn set_folders(&self, folders: Vec<PathBuf>) {
        if let Ok(mut f) = self.folders.write() {
            *f = folders;
        }
    }

    /// Finds and loads the project file of `uri` (walking up from the file,
    /// stopping at its workspace folder). Returns an error message if a file
    /// was found but could not be read.
    pub fn refresh_project(&self, uri: &Url) -> Result<Option<Arc<ProjectConfig>>, String> {
        let Ok(path) = uri.to_file_path() else {
            self.projects.insert(uri.clone(), None);
            return Ok(None);
        };
        let folders = self.folders();
        let root = folders
            .iter()
            .filter(|f| path.starts_with(f))
            .max_by_key(|f| f.components().count());
        let found = find_project_file(&path, root.map(|r| r.as_path()));
        let loaded = match found {
            None => Ok(None),
            Some(file) => ProjectConfig::load(&file).map(|c| Some(Arc::new(c))),
        };
        let value = loaded.as_ref().ok().cloned().flatten();
        self.projects.insert(uri.clone(), value);
        loaded
    }

    /// The project that applies to `uri`: its `mapwright.toml`, whose
    /// `app` and `machine` fall back to the settings' one by one (a
    /// settings-only project has an empty path).
    pub fn project(&self, uri: &Url) -> Option<Arc<ProjectConfig>> {
        let file = self.projects.get(uri).and_then(|p| p.clone());
        let s = self.settings();
        match file {
            Some(p)
                if (p.app.is_some() || s.app.is_none())
                    && (p.machine.is_some() || s.machine.is_none()) =>
            {
                Some(p)
            }
            Some(p) => {
                let mut merged = (*p).clone();
                merged.app = merged.app.or(s.app);
                merged.machine = merged.machine.or(s.machine);
                Some(Arc::new(merged))
            }
            None => (s.app.is_some() || s.machine.is_some()).then(|| {
                Arc::new(ProjectConfig {
                    path: PathBuf::new(),
                    app: s.app,
                    machine: s.machine,
                    ..ProjectConfig::default()
                })
            }),
        }
    }

    /// The previous semantic-tokens result of `uri`.
    pub fn semantic_result(&self, uri: &Url) -> Option<(String, Arc<Vec<u32>>)> {
        self.semantic.get(uri).map(|r| r.clone())
    }

    /// Stores a semantic-tokens result and returns its new id.
    pub fn store_semantic(&self, uri: &Url, data: Arc<Vec<u32>>) -> String {
        let id = self
            .next_result_id
            .fetch_add(1, Ordering::Relaxed)
            .to_string();
        self.semantic.insert(uri.clone(), (id.clone(), data));
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Arc<Target> {
        Arc::new(Target::load(TargetKey {
            dir: None,
            app: Some("circuit".into()),
            machine: Some("p100x4".into()),
        }))
    }

    /// An edited version whose analysis is made incrementally now.
    fn edited_version() -> Arc<Document> {
        let uri = Url::parse("file:///tmp/early.mapper").unwrap();
        let text = runtime_expert();
        let first = Document::new(uri, 1, text.clone());
        let _held = first.analysis();
        let edited = text.replacen("Task * GPU", "Task *  GPU", 1);
        Arc::new(Document::edited(&first, 2, edited, 0))
    }

    fn runtime_expert() -> String {
        mapwright_runtime::app::App::builtin("circuit")
            .and_then(|a| a.expert_text())
            .unwrap()
            .to_string()
    }

    /// The resolution started beside the check is the one publishing reads
    /// (no second resolution), and equals a resolution made afterwards.
    #[tokio::test]
    async fn the_resolution_started_beside_the_check_is_the_one_read() {
        let t = target();
        let doc = edited_version();
        let a = doc.analysis_resolving(&t, || true);
        // Jobs run in order: once this one ran, the early one has.
        super::super::resolve_thread::run(|| ()).await.unwrap();
        assert!(doc.resolution.resolved_against(&t));
        // The resolution let go of the parse: the next edit's analysis
        // moves it instead of analysing from a copy.
        assert_eq!(Arc::strong_count(&a.parsed), 1);
        let early = doc.resolution(&t);
        let again = resolve_with(&a, &t, false);
        assert_eq!(
            serde_json::to_value(early.decisions.as_ref().unwrap()).unwrap(),
            serde_json::to_value(again.decisions.as_ref().unwrap()).unwrap()
        );
        assert_eq!(early.globals, again.globals);
    }

    /// A version superseded before the resolving thread reached it is not
    /// resolved there.
    #[tokio::test]
    async fn a_superseded_version_is_not_resolved_early() {
        let t = target();
        let doc = edited_version();
        let _a = doc.analysis_resolving(&t, || false);
        super::super::resolve_thread::run(|| ()).await.unwrap();
        assert!(!doc.resolution.resolved_against(&t));
    }
}
