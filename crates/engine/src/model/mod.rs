//! The cluster model: the single source of truth every emulated tool reads.
//!
//! A lab describes a cluster (preset, hostnames, overrides) and faults;
//! [`Cluster::build`] turns the description and a seed into concrete nodes,
//! GPUs and HCAs with plausible per-device values, and [`fault::Fault::apply`]
//! changes them. Tools never invent state: they format what is here.

pub mod change;
pub mod counters;
pub mod fabric;
pub mod fault;
pub mod gpu;
pub mod job;
pub mod network;
pub mod node;
pub mod pods;
pub mod preset;
pub mod service;
pub mod slurm_operator;
pub mod storage;
pub mod switches;
pub mod time;
pub mod workload;

use std::rc::Rc;

use crate::rng::Rng;
use fabric::{Hca, LinkLayer, PhysState, Port, PortCounters, PortState};
pub use gpu::{ComputeMode, Gpu, GpuHealth};
use gpu::{EccCounters, FabricState, NvLink, PcieLink, RowRemap};
pub use node::Node;
use node::{SchedulerState, ServiceState};
pub use preset::Preset;
use time::EpochSeconds;

/// What a lab's `[cluster]` table asks for, after validation. In lab data
/// the preset travels by its id.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ClusterConfig {
    #[serde(with = "preset::by_id")]
    pub preset: &'static Preset,
    pub hostnames: Vec<String>,
    pub driver: Option<String>,
    pub cuda: Option<String>,
    pub nccl: Option<String>,
    pub dcgm: Option<String>,
    pub fabric: LinkLayer,
    /// Compute HCAs per node (at most the preset's).
    pub hcas: Option<usize>,
    pub persistence: bool,
    /// The Slurm release (`23.11.10`): `scontrol show node` and `sinfo -l`
    /// follow its layout. Left out of lab data when unset, so labs that do
    /// not name one keep their data (and digest) as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm: Option<String>,
    /// The Kubernetes release (`1.29.15`), client and server alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<String>,
    /// Shared storage's read bandwidth to each node, GB/s (workloads read
    /// their data and write their checkpoints at it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_gb_per_s: Option<f64>,
    /// Slurm runs in pods under the slurm-operator (`model::slurm_operator`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub slurm_on_kubernetes: bool,
}

