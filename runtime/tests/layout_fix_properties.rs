//! Every layout error has a quick fix of its own (issue 39): for each
//! E0305 a library raises, the first fix, applied alone, removes that
//! E0305 and adds no error, whatever else the mapper gets wrong.
//!
//! Over all nine built-in applications: their expert mappers with each
//! Layout statement's dimension order flipped or its statements dropped,
//! or with a narrow statement put first that gives a task, a named region
//! or a region in one memory the rejected order (with the expert's
//! `Region` statements and without), and generated mappers (`Task`, `Region` and `Layout` statements with `*`
//! and named tasks, fields and memories, any constraint words, with and
//! without `Region` statements) on two machines. Applications without a
//! library constraint (circuit, pennant) raise no E0305; they are in the
//! runs so that a constraint added to them later is covered.

use std::collections::BTreeMap;

use mapwright_grammar::{analyze, Diagnostic};
use mapwright_runtime::app::{expert_mapper_text, App};
use mapwright_runtime::machine::Machine;
use mapwright_runtime::resolve_mapping::resolve_mapping;
use proptest::prelude::*;

/// Every diagnostic of `source`, as `mapwright check --app` reports them.
fn all_diagnostics(source: &str, app: &App, machine: &Machine) -> Vec<Diagnostic> {
    let analysis = analyze(source);
    let mut out = analysis.diagnostics();
    out.extend(resolve_mapping(&analysis, source, app, machine).diagnostics);
    out
}

/// What identifies an error across an edit: its code and its message
/// without the parts an edit moves (`(line N)`) or that name the deciding
/// statement (an E0305's text after `;`).
fn error_key(d: &Diagnostic) -> String {
    let mut m = d.message.to_string();
    if d.code == "E0305" {
        m = m.split("; ").next().unwrap_or("").to_string();
    }
    while let Some(i) = m.find("(line ") {
        let end = m[i..].find(')').map_or(m.len(), |e| i + e + 1);
        m.replace_range(i..end, "");
    }
    format!("{} {m}", d.code)
}

fn error_counts(ds: &[Diagnostic]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for d in ds.iter().filter(|d| d.is_error()) {
        *out.entry(error_key(d)).or_insert(0) += 1;
    }
    out
}

/// Checks the property on `source`; returns how many E0305 it had.
fn check_every_e0305_has_its_fix(source: &str, app: &App, machine: &Machine) -> usize {
    let before = all_diagnostics(source, app, machine);
    let counts = error_counts(&before);
    let mut seen = 0;
    for d in before.iter().filter(|d| d.code == "E0305") {
        seen += 1;
        let context = format!(
            "app {} on {}\n--- source\n{source}--- error\n{}",
            app.name, machine.name, d.message
        );
        let fix = d
            .fixes
            .first()
            .unwrap_or_else(|| panic!("an E0305 without a fix\n{context}"));
        let edited = fix
            .apply(source)
            .unwrap_or_else(|| panic!("fix `{}` does not apply\n{context}", fix.title));
        let after = error_counts(&all_diagnostics(&edited, app, machine));
        let key = error_key(d);
        let what = format!(
            "{context}\n--- fix `{}`\n{edited}--- errors after\n{after:#?}",
            fix.title
        );
        assert!(
            after.get(&key).copied().unwrap_or(0) < counts[&key],
            "the fix leaves its E0305\n{what}"
        );
        for (k, n) in &after {
            assert!(
                *n <= counts.get(k).copied().unwrap_or(0),
                "the fix adds an error: {k}\n{what}"
            );
        }
    }
    seen
}

fn machines() -> [Machine; 2] {
    [
        Machine::preset("p100x4").expect("p100x4"),
        Machine::preset("2x4gpu").expect("2x4gpu"),
    ]
}

/// The expert mapper with its `nth` Layout statement's order flipped (or
/// `C_order` added when it has no order word), and with every Layout
/// statement dropped: the errors a user makes from an expert's file.
fn expert_variants(expert: &str) -> Vec<String> {
    let lines: Vec<&str> = expert.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.trim_start().starts_with("Layout") {
            continue;
        }
        let flipped = if line.contains("C_order") {
            line.replacen("C_order", "F_order", 1)
        } else if line.contains("F_order") {
            line.replacen("F_order", "C_order", 1)
        } else {
            line.replacen(';', " C_order;", 1)
        };
        let mut v = lines.clone();
        v[i] = &flipped;
        out.push(v.join("\n") + "\n");
    }
    let dropped: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.trim_start().starts_with("Layout"))
        .collect();
    out.push(dropped.join("\n") + "\n");
    out
}

