//! Faults and questions as a lab declares them: templates whose fields may
//! hold `{var}`s, resolved for one trainee's values into a
//! [`Fault`](crate::model::fault::Fault) and a [`Question`].
//!
//! Resolving names the field that failed, so that the authoring checks can
//! point at it in the lab file; the app, which gets checked labs, leaves out
//! what does not resolve.

use serde::{Deserialize, Serialize};

use super::doc::Doc;
use super::template::{self, Values};
use super::{Expect, Question, QuestionKind, Step, Tolerance, HANDOFF_FIELDS, PORT_DOWN_STATES};
use crate::model::ClusterConfig;
use crate::limits::MAX_NVLINKS;
use crate::model::fault::{Fault, PortDown};

/// Why a template did not resolve: which field, and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolveError {
    pub field: &'static str,
    pub message: String,
}

fn error(field: &'static str, message: impl Into<String>) -> ResolveError {
    ResolveError { field, message: message.into() }
}

/// `{var}` substitution in one field.
fn text(field: &'static str, value: &str, values: &Values) -> Result<String, ResolveError> {
    template::substitute(value, values).map_err(|name| error(field, format!("`{{{name}}}` is not defined in [vars]")))
}

fn doc(field: &'static str, value: &Doc, values: &Values) -> Result<Doc, ResolveError> {
    value.substitute(values).map_err(|name| error(field, format!("`{{{name}}}` is not defined in [vars]")))
}

fn whole<T: TryFrom<i64>>(field: &'static str, value: &str, values: &Values) -> Result<T, ResolveError> {
    let resolved = text(field, value, values)?;
    let n = resolved
        .trim()
        .parse::<i64>()
        .map_err(|_| error(field, format!("`{field}` must be a whole number, not `{resolved}`")))?;
    T::try_from(n).map_err(|_| error(field, format!("`{field}` is out of range: {n}")))
}

/// `links = 2` (that many links) or `links = [0, 5]` (those links).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum LinksSpec {
    Count(String),
    List(Vec<String>),
}

/// A `[[faults]]` table: its kind and fields, numbers written as text so
/// that any of them may be a `{var}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultSpec {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hca: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gen: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<LinksSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Hands-on actions that repair the fault.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repair: Vec<String>,
    /// When it strikes, after the lab's start (`10m`); before the lab when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

