//! `kubectl`: the cluster as Kubernetes sees the same model. Every node is a
//! worker (`ROLES <none>`); the `gpu-operator` namespace holds, per node, the
//! GPU Operator's DaemonSet pods (the DaemonSet names of the operator's
//! releases since it moved to one namespace), and two Deployment pods on the
//! first schedulable node. Pod names end in seeded suffixes from Kubernetes'
//! consonant-and-digit alphabet; pods start a few minutes after the node
//! boots (`booted_at`).
//!
//! A node is `SchedulingDisabled` when Kubernetes cordoned it:
//! `cordon`/`drain` return `Change::Cordon`, `uncordon` lifts it. Slurm is a
//! separate system: a Slurm drain does not cordon, a cordon does not drain.
//! A drain evicts the node's Deployment pods; a cordon leaves them running. An unreachable node is `NotReady`: its DaemonSet
//! pods stay `Running` but not ready (they tolerate the unreachable taint),
//! a Deployment pod evicted from it stays `Terminating`, and its replacement
//! runs on the next schedulable node. A node with a GPU off the bus,
//! unresponsive or waiting for a reset has its device-plugin pod in
//! `CrashLoopBackOff`, restarted on kubelet's back-off (10 s doubling to 5
//! min) since the node's last kernel warning or error.
//!
//! Workload pods (`kubectl_pods`, over `model::pods`): `apply -f`/`create -f`
//! of a Pod manifest, `delete`, `get pods` with them, `describe pod`, `logs`
//! (`-p`), `exec` (a command in the container's view of its node); `drain`
//! refuses them without `--force` (they declare no controller) and evicts
//! them with it. A node's allocatable `nvidia.com/gpu` is 0 while its device
//! plugin is down, until it registers again.
//!
//! Events (`get events`, `describe node`'s) are the nodes', in `default`,
//! for an hour (the API server's event TTL): NodeNotReady 40 s after the
//! node stopped answering, and after a reboot the kubelet's Starting,
//! Rebooted (with a new boot id) and NodeReady; NodeNotSchedulable for a
//! cordon; and the pods' (scheduling, pulls, starts, back-offs). `describe
//! node` sums the pods' requests (Allocated resources: the workload pods'
//! GPUs; the operator's pods ask for none).
//!
//! Client and server run the cluster's Kubernetes release
//! (`Versions::kubernetes`, v1.29.15 unless the lab names another, 1.21 to
//! 1.30): `get nodes` VERSION, `describe node`'s kubelet, `version`. The
//! RESTARTS column is a plain count until 1.21, as in the capture
//! `kubectl_get_pods_gpu_operator_device_plugin_crashloop_excerpt.txt`; from
//! 1.22 the server's printer adds the last restart's age (`12 (3m17s ago)`).
//! `version` prints kubectl's short form (the default from 1.28, `--short`
//! before, with the Kustomize line from 1.24). Tables are aligned as
//! kubectl's tabwriter does (padding 3, minimum width 6; `describe`: padding
//! 2). Not emulated: `version`'s long form before 1.28, objects other than
//! nodes, pods, namespaces, events and the slurm-operator's NodeSets
//! (Deployments, Jobs, Services), logs of
//! the operator's pods other than the device plugin's (empty).

use super::kubectl_print::{object, object_from, Value};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::node::SlurmShown;
use crate::model::pods::{kubelet_lost_at, pod_suffix};
use crate::model::service::kubelet_ready;
use crate::model::slurm_operator;
use crate::model::time::{ctime, iso_utc, EpochSeconds};
use crate::model::{Cluster, GpuHealth, Node};
use crate::rng::Rng;

pub struct Kubectl;

static SIGNATURE: Signature = Signature {
    name: "kubectl",
    summary: "view and cordon the cluster's nodes and GPU Operator pods through Kubernetes",
    usage: "kubectl get nodes|pods|namespaces|events|nodesets [NAME] [-n NS|-A] [-o wide|name|json|yaml|jsonpath=...|go-template=...|custom-columns=...]\n       kubectl describe node|pod [NAME]\n       kubectl apply|create -f FILE\n       kubectl delete pod NAME | -f FILE [--force]\n       kubectl logs [-n NS] POD [-p] [--tail N]\n       kubectl exec [-it] POD -- COMMAND [ARGS...]\n       kubectl version [--client]\n       kubectl cordon|uncordon|drain NODE [--ignore-daemonsets] [--delete-emptydir-data] [--force]",
    flags: &[
        Flag { short: Some('n'), long: Some("namespace"), value: Some("NS"), help: "the namespace" },
        Flag { short: Some('A'), long: Some("all-namespaces"), value: None, help: "every namespace" },
        Flag { short: Some('o'), long: Some("output"), value: Some("FORMAT"), help: "wide, name, json, yaml, jsonpath=TEMPLATE, go-template=TEMPLATE or custom-columns=SPEC" },
        Flag { short: None, long: Some("ignore-daemonsets"), value: None, help: "drain: leave DaemonSet pods" },
        Flag { short: None, long: Some("delete-emptydir-data"), value: None, help: "drain: evict pods with emptyDir volumes" },
        Flag { short: Some('c'), long: Some("container"), value: Some("NAME"), help: "logs: the container" },
        Flag { short: None, long: Some("tail"), value: Some("N"), help: "logs: the last N lines" },
        Flag { short: Some('p'), long: Some("previous"), value: None, help: "logs: the previous container" },
        Flag { short: Some('f'), long: Some("filename"), value: Some("FILE"), help: "apply, create, delete: the manifest (- reads standard input)" },
        Flag { short: None, long: Some("force"), value: None, help: "drain: delete pods that declare no controller; delete: at once" },
        Flag { short: Some('i'), long: Some("stdin"), value: None, help: "exec: pass standard input to the container" },
        Flag { short: Some('t'), long: Some("tty"), value: None, help: "exec: a terminal for the container" },
    ],
    examples: &[
        Example { command: "kubectl get nodes -o wide", description: "every node's status (NotReady, SchedulingDisabled)" },
        Example { command: "kubectl get pods -A -o wide", description: "the GPU Operator's pods (CrashLoopBackOff device plugins)" },
        Example { command: "kubectl version", description: "the client's and the cluster's Kubernetes releases" },
        Example { command: "kubectl apply -f pod.yaml", description: "create the Pod a manifest describes" },
        Example { command: "kubectl describe pod NAME", description: "a pod's containers, conditions and events (FailedScheduling, BackOff)" },
        Example { command: "kubectl exec NAME -- nvidia-smi -L", description: "the GPUs a pod's container sees" },
        Example {
            command: "kubectl get nodes -o custom-columns=NAME:.metadata.name,GPUS:.status.allocatable.nvidia\\.com/gpu",
            description: "the GPUs each node offers to pods",
        },
    ],
};

const NS: &str = "gpu-operator";
const KERNEL: &str = crate::model::node::KERNEL_RELEASE;
/// DaemonSets and how many seconds after boot their pods start.
/// The GPU Operator's operands on each node. The host image has the driver
/// and DCGM with its exporter (`model::service`), so the operator deploys
/// neither (`driver.enabled=false`, `dcgmExporter.enabled=false`).
const DAEMONSETS: [(&str, i64); 5] = [
    ("gpu-feature-discovery", 331),
    ("gpu-operator-node-feature-discovery-worker", 21),
    ("nvidia-container-toolkit-daemonset", 95),
    ("nvidia-device-plugin-daemonset", crate::model::pods::PLUGIN_AFTER_BOOT_S),
    ("nvidia-operator-validator", 97),
];
const DEPLOYMENTS: [&str; 2] = ["gpu-operator", "gpu-operator-node-feature-discovery-master"];
const PLUGIN: &str = "nvidia-device-plugin-daemonset";
const VALIDATOR: &str = "nvidia-operator-validator";
/// The validator's init containers, in order (v24.6.2's
/// assets/state-operator-validation/0500_daemonset.yaml, without
/// nvidia-fs-validation, which the operator drops when GDS is off); its
/// one container echoes that all passed and sleeps.
const VALIDATOR_INIT: [&str; 4] = ["driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation"];
/// The validator's `version:` line: its release and the commit it was built from (tag v24.6.2).
const VALIDATOR_VERSION: &str = "v24.6.2, commit: e4f1f5d";
/// How many of driver-validation's 5-second retries its log keeps (kubelet rotates a container's log).
const VALIDATOR_RETRIES_KEPT: i64 = 1000;
/// The cluster's namespaces, as `get namespaces` lists them.
const NAMESPACES: [&str; 5] = ["default", NS, "kube-node-lease", "kube-public", "kube-system"];

/// The namespaces of `cluster`: the slurm-operator's two with Slurm on it.
pub(super) fn namespaces(cluster: &Cluster) -> Vec<&'static str> {
    let mut all = NAMESPACES.to_vec();
    if cluster.slurm_on_kubernetes() {
        all.extend([slurm_operator::OPERATOR_NAMESPACE, slurm_operator::NAMESPACE]);
        crate::sort::sort(&mut all);
    }
    all
}

/// kubectl's output formats, as its refusal lists them.
const PRINTERS: [&str; 13] = [
    "custom-columns",
    "custom-columns-file",
    "go-template",
    "go-template-file",
    "json",
    "jsonpath",
    "jsonpath-as-json",
    "jsonpath-file",
    "name",
    "template",
    "templatefile",
    "wide",
    "yaml",
];

struct Pod {
    namespace: &'static str,
    name: String,
    /// The container kubectl shows first (logs, statuses).
    container: &'static str,
    /// Containers counted in READY (a native sidecar counts).
    containers: u8,
    ready: bool,
    status: &'static str,
    restarts: u64,
    /// When the container last crashed, if it has restarted.
    last_crash: Option<EpochSeconds>,
    since: EpochSeconds,
    /// When its container (last) started.
    started: EpochSeconds,
    node: usize,
    daemonset: bool,
    /// The slurm-operator's slurmd pod: a disruption budget keeps kubectl
    /// drain from evicting it while Slurm runs a job there.
    nodeset: bool,
    /// Its address's place in its node's pod network, in the order of the
    /// first pods' names: a replacement under a new name takes the address
    /// its predecessor left (set once every pod is listed).
    ip_slot: usize,
    /// The first pod's name in its place (its own, unless it replaced one).
    first_name: String,
}

impl Pod {
    /// One container set (`containers` counted in READY) running on node
    /// `node` since `since`, never restarted.
    fn running(namespace: &'static str, name: String, container: &'static str, containers: u8, node: usize, since: EpochSeconds, ready: bool) -> Pod {
        Pod {
            namespace,
            name,
            container,
            containers,
            ready,
            status: "Running",
            restarts: 0,
            last_crash: None,
            since,
            started: since,
            node,
            daemonset: false,
            nodeset: false,
            ip_slot: 0,
            first_name: String::new(),
        }
    }
}

pub(super) fn suffix(cluster: &Cluster, parts: &[&str], n: usize) -> String {
    pod_suffix(cluster.seed, parts, n)
}

fn cordoned(node: &Node) -> bool {
    node.cordoned_since.is_some()
}

/// Whether a drain evicted the node's pods (a cordon alone does not).
fn evicted(node: &Node) -> bool {
    node.pods_evicted()
}

/// The device plugin's restarts: one at once, then after 10 s doubling to 300 s.
#[cfg(test)]
fn restarts(seconds: i64) -> u64 {
    crate::model::pods::back_off(seconds).0
}

