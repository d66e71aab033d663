//! Grading: the engine decides every answer, and the app and the CLI only
//! show what it decided.
//!
//! An answer is first *read* ([`Question::read`]): operators write a GPU as
//! `GPU5`, `gpu-001:5` or its bus id, a choice by the value in it (`79` for
//! "Xid 79"), a number with a label (`GPU 0`). A reading says how it took
//! the answer, or asks again when the answer fits nothing (or several
//! things) without using an attempt. It is then *graded*
//! ([`Question::grade_attempt`]) under the lab's [`Policy`]: a right answer
//! keeps a share of its points for each wrong attempt before it, each hint
//! shown costs a share, and a right answer stays. `task` and `state`
//! questions are decided on what ran and on the cluster
//! ([`crate::lab::evidence`]); a `handoff` record on the facts each field
//! must state and the actions the model and the transcript show.
//!
//! Answers travel as plain strings (what the browser stores): a choice's
//! text; for `multi` and `order`, the items separated by newlines; for
//! `number`, the number, optionally with a unit (converted to the
//! question's); for `task` and `state`, [`DONE`] or [`NOT_YET`]; for
//! `handoff`, a [`HandoffRecord`] as JSON.

use serde::{Deserialize, Serialize};

use crate::lab::spec::HANDOFF_ACTIONS;
use crate::lab::{Doc, HandoffField, Question, QuestionKind, Tolerance};
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
    /// How the engine read the answer, when that is not what was typed
    /// (`read as gpu-001 GPU 5`), or why a check or a record fell short.
    pub reading: Option<String>,
    /// Part of it waits for an instructor (a handoff field no machine can decide).
    pub review: Vec<String>,
}

/// A `handoff` answer: the text under each field, the rubric items the
/// trainee ticked (recorded, never scored), and what the engine saw when it
/// was submitted: whether the incident was closed, and the actions the
/// transcript shows taken.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandoffRecord {
    pub fields: Vec<String>,
    pub checked: Vec<usize>,
    #[serde(default)]
    pub closed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub done: Vec<String>,
}

impl HandoffRecord {
    pub fn from_response(response: &str) -> HandoffRecord {
        serde_json::from_str(response).unwrap_or_default()
    }

    pub fn to_response(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// How the engine read a response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// The answer as the question's own value (a choice's text, an
    /// entity's name, the number), and how it was read when that differs
    /// from what was typed.
    Read { value: String, note: Option<String> },
    /// Not clear enough to grade: said why, and no attempt is used.
    Unclear(String),
}

/// Case, surrounding blanks and runs of blanks do not matter in text answers.
/// ASCII case only: answers are hostnames, ids and numbers, and Unicode case
/// tables would cost the browser build more than they give.
fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase()
}

/// An order question's items as first shown, in an order that depends on
/// the question and the trainee's variant, never the right one when there
/// is another: the app's question card and `clusterlab play` show the same.
pub fn shuffled(items: &[String], question: &Question) -> Vec<String> {
    let mut order: Vec<String> = items.to_vec();
    let mut rng = Rng::new(stable_hash(format!("{}/{}", question.seed, question.id).as_bytes()));
    for at in (1..order.len()).rev() {
        let with = rng.range_u64(0, at as u64) as usize;
        order.swap(at, with);
    }
    if order == items && order.len() > 1 {
        order.rotate_left(1);
    }
    order
}

/// Items of a `multi` or `order` response.
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
    // What `du -h`, `df -h` and `ls -lh` print: powers of 1024.
    ("K", "size", 1024.0),
    ("M", "size", 1048576.0),
    ("G", "size", 1073741824.0),
    ("T", "size", 1099511627776.0),
    ("Hz", "frequency", 1.0),
    ("MHz", "frequency", 1e6),
    ("GHz", "frequency", 1e9),
    ("W", "power", 1.0),
    ("kW", "power", 1e3),
    ("%", "share", 1.0),
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

/// Whether `word` is a unit some answer may carry.
pub fn is_unit(word: &str) -> bool {
    unit(word.trim_end_matches([',', '.', ';', ':', ')'])).is_some()
}

