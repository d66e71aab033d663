//! `play`'s own words: `questions`, `answer ID VALUE`, `hint ID`, `score`.
//! Answers are kept and graded by the engine's `LabState`, as the web app's
//! store does, so a rehearsal grades exactly as the page will.

use clusterlab_engine::grading::{self, HandoffRecord};
use clusterlab_engine::lab::evidence::{self, Baseline};
use clusterlab_engine::lab::{Question, QuestionKind, Tolerance, Variant};
use clusterlab_engine::store::{Evidence, LabState, Submitted};
use clusterlab_engine::Session;

use crate::doc_text::{render, safe};

/// The words `play` takes before the shell sees a line.
pub const WORDS: &[&str] = &["questions", "answer", "hint", "score", "submit"];

/// What a word printed: for standard output, or an error for standard error.
pub enum Said {
    Out(String),
    Err(String),
}

/// The questions of one trainee's variant, with their answers and hints.
pub struct Questions {
    pub variant: Variant,
    pub state: LabState,
}

impl Questions {
    /// Runs `line` when it starts with one of [`WORDS`]; None otherwise.
    /// Task and state questions are checked against `session` and the
    /// transcript.
    pub fn handle(&mut self, line: &str, session: &Session) -> Option<Said> {
        let line = line.trim_start();
        let word = line.split_whitespace().next()?;
        if !WORDS.contains(&word) {
            return None;
        }
        let rest = line[word.len()..].trim_start();
        let (id, value) = match rest.find(char::is_whitespace) {
            Some(end) => (&rest[..end], rest[end..].trim()),
            None => (rest, ""),
        };
        Some(match word {
            "questions" => Said::Out(self.list()),
            "score" => Said::Out(format!("{}\n", self.score())),
            "submit" => match &self.state.exam {
                None => Said::Err("submit: this is not an exam: each answer is graded as you give it (`play --exam` takes the lab as an exam)\n".to_string()),
                Some(exam) if exam.submitted.is_some() => Said::Err("submit: the exam is submitted already\n".to_string()),
                Some(_) => Said::Out(self.submit_exam(session, false)),
            },
            "hint" if self.state.exam.is_some() => Said::Err("hint: an exam gives no hints\n".to_string()),
            "answer" if !id.is_empty() && self.checked_by_engine(id) => self.answer(id, value, session),
            "answer" if id.is_empty() || value.is_empty() => Said::Err(format!("answer: usage: answer ID VALUE; the ids are {}\n", self.ids())),
            "answer" => self.answer(id, value, session),
            _ if id.is_empty() => Said::Err(format!("hint: usage: hint ID; the ids are {}\n", self.ids())),
            _ => self.hint(id),
        })
    }

    /// Submits the exam: decides every check on the session now, then
    /// shows each question's verdict, as the review does.
    fn submit_exam(&mut self, session: &Session, at_limit: bool) -> String {
        let met = evidence::met(&self.variant.questions, &session.cluster, &Baseline::default());
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
        self.state.submit_exam(&self.variant.questions, Evidence { met: &met, now_ms: 0 }, now, at_limit);
        let mut out = String::from(if at_limit { "Time is up: the exam was submitted.\n\n" } else { "The exam is submitted.\n\n" });
        for (at, question) in self.variant.questions.iter().enumerate() {
            let line = self.state.verdict(question).map_or_else(|| "not answered".to_string(), |v| v.line());
            out += &format!("{}. {}: {}\n", at + 1, safe(&question.id), safe(&line));
            if let Some(grade) = self.state.grade(question) {
                if !grade.explanation.is_empty() {
                    out += &render(&grade.explanation, "   ");
                }
            }
        }
        out + &format!("\n{}\n", self.score())
    }

    /// When an exam's time is up at `now_ms` and it is not submitted yet:
    /// submits it and gives the review to print.
    pub fn time_up(&mut self, now_ms: i64, session: &Session) -> Option<String> {
        let due = self.state.exam.as_ref().is_some_and(|exam| exam.submitted.is_none() && exam.left_ms(now_ms) == 0);
        due.then(|| self.submit_exam(session, true))
    }

    /// Whether `id` is a task or state question, which `answer ID` checks.
    fn checked_by_engine(&self, id: &str) -> bool {
        self.variant.questions.iter().any(|q| q.id == id && matches!(q.kind, QuestionKind::Task { .. } | QuestionKind::State { .. }))
    }

    fn ids(&self) -> String {
        self.variant.questions.iter().map(|q| safe(&q.id)).collect::<Vec<_>>().join(", ")
    }

    fn find(&self, word: &str, id: &str) -> Result<&Question, Said> {
        self.variant.questions.iter().find(|q| q.id == id).ok_or_else(|| Said::Err(format!("{word}: no question `{}`; the ids are {}\n", safe(id), self.ids())))
    }