fn pods(cluster: &Cluster) -> Vec<Pod> {
    let mut pods = Vec::new();
    for (index, node) in cluster.nodes.iter().enumerate() {
        for (ds, delay) in DAEMONSETS {
            let (name, first_name, replaced) = operand_pod(cluster, &node.hostname, ds);
            let since = replaced.map_or(node.booted_at + delay, |at| at.max(node.booted_at));
            let running = Pod::running(NS, name, container_of(ds), 1, index, since, kubelet_ready(node, cluster.now));
            let mut pod = Pod { daemonset: true, first_name, ..running };
            if ds == VALIDATOR && validation_blocked(cluster, node, since) {
                (pod.ready, pod.status) = (false, "Init:0/4");
            }
            if ds == PLUGIN {
                let plugin = crate::model::pods::device_plugin(cluster, node);
                (pod.restarts, pod.last_crash) = (plugin.restarts, plugin.last_crash);
                match plugin.registered {
                    None => (pod.ready, pod.status) = (false, "CrashLoopBackOff"),
                    // Started again after a repair: running since then.
                    Some(at) if plugin.restarts > 0 => pod.started = pod.started.max(at - PLUGIN_RUN_S),
                    Some(_) => {}
                }
            }
            pods.push(pod);
        }
    }
    // Deployment pods run on the first schedulable node; nodes before it
    // that lost them give the time they moved.
    let mut moved = None;
    for (index, node) in cluster.nodes.iter().enumerate() {
        if !node.hangs() && !evicted(node) {
            for name in DEPLOYMENTS {
                let since = moved.unwrap_or(node.booted_at + 60);
                pods.push(Pod::running(NS, deployment_pod(cluster, &node.hostname, name), container_of(name), 1, index, since, true));
                if index == 0 || moved.is_none() {
                    continue;
                }
                // Evicted from the first node while it did not answer: stuck terminating.
                let first = &cluster.nodes[0];
                if first.hangs() && !evicted(first) {
                    let stuck = Pod::running(NS, deployment_pod(cluster, &first.hostname, name), container_of(name), 1, 0, first.booted_at + 60, false);
                    pods.push(Pod { status: "Terminating", ..stuck });
                }
            }
            break;
        }
        let left = if !node.hangs() { node.cordoned_since.unwrap_or(node.booted_at) } else { kubelet_lost_at(cluster, node) + 300 };
        moved = Some(moved.unwrap_or(left).max(left));
    }
    if cluster.slurm_on_kubernetes() {
        slurm_pods(cluster, &mut pods);
    }
    // A replacement under a new name moves in the list, not in the network.
    crate::sort::sort_by(&mut pods, |a, b| (a.namespace, first_name(a)).cmp(&(b.namespace, first_name(b))));
    for (slot, pod) in pods.iter_mut().enumerate() {
        pod.ip_slot = slot;
    }
    crate::sort::sort_by(&mut pods, |a, b| (a.namespace, &a.name).cmp(&(b.namespace, &b.name)));
    pods
}

/// The name of the first pod in `pod`'s place.
fn first_name(pod: &Pod) -> &str {
    if pod.first_name.is_empty() {
        &pod.name
    } else {
        &pod.first_name
    }
}

/// DaemonSet `ds`'s pod on `host` now, the first one's name, and when it
/// was made if an earlier one was deleted: the DaemonSet makes each
/// replacement at once, under a new name.
fn operand_pod(cluster: &Cluster, host: &str, ds: &str) -> (String, String, Option<EpochSeconds>) {
    let named = |generation: usize| match generation {
        0 => format!("{ds}-{}", suffix(cluster, &[host, "k8s", ds], 5)),
        n => format!("{ds}-{}", suffix(cluster, &[host, "k8s", ds, &n.to_string()], 5)),
    };
    let (generation, made) = cluster.pod_generation(NS, named);
    (named(generation), named(0), made)
}

/// Whether a validator pod started at `since` is held at its driver
/// validation: the host's nvidia-smi fails (its libraries are not the
/// loaded module's) and there is no driver container to try instead. One
/// that passed before the driver's packages changed (at the lab's start,
/// unless the lab says when) keeps running.
fn validation_blocked(cluster: &Cluster, node: &Node, since: EpochSeconds) -> bool {
    let struck = cluster.injected.iter().rev().find_map(|i| match &i.fault {
        crate::model::fault::Fault::DriverMismatch { node: host, .. } if *host == node.hostname && !i.repaired => Some(i.at.unwrap_or(cluster.started_at())),
        _ => None,
    });
    node.driver_mismatch() && struck.is_some_and(|struck| since >= struck)
}

/// driver-validation's log on a validator held by a broken host driver
/// (validator/main.go at v24.6.2, logrus' text format): its version, the
/// host's nvidia-smi failing, then a driver container looked for every 5
/// seconds, for ever (`WITH_WAIT`).
fn driver_validation_log(invocation: &Invocation, node: &Node, pod: &Pod) -> String {
    let cluster = invocation.cluster;
    let line = |at: EpochSeconds, level: &str, message: &str| format!("time=\"{}\" level={level} msg={message}\n", crate::model::time::iso_utc(at));
    let started = pod.since + 2;
    if cluster.now < started {
        return String::new();
    }
    let tries = ((cluster.now - started).max(0) / 5 + 1).min(VALIDATOR_RETRIES_KEPT);
    let mut out = String::new();
    if (cluster.now - started) / 5 < VALIDATOR_RETRIES_KEPT {
        out += &line(started, "info", &format!("\"version: {VALIDATOR_VERSION}\""));
        out += &line(started, "info", "\"Attempting to validate a pre-installed driver on the host\"");
        // `chroot /host nvidia-smi`, its output in the container's.
        let call = crate::commands::Call { cluster, host: &node.hostname, env: None, stdin: "" };
        if let Some(smi) = invocation.runner.run_program(call, &["nvidia-smi".to_string()]) {
            out += &smi.stdout;
            out += &smi.stderr;
        }
    }
    let last = started + ((cluster.now - started).max(0) / 5) * 5;
    for at in (0..tries).rev().map(|back| last - back * 5) {
        out += &line(at, "info", "\"Attempting to validate a driver container installation\"");
        out += &line(at, "warning", "\"failed to validate the driver, retrying after 5 seconds\\n\"");
    }
    out
}

/// The name of Deployment `name`'s pod on `host`: its ReplicaSet's hash
/// and the pod's own five characters.
fn deployment_pod(cluster: &Cluster, host: &str, name: &str) -> String {
    format!("{name}-{}-{}", suffix(cluster, &[name, "rs"], 10), suffix(cluster, &[host, "k8s", name], 5))
}

/// A Deployment's or DaemonSet's pods' container, as the GPU Operator's
/// manifests name it (v24.6: assets/state-*/0500_daemonset.yaml, the NFD
/// subchart's master and worker).
fn container_of(workload: &'static str) -> &'static str {
    match workload {
        "gpu-operator-node-feature-discovery-master" => "master",
        "gpu-operator-node-feature-discovery-worker" => "worker",
        "nvidia-device-plugin-daemonset" => "nvidia-device-plugin",
        "nvidia-container-toolkit-daemonset" => "nvidia-container-toolkit-ctr",
        "nvidia-operator-validator" => "nvidia-operator-validator",
        other => other,
    }
}

/// The slurm-operator's pods (chart v1.2's defaults, the workers a NodeSet
/// in DaemonSet mode): the operator and its webhook, slurmctld (with its
/// log sidecar), slurmrestd, and a slurmd (with its log sidecar) on each
/// node a drain has not evicted it from.
fn slurm_pods(cluster: &Cluster, pods: &mut Vec<Pod>) {
    let Some((first, home)) = cluster.nodes.iter().enumerate().find(|(_, n)| !n.hangs() && !evicted(n)) else { return };
    let since = home.booted_at + 90;
    let ready = kubelet_ready(home, cluster.now);
    let controlled = |namespace, name: String, container, containers| Pod::running(namespace, name, container, containers, first, since, ready);
    for name in ["slurm-operator", "slurm-operator-webhook"] {
        pods.push(controlled(slurm_operator::OPERATOR_NAMESPACE, deployment_pod(cluster, &home.hostname, name), name, 1));
    }
    pods.push(controlled(slurm_operator::NAMESPACE, "slurm-controller-0".to_string(), "slurmctld", 2));
    pods.push(controlled(slurm_operator::NAMESPACE, deployment_pod(cluster, &home.hostname, "slurm-restapi"), "slurmrestd", 1));
    for (index, node) in cluster.nodes.iter().enumerate() {
        // Evicted by a drain, it comes back only once the node is uncordoned.
        if evicted(node) {
            continue;
        }
        let since = cluster.worker_pod_started(node);
        let slurmd = Pod::running(slurm_operator::NAMESPACE, cluster.worker_pod(&node.hostname), "slurmd", 2, index, since, kubelet_ready(node, cluster.now));
        pods.push(Pod { nodeset: true, ..slurmd });
    }
}

use crate::model::pods::PLUGIN_RUN_S;

/// The RESTARTS cell: from 1.22 the count and how long ago the container last ended.
fn restarts_cell(cluster: &Cluster, pod: &Pod) -> String {
    restarts_text(cluster, pod.restarts, pod.last_crash)
}

/// The RESTARTS cell of `restarts`, with the age of the last container's
/// end from 1.22.
pub(super) fn restarts_text(cluster: &Cluster, restarts: u64, last_end: Option<EpochSeconds>) -> String {
    match last_end {
        Some(at) if restarts > 0 && cluster.versions.kubernetes_minor() >= 22 => format!("{restarts} ({} ago)", age(cluster.now - at)),
        _ => restarts.to_string(),
    }
}

/// kubectl's `HumanDuration`.
fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86_400);
    let two = |a: i64, ua: &str, b: i64, ub: &str| if b == 0 { format!("{a}{ua}") } else { format!("{a}{ua}{b}{ub}") };
    match () {
        _ if s < 120 => format!("{s}s"),
        _ if m < 10 => two(m, "m", s % 60, "s"),
        _ if m < 180 => format!("{m}m"),
        _ if h < 8 => two(h, "h", m % 60, "m"),
        _ if h < 48 => format!("{h}h"),
        _ if h < 192 => two(d, "d", h % 24, "h"),
        _ if h < 24 * 365 * 2 => format!("{d}d"),
        _ if h < 24 * 365 * 8 => two(d / 365, "y", d % 365, "d"),
        _ => format!("{}y", d / 365),
    }
}

/// Go's tabwriter: cells end at tabs; a column's width is its widest cell in
/// each run of lines that have it, plus `pad`, at least `min`.
fn align(lines: &[String], pad: usize, min: usize) -> String {
    let cells: Vec<Vec<&str>> = lines.iter().map(|l| l.split('\t').collect()).collect();
    let mut widths: Vec<Vec<usize>> = cells.iter().map(|c| vec![0; c.len()]).collect();
    let most = cells.iter().map(Vec::len).max().unwrap_or(0);
    for col in 0..most {
        let mut at = 0;
        while at < cells.len() {
            let start = at;
            let mut width = 0;
            while at < cells.len() && cells[at].len() > col + 1 {
                width = width.max(cells[at][col].len());
                at += 1;
            }
            for row in &mut widths[start..at] {
                row[col] = (width + pad).max(min);
            }
            at += usize::from(at == start);
        }
    }
    let mut out = String::new();
    for (row, cells) in cells.iter().enumerate() {
        for (col, cell) in cells.iter().enumerate() {
            out += cell;
            if col + 1 < cells.len() {
                out.extend(std::iter::repeat_n(' ', widths[row][col].saturating_sub(cell.len())));
            }
        }
        out.push('\n');
    }
    out
}

fn node_status(node: &Node, now: EpochSeconds) -> String {
    let ready = if kubelet_ready(node, now) { "Ready" } else { "NotReady" };
    if cordoned(node) {
        format!("{ready},SchedulingDisabled")
    } else {
        ready.to_string()
    }
}

fn not_found(kind: &str, name: &str) -> Output {
    Output::error(format!("Error from server (NotFound): {kind} \"{name}\" not found\n"), 1)
}

fn rfc1123(at: EpochSeconds) -> String {
    let t = ctime(at);
    let f: Vec<&str> = t.split_whitespace().collect();
    format!("{}, {:0>2} {} {} {} +0000", f[0], f[2], f[1], f[4], f[3])
}

/// A node's labels as `key=value`, sorted as kubectl prints them.
fn node_labels(node: &Node) -> Vec<String> {
    crate::model::pods::node_labels(node).into_iter().map(|(key, value)| format!("{key}={value}")).collect()
}

/// Whether `labels` satisfy a selector: comma-separated `key=value`,
/// `key==value`, `key!=value`, `key` (present) and `!key` (absent).
fn selects(selector: &str, labels: &[String]) -> bool {
    let value_of = |key: &str| labels.iter().find_map(|label| label.split_once('=').filter(|(k, _)| *k == key).map(|(_, v)| v));
    selector.split(',').map(str::trim).filter(|term| !term.is_empty()).all(|term| {
        if let Some((key, value)) = term.split_once("!=") {
            value_of(key.trim()) != Some(value.trim())
        } else if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
            value_of(key.trim()) == Some(value.trim())
        } else if let Some(key) = term.strip_prefix('!') {
            value_of(key.trim()).is_none()
        } else {
            value_of(term).is_some()
        }
    })
}

