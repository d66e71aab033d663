//! Grading: a trainee's answer against a question's reference answer.
//!
//! Answers travel as plain strings (what the browser stores): a choice's
//! text; for `multi` and `order`, the items separated by newlines; for
//! `number`, the number, optionally followed by its unit.

use crate::lab::{Doc, Question, QuestionKind, Tolerance};
use crate::rng::{stable_hash, Rng};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grade {
    pub correct: bool,
    pub points: u32,
    pub possible: u32,
    /// Shown after answering: the question's explanation.
    pub explanation: Doc,
}

/// Case, surrounding blanks and runs of blanks do not matter in text answers.
/// ASCII case only: answers are hostnames, ids and numbers, and Unicode case
/// tables would cost the browser build more than they give.
fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase()
}

/// Items of a `multi` or `order` response.
/// An order question's items as first shown, in an order that depends only
/// on the question, never the right one when there is another: the app's
/// question card and `clusterlab play` show the same.
pub fn shuffled(items: &[String], question_id: &str) -> Vec<String> {
    let mut order: Vec<String> = items.to_vec();
    let mut rng = Rng::new(stable_hash(question_id.as_bytes()));
    for at in (1..order.len()).rev() {
        let with = rng.range_u64(0, at as u64) as usize;
        order.swap(at, with);
    }
    if order == items && order.len() > 1 {
        order.rotate_left(1);
    }
    order
}

pub fn items(response: &str) -> Vec<&str> {
    response.lines().map(str::trim).filter(|line| !line.is_empty()).collect()
}

/// Reads `391.5`, `391.5 Gb/s` or `1,024` (when the unit matches or is absent).
fn parse_number(response: &str, unit: Option<&str>) -> Option<f64> {
    let mut text = response.trim().replace(',', "");
    if let Some(unit) = unit {
        if let Some(stripped) = text.strip_suffix(unit) {
            text = stripped.trim().to_string();
        } else if let Some(stripped) = text.to_ascii_lowercase().strip_suffix(&unit.to_ascii_lowercase()) {
            text = stripped.trim().to_string();
        }
    }
    text.parse::<f64>().ok().filter(|n| n.is_finite())
}

impl Question {
    pub fn grade(&self, response: &str) -> Grade {
        let correct = match &self.kind {
            QuestionKind::Choice { choices, answer } => choices.get(*answer).is_some_and(|a| a == response.trim()),
            QuestionKind::Multi { choices, answers } => {
                let mut given: Vec<usize> =
                    items(response).iter().filter_map(|item| choices.iter().position(|c| c == item)).collect();
                crate::sort::sort(&mut given);
                given.dedup();
                given == *answers && items(response).len() == given.len()
            }
            QuestionKind::Text { accepted } => {
                let response = normalize(response);
                !response.is_empty() && accepted.iter().any(|a| normalize(a) == response)
            }
            QuestionKind::Number { answer, tolerance, unit } => {
                parse_number(response, unit.as_deref()).is_some_and(|given| {
                    let allowed = match tolerance {
                        Tolerance::Absolute(delta) => *delta,
                        Tolerance::Relative(fraction) => answer.abs() * fraction,
                    };
                    (given - answer).abs() <= allowed + 1e-9 * answer.abs().max(1.0)
                })
            }
            QuestionKind::Order { items: expected } => items(response) == expected.iter().map(String::as_str).collect::<Vec<_>>(),
        };
        Grade {
            correct,
            points: if correct { self.points } else { 0 },
            possible: self.points,
            explanation: self.explanation.clone(),
        }
    }

    /// The reference answer, as a trainee would enter it.
    pub fn reference_answer(&self) -> String {
        match &self.kind {
            QuestionKind::Choice { choices, answer } => choices.get(*answer).cloned().unwrap_or_default(),
            QuestionKind::Multi { choices, answers } => {
                answers.iter().filter_map(|at| choices.get(*at).cloned()).collect::<Vec<_>>().join("\n")
            }
            QuestionKind::Text { accepted } => accepted.first().cloned().unwrap_or_default(),
            QuestionKind::Number { answer, .. } => answer.to_string(),
            QuestionKind::Order { items } => items.join("\n"),
        }
    }
}

/// The lab's score: the sum over graded answers.
pub fn total<'a>(grades: impl IntoIterator<Item = &'a Grade>) -> (u32, u32) {
    grades.into_iter().fold((0, 0), |(points, possible), grade| (points + grade.points, possible + grade.possible))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(kind: QuestionKind) -> Question {
        Question { id: "q".into(), prompt: Doc::default(), kind, points: 2, hints: vec![], explanation: Doc::default() }
    }

    #[test]
    fn numbers_within_tolerance() {
        let q = question(QuestionKind::Number { answer: 392.0, tolerance: Tolerance::Relative(0.05), unit: Some("Gb/s".into()) });
        assert!(q.grade("392").correct);
        assert!(q.grade("380 Gb/s").correct);
        assert!(q.grade(" 400 gb/s").correct);
        assert!(!q.grade("350").correct);
        assert!(!q.grade("lots").correct);
        let exact = question(QuestionKind::Number { answer: 8.0, tolerance: Tolerance::Absolute(0.0), unit: None });
        assert!(exact.grade("8").correct && exact.grade("8.0").correct && !exact.grade("8.1").correct);
    }

    #[test]
    fn multi_needs_exactly_the_right_set() {
        let q = question(QuestionKind::Multi { choices: vec!["a".into(), "b".into(), "c".into()], answers: vec![0, 2] });
        assert!(q.grade("c\na").correct);
        assert!(!q.grade("a").correct);
        assert!(!q.grade("a\nb\nc").correct);
        assert!(!q.grade("a\nc\nzzz").correct);
    }

    #[test]
    fn order_needs_the_exact_sequence() {
        let q = question(QuestionKind::Order { items: vec!["x".into(), "y".into()] });
        assert!(q.grade("x\ny\n").correct);
        assert!(!q.grade("y\nx").correct);
    }

    #[test]
    fn reference_answers_grade_correct() {
        for kind in [
            QuestionKind::Choice { choices: vec!["a".into(), "b".into()], answer: 1 },
            QuestionKind::Multi { choices: vec!["a".into(), "b".into()], answers: vec![0, 1] },
            QuestionKind::Text { accepted: vec!["Hello".into()] },
            QuestionKind::Number { answer: 0.1, tolerance: Tolerance::Absolute(0.0), unit: None },
            QuestionKind::Order { items: vec!["1".into(), "2".into()] },
        ] {
            let q = question(kind);
            assert!(q.grade(&q.reference_answer()).correct, "{q:?}");
        }
    }
}
