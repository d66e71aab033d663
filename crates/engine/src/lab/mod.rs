//! Labs as data.
//!
//! A [`Lab`] is what a lab file says, checked and with its Markdown parsed:
//! metadata, the cluster, the variables, and faults and questions as
//! templates ([`spec`]). It travels to the app as JSON ([`Lab::to_json`]),
//! built from its TOML file by `clusterlab build`; the TOML reader and the
//! authoring checks are in [`authoring`], behind the `authoring` feature,
//! so the trainee's app never links them.
//!
//! A trainee's seed picks the variables' values ([`template`]); with them a
//! lab gives that trainee's [`Variant`] (questions, briefing) and
//! the cluster they start from ([`Lab::instantiate`]).

#[cfg(feature = "authoring")]
pub mod authoring;
pub mod catalog;
pub mod doc;
pub mod evidence;
pub mod reference;
pub mod spec;
pub mod template;

use serde::{Deserialize, Serialize};

pub use crate::facts::Fact;
use crate::model::fault::Fault;
use crate::model::workload::WorkloadSpec;
use crate::model::{Cluster, ClusterConfig};
use crate::rng::Rng;
pub use doc::Doc;
use spec::{FaultSpec, QuestionSpec, ResolveError};
use template::{Values, Var};

/// A checked lab, ready for trainees.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Lab {
    pub id: String,
    pub title: String,
    pub summary: String,
    /// With `{var}`s still in it (see [`Variant::briefing`]).
    pub briefing: Doc,
    pub level: Option<String>,
    pub minutes: Option<u32>,
    pub stage: Option<String>,
    pub tags: Vec<String>,
    /// The labs to pass before this one, by id (the catalog checks they
    /// exist and come earlier on the path). The catalog carries them: lab
    /// data leaves them out, and no module that reads it pays for them.
    #[serde(skip)]
    pub requires: Vec<String>,
    /// The share of the points that passes the lab, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<u32>,
    /// What guessing and hints cost (`[policy]`).
    #[serde(default)]
    pub policy: Policy,
    /// Minutes an exam of this lab allows (`#/exam/ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exam_minutes: Option<u32>,
    pub cluster: ClusterConfig,
    pub vars: Vec<Var>,
    pub faults: Vec<FaultSpec>,
    /// The training jobs (`[[jobs]]`), as their JSON: the page only needs
    /// to know a lab has some (it shows the metrics panel), so it does not
    /// carry the code to read them; [`Lab::jobs`] does, for the engine.
    /// Left out of lab data when there are none, so labs without them keep
    /// their data (and digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Box<serde_json::value::RawValue>>,
    /// The workload pods (`[[pods]]`), as their JSON, for the same reason:
    /// [`Lab::pods`] reads them, for the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<Box<serde_json::value::RawValue>>,
    pub questions: Vec<QuestionSpec>,
}

/// One trainee's lab as the page shows it: the variables' values, the
/// briefing and questions with those values substituted. (Its faults are
/// the engine's: [`Lab::instantiate`] applies them.)
#[derive(Clone, Debug)]
pub struct Variant {
    pub seed: u64,
    pub values: Values,
    /// The briefing with the variables' values substituted.
    pub briefing: Doc,
    pub questions: Vec<Question>,
}

