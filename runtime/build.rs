//! What the runtime's own tests need from outside the crate, found at build
//! time, so that a test whose input is absent is marked ignored with the
//! reason and the summary says it did not run:
//! - `shared_corpus`: the shared corpus (`../shared/corpus`, beside the
//!   checkout); CI (`.ci/run` checks it first) always has it;
//! - `shared_logs`: the real logging-wrapper logs
//!   (`../shared/apps/wrapper-logs`), which the import tests read;
//! - `have_cxx`: a C++ compiler on PATH (`c++`, `g++` or `clang++`), which
//!   the check of the CUDA source against the host kernels compiles with.
use std::path::{Path, PathBuf};

fn main() {
    let shared = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../shared");
    for cfg in ["shared_corpus", "shared_logs", "have_cxx"] {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
    }
    if folder(&shared.join("corpus/public")) {
        println!("cargo:rustc-cfg=shared_corpus");
    }
    if folder(&shared.join("apps/wrapper-logs")) {
        println!("cargo:rustc-cfg=shared_logs");
    }
    println!("cargo:rerun-if-env-changed=PATH");
    if cxx_on_path() {
        println!("cargo:rustc-cfg=have_cxx");
    }
}

/// Whether `dir` is a folder. A path that does not exist reruns the
/// script, so the folder is noticed once it appears.
fn folder(dir: &Path) -> bool {
    println!("cargo:rerun-if-changed={}", dir.display());
    dir.is_dir()
}

/// Whether one of the C++ compilers the CUDA-source test tries is on PATH.
fn cxx_on_path() -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| {
        ["c++", "g++", "clang++"]
            .iter()
            .any(|c| dir.join(c).is_file())
    })
}
