//! Changes: what an operator's command does to the cluster.
//!
//! Commands stay pure functions of the model: one that acts (a GPU reset, a
//! drain, a service restart, a server that starts listening) returns the
//! change as data in its output, and the shell applies it to the model after
//! the command has run. The lab remembers every change, for grading.

use serde::{Deserialize, Serialize};

use super::gpu::{FabricState, GpuHealth};
use super::node::{SchedulerState, ServiceState};
use super::time::EpochSeconds;
use super::Cluster;

/// A server process waiting for a client (a perftest server, say).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listener {
    /// The program, e.g. `ib_write_bw`.
    pub program: String,
    /// Its argv after the program name, as typed.
    pub args: Vec<String>,
    pub port: u16,
    pub pid: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Change {
    /// `nvidia-smi -r`: clears what a reset clears (Xid 48/62/63/64/74/95/119/120
    /// consequences, volatile ECC counts, pending row remaps).
    ResetGpu { node: String, gpu: u32 },
    /// `scontrol update NodeName=... State=...`.
    SetScheduler { node: String, state: SchedulerState, reason: Option<String> },
    /// `nvidia-smi -i GPU -pl WATTS`: the GPU's enforced power limit.
    SetPowerLimit { node: String, gpu: u32, watts: u32 },
    /// `perfquery -R` (or `-r` after reading): the port's counters start again from 0.
    ResetPortCounters { node: String, hca: String },
    /// `perfquery -R` on a leaf switch port, or a sweep's `-k`: the counters
    /// of the switch port cabled to the HCA start again from 0.
    ResetLeafPortCounters { node: String, hca: String },
    /// `ip link set dev NETDEV mtu N`: the netdev's MTU (on RoCE the RDMA
    /// port's active MTU follows it).
    SetNetdevMtu { node: String, netdev: String, mtu: u32 },
    /// `mlnx_qos -i NETDEV --pfc ...`: the priorities with PFC on, bit N for
    /// priority N.
    SetPfc { node: String, netdev: String, enabled: u8 },
    /// `echo 1 > /sys/class/net/NETDEV/ecn/roce_np/enable/3` (or `roce_rp`):
    /// DCQCN's notification point (`rp` false) or reaction point on a priority.
    SetEcn { node: String, netdev: String, reaction_point: bool, priority: u8, enabled: bool },
    /// `dcgmi health -s SYSTEMS`: the health systems DCGM watches (bits as
    /// `Node::health_watches`).
    SetHealthWatches { node: String, systems: u16 },
    /// `dcgmi group -c NAME [--default]`: a group with those GPUs.
    CreateDcgmGroup { node: String, name: String, gpus: Vec<u32> },
    /// `dcgmi group -d ID`.
    DeleteDcgmGroup { node: String, id: u32 },
    /// `dcgmi group -g ID -a|-r GPUS`: the group's GPUs after the change.
    SetDcgmGroupGpus { node: String, id: u32, gpus: Vec<u32> },
    /// `systemctl restart nvidia-fabricmanager`.
    RestartFabricManager { node: String },
    /// `systemctl stop nvidia-fabricmanager`.
    StopFabricManager { node: String },
    /// `systemctl stop|start|restart UNIT`, or `kill` of its process, for
    /// a service other than Fabric Manager (`model::service`): the unit is
    /// in `state` from now on (active again: a new process).
    SetUnit { node: String, unit: String, state: super::node::ServiceState },
    /// A server starts waiting on `node`.
    Listen { node: String, listener: Listener },
    /// A server on `node` stops (its client finished, or it was killed).
    StopListening { node: String, port: u16 },
    /// Hands-on work on a node (`dctech reseat-cable gpu-001 mlx5_1`):
    /// repairs the faults the lab says this action repairs on that target.
    Repair { node: String, action: String, target: String },
    /// A shell redirection wrote `text` to the file at `path` (absolute),
    /// after what it held when `append`.
    WriteFile { node: String, path: String, text: String, append: bool },
    /// Bytes a run (a perftest, an NCCL job) moved through a port: the
    /// port's data and packet counters count them. The history keeps one
    /// sum per port, so it stays as small as the fabric however long the lab.
    Traffic { node: String, device: String, sent_bytes: u64, received_bytes: u64 },
    /// `kubectl cordon` (drained: false), `kubectl drain` (true), or
    /// `kubectl uncordon` (unschedulable: false): Kubernetes' mark, not Slurm's.
    Cordon { node: String, unschedulable: bool, drained: bool },
    /// `sbatch` submitted a job from `node`: Slurm's record of it (the
    /// history holds it; squeue and sacct read it).
    SubmitJob { node: String, job: super::job::Job },
    /// `scancel JOBID` from `node`: the job ends now.
    CancelJob { node: String, job: i64 },
    /// Slurm started batch job `job`, which waited in the queue, on
    /// `nodelist`; its script ran `runtime` seconds and exited `exit_code`.
    StartJob { node: String, job: i64, nodelist: Vec<String>, runtime: i64, exit_code: i32 },
    /// `scontrol hold|release JOBID`: a waiting job is held (for the
    /// reason given) or released.
    HoldJob { node: String, job: i64, held: Option<String> },
    /// An `srun` inside job `job` ran a step: Slurm's accounting keeps it.
    JobStep { node: String, job: i64, step: super::job::Step },
    /// `sbatch` of a workload's script: the training job starts (from its
    /// last checkpoint, if it saved one).
    LaunchWorkload { node: String, name: String, job: i64 },
    /// `sbatch` of a workload's script whose Megatron arguments the trainee
    /// changed: the workload runs with that parallelism from then on.
    ConfigureWorkload {
        node: String,
        name: String,
        tensor: u32,
        pipeline: u32,
        /// A server's flags, as its script gives them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        serving: Option<ServerFlags>,
    },
    /// An operator rebooted the node from its OS (`reboot`, `systemctl
    /// reboot`, `shutdown -r`) or its BMC (`ipmitool chassis power cycle`,
    /// `power_cycle`): it is down for [`BOOT_SECONDS`], then boots again,
    /// clearing the faults a reboot clears
    /// ([`super::fault::Fault::cleared_by_reboot`]; a power cycle also
    /// revives a hung node). Unless Slurm rebooted it itself
    /// (`by_slurm`: `scontrol reboot`, shown `boot^` while it boots), Slurm
    /// was not told: an idle node comes back down, "unexpectedly rebooted".
    /// `kubectl apply -f` or `create -f` of a Pod: the API server stores it
    /// (replacing a pod of that name) and the scheduler binds it.
    ApplyPod { node: String, pod: super::pods::PodSpec },
    /// `kubectl delete pod`: the pod is gone, its GPUs free.
    DeletePod { node: String, namespace: String, name: String },
    Reboot {
        node: String,
        #[serde(default)]
        power_cycle: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        by_slurm: bool,
    },
}

