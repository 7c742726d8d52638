//! Whether the shared corpus (`../shared/corpus`, beside the checkout) is
//! here: tests that read it are marked ignored without it, with the reason,
//! so the summary says they did not run. CI (`.ci/run` checks it first)
//! always has it.
use std::path::PathBuf;

fn main() {
    let corpus = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap())
        .join("../../shared/corpus/public");
    println!("cargo:rustc-check-cfg=cfg(shared_corpus)");
    // A path that does not exist reruns the script, so the corpus is
    // noticed once it appears.
    println!("cargo:rerun-if-changed={}", corpus.display());
    if corpus.is_dir() {
        println!("cargo:rustc-cfg=shared_corpus");
    }
}