    /// Every question: id, type, points, whether answered, prompt, choices,
    /// and how to answer it.
    fn list(&self) -> String {
        let mut out = String::new();
        for (at, question) in self.variant.questions.iter().enumerate() {
            let status = match (self.state.answers.get(&question.id), self.state.grade(question)) {
                (Some(saved), Some(grade)) => {
                    let verdict = if grade.correct { "correct" } else { "not correct" };
                    format!("answered, {verdict} ({}/{}), {} attempt{}", grade.points, grade.possible, saved.attempts, plural(saved.attempts))
                }
                _ => "not answered".to_string(),
            };
            out += &format!("{}. {} ({}, {} point{}): {status}\n", at + 1, safe(&question.id), question.kind.name(), question.points, plural(question.points));
            out += &render(&question.prompt, "   ");
            for (number, choice) in shown(question).iter().enumerate() {
                out += &format!("     {}) {}\n", number + 1, safe(choice));
            }
            out += &format!("   {}\n\n", how_to_answer(question));
        }
        out + &format!("{}\n", self.score())
    }

    fn score(&self) -> String {
        let questions = &self.variant.questions;
        if let Some(exam) = self.state.exam.as_ref().filter(|exam| exam.submitted.is_none()) {
            let answered = questions.iter().filter(|q| self.state.answers.contains_key(&q.id)).count();
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
            let left = exam.left_ms(now) / 1000;
            return format!(
                "Exam: {answered} of {} questions answered; {}:{:02} left. The score shows when you `submit`.",
                questions.len(),
                left / 60,
                left % 60
            );
        }
        let possible: u32 = questions.iter().map(|q| q.points).sum();
        let answered = questions.iter().filter(|q| self.state.answers.contains_key(&q.id)).count();
        format!(
            "Score: {} of {possible} point{}; {answered} of {} question{} answered.",
            self.state.score(questions),
            plural(possible),
            questions.len(),
            plural(questions.len() as u32)
        )
    }

    fn answer(&mut self, id: &str, value: &str, session: &Session) -> Said {
        let question = match self.find("answer", id) {
            Ok(question) => question.clone(),
            Err(said) => return said,
        };
        // The engine decides: what ran, the cluster's facts, how it reads the answer.
        let met = evidence::met(&self.variant.questions, &session.cluster, &Baseline::default());
        let grade = match self.state.submit(&question, &response(&question, value), Evidence { met: &met, now_ms: 0 }) {
            Submitted::Graded(grade) => grade,
            Submitted::Unclear(why) => return Said::Err(format!("answer: {}: {why} (no attempt used)\n", safe(&question.id))),
            Submitted::Closed(why) => return Said::Err(format!("answer: question {}: {why}\n", safe(&question.id))),
            Submitted::Held => return Said::Out(format!("Recorded: {} (the exam shows verdicts once it is submitted).\n", safe(&question.id))),
        };
        let verdict = self.state.verdict(&question).map(|v| v.line()).unwrap_or_default();
        let mut out = format!("{}\n", safe(&verdict));
        // The explanation is shown once the answer is right, as on the page.
        if let Some(feedback) = &grade.feedback {
            out += &render(feedback, "  ");
        }
        let open = self.state.open(&question);
        if (grade.correct || !open) && !grade.explanation.is_empty() {
            out += &render(&grade.explanation, "  ");
        }
        if !grade.correct && open && !question.hints.is_empty() {
            out += &format!("  `hint {}` shows a hint.\n", safe(&question.id));
        }
        Said::Out(out + &format!("{}\n", self.score()))
    }

    /// The next hint, and the ones already shown.
    fn hint(&mut self, id: &str) -> Said {
        let question = match self.find("hint", id) {
            Ok(question) => question.clone(),
            Err(said) => return said,
        };
        if question.hints.is_empty() {
            return Said::Out(format!("Question {} has no hints.\n", safe(&question.id)));
        }
        let shown = self.state.hints_shown.get(&question.id).copied().unwrap_or(0) as usize;
        if shown < question.hints.len() {
            self.state.show_hint(&question.id);
        }
        let shown = (shown + 1).min(question.hints.len());
        let mut out = String::new();
        for (at, hint) in question.hints[..shown].iter().enumerate() {
            out += &format!("Hint {} of {}:\n", at + 1, question.hints.len());
            out += &render(hint, "  ");
        }
        Said::Out(out)
    }
}

fn plural(count: u32) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

/// The choices or items as listed, numbered from 1 by `answer`.
fn shown(question: &Question) -> Vec<String> {
    match &question.kind {
        QuestionKind::Choice { choices, .. } | QuestionKind::Multi { choices, .. } => choices.clone(),
        QuestionKind::Order { items } => grading::shuffled(items, question),
        // A cluster's entities can be thousands: `answer` takes the name.
        QuestionKind::Entity { .. } | QuestionKind::Text { .. } | QuestionKind::Number { .. } => Vec::new(),
        QuestionKind::Handoff { rubric, .. } => rubric.clone(),
        QuestionKind::Task { .. } | QuestionKind::State { .. } => Vec::new(),
    }
}

