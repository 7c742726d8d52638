//! Whether the real-Legion tests (tests/legion_e2e.rs) can run here: the
//! Legion SDK installed by runtime/legion/sdk.sh (its version read from that
//! script, the one place it is written), or a user's own Legion named by
//! LEGION_DIR. Without it those tests are marked ignored, with the reason,
//! so the test summary says they did not run; with
//! MAPWRIGHT_REQUIRE_LEGION=1 (set by .ci/run) a missing SDK fails the
//! build instead.
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("..");
    let script = root.join("runtime/legion/sdk.sh");
    println!("cargo:rerun-if-changed={}", script.display());
    println!("cargo:rerun-if-env-changed=LEGION_DIR");
    println!("cargo:rerun-if-env-changed=LEGION_SDK");
    println!("cargo:rerun-if-env-changed=MAPWRIGHT_REQUIRE_LEGION");
    println!("cargo:rustc-check-cfg=cfg(legion_sdk)");
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
    // Rerun once the SDK appears (a path that does not exist reruns).
    println!("cargo:rerun-if-changed={}", stamp.display());
    println!(
        "cargo:rustc-env=MAPWRIGHT_LEGION_SDK_STAMP={}",
        stamp.display()
    );
    let have = std::env::var_os("LEGION_DIR").is_some() || stamp.exists();
    if have {
        println!("cargo:rustc-cfg=legion_sdk");
    } else if std::env::var("MAPWRIGHT_REQUIRE_LEGION").is_ok_and(|v| v == "1") {
        panic!(
            "MAPWRIGHT_REQUIRE_LEGION=1 but the Legion SDK is not installed at {} \
             (run runtime/legion/sdk.sh, or set LEGION_DIR)",
            sdk.display()
        );
    }
}
