//! A real run's timeline, from its decision log: every measured task run
//! on its processor and every copy into its memory, in seconds from the
//! first of them, as Legion Prof draws them. The optimizer's report draws
//! it (`--report`), so the user sees where the time went in the best run.

use std::collections::BTreeSet;

use super::log::{read_copies, read_host, read_log, read_ran, CopiedData, MappedTask, RanTask};

/// One measured task run.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineRun {
    /// Index into [`Timeline::procs`].
    pub proc: usize,
    pub task: String,
    pub start_s: f64,
    pub end_s: f64,
}

/// One measured copy or fill.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineCopy {
    /// The memory it went into (`node0 SYSMEM0`).
    pub into: String,
    /// The task it was made for.
    pub task: String,
    pub bytes: u64,
    pub fill: bool,
    pub start_s: f64,
    pub end_s: f64,
}

/// Task runs per processor and copies, as measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    /// Every processor of the host (`node0 CPU0`, ...), idle ones too.
    pub procs: Vec<String>,
    pub runs: Vec<TimelineRun>,
    pub copies: Vec<TimelineCopy>,
    /// Seconds from the first run or copy to the last one's end.
    pub span_s: f64,
}

impl Timeline {
    /// The timeline of the log `text`; None where it has no measured task
    /// run. The top-level task (its run is the whole program) is left out.
    pub fn from_log(text: &str) -> Option<Timeline> {
        let ran = read_ran(text).ok()?;
        let copies = read_copies(text).unwrap_or_default();
        let mapped = read_log(text).unwrap_or_default();
        let host = read_host(text).map(|h| h.host).unwrap_or_default();
        Timeline::from_parts(&mapped, &ran, &copies, &host)
    }

    /// [`Timeline::from_log`] on the log's parsed lines.
    pub fn from_parts(
        mapped: &[MappedTask],
        ran: &[RanTask],
        copies: &[CopiedData],
        host: &[String],
    ) -> Option<Timeline> {
        let top: BTreeSet<u64> = mapped
            .iter()
            .filter(|t| t.parent.is_none())
            .map(|t| t.uid)
            .collect();
        let ran: Vec<&RanTask> = ran.iter().filter(|r| !top.contains(&r.uid)).collect();
        if ran.is_empty() {
            return None;
        }
        let label = |node: u32, kind: &str, proc: u32| format!("node{node} {kind}{proc}");
        let mut procs: Vec<String> = host.to_vec();
        for r in &ran {
            let l = label(r.node, &r.proc_kind, r.proc);
            if !procs.contains(&l) {
                procs.push(l);
            }
        }
        // Only the kinds that ran something: a CPU run's picture has no
        // row per utility processor.
        let kinds: BTreeSet<&str> = ran.iter().map(|r| r.proc_kind.as_str()).collect();
        procs.retain(|p| kinds.contains(kind_of(p)));
        let t0 = ran
            .iter()
            .map(|r| r.start_ns)
            .chain(copies.iter().map(|c| c.start_ns))
            .min()
            .unwrap_or(0);
        let s = |ns: i64| (ns - t0) as f64 * 1e-9;
        let runs: Vec<TimelineRun> = ran
            .iter()
            .map(|r| TimelineRun {
                proc: procs
                    .iter()
                    .position(|p| *p == label(r.node, &r.proc_kind, r.proc))
                    .unwrap_or(0),
                task: r.ran.clone(),
                start_s: s(r.start_ns),
                end_s: s(r.end_ns.max(r.start_ns)),
            })
            .collect();
        let copies: Vec<TimelineCopy> = copies
            .iter()
            .map(|c| TimelineCopy {
                into: c.dst.clone(),
                task: c.copy.clone(),
                bytes: c.bytes,
                fill: c.fill,
                start_s: s(c.start_ns),
                end_s: s(c.end_ns.max(c.start_ns)),
            })
            .collect();
        let span_s = runs
            .iter()
            .map(|r| r.end_s)
            .chain(copies.iter().map(|c| c.end_s))
            .fold(0.0, f64::max);
        Some(Timeline {
            procs,
            runs,
            copies,
            span_s,
        })
    }
}

/// `CPU` of `node0 CPU12`.
fn kind_of(label: &str) -> &str {
    label
        .rsplit(' ')
        .next()
        .unwrap_or(label)
        .trim_end_matches(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"host":["node0 CPU0","node0 CPU1","node0 UTIL0"]}
{"task":"main","uid":1,"point":[],"proc_kind":"CPU","node":0,"proc":0,"regions":[]}
{"task":"work","parent":"main","uid":2,"point":[0],"proc_kind":"CPU","node":0,"proc":0,"regions":[]}
{"ran":"main","uid":1,"point":[],"proc_kind":"CPU","node":0,"proc":0,"ready_ns":0,"start_ns":500,"end_ns":9000000}
{"ran":"work","uid":2,"point":[0],"proc_kind":"CPU","node":0,"proc":0,"ready_ns":1000,"start_ns":2000000,"end_ns":5000000}
{"copy":"work","uid":2,"index":0,"src":"node0 SYSMEM0","dst":"node0 SYSMEM0","bytes":4096,"start_ns":1000000,"end_ns":1500000}
"#;

    #[test]
    fn the_log_becomes_runs_per_processor_and_copies() {
        let t = Timeline::from_log(LOG).unwrap();
        // The idle CPU is a row; the utility processor ran nothing, no row.
        assert_eq!(t.procs, vec!["node0 CPU0", "node0 CPU1"]);
        // The top-level task's run is the whole program: left out.
        assert_eq!(t.runs.len(), 1);
        let w = &t.runs[0];
        assert_eq!((w.proc, w.task.as_str()), (0, "work"));
        // Seconds from the first copy, which started first.
        assert!((w.start_s - 0.001).abs() < 1e-12 && (w.end_s - 0.004).abs() < 1e-12);
        assert_eq!(t.copies.len(), 1);
        assert!((t.copies[0].start_s).abs() < 1e-12);
        assert!((t.span_s - 0.004).abs() < 1e-12);
    }

    #[test]
    fn a_log_without_measurements_has_no_timeline() {
        assert!(Timeline::from_log("{\"host\":[\"node0 CPU0\"]}\n").is_none());
        assert!(Timeline::from_log("not a log").is_none());
    }
}
