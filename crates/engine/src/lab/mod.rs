//! Lab files: the TOML format instructors write, validated into a [`Lab`].
//!
//! Parsing is strict: unknown keys are errors (with a "did you mean"), and
//! every problem is reported at a line and column. The format is documented
//! in docs/authoring.md; the names are a contract with lab authors.

pub mod diagnostic;

use std::collections::BTreeSet;

use serde::Deserialize;
use toml::Spanned;

use crate::model::{preset, Cluster, ClusterConfig};
use crate::rng::Rng;
pub use diagnostic::Diagnostic;

/// A validated lab.
#[derive(Clone, Debug)]
pub struct Lab {
    pub id: String,
    pub title: String,
    pub summary: String,
    /// Markdown.
    pub briefing: String,
    pub level: Option<String>,
    pub minutes: Option<u32>,
    pub stage: Option<String>,
    pub tags: Vec<String>,
    pub cluster: ClusterConfig,
    pub questions: Vec<Question>,
}

#[derive(Clone, Debug)]
pub struct Question {
    pub id: String,
    pub prompt: String,
    pub kind: QuestionKind,
    pub points: u32,
    pub hints: Vec<String>,
    /// Markdown shown after answering.
    pub explanation: String,
}

#[derive(Clone, Debug)]
pub enum QuestionKind {
    /// One of `choices`; `answer` indexes the right one.
    Choice { choices: Vec<String>, answer: usize },
    /// Free text; any of `accepted` is right (case and spacing ignored).
    Text { accepted: Vec<String> },
}

impl Lab {
    /// The lab's cluster for one trainee seed: the same lab and seed give the
    /// same cluster on every platform.
    pub fn instantiate(&self, seed: u64) -> Cluster {
        let world_seed = Rng::derive(seed, &["lab", &self.id]).next_u64();
        Cluster::build(&self.cluster, world_seed)
    }

    pub fn first_host(&self) -> &str {
        self.cluster.hostnames.first().map_or("", String::as_str)
    }

    pub fn points_possible(&self) -> u32 {
        self.questions.iter().map(|q| q.points).sum()
    }
}

pub const LEVELS: &[&str] = &["beginner", "intermediate", "advanced"];
pub const STAGES: &[&str] = &["understand", "prepare", "validate", "operate", "diagnose", "handover"];
pub const QUESTION_TYPES: &[&str] = &["choice", "text"];

