//! Workload pods: what `kubectl apply -f` creates, the scheduler binds to a
//! node with the GPUs it asks for, and the kubelet runs, restarts on its
//! back-off and reports. A pod's record holds only what the API server
//! stores (its spec, its creation, its binding); how its container fared
//! is derived from the model's history each time it is read, so a GPU that
//! fails under it crashes it in every view at the same instant.
//!
//! The scheduler is kube-scheduler's filter stage for what the model knows:
//! the node Ready, no taint the pod does not tolerate (a cordon's
//! `node.kubernetes.io/unschedulable`), its node selector and `nodeName`,
//! and enough `nvidia.com/gpu` left of the node's allocatable. Among the
//! nodes that fit it takes the first by name (the real scheduler scores
//! CPU and memory, which these pods do not ask for, and breaks ties at
//! random). A pending pod is tried again after every change to the
//! cluster, as the scheduler retries on cluster events.
//!
//! The device plugin (the GPU Operator's) offers a node's GPUs: while any
//! GPU of the node is off the bus, unresponsive or awaiting a reset, the
//! plugin cannot start (`kubectl` shows it in `CrashLoopBackOff`) and the
//! kubelet marks the resource unhealthy: the node's allocatable
//! `nvidia.com/gpu` is 0 (its capacity follows once the plugin has been
//! gone for the kubelet's 5-minute grace period).

use serde::{Deserialize, Serialize};
use std::rc::Rc;

use super::node::Node;
use super::time::EpochSeconds;
use super::{Cluster, GpuHealth};
use crate::rng::Rng;

/// The kubelet's restart back-off: 10 s, doubling, at most 5 minutes; a
/// container that ran 10 minutes resets it.
const BACK_OFF_START_S: i64 = 10;
const BACK_OFF_MAX_S: i64 = 300;
const BACK_OFF_RESET_S: i64 = 600;
/// How long a device plugin may be gone before the kubelet drops its
/// resource from the node's capacity (`endpointStopGracePeriod`).
pub const PLUGIN_GRACE_S: i64 = 300;
/// How long after a node boots the GPU Operator's device plugin registers
/// its GPUs with the kubelet (the plugin's pod starts then).
pub const PLUGIN_AFTER_BOOT_S: i64 = 322;
/// What a pod's training process holds of each GPU's memory, as a share.
const WORK_MEMORY_SHARE: f64 = 0.82;
/// How many container runs a pod's history follows: a day of 5-minute
/// back-offs, and then some.
const MAX_RUNS: usize = 1_000;
/// How long after a node boots its kubelet runs containers again.
const KUBELET_AFTER_BOOT_S: i64 = 45;
/// How long an exited container shows its exit before the kubelet's next
/// sync puts it in its back-off.
const SYNC_S: i64 = 2;

/// Whether the kubelet starts a container again after it exited with `code`.
fn restarts(policy: RestartPolicy, code: i32) -> bool {
    match policy {
        RestartPolicy::Always => true,
        RestartPolicy::OnFailure => code != 0,
        RestartPolicy::Never => false,
    }
}

/// A container's restart policy (`spec.restartPolicy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RestartPolicy {
    #[default]
    Always,
    OnFailure,
    Never,
}

impl RestartPolicy {
    pub fn name(self) -> &'static str {
        match self {
            RestartPolicy::Always => "Always",
            RestartPolicy::OnFailure => "OnFailure",
            RestartPolicy::Never => "Never",
        }
    }
}

/// A toleration (`spec.tolerations[]`): `Exists` when `value` is None.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toleration {
    /// Empty with `Exists`: every taint.
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Empty: every effect.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub effect: String,
}

impl Toleration {
    pub fn tolerates(&self, key: &str, effect: &str) -> bool {
        (self.key.is_empty() || self.key == key) && (self.effect.is_empty() || self.effect == effect) && self.value.as_deref().is_none_or(str::is_empty)
    }
}

