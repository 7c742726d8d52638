//! The application and machine a document is written for, loaded once per
//! project file, and what one version of a document does on them.
//!
//! - [`Target`]: the `app` and `machine` of a `mapwright.toml` (or of the
//!   settings), loaded with the CLI's loaders ([`crate::project`]). The state
//!   caches one per (project folder, app, machine) and drops the cache when a
//!   project file or the settings change; a target loaded from description
//!   files is reloaded when one of them changes on disk (its modification
//!   time, checked on use, and the file watcher when the client has one).
//! - [`Resolution`]: one document version against a target: the mapping
//!   decisions of the runtime's resolution (with their diagnostics and
//!   verified quick fixes) when the application is known, and the values of
//!   the top-level names evaluated on the machine's shape (machine-model
//!   sizes). Computed on first use; a document holds it through a
//!   [`ResolutionSlot`], and only the [`KEPT_RESOLUTIONS`] most recently
//!   used resolutions stay in memory (an application's resolution is the
//!   largest thing a document keeps); an evicted one is recomputed on the
//!   next request, with the same result (resolution is a pure function of
//!   the version and the target).
//!
//! Pure: no LSP types. Loading and resolving never panic on user input (the
//! runtime's invariant); the protocol layer still guards every call.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

use mapwright_grammar::token::TokenKind;
use mapwright_grammar::{Diagnostic, Parsed, Span};
use mapwright_runtime::app::App;
use mapwright_runtime::decisions::Decisions;
use mapwright_runtime::eval::{
    Comprehensions, Evaluator, ForToken, Limits, MachineShape, ProgramSource, Value,
};
use mapwright_runtime::machine::Machine;
use mapwright_runtime::resolve_mapping::{
    resolve_parsed_with, EvalPlacer, NoPlacer, ResolveMemo, ResolveOptions,
};

use super::analysis::Analysis;
use super::config::ProjectConfig;
use super::recent::RecentlyUsed;

/// The machine assumed when a project names an application but no machine
/// (the CLI's default: the paper's machine).
pub const DEFAULT_MACHINE: &str = "p100x4";

/// What identifies a target: the folder relative paths start from, and the
/// `app` and `machine` strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TargetKey {
    pub dir: Option<std::path::PathBuf>,
    pub app: Option<String>,
    pub machine: Option<String>,
}

impl TargetKey {
    /// The key of a project (`None` when it names neither an application
    /// nor a machine).
    pub fn of(project: &ProjectConfig) -> Option<TargetKey> {
        if project.app.is_none() && project.machine.is_none() {
            return None;
        }
        Some(TargetKey {
            dir: project.dir().map(Path::to_path_buf),
            app: project.app.clone(),
            machine: project.machine.clone(),
        })
    }
}

/// A loaded application and machine.
#[derive(Debug)]
pub struct Target {
    pub key: TargetKey,
    /// `None` if the project names none or it could not be loaded.
    pub app: Option<Arc<App>>,
    /// `None` only if it could not be loaded.
    pub machine: Option<Arc<Machine>>,
    /// The machine as the evaluator sees it (nodes, processors per kind).
    pub shape: Option<MachineShape>,
    /// Why something could not be loaded (shown in the log and as a
    /// diagnostic at the top of the document).
    pub problems: Vec<String>,
    /// The application/machine description files it was read from, with
    /// their modification time and length then (built-in names and
    /// presets: none).
    pub files: Vec<(std::path::PathBuf, Stamp)>,
    /// What each resolution against this target leaves for the next (a
    /// document is resolved again on every keystroke).
    pub memo: ResolveMemo,
}

/// The file a `--app`/`--machine` argument names, resolved as the loaders
/// resolve it; `None` for built-in names and presets. A file that does not
/// exist yet is still returned (creating it must reload the target).
fn description_file(arg: &str, dir: Option<&Path>, builtin: bool) -> Option<std::path::PathBuf> {
    if builtin {
        return None;
    }
    let p = crate::project::resolve_path(arg, dir);
    Some(std::fs::canonicalize(&p).unwrap_or(p))
}

/// What tells a changed file: modification time and length (two writes
/// within the file system's timestamp granularity still differ in length
/// more often than not).
pub type Stamp = Option<(std::time::SystemTime, u64)>;

