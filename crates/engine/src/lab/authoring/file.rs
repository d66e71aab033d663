//! The lab file as written, read from TOML by hand.
//!
//! The TOML parser gives every key and value with its location; this module
//! turns that tree into the structures below, reporting every unknown key
//! (with a "did you mean"), missing key and wrong type at its line and
//! column. It is written out rather than derived with serde because serde's
//! generated code nearly doubled the size of the browser build.

use std::collections::BTreeMap;
use std::ops::Range;

pub use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue};

use super::diagnostic::did_you_mean;

/// A problem in the file: where, and what.
pub type Problem = (Range<usize>, String);

pub struct LabFile {
    pub lab: LabTable,
    pub cluster: ClusterTable,
    pub vars: BTreeMap<String, Spanned<VarTable>>,
    pub faults: Vec<Spanned<FaultTable>>,
    pub jobs: Vec<Spanned<JobTable>>,
    pub pods: Vec<Spanned<PodTable>>,
    pub questions: Vec<Spanned<QuestionTable>>,
    pub solution: Option<Spanned<SolutionTable>>,
    pub policy: Option<Spanned<PolicyTable>>,
}

/// `[policy]`: what guessing and hints cost.
#[derive(Clone, Debug, Default)]
pub struct PolicyTable {
    pub attempts: Option<Spanned<u32>>,
    pub number_attempts: Option<Spanned<u32>>,
    /// `"50%"`.
    pub retry_credit: Option<Spanned<String>>,
    /// `"25%"` of a question's points, or a whole number of points.
    pub hint_cost: Option<Spanned<Scalar>>,
}

/// A handoff field: a name alone (an instructor reviews it), or a table
/// with the facts it must state.
#[derive(Clone, Debug, Default)]
pub struct FieldTable {
    pub name: String,
    pub states: Vec<String>,
    pub numbers: Vec<(String, String)>,
    pub actions: Vec<String>,
    pub review: bool,
}

/// A `[[jobs]]` table: a training job and where it runs.
#[derive(Clone, Debug)]
pub struct JobTable {
    pub name: Spanned<String>,
    pub kind: Option<Spanned<String>>,
    /// Hostnames, or how many of the cluster's first nodes.
    pub nodes: Option<Spanned<Placement>>,
    pub gpus_per_node: Option<Spanned<i64>>,
    pub params: Spanned<String>,
    pub data: Option<Spanned<i64>>,
    pub tensor: Option<Spanned<i64>>,
    pub pipeline: Option<Spanned<i64>>,
    /// Required for training; a server has neither (its `seq_len` is
    /// optional: its `--max-model-len`).
    pub global_batch: Option<Spanned<i64>>,
    pub seq_len: Option<Spanned<i64>>,
    pub dataset: Option<String>,
    pub loader_workers: Option<Spanned<i64>>,
    pub checkpoint_every: Option<Spanned<i64>>,
    pub steps: Option<Spanned<i64>>,
    pub launch: Option<Spanned<String>>,
    pub start: Option<Spanned<String>>,
    /// A server's load: requests a second, tokens in and out, and its
    /// `--max-num-seqs`.
    pub request_rate: Option<Spanned<f64>>,
    pub prompt_tokens: Option<Spanned<i64>>,
    pub output_tokens: Option<Spanned<i64>>,
    pub max_num_seqs: Option<Spanned<i64>>,
}

/// A `[[pods]]` table: a workload pod and its manifest.
#[derive(Clone, Debug)]
pub struct PodTable {
    pub name: Spanned<String>,
    pub image: Spanned<String>,
    pub command: Vec<String>,
    pub gpus: Option<Spanned<i64>>,
    /// Pinned to a node (`nodeSelector: kubernetes.io/hostname`).
    pub node: Option<Spanned<String>>,
    pub restart: Option<Spanned<String>>,
    pub start: Option<Spanned<String>>,
}

#[derive(Clone, Debug)]
pub enum Placement {
    Hosts(Vec<String>),
    Count(i64),
}

/// `[solution]`: the command lines that find the evidence, in order, and
/// the answers it supports; `wrong` answers that must score as wrong.
pub struct SolutionTable {
    pub steps: Vec<Spanned<String>>,
    pub answers: Vec<(Spanned<String>, String)>,
    pub wrong: Vec<(Spanned<String>, String)>,
    /// `[[solution.alternatives]]`: other ways to work the lab that must
    /// earn full marks too.
    pub alternatives: Vec<Spanned<PathTable>>,
    /// `[[solution.mistakes]]`: plausible wrong ways that must score low.
    pub mistakes: Vec<Spanned<PathTable>>,
}

/// One way through the lab besides the solution: its steps and answers, and
/// for a mistake the most it may score.
pub struct PathTable {
    pub name: Option<String>,
    pub steps: Vec<Spanned<String>>,
    pub answers: Vec<(Spanned<String>, String)>,
    pub at_most: Option<Spanned<String>>,
}

pub struct LabTable {
    pub id: Spanned<String>,
    pub title: String,
    pub summary: String,
    pub briefing: Option<Spanned<String>>,
    pub level: Option<Spanned<String>>,
    pub minutes: Option<u32>,
    pub stage: Option<Spanned<String>>,
    pub tags: Vec<String>,
    pub requires: Vec<Spanned<String>>,
    pub pass: Option<Spanned<u32>>,
    pub exam_minutes: Option<Spanned<u32>>,
    /// Retired: `[policy] hint_cost` replaced it.
    pub hint_cost: Option<Range<usize>>,
}

pub struct ClusterTable {
    pub preset: Spanned<String>,
    pub nodes: Option<Vec<Spanned<String>>>,
    /// Any whole number as written (`compile` checks the bounds, and says them).
    pub count: Option<Spanned<i64>>,
    pub driver: Option<String>,
    pub cuda: Option<String>,
    pub nccl: Option<String>,
    pub dcgm: Option<String>,
    pub fabric: Option<Spanned<String>>,
    pub hcas: Option<Spanned<i64>>,
    pub persistence: Option<bool>,
    pub slurm: Option<Spanned<String>>,
    pub kubernetes: Option<Spanned<String>>,
    pub storage_gb_per_s: Option<Spanned<f64>>,
    pub slurm_on_kubernetes: Option<Spanned<bool>>,
}

#[derive(Clone, Debug)]
pub struct VarTable {
    pub one_of: Option<Vec<Scalar>>,
    /// `one_of` whose entries are tables: values that go together.
    pub records: Option<Vec<Vec<(String, String)>>>,
    /// Read past i64, so that a range over too many values says so.
    pub range: Option<Vec<i128>>,
}

