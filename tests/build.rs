//! What the end-to-end tests of real parts can run here, so that those
//! whose part is absent are marked ignored, with the reason, and the test
//! summary says they did not run:
//! - `legion_sdk`: the Legion SDK installed by runtime/legion/sdk.sh (its
//!   version read from that script, the one place it is written), or a
//!   user's own Legion named by LEGION_DIR (tests/legion_e2e.rs);
//! - `have_nvim`: `nvim` on PATH, or MAPWRIGHT_NVIM (tests/nvim_e2e.rs);
//! - `have_eglot`, `have_lsp_mode`: `emacs` on PATH (or MAPWRIGHT_EMACS)
//!   that loads eglot, and lsp-mode (tests/emacs_e2e.rs).
//!
//! With MAPWRIGHT_REQUIRE_LEGION / _NVIM / _EMACS=1 (set by .ci/run) a
//! missing part fails the build instead.
//!
//! The script reruns when PATH, those variables or sdk.sh change, or once
//! the SDK's stamp changes; `sdk.sh` touches this file when it installs,
//! since watching a stamp that does not exist yet would rebuild this crate
//! on every build.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    for name in [
        "PATH",
        "LEGION_DIR",
        "LEGION_SDK",
        "MAPWRIGHT_NVIM",
        "MAPWRIGHT_EMACS",
        "MAPWRIGHT_REQUIRE_LEGION",
        "MAPWRIGHT_REQUIRE_NVIM",
        "MAPWRIGHT_REQUIRE_EMACS",
    ] {
        println!("cargo:rerun-if-env-changed={name}");
    }
    for cfg in ["legion_sdk", "have_nvim", "have_eglot", "have_lsp_mode"] {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
    }
    legion();
    let nvim = tool("MAPWRIGHT_NVIM", "nvim");
    found(
        "have_nvim",
        nvim.is_some(),
        "MAPWRIGHT_REQUIRE_NVIM",
        "`nvim` on PATH (apt-get install neovim)",
    );
    let emacs = tool("MAPWRIGHT_EMACS", "emacs");
    let loads = |feature| emacs.as_deref().is_some_and(|e| emacs_loads(e, feature));
    found(
        "have_eglot",
        loads("eglot"),
        "MAPWRIGHT_REQUIRE_EMACS",
        "`emacs` on PATH with eglot (apt-get install emacs-nox elpa-eglot)",
    );
    found(
        "have_lsp_mode",
        loads("lsp-mode"),
        "MAPWRIGHT_REQUIRE_EMACS",
        "`emacs` on PATH with lsp-mode (apt-get install emacs-nox elpa-lsp-mode)",
    );
}

/// Sets `cfg` when `have`; otherwise fails where `require` is set to 1.
fn found(cfg: &str, have: bool, require: &str, what: &str) {
    if have {
        println!("cargo:rustc-cfg={cfg}");
    } else if std::env::var(require).is_ok_and(|v| v == "1") {
        panic!("{require}=1 but the tests cannot find {what}");
    }
}

fn legion() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("..");
    let script = root.join("runtime/legion/sdk.sh");
    println!("cargo:rerun-if-changed={}", script.display());
    let version = std::fs::read_to_string(&script)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("version=\"")?
                    .split('"')
                    .next()
                    .map(String::from)
            })
        })
        .unwrap_or_default();
    let sdk = std::env::var_os("LEGION_SDK")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/legion-sdk"));
    let stamp = sdk.join(format!(".installed-{version}"));
    println!(
        "cargo:rustc-env=MAPWRIGHT_LEGION_SDK_STAMP={}",
        stamp.display()
    );
    if stamp.exists() {
        println!("cargo:rerun-if-changed={}", stamp.display());
    }
    found(
        "legion_sdk",
        std::env::var_os("LEGION_DIR").is_some() || stamp.exists(),
        "MAPWRIGHT_REQUIRE_LEGION",
        &format!(
            "the Legion SDK at {} (run runtime/legion/sdk.sh, or set LEGION_DIR)",
            sdk.display()
        ),
    );
}

/// The program named by `var`, or `name` on PATH.
fn tool(var: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Whether Emacs loads `feature` from Debian's packages.
fn emacs_loads(emacs: &Path, feature: &str) -> bool {
    Command::new(emacs)
        .args([
            "--batch",
            "--eval",
            &format!("(progn (require 'package) (package-initialize) (require '{feature}))"),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