/// What a server's batch script sets: vLLM's `--max-model-len`,
/// `--max-num-seqs` and `--gpu-memory-utilization` (thousandths), and the
/// GPUs it asks Slurm for (`#SBATCH --gpus-per-node`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerFlags {
    pub max_model_len: u32,
    pub max_num_seqs: u32,
    pub memory_permille: u32,
    pub gpus: u32,
}

/// How long a node takes from `reboot` to a running kernel (firmware, POST
/// with eight GPUs, the boot loader): the window in which ssh finds no route.
pub const BOOT_SECONDS: i64 = 240;

/// Work that needs the node powered off: it boots again afterwards.
pub fn reboots(action: &str) -> bool {
    matches!(action, "power-cycle" | "reseat-gpu" | "replace-gpu" | "replace-hca")
}

/// Work on a cable or its transceiver: the link goes down and comes back.
pub fn cable_work(action: &str) -> bool {
    matches!(action, "reseat-cable" | "replace-cable" | "replace-transceiver")
}

/// The hands-on actions a technician can take, and what they act on.
pub const REPAIR_ACTIONS: &[(&str, RepairTarget)] = &[
    ("reseat-cable", RepairTarget::Hca),
    ("replace-cable", RepairTarget::Hca),
    ("replace-transceiver", RepairTarget::Hca),
    ("replace-hca", RepairTarget::Hca),
    ("reseat-gpu", RepairTarget::Gpu),
    ("replace-gpu", RepairTarget::Gpu),
    ("power-cycle", RepairTarget::Node),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepairTarget {
    Hca,
    Gpu,
    Node,
}

impl RepairTarget {
    /// What a fault acts on, as a technician's ticket names it.
    pub fn of(fault: &super::fault::Fault) -> (RepairTarget, String) {
        use super::fault::Fault::*;
        match fault {
            GpuXid { gpu, .. }
            | GpuFallenOffBus { gpu, .. }
            | GpuEccUncorrectable { gpu, .. }
            | GpuRowRemapPending { gpu, .. }
            | GpuThermalSlowdown { gpu, .. }
            | GpuPowerBrake { gpu, .. }
            | GpuPowerCap { gpu, .. }
            | GpuPcieDegraded { gpu, .. }
            | NvlinkDown { gpu, .. } => (RepairTarget::Gpu, gpu.to_string()),
            HcaPortDown { hca, .. }
            | HcaLinkDegraded { hca, .. }
            | HcaSymbolErrors { hca, .. }
            | HcaLinkFlap { hca, .. }
            | HcaMtu { hca, .. }
            | HcaPfcOff { hca, .. }
            | HcaEcnOff { hca, .. }
            | HcaPcieDegraded { hca, .. } => (RepairTarget::Hca, hca.clone()),
            FabricManagerDown { .. } | ServiceStopped { .. } | DriverMismatch { .. } | NodeDown { .. } | NodeDrain { .. } | NodeCordon { .. } => {
                (RepairTarget::Node, String::new())
            }
        }
    }
}

impl Change {
    /// Whether this boots `hostname` again: a reboot, or work done with its power off.
    pub fn is_boot_of(&self, hostname: &str) -> bool {
        match self {
            Change::Reboot { node, .. } => node == hostname,
            Change::Repair { node, action, .. } => node == hostname && reboots(action),
            _ => false,
        }
    }

    pub fn node(&self) -> &str {
        match self {
            Change::ResetGpu { node, .. }
            | Change::SetPowerLimit { node, .. }
            | Change::SetScheduler { node, .. }
            | Change::ResetPortCounters { node, .. }
            | Change::ResetLeafPortCounters { node, .. }
            | Change::SetNetdevMtu { node, .. }
            | Change::SetPfc { node, .. }
            | Change::SetEcn { node, .. }
            | Change::SetHealthWatches { node, .. }
            | Change::CreateDcgmGroup { node, .. }
            | Change::DeleteDcgmGroup { node, .. }
            | Change::SetDcgmGroupGpus { node, .. }
            | Change::RestartFabricManager { node }
            | Change::StopFabricManager { node }
            | Change::SetUnit { node, .. }
            | Change::Listen { node, .. }
            | Change::StopListening { node, .. }
            | Change::Repair { node, .. }
            | Change::WriteFile { node, .. }
            | Change::Traffic { node, .. }
            | Change::Cordon { node, .. }
            | Change::SubmitJob { node, .. }
            | Change::StartJob { node, .. }
            | Change::JobStep { node, .. }
            | Change::HoldJob { node, .. }
            | Change::CancelJob { node, .. }
            | Change::LaunchWorkload { node, .. }
            | Change::ConfigureWorkload { node, .. }
            | Change::ApplyPod { node, .. }
            | Change::DeletePod { node, .. }
            | Change::Reboot { node, .. } => node,
        }
    }
}

impl Cluster {
    /// The jobs Slurm has seen, in order of their ids: the workloads' and
    /// those `sbatch` submitted.
    pub fn slurm_jobs(&self) -> Vec<super::job::Job> {
        let mut jobs: Vec<super::job::Job> = self.workloads.iter().map(super::workload::Workload::job).collect();
        // A waiting workload's record gives way to the workload once it starts.
        jobs.extend(self.history.iter().filter_map(|(_, change)| match change {
            Change::SubmitJob { job, .. } if !(job.workload && self.workloads.iter().any(|w| w.job_id == job.id)) => Some(job.clone()),
            _ => None,
        }));
        crate::sort::sort_by(&mut jobs, |a, b| a.id.cmp(&b.id));
        jobs
    }

    /// Applies a change at simulated time `at`. A change naming hardware the
    /// cluster lacks does nothing: the command that made it has already
    /// answered the way the real tool does.
    pub fn apply_change(&mut self, change: &Change, at: EpochSeconds) {
        if self.node(change.node()).is_none() {
            return;
        }
        self.apply_known_change(change, at);
        // The scheduler retries its pending pods on every change to the cluster.
        if !self.pods.is_empty() {
            self.schedule_pods(at);
            self.follow_pods();
        }
    }

    fn apply_known_change(&mut self, change: &Change, at: EpochSeconds) {
        // What a monitor scrapes is the nodes' state, not the files people write.
        if !matches!(change, Change::WriteFile { .. }) {
            self.end_era(at);
        }
        if let Change::Traffic { node, device, sent_bytes, received_bytes } = change {
            let earlier = self.history.iter_mut().find_map(|(_, recorded)| match recorded {
                Change::Traffic { node: n, device: d, sent_bytes: s, received_bytes: r } if n == node && d == device => Some((s, r)),
                _ => None,
            });
            match earlier {
                Some((sent, received)) => {
                    *sent = sent.saturating_add(*sent_bytes);
                    *received = received.saturating_add(*received_bytes);
                }
                None => self.history.push((at, change.clone())),
            }
            self.apply_change_at(change, at);
            return;
        }
        self.history.push((at, change.clone()));
        if let Change::ResetGpu { node, gpu } = change {
            // What a reset clears is repaired by it: a lab can expect it done.
            for injected in &mut self.injected {
                if injected.fault.node() == node && injected.fault.cleared_by_reset(*gpu) {
                    injected.repaired = true;
                }
            }
        }
        if let Change::SetUnit { node, unit, state: super::node::ServiceState::Active } = change {
            // The service runs again: leaving it stopped is over.
            for injected in &mut self.injected {
                if matches!(&injected.fault, super::fault::Fault::ServiceStopped { node: n, unit: u } if n == node && u == unit) {
                    injected.repaired = true;
                }
            }
        }
        if let Change::SetPowerLimit { node, gpu, watts } = change {
            // The default limit back: a cap left low is over.
            let default = self.node(node).and_then(|n| n.gpu(*gpu)).map(|g| g.default_power_limit_w);
            for injected in &mut self.injected {
                if matches!(&injected.fault, super::fault::Fault::GpuPowerCap { node: n, gpu: g, .. } if n == node && g == gpu)
                    && default.is_some_and(|d| *watts >= d)
                {
                    injected.repaired = true;
                }
            }
        }
        if let Change::SetNetdevMtu { node, netdev, .. } | Change::SetPfc { node, netdev, .. } | Change::SetEcn { node, netdev, .. } = change {
            self.apply_change_at(change, at);
            // The port runs as the site wants again: the setting that was lost is back.
            let Some(hca) = self.node(node).and_then(|n| n.hcas.iter().find(|h| h.netdev == *netdev)).cloned() else { return };
            for injected in &mut self.injected {
                let fixed = match &injected.fault {
                    super::fault::Fault::HcaMtu { node: on, hca: name, .. } => hca.port.active_mtu >= hca.port.max_mtu && on == node && *name == hca.name,
                    super::fault::Fault::HcaPfcOff { node: on, hca: name } => hca.port.lossless() && on == node && *name == hca.name,
                    super::fault::Fault::HcaEcnOff { node: on, hca: name } => hca.port.congestion_controlled() && on == node && *name == hca.name,
                    _ => false,
                };
                if fixed {
                    injected.repaired = true;
                }
            }
            self.follow_workloads(at);
            return;
        }
        if let Change::Reboot { node, power_cycle, by_slurm } = change {
            for injected in &mut self.injected {
                let hung = *power_cycle && matches!(injected.fault, super::fault::Fault::NodeDown { .. });
                if injected.fault.node() == node && (injected.fault.cleared_by_reboot() || hung) {
                    injected.repaired = true;
                }
            }
            self.settle_configured_faults(node);
            let drained = self.node(node).is_some_and(|n| matches!(n.scheduler, SchedulerState::Drained | SchedulerState::Down));
            self.rebuild_node(node, true);
            for workload in &mut self.workloads {
                workload.holding = false;
            }
            // slurmd registers with a boot time slurmctld did not expect
            // (no `scontrol reboot`): a node in service is set down.
            if let Some(rebooted) = self.node_mut(node).filter(|_| !drained && !by_slurm) {
                let back = at + BOOT_SECONDS;
                rebooted.scheduler = SchedulerState::Down;
                rebooted.scheduler_reason = Some(format!("Node unexpectedly rebooted boot_time={back} last response={at}"));
                rebooted.scheduler_reason_since = back;
            }
            self.follow_workloads(at);
            return;
        }
        if let Change::Repair { node, action, target } = change {
            // The part that made a link flap is fixed: the flaps still to come never do.
            self.scheduled.retain(|(_, fault, repairs)| {
                !matches!(fault, super::fault::Fault::HcaLinkFlap { node: on, hca } if on == node && hca == target && repairs.contains(action))
            });
            let mut repaired = false;
            for injected in &mut self.injected {
                let (_, fault_target) = RepairTarget::of(&injected.fault);
                let asked = injected.repairs.iter().any(|a| a == action) && (fault_target.is_empty() || fault_target == *target);
                // Work done with the power off boots the node: it clears what a reboot clears.
                let booted = reboots(action) && injected.fault.cleared_by_reboot();
                if !injected.repaired && injected.fault.node() == node && (asked || booted) {
                    injected.repaired = true;
                    repaired = true;
                }
            }
            if reboots(action) {
                self.settle_configured_faults(node);
            }
            // A repair, a reboot or a replaced part builds the node again,
            // replaying the history (this work's effects included).
            if repaired || reboots(action) || action.starts_with("replace-") {
                // The HCAs' counters live in their firmware: work on a cable
                // leaves them (until `perfquery -R`), adding its own link-down.
                let kept: Vec<(String, super::fabric::PortCounters)> = if reboots(action) {
                    Vec::new()
                } else {
                    self.node(node).map(|n| n.hcas.iter().map(|h| (h.name.clone(), h.port.counters)).collect()).unwrap_or_default()
                };
                self.rebuild_node(node, reboots(action));
                if let Some(rebuilt) = self.node_mut(node) {
                    for (name, counters) in kept {
                        if let Some(hca) = rebuilt.hcas.iter_mut().find(|h| h.name == name) {
                            hca.port.counters = counters;
                            if cable_work(action) && name == *target {
                                hca.port.counters.link_downed = hca.port.counters.link_downed.saturating_add(1);
                            }
                        }
                    }
                }
                // The rebuilt GPUs are idle: the running jobs' ranks hold them again.
                for workload in &mut self.workloads {
                    workload.holding = false;
                }
            } else {
                self.apply_change_at(change, at);
            }
            if let Some(hca) = cable_work(action).then(|| target.clone()) {
                // The technician unplugged the cable: the link went down and came back.
                if let Some(node) = self.node_mut(node) {
                    if let Some((bus, netdev, up)) = node.hcas.iter().find(|h| h.name == hca).map(|h| (h.bus_id.clone(), h.netdev.clone(), h.port.is_up())) {
                        node.log_kernel(at - 60, 6, format!("mlx5_core {bus} {netdev}: Link down"));
                        if up {
                            node.log_kernel(at - 55, 6, format!("mlx5_core {bus} {netdev}: Link up"));
                        }
                    }
                }
            }
            self.follow_workloads(at);
            return;
        }
        match change {
            Change::CancelJob { job, .. } => self.cancel_job(*job, at),
            Change::StartJob { job, nodelist, runtime, exit_code, .. } => self.start_job(*job, nodelist, *runtime, *exit_code, at),
            Change::HoldJob { job: id, held, .. } => {
                for (_, change) in &mut self.history {
                    if let Change::SubmitJob { job, .. } = change {
                        if job.id == *id && job.started.is_none() {
                            job.held = held.clone();
                        }
                    }
                }
            }
            Change::LaunchWorkload { name, job, .. } => self.launch_workload(name, *job, at),
            Change::ApplyPod { pod, .. } => self.create_pod(pod, at),
            Change::DeletePod { namespace, name, .. } => self.delete_pod(namespace, name, at),
            Change::ConfigureWorkload { name, tensor, pipeline, serving, .. } => {
                let gpus = self.preset.gpu_buses.len() as u32;
                if let Some(spec) = self.workload_specs.iter_mut().find(|spec| spec.name == *name) {
                    let mut changed = (**spec).clone();
                    (changed.tensor, changed.pipeline) = (*tensor, *pipeline);
                    if let (Some(flags), Some(load)) = (serving, changed.load.as_mut()) {
                        changed.gpus_per_node = flags.gpus.clamp(1, gpus.max(1));
                        changed.seq_len = flags.max_model_len.clamp(128, 131_072);
                        load.max_num_seqs = flags.max_num_seqs.clamp(1, 4_096);
                        load.memory_permille = flags.memory_permille.clamp(1, 1000);
                    }
                    *spec = std::rc::Rc::new(changed);
                }
            }
            _ => {}
        }
        self.apply_change_at(change, at);
        self.follow_workloads(at);
        // What this change freed (a node resumed, a job cancelled) lets a waiting job start.
        self.start_waiting_jobs(at, true);
        if let Change::RestartFabricManager { node } = change {
            // Fabric Manager came up: the fault that stopped it is over.
            if self.node(node).is_some_and(|n| n.fabric_manager == ServiceState::Active) {
                for injected in &mut self.injected {
                    if matches!(&injected.fault, super::fault::Fault::FabricManagerDown { node: at } if at == node) {
                        injected.repaired = true;
                    }
                }
            }
        }
    }

    /// The steps job `id` ran, in order (sacct numbers them from 0).
    pub fn job_steps(&self, id: i64) -> Vec<&super::job::Step> {
        self.history
            .iter()
            .filter_map(|(_, change)| match change {
                Change::JobStep { job, step, .. } if *job == id => Some(step),
                _ => None,
            })
            .collect()
    }

    /// The batch jobs waiting in the queue with a script to run, oldest first.
    pub fn pending_batch_jobs(&self) -> Vec<&super::job::Job> {
        self.history
            .iter()
            .filter_map(|(_, change)| match change {
                Change::SubmitJob { job, .. } if job.started.is_none() && !job.cancelled && job.held.is_none() && job.batch.is_some() => Some(job),
                _ => None,
            })
            .collect()
    }

    /// A waiting batch job starts: its record says where and how it ran,
    /// and it no longer needs its script.
    fn start_job(&mut self, id: i64, nodelist: &[String], runtime: i64, exit_code: i32, at: EpochSeconds) {
        for (_, change) in &mut self.history {
            if let Change::SubmitJob { job, .. } = change {
                if job.id == id && job.started.is_none() {
                    job.started = Some(at);
                    job.nodelist = nodelist.to_vec();
                    job.runtime = runtime;
                    job.exit_code = exit_code;
                    job.reason.clear();
                    job.batch = None;
                }
            }
        }
    }

    /// `scancel`: a workload stops; a batch job's record ends now.
    fn cancel_job(&mut self, id: i64, at: EpochSeconds) {
        if self.cancel_workload(id, at) {
            return;
        }
        for (_, change) in &mut self.history {
            if let Change::SubmitJob { job, .. } = change {
                match job.state_at(at) {
                    super::job::JobState::Running if job.id == id => {
                        job.runtime = job.runtime.min(at - job.started.unwrap_or(at));
                        job.cancelled = true;
                    }
                    // A job cancelled while it waits ends without running.
                    super::job::JobState::Pending if job.id == id => {
                        job.started = Some(at);
                        job.runtime = 0;
                        job.cancelled = true;
                    }
                    _ => {}
                }
            }
        }
    }

    /// Starts the lab's workload `name` as job `id`, resuming from the last
    /// checkpoint an earlier run of it saved.
    fn launch_workload(&mut self, name: &str, id: i64, at: EpochSeconds) {
        self.launch_workload_as(name, id, at, at);
    }

    /// Starts the lab's workload `name` as job `id`, submitted at `submitted`, at `at`.
    pub(crate) fn launch_workload_as(&mut self, name: &str, id: i64, submitted: EpochSeconds, at: EpochSeconds) {
        let Some(spec) = self.workload_specs.iter().find(|spec| spec.name == name).cloned() else { return };
        // sbatch refuses past the bound; a crafted session is held to it too.
        if self.workloads.len() >= crate::limits::MAX_WORKLOAD_RUNS {
            return;
        }
        let resumed_from = self
            .workloads
            .iter()
            .filter(|w| w.spec.name == name)
            .filter_map(|w| {
                w.timeline(at).iter().rev().find_map(|event| match event {
                    super::workload::Event::Saved { iteration, seconds: Some(_), .. } => Some(*iteration),
                    _ => None,
                })
            })
            .max()
            .unwrap_or(0);
        self.start_workload(spec, id, submitted, at, resumed_from);
    }

    /// A boot of `node` applies its configuration: a RoCE rail's lost MTU
    /// (`hca-mtu`) is repaired exactly when netplan now gives the rail
    /// jumbo frames, however it was set at runtime before.
    fn settle_configured_faults(&mut self, node: &str) {
        let Some(found) = self.node(node) else { return };
        let mtus = super::network::configured_mtus(self, found);
        let jumbo: Vec<(String, bool)> = found
            .hcas
            .iter()
            .filter(|hca| hca.port.link_layer == super::fabric::LinkLayer::Ethernet)
            .map(|hca| {
                let mtu = mtus.iter().find(|(name, _)| *name == hca.netdev).map_or(1500, |(_, mtu)| *mtu);
                (hca.name.clone(), super::fabric::roce_active_mtu(mtu) >= hca.port.max_mtu)
            })
            .collect();
        for injected in &mut self.injected {
            if let super::fault::Fault::HcaMtu { node: on, hca, .. } = &injected.fault {
                if let Some((_, fixed)) = jumbo.iter().find(|(name, _)| on == node && name == hca) {
                    injected.repaired = *fixed;
                }
            }
        }
    }

    /// The counters of HCA `hca` of `node` (every HCA of it when None)
    /// start again from 0 at `at`; what they had counted stays in `cleared`
    /// for the switch port across.
    fn restart_hca_counters(&mut self, node: &str, hca: Option<&str>, at: EpochSeconds) {
        let guids: Vec<u64> =
            self.node(node).map(|n| n.hcas.iter().filter(|h| hca.is_none_or(|name| h.name == name)).map(|h| h.port.guid).collect()).unwrap_or_default();
        let moved: Vec<u64> = guids.iter().map(|guid| self.job_traffic_bytes_until(*guid, at)).collect();
        let Some(node) = self.node_mut(node) else { return };
        for (port, moved) in node.hcas.iter_mut().map(|h| &mut h.port).filter(|p| guids.contains(&p.guid)).zip(moved) {
            port.cleared = port.cleared.saturating_add(port.counters);
            port.counters = Default::default();
            port.counters_reset = Some((at, moved));
        }
    }

    /// Applies a change's effect without recording it (also for replays).
    pub(crate) fn apply_change_at(&mut self, change: &Change, at: EpochSeconds) {
        if let Change::ResetPortCounters { node, hca } = change {
            self.restart_hca_counters(node, Some(hca), at);
            return;
        }
        // The HCAs' firmware starts again at boot, and so do their counters
        // (the switch ports across keep theirs, and count the link's drop).
        let booted = match change {
            Change::Reboot { node, .. } => Some((node, at + BOOT_SECONDS)),
            Change::Repair { node, action, .. } if reboots(action) => Some((node, at)),
            _ => None,
        };
        if let Some((node, up)) = booted {
            self.restart_hca_counters(node, None, up);
        }
        if let Change::ResetLeafPortCounters { node, hca } = change {
            let counted = self.node(node).and_then(|n| n.hca(hca).map(|h| self.leaf_port_lifetime(n, &h.port, at)));
            if let Some(port) = self.node_mut(node).and_then(|n| n.hcas.iter_mut().find(|h| h.name == *hca)).map(|h| &mut h.port) {
                port.leaf_counters_reset = counted;
            }
            return;
        }
        // The shared file system is one: a file written there is on every node.
        if let Change::WriteFile { path, .. } = change {
            if path.starts_with(&format!("{}/", super::storage::SHARED_MOUNT)) {
                let hosts: Vec<String> = self.nodes.iter().map(|node| node.hostname.clone()).collect();
                for host in hosts {
                    if let Some(node) = self.node_mut(&host) {
                        write_file(node, change);
                    }
                }
                return;
            }
        }
        let Some(node) = self.node_mut(change.node()) else {
            return;
        };
        match change {
            Change::ResetGpu { gpu, .. } => {
                if let Some(gpu) = node.gpus.iter_mut().find(|g| g.index == *gpu) {
                    if gpu.health == GpuHealth::Unresponsive {
                        gpu.health = GpuHealth::Healthy;
                    }
                    gpu.ecc.volatile_corrected = 0;
                    gpu.ecc.volatile_uncorrected = 0;
                    // A pending remap takes effect at reset.
                    gpu.row_remap.pending = false;
                    for link in &mut gpu.nvlinks {
                        link.active = true;
                    }
                    gpu.needs_reset = false;
                }
            }
            Change::SetPowerLimit { gpu, watts, .. } => {
                if let Some(gpu) = node.gpus.iter_mut().find(|g| g.index == *gpu) {
                    gpu.power_limit_w = *watts;
                }
            }
            Change::SetScheduler { state, reason, .. } => {
                node.scheduler = *state;
                node.scheduler_reason = reason.clone();
                node.scheduler_reason_since = at;
            }
            Change::RestartFabricManager { .. } => {
                let gpus_ready = node.fabric_manager_can_start();
                node.fabric_manager = if gpus_ready { ServiceState::Active } else { ServiceState::Failed };
                node.fabric_manager_since = at;
                if gpus_ready {
                    for gpu in &mut node.gpus {
                        gpu.fabric = FabricState::Completed;
                    }
                }
            }
            Change::StopFabricManager { .. } => {
                node.fabric_manager = ServiceState::Inactive;
                node.fabric_manager_since = at;
            }
            Change::SetUnit { unit, state, .. } => {
                node.units.insert(unit.clone(), (*state, at));
                // The host engine keeps its watches in memory.
                if unit == super::service::DCGM_UNIT {
                    node.health_watches = 0;
                    node.dcgm_groups.clear();
                    node.dcgm_next_group = 2;
                }
            }
            Change::Listen { listener, .. } => {
                node.listeners.retain(|l| l.port != listener.port);
                node.listeners.push(listener.clone());
            }
            Change::StopListening { port, .. } => node.listeners.retain(|l| l.port != *port),
            Change::Repair { action, target, .. } => {
                // What the work did to the hardware, also when the node is built again.
                if cable_work(action) {
                    if let Some(hca) = node.hcas.iter_mut().find(|h| h.name == *target) {
                        hca.port.counters.link_downed = hca.port.counters.link_downed.saturating_add(1);
                    }
                }
                let mut rng = crate::rng::Rng::derive(0x7265_706c_6163_6564, &[&node.hostname, action, target, &at.to_string()]);
                if action == "replace-gpu" {
                    if let Some(gpu) = target.parse().ok().and_then(|index: u32| node.gpus.iter_mut().find(|g| g.index == index)) {
                        // A new board: a new UUID and serial number.
                        gpu.uuid = format!("GPU-{}-{}-{}-{}-{}", rng.hex(8), rng.hex(4), rng.hex(4), rng.hex(4), rng.hex(12));
                        gpu.serial = format!("16{:011}", rng.range_u64(0, 99_999_999_999));
                    }
                }
                if action == "replace-hca" {
                    if let Some(hca) = node.hcas.iter_mut().find(|h| h.name == *target) {
                        let oui = hca.node_guid >> 40;
                        hca.node_guid = (oui << 40) | (0x0300 << 24) | rng.range_u64(0, 0xff_ffff);
                        hca.port.guid = hca.node_guid;
                    }
                }
            }
            Change::WriteFile { .. } => write_file(node, change),
            Change::Cordon { unschedulable, drained, .. } => {
                node.cordoned_since = if *unschedulable { node.cordoned_since.or(Some(at)) } else { None };
                node.drained_pods = *unschedulable && (*drained || node.drained_pods);
            }
            Change::Traffic { device, sent_bytes, received_bytes, .. } => {
                if let Some(hca) = node.hcas.iter_mut().find(|hca| hca.name == *device) {
                    let port = &mut hca.port;
                    let mtu = u64::from(port.active_mtu.max(256));
                    let c = &mut port.counters;
                    // The data counters count 4-octet words, as the MADs do.
                    c.xmit_data = c.xmit_data.saturating_add(sent_bytes / 4);
                    c.rcv_data = c.rcv_data.saturating_add(received_bytes / 4);
                    c.xmit_pkts = c.xmit_pkts.saturating_add(sent_bytes.div_ceil(mtu));
                    c.rcv_pkts = c.rcv_pkts.saturating_add(received_bytes.div_ceil(mtu));
                }
            }
            // The record is the history entry itself; the jobs, the workloads'.
            // A reboot's effects are the node built again (`apply_change`).
            Change::SubmitJob { .. }
            | Change::CancelJob { .. }
            | Change::StartJob { .. }
            | Change::JobStep { .. }
            | Change::HoldJob { .. }
            | Change::LaunchWorkload { .. }
            | Change::ConfigureWorkload { .. }
            | Change::ApplyPod { .. }
            | Change::DeletePod { .. }
            | Change::Reboot { .. } => {}
            // Applied above, with the cluster's job traffic.
            Change::ResetPortCounters { .. } | Change::ResetLeafPortCounters { .. } => {}
            Change::SetNetdevMtu { netdev, mtu, .. } => node.set_netdev_mtu(netdev, *mtu),
            Change::SetHealthWatches { systems, .. } => node.health_watches = *systems,
            Change::CreateDcgmGroup { name, gpus, .. } => {
                let id = super::node::next_dcgm_group(&node.dcgm_groups, node.dcgm_next_group);
                node.dcgm_groups.push(super::node::DcgmGroup { id, name: name.clone(), gpus: gpus.clone() });
                node.dcgm_next_group = id + 1;
            }
            Change::DeleteDcgmGroup { id, .. } => node.dcgm_groups.retain(|group| group.id != *id),
            Change::SetDcgmGroupGpus { id, gpus, .. } => {
                if let Some(group) = node.dcgm_groups.iter_mut().find(|group| group.id == *id) {
                    group.gpus = gpus.clone();
                }
            }
            Change::SetPfc { netdev, enabled, .. } => {
                if let Some(hca) = node.hcas.iter_mut().find(|h| h.netdev == *netdev) {
                    hca.port.pfc_enabled = *enabled;
                }
            }
            Change::SetEcn { netdev, reaction_point, priority, enabled, .. } => {
                if let Some(hca) = node.hcas.iter_mut().find(|h| h.netdev == *netdev) {
                    let mask = if *reaction_point { &mut hca.port.ecn_rp } else { &mut hca.port.ecn_np };
                    let bit = 1u8.checked_shl(u32::from(*priority)).unwrap_or(0);
                    *mask = if *enabled { *mask | bit } else { *mask & !bit };
                }
            }
        }
        if let Change::Cordon { node, .. } | Change::SetScheduler { node, .. } = change {
            let node = node.clone();
            self.sync_slurm_cordon(&node, at);
        }
    }
}

/// A written file's text on `node`: replaced, or appended to.
fn write_file(node: &mut super::node::Node, change: &Change) {
    if let Change::WriteFile { path, text, append, .. } = change {
        let file = node.files.entry(path.clone()).or_default();
        if !*append {
            file.clear();
        }
        file.push_str(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fault::Fault;
    use crate::model::{preset, ClusterConfig};

    fn cluster() -> Cluster {
        Cluster::build(&ClusterConfig::new(preset::find("hgx-h100").unwrap(), vec!["gpu-001".into()]), 2)
    }

    #[test]
    fn a_reset_clears_what_a_reset_clears_and_not_a_lost_gpu() {
        let mut cluster = cluster();
        Fault::GpuXid { node: "gpu-001".into(), gpu: 1, xid: 119 }.apply(&mut cluster).unwrap();
        Fault::GpuXid { node: "gpu-001".into(), gpu: 2, xid: 79 }.apply(&mut cluster).unwrap();
        Fault::GpuRowRemapPending { node: "gpu-001".into(), gpu: 3 }.apply(&mut cluster).unwrap();
        for gpu in 1..=3 {
            cluster.apply_change(&Change::ResetGpu { node: "gpu-001".into(), gpu }, cluster.now);
        }
        let gpus = &cluster.nodes[0].gpus;
        assert_eq!(gpus[1].health, GpuHealth::Healthy);
        assert_eq!(gpus[2].health, GpuHealth::FallenOffBus);
        assert!(!gpus[3].row_remap.pending);
        assert_eq!(gpus[3].row_remap.uncorrectable, 1, "the remap itself stays recorded");
    }

    #[test]
    fn a_declared_repair_rebuilds_the_node_and_keeps_the_rest() {
        let mut cluster = cluster();
        let degraded = Fault::HcaLinkDegraded { node: "gpu-001".into(), hca: "mlx5_1".into(), rate: Some(200), width: None };
        cluster.inject(degraded, vec!["reseat-cable".into()]).unwrap();
        cluster.inject(Fault::GpuXid { node: "gpu-001".into(), gpu: 2, xid: 119 }, vec![]).unwrap();
        cluster.apply_change(&Change::ResetGpu { node: "gpu-001".into(), gpu: 2 }, cluster.now);
        let drain = Change::SetScheduler { node: "gpu-001".into(), state: SchedulerState::Drained, reason: Some("rail".into()) };
        cluster.apply_change(&drain, cluster.now);
        // The wrong HCA, then the wrong action: nothing changes.
        cluster.apply_change(&Change::Repair { node: "gpu-001".into(), action: "reseat-cable".into(), target: "mlx5_2".into() }, cluster.now);
        cluster.apply_change(&Change::Repair { node: "gpu-001".into(), action: "replace-gpu".into(), target: "mlx5_1".into() }, cluster.now);
        assert_eq!(cluster.nodes[0].hcas[1].port.rate_gbps(), 200);
        let uuid = cluster.nodes[0].gpus[0].uuid.clone();
        cluster.apply_change(&Change::Repair { node: "gpu-001".into(), action: "reseat-cable".into(), target: "mlx5_1".into() }, cluster.now);
        let node = &cluster.nodes[0];
        assert_eq!(node.hcas[1].port.rate_gbps(), 400);
        assert_eq!(node.gpus[2].health, GpuHealth::Healthy, "the reset is replayed after the rebuild");
        assert_eq!(node.scheduler, SchedulerState::Drained);
        assert_eq!(node.gpus[0].uuid, uuid, "the same hardware");
        assert!(cluster.injected[0].repaired && cluster.injected[1].repaired, "the cable work, and the reset that cleared the Xid");
    }

    #[test]
    fn fabric_manager_restarts_only_when_the_gpus_answer() {
        let mut cluster = cluster();
        Fault::FabricManagerDown { node: "gpu-001".into() }.apply(&mut cluster).unwrap();
        Fault::GpuXid { node: "gpu-001".into(), gpu: 0, xid: 119 }.apply(&mut cluster).unwrap();
        let restart = Change::RestartFabricManager { node: "gpu-001".into() };
        cluster.apply_change(&restart, cluster.now);
        assert_eq!(cluster.nodes[0].fabric_manager, ServiceState::Failed);
        cluster.apply_change(&Change::ResetGpu { node: "gpu-001".into(), gpu: 0 }, cluster.now);
        cluster.apply_change(&restart, cluster.now);
        assert_eq!(cluster.nodes[0].fabric_manager, ServiceState::Active);
        assert_eq!(cluster.nodes[0].gpus[5].fabric, FabricState::Completed);
    }
}
