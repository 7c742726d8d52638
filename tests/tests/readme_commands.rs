//! The README's first screen holds two commands that must work on a fresh
//! machine. Running the first here would build the workspace in release
//! inside the test run; this checks what once broke it quietly instead:
//! `cargo run -p mapwright` needs to know which of the package's binaries
//! to run (a second one, `mapwright-heap`, made it refuse until the
//! manifest named a default), and the mapper it optimizes must exist.

use std::path::Path;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first fenced `sh` block of the README: the two commands.
fn first_screen_commands() -> Vec<String> {
    let readme = read("../README.md");
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```sh block in the README");
    block
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_first_screen_runs_the_cli_and_all_tests() {
    let commands = first_screen_commands();
    assert_eq!(commands.len(), 2, "{commands:?}");
    let run = &commands[0];
    assert!(
        run.starts_with("cargo run --release -p mapwright -- optimize "),
        "{run}"
    );
    assert_eq!(commands[1], "cargo test --workspace");
    // The mapper it optimizes ships with the repository.
    let mapper = run
        .split_whitespace()
        .find(|w| w.ends_with(".mapper"))
        .expect("a mapper file in the first command");
    assert!(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(mapper)
            .is_file(),
        "{mapper}"
    );
}

#[test]
fn cargo_run_of_the_cli_package_knows_which_binary_to_run() {
    let manifest = read("../server/Cargo.toml");
    let declared = manifest.matches("[[bin]]").count();
    let discovered =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/src/bin"))
            .map(|d| {
                d.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
                    .count()
            })
            .unwrap_or(0);
    if declared + discovered > 1 {
        assert!(
            manifest.contains("default-run = \"mapwright\""),
            "server/Cargo.toml has {} binaries and no default-run: `cargo run -p mapwright` refuses",
            declared + discovered
        );
    }
}