/// A pod as its manifest gives it: one container.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodSpec {
    pub name: String,
    #[serde(default = "default_namespace")]
    pub namespace: String,
    pub container: String,
    pub image: String,
    /// `command` then `args`: what the container runs.
    pub command: Vec<String>,
    /// `metadata.labels`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<(String, String)>,
    /// `resources.limits["nvidia.com/gpu"]` (the request follows the limit).
    pub gpus: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_selector: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    #[serde(default)]
    pub restart_policy: RestartPolicy,
}

fn default_namespace() -> String {
    "default".to_string()
}

/// How long before the lab its running pods were applied: before any fault
/// that struck before the lab (at most 4 hours before).
pub const LAB_PODS_BEFORE_S: i64 = 5 * 3600;

/// A lab's pod (`[[pods]]`): its manifest is `~/NAME.yaml`; a running one
/// was applied five hours before the lab began.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabPod {
    pub spec: PodSpec,
    #[serde(default)]
    pub running: bool,
}

impl LabPod {
    /// Where the lab leaves the pod's manifest.
    pub fn manifest_path(&self) -> String {
        format!("{}/{}.yaml", super::node::HOME, self.spec.name)
    }
}

/// Where the scheduler put a pod, and the GPUs the kubelet gave it.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub node: String,
    pub at: EpochSeconds,
    pub gpus: Vec<u32>,
}

/// A pod the API server holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Pod {
    pub spec: PodSpec,
    pub created: EpochSeconds,
    pub binding: Option<Binding>,
}

/// What a container's program does, read from its command line.
#[derive(Clone, Debug, PartialEq)]
pub enum Program {
    /// `sleep N` (None: `sleep infinity`, `tail -f /dev/null`): no GPU work.
    Sleep(Option<i64>),
    /// `nvidia-smi -L`: lists the container's GPUs and exits.
    ListGpus,
    /// `python -c` printing `torch.cuda.device_count()` or `is_available()`.
    CountGpus { available: bool },
    /// `echo ...`: prints its words and exits.
    Echo(String),
    /// Training or serving code (`python`, `torchrun`, ...): runs on its
    /// GPUs until one fails.
    GpuWork,
    /// Anything else: runs and exits 0, printing nothing.
    Other,
}

impl Program {
    pub fn of(command: &[String]) -> Program {
        // `sh -c "..."` / `bash -c "..."`: the script's words.
        let words: Vec<String> = match command {
            [shell, flag, script, ..] if matches!(shell.rsplit('/').next(), Some("sh" | "bash")) && flag == "-c" => {
                script.split_whitespace().map(str::to_string).collect()
            }
            _ => command.to_vec(),
        };
        let Some(first) = words.first() else { return Program::Other };
        let program = first.rsplit('/').next().unwrap_or(first);
        match program {
            "sleep" => Program::Sleep(words.get(1).and_then(|w| w.parse::<i64>().ok()).map(|s| s.clamp(0, 10 * 365 * 86_400))),
            "tail" if words.iter().any(|w| w == "-f") => Program::Sleep(None),
            "nvidia-smi" if words.iter().any(|w| w == "-L" || w == "--list-gpus") => Program::ListGpus,
            "echo" => Program::Echo(words[1..].join(" ")),
            "python" | "python3" if words.get(1).is_some_and(|w| w == "-c") => {
                let code = words[2..].join(" ");
                if code.contains("device_count") {
                    Program::CountGpus { available: false }
                } else if code.contains("is_available") {
                    Program::CountGpus { available: true }
                } else {
                    Program::Other
                }
            }
            "python" | "python3" | "torchrun" | "deepspeed" | "accelerate" | "vllm" => Program::GpuWork,
            _ => Program::Other,
        }
    }

    /// Whether the program opens its GPUs (and so fails with them).
    pub fn uses_gpus(&self) -> bool {
        matches!(self, Program::GpuWork | Program::CountGpus { .. } | Program::ListGpus)
    }
}

/// Why a container run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It finished its work.
    Done,
    /// Its first CUDA call failed: a GPU it was given was bad when it started.
    GpuAtStart,
    /// A GPU failed under it while it ran.
    GpuFailed,
}

/// One run of a pod's container.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub started: EpochSeconds,
    /// When it ended, its exit code and why; None while it runs.
    pub ended: Option<(EpochSeconds, i32, Ending)>,
}