/// A node condition as the kubelet posts it.
struct Condition {
    kind: &'static str,
    status: &'static str,
    heartbeat: EpochSeconds,
    transition: EpochSeconds,
    reason: &'static str,
    message: &'static str,
}

/// The node's conditions: the kubelet's every 40 s while it posts, Unknown
/// since it stopped.
fn conditions(cluster: &Cluster, node: &Node) -> Vec<Condition> {
    let (now, up) = (cluster.now, node.booted_at + 40);
    [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    .into_iter()
    .map(|(kind, fine, reason, message)| {
        if kubelet_ready(node, now) {
            Condition { kind, status: fine, heartbeat: now - (now - up) % 40, transition: up, reason, message }
        } else {
            let lost = kubelet_lost_at(cluster, node);
            Condition {
                kind,
                status: "Unknown",
                heartbeat: lost - 40,
                transition: lost,
                reason: "NodeStatusUnknown",
                message: "Kubelet stopped posting node status.",
            }
        }
    })
    .collect()
}

/// The node's taints: unreachable while its kubelet is silent, unschedulable while cordoned.
fn taints(cluster: &Cluster, node: &Node) -> Vec<(&'static str, &'static str)> {
    let mut taints = Vec::new();
    if !kubelet_ready(node, cluster.now) {
        taints.extend([("node.kubernetes.io/unreachable", "NoExecute"), ("node.kubernetes.io/unreachable", "NoSchedule")]);
    }
    if cordoned(node) {
        taints.push(("node.kubernetes.io/unschedulable", "NoSchedule"));
    }
    taints
}

/// A stable object UID and resource version for `what`.
fn identity(cluster: &Cluster, what: &str) -> (String, String) {
    let uid = crate::rng::uuid_for(&format!("{}:{what}", cluster.seed));
    let version = Rng::derive(cluster.seed, &[what, "resourceVersion"]).range_u64(1_000_000, 90_000_000);
    (uid, version.to_string())
}

/// The Node object the API server returns for `node`: what `describe` shows.
fn node_object(cluster: &Cluster, node: &Node, index: usize) -> Value {
    let host = &cluster.preset.host;
    let (gpu_capacity, gpu_allocatable) = crate::model::pods::gpu_resources(cluster, node);
    let labels = object_from(node_labels(node).iter().filter_map(|label| label.split_once('=')).map(|(k, v)| (k.to_string(), Value::from(v))));
    let memory = host.memory_mib * 1024;
    let resources = |mem: u64, gpus: usize| {
        object([
            ("cpu", host.cpus().to_string().into()),
            ("memory", format!("{mem}Ki").into()),
            ("nvidia.com/gpu", gpus.to_string().into()),
            ("pods", "110".into()),
        ])
    };
    let cidr = format!("10.244.{index}.0/24");
    let mut spec = object([("podCIDR", cidr.clone().into()), ("podCIDRs", Value::from(vec![cidr]))]);
    let taints: Vec<Value> = taints(cluster, node).into_iter().map(|(key, effect)| object([("effect", effect.into()), ("key", key.into())])).collect();
    if !taints.is_empty() {
        spec.set("taints", Value::from(taints));
    }
    if cordoned(node) {
        spec.set("unschedulable", Value::from(true));
    }
    let conditions: Vec<Value> = conditions(cluster, node)
        .into_iter()
        .map(|c| {
            object([
                ("lastHeartbeatTime", iso_utc(c.heartbeat).into()),
                ("lastTransitionTime", iso_utc(c.transition).into()),
                ("message", c.message.into()),
                ("reason", c.reason.into()),
                ("status", c.status.into()),
                ("type", c.kind.into()),
            ])
        })
        .collect();
    let ip = crate::model::network::frontend_ip(&node.hostname);
    let addresses =
        vec![object([("address", ip.into()), ("type", "InternalIP".into())]), object([("address", node.hostname.clone().into()), ("type", "Hostname".into())])];
    let version_of = || Value::from(cluster.versions.kubernetes.clone());
    let mut metadata = metadata(cluster, &node.hostname, None, joined(cluster, node), labels);
    let annotations = object([("node.alpha.kubernetes.io/ttl", "0".into()), ("volumes.kubernetes.io/controller-managed-attach-detach", "true".into())]);
    metadata.set("annotations", annotations);
    object([
        ("apiVersion", "v1".into()),
        ("kind", "Node".into()),
        ("metadata", metadata),
        ("spec", spec),
        (
            "status",
            object([
                ("addresses", Value::from(addresses)),
                ("allocatable", resources(memory - 102_400, gpu_allocatable)),
                ("capacity", resources(memory, gpu_capacity)),
                ("conditions", Value::from(conditions)),
                ("daemonEndpoints", object([("kubeletEndpoint", object([("Port", Value::Number(10250))]))])),
                (
                    "nodeInfo",
                    object([
                        ("architecture", "amd64".into()),
                        ("containerRuntimeVersion", "containerd://1.7.12".into()),
                        ("kernelVersion", KERNEL.into()),
                        ("kubeProxyVersion", version_of()),
                        ("kubeletVersion", version_of()),
                        ("operatingSystem", "linux".into()),
                        ("osImage", cluster.versions.os.pretty_name().into()),
                    ]),
                ),
            ]),
        ),
    ])
}

/// A pod's IP: its node's pod network (10.244.N.0/24), then its place.
fn pod_ip(pod: &Pod) -> String {
    format!("10.244.{}.{}", pod.node % 256, pod.ip_slot % 250 + 2)
}

/// An object's metadata: its name, namespace (if any), creation, labels and identity.
fn metadata(cluster: &Cluster, name: &str, namespace: Option<&str>, created: EpochSeconds, labels: Value) -> Value {
    let (uid, version) = identity(cluster, name);
    let mut meta = object([
        ("creationTimestamp", iso_utc(created).into()),
        ("labels", labels),
        ("name", name.into()),
        ("resourceVersion", version.into()),
        ("uid", uid.into()),
    ]);
    if let Some(namespace) = namespace {
        meta.set("namespace", namespace.into());
    }
    meta
}

/// The Pod object of one of the GPU Operator's pods: what `get pods -o wide` shows.
fn pod_object(cluster: &Cluster, pod: &Pod) -> Value {
    let node = &cluster.nodes[pod.node].hostname;
    let app = pod.name.rsplit_once('-').map_or(pod.name.as_str(), |(app, _)| app);
    let initializing = pod.status.starts_with("Init:");
    let state = if initializing {
        object([("waiting", object([("reason", "PodInitializing".into())]))])
    } else if pod.status == "CrashLoopBackOff" {
        let uid = identity(cluster, &pod.name).0;
        let message = format!("back-off 5m0s restarting failed container={} pod={}_{}({uid})", pod.container, pod.name, pod.namespace);
        object([("waiting", object([("message", message.into()), ("reason", "CrashLoopBackOff".into())]))])
    } else {
        object([("running", object([("startedAt", iso_utc(pod.started).into())]))])
    };
    let mut container = object([
        ("name", pod.container.into()),
        ("ready", pod.ready.into()),
        ("restartCount", pod.restarts.into()),
        ("started", pod.ready.into()),
        ("state", state),
    ]);
    if let Some(crashed) = pod.last_crash {
        let terminated = object([
            ("exitCode", Value::Number(1)),
            ("finishedAt", iso_utc(crashed).into()),
            ("reason", "Error".into()),
            ("startedAt", iso_utc(crashed - PLUGIN_RUN_S).into()),
        ]);
        container.set("lastState", object([("terminated", terminated)]));
    }
    object([
        ("apiVersion", "v1".into()),
        ("kind", "Pod".into()),
        ("metadata", metadata(cluster, &pod.name, Some(pod.namespace), pod.since, object([("app", app.into())]))),
        ("spec", object([("nodeName", node.clone().into())])),
        (
            "status",
            object([
                ("containerStatuses", Value::from(vec![container])),
                ("hostIP", crate::model::network::frontend_ip(node).into()),
                ("phase", if initializing { "Pending" } else { "Running" }.into()),
                ("podIP", pod_ip(pod).into()),
                ("startTime", iso_utc(pod.since).into()),
            ]),
        ),
    ])
}

/// `-o json|yaml|jsonpath=...|custom-columns=...` of `items` (one object
/// by name prints alone, a query's objects as a List).
fn print_objects(format: &str, items: Vec<Value>, single: bool) -> Output {
    use super::kubectl_print;
    let root = if single && items.len() == 1 {
        items.into_iter().next().unwrap_or_default()
    } else {
        object([("apiVersion", "v1".into()), ("items", Value::from(items)), ("kind", "List".into()), ("metadata", object([("resourceVersion", "".into())]))])
    };
    if format == "json" {
        return Output::ok(kubectl_print::json(&root));
    }
    if format == "yaml" {
        return Output::ok(kubectl_print::yaml(&root));
    }
    if let Some(template) = format.strip_prefix("jsonpath=").or_else(|| format.strip_prefix("jsonpath-as-text=")) {
        // kubectl takes a template wrapped in one more pair of quotes.
        let unquoted = ["'", "\""].iter().find_map(|q| template.strip_prefix(q).and_then(|t| t.strip_suffix(q)));
        let template = unquoted.unwrap_or(template);
        return match kubectl_print::jsonpath(template, &root) {
            Ok(text) => Output::ok(text),
            Err(reason) => Output::error(format!("error: error parsing jsonpath {template}, {reason}\n"), 1),
        };
    }
    if let Some(template) = format.strip_prefix("go-template=").or_else(|| format.strip_prefix("template=")) {
        return match super::go_template::execute(template, &root) {
            Ok(text) => Output::ok(text),
            Err((true, reason)) => Output::error(format!("error: error parsing template {template}, {reason}\n"), 1),
            Err((false, reason)) => Output::error(format!("error: error executing template \"{template}\": {reason}\n"), 1),
        };
    }
    if let Some(spec) = format.strip_prefix("custom-columns=") {
        let items: Vec<&Value> = match root.get("items") {
            Some(Value::Array(items)) => items.iter().collect(),
            _ => vec![&root],
        };
        return match kubectl_print::custom_columns(spec, &items) {
            Ok(rows) => Output::ok(align(&rows, 3, 0)),
            Err(reason) => Output::error(format!("error: {reason}\n"), 1),
        };
    }
    let name = format.split('=').next().unwrap_or(format);
    Output::error(format!("error: {name} output is not emulated; try -o json, -o yaml, -o jsonpath=..., -o go-template=... or -o custom-columns=...\n"), 1)
}

fn describe_node(cluster: &Cluster, node: &Node, pods: &[Pod]) -> String {
    let now = cluster.now;
    let host = &cluster.preset.host;
    let name = &node.hostname;
    let mut l: Vec<String> = vec![format!("Name:\t{name}"), "Roles:\t<none>".into()];
    for (at, label) in node_labels(node).iter().enumerate() {
        l.push(format!("{}\t{label}", if at == 0 { "Labels:" } else { "" }));
    }
    l.push("Annotations:\tnode.alpha.kubernetes.io/ttl: 0".into());
    l.push("\tvolumes.kubernetes.io/controller-managed-attach-detach: true".into());
    l.push(format!("CreationTimestamp:\t{}", rfc1123(joined(cluster, node))));
    let mut taints: Vec<String> = taints(cluster, node).into_iter().map(|(key, effect)| format!("{key}:{effect}")).collect();
    if taints.is_empty() {
        taints.push("<none>".to_string());
    }
    for (at, taint) in taints.iter().enumerate() {
        l.push(format!("{}\t{taint}", if at == 0 { "Taints:" } else { "" }));
    }
    l.push(format!("Unschedulable:\t{}", cordoned(node)));
    l.push("Conditions:".into());
    l.push("  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage".into());
    l.push("  ----\t------\t-----------------\t------------------\t------\t-------".into());
    for c in conditions(cluster, node) {
        l.push(format!("  {}\t{}\t{}\t{}\t{}\t{}", c.kind, c.status, rfc1123(c.heartbeat), rfc1123(c.transition), c.reason, c.message));
    }
    l.push("Addresses:".into());
    l.push(format!("  InternalIP:\t{}", crate::model::network::frontend_ip(name)));
    l.push(format!("  Hostname:\t{name}"));
    let memory = host.memory_mib * 1024;
    let (capacity, allocatable) = crate::model::pods::gpu_resources(cluster, node);
    for (title, mem, gpu) in [("Capacity:", memory, capacity), ("Allocatable:", memory - 102_400, allocatable)] {
        l.push(title.into());
        l.push(format!("  cpu:\t{}", host.cpus()));
        l.push(format!("  memory:\t{mem}Ki"));
        l.push(format!("  nvidia.com/gpu:\t{gpu}"));
        l.push("  pods:\t110".into());
    }
    l.push("System Info:".into());
    for (key, value) in [
        ("Kernel Version", KERNEL),
        ("OS Image", cluster.versions.os.pretty_name()),
        ("Operating System", "linux"),
        ("Architecture", "amd64"),
        ("Container Runtime Version", "containerd://1.7.12"),
        ("Kubelet Version", &cluster.versions.kubernetes),
        ("Kube-Proxy Version", &cluster.versions.kubernetes),
    ] {
        l.push(format!("  {key}:\t{value}"));
    }
    let mine: Vec<&Pod> = pods.iter().filter(|p| cluster.nodes[p.node].hostname == *name).collect();
    let workload: Vec<&crate::model::pods::Pod> = cluster
        .pods_in(None)
        .into_iter()
        .filter(|p| p.binding.as_ref().is_some_and(|b| b.node == *name) && !matches!(cluster.pod_state(p).phase, "Succeeded" | "Failed"))
        .collect();
    l.push(format!("Non-terminated Pods:\t({} in total)", mine.len() + workload.len()));
    l.push("  Namespace\tName\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge".into());
    l.push("  ---------\t----\t------------\t----------\t---------------\t-------------\t---".into());
    let mut rows: Vec<(&str, &str, EpochSeconds)> = mine.iter().map(|p| (p.namespace, p.name.as_str(), p.since)).collect();
    rows.extend(workload.iter().map(|p| (p.spec.namespace.as_str(), p.spec.name.as_str(), p.created)));
    crate::sort::sort_by(&mut rows, |a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    for (namespace, pod, since) in rows {
        l.push(format!("  {namespace}\t{pod}\t0 (0%)\t0 (0%)\t0 (0%)\t0 (0%)\t{}", age(now - since)));
    }
    let gpus_requested: u32 = workload.iter().map(|p| p.spec.gpus).sum();
    // What the pods request of the node: the operator's pods ask for
    // nothing, the workload pods their GPUs (an extended resource has no
    // percentage).
    l.push("Allocated resources:".into());
    l.push("  (Total limits may be over 100 percent, i.e., overcommitted.)".into());
    l.push("  Resource\tRequests\tLimits".into());
    l.push("  --------\t--------\t------".into());
    l.push("  cpu\t0 (0%)\t0 (0%)".into());
    l.push("  memory\t0 (0%)\t0 (0%)".into());
    l.push("  ephemeral-storage\t0 (0%)\t0 (0%)".into());
    l.push(format!("  nvidia.com/gpu\t{gpus_requested}\t{gpus_requested}"));
    let events: Vec<[String; 5]> =
        node_events(cluster, node).into_iter().map(|e| [e.kind.to_string(), e.reason.to_string(), age(now - e.at), e.source.to_string(), e.message]).collect();
    events_table(&mut l, events);
    align(&l, 2, 0)
}

/// `describe`'s last section: `Events:  <none>`, or its table (type,
/// reason, age, source, message).
pub(super) fn events_table(lines: &mut Vec<String>, events: Vec<[String; 5]>) {
    if events.is_empty() {
        lines.push("Events:\t<none>".into());
        return;
    }
    lines.push("Events:".into());
    lines.push("  Type\tReason\tAge\tFrom\tMessage".into());
    lines.push("  ----\t------\t----\t----\t-------".into());
    lines.extend(events.into_iter().map(|cells| format!("  {}", cells.join("\t"))));
}

/// An event the API server keeps about a node.
struct Event {
    kind: &'static str,
    reason: &'static str,
    at: EpochSeconds,
    source: &'static str,
    message: String,
}

/// How long the API server keeps events (kube-apiserver's `--event-ttl`).
const EVENT_TTL: i64 = 3600;

/// What happened to `node` within the events' lifetime, oldest first: it
/// stopped answering, it rebooted (the kubelet starts again and reports a
/// new boot), it was cordoned.
fn node_events(cluster: &Cluster, node: &Node) -> Vec<Event> {
    let name = &node.hostname;
    let status = |at, status: &str, source| Event { kind: "Normal", reason: "", at, source, message: format!("Node {name} status is now: {status}") };
    let mut events = Vec::new();
    let rebooted = node.booted_at > cluster.started_at();
    let away = if !kubelet_ready(node, cluster.now) {
        Some(kubelet_lost_at(cluster, node))
    } else {
        rebooted.then_some(node.booted_at - crate::model::change::BOOT_SECONDS)
    };
    if let Some(at) = away {
        events.push(Event { reason: "NodeNotReady", ..status(at + 40, "NodeNotReady", "node-controller") });
    }
    // The kubelet comes up about half a minute into the boot.
    let kubelet = node.booted_at + 35;
    if rebooted && node.up(cluster.now) && kubelet <= cluster.now {
        let boot_id = Rng::derive(cluster.seed, &[name, "boot-id", &node.booted_at.to_string()]).hex(32);
        let uuid = format!("{}-{}-{}-{}-{}", &boot_id[..8], &boot_id[8..12], &boot_id[12..16], &boot_id[16..20], &boot_id[20..]);
        events.push(Event { kind: "Normal", reason: "Starting", at: kubelet, source: "kubelet", message: "Starting kubelet.".to_string() });
        events.push(Event {
            kind: "Warning",
            reason: "Rebooted",
            at: kubelet,
            source: "kubelet",
            message: format!("Node {name} has been rebooted, boot id: {uuid}"),
        });
        events.push(Event { reason: "NodeReady", ..status(kubelet + 10, "NodeReady", "kubelet") });
    }
    if cordoned(node) {
        events.push(Event { reason: "NodeNotSchedulable", ..status(node.cordoned_since.unwrap_or(cluster.now), "NodeNotSchedulable", "kubelet") });
    }
    events.retain(|event| event.at <= cluster.now && cluster.now - event.at <= EVENT_TTL);
    crate::sort::sort_by_key(&mut events, |event| event.at);
    events
}

/// `kubectl get events`: the nodes' events, which live in the `default`
/// namespace, by object and then time as the API lists them.
fn events(cluster: &Cluster, o: &Opts) -> Output {
    let all = o.all;
    let namespace = o.namespace.as_deref().unwrap_or("default");
    let mut rows = vec![format!("{}LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE", if all { "NAMESPACE\t" } else { "" })];
    for node in cluster.nodes.iter().filter(|_| all || namespace == "default") {
        for event in node_events(cluster, node) {
            rows.push(format!(
                "{}{}\t{}\t{}\tnode/{}\t{}",
                if all { "default\t" } else { "" },
                age(cluster.now - event.at),
                event.kind,
                event.reason,
                node.hostname,
                event.message
            ));
        }
    }
    for pod in cluster.pods_in(if all { None } else { Some(namespace) }) {
        for event in super::kubectl_pods::pod_events(cluster, pod) {
            rows.push(format!(
                "{}{}\t{}\t{}\tpod/{}\t{}",
                if all { format!("{}\t", pod.spec.namespace) } else { String::new() },
                super::kubectl_pods::event_age(cluster.now, &event, &age).split(' ').next().unwrap_or(""),
                event.kind,
                event.reason,
                pod.spec.name,
                event.message
            ));
        }
    }
    if rows.len() == 1 {
        return none_found(all, namespace);
    }
    Output::ok(align(&rows, 3, 0))
}

/// kubectl's answer when nothing matches: on stderr, status 0, naming the
/// namespace unless every one was asked for.
fn none_found(all: bool, namespace: &str) -> Output {
    let place = if all { String::new() } else { format!(" in {namespace} namespace") };
    Output::error(format!("No resources found{place}.\n"), 0)
}

/// Device-plugin log lines (klog format), with the error on a faulty node.
fn plugin_log(cluster: &Cluster, node: &Node, pod: &Pod) -> String {
    let started = if pod.status == "CrashLoopBackOff" { cluster.now - 30 } else { pod.started + 2 };
    let c = crate::model::time::civil(started);
    let mut rng = Rng::derive(cluster.seed, &[&pod.name, "log"]);
    let mut micros = rng.range_u64(0, 800_000);
    let mut out = String::new();
    let mut line = |level: char, source: &str, text: &str, extra: u64| {
        micros += extra;
        let s = c.second as u64 + micros / 1_000_000;
        out +=
            &format!("{level}{:02}{:02} {:02}:{:02}:{:02}.{:06}       1 {source}] {text}\n", c.month, c.day, c.hour, c.minute, s.min(59), micros % 1_000_000);
    };
    line('I', "main.go:161", "Starting OS watcher.", 0);
    line('I', "main.go:176", "Starting Plugins.", 210);
    line('I', "main.go:234", "Loading configuration.", 25);
    line('I', "factory.go:107", "Detected NVML platform: found NVML library", 1040);
    line('I', "factory.go:107", "Detected non-Tegra platform: /sys/devices/soc0/family file not found", 55);
    if let Some(gpu) = node.gpus.iter().find(|g| !g.works()) {
        let why = if gpu.health == GpuHealth::Healthy { "Unknown Error" } else { "GPU is lost" };
        let text = format!("error starting plugins: error getting plugins: failed to construct NVML resource managers: error building device map: error building device map from config.resources: error visiting devices: error visiting device: error getting device handle for index '{}': {why}", gpu.index);
        line('E', "main.go:123", &text, 3_120_000);
    } else {
        line('I', "server.go:165", "Starting GRPC server for 'nvidia.com/gpu'", 27_000);
        line('I', "server.go:117", "Starting to serve 'nvidia.com/gpu' on /var/lib/kubelet/device-plugins/nvidia-gpu.sock", 200);
        line('I', "server.go:125", "Registered device plugin for 'nvidia.com/gpu' with Kubelet", 1660);
    }
    out
}

#[derive(Default)]
struct Opts {
    words: Vec<String>,
    namespace: Option<String>,
    all: bool,
    output: Option<String>,
    ignore_ds: bool,
    tail: Option<String>,
    /// `version --client`, `version --short`.
    client: bool,
    short: bool,
    /// `-l SELECTOR`, `--show-labels`.
    selector: Option<String>,
    show_labels: bool,
    /// `-f FILE` of apply, create and delete.
    files: Vec<String>,
    /// `drain --force`, `delete --force`.
    force: bool,
    /// `logs -p`, `logs -c CONTAINER`.
    previous: bool,
    container: Option<String>,
    /// `exec POD -- COMMAND...`: what follows `--`.
    command: Option<Vec<String>>,
}

fn parse(args: &[String]) -> Result<Opts, Output> {
    let mut o = Opts::default();
    let mut rest = args.iter();
    let usage = |message: String| Output::error(format!("error: {message}\nSee 'kubectl --help' for usage.\n"), 1);
    while let Some(arg) = rest.next() {
        if arg == "--" {
            o.command = Some(rest.by_ref().cloned().collect());
            break;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let (name, inline) = match name.as_bytes() {
            [b'-', b'n' | b'o' | b'c', _, ..] if inline.is_none() => (&name[..2], Some(name[2..].to_string())),
            _ => (name, inline),
        };
        // `-f` names a manifest for the verbs that read one (`logs -f` follows).
        let manifests = o.words.first().is_some_and(|verb| matches!(verb.as_str(), "apply" | "create" | "delete" | "replace"));
        let (name, inline) = match name.as_bytes() {
            [b'-', b'f', _, ..] if manifests && inline.is_none() => (&name[..2], Some(name[2..].to_string())),
            _ => (name, inline),
        };
        let takes = matches!(
            name,
            "-n" | "--namespace"
                | "-o"
                | "--output"
                | "-c"
                | "--container"
                | "--tail"
                | "--grace-period"
                | "--timeout"
                | "--since"
                | "-l"
                | "--selector"
                | "--filename"
        ) || (manifests && name == "-f");
        let value = if takes {
            match inline.or_else(|| rest.next().cloned()) {
                Some(v) => v,
                None if name.starts_with("--") => return Err(usage(format!("flag needs an argument: {name}"))),
                None => return Err(usage(format!("flag needs an argument: '{}' in {name}", &name[1..]))),
            }
        } else {
            String::new()
        };
        match name {
            "-n" | "--namespace" => o.namespace = Some(value),
            "-o" | "--output" => o.output = Some(value),
            "-l" | "--selector" => o.selector = Some(value),
            "--show-labels" => o.show_labels = true,
            "--tail" => o.tail = Some(value),
            "-A" | "--all-namespaces" => o.all = true,
            "--ignore-daemonsets" => o.ignore_ds = true,
            "--client" => o.client = true,
            "--short" => o.short = true,
            "-f" | "--filename" if manifests || name == "--filename" => o.files.push(value),
            "--force" => o.force = true,
            "-p" | "--previous" => o.previous = true,
            "-c" | "--container" => o.container = Some(value),
            "--grace-period"
            | "--timeout"
            | "--since"
            | "--delete-emptydir-data"
            | "--delete-local-data"
            | "--stdin"
            | "--tty"
            | "-f"
            | "--follow"
            | "-w"
            | "--watch" => {}
            "-" => o.words.push(arg.clone()),
            _ if name.starts_with("--") => return Err(usage(format!("unknown flag: {name}"))),
            _ if name.starts_with('-') => {
                let bad = name[1..].chars().find(|c| !"Apfwit".contains(*c)).unwrap_or('-');
                if bad != '-' {
                    return Err(usage(format!("unknown shorthand flag: '{bad}' in {name}")));
                }
                o.all |= name.contains('A');
                o.previous |= name.contains('p');
            }
            _ => o.words.push(arg.clone()),
        }
    }
    Ok(o)
}

fn kind(word: &str) -> Option<&'static str> {
    let lower = word.to_ascii_lowercase();
    let base = lower.split('.').next().unwrap_or("");
    match base {
        "node" | "nodes" | "no" => Some("nodes"),
        "pod" | "pods" | "po" => Some("pods"),
        "namespace" | "namespaces" | "ns" => Some("namespaces"),
        _ => None,
    }
}

/// The slurm-operator's NodeSet kind by its names (the CRD's plural,
/// singular and short names, or its full name).
fn is_nodeset(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    matches!(lower.as_str(), "nodeset" | "nodesets" | "nss" | "slurmd")
        || lower.starts_with("nodesets.slinky.slurm.net")
        || lower.starts_with("nodeset.slinky.slurm.net")
}

/// `kubectl get nodesets`: the CRD's printer columns (v1.2.1's
/// api/v1beta1/nodeset_types.go), the Slurm ones with `-o wide`. DESIRED
/// counts the nodes a pod may be placed on now (no taint it does not
/// tolerate: a cordon's or an unreachable node's), the Slurm counts the
/// pods' Slurm nodes by base state, DRAIN by its flag.
fn nodesets(cluster: &Cluster, o: &Opts) -> Output {
    let namespace = o.namespace.as_deref().unwrap_or("default");
    if !o.all && namespace != slurm_operator::NAMESPACE {
        return none_found(false, namespace);
    }
    if let Some(name) = o.words.get(2).filter(|name| *name != slurm_operator::NODESET) {
        return Output::error(format!("Error from server (NotFound): nodesets.slinky.slurm.net \"{name}\" not found\n"), 1);
    }
    let wide = match o.output.as_deref() {
        None => false,
        Some("wide") => true,
        Some("name") => return Output::ok(format!("nodeset.slinky.slurm.net/{}\n", slurm_operator::NODESET)),
        Some(other) => return Output::error(format!("error: -o {other} of a NodeSet is not emulated; kubectl get nodesets -n slurm [-o wide|name]\n"), 1),
    };
    let with_pods: Vec<&Node> = cluster.nodes.iter().map(|n| n.as_ref()).filter(|n| !evicted(n)).collect();
    let desired = cluster.nodes.iter().filter(|n| taints(cluster, n).is_empty()).count();
    let ready = with_pods.iter().filter(|n| kubelet_ready(n, cluster.now)).count();
    let shown: Vec<SlurmShown> = with_pods.iter().map(|n| SlurmShown::of(n)).collect();
    let count = |states: &[SlurmShown]| shown.iter().filter(|s| states.contains(s)).count();
    let mut header = format!("{}NAME\tDESIRED\tREPLICAS\tUPDATED\tREADY", if o.all { "NAMESPACE\t" } else { "" });
    let mut row = format!(
        "{}{}\t{desired}\t{}\t{}\t{ready}",
        if o.all { format!("{}\t", slurm_operator::NAMESPACE) } else { String::new() },
        slurm_operator::NODESET,
        with_pods.len(),
        with_pods.len()
    );
    if wide {
        header += "\tIDLE\tALLOCATED\tDOWN\tDRAIN";
        let idle = count(&[SlurmShown::Idle, SlurmShown::Drained]);
        let allocated = count(&[SlurmShown::Allocated, SlurmShown::Draining]);
        let drain = count(&[SlurmShown::Drained, SlurmShown::Draining]);
        row += &format!("\t{idle}\t{allocated}\t{}\t{drain}", count(&[SlurmShown::Down]));
    }
    header += "\tAGE";
    row += &format!("\t{}", age(cluster.now - created(cluster) - 3600));
    Output::ok(align(&[header, row], 3, 6))
}

fn get(cluster: &Cluster, o: &Opts) -> Output {
    if o.words.get(1).is_some_and(|word| matches!(word.to_ascii_lowercase().as_str(), "events" | "event" | "ev")) {
        return events(cluster, o);
    }
    let Some(resource) = o.words.get(1) else {
        return Output::error("You must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources.\n\nerror: Required resource not specified.\nUse \"kubectl explain <resource>\" for a detailed description of that resource (e.g. kubectl explain pods).\nSee 'kubectl get -h' for help and examples\n", 1);
    };
    if cluster.slurm_on_kubernetes() && is_nodeset(resource) {
        return nodesets(cluster, o);
    }
    let Some(kind) = kind(resource) else {
        return Output::error(format!("error: the server doesn't have a resource type \"{resource}\"\n"), 1);
    };
    let (wide, name_only, objects) = match o.output.as_deref() {
        None => (false, false, None),
        Some("wide") => (true, false, None),
        Some("name") => (false, true, None),
        Some(format) if PRINTERS.iter().any(|p| format.split('=').next() == Some(*p)) => (false, false, Some(format)),
        Some(other) => {
            return Output::error(
                format!("error: unable to match a printer suitable for the output format \"{other}\", allowed formats are: {}\n", PRINTERS.join(",")),
                1,
            )
        }
    };
    let wanted = &o.words[2..];
    let now = cluster.now;
    let mut rows: Vec<String> = Vec::new();
    match kind {
        "nodes" => {
            rows.push(format!(
                "NAME\tSTATUS\tROLES\tAGE\tVERSION{}{}",
                if wide { "\tINTERNAL-IP\tEXTERNAL-IP\tOS-IMAGE\tKERNEL-VERSION\tCONTAINER-RUNTIME" } else { "" },
                if o.show_labels { "\tLABELS" } else { "" }
            ));
            for name in wanted {
                if cluster.node(name).is_none() {
                    return not_found("nodes", name);
                }
            }
            let selected = |node: &Node| o.selector.as_deref().is_none_or(|selector| selects(selector, &node_labels(node)));
            // Nodes are cluster-wide: no namespace in the message.
            if !cluster.nodes.iter().any(|n| selected(n)) {
                return Output::error("No resources found\n", 0);
            }
            let shown: Vec<(usize, &Node)> = cluster
                .nodes
                .iter()
                .map(AsRef::as_ref)
                .enumerate()
                .filter(|(_, n)| (wanted.is_empty() || wanted.contains(&n.hostname)) && selected(n))
                .collect();
            if let Some(format) = objects {
                let items = shown.iter().map(|(index, n)| node_object(cluster, n, *index)).collect();
                return print_objects(format, items, wanted.len() == 1);
            }
            for (_, node) in shown {
                if name_only {
                    rows.push(format!("node/{}", node.hostname));
                    continue;
                }
                let mut row =
                    format!("{}\t{}\t<none>\t{}\t{}", node.hostname, node_status(node, now), age(now - joined(cluster, node)), cluster.versions.kubernetes);
                if wide {
                    let ip = crate::model::network::frontend_ip(&node.hostname);
                    row += &format!("\t{ip}\t<none>\t{}\t{KERNEL}\tcontainerd://1.7.12", cluster.versions.os.pretty_name());
                }
                if o.show_labels {
                    row += &format!("\t{}", node_labels(node).join(","));
                }
                rows.push(row);
            }
        }
        "namespaces" => {
            rows.push("NAME\tSTATUS\tAGE".into());
            let born = created(cluster);
            if let Some(format) = objects {
                let items = namespaces(cluster)
                    .iter()
                    .filter(|ns| wanted.is_empty() || wanted.iter().any(|w| w == *ns))
                    .map(|ns| {
                        let labels = object([("kubernetes.io/metadata.name", (*ns).into())]);
                        object([
                            ("apiVersion", "v1".into()),
                            ("kind", "Namespace".into()),
                            ("metadata", metadata(cluster, ns, None, born, labels)),
                            ("spec", object([("finalizers", Value::from(vec!["kubernetes"]))])),
                            ("status", object([("phase", "Active".into())])),
                        ])
                    })
                    .collect();
                return print_objects(format, items, wanted.len() == 1);
            }
            for ns in namespaces(cluster) {
                if wanted.is_empty() || wanted.iter().any(|w| w == ns) {
                    rows.push(if name_only { format!("namespace/{ns}") } else { format!("{ns}\tActive\t{}", age(now - born)) });
                }
            }
        }
        _ => {
            let namespace = o.namespace.as_deref().unwrap_or("default");
            let all = o.all && wanted.is_empty();
            let pods = pods(cluster);
            // One list, as the API server returns it: by namespace, then name.
            let mut shown: Vec<Listed> = Vec::new();
            shown.extend(pods.iter().filter(|pod| all || pod.namespace == namespace).map(Listed::Operator));
            shown.extend(cluster.pods_in(if all { None } else { Some(namespace) }).into_iter().map(Listed::Workload));
            crate::sort::sort_by(&mut shown, |a, b| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())));
            for name in wanted {
                if !shown.iter().any(|p| p.name() == name) {
                    return not_found("pods", name);
                }
            }
            if shown.is_empty() {
                return none_found(all, namespace);
            }
            let shown: Vec<Listed> = shown.into_iter().filter(|p| wanted.is_empty() || wanted.iter().any(|w| w == p.name())).collect();
            if let Some(format) = objects {
                let items = shown
                    .iter()
                    .map(|listed| match listed {
                        Listed::Operator(pod) => pod_object(cluster, pod),
                        Listed::Workload(pod) => super::kubectl_pods::pod_object(cluster, pod),
                    })
                    .collect();
                return print_objects(format, items, wanted.len() == 1);
            }
            rows.push(format!(
                "{}NAME\tREADY\tSTATUS\tRESTARTS\tAGE{}",
                if all { "NAMESPACE\t" } else { "" },
                if wide { "\tIP\tNODE\tNOMINATED NODE\tREADINESS GATES" } else { "" }
            ));
            for listed in &shown {
                if name_only {
                    rows.push(format!("pod/{}", listed.name()));
                    continue;
                }
                let (ready, status, restarts, since, ip, node) = match listed {
                    Listed::Operator(pod) => {
                        let ready = format!("{}/{}", if pod.ready { pod.containers } else { 0 }, pod.containers);
                        (ready, pod.status, restarts_cell(cluster, pod), pod.since, pod_ip(pod), cluster.nodes[pod.node].hostname.clone())
                    }
                    Listed::Workload(pod) => {
                        let state = cluster.pod_state(pod);
                        let node = pod.binding.as_ref().map_or("<none>".to_string(), |b| b.node.clone());
                        let ip = super::kubectl_pods::ip(cluster, pod).filter(|_| !state.runs.is_empty()).unwrap_or("<none>".to_string());
                        (format!("{}/1", u8::from(state.ready)), state.status, super::kubectl_pods::restarts_cell(cluster, &state), pod.created, ip, node)
                    }
                };
                let mut row = format!(
                    "{}{}\t{ready}\t{status}\t{restarts}\t{}",
                    if all { format!("{}\t", listed.namespace()) } else { String::new() },
                    listed.name(),
                    age(now - since)
                );
                if wide {
                    row += &format!("\t{ip}\t{node}\t<none>\t<none>");
                }
                rows.push(row);
            }
        }
    }
    if name_only {
        rows.remove(0);
        return Output::ok(rows.iter().map(|r| format!("{r}\n")).collect::<String>());
    }
    Output::ok(align(&rows, 3, 6))
}

