//! The leak check: no answer shows before its question is answered.
//!
//! What a trainee sees before answering a question: the lab's title,
//! summary and briefing, every question's prompt (all are on the page at
//! once), the other questions' choices, and the hints they may reveal. A
//! question leaks when that text
//! - states its answer: the right choice and none of the wrong ones, the
//!   entity, an accepted text, a number within the tolerance; or
//! - changes with a variable its answer depends on: the text then tells
//!   the variants apart as the answer does (`{bad_node}` in a later prompt
//!   gives away which node an earlier question asks for).
//!
//! A question's `leak_waiver` (a reason) silences it.

use std::collections::BTreeSet;

use crate::grading::mentions;
use crate::lab::template::{self, Values};
use crate::lab::{Lab, Question, QuestionKind, Tolerance};

/// How many variants the check samples, and how many other values of each
/// variable it tries against each sample.
const SAMPLES: u64 = 12;
const ALTERNATIVES: u64 = 6;

/// A leak: the question (its index in the lab) and what gives it away.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Leak {
    pub question: usize,
    pub message: String,
}

/// The texts a trainee sees before answering question `at`, by where they
/// are: `(where, text)`.
fn visible(lab: &Lab, values: &Values, questions: &[Question], at: usize) -> Vec<(String, String)> {
    let mut texts = vec![
        ("the title".to_string(), lab.title.clone()),
        ("the summary".to_string(), lab.summary.clone()),
        ("the briefing".to_string(), lab.briefing.substitute(values).unwrap_or_default().plain_text()),
    ];
    for (k, question) in questions.iter().enumerate() {
        texts.push((format!("the prompt of question `{}`", question.id), question.prompt.plain_text()));
        if k == at {
            continue;
        }
        let choices = match &question.kind {
            QuestionKind::Choice { choices, .. } | QuestionKind::Multi { choices, .. } => choices.join("\n"),
            QuestionKind::Order { items } => items.join("\n"),
            _ => String::new(),
        };
        texts.push((format!("the choices of question `{}`", question.id), choices));
        let hints: Vec<String> = question.hints.iter().map(|hint| hint.plain_text()).collect();
        texts.push((format!("the hints of question `{}`", question.id), hints.join("\n")));
    }
    texts
}

/// The answer of an answerable question as text, to compare variants by.
fn answer_of(question: &Question) -> Option<String> {
    match &question.kind {
        QuestionKind::Task { .. } | QuestionKind::State { .. } | QuestionKind::Handoff { .. } => None,
        _ => Some(question.reference_answer()),
    }
}

/// Whether `text` states the answer of `question`.
fn states_answer(question: &Question, text: &str) -> bool {
    let singles_out = |right: &[&String], wrong: &[&String]| right.iter().all(|r| mentions(text, r)) && !wrong.iter().any(|w| mentions(text, w));
    match &question.kind {
        QuestionKind::Choice { choices, answer } | QuestionKind::Entity { choices, answer, .. } => {
            let right: Vec<&String> = choices.get(*answer).into_iter().collect();
            let wrong: Vec<&String> = choices.iter().enumerate().filter(|(at, _)| at != answer).map(|(_, c)| c).collect();
            singles_out(&right, &wrong)
        }
        QuestionKind::Multi { choices, answers } => {
            let right: Vec<&String> = answers.iter().filter_map(|at| choices.get(*at)).collect();
            let wrong: Vec<&String> = choices.iter().enumerate().filter(|(at, _)| !answers.contains(at)).map(|(_, c)| c).collect();
            singles_out(&right, &wrong)
        }
        QuestionKind::Text { accepted } => accepted.iter().any(|a| mentions(text, a)),
        QuestionKind::Number { answer, tolerance, unit } => {
            let allowed = match tolerance {
                Tolerance::Absolute(delta) => *delta,
                Tolerance::Relative(fraction) => answer.abs() * fraction,
            };
            // Each number with the word after it as its unit: `400 Gb/s` is
            // no statement of 408 GB/s; a number of no unit compares as it is.
            let words: Vec<&str> = text.split_whitespace().collect();
            let near = |n: f64| (n - answer).abs() <= allowed + 1e-9 * answer.abs().max(1.0);
            words.iter().enumerate().any(|(at, word)| {
                let Some(&plain) = crate::grading::numbers_in(word).first() else { return false };
                let with_unit = words.get(at + 1).and_then(|next| crate::grading::parse_number(&format!("{plain} {next}"), unit.as_deref()));
                let attached = crate::grading::parse_number(word.trim_end_matches([',', '.', ';', ':', ')']), unit.as_deref());
                match (attached.or(with_unit), unit) {
                    (Some(converted), _) => near(converted),
                    // A unit that is not the question's quantity: not this answer.
                    (None, Some(_)) if words.get(at + 1).is_some_and(|next| crate::grading::is_unit(next)) => false,
                    (None, _) => near(plain),
                }
            })
        }
        _ => false,
    }
}