fn modified(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

impl Target {
    /// Loads the application and machine of `key`; problems are recorded,
    /// never fatal.
    pub fn load(key: TargetKey) -> Target {
        let dir = key.dir.as_deref();
        // Stamped before loading: a write during the load is seen later.
        let app_is_builtin = |a: &str| App::builtin_names().contains(&a);
        let machine_arg = key.machine.as_deref().unwrap_or(DEFAULT_MACHINE);
        let files: Vec<(std::path::PathBuf, Stamp)> = key
            .app
            .as_deref()
            .and_then(|a| description_file(a, dir, app_is_builtin(a)))
            .into_iter()
            .chain(description_file(
                machine_arg,
                dir,
                Machine::preset(machine_arg).is_some(),
            ))
            .map(|f| {
                let t = modified(&f);
                (f, t)
            })
            .collect();
        let mut problems = Vec::new();
        let app = key
            .app
            .as_deref()
            .and_then(|a| match crate::project::load_app(a, dir) {
                Ok(app) => Some(Arc::new(app)),
                Err(e) => {
                    problems.push(format!("{e:#}"));
                    None
                }
            });
        let machine = match crate::project::load_machine(machine_arg, dir) {
            Ok(m) => Some(Arc::new(m)),
            Err(e) => {
                problems.push(format!("{e:#}"));
                None
            }
        };
        let shape = machine.as_deref().map(|m| EvalPlacer::shape(m, 1));
        Target {
            key,
            app,
            machine,
            shape,
            problems,
            files,
            memo: ResolveMemo::keeping_with(crate::alloc::outside_scratch),
        }
    }

    /// Whether a description file it was loaded from changed since.
    pub fn is_stale(&self) -> bool {
        self.files.iter().any(|(f, t)| modified(f) != *t)
    }

    /// Whether `path` is one of its description files.
    pub fn reads(&self, path: &Path) -> bool {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.files.iter().any(|(f, _)| *f == path)
    }

    /// The machine's name, for messages.
    pub fn machine_name(&self) -> &str {
        self.machine.as_deref().map_or("?", |m| m.name.as_str())
    }
}

/// The value of a top-level name on the configured machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GlobalValue {
    /// A machine model: its processor kind and size.
    Model { kind: String, size: Vec<i64> },
    /// Anything else, as the reference would print it.
    Other(String),
}

/// `(2,1,2)`: a size as the DSL's `m.size` prints it.
pub fn size_text(size: &[i64]) -> String {
    let parts: Vec<String> = size.iter().map(|x| x.to_string()).collect();
    format!("({})", parts.join(","))
}

/// One document version resolved against a target.
#[derive(Debug, Clone, Default)]
pub struct Resolution {
    /// The runtime's decisions (`None` without an application, or when the
    /// document has syntax errors the resolution cannot get past).
    pub decisions: Option<Decisions>,
    /// Values of the top-level names, evaluated on the machine's shape.
    pub globals: HashMap<String, GlobalValue>,
    /// The top level's evaluation failure, if any (span and message).
    pub eval_error: Option<(Span, String)>,
}

/// How many resolutions stay in memory, most recently used first. Editors
/// ask about the few documents on screen; with an application a large
/// mapper's resolution takes megabytes (its decisions, per-point
/// placements, diagnostics with verified fixes), so keeping one per open
/// document made 100 open documents cost ~80 MB more than without one.
pub const KEPT_RESOLUTIONS: usize = 8;

/// The strong references to the most recently used resolutions.
static RECENT: RecentlyUsed<Resolution> = RecentlyUsed::new();

/// Marks `r` as just used, dropping the least recently used beyond
/// [`KEPT_RESOLUTIONS`].
fn keep_recent(r: &Arc<Resolution>) {
    drop(RECENT.touch(r, |_| KEPT_RESOLUTIONS));
}

/// Where a document version keeps its resolution: the target it was
/// computed against, and the resolution held weakly (the strong reference
/// is in the recently-used list). Once it was computed it counts as
/// computed: an evicted resolution is recomputed when asked for again, so
/// callers see no difference but the time.
#[derive(Debug, Default)]
pub struct ResolutionSlot {
    inner: Mutex<Option<(Arc<Target>, Weak<Resolution>)>>,
}

/// The resolution `slot` holds (weakly) if it was computed against
/// `target`.
fn against<'s>(
    slot: &'s Option<(Arc<Target>, Weak<Resolution>)>,
    target: &Arc<Target>,
) -> Option<&'s Weak<Resolution>> {
    slot.as_ref()
        .filter(|(t, _)| Arc::ptr_eq(t, target))
        .map(|(_, r)| r)
}

