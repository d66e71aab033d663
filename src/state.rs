//! A trainee's progress in one lab, as a reducer: answers given, hints seen,
//! commands typed. It is what the browser saves, so it holds only plain data.

use std::collections::BTreeMap;
use std::rc::Rc;

use yew::Reducible;

/// How many typed commands are kept (and replayed after a reload).
pub const MAX_COMMANDS: usize = 500;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SavedAnswer {
    pub response: String,
    pub attempts: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The trainee's variant seed.
    pub seed: u64,
    pub answers: BTreeMap<String, SavedAnswer>,
    pub hints_shown: BTreeMap<String, usize>,
    /// Every command line typed, in order: replaying them rebuilds the lab.
    pub commands: Vec<String>,
}

impl Default for Progress {
    fn default() -> Self {
        Progress { seed: 1, answers: BTreeMap::new(), hints_shown: BTreeMap::new(), commands: Vec::new() }
    }
}

pub enum Action {
    Answer { question: String, response: String },
    ShowHint { question: String },
    Ran(String),
    /// Start over: no answers, no commands, the same variant.
    Reset,
    /// Start over with another variant of the lab.
    NewVariant,
}

impl Reducible for Progress {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            Action::Answer { question, response } => {
                let saved = next.answers.entry(question).or_default();
                saved.response = response;
                saved.attempts += 1;
            }
            Action::ShowHint { question } => *next.hints_shown.entry(question).or_default() += 1,
            Action::Ran(line) => {
                next.commands.push(line);
                let excess = next.commands.len().saturating_sub(MAX_COMMANDS);
                next.commands.drain(..excess);
            }
            Action::Reset => next = Progress { seed: next.seed, ..Progress::default() },
            Action::NewVariant => next = Progress { seed: next.seed.wrapping_add(1), ..Progress::default() },
        }
        Rc::new(next)
    }
}

/// The first line of a saved progress record.
const FORMAT: &str = "clusterlab-progress 1";

/// `\`, tab and newline escaped, so any text fits in one tab-separated field.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\t', "\\t").replace('\n', "\\n")
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

impl Progress {
    /// A small line format for localStorage (serde_json would cost the
    /// browser build more than everything it saves here).
    pub fn encode(&self) -> String {
        let mut out = format!("{FORMAT}\nseed\t{}\n", self.seed);
        for (question, answer) in &self.answers {
            out += &format!("answer\t{}\t{}\t{}\n", escape(question), answer.attempts, escape(&answer.response));
        }
        for (question, count) in &self.hints_shown {
            out += &format!("hints\t{}\t{count}\n", escape(question));
        }
        for line in &self.commands {
            out += &format!("ran\t{}\n", escape(line));
        }
        out
    }

    /// Reads what [`Progress::encode`] wrote; anything else (another format,
    /// a damaged record) gives a fresh start rather than an error.
    pub fn decode(text: &str) -> Progress {
        let mut lines = text.lines();
        let mut progress = Progress::default();
        if lines.next() != Some(FORMAT) {
            return progress;
        }
        for line in lines {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields.as_slice() {
                ["seed", seed] => progress.seed = seed.parse().unwrap_or(1),
                ["answer", question, attempts, response] => {
                    progress.answers.insert(
                        unescape(question),
                        SavedAnswer { response: unescape(response), attempts: attempts.parse().unwrap_or(1) },
                    );
                }
                ["hints", question, count] => {
                    progress.hints_shown.insert(unescape(question), count.parse().unwrap_or(0));
                }
                ["ran", line] => progress.commands.push(unescape(line)),
                _ => {}
            }
        }
        progress
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_survives_a_round_trip_with_awkward_text() {
        let mut progress = Progress { seed: 7, ..Progress::default() };
        progress.answers.insert("q\t1".into(), SavedAnswer { response: "a\nb\\c\\n".into(), attempts: 3 });
        progress.hints_shown.insert("q2".into(), 2);
        progress.commands.extend(["nvidia-smi | grep -E 'a\tb'".to_string(), "echo \\".to_string()]);
        assert_eq!(Progress::decode(&progress.encode()), progress);
        assert_eq!(Progress::decode("{\"seed\": 3}"), Progress::default());
        assert_eq!(Progress::decode(""), Progress::default());
    }
}
