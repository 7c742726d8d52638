//! The decision log: one JSON object per line for every task the mapper
//! mapped, with what it realised (the processor the task ran on, the memory
//! and layout of each region argument's instance), and its comparison with
//! `explain`'s decisions for the same host ([`compare_with_decisions`]).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::decisions::{Decisions, InstanceKind};
use crate::resolve_mapping::layout_text;

/// One region argument of a mapped task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedRegion {
    /// Argument index.
    pub index: u32,
    /// `physical`, `virtual` or `none` (not mapped: no access or no fields).
    pub instance: String,
    /// Kind of the memory the instance is in (`SYSMEM`, ...), for
    /// physical instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// The layout asked for, as `explain` prints it (`SOA C_order`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// Whether Legion's instance satisfies that layout (`entails`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_holds: Option<bool>,
    /// Whether the task got instances that already held the region's
    /// current data in that memory (Legion's valid instances), so no copy
    /// was needed; false where the mapper made or found another instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused: Option<bool>,
    /// Size of the argument's instances, bytes (physical instances, in a
    /// log written with measurements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Legion's id of the (first) instance: arguments that share one have
    /// the same id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<u64>,
    /// The memory they are in, as the metrics name it (`node0 SYSMEM0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// One mapped task (one point of an index launch, or one single task).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedTask {
    pub task: String,
    /// The task that launched it (none for the top-level task, whose
    /// measured time is the whole run and is left out of the metrics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Whether its variant is an inner task (it only launches others).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inner: bool,
    /// Legion's unique id of the task: the [`RanTask`] line with the same
    /// id says where and when it ran.
    #[serde(default)]
    pub uid: u64,
    /// The launch point (index launches) or the parent's point (single
    /// tasks launched from an index point); empty otherwise.
    pub point: Vec<i64>,
    /// Processor kind it runs on (`CPU`, ...).
    pub proc_kind: String,
    /// Node (address space) and index of the processor among the node's
    /// processors of that kind, in Legion's processor-query order.
    pub node: u32,
    pub proc: u32,
    /// How many processors of the node it was given as targets: 1 where a
    /// statement or slicing placed it; all of the kind (as the reference
    /// does for a task no `IndexTaskMap`/`SingleTaskMap` places) where
    /// Legion may run it on whichever is free first. `proc` is the first.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub targets: u32,
    pub regions: Vec<MappedRegion>,
}

/// A [`MappedTask`] line written from borrowed parts: the same JSON (the
/// test `a_borrowed_line_is_the_owned_line` compares them), without
/// building the owned line first. Every `map_task` of a logged run writes
/// one, and building it (names, layouts and memory labels copied) was most
/// of the 5-7 µs a call that logging added on pennant.
#[derive(Debug, Serialize)]
pub struct MappedTaskLine<'a> {
    pub task: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub inner: bool,
    pub uid: u64,
    pub point: &'a [i64],
    pub proc_kind: &'a str,
    pub node: u32,
    pub proc: u32,
    #[serde(skip_serializing_if = "is_one")]
    pub targets: u32,
    pub regions: &'a [MappedRegionLine<'a>],
}

impl MappedTaskLine<'_> {
    /// The line's JSON into `out`, cleared first; false if it could not be
    /// written (nothing then goes into the log).
    pub fn write_into(&self, out: &mut Vec<u8>) -> bool {
        out.clear();
        serde_json::to_writer(out, self).is_ok()
    }
}

/// A [`MappedRegion`] of a [`MappedTaskLine`].
#[derive(Debug, Serialize)]
pub struct MappedRegionLine<'a> {
    pub index: u32,
    pub instance: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout_holds: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reused: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<MemoryLabel<'a>>,
}

/// `node{node} {memory}{index}` ([`MappedRegion::at`]), written straight
/// into the line.
#[derive(Debug, Clone, Copy)]
pub struct MemoryLabel<'a> {
    pub node: u32,
    pub memory: &'a str,
    pub index: u32,
}

impl Serialize for MemoryLabel<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!(
            "node{} {}{}",
            self.node, self.memory, self.index
        ))
    }
}