/// Reads `391.5`, `1,024`, `391.5 Gb/s` or `45GB/s` as a number in `expected`
/// units: a response in another unit of the same quantity is converted; a
/// unit of another quantity, or one that cannot be read, is no number.
pub fn parse_number(response: &str, expected: Option<&str>) -> Option<f64> {
    let text = response.trim().replace(',', "");
    let split = text.char_indices().find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))).map_or(text.len(), |(at, _)| at);
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
    let Some(expected) = expected else {
        // A count with what it counts after it (`24 GPUs`), but never a unit
        // of some quantity the question does not ask for (`5 W`).
        let words = rest.split_whitespace().all(|w| w.chars().all(|c| c.is_alphabetic()));
        return (words && unit(rest).is_none() && rest.split_whitespace().all(|w| unit(w).is_none())).then_some(value);
    };
    // `Gb/s` written for a question in GB/s is bits: an exact spelling
    // wins; otherwise the question's own unit in any case is that unit.
    let exact = UNITS.iter().any(|(name, _, _)| *name == rest);
    if rest == expected || (!exact && rest.eq_ignore_ascii_case(expected)) {
        return Some(value);
    }
    // A count over time (`errors/h`) in the operator's words: `1200 per hour`, `20/min`.
    if let (Some(given), Some(wanted)) = (per_period(rest), per_period(expected)) {
        return Some(value * wanted / given).filter(|n| n.is_finite());
    }
    let (quantity, factor) = unit(rest)?;
    let (expected_quantity, expected_factor) = unit(expected)?;
    (quantity == expected_quantity).then(|| value * factor / expected_factor).filter(|n| n.is_finite())
}

/// The seconds in the period of a count over time: `errors/h`, `/hour`,
/// `per hour`, `an hour`, `errors per minute`. None for a unit of some
/// quantity over time (`Gb/s` is a bandwidth, not a count).
fn per_period(text: &str) -> Option<f64> {
    let text = text.trim().to_ascii_lowercase();
    let (counted, period) = match text.split_once('/') {
        Some((counted, period)) => (counted.trim().to_string(), period.trim().to_string()),
        None => {
            let words: Vec<&str> = text.split_whitespace().collect();
            let at = words.iter().position(|w| matches!(*w, "per" | "a" | "an" | "every"))?;
            (words[..at].join(" "), words[at + 1..].join(" "))
        }
    };
    if !counted.chars().all(|c| c.is_alphabetic() || c == ' ') || (!counted.is_empty() && unit(&counted).is_some()) {
        return None;
    }
    Some(match period.as_str() {
        "s" | "sec" | "second" => 1.0,
        "min" | "minute" => 60.0,
        "h" | "hr" | "hour" => 3600.0,
        "d" | "day" => 86_400.0,
        _ => return None,
    })
}

/// The number in `response` with a leading label dropped (`GPU 0`, `Xid
/// 79`, `rate: 400`), and the label when there was one.
fn unlabelled(response: &str) -> (&str, Option<&str>) {
    let trimmed = response.trim();
    let start = trimmed.char_indices().find(|(_, c)| c.is_ascii_digit() || matches!(c, '-' | '+' | '.')).map_or(trimmed.len(), |(at, _)| at);
    let label = trimmed[..start].trim();
    // Only words, blanks and a colon or `=` make a label (`mlx5_3` is no label and a number).
    let is_label = !label.is_empty()
        && label.chars().all(|c| c.is_ascii_alphabetic() || matches!(c, ' ' | ':' | '=' | '#'))
        && !trimmed[start..].starts_with(|c: char| c == '-' && label.ends_with(|l: char| l.is_ascii_alphabetic()));
    if is_label {
        (trimmed[start..].trim(), Some(label))
    } else {
        (trimmed, None)
    }
}

