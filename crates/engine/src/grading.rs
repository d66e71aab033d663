//! Grading: a trainee's answer against a question's reference answer.
//!
//! Answers travel as plain strings (what the browser stores): a choice's
//! text; for `multi` and `order`, the items separated by newlines; for
//! `number`, the number, optionally followed by a unit (converted to the
//! question's); for `task` and `state`, [`DONE`] once the terminal or the
//! cluster showed it (the engine decides, never the trainee); for
//! `handoff`, a [`HandoffRecord`] as JSON.

use serde::{Deserialize, Serialize};

use crate::lab::{Doc, Question, QuestionKind, Tolerance};
use crate::rng::{stable_hash, Rng};

/// The response recorded when a `task` or `state` question was found done.
pub const DONE: &str = "done";
/// The response recorded when it was checked and not found.
pub const NOT_YET: &str = "not yet";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grade {
    pub correct: bool,
    pub points: u32,
    pub possible: u32,
    /// Shown after answering: the question's explanation.
    pub explanation: Doc,
    /// What the lab says about this particular response, if anything.
    pub feedback: Option<Doc>,
}

/// A `handoff` answer: the text under each field, and the rubric items the
/// trainee ticked (by index).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandoffRecord {
    pub fields: Vec<String>,
    pub checked: Vec<usize>,
}

impl HandoffRecord {
    pub fn from_response(response: &str) -> HandoffRecord {
        serde_json::from_str(response).unwrap_or_default()
    }