/// Every leak in the lab, over a sample of its variants.
pub fn leaks(lab: &Lab) -> Vec<Leak> {
    let mut found: BTreeSet<Leak> = BTreeSet::new();
    let waived: Vec<bool> = lab.questions.iter().map(|q| q.leak_waiver.as_ref().is_some_and(|w| !w.trim().is_empty())).collect();
    let samples = template::all_values(&lab.vars, &lab.id, SAMPLES);
    // An answer that changes between variants is checked against text
    // that changes with it (below); text naming it in one variant (a prompt
    // saying "on gpu-001") tells nothing when the text is the same in all.
    let constant: Vec<bool> = (0..lab.questions.len())
        .map(|at| {
            let answers: BTreeSet<Option<String>> = samples.iter().map(|values| lab.resolve(values).1.get(at).and_then(answer_of)).collect();
            answers.len() <= 1
        })
        .collect();
    for values in samples.clone() {
        let (_, questions, _) = lab.resolve(&values);
        if questions.len() != lab.questions.len() {
            continue; // Reported by the variant checks.
        }
        for (at, question) in questions.iter().enumerate() {
            if waived[at] {
                continue;
            }
            let Some(answer) = answer_of(question) else { continue };
            let texts = visible(lab, &values, &questions, at);
            for (place, text) in texts.iter().filter(|_| constant[at]) {
                if states_answer(question, text) {
                    found.insert(Leak { question: at, message: format!("question `{}`: {place} states its answer{}", question.id, super::describe(&values)) });
                }
            }
            // Another value of a variable the answer depends on.
            for var in &lab.vars {
                let count = var.cardinality();
                for pick in 0..count.min(ALTERNATIVES) {
                    let mut other = values.clone();
                    var.define(pick, &mut other);
                    if other == values {
                        continue;
                    }
                    let (_, other_questions, _) = lab.resolve(&other);
                    if other_questions.len() != questions.len() || answer_of(&other_questions[at]).as_ref() == Some(&answer) {
                        continue;
                    }
                    let other_texts = visible(lab, &other, &other_questions, at);
                    // The question's own prompt may change with its variant
                    // (it says which GPU it asks about): that is the question.
                    let own = format!("the prompt of question `{}`", question.id);
                    for ((place, text), (_, other_text)) in texts.iter().zip(&other_texts) {
                        if text != other_text && *place != own {
                            found.insert(Leak {
                                question: at,
                                message: format!(
                                    "question `{}`: its answer depends on `{}`, and {place} changes with it: it gives the answer away before the question is answered",
                                    question.id, var.name
                                ),
                            });
                        }
                    }
                }
            }
        }
    }
    found.into_iter().collect()
}

/// Facts one `state` question (or a handoff's closing facts) expects that
/// cannot hold together: a node in two Slurm states, drained yet in service,
/// idle or drained while a job expected to train runs on it, a service both
/// active and stopped. (question index, message), over a sample of variants.
pub fn contradictions(lab: &Lab) -> Vec<Leak> {
    use crate::facts::Fact;
    let jobs = lab.jobs();
    let mut found: BTreeSet<Leak> = BTreeSet::new();
    for values in template::all_values(&lab.vars, &lab.id, SAMPLES) {
        let (_, questions, _) = lab.resolve(&values);
        for (at, question) in questions.iter().enumerate() {
            let facts = match &question.kind {
                QuestionKind::State { expect } => expect,
                QuestionKind::Handoff { closed_when, .. } => closed_when,
                _ => continue,
            };
            let slurm_of = |node: &str| {
                facts.iter().find_map(|f| match f {
                    Fact::Slurm { node: n, state, .. } if n == node => Some(state.as_str()),
                    _ => None,
                })
            };
            let mut say = |message: String| {
                found.insert(Leak {
                    question: at,
                    message: format!("question `{}`: {message}: no cluster can show both{}", question.id, super::describe(&values)),
                });
            };
            for (k, fact) in facts.iter().enumerate() {
                for other in &facts[k + 1..] {
                    match (fact, other) {
                        (Fact::Slurm { node: a, state: x, .. }, Fact::Slurm { node: b, state: y, .. })
                            if a == b && !x.split('|').any(|one| y.split('|').any(|other| one == other)) =>
                        {
                            say(format!("it expects {a} both {x} and {y} in Slurm"))
                        }
                        (Fact::Service { node: a, service: s, active: x }, Fact::Service { node: b, service: t, active: y }) if a == b && s == t && x != y => {
                            say(format!("it expects {s} on {a} both active and stopped"))
                        }
                        _ => {}
                    }
                }
                match fact {
                    Fact::InService { node } => {
                        if let Some(state) = slurm_of(node).filter(|state| state.split('|').all(|one| matches!(one, "drained" | "down" | "draining"))) {
                            say(format!("it expects {node} in service and {state}"));
                        }
                    }
                    Fact::JobProgress { job, .. } => {
                        for node in jobs.iter().filter(|j| j.name == *job).flat_map(|j| j.nodes.iter()) {
                            if let Some(state) = slurm_of(node).filter(|state| state.split('|').all(|one| matches!(one, "idle" | "drained" | "down"))) {
                                say(format!("it expects the job {job} to train on {node} while {node} is {state}"));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    found.into_iter().collect()
}