/// The words of a text that carry a value: those with a digit in them
/// (`79`, `mlx5_3`, `gpu-002`, `1024`), lowercased, without punctuation
/// around them.
fn key_tokens(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '"' | '\'' | '`' | '[' | ']'))
        .map(|word| word.trim_matches(|c: char| matches!(c, '.' | ':' | '!' | '?')))
        .filter(|word| word.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The choice `response` names: its text, or the one choice whose values
/// (the words with digits in them) agree with the response's.
fn read_choice(choices: &[String], response: &str) -> Reading {
    let wanted = normalize(response);
    if wanted.is_empty() {
        return Reading::Unclear("Pick one of the choices.".to_string());
    }
    if let Some(choice) = choices.iter().find(|choice| normalize(choice) == wanted) {
        return Reading::Read { value: choice.clone(), note: None };
    }
    let given = key_tokens(response);
    let fits: Vec<&String> = if given.is_empty() {
        // Words only: the one choice that contains them.
        choices.iter().filter(|choice| wanted.len() >= 3 && normalize(choice).contains(&wanted)).collect()
    } else {
        choices
            .iter()
            .filter(|choice| {
                let values = key_tokens(choice);
                !values.is_empty() && (given.iter().all(|g| values.contains(g)) || values.iter().all(|v| given.contains(v)))
            })
            .collect()
    };
    match fits.as_slice() {
        [one] => Reading::Read { value: (*one).clone(), note: Some(format!("read as \u{201c}{one}\u{201d}")) },
        [] => Reading::Unclear(format!("\u{201c}{}\u{201d} is none of the choices; answer with one of them.", response.trim())),
        _ => Reading::Unclear(format!(
            "\u{201c}{}\u{201d} fits more than one choice ({}); say which.",
            response.trim(),
            fits.iter().map(|c| format!("\u{201c}{c}\u{201d}")).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The entity `response` names, in the forms operators write: `GPU5`,
/// `GPU 5`, `gpu-001:5`, `gpu-001 GPU 5`, a PCI bus id or a UUID for a GPU;
/// `mlx5_3`, `mlx5_3/1`, `gpu-001 mlx5_3` for an HCA or its port; a
/// hostname for a node. The node may be left out when only one node has it.
fn read_entity(entity: &str, choices: &[String], aliases: &[(String, usize)], response: &str) -> Reading {
    let text = response.trim();
    let lower = text.to_ascii_lowercase();
    if let Some(choice) = choices.iter().find(|c| normalize(c) == normalize(text)) {
        return Reading::Read { value: choice.clone(), note: None };
    }
    // Bus ids as nvidia-smi (`00000000:18:00.0`), lspci (`18:00.0`) or sysfs (`0000:18:00.0`) write them.
    let bus = |alias: &str| -> bool {
        let short = alias.rsplit_once(':').map(|(domain_bus, rest)| (domain_bus.rsplit(':').next().unwrap_or(""), rest));
        alias == lower || short.is_some_and(|(bus, rest)| lower == format!("{bus}:{rest}") || lower.ends_with(&format!(":{bus}:{rest}")))
    };
    if let Some((_, at)) = aliases.iter().find(|(alias, _)| bus(alias)) {
        let name = &choices[*at];
        return Reading::Read { value: name.clone(), note: Some(format!("read as {name}")) };
    }
    // Split into the node (a word that is one of the hostnames) and the rest.
    let nodes: Vec<&str> = {
        let mut seen: Vec<&str> = Vec::new();
        for choice in choices {
            let node = choice.split(' ').next().unwrap_or("");
            if !seen.contains(&node) {
                seen.push(node);
            }
        }
        seen
    };
    // The longest hostname named as a word of its own (`gpu1` is not in `gpu10`).
    let mut nodes = nodes;
    crate::sort::sort_by_key(&mut nodes, |n| std::cmp::Reverse(n.len()));
    let mut node: Option<&str> = None;
    let mut rest = lower.clone();
    let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'));
    'found: for candidate in &nodes {
        let wanted = candidate.to_ascii_lowercase();
        for (at, _) in lower.match_indices(&wanted) {
            if boundary(lower[..at].chars().next_back()) && boundary(lower[at + wanted.len()..].chars().next()) {
                node = Some(candidate);
                rest = format!("{} {}", &lower[..at], &lower[at + wanted.len()..]);
                break 'found;
            }
        }
    }
    let rest = rest.replace([':', '/', ','], " ");
    // Words that only join the parts (`GPU 5 on gpu-001`).
    let words: Vec<&str> = rest.split_whitespace().filter(|w| !matches!(*w, "on" | "of" | "at" | "in" | "node" | "host" | "the" | "hca" | "nic")).collect();
    let number = |word: &str| word.parse::<u32>().ok();
    // What the rest names, as the suffix of a choice after its node.
    let suffix: Option<String> = match entity {
        "node" => words.is_empty().then(String::new),
        "gpu" => match words.as_slice() {
            ["gpu", n] => number(n).map(|n| format!("GPU {n}")),
            [word] => number(word).or_else(|| word.strip_prefix("gpu").and_then(number)).map(|n| format!("GPU {n}")),
            _ => None,
        },
        "hca" | "port" => {
            let hca = words.iter().find_map(|w| w.strip_prefix("mlx5_").and_then(number));
            let port = match words.as_slice() {
                [_, "port", p] | [_, p] => number(p),
                _ => None,
            };
            match (entity, hca, port) {
                ("hca", Some(h), None) => Some(format!("mlx5_{h}")),
                ("port", Some(h), Some(p)) => Some(format!("mlx5_{h} port {p}")),
                ("port", Some(h), None) => Some(format!("mlx5_{h} port 1")),
                _ => None,
            }
        }
        _ => None,
    };
    let Some(suffix) = suffix else {
        return Reading::Unclear(format!(
            "\u{201c}{text}\u{201d} does not name a {entity} of this cluster; e.g. {}.",
            choices.first().map_or("", String::as_str)
        ));
    };
    let fits: Vec<&String> = choices
        .iter()
        .filter(|choice| {
            let (choice_node, choice_rest) = choice.split_once(' ').unwrap_or((choice.as_str(), ""));
            node.is_none_or(|n| n == choice_node) && choice_rest == suffix
        })
        .collect();
    match fits.as_slice() {
        [one] if normalize(one) == normalize(text) => Reading::Read { value: (*one).clone(), note: None },
        [one] => Reading::Read { value: (*one).clone(), note: Some(format!("read as {one}")) },
        [] => Reading::Unclear(format!("\u{201c}{text}\u{201d} is no {entity} of this cluster.")),
        _ => Reading::Unclear(format!("\u{201c}{text}\u{201d}: on which node? Name it too, e.g. {}.", fits[0])),
    }
}

impl Question {
    /// How the engine reads `response` for this question.
    pub fn read(&self, response: &str) -> Reading {
        let plain = |value: &str| Reading::Read { value: value.to_string(), note: None };
        match &self.kind {
            QuestionKind::Choice { choices, .. } => read_choice(choices, response),
            QuestionKind::Multi { choices, .. } => {
                let mut values = Vec::new();
                let mut notes = Vec::new();
                for item in items(response) {
                    match read_choice(choices, item) {
                        Reading::Read { value, note } => {
                            notes.extend(note);
                            if !values.contains(&value) {
                                values.push(value);
                            }
                        }
                        unclear => return unclear,
                    }
                }
                if values.is_empty() {
                    return Reading::Unclear("Pick at least one of the choices.".to_string());
                }
                // In the choices' order, so that the same set reads the same.
                crate::sort::sort_by_key(&mut values, |v| choices.iter().position(|c| c == v));
                Reading::Read { value: values.join("\n"), note: (!notes.is_empty()).then(|| notes.join("; ")) }
            }
            QuestionKind::Entity { entity, choices, aliases, .. } => read_entity(entity, choices, aliases, response),
            QuestionKind::Number { unit, .. } => {
                let (number, label) = unlabelled(response);
                match parse_number(number, unit.as_deref()) {
                    Some(value) => {
                        let note = (label.is_some() || number.trim() != value.to_string()).then(|| match unit {
                            Some(unit) => format!("read as {value} {unit}"),
                            None => format!("read as {value}"),
                        });
                        Reading::Read { value: value.to_string(), note }
                    }
                    None if number.is_empty() => Reading::Unclear("Answer with a number.".to_string()),
                    None => Reading::Unclear(match unit {
                        Some(unit) => format!("\u{201c}{}\u{201d} is not a number in {unit} (or a unit that converts to it).", response.trim()),
                        None => format!("\u{201c}{}\u{201d} is not a number.", response.trim()),
                    }),
                }
            }
            QuestionKind::Text { .. } if normalize(response).is_empty() => Reading::Unclear("Write an answer.".to_string()),
            QuestionKind::Order { items: expected } => {
                let given = items(response);
                let mut sorted_given: Vec<&str> = given.clone();
                let mut sorted_expected: Vec<&str> = expected.iter().map(String::as_str).collect();
                crate::sort::sort(&mut sorted_given);
                crate::sort::sort(&mut sorted_expected);
                if sorted_given == sorted_expected {
                    plain(response)
                } else {
                    Reading::Unclear("Put every item in order, each once.".to_string())
                }
            }
            _ => plain(response),
        }
    }

    /// Whether `response` is right, and the points before retries and
    /// hints (a handoff earns a share of its fields).
    pub fn grade(&self, response: &str) -> Grade {
        let mut points = self.points;
        let mut reading = None;
        let mut review = Vec::new();
        let value = match self.read(response) {
            Reading::Read { value, note } => {
                reading = note;
                Some(value)
            }
            Reading::Unclear(_) => None,
        };
        let correct = match (&self.kind, value.as_deref()) {
            (_, None) => false,
            (QuestionKind::Choice { choices, answer }, Some(value)) => choices.get(*answer).is_some_and(|a| a == value),
            (QuestionKind::Entity { choices, answer, .. }, Some(value)) => choices.get(*answer).is_some_and(|a| a == value),
            (QuestionKind::Task { .. } | QuestionKind::State { .. }, Some(value)) => value == DONE,
            (QuestionKind::Multi { choices, answers }, Some(value)) => {
                let mut given: Vec<usize> = items(value).iter().filter_map(|item| choices.iter().position(|c| c == item)).collect();
                crate::sort::sort(&mut given);
                given.dedup();
                given == *answers
            }
            (QuestionKind::Text { accepted }, Some(value)) => accepted.iter().any(|a| normalize(a) == normalize(value)),
            (QuestionKind::Number { answer, tolerance, .. }, Some(value)) => value.parse::<f64>().is_ok_and(|given| {
                let allowed = match tolerance {
                    Tolerance::Absolute(delta) => *delta,
                    Tolerance::Relative(fraction) => answer.abs() * fraction,
                };
                (given - answer).abs() <= allowed + 1e-9 * answer.abs().max(1.0)
            }),
            (QuestionKind::Order { items: expected }, Some(value)) => items(value) == expected.iter().map(String::as_str).collect::<Vec<_>>(),
            (QuestionKind::Handoff { fields, .. }, Some(value)) => {
                let record = HandoffRecord::from_response(value);
                let judged = judge_handoff(fields, &record);
                points = judged.points(self.points);
                reading = judged.reading();
                let correct = judged.correct();
                review = judged.review;
                correct
            }
        };
        let partial = matches!(self.kind, QuestionKind::Handoff { .. });
        Grade {
            correct,
            points: if correct || partial { points } else { 0 },
            possible: self.points,
            explanation: self.explanation.clone(),
            feedback: self.feedback.iter().find(|(given, _)| value.as_deref().is_some_and(|v| normalize(given) == normalize(v))).map(|(_, why)| why.clone()),
            reading,
            review,
        }
    }

    /// The grade of an answer given at attempt `attempts` with `hints_shown`
    /// hints seen: a right answer keeps the policy's share for each wrong
    /// attempt before it, and each hint costs its share (or its points).
    pub fn grade_attempt(&self, response: &str, attempts: u32, hints_shown: u32) -> Grade {
        let mut grade = self.grade(response);
        let policy = &self.policy;
        let checks = matches!(self.kind, QuestionKind::Task { .. } | QuestionKind::State { .. });
        // Checks (task, state) cost nothing to repeat: what the trainee did decides.
        let wrong_before = if checks { 0 } else { attempts.saturating_sub(1) };
        let retry = (f64::from(policy.retry_credit.min(100)) / 100.0).powi(wrong_before.min(64) as i32);
        let hints = hints_shown.min(self.hints.len() as u32);
        let earned = f64::from(grade.points) * retry;
        let earned = match policy.hint_cost_points {
            Some(cost) => (earned - f64::from(hints.saturating_mul(cost))).max(0.0),
            None => earned * (1.0 - f64::from(hints) * f64::from(policy.hint_cost_percent.min(100)) / 100.0).max(0.0),
        };
        // Whole points, rounded down, so that every charge bites.
        grade.points = (earned + 1e-9).floor() as u32;
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
            QuestionKind::Multi { choices, answers } => answers.iter().filter_map(|at| choices.get(*at).cloned()).collect::<Vec<_>>().join("\n"),
            QuestionKind::Text { accepted } => accepted.first().cloned().unwrap_or_default(),
            QuestionKind::Number { answer, .. } => answer.to_string(),
            QuestionKind::Order { items } => items.join("\n"),
            QuestionKind::Entity { choices, answer, .. } => choices.get(*answer).cloned().unwrap_or_default(),
            QuestionKind::Task { .. } | QuestionKind::State { .. } => DONE.to_string(),
            QuestionKind::Handoff { fields, .. } => HandoffRecord {
                fields: fields.iter().map(reference_field).collect(),
                checked: Vec::new(),
                closed: true,
                done: fields.iter().flat_map(|f| f.actions.clone()).collect(),
            }
            .to_response(),
        }
    }
}

/// A field written with exactly what it must state.
fn reference_field(field: &HandoffField) -> String {
    let mut parts: Vec<String> = field.states.clone();
    parts.extend(field.numbers.iter().map(|(value, _)| value.to_string()));
    parts.extend(field.actions.iter().cloned());
    if parts.is_empty() {
        format!("{}: see the transcript", field.name)
    } else {
        parts.join(", ")
    }
}

/// Whether `text` mentions `word` as a word of its own (not inside
/// another), ignoring case; `GPU 3` is also found as `GPU3`.
pub fn mentions(text: &str, word: &str) -> bool {
    let text = text.to_ascii_lowercase();
    let word = word.to_ascii_lowercase();
    let forms = match word.split_once(' ') {
        Some(("gpu", tail)) => vec![word.clone(), format!("gpu{tail}"), format!("gpu-{tail}")],
        _ => vec![word.clone()],
    };
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    forms.iter().any(|form| {
        text.match_indices(form.as_str()).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + form.len()..].chars().next();
            // `gpu-002` inside `gpu-0021` is another name; `mlx5_1` inside `mlx5_10` too.
            !is_word(before) && !is_word(after) && after != Some('-')
        })
    })
}

