//! `mapwright app import` on every real wrapper log: the descriptions it
//! writes load again and a mapper can be checked against them.

use std::path::Path;
use std::process::Command;

fn logs() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/apps/wrapper-logs");
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.retain(|p| p.extension().is_some_and(|e| e == "log"));
    out.sort();
    out
}

#[test]
fn every_wrapper_log_imports_and_its_descriptions_load() {
    let logs = logs();
    assert!(logs.len() >= 5, "the shared wrapper logs are missing");
    let tmp = std::env::temp_dir().join(format!("mapwright-import-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for log in logs {
        let stem = log.file_stem().unwrap().to_string_lossy().into_owned();
        let app = tmp.join(format!("{stem}.app.json"));
        let machine = tmp.join(format!("{stem}.machine.toml"));
        let out = Command::new(env!("CARGO_BIN_EXE_mapwright"))
            .args(["app", "import"])
            .arg(&log)
            .arg("--app-out")
            .arg(&app)
            .arg("--machine-out")
            .arg(&machine)
            .output()
            .expect("run mapwright");
        assert!(
            out.status.success(),
            "{stem}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The written files are valid descriptions: check a trivial mapper against them.
        let mapper = tmp.join("m.mapper");
        std::fs::write(&mapper, "Task * GPU,CPU;\n").unwrap();
        let check = Command::new(env!("CARGO_BIN_EXE_mapwright"))
            .arg("check")
            .arg(&mapper)
            .arg("--app")
            .arg(&app)
            .arg("--machine")
            .arg(&machine)
            .output()
            .expect("run mapwright check");
        let stderr = String::from_utf8_lossy(&check.stderr);
        assert!(!stderr.contains("error: "), "{stem}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
