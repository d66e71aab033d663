//! A lab's `[solution]`, and running it: `clusterlab test`.
//!
//! The solution is what an operator would type to find the evidence, and
//! the answers that evidence supports. [`run`] types the steps into a fresh
//! session of one variant, answers every question (task and state questions
//! by what the steps did) and requires full marks; [`run_wrong`] answers
//! wrongly, having done nothing, and requires every question to score
//! nothing. So a lab whose faults, questions and solution drift apart fails
//! in CI, not in front of a trainee.

use std::collections::BTreeSet;
use std::ops::Range;

use super::file::{PathTable, SolutionTable, Spanned};
use super::Compiled;
use crate::grading::NOT_YET;
use crate::lab::evidence::{self, Baseline};
use crate::lab::{template, After, Question, QuestionKind, Tolerance};
use crate::shell::{Session, SessionJson};
use crate::store::{Entry, Evidence, LabState, Submitted};

/// The most steps a solution may have.
pub const MAX_STEPS: usize = 200;

#[derive(Clone, Debug, Default)]
pub struct Solution {
    /// Command lines, typed in order at the first node's prompt (`ssh HOST`
    /// moves, as it would for the trainee); `{var}`s allowed.
    pub steps: Vec<String>,
    /// Answers by question id; questions not named take the reference answer.
    pub answers: Vec<(String, String)>,
    /// Wrong answers by question id; questions not named get one made up
    /// from the reference answer (another choice, a far-off number).
    pub wrong: Vec<(String, String)>,
    /// Other ways through the lab (other commands, another order) that
    /// must earn full marks too.
    pub alternatives: Vec<Path>,
    /// Plausible wrong ways (a wrong diagnosis acted on, a fix that misses
    /// the deadline) that must score at most their `at_most`.
    pub mistakes: Vec<Path>,
}

/// A named way through the lab: steps and answers, as the solution's.
#[derive(Clone, Debug, Default)]
pub struct Path {
    pub name: String,
    pub steps: Vec<String>,
    pub answers: Vec<(String, String)>,
    /// For a mistake: the share of the lab's points it may earn.
    pub at_most: f64,
}

/// What a mistake may earn when its table does not say.
pub const MISTAKE_AT_MOST: f64 = 0.3;

fn pairs(list: Vec<(Spanned<String>, String)>) -> Vec<(String, String)> {
    list.into_iter().map(|(id, answer)| (id.into_inner(), answer)).collect()
}

fn share(text: &str) -> Option<f64> {
    match crate::lab::spec::parse_tolerance(text) {
        Some(Tolerance::Relative(fraction)) if fraction < 1.0 => Some(fraction),
        _ => None,
    }
}

impl Solution {
    pub fn from_table(table: SolutionTable) -> Solution {
        let path = |table: Spanned<PathTable>| {
            let table = table.into_inner();
            Path {
                name: table.name.unwrap_or_default(),
                steps: table.steps.into_iter().map(Spanned::into_inner).collect(),
                answers: pairs(table.answers),
                at_most: table.at_most.and_then(|text| share(text.get_ref())).unwrap_or(MISTAKE_AT_MOST),
            }
        };
        Solution {
            steps: table.steps.into_iter().map(Spanned::into_inner).collect(),
            answers: pairs(table.answers),
            wrong: pairs(table.wrong),
            alternatives: table.alternatives.into_iter().map(path).collect(),
            mistakes: table.mistakes.into_iter().map(path).collect(),
        }
    }

    /// The solution itself as a path.
    pub fn main_path(&self) -> Path {
        Path { name: "solution".to_string(), steps: self.steps.clone(), answers: self.answers.clone(), at_most: 1.0 }
    }
}