/// A pod in a listing: one of the controllers' (the GPU Operator's, the
/// slurm-operator's) or a workload pod.
enum Listed<'a> {
    Operator(&'a Pod),
    Workload(&'a crate::model::pods::Pod),
}

impl Listed<'_> {
    fn namespace(&self) -> &str {
        match self {
            Listed::Operator(pod) => pod.namespace,
            Listed::Workload(pod) => &pod.spec.namespace,
        }
    }

    fn name(&self) -> &str {
        match self {
            Listed::Operator(pod) => &pod.name,
            Listed::Workload(pod) => &pod.spec.name,
        }
    }
}

fn act(cluster: &Cluster, o: &Opts, verb: &str) -> Output {
    let names = &o.words[1..];
    if names.is_empty() {
        return Output::error("error: resource(s) were provided, but no name was specified\n", 1);
    }
    let mut out = Output { duration_ms: 400, ..Output::default() };
    let all_pods = pods(cluster);
    for name in names {
        let Some(node) = cluster.node(name) else {
            out.stderr += &format!("Error from server (NotFound): nodes \"{name}\" not found\n");
            out.status = 1;
            continue;
        };
        let mark = |unschedulable, drained| Change::Cordon { node: name.clone(), unschedulable, drained };
        if verb == "uncordon" {
            if cordoned(node) {
                out.stdout += &format!("node/{name} uncordoned\n");
                out.changes.push(mark(false, false));
            } else {
                out.stdout += &format!("node/{name} already uncordoned\n");
            }
            continue;
        }
        if cordoned(node) {
            out.stdout += &format!("node/{name} already cordoned\n");
        } else {
            out.stdout += &format!("node/{name} cordoned\n");
            out.changes.push(mark(true, false));
        }
        if verb != "drain" {
            continue;
        }
        let mine: Vec<&Pod> = all_pods.iter().filter(|p| p.node == cluster.nodes.iter().position(|n| n.hostname == *name).unwrap_or(usize::MAX)).collect();
        let ds: Vec<String> = mine.iter().filter(|p| p.daemonset).map(|p| format!("{NS}/{}", p.name)).collect();
        // Workload pods declare no controller: only --force deletes them
        // (those that finished go without it).
        let workload: Vec<&crate::model::pods::Pod> = cluster.pods.iter().filter(|p| p.binding.as_ref().is_some_and(|b| b.node == *name)).collect();
        let finished = |p: &crate::model::pods::Pod| matches!(cluster.pod_state(p).phase, "Succeeded" | "Failed");
        let bare: Vec<String> = workload.iter().filter(|p| !finished(p)).map(|p| format!("{}/{}", p.spec.namespace, p.spec.name)).collect();
        let mut refusals = Vec::new();
        if !o.ignore_ds && !ds.is_empty() {
            refusals.push(format!("cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): {}", ds.join(", ")));
        }
        if !o.force && !bare.is_empty() {
            refusals.push(format!("cannot delete Pods declare no controller (use --force to override): {}", bare.join(", ")));
        }
        if !refusals.is_empty() {
            // One error alone, or the list of them, as an aggregate error prints.
            let why = if refusals.len() == 1 { refusals[0].clone() } else { format!("[{}]", refusals.join(", ")) };
            out.stderr += &format!(
                "error: unable to drain node \"{name}\" due to error:{why}, continuing command...\nThere are pending nodes to be drained:\n {name}\n{}\n",
                refusals.join("\n")
            );
            out.status = 1;
            continue;
        }
        let mut warnings = Vec::new();
        if !bare.is_empty() {
            warnings.push(format!("deleting Pods that declare no controller: {}", bare.join(", ")));
        }
        if !ds.is_empty() {
            warnings.push(format!("ignoring DaemonSet-managed Pods: {}", ds.join(", ")));
        }
        if !warnings.is_empty() {
            out.stderr += &format!("Warning: {}\n", warnings.join("; "));
        }
        let mut evicted: Vec<String> = workload.iter().map(|p| format!("{}/{}", p.spec.namespace, p.spec.name)).collect();
        evicted.extend(mine.iter().filter(|p| !p.daemonset).map(|p| format!("{}/{}", p.namespace, p.name)));
        for pod in &evicted {
            out.stdout += &format!("evicting pod {pod}\n");
        }
        // The slurmd pod's disruption budget refuses its eviction while
        // Slurm runs a job there: kubectl retries until the job ends.
        let slurmd = mine.iter().find(|p| p.nodeset);
        let retry = |pod: &Pod| {
            format!(
                "error when evicting pods/\"{}\" -n \"{}\" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.\n",
                pod.name, pod.namespace
            )
        };
        let waited_ms = match slurmd.map(|pod| (pod, slurmd_free_after(cluster, name))) {
            None => 0,
            Some((pod, Some(waited_ms))) => {
                out.stderr += &retry(pod).repeat(waited_ms.div_ceil(5000) as usize);
                waited_ms
            }
            // Still protected when the lab stops the wait, as Ctrl-C would.
            Some((pod, None)) => {
                out.started_stderr = std::mem::take(&mut out.stderr) + &retry(pod).repeat((DRAIN_WAIT_MS / 5000) as usize);
                out.duration_ms = DRAIN_WAIT_MS;
                out.status = 130;
                return out;
            }
        };
        for pod in &evicted {
            out.stdout += &format!("pod/{} evicted\n", pod.split_once('/').map_or(pod.as_str(), |(_, n)| n));
        }
        for pod in &workload {
            out.duration_ms += super::kubectl_pods::deletion_ms(cluster, pod, false);
            out.changes.push(Change::DeletePod { node: name.clone(), namespace: pod.spec.namespace.clone(), name: pod.spec.name.clone() });
        }
        if let Some(pod) = slurmd {
            out.changes.extend(slurmd_pod_deleted(name, pod.namespace, &pod.name));
        }
        out.stdout += &format!("node/{name} drained\n");
        out.changes.push(mark(true, true));
        out.duration_ms += 5000 * evicted.len() as u64 + waited_ms;
    }
    out
}

