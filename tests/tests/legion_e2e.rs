//! Real Legion end to end: mapwright's Legion mapper (runtime/legion/mapper)
//! inside the benchmark programs (runtime/legion/apps: circuit, stencil,
//! pennant, cannon, summa, pumma, johnson, cosma), on the Legion runtime from the
//! package registry, CPUs only.
//!
//! - for every program, its expert mapper adapted to the CPUs by the
//!   smallest change runs to completion with its result check passing, and
//!   every decision the run realised (its decision log) equals what
//!   `explain` decides for the host the mapper described;
//! - every expert mapper as written stops where `explain` says the
//!   reference stops on a host without GPUs, except pennant's, which runs
//!   (every point on the first CPU) as `explain` says;
//! - a wrong layout fails with the real message: stencil with `C_order`
//!   (Regent's stride assertion), cannon with `F_order` (BLAS's own
//!   "parameter number  8 had an illegal value");
//! - a mapper with an error stops the program before any task runs, with
//!   mapwright's diagnostic;
//! - `run`, `optimize` and `serve` with `--backend legion`, and the language
//!   server's run command with `runtime = "legion"`.
//!
//! Needs the Legion SDK: `runtime/legion/sdk.sh` (downloads Legion from the
//! package registry) or a Legion build named by `LEGION_DIR`, and a CPU
//! BLAS (Debian's libopenblas-pthread-dev) for the DISTAL programs. Without
//! the SDK (found by `tests/build.rs` when this file is compiled) the tests
//! are marked ignored with that reason, so the summary counts them as not
//! run; with `MAPWRIGHT_REQUIRE_LEGION=1` (set by `.ci/run`, which installs
//! the SDK) a missing SDK fails the build.

mod lsp_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};

use mapwright_grammar::analyze;
use mapwright_runtime::app::App;
use mapwright_runtime::legion::log::{compare_with_decisions, read_log, MappedTask};
use mapwright_runtime::machine::Machine;
use mapwright_runtime::resolve_mapping::{resolve_mapping, RegionNaming};
use serde_json::{json, Value};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The built programs and Legion's library path.
struct Built {
    dir: PathBuf,
    library_path: String,
}

/// Builds the mapper and the programs once (runtime/legion/build.sh), or
/// says why the tests are skipped.
fn built() -> Option<&'static Built> {
    static BUILT: OnceLock<Option<Built>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // The stamp sdk.sh leaves, with the version it installs (found
            // by build.rs, which also marks these tests ignored without it).
            let stamp = Path::new(env!("MAPWRIGHT_LEGION_SDK_STAMP"));
            let have = std::env::var_os("LEGION_DIR").is_some() || stamp.exists();
            if !have {
                let required = std::env::var("MAPWRIGHT_REQUIRE_LEGION").is_ok_and(|v| v == "1");
                assert!(
                    !required,
                    "MAPWRIGHT_REQUIRE_LEGION=1 but the Legion SDK is not installed \
                     (run runtime/legion/sdk.sh)"
                );
                eprintln!(
                    "SKIPPED: the real-Legion tests need the Legion SDK: run runtime/legion/sdk.sh \
                     (downloads Legion from the package registry) or set LEGION_DIR to your own \
                     Legion build; set MAPWRIGHT_REQUIRE_LEGION=1 to make this a failure"
                );
                return None;
            }
            // The backend's own locator: runtime/legion/build.sh (which
            // installs the SDK on first use) and sdk.sh's library path.
            let config = mapwright_runtime::backend::legion::LegionConfig::locate(4, 0)
                .unwrap_or_else(|e| panic!("{e}"));
            let (dir, library_path) = (config.build, config.library_path);
            Some(Built { dir, library_path })
        })
        .as_ref()
}

/// Real runs take the machine's two cores: one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A fresh folder in the temporary directory, removed when the test that
/// made it ends (passed or failed).
fn scratch(name: &str) -> lsp_support::TempDir {
    lsp_support::temp_dir(&format!("legion-{name}"))
}

/// The expert mapper of `app` (runtime/apps/experts), as written.
fn expert_of(app: &str) -> String {
    let file = App::builtin(app).unwrap().expert_mapper;
    std::fs::read_to_string(root().join("runtime/apps/experts").join(file)).unwrap()
}

/// `text` with `from` replaced by `to`; `from` must occur.
fn changed(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "the expert no longer contains {from:?}"
    );
    text.replace(from, to)
}

/// The expert circuit mapper (runtime/apps/experts), as written.
fn expert() -> String {
    expert_of("circuit")
}

/// The expert with its GPU placement function made to use the CPUs (the
/// only change): what the expert does on a host without GPUs once the
/// function no longer names a GPU machine.
fn expert_on_cpus() -> String {
    changed(
        &expert(),
        "return mgpu[task.ipoint[0] / mgpu.size[1], task.ipoint[0] % mgpu.size[1]];",
        "return mcpu[task.ipoint[0] / mcpu.size[1], task.ipoint[0] % mcpu.size[1]];",
    )
}

/// Runs `app`'s program with `mapper` on 4 CPU processors (regions named
/// as the application's description says), plus `extra` flags; returns the
/// output, the decision log and the machine the mapper described.
fn run_app(
    b: &Built,
    dir: &Path,
    app: &str,
    mapper: &str,
    extra: &[&str],
) -> (Output, String, Option<Machine>) {
    let mapper_path = dir.join(format!("{app}.mapper"));
    std::fs::write(&mapper_path, mapper).unwrap();
    let log = dir.join("decisions.jsonl");
    let machine = dir.join("machine.json");
    let _ = std::fs::remove_file(&log);
    let _ = std::fs::remove_file(&machine);
    let mut command = Command::new(b.dir.join("bin").join(app));
    command.args(["-ll:cpu", "4", "-ll:util", "1", "-ll:gpu", "0"]);
    if RegionNaming::of_app(&App::builtin(app).unwrap()) != RegionNaming::Index {
        command.arg("-tm:use_semantic_name");
    }
    let out = command
        .args(extra)
        .arg("-mapping")
        .arg(&mapper_path)
        .arg("-mapwright:log")
        .arg(&log)
        .arg("-mapwright:machine")
        .arg(&machine)
        .env("LD_LIBRARY_PATH", &b.library_path)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot start {app}: {e}"));
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    (out, log, Machine::load(&machine).ok())
}

