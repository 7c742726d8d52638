//! The `command` backend: runs the user's real program (a Legion
//! application with the DSL mapper) on a candidate mapper and reads what it
//! printed.
//!
//! The command comes from a template fixed by whoever configures the
//! backend (never by a client of the service): `{mapper}` becomes the path
//! of the candidate, written to a fresh temporary directory; `{app}`,
//! `{machine}` and `{seed}` become the request's application name, machine
//! name and seed. The command runs under `sh -c` in its own process group
//! with stderr merged into stdout, so the text keeps the order the program
//! printed it in. Past the timeout the whole group is killed; output beyond
//! the size limit is drained and dropped.
//!
//! Performance is read with prefix patterns instead of regular
//! expressions: a [`Pattern`] is a prefix followed by a number (and, for
//! times, an optional unit `s`, `ms`, `us`, `ns`); several matches (the
//! DISTAL programs print one time per iteration) are combined by the
//! pattern's [`Aggregate`].

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{classify_output, Backend, Metrics, RunOutcome, RunRequest, RunStatus};
use crate::machine::Machine;

/// How several matches of a pattern combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    First,
    Last,
    Mean,
    Sum,
}

/// "A line containing `prefix` followed by a number".
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    /// Text right before the number (leading spaces after it are skipped).
    pub prefix: String,
    /// Multiplier applied to the number (e.g. 1e-3 for a time printed in
    /// ms without a unit after it). A unit after the number (`s`, `ms`,
    /// `us`, `ns`) overrides it when `units` is set.
    pub scale: f64,
    /// Whether a time unit after the number is honoured.
    pub units: bool,
    /// How several matches combine.
    pub aggregate: Aggregate,
    /// Unit of the value (for throughput patterns).
    pub unit: String,
}

impl Pattern {
    /// A time pattern: unit after the number honoured, seconds otherwise,
    /// matches averaged.
    pub fn time(prefix: impl Into<String>) -> Pattern {
        Pattern {
            prefix: prefix.into(),
            scale: 1.0,
            units: true,
            aggregate: Aggregate::Mean,
            unit: "s".into(),
        }
    }

    /// A throughput pattern in `unit`, matches averaged.
    pub fn rate(prefix: impl Into<String>, unit: impl Into<String>) -> Pattern {
        Pattern {
            prefix: prefix.into(),
            scale: 1.0,
            units: false,
            aggregate: Aggregate::Mean,
            unit: unit.into(),
        }
    }

    /// The value in `text`, if the prefix occurs followed by a number.
    pub fn find(&self, text: &str) -> Option<f64> {
        if self.prefix.is_empty() {
            return None;
        }
        let mut values = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find(&self.prefix) {
            let after = &rest[at + self.prefix.len()..];
            if let Some((v, used)) = leading_number(after) {
                let tail = after[used..].trim_start_matches([' ', '\t']);
                let unit = if self.units { unit_scale(tail) } else { None };
                values.push(v * unit.unwrap_or(self.scale));
            }
            rest = after;
        }
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        Some(match self.aggregate {
            Aggregate::First => values[0],
            Aggregate::Last => values[values.len() - 1],
            Aggregate::Mean => values.iter().sum::<f64>() / n,
            Aggregate::Sum => values.iter().sum(),
        })
    }
}

/// A number at the start of `s` (after blanks): `[+-]digits[.digits][e[+-]digits]`.
/// Returns the value and the bytes consumed.
fn leading_number(s: &str) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    let start = i;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > s
    };
    let int = digits(&mut i);
    let mut frac = false;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        frac = digits(&mut i);
    }
    if !int && !frac {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if digits(&mut j) {
            i = j;
        }
    }
    s[start..i].parse().ok().map(|v| (v, i))
}

/// Seconds per unit of a time unit at the start of `s`.
fn unit_scale(s: &str) -> Option<f64> {
    let word: String = s.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    match word.as_str() {
        "s" | "sec" | "secs" | "seconds" => Some(1.0),
        "ms" => Some(1e-3),
        "us" => Some(1e-6),
        "ns" => Some(1e-9),
        _ => None,
    }
}

/// Configuration of a [`CommandBackend`].
#[derive(Debug, Clone)]
pub struct CommandConfig {
    /// The command line, with `{mapper}` (and optionally `{app}`,
    /// `{machine}`, `{seed}`) to substitute.
    pub template: String,
    /// Working directory (None: the current one).
    pub workdir: Option<PathBuf>,
    /// Wall-clock limit of one run.
    pub timeout: Duration,
    /// Most bytes of output kept.
    pub max_output_bytes: usize,
    /// Where the elapsed time is read from; the first that matches wins.
    pub elapsed: Vec<Pattern>,
    /// Where the throughput is read from; the first that matches wins.
    pub throughput: Vec<Pattern>,
}

