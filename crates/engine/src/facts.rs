//! Facts about the cluster: what a lab expects the model to show once the
//! trainee has done the work (a node drained, a GPU healthy again, a link
//! back at full rate, a diagnostic passing, a job back at its pace).
//!
//! A fact is judged on the model, never on what was typed; each judgement
//! says what it observed, so that a failing `clusterlab test` or a "not
//! yet" names the expectation and what the cluster shows instead.

use std::cell::OnceCell;

use serde::{Deserialize, Serialize};

use crate::model::fault::Fault;
use crate::model::node::{ServiceState, SlurmShown};
use crate::model::Cluster;
use crate::perf::collective::all_reduce_busbw;

/// A fact a lab expects of the cluster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Fact {
    /// Slurm shows `node` in `state` (`idle`, `allocated`, `draining`,
    /// `drained`, `down`, or several joined by `|`), with a reason
    /// matching `reason` (a bash pattern).
    Slurm { node: String, state: String, reason: Option<String> },
    /// Kubernetes has `node` cordoned (unschedulable), or not.
    Kubernetes { node: String, cordoned: bool },
    /// Slurm can place jobs on `node`: idle or allocated, not drained or down.
    InService { node: String },
    /// Every fault (on `node`, when given) has struck and been repaired.
    Repaired { node: Option<String> },
    /// GPU `gpu` of `node` (every GPU of it when None) is healthy: on the
    /// bus and answering, no remap pending or failed, nothing waiting for a
    /// reset, no uncorrectable ECC error since the last reset.
    GpuHealthy { node: String, gpu: Option<u32> },
    /// `dcgmi diag -r LEVEL` on `node` passes now.
    DiagPasses { node: String, level: u8 },
    /// HCA `hca` of `node` is Active and LinkUp at `rate` Gb/s (its full
    /// rate when None).
    HcaLink { node: String, hca: String, rate: Option<u32> },
    /// The PCIe link of a GPU (or an HCA) of `node` runs at its full
    /// generation and width.
    PcieFull { node: String, device: Device },
    /// A service on `node` is active (or not).
    Service { node: String, service: String, active: bool },
    /// `all_reduce_perf` over every node reaches `1 - within` of the
    /// healthy cluster's bus bandwidth at large messages.
    AllReduce { within: f64 },
    /// The lab's job `job` runs and makes progress (an iteration done since
    /// it last started), its step time within `within` of the healthy
    /// cluster's when given.
    JobProgress { job: String, within: Option<f64> },
    /// Every run of the job that was stopped (cancelled or killed) lost at
    /// most `at_most` iterations since its last saved checkpoint.
    LostWork { job: String, at_most: u32 },
    /// The job's latest run is a server that takes requests of at least
    /// `tokens` tokens (its `--max-model-len`).
    ServesContext { job: String, tokens: u32 },
    /// After each stop (a cancel or a failure), the job's next run reached
    /// its first step within `seconds`: the restart time an operator keeps
    /// (queue wait, start-up, checkpoint load). A job never stopped has
    /// not restarted.
    Restarted { job: String, seconds: i64 },
    /// An alerting rule named `name`, loaded by the cluster's Prometheus,
    /// has an alert (pending or firing) for `node` now (a label names the
    /// node), and its expression finds nothing on the healthy cluster
    /// running the lab's jobs at the same instant: it fires for the fault
    /// and stays quiet without it.
    Alert { name: String, node: String },
    /// The pod `pod` (in `default`) is Running and ready, on GPUs that answer.
    PodRunning { pod: String },
    /// The lab's clock is at most `seconds` past the lab's start: with the
    /// other facts of an `expect`, a deadline on the simulated clock.
    By { seconds: i64 },
}

/// A device with a PCIe link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Device {
    Gpu(u32),
    Hca(String),
}

/// The services a node runs that facts may name: Fabric Manager and the
/// node image's units (`model::service::UNITS`), without `.service`.
pub const SERVICES: &[&str] = &[
    "nvidia-fabricmanager",
    "containerd",
    "cron",
    "dcgm-exporter",
    "kubelet",
    "nvidia-dcgm",
    "nvidia-persistenced",
    "prometheus-node-exporter",
    "rsyslog",
    "slurmd",
    "ssh",
    "systemd-journald",
    "systemd-logind",
];

/// What a fact's judgement saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub holds: bool,
    /// What the cluster shows, in words (`gpu-002 is drained`).
    pub seen: String,
}

