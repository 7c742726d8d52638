//! `mapwright init -- COMMAND...`: one real run of the user's own Legion
//! program, with mapwright's mapper linked in, becomes a project: the
//! program's application description (`-mapwright:app`), this host's
//! machine description (`-mapwright:machine`), a starting mapper, and a
//! `mapwright.toml` whose `command` runtime runs the program on each
//! candidate. A program without the mapper linked in gets the link lines
//! and nothing is written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Args;
use mapwright_runtime::app::App;
use mapwright_runtime::backend::command::{shell_quote, CommandBackend, CommandConfig};

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project folder: the program runs here, and mapwright.toml, the
    /// descriptions and the starting mapper are written here.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// The mapper file of the project (default: <program>.mapper); a
    /// starting mapper is written there unless it exists, and the first run
    /// uses it.
    #[arg(long)]
    pub mapper: Option<PathBuf>,
    /// Most seconds the first run may take (its process group is killed
    /// after that).
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
    /// Replace an existing mapwright.toml.
    #[arg(long)]
    pub force: bool,
    /// The command that runs your program, after `--`
    /// (`mapwright init -- ./circuit -ll:cpu 4`).
    #[arg(last = true, required = true, num_args = 1..)]
    pub command: Vec<String>,
}

/// The mapper the first run uses where the project has none: every task on
/// the first kind it has a variant for, GPUs first, data in the memory
/// closest to it. It runs on any host and decides nothing the program
/// would not get from a default mapper.
pub const STARTING_MAPPER: &str = "\
# Written by `mapwright init`: a starting point that runs anywhere.
# Every task on the first processor kind it has a variant for (GPU, then
# OpenMP, then CPU), its data in that processor's own memory.
Task * GPU,OMP,CPU;
Region * * GPU FBMEM;
Region * * * SYSMEM;
";

/// How a program gets mapwright's mapper, for a program without it.
pub fn link_instructions(lib_dir: &str) -> String {
    format!(
        "Link mapwright's Legion mapper into your program and register it before Legion starts:\n\
         \n\
         C++ (main):\n\
         \x20   #include \"mapwright_mapper.h\"        // runtime/legion/mapper/\n\
         \x20   register_mappers();                    // before Legion::Runtime::start\n\
         Makefile:\n\
         \x20   LDFLAGS += -L{lib_dir} -lmapwright_mapper -Wl,-rpath,{lib_dir}\n\
         CMake:\n\
         \x20   target_link_libraries(prog PRIVATE {lib_dir}/libmapwright_mapper.so)\n\
         \x20   set_target_properties(prog PROPERTIES BUILD_RPATH {lib_dir})\n\
         Regent:\n\
         \x20   local mw = terralib.includec(\"mapwright_mapper.h\", {{\"-I\", \"runtime/legion/mapper\"}})\n\
         \x20   regentlib.saveobj(main, \"prog\", \"executable\", mw.register_mappers,\n\
         \x20                     {{\"-L{lib_dir}\", \"-lmapwright_mapper\"}})\n\
         \n\
         `runtime/legion/build.sh` builds the library and prints its folder ({lib_dir} here).\n\
         Then run `mapwright init` again (docs/your-program.md)."
    )
}

/// What the program's file says about the mapper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Linked {
    /// An executable that has the mapper (linked, or its library needed).
    Yes,
    /// An executable without it.
    No,
    /// Not an executable we can read (a script, a launcher): the run tells.
    Unknown,
}

/// Whether the executable `bytes` has mapwright's mapper: its library
/// among the needed ones, or its C ABI linked in statically.
pub fn linked_in(bytes: &[u8]) -> Linked {
    if !bytes.starts_with(b"\x7fELF") {
        return Linked::Unknown;
    }
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    if has(b"libmapwright_mapper") || has(b"mw_session_open") {
        Linked::Yes
    } else {
        Linked::No
    }
}

/// `word` quoted for `sh` where it needs it.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%{}".contains(c));
    if plain {
        word.to_string()
    } else {
        shell_quote(word)
    }
}