impl CommandConfig {
    /// A configuration with the benchmark programs' output lines
    /// (`ELAPSED TIME = ... s`, `Execution time: ... ms.`, `GFLOPS = `,
    /// `achieved GFLOPS per node: `), a 10-minute timeout and 1 MiB of output.
    pub fn new(template: impl Into<String>) -> CommandConfig {
        CommandConfig {
            template: template.into(),
            workdir: None,
            timeout: Duration::from_secs(600),
            max_output_bytes: 1 << 20,
            elapsed: vec![
                Pattern::time("ELAPSED TIME = "),
                Pattern::time("Execution time: "),
            ],
            throughput: vec![
                Pattern::rate("GFLOPS = ", "GFLOPS"),
                Pattern::rate("achieved GFLOPS per node: ", "GFLOPS per node"),
            ],
        }
    }
}

/// Runs a real program per request.
#[derive(Debug, Clone)]
pub struct CommandBackend {
    pub config: CommandConfig,
}

static RUN_COUNTER: AtomicU64 = AtomicU64::new(0);

/// `s` quoted for `sh` (single quotes; the legion backend and the
/// benchmarks quote with it too).
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl CommandBackend {
    pub fn new(config: CommandConfig) -> CommandBackend {
        CommandBackend { config }
    }

    /// The command line for a request whose mapper is at `mapper_path`.
    pub fn command_line(&self, request: &RunRequest, mapper_path: &str) -> String {
        self.config
            .template
            .replace("{mapper}", &shell_quote(mapper_path))
            .replace("{app}", &shell_quote(&request.app.name))
            .replace("{machine}", &shell_quote(&request.machine.name))
            .replace("{seed}", &request.seed.to_string())
    }

    /// Reads elapsed time and throughput from a run's text.
    pub fn parse(&self, text: &str) -> (Option<f64>, Option<(f64, String)>) {
        let elapsed = self.config.elapsed.iter().find_map(|p| p.find(text));
        let throughput = self
            .config
            .throughput
            .iter()
            .find_map(|p| p.find(text).map(|v| (v, p.unit.clone())));
        (elapsed, throughput)
    }
}

/// What running the process gave.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Its output, stderr merged into stdout in the order written.
    pub text: String,
    /// Exit status, where it exited.
    pub code: Option<i32>,
    /// The signal that ended it, where one did.
    pub signal: Option<i32>,
    /// Killed (with its process group) past the timeout.
    pub timed_out: bool,
    /// Output beyond the size limit was dropped.
    pub truncated: bool,
    /// Stopped by its caller (the process group was killed).
    pub cancelled: bool,
}

impl CommandBackend {
    /// Runs `line` under `sh -c` in the configured folder, in its own
    /// process group, stderr merged into stdout, killed past the timeout,
    /// with `MAPWRIGHT_LOG` set to `log` (the mapper's decision log).
    pub fn execute(&self, line: &str, log: &Path) -> Result<Captured, String> {
        self.execute_until(line, log, None)
    }

    /// [`CommandBackend::execute`], stopped (its process group killed) as
    /// soon as `cancel` is set.
    pub fn execute_until(
        &self,
        line: &str,
        log: &Path,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<Captured, String> {
        let mut cmd = Command::new("sh");
        cmd.env("MAPWRIGHT_LOG", log);
        // Merge stderr into stdout inside the shell so the text keeps the
        // order the program wrote it in.
        cmd.arg("-c")
            .arg(format!("exec 2>&1\n{line}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(dir) = &self.config.workdir {
            cmd.current_dir(dir);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // Its own process group, so a timeout kills everything it started.
            cmd.process_group(0);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("mapwright: cannot start `sh -c {line}`: {e}\n"))?;
        let Some(mut stdout) = child.stdout.take() else {
            return Err("mapwright: no output pipe\n".into());
        };
        let limit = self.config.max_output_bytes;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut truncated = false;
            let mut buf = [0u8; 8192];
            loop {
                match stdout.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let room = limit.saturating_sub(kept.len());
                        if room < n {
                            truncated = true;
                        }
                        kept.extend_from_slice(&buf[..n.min(room)]);
                    }
                }
            }
            let _ = tx.send((kept, truncated));
        });
        let start = Instant::now();
        let mut timed_out = false;
        let mut cancelled = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) => {}
                Err(_) => break None,
            }
            cancelled = cancel.is_some_and(|c| c.load(Ordering::SeqCst));
            timed_out = !cancelled && start.elapsed() >= self.config.timeout;
            if cancelled || timed_out {
                kill_group(child.id());
                let _ = child.kill();
                break child.wait().ok();
            }
            let waited = start.elapsed();
            let nap = if waited < Duration::from_millis(100) {
                2
            } else {
                20
            };
            std::thread::sleep(Duration::from_millis(nap));
        };
        // The reader ends when every writer has closed the pipe; a
        // grandchild that escaped the group could hold it open, so wait a
        // little only.
        let (bytes, truncated) = rx
            .recv_timeout(Duration::from_secs(2))
            .unwrap_or((Vec::new(), false));
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let (code, signal) = match status {
            Some(s) => (s.code(), exit_signal(&s)),
            None => (None, None),
        };
        Ok(Captured {
            text,
            code,
            signal,
            timed_out,
            truncated,
            cancelled,
        })
    }
}

