//! The application description of a program as it ran (`-mapwright:app
//! FILE`): mapwright's Legion mapper sees every launch (task, parent,
//! domain, variants, region requirements with their names), the regions
//! and fields behind each mapped point (extents, field names and sizes, as
//! Legion knows them) and, measured by Realm, how long each point ran.
//! [`AppRecorder`] gathers that and writes it as the same JSON the built-in
//! descriptions use (`runtime/apps/*.json`), with every figure it could not
//! know marked as such.
//!
//! What the mapper cannot know: the program's loop structure (the whole run
//! is written as one iteration, every launch counted in `per_iteration`, as
//! `app import` does), launches Legion replays from a trace without asking
//! the mapper (their points are neither mapped nor measured again; the
//! launches are still counted, `select_task_options` sees them), and what a
//! task would take on a processor kind it did not run on.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use crate::app::{App, Launch, MeasuredWork, Privilege, RegionArg, Task, Work};
use crate::machine::{Machine, ProcKind};

use super::launch::LaunchInfo;
use super::log::RanTask;

/// One field of a region argument: its name (`field<ID>` where the program
/// gave it none) and size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldShape {
    pub name: String,
    pub bytes: u64,
}

/// The region behind one argument of a mapped point task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionShape {
    /// Argument index.
    pub index: u32,
    /// Bounds of the region's index space, inclusive (empty where it has
    /// none, as a requirement without a region).
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
    /// Points in the index space (less than the bounds' product for a
    /// sparse one).
    pub volume: u64,
    /// The requirement's fields.
    pub fields: Vec<FieldShape>,
}

impl RegionShape {
    fn extents(&self) -> Vec<u64> {
        self.lo
            .iter()
            .zip(&self.hi)
            .map(|(l, h)| (h - l + 1).max(0) as u64)
            .collect()
    }

    fn bytes(&self) -> u64 {
        let per_element: u64 = self.fields.iter().map(|f| f.bytes).sum();
        self.volume.saturating_mul(per_element)
    }
}

/// What was seen of one task over the run.
#[derive(Debug, Default)]
struct TaskRecord {
    /// The first launch seen: launch kind, variants, parent, privileges.
    first: Option<LaunchInfo>,
    /// Launches (`select_task_options` calls), by launch-domain extents.
    launches: BTreeMap<Vec<u64>, u64>,
    /// Point tasks mapped.
    mapped: u64,
    /// Per argument: every name it answered to, in the order seen.
    names: BTreeMap<u32, Vec<String>>,
    /// Per argument: the largest piece mapped, and the smallest volume.
    shapes: BTreeMap<u32, (RegionShape, u64)>,
    /// Realm's measurements of its point tasks.
    runs: u64,
    total_ns: i64,
    max_ns: i64,
    kinds: BTreeSet<ProcKind>,
}

/// Gathers a run's application description (see the module comment).
#[derive(Debug)]
pub struct AppRecorder {
    path: PathBuf,
    /// The tasks in the order first seen, with their names.
    tasks: Vec<(String, TaskRecord)>,
    /// A task name's index in `tasks`.
    index: HashMap<String, usize>,
    /// Launch ids ([`super::MapperSession::remember_launch`]) to the
    /// launch's task (index in `tasks`) and domain extents; the calls made
    /// per launch and per mapped point look them up without a copy.
    ids: Vec<Option<(usize, Vec<u64>)>>,
}

impl AppRecorder {
    /// A recorder that writes to `path`.
    pub fn new(path: PathBuf) -> AppRecorder {
        AppRecorder {
            path,
            tasks: Vec::new(),
            index: HashMap::new(),
            ids: Vec::new(),
        }
    }

    /// The index of task `name` in `tasks`, added where new.
    fn task_index(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.tasks.push((name.to_string(), TaskRecord::default()));
        self.index.insert(name.to_string(), self.tasks.len() - 1);
        self.tasks.len() - 1
    }