impl ResolutionSlot {
    /// Whether the resolution against `target` is made and held now (not
    /// being made, nor evicted): then reading it costs nothing.
    pub fn ready(&self, target: &Arc<Target>) -> bool {
        self.inner
            .try_lock()
            .is_ok_and(|slot| against(&slot, target).is_some_and(|r| r.strong_count() > 0))
    }

    /// The resolution against `target`, from `compute` unless it is held.
    pub fn get_or_resolve(
        &self,
        target: &Arc<Target>,
        compute: impl FnOnce() -> Resolution,
    ) -> Arc<Resolution> {
        let mut slot = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let held = against(&slot, target).and_then(Weak::upgrade);
        let r = held.unwrap_or_else(|| {
            let r = Arc::new(compute());
            *slot = Some((target.clone(), Arc::downgrade(&r)));
            r
        });
        keep_recent(&r);
        r
    }

    /// Whether this slot's resolution was computed against `target` (it
    /// may have been evicted since).
    pub fn resolved_against(&self, target: &Arc<Target>) -> bool {
        let slot = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        against(&slot, target).is_some()
    }

    /// The resolution against `target` if it was computed before (again
    /// from `compute` if it was evicted since); `None` if it never was.
    /// (What `Document::cached_resolution` does across its two slots; kept
    /// for the eviction test below.)
    #[cfg(test)]
    pub fn get_if_resolved(
        &self,
        target: &Arc<Target>,
        compute: impl FnOnce() -> Resolution,
    ) -> Option<Arc<Resolution>> {
        self.resolved_against(target)
            .then(|| self.get_or_resolve(target, compute))
    }
}

/// Evaluation steps allowed for the top level (a language server must not
/// stall on a hostile file; real mappers use a few thousand).
const TOP_LEVEL_STEPS: u64 = 200_000;

/// Resolves `a` against `target`. Never panics on any input (the runtime's
/// invariant).
///
/// The work runs on a scratch heap and the result is copied out
/// ([`crate::alloc::compacted`]): resolving allocates megabytes that are
/// freed at once, and the kept result would otherwise pin the allocator
/// pages it shares with them (with 100 open documents and an application,
/// several megabytes stayed resident for the 8 kept resolutions).
pub fn resolve(a: &Analysis, target: &Target) -> Resolution {
    resolve_with(a, target, true)
}

/// [`resolve`], with the diagnostics' quick fixes only where `fixes` says
/// so. Finding a layout problem's fix resolves the edited file again for
/// each candidate edit: with an application on a 5,000-line file that was
/// 29 % of the server's time per keystroke (`perf`, cannon), for fixes
/// nobody had asked for yet. Publishing resolves without them (they are
/// not published), code actions with them (see `Document`).
pub fn resolve_with(a: &Analysis, target: &Target, fixes: bool) -> Resolution {
    resolve_parse(&a.parsed, &a.text, target, fixes)
}

/// [`resolve_with`] from the parse of `text` alone: the resolution reads
/// no result of the check, so the server starts it before the check ends
/// (see `Document::analysis_resolving`).
pub fn resolve_parse(parsed: &Arc<Parsed>, text: &str, target: &Target, fixes: bool) -> Resolution {
    crate::alloc::compacted(|| resolve_here(parsed, text, target, fixes))
}

/// The `for` tokens of `parsed` with the top-level statement that holds
/// each (ascending): only there can a comprehension be.
fn for_tokens(parsed: &Parsed) -> Vec<ForToken> {
    parsed
        .tokens
        .iter()
        .filter(|t| t.kind == TokenKind::KwFor)
        .map(|t| ForToken {
            stmt: mapwright_grammar::resolve::statement_at(&parsed.program, t.span.start()),
            at: t.span.start(),
        })
        .collect()
}

