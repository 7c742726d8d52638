//! The Neovim plugin (`editors/nvim`) end to end, in a real editor: headless
//! Neovim with the plugin on its runtimepath opens a copy of a corpus probe
//! with one error, receives the diagnostic from the real server
//! (`mapwright lsp`, the binary built from this workspace), applies the
//! quick fix through the client, formats the buffer and writes it; the test
//! then checks the file's text. The editor side of the script is
//! `editors/nvim/test/e2e.lua`.
//!
//! Needs `nvim` (0.7 or later) on `PATH` (or `MAPWRIGHT_NVIM=/path/to/nvim`).
//! Without it the tests are marked ignored, with the reason (tests/build.rs
//! looks when the tests are built), unless `MAPWRIGHT_REQUIRE_NVIM=1` (set
//! by `.ci/run`, which installs Debian's `neovim`): then the build fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Wall-clock limit for one Neovim run (the script's own waits are 30 s).
const NVIM_TIMEOUT: Duration = Duration::from_secs(90);

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn probe(name: &str) -> PathBuf {
    workspace_root().join("../shared/corpus/probes").join(name)
}

/// The `nvim` to use (tests/build.rs found one, or the test is ignored).
fn nvim() -> PathBuf {
    if let Some(p) = std::env::var_os("MAPWRIGHT_NVIM") {
        return PathBuf::from(p);
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("nvim"))
                .find(|p| p.is_file())
        })
        .expect("`nvim` was on PATH when the tests were built, and is not now")
}

/// A fresh scratch directory for one test (removed on success).
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("mapwright-nvim-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `editors/nvim/test/SCRIPT` in headless Neovim with the plugin, in
/// `dir`, with the server under test and `vars`; fails the test unless it
/// exits with status 0 within `limit`.
fn run_script(
    nvim: &Path,
    script: &str,
    dir: &Path,
    vars: &[(&str, &std::ffi::OsStr)],
    limit: Duration,
) {
    let plugin = workspace_root().join("editors/nvim");
    let script = plugin.join("test").join(script);
    let mut child = Command::new(nvim)
        .arg("--headless")
        .arg("--clean")
        .arg("--cmd")
        .arg(format!("set rtp^={}", plugin.display()))
        .arg("-c")
        .arg(format!("luafile {}", script.display()))
        .env(
            "MAPWRIGHT_SERVER",
            env!("CARGO_BIN_EXE_mapwright-under-test"),
        )
        .envs(vars.iter().copied())
        // Keep Neovim's LSP log and state out of the user's home.
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nvim");

    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = child.wait_with_output().unwrap();
    let log = format!(
        "--- nvim stdout ---\n{}\n--- nvim stderr ---\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("{log}");
    let status = status.unwrap_or_else(|| panic!("nvim ran past {limit:?}\n{log}"));
    assert!(status.success(), "nvim exited with {status}\n{log}");
}

/// Opens a writable copy of `probe_name` in headless Neovim, expects a
/// diagnostic with `code`, lets the script apply its quick fix and format,
/// and returns the written file's text.
fn fix_and_format(nvim: &Path, probe_name: &str, code: &str) -> String {
    let dir = scratch(probe_name.trim_end_matches(".mapper"));
    // Written, not copied: the shared corpus is read-only, and a copy would
    // keep its mode (Neovim refuses to write a read-only file).
    let file = dir.join("mapper-under-test.mapper");
    let text = std::fs::read_to_string(probe(probe_name)).unwrap();
    std::fs::write(&file, text).unwrap();

    run_script(
        nvim,
        "e2e.lua",
        &dir,
        &[
            ("MAPWRIGHT_E2E_FILE", file.as_os_str()),
            ("MAPWRIGHT_E2E_CODE", code.as_ref()),
        ],
        NVIM_TIMEOUT,
    );
    let out = std::fs::read_to_string(&file).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
#[cfg_attr(
    not(have_nvim),
    ignore = "needs `nvim` on PATH: apt-get install neovim"
)]
fn missing_semicolon_is_fixed_and_the_buffer_formatted() {
    let nvim = nvim();
    // `Task * GPU,CPU` lacks its `;` (E0101); the fix inserts it, and
    // formatting then spaces the list.
    let text = fix_and_format(&nvim, "g05-missing-semicolon-next-stmt.mapper", "E0101");
    assert_eq!(
        text,
        "Task * GPU, CPU;\n\n# comment\nRegion * * GPU FBMEM;\n"
    );
}

#[test]
#[cfg_attr(
    not(have_nvim),
    ignore = "needs `nvim` on PATH: apt-get install neovim"
)]
fn unknown_constraint_is_removed() {
    let nvim = nvim();
    // `No_Align` is not a layout constraint (E0103); the preferred fix drops it.
    let text = fix_and_format(&nvim, "g07-no-align.mapper", "E0103");
    assert_eq!(text, "Layout * * * SOA;\n");
}