fn seen(holds: bool, seen: impl Into<String>) -> Observed {
    Observed { holds, seen: seen.into() }
}

/// The healthy cluster's all_reduce bus bandwidth, worked out once: a
/// large cluster costs a build of every node.
#[derive(Default)]
pub struct Baseline(OnceCell<Option<f64>>);

impl Baseline {
    pub fn busbw(&self, cluster: &Cluster) -> Option<f64> {
        *self.0.get_or_init(|| all_reduce_busbw(&cluster.healthy()))
    }
}

/// A span of the simulated clock as an operator says it: `25 min`, `1 h 05 min`.
pub(crate) fn clock_span(seconds: i64) -> String {
    let minutes = seconds.max(0) / 60;
    match (minutes / 60, minutes % 60) {
        (0, minutes) => format!("{minutes} min"),
        (hours, 0) => format!("{hours} h"),
        (hours, minutes) => format!("{hours} h {minutes:02} min"),
    }
}

fn percent(fraction: f64) -> String {
    format!("{}%", (fraction * 1000.0).round() / 10.0)
}

impl Fact {
    /// The fact in words, as an expectation.
    /// What the fact is about, naming no node, GPU or port: what a "Not
    /// yet" may say of it before the trainee has answered anything.
    pub fn topic(&self) -> &'static str {
        match self {
            Fact::Slurm { .. } => "a node's state in Slurm",
            Fact::InService { .. } => "a node back in service",
            Fact::Kubernetes { .. } => "a node's mark in Kubernetes",
            Fact::Repaired { .. } => "the repair of what was wrong",
            Fact::GpuHealthy { .. } => "a GPU's health",
            Fact::DiagPasses { .. } => "a diagnostic that passes",
            Fact::HcaLink { .. } => "a link's state and rate",
            Fact::PcieFull { .. } => "a PCIe link's speed and width",
            Fact::Service { .. } => "a service's state",
            Fact::AllReduce { .. } => "the collectives' bandwidth",
            Fact::JobProgress { within: None, .. } => "the job running",
            Fact::JobProgress { .. } => "the job's pace",
            Fact::LostWork { .. } => "the work a stop lost",
            Fact::ServesContext { .. } => "the requests the server takes",
            Fact::Restarted { .. } => "the restart time",
            Fact::By { .. } => "the deadline",
            Fact::Alert { .. } => "an alerting rule",
            Fact::PodRunning { .. } => "a pod running",
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Fact::Slurm { node, state, reason } => {
                let state = state.replace('|', " or ");
                match reason.as_deref() {
                    Some("?*" | "*?") => format!("{node} {state} in Slurm, with a reason"),
                    Some(reason) => format!("{node} {state} in Slurm, its reason matching `{reason}`"),
                    None => format!("{node} {state} in Slurm"),
                }
            }
            Fact::InService { node } => format!("{node} in service in Slurm (idle or allocated)"),
            Fact::Kubernetes { node, cordoned: true } => format!("{node} cordoned in Kubernetes"),
            Fact::Kubernetes { node, cordoned: false } => format!("{node} schedulable in Kubernetes"),
            Fact::Repaired { node: Some(node) } => format!("every fault on {node} repaired"),
            Fact::Repaired { node: None } => "every fault repaired".to_string(),
            Fact::GpuHealthy { node, gpu: Some(gpu) } => format!("GPU {gpu} of {node} healthy"),
            Fact::GpuHealthy { node, gpu: None } => format!("every GPU of {node} healthy"),
            Fact::DiagPasses { node, level } => format!("`dcgmi diag -r {level}` passing on {node}"),
            Fact::HcaLink { node, hca, rate: Some(rate) } => format!("{hca} of {node} Active at {rate} Gb/s"),
            Fact::HcaLink { node, hca, rate: None } => format!("{hca} of {node} Active at its full rate"),
            Fact::PcieFull { node, device: Device::Gpu(gpu) } => format!("the PCIe link of GPU {gpu} of {node} at full speed and width"),
            Fact::PcieFull { node, device: Device::Hca(hca) } => format!("the PCIe link of {hca} of {node} at full speed and width"),
            Fact::Service { node, service, active: true } => format!("{service} active on {node}"),
            Fact::Service { node, service, active: false } => format!("{service} stopped on {node}"),
            Fact::AllReduce { within } => format!("all_reduce_perf over every node within {} of the healthy cluster's bus bandwidth", percent(*within)),
            Fact::JobProgress { job, within: Some(within) } => format!("the job {job} making progress within {} of its baseline step time", percent(*within)),
            Fact::JobProgress { job, within: None } => format!("the job {job} making progress"),
            Fact::LostWork { job, at_most } => format!("the job {job} stopped with at most {at_most} iterations lost since its last checkpoint"),
            Fact::ServesContext { job, tokens } => format!("the job {job} serving requests of up to {tokens} tokens"),
            Fact::Restarted { job, seconds } => format!("the job {job} training again within {} of each stop", clock_span(*seconds)),
            Fact::By { seconds } => format!("all this by {} into the lab", clock_span(*seconds)),
            Fact::Alert { name, node } => format!("the alerting rule {name} loaded, active for {node} and quiet on the healthy cluster"),
            Fact::PodRunning { pod } => format!("the pod {pod} Running and ready"),
        }
    }

    /// Whether the cluster shows the fact, and what it shows.
    pub fn observe(&self, cluster: &Cluster, baseline: &Baseline) -> Observed {
        let no_node = |node: &str| seen(false, format!("{node} is not a node of this lab"));
        match self {
            Fact::Slurm { node, state, reason } => {
                let Some(found) = cluster.node(node) else { return no_node(node) };
                let shown = SlurmShown::of(found).long();
                let given = found.scheduler_reason.as_deref();
                let reason_ok = reason.as_deref().is_none_or(|pattern| given.is_some_and(|given| crate::pattern::matches(pattern, given)));
                let words = match given {
                    Some(given) if shown != "idle" && shown != "allocated" => format!("{node} is {shown} (reason: {given})"),
                    _ => format!("{node} is {shown}"),
                };
                seen(state.split('|').any(|one| one == shown) && reason_ok, words)
            }
            Fact::Kubernetes { node, cordoned } => {
                let Some(found) = cluster.node(node) else { return no_node(node) };
                let is = found.cordoned_since.is_some();
                seen(is == *cordoned, format!("{node} is {} in Kubernetes", if is { "cordoned" } else { "schedulable" }))
            }
            Fact::InService { node } => {
                let Some(found) = cluster.node(node) else { return no_node(node) };
                let shown = SlurmShown::of(found);
                seen(matches!(shown, SlurmShown::Idle | SlurmShown::Allocated) && found.up(cluster.now), format!("{node} is {}", shown.long()))
            }
            Fact::Repaired { node } => {
                let counts = |fault: &Fault| node.as_deref().is_none_or(|node| fault.node() == node) && !fault.nothing_to_repair();
                let struck =
                    cluster.injected.iter().filter(|injected| counts(&injected.fault) && !injected.repaired).map(|injected| describe_fault(&injected.fault));
                // A fault still to strike is not behind the trainee either: a
                // lab judged at the end of a shift must not pass before it.
                let to_come =
                    cluster.scheduled.iter().filter(|(_, fault, _)| counts(fault)).map(|(_, fault, _)| format!("{} (still to strike)", describe_fault(fault)));
                let open: Vec<String> = struck.chain(to_come).collect();
                if open.is_empty() {
                    seen(true, "every fault repaired")
                } else {
                    seen(false, format!("not repaired: {}", open.join("; ")))
                }
            }
            Fact::GpuHealthy { node, gpu } => {
                let Some(found) = cluster.node(node) else { return no_node(node) };
                let gpus: Vec<_> = found.gpus.iter().filter(|g| gpu.is_none_or(|index| g.index == index)).collect();
                if gpus.is_empty() {
                    return seen(false, format!("{node} has no GPU {}", gpu.map_or(String::new(), |g| g.to_string())));
                }
                let problems: Vec<String> = gpus.iter().filter_map(|g| gpu_problem(g).map(|problem| format!("GPU {}: {problem}", g.index))).collect();
                if problems.is_empty() {
                    seen(true, "healthy")
                } else {
                    seen(false, problems.join("; "))
                }
            }
            Fact::DiagPasses { node, level } => {
                let errors = crate::commands::gpu::dcgmi::diag_errors(cluster, node, *level);
                match errors.first() {
                    None => seen(true, format!("`dcgmi diag -r {level}` passes on {node}")),
                    Some(first) => seen(false, format!("`dcgmi diag -r {level}` on {node} fails: {first}")),
                }
            }
            Fact::HcaLink { node, hca, rate } => {
                let Some(found) = cluster.node(node) else { return no_node(node) };
                let Some(device) = found.hca(hca) else { return seen(false, format!("{node} has no {hca}")) };
                let port = &device.port;
                let full = port.max_lane_speed.gbps() * u32::from(port.max_width);
                let wanted = rate.unwrap_or(full);
                let now = port.rate_gbps();
                let words = format!("{hca} of {node} is {} ({}) at {now} Gb/s", port.state.label(), port.phys_state.label());
                seen(port.is_up() && now >= wanted, words)
            }
            Fact::PcieFull { node, device } => {
                let Some(found) = cluster.node(node) else { return no_node(node) };
                let (name, link) = match device {
                    Device::Gpu(index) => (format!("GPU {index}"), found.gpu(*index).map(|g| g.pcie)),
                    Device::Hca(name) => (name.clone(), found.hca(name).map(|h| h.pcie)),
                };
                let Some(link) = link else { return seen(false, format!("{node} has no {name}")) };
                let words = format!("{name} of {node} runs PCIe Gen{} x{} (capable of Gen{} x{})", link.gen, link.width, link.max_gen, link.max_width);
                seen(!link.is_degraded(), words)
            }
            Fact::Service { node, service, active } => {
                let Some(found) = cluster.node(node) else { return no_node(node) };
                let state = match service.as_str() {
                    "nvidia-fabricmanager" => found.fabric_manager,
                    other => match crate::model::service::state_of(found, &format!("{other}.service")) {
                        Some((state, _)) => state,
                        None => return seen(false, format!("{other} is not a service this lab models")),
                    },
                };
                let word = match state {
                    ServiceState::Active => "active",
                    ServiceState::Failed => "failed",
                    ServiceState::Inactive => "inactive",
                };
                seen((state == ServiceState::Active) == *active && found.up(cluster.now), format!("{service} is {word} on {node}"))
            }
            Fact::AllReduce { within } => match (all_reduce_busbw(cluster), baseline.busbw(cluster)) {
                (Some(now), Some(healthy)) => {
                    let words = format!("all_reduce_perf reaches {now:.1} GB/s bus bandwidth against {healthy:.1} GB/s healthy");
                    seen(now >= healthy * (1.0 - within), words)
                }
                _ => seen(false, "all_reduce_perf cannot run over every node"),
            },
            Fact::JobProgress { job, within } => observe_job(cluster, job, *within),
            Fact::LostWork { job, at_most } => observe_lost_work(cluster, job, *at_most),
            Fact::ServesContext { job, tokens } => observe_context(cluster, job, *tokens),
            Fact::Restarted { job, seconds } => observe_restart(cluster, job, *seconds),
            Fact::By { seconds } => {
                let elapsed = cluster.now - cluster.started_at();
                seen(elapsed <= *seconds, format!("the lab's clock is {} past its start", clock_span(elapsed)))
            }
            Fact::Alert { name, node } => {
                let (holds, words) = crate::commands::monitoring::rules::judge(cluster, name, node);
                seen(holds, words)
            }
            Fact::PodRunning { pod } => observe_pod(cluster, pod),
        }
    }

    /// Whether the cluster shows the fact.
    pub fn holds(&self, cluster: &Cluster, baseline: &Baseline) -> bool {
        self.observe(cluster, baseline).holds
    }

    /// The node the fact is about, if one.
    pub fn node(&self) -> Option<&str> {
        match self {
            Fact::Slurm { node, .. }
            | Fact::InService { node }
            | Fact::Kubernetes { node, .. }
            | Fact::GpuHealthy { node, .. }
            | Fact::DiagPasses { node, .. }
            | Fact::HcaLink { node, .. }
            | Fact::PcieFull { node, .. }
            | Fact::Service { node, .. }
            | Fact::Alert { node, .. } => Some(node),
            Fact::Repaired { node } => node.as_deref(),
            Fact::AllReduce { .. }
            | Fact::JobProgress { .. }
            | Fact::LostWork { .. }
            | Fact::ServesContext { .. }
            | Fact::Restarted { .. }
            | Fact::PodRunning { .. }
            | Fact::By { .. } => None,
        }
    }
}

