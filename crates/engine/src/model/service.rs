//! The node image's systemd services and the processes they run: one list,
//! which systemctl, journalctl, ps, pgrep, kill and fuser read and
//! nvidia-smi consults before a reset. Fabric Manager keeps its own state
//! (`Node::fabric_manager`), which its fault and repairs drive; every other
//! unit is active from boot unless an operator stopped, killed or
//! restarted it (`Node::units`, set by `Change::SetUnit`).
//!
//! The platform is one for every preset: Ubuntu 22.04 with the driver,
//! Fabric Manager and DCGM installed on the host (DCGM's `nv-hostengine`
//! and `dcgm-exporter` from systemd, as NVIDIA's DCGM packages install
//! them), Slurm's `slurmd`, and a kubelet whose GPU Operator deploys
//! neither the driver nor the exporter (the host has both), and Ubuntu's
//! `prometheus-node-exporter` for the host's own metrics.

use super::node::{Node, ServiceState};
use super::time::EpochSeconds;
use crate::rng::Rng;

/// A service of the node image.
pub struct Unit {
    /// The unit's name, `nvidia-dcgm.service`.
    pub name: &'static str,
    pub description: &'static str,
    /// Its main process's command line, and the name the kernel gives it
    /// (`comm`, at most 15 characters).
    pub command: &'static str,
    pub comm: &'static str,
    pub user: &'static str,
    /// Seconds from boot to its start.
    pub after_boot: i64,
    /// Its process keeps every GPU's device file open, so that a GPU reset
    /// is refused while it runs: DCGM's host engine, and the exporter's
    /// embedded one.
    pub holds_gpus: bool,
    /// `Restart=always`: systemd starts it again after its process dies.
    pub restarts: bool,
    /// What `systemctl status` shows of it: tasks and memory.
    pub tasks: u32,
    pub memory: &'static str,
}

pub const DCGM_UNIT: &str = "nvidia-dcgm.service";
pub const EXPORTER_UNIT: &str = "dcgm-exporter.service";
/// Ubuntu's package of Prometheus' node_exporter (1.3.1 on 22.04).
pub const NODE_EXPORTER_UNIT: &str = "prometheus-node-exporter.service";

/// The services of the node image, in the order systemd lists them
/// (by name). nvidia-persistenced keeps the driver loaded, not the GPUs
/// busy: it does not stand in a reset's way.
pub const UNITS: &[Unit] = &[
    Unit {
        name: "containerd.service",
        description: "containerd container runtime",
        command: "/usr/bin/containerd",
        comm: "containerd",
        user: "root",
        after_boot: 31,
        holds_gpus: false,
        restarts: true,
        tasks: 112,
        memory: "96.4M",
    },
    Unit {
        name: "cron.service",
        description: "Regular background program processing daemon",
        command: "/usr/sbin/cron -f -P",
        comm: "cron",
        user: "root",
        after_boot: 22,
        holds_gpus: false,
        restarts: false,
        tasks: 1,
        memory: "1.1M",
    },
    Unit {
        name: EXPORTER_UNIT,
        description: "NVIDIA DCGM Exporter",
        command: "/usr/bin/dcgm-exporter -f /etc/dcgm-exporter/default-counters.csv",
        comm: "dcgm-exporter",
        user: "root",
        after_boot: 44,
        holds_gpus: true,
        restarts: true,
        tasks: 31,
        memory: "74.2M",
    },
    Unit {
        name: "kubelet.service",
        description: "kubelet: The Kubernetes Node Agent",
        command: "/usr/bin/kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml --container-runtime-endpoint=unix:///var/run/containerd/containerd.sock",
        comm: "kubelet",
        user: "root",
        after_boot: 35,
        holds_gpus: false,
        restarts: true,
        tasks: 58,
        memory: "88.7M",
    },
    Unit {
        name: DCGM_UNIT,
        description: "NVIDIA DCGM service",
        command: "/usr/bin/nv-hostengine -n --service-account nvidia-dcgm",
        comm: "nv-hostengine",
        user: "root",
        after_boot: 38,
        holds_gpus: true,
        restarts: false,
        tasks: 12,
        memory: "41.9M",
    },
    Unit {
        name: "nvidia-persistenced.service",
        description: "NVIDIA Persistence Daemon",
        command: "/usr/bin/nvidia-persistenced --user nvidia-persistenced --verbose",
        comm: "nvidia-persiste",
        user: "nvidia-persistenced",
        after_boot: 12,
        holds_gpus: false,
        restarts: false,
        tasks: 1,
        memory: "1.4M",
    },
    Unit {
        name: NODE_EXPORTER_UNIT,
        description: "Prometheus exporter for machine metrics",
        command: "/usr/bin/prometheus-node-exporter",
        comm: "prometheus-node",
        user: "prometheus",
        after_boot: 23,
        holds_gpus: false,
        restarts: true,
        tasks: 9,
        memory: "17.6M",
    },
    Unit {
        name: "rsyslog.service",
        description: "System Logging Service",
        command: "/usr/sbin/rsyslogd -n -iNONE",
        comm: "rsyslogd",
        user: "syslog",
        after_boot: 21,
        holds_gpus: false,
        restarts: false,
        tasks: 4,
        memory: "2.9M",
    },
    Unit {
        name: "slurmd.service",
        description: "Slurm node daemon",
        command: "/usr/sbin/slurmd --systemd",
        comm: "slurmd",
        user: "root",
        after_boot: 40,
        holds_gpus: false,
        restarts: false,
        tasks: 2,
        memory: "6.2M",
    },
    Unit {
        name: "ssh.service",
        description: "OpenBSD Secure Shell server",
        command: "sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups",
        comm: "sshd",
        user: "root",
        after_boot: 24,
        holds_gpus: false,
        restarts: false,
        tasks: 1,
        memory: "5.8M",
    },
    Unit {
        name: "systemd-journald.service",
        description: "Journal Service",
        command: "/lib/systemd/systemd-journald",
        comm: "systemd-journal",
        user: "root",
        after_boot: 3,
        holds_gpus: false,
        restarts: false,
        tasks: 1,
        memory: "38.3M",
    },
    Unit {
        name: "systemd-logind.service",
        description: "User Login Management",
        command: "/lib/systemd/systemd-logind",
        comm: "systemd-logind",
        user: "root",
        after_boot: 21,
        holds_gpus: false,
        restarts: false,
        tasks: 1,
        memory: "2.2M",
    },
];