impl FaultSpec {
    pub fn resolve(&self, values: &Values) -> Result<Fault, ResolveError> {
        let kind = self.kind.as_str();
        let missing = |field: &'static str| error(field, format!("a `{kind}` fault needs `{field}`"));
        let required = |field: &'static str, value: &Option<String>| value.clone().ok_or_else(|| missing(field));
        let node = text("node", &required("node", &self.node)?, values)?;
        let gpu = || -> Result<u32, ResolveError> { whole("gpu", &required("gpu", &self.gpu)?, values) };
        let hca = || -> Result<String, ResolveError> { text("hca", &required("hca", &self.hca)?, values) };
        let count = || -> Result<u64, ResolveError> { whole("count", &required("count", &self.count)?, values) };
        let optional = |field: &'static str, value: &Option<String>| -> Result<Option<u32>, ResolveError> {
            value.as_ref().map(|v| whole(field, v, values)).transpose()
        };
        let optional_u8 = |field: &'static str, value: &Option<String>| -> Result<Option<u8>, ResolveError> {
            value.as_ref().map(|v| whole(field, v, values)).transpose()
        };
        let reason = |default: &str| -> Result<String, ResolveError> {
            self.reason.as_ref().map_or(Ok(default.to_string()), |r| text("reason", r, values))
        };
        Ok(match kind {
            "gpu-xid" => Fault::GpuXid { node, gpu: gpu()?, xid: whole("xid", &required("xid", &self.xid)?, values)? },
            "gpu-fallen-off-bus" => Fault::GpuFallenOffBus { node, gpu: gpu()? },
            "gpu-ecc-uncorrectable" => Fault::GpuEccUncorrectable { node, gpu: gpu()?, count: count()? },
            "gpu-row-remap-pending" => Fault::GpuRowRemapPending { node, gpu: gpu()? },
            "gpu-thermal-slowdown" => Fault::GpuThermalSlowdown { node, gpu: gpu()? },
            "gpu-power-brake" => Fault::GpuPowerBrake { node, gpu: gpu()? },
            "gpu-pcie-degraded" => Fault::GpuPcieDegraded {
                node,
                gpu: gpu()?,
                gen: optional_u8("gen", &self.gen)?,
                width: optional_u8("width", &self.width)?,
            },
            "nvlink-down" => {
                let links = match self.links.as_ref().ok_or_else(|| missing("links"))? {
                    LinksSpec::Count(n) => {
                        let n: u32 = whole("links", n, values)?;
                        if n > MAX_NVLINKS {
                            return Err(error("links", format!("`links` counts NVLinks: at most {MAX_NVLINKS}, not {n}")));
                        }
                        (0..n).collect()
                    }
                    LinksSpec::List(list) => list.iter().map(|link| whole("links", link, values)).collect::<Result<_, _>>()?,
                };
                Fault::NvlinkDown { node, gpu: gpu()?, links }
            }
            "fabric-manager-down" => Fault::FabricManagerDown { node },
            "hca-port-down" => {
                let state = match &self.state {
                    None => PortDown::Down,
                    Some(state) => match text("state", state, values)?.as_str() {
                        "Down" => PortDown::Down,
                        "Polling" => PortDown::Polling,
                        "Disabled" => PortDown::Disabled,
                        other => {
                            let allowed: Vec<String> = PORT_DOWN_STATES.iter().map(|s| format!("`{s}`")).collect();
                            return Err(error("state", format!("`state` must be one of {}, not `{other}`", allowed.join(", "))));
                        }
                    },
                };
                Fault::HcaPortDown { node, hca: hca()?, state }
            }
            "hca-link-degraded" => Fault::HcaLinkDegraded {
                node,
                hca: hca()?,
                rate: optional("rate", &self.rate)?,
                width: optional_u8("width", &self.width)?,
            },
            "hca-symbol-errors" => Fault::HcaSymbolErrors { node, hca: hca()?, count: count()? },
            "hca-mtu" => Fault::HcaMtu { node, hca: hca()?, mtu: whole("mtu", &required("mtu", &self.mtu)?, values)? },
            "hca-pcie-degraded" => Fault::HcaPcieDegraded {
                node,
                hca: hca()?,
                gen: optional_u8("gen", &self.gen)?,
                width: optional_u8("width", &self.width)?,
            },
            "node-down" => Fault::NodeDown { node, reason: reason("Not responding")? },
            "node-drain" => Fault::NodeDrain { node, reason: reason("maintenance")? },
            other => return Err(error("kind", format!("unknown fault kind `{other}`"))),
        })
    }
}

/// A question's `answer` as written: a string, a number or a list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AnswerSpec {
    Number(f64),
    Text(String),
    List(Vec<String>),
}

/// One of a `state` question's `expect` tables, as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExpectSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slurm: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repaired: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_manager: Option<String>,
    /// `"5%"`: all_reduce_perf within 5% of the healthy cluster's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_reduce_within: Option<String>,
    /// A job of the lab's that must run and make progress again...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// ...at a step time within this of the healthy cluster's (`"5%"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_time_within: Option<String>,
}

impl ExpectSpec {
    pub fn resolve(&self, values: &Values) -> Result<Expect, ResolveError> {
        let optional = |field: &'static str, value: &Option<String>| value.as_ref().map(|v| text(field, v, values)).transpose();
        let node = optional("expect", &self.node)?;
        let need_node = |what: &str| node.clone().ok_or_else(|| error("expect", format!("`{what}` in `expect` needs `node`")));
        if let Some(state) = &self.slurm {
            let state = text("expect", state, values)?.to_ascii_lowercase();
            if !super::SLURM_STATES.contains(&state.as_str()) {
                return Err(error("expect", format!("`slurm` must be one of {}, not `{state}`", super::SLURM_STATES.join(", "))));
            }
            return Ok(Expect::Slurm { node: need_node("slurm")?, state, reason: optional("expect", &self.reason)? });
        }
        if let Some(repaired) = self.repaired {
            if !repaired {
                return Err(error("expect", "`repaired` can only be `true`: expect the repair, not its absence"));
            }
            return Ok(Expect::Repaired { node });
        }
        if let Some(state) = &self.fabric_manager {
            let active = match text("expect", state, values)?.as_str() {
                "active" => true,
                "inactive" => false,
                other => return Err(error("expect", format!("`fabric_manager` must be `active` or `inactive`, not `{other}`"))),
            };
            return Ok(Expect::FabricManager { node: need_node("fabric_manager")?, active });
        }
        if let Some(within) = &self.all_reduce_within {
            return match parse_tolerance(&text("expect", within, values)?) {
                Some(Tolerance::Relative(fraction)) if fraction < 1.0 => Ok(Expect::AllReduce { within: fraction }),
                _ => Err(error("expect", format!("`all_reduce_within` must be a percentage below 100%, such as \"5%\", not `{within}`"))),
            };
        }
        if let Some(job) = &self.job {
            let within = match &self.step_time_within {
                None => None,
                Some(within) => match parse_tolerance(&text("expect", within, values)?) {
                    Some(Tolerance::Relative(fraction)) if fraction < 1.0 => Some(fraction),
                    _ => return Err(error("expect", format!("`step_time_within` must be a percentage below 100%, such as \"5%\", not `{within}`"))),
                },
            };
            return Ok(Expect::JobProgress { job: text("expect", job, values)?, within });
        }
        if self.step_time_within.is_some() {
            return Err(error("expect", "`step_time_within` in `expect` needs `job`"));
        }
        Err(error("expect", "each `expect` entry needs one of `slurm`, `repaired`, `fabric_manager`, `all_reduce_within`, `job`"))
    }
}

