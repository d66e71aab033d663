//! Grading: a trainee's answer against a question's reference answer.

use crate::lab::{Question, QuestionKind};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grade {
    pub correct: bool,
    pub points: u32,
    pub possible: u32,
    /// Markdown shown after answering: the question's explanation.
    pub explanation: String,
}

/// Case, surrounding blanks and runs of blanks do not matter in text answers.
fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

impl Question {
    pub fn grade(&self, response: &str) -> Grade {
        let correct = match &self.kind {
            QuestionKind::Choice { choices, answer } => choices.get(*answer).is_some_and(|a| a == response),
            QuestionKind::Text { accepted } => {
                let response = normalize(response);
                !response.is_empty() && accepted.iter().any(|a| normalize(a) == response)
            }
        };
        Grade {
            correct,
            points: if correct { self.points } else { 0 },
            possible: self.points,
            explanation: self.explanation.clone(),
        }
    }

    /// The reference answer, as a trainee would enter it.
    pub fn reference_answer(&self) -> &str {
        match &self.kind {
            QuestionKind::Choice { choices, answer } => choices.get(*answer).map_or("", String::as_str),
            QuestionKind::Text { accepted } => accepted.first().map_or("", String::as_str),
        }
    }
}

/// The lab's score: the sum over graded answers.
pub fn total<'a>(grades: impl IntoIterator<Item = &'a Grade>) -> (u32, u32) {
    grades.into_iter().fold((0, 0), |(points, possible), grade| (points + grade.points, possible + grade.possible))
}