#[test]
fn every_e0305_of_an_edited_expert_mapper_has_its_fix() {
    let mut per_app: BTreeMap<&str, usize> = BTreeMap::new();
    for name in App::builtin_names() {
        let app = App::builtin(name).expect("built-in app");
        for mapper in App::builtin_names() {
            let Some(expert) = expert_mapper_text(mapper) else {
                continue;
            };
            let mut variants = expert_variants(expert);
            if mapper == name {
                variants.extend(named_field_variants(&app, expert));
            }
            for v in variants {
                for machine in &machines() {
                    *per_app.entry(name).or_insert(0) +=
                        check_every_e0305_has_its_fix(&v, &app, machine);
                }
            }
        }
    }
    // The property is about something: every application with a library
    // constraint raises E0305 on these variants.
    eprintln!("E0305 per application in the edited expert mappers: {per_app:?}");
    for name in App::builtin_names() {
        let app = App::builtin(name).expect("built-in app");
        if !app.library_constraints.is_empty() {
            assert!(per_app[name] >= 5, "{name}: {per_app:?}");
        }
    }
}

/// The application's own expert mapper with one Layout statement put
/// first that gives one named region (or every region of one task, or one
/// region in every task) the order its library rejects, with the expert's
/// `Region` statements and without them: the narrow statements a user
/// writes, for every library and Regent rule.
fn named_field_variants(app: &App, expert: &str) -> Vec<String> {
    let without_regions: String = expert
        .lines()
        .filter(|l| !l.trim_start().starts_with("Region"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut statements = Vec::new();
    for c in &app.library_constraints {
        // The order the constraint rejects.
        let wrong = match c.order {
            Some(mapwright_runtime::app::DimOrder::COrder) => "F_order",
            Some(mapwright_runtime::app::DimOrder::FOrder) => "C_order",
            None => continue,
        };
        for t in app.tasks.iter().filter(|t| !t.regions.is_empty()) {
            if !c.tasks.is_empty() && !c.tasks.contains(&t.name) {
                continue;
            }
            statements.push(format!("Layout {} * * SOA {wrong};", t.name));
            for r in &t.regions {
                statements.push(format!("Layout {} {} * SOA {wrong};", t.name, r.name));
                statements.push(format!("Layout * {} FBMEM {wrong};", r.name));
            }
        }
    }
    statements.sort();
    statements.dedup();
    let mut out = Vec::new();
    for st in statements {
        out.push(format!("{st}\n{expert}"));
        out.push(format!("{st}\n{without_regions}"));
    }
    out
}

/// One generated statement, as indices resolved against an application's
/// tasks and region names when the text is written.
#[derive(Debug, Clone)]
enum Gen {
    Task(usize, Vec<usize>),
    Region(usize, usize, usize, Vec<usize>),
    Layout(usize, usize, usize, Vec<usize>),
}

const PROCS: [&str; 3] = ["GPU", "CPU", "OMP"];
const MEMS: [&str; 4] = ["FBMEM", "ZCMEM", "SYSMEM", "SOCKMEM"];
const WORDS: [&str; 6] = ["SOA", "AOS", "C_order", "F_order", "Compact", "Align==128"];

fn gen_stmt() -> impl Strategy<Value = Gen> {
    let list = |n: usize| proptest::collection::vec(0..n, 1..=3);
    prop_oneof![
        1 => (0..20usize, list(PROCS.len())).prop_map(|(t, k)| Gen::Task(t, k)),
        1 => (0..20usize, 0..20usize, 0..PROCS.len() + 1, list(MEMS.len()))
            .prop_map(|(t, r, p, m)| Gen::Region(t, r, p, m)),
        // Layout statements are what this is about; `*` memories half the time.
        2 => (
            0..20usize,
            0..20usize,
            0..2 * MEMS.len(),
            proptest::collection::vec(0..WORDS.len(), 0..=3)
        )
            .prop_map(|(t, r, m, w)| Gen::Layout(t, r, m, w)),
    ]
}

/// The tasks with region arguments (the others have no layout to get
/// wrong), tasks with a library constraint first and twice: the names a
/// generated statement picks from.
fn named_tasks(app: &App) -> Vec<&str> {
    let constrained = |t: &&mapwright_runtime::app::Task| {
        app.library_constraints
            .iter()
            .any(|c| c.tasks.contains(&t.name))
    };
    let with_regions = app.tasks.iter().filter(|t| !t.regions.is_empty());
    let mut out: Vec<&str> = with_regions
        .clone()
        .filter(constrained)
        .flat_map(|t| [t.name.as_str(), t.name.as_str()])
        .collect();
    out.extend(with_regions.map(|t| t.name.as_str()));
    out
}

/// A task selector: `*` for about one index in three, else a task.
fn task_sel(app: &App, i: usize) -> String {
    let names = named_tasks(app);
    if matches!(i % 3, 0) || names.is_empty() {
        "*".into()
    } else {
        names[i % names.len()].to_string()
    }
}

/// A region selector: `*`, a semantic name of a task [`task_sel`] picks
/// from, or (Region only) an argument index.
fn region_sel(app: &App, i: usize, index_ok: bool) -> String {
    let tasks = named_tasks(app);
    let names: Vec<&str> = app
        .tasks
        .iter()
        .filter(|t| tasks.contains(&t.name.as_str()))
        .flat_map(|t| t.regions.iter().map(|r| r.name.as_str()))
        .collect();
    match i % 4 {
        0 => "*".into(),
        3 if index_ok => (i % 3).to_string(),
        _ if names.is_empty() => "*".into(),
        _ => names[(i / 4) % names.len()].to_string(),
    }
}

fn write_mapper(app: &App, stmts: &[Gen]) -> String {
    let mut out = String::new();
    for s in stmts {
        let line = match s {
            Gen::Task(t, ks) => {
                let ks: Vec<&str> = ks.iter().map(|&k| PROCS[k]).collect();
                format!("Task {} {};", task_sel(app, *t), ks.join(","))
            }
            Gen::Region(t, r, p, ms) => {
                let ms: Vec<&str> = ms.iter().map(|&m| MEMS[m]).collect();
                format!(
                    "Region {} {} {} {};",
                    task_sel(app, *t),
                    region_sel(app, *r, true),
                    PROCS.get(*p).copied().unwrap_or("*"),
                    ms.join(",")
                )
            }
            Gen::Layout(t, r, m, ws) => {
                let mut line = format!(
                    "Layout {} {} {}",
                    task_sel(app, *t),
                    region_sel(app, *r, false),
                    MEMS.get(*m).copied().unwrap_or("*"),
                );
                for &w in ws {
                    line.push(' ');
                    line.push_str(WORDS[w]);
                }
                line + ";"
            }
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A generated case: an application, a machine, a mapper's text.
fn generated_case() -> impl Strategy<Value = (usize, usize, String)> {
    (
        0..App::builtin_names().len(),
        0..2usize,
        any::<bool>(),
        proptest::collection::vec(gen_stmt(), 1..8),
    )
        .prop_map(|(app, machine, gpu_first, stmts)| {
            let a = App::builtin(App::builtin_names()[app]).expect("built-in app");
            let mut source = if gpu_first {
                "Task * GPU,CPU;\n".to_string()
            } else {
                String::new()
            };
            source.push_str(&write_mapper(&a, &stmts));
            (app, machine, source)
        })
}

fn check_case(app: usize, machine: usize, source: &str) -> usize {
    let app = App::builtin(App::builtin_names()[app]).expect("built-in app");
    check_every_e0305_has_its_fix(source, &app, &machines()[machine])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_e0305_of_a_generated_mapper_has_its_fix(
        (app, machine, source) in generated_case(),
    ) {
        check_case(app, machine, &source);
    }
}

/// The generator is worth running: a fixed sample of its cases raises
/// E0305 often, for every application with a library constraint, from
/// deciding statements and from Legion's default.
#[test]
fn generated_mappers_raise_layout_errors_for_every_constrained_app() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = generated_case();
    let mut per_app: BTreeMap<&str, usize> = BTreeMap::new();
    for _ in 0..512 {
        let (app, machine, source) = strategy.new_tree(&mut runner).expect("a case").current();
        let n = check_case(app, machine, &source);
        *per_app.entry(App::builtin_names()[app]).or_insert(0) += n;
    }
    eprintln!("E0305 per application in 512 generated mappers: {per_app:?}");
    for name in App::builtin_names() {
        let app = App::builtin(name).expect("built-in app");
        if !app.library_constraints.is_empty() {
            assert!(
                per_app.get(name).copied().unwrap_or(0) >= 3,
                "{name}: {per_app:?}"
            );
        }
    }
}