/// A `[[questions]]` table, with its Markdown parsed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionSpec {
    pub id: String,
    /// One of [`QUESTION_TYPES`](super::QUESTION_TYPES).
    pub kind: String,
    pub prompt: Doc,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// None for `task`, `state` and `handoff` questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerSpec>,
    /// `entity`: `node`, `gpu`, `hca` or `port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<String>,
    /// `task`: where and what the trainee runs, and what must come first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_host: Option<String>,
    /// `state`: what the cluster must show.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<ExpectSpec>,
    /// `handoff`: the record's fields and the rubric.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rubric: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retry: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feedback: Vec<(String, Doc)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accept: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    pub points: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<Doc>,
    #[serde(default, skip_serializing_if = "Doc::is_empty")]
    pub explanation: Doc,
}

/// `"5"` or `"10%"`.
pub fn parse_tolerance(text: &str) -> Option<Tolerance> {
    let text = text.trim();
    match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().ok().filter(|p| p.is_finite() && *p >= 0.0).map(|p| Tolerance::Relative(p / 100.0)),
        None => text.parse::<f64>().ok().filter(|t| t.is_finite() && *t >= 0.0).map(Tolerance::Absolute),
    }
}

/// The names an `entity` question picks from: nodes (`gpu-001`), GPUs
/// (`gpu-001 GPU 3`), HCAs (`gpu-001 mlx5_1`) or ports (`gpu-001 mlx5_1 port 1`).
pub fn entities(entity: &str, cluster: &ClusterConfig) -> Vec<String> {
    let hcas = cluster.hcas.unwrap_or(cluster.preset.hca_count());
    let gpus = cluster.preset.gpu_buses.len();
    let mut names = Vec::new();
    for node in &cluster.hostnames {
        match entity {
            "node" => names.push(node.clone()),
            "gpu" => names.extend((0..gpus).map(|gpu| format!("{node} GPU {gpu}"))),
            "hca" => names.extend((0..hcas).map(|hca| format!("{node} mlx5_{hca}"))),
            "port" => names.extend((0..hcas).map(|hca| format!("{node} mlx5_{hca} port 1"))),
            _ => {}
        }
    }
    names
}

