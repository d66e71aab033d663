//! Slurm on Kubernetes, as SchedMD's Slinky slurm-operator (v1.2) runs it:
//! slurmctld, slurmrestd and a login node in pods, and a slurmd pod on each
//! GPU node (a NodeSet in DaemonSet scaling mode, so the pod's hostname and
//! the Slurm node's name are the Kubernetes node's). A node is in both
//! schedulers, and the operator keeps Slurm's drain in step with
//! Kubernetes' cordon (its `syncCordon`, internal/controller/nodeset/nodeset_sync.go
//! at v1.2.1):
//! - a cordoned node's Slurm node is drained, keeping a reason already set
//!   by the operator, else `slurm-operator: Node (N) was cordoned, Pod
//!   (slurm/P) must be cordoned`;
//! - an uncordoned node's Slurm node, drained by the operator, is undrained;
//! - a reason without the operator's prefix (an operator's `scontrol`
//!   drain) is someone else's and left alone, and so is a node down.

use super::node::SchedulerState;
use super::time::EpochSeconds;
use super::Cluster;

/// The namespace of the Slurm cluster's pods.
pub const NAMESPACE: &str = "slurm";
/// The namespace of the operator itself.
pub const OPERATOR_NAMESPACE: &str = "slinky";
/// The worker NodeSet (the chart's `<release>-worker-<key>`, key `slinky`).
pub const NODESET: &str = "slurm-worker-slinky";
/// What the operator puts before every reason it gives (`nodeReasonPrefix`).
pub const REASON_PREFIX: &str = "slurm-operator: ";
/// The reason a slurmd pod's preStop hook downs its node with (run as root
/// by scontrol in the pod, not by the operator).
pub const TERMINATING_REASON: &str = "slurm-operator: Pod is terminating";
/// The images' tag: Slurm 25.11 on Ubuntu 24.04 (chart v1.1's default; the
/// site pins it under chart v1.2, whose REST API version, v0.0.44, 25.11
/// serves).
pub const IMAGE_TAG: &str = "25.11-ubuntu24.04";
/// The Slurm series those images run.
pub const SLURM_SERIES: (u32, u32) = (25, 11);
/// slurmd's command line in its pod, as the host's `ps` shows it. The
/// operator gives the container `-Z --conf-server <controller service>:6817
/// --conf 'Features=<NodeSet>'` (internal/builder/workerbuilder/worker_app.go
/// `slurmdArgs`, common.go `ConfiglessArgs` at v1.2.1; the controller's
/// service is `slurm-controller.slurm`); the image's entrypoint passes them
/// to supervisord, whose `bash -xc "exec slurmd --systemd ..."` parses the
/// quotes away (SlinkyProject/containers, schedmd/slurm/25.11/ubuntu24.04:
/// slurmd-entrypoint.sh, supervisor/conf.d/slurmd.conf).
pub const SLURMD_COMMAND: &str = "slurmd --systemd -Z --conf-server slurm-controller.slurm:6817 --conf Features=slurm-worker-slinky";
/// How long into a boot the node's first slurmd pod starts.
const WORKER_AFTER_BOOT_S: EpochSeconds = 62;

/// The `generation`th slurmd pod on `hostname` (a DaemonSet-style name:
/// the NodeSet and five random characters, new for each pod).
fn worker_pod_named(seed: u64, hostname: &str, generation: usize) -> String {
    format!("{NODESET}-{}", super::pods::pod_suffix(seed, &[hostname, NODESET, &generation.to_string()], 5))
}

/// Whether Slurm's reason for a node is the operator's (or none).
pub fn reason_is_operators(reason: Option<&str>) -> bool {
    reason.is_none_or(|reason| reason.starts_with(REASON_PREFIX))
}

impl Cluster {
    /// Whether Slurm runs in pods under the slurm-operator.
    pub fn slurm_on_kubernetes(&self) -> bool {
        self.config.slurm_on_kubernetes
    }

    /// The slurmd pod on `hostname` now: the NodeSet makes a new one (a new
    /// name) each time its pod is deleted or evicted.
    pub fn worker_pod(&self, hostname: &str) -> String {
        self.worker_pod_created(hostname).0
    }

    /// When the slurmd pod on `node` now started: a minute into the boot,
    /// a replacement at once (never before that minute).
    pub fn worker_pod_started(&self, node: &super::node::Node) -> EpochSeconds {
        let first = node.booted_at + WORKER_AFTER_BOOT_S;
        self.worker_pod_created(&node.hostname).1.map_or(first, |at| at.max(first))
    }

    /// The slurmd pod on `hostname` and when its replacement was made, if
    /// the first was deleted: at the delete, or at the uncordon that let
    /// it back on its node after a drain.
    pub fn worker_pod_created(&self, hostname: &str) -> (String, Option<EpochSeconds>) {
        use super::change::Change;
        let deleted_at = |name: &str| self.pod_deleted_at(NAMESPACE, name);
        let mut generation = 0;
        let mut name = worker_pod_named(self.seed, hostname, generation);
        let mut created = None;
        // Bounded by the history: each generation needs a delete of its own.
        while let Some(at) = deleted_at(&name).filter(|_| generation < self.history.len()) {
            generation += 1;
            name = worker_pod_named(self.seed, hostname, generation);
            let uncordoned = self.history.iter().find_map(|(when, change)| match change {
                Change::Cordon { node, unschedulable: false, .. } if node == hostname && *when >= at => Some(*when),
                _ => None,
            });
            created = Some(uncordoned.unwrap_or(at));
        }
        (name, created)
    }

    /// The operator's reconcile of one node after a cordon, an uncordon or
    /// a change of its Slurm state.
    pub(crate) fn sync_slurm_cordon(&mut self, hostname: &str, at: EpochSeconds) {
        if !self.slurm_on_kubernetes() {
            return;
        }
        let pod = self.worker_pod(hostname);
        let Some(node) = self.node_mut(hostname) else { return };
        if node.scheduler == SchedulerState::Down || !reason_is_operators(node.scheduler_reason.as_deref()) {
            return;
        }
        if node.cordoned_since.is_some() {
            if node.scheduler != SchedulerState::Drained {
                let reason = node
                    .scheduler_reason
                    .clone()
                    .unwrap_or_else(|| format!("{REASON_PREFIX}Node ({hostname}) was cordoned, Pod ({NAMESPACE}/{pod}) must be cordoned"));
                node.scheduler = SchedulerState::Drained;
                node.scheduler_reason = Some(reason);
                node.scheduler_reason_since = at;
            }
        } else if node.scheduler == SchedulerState::Drained {
            // Undrained: slurmctld drops the reason of a node back in service.
            node.scheduler = SchedulerState::Idle;
            node.scheduler_reason = None;
            node.scheduler_reason_since = at;
        }
    }
}
