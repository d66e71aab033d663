//! `clusterlab`: check, build and try lab files in a terminal, with the same
//! engine the browser app uses.

mod doc_text;
mod package;
mod play;
mod questions;
mod test;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use clusterlab_engine::lab::authoring::diagnostic::{self, Diagnostic};
use clusterlab_engine::lab::authoring::{build, check, compile, markdown, schema};
use clusterlab_engine::lab::reference::{self, Reference};
use clusterlab_engine::shell::Stream;
use clusterlab_engine::{load, Lab, Session};

/// docs/authoring.md, which `build` turns into the author page's reference.
const AUTHORING_REFERENCE: &str = include_str!("../../../docs/authoring.md");

#[derive(Parser)]
#[command(
    name = "clusterlab",
    version,
    about = "Check, build and try ClusterLab lab files (a simulation: nothing runs on a real cluster)",
    long_about = "Check, build and try ClusterLab lab files.\n\n\
        A lab is a simulation: `run` and `play` type commands at an emulated GPU\n\
        cluster made from the lab file, and nothing runs on a real cluster.",
    after_help = "Exit status: 0 when all is well, 1 when a lab has problems (check, build),\n\
        2 for a usage error or a lab that cannot be loaded; `run` exits with the\n\
        command line's status.",
    subcommand_required = true,
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate lab files, every variant of each
    #[command(long_about = "Validate lab files, every variant of each: the format, the hardware each\n\
        fault names, that each fault shows in some command's output and that each\n\
        reference answer grades as correct. Prints each problem as cargo does (or as\n\
        FILE:LINE:COL: message with --format short) and exits 1 if any file has one.")]
    Check {
        /// The lab files (TOML)
        #[arg(required = true, value_name = "LAB_FILE")]
        files: Vec<PathBuf>,
        /// How problems are printed
        #[arg(long, value_enum, default_value_t = Format::Pretty)]
        format: Format,
    },
    /// Check every lab in a directory and write the data the web app loads
    #[command(long_about = "Check every lab file (*.toml) in LAB_DIR as check does and, when all pass,\n\
        write each lab's data (ID.json) and the catalog (index.json) into DIR, the\n\
        form the web app loads labs in. Any problem fails the build and writes nothing.")]
    Build {
        /// The directory of lab files
        #[arg(value_name = "LAB_DIR")]
        dir: PathBuf,
        /// Where to write the lab data and the catalog [default: APP/labs]
        #[arg(long, value_name = "DIR", required_unless_present = "app")]
        out: Option<PathBuf>,
        /// The built app (Trunk's output): write the labs into APP/labs, name
        /// the service worker's cache after the build, and write the cmi5
        /// course package (APP/cmi5.xml, APP/clusterlab-cmi5.zip)
        #[arg(long, value_name = "APP")]
        app: Option<PathBuf>,
        /// How problems are printed
        #[arg(long, value_enum, default_value_t = Format::Pretty)]
        format: Format,
    },
    /// Run one command line in a lab's initial state
    #[command(long_about = "Run one command line in the lab's initial state on HOST, print what it prints\n\
        and exit with its status. The words after -- are joined with single spaces\n\
        into one shell line.")]
    Run {
        /// The lab file (TOML)
        #[arg(value_name = "LAB_FILE")]
        lab: PathBuf,
        #[command(flatten)]
        variant: VariantArgs,
        /// The shell line, after --
        #[arg(last = true, required = true, value_name = "COMMAND LINE")]
        line: Vec<OsString>,
    },
    /// Rehearse a lab interactively: its shell, its questions and their grading
    #[command(long_about = "Rehearse a lab as a trainee would: the lab's shell on HOST with line editing,\n\
        history and completion, plus `questions` (the questions of this variant),\n\
        `answer ID VALUE` (grade one), `hint ID` and `score`, graded as the web app\n\
        grades them. `exit` or Ctrl-D at the login shell's prompt ends; Ctrl-C drops\n\
        the line. When standard input is not a terminal, each line read is run in\n\
        turn, with no prompt or banner.")]
    Play {
        /// The lab file (TOML)
        #[arg(value_name = "LAB_FILE")]
        lab: PathBuf,
        #[command(flatten)]
        variant: VariantArgs,
        /// Keep the line editor's history in FILE between sessions
        #[arg(long, value_name = "FILE")]
        history: Option<PathBuf>,
        /// Take the lab as an exam: no hints, no verdicts until `submit`, one
        /// answer a question, the lab's time limit on the wall clock
        #[arg(long)]
        exam: bool,
    },
    /// Run every lab's solution and a wrong diagnosis through the engine
    #[command(long_about = "Run each lab's [solution] through the engine on at least two trainee variants:\n\
        type its steps at the first node's prompt, answer every question (task and\n\
        state questions by what the steps did) and require full marks; then answer\n\
        every question wrongly, with nothing run, and require each to score nothing.\n\
        PATH is a lab file or a directory of them. Exits 1 if any lab fails.")]
    Test {
        /// Lab files, or directories of lab files
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Print a JSON Schema of the lab format, for editors
    Schema,
}