/// A pod as the kubelet reports it now.
#[derive(Clone, Debug, PartialEq)]
pub struct PodState {
    /// Pending, Running, Succeeded or Failed.
    pub phase: &'static str,
    /// kubectl's STATUS column.
    pub status: &'static str,
    pub ready: bool,
    /// The container's runs, oldest first (at most [`MAX_RUNS`] of them).
    pub runs: Vec<Run>,
    /// When the image was pulled and the container first started.
    pub pulled: Option<EpochSeconds>,
    /// The restart waiting for its back-off: when it is due.
    pub next_start: Option<EpochSeconds>,
}

impl PodState {
    pub fn restarts(&self) -> usize {
        self.runs.len().saturating_sub(1)
    }
}

/// Whether a GPU can run work: on the bus, answering, nothing awaiting a reset.
fn gpu_ok(node: &Node, gpu: u32) -> bool {
    node.gpu(gpu).is_some_and(super::gpu::Gpu::works)
}

/// Whether the node's device plugin runs: every GPU of the node answers.
pub fn plugin_runs(node: &Node) -> bool {
    node.gpus.iter().all(super::gpu::Gpu::works)
}

/// The node's `nvidia.com/gpu` as the kubelet posts it: (capacity,
/// allocatable). With the device plugin down its devices are unhealthy
/// (allocatable 0) and, after the grace period, gone from capacity too;
/// they come back when the plugin registers again.
pub fn gpu_resources(cluster: &Cluster, node: &Node) -> (usize, usize) {
    let plugin = device_plugin(cluster, node);
    match plugin.registered {
        Some(at) if at <= cluster.now => (node.gpus.len(), node.gpus.len()),
        // Down since a GPU failed: gone from capacity after the grace period.
        None if cluster.now - plugin.failing_since.unwrap_or(cluster.now) >= PLUGIN_GRACE_S => (0, 0),
        _ => (node.gpus.len(), 0),
    }
}

/// How long the device plugin runs before it fails on a GPU it cannot open
/// (its log's last line).
pub const PLUGIN_RUN_S: i64 = 3;

/// A generated pod name's random tail, from Kubernetes' alphabet (no
/// vowels, no look-alike digits).
pub fn pod_suffix(seed: u64, parts: &[&str], n: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = Rng::derive(seed, parts);
    (0..n).map(|_| ALPHABET[rng.range_u64(0, 26) as usize] as char).collect()
}

/// The kubelet's wait before restarting a container that failed
/// `failures` times in a row: 10 s, doubling to 300 s.
fn back_off_delay(failures: u64) -> i64 {
    BACK_OFF_START_S.saturating_mul(1 << failures.min(10)).min(BACK_OFF_MAX_S)
}

/// The kubelet's restarts of a container that keeps failing, `seconds`
/// after its first failure: one at once, then on [`back_off_delay`]; and
/// how long after the first failure the last of them came.
pub fn back_off(seconds: i64) -> (u64, i64) {
    let (mut n, mut spent) = (1, 0);
    while spent + back_off_delay(n - 1) <= seconds {
        spent += back_off_delay(n - 1);
        n += 1;
    }
    (n, spent)
}

/// The GPU Operator's device plugin on a node, as the kubelet runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DevicePlugin {
    /// Its restarts since it first failed on a GPU.
    pub restarts: u64,
    /// When its container last crashed.
    pub last_crash: Option<EpochSeconds>,
    /// Failing now: since when (None while it runs).
    pub failing_since: Option<EpochSeconds>,
    /// When it (last) registered its GPUs with the kubelet; None while it fails.
    pub registered: Option<EpochSeconds>,
}