/// The numbers a text states (words that are numbers, with a unit after
/// them or not; never the digits inside names such as `mlx5_3`).
pub fn numbers_in(text: &str) -> Vec<f64> {
    text.split(|c: char| c.is_whitespace() || matches!(c, ';' | '(' | ')' | '[' | ']' | '"' | '`'))
        .filter_map(|word| {
            // `~1,250/h`, `≈466`, `>400`: a sign of approximation is no part of the number.
            let word = word.trim_start_matches(['~', '\u{2248}', '<', '>', '=']).trim_end_matches([',', '.', ':']).replace(',', "");
            let end = word.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(word.len());
            let (number, unit) = word.split_at(end);
            // A unit may follow (`466GB/s`, `5%`); letters then digits is a name.
            let unit_ok = unit.is_empty() || unit.chars().all(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '%'));
            (unit_ok && !number.is_empty()).then(|| number.parse::<f64>().ok()).flatten()
        })
        .collect()
}

/// What a handoff's fields earned.
struct HandoffJudgement {
    /// Per field that a machine decides: (name, right, why not).
    decided: Vec<(String, bool, Option<String>)>,
    review: Vec<String>,
    closed: bool,
}

impl HandoffJudgement {
    fn points(&self, possible: u32) -> u32 {
        if !self.closed || self.decided.is_empty() {
            return 0;
        }
        let right = self.decided.iter().filter(|(_, ok, _)| *ok).count() as u64;
        (u64::from(possible) * right / self.decided.len() as u64) as u32
    }