pub const SLURMD_UNIT: &str = "slurmd.service";
pub const KUBELET_UNIT: &str = "kubelet.service";

/// The state of the unit named `name` on `node`, and since when; None
/// for a unit the image lacks.
pub fn state_of(node: &Node, name: &str) -> Option<(ServiceState, EpochSeconds)> {
    unit_on(node, name).map(|unit| state(node, unit))
}

/// The units of `node`'s image: all of [`UNITS`] but slurmd where it runs
/// in a pod (Slurm on Kubernetes).
pub fn units(node: &Node) -> impl Iterator<Item = &'static Unit> + '_ {
    UNITS.iter().filter(|unit| !in_pod(node, unit))
}

/// A unit of `node`'s image by its name or an alias.
pub fn unit_on(node: &Node, name: &str) -> Option<&'static Unit> {
    unit(name).filter(|unit| !in_pod(node, unit))
}

/// Whether `unit`'s program runs in a pod on `node`, not from systemd.
fn in_pod(node: &Node, unit: &Unit) -> bool {
    node.slurmd_in_pod && unit.name == SLURMD_UNIT
}

/// Whether `unit` runs on `node` (a unit the image lacks does not).
pub fn runs(node: &Node, unit: &str) -> bool {
    state_of(node, unit).is_some_and(|(state, _)| state == ServiceState::Active)
}

/// Whether slurmctld hears from the node: it answers and its slurmd runs
/// (in its pod, unless a drain evicted it, on Slurm on Kubernetes).
pub fn slurmd_responds(node: &Node, now: EpochSeconds) -> bool {
    let slurmd = if node.slurmd_in_pod { !node.pods_evicted() } else { runs(node, SLURMD_UNIT) };
    node.up(now) && slurmd
}

/// Whether Slurm may place work on the node now: it hears from it, and
/// the node is in service (idle or allocated, not drained or down).
pub fn in_slurm_service(node: &Node, now: EpochSeconds) -> bool {
    slurmd_responds(node, now) && matches!(node.scheduler, super::node::SchedulerState::Idle | super::node::SchedulerState::Allocated)
}

/// Whether Slurm rebooted the node (`scontrol reboot`) and waits for it to
/// come back from its boot.
pub fn slurm_reboot_pending(node: &Node, now: EpochSeconds) -> bool {
    node.reboot_issued && !node.hangs() && !node.up(now)
}