/// Problems in the table itself: unknown question ids, too many steps, a
/// mistake's share that is no percentage.
pub fn check_fields(table: &SolutionTable, question_ids: &BTreeSet<String>, problem: &mut impl FnMut(Range<usize>, String)) {
    let paths = table.alternatives.iter().chain(&table.mistakes).map(Spanned::get_ref);
    let step_lists = std::iter::once(&table.steps).chain(paths.clone().map(|path| &path.steps));
    for steps in step_lists {
        if let Some(step) = steps.get(MAX_STEPS) {
            problem(step.span(), format!("a solution may have at most {MAX_STEPS} steps; this one has {}", steps.len()));
        }
    }
    let answer_lists = [&table.answers, &table.wrong].into_iter().chain(paths.clone().map(|path| &path.answers));
    for (id, _) in answer_lists.flatten() {
        if !question_ids.contains(id.get_ref()) {
            let hint = super::suggestion(id.get_ref(), question_ids.iter().map(String::as_str));
            problem(id.span(), format!("`{}` is not a question of this lab{hint}", id.get_ref()));
        }
    }
    for at_most in paths.filter_map(|path| path.at_most.as_ref()) {
        if share(at_most.get_ref()).is_none() {
            problem(at_most.span(), format!("`at_most` must be a percentage below 100%, such as \"30%\", not `{}`", at_most.get_ref()));
        }
    }
}

/// One question's outcome in a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub question: String,
    pub response: String,
    pub correct: bool,
    pub points: u32,
    pub possible: u32,
    /// Why it fell short: the expectation and what was observed.
    pub why: Option<String>,
}

/// A run of the solution (or of a wrong diagnosis) on one variant.
#[derive(Clone, Debug)]
pub struct Run {
    pub seed: u64,
    /// ` (with bad_node = "gpu-002")`.
    pub variant: String,
    pub outcomes: Vec<Outcome>,
    /// The transcript the steps left, for a failure's report.
    pub state: LabState,
}

impl Run {
    pub fn score(&self) -> (u32, u32) {
        self.outcomes.iter().fold((0, 0), |(points, possible), o| (points + o.points, possible + o.possible))
    }
}

/// The seeds `clusterlab test` runs: at least two, and enough to reach
/// every value of every variable where the lab has few (up to eight
/// variants), so that a value no test reached cannot hide a broken variant.
pub fn seeds(compiled: &Compiled) -> Vec<u64> {
    let lab = &compiled.lab;
    let mut covered: BTreeSet<(String, String)> = BTreeSet::new();
    let wanted: usize = lab.vars.iter().map(|var| var.cardinality().min(8) as usize).sum();
    let mut seen = Vec::new();
    let mut seeds = Vec::new();
    for seed in 1..=256u64 {
        let values = lab.values(seed);
        let fresh = values.iter().filter(|(name, _)| !name.contains('.')).any(|pair| !covered.contains(&(pair.0.clone(), pair.1.clone())));
        if !seen.contains(&values) && (fresh || seeds.len() < 4) {
            covered.extend(values.iter().map(|(k, v)| (k.clone(), v.clone())));
            seen.push(values);
            seeds.push(seed);
        }
        let all_covered = covered.iter().filter(|(name, _)| !name.contains('.')).count() >= wanted;
        if seeds.len() == 8 || (seeds.len() >= 4 && all_covered) {
            break;
        }
    }
    for seed in 1..=2 {
        if seeds.len() < 2 && !seeds.contains(&seed) {
            seeds.push(seed);
        }
    }
    seeds
}

/// Types `lines` into a fresh session of the variant, recording each. A
/// line `answer ID [VALUE]` (as in `clusterlab play`) answers that question
/// at that moment instead, so that a state that holds only for a while (a
/// node drained before its repair) is checked while it holds.
fn play(compiled: &Compiled, seed: u64, lines: &[String], questions: &[Question], mut outcomes: Option<&mut Vec<Outcome>>) -> (Session, LabState) {
    let lab = &compiled.lab;
    let mut session = lab.session(seed);
    let mut state = LabState::new(lab, "test", seed, SessionJson::of(&session.snapshot()));
    for line in lines {
        if let Some(rest) = line.trim_start().strip_prefix("answer ") {
            let (id, value) = rest.trim().split_once(' ').map_or((rest.trim(), ""), |(id, value)| (id, value.trim()));
            if let (Some(question), Some(outcomes)) = (questions.iter().find(|q| q.id == id), outcomes.as_deref_mut()) {
                let given = if value.is_empty() { question.reference_answer() } else { value.to_string() };
                outcomes.push(answer_one(question, questions, &given, &session, &mut state));
            }
            continue;
        }
        run_line(&mut session, &mut state, line);
    }
    (session, state)
}