/// The device plugin on `node`: its pod starts [`PLUGIN_AFTER_BOOT_S`]
/// after boot; while a GPU of the node fails it crashes at each start and
/// the kubelet restarts it on its back-off, so after a repair it runs
/// again only at its next restart.
pub fn device_plugin(cluster: &Cluster, node: &Node) -> DevicePlugin {
    let pod_start = node.booted_at + PLUGIN_AFTER_BOOT_S;
    let fault = plugin_down_since(cluster, node).max(pod_start);
    if !plugin_runs(node) {
        let (restarts, spent) = back_off(cluster.now - fault);
        return DevicePlugin { restarts, last_crash: Some((fault + spent + PLUGIN_RUN_S).min(cluster.now)), failing_since: Some(fault), registered: None };
    }
    // Healthy now: repaired at the last change that left the node's GPUs
    // answering, after they had not been; it runs again at the restart after that.
    let states = cluster.states();
    let (mut repaired, mut failed_from) = (None, None);
    let mut was_faulty = false;
    let mut from = EpochSeconds::MIN;
    for (until, nodes) in &states {
        let faulty = nodes.iter().find(|n| n.hostname == node.hostname).is_some_and(|n| !plugin_runs(n));
        if faulty && !was_faulty {
            failed_from = Some(from);
        }
        if was_faulty && !faulty {
            repaired = Some(from);
        }
        was_faulty = faulty;
        from = *until;
    }
    let fault = failed_from.map_or(fault, |at| at.max(pod_start));
    match repaired.filter(|r| *r > pod_start && fault < *r) {
        Some(repaired) => {
            // The starts before the repair failed; the next one runs.
            let (failed, last_failed) = back_off(repaired - fault - 1);
            let runs = fault + start_offset(failed);
            let last_crash = Some((fault + last_failed + PLUGIN_RUN_S).min(cluster.now));
            if runs > cluster.now {
                // Waiting out its back-off still.
                return DevicePlugin { restarts: failed, last_crash, failing_since: Some(fault), registered: None };
            }
            DevicePlugin { restarts: failed + 1, last_crash, failing_since: None, registered: Some(runs + PLUGIN_RUN_S) }
        }
        None => DevicePlugin { restarts: 0, last_crash: None, failing_since: None, registered: Some(pod_start) },
    }
}

/// How long after its first failure the kubelet makes a failing
/// container's start number `k` (0: at once).
fn start_offset(k: u64) -> i64 {
    (0..k.min(10_000)).map(back_off_delay).sum()
}

/// When the node's device plugin stopped: its last kernel warning or error
/// (the GPU's fault), else 40 minutes ago.
pub fn plugin_down_since(cluster: &Cluster, node: &Node) -> EpochSeconds {
    let last = node.kernel_log.iter().filter(|l| l.level <= 4).map(|l| l.uptime_us).max();
    last.map_or(cluster.now - 2400, |us| node.booted_at + (us / 1_000_000) as i64)
}

impl Cluster {
    /// The pods in `namespace` (every namespace with None), by name.
    pub fn pods_in(&self, namespace: Option<&str>) -> Vec<&Pod> {
        let mut pods: Vec<&Pod> = self.pods.iter().filter(|p| namespace.is_none_or(|ns| p.spec.namespace == ns)).collect();
        crate::sort::sort_by(&mut pods, |a, b| (&a.spec.namespace, &a.spec.name).cmp(&(&b.spec.namespace, &b.spec.name)));
        pods
    }

    pub fn pod(&self, namespace: &str, name: &str) -> Option<&Pod> {
        self.pods.iter().find(|p| p.spec.namespace == namespace && p.spec.name == name)
    }

    /// Creates a pod at `at` (a pod of that name is replaced: the caller
    /// has refused what the API server refuses) and binds what fits.
    pub(crate) fn create_pod(&mut self, spec: &PodSpec, at: EpochSeconds) {
        self.release_pod(&spec.namespace, &spec.name);
        self.pods.retain(|p| !(p.spec.namespace == spec.namespace && p.spec.name == spec.name));
        self.pods.push(Pod { spec: spec.clone(), created: at, binding: None });
        self.schedule_pods(at);
    }

    /// When pod `name` in `namespace` was deleted (a controller's pod: its
    /// controller makes another in its place), if it was.
    pub fn pod_deleted_at(&self, namespace: &str, name: &str) -> Option<EpochSeconds> {
        self.history.iter().find_map(|(at, change)| match change {
            super::change::Change::DeletePod { namespace: ns, name: n, .. } if ns == namespace && n == name => Some(*at),
            _ => None,
        })
    }