/// The `[command]` template for the user's `command`: `-mapping {mapper}`
/// in place of any `-mapping FILE` (appended otherwise), init's own
/// `-mapwright:app`/`-mapwright:machine`/`-mapwright:log` flags dropped,
/// and `-tm:use_semantic_name` added where the program names its regions
/// (`semantic`), so that `Region` statements match those names.
pub fn template_for(command: &[String], semantic: bool) -> String {
    let mut words = Vec::new();
    let mut i = 0;
    while i < command.len() {
        let w = command[i].as_str();
        match w {
            "-mapping" | "-mapwright:app" | "-mapwright:machine" | "-mapwright:log" => i += 2,
            _ => {
                words.push(shell_word(w));
                i += 1;
            }
        }
    }
    if semantic && !command.iter().any(|w| w == "-tm:use_semantic_name") {
        words.push("-tm:use_semantic_name".into());
    }
    words.push("-mapping".into());
    words.push("{mapper}".into());
    words.join(" ")
}

/// Whether the program names its regions: some argument has a name that
/// is not its index.
pub fn names_regions(app: &App) -> bool {
    app.tasks
        .iter()
        .flat_map(|t| &t.regions)
        .any(|r| r.name.parse::<u64>().is_err())
}

/// The project file `init` writes.
pub fn project_file(
    command: &[String],
    template: &str,
    app: &str,
    machine: &str,
    timeout_s: u64,
) -> String {
    // A TOML basic string, escaped by the toml crate.
    let quoted = |s: &str| toml::Value::String(s.to_string()).to_string();
    format!(
        "# Written by `mapwright init` from one run of your program:\n\
         #   {}\n\
         # `mapwright init` again (with --force) describes it again.\n\
         app = {}\n\
         machine = {}\n\
         runtime = \"command\"\n\
         \n\
         [command]\n\
         template = {}\n\
         timeout_s = {timeout_s}\n",
        command
            .iter()
            .map(|w| shell_word(w))
            .collect::<Vec<_>>()
            .join(" "),
        quoted(app),
        quoted(machine),
        quoted(template),
    )
}

/// The program file `command[0]` names: relative to `dir` where it has a
/// slash, else found on PATH.
fn program_file(dir: &Path, program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = dir.join(program.strip_prefix("./").unwrap_or(program));
        return p.is_file().then_some(p);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// Where `runtime/legion/build.sh` puts the mapper library by default.
fn default_lib_dir() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = root.join("target/legion/lib");
    dir.canonicalize()
        .unwrap_or(dir)
        .to_string_lossy()
        .into_owned()
}