/// Where and when a mapped task ran, as Realm measured it for the mapper
/// (`report_profiling`): one line per task, after the task ended, in a log
/// written with `-mapwright:log`. A task Legion replays from a trace (it
/// memoizes by default, as the reference's Legion 25.12 does) is neither
/// mapped nor measured again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RanTask {
    /// The task's name.
    pub ran: String,
    /// Its [`MappedTask::uid`].
    pub uid: u64,
    pub point: Vec<i64>,
    pub proc_kind: String,
    /// The processor it ran on: node, and index among the node's
    /// processors of its kind (as [`MappedTask::proc`]).
    pub node: u32,
    pub proc: u32,
    /// Nanoseconds from the start of the program (Realm's clock): when it
    /// was ready to run, when it started and when it ended.
    pub ready_ns: i64,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// A copy or fill Legion made for a mapped task's region argument, as
/// Realm measured it for the mapper (`report_profiling`). Copies Legion
/// replays from a trace are not measured again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopiedData {
    /// The task it was made for.
    pub copy: String,
    /// Its [`MappedTask::uid`].
    pub uid: u64,
    /// The region argument.
    pub index: u32,
    /// A fill (no source) rather than a copy.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fill: bool,
    /// Source and destination memories (`node0 SYSMEM0`); no source for a
    /// fill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    pub dst: String,
    /// Bytes moved (or filled).
    pub bytes: u64,
    /// Nanoseconds from the start of the program (Realm's clock).
    pub start_ns: i64,
    pub end_ns: i64,
}

impl CopiedData {
    /// Seconds it took.
    pub fn seconds(&self) -> f64 {
        (self.end_ns - self.start_ns).max(0) as f64 * 1e-9
    }
}

impl RanTask {
    /// Seconds it ran.
    pub fn seconds(&self) -> f64 {
        (self.end_ns - self.start_ns).max(0) as f64 * 1e-9
    }
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// The log file. Measurements are written in batches: at most
/// [`FLUSH_INTERVAL`] after such a line was written it is in the file (a
/// line at a time cost a system call per task and copy measured), and
/// everything at [`DecisionLog::flush`] (the mapper flushes before it stops
/// a program and at exit) and when the log is dropped. A mapped task's
/// decisions go out at once ([`DecisionLog::write_now`]).
pub struct DecisionLog {
    out: BufWriter<File>,
    flushed: std::time::Instant,
}

/// How long a written line may wait in the buffer.
pub const FLUSH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(200);

impl DecisionLog {
    /// Creates (truncates) the log at `path`.
    pub fn create(path: &Path) -> Result<DecisionLog, String> {
        let file = File::create(path).map_err(|e| {
            format!(
                "error: cannot write the decision log {}: {e}",
                path.display()
            )
        })?;
        Ok(DecisionLog {
            out: BufWriter::with_capacity(1 << 16, file),
            flushed: std::time::Instant::now(),
        })
    }

    /// Appends one line; flushes when the last flush is
    /// [`FLUSH_INTERVAL`] old, so that a run that dies later leaves all
    /// but its last moments.
    pub fn write(&mut self, mapped: &impl Serialize) {
        // A full disk must not abort the program being mapped.
        if serde_json::to_writer(&mut self.out, mapped).is_ok() {
            let _ = self.out.write_all(b"\n");
        }
        if self.flushed.elapsed() >= FLUSH_INTERVAL {
            self.flush();
        }
    }

    /// Appends one line and writes it out at once with everything before
    /// it: a mapped task's decisions must be in the file even when the
    /// program aborts right after (a failed assertion skips the exit
    /// hook), as the measurements need not.
    /// One line already serialized (a [`MappedTaskLine`] the mapper wrote
    /// into its own buffer), flushed as [`DecisionLog::write`] flushes.
    pub fn write_line(&mut self, line: &[u8]) {
        let _ = self.out.write_all(line);
        let _ = self.out.write_all(b"\n");
        if self.flushed.elapsed() >= FLUSH_INTERVAL {
            self.flush();
        }
    }

    pub fn write_now(&mut self, line: &impl Serialize) {
        if serde_json::to_writer(&mut self.out, line).is_ok() {
            let _ = self.out.write_all(b"\n");
        }
        self.flush();
    }

