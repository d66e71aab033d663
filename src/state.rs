//! A trainee's progress in one lab, as a reducer: answers given, hints seen,
//! commands typed. It is what the browser saves, so it holds only plain data.

use std::collections::BTreeMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use yew::Reducible;

/// How many typed commands are kept (and replayed after a reload).
pub const MAX_COMMANDS: usize = 500;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedAnswer {
    pub response: String,
    pub attempts: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
