//! The lab file as written: serde structures mirroring the TOML. Strict:
//! `deny_unknown_fields` turns typos into errors, and `Spanned` keeps the
//! location of every value a later check may complain about.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabFile {
    pub lab: LabTable,
    pub cluster: ClusterTable,
    #[serde(default)]
    pub vars: BTreeMap<String, Spanned<VarTable>>,
    #[serde(default)]
    pub faults: Vec<Spanned<FaultTable>>,
    #[serde(default)]
    pub questions: Vec<Spanned<QuestionTable>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabTable {
    pub id: Spanned<String>,
    pub title: String,
    pub summary: String,
    pub briefing: Option<Spanned<String>>,
    pub level: Option<Spanned<String>>,
    pub minutes: Option<u32>,
    pub stage: Option<Spanned<String>>,
    #[serde(default)]
    pub tags: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterTable {
    pub preset: Spanned<String>,
    pub nodes: Option<Vec<Spanned<String>>>,
    pub count: Option<Spanned<u32>>,
    pub driver: Option<String>,
    pub cuda: Option<String>,
    pub nccl: Option<String>,
    pub dcgm: Option<String>,
    pub fabric: Option<Spanned<String>>,
    pub hcas: Option<Spanned<u32>>,
    pub persistence: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VarTable {
    pub one_of: Option<Vec<Scalar>>,
    pub range: Option<Vec<i64>>,
}

/// A value that may be written as a number or as a string holding `{var}`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Scalar {
    Integer(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Scalar {
    pub fn as_text(&self) -> String {
        match self {
            Scalar::Integer(n) => n.to_string(),
            Scalar::Float(x) => x.to_string(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Text(text) => text.clone(),
        }
    }
}

/// `links = 2` (that many links) or `links = [0, 5]` (those links).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Links {
    Count(Scalar),
    List(Vec<Scalar>),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultTable {
    pub kind: Spanned<String>,
    pub node: Option<Spanned<String>>,
    pub gpu: Option<Spanned<Scalar>>,
    pub hca: Option<Spanned<String>>,
    pub xid: Option<Spanned<Scalar>>,
    pub count: Option<Spanned<Scalar>>,
    pub gen: Option<Spanned<Scalar>>,
    pub width: Option<Spanned<Scalar>>,
    pub rate: Option<Spanned<Scalar>>,
    pub mtu: Option<Spanned<Scalar>>,
    pub links: Option<Spanned<Links>>,
    pub state: Option<Spanned<String>>,
    pub reason: Option<Spanned<String>>,
}

/// A question's `answer`: a string, a number or a list.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum AnswerValue {
    Number(f64),
    Text(String),
    List(Vec<String>),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuestionTable {
    pub id: Spanned<String>,
    #[serde(rename = "type")]
    pub kind: Spanned<String>,
    pub prompt: Spanned<String>,
    pub choices: Option<Spanned<Vec<String>>>,
    pub answer: Spanned<AnswerValue>,
    #[serde(default)]
    pub accept: Vec<String>,
    pub tolerance: Option<Spanned<String>>,
    pub unit: Option<String>,
    pub points: Option<u32>,
    #[serde(default)]
    pub hints: Vec<String>,
    #[serde(default)]
    pub explanation: String,
}