/// Runs circuit with `mapper` on 4 CPU processors.
fn run_circuit(b: &Built, dir: &Path, mapper: &str) -> (Output, String, Option<Machine>) {
    run_app(b, dir, "circuit", mapper, &[])
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `explain`'s decisions for `app` with `mapper` on `machine`.
fn explain_app(
    app: &App,
    mapper: &str,
    machine: &Machine,
) -> mapwright_runtime::decisions::Decisions {
    resolve_mapping(&analyze(mapper), mapper, app, machine)
}

/// `explain`'s decisions for circuit with `mapper` on `machine`.
fn explain(mapper: &str, machine: &Machine) -> mapwright_runtime::decisions::Decisions {
    explain_app(&App::builtin("circuit").unwrap(), mapper, machine)
}

/// Runs `app` with `mapper` to completion and checks: the program's result
/// check passed (`passed` printed), the host is one node with 4 CPUs, every
/// task of the application and every launch point of its index launches
/// was mapped, and every decision equals `explain`'s. Returns the log.
fn assert_runs_as_explained(
    b: &Built,
    description: &App,
    mapper: &str,
    extra: &[&str],
    passed: &str,
) -> Vec<MappedTask> {
    let app = description.name.as_str();
    let dir = scratch(&format!("{app}-runs"));
    let (out, log, machine) = run_app(b, &dir, app, mapper, extra);
    let all = text(&out);
    assert!(out.status.success(), "{app} failed:\n{all}");
    assert!(all.contains(passed), "{all}");
    let machine = machine.expect("the mapper describes the host");
    assert_eq!(machine.nodes, 1);
    assert_eq!(
        machine.procs_per_node(mapwright_runtime::machine::ProcKind::Cpu),
        4
    );
    let log: Vec<MappedTask> = read_log(&log).unwrap();
    let decisions = explain_app(description, mapper, &machine);
    assert!(decisions.fatal.is_none(), "{:?}", decisions.fatal);
    for t in &description.tasks {
        let points: std::collections::BTreeSet<&Vec<i64>> = log
            .iter()
            .filter(|m| m.task == t.name)
            .map(|m| &m.point)
            .collect();
        assert!(!points.is_empty(), "the run never mapped {}", t.name);
        if !t.domain.is_empty() {
            assert_eq!(points.len() as u64, t.points(), "{}: {points:?}", t.name);
        }
    }
    let differences = compare_with_decisions(&log, &decisions);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    log
}

/// Runs `app` with `mapper`, which `explain` says the reference stops on
/// for this host, and checks that the run stops with that message, that
/// `not_mapped` never ran and that what was mapped before the stop is what
/// `explain` says. Returns the log.
fn assert_stops_as_explained(
    b: &Built,
    description: &App,
    mapper: &str,
    extra: &[&str],
    not_mapped: &str,
) -> Vec<MappedTask> {
    let app = description.name.as_str();
    let dir = scratch(&format!("{app}-stops"));
    let (out, log, machine) = run_app(b, &dir, app, mapper, extra);
    let all = text(&out);
    assert!(
        !out.status.success(),
        "the expert ran on a host without GPUs:\n{all}"
    );
    let machine = machine.expect("the mapper describes the host");
    let decisions = explain_app(description, mapper, &machine);
    let fatal = decisions.fatal.clone().expect("explain predicts the stop");
    assert!(
        all.contains(&fatal.raw_output),
        "explain says {:?}; the run printed:\n{all}",
        fatal.raw_output
    );
    assert!(!all.contains("ELAPSED TIME"), "{all}");
    let log = read_log(&log).unwrap();
    // What ran before the stop (Legion maps ahead, so how far it got
    // varies) is what explain says; the stopping task never ran.
    assert!(!log.iter().any(|m| m.task == not_mapped), "{log:?}");
    let differences = compare_with_decisions(&log, &decisions);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    log
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn the_expert_mapper_runs_and_its_decision_log_equals_explain() {
    let Some(b) = built() else { return };
    let _one = serial();
    let log = assert_runs_as_explained(
        b,
        &App::builtin("circuit").unwrap(),
        &expert_on_cpus(),
        &[],
        "CHECK PASSED",
    );
    let physical = log
        .iter()
        .flat_map(|m| &m.regions)
        .filter(|r| r.instance == "physical")
        .count();
    assert!(physical > 100, "{physical} physical instances");
    // The index launches went where linearblock and block_shard_cpu say:
    // calculate_new_currents point p on CPU p, init_piece all on CPU 0.
    let on = |task: &str, p: i64| {
        log.iter()
            .find(|m| m.task == task && m.point == vec![p])
            .map(|m| m.proc)
    };
    assert_eq!(on("calculate_new_currents", 3), Some(3));
    assert_eq!(on("init_piece", 3), Some(0));
}

/// A single task that no `SingleTaskMap` places (circuit's `init_nodes`
/// and `init_wires`, launched by `init_piece`) gets every CPU of the node
/// as targets, as the reference gives it DefaultMapper's: it starts on the
/// first CPU, as `explain` says, and runs on another one when that one is
/// busy. Where a statement placed a task it ran there, on that one target.
/// Realm's measurements (the log's `ran` lines) say where each ran.
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn an_unplaced_single_task_runs_on_another_cpu_when_the_first_is_busy() {
    let Some(b) = built() else { return };
    let _one = serial();
    let dir = scratch("unplaced");
    let (out, log_text, _) = run_circuit(b, &dir, &expert_on_cpus());
    assert!(out.status.success(), "{}", text(&out));
    let mapped = read_log(&log_text).unwrap();
    let ran = mapwright_runtime::legion::log::read_ran(&log_text).unwrap();
    let ran_on = |uid: u64| ran.iter().find(|r| r.uid == uid).map(|r| r.proc);
    let unplaced: Vec<&MappedTask> = mapped
        .iter()
        .filter(|m| m.task == "init_nodes" || m.task == "init_wires")
        .collect();
    assert!(unplaced.len() >= 8, "{unplaced:?}");
    for m in &unplaced {
        assert_eq!((m.targets, m.proc), (4, 0), "{m:?}");
    }
    let elsewhere = unplaced
        .iter()
        .filter(|m| ran_on(m.uid).is_some_and(|p| p != 0))
        .count();
    assert!(
        elsewhere > 0,
        "every unplaced single task waited for CPU 0: {:?}",
        unplaced.iter().map(|m| ran_on(m.uid)).collect::<Vec<_>>()
    );
    // Placed by linearblock: one target, and it ran there.
    let placed: Vec<&MappedTask> = mapped
        .iter()
        .filter(|m| m.task == "calculate_new_currents")
        .collect();
    assert!(!placed.is_empty());
    for m in placed {
        assert_eq!(m.targets, 1, "{m:?}");
        assert_eq!(ran_on(m.uid), Some(m.proc), "{m:?}");
    }
    // Every mapped task was measured, within the run.
    assert_eq!(ran.len(), mapped.len(), "one ran line per mapped task");
    assert!(ran
        .iter()
        .all(|r| r.ready_ns <= r.start_ns && r.start_ns <= r.end_ns));
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn the_expert_as_written_stops_where_explain_says_the_reference_stops() {
    let Some(b) = built() else { return };
    let _one = serial();
    let log = assert_stops_as_explained(
        b,
        &App::builtin("circuit").unwrap(),
        &expert(),
        &[],
        "calculate_new_currents",
    );
    assert!(log.iter().any(|m| m.task == "init_piece"), "{log:?}");
}

/// stencil's expert with its GPU machine made the CPUs (the only change):
/// linearblock then spreads the tiles over the CPUs, and block_shard_cpu
/// (which divides by the GPU machine's size) keeps check and print_time on
/// the first CPU.
fn stencil_expert_on_cpus() -> String {
    changed(
        &expert_of("stencil"),
        "mgpu = Machine(GPU);",
        "mgpu = Machine(CPU);",
    )
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn stencil_runs_with_its_expert_on_cpus_as_explain_says() {
    let Some(b) = built() else { return };
    let _one = serial();
    let log = assert_runs_as_explained(
        b,
        &App::builtin("stencil").unwrap(),
        &stencil_expert_on_cpus(),
        &[],
        "CHECK PASSED",
    );
    let on = |task: &str, p: i64| {
        log.iter()
            .find(|m| m.task == task && m.point == vec![p])
            .map(|m| m.proc)
    };
    assert_eq!(on("stencil", 3), Some(3));
    assert_eq!(on("increment", 2), Some(2));
    assert_eq!(on("check", 3), Some(0));
    // Every 2-D instance was made SOA F_order, as the expert asks.
    let private = log
        .iter()
        .filter(|m| m.task == "stencil")
        .map(|m| &m.regions[0])
        .collect::<Vec<_>>();
    assert!(!private.is_empty());
    for r in private {
        assert_eq!(r.instance, "physical");
        assert_eq!(r.layout.as_deref(), Some("SOA F_order"));
        assert_eq!(r.layout_holds, Some(true));
    }
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn stencils_expert_as_written_stops_where_explain_says_the_reference_stops() {
    let Some(b) = built() else { return };
    let _one = serial();
    let log = assert_stops_as_explained(
        b,
        &App::builtin("stencil").unwrap(),
        &expert_of("stencil"),
        &["-nx", "200", "-ny", "200"],
        "stencil",
    );
    assert!(
        log.iter().any(|m| m.task == "make_private_partition"),
        "{log:?}"
    );
}

/// pennant's expert with its GPU placement used for the CPUs: `mgpu =
/// Machine(CPU);` and `IndexTaskMap CPU linearcyclic;` in place of
/// `cyclic_shard_cpu` (on a CPU-only host every launch maps to CPUs, so only
/// the expert's `IndexTaskMap CPU` line applies). linearcyclic then puts
/// piece i on CPU i, as the expert puts it on GPU i.
fn pennant_expert_on_cpus() -> String {
    let text = changed(
        &expert_of("pennant"),
        "mgpu = Machine(GPU);",
        "mgpu = Machine(CPU);",
    );
    changed(
        &text,
        "IndexTaskMap CPU cyclic_shard_cpu;",
        "IndexTaskMap CPU linearcyclic;",
    )
}

/// The speed at the shared points that pennant's check line reports,
/// relative to the largest speed: the check covers the exchange through the
/// shared and ghost points only where the flow reached them.
fn pennant_reach(all: &str) -> f64 {
    let line = all
        .lines()
        .find(|l| l.starts_with("CHECK PASSED"))
        .unwrap_or_else(|| panic!("no CHECK PASSED line:\n{all}"));
    let value = line
        .split("speed at the shared points ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok());
    value.unwrap_or_else(|| panic!("{line}"))
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn pennant_runs_with_its_expert_on_cpus_as_explain_says() {
    let Some(b) = built() else { return };
    let _one = serial();
    let description = App::builtin("pennant").unwrap();
    let mapper = pennant_expert_on_cpus();
    let log = assert_runs_as_explained(b, &description, &mapper, &[], "CHECK PASSED");
    // linearcyclic: piece i on CPU i, for the private and the shared launch
    // of a point task alike; single tasks on the first CPU.
    for task in ["adv_pos_full", "sum_point_force", "calc_dt_hydro"] {
        for p in 0..4 {
            let procs: std::collections::BTreeSet<u32> = log
                .iter()
                .filter(|m| m.task == task && m.point == vec![p])
                .map(|m| m.proc)
                .collect();
            assert_eq!(procs, [p as u32].into(), "{task} point {p}");
        }
    }
    // The reductions into the ghost points got reduction instances.
    let ghost = log
        .iter()
        .find(|m| m.task == "sum_point_mass")
        .map(|m| m.regions[2].clone())
        .expect("sum_point_mass was mapped");
    assert_eq!(ghost.instance, "physical");
    assert_eq!(
        ghost.reused,
        Some(false),
        "a reduction never maps onto the region's valid instances"
    );
    // A task reading what an earlier task of its piece wrote maps onto the
    // instance that holds it (no new instance, no copy): calc_char_len
    // reads the zone and side fields calc_volumes wrote, every cycle.
    let reads = |task: &str| -> Vec<Option<bool>> {
        log.iter()
            .filter(|m| m.task == task)
            .flat_map(|m| m.regions.iter().map(|r| r.reused))
            .collect()
    };
    let chars = reads("calc_char_len");
    let reused = chars.iter().filter(|r| **r == Some(true)).count();
    assert!(
        reused > 0,
        "none of calc_char_len's {} arguments reused an instance",
        chars.len()
    );
    let all: Vec<Option<bool>> = log
        .iter()
        .flat_map(|m| m.regions.iter().filter(|r| r.instance == "physical"))
        .map(|r| r.reused)
        .collect();
    assert!(all.contains(&Some(false)), "the first instances are made");
    // The run's output, read as the legion backend reads it, and a check
    // that covered the halo exchange: the flow reached the shared points
    // far above roundoff.
    let dir = scratch("pennant-output");
    let (out, _, _) = run_app(b, &dir, "pennant", &mapper, &[]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let backend = mapwright_runtime::backend::command::CommandBackend::new(
        mapwright_runtime::backend::command::CommandConfig::new(""),
    );
    let (elapsed, _) = backend.parse(&all);
    assert!(elapsed.is_some_and(|t| t > 0.0), "{all}");
    assert!(all.contains("Elapsed time = "), "{all}");
    assert!(pennant_reach(&all) > 1e-7, "{all}");
}

/// Traces replay by default, as under the reference on Legion 25.12 (its
/// DefaultMapper memoizes and automatic tracing is on): pennant's cycles
/// are mapped a few times, then replayed. `-mapwright:no-memoize` turns
/// both off: every cycle is mapped, with the same result and the same
/// decisions.
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn pennant_replays_its_traces_unless_told_not_to_memoize() {
    let Some(b) = built() else { return };
    let _one = serial();
    let description = App::builtin("pennant").unwrap();
    let mapper = pennant_expert_on_cpus();
    let replayed = assert_runs_as_explained(b, &description, &mapper, &[], "CHECK PASSED");
    let every = assert_runs_as_explained(
        b,
        &description,
        &mapper,
        &["-mapwright:no-memoize"],
        "CHECK PASSED",
    );
    assert!(
        every.len() > 2 * replayed.len(),
        "mapped {} tasks with traces replayed, {} without",
        replayed.len(),
        every.len()
    );
}

/// A reducing task gets a reduction instance an earlier task has finished
/// with, as `DefaultMapper` takes its cached mapping's again, but never
/// one another task holds: two tasks reducing into one instance at once
/// would both accumulate into it (DISTAL's `dgemm` writes it directly).
/// pennant without trace replay, so that every cycle is mapped: each
/// reduction instance's tasks ran one after another.
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn reduction_instances_are_reused_but_never_by_two_running_tasks() {
    let Some(b) = built() else { return };
    let _one = serial();
    let dir = scratch("pennant-reductions");
    let (out, log, _) = run_app(
        b,
        &dir,
        "pennant",
        &pennant_expert_on_cpus(),
        &["-mapwright:no-memoize"],
    );
    let all = text(&out);
    assert!(
        out.status.success() && all.contains("CHECK PASSED"),
        "{all}"
    );
    let mapped = read_log(&log).unwrap();
    let ran: std::collections::HashMap<u64, (i64, i64)> =
        mapwright_runtime::legion::log::read_ran(&log)
            .unwrap()
            .into_iter()
            .map(|r| (r.uid, (r.start_ns, r.end_ns)))
            .collect();
    // Per reduction instance, when each task that reduced into it ran.
    let description = App::builtin("pennant").unwrap();
    let reduces = |task: &str, index: u32| {
        description.tasks.iter().any(|t| {
            t.name == task
                && t.regions
                    .get(index as usize)
                    .is_some_and(|r| r.privilege == mapwright_runtime::app::Privilege::Reduce)
        })
    };
    let mut users: std::collections::BTreeMap<u64, Vec<(i64, i64, String)>> = Default::default();
    for m in &mapped {
        for r in m.regions.iter().filter(|r| reduces(&m.task, r.index)) {
            let id = r
                .instance_id
                .expect("a logged physical instance has its id");
            let (start, end) = ran[&m.uid];
            users
                .entry(id)
                .or_default()
                .push((start, end, m.task.clone()));
        }
    }
    let reducing: usize = users.values().map(Vec::len).sum();
    assert!(reducing > 100, "{reducing} reducing arguments mapped");
    assert!(
        users.len() * 4 < reducing,
        "{} reduction instances for {reducing} reducing arguments: not reused",
        users.len()
    );
    for (id, mut runs) in users {
        runs.sort();
        for pair in runs.windows(2) {
            assert!(
                pair[0].1 <= pair[1].0,
                "instance {id:x}: {} ran {}-{} ns and {} {}-{} ns",
                pair[0].2,
                pair[0].0,
                pair[0].1,
                pair[1].2,
                pair[1].0,
                pair[1].1
            );
        }
    }
}

/// pennant's expert as written does not stop on a host without GPUs: its
/// `Task * GPU,CPU` falls back to the CPUs, its ZCMEM statements name GPUs
/// only, and `IndexTaskMap CPU cyclic_shard_cpu` puts every point on the
/// node's first CPU (`mgpu.size[0]` is the node count).
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn pennants_expert_as_written_runs_on_the_first_cpu_as_explain_says() {
    let Some(b) = built() else { return };
    let _one = serial();
    let log = assert_runs_as_explained(
        b,
        &App::builtin("pennant").unwrap(),
        &expert_of("pennant"),
        &["-cstop", "10", "-prune", "1"],
        "CHECK PASSED",
    );
    let index: Vec<&MappedTask> = log.iter().filter(|m| !m.point.is_empty()).collect();
    assert!(index.len() > 500, "{}", index.len());
    assert!(index.iter().all(|m| m.proc == 0), "{index:?}");
}

/// Runs `description`'s program with `mapper`, whose layout the program's
/// kernel cannot use, and checks: the run fails with `message` (and the
/// classification `kind`), the instances of `task`'s argument `arg` were
/// made with `layout` as asked, and what was mapped is what `explain` says.
/// Returns the output.
fn assert_layout_fails(
    b: &Built,
    description: &App,
    mapper: &str,
    extra: &[&str],
    (task, arg, layout): (&str, usize, &str),
    message: &str,
    kind: &str,
) -> String {
    let app = description.name.as_str();
    let dir = scratch(&format!("{app}-layout"));
    let (out, log, machine) = run_app(b, &dir, app, mapper, extra);
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(all.contains(message), "{all}");
    assert_eq!(
        mapwright_runtime::backend::classify_output(&all),
        Some(kind)
    );
    let log = read_log(&log).unwrap();
    let mapped = log
        .iter()
        .find(|m| m.task == task)
        .unwrap_or_else(|| panic!("{task} was not mapped"));
    assert_eq!(mapped.regions[arg].layout.as_deref(), Some(layout));
    assert_eq!(mapped.regions[arg].layout_holds, Some(true));
    let machine = machine.expect("the mapper describes the host");
    let differences = compare_with_decisions(&log, &explain_app(description, mapper, &machine));
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    all
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn stencil_with_a_c_order_layout_fails_with_regents_stride_message() {
    let Some(b) = built() else { return };
    let _one = serial();
    let mapper = changed(&stencil_expert_on_cpus(), "SOA F_order", "SOA C_order");
    let all = assert_layout_fails(
        b,
        &App::builtin("stencil").unwrap(),
        &mapper,
        &["-nx", "200", "-ny", "200"],
        ("stencil", 0, "SOA C_order"),
        "assertion failed: stride does not match expected value",
        "stride_mismatch",
    );
    assert!(!all.contains("ELAPSED TIME"), "{all}");
}

/// A DISTAL matrix multiplication as its CPU program builds it: every task
/// has a CPU variant only (the DISTAL CPU build's tasks; this Realm has no
/// OpenMP processors), and init_cublas, which only the cuBLAS build has,
/// is not launched. `explain` on this description is what the program's
/// mapper sees.
fn distal_as_built(app: &str) -> App {
    let mut description = App::builtin(app).unwrap();
    description.tasks.retain(|t| t.name != "init_cublas");
    for t in &mut description.tasks {
        t.variants = vec![mapwright_runtime::machine::ProcKind::Cpu];
    }
    description
}

/// A DISTAL expert with its GPU machine (and OpenMP machine, where it has
/// one) made the CPUs: the only change, `Machine(GPU)` and `Machine(OMP)`
/// become `Machine(CPU)`.
fn distal_expert_on_cpus(app: &str) -> String {
    let text = changed(
        &expert_of(app),
        "m_2d = Machine(GPU);",
        "m_2d = Machine(CPU);",
    );
    text.replace("m_omp_2d = Machine(OMP);", "m_omp_2d = Machine(CPU);")
}

/// The DISTAL GEMM `app`: its expert as written stops on this host where
/// explain says (the placement function of `stops_at`, its first mapped
/// index launch, returns a GPU), and on the CPUs it runs to completion,
/// exact, with DISTAL's output and every decision as explain says.
/// Returns the log of that run.
fn distal_gemm_runs_as_explained(b: &Built, app: &str, stops_at: &str) -> Vec<MappedTask> {
    let description = distal_as_built(app);
    assert_stops_as_explained(b, &description, &expert_of(app), &["-i", "1"], stops_at);
    let log = assert_runs_as_explained(
        b,
        &description,
        &distal_expert_on_cpus(app),
        &["-i", "3"],
        "CHECK PASSED",
    );
    // DISTAL's output, read as the command backend reads it.
    let dir = scratch(&format!("{app}-output"));
    let (out, _, _) = run_app(b, &dir, app, &distal_expert_on_cpus(app), &["-i", "3"]);
    let all = text(&out);
    assert_eq!(all.matches("Execution time: ").count(), 3, "{all}");
    assert!(
        all.contains("On 1 nodes achieved GFLOPS per node: "),
        "{all}"
    );
    log
}

/// The 2-D family (cannon, summa, pumma): task_4 runs where its parent
/// task_5 point ran (same_point), the placement tasks where auto2d puts
/// them (tile (i, j) on CPU i + 2j).
fn distal_2d_runs_as_explained(app: &str) {
    let Some(b) = built() else { return };
    let _one = serial();
    let log = distal_gemm_runs_as_explained(b, app, "taco_fill");
    for m in log.iter().filter(|m| m.task == "task_4") {
        let parent = log
            .iter()
            .find(|p| p.task == "task_5" && p.point == m.point)
            .expect("task_4's parent point was mapped");
        assert_eq!(m.proc, parent.proc, "{m:?}");
    }
    let on = |task: &str, p: [i64; 2]| {
        log.iter()
            .find(|m| m.task == task && m.point == p)
            .map(|m| m.proc)
    };
    assert_eq!(on("task_1", [1, 0]), Some(1));
    assert_eq!(on("task_1", [0, 1]), Some(2));
}

/// The 3-D family (johnson, cosma): on one node autoblock and
/// placement_shard put every point on the node's first processor (the
/// experts were written for one rank per GPU), and task_4's A argument is
/// a reduction.
fn distal_3d_runs_as_explained(app: &str, points: usize) {
    let Some(b) = built() else { return };
    let _one = serial();
    let log = distal_gemm_runs_as_explained(b, app, "task_1");
    let compute: Vec<&MappedTask> = log.iter().filter(|m| m.task == "task_4").collect();
    let distinct: std::collections::BTreeSet<&Vec<i64>> =
        compute.iter().map(|m| &m.point).collect();
    assert_eq!(distinct.len(), points);
    assert!(compute.iter().all(|m| m.proc == 0), "{compute:?}");
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn cannon_runs_with_its_expert_as_explain_says() {
    distal_2d_runs_as_explained("cannon");
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn summa_runs_with_its_expert_as_explain_says() {
    distal_2d_runs_as_explained("summa");
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn pumma_runs_with_its_expert_as_explain_says() {
    distal_2d_runs_as_explained("pumma");
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn johnson_runs_with_its_expert_as_explain_says() {
    distal_3d_runs_as_explained("johnson", 8);
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn cosma_runs_with_its_expert_as_explain_says() {
    distal_3d_runs_as_explained("cosma", 4);
}

/// solomonik (2.5-D, rpoc 2, c 1, rpoc3 2): the expert as written stops
/// at the first placement (auto_cyclic_3d returns a GPU); on the CPUs each
/// task_4 runs where its task_5 point ran (same_point), two per point, and
/// task_5, an inner task, maps its reduction of A virtually, as Legion
/// 25.12's DefaultMapper does (a physical reduction instance there lost
/// contributions: docs/legion.md).
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn solomonik_runs_with_its_expert_as_explain_says() {
    let Some(b) = built() else { return };
    let _one = serial();
    let log = distal_gemm_runs_as_explained(b, "solomonik", "task_1");
    let parents: Vec<&MappedTask> = log.iter().filter(|m| m.task == "task_5").collect();
    assert!(!parents.is_empty());
    for p in &parents {
        assert_eq!(p.regions[0].instance, "virtual", "{p:?}");
    }
    let leaves: Vec<&MappedTask> = log.iter().filter(|m| m.task == "task_4").collect();
    // Four task_5 points, two k panels each, in four iterations (one warm-up).
    assert_eq!(leaves.len(), 4 * 2 * 4);
    for m in leaves {
        let parent = parents
            .iter()
            .find(|p| p.point == m.point)
            .expect("task_4's parent point was mapped");
        assert_eq!(m.proc, parent.proc, "{m:?}");
        assert_eq!(m.regions[0].instance, "physical", "{m:?}");
    }
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn cannon_with_an_f_order_layout_gets_blass_own_error() {
    let Some(b) = built() else { return };
    let _one = serial();
    let mapper = changed(
        &distal_expert_on_cpus("cannon"),
        "SOA C_order",
        "SOA F_order",
    );
    // The BLAS routine's own check of its arguments (xerbla), then the
    // result check that finds A never computed.
    let all = assert_layout_fails(
        b,
        &distal_as_built("cannon"),
        &mapper,
        &["-i", "1"],
        ("task_4", 2, "SOA F_order"),
        " ** On entry to DGEMM  parameter number  8 had an illegal value",
        "cublas_illegal_parameter",
    );
    assert!(all.contains("CHECK FAILED"), "{all}");
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn layouts_replication_limits_and_collection_are_realised_as_explain_says() {
    let Some(b) = built() else { return };
    let _one = serial();
    let dir = scratch("statements");
    let mapper = "Task * CPU;
Region * * CPU SYSMEM;
Layout * * * AOS F_order Align==64;
ControlReplicate toplevel;
InstanceLimit init_nodes 1;
InstanceLimit calculate_new_currents 2;
CollectMemory calculate_new_currents *;
";
    let (out, log_text, machine) = run_circuit(b, &dir, mapper);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("CHECK PASSED"), "{all}");
    let log = read_log(&log_text).unwrap();
    // InstanceLimit, as Realm measured it: never more of the task running
    // at once than its limit per launching processor (with memoization on,
    // as by default). calculate_new_currents is launched by the top-level
    // task; each init_nodes by an init_piece point, on the processor that
    // point ran on.
    let ran = mapwright_runtime::legion::log::read_ran(&log_text).unwrap();
    let launcher = |r: &mapwright_runtime::legion::log::RanTask| -> Option<u32> {
        match r.ran.as_str() {
            "init_nodes" => ran
                .iter()
                .find(|p| p.ran == "init_piece" && p.point == r.point)
                .map(|p| p.proc),
            _ => Some(u32::MAX),
        }
    };
    for (task, limit) in [("init_nodes", 1usize), ("calculate_new_currents", 2)] {
        let spans: Vec<(Option<u32>, i64, i64)> = ran
            .iter()
            .filter(|r| r.ran == task)
            .map(|r| (launcher(r), r.start_ns, r.end_ns))
            .collect();
        assert!(spans.len() > limit, "{task}: {spans:?}");
        assert!(spans.iter().all(|s| s.0.is_some()), "{spans:?}");
        for &(from, start, _) in &spans {
            let running = spans
                .iter()
                .filter(|(f, s, e)| *f == from && *s <= start && start < *e)
                .count();
            assert!(running <= limit, "{running} {task} ran at once: {spans:?}");
        }
    }
    let decisions = explain(mapper, &machine.unwrap());
    let differences = compare_with_decisions(&log, &decisions);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    // Legion's instances satisfy the AOS, F_order and alignment asked for.
    let physical: Vec<_> = log
        .iter()
        .flat_map(|m| &m.regions)
        .filter(|r| r.instance == "physical")
        .collect();
    assert!(!physical.is_empty());
    for r in physical {
        assert_eq!(r.layout.as_deref(), Some("AOS F_order Align==64"));
        assert_eq!(r.layout_holds, Some(true));
    }
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn the_wrapper_flag_logs_through_legions_logging_wrapper() {
    let Some(b) = built() else { return };
    let _one = serial();
    let dir = scratch("wrapper");
    let mapper = dir.join("m.mapper");
    std::fs::write(&mapper, "Task * CPU;\n").unwrap();
    let out = Command::new(b.dir.join("bin/circuit"))
        .args([
            "-ll:cpu", "2", "-ll:util", "1", "-ll:gpu", "0", "-steps", "2", "-l", "2",
        ])
        .args(["-wrapper", "-level", "mapper=2", "-mapping"])
        .arg(&mapper)
        .env("LD_LIBRARY_PATH", &b.library_path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("{mapper}: Processors on rank 0"), "{all}");
    assert!(all.contains("CHECK PASSED"), "{all}");
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn a_mapper_with_an_error_stops_the_program_before_any_task() {
    let Some(b) = built() else { return };
    let _one = serial();
    let dir = scratch("error");
    let (out, log, _) = run_circuit(b, &dir, "Task * CPU\nRegion * * CPU SYSMEM;\n");
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("error[E0101]"), "{all}");
    assert!(all.contains("circuit.mapper:1:"), "{all}");
    assert!(all.contains("no task was run"), "{all}");
    assert!(!all.contains("circuit settings"), "a task ran:\n{all}");
    assert!(log.trim().is_empty(), "{log}");
}

/// The deliberately slow start: every launch point on the first CPU.
/// The longest one real run may keep the language server silent (a
/// `mapwright.run`, one optimizer candidate, one of the repeated runs that
/// confirm the gain) on a busy two-core host; about 5 s on an idle one.
const ONE_REAL_RUN: std::time::Duration = std::time::Duration::from_secs(180);

/// The values of the `$/progress` notifications for `token`, up to and
/// with the `end`; each must come within [`ONE_REAL_RUN`] of the last.
fn progress_to_the_end(s: &mut lsp_support::Server, token: &str) -> Vec<Value> {
    s.progress_to_the_end(&json!(token), ONE_REAL_RUN)
        .into_iter()
        .map(|(_, v)| v)
        .collect()
}

/// Where the best candidate ran again against the user's mapper (`medians
/// of 3 runs`), progress showed those runs, not a silence.
fn confirming_runs_were_shown(reports: &[Value], result: &Value) {
    let summary = result["summary"].as_str().unwrap_or_default();
    if summary.contains("medians of") {
        assert!(
            reports.iter().any(|r| r["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("confirming ") && m.contains("/4: "))),
            "{reports:#?}"
        );
    }
}

const SLOW: &str = "# Deliberately slow: every launch point on the first CPU.
Task * CPU;
Region * * CPU SYSMEM;
mcpu = Machine(CPU);
def first_cpu(Task task) {
    return mcpu[0, 0];
}
IndexTaskMap init_piece,init_pointers,calculate_new_currents,distribute_charge,update_voltages,print_summary first_cpu;
";

/// Runs `mapwright ARGS DIR/slow.mapper` (the slow start written there)
/// against the built programs; returns its JSON output.
fn mapwright_on_slow(b: &Built, dir: &Path, args: &[&str]) -> Value {
    let file = dir.join("slow.mapper");
    std::fs::write(&file, SLOW).unwrap();
    let out = mapwright(b).args(args).arg(&file).output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)))
}

fn mapwright(b: &Built) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mapwright-under-test"));
    c.env("MAPWRIGHT_LEGION_BUILD", &b.dir)
        .env("MAPWRIGHT_LEGION_LIBRARY_PATH", &b.library_path)
        .stdin(Stdio::null());
    c
}

/// A user's first `run --backend legion` (no build folder yet; the SDK
/// stays: fetching it again is the network's business): the set-up says
/// what it builds as it goes, the mapper's start-up diagnostics name the
/// user's file rather than the temporary copy the program reads, our
/// program prints no Legion warning, and Realm's start-up noise becomes
/// one line that says what it means.
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn a_first_legion_run_shows_its_set_up_and_names_the_users_file() {
    let Some(b) = built() else { return };
    let _one = serial();
    let dir = scratch("first-run");
    let mapper = dir.join("my.mapper");
    // The expert on CPUs, with an unused variable: a warning at start-up.
    std::fs::write(&mapper, format!("{}unused_here = 3;\n", expert_on_cpus())).unwrap();
    // `mapwright run` as on a fresh clone: no build folder named, so it
    // builds one (only circuit, into the scratch folder).
    let first_run = || {
        Command::new(env!("CARGO_BIN_EXE_mapwright-under-test"))
            .args(["run", "--app", "circuit", "--backend", "legion"])
            .args(["--legion-cpus", "4", "--no-normalize"])
            .arg(&mapper)
            .env_remove("MAPWRIGHT_LEGION_BUILD")
            .env("MAPWRIGHT_LEGION_LIBRARY_PATH", &b.library_path)
            .env("MAPWRIGHT_LEGION_OUT", dir.join("build"))
            .env("MAPWRIGHT_LEGION_APPS", "circuit")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = first_run();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("mapwright: building libmapwright_mapper.so and the programs (circuit)"),
        "{stderr}"
    );
    assert!(stdout.contains("CHECK PASSED"), "{stdout}");
    let named = format!("--> {}:", mapper.display());
    assert!(stdout.contains(&named), "{stdout}");
    assert!(stdout.contains("unused variable `unused_here`"), "{stdout}");
    assert!(!stdout.contains("candidate.mapper"), "{stdout}");
    assert!(!stdout.contains("LEGION WARNING"), "{stdout}");
    assert!(!stdout.contains("cuInit"), "{stdout}");
    assert!(
        stdout.contains("mapwright: no GPU driver: running on 4 CPU processors"),
        "{stdout}"
    );
    // A second run finds everything in place and says nothing of set-up.
    let again = first_run();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(!stderr.contains("mapwright: building"), "{stderr}");
}

/// `bench sim-validate --backend legion`: after the recorded section, the
/// section measured here, with the rates it measured, a row per variant
/// (predicted and measured seconds, the repeats' spread) and the count of
/// orderings that match. The layout dgemm rejects is predicted to fail and
/// fails for real; the expert on CPUs runs both ways.
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn sim_validate_with_the_legion_backend_puts_real_runs_next_to_the_model() {
    let Some(b) = built() else { return };
    let _one = serial();
    let out = mapwright(b)
        .args([
            "bench",
            "sim-validate",
            "--backend",
            "legion",
            "--apps",
            "cannon",
        ])
        .args(["--repeats", "2", "--iterations", "2", "--legion-cpus", "4"])
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("measured dgemm "), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let sections: Vec<&str> = stdout.split("orderings match\n").collect();
    assert_eq!(sections.len(), 3, "{stdout}");
    let real = sections[1];
    let row = |what: &str| {
        let lines: Vec<&str> = real.lines().collect();
        let i = lines
            .iter()
            .position(|l| l.starts_with("real Legion here") && l.ends_with(what))
            .unwrap_or_else(|| panic!("no row {what}: {real}"));
        (lines[i].to_string(), lines[i + 1].trim().to_string())
    };
    let (expert, note) = row("expert on CPUs");
    assert!(
        note.starts_with("baseline; measured: median of 2 runs"),
        "{note}"
    );
    assert_eq!(expert.matches(" s ").count(), 2, "{expert}");
    let (rejected, note) = row("poor: the layout the kernel rejects");
    assert!(rejected.contains(" match "), "{rejected}");
    assert!(
        note.contains("measured: fails (cublas_illegal_parameter)")
            && note.contains("predicted: fails (cublas_illegal_parameter)"),
        "{note}"
    );
    let (one_cpu, _) = row("poor: every point on CPU 0");
    assert!(
        one_cpu.contains("match") || one_cpu.contains("MISMATCH"),
        "{one_cpu}"
    );
    let count = real.lines().last().unwrap();
    let total: usize = count.split(" of ").nth(1).unwrap().trim().parse().unwrap();
    assert!(total >= 3, "{count}");
    // Per task: the model's time of one dgemm point-task run against
    // Realm's measured mean, both in milliseconds, within the 2x the
    // measured dgemm rate allows; the inner tasks said to be inner.
    let (gemm, note) = row("task task_4");
    assert_eq!(gemm.matches(" ms ").count(), 2, "{gemm}");
    assert!(note.contains("Realm's mean per run"), "{note}");
    let ratio: f64 = gemm
        .split_whitespace()
        .skip_while(|w| *w != "ms")
        .skip(2)
        .find_map(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{gemm}"));
    assert!((0.5..=2.0).contains(&ratio), "{gemm}");
    let (_, note) = row("task task_6");
    assert!(note.contains("an inner task"), "{note}");
}

/// `bench optimize --backend legion`: every candidate a real run; 1.0x is
/// the median of the expert's repeated runs, whose spread the report
/// gives next to the rows (a figure inside it is no gain).
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn bench_optimize_with_the_legion_backend_reports_the_experts_spread() {
    let Some(b) = built() else { return };
    let _one = serial();
    let starts = scratch("bench-starts");
    std::fs::write(
        starts.join("on-cpus.mapper"),
        distal_expert_on_cpus("cannon"),
    )
    .unwrap();
    let out = mapwright(b)
        .args([
            "bench",
            "optimize",
            "--backend",
            "legion",
            "--apps",
            "cannon",
        ])
        .arg("--starts")
        .arg(&starts)
        .args(["--legion-cpus", "4", "--expert-repeats", "3"])
        .args(["--proposers", "search", "--seeds", "1", "--iterations", "2"])
        .args(["--scalar-long", "0", "--json"])
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {all}"));
    let experts = report["experts"].as_array().expect("experts");
    // The expert left out says why on stderr (a failed run of it).
    assert_eq!(experts.len(), 1, "{report}\n{all}");
    let e = &experts[0];
    assert_eq!(e["app"], "cannon");
    assert_eq!(e["runs"], 3);
    let (min, median, max) = (
        e["min"].as_f64().unwrap(),
        e["median"].as_f64().unwrap(),
        e["max"].as_f64().unwrap(),
    );
    assert!(0.0 < min && min <= median && median <= max, "{e}");
    let rows = report["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{report}");
    let row = &rows[0];
    assert_eq!(row["app"], "cannon");
    assert_eq!(row["proposer"], "search");
    // The start is the expert on CPUs: its best is a real run, near 1.0x.
    let best = row["best"].as_f64().unwrap();
    assert!(best > 0.5, "{row}");
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn run_with_the_legion_backend_reports_the_real_run() {
    let Some(b) = built() else { return };
    let _one = serial();
    let dir = scratch("run");
    let run = [
        "run",
        "--backend",
        "legion",
        "--json",
        "--no-normalize",
        "--app",
    ];
    let v = mapwright_on_slow(b, &dir, &[&run[..], &["circuit"]].concat());
    assert_eq!(v["status"], "ok", "{v:#}");
    assert!(v["elapsed_s"].as_f64().unwrap() > 0.0);
    assert!(v["raw_output"].as_str().unwrap().contains("CHECK PASSED"));
    // stencil and cannon with their experts on the CPUs: DISTAL's
    // per-iteration times and GFLOPS are read as the real program prints
    // them.
    for (app, mapper) in [
        ("stencil", stencil_expert_on_cpus()),
        ("cannon", distal_expert_on_cpus("cannon")),
    ] {
        let file = dir.join(format!("{app}.mapper"));
        std::fs::write(&file, mapper).unwrap();
        // The experts' CPU placement functions assume 4 processors a node.
        let out = mapwright(b)
            .args(&run[..])
            .arg(app)
            .args(["--legion-cpus", "4"])
            .arg(&file)
            .output()
            .unwrap();
        let v: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
        assert_eq!(v["status"], "ok", "{v:#}");
        assert!(v["elapsed_s"].as_f64().unwrap() > 0.0, "{v:#}");
        assert!(v["raw_output"].as_str().unwrap().contains("CHECK PASSED"));
        if app == "cannon" {
            assert!(v["throughput"].as_f64().unwrap() > 0.0, "{v:#}");
            assert_eq!(v["throughput_unit"], "GFLOPS per node");
        }
    }
    // An application without a real program (all nine built-ins have one:
    // here a user's own description) is a clear error, not a crash.
    let own = dir.join("myapp.json");
    let description = App::builtin_json("circuit").unwrap().replacen(
        "\"name\": \"circuit\"",
        "\"name\": \"myapp\"",
        1,
    );
    assert!(description.contains("\"myapp\""));
    std::fs::write(&own, description).unwrap();
    let v = mapwright_on_slow(b, &dir, &[&run[..], &[own.to_str().unwrap()]].concat());
    assert_eq!(v["status"], "error");
    let raw = v["raw_output"].as_str().unwrap();
    assert!(raw.contains("no real Legion program for `myapp`"), "{raw}");
}

/// The median of a JSON array of numbers.
fn median(v: &Value) -> f64 {
    let mut xs: Vec<f64> = v
        .as_array()
        .expect("an array of measurements")
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    assert!(!xs.is_empty(), "no measurements: {v}");
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn optimize_with_the_legion_backend_improves_a_slow_mapper_as_measured() {
    let Some(b) = built() else { return };
    let _one = serial();
    // Real runs are noisy, and a placement that spreads points over the
    // cores can only win where the cores are free: another process on one
    // of this machine's two cores hides it. So first measure what this host
    // can show right now (the slow start against Legion's default spread,
    // medians of three runs each); a host too busy to show any placement
    // gain cannot judge the optimizer's gain, and says so.
    let dir = scratch("optimize-capacity");
    let spread = dir.join("spread.mapper");
    std::fs::write(&spread, "Task * CPU;\nRegion * * CPU SYSMEM;\n").unwrap();
    let time_of = |file: &Path| -> f64 {
        let mut times: Vec<f64> = (0..3)
            .map(|_| {
                let out = mapwright(b)
                    .args(["run", "--app", "circuit", "--backend", "legion", "--json"])
                    .arg("--no-normalize")
                    .arg(file)
                    .output()
                    .unwrap();
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                v["elapsed_s"].as_f64().unwrap_or_else(|| panic!("{v:#}"))
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times[1]
    };
    let slow_file = dir.join("slow.mapper");
    std::fs::write(&slow_file, SLOW).unwrap();
    let (slow_s, spread_s) = (time_of(&slow_file), time_of(&spread));
    // On such a host the optimization still runs and everything but the
    // gain is checked; the gain is not asked for, and the test says so.
    let can_show_a_gain = spread_s * 1.3 <= slow_s;
    // The optimizer's own repeated runs of the start and of its best
    // candidate are compared by their medians; a whole optimization is
    // tried twice before the test fails.
    let mut tries = Vec::new();
    for attempt in 0..2 {
        let dir = scratch(&format!("optimize-{attempt}"));
        let runs = dir.join("runs");
        let v = mapwright_on_slow(
            b,
            &dir,
            &[
                "optimize",
                "--app",
                "circuit",
                "--backend",
                "legion",
                "--iterations",
                "5",
                "--json",
                "--run-dir",
                runs.to_str().unwrap(),
            ],
        );
        let records = v["records"].as_array().unwrap();
        assert!(
            records.iter().all(|r| r["evaluation"]["status"] == "ok"),
            "{:#}",
            v["records"]
        );
        // Measured: every candidate ran on real Legion and printed its time.
        for r in records {
            let raw = r["evaluation"]["raw_output"].as_str().unwrap_or_default();
            assert!(raw.contains("ELAPSED TIME = "), "{raw}");
        }
        // The expert as written stops on this host (no GPU), so there is no
        // expert figure: the trajectory is relative to the slow start, and
        // rises from it instead of lying flat at zero.
        assert_eq!(v["trajectory_basis"]["relative_to"], "start", "{v:#}");
        assert!(v["best_normalized"].is_null());
        let trajectory: Vec<f64> = v["trajectory"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(trajectory[0], 1.0, "{trajectory:?}");
        assert!(
            trajectory.windows(2).all(|w| w[1] >= w[0]),
            "{trajectory:?}"
        );
        let verdict = &v["verdict"];
        if !can_show_a_gain {
            eprintln!(
                "NOT CHECKED: the gain. This host shows no gain from spreading circuit's points \
                 right now (slow start {slow_s:.3} s, Legion's default spread {spread_s:.3} s, \
                 medians of 3): its cores are busy, so an optimizer's placement gain cannot be \
                 measured here. Everything else was checked."
            );
            return;
        }
        assert!(v["best_iteration"].as_u64().unwrap() > 0, "{v:#}");
        assert!(trajectory[trajectory.len() - 1] > 1.0, "{trajectory:?}");
        let (start, best) = (
            median(&verdict["start_runs"]),
            median(&verdict["best_runs"]),
        );
        if best > start * 1.15 {
            return;
        }
        tries.push(format!("start {start:.3}, best {best:.3} ({verdict})"));
    }
    panic!(
        "the best candidate is not clearly better than the slow start (medians of repeated runs, \
         two optimizations): {}",
        tries.join("; ")
    );
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn serve_with_the_legion_backend_runs_a_posted_mapper() {
    let Some(b) = built() else { return };
    let _one = serial();
    let mut command = mapwright(b);
    command.args(["serve", "--backend", "legion", "--bind", "127.0.0.1:0"]);
    let (mut serve, url, line) = lsp_support::start_serve(command);
    assert!(line.contains("backend legion"), "{line}");
    assert!(line.contains("legion-host"), "{line}");
    let dir = scratch("serve");
    let v = mapwright_on_slow(
        b,
        &dir,
        &[
            "run",
            "--app",
            "circuit",
            "--runtime",
            &url,
            "--json",
            "--no-normalize",
        ],
    );
    let _ = serve.kill();
    let _ = serve.wait();
    assert_eq!(v["status"], "ok", "{v:#}");
    assert!(v["raw_output"].as_str().unwrap().contains("CHECK PASSED"));
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn the_language_server_runs_on_real_legion_when_the_project_says_so() {
    let Some(b) = built() else { return };
    let _one = serial();
    let root = lsp_support::temp_dir("legion-lsp");
    std::fs::write(
        root.join("mapwright.toml"),
        "app = \"circuit\"\nruntime = \"legion\"\n",
    )
    .unwrap();
    // The server finds the programs as a user's would: in the environment.
    std::env::set_var("MAPWRIGHT_LEGION_BUILD", &b.dir);
    std::env::set_var("MAPWRIGHT_LEGION_LIBRARY_PATH", &b.library_path);
    let caps = json!({"window": {"workDoneProgress": true, "showDocument": {"support": true}},
                      "workspace": {"applyEdit": true}});
    let mut s = lsp_support::Server::start_with(
        caps,
        json!({"optimize": {"iterations": 5, "saveRuns": false}}),
        Some(&root),
    );
    let uri = lsp_support::file_uri(&root.join("circuit.mapper"));
    s.open(&uri, SLOW);
    let id = s.send_request(
        "workspace/executeCommand",
        json!({"command": "mapwright.run", "arguments": [uri]}),
    );
    let result = s.response_within(id, ONE_REAL_RUN).expect("mapwright.run");
    assert_eq!(result["status"], "ok", "{result:#}");
    let summary = result["summary"].as_str().unwrap();
    assert!(summary.contains("legion-host"), "{summary}");
    assert!(summary.contains("real Legion on this host"), "{summary}");
    // The run measured: hover on a task shows what, and a code lens on each
    // statement that decided measured tasks gives their time.
    assert_eq!(result["metrics"]["basis"], "measured", "{result:#}");
    let (line, text) = SLOW
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("IndexTaskMap"))
        .unwrap();
    let character = text.find("calculate_new_currents").unwrap() + 3;
    let hover = s.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
    );
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        shown.contains("**measured** in the run on legion-host (version 1): "),
        "{hover:#}"
    );
    assert!(shown.contains("on node0 CPU0 ×"), "{shown}");
    let lenses = s.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let measured: Vec<(u64, String)> = lenses
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| {
            let title = l["command"]["title"].as_str()?;
            title.starts_with("measured ").then(|| {
                (
                    l["range"]["start"]["line"].as_u64().unwrap(),
                    title.to_string(),
                )
            })
        })
        .collect();
    assert!(
        measured
            .iter()
            .any(|(l, t)| *l == line as u64 && t.contains("calculate_new_currents")),
        "{measured:#?}"
    );
    // Optimize from the one-CPU start: no expert runs here, so progress and
    // the final message say what was measured against the user's mapper,
    // with figures, never a dash where one belongs.
    let id = s.send_request(
        "workspace/executeCommand",
        json!({"command": "mapwright.optimize", "arguments": [uri],
               "workDoneToken": "legion-optimize"}),
    );
    let reports = progress_to_the_end(&mut s, "legion-optimize");
    let result = s.response(id).expect("mapwright.optimize");
    confirming_runs_were_shown(&reports, &result);
    for r in &reports {
        let message = r["message"].as_str().unwrap_or_default();
        assert!(
            !message.contains(" - ") && !message.contains(" -."),
            "{message}"
        );
    }
    let later: Vec<&str> = reports
        .iter()
        .filter(|r| r["kind"] == "report")
        .filter_map(|r| r["message"].as_str())
        .filter(|m| !m.starts_with("iteration 0/"))
        .collect();
    assert!(later.iter().any(|m| m.contains("x yours")), "{reports:#?}");
    let summary = result["summary"].as_str().unwrap();
    if result["applied"] == true {
        assert!(summary.contains("x faster than yours ("), "{summary}");
        assert!(summary.contains(" s → "), "{summary}");
        assert!(summary.contains("medians of 3 runs"), "{summary}");
    } else {
        // A host too busy to defend a gain says what it measured.
        assert!(
            summary.contains('%') || summary.contains("x yours)"),
            "{summary}"
        );
    }
    assert_eq!(s.shutdown(), Some(0));
}

#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn a_users_own_legion_build_works_in_place_of_the_sdk() {
    let Some(_) = built() else { return };
    let _one = serial();
    // A Legion install laid out as a user's own build is (include/,
    // lib/liblegion.so, lib/librealm.so), made of the SDK's files.
    let sdk = std::env::var_os("LEGION_SDK")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/legion-sdk"));
    let own = scratch("own-legion");
    std::fs::create_dir_all(own.join("lib")).unwrap();
    std::os::unix::fs::symlink(sdk.join("include"), own.join("include")).unwrap();
    for (name, target) in [
        ("liblegion.so", "liblegion-legate.so.1"),
        ("liblegion-legate.so.1", "liblegion-legate.so.1"),
        ("librealm.so", "librealm-legate.so.25"),
        ("librealm-legate.so.25", "librealm-legate.so.25"),
    ] {
        std::os::unix::fs::symlink(sdk.join("lib").join(target), own.join("lib").join(name))
            .unwrap();
    }
    // Only the driver (or its stub) comes from elsewhere: Legion must be
    // found through the programs' own run path, in the user's folder.
    let stub = sdk.join("cuda-stub");
    let out_dir = own.join("build");
    let out = Command::new("bash")
        .arg(root().join("runtime/legion/build.sh"))
        .env("LEGION_DIR", &own)
        .env("MAPWRIGHT_LEGION_OUT", &out_dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // Linked against the user's libraries, not the SDK's.
    let ldd = Command::new("ldd")
        .arg(out_dir.join("bin/circuit"))
        .env("LD_LIBRARY_PATH", &stub)
        .output()
        .unwrap();
    let ldd = String::from_utf8_lossy(&ldd.stdout);
    assert!(
        ldd.contains(&own.join("lib").to_string_lossy().to_string()),
        "{ldd}"
    );
    let run = Command::new(out_dir.join("bin/circuit"))
        .args(["-ll:cpu", "2", "-ll:util", "1", "-ll:gpu", "0", "-mapping"])
        .arg(root().join("runtime/apps/experts/legion-stencil.mapper"))
        .env("LD_LIBRARY_PATH", &stub)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    // Any mapper file is checked at start-up; stencil's expert maps tasks
    // circuit does not have, so every circuit task takes the defaults.
    let all = text(&run);
    assert!(run.status.success(), "{all}");
    assert!(all.contains("CHECK PASSED"), "{all}");
}

/// Measured feedback on real Legion: circuit with every launch point on the
/// first of four CPUs. The run's metrics come from Realm's measurements
/// (the mapper's log), AutoGuide's measured rule quotes the busiest CPU's
/// time and the idle ones' shares, and its edit, applied, gives a faster
/// measured run (medians of 3 interleaved runs each).
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn a_crowded_real_run_gets_the_measured_imbalance_and_its_edit_runs_faster() {
    use mapwright::optimize::executors::BackendExecutor;
    use mapwright::optimize::runner::Runner;
    use mapwright_grammar::diagnostic::apply_edits;
    use mapwright_runtime::backend::legion::{LegionBackend, LegionConfig};
    use mapwright_runtime::backend::MetricsBasis;
    use std::sync::Arc;
    let Some(b) = built() else { return };
    let _one = serial();
    let backend = LegionBackend::new(LegionConfig {
        build: b.dir.clone(),
        library_path: b.library_path.clone(),
        cpus: 4,
        gpus: 0,
        timeout: std::time::Duration::from_secs(300),
        profile_dir: None,
    });
    let machine = Arc::new(backend.host_machine().expect("the host"));
    let app = Arc::new(App::builtin("circuit").unwrap());
    let executor = BackendExecutor {
        backend: Box::new(backend),
        app: app.clone(),
        machine: machine.clone(),
        cancel: None,
    };
    let runner = Runner::new(&app, &machine, &executor);
    let slow = runner.evaluate(SLOW, 0);
    assert!(slow.ok(), "{}", slow.raw_output);
    let m = &slow.metrics;
    assert_eq!(m.basis, MetricsBasis::Measured, "{}", slow.raw_output);
    assert_eq!(m.proc_busy_s.len(), 4, "{:?}", m.proc_busy_s);
    assert!(m.imbalance > 2.0, "{m:?}");
    let crowded = &m.tasks["calculate_new_currents"];
    assert_eq!(
        crowded.points_per_proc.get("node0 CPU0").copied(),
        Some(crowded.runs),
        "{crowded:?}"
    );
    let f = slow
        .feedback
        .iter()
        .find(|f| f.rule == "measured-load-imbalance")
        .unwrap_or_else(|| panic!("no measured imbalance: {:?}", slow.feedback));
    assert!(f.explain.contains("node0 CPU0 was busy"), "{}", f.explain);
    assert!(
        f.explain
            .contains("The least busy worked this share of its time: node0 CPU"),
        "{}",
        f.explain
    );
    assert!(
        f.explain.contains("`calculate_new_currents` ran"),
        "{}",
        f.explain
    );
    let fixed = apply_edits(SLOW, f.edit.as_ref().expect("an edit")).unwrap();
    let mut times = (Vec::new(), Vec::new());
    for round in 0..3 {
        let a = runner.evaluate(SLOW, round);
        let e = runner.evaluate(&fixed, round);
        assert!(e.ok(), "{fixed}\n{}", e.raw_output);
        times.0.push(a.elapsed_s.unwrap());
        times.1.push(e.elapsed_s.unwrap());
        if round == 0 {
            assert!(e.metrics.imbalance < m.imbalance, "{:?}", e.metrics);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (before, after) = (median(&mut times.0), median(&mut times.1));
    assert!(
        after < before,
        "the edit made it no faster: {before} s -> {after} s\n{fixed}"
    );
}

/// `run --backend legion --json` on each of the nine programs reports what
/// Realm measured: `basis` measured, non-empty `task_time_s` and
/// `proc_busy_s`, every processor of the host listed, each processor's busy
/// time within the run's wall time (the figures cover every task the mapper
/// mapped, initialisation included), and the per-task runs adding up to
/// the task times. The same figures come from the program's own decision
/// log through `metrics_from_log`, equal to the sums of its `ran` lines;
/// and inside each timed window the program prints (`-window`), each
/// processor's measured busy time is at most the window, which is the
/// program's own elapsed time ([`busy_fits_the_timed_windows`]).
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn every_program_reports_realms_measurements_as_its_metrics() {
    use mapwright_runtime::legion::log::read_ran;
    use mapwright_runtime::legion::measured::metrics_from_log;
    use mapwright_runtime::validate::real::on_cpus;
    let Some(b) = built() else { return };
    let _one = serial();
    let dir = scratch("measured");
    for &app in App::builtin_names() {
        let expert = mapwright_runtime::app::expert_mapper_text(app).unwrap();
        let mapper = on_cpus(expert);
        let file = dir.join(format!("{app}.mapper"));
        std::fs::write(&file, &mapper).unwrap();
        let started = std::time::Instant::now();
        let out = mapwright(b)
            .args(["run", "--app", app, "--backend", "legion"])
            .args(["--legion-cpus", "4", "--no-normalize", "--json"])
            .arg(&file)
            .output()
            .unwrap();
        let wall = started.elapsed().as_secs_f64();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{app}: {e}: {}", text(&out)));
        assert_eq!(report["status"], "ok", "{app}: {}", report["raw_output"]);
        let m = &report["metrics"];
        assert_eq!(m["basis"], "measured", "{app}: {m}");
        let tasks = m["task_time_s"].as_object().unwrap();
        let busy = m["proc_busy_s"].as_object().unwrap();
        assert!(!tasks.is_empty() && !busy.is_empty(), "{app}: {m}");
        assert_eq!(busy.len(), 4, "{app}: every CPU listed: {m}");
        for (p, s) in busy {
            let s = s.as_f64().unwrap();
            assert!(
                (0.0..=wall).contains(&s),
                "{app}: {p} busy {s} s in a {wall} s run"
            );
        }
        for (task, figures) in m["tasks"].as_object().unwrap() {
            let runs = figures["runs"].as_f64().unwrap();
            let mean = figures["mean_s"].as_f64().unwrap();
            let total = tasks[task].as_f64().unwrap();
            assert!(
                (runs * mean - total).abs() <= 1e-6 * total.max(1.0),
                "{app} {task}"
            );
        }
        assert!(
            m["coverage"].as_str().unwrap().contains("task runs"),
            "{app}"
        );

        // The program's own log, read as the backend reads it; `-window`
        // has the program print its timed part in Realm's clock.
        let (out, log, _) = run_app(b, &dir, app, &mapper, &["-window"]);
        assert!(out.status.success(), "{app}: {}", text(&out));
        busy_fits_the_timed_windows(app, &String::from_utf8_lossy(&out.stdout), &log);
        let metrics = metrics_from_log(&log, None).unwrap().expect("measurements");
        let ran = read_ran(&log).unwrap();
        let top: Vec<u64> = mapwright_runtime::legion::log::read_log(&log)
            .unwrap()
            .iter()
            .filter(|t| t.parent.is_none())
            .map(|t| t.uid)
            .collect();
        for (task, seconds) in &metrics.task_time_s {
            let sum: f64 = ran
                .iter()
                .filter(|r| &r.ran == task && !top.contains(&r.uid))
                .map(|r| r.seconds())
                .sum();
            assert!(
                (sum - seconds).abs() < 1e-9,
                "{app} {task}: {sum} vs {seconds}"
            );
        }
    }
}

/// Each processor's measured busy time inside each timed window the
/// program printed (`TIMED WINDOW = START END s`) is at most the window's
/// length, and some task ran in each; the windows are the program's own
/// elapsed time: `ELAPSED TIME` (circuit, stencil, pennant, to its printed
/// millisecond) or each timed iteration's `Execution time: N ms` (DISTAL,
/// which truncates to the millisecond).
fn busy_fits_the_timed_windows(app: &str, stdout: &str, log: &str) {
    use mapwright_runtime::legion::log::read_ran;
    let windows: Vec<(f64, f64)> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("TIMED WINDOW = "))
        .map(|rest| {
            let mut it = rest.split_whitespace().map(|x| x.parse::<f64>().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect();
    assert!(!windows.is_empty(), "{app}: no TIMED WINDOW line: {stdout}");
    let elapsed: Vec<f64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("ELAPSED TIME = "))
        .map(|x| x.trim_end_matches(" s").trim().parse::<f64>().unwrap())
        .collect();
    let iterations: Vec<f64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("Execution time: "))
        .map(|x| x.trim_end_matches(" ms.").parse::<f64>().unwrap() * 1e-3)
        .collect();
    if let [e] = elapsed[..] {
        assert_eq!(windows.len(), 1, "{app}: {stdout}");
        let w = windows[0].1 - windows[0].0;
        assert!(
            (w - e).abs() <= 0.0006,
            "{app}: window {w} s, ELAPSED TIME {e} s"
        );
    } else {
        assert_eq!(windows.len(), iterations.len(), "{app}: {stdout}");
        for ((lo, hi), ms) in windows.iter().zip(&iterations) {
            let w = hi - lo;
            assert!(
                w >= *ms && w < ms + 0.001 + 1e-6,
                "{app}: window {w} s, printed {ms} s"
            );
        }
    }
    let top: Vec<u64> = read_log(log)
        .unwrap()
        .iter()
        .filter(|t| t.parent.is_none())
        .map(|t| t.uid)
        .collect();
    let runs = read_ran(log).unwrap();
    for &(lo, hi) in &windows {
        let mut inside: BTreeMap<String, f64> = BTreeMap::new();
        for r in runs.iter().filter(|r| !top.contains(&r.uid)) {
            let (start, end) = (r.start_ns as f64 * 1e-9, r.end_ns as f64 * 1e-9);
            let overlap = end.min(hi) - start.max(lo);
            if overlap > 0.0 {
                let proc = format!("node{} {}{}", r.node, r.proc_kind, r.proc);
                *inside.entry(proc).or_default() += overlap;
            }
        }
        assert!(
            !inside.is_empty(),
            "{app}: no task ran in the window {lo}-{hi}"
        );
        for (proc, busy) in &inside {
            assert!(
                *busy <= hi - lo + 1e-6,
                "{app}: {proc} busy {busy} s inside a {} s window",
                hi - lo
            );
        }
    }
}

/// `-mapwright:app FILE`: circuit, run with the CPU-adapted expert, writes
/// its application description as it ran. It agrees with the built-in
/// `runtime/apps/circuit.json` on the tasks, their launch kinds, domains and
/// parents, and on each argument's index, name, privilege and fields; its
/// field sizes are Legion's (bytes per element as the built-in's, whose
/// pieces are the paper's larger ones), and each leaf task's work is what
/// Realm measured on this host, one run per mapped point.
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn circuit_writes_its_own_description_as_it_ran() {
    let Some(b) = built() else { return };
    let _one = serial();
    let dir = scratch("app-out");
    let file = dir.join("circuit.app.json");
    let (out, _, _) = run_app(
        b,
        &dir,
        "circuit",
        &expert_on_cpus(),
        &["-mapwright:app", file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out));
    let written = App::load(&file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(written.name, "circuit");
    let builtin = App::builtin("circuit").unwrap();
    let names = |app: &App| -> Vec<String> {
        let mut v: Vec<String> = app.tasks.iter().map(|t| t.name.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(names(&written), names(&builtin));
    for want in &builtin.tasks {
        let got = written.task(&want.name).unwrap();
        let what = &want.name;
        assert_eq!(got.launch, want.launch, "{what}");
        assert_eq!(got.domain, want.domain, "{what}");
        assert_eq!(got.parent, want.parent, "{what}");
        assert_eq!(got.regions.len(), want.regions.len(), "{what}");
        for (g, w) in got.regions.iter().zip(&want.regions) {
            assert_eq!(g.index, w.index, "{what}");
            assert_eq!(g.name, w.name, "{what} argument {}", w.index);
            assert_eq!(g.privilege, w.privilege, "{what} argument {}", w.index);
            let (mut gf, mut wf) = (g.fields.clone(), w.fields.clone());
            gf.sort();
            wf.sort();
            assert_eq!(gf, wf, "{what} argument {}", w.index);
            if w.bytes > 0 && w.elements > 0 {
                assert_eq!(
                    g.bytes * w.elements,
                    w.bytes * g.elements,
                    "{what} argument {}: bytes per element",
                    w.index
                );
            }
        }
        let leaf = !got.inner
            && !written
                .tasks
                .iter()
                .any(|t| t.parent.as_ref() == Some(what));
        if leaf {
            let m = got
                .work
                .measured
                .as_ref()
                .unwrap_or_else(|| panic!("{what}: {:?}", got.work));
            assert!(m.runs >= 1 && m.mean_us > 0.0, "{what}: {m:?}");
            assert!(m.host.contains("4 CPU"), "{}", m.host);
            assert_eq!(got.work.fixed_us, m.mean_us, "{what}");
        } else {
            assert!(got.work.measured.is_none(), "{what}");
        }
    }
    // Every launch is counted (replayed ones too); a point is measured when
    // it is mapped, so at most the launches times their four points.
    let currents = written.task("calculate_new_currents").unwrap();
    let runs = currents.work.measured.as_ref().unwrap().runs;
    assert!(currents.per_iteration >= 2, "{currents:?}");
    assert!(
        (4..=u64::from(currents.per_iteration) * 4).contains(&runs),
        "{currents:?}"
    );
}

/// The journey of docs/your-program.md, on real Legion, with circuit's
/// sources standing in for a user's program: built in a folder of its own
/// with only the documented link line, made a project by `mapwright init`
/// (a program without the mapper gets the link lines and nothing is
/// written), then, from a real language-server client, hover names its
/// regions from the written description and Optimize runs it through the
/// `command` backend from a one-CPU start. Never through `--app circuit`.
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn a_users_program_goes_from_its_folder_to_an_optimized_mapper() {
    let Some(b) = built() else { return };
    let _one = serial();
    let folder = lsp_support::temp_dir("own-program");
    let apps = root().join("runtime/legion/apps");
    for f in ["circuit.cc", "common.cc", "common.h"] {
        std::fs::copy(apps.join(f), folder.join(f)).unwrap();
    }
    // The documented link line, next to Legion's libraries.
    let (legion_include, legion_libs) = match std::env::var_os("LEGION_DIR") {
        Some(d) => {
            let d = PathBuf::from(d);
            let lib = d.join("lib").display().to_string();
            (
                d.join("include"),
                vec![
                    format!("-L{lib}"),
                    format!("-Wl,-rpath,{lib}"),
                    "-llegion".into(),
                    "-lrealm".into(),
                ],
            )
        }
        None => {
            let sdk = std::env::var_os("LEGION_SDK")
                .map(PathBuf::from)
                .unwrap_or_else(|| root().join("target/legion-sdk"));
            let lib = sdk.join("lib").display().to_string();
            (
                sdk.join("include"),
                vec![
                    format!("-L{lib}"),
                    format!("-Wl,-rpath,{lib}"),
                    "-llegion-legate".into(),
                    "-lrealm-legate".into(),
                ],
            )
        }
    };
    let mapper_lib = b.dir.join("lib").display().to_string();
    let out = Command::new("g++")
        .current_dir(&folder)
        .args([
            "-std=c++17",
            "-O2",
            "-o",
            "circuit",
            "circuit.cc",
            "common.cc",
        ])
        .arg("-isystem")
        .arg(&legion_include)
        .arg(format!(
            "-I{}",
            root().join("runtime/legion/mapper").display()
        ))
        .args([
            format!("-L{mapper_lib}"),
            "-lmapwright_mapper".into(),
            format!("-Wl,-rpath,{mapper_lib}"),
        ])
        .args(&legion_libs)
        .arg("-Wl,--allow-shlib-undefined")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));

    // A program without the mapper: the link lines, and nothing written.
    let bare = folder.join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::copy("/bin/true", bare.join("prog")).unwrap();
    let out = mapwright(b)
        .args(["init", "--dir"])
        .arg(&bare)
        .args(["--", "./prog"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    for want in [
        "-lmapwright_mapper",
        "register_mappers();",
        "target_link_libraries",
        "saveobj",
    ] {
        assert!(said.contains(want), "{want}: {said}");
    }
    assert_eq!(std::fs::read_dir(&bare).unwrap().count(), 1, "{said}");

    // init: one run writes the project.
    let out = mapwright(b)
        .current_dir(&folder)
        .env("LD_LIBRARY_PATH", &b.library_path)
        .args([
            "init",
            "--",
            "./circuit",
            "-ll:cpu",
            "4",
            "-ll:util",
            "1",
            "-ll:gpu",
            "0",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let project = std::fs::read_to_string(folder.join("mapwright.toml")).unwrap();
    assert!(project.contains("runtime = \"command\""), "{project}");
    assert!(
        project.contains(
            "template = \"./circuit -ll:cpu 4 -ll:util 1 -ll:gpu 0 -tm:use_semantic_name -mapping {mapper}\""
        ),
        "{project}"
    );
    let written = App::load(folder.join("circuit.app.json")).unwrap();
    assert_eq!(written.expert_mapper, "", "a user's program has no expert");
    assert!(written
        .task("calculate_new_currents")
        .unwrap()
        .work
        .measured
        .is_some());
    let machine = Machine::load(folder.join("circuit.machine.json")).unwrap();
    assert_eq!(
        machine.procs_per_node(mapwright_runtime::machine::ProcKind::Cpu),
        4
    );
    assert!(folder.join("circuit.mapper").is_file());
    // init again would replace the project: it refuses without --force.
    let again = mapwright(b)
        .current_dir(&folder)
        .args(["init", "--", "./circuit"])
        .output()
        .unwrap();
    assert!(!again.status.success() && text(&again).contains("--force"));

    // The editor: the user starts from a slow mapper of their own.
    std::fs::write(folder.join("circuit.mapper"), SLOW).unwrap();
    std::env::set_var("LD_LIBRARY_PATH", &b.library_path);
    let caps = json!({"window": {"workDoneProgress": true},
                      "workspace": {"applyEdit": true}});
    let mut s = lsp_support::Server::start_with(
        caps,
        json!({"optimize": {"iterations": 4, "saveRuns": false}}),
        Some(&folder),
    );
    let uri = lsp_support::file_uri(&folder.join("circuit.mapper"));
    let diagnostics = s.open(&uri, SLOW);
    assert!(
        diagnostics.iter().all(|d| d["severity"] != 1),
        "{diagnostics:#?}"
    );
    let (line, row) = SLOW
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("IndexTaskMap"))
        .unwrap();
    let character = row.find("calculate_new_currents").unwrap() + 3;
    let hover = s.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
    );
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    for want in [
        "`rp_private`",
        "`rp_wires`",
        "`rp_times`",
        "work per point: ",
        "measured",
    ] {
        assert!(shown.contains(want), "{want}: {shown}");
    }
    let id = s.send_request(
        "workspace/executeCommand",
        json!({"command": "mapwright.optimize", "arguments": [uri],
               "workDoneToken": "own-optimize"}),
    );
    let reports = progress_to_the_end(&mut s, "own-optimize");
    let result = s.response(id).expect("mapwright.optimize");
    confirming_runs_were_shown(&reports, &result);
    let summary = result["summary"].as_str().unwrap_or_default().to_string();
    assert!(summary.contains("yours"), "{result:#}");
    if result["applied"] == true {
        assert!(summary.contains("x faster than yours ("), "{summary}");
        assert!(summary.contains("medians of 3 runs"), "{summary}");
    }
    assert_eq!(s.shutdown(), Some(0));
    std::env::remove_var("LD_LIBRARY_PATH");
}

/// `optimize --backend legion --report plot.svg`: beside the trajectory
/// plot, `plot.timeline.svg` draws the best candidate's measured run, one
/// row per Legion processor with its task runs as bars, and the copies.
#[test]
#[cfg_attr(
    not(legion_sdk),
    ignore = "needs the Legion SDK: runtime/legion/sdk.sh (or LEGION_DIR)"
)]
fn the_optimize_report_draws_the_best_runs_timeline() {
    let Some(b) = built() else { return };
    let _one = serial();
    let dir = scratch("timeline");
    let plot = dir.join("plot.svg");
    let file = dir.join("slow.mapper");
    std::fs::write(&file, SLOW).unwrap();
    let out = mapwright(b)
        .args(["optimize", "--app", "circuit", "--backend", "legion"])
        .args(["--legion-cpus", "4", "--iterations", "1", "--report"])
        .arg(&plot)
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(plot.is_file());
    let timeline = std::fs::read_to_string(dir.join("plot.timeline.svg"))
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    for p in 0..4 {
        assert!(
            timeline.contains(&format!(">node0 CPU{p}</text>")),
            "row {p}"
        );
    }
    assert!(timeline.contains(">copies</text>"));
    assert!(
        timeline.matches("class=\"run\"").count() >= 50,
        "{timeline}"
    );
    assert!(timeline.contains("calculate_new_currents ("), "{timeline}");
    assert!(text(&out).contains("timeline of the best run: "));
}
