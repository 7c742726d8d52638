//! The server's state: open documents and what was negotiated or configured.
//!
//! Documents are immutable snapshots behind `Arc`: a change builds a new
//! `Document` and swaps it in, so a request that cloned the `Arc` keeps a
//! consistent view (text, version, analysis) however long it runs, and no
//! map guard is ever held across an `.await` (accessors return owned values).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use dashmap::DashMap;
use mapwright_grammar::line_index::Encoding;
use tower_lsp::lsp_types::{TextDocumentContentChangeEvent, Url};

use super::analysis::Analysis;
use super::config::{find_project_file, ProjectConfig, Settings};
use super::convert::apply_change;
use super::providers::Providers;

/// One version of an open document. Its analysis is computed on first use
/// (a burst of keystrokes parses only the versions someone asks about).
#[derive(Debug)]
pub struct Document {
    pub uri: Url,
    pub version: i32,
    pub text: String,
    analysis: OnceLock<Arc<Analysis>>,
}

impl Document {
    pub fn new(uri: Url, version: i32, text: String) -> Document {
        Document {
            uri,
            version,
            text,
            analysis: OnceLock::new(),
        }
    }

    /// The analysis of this version (computed once).
    pub fn analysis(&self) -> Arc<Analysis> {
        self.analysis
            .get_or_init(|| Arc::new(Analysis::new(&self.text)))
            .clone()
    }
}

/// What the client said it can do (from `initialize`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientFlags {
    pub snippets: bool,
    pub related_information: bool,
    pub markdown: bool,
    pub configuration: bool,
    pub watched_files_dynamic: bool,
    pub line_folding_only: bool,
}

/// The outcome of a `didChange`.
#[derive(Debug)]
pub enum Change {
    Applied(Arc<Document>),
    /// The notification's version is not newer than the document's: a
    /// duplicate or reordered message, ignored.
    Stale {
        have: i32,
        got: i32,
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
    shutdown: std::sync::atomic::AtomicBool,
    pub providers: Providers,
}

impl State {
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
        if version <= entry.version {
            return Change::Stale {
                have: entry.version,
                got: version,
            };
        }
        let mut text = entry.text.clone();
        for c in changes {
            apply_change(&mut text, c, enc);
        }
        let doc = Arc::new(Document::new(uri.clone(), version, text));
        *entry = doc.clone();
        Change::Applied(doc)
    }

    pub fn close(&self, uri: &Url) {
        self.docs.remove(uri);
        self.projects.remove(uri);
        self.semantic.remove(uri);
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

    /// The project that applies to `uri`: its `mapwright.toml`, else the
    /// settings' `app`/`machine` (as a project without a file).
    pub fn project(&self, uri: &Url) -> Option<Arc<ProjectConfig>> {
        if let Some(p) = self.projects.get(uri).and_then(|p| p.clone()) {
            return Some(p);
        }
        let s = self.settings();
        (s.app.is_some() || s.machine.is_some()).then(|| {
            Arc::new(ProjectConfig {
                path: PathBuf::new(),
                app: s.app,
                machine: s.machine,
            })
        })
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
