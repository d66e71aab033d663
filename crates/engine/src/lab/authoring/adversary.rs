//! The built-in adversary: gaming strategies played on every variant a
//! lab's test runs, so that a lab where guessing or going through the
//! motions pays fails in CI and on the author page alike.
//!
//! - **a** answers everything with nothing run: each choice in turn within
//!   the attempts (its expected score over the orders choices are shown
//!   in), numbers and values taken from the briefing and the prompts,
//!   every check pressed;
//! - **b** runs only commands that change nothing (the solution's
//!   read-only steps, common diagnostics on every node, `dctech list`),
//!   then checks every task and state question;
//! - **c** runs each task's program with failing arguments, on the wrong
//!   host, and without `sudo`, then checks every task and state question;
//! - **d** hands over a record of placeholders, and one that names every
//!   node, HCA, GPU, number and action at once, before and after the fix.
//!
//! A lab fails when any strategy earns more than [`LIMIT`] of its points.

use std::rc::Rc;

use super::solution::{self, answer_one};
use super::Compiled;
use crate::grading::{HandoffRecord, Reading};
use crate::lab::spec::HANDOFF_ACTIONS;
use crate::lab::{template, OptionMatch, Question, QuestionKind, StatusMatch};
use crate::model::change::Change;
use crate::shell::{Session, SessionJson};
use crate::store::LabState;

/// The most of a lab's points any strategy may earn.
pub const LIMIT: f64 = 0.20;

/// One strategy's best score over the variants played.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub strategy: char,
    pub description: &'static str,
    pub points: f64,
    pub possible: u32,
    /// The variant it did best on.
    pub seed: u64,
}

impl Verdict {
    pub fn share(&self) -> f64 {
        if self.possible == 0 {
            0.0
        } else {
            self.points / f64::from(self.possible)
        }
    }

    pub fn passes(&self) -> bool {
        self.share() <= LIMIT + 1e-9
    }

    /// `strategy b (run only read-only commands, then check) earns 45% (9 of 20 points, seed 3)`.
    pub fn line(&self) -> String {
        format!(
            "strategy {} ({}) earns {:.0}% ({:.1} of {} points, seed {})",
            self.strategy,
            self.description,
            self.share() * 100.0,
            self.points,
            self.possible,
            self.seed
        )
    }
}

const DESCRIPTIONS: [(char, &str); 4] = [
    ('a', "answer everything with nothing run"),
    ('b', "run only read-only commands, then check"),
    ('c', "run each task's program wrongly, then check"),
    ('d', "hand over placeholders"),
];

/// Commands an operator might run anywhere without changing anything.
const READ_ONLY: &[&str] = &[
    "nvidia-smi",
    "nvidia-smi -L",
    "nvidia-smi -q",
    "nvidia-smi topo -m",
    "nvidia-smi --query-gpu=index,pcie.link.gen.current,pcie.link.width.current,temperature.gpu,clocks.sm --format=csv",
    "dcgmi diag -r 1",
    "dcgmi diag -r 2",
    "ibstat",
    "ibv_devinfo",
    "perfquery",
    "sinfo -R",
    "systemctl status nvidia-fabricmanager",
    "dmesg",
    "lspci",
    "all_reduce_perf -b 8 -e 1G -f 2 -g 8",
    "dctech list",
];

/// Every strategy's best share over the lab's test variants.
pub fn play(compiled: &Compiled) -> Vec<Verdict> {
    let possible = compiled.lab.points_possible();
    let mut best: Vec<Verdict> =
        DESCRIPTIONS.iter().map(|(strategy, description)| Verdict { strategy: *strategy, description, points: 0.0, possible, seed: 0 }).collect();
    for seed in solution::seeds(compiled) {
        let scores = [guess(compiled, seed), read_only(compiled, seed), wrong_runs(compiled, seed), placeholders(compiled, seed)];
        for (verdict, points) in best.iter_mut().zip(scores) {
            if points > verdict.points || verdict.seed == 0 {
                verdict.points = verdict.points.max(points);
                verdict.seed = seed;
            }
        }
    }
    best
}

/// A fresh session of the variant, with its lab state.
fn start(compiled: &Compiled, seed: u64) -> (Session, LabState) {
    let session = compiled.lab.session(seed);
    let state = LabState::new(&compiled.lab, "adversary", seed, SessionJson::of(&session.snapshot()));
    (session, state)
}

/// Points the task and state questions give when checked now.
fn checks(questions: &[Question], session: &Session, state: &mut LabState) -> f64 {
    questions
        .iter()
        .filter(|q| matches!(q.kind, QuestionKind::Task { .. } | QuestionKind::State { .. }))
        .map(|q| f64::from(answer_one(q, questions, "check", session, state).points))
        .sum()
}