impl ClusterConfig {
    /// The preset's defaults for these hosts.
    pub fn new(preset: &'static Preset, hostnames: Vec<String>) -> ClusterConfig {
        ClusterConfig {
            preset,
            hostnames,
            driver: None,
            cuda: None,
            nccl: None,
            dcgm: None,
            fabric: LinkLayer::InfiniBand,
            hcas: None,
            persistence: true,
            slurm: None,
            kubernetes: None,
            storage_gb_per_s: None,
            slurm_on_kubernetes: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Versions {
    pub driver: String,
    pub cuda: String,
    pub nccl: String,
    pub dcgm: String,
    pub perftest: String,
    /// `23.11.10`, as slurmd reports it (`Version=`).
    pub slurm: String,
    /// `v1.29.15`, as kubectl prints it.
    pub kubernetes: String,
    pub os: &'static Os,
}

impl Versions {
    /// The driver's major branch, e.g. 570.
    pub fn driver_major(&self) -> u32 {
        self.driver.split('.').next().and_then(|major| major.parse().ok()).unwrap_or(0)
    }

    /// The Slurm release series, e.g. (23, 11); layouts change only between series.
    pub fn slurm_release(&self) -> (u32, u32) {
        release(&self.slurm).unwrap_or(DEFAULT_SLURM_RELEASE)
    }

    /// The Kubernetes minor release, e.g. 29 for v1.29.15.
    pub fn kubernetes_minor(&self) -> u32 {
        release(&self.kubernetes).map_or(DEFAULT_KUBERNETES_MINOR, |(_, minor)| minor)
    }
}

/// The Slurm every lab runs unless it names another.
pub const DEFAULT_SLURM: &str = "23.11.10";
const DEFAULT_SLURM_RELEASE: (u32, u32) = (23, 11);
/// The Slurm release series whose `scontrol show node` and `sinfo` layouts
/// the emulator knows (SchedMD's tags, 17.11 to 25.11): a lab may name any
/// release of these, with or without its maintenance number.
pub const SLURM_RELEASES: &[&str] = &["17.11", "18.08", "19.05", "20.02", "20.11", "21.08", "22.05", "23.02", "23.11", "24.05", "24.11", "25.05", "25.11"];

/// The Kubernetes every lab runs unless it names another.
pub const DEFAULT_KUBERNETES: &str = "v1.29.15";
const DEFAULT_KUBERNETES_MINOR: u32 = 29;
/// The Kubernetes minor releases whose kubectl output the emulator knows.
pub const KUBERNETES_MINORS: std::ops::RangeInclusive<u32> = 21..=30;

/// `23.11.10` or `v1.29.15` → (23, 11) or (1, 29); None unless it starts
/// with two numbers.
pub fn release(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.strip_prefix('v').unwrap_or(version).split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Whether a lab's `slurm` names a release the emulator knows: a series of
/// [`SLURM_RELEASES`], optionally with its maintenance number.
pub fn known_slurm(version: &str) -> bool {
    let mut parts = version.splitn(3, '.');
    let series = format!("{}.{}", parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    SLURM_RELEASES.contains(&series.as_str()) && parts.next().is_none_or(|patch| !patch.is_empty() && patch.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether a lab's `kubernetes` names a release the emulator knows:
/// `1.MINOR.PATCH`, with or without the `v`, MINOR in [`KUBERNETES_MINORS`].
pub fn known_kubernetes(version: &str) -> bool {
    let parts: Vec<&str> = version.strip_prefix('v').unwrap_or(version).split('.').collect();
    let number = |part: &str| !part.is_empty() && part.len() <= 4 && part.bytes().all(|b| b.is_ascii_digit());
    match parts[..] {
        ["1", minor, patch] if number(minor) && number(patch) => minor.parse().is_ok_and(|m| KUBERNETES_MINORS.contains(&m)),
        _ => false,
    }
}

/// The nodes' operating system, as /etc/os-release, `kubectl get nodes -o
/// wide` and systemd's tools show it. The model has one, Ubuntu 22.04 with
/// its systemd 249 (the kernel in node.rs is Ubuntu's), so no lab setting
/// selects another.
#[derive(Debug)]
pub struct Os {
    /// /etc/os-release as the distribution ships it.
    pub os_release: &'static str,
    pub systemd: u32,
    /// Where the distribution's packages put their units.
    pub unit_dir: &'static str,
    /// What `systemctl status` adds after a unit file's state: systemd
    /// before 252 says `vendor preset: X`; Debian and Ubuntu enable every
    /// unit by preset.
    pub preset: &'static str,
    /// systemd's DefaultTasksMax on these nodes: 15% of kernel.pid_max,
    /// which systemd's sysctl.d sets to 4194304 on 64-bit hosts.
    pub tasks_max: u64,
}

impl Os {
    /// os-release's `PRETTY_NAME` (`Ubuntu 22.04.5 LTS`), which Kubernetes reports as the OS image.
    pub fn pretty_name(&self) -> &'static str {
        let line = self.os_release.lines().find_map(|line| line.strip_prefix("PRETTY_NAME=")).unwrap_or("");
        line.trim_matches('"')
    }
}

/// Ubuntu 22.04.5 LTS (jammy): systemd 249.11.
pub static UBUNTU_22_04: Os = Os {
    os_release: "PRETTY_NAME=\"Ubuntu 22.04.5 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nVERSION=\"22.04.5 LTS (Jammy Jellyfish)\"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\nHOME_URL=\"https://www.ubuntu.com/\"\nSUPPORT_URL=\"https://help.ubuntu.com/\"\nBUG_REPORT_URL=\"https://bugs.launchpad.net/ubuntu/\"\nPRIVACY_POLICY_URL=\"https://www.ubuntu.com/legal/terms-and-policies/privacy-policy\"\nUBUNTU_CODENAME=jammy\n",
    systemd: 249,
    unit_dir: "/lib/systemd/system",
    preset: "vendor preset: enabled",
    tasks_max: 629_145,
};

/// The model. Cloning it is cheap (nodes are shared until one is changed), so
/// a command line that runs others (`pdsh`, `watch`, `ssh HOST CMD`) can work
/// on its own copy of the whole cluster.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub preset: &'static Preset,
    pub versions: Versions,
    pub fabric: LinkLayer,
    /// Read them here; change one through [`Cluster::node_mut`].
    pub nodes: Vec<Rc<Node>>,
    /// The lab's simulated wall clock (UTC).
    pub now: EpochSeconds,
    /// The seed every per-invocation variation derives from.
    pub seed: u64,
    /// What the cluster was built from, and when: a repaired node is rebuilt
    /// from these and its remaining faults and changes replayed.
    config: Rc<ClusterConfig>,
    started_at: EpochSeconds,
    /// Faults injected so far, with the hands-on actions that repair them.
    pub injected: Vec<Injected>,
    /// Changes applied so far, with when.
    history: Vec<(EpochSeconds, change::Change)>,
    /// The nodes as they were before each fault and change, with the
    /// instant that state ended: what a monitor scraped then (see
    /// [`Cluster::as_of`]). Sharing the nodes, a few of them cost little.
    eras: Vec<(EpochSeconds, Vec<Rc<Node>>)>,
    /// Faults that strike later, at their time (`at` in the lab), in order.
    pub scheduled: Vec<(EpochSeconds, fault::Fault, Vec<String>)>,
    /// The instant a fault being applied strikes, when it is a scheduled
    /// one's (the others struck a while before the lab began).
    pub(crate) striking: Option<EpochSeconds>,
    /// The training jobs, running or ended, and the lab's jobs a trainee
    /// may launch.
    pub workloads: Vec<workload::Workload>,
    pub workload_specs: Vec<Rc<workload::WorkloadSpec>>,
    /// The performance model's step time, handed in with the lab's jobs.
    pacer: Option<workload::Pacer>,
    /// The pods the API server holds (`model::pods`).
    pub pods: Vec<pods::Pod>,
    /// The lab's pods, as `[[pods]]` declared them (their manifests are files).
    lab_pods: Rc<[pods::LabPod]>,
}

/// A fault in the cluster, the actions that repair it, and whether one has.
#[derive(Clone, Debug, PartialEq)]
pub struct Injected {
    pub fault: fault::Fault,
    pub repairs: Vec<String>,
    pub repaired: bool,
    /// When it struck, for a fault scheduled during the lab.
    pub at: Option<EpochSeconds>,
}

/// When every lab's clock starts unless it says otherwise: a fixed instant, so
/// outputs do not depend on when the lab is opened.
/// A node the technician rebooted is up this long before the ticket closes.
const REBOOT_BEFORE_DONE: EpochSeconds = 300;

pub const DEFAULT_START: EpochSeconds = 1_773_045_600; // 2026-03-09 08:40:00 UTC

/// The CUDA version a driver branch supports, as `nvidia-smi` prints it:
/// from the captures (510: 11.6, 525: 12.0, 535: 12.2, 545: 12.3, 550: 12.4,
/// 565: 12.7, 570: 12.8, 580: 13.0) and NVIDIA's CUDA release notes (the
/// driver each toolkit shipped with) for the branches between.
pub fn cuda_for_driver(driver: &str) -> Option<&'static str> {
    let branch: u32 = driver.split('.').next()?.parse().ok()?;
    Some(match branch {
        0..=469 => return None,
        470..=494 => "11.4",
        495..=509 => "11.5",
        510..=514 => "11.6",
        515..=519 => "11.7",
        520..=524 => "11.8",
        525..=529 => "12.0",
        530..=534 => "12.1",
        535..=544 => "12.2",
        545..=549 => "12.3",
        550..=554 => "12.4",
        555..=559 => "12.5",
        560..=564 => "12.6",
        565..=569 => "12.7",
        570..=574 => "12.8",
        575..=579 => "12.9",
        _ => "13.0",
    })
}

impl Cluster {
    /// Builds the concrete cluster. Every per-device value comes from `seed`
    /// and the device's name, so a node's GPUs do not change when another
    /// node is added.
    pub fn build(config: &ClusterConfig, seed: u64) -> Cluster {
        let preset = config.preset;
        let now = DEFAULT_START + Rng::derive(seed, &["clock"]).range_i64(0, 6 * 3600);
        let versions = Versions {
            driver: config.driver.clone().unwrap_or_else(|| preset.driver.to_string()),
            // The CUDA version nvidia-smi reports is the driver's: a lab that
            // names only a driver gets that branch's CUDA.
            cuda: config
                .cuda
                .clone()
                .or_else(|| config.driver.as_deref().and_then(cuda_for_driver).map(str::to_string))
                .unwrap_or_else(|| preset.cuda.to_string()),
            nccl: config.nccl.clone().unwrap_or_else(|| preset.nccl.to_string()),
            dcgm: config.dcgm.clone().unwrap_or_else(|| preset.dcgm.to_string()),
            perftest: preset.perftest.to_string(),
            slurm: config.slurm.clone().unwrap_or_else(|| DEFAULT_SLURM.to_string()),
            kubernetes: match &config.kubernetes {
                Some(version) if version.starts_with('v') => version.clone(),
                Some(version) => format!("v{version}"),
                None => DEFAULT_KUBERNETES.to_string(),
            },
            os: &UBUNTU_22_04,
        };
        let nodes =
            config.hostnames.iter().enumerate().map(|(index, hostname)| Rc::new(build_node(config, &versions.driver, index, hostname, now, seed))).collect();
        Cluster {
            preset,
            versions,
            fabric: config.fabric,
            nodes,
            now,
            seed,
            config: Rc::new(config.clone()),
            started_at: now,
            injected: Vec::new(),
            history: Vec::new(),
            eras: Vec::new(),
            scheduled: Vec::new(),
            striking: None,
            workloads: Vec::new(),
            workload_specs: Vec::new(),
            pacer: None,
            pods: Vec::new(),
            lab_pods: Rc::new([]),
        }
    }

    /// Applies a fault and remembers it, with the actions that repair it.
    pub fn inject(&mut self, fault: fault::Fault, repairs: Vec<String>) -> Result<(), fault::FaultError> {
        let struck = self.strike_instant(&fault);
        self.end_era(struck);
        fault.apply(self)?;
        // Faults that end jobs without leaving the model unable to run them.
        match &fault {
            fault::Fault::GpuXid { node, gpu, xid: 94 } => {
                self.stop_workloads(struck, &workload::Stop::GpuEcc { node: node.clone(), gpu: *gpu }, |w| w.rank(node, *gpu).is_some());
            }
            // NCCL's peers across the rail see their queue pairs fail.
            fault::Fault::HcaLinkFlap { node, hca } => {
                let stop = workload::Stop::RailDown { node: node.clone(), hca: hca.clone() };
                self.stop_workloads(struck, &stop, |w| w.spec.nodes.len() > 1 && w.spec.nodes.contains(node));
            }
            _ => {}
        }
        self.injected.push(Injected { fault, repairs, repaired: false, at: self.striking });
        self.follow_workloads(self.striking.unwrap_or(self.now));
        if !self.pods.is_empty() {
            self.schedule_pods(struck);
        }
        Ok(())
    }

    /// The node whose HCA has the port with `guid`.
    pub fn node_with_port(&self, guid: u64) -> Option<&Node> {
        self.nodes.iter().find(|node| node.hcas.iter().any(|hca| hca.port.guid == guid)).map(Rc::as_ref)
    }

    /// When `fault`, being applied now, struck: a scheduled fault's own
    /// instant, or a seeded while before the lab began.
    pub(crate) fn strike_instant(&self, fault: &fault::Fault) -> EpochSeconds {
        self.striking.unwrap_or(self.started_at - fault.struck_before(self.seed))
    }

    /// When an injected fault struck: its own instant if it had one, else
    /// the seeded while before the lab began that it was applied at.
    pub(crate) fn struck_at(&self, injected: &Injected) -> EpochSeconds {
        injected.at.unwrap_or(self.started_at - injected.fault.struck_before(self.seed))
    }

    /// Schedules a fault to strike at `at` (simulated UTC), when the clock
    /// gets there.
    pub fn schedule(&mut self, at: EpochSeconds, fault: fault::Fault, repairs: Vec<String>) {
        let position = self.scheduled.iter().position(|(t, _, _)| *t > at).unwrap_or(self.scheduled.len());
        self.scheduled.insert(position, (at, fault, repairs));
    }

    /// Applies a fault that struck at `at`: a scheduled one when the clock
    /// reaches it, or one that struck before the lab began (while its jobs
    /// ran). Its kernel lines and the jobs' pace change from `at`.
    pub fn inject_at(&mut self, at: EpochSeconds, fault: fault::Fault, repairs: Vec<String>) -> Result<(), fault::FaultError> {
        self.striking = Some(at);
        let applied = self.inject(fault, repairs);
        self.striking = None;
        applied
    }

    /// Moves the clock to `now`: the scheduled faults due by then strike,
    /// each at its own instant, and jobs that ended by then let go of
    /// their GPUs.
    pub fn advance_to(&mut self, now: EpochSeconds) {
        while self.scheduled.first().is_some_and(|(at, _, _)| *at <= now) {
            let (at, fault, repairs) = self.scheduled.remove(0);
            self.now = at.max(self.now);
            let _ = self.inject_at(at, fault, repairs);
        }
        // The clock never goes back (a crafted session's changes out of order included).
        let now = now.max(self.now);
        self.now = now;
        if self.workloads.iter().any(|w| w.holding != w.running_at(now)) {
            self.hold_gpus();
            self.start_waiting_jobs(now, false);
        }
        self.follow_pods();
    }

    /// Keeps the nodes as they are, as the state that ended at `until`.
    pub(crate) fn end_era(&mut self, until: EpochSeconds) {
        // Nothing changed since the last era began: that era lasts longer.
        if let Some((last_until, nodes)) = self.eras.last_mut() {
            if nodes.len() == self.nodes.len() && nodes.iter().zip(&self.nodes).all(|(a, b)| Rc::ptr_eq(a, b)) {
                *last_until = until;
                return;
            }
        }
        if self.eras.len() >= crate::limits::MAX_ERAS_KEPT {
            // The lab's own past (its faults before it began) is kept; the
            // oldest era since merges into the next.
            let started_at = self.started_at;
            let oldest = self.eras.iter().position(|(end, _)| *end > started_at).unwrap_or(1).max(1);
            if oldest < self.eras.len() {
                self.eras.remove(oldest);
            }
        }
        self.eras.push((until, self.nodes.clone()));
    }

    /// The cluster as a monitor saw it at `at` (at most now): the nodes as
    /// they were then, each job's GPUs as its timeline has them then. The
    /// eras' ends are taken in order, none later than the next one's (a
    /// fault applied earlier in the lab's file may have struck later).
    pub fn as_of(&self, at: EpochSeconds) -> Cluster {
        let mut past = self.clone();
        past.eras = Vec::new();
        past.now = at.min(self.now);
        let mut until = EpochSeconds::MAX;
        let mut chosen = None;
        for (index, (end, _)) in self.eras.iter().enumerate().rev() {
            until = until.min(*end);
            if past.now < until {
                chosen = Some(index);
            }
        }
        if let Some(index) = chosen {
            past.nodes = self.eras[index].1.clone();
        }
        past.hold_gpus();
        past
    }

    /// What a boot sets from the node's configuration: each interface's
    /// MTU from netplan (`network::netplan_text`).
    fn apply_boot_configuration(&mut self, hostname: &str) {
        let Some(node) = self.node(hostname) else { return };
        let mtus = network::configured_mtus(self, node);
        let Some(node) = self.node_mut(hostname) else { return };
        for (name, mtu) in mtus {
            node.set_netdev_mtu(&name, mtu);
        }
    }

    /// Rebuilds a node as it left the factory, then replays its faults that
    /// are not repaired and every change made to it; what operators see of
    /// its past (kernel log, scheduler state) stays.
    ///
    /// With `rebooted`, the node has just booted again (its work done): it
    /// keeps the fresh kernel log of boot lines, Fabric Manager starts, the
    /// servers are gone. A GPU still off the bus fails the driver's probe,
    /// in the probe-time form of dmesg_fallen-off-bus_no-xid_drv570.txt.
    /// (Other faults the work did not repair keep their state, but their
    /// lines are not logged again.)
    pub(crate) fn rebuild_node(&mut self, hostname: &str, rebooted: bool) {
        let Some(index) = self.config.hostnames.iter().position(|h| h == hostname) else {
            return;
        };
        let Some(at) = self.nodes.iter().position(|n| n.hostname == hostname) else {
            return;
        };
        // A driver update this node finished (a boot loaded its module)
        // stays: the node runs the newer driver from then on.
        let driver = self
            .injected
            .iter()
            .rev()
            .find_map(|i| match &i.fault {
                fault::Fault::DriverMismatch { node, installed } if i.repaired && node == hostname => Some(installed.clone()),
                _ => None,
            })
            .unwrap_or_else(|| self.versions.driver.clone());
        let fresh = build_node(&self.config, &driver, index, hostname, self.started_at, self.seed);
        let boot_log = if rebooted { fresh.kernel_log.clone() } else { Vec::new() };
        let old = std::mem::replace(&mut self.nodes[at], Rc::new(fresh));
        let faults: Vec<(fault::Fault, Option<EpochSeconds>)> =
            self.injected.iter().filter(|i| !i.repaired && i.fault.node() == hostname).map(|i| (i.fault.clone(), i.at)).collect();
        for (fault, at) in faults {
            self.striking = at;
            let _ = fault.apply(self);
        }
        self.striking = None;
        // Still the same boot, unless a reboot in the history made a new one.
        let last_boot = self.history.iter().rev().find_map(|(at, c)| match c {
            change::Change::Repair { node, action, .. } if node == hostname && change::reboots(action) => Some((*at - REBOOT_BEFORE_DONE, false)),
            change::Change::Reboot { node, by_slurm, .. } if node == hostname => Some((*at + change::BOOT_SECONDS, *by_slurm)),
            _ => None,
        });
        let replay: Vec<(usize, EpochSeconds, change::Change)> =
            self.history.iter().enumerate().filter(|(_, (_, c))| c.node() == hostname).map(|(i, (at, c))| (i, *at, c.clone())).collect();
        // What was set at runtime (an MTU, DCQCN's switches) is gone after
        // a boot, which applies the node's configuration instead. The boot
        // is the last reboot in the history, in its order (a setting made
        // the same second before it is still gone).
        let boot = self.history.iter().rposition(|(_, c)| c.is_boot_of(hostname));
        let mut booted = false;
        for (index, when, change) in replay {
            if boot.is_some_and(|boot| index >= boot) && !booted {
                self.apply_boot_configuration(hostname);
                booted = true;
            }
            let runtime = matches!(change, change::Change::SetNetdevMtu { .. } | change::Change::SetEcn { .. });
            // A file on the shared file system is written once, for every
            // node: replayed, it would be written again on the others (this
            // node keeps its files, below).
            let shared = matches!(&change, change::Change::WriteFile { path, .. } if path.starts_with(&format!("{}/", storage::SHARED_MOUNT)));
            if (runtime && boot.is_some_and(|boot| index < boot)) || shared {
                continue;
            }
            self.apply_change_at(&change, when);
        }
        if boot.is_some() && !booted {
            self.apply_boot_configuration(hostname);
        }
        let node = Rc::make_mut(&mut self.nodes[at]);
        node.scheduler = old.scheduler;
        node.scheduler_reason = old.scheduler_reason.clone();
        node.scheduler_reason_since = old.scheduler_reason_since;
        node.files = old.files.clone();
        if let Some((booted_at, by_slurm)) = last_boot {
            node.booted_at = booted_at;
            node.reboot_issued = by_slurm;
            // Every service starts again at boot: what was done to them before is over.
            node.units.retain(|_, (_, since)| *since >= booted_at - change::BOOT_SECONDS);
            node.fabric_manager_since = node.fabric_manager_since.max(booted_at + 41);
        }
        if !rebooted {
            node.kernel_log = old.kernel_log.clone();
            node.listeners = old.listeners.clone();
            return;
        }
        node.kernel_log = boot_log;
        node.listeners.clear();
        // The driver loaded again: no Xid is this boot's (a GPU still off the
        // bus fails the probe below instead).
        for gpu in &mut node.gpus {
            gpu.xids.clear();
        }
        let probe_us = node.kernel_log.iter().find(|line| line.text.starts_with("NVRM: loading")).map_or(4_000_000, |line| line.uptime_us);
        let lost: Vec<(String, u16)> =
            node.gpus.iter().filter(|gpu| gpu.health == GpuHealth::FallenOffBus).map(|gpu| (gpu.kernel_bus_id(), gpu.device_id)).collect();
        for (n, (bus, device)) in lost.iter().enumerate() {
            let us = probe_us.saturating_sub(200_000) + n as u64 * 1_000;
            node.log_kernel_us(us, 3, format!("NVRM: The NVIDIA GPU {bus}"));
            node.log_kernel_us(us, 3, format!("NVRM: (PCI ID: 10de:{device:04x}) installed in this system has"));
            node.log_kernel_us(us, 3, "NVRM: fallen off the bus and is not responding to commands.");
        }
        if !lost.is_empty() {
            // Its level is not in the capture.
            node.log_kernel_us(probe_us.saturating_sub(100_000), 4, format!("NVRM: The NVIDIA probe routine failed for {} device(s).", lost.len()));
        }
        // A link that trains down does so again at every boot, and the kernel says so.
        let booted_at = node.booted_at;
        let slow = |link: &PcieLink| link.gen < link.max_gen || link.width < link.max_width;
        let gpu_lines: Vec<String> = node.gpus.iter().filter(|gpu| slow(&gpu.pcie)).map(|gpu| fault::limited_by(&gpu.kernel_bus_id(), &gpu.pcie)).collect();
        let hca_lines: Vec<String> = node.hcas.iter().filter(|hca| slow(&hca.pcie)).map(|hca| fault::limited_by(&hca.bus_id, &hca.pcie)).collect();
        for line in gpu_lines {
            node.log_kernel(booted_at + 2, 6, line);
        }
        for line in hca_lines {
            node.log_kernel(booted_at + 3, 6, line);
        }
        node.fabric_manager_since = node.booted_at + 41;
    }

    /// The same cluster as built, before any fault or change: the baseline
    /// a repair is measured against.
    pub fn healthy(&self) -> Cluster {
        Cluster::build(&self.config, self.seed)
    }

    /// The healthy cluster running the lab's jobs that ran at its start,
    /// at this cluster's instant: what a check of "quiet without the
    /// fault" compares with.
    pub fn healthy_running(&self) -> Cluster {
        let mut healthy = self.healthy();
        if let Some(pacer) = self.pacer {
            let specs: Vec<workload::WorkloadSpec> = self.workload_specs.iter().map(|spec| (**spec).clone()).collect();
            healthy.start_lab_workloads(&specs, pacer);
        }
        healthy.advance_to(self.now);
        healthy
    }

    /// When the lab's clock started.
    pub fn started_at(&self) -> EpochSeconds {
        self.started_at
    }

    /// The lab's pods, as `[[pods]]` declared them (their manifests are files).
    pub fn lab_pods(&self) -> &[pods::LabPod] {
        &self.lab_pods
    }

    /// Every change applied so far, with the simulated time it was made at.
    pub fn changes(&self) -> &[(EpochSeconds, change::Change)] {
        &self.history
    }

    pub fn node(&self, hostname: &str) -> Option<&Node> {
        self.nodes.iter().find(|node| node.hostname == hostname).map(Rc::as_ref)
    }

    /// The node to change: copied first if another copy of the cluster shares it.
    pub fn node_mut(&mut self, hostname: &str) -> Option<&mut Node> {
        self.nodes.iter_mut().find(|node| node.hostname == hostname).map(Rc::make_mut)
    }

    /// A copy holding only the named nodes (in cluster order): enough to see
    /// what faults on those nodes change, at a fraction of a large cluster's cost.
    pub fn subset(&self, hostnames: &[&str]) -> Cluster {
        Cluster {
            preset: self.preset,
            versions: self.versions.clone(),
            fabric: self.fabric,
            nodes: self.nodes.iter().filter(|node| hostnames.contains(&node.hostname.as_str())).cloned().collect(),
            now: self.now,
            seed: self.seed,
            config: self.config.clone(),
            started_at: self.started_at,
            injected: self.injected.iter().filter(|i| hostnames.contains(&i.fault.node())).cloned().collect(),
            history: self.history.iter().filter(|(_, c)| hostnames.contains(&c.node())).cloned().collect(),
            eras: Vec::new(),
            scheduled: self.scheduled.iter().filter(|(_, f, _)| hostnames.contains(&f.node())).cloned().collect(),
            striking: None,
            // A subset checks what faults show on their nodes; jobs span nodes
            // and are left out.
            workloads: Vec::new(),
            workload_specs: self.workload_specs.clone(),
            pacer: self.pacer,
            pods: self.pods.iter().filter(|p| p.binding.as_ref().is_some_and(|b| hostnames.contains(&b.node.as_str()))).cloned().collect(),
            lab_pods: self.lab_pods.clone(),
        }
    }
}

fn build_node(config: &ClusterConfig, driver: &str, index: usize, hostname: &str, now: EpochSeconds, seed: u64) -> Node {
    let preset = config.preset;
    let mut rng = Rng::derive(seed, &[hostname, "node"]);
    // Up for 3 to 40 days.
    let booted_at = now - rng.range_i64(3 * 86_400, 40 * 86_400);
    let gpus =
        preset.gpu_buses.iter().enumerate().map(|(gpu_index, bus)| build_gpu(preset, hostname, gpu_index as u32, *bus, config.persistence, seed)).collect();
    let hca_count = config.hcas.unwrap_or(preset.hca_count()).min(preset.hca_count());
    let hcas = preset.hca_buses[..hca_count].iter().enumerate().map(|(hca_index, bus)| build_hca(config, hostname, index, hca_index, *bus, seed)).collect();
    let mut node = Node {
        hostname: hostname.to_string(),
        gpus,
        hcas,
        booted_at,
        kernel_log: Vec::new(),
        driver_loaded: driver.to_string(),
        driver_installed: driver.to_string(),
        fabric_manager: ServiceState::Active,
        fabric_manager_since: booted_at + 41,
        scheduler: SchedulerState::Idle,
        scheduler_reason: None,
        scheduler_reason_since: booted_at,
        reachable: true,
        units: Default::default(),
        health_watches: 0,
        dcgm_groups: Vec::new(),
        dcgm_next_group: 2,
        netdev_mtus: Vec::new(),
        reboot_issued: false,
        cordoned_since: None,
        drained_pods: false,
        listeners: Vec::new(),
        files: Default::default(),
        busy: false,
        slurmd_in_pod: config.slurm_on_kubernetes,
    };
    boot_log(&mut node, &mut rng);
    node
}

/// The kernel lines every healthy boot leaves that operators grep for.
fn boot_log(node: &mut Node, rng: &mut Rng) {
    let mut at_us = 4_000_000 + rng.range_u64(0, 900_000);
    node.log_kernel_us(at_us, 6, format!("nvidia-nvlink: Nvlink Core is being initialized, major device number {}", rng.range_u64(500, 511)));
    at_us += rng.range_u64(20_000, 60_000);
    node.log_kernel_us(
        at_us,
        6,
        format!(
            "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  {}  Release Build  (dvs-builder@U22-I3-AF03-09-1)  Sun Jun  1 02:29:59 UTC 2025",
            node.driver_loaded
        ),
    );
    let hcas: Vec<(String, String)> = node.hcas.iter().map(|hca| (hca.bus_id.clone(), hca.netdev.clone())).collect();
    for (bus_id, netdev) in hcas {
        at_us += rng.range_u64(30_000, 90_000);
        node.log_kernel_us(at_us, 6, format!("mlx5_core {bus_id} {netdev}: renamed from ib{}", rng.range_u64(0, 7)));
    }
}

fn guid(oui: u64, rng: &mut Rng) -> u64 {
    (oui << 40) | (0x0300 << 24) | rng.range_u64(0, 0xff_ffff)
}

/// The socket a device at position `index` of `count` hangs off: the first
/// half of the baseboard's devices on socket 0, the second on socket 1.
fn socket_of(index: usize, count: usize, sockets: u32) -> u32 {
    let per_socket = count.div_ceil(sockets.max(1) as usize).max(1);
    (index / per_socket) as u32
}

fn build_hca(config: &ClusterConfig, hostname: &str, node_index: usize, index: usize, bus: u8, seed: u64) -> Hca {
    let spec = &config.preset.hca;
    let mut rng = Rng::derive(seed, &[hostname, "hca", &index.to_string()]);
    let node_guid = guid(spec.guid_oui, &mut rng);
    let infiniband = config.fabric == LinkLayer::InfiniBand;
    let hca_count = config.preset.hca_count() as u16;
    Hca {
        name: format!("mlx5_{index}"),
        netdev: if infiniband { format!("ibp{bus}s0") } else { format!("enp{bus}s0np0") },
        ca_type: format!("MT{}", spec.part_id),
        part_id: spec.part_id,
        board_id: spec.board_id.to_string(),
        firmware: spec.firmware.to_string(),
        node_guid,
        bus_id: format!("0000:{bus:02x}:00.0"),
        pcie: PcieLink::full(spec.pcie_gen, 16),
        numa_node: socket_of(index, config.preset.hca_count(), config.preset.host.sockets),
        pcie_switch: config.preset.hca_rails.get(index).copied().unwrap_or(index as u32),
        port: Port {
            number: 1,
            state: PortState::Active,
            phys_state: PhysState::LinkUp,
            link_layer: config.fabric,
            width: 4,
            max_width: 4,
            lane_speed: spec.lane_speed,
            max_lane_speed: spec.lane_speed,
            // LIDs are unique in the subnet; RoCE ports have none.
            lid: if infiniband { 100 + node_index as u16 * hca_count + index as u16 } else { 0 },
            sm_lid: u16::from(infiniband),
            lmc: 0,
            capability_mask: if infiniband { 0xa751_e848 } else { 0x0001_0000 },
            guid: node_guid,
            max_mtu: 4096,
            active_mtu: 4096,
            netdev_mtu: if infiniband { fabric::IPOIB_NETDEV_MTU } else { fabric::ROCE_NETDEV_MTU },
            pfc_enabled: if infiniband { 0 } else { 1 << fabric::ROCE_PRIORITY },
            ecn_np: if infiniband { 0 } else { 0xff },
            ecn_rp: if infiniband { 0 } else { 0xff },
            counters: PortCounters::default(),
            symbol_errors_per_hour: 0,
            counters_reset: None,
            cleared: PortCounters::default(),
            leaf_counters_reset: None,
        },
    }
}

/// The UUID GPU `index` of `hostname` has in a cluster built from `seed`
/// (an answer may name a GPU by it).
pub fn gpu_uuid(seed: u64, hostname: &str, index: u32) -> String {
    uuid_from(&mut Rng::derive(seed, &[hostname, "gpu", &index.to_string()]))
}

fn uuid_from(rng: &mut Rng) -> String {
    format!("GPU-{}-{}-{}-{}-{}", rng.hex(8), rng.hex(4), rng.hex(4), rng.hex(4), rng.hex(12))
}

fn build_gpu(preset: &Preset, hostname: &str, index: u32, bus: u8, persistence: bool, seed: u64) -> Gpu {
    let spec = &preset.gpu;
    let mut rng = Rng::derive(seed, &[hostname, "gpu", &index.to_string()]);
    let uuid = uuid_from(&mut rng);
    let serial = format!("16{:011}", rng.range_u64(0, 99_999_999_999));
    let temperature_c = rng.range_u64(u64::from(spec.idle_temp_c.0), u64::from(spec.idle_temp_c.1)) as u32;
    Gpu {
        index,
        name: spec.name.to_string(),
        bus_id: format!("00000000:{bus:02X}:00.0"),
        device_id: spec.device_id,
        uuid,
        serial,
        vbios: spec.vbios.to_string(),
        memory_total_mib: spec.memory_total_mib,
        memory_used_mib: spec.idle_memory_used_mib,
        power_limit_w: spec.power_limit_w,
        default_power_limit_w: spec.power_limit_w,
        power_draw_w: rng.range_u64(u64::from(spec.idle_power_w.0), u64::from(spec.idle_power_w.1)) as u32,
        temperature_c,
        memory_temperature_c: temperature_c + rng.range_u64(2, 6) as u32,
        pstate: 0,
        utilization_pct: 0,
        memory_utilization_pct: 0,
        fan_pct: spec.has_fan.then_some(30),
        sm_clock_mhz: spec.idle_sm_clock_mhz,
        mem_clock_mhz: spec.max_mem_clock_mhz,
        max_sm_clock_mhz: spec.max_sm_clock_mhz,
        max_mem_clock_mhz: spec.max_mem_clock_mhz,
        throttle_reasons: gpu::throttle::GPU_IDLE,
        persistence_mode: persistence,
        display_active: false,
        ecc: EccCounters::default(),
        row_remap: RowRemap { banks_max: spec.remap_banks, ..RowRemap::default() },
        mig_enabled: false,
        compute_mode: ComputeMode::Default,
        health: GpuHealth::Healthy,
        pcie: PcieLink::full(spec.pcie_gen, 16),
        nvlinks: (0..spec.nvlinks)
            .map(|_| NvLink { gbytes_per_sec: spec.nvlink_gbytes_per_sec, active: true, replay_errors: 0, recovery_errors: 0, crc_errors: 0 })
            .collect(),
        fabric: FabricState::Completed,
        numa_node: socket_of(index as usize, preset.gpu_buses.len(), preset.host.sockets),
        pcie_switch: index,
        xids: Vec::new(),
        needs_reset: false,
        processes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(hosts: &[&str]) -> ClusterConfig {
        ClusterConfig::new(preset::find("hgx-h100").unwrap(), hosts.iter().map(|h| h.to_string()).collect())
    }

    #[test]
    fn hgx_h100_has_eight_gpus_and_eight_hcas_per_node() {
        let cluster = Cluster::build(&config(&["gpu-001", "gpu-002"]), 1);
        assert_eq!(cluster.nodes.len(), 2);
        for node in &cluster.nodes {
            assert_eq!(node.gpus.len(), 8);
            assert_eq!(node.hcas.len(), 8);
            assert_eq!(node.hcas[7].name, "mlx5_7");
            assert_eq!(node.hcas[0].port.rate_gbps(), 400);
            assert!(node.gpus.iter().all(|g| g.memory_total_mib == 81559 && g.power_limit_w == 700));
            assert!(node.gpus.iter().all(|g| g.active_nvlinks() == 18));
        }
        assert_eq!(cluster.nodes[0].gpus[5].bus_id, "00000000:A3:00.0");
        assert_eq!(cluster.nodes[0].gpus[5].nvrm_pci(), "PCI:0000:a3:00");
        assert_eq!((cluster.nodes[0].gpus[3].numa_node, cluster.nodes[0].gpus[4].numa_node), (0, 1));
        assert_eq!(cluster.nodes[0].hcas[7].numa_node, 1);
        assert_eq!(cluster.preset.host.socket_cpus(1), "56-111,168-223");
        assert_eq!(cluster.versions.driver, "570.158.01");
        // LIDs are unique across the fabric.
        let mut lids: Vec<u16> = cluster.nodes.iter().flat_map(|n| n.hcas.iter().map(|h| h.port.lid)).collect();
        crate::sort::sort(&mut lids);
        lids.dedup();
        assert_eq!(lids.len(), 16);
    }

    #[test]
    fn devices_are_deterministic_and_independent_of_other_nodes() {
        let one = Cluster::build(&config(&["gpu-001"]), 9);
        let two = Cluster::build(&config(&["gpu-001", "gpu-002"]), 9);
        assert_eq!(one.nodes[0].gpus[3].uuid, two.nodes[0].gpus[3].uuid);
        assert_ne!(two.nodes[0].gpus[3].uuid, two.nodes[1].gpus[3].uuid);
        let other_seed = Cluster::build(&config(&["gpu-001"]), 10);
        assert_ne!(one.nodes[0].gpus[0].uuid, other_seed.nodes[0].gpus[0].uuid);
    }

    #[test]
    fn uuids_have_the_nvidia_shape() {
        let cluster = Cluster::build(&config(&["gpu-001"]), 3);
        let uuid = &cluster.nodes[0].gpus[0].uuid;
        let groups: Vec<usize> = uuid.trim_start_matches("GPU-").split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12]);
    }

    #[test]
    fn the_boot_log_is_in_time_order() {
        let cluster = Cluster::build(&config(&["gpu-001"]), 3);
        let log = &cluster.nodes[0].kernel_log;
        assert!(log.len() >= 10);
        assert!(log.windows(2).all(|pair| pair[0].uptime_us <= pair[1].uptime_us));
    }
}
