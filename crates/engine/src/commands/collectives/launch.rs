//! Launchers for multi-node nccl-tests: `srun` (Slurm) and `mpirun` (Open
//! MPI). Each parses its own options up to the program, picks the nodes and
//! tasks per node, and runs the nccl-tests program across them; `hostname`
//! and the other emulated commands run once per task on the task's node.

use std::collections::BTreeMap;

use super::nccl_tests::{program, run_job, Job};
use crate::commands::execution::Execution;
use crate::commands::scheduler::slurm::hostlist;
use crate::commands::{self, Command, Example, Flag, Invocation, Output, Signature};
use crate::limits::MAX_TASKS;
use crate::model::node::SchedulerState;
use crate::model::service::in_slurm_service;
use crate::model::time::EpochSeconds;
use crate::model::{Cluster, Node};
use crate::rng::{stable_hash, Rng};

pub struct Srun;
pub struct Mpirun;

const fn long(name: &'static str, value: Option<&'static str>, help: &'static str) -> Flag {
    Flag { short: None, long: Some(name), value, help }
}

static SRUN: Signature = Signature {
    name: "srun",
    summary: "run a parallel job step on Slurm nodes",
    usage: "srun [-N NODES] [-n TASKS] [--ntasks-per-node=N] [-w HOSTLIST] [-x HOSTLIST] [-l] PROGRAM [ARGS...]",
    flags: &[
        Flag { short: Some('N'), long: Some("nodes"), value: Some("N"), help: "number of nodes" },
        Flag { short: Some('n'), long: Some("ntasks"), value: Some("N"), help: "number of tasks" },
        long("ntasks-per-node", Some("N"), "tasks on each node"),
        long("gpus-per-node", Some("N"), "GPUs on each node"),
        Flag { short: Some('w'), long: Some("nodelist"), value: Some("HOSTLIST"), help: "run on these nodes" },
        Flag { short: Some('x'), long: Some("exclude"), value: Some("HOSTLIST"), help: "never on these nodes" },
        Flag { short: Some('p'), long: Some("partition"), value: Some("NAME"), help: "partition" },
        Flag { short: Some('l'), long: Some("label"), value: None, help: "prefix output lines with the task number" },
        long("mpi", Some("TYPE"), "MPI plugin (pmix, pmi2)"),
        long("exclusive", None, "whole nodes"),
    ],
    examples: &[
        Example {
            command: "srun -N2 --ntasks-per-node=8 --gpus-per-node=8 all_reduce_perf -b 8 -e 16G -f 2 -g 1",
            description: "all-reduce across two nodes over InfiniBand",
        },
        Example { command: "srun -N2 -l hostname", description: "which nodes a two-node step gets" },
    ],
};

static MPIRUN: Signature = Signature {
    name: "mpirun",
    summary: "run an MPI program on several hosts (Open MPI)",
    usage: "mpirun [-np N] [-H HOST:SLOTS,...] [-x VAR[=VALUE]] PROGRAM [ARGS...]",
    flags: &[
        Flag { short: None, long: Some("np"), value: Some("N"), help: "number of processes" },
        Flag { short: Some('H'), long: Some("host"), value: Some("HOST:SLOTS,..."), help: "hosts and their slots" },
        Flag { short: Some('x'), long: None, value: Some("VAR[=VALUE]"), help: "export an environment variable to the processes" },
        long("bind-to", Some("WHAT"), "binding (accepted)"),
        long("map-by", Some("WHAT"), "mapping (accepted)"),
        long("mca", Some("KEY VALUE"), "MCA parameter (accepted)"),
    ],
    examples: &[Example { command: "mpirun -np 8 all_reduce_perf -b 1G -e 1G -g 1", description: "eight processes on this node, one GPU each" }],
};