/// Runs `line` in the session and records it, as the app does.
pub fn run_line(session: &mut Session, state: &mut LabState, line: &str) {
    let (host, prompt, at) = (session.host().to_string(), session.prompt(), session.now());
    let transcript = session.run(line);
    state.record(Entry::new(&host, &prompt, line, at, transcript), SessionJson::of(&session.snapshot()));
}

/// Submits `given` for `question` as the app does: the engine reads it and
/// decides it, task and state questions on what the session shows.
pub fn answer_one(question: &Question, questions: &[Question], given: &str, session: &Session, state: &mut LabState) -> Outcome {
    let met = evidence::met(questions, &session.cluster, &Baseline::default());
    let submitted = state.submit(question, given, Evidence { met: &met, now_ms: 0 });
    let why = match &submitted {
        Submitted::Graded(grade) if grade.correct => None,
        Submitted::Graded(grade) => Some(explain(question, session, state, grade.reading.as_deref())),
        Submitted::Unclear(why) | Submitted::Closed(why) => Some(why.clone()),
        Submitted::Held => None,
    };
    let response = state.answers.get(&question.id).map_or_else(|| given.to_string(), |a| a.response.clone());
    let (correct, points) = match &submitted {
        Submitted::Graded(grade) => (grade.correct, grade.points),
        _ => (false, 0),
    };
    Outcome { question: question.id.clone(), response, correct, points, possible: question.points, why }
}

/// Why a question did not earn its points: what it expected and what the
/// cluster or the transcript showed (for `clusterlab test`, never the trainee).
pub fn explain(question: &Question, session: &Session, state: &LabState, reading: Option<&str>) -> String {
    match &question.kind {
        QuestionKind::State { expect } | QuestionKind::Handoff { closed_when: expect, .. } if !expect.is_empty() => {
            let baseline = Baseline::default();
            let failing: Vec<String> = expect
                .iter()
                .map(|fact| (fact, fact.observe(&session.cluster, &baseline)))
                .filter(|(_, seen)| !seen.holds)
                .map(|(fact, seen)| format!("expected {}; observed: {}", fact.describe(), seen.seen))
                .collect();
            if failing.is_empty() {
                reading.unwrap_or("every fact holds").to_string()
            } else {
                failing.join("; ")
            }
        }
        QuestionKind::Task { run, after } => {
            let after = match after {
                Some(After::Fact(fact)) => format!(" once {} held", fact.describe()),
                Some(After::Run(first)) => format!(" after a successful run of {}", first.program),
                None => String::new(),
            };
            let tried: Vec<String> = state
                .executions()
                .filter(|e| e.program == run.program)
                .map(|e| format!("`{}` on {} exit {}", e.display(), e.ran_on().join(","), e.status))
                .collect();
            let seen = if tried.is_empty() { format!("no run of {}", run.program) } else { tried.join("; ") };
            format!("expected a successful run of {}{after}; observed: {seen}", run.program)
        }
        _ => reading.unwrap_or("a wrong answer").to_string(),
    }
}

/// Answers the questions not answered yet, in the lab's order.
fn answer_rest(question_answers: impl Fn(&Question) -> String, session: &Session, state: &mut LabState, questions: &[Question], outcomes: &mut Vec<Outcome>) {
    for question in questions {
        if !outcomes.iter().any(|o| o.question == question.id) {
            outcomes.push(answer_one(question, questions, &question_answers(question), session, state));
        }
    }
    // The report lists questions in the lab's order.
    crate::sort::sort_by_key(outcomes, |o| questions.iter().position(|q| q.id == o.question));
}