    /// A controller's pod now, named `named(generation)`: each delete of
    /// one makes the next generation at once. Its generation, and when its
    /// predecessor was deleted (none for the first).
    pub fn pod_generation(&self, namespace: &str, named: impl Fn(usize) -> String) -> (usize, Option<EpochSeconds>) {
        let (mut generation, mut made) = (0, None);
        // Bounded by the history: each generation needs a delete of its own.
        while let Some(at) = self.pod_deleted_at(namespace, &named(generation)).filter(|_| generation < self.history.len()) {
            generation += 1;
            made = Some(at);
        }
        (generation, made)
    }

    /// Deletes a pod: its GPUs are free for the next.
    pub(crate) fn delete_pod(&mut self, namespace: &str, name: &str, at: EpochSeconds) {
        self.release_pod(namespace, name);
        self.pods.retain(|p| !(p.spec.namespace == namespace && p.spec.name == name));
        self.schedule_pods(at);
    }

    /// A pod's process leaves its GPUs (the pod is going): they idle.
    fn release_pod(&mut self, namespace: &str, name: &str) {
        let Some(pod) = self.pod(namespace, name) else { return };
        let Some(binding) = pod.binding.clone() else { return };
        let pid = pod_pid(self.seed, pod);
        let idle = (self.preset.gpu.idle_memory_used_mib, self.preset.gpu.idle_power_w);
        let seed = self.seed;
        let Some(node) = self.node_mut(&binding.node) else { return };
        for gpu in node.gpus.iter_mut().filter(|g| g.processes.iter().any(|p| p.pid == pid)) {
            gpu.processes.retain(|p| p.pid != pid);
            idle_gpu(gpu, idle, &mut Rng::derive(seed, &["pod gpu", &binding.node, &gpu.index.to_string()]));
        }
    }

    /// The GPUs of `node` that bound pods hold, other than finished ones.
    fn gpus_held(&self, node: &str) -> Vec<u32> {
        let mut held = Vec::new();
        for pod in &self.pods {
            if let Some(binding) = pod.binding.as_ref().filter(|b| b.node == node) {
                if !matches!(self.pod_state(pod).phase, "Succeeded" | "Failed") {
                    held.extend(&binding.gpus);
                }
            }
        }
        held
    }

