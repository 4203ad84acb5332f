//! `ingot-msl`: translate or reflect an MSL file from the command line.
//!
//! ```text
//! ingot-msl translate FILE --target cuda|cpu [--constant NAME=VALUE]... [--fast-math] [-I DIR]... [--entry NAME]... [-D NAME[=VALUE]]...
//! ingot-msl reflect FILE [--constant NAME=VALUE]... [-I DIR]... [-D NAME[=VALUE]]...
//! ```

use std::process::ExitCode;

use ingot_msl::{reflect_with, translate, Options, Target};

const USAGE: &str = "usage:\n  ingot-msl translate FILE --target cuda|cpu [--constant NAME=VALUE]... [--fast-math] [-I DIR]... [--entry NAME]... [-D NAME[=VALUE]]...\n  ingot-msl reflect FILE [--constant NAME=VALUE]... [-I DIR]... [-D NAME[=VALUE]]...";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("{msg}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<String, String> {
    let (cmd, rest) = args.split_first().ok_or(USAGE)?;
    if rest.iter().any(|a| a == "-h" || a == "--help") {
        return Ok(format!("{USAGE}\n"));
    }
    match cmd.as_str() {
        "translate" => {
            let (file, src, opts, target) = parse(rest)?;
            let mut opts = opts;
            opts.target = target.ok_or(format!("--target is required\n{USAGE}"))?;
            let t = translate(&src, &opts).map_err(|e| format!("{file}: {e}"))?;
            Ok(t.text)
        }
        "reflect" => {
            let (file, src, opts, _) = parse(rest)?;
            let m = reflect_with(&src, &opts).map_err(|e| format!("{file}: {e}"))?;
            let mut s = serde_json::to_string_pretty(&m).map_err(|e| e.to_string())?;
            s.push('\n');
            Ok(s)
        }
        "-h" | "--help" => Ok(format!("{USAGE}\n")),
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    }
}

/// The file (name and text), the options and the `--target` given after a command.
fn parse(rest: &[String]) -> Result<(String, String, Options, Option<Target>), String> {
    let mut file = None;
    let mut target = None;
    let mut opts = Options::new(Target::Cpu);
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--target" => {
                let t = it.next().ok_or("--target needs a value (cuda or cpu)")?;
                target =
                    Some(Target::parse(t).ok_or(format!("unknown target `{t}` (cuda or cpu)"))?);
            }
            "--constant" => {
                let kv = it.next().ok_or("--constant needs NAME=VALUE")?;
                let (k, v) = kv
                    .split_once('=')
                    .ok_or(format!("--constant `{kv}` is not NAME=VALUE"))?;
                opts.constants.insert(k.to_string(), v.to_string());
            }
            "--fast-math" => opts.fast_math = true,
            "--entry" => {
                let n = it.next().ok_or("--entry needs a kernel name")?;
                opts.entries
                    .get_or_insert_with(Vec::new)
                    .push(n.to_string());
            }
            "-I" | "--include" => {
                let d = it.next().ok_or("-I needs a folder")?;
                opts.include_dirs.push(d.into());
            }
            "-D" | "--define" => {
                let kv = it.next().ok_or("-D needs NAME[=VALUE]")?;
                let (k, v) = kv.split_once('=').unwrap_or((kv.as_str(), ""));
                opts.defines.insert(k.to_string(), v.to_string());
            }
            s if s.starts_with("--") => return Err(format!("unknown option `{s}`\n{USAGE}")),
            s => {
                if file.replace(s.to_string()).is_some() {
                    return Err(format!("more than one file given\n{USAGE}"));
                }
            }
        }
    }
    let file = file.ok_or(USAGE)?;
    opts.file_name = file.clone();
    let src = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
    Ok((file, src, opts, target))
}