    fn correct(&self) -> bool {
        self.closed && !self.decided.is_empty() && self.decided.iter().all(|(_, ok, _)| *ok)
    }

    fn reading(&self) -> Option<String> {
        if !self.closed {
            return Some("the incident was not closed when this record was submitted: a handoff describes a finished fix".to_string());
        }
        let short: Vec<String> = self.decided.iter().filter_map(|(name, _, why)| why.as_ref().map(|why| format!("{name}: {why}"))).collect();
        (!short.is_empty()).then(|| short.join("; "))
    }
}

fn judge_handoff(fields: &[HandoffField], record: &HandoffRecord) -> HandoffJudgement {
    let mut decided = Vec::new();
    let mut review = Vec::new();
    for (at, field) in fields.iter().enumerate() {
        if field.review {
            review.push(field.name.clone());
            continue;
        }
        let text = record.fields.get(at).map_or("", String::as_str);
        decided.push((field.name.clone(), judge_field(field, text, &record.done).is_none(), judge_field(field, text, &record.done)));
    }
    HandoffJudgement { decided, review, closed: record.closed }
}

/// Why a field does not state its facts, or None when it does.
fn judge_field(field: &HandoffField, text: &str, done: &[String]) -> Option<String> {
    if let Some(missing) = field.states.iter().find(|word| !mentions(text, word)) {
        let _ = missing;
        return Some("it does not name what failed".to_string());
    }
    // Naming another node or device beside what failed is natural (a peer,
    // a healthy rail for comparison); naming more of them than what failed
    // is a list of everything.
    let others = field.others.iter().filter(|other| mentions(text, other)).count();
    if others > field.states.len() {
        return Some("it names more than what failed".to_string());
    }
    let stated = numbers_in(text);
    let within = |given: f64, (value, tolerance): &(f64, Tolerance)| {
        let allowed = match tolerance {
            Tolerance::Absolute(delta) => *delta,
            Tolerance::Relative(fraction) => value.abs() * fraction,
        };
        (given - value).abs() <= allowed + 1e-9 * value.abs().max(1.0)
    };
    if field.numbers.iter().any(|expected| !stated.iter().any(|given| within(*given, expected))) {
        return Some("a measured number is missing or off".to_string());
    }
    // Numbers near an expected one but outside its tolerance: a "before"
    // figure beside the right one is fine, more of them than right ones is
    // a list of guesses.
    let near = |given: &f64| field.numbers.iter().any(|(value, _)| *given >= value / 2.0 && *given <= value * 2.0);
    let right = stated.iter().filter(|given| field.numbers.iter().any(|expected| within(**given, expected))).count();
    let off = stated.iter().filter(|given| near(given) && !field.numbers.iter().any(|expected| within(**given, expected))).count();
    if off > right {
        return Some("it states a number the measurements do not support".to_string());
    }
    for (action, words) in HANDOFF_ACTIONS {
        let said = words.iter().any(|word| mentions(text, word));
        let taken = done.iter().any(|d| d == action);
        if field.actions.iter().any(|a| a == action) && !(said && taken) {
            return Some(if taken { format!("it does not say the {action}") } else { format!("no {action} was done") });
        }
        if said && !taken && !field.actions.iter().any(|a| a == action) {
            return Some(format!("it claims a {action} that the transcript does not show"));
        }
    }
    None
}