/// What a lab charges for guessing and hints (`[policy]`). The defaults
/// suit self-assessment: a second try at a choice costs half its points,
/// a hint a quarter, and a right answer stays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Policy {
    /// Attempts at choice, multi, entity and order questions. A choice
    /// question allows at most its choices less two (at least one), so
    /// that trying each in turn cannot pay.
    pub attempts: u32,
    /// Attempts at number and text questions.
    pub number_attempts: u32,
    /// The share (percent) of its points a right answer keeps for each
    /// wrong attempt before it.
    pub retry_credit: u32,
    /// What each hint shown costs: a share (percent) of the question's points...
    pub hint_cost_percent: u32,
    /// ...or, when set, this many points.
    pub hint_cost_points: Option<u32>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy { attempts: 2, number_attempts: 3, retry_credit: 50, hint_cost_percent: 25, hint_cost_points: None }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    pub id: String,
    pub prompt: Doc,
    pub kind: QuestionKind,
    pub points: u32,
    pub hints: Vec<Doc>,
    /// Shown after answering.
    pub explanation: Doc,
    /// Attempts allowed (None: as many as the trainee wants, for checks).
    pub attempts: Option<u32>,
    /// Whether a correct answer may be changed.
    pub retry: bool,
    /// The lab's charges for retries and hints.
    pub policy: Policy,
    /// What to tell a trainee who gave this response (a choice's text).
    pub feedback: Vec<(String, Doc)>,
    /// The trainee's variant seed: an order question's first order.
    pub seed: u64,
}

/// One field of a handoff record and the facts it must state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HandoffField {
    pub name: String,
    /// Names it must mention (a node, an HCA, `GPU 3`, a fault's word)...
    pub states: Vec<String>,
    /// ...numbers within a tolerance...
    pub numbers: Vec<(f64, Tolerance)>,
    /// ...and actions, which must also have been taken (`drain`, `reset`,
    /// `resume`, `repair`, `restart`).
    pub actions: Vec<String>,
    /// Names of the cluster's other nodes, HCAs and GPUs: stating one where
    /// `states` names another of its kind contradicts the record.
    pub others: Vec<String>,
    /// No machine can decide it: an instructor reviews it, and it stays out
    /// of the automatic score.
    pub review: bool,
}

/// The execution a `task` question asks for, judged on what ran (see
/// [`crate::commands::execution`]), never on the typed text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMatch {
    /// The program, by name (`nvidia-smi`).
    pub program: String,
    /// Options by canonical name (long when the program declares one).
    pub options: Vec<(String, OptionMatch)>,
    /// Bash patterns, each matching an operand, in order.
    pub operands: Vec<String>,
    /// A bash pattern over a host it ran on.
    pub host: Option<String>,
    /// Hosts it must have run on, all of them, over one or several runs
    /// (`pdsh`, a loop over `ssh`, `srun -N`).
    pub hosts: Vec<String>,
    /// One run spread over at least this many nodes (`srun -N 3`).
    pub span: Option<u32>,
    pub status: StatusMatch,
    /// A bash pattern its standard output must match.
    pub output: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum OptionMatch {
    Present,
    Absent,
    /// A bash pattern over its value.
    Value(String),
}

/// How the run must end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum StatusMatch {
    /// Exit status 0: what a task asks for unless it says otherwise.
    #[default]
    Success,
    Failure,
    Any,
}

/// What must come before a task's execution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum After {
    /// The fact held when it started.
    Fact(Fact),
    /// It started after a run like this one.
    Run(RunMatch),
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
    /// A node, GPU, HCA or port of the lab's cluster: `choices` come from
    /// the model, `answer` indexes the right one; `aliases` are other names
    /// of the choices (a GPU's PCI bus id and UUID, an HCA's bus id).
    Entity { entity: String, choices: Vec<String>, answer: usize, aliases: Vec<(String, usize)> },
    /// Done by running `run` (after `after`, when given) at the terminal.
    Task { run: RunMatch, after: Option<After> },
    /// Done when the cluster shows every one of `expect`.
    State { expect: Vec<Fact> },
    /// A handoff record: free text under each of `fields`, graded on the
    /// facts each must state once the incident is closed (every one of
    /// `closed_when` holds); `rubric` is a self-check, recorded, never scored.
    Handoff { fields: Vec<HandoffField>, rubric: Vec<String>, closed_when: Vec<Fact> },
}