    /// Writes out everything written so far.
    pub fn flush(&mut self) {
        let _ = self.out.flush();
        self.flushed = std::time::Instant::now();
    }
}

/// The log's first line: every processor of the host the run is on
/// (`node0 CPU0`, ...), so that the ones no task ran on are seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostLine {
    pub host: Vec<String>,
}

impl HostLine {
    /// The processors of `machine`, named as the metrics name them.
    pub fn of(machine: &crate::machine::Machine) -> HostLine {
        let mut host = Vec::new();
        for node in 0..machine.nodes() {
            for kind in crate::machine::ProcKind::ALL {
                for p in 0..machine.procs_per_node(kind) {
                    host.push(format!("node{node} {}{p}", kind.dsl_name()));
                }
            }
        }
        HostLine { host }
    }
}

/// Reads the log's [`HostLine`], if it has one.
pub fn read_host(text: &str) -> Option<HostLine> {
    text.lines()
        .find(|l| l.trim_start().starts_with("{\"host\""))
        .and_then(|l| serde_json::from_str(l).ok())
}

/// Whether a log line is a [`RanTask`].
fn is_ran(line: &str) -> bool {
    line.trim_start().starts_with("{\"ran\"")
}

/// Whether a log line is a [`CopiedData`].
fn is_copy(line: &str) -> bool {
    line.trim_start().starts_with("{\"copy\"")
}

