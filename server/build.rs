//! Whether `python3` runs here: the OpenTuner driver's self-test
//! (tests/optimize_cli.rs) is marked ignored without it, with the reason,
//! so the summary says it did not run. In CI (`CI` set; `.ci/run` installs
//! python3) a missing python3 fails the build instead.
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rustc-check-cfg=cfg(have_python3)");
    println!("cargo:rerun-if-env-changed=PATH");
    println!("cargo:rerun-if-env-changed=CI");
    let have = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if have {
        println!("cargo:rustc-cfg=have_python3");
    } else if std::env::var_os("CI").is_some() {
        panic!("python3 is required in CI (the OpenTuner driver's self-test)");
    }
}