// The file as written. `deny_unknown_fields` makes typos errors.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LabFile {
    lab: LabTable,
    cluster: ClusterTable,
    #[serde(default)]
    questions: Vec<QuestionTable>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LabTable {
    id: Spanned<String>,
    title: String,
    summary: String,
    #[serde(default)]
    briefing: String,
    level: Option<Spanned<String>>,
    minutes: Option<u32>,
    stage: Option<Spanned<String>>,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterTable {
    preset: Spanned<String>,
    nodes: Option<Vec<Spanned<String>>>,
    count: Option<Spanned<u32>>,
    driver: Option<String>,
    cuda: Option<String>,
    persistence: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QuestionTable {
    id: Spanned<String>,
    #[serde(rename = "type")]
    kind: Spanned<String>,
    prompt: String,
    choices: Option<Vec<String>>,
    answer: Spanned<String>,
    #[serde(default)]
    accept: Vec<String>,
    points: Option<u32>,
    #[serde(default)]
    hints: Vec<String>,
    #[serde(default)]
    explanation: String,
}

/// The most nodes a lab may declare with `count`.
pub const MAX_NODES: u32 = 4096;

/// Parses and validates a lab file's text.
pub fn load(source: &str) -> Result<Lab, Vec<Diagnostic>> {
    let file: LabFile = toml::from_str(source).map_err(|error| vec![parse_error(source, &error)])?;
    let mut problems = Vec::new();
    let mut problem = |span: std::ops::Range<usize>, message: String| {
        problems.push(Diagnostic::at(source, span.start, message));
    };

    let lab = file.lab;
    let id = lab.id.get_ref();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        problem(lab.id.span(), format!("lab id `{id}` must use only a-z, 0-9 and -"));
    }
    check_one_of(&lab.level, "level", LEVELS, &mut problem);
    check_one_of(&lab.stage, "stage", STAGES, &mut problem);

    let cluster = file.cluster;
    let preset_name = cluster.preset.get_ref();
    let preset = preset::find(preset_name);
    if preset.is_none() {
        let hint = suggestion(preset_name, preset::ids());
        problem(
            cluster.preset.span(),
            format!("unknown preset `{preset_name}`{hint}; presets are {}", list(preset::ids())),
        );
    }
    let hostnames = match (&cluster.nodes, &cluster.count) {
        (Some(_), Some(count)) => {
            problem(count.span(), "give either `nodes` or `count`, not both".to_string());
            Vec::new()
        }
        (None, None) => {
            problem(cluster.preset.span(), "the cluster needs `nodes = [\"gpu-001\", ...]` or `count = N`".to_string());
            Vec::new()
        }
        (None, Some(count)) => {
            let n = *count.get_ref();
            if n == 0 || n > MAX_NODES {
                problem(count.span(), format!("`count` must be between 1 and {MAX_NODES}"));
            }
            (1..=n.min(MAX_NODES)).map(|i| format!("gpu-{i:03}")).collect()
        }
        (Some(nodes), None) => {
            if nodes.is_empty() {
                problem(cluster.preset.span(), "`nodes` must name at least one node".to_string());
            }
            let mut seen = BTreeSet::new();
            for node in nodes {
                let name = node.get_ref();
                if !is_hostname(name) {
                    problem(node.span(), format!("`{name}` is not a valid hostname (letters, digits, - and .)"));
                } else if !seen.insert(name.clone()) {
                    problem(node.span(), format!("node `{name}` is listed twice"));
                }
            }
            nodes.iter().map(|node| node.get_ref().clone()).collect()
        }
    };

    let mut questions = Vec::new();
    let mut question_ids = BTreeSet::new();
    for table in file.questions {
        let qid = table.id.get_ref().clone();
        if !question_ids.insert(qid.clone()) {
            problem(table.id.span(), format!("question id `{qid}` is used twice"));
        }
        let kind = match table.kind.get_ref().as_str() {
            "choice" => {
                let choices = table.choices.unwrap_or_default();
                if choices.len() < 2 {
                    problem(table.kind.span(), format!("question `{qid}`: a choice question needs `choices` with at least two entries"));
                }
                match choices.iter().position(|c| c == table.answer.get_ref()) {
                    Some(answer) => QuestionKind::Choice { choices, answer },
                    None => {
                        problem(
                            table.answer.span(),
                            format!("question `{qid}`: the answer `{}` is not among its choices", table.answer.get_ref()),
                        );
                        QuestionKind::Choice { choices, answer: 0 }
                    }
                }
            }
            "text" => {
                if table.choices.is_some() {
                    problem(table.kind.span(), format!("question `{qid}`: a text question takes no `choices`"));
                }
                if table.answer.get_ref().trim().is_empty() {
                    problem(table.answer.span(), format!("question `{qid}`: the answer must not be empty"));
                }
                let mut accepted = vec![table.answer.get_ref().clone()];
                accepted.extend(table.accept);
                QuestionKind::Text { accepted }
            }
            other => {
                let hint = suggestion(other, QUESTION_TYPES.iter().copied());
                problem(
                    table.kind.span(),
                    format!("unknown question type `{other}`{hint}; types are {}", list(QUESTION_TYPES.iter().copied())),
                );
                QuestionKind::Text { accepted: vec![] }
            }
        };
        questions.push(Question {
            id: qid,
            prompt: table.prompt,
            kind,
            points: table.points.unwrap_or(1),
            hints: table.hints,
            explanation: table.explanation,
        });
    }

    match preset {
        Some(preset) if problems.is_empty() => Ok(Lab {
            id: lab.id.into_inner(),
            title: lab.title,
            summary: lab.summary,
            briefing: lab.briefing,
            level: lab.level.map(Spanned::into_inner),
            minutes: lab.minutes,
            stage: lab.stage.map(Spanned::into_inner),
            tags: lab.tags,
            cluster: ClusterConfig {
                driver: cluster.driver,
                cuda: cluster.cuda,
                persistence: cluster.persistence.unwrap_or(true),
                ..ClusterConfig::new(preset, hostnames)
            },
            questions,
        }),
        _ => Err(problems),
    }
}

fn check_one_of(
    value: &Option<Spanned<String>>,
    key: &str,
    allowed: &[&str],
    problem: &mut impl FnMut(std::ops::Range<usize>, String),
) {
    if let Some(value) = value {
        let text = value.get_ref();
        if !allowed.contains(&text.as_str()) {
            let hint = suggestion(text, allowed.iter().copied());
            problem(value.span(), format!("unknown {key} `{text}`{hint}; it is one of {}", list(allowed.iter().copied())));
        }
    }
}

fn is_hostname(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        && !name.starts_with('-')
}

fn list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    items.into_iter().map(|item| format!("`{item}`")).collect::<Vec<_>>().join(", ")
}

fn suggestion<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    diagnostic::did_you_mean(word, candidates).map_or(String::new(), |close| format!(" (did you mean `{close}`?)"))
}

/// Turns a TOML or shape error into a located diagnostic, adding a "did you
/// mean" to unknown keys.
fn parse_error(source: &str, error: &toml::de::Error) -> Diagnostic {
    let message = error.message().trim().to_string();
    let message = match unknown_field(&message) {
        Some((field, expected)) => {
            let hint = suggestion(&field, expected.iter().map(String::as_str));
            format!("unknown key `{field}`{hint}; expected one of {}", list(expected.iter().map(String::as_str)))
        }
        None => message,
    };
    Diagnostic::spanning(source, error.span(), message)
}

/// Reads serde's "unknown field `x`, expected one of `a`, `b`" message.
fn unknown_field(message: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (field, rest) = rest.split_once('`')?;
    let expected = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect();
    Some((field.to_string(), expected))
}