/// Splits launcher options from the program: options that take a value
/// (`-N 2`, `--nodes=2`) are returned as (name, value).
fn split_options(args: &[String], with_value: &[&str]) -> (Vec<(String, String)>, Vec<String>) {
    let mut opts = Vec::new();
    let mut at = 0;
    while at < args.len() {
        let arg = &args[at];
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        // `-N2`: a short option with its value attached.
        let (name, inline) =
            if inline.is_none() && !name.starts_with("--") && name.len() > 2 && !with_value.contains(&name.as_str()) && with_value.contains(&&name[..2]) {
                (name[..2].to_string(), Some(name[2..].to_string()))
            } else {
                (name, inline)
            };
        at += 1;
        let value = match inline {
            Some(v) => v,
            None if with_value.contains(&name.as_str()) => {
                at += 1;
                args.get(at - 1).cloned().unwrap_or_default()
            }
            None => String::new(),
        };
        if name == "--mca" || name == "-mca" {
            at += 1;
        }
        opts.push((name, value));
    }
    (opts, args[at.min(args.len())..].to_vec())
}

/// How long a queued srun waits, in lab time, before the lab gives up for
/// the user (a real one waits until the nodes come back or Ctrl-C).
const QUEUED_WAIT_MS: u64 = 10 * 60 * 1000;

/// Whether a job could start on the node now: up, in service, and not
/// held by a running job (jobs here have their nodes exclusively).
fn available(node: &Node, now: EpochSeconds) -> bool {
    in_slurm_service(node, now) && !node.busy
}

/// NCCL's configuration files, as NCCL reads them at start-up:
/// `~/.nccl.conf`, then `/etc/nccl.conf`; neither overrides a variable
/// already set (the environment wins, then the user's file).
pub(super) fn read_nccl_conf(invocation: &Invocation, env: &mut BTreeMap<String, String>) {
    let home = invocation.env.get("HOME").map_or(crate::model::node::HOME, String::as_str);
    let view = crate::commands::files::View::of(invocation.cluster, invocation.node, "/");
    for path in [format!("{home}/.nccl.conf"), "/etc/nccl.conf".to_string()] {
        let Ok(text) = view.read(&path) else { continue };
        for line in text.lines() {
            let line = line.trim();
            if let Some((key, value)) = line.split_once('=').filter(|_| !line.starts_with('#')) {
                env.entry(key.trim().to_string()).or_insert_with(|| value.trim().to_string());
            }
        }
    }
}

/// Runs the step's program on every task.
fn launch(cluster: &Cluster, invocation: &Invocation, command: &[String], job: Job, launcher: &str) -> Output {
    let Some(name) = command.first() else { return Output::default() };
    let base = name.rsplit('/').next().unwrap_or(name);
    if let Some(coll) = program(name) {
        let mut job = job;
        read_nccl_conf(invocation, &mut job.env);
        // One program over every task's node: recorded once, with its nodes.
        let signature = commands::find(base).map(|command| command.signature());
        let root = commands::is_root(&job.env);
        let mut record = Execution::new(signature, &invocation.node.hostname, command, root, cluster.now * 1000);
        record.hosts = job.nodes.iter().map(|(node, _)| node.hostname.clone()).collect();
        let log = invocation.runner.executions();
        let slot = log.start(cluster, record);
        let output = run_job(cluster, coll, command, &job);
        log.finish(slot, output.status, output.duration_ms, &output.stdout);
        return output;
    }
    // Tasks run programs; a launcher inside a step is not emulated.
    let runnable = commands::find(base).is_some() && !["srun", "mpirun"].contains(&base);
    if !runnable {
        return if launcher == "srun" {
            let host = job.nodes.first().map_or("", |(n, _)| n.hostname.as_str());
            Output::error(format!("slurmstepd: error: execve(): {name}: No such file or directory\nsrun: error: {host}: task 0: Exited with exit code 2\n"), 2)
        } else {
            Output::error(format!("--------------------------------------------------------------------------\nmpirun was unable to find the specified executable file, and therefore\ndid not launch the job.  This error was first reported for process\nrank 0; it may have occurred for other processes as well.\n\nNOTE: A common cause for this error is misspelling a mpirun command\n      line parameter option (remember that mpirun interprets the first\n      unrecognized command line token as the executable).\n\nNode:       {}\nExecutable: {name}\n--------------------------------------------------------------------------\n", invocation.node.hostname), 1)
        };
    }
    let mut out = Output::default();
    let mut task = 0u32;
    let tasks: u32 = job.nodes.iter().map(|(_, t)| t).sum();
    let width = tasks.saturating_sub(1).to_string().len();
    for (node, count) in &job.nodes {
        for _ in 0..*count {
            let mut argv = command.to_vec();
            argv[0] = base.to_string();
            let call = invocation.call_on(&node.hostname, Some(&job.env));
            let Some(result) = invocation.runner.run_program(call, &argv) else { continue };
            for line in result.stdout.lines() {
                if job.label {
                    out.stdout += &format!("{task:>width$}: ");
                }
                out.stdout += line;
                out.stdout.push('\n');
            }
            out.stderr += &result.stderr;
            out.status = out.status.max(result.status);
            out.duration_ms = out.duration_ms.max(result.duration_ms);
            task += 1;
        }
    }
    out
}

