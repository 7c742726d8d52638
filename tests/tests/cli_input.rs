//! Input that is not UTF-8, through the real binary. `mapwright check`
//! reads it from a file or from standard input the same way: invalid
//! bytes are replacement characters, reported where they are (E0001), not
//! a failure to read. `fmt` and `optimize`, which write the text back,
//! refuse it and leave the file as it is. And output that cannot be
//! written: a reader that closes the pipe early ends the output, not the
//! command; a full disk is an error that says so.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

/// `mapwright ARGS`, not started yet.
fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mapwright-under-test"));
    command.args(args);
    command
}

/// `mapwright ARGS` started with all three standard streams piped.
fn spawn_piped(args: &[&str]) -> Child {
    command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `mapwright ARGS` with `stdin` on its standard input.
fn mapwright(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = spawn_piped(args);
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// A fresh folder for test `name` holding `file.mapper` with `bytes`.
fn mapper_file(name: &str, bytes: &[u8]) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("mapwright-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("file.mapper");
    std::fs::write(&file, bytes).unwrap();
    (dir, file)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn bytes_that_are_not_utf8_are_reported_from_a_file_and_from_stdin_alike() {
    let bytes: &[u8] = b"m = Machine(GPU);\nx = \xff\xfe 1;\nTask * GPU;\n";
    let (dir, file) = mapper_file("cli-input", bytes);
    let name = file.to_str().unwrap();
    let out = mapwright(&["check", "--format", "json", name], b"");
    let from_file = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{from_file}");
    assert!(from_file.contains("E0001"), "{from_file}");
    let out = mapwright(&["check", "--format", "json", "-"], bytes);
    let from_stdin = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{from_stdin}");
    // The same diagnostics, only the file name differs.
    assert_eq!(from_stdin.replace("<stdin>", name), from_file);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fmt_leaves_a_file_that_is_not_utf8_as_it_is() {
    // A Latin-1 comment: formatting with replacement characters would
    // have written U+FFFD over its byte.
    let bytes: &[u8] = b"Task   *  GPU; # caf\xe9\nx=1;\n";
    let (dir, file) = mapper_file("fmt-input", bytes);
    let out = mapwright(&["fmt", file.to_str().unwrap()], b"");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not UTF-8 (byte 20)"), "{stderr}");
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    // From standard input: the same error, nothing printed.
    let out = mapwright(&["fmt", "-"], bytes);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn optimize_refuses_a_mapper_that_is_not_utf8_before_it_runs() {
    let bytes: &[u8] = b"Task * GPU; # caf\xe9\n";
    let (dir, file) = mapper_file("opt-input", bytes);
    let args = [
        "optimize",
        file.to_str().unwrap(),
        "--app",
        "cannon",
        "--in-place",
    ];
    let out = mapwright(&args, b"");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not UTF-8 (byte 17)"), "{stderr}");
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `mapwright ARGS` (standard input from `stdin`), reads the first
/// line it prints and closes the pipe, as `mapwright ... | head -1` does;
/// returns that line, the exit status and standard error.
fn first_line_then_close(args: &[&str], stdin: &[u8]) -> (String, Option<i32>, String) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = spawn_piped(args);
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // The reader is gone: the pipe's read end is closed here.
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    let _ = writer.join();
    (line, status.code(), stderr)
}

#[test]
fn a_reader_that_stops_early_ends_the_output_not_the_command() {
    // Far more output than a pipe holds (64 KB): the command is still
    // writing when the reader goes.
    let many_errors = "x = ;\n".repeat(20_000);
    let (dir, file) = mapper_file("reader-gone", many_errors.as_bytes());
    let (line, code, stderr) = first_line_then_close(&["check", file.to_str().unwrap()], b"");
    assert!(line.starts_with("error[E0100]"), "{line}");
    // It was `println!`: a panic, its message and a backtrace (status 101).
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Its own status: errors were found.
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error(s)"), "{stderr}");
    let unformatted = "Task   *   GPU;\n".repeat(20_000);
    let (line, code, stderr) = first_line_then_close(&["fmt", "-"], unformatted.as_bytes());
    assert_eq!(line, "Task * GPU;\n");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(code, Some(0), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn optimize_in_place_writes_the_mapper_when_nobody_reads_its_report() {
    // `optimize --in-place ... | head -1`: the report goes nowhere, the
    // best mapper still goes into the file.
    let naive = "# A first mapper.\nTask * GPU,CPU;\n";
    let (dir, file) = mapper_file("reader-gone-optimize", naive.as_bytes());
    let mut child = spawn_piped(&[
        "optimize",
        file.to_str().unwrap(),
        "--app",
        "cannon",
        "--in-place",
        "--no-save",
        "--iterations",
        "3",
    ]);
    drop(child.stdin.take());
    // Closed before the command prints anything: every write finds the
    // reader gone.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("applied the best mapper"), "{stderr}");
    let written = std::fs::read_to_string(&file).unwrap();
    assert_ne!(written, naive);
    assert!(written.starts_with("# A first mapper.\n"), "{written}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_output_that_cannot_be_written_is_an_error_that_says_so_and_a_full_stderr_is_no_panic() {
    // A full disk behind `> file`: an error naming standard output, not a
    // panic and not a quiet exit.
    // Opened, not created: where there is no /dev/full, nothing to test.
    let full_device = || std::fs::OpenOptions::new().write(true).open("/dev/full");
    let Ok(full) = full_device() else {
        return;
    };
    let out = command(&["apps"])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot write to standard output"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Standard error full: nothing can be told there, and the command
    // still ends with its own status (`eprintln!` panicked: 101).
    let (dir, file) = mapper_file("stderr-full", b"x = 1\n");
    let out = command(&["check", file.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(full_device().unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("E0101"), "{}", text(&out.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}
