//! Lab files: the TOML format instructors write, validated into a [`Lab`].
//!
//! [`load`] parses strictly (unknown keys are errors, with a "did you mean"),
//! checks every variant of the lab (each fault names hardware the cluster has,
//! each answer is among its choices, every `{var}` is defined) and reports
//! each problem at a line and column. [`check::deep`] adds the slower checks
//! (every fault observable, every reference answer graded correct). The
//! format is documented in docs/authoring.md; its names are a contract.

pub mod check;
pub mod codegen;
pub mod markdown;
pub mod diagnostic;
pub mod file;
pub mod schema;
pub mod template;

use std::collections::BTreeSet;
use std::ops::Range;


use crate::model::fabric::LinkLayer;
use crate::model::change::{RepairTarget, REPAIR_ACTIONS};
use crate::model::fault::{self, Fault, PortDown};
use crate::model::{preset, Cluster, ClusterConfig};
use crate::rng::Rng;
pub use diagnostic::Diagnostic;
use file::{AnswerValue, FaultTable, Links, Problem, QuestionTable, Scalar, Spanned};
use template::{Values, Var, VarSpec};

/// A validated lab: its text, its cluster, and the templates its variants
/// are made from.
#[derive(Clone, Debug)]
pub struct Lab {
    pub id: String,
    pub title: String,
    pub summary: String,
    /// Markdown, with `{var}`s still in it (see [`Variant::briefing`]).
    pub briefing: String,
    briefing_span: Range<usize>,
    pub level: Option<String>,
    pub minutes: Option<u32>,
    pub stage: Option<String>,
    pub tags: Vec<String>,
    pub cluster: ClusterConfig,
    pub vars: Vec<Var>,
    faults: Vec<Spanned<FaultTable>>,
    questions: Vec<Spanned<QuestionTable>>,
}