impl Command for Srun {
    fn signature(&self) -> &'static Signature {
        &SRUN
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let cluster = invocation.cluster;
        if invocation.args().first().is_some_and(|arg| arg == "--help" || arg == "-h") {
            return Output::ok(crate::commands::help::describe(&SRUN));
        }
        let values = [
            "-N",
            "--nodes",
            "-n",
            "--ntasks",
            "--ntasks-per-node",
            "--gpus-per-node",
            "-w",
            "--nodelist",
            "-x",
            "--exclude",
            "-p",
            "--partition",
            "-t",
            "--time",
            "-J",
            "--job-name",
            "-A",
            "--account",
            "-c",
            "--cpus-per-task",
            "-G",
            "--gpus",
            "--gres",
            "--mpi",
            "--export",
            "--container-image",
            "--container-mounts",
            "-o",
            "--output",
            "-e",
            "--error",
        ];
        let (opts, command) = split_options(invocation.args(), &values);
        if command.is_empty() {
            return Output::error("srun: fatal: No command given to execute.\n", 1);
        }
        let (mut nodes_wanted, mut ntasks, mut per_node, mut list, mut label) = (None, None, None, None, false);
        // GPUs asked for: in all (`--gpus`) or on each node (`--gpus-per-node`, `--gres=gpu:N`).
        let (mut gpus_total, mut gpus_per_node): (Option<u32>, Option<u32>) = (None, None);
        let mut excluded: Vec<String> = Vec::new();
        for (name, value) in &opts {
            let number = || value.split('-').next().unwrap_or("").parse::<u32>().ok();
            match name.as_str() {
                "-N" | "--nodes" => nodes_wanted = number(),
                "-n" | "--ntasks" => ntasks = number(),
                "--ntasks-per-node" => per_node = number(),
                "-w" | "--nodelist" => list = Some(value.clone()),
                "-x" | "--exclude" => match hostlist::expand(value) {
                    Some(names) if names.iter().all(|name| cluster.node(name).is_some()) => excluded.extend(names),
                    _ => return Output::error("srun: error: Unable to allocate resources: Invalid node name specified\n", 1),
                },
                "-l" | "--label" => label = true,
                "-G" | "--gpus" => gpus_total = value.rsplit(':').next().and_then(|n| n.parse().ok()),
                "--gpus-per-node" => gpus_per_node = value.rsplit(':').next().and_then(|n| n.parse().ok()),
                "--gres" => gpus_per_node = value.strip_prefix("gpu:").and_then(|n| n.rsplit(':').next()).and_then(|n| n.parse().ok()),
                "-p" | "--partition" if value != crate::commands::scheduler::slurm::PARTITION => {
                    return Output::error("srun: error: Unable to allocate resources: Invalid partition name specified\n".to_string(), 1)
                }
                _ if values.contains(&name.as_str()) || ["--exclusive", "-u", "--unbuffered", "-v", "-Q", "--quiet"].contains(&name.as_str()) => {}
                _ => return crate::commands::scheduler::slurm::bad_option("srun", name),
            }
            if matches!(name.as_str(), "-N" | "--nodes" | "-n" | "--ntasks" | "--ntasks-per-node") && number().unwrap_or(0) == 0 {
                return Output::error(format!("srun: error: Invalid numeric value \"{value}\" for {name}.\n"), 1);
            }
        }
        let refuse = || Output::error("srun: error: Unable to allocate resources: Requested node configuration is not available\n", 1);
        // Nodes of the partition that are down or drained make the job wait
        // in the queue, as Slurm does; the wait ends with Ctrl-C (or, here,
        // after QUEUED_WAIT_MS of lab time, as if the user had pressed it).
        // A node another job holds makes it wait without the first line.
        let queued = |unavailable: bool| {
            let id = crate::commands::scheduler::slurm::next_job_id(cluster);
            let why = if unavailable { "srun: Required node not available (down, drained or reserved)\n" } else { "" };
            // Nodes Slurm is rebooting come back by themselves: the step
            // waits for them, then runs on the cluster as it is then.
            let back = cluster
                .nodes
                .iter()
                .filter(|n| {
                    crate::model::service::slurm_reboot_pending(n, cluster.now) && matches!(n.scheduler, SchedulerState::Idle | SchedulerState::Allocated)
                })
                .map(|n| n.booted_at)
                .max();
            if let Some(at) = back.filter(|at| u64::try_from(*at - cluster.now).is_ok_and(|wait| wait.saturating_mul(1000) < QUEUED_WAIT_MS)) {
                let mut later = cluster.clone();
                later.advance_to(at);
                if let Some(node) = later.node(&invocation.node.hostname) {
                    let mut output = self.run(&Invocation { cluster: &later, node, ..*invocation });
                    output.started_stderr =
                        format!("{why}srun: job {id} queued and waiting for resources\nsrun: job {id} has been allocated resources\n{}", output.started_stderr);
                    output.duration_ms = output.duration_ms.saturating_add((at - cluster.now) as u64 * 1000);
                    if output.interrupt_stderr.is_empty() {
                        output.interrupt_stderr = format!("srun: Job allocation {id} has been revoked\n");
                    }
                    return output;
                }
            }
            Output {
                started_stderr: format!("{why}srun: job {id} queued and waiting for resources\n"),
                stderr: format!("srun: Job allocation {id} has been revoked\n"),
                interrupt_stderr: format!("srun: Job allocation {id} has been revoked\n"),
                status: 1,
                duration_ms: QUEUED_WAIT_MS,
                ..Output::default()
            }
        };
        let mut chosen: Vec<&Node> = Vec::new();
        if let Some(list) = &list {
            let Some(names) = hostlist::expand(list) else {
                return Output::error("srun: error: Unable to allocate resources: Invalid node name specified\n", 1);
            };
            for name in names {
                if excluded.contains(&name) {
                    // Asked for and excluded at once: Slurm can never place it.
                    return refuse();
                }
                match cluster.node(&name) {
                    None => return Output::error("srun: error: Unable to allocate resources: Invalid node name specified\n", 1),
                    Some(node) if !available(node, cluster.now) => return queued(!in_slurm_service(node, cluster.now)),
                    Some(node) => chosen.push(node),
                }
            }
        }
        // Slurm places at most one task per CPU, and this simulation at most
        // MAX_TASKS in a step: anything more is refused before it is built.
        let cpus = u64::from(cluster.preset.host.cpus());
        let (ntasks, per_node) = (ntasks.map(u64::from), per_node.map(u64::from));
        if per_node.is_some_and(|p| p > cpus) || ntasks.is_some_and(|n| n > MAX_TASKS) {
            return refuse();
        }
        let count = nodes_wanted.map(u64::from).or_else(|| ntasks.map(|n| n.div_ceil(per_node.unwrap_or(n).max(1)))).unwrap_or(1).max(chosen.len() as u64);
        crate::sort::sort(&mut excluded);
        excluded.dedup();
        if count > cluster.nodes.len().saturating_sub(excluded.len()) as u64 {
            return refuse();
        }
        let count = count as usize;
        for node in cluster.nodes.iter().filter(|n| available(n, cluster.now) && !excluded.contains(&n.hostname)) {
            if chosen.len() >= count {
                break;
            }
            if !chosen.iter().any(|c| c.hostname == node.hostname) {
                chosen.push(node);
            }
        }
        if count == 0 {
            return refuse();
        }
        if chosen.len() < count {
            return queued(cluster.nodes.iter().any(|node| !in_slurm_service(node, cluster.now) && !excluded.contains(&node.hostname)));
        }
        let total = ntasks.unwrap_or(per_node.unwrap_or(1) * count as u64).max(count as u64);
        if total > cpus * count as u64 || total > MAX_TASKS {
            return refuse();
        }
        let mut nodes = Vec::new();
        let mut left = total;
        for (i, node) in chosen.iter().enumerate() {
            let share = per_node.unwrap_or_else(|| left.div_ceil((count - i) as u64)).min(left);
            // At most MAX_TASKS: it fits.
            nodes.push((*node, share as u32));
            left -= share;
        }
        let mut env = invocation.env.clone();
        let gpus = gpus_per_node.or_else(|| gpus_total.map(|total| total.div_ceil(count as u32)));
        if let Some(gpus) = gpus {
            if nodes.iter().any(|(node, _)| gpus as usize > node.gpus.len()) {
                return refuse();
            }
            // ConstrainDevices=yes: the step's cgroup holds the GPUs it was
            // given, the lowest first, and Slurm says which.
            let list = (0..gpus).map(|index| index.to_string()).collect::<Vec<_>>().join(",");
            for name in ["CUDA_VISIBLE_DEVICES", crate::commands::STEP_GPUS, "GPU_DEVICE_ORDINAL"] {
                env.insert(name.to_string(), list.clone());
            }
        }
        let hosts: Vec<String> = nodes.iter().map(|(node, _)| node.hostname.clone()).collect();
        let job = Job { nodes, label, env };
        let mut output = launch(cluster, invocation, &command, job, "srun");
        // Inside a job (its script exports SLURM_JOB_ID), srun runs a step of it.
        if let Some(id) = invocation.env.get("SLURM_JOB_ID").and_then(|id| id.parse::<i64>().ok()) {
            let name = command[0].rsplit('/').next().unwrap_or(&command[0]).to_string();
            let runtime = (output.duration_ms.div_ceil(1000) as i64).max(1);
            let step = crate::model::job::Step { name, nodelist: hosts, started: cluster.now, runtime, exit_code: output.status };
            output.changes.push(crate::model::change::Change::JobStep { node: invocation.node.hostname.clone(), job: id, step });
        }
        output
    }
}

