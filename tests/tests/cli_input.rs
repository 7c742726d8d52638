//! `mapwright check` reads any bytes, from a file or from standard input,
//! the same way: bytes that are not UTF-8 are replacement characters,
//! reported where they are (E0001), not a failure to read.

use std::io::Write;
use std::process::{Command, Stdio};

fn check(args: &[&str], stdin: &[u8]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mapwright-under-test"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn bytes_that_are_not_utf8_are_reported_from_a_file_and_from_stdin_alike() {
    let bytes: &[u8] = b"m = Machine(GPU);\nx = \xff\xfe 1;\nTask * GPU;\n";
    let dir = std::env::temp_dir().join(format!("mapwright-cli-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.mapper");
    std::fs::write(&file, bytes).unwrap();
    let (code, from_file) = check(&["check", "--format", "json", file.to_str().unwrap()], b"");
    assert_eq!(code, Some(1), "{from_file}");
    assert!(from_file.contains("E0001"), "{from_file}");
    let (code, from_stdin) = check(&["check", "--format", "json", "-"], bytes);
    assert_eq!(code, Some(1), "{from_stdin}");
    // The same diagnostics, only the file name differs.
    let name = file.to_str().unwrap();
    assert_eq!(from_stdin.replace("<stdin>", name), from_file);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fmt_leaves_a_file_that_is_not_utf8_as_it_is() {
    // A Latin-1 comment: formatting with replacement characters would
    // have written U+FFFD over its byte.
    let bytes: &[u8] = b"Task   *  GPU; # caf\xe9\nx=1;\n";
    let dir = std::env::temp_dir().join(format!("mapwright-fmt-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("latin1.mapper");
    std::fs::write(&file, bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright-under-test"))
        .args(["fmt", file.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not UTF-8 (byte 20)"), "{stderr}");
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    // From standard input: the same error, nothing printed.
    let mut child = Command::new(env!("CARGO_BIN_EXE_mapwright-under-test"))
        .args(["fmt", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn optimize_refuses_a_mapper_that_is_not_utf8_before_it_runs() {
    let bytes: &[u8] = b"Task * GPU; # caf\xe9\n";
    let dir = std::env::temp_dir().join(format!("mapwright-opt-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("latin1.mapper");
    std::fs::write(&file, bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright-under-test"))
        .args([
            "optimize",
            file.to_str().unwrap(),
            "--app",
            "cannon",
            "--in-place",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not UTF-8 (byte 17)"), "{stderr}");
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    let _ = std::fs::remove_dir_all(&dir);
}