/// The lab's score: the sum over graded answers.
pub fn total<'a>(grades: impl IntoIterator<Item = &'a Grade>) -> (u32, u32) {
    grades.into_iter().fold((0, 0), |(points, possible), grade| (points + grade.points, possible + grade.possible))
}

/// What the app and the CLI show of a graded answer, in the engine's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// `Correct`, `Not quite`, `Done`, `Not yet`, `Recorded`, `Recorded in part`.
    pub word: &'static str,
    /// `1 / 2 points`.
    pub points: String,
    /// ` · answered “GPU5”` (empty for checks and records).
    pub answered: String,
    /// How the engine read it, or what fell short.
    pub reading: Option<String>,
    /// ` · 2 attempts · 1 left`.
    pub attempts: String,
}

impl Verdict {
    /// The verdict on one line: `Correct — 1 / 2 points · answered “GPU5” · 2 attempts`.
    pub fn line(&self) -> String {
        let reading = self.reading.as_ref().map_or(String::new(), |r| format!(" ({r})"));
        format!("{} \u{2014} {}{}{reading}{}", self.word, self.points, self.answered, self.attempts)
    }
}

/// The words for `grade`, an answer of `question` given `attempts` times.
pub fn verdict(question: &Question, response: &str, attempts: u32, grade: &Grade) -> Verdict {
    let checked = matches!(question.kind, QuestionKind::Task { .. } | QuestionKind::State { .. });
    let word = match (&question.kind, grade.correct) {
        (_, true) if checked => "Done",
        (_, false) if checked => "Not yet",
        (QuestionKind::Handoff { .. }, true) => "Recorded",
        (QuestionKind::Handoff { .. }, false) => "Recorded in part",
        (_, true) => "Correct",
        (_, false) => "Not quite",
    };
    let answered = if checked || matches!(question.kind, QuestionKind::Handoff { .. }) {
        String::new()
    } else {
        format!(" \u{b7} answered \u{201c}{}\u{201d}", items(response).join(", "))
    };
    let left = question.attempts.map(|allowed| allowed.saturating_sub(attempts));
    let mut attempts_text = if attempts > 1 && !checked { format!(" \u{b7} {attempts} attempts") } else { String::new() };
    if let Some(left) = left.filter(|_| !grade.correct && !checked) {
        attempts_text += &format!(" \u{b7} {left} left");
    }
    let mut reading = grade.reading.clone();
    if !grade.review.is_empty() {
        let waiting = format!("for an instructor to review: {}", grade.review.join(", "));
        reading = Some(reading.map_or(waiting.clone(), |r| format!("{r}; {waiting}")));
    }
    Verdict {
        word,
        points: format!("{} / {} point{}", grade.points, grade.possible, if grade.possible == 1 { "" } else { "s" }),
        answered,
        reading,
        attempts: attempts_text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::Policy;

    fn question(kind: QuestionKind) -> Question {
        Question {
            id: "q".into(),
            prompt: Doc::default(),
            kind,
            points: 2,
            hints: vec![Doc::default(), Doc::default()],
            explanation: Doc::default(),
            attempts: Some(3),
            retry: false,
            policy: Policy::default(),
            feedback: vec![],
            seed: 1,
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
    fn numbers_with_a_label_read_as_the_number() {
        let gpu = question(QuestionKind::Number { answer: 0.0, tolerance: Tolerance::Absolute(0.0), unit: None });
        let grade = gpu.grade("GPU 0");
        assert!(grade.correct);
        assert_eq!(grade.reading.as_deref(), Some("read as 0"));
        assert!(gpu.grade("Xid: 0").correct);
        assert!(matches!(gpu.read("none"), Reading::Unclear(_)));
    }

    #[test]
    fn a_choice_reads_from_the_value_in_it() {
        let xids = question(QuestionKind::Choice { choices: vec!["Xid 79".into(), "Xid 48".into(), "Xid 13".into()], answer: 0 });
        assert!(xids.grade("79").correct);
        assert!(xids.grade("xid 79").correct);
        assert!(!xids.grade("48").correct);
        assert!(matches!(xids.read("79 or 48"), Reading::Unclear(_)));
        let plain = question(QuestionKind::Choice { choices: vec!["79".into(), "48".into()], answer: 0 });
        assert!(plain.grade("Xid 79").correct);
        let mtu = question(QuestionKind::Choice { choices: vec!["4096 (5)".into(), "1024 (3)".into()], answer: 1 });
        assert!(mtu.grade("1024").correct);
        assert!(matches!(mtu.read("9000"), Reading::Unclear(_)));
    }

    #[test]
    fn an_entity_reads_in_the_forms_operators_write() {
        let choices: Vec<String> = ["gpu-001", "gpu-002"].iter().flat_map(|n| (0..8).map(move |g| format!("{n} GPU {g}"))).collect();
        let answer = choices.iter().position(|c| c == "gpu-001 GPU 5").unwrap();
        let aliases = vec![("00000000:a3:00.0".to_string(), answer), ("gpu-1a2b".to_string(), answer)];
        let q = question(QuestionKind::Entity { entity: "gpu".into(), choices, answer, aliases });
        for form in ["gpu-001 GPU 5", "gpu-001:5", "gpu-001 GPU5", "GPU5 on gpu-001", "00000000:A3:00.0", "a3:00.0", "0000:a3:00.0", "GPU-1A2B"] {
            assert!(q.grade(form).correct, "{form}");
        }
        assert!(matches!(q.read("GPU5"), Reading::Unclear(why) if why.contains("which node")));
        assert!(!q.grade("gpu-002:5").correct);
        let hcas: Vec<String> = (0..8).map(|h| format!("gpu-001 mlx5_{h}")).collect();
        let hca = question(QuestionKind::Entity { entity: "hca".into(), choices: hcas, answer: 3, aliases: vec![] });
        for form in ["mlx5_3", "gpu-001 mlx5_3", "gpu-001:mlx5_3"] {
            assert!(hca.grade(form).correct, "{form}");
        }
        let ports: Vec<String> = (0..8).map(|h| format!("gpu-001 mlx5_{h} port 1")).collect();
        let port = question(QuestionKind::Entity { entity: "port".into(), choices: ports, answer: 3, aliases: vec![] });
        for form in ["mlx5_3/1", "mlx5_3 port 1", "mlx5_3:1", "mlx5_3"] {
            assert!(port.grade(form).correct, "{form}");
        }
    }

    #[test]
    fn retries_and_hints_cost_their_share() {
        let q = question(QuestionKind::Choice { choices: vec!["a".into(), "b".into(), "c".into(), "d".into()], answer: 1 });
        assert_eq!(q.grade_attempt("b", 1, 0).points, 2);
        assert_eq!(q.grade_attempt("b", 2, 0).points, 1);
        assert_eq!(q.grade_attempt("b", 1, 1).points, 1);
        assert_eq!(q.grade_attempt("b", 3, 0).points, 0);
        assert!(!q.open(1, Some(&q.grade("b"))), "a right answer is locked");
        assert!(!q.open(3, Some(&q.grade("a"))), "no attempts left");
    }

    #[test]
    fn multi_needs_exactly_the_right_set() {
        let q = question(QuestionKind::Multi { choices: vec!["a1".into(), "b2".into(), "c3".into()], answers: vec![0, 2] });
        assert!(q.grade("c3\na1").correct);
        assert!(!q.grade("a1").correct);
        assert!(!q.grade("a1\nb2\nc3").correct);
        assert!(!q.grade("a1\nc3\nzzz").correct);
    }

    #[test]
    fn order_items_are_never_shown_in_the_right_order_and_differ_between_variants() {
        let items: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        let mut orders = std::collections::BTreeSet::new();
        for seed in 1..20 {
            let mut q = question(QuestionKind::Order { items: items.clone() });
            q.seed = seed;
            let order = shuffled(&items, &q);
            assert_ne!(order, items);
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, items);
            orders.insert(order);
        }
        assert!(orders.len() > 3, "{orders:?}");
    }

    #[test]
    fn order_needs_the_exact_sequence() {
        let q = question(QuestionKind::Order { items: vec!["x".into(), "y".into()] });
        assert!(q.grade("x\ny\n").correct);
        assert!(!q.grade("y\nx").correct);
    }

    #[test]
    fn handoff_fields_are_judged_on_their_facts() {
        let field = |name: &str, states: &[&str], numbers: &[f64], actions: &[&str], others: &[&str]| HandoffField {
            name: name.into(),
            states: states.iter().map(|s| s.to_string()).collect(),
            numbers: numbers.iter().map(|n| (*n, Tolerance::Relative(0.1))).collect(),
            actions: actions.iter().map(|s| s.to_string()).collect(),
            others: others.iter().map(|s| s.to_string()).collect(),
            review: false,
        };
        let fields = vec![
            field("Fault", &["gpu-002", "mlx5_3"], &[], &[], &["gpu-001", "mlx5_0", "mlx5_1"]),
            field("Numbers", &[], &[466.0], &[], &[]),
            field("Changes", &[], &[], &["drain", "repair"], &[]),
            HandoffField { name: "Owner".into(), review: true, ..HandoffField::default() },
        ];
        let q = question(QuestionKind::Handoff { fields, rubric: vec!["r".into()], closed_when: vec![] });
        let record = |texts: &[&str], closed: bool, done: &[&str]| {
            HandoffRecord {
                fields: texts.iter().map(|s| s.to_string()).collect(),
                checked: vec![0],
                closed,
                done: done.iter().map(|s| s.to_string()).collect(),
            }
            .to_response()
        };
        let right =
            record(&["gpu-002 mlx5_3 symbol errors", "busbw back to 468 GB/s", "drained, technician reseated the cable", "me"], true, &["drain", "repair"]);
        let grade = q.grade(&right);
        assert!(grade.correct, "{grade:?}");
        assert_eq!(grade.points, 2);
        assert_eq!(grade.review, ["Owner"]);
        // Placeholders, a shotgun of names, a made-up action, an open incident.
        assert_eq!(q.grade(&record(&["x", "x", "x", "x"], true, &["drain", "repair"])).points, 0);
        let shotgun = record(&["gpu-001 gpu-002 mlx5_0 mlx5_1 mlx5_3", "100 200 300 400 466 500", "drained and reseated", ""], true, &["drain", "repair"]);
        assert!(q.grade(&shotgun).points < 2);
        let claimed = record(&["gpu-002 mlx5_3", "468", "drained, reseated, then a reset", ""], true, &["drain", "repair"]);
        assert!(!q.grade(&claimed).correct);
        assert_eq!(q.grade(&record(&["gpu-002 mlx5_3", "468", "drained, reseated", ""], false, &["drain", "repair"])).points, 0);
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
