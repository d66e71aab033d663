//! `clusterlab`: check and run lab files in a terminal, with the same engine
//! the browser app uses.

use std::io::Write;
use std::process::ExitCode;

use clusterlab_engine::lab::authoring::{build, check, compile, schema};
use clusterlab_engine::shell::Stream;
use clusterlab_engine::{load, Session};

const USAGE: &str = "\
clusterlab: check and run ClusterLab lab files (a simulation: nothing runs on a real cluster)

Usage:
  clusterlab check LAB_FILE...
  clusterlab build LAB_DIR --out DIR
  clusterlab run LAB_FILE [--seed N] [--host HOST] -- COMMAND LINE
  clusterlab schema
  clusterlab --help | --version

check  validates lab files, every variant of each: the format, the hardware
       each fault names, that each fault shows in some command's output and
       that each reference answer grades as correct. Prints each problem as
       FILE:LINE:COL: message and exits 1 if any file has one.
run    runs one command line in the lab's initial state on HOST (default: the
       first node), prints what it prints and exits with its status. The words
       after -- are joined with single spaces into one shell line. --seed
       picks the trainee variant, as the web app's variant number does.
build  checks every lab file in LAB_DIR as check does and, when all pass,
       writes each lab's data (ID.json) and the catalog (index.json) into
       DIR, the form the web app loads labs in. Any problem fails the build
       and writes nothing.
schema prints a JSON Schema of the lab format, for editors.
";

fn main() -> ExitCode {
    // Arguments that are not UTF-8 are read with U+FFFD in place of the bad bytes.
    let args: Vec<String> = std::env::args_os().skip(1).map(|arg| arg.to_string_lossy().into_owned()).collect();
    match args.first().map(String::as_str) {
        Some("check") => check(&args[1..]),
        Some("build") => build_labs(&args[1..]),
        Some("run") => run(&args[1..]),
        Some("schema") => {
            print!("{}", schema::json_schema());
            ExitCode::SUCCESS
        }
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some("-V" | "--version") => {
            println!("clusterlab {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some(other) => usage_error(&format!("unknown subcommand `{other}`")),
        None => usage_error("missing subcommand"),
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("clusterlab: {message}\n\n{USAGE}");
    ExitCode::from(2)
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|error| format!("{path}: cannot read: {error}"))
}

fn check(paths: &[String]) -> ExitCode {
    if paths.is_empty() {
        return usage_error("check needs at least one LAB_FILE");
    }
    let mut clean = true;
    let mut ids: Vec<(String, String)> = Vec::new();
    for path in paths {
        let source = match read(path) {
            Ok(source) => source,
            Err(message) => {
                println!("{message}");
                clean = false;
                continue;
            }
        };
        match compile(&source) {
            Ok(compiled) => {
                let id = &compiled.lab.id;
                if let Some((other, _)) = ids.iter().find(|(_, seen)| seen == id) {
                    println!("{path}:1:1: lab id `{id}` is also used by {other}");
                    clean = false;
                }
                for problem in check::deep(&compiled, &source) {
                    println!("{}", problem.render(path));
                    clean = false;
                }
                ids.push((path.clone(), compiled.lab.id));
            }
            Err(problems) => {
                clean = false;
                for problem in problems {
                    println!("{}", problem.render(path));
                }
            }
        }
    }
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn build_labs(args: &[String]) -> ExitCode {
    let (dir, out) = match args {
        [dir, flag, out] if flag == "--out" => (dir, out),
        [flag, out, dir] if flag == "--out" => (dir, out),
        _ => return usage_error("build needs LAB_DIR --out DIR"),
    };
    let mut paths: Vec<std::path::PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
            .collect(),
        Err(error) => {
            eprintln!("clusterlab: {dir}: cannot read: {error}");
            return ExitCode::from(2);
        }
    };
    paths.sort();
    let mut sources = Vec::new();
    for path in &paths {
        match read(&path.display().to_string()) {
            Ok(source) => sources.push((path.display().to_string(), source)),
            Err(message) => {
                eprintln!("clusterlab: {message}");
                return ExitCode::FAILURE;
            }
        }
    }
    let built = match build::build(&sources) {
        Ok(built) => built,
        Err(problems) => {
            for (path, problem) in &problems {
                eprintln!("{}", problem.render(path));
            }
            eprintln!("clusterlab: build failed: {} problem{} in {dir}; nothing was written", problems.len(), if problems.len() == 1 { "" } else { "s" });
            return ExitCode::FAILURE;
        }
    };
    let out = std::path::Path::new(out);
    if let Err(error) = std::fs::create_dir_all(out) {
        eprintln!("clusterlab: {}: cannot create: {error}", out.display());
        return ExitCode::from(2);
    }
    for (name, contents) in &built.files {
        if let Err(error) = std::fs::write(out.join(name), contents) {
            eprintln!("clusterlab: {}: cannot write: {error}", out.join(name).display());
            return ExitCode::from(2);
        }
    }
    eprintln!("clusterlab: built {} lab{} into {}", built.catalog.labs.len(), if built.catalog.labs.len() == 1 { "" } else { "s" }, out.display());
    ExitCode::SUCCESS
}

fn run(args: &[String]) -> ExitCode {
    let (options, line) = match args.iter().position(|arg| arg == "--") {
        Some(split) => (&args[..split], args[split + 1..].join(" ")),
        None => return usage_error("run needs `-- COMMAND LINE` after the lab file"),
    };
    let mut path = None;
    let mut seed: u64 = 1;
    let mut host = None;
    let mut options = options.iter();
    while let Some(option) = options.next() {
        match option.as_str() {
            "--seed" => match options.next().map(|value| value.parse::<u64>()) {
                Some(Ok(value)) => seed = value,
                _ => return usage_error("--seed needs a whole number"),
            },
            "--host" => match options.next() {
                Some(value) => host = Some(value.clone()),
                None => return usage_error("--host needs a node name"),
            },
            other if other.starts_with('-') => return usage_error(&format!("unknown option `{other}`")),
            other if path.is_none() => path = Some(other.to_string()),
            other => return usage_error(&format!("unexpected argument `{other}`")),
        }
    }
    let Some(path) = path else {
        return usage_error("run needs a LAB_FILE");
    };
    let source = match read(&path) {
        Ok(source) => source,
        Err(message) => {
            eprintln!("clusterlab: {message}");
            return ExitCode::from(2);
        }
    };
    let lab = match load(&source) {
        Ok(lab) => lab,
        Err(problems) => {
            for problem in problems {
                eprintln!("{}", problem.render(&path));
            }
            return ExitCode::from(2);
        }
    };
    let host = host.unwrap_or_else(|| lab.first_host().to_string());
    if !lab.cluster.hostnames.contains(&host) {
        eprintln!("clusterlab: {host} is not a node of this lab; its nodes are {}", lab.cluster.hostnames.join(", "));
        return ExitCode::from(2);
    }
    let mut session = Session::new(lab.instantiate(seed), &host);
    let transcript = session.run(&line);
    let (mut stdout, mut stderr) = (std::io::stdout().lock(), std::io::stderr().lock());
    for (stream, text) in &transcript.chunks {
        // A closed pipe (`| head`) is not an error worth reporting.
        let _ = match stream {
            Stream::Stdout | Stream::Pager(_) => stdout.write_all(text.as_bytes()),
            Stream::Stderr => stderr.write_all(text.as_bytes()),
        };
    }
    let _ = stdout.flush();
    ExitCode::from(transcript.status.clamp(0, 255) as u8)
}