impl QuestionSpec {
    pub fn resolve(&self, values: &Values, cluster: &ClusterConfig, hint_cost: u32) -> Result<Question, ResolveError> {
        let qid = &self.id;
        let sub = |text: &str| self::text("answer", text, values);
        let choices = self.choices.iter().map(|choice| text("choices", choice, values)).collect::<Result<Vec<_>, _>>()?;
        let position = |choices: &[String], answer: &str| {
            choices
                .iter()
                .position(|choice| choice == answer)
                .ok_or_else(|| error("answer", format!("question `{qid}`: the answer `{answer}` is not among its choices")))
        };
        let answer = || self.answer.as_ref().ok_or_else(|| error("answer", format!("question `{qid}`: a {} question needs `answer`", self.kind)));
        let answer_text = |expected: &str| -> Result<String, ResolveError> {
            match answer()? {
                AnswerSpec::Text(text) => sub(text),
                AnswerSpec::Number(n) => Ok(n.to_string()),
                AnswerSpec::List(_) => Err(error("answer", format!("question `{qid}`: the answer must be {expected}, not a list"))),
            }
        };
        let answer_list = || -> Result<Vec<String>, ResolveError> {
            match answer()? {
                AnswerSpec::List(items) => items.iter().map(|item| sub(item)).collect(),
                _ => Err(error("answer", format!("question `{qid}`: the answer must be a list, e.g. [\"a\", \"b\"]"))),
            }
        };
        let optional = |field: &'static str, value: &Option<String>| value.as_ref().map(|v| text(field, v, values)).transpose();
        let kind = match self.kind.as_str() {
            "choice" => QuestionKind::Choice { answer: position(&choices, &answer_text("one of the choices")?)?, choices },
            "multi" => {
                let mut answers = answer_list()?.iter().map(|a| position(&choices, a)).collect::<Result<Vec<_>, _>>()?;
                crate::sort::sort(&mut answers);
                answers.dedup();
                QuestionKind::Multi { choices, answers }
            }
            "text" => {
                let mut accepted = vec![answer_text("a string")?];
                for alternative in &self.accept {
                    accepted.push(text("accept", alternative, values)?);
                }
                QuestionKind::Text { accepted }
            }
            "number" => {
                let written = answer_text("a number")?;
                let answer = written
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite())
                    .ok_or_else(|| error("answer", format!("question `{qid}`: the answer must be a number, not `{written}`")))?;
                let tolerance = match &self.tolerance {
                    None => Tolerance::Absolute(0.0),
                    Some(tolerance) => parse_tolerance(tolerance).ok_or_else(|| {
                        error(
                            "tolerance",
                            format!("question `{qid}`: tolerance `{tolerance}` must be a number (\"5\") or a percentage (\"10%\")"),
                        )
                    })?,
                };
                QuestionKind::Number { answer, tolerance, unit: self.unit.clone() }
            }
            "order" => QuestionKind::Order { items: answer_list()? },
            "entity" => {
                let entity = self.entity.clone().ok_or_else(|| error("entity", format!("question `{qid}`: an entity question needs `entity`")))?;
                let choices = entities(&entity, cluster);
                if choices.is_empty() {
                    return Err(error("entity", format!("question `{qid}`: `entity` must be one of {}", super::ENTITIES.join(", "))));
                }
                QuestionKind::Entity { answer: position(&choices, &answer_text("a string")?)?, entity, choices }
            }
            "task" => {
                let command = self.command.as_ref().ok_or_else(|| error("command", format!("question `{qid}`: a task question needs `command`")))?;
                let ran = Step { host: optional("host", &self.host)?, command: text("command", command, values)? };
                let after = match &self.after {
                    Some(after) => Some(Step { host: optional("after_host", &self.after_host)?, command: text("after", after, values)? }),
                    None => None,
                };
                QuestionKind::Task { ran, after }
            }
            "state" => {
                if self.expect.is_empty() {
                    return Err(error("expect", format!("question `{qid}`: a state question needs `expect`")));
                }
                QuestionKind::State { expect: self.expect.iter().map(|e| e.resolve(values)).collect::<Result<_, _>>()? }
            }
            "handoff" => QuestionKind::Handoff {
                fields: if self.fields.is_empty() {
                    HANDOFF_FIELDS.iter().map(|f| f.to_string()).collect()
                } else {
                    self.fields.iter().map(|f| text("fields", f, values)).collect::<Result<_, _>>()?
                },
                rubric: self.rubric.iter().map(|r| text("rubric", r, values)).collect::<Result<_, _>>()?,
            },
            other => return Err(error("type", format!("unknown question type `{other}`"))),
        };
        let feedback = self
            .feedback
            .iter()
            .map(|(response, why)| Ok((text("feedback", response, values)?, doc("feedback", why, values)?)))
            .collect::<Result<_, ResolveError>>()?;
        Ok(Question {
            id: qid.clone(),
            prompt: doc("prompt", &self.prompt, values)?,
            kind,
            points: self.points,
            hints: self.hints.iter().map(|hint| doc("hints", hint, values)).collect::<Result<_, _>>()?,
            hint_cost,
            explanation: doc("explanation", &self.explanation, values)?,
            attempts: self.attempts,
            retry: self.retry,
            feedback,
        })
    }
}