/// What keeps a GPU from being healthy, if anything.
fn gpu_problem(gpu: &crate::model::gpu::Gpu) -> Option<String> {
    use crate::model::gpu::GpuHealth;
    match gpu.health {
        GpuHealth::FallenOffBus => return Some("fallen off the bus".to_string()),
        GpuHealth::Unresponsive => return Some("not responding".to_string()),
        GpuHealth::Healthy => {}
    }
    if gpu.row_remap.pending {
        return Some("row remap pending".to_string());
    }
    if gpu.row_remap.failure {
        return Some("row remapping failed".to_string());
    }
    if gpu.needs_reset {
        return Some("waiting for a reset".to_string());
    }
    if gpu.ecc.volatile_uncorrected > 0 {
        return Some(format!("{} volatile uncorrectable ECC errors", gpu.ecc.volatile_uncorrected));
    }
    None
}

/// A fault in words, for an observation.
pub fn describe_fault(fault: &Fault) -> String {
    match fault.target() {
        target if target.is_empty() => format!("{} on {}", fault.kind(), fault.node()),
        target => format!("{} on {} {target}", fault.kind(), fault.node()),
    }
}

/// The work each stopped run of `job` lost: the iterations it finished
/// after its last checkpoint saved in full (a save cut short counts for
/// nothing). Holds when every stopped run lost at most `at_most`; a job
/// that was never stopped lost nothing, but a lab asks this after a stop.
fn observe_lost_work(cluster: &Cluster, job: &str, at_most: u32) -> Observed {
    use crate::model::workload::{End, Event};
    let runs: Vec<_> = cluster.workloads.iter().filter(|w| w.spec.name == job).collect();
    if runs.is_empty() {
        return seen(false, format!("no job {job} in this lab"));
    }
    let mut worst: Option<(i64, u32)> = None;
    for run in runs {
        let Some((ended, End::Cancelled | End::Failed { .. })) = run.end.as_ref() else { continue };
        let reached = run.iteration_at(*ended);
        let saved = run
            .timeline(*ended)
            .iter()
            .filter_map(|event| match event {
                Event::Saved { iteration, seconds: Some(_), .. } => Some(*iteration),
                _ => None,
            })
            .max()
            .unwrap_or(run.resumed_from);
        let lost = reached.saturating_sub(saved);
        if worst.is_none_or(|(_, most)| lost > most) {
            worst = Some((run.job_id, lost));
        }
    }
    match worst {
        None => seen(false, format!("job {job} has not been stopped")),
        Some((id, lost)) => seen(lost <= at_most, format!("job {id} ({job}) stopped {lost} iterations past its last checkpoint")),
    }
}