impl Question {
    /// The question as one trainee's variant shows it: choices in an order
    /// of the variant's own (stable across reloads, different between
    /// trainees), entities with their bus ids and UUIDs in this cluster.
    pub fn for_variant(mut self, lab: &str, config: &ClusterConfig, seed: u64) -> Question {
        self.seed = seed;
        let mut rng = Rng::derive(seed, &["choices", lab, &self.id]);
        let mut permute = |choices: &mut Vec<String>| -> Vec<usize> {
            // order[new] = old
            let mut order: Vec<usize> = (0..choices.len()).collect();
            for at in (1..order.len()).rev() {
                let with = rng.range_u64(0, at as u64) as usize;
                order.swap(at, with);
            }
            let old = std::mem::take(choices);
            *choices = order.iter().map(|at| old[*at].clone()).collect();
            order
        };
        let new_index = |order: &[usize], old: usize| order.iter().position(|at| *at == old).unwrap_or(old);
        match &mut self.kind {
            QuestionKind::Choice { choices, answer } => {
                let order = permute(choices);
                *answer = new_index(&order, *answer);
            }
            QuestionKind::Multi { choices, answers } => {
                let order = permute(choices);
                for answer in answers.iter_mut() {
                    *answer = new_index(&order, *answer);
                }
                crate::sort::sort(answers);
            }
            QuestionKind::Entity { entity, choices, aliases, .. } => {
                let world = Rng::derive(seed, &["lab", lab]).next_u64();
                for (at, name) in choices.iter().enumerate() {
                    let mut words = name.split(' ');
                    let (node, rest) = (words.next().unwrap_or(""), words.collect::<Vec<_>>());
                    match (entity.as_str(), rest.as_slice()) {
                        ("gpu", ["GPU", index]) => {
                            let Ok(index) = index.parse::<u32>() else { continue };
                            if let Some(bus) = config.preset.gpu_buses.get(index as usize) {
                                aliases.push((format!("00000000:{bus:02x}:00.0"), at));
                            }
                            aliases.push((crate::model::gpu_uuid(world, node, index).to_ascii_lowercase(), at));
                        }
                        ("hca", [hca]) => {
                            let index = hca.trim_start_matches("mlx5_").parse::<usize>().ok();
                            if let Some(bus) = index.and_then(|i| config.preset.hca_buses.get(i)) {
                                aliases.push((format!("0000:{bus:02x}:00.0"), at));
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        self
    }
}

impl QuestionKind {
    /// The type's name, as a lab file writes it (one of [`QUESTION_TYPES`]).
    pub fn name(&self) -> &'static str {
        match self {
            QuestionKind::Choice { .. } => "choice",
            QuestionKind::Multi { .. } => "multi",
            QuestionKind::Text { .. } => "text",
            QuestionKind::Number { .. } => "number",
            QuestionKind::Order { .. } => "order",
            QuestionKind::Entity { .. } => "entity",
            QuestionKind::Task { .. } => "task",
            QuestionKind::State { .. } => "state",
            QuestionKind::Handoff { .. } => "handoff",
        }
    }
}

pub const LEVELS: &[&str] = &["beginner", "intermediate", "advanced"];
/// The most labs one lab may require.
pub const MAX_REQUIRES: usize = 4;
/// Whether `score` of `possible` reaches the pass mark `pass` (percent);
/// without one, only full marks pass.
pub fn passes(pass: Option<u32>, score: u32, possible: u32) -> bool {
    match pass {
        Some(pass) => u64::from(score) * 100 >= u64::from(pass) * u64::from(possible),
        None => score == possible,
    }
}

pub const STAGES: &[&str] = &["understand", "prepare", "validate", "operate", "diagnose", "handover"];
pub const QUESTION_TYPES: &[&str] = &["choice", "multi", "text", "number", "order", "entity", "task", "state", "handoff"];
/// What an `entity` question picks.
pub const ENTITIES: &[&str] = &["node", "gpu", "hca", "port"];
/// Slurm states a `state` question may expect.
pub const SLURM_STATES: &[&str] = &["idle", "allocated", "draining", "drained", "down"];
/// The handoff record's fields, unless the question lists its own.
pub const HANDOFF_FIELDS: &[&str] = &[
    "Scope and owner",
    "Versions and placement",
    "Commands and timestamps",
    "Expected versus observed",
    "Changes and rollback",
    "Remaining limitations",
    "Next action",
];
pub const FABRICS: &[&str] = &["infiniband", "roce"];
pub const PORT_DOWN_STATES: &[&str] = &["Down", "Polling", "Disabled"];

/// Each fault kind, the fields it needs and the fields it may take.
pub const FAULT_KINDS: &[(&str, &[&str], &[&str])] = &[
    ("gpu-xid", &["node", "gpu", "xid"], &[]),
    ("gpu-fallen-off-bus", &["node", "gpu"], &["state"]),
    ("gpu-ecc-uncorrectable", &["node", "gpu", "count"], &[]),
    ("gpu-row-remap-pending", &["node", "gpu"], &[]),
    ("gpu-thermal-slowdown", &["node", "gpu"], &[]),
    ("gpu-power-brake", &["node", "gpu"], &[]),
    ("gpu-power-cap", &["node", "gpu", "watts"], &[]),
    ("gpu-pcie-degraded", &["node", "gpu"], &["gen", "width"]),
    ("nvlink-down", &["node", "gpu", "links"], &[]),
    ("fabric-manager-down", &["node"], &[]),
    ("service-stopped", &["node", "service"], &[]),
    ("driver-mismatch", &["node", "installed"], &[]),
    ("hca-port-down", &["node", "hca"], &["state"]),
    ("hca-link-degraded", &["node", "hca"], &["rate", "width"]),
    ("hca-symbol-errors", &["node", "hca", "count"], &[]),
    ("hca-link-flap", &["node", "hca"], &[]),
    ("hca-mtu", &["node", "hca", "mtu"], &[]),
    ("hca-pfc-off", &["node", "hca"], &[]),
    ("hca-ecn-off", &["node", "hca"], &[]),
    ("hca-pcie-degraded", &["node", "hca"], &["gen", "width"]),
    ("node-down", &["node"], &["reason"]),
    ("node-drain", &["node"], &["reason"]),
    ("node-cordon", &["node"], &[]),
];

/// The most nodes a lab may declare.
pub const MAX_NODES: u32 = 4096;
/// How many variants the checks try at most (all of them when there are fewer).
pub const VARIANTS_CHECKED: u64 = 64;

/// The version of the lab data format; the app refuses data of another.
/// 2: tasks as runs (`run`, `after`), facts as maps, handoff fields with facts, the policy.
pub const DATA_FORMAT: u32 = 2;

/// A lab as it is stored: the format version, then the lab.
#[derive(Serialize, Deserialize)]
struct Stored<L> {
    format: u32,
    lab: L,
}

/// What the simulator needs of a lab: its cluster and the faults of a
/// trainee's variant, none of its text. Read from the same data as [`Lab`]
/// (the rest is skipped), so that the engine's worker carries no code for
/// lab text.
#[derive(Clone, Debug, Deserialize)]
pub struct Setup {
    pub id: String,
    pub cluster: ClusterConfig,
    pub vars: Vec<Var>,
    pub faults: Vec<FaultSpec>,
    #[serde(default)]
    pub jobs: Vec<WorkloadSpec>,
    #[serde(default)]
    pub pods: Vec<crate::model::pods::LabPod>,
    /// The questions, of which only `state` and `task` ones carry anything
    /// read here.
    pub questions: Vec<evidence::QuestionProbe>,
}

impl Setup {
    pub fn from_json(text: &str) -> Result<Setup, String> {
        read_stored(text)
    }

    /// The cluster a trainee with this seed starts from, as [`Lab::instantiate`].
    pub fn instantiate(&self, seed: u64) -> Cluster {
        instantiate(&self.id, &self.cluster, &self.vars, &self.faults, (&self.jobs, &self.pods), seed)
    }

    pub fn first_host(&self) -> &str {
        self.cluster.hostnames.first().map_or("", String::as_str)
    }

    /// The ids of the state questions the cluster meets for this seed.
    pub fn states_met(&self, seed: u64, cluster: &Cluster, baseline: &crate::facts::Baseline) -> Vec<String> {
        if self.questions.iter().all(|probe| probe.expect.is_empty()) {
            return Vec::new();
        }
        evidence::states_met(&self.questions, &template::pick(&self.vars, &self.id, seed), cluster, baseline)
    }

    /// What a session of this seed's variant watches as programs run.
    pub fn watch(&self, seed: u64) -> crate::facts::Watch {
        evidence::watch(&self.questions, &template::pick(&self.vars, &self.id, seed))
    }
}

/// Reads [`Lab::to_json`]'s text as `L` (a [`Lab`] or a [`Setup`]).
fn read_stored<L: serde::de::DeserializeOwned>(text: &str) -> Result<L, String> {
    #[derive(Deserialize)]
    struct Format {
        format: u32,
    }
    let format = serde_json::from_str::<Format>(text).map_err(|error| format!("not ClusterLab lab data: {error}"))?;
    if format.format != DATA_FORMAT {
        return Err(format!("lab data format {} is not the format {DATA_FORMAT} this ClusterLab reads; rebuild the lab", format.format));
    }
    serde_json::from_str::<Stored<L>>(text).map(|stored| stored.lab).map_err(|error| format!("damaged lab data: {error}"))
}

/// The cluster of a trainee's variant: built from the seed, faults applied.
fn instantiate(
    id: &str,
    config: &ClusterConfig,
    vars: &[Var],
    faults: &[FaultSpec],
    (jobs, pods): (&[WorkloadSpec], &[crate::model::pods::LabPod]),
    seed: u64,
) -> Cluster {
    let values = template::pick(vars, id, seed);
    let world_seed = Rng::derive(seed, &["lab", id]).next_u64();
    let mut cluster = Cluster::build(config, world_seed);
    let start = cluster.now;
    // Faults were checked against this cluster when the lab was built; one
    // that does not resolve or apply is left out. Those without a time
    // struck a while before the lab, before its jobs started.
    // With jobs running, every fault strikes at its instant, in order of
    // time, so that a job that ran then shows it from then on.
    let jobs_run = jobs.iter().any(|job| job.start == crate::model::workload::Start::Running) || pods.iter().any(|pod| pod.running);
    // The lab's pods were applied before any fault struck.
    cluster.start_lab_pods(pods);
    let mut timed = Vec::new();
    for spec in faults {
        if let Ok(fault) = spec.resolve(&values) {
            match spec.at.as_deref().and_then(crate::model::time::parse_duration) {
                Some(offset) => timed.push((start + offset, fault, spec.repair.clone())),
                None if jobs_run => timed.push((start - fault.struck_before(cluster.seed), fault, spec.repair.clone())),
                None => {
                    let _ = cluster.inject(fault, spec.repair.clone());
                }
            }
        }
    }
    // The jobs running when the lab starts have run for half an hour or so;
    // a fault timed before the start struck while they ran.
    cluster.start_lab_workloads(jobs, crate::perf::workload_pace);
    crate::sort::sort_by(&mut timed, |a, b| a.0.cmp(&b.0));
    for (at, fault, repairs) in timed {
        if at <= start {
            let _ = cluster.inject_at(at, fault, repairs);
        } else {
            cluster.schedule(at, fault, repairs);
        }
    }
    cluster
}

/// The cluster in words, for those who cannot see a topology diagram: the
/// nodes, what each holds, and how GPUs meet their rails.
pub fn topology_text(config: &ClusterConfig) -> String {
    let names = &config.hostnames;
    let shown: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
    let more = if names.len() > 8 { format!(" and {} more", names.len() - 8) } else { String::new() };
    let fabric = if config.fabric == crate::model::fabric::LinkLayer::Ethernet { "RoCE (Ethernet)" } else { "InfiniBand" };
    let hcas = config.hcas.unwrap_or(config.preset.hca_count());
    format!(
        "{} node{}: {}{more}. Each is an {}. Each GPU shares a PCIe switch with one HCA, its rail (`nvidia-smi topo -m` shows which), {hcas} rails per node over {fabric}; the GPUs of a node talk over NVLink through the NVSwitches.",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        shown.join(", "),
        config.preset.description
    )
}

/// What did not resolve in one variant, and where in the lab it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unresolved {
    Briefing(String),
    Fault(usize, ResolveError),
    Question(usize, ResolveError),
}

impl Lab {
    /// The lab as stored data (JSON), with its format version.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&Stored { format: DATA_FORMAT, lab: self }).expect("a lab always serializes")
    }

    /// A lab from [`Lab::to_json`]'s text; the reason when it cannot be read.
    pub fn from_json(text: &str) -> Result<Lab, String> {
        read_stored(text)
    }

    /// The variables' values for a trainee seed.
    pub fn values(&self, seed: u64) -> Values {
        template::pick(&self.vars, &self.id, seed)
    }

    /// One trainee's lab. Parts that do not resolve are left out; the checks
    /// have already rejected labs where that can happen.
    pub fn variant(&self, seed: u64) -> Variant {
        let values = self.values(seed);
        let briefing = self.briefing.substitute(&values).unwrap_or_else(|_| self.briefing.clone());
        let questions = self
            .questions
            .iter()
            .filter_map(|question| question.resolve(&values, &self.cluster, &self.policy).ok())
            .map(|question| question.for_variant(&self.id, &self.cluster, seed))
            .collect();
        Variant { seed, values, briefing, questions }
    }

    /// Faults and questions with `values`, and what did not resolve.
    pub fn resolve(&self, values: &Values) -> (Vec<Fault>, Vec<Question>, Vec<Unresolved>) {
        let mut problems = Vec::new();
        if let Err(name) = self.briefing.substitute(values) {
            problems.push(Unresolved::Briefing(format!("`{{{name}}}` is not defined in [vars]")));
        }
        let faults =
            self.faults.iter().enumerate().filter_map(|(at, fault)| fault.resolve(values).map_err(|e| problems.push(Unresolved::Fault(at, e))).ok()).collect();
        let questions = self
            .questions
            .iter()
            .enumerate()
            .filter_map(|(at, question)| question.resolve(values, &self.cluster, &self.policy).map_err(|e| problems.push(Unresolved::Question(at, e))).ok())
            .collect();
        (faults, questions, problems)
    }

    /// The cluster a trainee with this seed starts from: built, with the
    /// variant's faults applied.
    pub fn instantiate(&self, seed: u64) -> Cluster {
        instantiate(&self.id, &self.cluster, &self.vars, &self.faults, (&self.jobs(), &self.pods()), seed)
    }

    /// The lab's training jobs (none if their data does not read, which
    /// `clusterlab build` never writes).
    pub fn jobs(&self) -> Vec<WorkloadSpec> {
        self.jobs.as_ref().and_then(|raw| serde_json::from_str(raw.get()).ok()).unwrap_or_default()
    }

    /// The lab's workload pods (none if their data does not read).
    pub fn pods(&self) -> Vec<crate::model::pods::LabPod> {
        self.pods.as_ref().and_then(|raw| serde_json::from_str(raw.get()).ok()).unwrap_or_default()
    }

    /// Lab data for these pods (None for none).
    pub fn pods_data(pods: &[crate::model::pods::LabPod]) -> Option<Box<serde_json::value::RawValue>> {
        if pods.is_empty() {
            return None;
        }
        serde_json::value::to_raw_value(pods).ok()
    }

    /// Lab data for these jobs (None for none).
    pub fn jobs_data(jobs: &[WorkloadSpec]) -> Option<Box<serde_json::value::RawValue>> {
        if jobs.is_empty() {
            return None;
        }
        serde_json::value::to_raw_value(jobs).ok()
    }

    /// The cluster with exactly these faults applied.
    pub fn cluster_for(&self, faults: &[Fault], seed: u64) -> Cluster {
        let world_seed = Rng::derive(seed, &["lab", &self.id]).next_u64();
        let mut cluster = Cluster::build(&self.cluster, world_seed);
        for fault in faults {
            let _ = cluster.inject(fault.clone(), Vec::new());
        }
        cluster
    }

    pub fn first_host(&self) -> &str {
        self.cluster.hostnames.first().map_or("", String::as_str)
    }

    /// What a session of this seed's variant watches as programs run (each
    /// task's `after` fact and output pattern).
    pub fn watch(&self, seed: u64) -> crate::facts::Watch {
        let probes: Vec<evidence::QuestionProbe> = self
            .questions
            .iter()
            .map(|q| evidence::QuestionProbe {
                id: q.id.clone(),
                expect: q.expect.clone(),
                after: q.after.clone(),
                run: q.run.as_ref().map(|run| evidence::RunProbe { program: run.program.clone(), output: run.output.clone() }),
            })
            .collect();
        evidence::watch(&probes, &self.values(seed))
    }

    /// A session of this seed's variant, at the lab's start, watching what
    /// its tasks need.
    pub fn session(&self, seed: u64) -> crate::Session {
        let mut session = crate::Session::new(self.instantiate(seed), self.first_host());
        session.observe(std::rc::Rc::new(self.watch(seed)));
        session
    }

    pub fn points_possible(&self) -> u32 {
        self.questions.iter().map(|q| q.points).sum()
    }
}

#[cfg(all(test, feature = "authoring"))]
mod tests {
    use super::*;

    #[test]
    fn lab_data_round_trips_and_refuses_other_formats() {
        let lab = crate::testing::lab();
        let text = lab.to_json();
        let back = Lab::from_json(&text).unwrap();
        assert_eq!(back.to_json(), text);
        assert_eq!(back.variant(3).values, lab.variant(3).values);
        let newer = text.replacen("\"format\":2", "\"format\":3", 1);
        assert!(Lab::from_json(&newer).unwrap_err().contains("rebuild the lab"));
        assert!(Lab::from_json("{").unwrap_err().starts_with("not ClusterLab lab data"));
        let unknown_preset = text.replacen("hgx-h100", "hgx-h999", 1);
        assert!(Lab::from_json(&unknown_preset).unwrap_err().contains("unknown preset `hgx-h999`"));
    }

    #[test]
    fn the_cluster_in_words_names_nodes_hardware_and_rails() {
        let text = topology_text(&crate::testing::lab().cluster);
        assert_eq!(
            text,
            "2 nodes: gpu-001, gpu-002. Each is an HGX H100 8-GPU: 8 x H100 80GB HBM3 SXM5, NVSwitch, 8 x ConnectX-7 NDR 400 Gb/s. \
             Each GPU shares a PCIe switch with one HCA, its rail (`nvidia-smi topo -m` shows which), 8 rails per node over InfiniBand; the GPUs of a node talk over NVLink through the NVSwitches."
        );
    }

    #[test]
    fn the_setup_the_engine_reads_builds_the_same_cluster() {
        let lab = crate::load(include_str!("../../../../labs/slow-rail.toml")).unwrap();
        let setup = Setup::from_json(&lab.to_json()).unwrap();
        for seed in [1, 5] {
            let run = |cluster| crate::Session::new(cluster, "gpu-001").run("ibstat; ssh gpu-002 ibstat").text();
            assert_eq!(run(setup.instantiate(seed)), run(lab.instantiate(seed)));
        }
    }
}