    /// The node `spec` fits now (the first by name), or the reason each
    /// node refuses it, in kube-scheduler's words.
    pub fn placement(&self, spec: &PodSpec) -> Result<String, Vec<&'static str>> {
        let mut reasons = Vec::new();
        for node in &self.nodes {
            match self.unfit(spec, node) {
                None => return Ok(node.hostname.clone()),
                Some(reason) => reasons.push(reason),
            }
        }
        Err(reasons)
    }

    /// The first filter `node` fails for `spec`, as the scheduler words it.
    fn unfit(&self, spec: &PodSpec, node: &Node) -> Option<&'static str> {
        // kube-scheduler's filters in its order: NodeUnschedulable, NodeName,
        // TaintToleration, NodeAffinity, NodeResourcesFit.
        let tolerated = |key: &str, effect: &str| spec.tolerations.iter().any(|t| t.tolerates(key, effect));
        if node.cordoned_since.is_some() && !tolerated("node.kubernetes.io/unschedulable", "NoSchedule") {
            return Some("node(s) were unschedulable");
        }
        if spec.node_name.as_deref().is_some_and(|name| name != node.hostname) {
            return Some("node(s) didn't match the requested node name");
        }
        if !super::service::kubelet_ready(node, self.now) && !tolerated("node.kubernetes.io/unreachable", "NoSchedule") {
            return Some("node(s) had untolerated taint {node.kubernetes.io/unreachable: }");
        }
        let labels = node_labels(node);
        if !spec.node_selector.iter().all(|(k, v)| labels.iter().any(|(lk, lv)| lk == k && lv == v)) {
            return Some("node(s) didn't match Pod's node affinity/selector");
        }
        let (_, allocatable) = gpu_resources(self, node);
        if spec.gpus as usize + self.gpus_held(&node.hostname).len() > allocatable {
            return Some("Insufficient nvidia.com/gpu");
        }
        None
    }

    /// Binds each pending pod, oldest first, to the first node that fits
    /// it now, with the node's lowest-numbered free GPUs.
    pub(crate) fn schedule_pods(&mut self, at: EpochSeconds) {
        for index in 0..self.pods.len() {
            if self.pods[index].binding.is_some() {
                continue;
            }
            let Ok(host) = self.placement(&self.pods[index].spec) else { continue };
            let held = self.gpus_held(&host);
            let Some(node) = self.node(&host) else { continue };
            let gpus: Vec<u32> = node.gpus.iter().map(|g| g.index).filter(|g| !held.contains(g)).take(self.pods[index].spec.gpus as usize).collect();
            // Found as the clock moved: bound when its node could first take
            // it (its kubelet up; for GPUs, its device plugin registered).
            let ready = if self.pods[index].spec.gpus > 0 { device_plugin(self, node).registered.unwrap_or(at) } else { node.booted_at + KUBELET_AFTER_BOOT_S };
            let bound = at.min(ready.max(self.pods[index].created)).max(self.pods[index].created);
            self.pods[index].binding = Some(Binding { node: host, at: bound, gpus });
        }
    }

    /// The cluster's states over time: (until, nodes), the last one the
    /// present; each era's end at most the next one's (a fault applied
    /// earlier in the lab's file may have struck later).
    pub(crate) fn states(&self) -> Vec<(EpochSeconds, &[Rc<Node>])> {
        let mut states: Vec<(EpochSeconds, &[Rc<Node>])> = Vec::with_capacity(self.eras.len() + 1);
        let mut until = EpochSeconds::MAX;
        for (end, nodes) in self.eras.iter().rev() {
            until = until.min(*end);
            states.push((until, nodes));
        }
        states.reverse();
        states.push((EpochSeconds::MAX, &self.nodes));
        states
    }

    /// How `pod`'s container has fared up to now: its runs, restarts on
    /// the kubelet's back-off, and the status kubectl prints.
    pub fn pod_state(&self, pod: &Pod) -> PodState {
        let mut state = PodState { phase: "Pending", status: "Pending", ready: false, runs: Vec::new(), pulled: None, next_start: None };
        let Some(binding) = &pod.binding else { return state };
        let Some(node) = self.node(&binding.node) else { return state };
        // The kubelet pulls the image, then starts the container; after a
        // reboot it starts it again once it runs.
        let pull = Rng::derive(self.seed, &[&pod.spec.image, &binding.node, "pull"]).range_i64(18, 75);
        let pulled = binding.at + pull;
        state.pulled = Some(pulled);
        let first = pulled.max(node.booted_at + KUBELET_AFTER_BOOT_S);
        let program = Program::of(&pod.spec.command);
        let states = self.states();
        let node_at = |t: EpochSeconds| -> Option<&Node> {
            let nodes = states.iter().find(|(until, _)| t < *until).map_or(&self.nodes[..], |(_, nodes)| *nodes);
            nodes.iter().find(|n| n.hostname == binding.node).map(Rc::as_ref)
        };
        let gpus_ok = |t: EpochSeconds| node_at(t).is_some_and(|n| binding.gpus.iter().all(|g| gpu_ok(n, *g)));
        let (mut start, mut failures) = (first, 0u64);
        while start <= self.now && state.runs.len() < MAX_RUNS {
            let ended = if program.uses_gpus() && !gpus_ok(start) {
                Some((start + 6, 1, Ending::GpuAtStart))
            } else {
                let finish = match program {
                    Program::Sleep(Some(seconds)) => Some(start + seconds),
                    Program::Sleep(None) | Program::GpuWork => None,
                    Program::ListGpus | Program::CountGpus { .. } => Some(start + 2),
                    Program::Echo(_) | Program::Other => Some(start),
                };
                // The first instant after `start` its GPUs fail, for work that uses them.
                let failed = if matches!(program, Program::GpuWork) {
                    states.iter().map(|(until, _)| *until).filter(|t| *t > start && *t < EpochSeconds::MAX).find(|t| !gpus_ok(*t))
                } else {
                    None
                };
                match (finish, failed) {
                    (Some(f), Some(g)) if g < f => Some((g, 1, Ending::GpuFailed)),
                    (_, Some(g)) if finish.is_none() => Some((g, 1, Ending::GpuFailed)),
                    (Some(f), _) => Some((f, 0, Ending::Done)),
                    (None, _) => None,
                }
            };
            let ended = ended.filter(|(end, ..)| *end <= self.now);
            state.runs.push(Run { started: start, ended });
            let Some((end, code, _)) = ended else { break };
            if !restarts(pod.spec.restart_policy, code) {
                break;
            }
            if end - start >= BACK_OFF_RESET_S {
                failures = 0;
            }
            start = end + back_off_delay(failures);
            failures += 1;
            state.next_start = Some(start);
        }
        (state.phase, state.status, state.ready) = match state.runs.last() {
            None => ("Pending", "ContainerCreating", false),
            Some(Run { ended: None, .. }) => ("Running", "Running", true),
            Some(Run { ended: Some((end, code, _)), .. }) => match (restarts(pod.spec.restart_policy, *code), *code) {
                (false, 0) => ("Succeeded", "Completed", false),
                (false, _) => ("Failed", "Error", false),
                // The kubelet reports the exit until its next sync puts the
                // container in its back-off.
                (true, 0) if self.now - end < SYNC_S => ("Running", "Completed", false),
                (true, _) if self.now - end < SYNC_S => ("Running", "Error", false),
                (true, _) => ("Running", "CrashLoopBackOff", false),
            },
        };
        if state.status != "CrashLoopBackOff" {
            state.next_start = None;
        }
        // A pod on a node gone for five minutes is evicted (its
        // `unreachable` toleration ends): it stays Terminating until the
        // node answers.
        if !node.up(self.now) {
            state.ready = false;
            if self.now - kubelet_lost_at(self, node) >= 300 {
                state.status = "Terminating";
            }
        }
        state
    }

    /// As the clock moves: the pending pods the cluster can now place are
    /// bound, and the GPUs of running pods' processes held.
    pub(crate) fn follow_pods(&mut self) {
        if self.pods.is_empty() {
            return;
        }
        if self.pods.iter().any(|p| p.binding.is_none()) {
            self.schedule_pods(self.now);
        }
        self.hold_pod_gpus();
    }

    /// The pods' processes on their GPUs (what `nvidia-smi` lists): a
    /// running container's training code holds its GPUs' memory and keeps
    /// them busy; a container that ended lets go.
    fn hold_pod_gpus(&mut self) {
        let mut wanted: Vec<(String, u32, u32)> = Vec::new();
        for node in &self.nodes {
            for (gpu, pod) in self.pod_gpus(&node.hostname) {
                wanted.push((node.hostname.clone(), gpu, pod_pid(self.seed, pod)));
            }
        }
        let idle = (self.preset.gpu.idle_memory_used_mib, self.preset.gpu.idle_power_w, self.preset.gpu.idle_sm_clock_mhz);
        let pids: Vec<u32> = self.pods.iter().map(|p| pod_pid(self.seed, p)).collect();
        let hosts: Vec<String> = self.nodes.iter().map(|n| n.hostname.clone()).collect();
        let seed = self.seed;
        for host in hosts {
            let held: Vec<(u32, u32)> = wanted.iter().filter(|(h, ..)| *h == host).map(|(_, g, p)| (*g, *p)).collect();
            let changes = self.node(&host).is_some_and(|node| {
                node.gpus.iter().any(|gpu| {
                    let has = gpu.processes.iter().find(|p| pids.contains(&p.pid)).map(|p| p.pid);
                    has != held.iter().find(|(g, _)| *g == gpu.index).map(|(_, p)| *p)
                })
            });
            if !changes {
                continue;
            }
            let Some(node) = self.node_mut(&host) else { continue };
            for gpu in &mut node.gpus {
                let had = gpu.processes.iter().any(|p| pids.contains(&p.pid));
                gpu.processes.retain(|p| !pids.contains(&p.pid));
                let mut rng = Rng::derive(seed, &["pod gpu", &host, &gpu.index.to_string()]);
                match held.iter().find(|(g, _)| *g == gpu.index) {
                    Some((_, pid)) if gpu.health == GpuHealth::Healthy => {
                        let used = (gpu.memory_total_mib as f64 * WORK_MEMORY_SHARE) as u64;
                        gpu.processes.push(super::gpu::GpuProcess { pid: *pid, name: "/usr/bin/python".to_string(), used_mib: used });
                        gpu.memory_used_mib = idle.0 + used;
                        gpu.utilization_pct = 100 - rng.range_u64(0, 3) as u32;
                        gpu.memory_utilization_pct = 30 + rng.range_u64(0, 12) as u32;
                        gpu.power_draw_w = (rng.range_u64(560, 680) as u32).min(gpu.power_limit_w);
                        gpu.throttle_reasons &= !super::gpu::throttle::GPU_IDLE;
                    }
                    _ if had => idle_gpu(gpu, (idle.0, idle.1), &mut rng),
                    _ => {}
                }
            }
        }
    }

    /// Each GPU a running pod's container holds on `node`, with the pod.
    pub fn pod_gpus(&self, node: &str) -> Vec<(u32, &Pod)> {
        let mut held = Vec::new();
        for pod in &self.pods {
            let Some(binding) = pod.binding.as_ref().filter(|b| b.node == node) else { continue };
            let state = self.pod_state(pod);
            if state.runs.last().is_some_and(|r| r.ended.is_none()) && Program::of(&pod.spec.command) == Program::GpuWork {
                held.extend(binding.gpus.iter().map(|g| (*g, pod)));
            }
        }
        held
    }

    /// The lab's pods: those running were applied before the lab.
    pub fn start_lab_pods(&mut self, pods: &[LabPod]) {
        self.lab_pods = pods.into();
        let at = self.started_at - LAB_PODS_BEFORE_S;
        for pod in pods.iter().filter(|p| p.running) {
            self.pods.push(Pod { spec: pod.spec.clone(), created: at, binding: None });
        }
        self.schedule_pods(at);
    }
}