#[cfg(unix)]
fn exit_signal(s: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    s.signal()
}

#[cfg(not(unix))]
fn exit_signal(_: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// Kills process group `pid` (the child is its leader).
fn kill_group(pid: u32) {
    // Without a libc dependency: the `kill` utility takes a negative pid
    // for a process group.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

impl Backend for CommandBackend {
    fn name(&self) -> &str {
        "command"
    }

    fn run(&self, request: &RunRequest) -> RunOutcome {
        let n = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("mapwright-run-{}-{n}", std::process::id()));
        let path = dir.join("candidate.mapper");
        let written =
            std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, &request.mapper));
        if let Err(e) = written {
            return RunOutcome::failure(
                "error",
                format!(
                    "mapwright: cannot write the candidate mapper to {}: {e}\n",
                    path.display()
                ),
            );
        }
        let line = self.command_line(request, &path.to_string_lossy());
        // mapwright's Legion mapper, linked into the program, writes its
        // decisions and Realm's measurements here (MAPWRIGHT_LOG): the
        // program itself need print nothing for the metrics.
        let log_path = dir.join("measured.log");
        let captured = self.execute_until(&line, &log_path, request.cancel.as_deref());
        let log = std::fs::read_to_string(&log_path).ok();
        let _ = std::fs::remove_dir_all(&dir);
        let mut c = match captured {
            Ok(c) => c,
            Err(text) => return RunOutcome::failure("error", text),
        };
        // The mapper's own diagnostics name the file it read: the user's.
        if let Some(name) = &request.source_name {
            c.text = c.text.replace(path.to_string_lossy().as_ref(), name);
        }
        if c.truncated {
            c.text.push_str(&format!(
                "\n[mapwright] output truncated to {} bytes\n",
                self.config.max_output_bytes
            ));
        }
        let (elapsed, throughput) = self.parse(&c.text);
        let status = if c.cancelled {
            c.text
                .push_str("\n[mapwright] cancelled: the command's process group was killed\n");
            RunStatus::Error("cancelled".into())
        } else if c.timed_out {
            c.text.push_str(&format!(
                "\n[mapwright] the command did not finish within {:.1} s and was killed\n",
                self.config.timeout.as_secs_f64()
            ));
            RunStatus::Error("timeout".into())
        } else if c.code == Some(0) && elapsed.is_some() {
            RunStatus::Ok
        } else {
            match (c.code, c.signal) {
                (Some(0), _) => c.text.push_str(
                    "\n[mapwright] the command exited normally but printed no elapsed time\n",
                ),
                (Some(code), _) => c.text.push_str(&format!(
                    "\n[mapwright] the command exited with status {code}\n"
                )),
                (None, Some(sig)) => c.text.push_str(&format!(
                    "\n[mapwright] the command was killed by signal {sig}\n"
                )),
                (None, None) => c
                    .text
                    .push_str("\n[mapwright] the command's status is unknown\n"),
            }
            RunStatus::Error(classify_output(&c.text).unwrap_or("error").to_string())
        };
        let ok = status.is_ok();
        RunOutcome {
            status,
            elapsed_s: if ok { elapsed } else { None },
            throughput: if ok {
                throughput.as_ref().map(|t| t.0)
            } else {
                None
            },
            throughput_unit: if ok {
                throughput.map(|t| t.1).unwrap_or_default()
            } else {
                String::new()
            },
            metrics: if ok {
                measured(log.as_deref(), &request.machine, &mut c.text)
            } else {
                Metrics::default()
            },
            raw_output: c.text,
        }
    }
}