/// Each stop of `job` and the restart after it: job end to the next run's
/// first step. Holds when there was a stop and every restart since came
/// within `seconds` (a job still not training again does not hold).
fn observe_restart(cluster: &Cluster, job: &str, seconds: i64) -> Observed {
    let restarts = crate::model::workload::restarts(cluster.workloads.iter().filter(|w| w.spec.name == job), cluster.now);
    // The first restart that does not hold, else the slowest.
    let late = restarts.iter().find(|restart| restart.resumed.is_none() || restart.seconds > seconds);
    let Some(shown) = late.or_else(|| restarts.iter().max_by_key(|restart| restart.seconds)) else {
        return seen(false, format!("job {job} has not been stopped"));
    };
    let words = match shown.resumed {
        Some(id) => format!("job {id} ({job}) trained again {} after job {} ended", clock_span(shown.seconds), shown.stopped),
        None => format!("job {job} has not trained again in the {} since job {} ended", clock_span(shown.seconds), shown.stopped),
    };
    seen(late.is_none(), words)
}

/// Whether the job's latest run is a server that takes requests as long as `tokens`.
fn observe_pod(cluster: &Cluster, name: &str) -> Observed {
    let Some(pod) = cluster.pod("default", name) else {
        return seen(false, format!("no pod {name} in the default namespace"));
    };
    let state = cluster.pod_state(pod);
    let Some(binding) = pod.binding.as_ref() else {
        return seen(false, format!("pod {name} is Pending: no node can take it"));
    };
    // Running, and not about to fail: its GPUs answer.
    let gpus_ok = cluster.node(&binding.node).is_some_and(|node| binding.gpus.iter().all(|g| node.gpu(*g).is_some_and(crate::model::Gpu::works)));
    let running = state.status == "Running" && state.ready && gpus_ok;
    // The lab's pod as it asked: a request cut down to fit does not count.
    let asked = cluster.lab_pods().iter().find(|p| p.spec.name == name).map_or(0, |p| p.spec.gpus);
    if running && pod.spec.gpus < asked {
        return seen(false, format!("pod {name} runs with {} GPUs, not the {asked} it asks for", pod.spec.gpus));
    }
    seen(running, format!("pod {name} is {} on {}", state.status, binding.node))
}

