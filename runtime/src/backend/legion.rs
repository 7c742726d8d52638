//! The `legion` backend: the built-in benchmark programs as real Legion
//! programs (`runtime/legion/apps/`), run with mapwright's own Legion
//! mapper (`runtime/legion/mapper/`) on this host.
//!
//! A run is a [`CommandBackend`] run of the application's program, so it
//! has the same timeout, process-group kill and output cap as the
//! `command` backend, and its output is read with the same patterns. The
//! programs and the mapper are found in a build folder (`bin/`, `lib/`):
//! `MAPWRIGHT_LEGION_BUILD`, or the one `runtime/legion/build.sh` makes
//! from this source tree (it installs the Legion SDK from the package
//! registry on first use). `MAPWRIGHT_LEGION_LIBRARY_PATH` (or the SDK
//! script) says where Legion's libraries are.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::command::{shell_quote, CommandBackend, CommandConfig};
use super::{Backend, RunOutcome, RunRequest};
use crate::machine::Machine;
use crate::resolve_mapping::RegionNaming;

/// Where the programs are and how to run them.
#[derive(Debug, Clone)]
pub struct LegionConfig {
    /// Folder with `bin/<app>` and `lib/libmapwright_mapper.so`.
    pub build: PathBuf,
    /// `LD_LIBRARY_PATH` for Legion's libraries (and, without an NVIDIA
    /// driver, the libcuda stub).
    pub library_path: String,
    /// Legion CPU processors (`-ll:cpu`).
    pub cpus: u32,
    /// Legion GPU processors (`-ll:gpu`; 0 without a driver).
    pub gpus: u32,
    /// Wall-clock limit of one run.
    pub timeout: Duration,
    /// Where Legion Prof's logs go (`--legion-profile DIR`): each run
    /// writes `DIR/run-N/prof_*` (`-lg:prof`, `-lg:prof_logfile`).
    pub profile_dir: Option<PathBuf>,
}

impl LegionConfig {
    /// Finds the build folder and library path: the environment
    /// (`MAPWRIGHT_LEGION_BUILD`, `MAPWRIGHT_LEGION_LIBRARY_PATH`), else
    /// this source tree's `runtime/legion/build.sh` (which builds what is
    /// missing and installs the SDK on first use).
    pub fn locate(cpus: u32, gpus: u32) -> Result<LegionConfig, String> {
        LegionConfig::locate_with_progress(cpus, gpus, &mut |_| {})
    }

    /// [`LegionConfig::locate`], telling `progress` what the set-up does
    /// as it goes (one line per step: what is fetched and its size, what is
    /// compiled and built). Nothing is told when everything is in place.
    pub fn locate_with_progress(
        cpus: u32,
        gpus: u32,
        progress: &mut dyn FnMut(&str),
    ) -> Result<LegionConfig, String> {
        let build = match std::env::var_os("MAPWRIGHT_LEGION_BUILD") {
            Some(dir) => PathBuf::from(dir),
            None => {
                let script = source_dir().join("build.sh");
                if !script.exists() {
                    return Err(format!(
                        "the legion backend needs its programs: set MAPWRIGHT_LEGION_BUILD to \
                         a folder made by runtime/legion/build.sh (no source tree at {})",
                        source_dir().display()
                    ));
                }
                PathBuf::from(run_script(&script, &[], progress)?)
            }
        };
        let library_path = match std::env::var("MAPWRIGHT_LEGION_LIBRARY_PATH") {
            Ok(p) => p,
            Err(_) => {
                let script = source_dir().join("sdk.sh");
                let env = run_script(&script, &["--env"], progress)?;
                env.lines()
                    .find_map(|l| l.strip_prefix("export LD_LIBRARY_PATH='"))
                    .and_then(|rest| rest.split('\'').next())
                    .map(str::to_string)
                    .ok_or_else(|| {
                        format!("{} --env printed no LD_LIBRARY_PATH", script.display())
                    })?
            }
        };
        Ok(LegionConfig {
            build,
            library_path,
            cpus: cpus.max(1),
            gpus,
            timeout: Duration::from_secs(600),
            profile_dir: None,
        })
    }

    /// The program of application `app`, if built.
    pub fn program(&self, app: &str) -> Option<PathBuf> {
        let path = self.build.join("bin").join(app);
        path.is_file().then_some(path)
    }