    pub fn to_response(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
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

/// Units a `number` answer may carry: (spelling, quantity, factor to the
/// quantity's base unit). Bandwidth is in bits per second, so that bytes
/// and bits convert (`45 GB/s` is `360 Gb/s`).
const UNITS: &[(&str, &str, f64)] = &[
    ("b/s", "rate", 1.0),
    ("bps", "rate", 1.0),
    ("Kb/s", "rate", 1e3),
    ("Kbps", "rate", 1e3),
    ("Mb/s", "rate", 1e6),
    ("Mbps", "rate", 1e6),
    ("Mbit/s", "rate", 1e6),
    ("Gb/s", "rate", 1e9),
    ("Gbps", "rate", 1e9),
    ("Gbit/s", "rate", 1e9),
    ("Tb/s", "rate", 1e12),
    ("Tbps", "rate", 1e12),
    ("B/s", "rate", 8.0),
    ("KB/s", "rate", 8e3),
    ("MB/s", "rate", 8e6),
    ("MB/sec", "rate", 8e6),
    ("GB/s", "rate", 8e9),
    ("GB/sec", "rate", 8e9),
    ("TB/s", "rate", 8e12),
    ("KiB/s", "rate", 8.0 * 1024.0),
    ("MiB/s", "rate", 8.0 * 1048576.0),
    // perftest's column headers: BW average[MiB/sec], [Gb/sec] with --report_gbits.
    ("MiB/sec", "rate", 8.0 * 1048576.0),
    ("Gb/sec", "rate", 1e9),
    ("GiB/s", "rate", 8.0 * 1073741824.0),
    ("s", "time", 1.0),
    ("sec", "time", 1.0),
    ("ms", "time", 1e-3),
    ("us", "time", 1e-6),
    ("\u{b5}s", "time", 1e-6),
    ("\u{3bc}s", "time", 1e-6),
    ("usec", "time", 1e-6),
    ("ns", "time", 1e-9),
    ("min", "time", 60.0),
    ("h", "time", 3600.0),
    ("B", "size", 1.0),
    ("KB", "size", 1e3),
    ("MB", "size", 1e6),
    ("GB", "size", 1e9),
    ("TB", "size", 1e12),
    ("KiB", "size", 1024.0),
    ("MiB", "size", 1048576.0),
    ("GiB", "size", 1073741824.0),
    ("TiB", "size", 1099511627776.0),
    ("Hz", "frequency", 1.0),
    ("MHz", "frequency", 1e6),
    ("GHz", "frequency", 1e9),
    ("W", "power", 1.0),
    ("kW", "power", 1e3),
];

/// A unit as written: exactly, or, when no spelling matches exactly, the one
/// spelling that matches ignoring case (`gbps`; but `gb/s` could be bits or
/// bytes, so it reads as nothing).
fn unit(written: &str) -> Option<(&'static str, f64)> {
    if let Some((_, quantity, factor)) = UNITS.iter().find(|(name, _, _)| *name == written) {
        return Some((quantity, *factor));
    }
    let mut found = UNITS.iter().filter(|(name, _, _)| name.eq_ignore_ascii_case(written));
    match (found.next(), found.next()) {
        (Some((_, quantity, factor)), None) => Some((quantity, *factor)),
        _ => None,
    }
}

/// Reads `391.5`, `1,024`, `391.5 Gb/s` or `45GB/s` as a number in `expected`
/// units: a response in another unit of the same quantity is converted; a
/// unit of another quantity, or one that cannot be read, is no number.
pub fn parse_number(response: &str, expected: Option<&str>) -> Option<f64> {
    let text = response.trim().replace(',', "");
    let split = text
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .map_or(text.len(), |(at, _)| at);
    // `1e3` is a number, but `5 ms` must not read `e` out of it: back off
    // to the last digit when what follows the number starts with a letter.
    let (mut number, mut rest) = (&text[..split], text[split..].trim());
    while number.ends_with(['e', 'E', '+', '-']) {
        rest = text[number.len() - 1..].trim();
        number = &number[..number.len() - 1];
    }
    let value = number.parse::<f64>().ok().filter(|n| n.is_finite())?;
    if rest.is_empty() {
        return Some(value);
    }
    let expected = expected?;
    // `Gb/s` written for a question in GB/s is bits: an exact spelling
    // wins; otherwise the question's own unit in any case is that unit.
    let exact = UNITS.iter().any(|(name, _, _)| *name == rest);
    if rest == expected || (!exact && rest.eq_ignore_ascii_case(expected)) {
        return Some(value);
    }
    let (quantity, factor) = unit(rest)?;
    let (expected_quantity, expected_factor) = unit(expected)?;
    (quantity == expected_quantity).then(|| value * factor / expected_factor).filter(|n| n.is_finite())
}

impl Question {
    pub fn grade(&self, response: &str) -> Grade {
        let mut points = self.points;
        let correct = match &self.kind {
            QuestionKind::Choice { choices, answer } => choices.get(*answer).is_some_and(|a| a == response.trim()),
            QuestionKind::Entity { choices, answer, .. } => {
                choices.get(*answer).is_some_and(|a| normalize(a) == normalize(response))
            }
            QuestionKind::Task { .. } | QuestionKind::State { .. } => response == DONE,
            QuestionKind::Handoff { fields, rubric } => {
                let record = HandoffRecord::from_response(response);
                let written = fields.len() == record.fields.len() && record.fields.iter().all(|text| !text.trim().is_empty());
                let mut ticked: Vec<usize> = record.checked.iter().copied().filter(|at| *at < rubric.len()).collect();
                crate::sort::sort(&mut ticked);
                ticked.dedup();
                // Partial credit: the share of the rubric the trainee ticks,
                // once every field is written.
                points = if !written {
                    0
                } else if rubric.is_empty() {
                    self.points
                } else {
                    (u64::from(self.points) * ticked.len() as u64 / rubric.len() as u64) as u32
                };
                written && ticked.len() == rubric.len()
            }
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
        let partial = matches!(self.kind, QuestionKind::Handoff { .. });
        Grade {
            correct,
            points: if correct || partial { points } else { 0 },
            possible: self.points,
            explanation: self.explanation.clone(),
            feedback: self.feedback.iter().find(|(given, _)| normalize(given) == normalize(response)).map(|(_, why)| why.clone()),
        }
    }

    /// The grade with what the revealed hints cost taken off.
    pub fn grade_after_hints(&self, response: &str, hints_shown: u32) -> Grade {
        let mut grade = self.grade(response);
        grade.points = grade.points.saturating_sub(hints_shown.saturating_mul(self.hint_cost));
        grade
    }

    /// Whether another answer may be recorded after `attempts` with `grade`.
    pub fn open(&self, attempts: u32, grade: Option<&Grade>) -> bool {
        let locked = grade.is_some_and(|grade| grade.correct) && !self.retry;
        !locked && self.attempts.is_none_or(|allowed| attempts < allowed)
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
            QuestionKind::Entity { choices, answer, .. } => choices.get(*answer).cloned().unwrap_or_default(),
            QuestionKind::Task { .. } | QuestionKind::State { .. } => DONE.to_string(),
            QuestionKind::Handoff { fields, rubric } => HandoffRecord {
                fields: fields.iter().map(|field| format!("{field}: recorded")).collect(),
                checked: (0..rubric.len()).collect(),
            }
            .to_response(),
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
        Question {
            id: "q".into(),
            prompt: Doc::default(),
            kind,
            points: 2,
            hints: vec![],
            hint_cost: 0,
            explanation: Doc::default(),
            attempts: None,
            retry: false,
            feedback: vec![],
        }
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