/// How long kubectl drain retries an eviction a disruption budget refuses
/// before the lab stops it for the user (a real one retries until the
/// budget allows it, or Ctrl-C), as srun's wait in the queue.
const DRAIN_WAIT_MS: u64 = 10 * 60 * 1000;

/// How long until Slurm runs nothing on `node` (its slurmd pod's budget
/// then lets it go), if within [`DRAIN_WAIT_MS`].
fn slurmd_free_after(cluster: &Cluster, node: &str) -> Option<u64> {
    let busy = |cluster: &Cluster| cluster.node(node).is_some_and(|n| n.busy);
    if !busy(cluster) {
        return Some(0);
    }
    let mut later = cluster.clone();
    (1..=DRAIN_WAIT_MS / 30_000).map(|step| step * 30_000).find(|waited_ms| {
        later.advance_to(cluster.now + (*waited_ms / 1000) as i64);
        !busy(&later)
    })
}

/// What deleting a node's slurmd pod does: its preStop hook sets the Slurm
/// node down (chart v1.2's `scontrol update nodename=$(hostname)
/// state=down reason='slurm-operator: Pod is terminating'`), and a down
/// node stays down when the next slurmd registers (slurm.conf's default
/// ReturnToService=0) until an operator resumes it.
fn slurmd_pod_deleted(node: &str, namespace: &str, pod: &str) -> [Change; 2] {
    [
        Change::SetScheduler {
            node: node.to_string(),
            state: crate::model::node::SchedulerState::Down,
            reason: Some(slurm_operator::TERMINATING_REASON.to_string()),
        },
        Change::DeletePod { node: node.to_string(), namespace: namespace.to_string(), name: pod.to_string() },
    ]
}

