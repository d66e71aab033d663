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
use super::{After, Fact, HandoffField, OptionMatch, Policy, Question, QuestionKind, RunMatch, StatusMatch, Tolerance, HANDOFF_FIELDS, PORT_DOWN_STATES};
use crate::limits::MAX_NVLINKS;
use crate::model::fault::{Fault, PortDown};
use crate::model::ClusterConfig;

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
    let n = resolved.trim().parse::<i64>().map_err(|_| error(field, format!("`{field}` must be a whole number, not `{resolved}`")))?;
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watts: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<LinksSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The driver version a package update installed (`driver-mismatch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed: Option<String>,
    /// The unit left stopped (`service-stopped`): `dcgm-exporter` or `dcgm-exporter.service`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Hands-on actions that repair the fault.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repair: Vec<String>,
    /// When it strikes, after the lab's start (`10m`); before the lab when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

impl FaultSpec {
    pub fn resolve(&self, values: &Values) -> Result<Fault, ResolveError> {
        let kind = text("kind", &self.kind, values)?;
        let kind = kind.as_str();
        // A kind a variable picks ignores the fields its kind does not take
        // (`xid` for the variants that pick `gpu-fallen-off-bus`).
        let missing = |field: &'static str| error(field, format!("a `{kind}` fault needs `{field}`"));
        let required = |field: &'static str, value: &Option<String>| value.clone().ok_or_else(|| missing(field));
        let node = text("node", &required("node", &self.node)?, values)?;
        let gpu = || -> Result<u32, ResolveError> { whole("gpu", &required("gpu", &self.gpu)?, values) };
        let hca = || -> Result<String, ResolveError> { text("hca", &required("hca", &self.hca)?, values) };
        let count = || -> Result<u64, ResolveError> { whole("count", &required("count", &self.count)?, values) };
        let optional =
            |field: &'static str, value: &Option<String>| -> Result<Option<u32>, ResolveError> { value.as_ref().map(|v| whole(field, v, values)).transpose() };
        let optional_u8 =
            |field: &'static str, value: &Option<String>| -> Result<Option<u8>, ResolveError> { value.as_ref().map(|v| whole(field, v, values)).transpose() };
        let reason = |default: &str| -> Result<String, ResolveError> { self.reason.as_ref().map_or(Ok(default.to_string()), |r| text("reason", r, values)) };
        Ok(match kind {
            "gpu-xid" => Fault::GpuXid { node, gpu: gpu()?, xid: whole("xid", &required("xid", &self.xid)?, values)? },
            "gpu-fallen-off-bus" => {
                let dead = match &self.state {
                    None => false,
                    Some(state) => match text("state", state, values)?.as_str() {
                        "dead" => true,
                        other => return Err(error("state", format!("a lost GPU's `state` can only be `dead` (it stays lost through reboots), not `{other}`"))),
                    },
                };
                Fault::GpuFallenOffBus { node, gpu: gpu()?, dead }
            }
            "gpu-ecc-uncorrectable" => Fault::GpuEccUncorrectable { node, gpu: gpu()?, count: count()? },
            "gpu-row-remap-pending" => Fault::GpuRowRemapPending { node, gpu: gpu()? },
            "gpu-thermal-slowdown" => Fault::GpuThermalSlowdown { node, gpu: gpu()? },
            "gpu-power-brake" => Fault::GpuPowerBrake { node, gpu: gpu()? },
            "gpu-power-cap" => Fault::GpuPowerCap { node, gpu: gpu()?, watts: whole("watts", &required("watts", &self.watts)?, values)? },
            "gpu-pcie-degraded" => Fault::GpuPcieDegraded { node, gpu: gpu()?, gen: optional_u8("gen", &self.gen)?, width: optional_u8("width", &self.width)? },
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
            "service-stopped" => {
                let name = text("service", &required("service", &self.service)?, values)?;
                let unit = if name.contains('.') { name } else { format!("{name}.service") };
                let unit = crate::model::service::unit(&unit).map_or(unit, |known| known.name.to_string());
                Fault::ServiceStopped { node, unit }
            }
            "driver-mismatch" => Fault::DriverMismatch { node, installed: text("installed", &required("installed", &self.installed)?, values)? },
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
            "hca-link-degraded" => Fault::HcaLinkDegraded { node, hca: hca()?, rate: optional("rate", &self.rate)?, width: optional_u8("width", &self.width)? },
            "hca-symbol-errors" => Fault::HcaSymbolErrors { node, hca: hca()?, count: count()? },
            "hca-link-flap" => Fault::HcaLinkFlap { node, hca: hca()? },
            "hca-pfc-off" => Fault::HcaPfcOff { node, hca: hca()? },
            "hca-ecn-off" => Fault::HcaEcnOff { node, hca: hca()? },
            "hca-mtu" => Fault::HcaMtu { node, hca: hca()?, mtu: whole("mtu", &required("mtu", &self.mtu)?, values)? },
            "hca-pcie-degraded" => Fault::HcaPcieDegraded { node, hca: hca()?, gen: optional_u8("gen", &self.gen)?, width: optional_u8("width", &self.width)? },
            "node-down" => Fault::NodeDown { node, reason: reason("Not responding")? },
            "node-drain" => Fault::NodeDrain { node, reason: reason("maintenance")? },
            "node-cordon" => Fault::NodeCordon { node },
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

/// One of a `state` question's `expect` tables (or a task's `after`
/// fact), as written: its keys and their values as text (`node`, `slurm`,
/// `reason`, `in_service = "true"`, ...). A map, not a struct of options,
/// keeps the code that reads lab data small in the trainee's page.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ExpectSpec(pub std::collections::BTreeMap<String, String>);

/// What an entry with `job` may state about it besides that it runs.
const JOB_FACTS: &[&str] = &["step_time_within", "lost_iterations_at_most", "restarted_within", "context_at_least"];

/// The keys that say what a fact is about; each entry has exactly one.
pub const FACT_KINDS: &[&str] = &[
    "slurm",
    "in_service",
    "repaired",
    "healthy",
    "diag",
    "link_up",
    "rate",
    "pcie_full",
    "service",
    "fabric_manager",
    "all_reduce_within",
    "job",
    "by",
    "alert",
    "pod",
    "kubernetes",
];

fn percentage(field: &'static str, key: &str, within: &str) -> Result<f64, ResolveError> {
    match parse_tolerance(within) {
        Some(Tolerance::Relative(fraction)) if fraction < 1.0 => Ok(fraction),
        _ => Err(error(field, format!("`{key}` must be a percentage below 100%, such as \"5%\", not `{within}`"))),
    }
}

impl ExpectSpec {
    /// The value of `key`, as written.
    pub fn get(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }

    /// `key = true` or `false`, as written.
    fn flag(&self, key: &str) -> Option<bool> {
        self.0.get(key).map(|value| value == "true")
    }

    /// The kinds of fact this entry names (one, when it is well written).
    pub fn kinds(&self) -> Vec<&'static str> {
        let present = [
            self.get("slurm").is_some(),
            self.flag("in_service").is_some(),
            self.flag("repaired").is_some(),
            self.flag("healthy").is_some(),
            self.get("diag").is_some(),
            self.flag("link_up").is_some(),
            self.get("rate").is_some() && self.flag("link_up").is_none(),
            self.flag("pcie_full").is_some(),
            self.get("service").is_some(),
            self.get("fabric_manager").is_some(),
            self.get("all_reduce_within").is_some(),
            self.get("job").is_some(),
            self.get("by").is_some(),
            self.get("alert").is_some(),
            self.get("pod").is_some(),
            self.get("kubernetes").is_some(),
        ];
        FACT_KINDS.iter().zip(present).filter(|(_, on)| *on).map(|(kind, _)| *kind).collect()
    }

    pub fn resolve(&self, values: &Values) -> Result<Fact, ResolveError> {
        self.resolve_in("expect", values)
    }

    /// The fact, with errors naming `field` (`expect` or `after`).
    pub fn resolve_in(&self, field: &'static str, values: &Values) -> Result<Fact, ResolveError> {
        let optional = |value: &Option<String>| value.as_ref().map(|v| text(field, v, values)).transpose();
        let node = optional(&self.get("node"))?;
        let need_node = |what: &str| node.clone().ok_or_else(|| error(field, format!("`{what}` in `{field}` needs `node`")));
        let only_true = |key: &str, value: Option<bool>| -> Result<(), ResolveError> {
            match value {
                Some(false) => Err(error(field, format!("`{key}` can only be `true`: expect the outcome, not its absence"))),
                _ => Ok(()),
            }
        };
        let gpu = |values: &Values| -> Result<Option<u32>, ResolveError> { self.get("gpu").as_ref().map(|g| whole(field, g, values)).transpose() };
        let kinds = self.kinds();
        let Some(kind) = kinds.first() else {
            return Err(error(
                field,
                format!("each `{field}` entry needs one of {}", FACT_KINDS.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")),
            ));
        };
        if kinds.len() > 1 {
            return Err(error(field, format!("one `{field}` entry states one fact: `{}` and `{}` go in separate entries", kinds[0], kinds[1])));
        }
        let fact = match *kind {
            "slurm" => {
                let state = text(field, self.get("slurm").as_deref().unwrap_or_default(), values)?.to_ascii_lowercase();
                // `drained|down`: any of them (a node out of service either way).
                if let Some(bad) = state.split('|').find(|one| !super::SLURM_STATES.contains(one)) {
                    return Err(error(field, format!("`slurm` must be one of {} (or several joined by `|`), not `{bad}`", super::SLURM_STATES.join(", "))));
                }
                Fact::Slurm { node: need_node("slurm")?, state, reason: optional(&self.get("reason"))? }
            }
            "kubernetes" => {
                let mark = text(field, self.get("kubernetes").as_deref().unwrap_or_default(), values)?.to_ascii_lowercase();
                let cordoned = match mark.as_str() {
                    "cordoned" => true,
                    "schedulable" => false,
                    _ => return Err(error(field, format!("`kubernetes` must be `cordoned` or `schedulable`, not `{mark}`"))),
                };
                Fact::Kubernetes { node: need_node("kubernetes")?, cordoned }
            }
            "in_service" => {
                only_true("in_service", self.flag("in_service"))?;
                Fact::InService { node: need_node("in_service")? }
            }
            "repaired" => {
                only_true("repaired", self.flag("repaired"))?;
                Fact::Repaired { node }
            }
            "healthy" => {
                only_true("healthy", self.flag("healthy"))?;
                Fact::GpuHealthy { node: need_node("healthy")?, gpu: gpu(values)? }
            }
            "diag" => {
                let level: u8 = whole(field, self.get("diag").as_deref().unwrap_or_default(), values)?;
                if !(1..=3).contains(&level) {
                    return Err(error(field, format!("`diag` is a dcgmi run level: 1, 2 or 3, not {level}")));
                }
                Fact::DiagPasses { node: need_node("diag")?, level }
            }
            "link_up" | "rate" => {
                only_true("link_up", self.flag("link_up"))?;
                let hca = self.get("hca").ok_or_else(|| error(field, format!("`{kind}` in `{field}` needs `hca`")))?;
                let rate = self.get("rate").as_ref().map(|r| whole(field, r, values)).transpose()?;
                Fact::HcaLink { node: need_node(kind)?, hca: text(field, &hca, values)?, rate }
            }
            "pcie_full" => {
                only_true("pcie_full", self.flag("pcie_full"))?;
                let device = match (gpu(values)?, optional(&self.get("hca"))?) {
                    (Some(gpu), None) => crate::facts::Device::Gpu(gpu),
                    (None, Some(hca)) => crate::facts::Device::Hca(hca),
                    _ => return Err(error(field, "`pcie_full` needs `gpu` or `hca` (one of them)")),
                };
                Fact::PcieFull { node: need_node("pcie_full")?, device }
            }
            "service" => {
                let service = text(field, self.get("service").as_deref().unwrap_or_default(), values)?;
                if !crate::facts::SERVICES.contains(&service.as_str()) {
                    return Err(error(field, format!("`service` must be one of {}, not `{service}`", crate::facts::SERVICES.join(", "))));
                }
                let active = self.flag("active").ok_or_else(|| error(field, "`service` needs `active = true` (or false)"))?;
                Fact::Service { node: need_node("service")?, service, active }
            }
            "fabric_manager" => {
                let active = match text(field, self.get("fabric_manager").as_deref().unwrap_or_default(), values)?.as_str() {
                    "active" => true,
                    "inactive" => false,
                    other => return Err(error(field, format!("`fabric_manager` must be `active` or `inactive`, not `{other}`"))),
                };
                Fact::Service { node: need_node("fabric_manager")?, service: "nvidia-fabricmanager".to_string(), active }
            }
            "pod" => {
                only_true("running", self.flag("running"))?;
                if self.flag("running").is_none() {
                    return Err(error(field, "`pod` needs `running = true`"));
                }
                Fact::PodRunning { pod: text(field, self.get("pod").as_deref().unwrap_or_default(), values)? }
            }
            "alert" => {
                let name = text(field, self.get("alert").as_deref().unwrap_or_default(), values)?;
                Fact::Alert { name, node: need_node("alert")? }
            }
            "all_reduce_within" => {
                let within = text(field, self.get("all_reduce_within").as_deref().unwrap_or_default(), values)?;
                Fact::AllReduce { within: percentage(field, "all_reduce_within", &within)? }
            }
            "by" => {
                let by = text(field, self.get("by").as_deref().unwrap_or_default(), values)?;
                match crate::model::time::parse_duration(&by) {
                    Some(seconds) if seconds > 0 => Fact::By { seconds },
                    _ => return Err(error(field, format!("`by` must be a time from the lab's start, such as \"30m\" or \"2h\" (at most a week), not `{by}`"))),
                }
            }
            _ => {
                let job = text(field, self.get("job").as_deref().unwrap_or_default(), values)?;
                let about: Vec<&str> = JOB_FACTS.iter().copied().filter(|key| self.get(key).is_some()).collect();
                if let [first, second, ..] = about[..] {
                    return Err(error(field, format!("`{first}` and `{second}` are two facts about the job: give each its own entry")));
                }
                if let Some(tokens) = self.get("context_at_least") {
                    return Ok(Fact::ServesContext { job, tokens: whole(field, &tokens, values)? });
                }
                match (self.get("step_time_within"), self.get("lost_iterations_at_most"), self.get("restarted_within")) {
                    (_, Some(lost), _) => Fact::LostWork { job, at_most: whole(field, &lost, values)? },
                    (_, _, Some(restart)) => {
                        let restart = text(field, &restart, values)?;
                        match crate::model::time::parse_duration(&restart) {
                            Some(seconds) if seconds > 0 => Fact::Restarted { job, seconds },
                            _ => return Err(error(field, format!("`restarted_within` must be a time, such as \"15m\" (at most a week), not `{restart}`"))),
                        }
                    }
                    (within, _, _) => {
                        let within =
                            within.map(|within| text(field, &within, values).and_then(|within| percentage(field, "step_time_within", &within))).transpose()?;
                        Fact::JobProgress { job, within }
                    }
                }
            }
        };
        if let Some(key) = JOB_FACTS.iter().find(|key| self.get(key).is_some()).filter(|_| *kind != "job") {
            return Err(error(field, format!("`{key}` in `{field}` needs `job`")));
        }
        Ok(fact)
    }
}

/// The execution a `task` asks for, as written (any field may hold `{var}`s).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSpec {
    pub program: String,
    /// By name: `true` present, `false` absent, else a pattern over the value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<(String, Option<String>, bool)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operands: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// The statuses a task may ask for.
pub const RUN_STATUSES: &[&str] = &["success", "failure", "any"];

impl RunSpec {
    /// The run with the variant's values. Option names are canonical
    /// already (the authoring checks made them so against the program's
    /// declared flags), so the trainee's page needs no command registry.
    pub fn resolve(&self, field: &'static str, values: &Values) -> Result<RunMatch, ResolveError> {
        let program = text(field, &self.program, values)?;
        let mut options = Vec::new();
        for (name, value, present) in &self.options {
            let matcher = match value {
                Some(pattern) => OptionMatch::Value(text(field, pattern, values)?),
                None if *present => OptionMatch::Present,
                None => OptionMatch::Absent,
            };
            options.push((name.clone(), matcher));
        }
        let status = match self.status.as_deref() {
            None | Some("success") => StatusMatch::Success,
            Some("failure") => StatusMatch::Failure,
            Some("any") => StatusMatch::Any,
            Some(other) => return Err(error(field, format!("`status` must be one of {}, not `{other}`", RUN_STATUSES.join(", ")))),
        };
        Ok(RunMatch {
            program,
            options,
            operands: self.operands.iter().map(|o| text(field, o, values)).collect::<Result<_, _>>()?,
            host: self.host.as_ref().map(|h| text(field, h, values)).transpose()?,
            hosts: self.hosts.iter().map(|h| text(field, h, values)).collect::<Result<_, _>>()?,
            span: self.span.as_ref().map(|n| whole(field, n, values)).transpose()?,
            status,
            output: self.output.as_ref().map(|o| text(field, o, values)).transpose()?,
        })
    }
}

/// What a task's `after` says, as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AfterSpec {
    Run(RunSpec),
    Fact(ExpectSpec),
}

impl AfterSpec {
    pub fn resolve(&self, values: &Values) -> Result<After, ResolveError> {
        match self {
            AfterSpec::Run(run) => run.resolve("after", values).map(After::Run),
            AfterSpec::Fact(fact) => fact.resolve_in("after", values).map(After::Fact),
        }
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
    /// `task`: what the trainee runs, and what must come first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<AfterSpec>,
    /// `state`: what the cluster must show.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<ExpectSpec>,
    /// `handoff`: the record's fields (what each must state) and the
    /// rubric; `expect` holds the facts that close the incident.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<HandoffFieldSpec>,
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
    /// Why an answer that shows before the question is answered is no
    /// leak (the leak check reports it otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leak_waiver: Option<String>,
}

/// A handoff field as written: its name and the facts it must state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HandoffFieldSpec {
    pub name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
    /// (value, tolerance) as written: `"{busbw}"`, `"10%"`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub numbers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    /// No facts declared: an instructor reviews it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub review: bool,
}

/// The actions a handoff field may claim, each with the words that say it.
pub const HANDOFF_ACTIONS: &[(&str, &[&str])] = &[
    ("drain", &["drain", "drained", "draining"]),
    ("resume", &["resume", "resumed", "undrain", "undrained", "back in service", "returned to service"]),
    ("reset", &["reset", "gpu reset"]),
    ("repair", &["repair", "repaired", "reseat", "reseated", "replace", "replaced"]),
    ("restart", &["restart", "restarted"]),
    ("cancel", &["cancel", "cancelled", "scancel"]),
    ("relaunch", &["relaunch", "relaunched", "resubmit", "resubmitted", "requeue", "requeued"]),
];

/// The tolerance a handoff number has unless it says.
const HANDOFF_TOLERANCE: Tolerance = Tolerance::Relative(0.10);

impl HandoffFieldSpec {
    fn resolve(&self, values: &Values, cluster: &ClusterConfig) -> Result<HandoffField, ResolveError> {
        let states: Vec<String> = self.states.iter().map(|s| text("fields", s, values)).collect::<Result<_, _>>()?;
        let mut numbers = Vec::new();
        for (value, tolerance) in &self.numbers {
            let written = text("fields", value, values)?;
            let number = written
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .ok_or_else(|| error("fields", format!("a handoff number must be a number, not `{written}`")))?;
            let tolerance = if tolerance.is_empty() {
                HANDOFF_TOLERANCE
            } else {
                parse_tolerance(tolerance).ok_or_else(|| error("fields", format!("tolerance `{tolerance}` must be a number or a percentage")))?
            };
            numbers.push((number, tolerance));
        }
        for action in &self.actions {
            if !HANDOFF_ACTIONS.iter().any(|(name, _)| name == action) {
                let known: Vec<&str> = HANDOFF_ACTIONS.iter().map(|(name, _)| *name).collect();
                return Err(error("fields", format!("`{action}` is not an action a handoff can claim; use one of {}", known.join(", "))));
            }
        }
        // The cluster's other names of each kind a field states.
        let mut others = Vec::new();
        let hcas = cluster.hcas.unwrap_or(cluster.preset.hca_count());
        let gpus = cluster.preset.gpu_buses.len();
        let kinds: [Vec<String>; 3] =
            [cluster.hostnames.clone(), (0..hcas).map(|h| format!("mlx5_{h}")).collect(), (0..gpus).map(|g| format!("GPU {g}")).collect()];
        for names in &kinds {
            if states.iter().any(|s| names.iter().any(|n| n.eq_ignore_ascii_case(s))) {
                others.extend(names.iter().filter(|n| !states.iter().any(|s| s.eq_ignore_ascii_case(n))).cloned());
            }
        }
        let review = self.review || (states.is_empty() && numbers.is_empty() && self.actions.is_empty());
        Ok(HandoffField { name: text("fields", &self.name, values)?, states, numbers, actions: self.actions.clone(), others, review })
    }
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
    pub fn resolve(&self, values: &Values, cluster: &ClusterConfig, policy: &Policy) -> Result<Question, ResolveError> {
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
                        error("tolerance", format!("question `{qid}`: tolerance `{tolerance}` must be a number (\"5\") or a percentage (\"10%\")"))
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
                QuestionKind::Entity { answer: position(&choices, &answer_text("a string")?)?, entity, choices, aliases: Vec::new() }
            }
            "task" => {
                let run = self.run.as_ref().ok_or_else(|| error("program", format!("question `{qid}`: a task question needs `program`")))?;
                QuestionKind::Task { run: run.resolve("program", values)?, after: self.after.as_ref().map(|a| a.resolve(values)).transpose()? }
            }
            "state" => {
                if self.expect.is_empty() {
                    return Err(error("expect", format!("question `{qid}`: a state question needs `expect`")));
                }
                QuestionKind::State { expect: self.expect.iter().map(|e| e.resolve(values)).collect::<Result<_, _>>()? }
            }
            "handoff" => QuestionKind::Handoff {
                fields: if self.fields.is_empty() {
                    HANDOFF_FIELDS.iter().map(|f| HandoffField { name: f.to_string(), review: true, ..HandoffField::default() }).collect()
                } else {
                    self.fields.iter().map(|f| f.resolve(values, cluster)).collect::<Result<_, _>>()?
                },
                rubric: self.rubric.iter().map(|r| text("rubric", r, values)).collect::<Result<_, _>>()?,
                closed_when: self.expect.iter().map(|e| e.resolve(values)).collect::<Result<_, _>>()?,
            },
            other => return Err(error("type", format!("unknown question type `{other}`"))),
        };
        let feedback = self
            .feedback
            .iter()
            .map(|(response, why)| Ok((text("feedback", response, values)?, doc("feedback", why, values)?)))
            .collect::<Result<_, ResolveError>>()?;
        // The lab's policy limits guessing: a question's own `attempts` wins.
        let attempts = match &kind {
            QuestionKind::Task { .. } | QuestionKind::State { .. } => self.attempts,
            _ => Some(self.attempts.unwrap_or(match &kind {
                QuestionKind::Choice { choices, .. } => policy.attempts.min(choices.len().saturating_sub(2).max(1) as u32),
                QuestionKind::Number { .. } | QuestionKind::Text { .. } => policy.number_attempts,
                QuestionKind::Handoff { .. } => 2,
                _ => policy.attempts,
            })),
        };
        Ok(Question {
            id: qid.clone(),
            prompt: doc("prompt", &self.prompt, values)?,
            kind,
            points: self.points,
            hints: self.hints.iter().map(|hint| doc("hints", hint, values)).collect::<Result<_, _>>()?,
            explanation: doc("explanation", &self.explanation, values)?,
            attempts: attempts.map(|a| a.max(1)),
            retry: self.retry,
            policy: *policy,
            feedback,
            seed: 0,
        })
    }
}
