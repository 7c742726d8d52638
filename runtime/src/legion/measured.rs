//! A real run's [`Metrics`] from its decision log: what Realm measured for
//! every task and copy mapwright's mapper mapped (`ran` and `copy` lines),
//! with the same keys and meanings as the simulator's, so that AutoGuide,
//! the proposers, the prompt and the editor read them unchanged.
//!
//! What a measurement covers: every task and copy the mapper mapped.
//! Legion replays a traced loop's later iterations without asking the
//! mapper, so those repeats are not measured again; the replay repeats the
//! same decisions, so shares and imbalance still describe the run.
//! [`Metrics::coverage`] says how many were measured.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::log::{read_copies, read_host, read_log, read_ran, CopiedData, MappedTask, RanTask};
use crate::backend::{Metrics, MetricsBasis, TaskFigures};
use crate::machine::{Machine, ProcKind};

/// The metrics of the run that wrote `log` (a decision log written with
/// measurements). The log's host line (else `machine`, the host the run
/// was on) lists the processors no task ran on, so that idle ones count;
/// the run's [`Timeline`](super::timeline::Timeline) comes with them, from
/// the same parsed lines. None when the log holds no measurement (an older
/// mapper, or `-mapwright:no-measure`).
pub fn metrics_from_log(log: &str, machine: Option<&Machine>) -> Result<Option<Metrics>, String> {
    let mapped = read_log(log)?;
    let ran = read_ran(log)?;
    let copies = read_copies(log)?;
    if ran.is_empty() {
        return Ok(None);
    }
    let host = read_host(log).map(|h| h.host).unwrap_or_default();
    let mut metrics = measured_metrics(&mapped, &ran, &copies, &host, machine);
    metrics.timeline = super::timeline::Timeline::from_parts(&mapped, &ran, &copies, &host)
        .map(std::sync::Arc::new);
    Ok(Some(metrics))
}

/// [`metrics_from_log`] on parsed lines.
pub fn measured_metrics(
    mapped: &[MappedTask],
    ran: &[RanTask],
    copies: &[CopiedData],
    host: &[String],
    machine: Option<&Machine>,
) -> Metrics {
    let by_uid: HashMap<u64, &MappedTask> = mapped.iter().map(|m| (m.uid, m)).collect();
    // The top-level task runs for the whole program: its time is the run's,
    // not a task's.
    let counted: Vec<&RanTask> = ran
        .iter()
        .filter(|r| by_uid.get(&r.uid).is_none_or(|m| m.parent.is_some()))
        .collect();
    let mut m = Metrics {
        basis: MetricsBasis::Measured,
        ..Metrics::default()
    };
    let mut kinds_used: HashSet<String> = HashSet::new();
    for r in &counted {
        let label = proc_label(r);
        *m.task_time_s.entry(r.ran.clone()).or_default() += r.seconds();
        *m.proc_busy_s.entry(label.clone()).or_default() += r.seconds();
        kinds_used.insert(r.proc_kind.clone());
        let t = m.tasks.entry(r.ran.clone()).or_default();
        t.runs += 1;
        t.max_s = t.max_s.max(r.seconds());
        *t.points_per_proc.entry(label).or_default() += 1;
    }
    for (name, t) in m.tasks.iter_mut() {
        t.mean_s = m.task_time_s[name] / f64::from(t.runs.max(1));
    }
    let kind_of = |label: &str| {
        label
            .split_once(' ')
            .map(|(_, p)| p.trim_end_matches(|c: char| c.is_ascii_digit()).to_string())
    };
    if !host.is_empty() {
        for label in host {
            if kind_of(label).is_some_and(|k| kinds_used.contains(&k)) {
                m.proc_busy_s.entry(label.clone()).or_default();
            }
        }
    } else if let Some(machine) = machine {
        for kind in ProcKind::ALL {
            if !kinds_used.contains(kind.dsl_name()) {
                continue;
            }
            for node in 0..machine.nodes() {
                for p in 0..machine.procs_per_node(kind) {
                    m.proc_busy_s
                        .entry(format!("node{node} {}{p}", kind.dsl_name()))
                        .or_default();
                }
            }
        }
    }
    m.imbalance = imbalance(&m.proc_busy_s);
    // Fills initialise an instance in place: no data moves between
    // memories, so they are neither copy volume nor copy time.
    let moved: Vec<&CopiedData> = copies.iter().filter(|c| !c.fill).collect();
    for c in &moved {
        let src = c.src.as_deref().unwrap_or("?");
        *m.copy_bytes
            .entry(format!("{src} -> {}", c.dst))
            .or_default() += c.bytes as f64;
        let t = m.tasks.entry(c.copy.clone()).or_default();
        *t.copy_bytes_per_arg.entry(c.index).or_default() += c.bytes as f64;
    }
    m.copy_time_s = exposed_copy_seconds(&counted, &moved);
    let mut seen: HashSet<(String, u64)> = HashSet::new();
    for task in mapped {
        for r in &task.regions {
            if let (Some(at), Some(bytes), Some(id)) = (&r.at, r.bytes, r.instance_id) {
                if seen.insert((at.clone(), id)) {
                    *m.memory_bytes.entry(at.clone()).or_default() += bytes as f64;
                }
            }
        }
    }
    m.coverage = format!(
        "measured by Realm for the mapper: {} task runs, {} copies and {} fills, all the mapper mapped \
         (Legion replays a traced loop's repeats without the mapper, and they are not measured again); \
         memory is the distinct instances mapped in each memory",
        counted.len(),
        moved.len(),
        copies.len() - moved.len()
    );
    m
}