/// [`resolve`] on the current heap. The evaluator of the top level, the
/// launch placer and the resolution all read the parse in place.
fn resolve_here(parsed: &Arc<Parsed>, text: &str, target: &Target, fixes: bool) -> Resolution {
    let mut out = Resolution::default();
    let (Some(machine), Some(shape)) = (target.machine.as_deref(), target.shape.as_ref()) else {
        return out;
    };
    // The statements that parsed, read in the parse itself (see
    // `ProgramSource`): the top level's evaluator and the launch placer
    // evaluate them with no copy of the tree (copying and freeing it was
    // about a tenth of a resolution of a 5,000-line file, `perf`).
    let program: Arc<dyn ProgramSource> = parsed.clone();
    let limits = Limits {
        max_steps: TOP_LEVEL_STEPS,
        ..Limits::default()
    };
    // (A comprehension needs a `for`: only those have a range to check.)
    let fors = for_tokens(parsed);
    let (ev, err) = Evaluator::new_partial_shared_hinted(
        program.clone(),
        shape,
        limits,
        Comprehensions::At(&fors),
    );
    out.globals = globals_of(&ev);
    let top_level_failed = err.is_some();
    out.eval_error = err.map(|e| (e.span, e.message));
    if let Some(app) = target.app.as_deref() {
        let options = ResolveOptions {
            naming: None,
            fixes,
            memo: Some(&target.memo),
        };
        // The placer's top level is the one just run, where it would run
        // the same way again (see `EvalPlacer::from_top_level`); a top
        // level that failed fails the placer's too.
        let placer = if top_level_failed {
            None
        } else {
            EvalPlacer::from_top_level(ev, machine)
                .or_else(|| EvalPlacer::with_parsed_statements(program, machine).ok())
        };
        let decisions = match placer {
            Some(mut placer) => {
                resolve_parsed_with(parsed, text, app, machine, &mut placer, options)
            }
            None => resolve_parsed_with(parsed, text, app, machine, &mut NoPlacer, options),
        };
        out.decisions = Some(decisions);
    }
    out
}

fn globals_of(ev: &Evaluator) -> HashMap<String, GlobalValue> {
    ev.globals()
        .filter_map(|(name, v)| {
            let value = match v {
                Value::Machine(m) => GlobalValue::Model {
                    kind: m.kind().to_string(),
                    size: m.size().to_vec(),
                },
                Value::Function { .. } => return None,
                other => {
                    let text = other.to_string();
                    if text.len() > 200 {
                        return None;
                    }
                    GlobalValue::Other(text)
                }
            };
            Some((name.to_string(), value))
        })
        .collect()
}

/// Everything to publish for one version: the front end's diagnostics and
/// the resolution's, in source order (identical duplicates dropped).
pub fn merged_diagnostics(a: &Analysis, resolution: Option<&Resolution>) -> Vec<Diagnostic> {
    merged_diagnostic_refs(a, resolution)
        .into_iter()
        .cloned()
        .collect()
}