fn how_to_answer(question: &Question) -> String {
    let id = safe(&question.id);
    match &question.kind {
        QuestionKind::Choice { .. } => format!("answer {id} CHOICE  (its text or number)"),
        QuestionKind::Multi { .. } => format!("answer {id} CHOICE...  (every right one, by text or number; quote text with spaces)"),
        QuestionKind::Order { .. } => format!("answer {id} ITEM...  (all of them in the right order, by text or number; quote text with spaces)"),
        QuestionKind::Text { .. } => format!("answer {id} TEXT"),
        QuestionKind::Entity { entity, choices, .. } => {
            let example = choices.first().map_or(String::new(), |first| format!(", e.g. {}", safe(first)));
            format!("answer {id} NAME  (a {entity} of this cluster{example})")
        }
        QuestionKind::Task { .. } => format!("answer {id}  (checks what you ran)"),
        QuestionKind::State { .. } => format!("answer {id}  (checks the cluster now)"),
        QuestionKind::Handoff { fields, .. } => format!(
            "answer {id} TEXT | TEXT ... | rubric: N N ...  (one text per field: {}; then the numbers of the rubric items above your record meets)",
            fields.iter().map(|f| safe(&f.name)).collect::<Vec<_>>().join("; ")
        ),
        QuestionKind::Number { unit, tolerance, .. } => {
            let within = match tolerance {
                Tolerance::Absolute(delta) if *delta > 0.0 => format!(", within {delta}"),
                Tolerance::Relative(fraction) if *fraction > 0.0 => format!(", within {}%", fraction * 100.0),
                _ => String::new(),
            };
            match unit {
                Some(unit) => format!("answer {id} NUMBER  (in {}{within})", safe(unit)),
                None if within.is_empty() => format!("answer {id} NUMBER"),
                None => format!("answer {id} NUMBER  ({})", &within[2..]),
            }
        }
    }
}

/// What `value` answers, in the form the grading reads: a choice's text
/// (its number picks it too, unless the number is itself a choice); for
/// `multi` and `order` one item a line.
fn response(question: &Question, value: &str) -> String {
    let listed = shown(question);
    let pick = |word: &str| -> String {
        if listed.iter().any(|choice| choice == word) {
            return word.to_string();
        }
        match word.parse::<usize>() {
            Ok(number) if (1..=listed.len()).contains(&number) => listed[number - 1].clone(),
            _ => word.to_string(),
        }
    };
    match &question.kind {
        QuestionKind::Choice { .. } => pick(&unquoted(value)),
        QuestionKind::Multi { .. } | QuestionKind::Order { .. } => {
            // The whole value may be one item with spaces in it.
            if listed.iter().any(|choice| choice == value) {
                return value.to_string();
            }
            words(value).iter().map(|word| pick(word)).collect::<Vec<_>>().join("\n")
        }
        QuestionKind::Text { .. } | QuestionKind::Number { .. } | QuestionKind::Entity { .. } => unquoted(value),
        QuestionKind::Handoff { rubric, .. } => {
            // Self-assessed: a last part `rubric: 1 3` ticks those items.
            let mut fields: Vec<String> = value.split('|').map(|field| field.trim().to_string()).collect();
            let ticked = fields.last().and_then(|last| last.strip_prefix("rubric:").map(str::to_string));
            let checked = match ticked {
                Some(numbers) => {
                    fields.pop();
                    numbers.split([' ', ',']).filter_map(|n| n.parse::<usize>().ok()).filter(|n| (1..=rubric.len()).contains(n)).map(|n| n - 1).collect()
                }
                None => Vec::new(),
            };
            HandoffRecord { fields, checked, ..HandoffRecord::default() }.to_response()
        }
        QuestionKind::Task { .. } | QuestionKind::State { .. } => String::new(),
    }
}

/// The value without the quotes around it, when it is one quoted word.
fn unquoted(value: &str) -> String {
    match words(value).as_slice() {
        [one] if value.starts_with(['"', '\'']) => one.clone(),
        _ => value.to_string(),
    }
}

/// Words split at blanks, with '...' and "..." quoting and \ escaping as a
/// shell reads them (an unclosed quote runs to the end).
fn words(value: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let text = word.get_or_insert_with(String::new);
                text.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                let text = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => text.extend(chars.next()),
                        c => text.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_as_a_shell_reads_them() {
        assert_eq!(words(r#"a "b c" 'd e' f\ g"#), ["a", "b c", "d e", "f g"]);
        assert_eq!(words("\"unclosed quote"), ["unclosed quote"]);
        assert_eq!(words("  "), Vec::<String>::new());
        assert_eq!(unquoted("\"570.158.01\""), "570.158.01");
        assert_eq!(unquoted("700 W"), "700 W");
    }
}
