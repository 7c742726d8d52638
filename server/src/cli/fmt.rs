//! `mapwright fmt [--check] FILE...`: format in place, or report files that
//! are not formatted. `-` reads standard input and writes standard output.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use mapwright_grammar::format::format_file;

use super::read_bytes;

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
    let mut not_utf8 = 0usize;
    for path in &args.files {
        // Not read with replacement characters, as `check` reads: writing
        // those back would replace the bytes (a Latin-1 comment, say).
        let source = match String::from_utf8(read_bytes(path)?) {
            Ok(source) => source,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let shown = if path == "-" {
                    "<stdin>"
                } else {
                    path.as_str()
                };
                errln!(
                    "error: {shown} is not UTF-8 (byte {at}) and is left as it is; `mapwright check` shows where"
                );
                not_utf8 += 1;
                continue;
            }
        };
        // Without a whole-file token vector (see bench/memory).
        let (formatted, skipped) = format_file(&source);
        if path == "-" {
            if args.check {
                if formatted != source {
                    unformatted += 1;
                    errln!("<stdin> is not formatted");
                }
            } else {
                out!("{formatted}")?;
            }
            continue;
        }
        if formatted == source {
            continue;
        }
        if args.check {
            unformatted += 1;
            outln!("{path} is not formatted")?;
        } else {
            std::fs::write(path, &formatted).with_context(|| format!("cannot write `{path}`"))?;
            errln!("formatted {path}");
        }
        if skipped {
            errln!("note: {path} has syntax errors; statements with errors were left as written");
        }
    }
    Ok(if not_utf8 > 0 {
        ExitCode::from(2)
    } else if unformatted > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