/// [`merged_diagnostics`] without copying them (publishing reads them once).
pub fn merged_diagnostic_refs<'a>(
    a: &'a Analysis,
    resolution: Option<&'a Resolution>,
) -> Vec<&'a Diagnostic> {
    let key = |d: &Diagnostic| (d.span.start(), d.span.end());
    // (In source order: sorted by span, stably.)
    let mut all: Vec<&Diagnostic> = a.diagnostics();
    if let Some(d) = resolution.and_then(|r| r.decisions.as_ref()) {
        // A resolution diagnostic equal to one already listed (the
        // analysis's, or an earlier one of the resolution's) is dropped.
        // Equal diagnostics have equal spans, so each is compared only
        // with those at its span, found by walking both lists in span
        // order: a table of the analysis's spans (a list per span) cost a
        // sixth of a keystroke's resolution on a 5,000-line file with an
        // application (`perf`), and a linear scan of the list per
        // resolution diagnostic was quadratic.
        let mut extra: Vec<&Diagnostic> = d.diagnostics.iter().collect();
        extra.sort_by_key(|d| key(d));
        let mut kept: Vec<&Diagnostic> = Vec::with_capacity(extra.len());
        let mut next = 0;
        for diag in extra {
            let at = key(diag);
            while next < all.len() && key(all[next]) < at {
                next += 1;
            }
            let listed = all[next..]
                .iter()
                .take_while(|x| key(x) == at)
                .any(|x| *x == diag);
            let kept_before = kept
                .iter()
                .rev()
                .take_while(|x| key(x) == at)
                .any(|x| *x == diag);
            if !listed && !kept_before {
                kept.push(diag);
            }
        }
        // (Two sorted runs: the stable sort merges them, the analysis's
        // first at equal spans.)
        all.extend(kept);
        all.sort_by_key(|d| key(d));
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use mapwright_runtime::resolve_mapping::parsed_statements;

    fn target(app: Option<&str>, machine: Option<&str>) -> Target {
        Target::load(TargetKey {
            dir: None,
            app: app.map(str::to_string),
            machine: machine.map(str::to_string),
        })
    }

    #[test]
    fn loads_builtins_and_reports_unknown_names() {
        let t = target(Some("circuit"), None);
        assert!(t.problems.is_empty(), "{:?}", t.problems);
        assert_eq!(t.machine_name(), DEFAULT_MACHINE);
        assert!(t.app.is_some());
        let bad = target(Some("nope"), Some("nowhere"));
        assert!(bad.app.is_none() && bad.machine.is_none());
        assert_eq!(bad.problems.len(), 2);
        assert!(bad.problems[0].contains("nope"), "{:?}", bad.problems);
    }

    #[test]
    fn resolution_evaluates_models_and_finds_mapping_problems() {
        let t = target(Some("circuit"), Some("p100x4"));
        let text = "m = Machine(GPU);\nm2 = m.split(1, 2);\nn = 3;\nTask no_such_task GPU;\n";
        let a = Analysis::new(text);
        let r = resolve(&a, &t);
        assert_eq!(
            r.globals.get("m2"),
            Some(&GlobalValue::Model {
                kind: "GPU".into(),
                size: vec![1, 2, 2]
            })
        );
        assert_eq!(r.globals.get("n"), Some(&GlobalValue::Other("3".into())));
        let all = merged_diagnostics(&a, Some(&r));
        assert!(all.iter().any(|d| d.code == "W0309"), "{all:#?}");
        // Without an application only the machine is used.
        let m = target(None, Some("p100x4"));
        let r = resolve(&a, &m);
        assert!(r.decisions.is_none());
        assert!(r.globals.contains_key("m2"));
    }

    /// Reading the parse in place and handing the top level's evaluator to
    /// the launch placer (instead of a copy of the statements that parsed,
    /// and the placer running the top level again) changes no decision:
    /// every application's expert, as written and with a line that does
    /// not parse in its middle, resolved both ways (the corpus files, on
    /// two applications: the test after next).
    #[test]
    fn the_shared_top_level_places_as_a_placer_of_its_own() {
        let experts = App::builtin_names().iter().flat_map(|&name| {
            let expert = App::builtin(name).and_then(|a| a.expert_text()).unwrap();
            let middle = expert[..expert.len() / 2].rfind('\n').unwrap_or(0);
            let broken = format!(
                "{}\nTask oops = ;\n{}",
                &expert[..middle],
                &expert[middle..]
            );
            [(name, expert.to_string()), (name, broken)]
        });
        for (name, text) in experts {
            let t = target(Some(name), Some("p100x4"));
            let a = Analysis::new(&text);
            let shared = resolve(&a, &t);
            let separate = resolved_with_separate_copies(&a, &t);
            let by_own = separate.decisions.as_ref().unwrap();
            let placed = by_own
                .tasks
                .iter()
                .filter(|t| !t.placement.is_empty())
                .count();
            assert!(placed > 0, "{name}: nothing placed");
            assert_eq!(
                serde_json::to_value(shared.decisions.as_ref().unwrap()).unwrap(),
                serde_json::to_value(by_own).unwrap(),
                "{name}"
            );
        }
    }

    /// The comprehension-range check the reference makes while parsing is
    /// skipped only for a file without `for`: a file that breaks the rule
    /// still gets the evaluator's error, wherever the comprehension is.
    #[test]
    fn a_comprehension_over_a_name_is_still_an_error() {
        let t = target(Some("circuit"), Some("p100x4"));
        let bad = "r = (0, 1);\ndef f(Task t) { return tuple(i for i in r); }\nTask * GPU;\n";
        let r = resolve(&Analysis::new(bad), &t);
        let (_, message) = r.eval_error.expect("the range error");
        assert!(
            message.contains("For-comprehension must itererate"),
            "{message}"
        );
        let good = "def f(Task t) { return tuple(i for i in (0, 1)); }\nTask * GPU;\n";
        assert!(resolve(&Analysis::new(good), &t).eval_error.is_none());
        let none = "m = Machine(GPU);\nTask * GPU;\n";
        assert!(resolve(&Analysis::new(none), &t).eval_error.is_none());
    }

    /// Only the `for` tokens' own comprehensions are read for their
    /// ranges, and the error found, or none, is what a read of every
    /// statement finds (the last such statement's first): at the top
    /// level, in a function body, nested, in parentheses, inside an `if`
    /// the reference's check does not read, and with a stray `for`.
    #[test]
    fn comprehension_ranges_are_read_where_a_for_is_and_give_the_same_error() {
        let t = target(Some("circuit"), Some("p100x4"));
        let shape = t.shape.as_ref().unwrap();
        let failing = [
            "r = (0, 1);\na = tuple(i for i in r);\nx = 1;\nb = tuple(j for j in r);\nTask * GPU;\n",
            "r = (0, 1);\ndef f(Task t) { q = tuple(i for i in r); return q; }\nx = 2;\ndef g(Task t) { return tuple(i for i in (0, 1)); }\nTask * GPU;\n",
            "r = (0, 1);\nb = tuple(j for j in r);\nfor\nTask * GPU;\n",
            "r = (0, 1);\nb = tuple(tuple(i for i in r) for j in (0, 1));\nTask * GPU;\n",
            "r = (0, 1);\nb = tuple(j + 1 for j in ((r)));\nc = tuple(j for j in ((0, 1)));\nTask * GPU;\n",
        ];
        let passing = [
            "b = tuple(tuple(i for i in (2, 3)) for j in ((0, 1)));\nTask * GPU;\n",
            "def f(Task t) { q = tuple(i * 2 for i in (0, 1, 2)); return q[t.ipoint[0] % 3]; }\nTask * GPU;\n",
            "r = (0, 1);\ndef f(Task t) { if (t.ipoint[0] > 0) { return tuple(i for i in r); } return (1,); }\nTask * GPU;\n",
        ];
        for (src, fails) in failing
            .iter()
            .map(|s| (s, true))
            .chain(passing.iter().map(|s| (s, false)))
        {
            let a = Analysis::new(src);
            assert!(!for_tokens(&a.parsed).is_empty(), "{src}");
            let found = resolve(&a, &t)
                .eval_error
                .filter(|(_, m)| m.contains("For-comprehension"));
            assert_eq!(found.is_some(), fails, "{src}");
            let (_, everywhere) = Evaluator::new_partial_shared_hinted(
                Arc::new(parsed_statements(a.program())),
                shape,
                Limits::default(),
                Comprehensions::Anywhere,
            );
            let everywhere = everywhere.filter(|e| e.message.contains("For-comprehension"));
            assert_eq!(
                found.map(|(span, _)| span),
                everywhere.map(|e| e.span),
                "{src}"
            );
        }
    }

    /// The merge as it was written first: a linear scan of the list for
    /// each resolution diagnostic. The reference for the span-keyed merge.
    fn merged_by_linear_scan<'a>(a: &'a Analysis, r: &'a Resolution) -> Vec<&'a Diagnostic> {
        let mut all: Vec<&Diagnostic> = a.diagnostics();
        for diag in r.decisions.iter().flat_map(|d| &d.diagnostics) {
            if !all.contains(&diag) {
                all.push(diag);
            }
        }
        all.sort_by_key(|d| (d.span.start(), d.span.end()));
        all
    }

    /// The resolution as it was made before the top level's evaluator and
    /// the launch placer shared one copy of the program: each evaluated a
    /// copy of its own.
    fn resolved_with_separate_copies(a: &Analysis, target: &Target) -> Resolution {
        let mut out = Resolution::default();
        let (machine, shape) = (
            target.machine.as_deref().unwrap(),
            target.shape.as_ref().unwrap(),
        );
        let limits = Limits {
            max_steps: TOP_LEVEL_STEPS,
            ..Limits::default()
        };
        let (ev, err) = Evaluator::new_partial_owned(parsed_statements(a.program()), shape, limits);
        out.globals = globals_of(&ev);
        out.eval_error = err.map(|e| (e.span, e.message));
        let app = target.app.as_deref().unwrap();
        let options = ResolveOptions {
            naming: None,
            fixes: true,
            memo: None,
        };
        let (parsed, text) = (&a.parsed, a.text.as_str());
        out.decisions = Some(match EvalPlacer::new(&parsed.program, machine) {
            Ok(mut p) => resolve_parsed_with(parsed, text, app, machine, &mut p, options),
            Err(_) => resolve_parsed_with(parsed, text, app, machine, &mut NoPlacer, options),
        });
        out
    }

    /// The public corpus's mapper files, sorted.
    fn corpus_mappers() -> Vec<std::path::PathBuf> {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/public");
        let mut files: Vec<_> = std::fs::read_dir(&corpus)
            .expect("the shared corpus beside the checkout")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "mapper"))
            .collect();
        files.sort();
        files
    }

    #[test]
    fn sharing_the_program_between_evaluator_and_placer_changes_no_resolution() {
        let files = corpus_mappers();
        let mut placed = 0;
        for app in ["circuit", "cannon"] {
            let t = target(Some(app), Some("p100x4"));
            for path in files.iter().take(30) {
                let mut text = std::fs::read_to_string(path).unwrap();
                // (A statement that does not parse, which both leave out.)
                text.push_str("\nTask foo GPU\n");
                let a = Analysis::new(&text);
                let shared = resolve(&a, &t);
                let separate = resolved_with_separate_copies(&a, &t);
                let json = |r: &Resolution| serde_json::to_string(&r.decisions).unwrap();
                assert_eq!(json(&shared), json(&separate), "{app} {}", path.display());
                assert_eq!(shared.globals, separate.globals, "{}", path.display());
                assert_eq!(shared.eval_error, separate.eval_error, "{}", path.display());
                placed += usize::from(json(&shared).contains("\"proc\""));
            }
        }
        assert!(placed > 0);
    }

    #[test]
    fn merging_drops_exactly_the_duplicates_a_linear_scan_drops() {
        let files = corpus_mappers();
        let t = target(Some("circuit"), Some("p100x4"));
        let mut merged_with_resolution = 0;
        for path in files.iter().take(40) {
            let text = std::fs::read_to_string(path).unwrap();
            let a = Analysis::new(&text);
            let mut r = resolve(&a, &t);
            // Duplicates to drop: a copy of an analysis diagnostic, and a
            // resolution diagnostic listed twice.
            if let Some(d) = r.decisions.as_mut() {
                if let Some(first) = a.diagnostics().first() {
                    d.diagnostics.push((*first).clone());
                }
                if let Some(own) = d.diagnostics.first().cloned() {
                    d.diagnostics.push(own);
                }
                // (In any order: every other file's list reversed.)
                if merged_with_resolution % 2 == 1 {
                    d.diagnostics.reverse();
                }
                merged_with_resolution += usize::from(!d.diagnostics.is_empty());
            }
            let fast = merged_diagnostic_refs(&a, Some(&r));
            let slow = merged_by_linear_scan(&a, &r);
            assert_eq!(fast, slow, "{}", path.display());
        }
        assert!(merged_with_resolution > 10, "{merged_with_resolution}");
    }

    #[test]
    fn an_evicted_resolution_is_computed_again_and_a_held_one_is_not() {
        let t = Arc::new(target(None, Some("p100x4")));
        let a = Analysis::new("m = Machine(GPU);\n");
        let computed = std::sync::atomic::AtomicUsize::new(0);
        let compute = || {
            computed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            resolve(&a, &t)
        };
        let first = ResolutionSlot::default();
        assert!(first.get_if_resolved(&t, compute).is_none());
        assert!(!first.ready(&t), "not made yet");
        let r = first.get_or_resolve(&t, compute);
        assert_eq!(computed.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(first.ready(&t), "made and held");
        let other_target = Arc::new(target(None, Some("p100x4")));
        assert!(!first.ready(&other_target), "made against another target");
        let during = ResolutionSlot::default();
        during.get_or_resolve(&t, || {
            assert!(!during.ready(&t), "being made");
            resolve(&a, &t)
        });
        assert!(first.get_if_resolved(&t, compute).is_some());
        assert_eq!(computed.load(std::sync::atomic::Ordering::SeqCst), 1);
        drop(r);
        // More recently used resolutions push it out; asked again, it is
        // recomputed (and equal: resolution is pure).
        let others: Vec<ResolutionSlot> = (0..KEPT_RESOLUTIONS)
            .map(|_| ResolutionSlot::default())
            .collect();
        for o in &others {
            o.get_or_resolve(&t, || resolve(&a, &t));
        }
        assert!(
            !first.ready(&t),
            "evicted: reading it would compute it again"
        );
        let again = first.get_if_resolved(&t, compute).expect("computed before");
        assert_eq!(computed.load(std::sync::atomic::Ordering::SeqCst), 2);
        assert_eq!(again.globals, resolve(&a, &t).globals);
    }
}