/// Reads a decision log's mapped tasks (blank lines and measurement lines
/// skipped).
pub fn read_log(text: &str) -> Result<Vec<MappedTask>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            !l.trim().is_empty()
                && !is_ran(l)
                && !is_copy(l)
                && !l.trim_start().starts_with("{\"host\"")
        })
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// Reads a decision log's [`CopiedData`] lines.
pub fn read_copies(text: &str) -> Result<Vec<CopiedData>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| is_copy(l))
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// Reads a decision log's [`RanTask`] lines: where and when each mapped
/// task ran.
pub fn read_ran(text: &str) -> Result<Vec<RanTask>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| is_ran(l))
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// Where a real run's decision log differs from `decisions` (what
/// `explain` says for the same mapper, application and host): one line per
/// difference, empty when every mapped task, region argument and launch
/// point agrees. A task the log has and the decisions lack is a
/// difference; a task the run never mapped (the top-level task) is not.
pub fn compare_with_decisions(log: &[MappedTask], decisions: &Decisions) -> Vec<String> {
    let mut out = Vec::new();
    for m in log {
        let Some(t) = decisions.tasks.iter().find(|t| t.task == m.task) else {
            out.push(format!("{}: mapped by the run, unknown to explain", m.task));
            continue;
        };
        let at = if m.point.is_empty() {
            String::new()
        } else {
            format!(" point {:?}", m.point)
        };
        if t.proc_kind.dsl_name() != m.proc_kind {
            out.push(format!(
                "{}{at}: ran on {}, explain says {}",
                m.task,
                m.proc_kind,
                t.proc_kind.dsl_name()
            ));
        }
        let expected = t
            .placement
            .iter()
            .find(|p| p.point == m.point)
            .or_else(|| (t.placement.len() == 1).then(|| &t.placement[0]));
        match expected {
            Some(p) if (p.node, p.proc) != (m.node, m.proc) => out.push(format!(
                "{}{at}: ran on node {} {} {}, explain says node {} {} {}",
                m.task, m.node, m.proc_kind, m.proc, p.node, m.proc_kind, p.proc
            )),
            Some(_) => {}
            None => out.push(format!("{}{at}: explain places no such point", m.task)),
        }
        for r in &m.regions {
            let Some(d) = t.regions.iter().find(|d| d.index == r.index) else {
                out.push(format!(
                    "{} argument {}: unknown to explain",
                    m.task, r.index
                ));
                continue;
            };
            let expected_instance = match d.instance {
                InstanceKind::Physical => "physical",
                InstanceKind::NoAccess => "none",
                _ => "virtual",
            };
            if r.instance != expected_instance {
                out.push(format!(
                    "{} argument {}: {} instance, explain says {expected_instance}",
                    m.task, r.index, r.instance
                ));
                continue;
            }
            if r.instance != "physical" {
                continue;
            }
            let memory = d.memory.to_string();
            if r.memory.as_deref() != Some(memory.as_str()) {
                out.push(format!(
                    "{} argument {}: in {}, explain says {memory}",
                    m.task,
                    r.index,
                    r.memory.as_deref().unwrap_or("no memory")
                ));
            }
            let layout = layout_text(&d.layout);
            if r.layout.as_deref() != Some(layout.as_str()) {
                out.push(format!(
                    "{} argument {}: layout {}, explain says {layout}",
                    m.task,
                    r.index,
                    r.layout.as_deref().unwrap_or("none")
                ));
            }
            if r.layout_holds == Some(false) {
                out.push(format!(
                    "{} argument {}: Legion's instance does not satisfy {layout}",
                    m.task, r.index
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn decisions_are_written_at_once_and_measurements_in_order_behind_them() {
        let path = std::env::temp_dir().join(format!("mapwright-log-{}.jsonl", std::process::id()));
        let mut log = DecisionLog::create(&path).unwrap();
        log.write(&HostLine {
            host: vec!["node0 CPU0".into()],
        });
        log.write_now(&HostLine {
            host: vec!["node0 CPU1".into()],
        });
        // Both are in the file before any flush or drop, in order.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.lines().next().unwrap().contains("CPU0"));
        log.write(&HostLine {
            host: vec!["node0 CPU2".into()],
        });
        drop(log);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3);
        let _ = std::fs::remove_file(&path);
    }
    use super::*;

    #[test]
    fn a_borrowed_line_is_the_owned_line() {
        let regions = [
            MappedRegionLine {
                index: 0,
                instance: "physical",
                memory: Some("SYSMEM"),
                layout: Some("SOA C_order"),
                layout_holds: Some(true),
                reused: Some(false),
                bytes: Some(4096),
                instance_id: Some(7),
                at: Some(MemoryLabel {
                    node: 1,
                    memory: "SYSMEM",
                    index: 0,
                }),
            },
            MappedRegionLine {
                index: 1,
                instance: "virtual",
                memory: None,
                layout: None,
                layout_holds: None,
                reused: None,
                bytes: None,
                instance_id: None,
                at: None,
            },
        ];
        for (parent, inner, targets) in [(Some("main"), true, 4), (None, false, 1)] {
            let line = MappedTaskLine {
                task: "calc",
                parent,
                inner,
                uid: 42,
                point: &[3, 1],
                proc_kind: "CPU",
                node: 1,
                proc: 2,
                targets,
                regions: &regions,
            };
            let text = serde_json::to_string(&line).unwrap();
            let owned: MappedTask = serde_json::from_str(&text).unwrap();
            assert_eq!(serde_json::to_string(&owned).unwrap(), text);
            assert_eq!(owned.regions[0].at.as_deref(), Some("node1 SYSMEM0"));
            assert_eq!(owned.parent.as_deref(), parent);
            assert_eq!((owned.inner, owned.targets), (inner, targets));
        }
    }

    #[test]
    fn mapped_and_ran_lines_are_read_apart() {
        let text = concat!(
            r#"{"task":"init_nodes","uid":7,"point":[3],"proc_kind":"CPU","node":0,"proc":0,"targets":4,"regions":[]}"#,
            "\n",
            r#"{"ran":"init_nodes","uid":7,"point":[3],"proc_kind":"CPU","node":0,"proc":2,"ready_ns":10,"start_ns":20,"end_ns":1000020}"#,
            "\n\n",
            r#"{"task":"old_log_line","point":[],"proc_kind":"CPU","node":0,"proc":1,"regions":[]}"#,
            "\n"
        );
        let mapped = read_log(text).unwrap();
        assert_eq!(mapped.len(), 2);
        assert_eq!((mapped[0].uid, mapped[0].targets), (7, 4));
        // A log from before targets and uids were logged still reads.
        assert_eq!((mapped[1].uid, mapped[1].targets), (0, 1));
        let ran = read_ran(text).unwrap();
        assert_eq!(ran.len(), 1);
        assert_eq!((ran[0].uid, ran[0].proc), (7, 2));
        assert!((ran[0].seconds() - 1e-3).abs() < 1e-12);
        // One target is not written.
        let line = serde_json::to_string(&mapped[1]).unwrap();
        assert!(!line.contains("targets"), "{line}");
    }
}