/// `node0 CPU1`, as the simulator names processors.
fn proc_label(r: &RanTask) -> String {
    format!("node{} {}{}", r.node, r.proc_kind, r.proc)
}

/// The busiest processor's busy time over the mean (1 = even; 0 with no
/// busy processor).
fn imbalance(busy: &BTreeMap<String, f64>) -> f64 {
    if busy.is_empty() {
        return 0.0;
    }
    let mean = busy.values().sum::<f64>() / busy.len() as f64;
    let max = busy.values().copied().fold(0.0, f64::max);
    if mean > 0.0 {
        max / mean
    } else {
        0.0
    }
}

/// Seconds during which some copy or fill was under way and no task ran:
/// the copy time no computation hid.
fn exposed_copy_seconds(tasks: &[&RanTask], copies: &[&CopiedData]) -> f64 {
    let copying = union(copies.iter().map(|c| (c.start_ns, c.end_ns)));
    let running = union(tasks.iter().map(|t| (t.start_ns, t.end_ns)));
    let mut exposed = 0i64;
    let mut j = 0;
    for (start, end) in copying {
        let mut covered = 0i64;
        while j < running.len() && running[j].1 <= start {
            j += 1;
        }
        let mut k = j;
        while k < running.len() && running[k].0 < end {
            covered += running[k].1.min(end) - running[k].0.max(start);
            k += 1;
        }
        exposed += (end - start) - covered;
    }
    exposed.max(0) as f64 * 1e-9
}

/// Sorted, disjoint intervals covering `spans` (empty ones dropped).
fn union(spans: impl Iterator<Item = (i64, i64)>) -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = spans.filter(|(s, e)| e > s).collect();
    v.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The per-task figures of a run in one line each, for the model's
/// prompt and the CLI: `calculate_new_currents: 56 runs, mean 9.1 ms,
/// max 12.0 ms, on node0 CPU0 x56; copies 1.2 MB (arg 2)`.
pub fn describe_task(name: &str, t: &TaskFigures) -> String {
    let procs: Vec<String> = t
        .points_per_proc
        .iter()
        .map(|(p, n)| format!("{p} x{n}"))
        .collect();
    let mut line = format!(
        "{name}: {} runs, mean {}, max {}, on {}",
        t.runs,
        seconds_text(t.mean_s),
        seconds_text(t.max_s),
        procs.join(", ")
    );
    if !t.copy_bytes_per_arg.is_empty() {
        let args: Vec<String> = t
            .copy_bytes_per_arg
            .iter()
            .map(|(i, b)| format!("arg {i} {}", bytes(*b)))
            .collect();
        line.push_str(&format!("; copied in: {}", args.join(", ")));
    }
    line
}