fn observe_context(cluster: &Cluster, job: &str, tokens: u32) -> Observed {
    let Some(workload) = cluster.workloads.iter().rev().find(|w| w.spec.name == job) else {
        return seen(false, format!("no job {job} in this lab"));
    };
    if workload.spec.load.is_none() {
        return seen(false, format!("job {job} is not a server"));
    }
    let longest = workload.spec.seq_len;
    seen(longest >= tokens, format!("job {} ({job}) takes requests of up to {longest} tokens", workload.job_id))
}

fn observe_job(cluster: &Cluster, job: &str, within: Option<f64>) -> Observed {
    // The job's latest run: an earlier one still waiting does not count.
    let Some(workload) = cluster.workloads.iter().rev().find(|w| w.spec.name == job) else {
        return seen(false, format!("no job {job} in this lab"));
    };
    let now = cluster.now;
    if !workload.running_at(now) {
        let state = workload.job().state_at(now).long();
        return seen(false, format!("job {} ({job}) is {state}", workload.job_id));
    }
    let serving = workload.spec.load.is_some();
    if serving {
        // A server makes progress when it takes requests and keeps up with them.
        match workload.server_at(now as f64) {
            None => return seen(false, format!("job {job} is RUNNING but its server does not take requests yet")),
            Some((state, _)) if state.waiting >= 1.0 => {
                return seen(false, format!("job {job} is RUNNING but cannot keep up: {:.0} requests wait", state.waiting));
            }
            Some(_) => {}
        }
    }
    if !serving && workload.iteration_at(now) <= workload.resumed_from {
        return seen(false, format!("job {job} is RUNNING but has not finished an iteration since it started"));
    }
    let pace = match workload.segments.last() {
        Some((_, Ok(pace))) => *pace,
        _ => return seen(false, format!("job {job} is RUNNING and makes no progress")),
    };
    // A server's step is the time between a request's tokens.
    let unit = if serving { "between tokens" } else { "a step" };
    let Some(within) = within else { return seen(true, format!("job {job} is RUNNING at {:.0} ms {unit}", pace.step_ms)) };
    match crate::perf::workload_pace(&cluster.healthy(), &workload.spec, cluster.storage_gb_per_s()) {
        Ok(healthy) => {
            let words = format!("job {job} is RUNNING at {:.0} ms {unit} against {:.0} ms healthy", pace.step_ms, healthy.step_ms);
            seen(pace.step_ms <= healthy.step_ms * (1.0 + within), words)
        }
        Err(_) => seen(false, format!("job {job} has no healthy baseline")),
    }
}