/// The Kustomize kubectl embeds (its go.mod at each release's last tag); it
/// prints it from 1.24.
fn kustomize(minor: u32) -> Option<&'static str> {
    Some(match minor {
        0..=23 => return None,
        24 => "v4.5.4",
        25 | 26 => "v4.5.7",
        27 => "v5.0.1",
        _ => "v5.0.4-0.20230601165947-6ce0bf390ce3",
    })
}

/// `kubectl version`: the short form, kubectl's only one from 1.28 and
/// `--short` before (deprecated from 1.24).
fn version(cluster: &Cluster, o: &Opts) -> Output {
    let minor = cluster.versions.kubernetes_minor();
    let usage = |message: &str| Output::error(format!("error: {message}\nSee 'kubectl version --help' for usage.\n"), 1);
    if o.short && minor >= 28 {
        return usage("unknown flag: --short");
    }
    if o.words.len() > 1 {
        return Output::error(format!("error: extra arguments: [{}]\n", o.words[1..].join(" ")), 1);
    }
    match o.output.as_deref() {
        None => {}
        Some("json" | "yaml") => {
            return Output::error(
                "kubectl version -o json|yaml: the build details it prints (commit, date, Go version) are not emulated; try kubectl version\n",
                1,
            )
        }
        Some(_) => return Output::error("error: --output must be 'yaml' or 'json'\n", 1),
    }
    if minor < 28 && !o.short {
        return Output::error(
            format!("kubectl version: Kubernetes 1.{minor}'s long form (version.Info{{...}}) is not emulated; try kubectl version --short\n"),
            1,
        );
    }
    let release = &cluster.versions.kubernetes;
    let mut out = Output::ok(format!("Client Version: {release}\n"));
    if let Some(kustomize) = kustomize(minor) {
        out.stdout += &format!("Kustomize Version: {kustomize}\n");
    }
    if !o.client {
        out.stdout += &format!("Server Version: {release}\n");
    }
    if o.short && minor >= 24 {
        out.stderr = "Flag --short has been deprecated, and will be removed in the future. The --short output will become the default.\n".to_string();
    }
    out
}

/// The API server's answer when the kubelet of a pod's node cannot be reached.
fn kubelet_unreachable(node: &Node, namespace: &str, pod: &str, container: &str) -> Output {
    let ip = crate::model::network::frontend_ip(&node.hostname);
    Output::error(
        format!("Error from server: Get \"https://{ip}:10250/containerLogs/{namespace}/{pod}/{container}\": dial tcp {ip}:10250: connect: no route to host\n"),
        1,
    )
}

fn logs(invocation: &Invocation, o: &Opts) -> Output {
    let cluster = invocation.cluster;
    let Some(name) = o.words.get(1) else {
        return Output::error("error: expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\nPOD or TYPE/NAME is a required argument for the logs command\nSee 'kubectl logs -h' for help and examples\n", 1);
    };
    let name = name.strip_prefix("pod/").unwrap_or(name);
    let pods = pods(cluster);
    let namespace = o.namespace.as_deref().unwrap_or("default");
    let tail = o.tail.as_deref().and_then(|t| t.parse::<usize>().ok());
    if let Some(pod) = cluster.pod(namespace, name) {
        if let Some(node) = pod.binding.as_ref().and_then(|b| cluster.node(&b.node)).filter(|n| !n.up(cluster.now)) {
            return kubelet_unreachable(node, namespace, name, &pod.spec.container);
        }
        return match super::kubectl_pods::logs(cluster, pod, o.previous, tail) {
            Ok(text) => Output::ok(text),
            Err(message) => Output::error(message, 1),
        };
    }
    let Some(pod) = pods.iter().find(|p| p.name == name && p.namespace == namespace) else {
        return not_found("pods", name);
    };
    let node = &cluster.nodes[pod.node];
    if !node.up(cluster.now) {
        return kubelet_unreachable(node, pod.namespace, name, pod.container);
    }
    if pod.name.starts_with(VALIDATOR) {
        return validator_logs(invocation, node, pod, o);
    }
    if !pod.name.starts_with(PLUGIN) {
        // kubectl picks the first container of several and says so; the
        // log sidecar is a (native sidecar) init container.
        let sidecars = if pod.containers > 1 { format!("Defaulted container \"{0}\" out of: {0}, logfile (init)\n", pod.container) } else { String::new() };
        return Output { stderr: sidecars, ..Output::default() };
    }
    let text = plugin_log(cluster, node, pod);
    let lines: Vec<&str> = text.lines().collect();
    let keep = o.tail.as_deref().and_then(|t| t.parse::<usize>().ok()).unwrap_or(lines.len()).min(lines.len());
    Output::ok(lines[lines.len() - keep..].iter().map(|l| format!("{l}\n")).collect::<String>())
}