pub fn run(args: InitArgs) -> anyhow::Result<ExitCode> {
    let dir = args
        .dir
        .canonicalize()
        .with_context(|| format!("no folder {}", args.dir.display()))?;
    let project = dir.join(crate::project::PROJECT_FILE);
    if project.exists() && !args.force {
        bail!(
            "{} exists; `mapwright init --force` replaces it (nothing was written)",
            project.display()
        );
    }
    let command = &args.command;
    let program = Path::new(&command[0])
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    let file = program_file(&dir, &command[0]);
    let linked = match &file {
        Some(f) => {
            linked_in(&std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?)
        }
        None => bail!(
            "cannot find the program `{}` (from {}); nothing was written",
            command[0],
            dir.display()
        ),
    };
    if linked == Linked::No {
        eprintln!(
            "mapwright init: {} does not have mapwright's Legion mapper linked in; nothing was \
             written.\n\n{}",
            file.as_ref()
                .map_or(String::new(), |f| f.display().to_string()),
            link_instructions(&default_lib_dir())
        );
        return Ok(ExitCode::from(1));
    }

    // The first run: the project's mapper (or the starting one), with the
    // mapper writing the descriptions into a scratch folder first, so that
    // a failed run leaves the project as it was.
    let mapper_path = args
        .mapper
        .clone()
        .map(|m| if m.is_absolute() { m } else { dir.join(m) })
        .unwrap_or_else(|| dir.join(format!("{program}.mapper")));
    let mapper_text = if mapper_path.is_file() {
        std::fs::read_to_string(&mapper_path)
            .with_context(|| format!("cannot read {}", mapper_path.display()))?
    } else {
        STARTING_MAPPER.to_string()
    };
    let scratch = std::env::temp_dir().join(format!("mapwright-init-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let result = first_run(&args, &dir, &scratch, &mapper_text);
    let outcome = result.and_then(|run| {
        write_project(
            &args,
            &dir,
            &program,
            &mapper_path,
            &mapper_text,
            &scratch,
            run,
        )
    });
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

/// What the first run gave.
struct FirstRun {
    wall_s: f64,
    elapsed: Option<f64>,
}

fn first_run(
    args: &InitArgs,
    dir: &Path,
    scratch: &Path,
    mapper: &str,
) -> anyhow::Result<FirstRun> {
    let start_mapper = scratch.join("start.mapper");
    std::fs::write(&start_mapper, mapper)?;
    let mut config = CommandConfig::new(String::new());
    config.workdir = Some(dir.to_path_buf());
    config.timeout = Duration::from_secs(args.timeout.max(1));
    let backend = CommandBackend::new(config);
    let quoted = |p: &Path| shell_word(&p.to_string_lossy());
    let line = format!(
        "{} -mapping {} -mapwright:app {} -mapwright:machine {}",
        args.command
            .iter()
            .map(|w| shell_word(w))
            .collect::<Vec<_>>()
            .join(" "),
        quoted(&start_mapper),
        quoted(&scratch.join("app.json")),
        quoted(&scratch.join("machine.json")),
    );
    eprintln!("mapwright init: running your program once with mapwright's mapper:\n  {line}");
    let started = Instant::now();
    let captured = backend
        .execute(&line, &scratch.join("first-run.log"))
        .map_err(anyhow::Error::msg)?;
    let wall_s = started.elapsed().as_secs_f64();
    let tail = tail_lines(&captured.text, 30);
    if captured.timed_out {
        bail!(
            "the program did not finish within {} s and was killed (--timeout); nothing was \
             written. Its last output:\n{tail}",
            args.timeout
        );
    }
    if captured.code != Some(0) {
        bail!(
            "the program failed ({}); nothing was written. Its last output:\n{tail}",
            match (captured.code, captured.signal) {
                (Some(c), _) => format!("exit status {c}"),
                (None, Some(s)) => format!("signal {s}"),
                _ => "unknown status".into(),
            }
        );
    }
    if !scratch.join("app.json").is_file() {
        eprintln!(
            "mapwright init: the program ran, but mapwright's mapper did not (it writes the \
             descriptions): it is not linked in, or register_mappers() is not called before \
             Runtime::start. Nothing was written.\n\n{}",
            link_instructions(&default_lib_dir())
        );
        bail!("mapwright's mapper did not run in the program");
    }
    let (elapsed, _) = backend.parse(&captured.text);
    Ok(FirstRun { wall_s, elapsed })
}

fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn write_project(
    args: &InitArgs,
    dir: &Path,
    program: &str,
    mapper_path: &Path,
    mapper_text: &str,
    scratch: &Path,
    run: FirstRun,
) -> anyhow::Result<ExitCode> {
    let mut app = App::load(scratch.join("app.json"))
        .map_err(|e| anyhow::anyhow!("the description the mapper wrote cannot be read: {e}"))?;
    let semantic = names_regions(&app);
    if semantic {
        app.run_flags = "-tm:use_semantic_name".into();
    }
    let app_name = format!("{program}.app.json");
    let machine_name = format!("{program}.machine.json");
    std::fs::write(
        dir.join(&app_name),
        app.to_json_pretty().map_err(anyhow::Error::msg)?,
    )?;
    std::fs::copy(scratch.join("machine.json"), dir.join(&machine_name))
        .context("the mapper wrote no machine description")?;
    let wrote_mapper = !mapper_path.is_file();
    if wrote_mapper {
        std::fs::write(mapper_path, mapper_text)?;
    }
    let template = template_for(&args.command, semantic);
    // Room for slower candidates than the first run, and never under a minute.
    let timeout_s = ((run.wall_s * 10.0).ceil() as u64).max(60);
    std::fs::write(
        dir.join(crate::project::PROJECT_FILE),
        project_file(
            &args.command,
            &template,
            &app_name,
            &machine_name,
            timeout_s,
        ),
    )?;

    let measured = app
        .tasks
        .iter()
        .filter(|t| t.work.measured.is_some())
        .count();
    let arguments: usize = app.tasks.iter().map(|t| t.regions.len()).sum();
    let host = app
        .tasks
        .iter()
        .find_map(|t| t.work.measured.as_ref().map(|m| m.host.clone()))
        .unwrap_or_else(|| "this host".into());
    let mapper_name = mapper_path
        .strip_prefix(dir)
        .unwrap_or(mapper_path)
        .display()
        .to_string();
    outln!(
        "mapwright init: ran {program} once with mapwright's mapper ({:.1} s{})",
        run.wall_s,
        match run.elapsed {
            Some(e) => format!("; it printed an elapsed time of {e:.4} s"),
            None => String::new(),
        }
    )?;
    outln!(
        "  wrote {}  (runtime \"command\": {template})",
        crate::project::PROJECT_FILE
    )?;
    outln!(
        "  wrote {app_name}  ({} tasks, {arguments} region arguments; the work of {measured} \
         measured on {host})",
        app.tasks.len()
    )?;
    outln!("  wrote {machine_name}  (this host, as Legion saw it)")?;
    if wrote_mapper {
        outln!("  wrote {mapper_name}  (a starting mapper: edit it, or let the optimizer)")?;
    } else {
        outln!("  kept {mapper_name}  (the first run used it)")?;
    }
    if semantic {
        outln!(
            "  your program names its regions: the template adds -tm:use_semantic_name, so \
             `Region` statements match those names"
        )?;
    }
    if run.elapsed.is_none() {
        outln!(
            "  note: your program printed no time mapwright reads (a line with `ELAPSED TIME = \
             <seconds>` or `Execution time: <n> ms`); `run` and `optimize` need one"
        )?;
    }
    outln!(
        "next: mapwright explain {mapper_name}   (what the mapper decides for your tasks)\n      \
         mapwright optimize --in-place {mapper_name}   (runs your program on each candidate)"
    )?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_template_runs_the_users_command_on_the_candidate() {
        assert_eq!(
            template_for(&words("./circuit -ll:cpu 4"), false),
            "./circuit -ll:cpu 4 -mapping {mapper}"
        );
        assert_eq!(
            template_for(
                &words("./circuit -mapping old.mapper -ll:cpu 4 -mapwright:app a.json"),
                true
            ),
            "./circuit -ll:cpu 4 -tm:use_semantic_name -mapping {mapper}"
        );
        assert_eq!(
            template_for(&words("./c -tm:use_semantic_name"), true),
            "./c -tm:use_semantic_name -mapping {mapper}"
        );
        let odd = vec!["./my prog".to_string(), "-x".into(), "it's".into()];
        assert_eq!(
            template_for(&odd, false),
            "'./my prog' -x 'it'\\''s' -mapping {mapper}"
        );
    }

    #[test]
    fn linking_is_read_from_the_executable() {
        assert_eq!(linked_in(b"#!/bin/sh\nexec ./x"), Linked::Unknown);
        assert_eq!(
            linked_in(b"\x7fELF....libmapwright_mapper.so\0"),
            Linked::Yes
        );
        assert_eq!(linked_in(b"\x7fELF....mw_session_open\0"), Linked::Yes);
        assert_eq!(linked_in(b"\x7fELF....liblegion.so\0"), Linked::No);
    }

    #[test]
    fn the_project_file_is_valid_toml_with_the_command_runtime() {
        let text = project_file(
            &words("./circuit -ll:cpu 4"),
            "./circuit -ll:cpu 4 -mapping {mapper}",
            "circuit.app.json",
            "circuit.machine.json",
            60,
        );
        let value: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(value["runtime"].as_str(), Some("command"));
        assert_eq!(value["app"].as_str(), Some("circuit.app.json"));
        assert_eq!(
            value["command"]["template"].as_str(),
            Some("./circuit -ll:cpu 4 -mapping {mapper}")
        );
        assert_eq!(value["command"]["timeout_s"].as_integer(), Some(60));
    }

    #[test]
    fn the_link_instructions_name_every_build_system() {
        let text = link_instructions("/opt/mw/lib");
        for want in [
            "register_mappers();",
            "-L/opt/mw/lib -lmapwright_mapper -Wl,-rpath,/opt/mw/lib",
            "target_link_libraries",
            "regentlib.saveobj",
        ] {
            assert!(text.contains(want), "{want}\n{text}");
        }
    }
}