/// Whether the node posts its status to Kubernetes: it answers and its kubelet runs.
pub fn kubelet_ready(node: &Node, now: EpochSeconds) -> bool {
    node.up(now) && runs(node, KUBELET_UNIT)
}

/// A unit by its name or an alias (Ubuntu's ssh unit is also `sshd.service`).
pub fn unit(name: &str) -> Option<&'static Unit> {
    let name = if name == "sshd.service" { "ssh.service" } else { name };
    UNITS.iter().find(|unit| unit.name == name)
}

/// A unit's state on `node` and since when.
pub fn state(node: &Node, unit: &Unit) -> (ServiceState, EpochSeconds) {
    node.units.get(unit.name).copied().unwrap_or((ServiceState::Active, node.booted_at + unit.after_boot))
}

/// Linux's pid_max on a 64-bit kernel.
const PID_MAX: u64 = 4_194_304;

/// The PID of a process started at `started` on `node`: PIDs grow as the
/// node runs (about three a second), so a restart gets a new, larger one.
pub fn pid(seed: u64, node: &Node, what: &str, started: EpochSeconds) -> u32 {
    let mut rng = Rng::derive(seed, &[&node.hostname, "pid", what, &started.to_string()]);
    let since_boot = (started - node.booted_at).max(0) as u64;
    ((600 + since_boot.saturating_mul(3) + rng.range_u64(0, 40)) % PID_MAX) as u32
}

/// A process on a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    pub ppid: u32,
    pub user: String,
    pub started: EpochSeconds,
    pub comm: String,
    pub args: String,
    /// The GPUs whose device files it holds open (`/dev/nvidiaN`).
    pub gpus: Vec<u32>,
    /// `pts/0` for a login shell.
    pub tty: Option<String>,
    /// The unit it is the main process of.
    pub unit: Option<&'static str>,
    /// The Slurm job it belongs to (a rank; a server's API server and
    /// engine core): `scancel` ends it, not `kill`.
    pub job: Option<i64>,
}

