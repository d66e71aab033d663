//! `clusterlab test`: each lab's solution and its alternatives earn full
//! marks, a wrong diagnosis earns nothing and each of its mistakes no more
//! than its share, on several trainee variants.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clusterlab_engine::lab::authoring::adversary;
use clusterlab_engine::lab::authoring::compile;
use clusterlab_engine::lab::authoring::solution::{self, Run};

use crate::doc_text::safe;
use crate::{read, report, Format};

/// The lab files `paths` name: files as given, directories' `*.toml` sorted.
fn lab_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|error| format!("{}: cannot read: {error}", path.display()))?;
            let mut found: Vec<PathBuf> =
                entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).filter(|path| path.extension().is_some_and(|ext| ext == "toml")).collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Why a run failed, one line a question.
fn failures(run: &Run, want_correct: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for outcome in &run.outcomes {
        let full = outcome.correct && outcome.points == outcome.possible;
        let scored = outcome.points > 0 || outcome.correct;
        let why = outcome.why.as_ref().map_or(String::new(), |why| format!(": {}", safe(why)));
        if want_correct && !full {
            lines.push(format!(
                "question `{}` scored {}/{} with \u{201c}{}\u{201d}{why}",
                outcome.question,
                outcome.points,
                outcome.possible,
                safe(&outcome.response)
            ));
        }
        if !want_correct && scored {
            lines.push(format!(
                "question `{}` scored {}/{} for the wrong answer \u{201c}{}\u{201d}",
                outcome.question,
                outcome.points,
                outcome.possible,
                safe(&outcome.response)
            ));
        }
    }
    lines
}

/// Prints one run's verdict and its problems; true when it has none.
fn verdict(out: &mut dyn Write, lab: &str, seed: u64, kind: &str, run: &Run, problems: Vec<String>, show_transcript: bool) -> bool {
    let (points, possible) = run.score();
    let verdict = if problems.is_empty() { "ok" } else { "FAILED" };
    let _ = writeln!(out, "test {lab} seed {seed}{}: {kind} {points}/{possible} ... {verdict}", run.variant);
    for problem in &problems {
        let _ = writeln!(out, "  {problem}");
    }
    if !problems.is_empty() && show_transcript {
        // What the steps printed last helps to see why.
        for entry in run.state.transcript.iter().rev().take(3).rev() {
            let _ = writeln!(out, "  {}{}  (exit {})", safe(&entry.prompt), safe(&entry.line), entry.status);
        }
    }
    problems.is_empty()
}

fn test_file(path: &Path, out: &mut dyn Write) -> bool {
    let file = path.display().to_string();
    let source = match read(path) {
        Ok(source) => source,
        Err(message) => {
            let _ = writeln!(out, "error: {message}");
            return false;
        }
    };
    let compiled = match compile(&source) {
        Ok(compiled) => compiled,
        Err(problems) => {
            let _ = out.write_all(report(&problems, &file, &source, Format::Pretty, "test").as_bytes());
            return false;
        }
    };
    let Some(solution) = compiled.solution.clone() else {
        let _ =
            writeln!(out, "test {} ... FAILED\n  {file} has no [solution]: add the steps that find the evidence and the answers they support", compiled.lab.id);
        return false;
    };
    let mut ok = true;
    for seed in solution::seeds(&compiled) {
        for (kind, want_correct) in [("solution", true), ("wrong diagnosis", false)] {
            let run = if want_correct { solution::run(&compiled, &solution, seed) } else { solution::run_wrong(&compiled, &solution, seed) };
            ok &= verdict(out, &compiled.lab.id, seed, kind, &run, failures(&run, want_correct), want_correct);
        }
        for alternative in &solution.alternatives {
            let run = solution::run_path(&compiled, alternative, seed);
            ok &= verdict(out, &compiled.lab.id, seed, &format!("alternative \u{201c}{}\u{201d}", safe(&alternative.name)), &run, failures(&run, true), true);
        }
        for mistake in &solution.mistakes {
            let run = solution::run_path(&compiled, mistake, seed);
            let (points, possible) = run.score();
            let allowed = (f64::from(possible) * mistake.at_most).floor();
            let problems = if f64::from(points) > allowed {
                let scored = run.outcomes.iter().filter(|o| o.points > 0).map(|o| format!("`{}` {}/{}", o.question, o.points, o.possible));
                vec![format!(
                    "a mistake may earn at most {:.0}% ({allowed} points); it earned {}",
                    mistake.at_most * 100.0,
                    scored.collect::<Vec<_>>().join(", ")
                )]
            } else {
                Vec::new()
            };
            ok &= verdict(out, &compiled.lab.id, seed, &format!("mistake \u{201c}{}\u{201d}", safe(&mistake.name)), &run, problems, false);
        }
    }
    // The adversary: no gaming strategy may earn more than its share.
    for verdict in adversary::play(&compiled) {
        let passes = verdict.passes();
        let _ = writeln!(out, "test {} adversary: {} ... {}", compiled.lab.id, verdict.line(), if passes { "ok" } else { "FAILED" });
        if !passes {
            let _ = writeln!(
                out,
                "  a lab must not pay more than {:.0}% of its points for this: judge outcomes, limit attempts, or weigh the questions differently",
                adversary::LIMIT * 100.0
            );
        }
        ok &= passes;
    }
    ok
}

pub fn test(paths: &[PathBuf]) -> ExitCode {
    let files = match lab_files(paths) {
        Ok(files) => files,
        Err(message) => {
            eprintln!("clusterlab: {message}");
            return ExitCode::from(2);
        }
    };
    let mut stdout = std::io::stdout().lock();
    let failed: Vec<String> = files.iter().filter(|path| !test_file(path, &mut stdout)).map(|path| path.display().to_string()).collect();
    let _ = writeln!(
        stdout,
        "\ntest result: {}. {} lab{} passed; {} failed{}",
        if failed.is_empty() { "ok" } else { "FAILED" },
        files.len() - failed.len(),
        if files.len() - failed.len() == 1 { "" } else { "s" },
        failed.len(),
        if failed.is_empty() { String::new() } else { format!(": {}", failed.join(", ")) }
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