    /// A launch shape decided for the first time, under launch id `id`
    /// (ids are handed out in order from 0).
    pub fn remember(&mut self, id: u32, info: &LaunchInfo) {
        let extents = match info.launch {
            Launch::Index => info.extents(),
            Launch::Single => Vec::new(),
        };
        let t = self.task_index(&info.task);
        if self.ids.len() <= id as usize {
            self.ids.resize(id as usize + 1, None);
        }
        self.ids[id as usize] = Some((t, extents));
        let record = &mut self.tasks[t].1;
        if record.first.is_none() {
            record.first = Some(info.clone());
        }
        for (i, r) in info.regions.iter().enumerate() {
            let names = record.names.entry(i as u32).or_default();
            for n in r.names.iter().filter(|n| !n.is_empty()) {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
    }

    /// The task of launch id `id`, and the launch's domain extents.
    fn by_id(&mut self, id: u32) -> Option<(&mut TaskRecord, &Vec<u64>)> {
        let (t, extents) = self.ids.get(id as usize)?.as_ref()?;
        Some((&mut self.tasks[*t].1, extents))
    }

    /// One launch of launch id `id` (a `select_task_options` call).
    pub fn launched(&mut self, id: u32) {
        if let Some((record, extents)) = self.by_id(id) {
            match record.launches.get_mut(extents) {
                Some(n) => *n += 1,
                None => {
                    record.launches.insert(extents.clone(), 1);
                }
            }
        }
    }

    /// One point task of launch id `id` mapped.
    pub fn mapped(&mut self, id: u32) {
        if let Some((record, _)) = self.by_id(id) {
            record.mapped += 1;
        }
    }

    /// The regions behind a mapped point of launch id `id`.
    pub fn shapes(&mut self, id: u32, shapes: Vec<RegionShape>) {
        let Some((record, _)) = self.by_id(id) else {
            return;
        };
        for shape in shapes {
            let volume = shape.volume;
            match record.shapes.get_mut(&shape.index) {
                Some((largest, smallest)) => {
                    *smallest = (*smallest).min(volume);
                    if volume > largest.volume {
                        *largest = shape;
                    }
                }
                None => {
                    record.shapes.insert(shape.index, (shape, volume));
                }
            }
        }
    }

    /// Realm's measurement of one point task.
    pub fn ran(&mut self, ran: &RanTask) {
        let Some(kind) = ProcKind::ALL
            .iter()
            .copied()
            .find(|k| k.dsl_name() == ran.proc_kind)
        else {
            return;
        };
        let t = self.task_index(&ran.ran);
        let record = &mut self.tasks[t].1;
        let ns = (ran.end_ns - ran.start_ns).max(0);
        record.runs += 1;
        record.total_ns += ns;
        record.max_ns = record.max_ns.max(ns);
        record.kinds.insert(kind);
    }

    /// The description as far as the run has gone, measured on `host`;
    /// `program` names it.
    pub fn describe(&self, program: &str, host: &Machine) -> App {
        let parents: BTreeSet<&str> = self
            .tasks
            .iter()
            .filter_map(|(_, t)| t.first.as_ref()?.parent.as_deref())
            .collect();
        let host_name = host_summary(host);
        let tasks: Vec<Task> = self
            .tasks
            .iter()
            .filter_map(|(name, record)| {
                let first = record.first.as_ref()?;
                Some(describe_task(
                    name,
                    record,
                    first,
                    parents.contains(name.as_str()),
                    &host_name,
                ))
            })
            .collect();
        App::observed(
            program.to_string(),
            format!(
                "written by mapwright's Legion mapper (-mapwright:app) from a run of {program} \
                 on {host_name}"
            ),
            tasks,
            "the mapper does not see which task's data another task reads",
            "Tasks, launch domains, variants, region names, privileges, fields, field sizes \
             and piece extents are as Legion reported them to the mapper during the run; work \
             is Realm's measurement of each point task."
                .into(),
            "the whole run is one iteration: per_iteration counts every launch of the run (the \
             mapper does not see the program's loops)"
                .into(),
        )
    }

    /// Writes the description (pretty JSON) to the recorder's file.
    pub fn write(&self, program: &str, host: &Machine) -> Result<(), String> {
        let app = self.describe(program, host);
        if app.tasks.is_empty() {
            return Err(format!(
                "mapwright: no task was mapped, so no application description was written to {}",
                self.path.display()
            ));
        }
        let text = serde_json::to_string_pretty(&app)
            .map_err(|e| format!("mapwright: cannot write the application description: {e}"))?;
        std::fs::write(&self.path, text + "\n").map_err(|e| {
            format!(
                "mapwright: cannot write the application description {}: {e}",
                self.path.display()
            )
        })
    }
}

/// `1 node: 4 CPU, 1 util` as the descriptions' notes name a host.
fn host_summary(host: &Machine) -> String {
    let kinds: Vec<String> = ProcKind::ALL
        .iter()
        .filter_map(|&k| {
            let n = host.procs_per_node(k);
            (n > 0).then(|| format!("{n} {}", k.dsl_name()))
        })
        .collect();
    format!(
        "{} node{}: {}",
        host.nodes(),
        if host.nodes() == 1 { "" } else { "s" },
        kinds.join(", ")
    )
}

fn describe_task(
    name: &str,
    record: &TaskRecord,
    first: &LaunchInfo,
    launches_others: bool,
    host: &str,
) -> Task {
    let mut guesses = Vec::new();
    let mut notes = Vec::new();
    let launched: u64 = record.launches.values().sum();
    // The top-level task is never launched through the mapper: it is
    // mapped once.
    let count = launched.max(u64::from(record.mapped > 0));
    let domain = match first.launch {
        Launch::Index => {
            // The domain most launches had; others are noted.
            let most = record
                .launches
                .iter()
                .max_by_key(|(_, n)| **n)
                .map(|(d, _)| d.clone())
                .unwrap_or_else(|| first.extents());
            if record.launches.len() > 1 {
                notes.push(format!(
                    "launched over {} different domains; {:?} the most often",
                    record.launches.len(),
                    most
                ));
            }
            most
        }
        Launch::Single => Vec::new(),
    };
    let regions: Vec<RegionArg> = first
        .regions
        .iter()
        .enumerate()
        .map(|(i, r)| region_arg(i as u32, r.privilege, record, &mut guesses))
        .collect();
    let work = if first.inner {
        Work {
            notes: "inner task: launches subtasks only".into(),
            ..Work::default()
        }
    } else if launches_others {
        Work {
            notes: format!(
                "launches other tasks: its measured time ({}) includes waiting for them and \
                 is left out",
                super::measured::seconds_text(record.total_ns as f64 * 1e-9)
            ),
            ..Work::default()
        }
    } else if record.runs > 0 {
        let mean_us = record.total_ns as f64 / record.runs as f64 / 1e3;
        Work {
            fixed_us: mean_us,
            notes: format!(
                "measured: mean of {} point-task runs on {host} (longest {:.1} us)",
                record.runs,
                record.max_ns as f64 / 1e3
            ),
            measured: Some(MeasuredWork {
                runs: record.runs,
                mean_us,
                max_us: record.max_ns as f64 / 1e3,
                on: record.kinds.iter().copied().collect(),
                host: host.to_string(),
            }),
            ..Work::default()
        }
    } else {
        guesses.push(
            "work unknown: no point of this task was measured (replayed from a trace, or run \
             without measurements)"
                .to_string(),
        );
        Work {
            notes: "not measured".into(),
            ..Work::default()
        }
    };
    notes.push(format!(
        "{count} launch{} and {} point task{} mapped in the recorded run",
        if count == 1 { "" } else { "es" },
        record.mapped,
        if record.mapped == 1 { "" } else { "s" }
    ));
    Task {
        name: name.to_string(),
        launch: first.launch,
        domain,
        variants: if first.variants.is_empty() {
            guesses.push("no variant reported; CPU assumed".into());
            vec![ProcKind::Cpu]
        } else {
            first.variants.clone()
        },
        regions,
        work,
        per_iteration: u32::try_from(count).unwrap_or(u32::MAX),
        setup_launches: 0,
        timed: true,
        parent: first.parent.clone(),
        inner: first.inner,
        node_local: Vec::new(),
        notes: notes.join("; "),
        guess: (!guesses.is_empty()).then(|| guesses.join("; ")),
    }
}

fn region_arg(
    index: u32,
    privilege: Privilege,
    record: &TaskRecord,
    guesses: &mut Vec<String>,
) -> RegionArg {
    let names = record.names.get(&index).cloned().unwrap_or_default();
    let mut names = names.into_iter();
    let name = names.next().unwrap_or_else(|| index.to_string());
    let aliases: Vec<String> = names.filter(|n| *n != name).collect();
    let mut notes = String::new();
    let mut guess = None;
    let (fields, dims, shape, elements, bytes) = match record.shapes.get(&index) {
        Some((largest, smallest)) => {
            if *smallest != largest.volume {
                notes = format!(
                    "pieces of {smallest} to {} elements; the largest is described",
                    largest.volume
                );
            }
            let extents = largest.extents();
            let shape = if extents.iter().product::<u64>() == largest.volume {
                extents.clone()
            } else {
                Vec::new()
            };
            (
                largest.fields.iter().map(|f| f.name.clone()).collect(),
                extents.len().max(1) as u32,
                shape,
                largest.volume,
                largest.bytes(),
            )
        }
        None => {
            let why = format!(
                "argument {index} was never mapped physically in the recorded run: its size is \
                 unknown"
            );
            guesses.push(why.clone());
            guess = Some(why);
            (Vec::new(), 1, Vec::new(), 0, 0)
        }
    };
    RegionArg {
        name,
        aliases,
        launches: Vec::new(),
        index,
        privilege,
        fields,
        dims,
        shape,
        elements,
        bytes,
        virtual_by_app: false,
        notes,
        guess,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::legion::launch::RegionInfo;

    fn launch(task: &str, parent: Option<&str>, index: bool, names: &[&str]) -> LaunchInfo {
        LaunchInfo {
            task: task.into(),
            parent: parent.map(str::to_string),
            launch: if index { Launch::Index } else { Launch::Single },
            lo: if index { vec![0] } else { Vec::new() },
            hi: if index { vec![3] } else { Vec::new() },
            variants: vec![ProcKind::Cpu],
            inner: false,
            regions: vec![RegionInfo {
                names: names.iter().map(|n| n.to_string()).collect(),
                privilege: Privilege::ReadWrite,
                fields: 2,
            }],
        }
    }

    fn shape(volume: i64) -> RegionShape {
        RegionShape {
            index: 0,
            lo: vec![0],
            hi: vec![volume - 1],
            volume: volume as u64,
            fields: vec![
                FieldShape {
                    name: "charge".into(),
                    bytes: 4,
                },
                FieldShape {
                    name: "voltage".into(),
                    bytes: 8,
                },
            ],
        }
    }

    fn ran(task: &str, ns: i64) -> RanTask {
        RanTask {
            ran: task.into(),
            uid: 1,
            point: vec![0],
            proc_kind: "CPU".into(),
            node: 0,
            proc: 0,
            ready_ns: 0,
            start_ns: 1_000,
            end_ns: 1_000 + ns,
        }
    }

    fn host() -> Machine {
        Machine::preset("2x4gpu").unwrap()
    }

    #[test]
    fn a_recorded_run_becomes_a_valid_description_with_measured_work() {
        let mut r = AppRecorder::new(PathBuf::from("/nonexistent/app.json"));
        r.remember(0, &launch("main", None, false, &[]));
        r.mapped(0);
        r.ran(&ran("main", 9_000_000));
        // The index launch, then two of its points with their pieces.
        r.remember(1, &launch("update", Some("main"), true, &["pieces", "all"]));
        for _ in 0..3 {
            r.launched(1);
        }
        r.remember(
            2,
            &launch("update", Some("main"), true, &["", "pieces", "all"]),
        );
        r.mapped(2);
        r.shapes(2, vec![shape(100)]);
        r.remember(3, &launch("update", Some("main"), true, &["ghost", "all"]));
        r.mapped(3);
        r.shapes(3, vec![shape(40)]);
        r.ran(&ran("update", 2_000));
        r.ran(&ran("update", 4_000));
        let app = r.describe("prog", &host());
        app.validate().unwrap();
        let main = app.task("main").unwrap();
        assert_eq!(main.per_iteration, 1);
        assert!(
            main.work.measured.is_none() && main.work.notes.contains("left out"),
            "{:?}",
            main.work
        );
        let update = app.task("update").unwrap();
        assert_eq!(update.launch, Launch::Index);
        assert_eq!(update.domain, vec![4]);
        assert_eq!(update.per_iteration, 3);
        assert_eq!(update.parent.as_deref(), Some("main"));
        let arg = &update.regions[0];
        assert_eq!(arg.name, "pieces");
        assert_eq!(arg.aliases, vec!["all".to_string(), "ghost".to_string()]);
        assert_eq!(
            arg.fields,
            vec!["charge".to_string(), "voltage".to_string()]
        );
        assert_eq!((arg.elements, arg.bytes), (100, 1200));
        assert_eq!(arg.shape, vec![100]);
        assert!(arg.notes.contains("40 to 100"), "{}", arg.notes);
        let m = update.work.measured.as_ref().unwrap();
        assert_eq!(m.runs, 2);
        assert!((m.mean_us - 3.0).abs() < 1e-9 && (update.work.fixed_us - 3.0).abs() < 1e-9);
        assert_eq!(m.on, vec![ProcKind::Cpu]);
        assert!(update.guess.is_none(), "{:?}", update.guess);
    }

    #[test]
    fn what_was_never_mapped_or_measured_is_marked_unknown() {
        let mut r = AppRecorder::new(PathBuf::from("/nonexistent/app.json"));
        r.remember(0, &launch("main", None, false, &[]));
        r.mapped(0);
        r.remember(1, &launch("leaf", Some("main"), false, &["cells"]));
        r.launched(1);
        let app = r.describe("prog", &host());
        app.validate().unwrap();
        let leaf = app.task("leaf").unwrap();
        let guess = leaf.guess.as_deref().unwrap();
        assert!(
            guess.contains("work unknown") && guess.contains("size is unknown"),
            "{guess}"
        );
        assert!(leaf.regions[0].guess.is_some());
        // Writing where no file can be made is an error, not a panic.
        assert!(r.write("prog", &host()).is_err());
    }
}
