//! `mapwright fmt [--check] FILE...`: format in place, or report files that
//! are not formatted. `-` reads standard input and writes standard output.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use mapwright_grammar::format::format_file;

use super::read_input;

#[derive(Debug, Args)]
pub struct FmtArgs {
    /// Mapper files (`-` for standard input -> standard output).
    #[arg(required = true)]
    pub files: Vec<String>,
    /// Do not write; exit 1 if a file is not formatted.
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: FmtArgs) -> anyhow::Result<ExitCode> {
    let mut unformatted = 0usize;
    for path in &args.files {
        let source = read_input(path)?;
        // Without a whole-file token vector (see bench/memory).
        let (formatted, skipped) = format_file(&source);
        if path == "-" {
            if args.check {
                if formatted != source {
                    unformatted += 1;
                    eprintln!("<stdin> is not formatted");
                }
            } else {
                print!("{formatted}");
            }
            continue;
        }
        if formatted == source {
            continue;
        }
        if args.check {
            unformatted += 1;
            println!("{path} is not formatted");
        } else {
            std::fs::write(path, &formatted).with_context(|| format!("cannot write `{path}`"))?;
            eprintln!("formatted {path}");
        }
        if skipped {
            eprintln!(
                "note: {path} has syntax errors; statements with errors were left as written"
            );
        }
    }
    Ok(if unformatted > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