/// The words of `text` worth guessing: numbers, and words with digits.
fn guesses(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '`' | '"' | '*')) {
        let word = word.trim_matches(|c: char| matches!(c, '.' | ':' | '!' | '?'));
        if word.chars().any(|c| c.is_ascii_digit()) && !out.iter().any(|seen| seen == word) {
            out.push(word.to_string());
        }
    }
    out
}

/// a: nothing run; each choice in turn (expected over the order they are
/// shown in), the briefing's numbers and words for the rest.
fn guess(compiled: &Compiled, seed: u64) -> f64 {
    let lab = &compiled.lab;
    let variant = lab.variant(seed);
    let (session, mut state) = start(compiled, seed);
    let mut seen = format!("{}\n{}\n{}", lab.title, lab.summary, variant.briefing.plain_text());
    for question in &variant.questions {
        seen.push('\n');
        seen.push_str(&question.prompt.plain_text());
    }
    let candidates = guesses(&seen);
    let mut points = 0.0;
    for question in &variant.questions {
        let options: Option<f64> = match &question.kind {
            QuestionKind::Choice { choices, .. } | QuestionKind::Entity { choices, .. } => Some(choices.len() as f64),
            QuestionKind::Multi { choices, .. } => Some(2f64.powi(choices.len().min(30) as i32) - 1.0),
            QuestionKind::Order { items } => Some((1..=items.len().min(20)).map(|n| n as f64).product()),
            _ => None,
        };
        if let Some(options) = options {
            // Trying the options in turn: the right one comes at attempt k
            // with chance 1/options, for each k the attempts allow.
            let allowed = question.attempts.unwrap_or(u32::MAX).min(options.min(1e6) as u32);
            let reference = question.reference_answer();
            points += (1..=allowed).map(|k| f64::from(question.grade_attempt(&reference, k, 0).points)).sum::<f64>() / options.max(1.0);
            continue;
        }
        match &question.kind {
            QuestionKind::Number { .. } | QuestionKind::Text { .. } => {
                for guess in &candidates {
                    if !state.open(question) {
                        break;
                    }
                    if matches!(question.read(guess), Reading::Unclear(_)) {
                        continue;
                    }
                    answer_one(question, &variant.questions, guess, &session, &mut state);
                }
                points += f64::from(state.grade(question).map_or(0, |g| g.points));
            }
            QuestionKind::Task { .. } | QuestionKind::State { .. } => {
                points += f64::from(answer_one(question, &variant.questions, "check", &session, &mut state).points);
            }
            QuestionKind::Handoff { fields, .. } => {
                let record = HandoffRecord { fields: vec!["x".to_string(); fields.len()], checked: (0..32).collect(), ..Default::default() };
                points += f64::from(answer_one(question, &variant.questions, &record.to_response(), &session, &mut state).points);
            }
            _ => {}
        }
    }
    points
}

/// Whether a line left the cluster as it was: what it added is traffic,
/// servers that listen and files the trainee wrote (not rule files, which
/// the cluster's Prometheus loads).
fn changed_nothing(changes: &[(i64, Change)]) -> bool {
    // A written file is a note, unless Prometheus reads it as a rule.
    let rules = format!("{}/", crate::model::storage::RULES_DIR);
    changes.iter().all(|(_, change)| match change {
        Change::WriteFile { path, .. } => !path.starts_with(&rules),
        _ => matches!(change, Change::Traffic { .. } | Change::Listen { .. } | Change::StopListening { .. }),
    })
}

/// b: only commands that change nothing, then every check.
fn read_only(compiled: &Compiled, seed: u64) -> f64 {
    let lab = &compiled.lab;
    let variant = lab.variant(seed);
    let (mut session, mut state) = start(compiled, seed);
    let watch = Rc::new(lab.watch(seed));
    let mut lines: Vec<String> = compiled
        .solution
        .iter()
        .flat_map(|s| s.steps.iter())
        .map(|step| template::substitute(step, &variant.values).unwrap_or_else(|_| step.clone()))
        .filter(|step| !step.trim_start().starts_with("answer "))
        .collect();
    for host in &lab.cluster.hostnames {
        lines.extend(READ_ONLY.iter().map(|command| format!("ssh {host} {command}")));
    }
    for line in lines {
        let before = session.snapshot();
        let changes_before = before.changes.len();
        let entries_before = state.transcript.len();
        solution::run_line(&mut session, &mut state, &line);
        if !changed_nothing(&session.changes()[changes_before.min(session.changes().len())..]) {
            // Undo it: this strategy changes nothing.
            session = Session::restore(lab.instantiate(seed), before);
            session.observe(watch.clone());
            state.transcript.truncate(entries_before);
        }
    }
    checks(&variant.questions, &session, &mut state)
}