/// A validator pod's logs: kubectl names its containers when none is
/// asked for (it has init containers); a container not started yet has none.
fn validator_logs(invocation: &Invocation, node: &Node, pod: &Pod, o: &Opts) -> Output {
    let mut out = Output::default();
    let container = match o.container.as_deref() {
        Some(name) if name == VALIDATOR || VALIDATOR_INIT.contains(&name) => name,
        Some(name) => return Output::error(format!("error: container {name} not found in pod {}\n", pod.name), 1),
        None => {
            let inits: Vec<String> = VALIDATOR_INIT.iter().map(|c| format!("{c} (init)")).collect();
            out.stderr = format!("Defaulted container \"{VALIDATOR}\" out of: {VALIDATOR}, {}\n", inits.join(", "));
            VALIDATOR
        }
    };
    let held = pod.status.starts_with("Init:");
    let text = match container {
        "driver-validation" if held => driver_validation_log(invocation, node, pod),
        waiting if held => {
            out.stderr += &format!("Error from server (BadRequest): container \"{waiting}\" in pod \"{}\" is waiting to start: PodInitializing\n", pod.name);
            out.status = 1;
            return out;
        }
        VALIDATOR => "all validations are successful\n".to_string(),
        // What the passing validations printed is not kept here.
        _ => String::new(),
    };
    let lines: Vec<&str> = text.lines().collect();
    let keep = o.tail.as_deref().and_then(|t| t.parse::<usize>().ok()).unwrap_or(lines.len()).min(lines.len());
    out.stdout = lines[lines.len() - keep..].iter().map(|l| format!("{l}\n")).collect();
    out
}

impl Command for Kubectl {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let o = match parse(invocation.args()) {
            Ok(o) => o,
            Err(out) => return out,
        };
        let cluster = invocation.cluster;
        let Some(verb) = o.words.first() else {
            return Output::ok(crate::commands::help::describe(&SIGNATURE));
        };
        if (o.client || o.short) && verb != "version" {
            let flag = if o.client { "--client" } else { "--short" };
            return Output::error(format!("error: unknown flag: {flag}\nSee 'kubectl {verb} --help' for usage.\n"), 1);
        }
        match verb.as_str() {
            "get" => get(cluster, &o),
            "version" => version(cluster, &o),
            "cordon" | "uncordon" | "drain" => act(cluster, &o, verb),
            "logs" => logs(invocation, &o),
            "exec" => exec(invocation, &o),
            "apply" | "create" => manifests(invocation, &o, verb == "create"),
            "delete" => delete(invocation, &o),
            "describe" => describe(cluster, &o),
            other => Output::error(format!("error: unknown command \"{other}\" for \"kubectl\"\nRun 'kubectl --help' for usage.\n"), 1),
        }
    }
}

/// `kubectl describe node [NAME...]` and `kubectl describe pod [NAME...]`
/// (a name matches every pod it begins, as kubectl's describer does).
fn describe(cluster: &Cluster, o: &Opts) -> Output {
    let words: Vec<String> = match o.words.get(1).and_then(|w| w.split_once('/')) {
        Some((kind, name)) => vec![kind.to_string(), name.to_string()],
        None => o.words[1..].to_vec(),
    };
    let Some(resource) = words.first() else {
        return Output::error("You must specify the type of resource to describe. Use \"kubectl api-resources\" for a complete list of supported resources.\n\nerror: Required resource not specified.\n", 1);
    };
    let wanted = &words[1..];
    let mut out = String::new();
    match kind(resource) {
        Some("nodes") => {
            let pods = pods(cluster);
            for name in wanted {
                if cluster.node(name).is_none() {
                    return not_found("nodes", name);
                }
            }
            for node in cluster.nodes.iter().filter(|n| wanted.is_empty() || wanted.contains(&n.hostname)) {
                if !out.is_empty() {
                    out += "\n\n";
                }
                out += &describe_node(cluster, node, &pods);
            }
        }
        Some("pods") => {
            let namespace = o.namespace.as_deref().unwrap_or("default");
            let listed = cluster.pods_in(if o.all { None } else { Some(namespace) });
            let mut shown = Vec::new();
            for name in wanted {
                let matching: Vec<_> = match listed.iter().find(|p| p.spec.name == *name) {
                    Some(pod) => vec![*pod],
                    None => listed.iter().filter(|p| p.spec.name.starts_with(name.as_str())).copied().collect(),
                };
                if matching.is_empty() && pods(cluster).iter().any(|p| p.namespace == namespace && p.name.starts_with(name.as_str())) {
                    return Output::error(
                        format!("kubectl describe pod: the {namespace} namespace's system pods are not emulated in full; try kubectl get pod {name} -n {namespace} -o yaml\n"),
                        1,
                    );
                }
                if matching.is_empty() {
                    return not_found("pods", name);
                }
                shown.extend(matching);
            }
            if wanted.is_empty() {
                shown = listed;
            }
            if shown.is_empty() {
                return none_found(o.all, namespace);
            }
            for pod in shown {
                if !out.is_empty() {
                    out += "\n\n";
                }
                out += &align(&super::kubectl_pods::describe(cluster, pod, &age, &rfc1123), 2, 0);
            }
        }
        Some(other) => return Output::error(format!("kubectl describe {other}: not emulated; try kubectl describe node or kubectl describe pod\n"), 1),
        None => return Output::error(format!("error: the server doesn't have a resource type \"{resource}\"\n"), 1),
    }
    Output::ok(out)
}

/// `kubectl exec POD [-c C] -- COMMAND...`: the command runs in the pod's
/// container, which sees the node through its own namespaces: its hostname
/// is the pod's, its GPUs only those the pod was given (numbered from 0, on
/// their own bus ids), no other process's. What it changes stays in the
/// container.
fn exec(invocation: &Invocation, o: &Opts) -> Output {
    let cluster = invocation.cluster;
    let usage = || Output::error("error: you must specify at least one command for the container\n", 1);
    let Some(name) = o.words.get(1) else {
        return Output::error("error: expected 'exec (POD | TYPE/NAME) [-c CONTAINER] [flags] -- COMMAND [args...]'.\nPOD or TYPE/NAME is a required argument for the exec command\nSee 'kubectl exec -h' for help and examples\n", 1);
    };
    // The old form, words after the pod without `--`, still runs (deprecated).
    let (argv, deprecated) = match &o.command {
        Some(argv) => (argv.clone(), false),
        None => (o.words[2..].to_vec(), true),
    };
    if argv.is_empty() {
        return usage();
    }
    let name = name.strip_prefix("pod/").unwrap_or(name);
    let namespace = o.namespace.as_deref().unwrap_or("default");
    let Some(pod) = cluster.pod(namespace, name) else {
        return not_found("pods", name);
    };
    let state = cluster.pod_state(pod);
    if matches!(state.phase, "Succeeded" | "Failed") {
        return Output::error(format!("error: cannot exec into a container in a completed pod; current phase is {}\n", state.phase), 1);
    }
    let running = state.runs.last().is_some_and(|r| r.ended.is_none());
    let Some(binding) = pod.binding.as_ref().filter(|_| running) else {
        return Output::error(format!("error: unable to upgrade connection: container not found (\"{}\")\n", pod.spec.container), 1);
    };
    let mut view = cluster.subset(&[binding.node.as_str()]);
    if let Some(node) = view.node_mut(&binding.node) {
        node.hostname = pod.spec.name.clone();
        node.gpus.retain(|gpu| binding.gpus.contains(&gpu.index));
        for (at, gpu) in node.gpus.iter_mut().enumerate() {
            gpu.index = at as u32;
            gpu.processes.clear();
        }
    }
    let call = crate::commands::Call { cluster: &view, host: &pod.spec.name, env: None, stdin: invocation.stdin };
    let mut out = match invocation.runner.run_program(call, &argv) {
        Some(out) => out,
        // The image has its Python, which the emulator does not run.
        None if matches!(argv[0].rsplit('/').next(), Some("python" | "python3" | "pip" | "torchrun")) => {
            return Output::error(format!("kubectl exec: {} in a container is not emulated; try nvidia-smi, env, ls or cat\n", argv[0]), 1);
        }
        None => {
            let message = format!(
                "OCI runtime exec failed: exec failed: unable to start container process: exec: \"{}\": executable file not found in $PATH: unknown\n",
                argv[0]
            );
            Output { stderr: message, status: 126, ..Output::default() }
        }
    };
    out.changes.clear();
    if out.status != 0 {
        out.stderr += &format!("command terminated with exit code {}\n", out.status);
    }
    if deprecated {
        out.stderr.insert_str(
            0,
            "kubectl exec [POD] [COMMAND] is DEPRECATED and will be removed in a future version. Use kubectl exec [POD] -- [COMMAND] instead.\n",
        );
    }
    out
}

/// The manifests `-f` names, read from the node's files (`-` reads standard input).
fn read_manifests(invocation: &Invocation, o: &Opts) -> Vec<(String, Result<String, String>)> {
    let view = crate::commands::files::View::for_command(invocation);
    o.files
        .iter()
        .map(|file| {
            let text = if file == "-" {
                Ok(invocation.stdin.to_string())
            } else {
                view.read(file).map(|text| text.into_owned()).map_err(|_| format!("error: the path \"{file}\" does not exist\n"))
            };
            (file.clone(), text)
        })
        .collect()
}

/// `kubectl apply -f FILE` and `kubectl create -f FILE`.
fn manifests(invocation: &Invocation, o: &Opts, create: bool) -> Output {
    if o.files.is_empty() {
        let verb = if create { "create" } else { "apply" };
        return Output::error(format!("error: must specify one of -f and -k\n\nSee 'kubectl {verb} -h' for help and examples\n"), 1);
    }
    let namespace = o.namespace.as_deref().unwrap_or("default");
    super::kubectl_pods::apply(invocation.cluster, &invocation.node.hostname, &read_manifests(invocation, o), namespace, create)
}

/// `kubectl delete pod NAME...`, `delete pod/NAME`, `delete -f FILE`.
fn delete(invocation: &Invocation, o: &Opts) -> Output {
    let cluster = invocation.cluster;
    let namespace = o.namespace.as_deref().unwrap_or("default").to_string();
    let mut targets: Vec<(String, String)> = Vec::new();
    let mut out = Output::default();
    if !o.files.is_empty() {
        for (file, text) in read_manifests(invocation, o) {
            match text {
                Ok(text) => {
                    for read in super::kubectl_pods::manifest(&text, &file, &namespace) {
                        match read {
                            Ok(spec) => targets.push((spec.namespace, spec.name)),
                            Err(message) => {
                                out.stderr += &message;
                                out.status = 1;
                            }
                        }
                    }
                }
                Err(message) => {
                    out.stderr += &message;
                    out.status = 1;
                }
            }
        }
    } else {
        let words = &o.words[1..];
        let Some(first) = words.first() else {
            return Output::error("error: You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'\n", 1);
        };
        let names: Vec<&String> = match first.split_once('/') {
            Some((kind_word, _)) if kind(kind_word) != Some("pods") => {
                return Output::error(format!("error: the server doesn't have a resource type \"{kind_word}\"\n"), 1);
            }
            Some(_) => words.iter().collect(),
            None => match kind(first) {
                Some("pods") if words.len() > 1 => words[1..].iter().collect(),
                Some("pods") => return Output::error("error: resource(s) were provided, but no name was specified\n", 1),
                Some(other) => {
                    return Output::error(format!("error: deleting {other} is not emulated; kubectl delete removes pods here (kubectl delete pod NAME)\n"), 1)
                }
                None => return Output::error(format!("error: the server doesn't have a resource type \"{first}\"\n"), 1),
            },
        };
        targets.extend(names.iter().map(|n| (namespace.clone(), n.strip_prefix("pod/").or_else(|| n.strip_prefix("pods/")).unwrap_or(n).to_string())));
    }
    if o.force {
        out.stderr += "Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n";
    }
    let operator = pods(cluster);
    for (ns, name) in targets {
        if let Some(pod) = cluster.pod(&ns, &name) {
            out.stdout += &format!("pod \"{name}\" {}\n", if o.force { "force deleted" } else { "deleted" });
            out.duration_ms += super::kubectl_pods::deletion_ms(cluster, pod, o.force);
            out.changes.push(Change::DeletePod { node: invocation.node.hostname.clone(), namespace: ns, name });
        } else if let Some(pod) = operator.iter().find(|p| p.name == name && p.namespace == ns) {
            // Its controller starts another in its place at once.
            out.stdout += &format!("pod \"{name}\" deleted\n");
            out.duration_ms += 2_000;
            if pod.nodeset {
                out.changes.extend(slurmd_pod_deleted(&cluster.nodes[pod.node].hostname, &ns, &name));
            } else if pod.daemonset {
                out.changes.push(Change::DeletePod { node: cluster.nodes[pod.node].hostname.clone(), namespace: ns, name });
            }
        } else {
            out.stderr += &format!("Error from server (NotFound): pods \"{name}\" not found\n");
            out.status = 1;
        }
    }
    out
}

