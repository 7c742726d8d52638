//! Resolution and simulation give exactly the decisions and simulated runs
//! recorded in `tests/fixtures/resolve_outcomes.txt`, before the resolver
//! was optimised for speed: every (mapper, application, machine) case is
//! hashed over the full JSON of its decisions (diagnostics and quick fixes
//! included) and of two simulated runs (noise-free, and seed 7 with 1 %
//! noise). The cases: the built-in experts and the shipped starts
//! (`bench/starts/`) on three machines, and every shared corpus mapper on
//! the paper's machine, each against all nine applications.
//!
//! Re-record (only for an intended change of behaviour) with
//! `MAPWRIGHT_BLESS=1 cargo test -p mapwright-runtime --test resolve_fixture`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mapwright_grammar::analyze;
use mapwright_runtime::app::App;
use mapwright_runtime::machine::Machine;
use mapwright_runtime::resolve_mapping::resolve_mapping;
use mapwright_runtime::sim::simulate;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn mapper_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|it| {
            it.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "mapper"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// FNV-1a, 64 bits: stable across platforms and Rust versions.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn outcome_hash(source: &str, app: &App, machine: &Machine) -> u64 {
    let d = resolve_mapping(&analyze(source), source, app, machine);
    let mut text = serde_json::to_string(&d).expect("decisions serialise");
    for (seed, noise) in [(0, 0.0), (7, 0.01)] {
        let run = simulate(&d, app, machine, seed, noise);
        text.push_str(&serde_json::to_string(&run).expect("outcome serialises"));
    }
    // The recording predates `metrics.basis` (which says a figure is the
    // model's): left out, so that everything else is held to it unchanged.
    fnv1a(
        text.replace(",\"basis\":\"model\"", "")
            .replace(",\"basis\":\"none\"", "")
            .as_bytes(),
    )
}

/// The cases present in this checkout: key `group/file app machine`.
fn current_cases() -> BTreeMap<String, u64> {
    let root = manifest();
    let mut groups: Vec<(&str, PathBuf, Vec<&str>)> = vec![
        (
            "experts",
            root.join("apps/experts"),
            vec!["p100x4", "h200", "16x4gpu"],
        ),
        (
            "starts",
            root.join("../bench/starts"),
            vec!["p100x4", "h200", "16x4gpu"],
        ),
    ];
    for dir in ["public", "probes"] {
        groups.push((
            dir,
            root.join("../../shared/corpus").join(dir),
            vec!["p100x4"],
        ));
    }
    let apps: Vec<App> = App::builtin_names()
        .iter()
        .map(|n| App::builtin(n).expect("built-in"))
        .collect();
    let mut cases = BTreeMap::new();
    for (group, dir, machines) in groups {
        let machines: Vec<Machine> = machines
            .iter()
            .map(|m| Machine::preset(m).expect("preset"))
            .collect();
        for path in mapper_files(&dir) {
            let bytes = std::fs::read(&path).unwrap_or_default();
            let source = String::from_utf8_lossy(&bytes).into_owned();
            let file = path.file_name().unwrap_or_default().to_string_lossy();
            for m in &machines {
                for app in &apps {
                    let key = format!("{group}/{file} {} {}", app.name, m.name);
                    cases.insert(key, outcome_hash(&source, app, m));
                }
            }
        }
    }
    cases
}

#[test]
fn resolution_and_simulation_match_the_recorded_outcomes() {
    let fixture = manifest().join("tests/fixtures/resolve_outcomes.txt");
    let cases = current_cases();
    if std::env::var_os("MAPWRIGHT_BLESS").is_some() {
        let text: String = cases
            .iter()
            .map(|(k, h)| format!("{k} {h:016x}\n"))
            .collect();
        std::fs::create_dir_all(fixture.parent().expect("parent")).expect("mkdir");
        std::fs::write(&fixture, text).expect("write fixture");
        return;
    }
    let recorded: BTreeMap<String, String> = std::fs::read_to_string(&fixture)
        .expect("fixture present")
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(k, h)| (k.to_string(), h.to_string()))
        .collect();
    // The experts and starts ship with the repository: all must be here.
    let shipped = recorded
        .keys()
        .filter(|k| k.starts_with("experts/") || k.starts_with("starts/"))
        .count();
    assert!(shipped >= 23 * 9 * 3, "fixture lacks shipped cases");
    let mut differ = Vec::new();
    let mut checked = 0;
    for (key, hash) in &cases {
        match recorded.get(key) {
            Some(r) if *r == format!("{hash:016x}") => checked += 1,
            Some(_) => differ.push(format!("{key}: differs")),
            None => differ.push(format!("{key}: not recorded")),
        }
    }
    for key in recorded.keys() {
        let shipped = key.starts_with("experts/") || key.starts_with("starts/");
        if shipped && !cases.contains_key(key) {
            differ.push(format!("{key}: recorded but missing"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} cases differ:\n{}",
        differ.len(),
        cases.len(),
        differ.join("\n")
    );
    assert!(checked >= shipped);
}
