//! A node: its devices, kernel log, services and scheduler state.

use super::fabric::Hca;
use super::gpu::Gpu;
use super::time::EpochSeconds;

/// The nodes' kernel, as `uname -r` and `uname -v` give it (Ubuntu 22.04's
/// NVIDIA kernel flavour); Slurm, Kubernetes and the kernel's own stack
/// dumps name it.
pub const KERNEL_RELEASE: &str = "5.15.0-1063-nvidia";
pub const KERNEL_VERSION: &str = "#64-Ubuntu SMP Fri Aug  9 17:13:45 UTC 2024";

/// One kernel ring-buffer line: time since boot and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelLine {
    pub uptime_us: u64,
    /// Syslog priority: 3 = err, 4 = warning, 6 = info.
    pub level: u8,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ServiceState {
    Active,
    Failed,
    Inactive,
}

/// The node as Slurm (and Kubernetes) see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SchedulerState {
    Idle,
    Allocated,
    Down,
    Drained,
}

/// What Slurm shows of a node: its state and whether a job runs there
/// (a drained node still running one is draining).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlurmShown {
    Idle,
    Allocated,
    Draining,
    Drained,
    Down,
}

impl SlurmShown {
    pub fn of(node: &Node) -> SlurmShown {
        match (node.scheduler, node.busy) {
            (SchedulerState::Idle, false) => SlurmShown::Idle,
            (SchedulerState::Allocated, _) | (SchedulerState::Idle, true) => SlurmShown::Allocated,
            (SchedulerState::Drained, false) => SlurmShown::Drained,
            (SchedulerState::Drained, true) => SlurmShown::Draining,
            (SchedulerState::Down, _) => SlurmShown::Down,
        }
    }

    /// `sinfo -l`'s and the lab's words: idle, allocated, draining, drained, down.
    pub fn long(self) -> &'static str {
        match self {
            SlurmShown::Idle => "idle",
            SlurmShown::Allocated => "allocated",
            SlurmShown::Draining => "draining",
            SlurmShown::Drained => "drained",
            SlurmShown::Down => "down",
        }
    }
}

/// The user every lab logs in as (uid 1000), whose jobs run on the nodes.
pub const USER: &str = "user";
/// Their home directory, shared by every node (NFS), where jobs' scripts and logs live.
pub const HOME: &str = "/home/user";
/// The user's ids and groups, as Ubuntu 22.04 gives the operator account:
/// its own group, `adm` (which may read `/var/log` and the journal) and
/// `sudo` (which may run anything as root).
pub const UID: u32 = 1000;
pub const GROUPS: &[(u32, &str)] = &[(1000, USER), (4, "adm"), (27, "sudo")];

/// A DCGM GPU group: its id (from 2, never reused while the engine runs),
/// name and GPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DcgmGroup {
    pub id: u32,
    pub name: String,
    pub gpus: Vec<u32>,
}

/// The id the host engine gives its next group: one past the highest it
/// gave (the groups deleted since count too: `next` remembers them).
pub fn next_dcgm_group(groups: &[DcgmGroup], next: u32) -> u32 {
    groups.iter().map(|group| group.id + 1).max().unwrap_or(2).max(next)
}

#[derive(Clone, Debug)]
pub struct Node {
    pub hostname: String,
    pub gpus: Vec<Gpu>,
    pub hcas: Vec<Hca>,
    pub booted_at: EpochSeconds,
    pub kernel_log: Vec<KernelLine>,
    /// The NVIDIA driver: the kernel module loaded at boot, and the
    /// user-space half the packages installed (NVML, libcuda, Fabric
    /// Manager). They differ after a package update until the next boot
    /// loads the new module (see [`Node::driver_mismatch`]).
    pub driver_loaded: String,
    pub driver_installed: String,
    pub fabric_manager: ServiceState,
    /// When Fabric Manager last started or failed.
    pub fabric_manager_since: EpochSeconds,
    /// The other services an operator stopped, killed or restarted since
    /// boot, with since when (`model::service`; the rest run since boot).
    pub units: std::collections::BTreeMap<String, (ServiceState, EpochSeconds)>,
    /// The DCGM health systems watched (`dcgmi health -s`), bit per system
    /// in DCGM's order: PCIe, NVLink, Memory, SM, InfoROM, Thermal, Power, Driver.
    pub health_watches: u16,
    /// The GPU groups an operator made with `dcgmi group -c` (the host
    /// engine's own 0 and 1 are not here), held in the engine's memory.
    pub dcgm_groups: Vec<DcgmGroup>,
    /// The id the next group gets (2 when the engine starts).
    pub dcgm_next_group: u32,
    /// MTUs set with `ip link set` on netdevs that are not an HCA's
    /// (loopback, the front-end NIC); the others keep their defaults.
    pub netdev_mtus: Vec<(String, u32)>,
    pub scheduler: SchedulerState,
    /// Why an operator or the scheduler took the node out, e.g. `Not responding`.
    pub scheduler_reason: Option<String>,
    pub scheduler_reason_since: EpochSeconds,
    /// False when the node hangs (`node-down`). Private to the model:
    /// every reader asks [`Node::up`], which also knows the node is away
    /// while it boots.
    pub(in crate::model) reachable: bool,
    /// Slurm rebooted the node this boot (`scontrol reboot`): while it
    /// boots, Slurm shows it `boot^` and waits for it.
    pub reboot_issued: bool,
    /// Kubernetes' own mark (`kubectl cordon`, `drain`): since when the node
    /// is unschedulable, and whether a drain evicted its pods. Slurm's
    /// state is a separate system's (`scheduler`).
    pub cordoned_since: Option<EpochSeconds>,
    pub drained_pods: bool,
    /// Servers waiting for clients (perftest servers).
    pub listeners: Vec<super::change::Listener>,
    /// A job's processes run here: Slurm shows it allocated (draining
    /// once drained).
    pub busy: bool,
    /// The node image runs slurmd in a pod (Slurm on Kubernetes), not as a
    /// systemd unit.
    pub slurmd_in_pod: bool,
    /// Files the trainee wrote (`echo x > notes.txt`), by absolute path.
    /// Everything else a node's file system shows is generated from the
    /// model (`commands::files`).
    pub files: std::collections::BTreeMap<String, String>,
}