#[derive(clap::Args)]
struct VariantArgs {
    /// The trainee variant, as the web app's variant number picks it
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// The node to log in to [default: the lab's first node]
    #[arg(long, value_name = "HOST")]
    host: Option<String>,
}

/// How problems are printed.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// As cargo prints errors: the message, the place, the line with a caret
    Pretty,
    /// FILE:LINE:COL: message, one a line, for editors
    Short,
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Check { files, format } => check(&files, format),
        Command::Build { dir, out, app, format } => {
            let out = out.or_else(|| app.as_ref().map(|app| app.join("labs"))).expect("clap requires one of them");
            build_labs(&dir, &out, app.as_deref(), format)
        }
        Command::Run { lab, variant, line } => run(&lab, &variant, &line),
        Command::Play { lab, variant, history, exam } => match open(&lab, &variant) {
            Ok((lab, host)) => play::play(lab, variant.seed, &host, history.as_deref(), exam),
            Err(code) => code,
        },
        Command::Test { paths } => test::test(&paths),
        Command::Schema => {
            print!("{}", schema::json_schema());
            ExitCode::SUCCESS
        }
    }
}

pub(crate) fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|error| format!("{}: cannot read: {error}", path.display()))
}

/// Each problem of one file, in `format`; with cargo's closing count when pretty.
pub(crate) fn report(problems: &[Diagnostic], file: &str, source: &str, format: Format, verb: &str) -> String {
    let mut out = String::new();
    for problem in problems {
        match format {
            Format::Pretty => out += &format!("{}\n", problem.render_pretty(file, source)),
            Format::Short => out += &format!("{}\n", problem.render(file)),
        }
    }
    if format == Format::Pretty && !problems.is_empty() {
        out += &format!("{}\n", diagnostic::summary(verb, file, problems.len()));
    }
    out
}