fn lookup(pairs: &[(String, String)], id: &str, values: &template::Values) -> Option<String> {
    pairs.iter().find(|(qid, _)| qid == id).map(|(_, answer)| template::substitute(answer, values).unwrap_or_else(|_| answer.clone()))
}

/// The solution on one variant: its steps, then its answers.
pub fn run(compiled: &Compiled, solution: &Solution, seed: u64) -> Run {
    run_path(compiled, &solution.main_path(), seed)
}

/// A way through the lab on one variant: its steps, then its answers (the
/// reference answer for a question it does not name).
pub fn run_path(compiled: &Compiled, solution: &Path, seed: u64) -> Run {
    let variant = compiled.lab.variant(seed);
    let steps: Vec<String> = solution.steps.iter().map(|step| template::substitute(step, &variant.values).unwrap_or_else(|_| step.clone())).collect();
    let answers = |q: &Question| lookup(&solution.answers, &q.id, &variant.values).unwrap_or_else(|| q.reference_answer());
    // An `answer ID` step without a value takes the solution's answer.
    let steps: Vec<String> = steps
        .into_iter()
        .map(|step| match step.trim().strip_prefix("answer ").map(str::trim) {
            Some(id) if !id.contains(' ') => {
                let question = variant.questions.iter().find(|q| q.id == id);
                question.map_or(step.clone(), |q| format!("answer {id} {}", answers(q)))
            }
            _ => step,
        })
        .collect();
    let mut outcomes = Vec::new();
    let (session, mut state) = play(compiled, seed, &steps, &variant.questions, Some(&mut outcomes));
    answer_rest(answers, &session, &mut state, &variant.questions, &mut outcomes);
    Run { seed, variant: super::describe(&variant.values), outcomes, state }
}

/// A wrong diagnosis on one variant: nothing run, every answer wrong.
pub fn run_wrong(compiled: &Compiled, solution: &Solution, seed: u64) -> Run {
    let variant = compiled.lab.variant(seed);
    let (session, mut state) = play(compiled, seed, &[], &variant.questions, None);
    let answers = |q: &Question| lookup(&solution.wrong, &q.id, &variant.values).unwrap_or_else(|| wrong_answer(q));
    let mut outcomes = Vec::new();
    answer_rest(answers, &session, &mut state, &variant.questions, &mut outcomes);
    Run { seed, variant: super::describe(&variant.values), outcomes, state }
}

/// An answer that should be wrong: another choice, the items reversed, a
/// number far outside the tolerance, an empty handoff record.
pub fn wrong_answer(question: &Question) -> String {
    match &question.kind {
        QuestionKind::Choice { choices, answer } | QuestionKind::Entity { choices, answer, .. } => {
            choices.iter().enumerate().find(|(at, _)| at != answer).map(|(_, c)| c.clone()).unwrap_or_default()
        }
        QuestionKind::Multi { choices, answers } => {
            choices.iter().enumerate().filter(|(at, _)| !answers.contains(at)).map(|(_, c)| c.clone()).collect::<Vec<_>>().join("\n")
        }
        QuestionKind::Text { .. } => "no idea".to_string(),
        QuestionKind::Number { answer, tolerance, .. } => {
            let spread = match tolerance {
                Tolerance::Absolute(delta) => *delta,
                Tolerance::Relative(fraction) => answer.abs() * fraction,
            };
            (answer + 2.0 * spread + answer.abs().max(1.0)).to_string()
        }
        QuestionKind::Order { items } => items.iter().rev().cloned().collect::<Vec<_>>().join("\n"),
        QuestionKind::Task { .. } | QuestionKind::State { .. } => NOT_YET.to_string(),
        QuestionKind::Handoff { fields, .. } => grading_placeholder(fields.len()),
    }
}

/// A record of placeholders, one a field.
fn grading_placeholder(fields: usize) -> String {
    crate::grading::HandoffRecord { fields: vec!["x".to_string(); fields], ..Default::default() }.to_response()
}