impl Command for Mpirun {
    fn signature(&self) -> &'static Signature {
        &MPIRUN
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let cluster = invocation.cluster;
        let values = [
            "-np",
            "--np",
            "-n",
            "-H",
            "--host",
            "-host",
            "-x",
            "--bind-to",
            "--map-by",
            "-N",
            "-npernode",
            "--npernode",
            "-hostfile",
            "--hostfile",
            "--mca",
            "-mca",
            "-wdir",
            "--prefix",
        ];
        let (opts, command) = split_options(invocation.args(), &values);
        if command.is_empty() {
            return Output::error("--------------------------------------------------------------------------\nNo executable was specified on the mpirun command line.\n\nAborting.\n--------------------------------------------------------------------------\n", 1);
        }
        let mut env: BTreeMap<String, String> = invocation.env.clone();
        let (mut np, mut hosts, mut per_node) = (None, Vec::new(), None);
        for (name, value) in &opts {
            match name.as_str() {
                "-np" | "--np" | "-n" => np = value.parse::<u32>().ok(),
                "-N" | "-npernode" | "--npernode" => per_node = value.parse::<u32>().ok(),
                "-H" | "--host" | "-host" => {
                    for item in value.split(',').filter(|s| !s.is_empty()) {
                        let (host, slots) = item.split_once(':').map_or((item, 1), |(h, s)| (h, s.parse().unwrap_or(1)));
                        hosts.push((host.to_string(), slots));
                    }
                }
                "-x" => {
                    let (k, v) = value.split_once('=').map_or((value.as_str(), invocation.env.get(value).cloned().unwrap_or_default()), |(k, v)| (k, v.to_string()));
                    env.insert(k.to_string(), v);
                }
                "-hostfile" | "--hostfile" => {
                    return Output::error(format!("--------------------------------------------------------------------------\nOpen RTE was unable to open the hostfile:\n    {value}\nCheck to make sure the path and filename are correct.\n--------------------------------------------------------------------------\n"), 1)
                }
                _ => {}
            }
        }
        if hosts.is_empty() {
            hosts.push((invocation.node.hostname.clone(), cluster.preset.host.cpus() / 2));
        }
        let mut nodes: Vec<(&Node, u32)> = Vec::new();
        for (host, slots) in &hosts {
            let name = if host == "localhost" { invocation.node.hostname.as_str() } else { host.as_str() };
            let daemon_error = |what: String| {
                Output::error(format!("{what}\n--------------------------------------------------------------------------\nORTE was unable to reliably start one or more daemons.\nThis usually is caused by:\n\n* not finding the required libraries and/or binaries on\n  one or more nodes.\n\n* an inability to create a connection back to mpirun due to a\n  lack of common network interfaces and/or no route found between\n  them.\n--------------------------------------------------------------------------\n"), 1)
            };
            match cluster.node(name) {
                None => return daemon_error(format!("ssh: Could not resolve hostname {name}: Name or service not known")),
                Some(node) if !node.up(cluster.now) => return daemon_error(format!("ssh: connect to host {name} port 22: No route to host")),
                Some(node) => nodes.push((node, per_node.unwrap_or(*slots))),
            }
        }
        let slots: u64 = nodes.iter().map(|(_, s)| u64::from(*s)).sum();
        let np = np.map_or(slots, u64::from);
        if np > MAX_TASKS {
            return Output::error(format!("mpirun: this simulation starts at most {MAX_TASKS} processes; {np} were asked for\n"), 1);
        }
        if np > slots {
            return Output::error(format!("--------------------------------------------------------------------------\nThere are not enough slots available in the system to satisfy the {np}\nslots that were requested by the application:\n\n  {}\n\nEither request fewer slots for your application, or make more slots\navailable for use.\n--------------------------------------------------------------------------\n", command[0]), 1);
        }
        // Fill the hosts' slots in order (--map-by slot).
        let mut left = np as u32;
        for (_, tasks) in nodes.iter_mut() {
            let take = (*tasks).min(left);
            *tasks = take;
            left -= take;
        }
        nodes.retain(|(_, t)| *t > 0);
        let _ = Rng::derive(cluster.seed, &["mpirun", &stable_hash(command.join(" ").as_bytes()).to_string()]);
        let job = Job { nodes, label: false, env };
        launch(cluster, invocation, &command, job, "mpirun")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_step_waits_for_nodes_slurm_is_rebooting() {
        let mut shell = crate::testing::session();
        shell.run("sudo scontrol reboot nextstate=resume gpu-002");
        let out = shell.run("srun -w gpu-002 hostname");
        assert_eq!(out.status, 0, "{}", out.stderr());
        assert_eq!(out.stdout(), "gpu-002\n");
        assert!(out.stderr().contains("queued and waiting for resources") && out.stderr().contains("has been allocated resources"), "{}", out.stderr());
        assert!(out.duration_ms >= 200_000, "it waited for the boot");
    }
}