fn check(paths: &[PathBuf], format: Format) -> ExitCode {
    let mut clean = true;
    let mut ids: Vec<(String, String)> = Vec::new();
    let mut stdout = std::io::stdout().lock();
    for path in paths {
        let file = path.display().to_string();
        let source = match read(path) {
            Ok(source) => source,
            Err(message) => {
                let _ = writeln!(stdout, "{}{message}", if format == Format::Pretty { "error: " } else { "" });
                clean = false;
                continue;
            }
        };
        let problems = match compile(&source) {
            Ok(compiled) => {
                let id = &compiled.lab.id;
                let mut problems = Vec::new();
                if let Some((other, _)) = ids.iter().find(|(_, seen)| seen == id) {
                    problems.push(Diagnostic::spanning(&source, compiled.map.id.clone(), format!("lab id `{id}` is also used by {other}")));
                }
                problems.extend(check::deep(&compiled, &source));
                ids.push((file.clone(), compiled.lab.id));
                problems
            }
            Err(problems) => problems,
        };
        clean &= problems.is_empty();
        // A closed pipe (`| head`) is not an error worth reporting.
        let _ = stdout.write_all(report(&problems, &file, &source, format, "check").as_bytes());
    }
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn build_labs(dir: &Path, out: &Path, app: Option<&Path>, format: Format) -> ExitCode {
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => {
            entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).filter(|path| path.extension().is_some_and(|ext| ext == "toml")).collect()
        }
        Err(error) => {
            eprintln!("clusterlab: {}: cannot read: {error}", dir.display());
            return ExitCode::from(2);
        }
    };
    paths.sort();
    let mut sources = Vec::new();
    for path in &paths {
        match read(path) {
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
            let mut stderr = std::io::stderr().lock();
            for (path, problem) in &problems {
                let source = sources.iter().find(|(each, _)| each == path).map_or("", |(_, source)| source.as_str());
                let _ = match format {
                    Format::Pretty => writeln!(stderr, "{}", problem.render_pretty(path, source)),
                    Format::Short => writeln!(stderr, "{}", problem.render(path)),
                };
            }
            let count = problems.len();
            let _ = match format {
                Format::Pretty => writeln!(stderr, "{}; nothing was written", diagnostic::summary("build", &dir.display().to_string(), count)),
                Format::Short => writeln!(stderr, "clusterlab: build failed: {count} problem{} in {}; nothing was written", plural(count), dir.display()),
            };
            return ExitCode::FAILURE;
        }
    };
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
    // The authoring reference travels with the labs: the author page shows
    // it and links the problems that name its sections there.
    let reference = Reference::from_doc(markdown::parse(AUTHORING_REFERENCE));
    let reference_path = out.join(reference::FILE);
    if let Err(error) = std::fs::write(&reference_path, reference.to_json()) {
        eprintln!("clusterlab: {}: cannot write: {error}", reference_path.display());
        return ExitCode::from(2);
    }
    let count = built.catalog.labs.len();
    eprintln!("clusterlab: built {count} lab{} into {}", plural(count), out.display());
    if let Some(app) = app {
        let packaged = package::stamp_service_worker(app).and_then(|()| package::write_package(app, &built.catalog));
        if let Err(error) = packaged {
            eprintln!("clusterlab: {}: cannot write the cmi5 package: {error}", app.display());
            return ExitCode::from(2);
        }
        eprintln!("clusterlab: wrote the cmi5 course package {}", app.join(package::PACKAGE).display());
    }
    ExitCode::SUCCESS
}

fn plural(count: usize) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

/// The lab at `path` and the host to log in to, or the exit code after
/// saying why not (2: the lab cannot be used).
fn open(path: &Path, variant: &VariantArgs) -> Result<(Lab, String), ExitCode> {
    let file = path.display().to_string();
    let source = read(path).map_err(|message| {
        eprintln!("clusterlab: {message}");
        ExitCode::from(2)
    })?;
    let lab = load(&source).map_err(|problems| {
        eprint!("{}", report(&problems, &file, &source, Format::Pretty, "load"));
        ExitCode::from(2)
    })?;
    let host = variant.host.clone().unwrap_or_else(|| lab.first_host().to_string());
    if !lab.cluster.hostnames.contains(&host) {
        eprintln!("clusterlab: {host} is not a node of this lab; its nodes are {}", lab.cluster.hostnames.join(", "));
        return Err(ExitCode::from(2));
    }
    Ok((lab, host))
}

fn run(path: &Path, variant: &VariantArgs, words: &[OsString]) -> ExitCode {
    let (lab, host) = match open(path, variant) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    // Words that are not UTF-8 are read with U+FFFD in place of the bad bytes.
    let line = words.iter().map(|word| word.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let mut session = Session::new(lab.instantiate(variant.seed), &host);
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