/// `1.20 s`, `57.4 ms`, `850 µs`: a measured time as the CLI, the prompt
/// and the editor show it.
pub fn seconds_text(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

fn bytes(b: f64) -> String {
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"task":"top","uid":1,"point":[],"proc_kind":"CPU","node":0,"proc":0,"regions":[]}
{"task":"work","parent":"top","uid":2,"point":[0],"proc_kind":"CPU","node":0,"proc":0,"regions":[{"index":0,"instance":"physical","memory":"SYSMEM","bytes":800,"instance_id":7,"at":"node0 SYSMEM0"}]}
{"task":"work","parent":"top","uid":3,"point":[1],"proc_kind":"CPU","node":0,"proc":0,"regions":[{"index":0,"instance":"physical","memory":"SYSMEM","bytes":800,"instance_id":7,"at":"node0 SYSMEM0"}]}
{"copy":"work","uid":3,"index":0,"src":"node0 SYSMEM0","dst":"node0 SYSMEM0","bytes":400,"start_ns":0,"end_ns":1000000}
{"copy":"work","uid":2,"index":0,"fill":true,"dst":"node0 SYSMEM0","bytes":800,"start_ns":0,"end_ns":10}
{"ran":"work","uid":2,"point":[0],"proc_kind":"CPU","node":0,"proc":0,"ready_ns":0,"start_ns":1000000,"end_ns":3000000}
{"ran":"work","uid":3,"point":[1],"proc_kind":"CPU","node":0,"proc":0,"ready_ns":0,"start_ns":3000000,"end_ns":5000000}
{"ran":"top","uid":1,"point":[],"proc_kind":"CPU","node":0,"proc":0,"ready_ns":0,"start_ns":0,"end_ns":9000000}
"#;

    #[test]
    fn a_log_becomes_the_simulators_metrics_without_the_top_level_task() {
        let machine = Machine::preset("p100x4");
        let m = metrics_from_log(LOG, machine.as_ref()).unwrap().unwrap();
        assert_eq!(m.basis, MetricsBasis::Measured);
        assert!((m.task_time_s["work"] - 0.004).abs() < 1e-12);
        assert!(!m.task_time_s.contains_key("top"));
        assert!((m.proc_busy_s["node0 CPU0"] - 0.004).abs() < 1e-12);
        assert_eq!(m.copy_bytes["node0 SYSMEM0 -> node0 SYSMEM0"], 400.0);
        assert_eq!(m.copy_bytes.len(), 1, "fills are not copies");
        // One instance shared by both points counts once.
        assert_eq!(m.memory_bytes["node0 SYSMEM0"], 800.0);
        // The copy ran for 1 ms while no task ran.
        assert!((m.copy_time_s - 0.001).abs() < 1e-9, "{}", m.copy_time_s);
        let work = &m.tasks["work"];
        assert_eq!((work.runs, work.points_per_proc["node0 CPU0"]), (2, 2));
        assert_eq!(work.copy_bytes_per_arg[&0], 400.0);
        let machine = machine.expect("preset");
        // The host's idle CPUs count: all the work on one of n.
        let n = (machine.nodes() * machine.procs_per_node(ProcKind::Cpu)) as usize;
        assert!(n > 1);
        assert_eq!(m.proc_busy_s.len(), n);
        assert!((m.imbalance - n as f64).abs() < 1e-9, "{}", m.imbalance);
        assert!(describe_task("work", work).contains("2 runs, mean 2.0 ms"));
    }

    #[test]
    fn the_logs_host_line_names_the_idle_processors() {
        let log = format!("{{\"host\":[\"node0 CPU0\",\"node0 CPU1\",\"node0 UTIL0\"]}}\n{LOG}");
        let m = metrics_from_log(&log, None).unwrap().unwrap();
        let procs: Vec<&str> = m.proc_busy_s.keys().map(String::as_str).collect();
        assert_eq!(procs, ["node0 CPU0", "node0 CPU1"]);
        assert!((m.imbalance - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_log_without_measurements_gives_none() {
        let only_decisions: String = LOG
            .lines()
            .filter(|l| l.starts_with("{\"task\""))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(metrics_from_log(&only_decisions, None).unwrap().is_none());
        assert!(metrics_from_log("{not json\n", None).is_err());
    }

    #[test]
    fn exposed_copy_time_subtracts_running_tasks() {
        let t = RanTask {
            ran: "t".into(),
            uid: 1,
            point: vec![],
            proc_kind: "CPU".into(),
            node: 0,
            proc: 0,
            ready_ns: 0,
            start_ns: 5,
            end_ns: 15,
        };
        let c = |s, e| CopiedData {
            copy: "t".into(),
            uid: 1,
            index: 0,
            fill: false,
            src: None,
            dst: String::new(),
            bytes: 1,
            start_ns: s,
            end_ns: e,
        };
        let ns = |x: f64| (x * 1e9).round() as i64;
        assert_eq!(ns(exposed_copy_seconds(&[&t], &[&c(0, 10), &c(8, 20)])), 10);
        assert_eq!(ns(exposed_copy_seconds(&[&t], &[&c(6, 9)])), 0);
        assert_eq!(ns(exposed_copy_seconds(&[], &[&c(0, 3), &c(1, 2)])), 3);
    }
}
