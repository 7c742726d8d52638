//! Emacs with eglot end to end (issue 39), in a real editor: headless
//! Emacs (`emacs --batch`) loads `editors/emacs/mapwright.el`, starts the
//! real server (`mapwright lsp`, the binary built from this workspace)
//! through eglot on a project whose `mapwright.toml` names cannon, and
//! checks what a user of eglot meets: diagnostics; RET in the code-action
//! menu at a missing `;` inserts the `;` (the E0305 reported on the same
//! statement must not come first); the one-word layout quick fix; hover
//! and completion documentation as plain text (eglot without markdown-mode
//! declares only `plaintext`); formatting; "Explain" as a one-line message
//! naming a file (eglot 1.9 has no `window/showDocument`); shutdown and a
//! clean exit. The editor side is `editors/emacs/test/e2e.el`; this test
//! then checks the files Emacs saved. The same steps run with lsp-mode
//! (`editors/emacs/test/lsp-mode-e2e.el`).
//!
//! Needs `emacs` (Debian's `emacs-nox`, 28) with eglot (`elpa-eglot`, 1.9)
//! and lsp-mode (`elpa-lsp-mode`, 8.0) on `PATH` (or
//! `MAPWRIGHT_EMACS=/path/to/emacs`). Without them the tests are marked
//! ignored, with the reason (tests/build.rs looks when the tests are
//! built), unless `MAPWRIGHT_REQUIRE_EMACS=1` (set by `.ci/run`, which
//! installs all three): then the build fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Wall-clock limit for one Emacs run (the script's own waits are 30 s).
const EMACS_TIMEOUT: Duration = Duration::from_secs(120);

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `emacs` to use (tests/build.rs found one that loads the package
/// the test needs, or the test is ignored).
fn emacs() -> PathBuf {
    std::env::var_os("MAPWRIGHT_EMACS")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join("emacs"))
                    .find(|p| p.is_file())
            })
        })
        .expect("`emacs` was on PATH when the tests were built, and is not now")
}

/// A fresh scratch directory (removed on success).
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("mapwright-emacs-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A fresh project for cannon with the two files the scripts edit.
fn project(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("mapwright.toml"), "app = \"cannon\"\n").unwrap();
    std::fs::write(dir.join("semicolon.mapper"), "Task * GPU").unwrap();
    std::fs::write(
        dir.join("layout.mapper"),
        "Task * GPU,CPU;\nLayout task_4 * * SOA F_order;\n",
    )
    .unwrap();
    dir
}

/// What both clients must leave in the files: RET at the missing `;`
/// inserted the `;`, not the E0305's new Layout line (the final newline is
/// Emacs's, on saving a prog-mode buffer); one word changed by the layout
/// fix, then the buffer formatted; the explanation in its file.
fn check_files(dir: &Path) {
    assert_eq!(
        std::fs::read_to_string(dir.join("semicolon.mapper")).unwrap(),
        "Task * GPU;\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("layout.mapper")).unwrap(),
        "Task * GPU, CPU;\nLayout task_4 * * SOA C_order;\n"
    );
    let explained = std::fs::read_to_string(dir.join(".mapwright/layout.explain.txt")).unwrap();
    assert!(explained.contains("task_4"), "{explained}");
}

/// Runs `script` on the project in `dir`; the exit status and the log.
fn run_script(emacs: &Path, script: &str, dir: &Path) -> (bool, String) {
    let package = workspace_root().join("editors/emacs");
    let mut child = Command::new(emacs)
        .arg("--batch")
        .arg("-l")
        .arg(package.join("test").join(script))
        .env(
            "MAPWRIGHT_SERVER",
            env!("CARGO_BIN_EXE_mapwright-under-test"),
        )
        .env("MAPWRIGHT_EMACS_PACKAGE", &package)
        .env("MAPWRIGHT_E2E_DIR", dir)
        // Keep Emacs's state out of the user's home.
        .env("HOME", dir)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start emacs");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > EMACS_TIMEOUT {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = child.wait_with_output().unwrap();
    let events = std::fs::read_to_string(dir.join("eglot-events.log")).unwrap_or_default();
    let log = format!(
        "--- emacs stdout ---\n{}\n--- emacs stderr ---\n{}\n--- eglot events (on failure) ---\n{events}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let status = status.unwrap_or_else(|| panic!("emacs ran past {EMACS_TIMEOUT:?}\n{log}"));
    (status.success(), log)
}

/// Runs `script` on a fresh project and checks what it left.
fn run_and_check(emacs: &Path, name: &str, script: &str) {
    let dir = project(name);
    let (ok, log) = run_script(emacs, script, &dir);
    eprintln!("{log}");
    assert!(ok, "the {name} script failed\n{log}");
    assert!(log.contains("[emacs-e2e] OK"), "{log}");
    check_files(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(
    not(have_eglot),
    ignore = "needs `emacs` with eglot: apt-get install emacs-nox elpa-eglot"
)]
fn eglot_gets_diagnostics_fixes_hover_completion_format_and_a_clean_exit() {
    run_and_check(&emacs(), "eglot", "e2e.el");
}

/// The same with lsp-mode (Debian's `elpa-lsp-mode`, 8.0), which takes
/// Markdown, lists the actions in the server's order (RET in a completion
/// UI takes the first) and sends `shutdown` with `"params": {}`.
#[test]
#[cfg_attr(
    not(have_lsp_mode),
    ignore = "needs `emacs` with lsp-mode: apt-get install emacs-nox elpa-lsp-mode"
)]
fn lsp_mode_gets_diagnostics_fixes_hover_completion_format_and_a_clean_exit() {
    run_and_check(&emacs(), "lsp-mode", "lsp-mode-e2e.el");
}