/// When the cluster was created: two months before the lab's clock starts.
fn created(cluster: &Cluster) -> EpochSeconds {
    cluster.started_at() - 60 * 86_400
}

/// When a node joined the cluster (its Node object's creation), some days
/// after the cluster was made: a reboot does not change it, so its AGE
/// keeps counting.
fn joined(cluster: &Cluster, node: &Node) -> EpochSeconds {
    created(cluster) + Rng::derive(cluster.seed, &[&node.hostname, "joined"]).range_i64(86_400, 10 * 86_400)
}

#[cfg(test)]
mod tests {
    use super::{age, restarts};
    use crate::model::fault::Fault;
    use crate::testing::{run_on_first_node, session};

    #[test]
    fn events_tell_a_reboot() {
        let mut shell = session();
        assert_eq!(shell.run("kubectl get events").stderr(), "No resources found in default namespace.\n");
        shell.run("ssh gpu-002 sudo reboot; sleep 300");
        let events = shell.run("kubectl get events -A").stdout();
        let reasons: Vec<&str> = events.lines().skip(1).map(|line| line.split_whitespace().nth(3).unwrap_or("")).collect();
        assert_eq!(reasons, ["NodeNotReady", "Starting", "Rebooted", "NodeReady"], "{events}");
        assert!(events.starts_with("NAMESPACE   LAST SEEN   TYPE      REASON"), "{events}");
        assert!(shell.run("kubectl describe node gpu-002").stdout().contains("has been rebooted, boot id: "));
        // Events last an hour.
        shell.run("sleep 3700");
        assert_eq!(shell.run("kubectl get events -A").stderr(), "No resources found.\n");
    }

    #[test]
    fn describe_node_sums_what_the_pods_request() {
        let out = run_on_first_node("kubectl describe node gpu-001").stdout;
        let at = out.find("Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n").expect("the section");
        let section = &out[at..];
        let row = |name: &str| section.lines().find(|line| line.trim_start().starts_with(name)).map(|line| line.split_whitespace().collect::<Vec<_>>());
        assert_eq!(row("Resource"), Some(vec!["Resource", "Requests", "Limits"]));
        assert_eq!(row("cpu"), Some(vec!["cpu", "0", "(0%)", "0", "(0%)"]));
        assert_eq!(row("nvidia.com/gpu"), Some(vec!["nvidia.com/gpu", "0", "0"]));
        assert!(section.contains("\nEvents:"), "{section}");
    }

    #[test]
    fn go_templates_read_the_objects_as_kubectl_hands_them_over() {
        let out = run_on_first_node(
            "kubectl get nodes -o go-template='{{range .items}}{{.metadata.name}} {{index .status.allocatable \"nvidia.com/gpu\"}}{{\"\\n\"}}{{end}}'",
        );
        assert_eq!(out.stdout, "gpu-001 8\ngpu-002 8\n");
        // One object by name is the root itself.
        let out = run_on_first_node("kubectl get node gpu-002 -o go-template={{.metadata.name}}");
        assert_eq!(out.stdout, "gpu-002");
        let out = run_on_first_node("kubectl get nodes -o go-template='{{range .items}'");
        assert_eq!((out.stderr.as_str(), out.status), ("error: error parsing template {{range .items}, template: output:1: unclosed action\n", 1));
        let out = run_on_first_node("kubectl get nodes -o go-template='{{.items.nope.deeper}}'");
        assert!(out.stderr.starts_with("error: error executing template \"{{.items.nope.deeper}}\": template: output:1: "), "{}", out.stderr);
    }

    #[test]
    fn label_selectors_choose_nodes() {
        use crate::testing::run_on_first_node;
        assert_eq!(run_on_first_node("kubectl get nodes -l nvidia.com/gpu.present=true -o name").stdout, "node/gpu-001\nnode/gpu-002\n");
        assert_eq!(run_on_first_node("kubectl get nodes -l kubernetes.io/hostname=gpu-002 -o name").stdout, "node/gpu-002\n");
        assert_eq!(run_on_first_node("kubectl get nodes -l 'kubernetes.io/hostname!=gpu-002,nvidia.com/gpu.count' -o name").stdout, "node/gpu-001\n");
        assert!(run_on_first_node("kubectl get nodes --show-labels").stdout.contains(" beta.kubernetes.io/arch=amd64,beta.kubernetes.io/os=linux,"));
        assert_eq!(run_on_first_node("kubectl get nodes -l x=y").stderr, "No resources found\n");
    }

    #[test]
    fn a_node_keeps_its_age_across_a_reboot() {
        let mut shell = crate::testing::session();
        let before = shell.run("kubectl get node gpu-002").stdout();
        shell.run("ssh gpu-002 sudo reboot; sleep 600");
        assert_eq!(shell.run("kubectl get node gpu-002").stdout().split_whitespace().nth(8), before.split_whitespace().nth(8));
    }

    #[test]
    fn ages_and_restarts_follow_kubernetes() {
        assert_eq!([age(45), age(361), age(2400), age(3 * 3600 + 60), age(9 * 86_400)], ["45s", "6m1s", "40m", "3h1m", "9d"]);
        // The capture: 6 restarts after 6m1s, 12 after 40 minutes.
        assert_eq!((restarts(361), restarts(2400)), (6, 12));
    }

    #[test]
    fn nodes_cordon_and_drain_apart_from_slurm() {
        let out = run_on_first_node("kubectl get nodes");
        assert!(out.stdout.starts_with("NAME      STATUS   ROLES    AGE   VERSION\ngpu-001   Ready    <none>   "), "{}", out.stdout);
        let mut shell = session();
        assert_eq!(shell.run("kubectl cordon gpu-002").stdout(), "node/gpu-002 cordoned\n");
        // Kubernetes and Slurm are two systems: a cordon drains nothing in Slurm, and back.
        assert!(shell.run("sinfo").stdout().contains("idle gpu-[001-002]"), "{}", shell.run("sinfo").stdout());
        shell.run("sudo scontrol update NodeName=gpu-001 State=DRAIN Reason=slurm-only");
        let nodes = shell.run("kubectl get nodes").stdout();
        assert!(nodes.lines().any(|line| line.starts_with("gpu-001   Ready ") && !line.contains("SchedulingDisabled")), "{nodes}");
        shell.run("sudo scontrol update NodeName=gpu-001 State=RESUME");
        assert!(shell.run("kubectl get nodes").stdout().contains("gpu-002   Ready,SchedulingDisabled   <none>"));
        assert!(shell.run("kubectl describe node gpu-002").stdout().contains("Taints:             node.kubernetes.io/unschedulable:NoSchedule\n"));
        assert_eq!(shell.run("kubectl cordon gpu-002").stdout(), "node/gpu-002 already cordoned\n");
        assert_eq!(shell.run("kubectl uncordon gpu-002").stdout(), "node/gpu-002 uncordoned\n");
        let out = shell.run("kubectl drain gpu-001");
        assert_eq!(out.status, 1);
        assert!(out.stderr().contains("cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): gpu-operator/gpu-feature-discovery-"));
        shell.run("kubectl uncordon gpu-001");
        let out = shell.run("kubectl drain gpu-001 --ignore-daemonsets --delete-emptydir-data");
        assert_eq!(out.status, 0);
        assert!(out.stdout().starts_with("node/gpu-001 cordoned\nevicting pod gpu-operator/gpu-operator-"), "{}", out.stdout());
        assert!(out.stdout().ends_with(" evicted\nnode/gpu-001 drained\n"));
        // The operator moved to gpu-002.
        let pods = shell.run("kubectl get pods -n gpu-operator -o wide").stdout();
        assert!(pods.lines().any(|l| l.starts_with("gpu-operator-") && l.contains("gpu-002")), "{pods}");
        assert_eq!(shell.run("kubectl cordon gpu-009").stderr(), "Error from server (NotFound): nodes \"gpu-009\" not found\n");
    }

    #[test]
    fn a_lost_gpu_crashes_the_device_plugin() {
        let mut shell = session();
        let healthy = shell.run("kubectl get pods -A").stdout();
        assert!(!healthy.contains("CrashLoopBackOff") && healthy.starts_with("NAMESPACE      NAME "));
        Fault::GpuXid { node: "gpu-002".into(), gpu: 3, xid: 79 }.apply(&mut shell.cluster).unwrap();
        let out = shell.run("kubectl get pods -n gpu-operator");
        let row = out.stdout().lines().find(|l| l.contains("CrashLoopBackOff")).unwrap_or_default().to_string();
        assert!(row.starts_with("nvidia-device-plugin-daemonset-") && row.contains("   0/1     CrashLoopBackOff   "), "{}", out.stdout());
        let pod = row.split(' ').next().unwrap();
        let log = shell.run(&format!("kubectl logs -n gpu-operator {pod}")).stdout();
        assert!(log.contains("main.go:123] error starting plugins:") && log.ends_with("'3': GPU is lost\n"), "{log}");
        assert!(shell.run("kubectl describe node gpu-002").stdout().contains("Allocatable:\n  cpu:             224\n"));
        // The objects say what the tables say: with its plugin gone the
        // kubelet offers none of the node's GPUs, and after its grace period
        // counts none.
        let gpus = shell.run(r#"kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.capacity.nvidia\.com/gpu}/{.status.allocatable.nvidia\.com/gpu} {end}'"#).stdout();
        assert_eq!(gpus, "gpu-001=8/8 gpu-002=0/0 ");
        let restarts =
            shell.run(&format!("kubectl get pod {pod} -n gpu-operator -o jsonpath='{{.status.containerStatuses[0].state.waiting.reason}}'")).stdout();
        assert_eq!(restarts, "CrashLoopBackOff");
        let yaml = shell.run("kubectl get node gpu-002 -o yaml").stdout();
        assert!(yaml.starts_with("apiVersion: v1\nkind: Node\nmetadata:\n  annotations:\n"), "{yaml}");
        assert!(shell.run("kubectl get ns -o name").status == 0 && shell.run("kubectl get ns default -o json").stdout().contains("\"kind\": \"Namespace\""));
        shell.run("kubectl cordon gpu-001");
        let taint = shell.run("kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINT:.spec.taints[*].key").stdout();
        assert_eq!(taint, "NAME      TAINT\ngpu-001   node.kubernetes.io/unschedulable\ngpu-002   <none>\n");
        shell.cluster.node_mut("gpu-002").unwrap().hang();
        assert!(shell.run("kubectl get nodes").stdout().contains("gpu-002   NotReady"));
        assert!(shell.run(&format!("kubectl logs -n gpu-operator {pod}")).stderr().contains("no route to host"));
    }

    #[test]
    fn bad_input_answers_as_kubectl() {
        assert_eq!(run_on_first_node("kubectl get foo").stderr, "error: the server doesn't have a resource type \"foo\"\n");
        assert_eq!(run_on_first_node("kubectl get pods --bogus").stderr, "error: unknown flag: --bogus\nSee 'kubectl --help' for usage.\n");
        assert_eq!(run_on_first_node("kubectl get pods -z").status, 1);
        assert_eq!(run_on_first_node("kubectl get pods -n").status, 1);
        assert_eq!(run_on_first_node("kubectl get pods").stderr, "No resources found in default namespace.\n");
        assert_eq!(run_on_first_node("kubectl frob").status, 1);
        assert_eq!(run_on_first_node("kubectl get nodes -o name").stdout, "node/gpu-001\nnode/gpu-002\n");
        for line in [
            "kubectl",
            "kubectl logs",
            "kubectl describe",
            "kubectl describe pods x",
            "kubectl get",
            "kubectl drain",
            "kubectl get pods x -n gpu-operator",
            "kubectl logs -n gpu-operator x --tail=-5",
        ] {
            run_on_first_node(line);
        }
    }
}