/// What a Neovim user sees after `:MapperRun` on real Legion (issue 46):
/// the plugin shows the code lens giving the measured time of the tasks the
/// `IndexTaskMap` statement decided, as virtual text on its line, and hover
/// on a task name says what the run measured. circuit with every launch
/// point on the first CPU, in a project whose mapwright.toml says
/// `runtime = "legion"`; the programs are found as a user's server finds
/// them (built by runtime/legion/build.sh).
#[test]
#[cfg_attr(
    any(not(have_nvim), not(legion_sdk)),
    ignore = "needs `nvim` on PATH and the Legion SDK (apt-get install neovim; runtime/legion/sdk.sh)"
)]
fn after_a_real_run_the_lens_and_hover_show_what_was_measured() {
    const MAPPER: &str = "Task * CPU;
Region * * CPU SYSMEM;
mcpu = Machine(CPU);
def first_cpu(Task task) {
    return mcpu[0, 0];
}
IndexTaskMap init_piece,init_pointers,calculate_new_currents,distribute_charge,update_voltages,print_summary first_cpu;
";
    let config = mapwright_runtime::backend::legion::LegionConfig::locate(4, 0)
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = scratch("measured");
    std::fs::write(
        dir.join("mapwright.toml"),
        "app = \"circuit\"\nruntime = \"legion\"\n",
    )
    .unwrap();
    let file = dir.join("circuit.mapper");
    std::fs::write(&file, MAPPER).unwrap();
    let line = MAPPER
        .lines()
        .position(|l| l.starts_with("IndexTaskMap"))
        .unwrap()
        .to_string();
    let out = dir.join("seen.txt");
    run_script(
        &nvim(),
        "measured.lua",
        &dir,
        &[
            ("MAPWRIGHT_E2E_FILE", file.as_os_str()),
            ("MAPWRIGHT_E2E_LINE", line.as_ref()),
            ("MAPWRIGHT_E2E_OUT", out.as_os_str()),
            ("MAPWRIGHT_LEGION_BUILD", config.build.as_os_str()),
            (
                "MAPWRIGHT_LEGION_LIBRARY_PATH",
                config.library_path.as_ref(),
            ),
        ],
        Duration::from_secs(300),
    );
    let seen = std::fs::read_to_string(&out).unwrap();
    eprintln!("{seen}");
    let section = |name: &str| {
        let start = seen.find(&format!("--- {name}\n")).unwrap() + name.len() + 5;
        let rest = &seen[start..];
        rest[..rest.find("\n--- ").unwrap_or(rest.len())].to_string()
    };
    let lenses = section("lenses");
    assert!(
        lenses
            .lines()
            .any(|t| t.starts_with("measured ") && t.contains("calculate_new_currents")),
        "{seen}"
    );
    let shown = section("virtual text");
    assert!(shown.contains("measured "), "the lens is not shown: {seen}");
    let hover = section("hover");
    assert!(
        hover.contains("**measured** in the run on legion-host"),
        "{seen}"
    );
    assert!(hover.contains("on node0 CPU0 ×"), "{seen}");
    let _ = std::fs::remove_dir_all(&dir);
}
