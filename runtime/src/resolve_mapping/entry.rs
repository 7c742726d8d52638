//! The public entry points and their options: [`resolve_mapping`],
//! [`resolve_mapping_with`], [`resolve_parsed_with`], [`ResolveOptions`]
//! and [`RegionNaming`].

use mapwright_grammar::{Analysis, Parsed};

use crate::app::App;
use crate::decisions::Decisions;
use crate::machine::Machine;

use super::memo::ResolveMemo;
use super::placer::{top_level_failure, EvalPlacer, LaunchPlacer, NoPlacer};
use super::resolver::Resolver;

/// How the application's run names region arguments for the DSL mapper.
///
/// The reference matches `Region`/`Layout`/`CollectMemory` statements
/// against the requirement's semantic names only when the program runs with
/// `-tm:use_semantic_name`, and against its 0-based index otherwise
/// (`dsl_default_policy_select_target_memory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionNaming {
    /// Semantic names only (`-tm:use_semantic_name`).
    Semantic,
    /// Argument indices only (the reference's default).
    Index,
    /// Unknown: accept both, so nothing is reported as unmatchable.
    Both,
}

impl RegionNaming {
    /// What the application's recorded run flags say. Descriptions without
    /// flags (imported or hand-written) give [`RegionNaming::Both`].
    pub fn of_app(app: &App) -> RegionNaming {
        let flags = &app.run_flags;
        if flags.trim().is_empty() {
            return RegionNaming::Both;
        }
        // The built-in descriptions spell out the absence ("no
        // -tm:use_semantic_name"), so look for a positive mention.
        let positive = flags.match_indices("-tm:use_semantic_name").any(|(i, _)| {
            let before = flags[..i].trim_end();
            !before.ends_with("no") && !before.ends_with("without")
        });
        if positive {
            RegionNaming::Semantic
        } else {
            RegionNaming::Index
        }
    }

    /// The region field a statement needs to name argument `region` (a
    /// semantic name) of `task` in this application's runs: the argument
    /// index when the run matches by index, else the name.
    pub fn field(app: &App, task: &str, region: &str) -> String {
        if RegionNaming::of_app(app) == RegionNaming::Index {
            let index = app.task(task).and_then(|t| {
                t.regions
                    .iter()
                    .find(|r| {
                        r.name == region
                            || r.aliases.iter().any(|a| a == region)
                            || r.launches.iter().flatten().any(|n| n == region)
                    })
                    .map(|r| r.index)
            });
            if let Some(i) = index {
                return i.to_string();
            }
        }
        region.to_string()
    }
}

/// Options of [`resolve_mapping_with`].
#[derive(Debug, Clone, Copy)]
pub struct ResolveOptions<'m> {
    /// How region arguments are matched; `None`: [`RegionNaming::of_app`].
    pub naming: Option<RegionNaming>,
    /// Compute quick fixes (each candidate fix is verified by resolving the
    /// edited text again, so this is the expensive part).
    pub fixes: bool,
    /// What the last resolution against the same application left for
    /// this one (see [`ResolveMemo`]): the caller keeps it; `None` starts
    /// from nothing.
    pub memo: Option<&'m ResolveMemo>,
}

impl Default for ResolveOptions<'_> {
    fn default() -> Self {
        ResolveOptions {
            naming: None,
            fixes: true,
            memo: None,
        }
    }
}

/// Resolves `analysis` (of `source`) against `app` on `machine`: every
/// decision, with the problems found on the responsible statements and the
/// first fatal failure a real run would print. Launch points are placed by
/// the built-in placer. Never panics.
pub fn resolve_mapping(
    analysis: &Analysis,
    source: &str,
    app: &App,
    machine: &Machine,
) -> Decisions {
    let ranks = app.ranks_per_node.on(machine);
    match EvalPlacer::with_ranks(&analysis.parsed.program, machine, ranks) {
        Ok(mut placer) => resolve_mapping_with(
            analysis,
            source,
            app,
            machine,
            &mut placer,
            ResolveOptions::default(),
        ),
        Err(err) => {
            // The top level aborts: no task runs, so no point is placed.
            let mut d = resolve_mapping_with(
                analysis,
                source,
                app,
                machine,
                &mut NoPlacer,
                ResolveOptions::default(),
            );
            if d.fatal.is_none() {
                d.fatal = Some(top_level_failure(&err));
            }
            d
        }
    }
}

/// [`resolve_mapping`] with an explicit launch placer and options.
pub fn resolve_mapping_with(
    analysis: &Analysis,
    source: &str,
    app: &App,
    machine: &Machine,
    placer: &mut dyn LaunchPlacer,
    options: ResolveOptions,
) -> Decisions {
    resolve_parsed_with(&analysis.parsed, source, app, machine, placer, options)
}

/// [`resolve_mapping_with`] from the parse alone: resolution reads no
/// result of the checker, so a caller that keeps the parse apart from the
/// check (the language server) need not assemble an [`Analysis`].
pub fn resolve_parsed_with(
    parsed: &Parsed,
    source: &str,
    app: &App,
    machine: &Machine,
    placer: &mut dyn LaunchPlacer,
    options: ResolveOptions,
) -> Decisions {
    // The problem as it runs on this machine (the matmuls grow with it).
    let scaled = app.on_machine(machine);
    let app: &App = &scaled;
    let naming = options.naming.unwrap_or_else(|| RegionNaming::of_app(app));
    let mut r = Resolver::new(parsed, source, app, machine, naming, options.fixes);
    if let Some(memo) = options.memo {
        r.memo = Some(memo);
        r.diags.reserve(memo.last_diagnostics());
    }
    r.run(Some(placer));
    let decisions = r.finish();
    if let Some(memo) = options.memo {
        memo.set_last_diagnostics(decisions.diagnostics.len());
    }
    decisions
}