/// Every process on `node` at the cluster's instant: init, the running
/// services, Fabric Manager, the running jobs' ranks (from their GPUs),
/// and the trainee's login shell.
pub fn processes(cluster: &super::Cluster, node: &Node) -> Vec<Process> {
    let seed = cluster.seed;
    let boot = node.booted_at;
    let root = |pid, comm: &str, args: &str| Process {
        pid,
        // init and the kernel's thread daemon have no parent.
        ppid: 0,
        user: "root".to_string(),
        started: boot,
        comm: comm.to_string(),
        args: args.to_string(),
        gpus: Vec::new(),
        tty: None,
        unit: None,
        job: None,
    };
    let mut list = vec![root(1, "systemd", "/sbin/init"), root(2, "kthreadd", "[kthreadd]")];
    let all_gpus: Vec<u32> = node.gpus.iter().filter(|gpu| gpu.is_visible()).map(|gpu| gpu.index).collect();
    for unit in UNITS {
        let (state, since) = state(node, unit);
        if state != ServiceState::Active || cluster.now < since {
            continue;
        }
        // In a pod, slurmd is the container's process, no unit of the host's:
        // started with its pod, on the command line the pod gives it.
        let in_pod = in_pod(node, unit);
        if in_pod && !slurmd_responds(node, cluster.now) {
            continue;
        }
        let (since, args) = if in_pod { (cluster.worker_pod_started(node), super::slurm_operator::SLURMD_COMMAND) } else { (since, unit.command) };
        list.push(Process {
            pid: pid(seed, node, unit.name, since),
            ppid: 1,
            user: unit.user.to_string(),
            started: since,
            comm: unit.comm.to_string(),
            args: args.to_string(),
            gpus: if unit.holds_gpus { all_gpus.clone() } else { Vec::new() },
            tty: None,
            unit: (!in_pod).then_some(unit.name),
            job: None,
        });
    }
    if node.fabric_manager == ServiceState::Active {
        let since = node.fabric_manager_since;
        list.push(Process {
            pid: pid(seed, node, FABRIC_MANAGER_UNIT, since),
            ppid: 1,
            user: "root".to_string(),
            started: since,
            comm: "nv-fabricmanage".to_string(),
            args: FABRIC_MANAGER_COMMAND.to_string(),
            gpus: Vec::new(),
            tty: None,
            unit: Some(FABRIC_MANAGER_UNIT),
            job: None,
        });
    }
    // The job's ranks, under slurmstepd, as its script starts them (`srun python pretrain_gpt.py`).
    let job = cluster.workloads.iter().find(|w| w.running_at(cluster.now) && w.spec.nodes.contains(&node.hostname));
    // A pod's container runs as root in its own namespaces; the host sees
    // its process once, holding every GPU the pod was given.
    let pods: Vec<(u32, &super::pods::Pod)> = cluster.pod_gpus(&node.hostname).into_iter().map(|(_, pod)| (super::pods::pod_pid(seed, pod), pod)).collect();
    let mut pod_pids: Vec<u32> = Vec::new();
    for (pid, pod) in &pods {
        if pod_pids.contains(pid) {
            continue;
        }
        pod_pids.push(*pid);
        let started = cluster.pod_state(pod).runs.last().map_or(cluster.now, |run| run.started);
        let gpus = pods.iter().filter(|(p, _)| p == pid).count();
        let held: Vec<u32> = node.gpus.iter().filter(|g| g.processes.iter().any(|p| p.pid == *pid)).map(|g| g.index).take(gpus).collect();
        let program = pod.spec.command.first().map_or("python", |c| c.rsplit('/').next().unwrap_or(c));
        list.push(Process {
            pid: *pid,
            ppid: 1,
            user: "root".to_string(),
            started,
            comm: program.chars().take(15).collect(),
            args: pod.spec.command.join(" "),
            gpus: held,
            tty: None,
            unit: None,
            job: None,
        });
    }
    for gpu in &node.gpus {
        for rank in gpu.processes.iter().filter(|p| !pod_pids.contains(&p.pid)) {
            list.push(Process {
                pid: rank.pid,
                ppid: 1,
                user: super::node::USER.to_string(),
                started: job.map_or(cluster.now, |w| w.started),
                comm: rank.name.rsplit('/').next().unwrap_or(&rank.name).chars().take(15).collect(),
                // A server's workers carry the titles vLLM gives them.
                args: if job.is_some_and(|w| w.spec.load.is_some()) { rank.name.clone() } else { format!("{} pretrain_gpt.py", rank.name) },
                gpus: vec![gpu.index],
                tty: None,
                unit: None,
                job: job.map(|w| w.job_id),
            });
        }
    }
    // A server's API server (`vllm serve`, as its script runs it) and, with
    // tensor parallelism, its engine core, which holds no GPU itself.
    if let Some(server) = job.filter(|w| w.spec.load.is_some()) {
        let (api, engine) = server.server_pids();
        let server_process = |pid: u32, comm: &str, args: String| Process {
            pid,
            ppid: 1,
            user: super::node::USER.to_string(),
            started: server.started,
            comm: comm.to_string(),
            args,
            gpus: Vec::new(),
            tty: None,
            unit: None,
            job: Some(server.job_id),
        };
        let command = format!(
            "/usr/bin/python3 /usr/local/bin/vllm serve {} --served-model-name {} --tensor-parallel-size {}",
            server.spec.dataset,
            server.spec.served_name(),
            server.spec.tensor
        );
        list.push(server_process(api, "vllm", command));
        if server.spec.tensor > 1 {
            list.push(server_process(engine, "VLLM::EngineCor", "VLLM::EngineCore".to_string()));
        }
    }
    let login = cluster.started_at().max(boot);
    let sshd = pid(seed, node, "sshd-session", login);
    list.push(Process {
        pid: sshd,
        ppid: 1,
        user: "root".to_string(),
        started: login,
        comm: "sshd".to_string(),
        args: format!("sshd: {} [priv]", super::node::USER),
        gpus: Vec::new(),
        tty: None,
        unit: None,
        job: None,
    });
    list.push(Process {
        pid: sshd + 2,
        ppid: sshd,
        user: super::node::USER.to_string(),
        started: login,
        comm: "bash".to_string(),
        args: "-bash".to_string(),
        gpus: Vec::new(),
        tty: Some("pts/0".to_string()),
        unit: None,
        job: None,
    });
    crate::sort::sort_by(&mut list, |a, b| a.pid.cmp(&b.pid));
    list
}

pub const FABRIC_MANAGER_UNIT: &str = "nvidia-fabricmanager.service";
pub const FABRIC_MANAGER_COMMAND: &str = "/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg";