/// The run's measured metrics, from the log the mapper wrote (none without
/// one). A log that cannot be read is reported in the output, not fatal.
fn measured(log: Option<&str>, machine: &Machine, text: &mut String) -> Metrics {
    let Some(log) = log else {
        return Metrics::default();
    };
    match crate::legion::measured::metrics_from_log(log, Some(machine)) {
        Ok(m) => m.unwrap_or_default(),
        Err(e) => {
            text.push_str(&format!(
                "\n[mapwright] the mapper's measurements could not be read ({e}); the run has no metrics\n"
            ));
            Metrics::default()
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::app::App;
    use crate::machine::Machine;
    use std::sync::Arc;

    fn request(mapper: &str) -> RunRequest {
        RunRequest::new(
            mapper,
            Arc::new(App::builtin("circuit").unwrap()),
            Arc::new(Machine::preset("p100x4").unwrap()),
        )
    }

    fn script(body: &str) -> (PathBuf, PathBuf) {
        let n = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("mapwright-cmdtest-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("prog.sh");
        std::fs::write(&path, body).unwrap();
        (dir, path)
    }

    #[test]
    fn the_mappers_measurements_become_the_runs_metrics() {
        // A program with mapwright's mapper linked writes the log named by
        // MAPWRIGHT_LOG and prints only its time.
        let (dir, prog) = script(
            "#!/bin/sh
cat > \"$MAPWRIGHT_LOG\" <<'EOF'
\
             {\"host\":[\"node0 CPU0\",\"node0 CPU1\"]}
\
             {\"task\":\"w\",\"parent\":\"top\",\"uid\":2,\"point\":[0],\"proc_kind\":\"CPU\",\"node\":0,\"proc\":0,\"regions\":[]}
\
             {\"ran\":\"w\",\"uid\":2,\"point\":[0],\"proc_kind\":\"CPU\",\"node\":0,\"proc\":0,\"ready_ns\":0,\"start_ns\":0,\"end_ns\":2000000}
\
             EOF
echo 'ELAPSED TIME =   0.010 s'
",
        );
        let b = CommandBackend::new(CommandConfig::new(format!(
            "sh {} {{mapper}}",
            prog.display()
        )));
        let o = b.run(&request("Task * CPU;\n"));
        assert_eq!(o.status, RunStatus::Ok, "{}", o.raw_output);
        assert_eq!(o.metrics.basis, super::super::MetricsBasis::Measured);
        assert!((o.metrics.task_time_s["w"] - 0.002).abs() < 1e-12);
        assert_eq!(o.metrics.proc_busy_s["node0 CPU1"], 0.0);
        assert!((o.metrics.imbalance - 2.0).abs() < 1e-9);
        // A program that writes no log: no metrics, nothing else changes.
        let (dir2, quiet) = script("#!/bin/sh\necho 'ELAPSED TIME =   0.010 s'\n");
        let b = CommandBackend::new(CommandConfig::new(format!(
            "sh {} {{mapper}}",
            quiet.display()
        )));
        let o = b.run(&request("Task * CPU;\n"));
        assert_eq!(
            (o.status, o.metrics.basis),
            (RunStatus::Ok, super::super::MetricsBasis::None)
        );
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&dir2);
    }

    #[test]
    fn patterns_read_numbers_and_units() {
        let p = Pattern::time("Execution time: ");
        let text = "Execution time: 250 ms.\nExecution time: 350 ms.\nOn 1 nodes achieved GFLOPS per node: 1234.5.\n";
        assert!((p.find(text).unwrap() - 0.3).abs() < 1e-12);
        assert_eq!(
            Pattern::time("ELAPSED TIME = ").find("ELAPSED TIME =   1.250 s\n"),
            Some(1.25)
        );
        assert_eq!(
            Pattern::rate("achieved GFLOPS per node: ", "x").find(text),
            Some(1234.5)
        );
        assert_eq!(Pattern::time("nope").find(text), None);
        assert_eq!(leading_number(" -1.5e3x"), Some((-1500.0, 7)));
        assert_eq!(leading_number("abc"), None);
    }

    #[test]
    fn a_script_that_prints_a_time_succeeds_and_sees_the_mapper() {
        let (dir, prog) = script(
            "#!/bin/sh\ngrep -q 'Task' \"$1\" || { echo 'no mapper' >&2; exit 3; }\n\
             echo 'ELAPSED TIME =   2.500 s'\necho 'GFLOPS =  40.000 GFLOPS'\n",
        );
        let b = CommandBackend::new(CommandConfig::new(format!(
            "sh {} {{mapper}}",
            prog.display()
        )));
        let o = b.run(&request("Task * GPU;\n"));
        assert_eq!(o.status, RunStatus::Ok, "{}", o.raw_output);
        assert_eq!(o.elapsed_s, Some(2.5));
        assert_eq!(o.throughput, Some(40.0));
        assert_eq!(o.throughput_unit, "GFLOPS");
        // A mapper the program rejects: non-zero exit, stderr kept in order.
        let o = b.run(&request("nothing here\n"));
        assert_eq!(o.status.as_str(), "error");
        assert!(o.raw_output.starts_with("no mapper\n"), "{}", o.raw_output);
        assert!(o.raw_output.contains("exited with status 3"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_programs_output_names_the_users_file_not_the_copy() {
        let (dir, prog) = script(
            "#!/bin/sh\necho \"warning: $1:2:1: this statement never applies\"\necho 'ELAPSED TIME = 1 s'\n",
        );
        let b = CommandBackend::new(CommandConfig::new(format!(
            "sh {} {{mapper}}",
            prog.display()
        )));
        let mut r = request("Task * GPU;\n");
        r.source_name = Some("my.mapper".into());
        let o = b.run(&r);
        assert!(
            o.raw_output.starts_with("warning: my.mapper:2:1: "),
            "{}",
            o.raw_output
        );
        assert!(!o.raw_output.contains("candidate.mapper"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn known_failures_are_classified_and_crashes_reported() {
        let (dir, prog) = script(
            "#!/bin/sh\necho ' ** On entry to DGEMM  parameter number 8 had an illegal value'\nkill -SEGV $$\n",
        );
        let b = CommandBackend::new(CommandConfig::new(format!("sh {}", prog.display())));
        let o = b.run(&request("x"));
        assert_eq!(
            o.status.as_str(),
            "cublas_illegal_parameter",
            "{}",
            o.raw_output
        );
        assert!(o.raw_output.contains("signal 11") || o.raw_output.contains("status 139"));
        assert_eq!(o.elapsed_s, None);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn timeouts_kill_the_whole_group() {
        let (dir, prog) = script("#!/bin/sh\necho started\nsleep 30 &\nsleep 30\n");
        let mut cfg = CommandConfig::new(format!("sh {}", prog.display()));
        cfg.timeout = Duration::from_millis(300);
        let t0 = Instant::now();
        let o = CommandBackend::new(cfg).run(&request("x"));
        assert!(t0.elapsed() < Duration::from_secs(5));
        assert_eq!(o.status.as_str(), "timeout");
        assert!(o.raw_output.starts_with("started\n"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_endless_flood_is_stopped_at_the_timeout_and_capped() {
        let (dir, prog) = script("#!/bin/sh\nyes flood\n");
        let mut cfg = CommandConfig::new(format!("sh {}", prog.display()));
        cfg.timeout = Duration::from_millis(500);
        cfg.max_output_bytes = 1000;
        let t0 = Instant::now();
        let o = CommandBackend::new(cfg).run(&request("x"));
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        assert_eq!(o.status.as_str(), "timeout");
        assert!(o.raw_output.len() < 1200, "{}", o.raw_output.len());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn output_is_capped() {
        let (dir, prog) =
            script("#!/bin/sh\nyes 0123456789 | head -c 100000\necho\necho 'ELAPSED TIME = 1 s'\n");
        let mut cfg = CommandConfig::new(format!("sh {}", prog.display()));
        cfg.max_output_bytes = 1000;
        let o = CommandBackend::new(cfg).run(&request("x"));
        assert!(o.raw_output.len() < 1200);
        assert!(o.raw_output.contains("truncated"));
        // The time line was cut off, so the run cannot count as a success.
        assert_eq!(o.status.as_str(), "error");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn placeholders_are_quoted() {
        let b = CommandBackend::new(CommandConfig::new("prog -m {mapper} -a {app} -s {seed}"));
        let mut r = request("x");
        r.seed = 9;
        assert_eq!(
            b.command_line(&r, "/tmp/it's.mapper"),
            "prog -m '/tmp/it'\\''s.mapper' -a 'circuit' -s 9"
        );
    }
}