impl Node {
    /// The netdev's MTU: an HCA's port follows it (RoCE's active MTU),
    /// another interface keeps it in `netdev_mtus`.
    pub fn set_netdev_mtu(&mut self, netdev: &str, mtu: u32) {
        match self.hcas.iter_mut().find(|hca| hca.netdev == netdev) {
            Some(hca) => hca.port.set_netdev_mtu(mtu),
            None => {
                self.netdev_mtus.retain(|(name, _)| name != netdev);
                self.netdev_mtus.push((netdev.to_string(), mtu));
            }
        }
    }

    /// Whether the node answers at `now`: it is not down, and not between
    /// a reboot and its next boot.
    pub fn up(&self, now: super::time::EpochSeconds) -> bool {
        self.reachable && now >= self.booted_at
    }

    /// The node stops answering (a hang, a lost network) until a power
    /// cycle or a repair rebuilds it.
    pub fn hang(&mut self) {
        self.reachable = false;
    }

    /// Whether the node hangs: it will not come back without a power
    /// cycle or a repair (a node that boots is only away: see [`Node::up`]).
    pub fn hangs(&self) -> bool {
        !self.reachable
    }

    pub fn gpu(&self, index: u32) -> Option<&Gpu> {
        self.gpus.iter().find(|gpu| gpu.index == index)
    }

    /// The node as NVML numbers it when a GPU failed the driver's probe at
    /// boot: that GPU absent and the ones after it a number lower (their
    /// bus IDs and serials unchanged), with each number's physical GPU.
    /// None when every GPU was probed.
    pub fn as_probed(&self) -> Option<(Node, Vec<(u32, u32)>)> {
        if !self.gpus.iter().any(|gpu| gpu.failed_probe()) {
            return None;
        }
        let mut node = self.clone();
        node.gpus.retain(|gpu| !gpu.failed_probe());
        let mut numbers = Vec::new();
        for (at, gpu) in node.gpus.iter_mut().enumerate() {
            numbers.push((at as u32, gpu.index));
            gpu.index = at as u32;
        }
        Some((node, numbers))
    }

    /// Fabric Manager starts only when every GPU answers, none waits for a
    /// reset, and the driver it was built for is the one loaded.
    pub fn fabric_manager_can_start(&self) -> bool {
        !self.driver_mismatch() && self.gpus.iter().all(super::gpu::Gpu::works)
    }

    /// The driver's libraries are not the loaded module's version: NVML
    /// and CUDA refuse to start (`Driver/library version mismatch`),
    /// while processes that loaded the old libraries before keep running.
    pub fn driver_mismatch(&self) -> bool {
        self.driver_loaded != self.driver_installed
    }

    /// Whether a drain evicted the node's pods (a cordon alone does not);
    /// they stay away until it is uncordoned.
    pub fn pods_evicted(&self) -> bool {
        self.cordoned_since.is_some() && self.drained_pods
    }

    pub fn hca(&self, name: &str) -> Option<&Hca> {
        self.hcas.iter().find(|hca| hca.name == name)
    }

    /// Appends a kernel line at simulated time `at`.
    pub fn log_kernel(&mut self, at: EpochSeconds, level: u8, text: impl Into<String>) {
        let uptime_us = (at - self.booted_at).max(0) as u64 * 1_000_000;
        self.log_kernel_us(uptime_us, level, text);
    }

    /// Appends a kernel line at an exact uptime, keeping the log in time order.
    pub fn log_kernel_us(&mut self, uptime_us: u64, level: u8, text: impl Into<String>) {
        let line = KernelLine { uptime_us, level, text: text.into() };
        let at = self.kernel_log.partition_point(|existing| existing.uptime_us <= uptime_us);
        self.kernel_log.insert(at, line);
    }
}