/// A task's run as a command line: its program, options and operands, with
/// a value for each pattern.
fn command_of(question: &Question) -> Option<(String, Option<String>, bool)> {
    let QuestionKind::Task { run, .. } = &question.kind else { return None };
    let literal = |pattern: &str| if pattern.contains(['*', '?', '[']) { "0".to_string() } else { pattern.to_string() };
    let mut words = vec![run.program.clone()];
    for (name, matcher) in &run.options {
        let dash = if name.chars().count() == 1 { "-" } else { "--" };
        match matcher {
            OptionMatch::Present => words.push(format!("{dash}{name}")),
            OptionMatch::Value(pattern) if dash == "-" => words.push(format!("-{name} {}", literal(pattern))),
            OptionMatch::Value(pattern) => words.push(format!("--{name}={}", literal(pattern))),
            OptionMatch::Absent => {}
        }
    }
    words.extend(run.operands.iter().map(|o| literal(o)));
    Some((words.join(" "), run.host.clone(), run.status == StatusMatch::Success))
}

/// A task's run with only its flags: the values and operands that pick a
/// target left out. None when it has none to leave out.
fn partial_command(question: &Question) -> Option<String> {
    let QuestionKind::Task { run, .. } = &question.kind else { return None };
    let valued = run.options.iter().any(|(_, m)| matches!(m, OptionMatch::Value(_))) || !run.operands.is_empty();
    if !valued {
        return None;
    }
    let mut words = vec![run.program.clone()];
    for (name, matcher) in &run.options {
        if *matcher == OptionMatch::Present {
            words.push(format!("{}{name}", if name.chars().count() == 1 { "-" } else { "--" }));
        }
    }
    Some(words.join(" "))
}

/// c: each task's program with failing arguments, on the wrong hosts, and
/// without sudo; then every check.
fn wrong_runs(compiled: &Compiled, seed: u64) -> f64 {
    let lab = &compiled.lab;
    let variant = lab.variant(seed);
    let (mut session, mut state) = start(compiled, seed);
    let hosts = &lab.cluster.hostnames;
    for question in &variant.questions {
        let Some((line, host, _)) = command_of(question) else { continue };
        let partial = partial_command(question);
        let program = line.split(' ').next().unwrap_or_default().to_string();
        for node in hosts {
            solution::run_line(&mut session, &mut state, &format!("ssh {node} {program} --clusterlab-no-such-option"));
            let right_host = host.as_deref().is_none_or(|pattern| crate::pattern::matches(pattern, node));
            if !right_host {
                solution::run_line(&mut session, &mut state, &format!("ssh {node} {line}"));
                solution::run_line(&mut session, &mut state, &format!("ssh {node} sudo {line}"));
            } else if let Some(partial) = partial.as_ref() {
                // The right host, with the options that pick a target left
                // out (`sudo nvidia-smi -r` without `-i`).
                solution::run_line(&mut session, &mut state, &format!("ssh {node} sudo {partial}"));
            }
        }
    }
    checks(&variant.questions, &session, &mut state)
}

/// A record that names everything at once: every node, HCA and GPU, the
/// briefing's numbers and every action.
fn shotgun(compiled: &Compiled, briefing: &str) -> String {
    let cluster = &compiled.lab.cluster;
    let mut words: Vec<String> = cluster.hostnames.clone();
    words.extend((0..cluster.hcas.unwrap_or(cluster.preset.hca_count())).map(|h| format!("mlx5_{h}")));
    words.extend((0..cluster.preset.gpu_buses.len()).map(|g| format!("GPU {g}")));
    words.extend(guesses(briefing));
    words.extend(HANDOFF_ACTIONS.iter().map(|(action, _)| action.to_string()));
    words.join(" ")
}

/// d: placeholders, and everything at once, before and after the fix.
fn placeholders(compiled: &Compiled, seed: u64) -> f64 {
    let lab = &compiled.lab;
    let variant = lab.variant(seed);
    let handoffs: Vec<&Question> = variant.questions.iter().filter(|q| matches!(q.kind, QuestionKind::Handoff { .. })).collect();
    if handoffs.is_empty() {
        return 0.0;
    }
    let everything = shotgun(compiled, &variant.briefing.plain_text());
    let mut best = 0.0f64;
    let solved = compiled.solution.as_ref().map(|s| solution::run(compiled, s, seed));
    for fixed in [false, true] {
        for text in ["x", everything.as_str()] {
            let (mut session, mut state) = start(compiled, seed);
            if fixed {
                let Some(run) = &solved else { continue };
                // The fix as the solution made it, then a record of nothing.
                for entry in &run.state.transcript {
                    if !entry.line.trim_start().starts_with("answer ") && !entry.is_printed() {
                        solution::run_line(&mut session, &mut state, &entry.line);
                    }
                }
            }
            let mut points = 0.0;
            for question in &handoffs {
                let QuestionKind::Handoff { fields, .. } = &question.kind else { continue };
                let record = HandoffRecord { fields: vec![text.to_string(); fields.len()], checked: (0..32).collect(), ..Default::default() };
                points += f64::from(answer_one(question, &variant.questions, &record.to_response(), &session, &mut state).points);
            }
            best = best.max(points);
        }
    }
    best
}