    /// The applications that have a program.
    pub fn programs(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.build.join("bin"))
            .map(|dir| {
                dir.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Legion's flags for this host.
    fn legion_flags(&self) -> String {
        format!("-ll:cpu {} -ll:util 1 -ll:gpu {}", self.cpus, self.gpus)
    }
}

/// Legion CPU processors by default: one per core. More processors than
/// cores only share the cores (and Realm's background threads with them),
/// so a placement that spreads points gains nothing measurable.
pub fn default_cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// `runtime/legion` in this source tree.
fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("legion")
}

/// Runs a set-up script and returns its last line of output (all of it
/// with arguments). Its `mapwright: ...` lines on stderr are progress, told
/// to `progress` as they come; the rest of stderr is kept for the error.
fn run_script(
    script: &Path,
    args: &[&str],
    progress: &mut dyn FnMut(&str),
) -> Result<String, String> {
    use std::io::{BufRead, BufReader, Read};
    let mut child = Command::new("bash")
        .arg(script)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    // stdout is one short line: read it on a thread while stderr streams.
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(out) = stdout.as_mut() {
            let _ = out.read_to_string(&mut text);
        }
        text
    });
    let mut errors = String::new();
    if let Some(err) = child.stderr.take() {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            match line.strip_prefix("mapwright: ") {
                Some(step) => progress(step),
                None => {
                    errors.push_str(&line);
                    errors.push('\n');
                }
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let text = reader.join().unwrap_or_default().trim().to_string();
    if !status.success() {
        return Err(format!("{} failed:\n{errors}", script.display()));
    }
    if args.is_empty() {
        Ok(text.lines().last().unwrap_or_default().to_string())
    } else {
        Ok(text)
    }
}

/// Realm's start-up lines that say nothing about the run itself (the libcuda
/// stub's "no device", thread reservations that more processors than
/// cores cannot get), taken out of `raw` for a person to read, with one
/// line each saying what they mean. `raw` itself (`--json`'s `raw_output`)
/// keeps them.
pub fn quiet_startup(raw: &str, cpus: u32) -> (String, Vec<String>) {
    let mut kept = String::new();
    let (mut no_gpu, mut reservations) = (false, 0usize);
    for line in raw.lines() {
        let realm = line.starts_with('[');
        if realm
            && (line.contains("{gpu}: cuInit(") || line.contains("not able to discover the CUDA"))
        {
            no_gpu = true;
        } else if realm
            && line.contains("{threads}: reservation")
            && line.contains("cannot be satisfied")
        {
            reservations += 1;
        } else {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    let mut notes = Vec::new();
    if no_gpu {
        notes.push(format!(
            "no GPU driver: running on {cpus} CPU processor{}",
            if cpus == 1 { "" } else { "s" }
        ));
    }
    if reservations > 0 {
        notes.push(format!(
            "{cpus} Legion processors on {} core(s): Realm could not give {reservations} of its threads a core of their own, so they share",
            default_cpus()
        ));
    }
    (kept, notes)
}

/// Runs the benchmark programs on real Legion.
#[derive(Debug, Clone)]
pub struct LegionBackend {
    pub config: LegionConfig,
    /// Runs profiled so far (names each run's Legion Prof folder; shared
    /// by clones).
    profiled_runs: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl LegionBackend {
    pub fn new(config: LegionConfig) -> LegionBackend {
        LegionBackend {
            config,
            profiled_runs: Default::default(),
        }
    }

    /// The command line that runs `app`'s program with `{mapper}`.
    pub fn template(&self, request: &RunRequest) -> Result<String, String> {
        let app = &request.app.name;
        let program = self.config.program(app).ok_or_else(|| {
            format!(
                "mapwright: no real Legion program for `{app}` (built: {}); see docs/legion.md\n",
                self.config.programs().join(", ")
            )
        })?;
        let naming = if RegionNaming::of_app(&request.app) == RegionNaming::Index {
            ""
        } else {
            " -tm:use_semantic_name"
        };
        Ok(format!(
            "LD_LIBRARY_PATH={} exec {} {}{naming}{} -mapping {{mapper}}",
            shell_quote(&self.config.library_path),
            shell_quote(&program.to_string_lossy()),
            self.config.legion_flags(),
            self.profile_flags()?,
        ))
    }

    /// `-lg:prof 1 -lg:prof_logfile DIR/run-N/prof_%` for the next run
    /// with `--legion-profile DIR` (one folder per run, so that no run
    /// overwrites another's logs; `%` is the node), else nothing.
    fn profile_flags(&self) -> Result<String, String> {
        let Some(dir) = &self.config.profile_dir else {
            return Ok(String::new());
        };
        let run = dir.join(format!(
            "run-{}",
            self.profiled_runs
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&run)
            .map_err(|e| format!("mapwright: cannot make {}: {e}\n", run.display()))?;
        Ok(format!(
            " -lg:prof 1 -lg:prof_logfile {}",
            shell_quote(&run.join("prof_%").to_string_lossy())
        ))
    }

    /// This host as the mapper sees it through Legion: any built program,
    /// started with `-mapwright:machine-only`, writes the description and
    /// stops before its first task.
    pub fn host_machine(&self) -> Result<Machine, String> {
        let program = self
            .config
            .programs()
            .into_iter()
            .find_map(|p| self.config.program(&p))
            .ok_or("mapwright: no real Legion program is built (runtime/legion/build.sh)")?;
        let dir = std::env::temp_dir().join(format!("mapwright-host-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mapper = dir.join("probe.mapper");
        let out = dir.join("machine.json");
        std::fs::write(&mapper, "Task * CPU;\n").map_err(|e| e.to_string())?;
        let status = Command::new(&program)
            .args(self.config.legion_flags().split(' '))
            .arg("-mapping")
            .arg(&mapper)
            .arg("-mapwright:machine")
            .arg(&out)
            .arg("-mapwright:machine-only")
            .env("LD_LIBRARY_PATH", &self.config.library_path)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let machine = Machine::load(&out).map_err(|e| {
            format!(
                "the Legion mapper did not describe this host ({e}):\n{}",
                String::from_utf8_lossy(&status.stderr)
            )
        });
        let _ = std::fs::remove_dir_all(&dir);
        machine
    }
}

impl Backend for LegionBackend {
    fn name(&self) -> &str {
        "legion"
    }

    fn run(&self, request: &RunRequest) -> RunOutcome {
        match self.template(request) {
            Ok(template) => {
                let mut config = CommandConfig::new(template);
                config.timeout = self.config.timeout;
                CommandBackend::new(config).run(request)
            }
            Err(text) => RunOutcome::failure("error", text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::App;
    use std::sync::Arc;

    #[test]
    fn an_application_without_a_program_is_a_reported_failure() {
        let backend = LegionBackend::new(LegionConfig {
            build: PathBuf::from("/nonexistent"),
            library_path: String::new(),
            cpus: 2,
            gpus: 0,
            timeout: Duration::from_secs(5),
            profile_dir: None,
        });
        let app = Arc::new(App::builtin("solomonik").expect("built-in"));
        let machine = Arc::new(Machine::preset("p100x4").expect("preset"));
        let out = backend.run(&RunRequest::new("", app, machine));
        assert_eq!(out.status.as_str(), "error");
        assert!(out
            .raw_output
            .contains("no real Legion program for `solomonik`"));
    }

    #[test]
    fn realms_start_up_noise_becomes_one_line_each() {
        let raw = "[0 - 7f] 0.000000 {4}{gpu}: cuInit(0) returned 100 (CUDA_ERROR_NO_DEVICE)\n\
                   [0 - 7f] 0.000000 {5}{gpu}: We are not able to discover the CUDA resources.\n\
                   [0 - 7f] 0.000059 {4}{threads}: reservation ('CPU proc 1d00000000000003') cannot be satisfied\n\
                   ELAPSED TIME =   0.682 s\n\
                   [0 - 7f] 0.7 {4}{legion}: LEGION WARNING: something real\n";
        let (kept, notes) = quiet_startup(raw, 4);
        assert_eq!(
            kept,
            "ELAPSED TIME =   0.682 s\n[0 - 7f] 0.7 {4}{legion}: LEGION WARNING: something real\n"
        );
        assert_eq!(notes[0], "no GPU driver: running on 4 CPU processors");
        assert!(
            notes[1].contains("could not give 1 of its threads a core"),
            "{notes:?}"
        );
        let (kept, notes) = quiet_startup("CHECK PASSED\n", 2);
        assert_eq!((kept.as_str(), notes.len()), ("CHECK PASSED\n", 0));
    }

    /// A build folder `name` holding an (empty) circuit program, a backend
    /// of 4 CPUs on it writing Legion Prof logs to `profile_dir`, and a
    /// request for circuit.
    fn circuit_backend(
        name: &str,
        profile_dir: Option<&str>,
    ) -> (PathBuf, LegionBackend, RunRequest) {
        let dir =
            std::env::temp_dir().join(format!("mapwright-legion-{name}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("bin/circuit"), "").unwrap();
        let backend = LegionBackend::new(LegionConfig {
            build: dir.clone(),
            library_path: "/x".into(),
            cpus: 4,
            gpus: 0,
            timeout: Duration::from_secs(5),
            profile_dir: profile_dir.map(|p| dir.join(p)),
        });
        let app = Arc::new(App::builtin("circuit").expect("built-in"));
        let machine = Arc::new(Machine::preset("p100x4").expect("preset"));
        (dir, backend, RunRequest::new("", app, machine))
    }

    #[test]
    fn legion_prof_logs_go_to_a_folder_per_run() {
        let (dir, backend, request) = circuit_backend("prof", Some("prof"));
        let first = backend.template(&request).unwrap();
        let second = backend.template(&request).unwrap();
        let logfile = |n: u32| {
            format!(
                "-lg:prof 1 -lg:prof_logfile '{}'",
                dir.join(format!("prof/run-{n}/prof_%")).display()
            )
        };
        assert!(first.contains(&logfile(0)), "{first}");
        assert!(second.contains(&logfile(1)), "{second}");
        assert!(dir.join("prof/run-1").is_dir());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn semantic_naming_follows_the_application() {
        let (dir, backend, request) = circuit_backend("t", None);
        let t = backend.template(&request).unwrap();
        assert!(
            t.contains("-ll:cpu 4 -ll:util 1 -ll:gpu 0 -tm:use_semantic_name -mapping {mapper}"),
            "{t}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
