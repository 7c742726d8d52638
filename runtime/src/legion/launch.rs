//! A task launch as mapwright's Legion mapper sees it, and the application
//! description that the launches seen so far make.
//!
//! The mapper needs no application description: like the reference DSL
//! mapper, it decides from what Legion tells it about each launch (the
//! task's name, its variants, its region requirements and their names).
//! Mapping resolution works on an [`App`], so the launches seen so far are
//! kept as one ([`SeenApp`]): a task's latest launch replaces its earlier
//! shape, and its parent is kept so that a single task launched from the
//! points of an index launch is placed on its parent point's node.

use crate::app::{App, Launch, Privilege, RegionArg, Task, Work};
use crate::machine::ProcKind;

/// One region requirement of a launch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RegionInfo {
    /// The names the requirement answers to, most specific first: the
    /// region's own semantic name, its parent partition's, the privilege
    /// parent region's (`NSMapper::get_handle_names`). May be empty.
    pub names: Vec<String>,
    pub privilege: Privilege,
    /// Number of fields requested (0: a requirement without fields).
    pub fields: u32,
}

/// One launch of a task.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LaunchInfo {
    /// The task's name as Legion knows it.
    pub task: String,
    /// The launching task's name (None for the top-level task).
    pub parent: Option<String>,
    pub launch: Launch,
    /// Lower bounds of the launch domain (index launches).
    pub lo: Vec<i64>,
    /// Upper bounds of the launch domain, inclusive (index launches).
    pub hi: Vec<i64>,
    /// Kinds the task has variants for.
    pub variants: Vec<ProcKind>,
    /// Whether the variant chosen for it is an inner task.
    pub inner: bool,
    pub regions: Vec<RegionInfo>,
}

impl LaunchInfo {
    /// Launch-domain extents (empty for single launches).
    pub fn extents(&self) -> Vec<u64> {
        self.lo
            .iter()
            .zip(&self.hi)
            .map(|(l, h)| (h - l + 1).max(0) as u64)
            .collect()
    }

    /// The application task this launch describes. Region names become the
    /// argument's name and aliases; a nameless requirement is called by its
    /// index, which is also what index naming matches.
    pub fn task_description(&self) -> Task {
        let regions = self
            .regions
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut names = r.names.iter().filter(|n| !n.is_empty()).cloned();
                let name = names.next().unwrap_or_else(|| i.to_string());
                let mut aliases: Vec<String> = names.filter(|n| *n != name).collect();
                aliases.dedup();
                RegionArg {
                    name,
                    aliases,
                    launches: Vec::new(),
                    index: i as u32,
                    privilege: r.privilege,
                    fields: (0..r.fields).map(|f| format!("field{f}")).collect(),
                    dims: self.lo.len().max(1) as u32,
                    shape: Vec::new(),
                    elements: 1,
                    bytes: 0,
                    virtual_by_app: false,
                    notes: String::new(),
                    guess: None,
                }
            })
            .collect();
        Task {
            name: self.task.clone(),
            launch: self.launch,
            domain: if self.launch == Launch::Index {
                self.extents()
            } else {
                Vec::new()
            },
            variants: self.variants.clone(),
            regions,
            work: Work::default(),
            per_iteration: 0,
            setup_launches: 1,
            timed: true,
            parent: self.parent.clone(),
            inner: self.inner,
            node_local: Vec::new(),
            notes: String::new(),
            guess: None,
        }
    }
}

/// The application as far as the mapper has seen it.
#[derive(Debug, Clone)]
pub struct SeenApp {
    app: App,
    /// Whether the program names regions semantically
    /// (`-tm:use_semantic_name`), recorded the way resolution reads it.
    semantic: bool,
}

impl SeenApp {
    /// An application with no task seen yet.
    pub fn new(semantic: bool) -> SeenApp {
        // Not `App::from_json_str`: a description with no task yet is
        // valid here, though not as a file a user hands in.
        let app: App = serde_json::from_str(&format!(
            r#"{{"name": "legion-program", "tasks": [], "run_flags": "{}"}}"#,
            if semantic {
                "-tm:use_semantic_name"
            } else {
                "(no -tm:use_semantic_name)"
            }
        ))
        .expect("a minimal application description");
        SeenApp { app, semantic }
    }

    /// Records `launch` (replacing the task's earlier shape) and returns the
    /// application to resolve.
    pub fn record(&mut self, launch: &LaunchInfo) -> &App {
        let task = launch.task_description();
        match self.app.tasks.iter_mut().find(|t| t.name == task.name) {
            Some(t) => *t = task,
            None => self.app.tasks.push(task),
        }
        // A parent known only by name (the top-level task is never launched
        // through the mapper's select_task_options) stays a single task.
        &self.app
    }

    /// Whether regions are named semantically.
    pub fn semantic(&self) -> bool {
        self.semantic
    }
}