/// One trainee's lab: the variables' values, the faults and questions with
/// those values substituted.
#[derive(Clone, Debug)]
pub struct Variant {
    pub seed: u64,
    pub values: Values,
    /// The briefing with the variables' values substituted.
    pub briefing: String,
    pub faults: Vec<Fault>,
    /// For each fault, the hands-on actions that repair it.
    pub repairs: Vec<Vec<String>>,
    pub questions: Vec<Question>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    pub id: String,
    /// Markdown.
    pub prompt: String,
    pub kind: QuestionKind,
    pub points: u32,
    pub hints: Vec<String>,
    /// Markdown shown after answering.
    pub explanation: String,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    Absolute(f64),
    /// A fraction of the reference value (`"10%"` is 0.1).
    Relative(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum QuestionKind {
    /// One of `choices`; `answer` indexes the right one.
    Choice { choices: Vec<String>, answer: usize },
    /// Several of `choices`; all of `answers` and nothing else.
    Multi { choices: Vec<String>, answers: Vec<usize> },
    /// Free text; any of `accepted` is right (case and spacing ignored).
    Text { accepted: Vec<String> },
    /// A number within `tolerance` of `answer`, in `unit`.
    Number { answer: f64, tolerance: Tolerance, unit: Option<String> },
    /// The items, in the right order (shown shuffled).
    Order { items: Vec<String> },
}

pub const LEVELS: &[&str] = &["beginner", "intermediate", "advanced"];
pub const STAGES: &[&str] = &["understand", "prepare", "validate", "operate", "diagnose", "handover"];
pub const QUESTION_TYPES: &[&str] = &["choice", "multi", "text", "number", "order"];
pub const FABRICS: &[&str] = &["infiniband", "roce"];
pub const PORT_DOWN_STATES: &[&str] = &["Down", "Polling", "Disabled"];

/// Each fault kind, the fields it needs and the fields it may take.
pub const FAULT_KINDS: &[(&str, &[&str], &[&str])] = &[
    ("gpu-xid", &["node", "gpu", "xid"], &[]),
    ("gpu-fallen-off-bus", &["node", "gpu"], &[]),
    ("gpu-ecc-uncorrectable", &["node", "gpu", "count"], &[]),
    ("gpu-row-remap-pending", &["node", "gpu"], &[]),
    ("gpu-thermal-slowdown", &["node", "gpu"], &[]),
    ("gpu-power-brake", &["node", "gpu"], &[]),
    ("gpu-pcie-degraded", &["node", "gpu"], &["gen", "width"]),
    ("nvlink-down", &["node", "gpu", "links"], &[]),
    ("fabric-manager-down", &["node"], &[]),
    ("hca-port-down", &["node", "hca"], &["state"]),
    ("hca-link-degraded", &["node", "hca"], &["rate", "width"]),
    ("hca-symbol-errors", &["node", "hca", "count"], &[]),
    ("hca-mtu", &["node", "hca", "mtu"], &[]),
    ("hca-pcie-degraded", &["node", "hca"], &["gen", "width"]),
    ("node-down", &["node"], &["reason"]),
    ("node-drain", &["node"], &["reason"]),
];

/// The most nodes a lab may declare.
pub const MAX_NODES: u32 = 4096;
/// How many variants `load` checks at most (all of them when there are fewer).
pub const VARIANTS_CHECKED: u64 = 64;


impl Lab {
    /// The variables' values for a trainee seed.
    pub fn values(&self, seed: u64) -> Values {
        template::pick(&self.vars, &self.id, seed)
    }

    /// One trainee's lab. Parts that cannot be built are left out; `load`
    /// has already rejected labs where that can happen.
    pub fn variant(&self, seed: u64) -> Variant {
        let values = self.values(seed);
        let (faults, questions, _) = self.resolve(&values);
        let briefing = template::substitute(&self.briefing, &values).unwrap_or_else(|_| self.briefing.clone());
        // Faults resolve one for one with their tables in a checked lab.
        let repairs = self
            .faults
            .iter()
            .map(|table| table.get_ref().repair.as_ref().map(|r| r.get_ref().clone()).unwrap_or_default())
            .collect();
        Variant { seed, values, briefing, faults, repairs, questions }
    }

    /// The cluster a trainee with this seed starts from: built, with the
    /// variant's faults applied.
    pub fn instantiate(&self, seed: u64) -> Cluster {
        let variant = self.variant(seed);
        let mut cluster = self.cluster_for(&[], seed);
        for (fault, repairs) in variant.faults.into_iter().zip(variant.repairs) {
            // Faults were checked against this cluster by `load`.
            let _ = cluster.inject(fault, repairs);
        }
        cluster
    }

    /// The cluster with exactly these faults applied.
    pub fn cluster_for(&self, faults: &[Fault], seed: u64) -> Cluster {
        let world_seed = Rng::derive(seed, &["lab", &self.id]).next_u64();
        let mut cluster = Cluster::build(&self.cluster, world_seed);
        for fault in faults {
            // Faults were checked against this cluster by `load`.
            let _ = cluster.inject(fault.clone(), Vec::new());
        }
        cluster
    }

    pub fn first_host(&self) -> &str {
        self.cluster.hostnames.first().map_or("", String::as_str)
    }

    pub fn points_possible(&self) -> u32 {
        self.questions.iter().map(|q| q.get_ref().points.unwrap_or(1)).sum()
    }

    /// Substitutes `values` into the faults and questions.
    fn resolve(&self, values: &Values) -> (Vec<Fault>, Vec<Question>, Vec<Problem>) {
        let mut problems = Vec::new();
        let faults = self
            .faults
            .iter()
            .filter_map(|fault| build_fault(fault, values).map_err(|p| problems.push(p)).ok())
            .collect();
        let questions = self
            .questions
            .iter()
            .filter_map(|question| build_question(question.get_ref(), values).map_err(|p| problems.push(p)).ok())
            .collect();
        (faults, questions, problems)
    }

    /// Every problem any checked variant has, at its location in the file.
    /// Faults are tried on the cluster only when it is known to be right.
    fn variant_problems(&self, apply_faults: bool) -> Vec<Problem> {
        let mut problems = Vec::new();
        // Faults change only their own node: build the cluster once and try
        // each variant's faults on a copy of the nodes they name.
        let world = apply_faults.then(|| Cluster::build(&self.cluster, 0));
        for values in template::all_values(&self.vars, &self.id, VARIANTS_CHECKED) {
            let (faults, _, mut found) = self.resolve(&values);
            if let Err(problem) = plain_text(&self.briefing, self.briefing_span.clone(), &values) {
                found.push(problem);
            }
            if let Some(world) = &world {
                let named: Vec<&str> = faults.iter().map(Fault::node).collect();
                let mut cluster = world.subset(&named);
                for (fault, table) in faults.iter().zip(&self.faults) {
                    let applied = if world.node(fault.node()).is_none() {
                        Err(fault::no_such_node(fault.node(), &self.cluster.hostnames))
                    } else {
                        fault.apply(&mut cluster)
                    };
                    if let Err(error) = applied {
                        let span = present_fields(table.get_ref())
                            .into_iter()
                            .find(|(name, _)| *name == error.field)
                            .map_or(table.span(), |(_, span)| span);
                        found.push((span, format!("fault `{}`: {}{}", fault.kind(), error.message, describe(&values))));
                    }
                }
            }
            problems.extend(found);
        }
        problems
    }
}

/// ` (with bad_node = "gpu-002")`, to say which variant failed.
fn describe(values: &Values) -> String {
    if values.is_empty() {
        return String::new();
    }
    let pairs: Vec<String> = values.iter().map(|(k, v)| format!("{k} = \"{v}\"")).collect();
    format!(" (with {})", pairs.join(", "))
}

fn text(value: &Spanned<String>, values: &Values) -> Result<String, Problem> {
    plain_text(value.get_ref(), value.span(), values)
}

fn plain_text(value: &str, span: Range<usize>, values: &Values) -> Result<String, Problem> {
    template::substitute(value, values).map_err(|name| (span, format!("`{{{name}}}` is not defined in [vars]")))
}

fn integer(value: &Spanned<Scalar>, field: &str, values: &Values) -> Result<i64, Problem> {
    let resolved = plain_text(&value.get_ref().as_text(), value.span(), values)?;
    resolved
        .trim()
        .parse::<i64>()
        .map_err(|_| (value.span(), format!("`{field}` must be a whole number, not `{resolved}`")))
}

fn unsigned<T: TryFrom<i64>>(value: &Spanned<Scalar>, field: &str, values: &Values) -> Result<T, Problem> {
    let n = integer(value, field, values)?;
    T::try_from(n).map_err(|_| (value.span(), format!("`{field}` is out of range: {n}")))
}

fn optional<T>(
    value: &Option<Spanned<Scalar>>,
    field: &str,
    values: &Values,
    convert: fn(&Spanned<Scalar>, &str, &Values) -> Result<T, Problem>,
) -> Result<Option<T>, Problem> {
    value.as_ref().map(|v| convert(v, field, values)).transpose()
}

fn build_fault(table: &Spanned<FaultTable>, values: &Values) -> Result<Fault, Problem> {
    let span = table.span();
    let fault = table.get_ref();
    let missing = |field: &str| (span.clone(), format!("a `{}` fault needs `{field}`", fault.kind.get_ref()));
    let node = text(fault.node.as_ref().ok_or_else(|| missing("node"))?, values)?;
    let gpu = || -> Result<u32, Problem> { unsigned(fault.gpu.as_ref().ok_or_else(|| missing("gpu"))?, "gpu", values) };
    let hca = || -> Result<String, Problem> { text(fault.hca.as_ref().ok_or_else(|| missing("hca"))?, values) };
    let count = || -> Result<u64, Problem> { unsigned(fault.count.as_ref().ok_or_else(|| missing("count"))?, "count", values) };
    let reason = |default: &str| -> Result<String, Problem> {
        fault.reason.as_ref().map_or(Ok(default.to_string()), |r| text(r, values))
    };
    Ok(match fault.kind.get_ref().as_str() {
        "gpu-xid" => Fault::GpuXid {
            node,
            gpu: gpu()?,
            xid: unsigned(fault.xid.as_ref().ok_or_else(|| missing("xid"))?, "xid", values)?,
        },
        "gpu-fallen-off-bus" => Fault::GpuFallenOffBus { node, gpu: gpu()? },
        "gpu-ecc-uncorrectable" => Fault::GpuEccUncorrectable { node, gpu: gpu()?, count: count()? },
        "gpu-row-remap-pending" => Fault::GpuRowRemapPending { node, gpu: gpu()? },
        "gpu-thermal-slowdown" => Fault::GpuThermalSlowdown { node, gpu: gpu()? },
        "gpu-power-brake" => Fault::GpuPowerBrake { node, gpu: gpu()? },
        "gpu-pcie-degraded" => Fault::GpuPcieDegraded {
            node,
            gpu: gpu()?,
            gen: optional(&fault.gen, "gen", values, unsigned)?,
            width: optional(&fault.width, "width", values, unsigned)?,
        },
        "nvlink-down" => {
            let links_field = fault.links.as_ref().ok_or_else(|| missing("links"))?;
            let links = match links_field.get_ref() {
                Links::Count(n) => {
                    let n: u32 = unsigned(&Spanned::new(links_field.span(), n.clone()), "links", values)?;
                    (0..n).collect()
                }
                Links::List(list) => list
                    .iter()
                    .map(|link| unsigned(&Spanned::new(links_field.span(), link.clone()), "links", values))
                    .collect::<Result<Vec<u32>, Problem>>()?,
            };
            Fault::NvlinkDown { node, gpu: gpu()?, links }
        }
        "fabric-manager-down" => Fault::FabricManagerDown { node },
        "hca-port-down" => {
            let state = match &fault.state {
                None => PortDown::Down,
                Some(state) => match text(state, values)?.as_str() {
                    "Down" => PortDown::Down,
                    "Polling" => PortDown::Polling,
                    "Disabled" => PortDown::Disabled,
                    other => {
                        return Err((
                            state.span(),
                            format!("`state` must be one of {}, not `{other}`", list(PORT_DOWN_STATES.iter().copied())),
                        ))
                    }
                },
            };
            Fault::HcaPortDown { node, hca: hca()?, state }
        }
        "hca-link-degraded" => Fault::HcaLinkDegraded {
            node,
            hca: hca()?,
            rate: optional(&fault.rate, "rate", values, unsigned)?,
            width: optional(&fault.width, "width", values, unsigned)?,
        },
        "hca-symbol-errors" => Fault::HcaSymbolErrors { node, hca: hca()?, count: count()? },
        "hca-mtu" => Fault::HcaMtu {
            node,
            hca: hca()?,
            mtu: unsigned(fault.mtu.as_ref().ok_or_else(|| missing("mtu"))?, "mtu", values)?,
        },
        "hca-pcie-degraded" => Fault::HcaPcieDegraded {
            node,
            hca: hca()?,
            gen: optional(&fault.gen, "gen", values, unsigned)?,
            width: optional(&fault.width, "width", values, unsigned)?,
        },
        "node-down" => Fault::NodeDown { node, reason: reason("Not responding")? },
        "node-drain" => Fault::NodeDrain { node, reason: reason("maintenance")? },
        other => return Err((fault.kind.span(), format!("unknown fault kind `{other}`"))),
    })
}

/// `"5"` or `"10%"`.
pub fn parse_tolerance(text: &str) -> Option<Tolerance> {
    let text = text.trim();
    match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().ok().filter(|p| p.is_finite() && *p >= 0.0).map(|p| Tolerance::Relative(p / 100.0)),
        None => text.parse::<f64>().ok().filter(|t| t.is_finite() && *t >= 0.0).map(Tolerance::Absolute),
    }
}

fn build_question(table: &QuestionTable, values: &Values) -> Result<Question, Problem> {
    let qid = table.id.get_ref().clone();
    let answer_span = table.answer.span();
    let sub = |text: &str| plain_text(text, answer_span.clone(), values);
    let choices = match &table.choices {
        Some(choices) => choices
            .get_ref()
            .iter()
            .map(|choice| plain_text(choice, choices.span(), values))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let position = |answer: &str| {
        choices
            .iter()
            .position(|choice| choice == answer)
            .ok_or_else(|| (answer_span.clone(), format!("question `{qid}`: the answer `{answer}` is not among its choices")))
    };
    let answer_text = |expected: &str| -> Result<String, Problem> {
        match table.answer.get_ref() {
            AnswerValue::Text(text) => sub(text),
            AnswerValue::Number(n) => Ok(n.to_string()),
            AnswerValue::List(_) => Err((answer_span.clone(), format!("question `{qid}`: the answer must be {expected}, not a list"))),
        }
    };
    let answer_list = || -> Result<Vec<String>, Problem> {
        match table.answer.get_ref() {
            AnswerValue::List(items) => items.iter().map(|item| sub(item)).collect(),
            _ => Err((answer_span.clone(), format!("question `{qid}`: the answer must be a list, e.g. [\"a\", \"b\"]"))),
        }
    };
    let kind = match table.kind.get_ref().as_str() {
        "choice" => QuestionKind::Choice { answer: position(&answer_text("one of the choices")?)?, choices },
        "multi" => {
            let mut answers = answer_list()?.iter().map(|a| position(a)).collect::<Result<Vec<_>, _>>()?;
            crate::sort::sort(&mut answers);
            answers.dedup();
            QuestionKind::Multi { choices, answers }
        }
        "text" => {
            let mut accepted = vec![answer_text("a string")?];
            for alternative in &table.accept {
                accepted.push(sub(alternative)?);
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
                .ok_or_else(|| (answer_span.clone(), format!("question `{qid}`: the answer must be a number, not `{written}`")))?;
            let tolerance = match &table.tolerance {
                None => Tolerance::Absolute(0.0),
                Some(tolerance) => parse_tolerance(tolerance.get_ref()).ok_or_else(|| {
                    (
                        tolerance.span(),
                        format!("question `{qid}`: tolerance `{}` must be a number (\"5\") or a percentage (\"10%\")", tolerance.get_ref()),
                    )
                })?,
            };
            QuestionKind::Number { answer, tolerance, unit: table.unit.clone() }
        }
        "order" => QuestionKind::Order { items: answer_list()? },
        other => return Err((table.kind.span(), format!("unknown question type `{other}`"))),
    };
    Ok(Question {
        id: qid,
        prompt: text(&table.prompt, values)?,
        kind,
        points: table.points.unwrap_or(1),
        hints: table.hints.iter().map(|hint| sub(hint)).collect::<Result<_, _>>()?,
        explanation: sub(&table.explanation)?,
    })
}

/// Parses and validates a lab file's text.
/// Builds the `Lab` from the parsed file, once its parts are known good.
fn assemble(
    lab: file::LabTable,
    cluster: file::ClusterTable,
    preset: &'static preset::Preset,
    hostnames: Vec<String>,
    vars: Vec<Var>,
    faults: Vec<Spanned<FaultTable>>,
    questions: Vec<Spanned<QuestionTable>>,
) -> Lab {
    let fabric = match cluster.fabric.as_ref().map(|f| f.get_ref().as_str()) {
        Some("roce") => LinkLayer::Ethernet,
        _ => LinkLayer::InfiniBand,
    };
    Lab {
        id: lab.id.into_inner(),
        title: lab.title,
        summary: lab.summary,
        briefing_span: lab.briefing.as_ref().map_or(0..0, Spanned::span),
        briefing: lab.briefing.map(Spanned::into_inner).unwrap_or_default(),
        level: lab.level.map(Spanned::into_inner),
        minutes: lab.minutes,
        stage: lab.stage.map(Spanned::into_inner),
        tags: lab.tags,
        cluster: ClusterConfig {
            driver: cluster.driver,
            cuda: cluster.cuda,
            nccl: cluster.nccl,
            dcgm: cluster.dcgm,
            fabric,
            hcas: cluster.hcas.map(|h| *h.get_ref() as usize),
            persistence: cluster.persistence.unwrap_or(true),
            ..ClusterConfig::new(preset, hostnames)
        },
        vars,
        faults,
        questions,
    }
}

/// `count = N` names the nodes gpu-001 .. gpu-N (four digits past 999, so
/// the names sort).
fn counted_hostnames(n: u32) -> Vec<String> {
    let width = n.to_string().len().max(3);
    (1..=n).map(|i| format!("gpu-{i:0width$}")).collect()
}

fn var_spec(table: &file::VarTable) -> Option<VarSpec> {
    match (&table.one_of, &table.range) {
        (Some(values), None) if !values.is_empty() => Some(VarSpec::OneOf(values.iter().map(Scalar::as_text).collect())),
        (None, Some(range)) if range.len() == 2 && range[0] <= range[1] && range[1] - range[0] < 100_000 => {
            Some(VarSpec::Range(range[0], range[1]))
        }
        _ => None,
    }
}

/// A lab from its parsed file, without the authoring checks: for labs that
/// have passed [`load`] already. The app's build checks every lab and
/// compiles it in as its parsed file (see `codegen`), because the parser and
/// the checks would not fit the browser build's size budget.
pub fn from_file(file: file::LabFile) -> Option<Lab> {
    let preset = preset::find(file.cluster.preset.get_ref())?;
    let hostnames = match (&file.cluster.nodes, &file.cluster.count) {
        (Some(nodes), _) => nodes.iter().map(|node| node.get_ref().clone()).collect(),
        (None, Some(count)) => counted_hostnames(*count.get_ref()),
        (None, None) => return None,
    };
    let vars = file
        .vars
        .iter()
        .filter_map(|(name, table)| var_spec(table.get_ref()).map(|spec| Var { name: name.clone(), spec }))
        .collect();
    Some(assemble(file.lab, file.cluster, preset, hostnames, vars, file.faults, file.questions))
}

/// Parses and validates a lab file's text: every problem, located.
pub fn load(source: &str) -> Result<Lab, Vec<Diagnostic>> {
    let file = file::parse(source).map_err(|problems| into_diagnostics(source, problems))?;
    let mut problems: Vec<Problem> = Vec::new();
    let mut problem = |span: Range<usize>, message: String| problems.push((span, message));

    let lab_table = file.lab;
    let lab = &lab_table;
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
        problem(cluster.preset.span(), format!("unknown preset `{preset_name}`{hint}; presets are {}", list(preset::ids())));
    }
    check_one_of(&cluster.fabric, "fabric", FABRICS, &mut problem);
    if let (Some(hcas), Some(preset)) = (&cluster.hcas, preset) {
        let n = *hcas.get_ref() as usize;
        if n == 0 || n > preset.hca_count() {
            problem(hcas.span(), format!("`hcas` must be between 1 and {} for {}", preset.hca_count(), preset.id));
        }
    }
    let hostnames = hostnames(&cluster, &mut problem);

    let mut vars = Vec::new();
    for (name, table) in &file.vars {
        if !template::is_var_name(name) {
            problem(table.span(), format!("variable name `{name}` must use only a-z, 0-9 and _, and not start with a digit"));
        }
        let Some(spec) = var_spec(table.get_ref()) else {
            let message = match (&table.get_ref().one_of, &table.get_ref().range) {
                (None, Some(_)) => "`range` must be [lo, hi] with lo <= hi".to_string(),
                (Some(_), None) => "`one_of` must list at least one value".to_string(),
                (Some(_), Some(_)) => "give `one_of` or `range`, not both".to_string(),
                (None, None) => "needs `one_of = [...]` or `range = [lo, hi]`".to_string(),
            };
            let separator = if message.starts_with("needs") { " " } else { ": " };
            problem(table.span(), format!("variable `{name}`{separator}{message}"));
            continue;
        };
        vars.push(Var { name: name.clone(), spec });
    }

    for fault in &file.faults {
        check_fault_fields(fault, &mut problem);
    }

    let mut question_ids = BTreeSet::new();
    for question in &file.questions {
        let table = question.get_ref();
        let qid = table.id.get_ref();
        if !question_ids.insert(qid.clone()) {
            problem(table.id.span(), format!("question id `{qid}` is used twice"));
        }
        check_question_fields(table, &mut problem);
    }

    // An unknown preset is already reported; check the rest against the first.
    let cluster_is_known = preset.is_some() && problems.is_empty();
    let preset = preset.unwrap_or(&preset::PRESETS[0]);
    let lab = lab_table;
    let built = assemble(lab, cluster, preset, hostnames, vars, file.faults, file.questions);
    problems.extend(built.variant_problems(cluster_is_known && !built.cluster.hostnames.is_empty()));
    if problems.is_empty() {
        Ok(built)
    } else {
        Err(into_diagnostics(source, problems))
    }
}

fn hostnames(cluster: &file::ClusterTable, problem: &mut impl FnMut(Range<usize>, String)) -> Vec<String> {
    match (&cluster.nodes, &cluster.count) {
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
                return Vec::new();
            }
            counted_hostnames(n)
        }
        (Some(nodes), None) => {
            if nodes.is_empty() {
                problem(cluster.preset.span(), "`nodes` must name at least one node".to_string());
            }
            if nodes.len() > MAX_NODES as usize {
                problem(cluster.preset.span(), format!("at most {MAX_NODES} nodes"));
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
    }
}

/// Which fields a fault table has, by name.
fn present_fields(fault: &FaultTable) -> Vec<(&'static str, Range<usize>)> {
    let mut fields = Vec::new();
    macro_rules! field {
        ($name:ident) => {
            if let Some(value) = &fault.$name {
                fields.push((stringify!($name), value.span()));
            }
        };
    }
    field!(node);
    field!(gpu);
    field!(hca);
    field!(xid);
    field!(count);
    field!(gen);
    field!(width);
    field!(rate);
    field!(mtu);
    field!(links);
    field!(state);
    field!(reason);
    field!(repair);
    fields
}

fn check_fault_fields(fault: &Spanned<FaultTable>, problem: &mut impl FnMut(Range<usize>, String)) {
    let table = fault.get_ref();
    let kind = table.kind.get_ref();
    let Some((_, required, optional)) = FAULT_KINDS.iter().find(|(name, _, _)| name == kind) else {
        let hint = suggestion(kind, FAULT_KINDS.iter().map(|(name, _, _)| *name));
        problem(table.kind.span(), format!("unknown fault kind `{kind}`{hint}; see docs/authoring.md for the kinds"));
        return;
    };
    let present = present_fields(table);
    if let Some(repair) = &table.repair {
        let target = match kind.as_str() {
            k if k.starts_with("hca-") => Some(RepairTarget::Hca),
            k if k.starts_with("gpu-") || k == "nvlink-down" => Some(RepairTarget::Gpu),
            "node-down" => Some(RepairTarget::Node),
            _ => None,
        };
        for action in repair.get_ref() {
            let fits = REPAIR_ACTIONS.iter().find(|(name, _)| name == action).map(|(_, t)| Some(*t) == target);
            let names = || REPAIR_ACTIONS.iter().filter(|(_, t)| Some(*t) == target).map(|(name, _)| *name);
            match fits {
                Some(true) => {}
                _ if target.is_none() => {
                    problem(repair.span(), format!("a `{kind}` fault is repaired from the terminal, not by hands-on `repair`"))
                }
                Some(false) => problem(repair.span(), format!("`{action}` does not repair a `{kind}` fault; use one of {}", list(names()))),
                None => {
                    let hint = suggestion(action, names());
                    problem(repair.span(), format!("unknown repair action `{action}`{hint}; for a `{kind}` fault: {}", list(names())))
                }
            }
        }
    }
    for field in *required {
        if !present.iter().any(|(name, _)| name == field) {
            problem(fault.span(), format!("a `{kind}` fault needs `{field}`"));
        }
    }
    for (name, span) in &present {
        if !required.contains(name) && !optional.contains(name) && *name != "repair" {
            let takes: Vec<&str> = required.iter().chain(optional.iter()).copied().collect();
            problem(span.clone(), format!("`{name}` does not apply to a `{kind}` fault; it takes {}", list(takes)));
        }
    }
}

fn check_question_fields(table: &QuestionTable, problem: &mut impl FnMut(Range<usize>, String)) {
    let qid = table.id.get_ref();
    let kind = table.kind.get_ref().as_str();
    if !QUESTION_TYPES.contains(&kind) {
        let hint = suggestion(kind, QUESTION_TYPES.iter().copied());
        problem(table.kind.span(), format!("unknown question type `{kind}`{hint}; types are {}", list(QUESTION_TYPES.iter().copied())));
        return;
    }
    let needs_choices = matches!(kind, "choice" | "multi");
    match &table.choices {
        Some(choices) if !needs_choices && kind != "order" => {
            problem(choices.span(), format!("question `{qid}`: a {kind} question takes no `choices`"))
        }
        Some(choices) if kind == "order" => {
            problem(choices.span(), format!("question `{qid}`: an order question lists its items, in the right order, as `answer`"))
        }
        Some(choices) if choices.get_ref().len() < 2 => {
            problem(choices.span(), format!("question `{qid}`: `choices` needs at least two entries"))
        }
        Some(choices) => {
            let unique: BTreeSet<&String> = choices.get_ref().iter().collect();
            if unique.len() != choices.get_ref().len() {
                problem(choices.span(), format!("question `{qid}`: `choices` lists an entry twice"));
            }
        }
        None if needs_choices => problem(table.kind.span(), format!("question `{qid}`: a {kind} question needs `choices`")),
        None => {}
    }
    if kind != "number" {
        if let Some(tolerance) = &table.tolerance {
            problem(tolerance.span(), format!("question `{qid}`: `tolerance` applies to number questions only"));
        }
    }
    if kind == "order" {
        if let AnswerValue::List(items) = table.answer.get_ref() {
            if items.len() < 2 {
                problem(table.answer.span(), format!("question `{qid}`: an order question needs at least two items"));
            }
        }
    }
    if let AnswerValue::Text(text) = table.answer.get_ref() {
        if text.trim().is_empty() {
            problem(table.answer.span(), format!("question `{qid}`: the answer must not be empty"));
        }
    }
}

fn into_diagnostics(source: &str, mut problems: Vec<Problem>) -> Vec<Diagnostic> {
    // Stable sort: where a structural check and a variant check report the
    // same place, the structural message (found first) is kept.
    crate::sort::sort_by_key(&mut problems, |(span, _)| span.start);
    problems.dedup_by_key(|(span, _)| span.start);
    problems.into_iter().map(|(span, message)| Diagnostic::at(source, span.start, message)).collect()
}

fn check_one_of(
    value: &Option<Spanned<String>>,
    key: &str,
    allowed: &[&str],
    problem: &mut impl FnMut(Range<usize>, String),
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