/// A GPU no process works on: its idle memory, power and clocks.
fn idle_gpu(gpu: &mut super::gpu::Gpu, (memory, power): (u64, (u32, u32)), rng: &mut Rng) {
    gpu.memory_used_mib = memory;
    gpu.utilization_pct = 0;
    gpu.memory_utilization_pct = 0;
    gpu.power_draw_w = rng.range_u64(u64::from(power.0), u64::from(power.1)) as u32;
    gpu.throttle_reasons |= super::gpu::throttle::GPU_IDLE;
}

/// The host PID of a pod's main process.
pub fn pod_pid(seed: u64, pod: &Pod) -> u32 {
    Rng::derive(seed, &["pod pid", &pod.spec.namespace, &pod.spec.name, &pod.created.to_string()]).range_u64(40_000, 3_000_000) as u32
}

/// When the node's kubelet stopped answering: since its unit stopped on a
/// node that is up, since the reboot on one that boots, else since Slurm
/// saw it down (5 minutes ago when it has not yet).
pub fn kubelet_lost_at(cluster: &Cluster, node: &Node) -> EpochSeconds {
    if node.up(cluster.now) {
        return super::service::state_of(node, super::service::KUBELET_UNIT).map_or(cluster.now, |(_, since)| since);
    }
    if !node.hangs() {
        return node.booted_at - super::change::BOOT_SECONDS;
    }
    if node.scheduler == super::node::SchedulerState::Down {
        node.scheduler_reason_since
    } else {
        cluster.now - 300
    }
}

/// The node's labels as (key, value): the kubelet's and the GPU Operator's
/// feature discovery's, sorted as kubectl prints them.
pub fn node_labels(node: &Node) -> Vec<(String, String)> {
    let product = node.gpus.first().map_or(String::new(), |g| g.name.replace(' ', "-"));
    [
        ("beta.kubernetes.io/arch", "amd64".to_string()),
        ("beta.kubernetes.io/os", "linux".to_string()),
        ("kubernetes.io/arch", "amd64".to_string()),
        ("kubernetes.io/hostname", node.hostname.clone()),
        ("kubernetes.io/os", "linux".to_string()),
        ("nvidia.com/gpu.count", node.gpus.len().to_string()),
        ("nvidia.com/gpu.present", "true".to_string()),
        ("nvidia.com/gpu.product", product),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}