/// The facts and output patterns a lab watches as programs run, by id:
/// what an execution records as holding when it started, and as matching
/// its output ([`crate::commands::execution::Observer`]).
#[derive(Default)]
pub struct Watch {
    /// (id, the fact, the program whose runs it must precede).
    pub facts: Vec<(String, Fact, String)>,
    pub outputs: Vec<(String, String)>,
    baseline: Baseline,
}

impl Watch {
    pub fn new(facts: Vec<(String, Fact, String)>, outputs: Vec<(String, String)>) -> Watch {
        Watch { facts, outputs, baseline: Baseline::default() }
    }

    pub fn is_empty(&self) -> bool {
        self.facts.is_empty() && self.outputs.is_empty()
    }
}

impl crate::commands::execution::Observer for Watch {
    fn facts(&self, cluster: &Cluster, program: &str) -> Vec<String> {
        self.facts.iter().filter(|(_, fact, wanted)| wanted == program && fact.holds(cluster, &self.baseline)).map(|(id, _, _)| id.clone()).collect()
    }

    fn outputs(&self, stdout: &str) -> Vec<String> {
        self.outputs.iter().filter(|(_, pattern)| crate::pattern::matches(pattern, stdout)).map(|(id, _)| id.clone()).collect()
    }
}

#[cfg(test)]
mod service_names {
    #[test]
    fn facts_name_every_unit_of_the_image() {
        let units: Vec<String> = crate::model::service::UNITS.iter().map(|unit| unit.name.trim_end_matches(".service").to_string()).collect();
        assert_eq!(super::SERVICES[1..], units[..]);
    }
}
