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

    let plugin = workspace_root().join("editors/nvim");
    let script = plugin.join("test/e2e.lua");
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
        .env("MAPWRIGHT_E2E_FILE", &file)
        .env("MAPWRIGHT_E2E_CODE", code)
        // Keep Neovim's LSP log and state out of the user's home.
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .current_dir(&dir)
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
        if start.elapsed() > NVIM_TIMEOUT {
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
    let status = status.unwrap_or_else(|| panic!("nvim ran past {NVIM_TIMEOUT:?}\n{log}"));
    assert!(status.success(), "nvim exited with {status}\n{log}");
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