/// A value that may be written as a number or as a string holding `{var}`.
#[derive(Clone, Debug, PartialEq)]
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
#[derive(Clone, Debug)]
pub enum Links {
    Count(Scalar),
    List(Vec<Scalar>),
}

#[derive(Clone, Debug)]
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
    pub watts: Option<Spanned<Scalar>>,
    pub links: Option<Spanned<Links>>,
    pub state: Option<Spanned<String>>,
    pub reason: Option<Spanned<String>>,
    pub installed: Option<Spanned<String>>,
    pub service: Option<Spanned<String>>,
    /// Hands-on actions that repair the fault (`repair = "reseat-cable"` or a list).
    pub repair: Option<Spanned<Vec<String>>>,
    pub at: Option<Spanned<String>>,
}

/// A question's `answer`: a string, a number or a list.
#[derive(Clone, Debug)]
pub enum AnswerValue {
    Number(f64),
    Text(String),
    List(Vec<String>),
}

#[derive(Clone, Debug)]
pub struct QuestionTable {
    pub id: Spanned<String>,
    pub kind: Spanned<String>,
    pub prompt: Spanned<String>,
    pub choices: Option<Spanned<Vec<String>>>,
    pub answer: Option<Spanned<AnswerValue>>,
    pub accept: Vec<String>,
    pub tolerance: Option<Spanned<String>>,
    pub unit: Option<String>,
    pub points: Option<u32>,
    pub hints: Vec<String>,
    pub explanation: String,
    pub entity: Option<Spanned<String>>,
    /// A `task`: the execution it asks for (the question's `program`,
    /// `options`, `operands`, `host`, `hosts`, `span`, `status`, `output`).
    pub run: Option<Spanned<RunTable>>,
    /// What must come first: a fact or another execution.
    pub after: Option<Spanned<AfterTable>>,
    /// Keys of the old text-matching tasks, reported with what replaced them.
    pub retired: Vec<(Range<usize>, &'static str)>,
    pub expect: Option<Spanned<Vec<ExpectTable>>>,
    pub fields: Vec<FieldTable>,
    pub rubric: Vec<String>,
    pub attempts: Option<Spanned<u32>>,
    pub retry: Option<bool>,
    pub feedback: Option<Spanned<Vec<(String, String)>>>,
    /// Why an answer that shows before the question is answered is no leak.
    pub leak_waiver: Option<Spanned<String>>,
}

/// One entry of a `state` question's `expect` (or a task's `after` fact).
#[derive(Clone, Debug, Default)]
pub struct ExpectTable {
    pub node: Option<String>,
    pub slurm: Option<String>,
    pub reason: Option<String>,
    pub in_service: Option<bool>,
    pub repaired: Option<bool>,
    pub gpu: Option<Scalar>,
    pub healthy: Option<bool>,
    pub diag: Option<Scalar>,
    pub hca: Option<String>,
    pub link_up: Option<bool>,
    pub rate: Option<Scalar>,
    pub pcie_full: Option<bool>,
    pub service: Option<String>,
    pub active: Option<bool>,
    pub fabric_manager: Option<String>,
    pub all_reduce_within: Option<String>,
    pub alert: Option<String>,
    pub pod: Option<String>,
    pub kubernetes: Option<String>,
    pub running: Option<bool>,
    pub job: Option<String>,
    pub step_time_within: Option<String>,
    pub lost_iterations_at_most: Option<Scalar>,
    pub restarted_within: Option<String>,
    pub context_at_least: Option<Scalar>,
    pub by: Option<String>,
}

/// The execution a `task` asks for.
#[derive(Clone, Debug, Default)]
pub struct RunTable {
    pub program: Option<Spanned<String>>,
    /// By name (a letter or a long name): `true` present, `false` absent,
    /// a string a pattern over its value.
    pub options: Vec<(Spanned<String>, OptionValue)>,
    pub operands: Vec<String>,
    pub host: Option<String>,
    pub hosts: Vec<String>,
    pub span: Option<Spanned<Scalar>>,
    pub status: Option<Spanned<String>>,
    pub output: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum OptionValue {
    Present(bool),
    Value(String),
}

/// A task's `after`: an execution (it has `program`) or a fact.
#[derive(Clone, Debug)]
pub enum AfterTable {
    Run(RunTable),
    Fact(ExpectTable),
}

pub(crate) const TOP_KEYS: &[&str] = &["lab", "cluster", "vars", "faults", "jobs", "pods", "questions", "solution", "policy"];
pub(crate) const POD_KEYS: &[&str] = &["name", "image", "command", "gpus", "node", "restart", "start"];
pub(crate) const LAB_KEYS: &[&str] = &["id", "title", "summary", "briefing", "level", "minutes", "stage", "tags", "requires", "pass", "exam_minutes"];
pub(crate) const POLICY_KEYS: &[&str] = &["attempts", "number_attempts", "retry_credit", "hint_cost"];
pub(crate) const FIELD_KEYS: &[&str] = &["name", "states", "numbers", "actions", "review"];
pub(crate) const CLUSTER_KEYS: &[&str] = &[
    "preset",
    "nodes",
    "count",
    "driver",
    "cuda",
    "nccl",
    "dcgm",
    "fabric",
    "hcas",
    "persistence",
    "slurm",
    "kubernetes",
    "storage_gb_per_s",
    "slurm_on_kubernetes",
];
pub(crate) const VAR_KEYS: &[&str] = &["one_of", "range"];
pub(crate) const FAULT_KEYS: &[&str] =
    &["kind", "node", "gpu", "hca", "xid", "count", "gen", "width", "rate", "mtu", "watts", "links", "state", "reason", "installed", "service", "repair", "at"];
pub(crate) const JOB_KEYS: &[&str] = &[
    "name",
    "kind",
    "nodes",
    "gpus_per_node",
    "params",
    "data",
    "tensor",
    "pipeline",
    "global_batch",
    "seq_len",
    "dataset",
    "loader_workers",
    "checkpoint_every",
    "steps",
    "launch",
    "start",
    "request_rate",
    "prompt_tokens",
    "output_tokens",
    "max_num_seqs",
];
pub(crate) const QUESTION_KEYS: &[&str] = &[
    "id",
    "type",
    "prompt",
    "choices",
    "answer",
    "accept",
    "tolerance",
    "unit",
    "points",
    "hints",
    "explanation",
    "entity",
    "program",
    "options",
    "operands",
    "host",
    "hosts",
    "span",
    "status",
    "output",
    "after",
    "expect",
    "fields",
    "rubric",
    "attempts",
    "retry",
    "feedback",
    "leak_waiver",
];
/// Keys that went, read only to say what replaced them.
pub(crate) const RETIRED_QUESTION_KEYS: &[&str] = &["command", "after_host"];
pub(crate) const RETIRED_LAB_KEYS: &[&str] = &["hint_cost"];
/// What a task's execution may say.
pub(crate) const RUN_KEYS: &[&str] = &["program", "options", "operands", "host", "hosts", "span", "status", "output"];
pub(crate) const EXPECT_KEYS: &[&str] = &[
    "node",
    "slurm",
    "reason",
    "in_service",
    "repaired",
    "gpu",
    "healthy",
    "diag",
    "hca",
    "link_up",
    "rate",
    "pcie_full",
    "service",
    "active",
    "fabric_manager",
    "all_reduce_within",
    "job",
    "step_time_within",
    "lost_iterations_at_most",
    "restarted_within",
    "context_at_least",
    "by",
    "alert",
    "pod",
    "kubernetes",
    "running",
];
pub(crate) const SOLUTION_KEYS: &[&str] = &["steps", "answers", "wrong", "alternatives", "mistakes"];
pub(crate) const ALTERNATIVE_KEYS: &[&str] = &["name", "steps", "answers"];
pub(crate) const MISTAKE_KEYS: &[&str] = &["name", "steps", "answers", "at_most"];

/// Parses a lab file. Syntax errors stop at the first; everything else is
/// collected, so an author sees every problem at once.
pub fn parse(source: &str) -> Result<LabFile, Vec<Problem>> {
    let root = DeTable::parse(source).map_err(|error| vec![syntax_error(source, error.span(), error.message().trim())])?;
    let mut problems = Vec::new();
    let top = Table { name: "the file", span: root.span(), entries: root.get_ref() };
    top.check_keys(TOP_KEYS, &mut problems);
    let lab = top.table("lab", &mut problems).map(|t| lab_table(&t, &mut problems));
    let cluster = top.table("cluster", &mut problems).map(|t| cluster_table(&t, &mut problems));
    let mut vars = BTreeMap::new();
    if let Some(table) = top.optional_table("vars", &mut problems) {
        for (key, value) in table.entries.iter() {
            let name = key.get_ref().to_string();
            match value.get_ref() {
                DeValue::Table(entries) => {
                    let var = Table { name: "a variable", span: value.span(), entries };
                    var.check_keys(VAR_KEYS, &mut problems);
                    let tables = var.get("one_of").is_some_and(
                        |v| matches!(v.get_ref(), DeValue::Array(items) if items.first().is_some_and(|i| matches!(i.get_ref(), DeValue::Table(_)))),
                    );
                    let (one_of, records) = if tables {
                        let record = |item: &Value| -> Result<Vec<(String, String)>, String> {
                            let DeValue::Table(entries) = item.get_ref() else { return Err("must all be tables, like the first".to_string()) };
                            entries
                                .iter()
                                .map(|(key, value)| {
                                    let name = key.get_ref().to_string();
                                    if !super::super::template::is_var_name(&name) {
                                        return Err(format!("key `{name}` must use only a-z, 0-9 and _"));
                                    }
                                    scalar(value).map(|s| (name, s.as_text()))
                                })
                                .collect()
                        };
                        (None, var.optional(&mut problems, "one_of", |v| list(v, record)))
                    } else {
                        (var.optional(&mut problems, "one_of", |v| list(v, scalar)), None)
                    };
                    let range = var.optional(&mut problems, "range", |v| list(v, wide_integer));
                    vars.insert(name, Spanned::new(value.span(), VarTable { one_of, records, range }));
                }
                _ => problems.push((value.span(), format!("variable `{name}` must be a table, e.g. {{ one_of = [...] }}"))),
            }
        }
    }
    let faults = top.tables("faults", &mut problems).iter().map(|t| Spanned::new(t.span.clone(), fault_table(t, &mut problems))).collect();
    let jobs = top.tables("jobs", &mut problems).iter().filter_map(|t| job_table(t, &mut problems).map(|job| Spanned::new(t.span.clone(), job))).collect();
    let pods = top.tables("pods", &mut problems).iter().filter_map(|t| pod_table(t, &mut problems).map(|pod| Spanned::new(t.span.clone(), pod))).collect();
    let questions =
        top.tables("questions", &mut problems).iter().filter_map(|t| question_table(t, &mut problems).map(|q| Spanned::new(t.span.clone(), q))).collect();
    let solution = top.optional_table("solution", &mut problems).map(|t| Spanned::new(t.span.clone(), solution_table(&t, &mut problems)));
    let policy = top.optional_table("policy", &mut problems).map(|t| {
        t.check_keys(POLICY_KEYS, &mut problems);
        let table = PolicyTable {
            attempts: t.optional(&mut problems, "attempts", |v| unsigned(v).map(|n| Spanned::new(v.span(), n))),
            number_attempts: t.optional(&mut problems, "number_attempts", |v| unsigned(v).map(|n| Spanned::new(v.span(), n))),
            retry_credit: t.optional(&mut problems, "retry_credit", spanned_string),
            hint_cost: t.optional(&mut problems, "hint_cost", spanned_scalar),
        };
        Spanned::new(t.span.clone(), table)
    });
    match (lab.flatten(), cluster.flatten()) {
        (Some(lab), Some(cluster)) if problems.is_empty() => Ok(LabFile { lab, cluster, vars, faults, jobs, pods, questions, solution, policy }),
        _ => Err(problems),
    }
}

/// How deep the TOML parser lets arrays and inline tables nest, and how many
/// parts a dotted key may have (the toml crate's recursion limit).
pub const MAX_TOML_DEPTH: usize = 80;

/// The parser's first error, located. Its recursion-limit errors are said
/// in the rule's words, at the value or key that nests too deep: the
/// parser points at the 81st bracket, or nowhere for a dotted key.
fn syntax_error(source: &str, span: Option<Range<usize>>, message: &str) -> Problem {
    let too_deep = matches!(message, "cannot recurse further; max recursion depth met" | "recursion limit");
    match too_deep.then(|| nesting(source)).flatten() {
        Some(Nesting::Value(span, depth)) => {
            (span, format!("this value nests arrays and inline tables {depth} deep; a lab file may nest them at most {MAX_TOML_DEPTH} deep"))
        }
        Some(Nesting::Key(span, parts)) => (span, format!("this key has {parts} dotted parts; a lab file's keys may have at most {MAX_TOML_DEPTH}")),
        None => (span.unwrap_or(0..0), message.to_string()),
    }
}

/// Where a file first nests past [`MAX_TOML_DEPTH`].
#[derive(Debug, PartialEq)]
enum Nesting {
    /// A value (from its first bracket to its end) and how deep it nests.
    Value(Range<usize>, usize),
    /// A key, in a table header or before `=`, and how many parts it has.
    Key(Range<usize>, usize),
}

/// Finds the first value or key that nests past [`MAX_TOML_DEPTH`], reading
/// only what matters for that: strings, comments, brackets, `=`, `,`, `.`
/// and line ends. One pass, no recursion.
fn nesting(source: &str) -> Option<Nesting> {
    let bytes = source.as_bytes();
    // The brackets open in the current value ('[' or '{'), and where the
    // outermost one opened.
    let mut open: Vec<u8> = Vec::new();
    let mut value_start = 0;
    let mut deepest = 0;
    // A key being read: where it started and its dots so far.
    let mut key: Option<(usize, usize)> = None;
    // Whether a key may start here (a line start at the top, a table header,
    // after `{` or `,` in an inline table).
    let mut expect_key = true;
    let mut in_header = false;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        match byte {
            b'#' => {
                while at < bytes.len() && bytes[at] != b'\n' {
                    at += 1;
                }
                continue;
            }
            b'"' | b'\'' => {
                let start = at;
                at = string_end(bytes, at);
                if expect_key && key.is_none() {
                    key = Some((start, 0));
                }
                continue;
            }
            b'\n' if open.is_empty() => {
                (expect_key, in_header, key) = (true, false, None);
            }
            b'[' if open.is_empty() && expect_key && key.is_none() && !in_header => in_header = true,
            b'[' if in_header && key.is_none() => {}
            b'[' | b'{' => {
                if open.is_empty() {
                    (value_start, deepest) = (at, 0);
                }
                open.push(byte);
                deepest = deepest.max(open.len());
                (expect_key, key) = (byte == b'{', None);
            }
            b']' if in_header => {
                if let Some((start, dots)) = key.take().filter(|(_, dots)| *dots >= MAX_TOML_DEPTH) {
                    return Some(Nesting::Key(start..trim_end(bytes, start, at), dots + 1));
                }
                expect_key = false;
            }
            b']' | b'}' => {
                open.pop();
                expect_key = false;
                if open.is_empty() && deepest > MAX_TOML_DEPTH {
                    return Some(Nesting::Value(value_start..at + 1, deepest));
                }
            }
            b'=' => {
                if let Some((start, dots)) = key.take().filter(|(_, dots)| *dots >= MAX_TOML_DEPTH) {
                    return Some(Nesting::Key(start..trim_end(bytes, start, at), dots + 1));
                }
                expect_key = false;
            }
            b',' => expect_key = open.last() == Some(&b'{'),
            b'.' => {
                if let Some((_, dots)) = &mut key {
                    *dots += 1;
                }
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ if expect_key && key.is_none() => key = Some((at, 0)),
            _ => {}
        }
        at += 1;
    }
    // A value still open at the end of the file.
    (deepest > MAX_TOML_DEPTH && !open.is_empty()).then_some(Nesting::Value(value_start..bytes.len(), deepest))
}

/// `end` moved back over the blanks before it, not past `start`.
fn trim_end(bytes: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && matches!(bytes[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    end
}

/// The offset just past the string starting at `at` (basic or literal,
/// one line or three quotes), or the end of the line or file when it does
/// not close.
fn string_end(bytes: &[u8], at: usize) -> usize {
    let quote = bytes[at];
    let triple = bytes.get(at..at + 3) == Some(&[quote; 3][..]);
    let mut at = at + if triple { 3 } else { 1 };
    while at < bytes.len() {
        match bytes[at] {
            b'\\' if quote == b'"' => at += 1,
            b'\n' if !triple => return at,
            byte if byte == quote && (!triple || bytes.get(at..at + 3) == Some(&[quote; 3][..])) => {
                return at + if triple { 3 } else { 1 };
            }
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// A TOML table with its location and a name for messages (`[lab]`).
struct Table<'a, 'i> {
    name: &'static str,
    span: Range<usize>,
    entries: &'a DeTable<'i>,
}

type Value<'i> = Spanned<DeValue<'i>>;

impl<'a, 'i> Table<'a, 'i> {
    fn get(&self, key: &str) -> Option<&'a Value<'i>> {
        self.entries.iter().find(|(k, _)| k.get_ref() == key).map(|(_, v)| v)
    }

    fn check_keys(&self, allowed: &[&str], problems: &mut Vec<Problem>) {
        self.check_keys_with(allowed, &[], problems);
    }

    /// As `check_keys`, letting `retired` keys through for their own message.
    fn check_keys_with(&self, allowed: &[&str], retired: &[&str], problems: &mut Vec<Problem>) {
        for (key, _) in self.entries.iter() {
            let name = key.get_ref();
            if !allowed.contains(&name.as_ref()) && !retired.contains(&name.as_ref()) {
                let hint = did_you_mean(name, allowed.iter().copied()).map_or(String::new(), |close| format!(" (did you mean `{close}`?)"));
                let expected: Vec<String> = allowed.iter().map(|k| format!("`{k}`")).collect();
                problems.push((key.span(), format!("unknown key `{name}`{hint}; expected one of {}", expected.join(", "))));
            }
        }
    }

    fn required<T>(&self, problems: &mut Vec<Problem>, key: &str, read: impl Fn(&Value<'i>) -> Result<T, String>) -> Option<T> {
        match self.get(key) {
            None => {
                // A misspelt key is already reported with this one as its suggestion.
                let misspelt = self.entries.iter().any(|(k, _)| k.get_ref() != key && did_you_mean(k.get_ref(), [key]).is_some());
                if !misspelt {
                    problems.push((self.span.clone(), format!("missing key `{key}` in {}", self.name)));
                }
                None
            }
            Some(value) => read(value).map_err(|message| problems.push((value.span(), format!("`{key}` {message}")))).ok(),
        }
    }

    fn optional<T>(&self, problems: &mut Vec<Problem>, key: &str, read: impl Fn(&Value<'i>) -> Result<T, String>) -> Option<T> {
        let value = self.get(key)?;
        read(value).map_err(|message| problems.push((value.span(), format!("`{key}` {message}")))).ok()
    }

    fn sub_table(&self, key: &str, value: &'a Value<'i>, problems: &mut Vec<Problem>) -> Option<Table<'a, 'i>> {
        match value.get_ref() {
            DeValue::Table(entries) => Some(Table { name: section_name(key), span: value.span(), entries }),
            _ => {
                problems.push((value.span(), format!("`{key}` must be a table: [{key}]")));
                None
            }
        }
    }

    fn table(&self, key: &str, problems: &mut Vec<Problem>) -> Option<Table<'a, 'i>> {
        match self.get(key) {
            None => {
                problems.push((self.span.clone(), format!("missing table [{key}]")));
                None
            }
            Some(value) => self.sub_table(key, value, problems),
        }
    }

    fn optional_table(&self, key: &str, problems: &mut Vec<Problem>) -> Option<Table<'a, 'i>> {
        self.get(key).and_then(|value| self.sub_table(key, value, problems))
    }

    /// `[[key]]` tables.
    fn tables(&self, key: &str, problems: &mut Vec<Problem>) -> Vec<Table<'a, 'i>> {
        let Some(value) = self.get(key) else {
            return Vec::new();
        };
        let DeValue::Array(items) = value.get_ref() else {
            problems.push((value.span(), format!("`{key}` must be a list of tables: [[{key}]]")));
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| match item.get_ref() {
                DeValue::Table(entries) => Some(Table { name: section_name(key), span: item.span(), entries }),
                _ => {
                    problems.push((item.span(), format!("each entry of `{key}` must be a table: [[{key}]]")));
                    None
                }
            })
            .collect()
    }
}

fn section_name(key: &str) -> &'static str {
    match key {
        "lab" => "[lab]",
        "cluster" => "[cluster]",
        "vars" => "[vars]",
        "faults" => "[[faults]]",
        "jobs" => "[[jobs]]",
        "pods" => "[[pods]]",
        "questions" => "[[questions]]",
        "solution" => "[solution]",
        "alternatives" => "[[solution.alternatives]]",
        "mistakes" => "[[solution.mistakes]]",
        "policy" => "[policy]",
        "expect" => "an `expect` entry",
        _ => "this table",
    }
}

fn describe(value: &DeValue) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date",
        DeValue::Array(_) => "a list",
        DeValue::Table(_) => "a table",
    }
}

fn string(value: &Value) -> Result<String, String> {
    match value.get_ref() {
        DeValue::String(text) => Ok(text.to_string()),
        other => Err(format!("must be a string, not {}", describe(other))),
    }
}

fn spanned_string(value: &Value) -> Result<Spanned<String>, String> {
    string(value).map(|text| Spanned::new(value.span(), text))
}

fn integer(value: &Value) -> Result<i64, String> {
    match value.get_ref() {
        DeValue::Integer(n) => i64::from_str_radix(n.as_str(), n.radix()).map_err(|_| format!("must be a whole number from {} to {}", i64::MIN, i64::MAX)),
        other => Err(format!("must be a whole number, not {}", describe(other))),
    }
}

/// A whole number past i64 too (saturating past i128, which no bound here
/// comes near), for bounds that are checked with their own message.
fn wide_integer(value: &Value) -> Result<i128, String> {
    match value.get_ref() {
        DeValue::Integer(n) => Ok(i128::from_str_radix(n.as_str(), n.radix()).unwrap_or(if n.as_str().starts_with('-') { i128::MIN } else { i128::MAX })),
        other => Err(format!("must be a whole number, not {}", describe(other))),
    }
}

/// A whole number whose bounds the caller checks and states: past i64 it
/// reads as i64's nearest bound, outside every such bound too.
fn spanned_whole(value: &Value) -> Result<Spanned<i64>, String> {
    let n = wide_integer(value)?;
    Ok(Spanned::new(value.span(), n.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64))
}

fn unsigned(value: &Value) -> Result<u32, String> {
    let n = integer(value)?;
    u32::try_from(n).map_err(|_| format!("must be a whole number from 0 to {}, not {n}", u32::MAX))
}

fn boolean(value: &Value) -> Result<bool, String> {
    match value.get_ref() {
        DeValue::Boolean(b) => Ok(*b),
        other => Err(format!("must be true or false, not {}", describe(other))),
    }
}

fn float(value: &Value) -> Result<f64, String> {
    match value.get_ref() {
        DeValue::Float(x) => x.as_str().parse::<f64>().map_err(|_| "is not a number".to_string()),
        DeValue::Integer(_) => integer(value).map(|n| n as f64),
        other => Err(format!("must be a number, not {}", describe(other))),
    }
}

fn scalar(value: &Value) -> Result<Scalar, String> {
    match value.get_ref() {
        DeValue::Integer(_) => integer(value).map(Scalar::Integer),
        DeValue::Float(_) => float(value).map(Scalar::Float),
        DeValue::Boolean(b) => Ok(Scalar::Bool(*b)),
        DeValue::String(text) => Ok(Scalar::Text(text.to_string())),
        other => Err(format!("must be a number or a string, not {}", describe(other))),
    }
}

fn spanned_scalar(value: &Value) -> Result<Spanned<Scalar>, String> {
    scalar(value).map(|s| Spanned::new(value.span(), s))
}

fn list<T>(value: &Value, item: impl Fn(&Value) -> Result<T, String>) -> Result<Vec<T>, String> {
    match value.get_ref() {
        DeValue::Array(items) => items.iter().map(|entry| item(entry).map_err(|m| format!("entries {m}"))).collect(),
        other => Err(format!("must be a list, not {}", describe(other))),
    }
}

fn lab_table(t: &Table, problems: &mut Vec<Problem>) -> Option<LabTable> {
    t.check_keys_with(LAB_KEYS, RETIRED_LAB_KEYS, problems);
    let id = t.required(problems, "id", spanned_string);
    let title = t.required(problems, "title", string);
    let summary = t.required(problems, "summary", string);
    let table = LabTable {
        id: id?,
        title: title?,
        summary: summary?,
        briefing: t.optional(problems, "briefing", spanned_string),
        level: t.optional(problems, "level", spanned_string),
        minutes: t.optional(problems, "minutes", unsigned),
        stage: t.optional(problems, "stage", spanned_string),
        tags: t.optional(problems, "tags", |v| list(v, string)).unwrap_or_default(),
        requires: t.optional(problems, "requires", |v| list(v, spanned_string)).unwrap_or_default(),
        pass: t.optional(problems, "pass", |v| unsigned(v).map(|n| Spanned::new(v.span(), n))),
        exam_minutes: t.optional(problems, "exam_minutes", |v| unsigned(v).map(|n| Spanned::new(v.span(), n))),
        hint_cost: t.get("hint_cost").map(|v| v.span()),
    };
    Some(table)
}

fn cluster_table(t: &Table, problems: &mut Vec<Problem>) -> Option<ClusterTable> {
    t.check_keys(CLUSTER_KEYS, problems);
    let preset = t.required(problems, "preset", spanned_string)?;
    Some(ClusterTable {
        preset,
        nodes: t.optional(problems, "nodes", |v| list(v, spanned_string)),
        count: t.optional(problems, "count", spanned_whole),
        driver: t.optional(problems, "driver", string),
        cuda: t.optional(problems, "cuda", string),
        nccl: t.optional(problems, "nccl", string),
        dcgm: t.optional(problems, "dcgm", string),
        fabric: t.optional(problems, "fabric", spanned_string),
        hcas: t.optional(problems, "hcas", spanned_whole),
        persistence: t.optional(problems, "persistence", boolean),
        slurm: t.optional(problems, "slurm", spanned_string),
        kubernetes: t.optional(problems, "kubernetes", spanned_string),
        storage_gb_per_s: t.optional(problems, "storage_gb_per_s", |v| float(v).map(|x| Spanned::new(v.span(), x))),
        slurm_on_kubernetes: t.optional(problems, "slurm_on_kubernetes", |v| boolean(v).map(|x| Spanned::new(v.span(), x))),
    })
}

fn job_table(t: &Table, problems: &mut Vec<Problem>) -> Option<JobTable> {
    t.check_keys(JOB_KEYS, problems);
    let name = t.required(problems, "name", spanned_string);
    let params = t.required(problems, "params", spanned_string);
    let kind = t.optional(problems, "kind", spanned_string);
    // A server takes no batch, and its sequence length is optional.
    // (`inference`, a likely slip, is told to be `serving` by the kind's check.)
    let serving = kind.as_ref().is_some_and(|k| matches!(k.get_ref().as_str(), "serving" | "inference"));
    let (global_batch, seq_len) = if serving {
        (t.optional(problems, "global_batch", spanned_whole), t.optional(problems, "seq_len", spanned_whole))
    } else {
        let global_batch = t.required(problems, "global_batch", spanned_whole);
        let seq_len = t.required(problems, "seq_len", spanned_whole);
        (Some(global_batch?), Some(seq_len?))
    };
    Some(JobTable {
        name: name?,
        kind,
        nodes: t.optional(problems, "nodes", |v| {
            let placement = match v.get_ref() {
                DeValue::Array(_) => Placement::Hosts(list(v, string)?),
                DeValue::Integer(_) => Placement::Count(*spanned_whole(v)?.get_ref()),
                other => return Err(format!("must be a list of hostnames or a number of nodes, not {}", describe(other))),
            };
            Ok(Spanned::new(v.span(), placement))
        }),
        gpus_per_node: t.optional(problems, "gpus_per_node", spanned_whole),
        params: params?,
        data: t.optional(problems, "data", spanned_whole),
        tensor: t.optional(problems, "tensor", spanned_whole),
        pipeline: t.optional(problems, "pipeline", spanned_whole),
        global_batch,
        seq_len,
        dataset: t.optional(problems, "dataset", string),
        loader_workers: t.optional(problems, "loader_workers", spanned_whole),
        checkpoint_every: t.optional(problems, "checkpoint_every", spanned_whole),
        steps: t.optional(problems, "steps", spanned_whole),
        launch: t.optional(problems, "launch", spanned_string),
        start: t.optional(problems, "start", spanned_string),
        request_rate: t.optional(problems, "request_rate", |v| float(v).map(|x| Spanned::new(v.span(), x))),
        prompt_tokens: t.optional(problems, "prompt_tokens", spanned_whole),
        output_tokens: t.optional(problems, "output_tokens", spanned_whole),
        max_num_seqs: t.optional(problems, "max_num_seqs", spanned_whole),
    })
}

fn pod_table(t: &Table, problems: &mut Vec<Problem>) -> Option<PodTable> {
    t.check_keys(POD_KEYS, problems);
    let name = t.required(problems, "name", spanned_string);
    let image = t.required(problems, "image", spanned_string);
    Some(PodTable {
        name: name?,
        image: image?,
        command: t.optional(problems, "command", |v| list(v, string)).unwrap_or_default(),
        gpus: t.optional(problems, "gpus", spanned_whole),
        node: t.optional(problems, "node", spanned_string),
        restart: t.optional(problems, "restart", spanned_string),
        start: t.optional(problems, "start", spanned_string),
    })
}

fn fault_table(t: &Table, problems: &mut Vec<Problem>) -> FaultTable {
    t.check_keys(FAULT_KEYS, problems);
    FaultTable {
        // A fault without a kind is reported here and by the kind check.
        kind: t.required(problems, "kind", spanned_string).unwrap_or_else(|| Spanned::new(t.span.clone(), String::new())),
        node: t.optional(problems, "node", spanned_string),
        gpu: t.optional(problems, "gpu", spanned_scalar),
        hca: t.optional(problems, "hca", spanned_string),
        xid: t.optional(problems, "xid", spanned_scalar),
        count: t.optional(problems, "count", spanned_scalar),
        gen: t.optional(problems, "gen", spanned_scalar),
        width: t.optional(problems, "width", spanned_scalar),
        rate: t.optional(problems, "rate", spanned_scalar),
        mtu: t.optional(problems, "mtu", spanned_scalar),
        watts: t.optional(problems, "watts", spanned_scalar),
        links: t.optional(problems, "links", |v| {
            let links = match v.get_ref() {
                DeValue::Array(_) => Links::List(list(v, scalar)?),
                _ => Links::Count(scalar(v)?),
            };
            Ok(Spanned::new(v.span(), links))
        }),
        state: t.optional(problems, "state", spanned_string),
        reason: t.optional(problems, "reason", spanned_string),
        installed: t.optional(problems, "installed", spanned_string),
        service: t.optional(problems, "service", spanned_string),
        repair: t.optional(problems, "repair", |v| {
            let actions = match v.get_ref() {
                DeValue::Array(_) => list(v, string)?,
                _ => vec![string(v)?],
            };
            Ok(Spanned::new(v.span(), actions))
        }),
        at: t.optional(problems, "at", spanned_string),
    }
}

fn answer(value: &Value) -> Result<Spanned<AnswerValue>, String> {
    let answer = match value.get_ref() {
        DeValue::String(text) => AnswerValue::Text(text.to_string()),
        DeValue::Integer(_) | DeValue::Float(_) => AnswerValue::Number(float(value)?),
        DeValue::Array(_) => AnswerValue::List(list(value, string)?),
        other => return Err(format!("must be a string, a number or a list of strings, not {}", describe(other))),
    };
    Ok(Spanned::new(value.span(), answer))
}

fn question_table(t: &Table, problems: &mut Vec<Problem>) -> Option<QuestionTable> {
    t.check_keys_with(QUESTION_KEYS, RETIRED_QUESTION_KEYS, problems);
    let id = t.required(problems, "id", spanned_string);
    let kind = t.required(problems, "type", spanned_string);
    let prompt = t.required(problems, "prompt", spanned_string);
    // Task, state and handoff questions are answered by what the trainee
    // does; the type check says so when one is given an `answer`.
    let answered = !matches!(kind.as_ref().map(|k| k.get_ref().as_str()), Some("task" | "state" | "handoff"));
    let answer = if answered { Some(t.required(problems, "answer", answer)?) } else { t.optional(problems, "answer", answer) };
    Some(QuestionTable {
        id: id?,
        kind: kind?,
        prompt: prompt?,
        choices: t.optional(problems, "choices", |v| list(v, string).map(|c| Spanned::new(v.span(), c))),
        answer,
        entity: t.optional(problems, "entity", spanned_string),
        run: RUN_KEYS.iter().any(|key| t.get(key).is_some()).then(|| Spanned::new(t.span.clone(), run_table(t, problems))),
        after: t.get("after").and_then(|value| match value.get_ref() {
            DeValue::Table(entries) => {
                let table = Table { name: "`after`", span: value.span(), entries };
                let after = if table.get("program").is_some() {
                    table.check_keys(RUN_KEYS, problems);
                    AfterTable::Run(run_table(&table, problems))
                } else {
                    table.check_keys(EXPECT_KEYS, problems);
                    AfterTable::Fact(expect_table(&table, problems))
                };
                Some(Spanned::new(value.span(), after))
            }
            other => {
                problems.push((
                    value.span(),
                    format!(
                        "`after` must be a table: a fact such as {{ repaired = true, node = \"gpu-001\" }} or an execution such as {{ program = \"dctech\", operands = [\"reseat-cable\"] }}, not {}",
                        describe(other)
                    ),
                ));
                None
            }
        }),
        retired: ["command", "after_host"].into_iter().filter_map(|key| t.get(key).map(|value| (value.span(), key))).collect(),
        expect: t.get("expect").and_then(|value| {
            let DeValue::Array(items) = value.get_ref() else {
                problems.push((value.span(), "`expect` must be a list of tables, e.g. [{ node = \"gpu-001\", slurm = \"drained\" }]".into()));
                return None;
            };
            let entries = items
                .iter()
                .filter_map(|item| match item.get_ref() {
                    DeValue::Table(entries) => Some(expect_table(&Table { name: section_name("expect"), span: item.span(), entries }, problems)),
                    _ => {
                        problems.push((item.span(), "each entry of `expect` must be a table".into()));
                        None
                    }
                })
                .collect();
            Some(Spanned::new(value.span(), entries))
        }),
        fields: t.optional(problems, "fields", |v| list(v, field_table)).unwrap_or_default(),
        rubric: t.optional(problems, "rubric", |v| list(v, string)).unwrap_or_default(),
        attempts: t.optional(problems, "attempts", |v| unsigned(v).map(|n| Spanned::new(v.span(), n))),
        retry: t.optional(problems, "retry", boolean),
        leak_waiver: t.optional(problems, "leak_waiver", spanned_string),
        feedback: t.optional(problems, "feedback", |v| string_map(v).map(|m| Spanned::new(v.span(), m.into_iter().map(|(k, v)| (k.into_inner(), v)).collect()))),
        accept: t.optional(problems, "accept", |v| list(v, string)).unwrap_or_default(),
        tolerance: t.optional(problems, "tolerance", spanned_string),
        unit: t.optional(problems, "unit", string),
        points: t.optional(problems, "points", unsigned),
        hints: t.optional(problems, "hints", |v| list(v, string)).unwrap_or_default(),
        explanation: t.optional(problems, "explanation", string).unwrap_or_default(),
    })
}

fn expect_table(t: &Table, problems: &mut Vec<Problem>) -> ExpectTable {
    t.check_keys(EXPECT_KEYS, problems);
    ExpectTable {
        node: t.optional(problems, "node", string),
        slurm: t.optional(problems, "slurm", string),
        reason: t.optional(problems, "reason", string),
        in_service: t.optional(problems, "in_service", boolean),
        repaired: t.optional(problems, "repaired", boolean),
        gpu: t.optional(problems, "gpu", scalar),
        healthy: t.optional(problems, "healthy", boolean),
        diag: t.optional(problems, "diag", scalar),
        hca: t.optional(problems, "hca", string),
        link_up: t.optional(problems, "link_up", boolean),
        rate: t.optional(problems, "rate", scalar),
        pcie_full: t.optional(problems, "pcie_full", boolean),
        service: t.optional(problems, "service", string),
        active: t.optional(problems, "active", boolean),
        fabric_manager: t.optional(problems, "fabric_manager", string),
        all_reduce_within: t.optional(problems, "all_reduce_within", string),
        job: t.optional(problems, "job", string),
        step_time_within: t.optional(problems, "step_time_within", string),
        lost_iterations_at_most: t.optional(problems, "lost_iterations_at_most", scalar),
        restarted_within: t.optional(problems, "restarted_within", string),
        context_at_least: t.optional(problems, "context_at_least", scalar),
        by: t.optional(problems, "by", string),
        alert: t.optional(problems, "alert", string),
        pod: t.optional(problems, "pod", string),
        kubernetes: t.optional(problems, "kubernetes", string),
        running: t.optional(problems, "running", boolean),
    }
}

/// A handoff field: `"Name"`, or `{ name = "...", states = [...], numbers
/// = [{ value = "{x}", tolerance = "10%" }], actions = [...], review = true }`.
fn field_table(value: &Value) -> Result<FieldTable, String> {
    let DeValue::Table(entries) = value.get_ref() else {
        return string(value).map(|name| FieldTable { name, review: true, ..FieldTable::default() });
    };
    let t = Table { name: "a handoff field", span: value.span(), entries };
    let mut problems = Vec::new();
    t.check_keys(FIELD_KEYS, &mut problems);
    let number = |v: &Value| -> Result<(String, String), String> {
        match v.get_ref() {
            DeValue::Table(entries) => {
                let n = Table { name: "a handoff number", span: v.span(), entries };
                let mut inner = Vec::new();
                n.check_keys(&["value", "tolerance"], &mut inner);
                let value = n.required(&mut inner, "value", |x| scalar(x).map(|s| s.as_text()));
                let tolerance = n.optional(&mut inner, "tolerance", string).unwrap_or_default();
                match (inner.first(), value) {
                    (Some((_, message)), _) => Err(message.clone()),
                    (None, Some(value)) => Ok((value, tolerance)),
                    (None, None) => Err("needs `value`".to_string()),
                }
            }
            _ => scalar(v).map(|s| (s.as_text(), String::new())),
        }
    };
    let field = FieldTable {
        name: t.required(&mut problems, "name", string).unwrap_or_default(),
        states: t.optional(&mut problems, "states", |v| list(v, |x| scalar(x).map(|s| s.as_text()))).unwrap_or_default(),
        numbers: t.optional(&mut problems, "numbers", |v| list(v, number)).unwrap_or_default(),
        actions: t.optional(&mut problems, "actions", |v| list(v, string)).unwrap_or_default(),
        review: t.optional(&mut problems, "review", boolean).unwrap_or(false),
    };
    match problems.first() {
        Some((_, message)) => Err(message.clone()),
        None => Ok(field),
    }
}

/// A task's execution, from the keys of `t` (a question or an `after`).
fn run_table(t: &Table, problems: &mut Vec<Problem>) -> RunTable {
    RunTable {
        program: t.optional(problems, "program", spanned_string),
        options: t
            .optional(problems, "options", |v| {
                let DeValue::Table(entries) = v.get_ref() else {
                    return Err(format!("must be a table of options, e.g. {{ id = \"3\", gpu-reset = true }}, not {}", describe(v.get_ref())));
                };
                entries
                    .iter()
                    .map(|(key, value)| {
                        let read = match value.get_ref() {
                            DeValue::Boolean(present) => OptionValue::Present(*present),
                            DeValue::Integer(_) | DeValue::Float(_) => OptionValue::Value(scalar(value)?.as_text()),
                            DeValue::String(text) => OptionValue::Value(text.to_string()),
                            other => return Err(format!("entry `{}` must be true, false or a pattern over its value, not {}", key.get_ref(), describe(other))),
                        };
                        Ok((Spanned::new(key.span(), key.get_ref().to_string()), read))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        operands: t.optional(problems, "operands", |v| list(v, |item| scalar(item).map(|s| s.as_text()))).unwrap_or_default(),
        host: t.optional(problems, "host", string),
        hosts: t.optional(problems, "hosts", |v| list(v, string)).unwrap_or_default(),
        span: t.optional(problems, "span", spanned_scalar),
        status: t.optional(problems, "status", spanned_string),
        output: t.optional(problems, "output", string),
    }
}

/// An inline table of strings (`{ key = "text", ... }`), keys located.
fn string_map(value: &Value) -> Result<Vec<(Spanned<String>, String)>, String> {
    let DeValue::Table(entries) = value.get_ref() else {
        return Err(format!("must be a table of strings, e.g. {{ question-id = \"answer\" }}, not {}", describe(value.get_ref())));
    };
    entries
        .iter()
        .map(|(key, v)| {
            let text = match v.get_ref() {
                DeValue::Integer(_) | DeValue::Float(_) => float(v).map(|n| n.to_string()),
                _ => string(v),
            };
            text.map(|text| (Spanned::new(key.span(), key.get_ref().to_string()), text)).map_err(|m| format!("entry `{}` {m}", key.get_ref()))
        })
        .collect()
}

fn solution_table(t: &Table, problems: &mut Vec<Problem>) -> SolutionTable {
    t.check_keys(SOLUTION_KEYS, problems);
    SolutionTable {
        steps: t.optional(problems, "steps", |v| list(v, spanned_string)).unwrap_or_default(),
        answers: t.optional(problems, "answers", string_map).unwrap_or_default(),
        wrong: t.optional(problems, "wrong", string_map).unwrap_or_default(),
        alternatives: t.tables("alternatives", problems).iter().map(|t| Spanned::new(t.span.clone(), path_table(t, ALTERNATIVE_KEYS, problems))).collect(),
        mistakes: t.tables("mistakes", problems).iter().map(|t| Spanned::new(t.span.clone(), path_table(t, MISTAKE_KEYS, problems))).collect(),
    }
}

fn path_table(t: &Table, keys: &[&str], problems: &mut Vec<Problem>) -> PathTable {
    t.check_keys(keys, problems);
    PathTable {
        name: t.required(problems, "name", string),
        steps: t.optional(problems, "steps", |v| list(v, spanned_string)).unwrap_or_default(),
        answers: t.optional(problems, "answers", string_map).unwrap_or_default(),
        at_most: t.optional(problems, "at_most", spanned_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(source: &str) -> Vec<String> {
        match parse(source) {
            Ok(_) => vec![],
            Err(found) => found.into_iter().map(|(_, message)| message).collect(),
        }
    }

    #[test]
    fn wrong_types_and_missing_keys_are_all_reported() {
        let found = problems("[lab]\nid = 3\ntitle = \"t\"\n[cluster]\npreset = \"hgx-h100\"\ncount = \"two\"\n[extra]\n");
        assert_eq!(
            found,
            [
                "unknown key `extra`; expected one of `lab`, `cluster`, `vars`, `faults`, `jobs`, `pods`, `questions`, `solution`, `policy`",
                "`id` must be a string, not an integer",
                "missing key `summary` in [lab]",
                "`count` must be a whole number, not a string",
            ]
        );
    }

    #[test]
    fn hex_and_underscored_integers_read_as_toml_says() {
        let file = parse("[lab]\nid = \"x\"\ntitle = \"t\"\nsummary = \"s\"\nminutes = 0x1_0\n[cluster]\npreset = \"p\"\ncount = 1_000\n").expect("valid");
        assert_eq!(file.lab.minutes, Some(16));
        assert_eq!(*file.cluster.count.expect("count").get_ref(), 1000);
    }
}

/// The `[lab]` table's `id` and `title` as the text says them now, read
/// line by line so that a file with an error elsewhere still names itself
/// (the author page's export and My labs follow what is typed, not the last
/// version that compiled). Only one-line basic strings are read.
pub fn named_in(source: &str) -> (Option<String>, Option<String>) {
    let (mut id, mut title) = (None, None);
    let mut in_lab = false;
    for line in source.lines().map(str::trim) {
        if line.starts_with('[') {
            in_lab = line.starts_with("[lab]");
            continue;
        }
        if !in_lab {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let value = value.trim();
        let Some(quoted) = value.strip_prefix('"') else { continue };
        let mut text = String::new();
        let mut chars = quoted.chars();
        let mut closed = false;
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    closed = true;
                    break;
                }
                '\\' => text.push(chars.next().unwrap_or('\\')),
                c => text.push(c),
            }
        }
        if !closed || text.trim().is_empty() {
            continue;
        }
        match key.trim() {
            "id" => id = id.or(Some(text)),
            "title" => title = title.or(Some(text)),
            _ => {}
        }
    }
    (id, title)
}

#[cfg(test)]
mod named_in {
    #[test]
    fn reads_the_lab_tables_id_and_title_despite_errors_elsewhere() {
        let source = "[lab]\nid = \"new-id\"\ntitle = \"A \\\"quoted\\\" title\"\nminutes = oops\n\n[cluster]\nid = \"not-this\"\n";
        assert_eq!(super::named_in(source), (Some("new-id".into()), Some("A \"quoted\" title".into())));
        assert_eq!(super::named_in("[cluster]\nid = \"x\"\n"), (None, None));
        assert_eq!(super::named_in("[lab]\nid = \"unclosed\n"), (None, None));
    }
}
