//! `scontrol`: the read-only `show` views. `show node` prints the layout of
//! the cluster's Slurm release (`Versions::slurm`, 23.11 unless the lab names
//! another), field by field as SchedMD's `slurm_sprint_node_table` does in
//! that release: 23.11's `CPUEfctv`, `LastBusyTime`, `ResumeAfterTime` and
//! `AveWatts`, or 17.11's `CPUErr` and `LowestJoules` as in the capture
//! `slurm_scontrol_show_node_gpu8_idle_drain.txt`. Site settings the model
//! does not hold (core specialisation, GRES sockets) are left out.
//! `show hostnames` / `show hostlist` expand and compress hostlists.
//! `update NodeName=... State=... Reason=...` follows scontrol's
//! update_node.c and slurmctld's rules: DRAIN, DOWN and FAIL need a reason;
//! RESUME applies to drained or down nodes only; a node that does not respond
//! stays down after RESUME. It returns `Change::SetScheduler`. Other changes
//! (`create`, `delete`, ...) are refused as for a user without operator rights.

use super::{hostlist, reason_user, scontrol_state, timestamp, PARTITION};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::node::SchedulerState;
use crate::model::time::EpochSeconds;
use crate::model::{Cluster, Node};
use crate::rng::Rng;

pub struct Scontrol;

static SIGNATURE: Signature = Signature {
    name: "scontrol",
    summary: "view and change Slurm node state",
    usage: "scontrol [OPTIONS] show ENTITY [ID]\n       scontrol update NodeName=HOSTLIST State=DRAIN|DOWN|RESUME|IDLE|UNDRAIN [Reason=\"TEXT\"]",
    flags: &[
        Flag { short: Some('o'), long: Some("oneliner"), value: None, help: "print one record per line" },
        Flag { short: Some('d'), long: Some("details"), value: None, help: "more details (accepted)" },
    ],
    examples: &[
        Example { command: "scontrol show node", description: "every node's state, resources and reason" },
        Example { command: "scontrol show node $HOSTNAME", description: "this node" },
        Example { command: "scontrol show hostnames gpu-[001-002]", description: "expand a hostlist" },
    ],
};

/// What changed in `scontrol show node` between the release series, from
/// SchedMD's `slurm_sprint_node_table` (src/api/node_info.c) at each tag.
struct Layout {
    release: (u32, u32),
}

impl Layout {
    /// 17.11 ends the first line at `CoresPerSocket=N`; later ones leave a space.
    fn first_line_space(&self) -> bool {
        self.release >= (18, 8)
    }
    /// `CPUErr=` until 17.11.
    fn cpu_err(&self) -> bool {
        self.release < (18, 8)
    }
    /// `CPUEfctv=` (CPUs less specialised cores) from 22.05.
    fn cpu_efctv(&self) -> bool {
        self.release >= (22, 5)
    }
    /// `LastBusyTime=` from 21.08, on a line of its own until 23.02 adds `ResumeAfterTime=`.
    fn last_busy(&self) -> bool {
        self.release >= (21, 8)
    }
    fn resume_after(&self) -> bool {
        self.release >= (23, 2)
    }
    /// `LowestJoules= ConsumedJoules=` until 18.08, `AveWatts=` from 19.05.
    fn joules(&self) -> bool {
        self.release < (19, 5)
    }
    /// The `CapWatts=` and `ExtSensors*` lines, gone in 24.05.
    fn sensors(&self) -> bool {
        self.release < (24, 5)
    }
    /// What an unset sensor reads: `n/s` until 23.02, `n/a` from 23.11.
    fn unset(&self) -> &'static str {
        if self.release >= (23, 11) {
            "n/a"
        } else {
            "n/s"
        }
    }
    /// Until 20.11 the sensors line always ends the line, so a record without
    /// a reason has a last line of three spaces; 24.05 and 24.11 do the same
    /// after the watts line (and then start the reason on a line of its own).
    fn dangling_line(&self) -> bool {
        self.release < (21, 8) || ((24, 5)..(25, 5)).contains(&self.release)
    }
}

/// One node's record as scontrol prints it: fields joined by a newline and
/// three spaces (one space with `-o`), ending in an empty line (a newline with `-o`).
fn node_record(cluster: &Cluster, node: &Node, one_line: bool) -> String {
    let layout = Layout { release: cluster.versions.slurm_release() };
    let end = if one_line { " " } else { "\n   " };
    let host = &cluster.preset.host;
    let cpus = host.cpus();
    let gpus = node.gpus.len();
    let mut rng = Rng::derive(cluster.seed, &[&node.hostname, "slurm"]);
    // A running job holds the whole node (`--exclusive`).
    let allocated = node.busy || node.scheduler == SchedulerState::Allocated;
    let cpu_alloc = if allocated { cpus } else { 0 };
    // The load uptime shows.
    let load = crate::commands::host::uptime::load_averages(cluster, node)[0];
    let free_mb = host.memory_mib - rng.range_u64(host.memory_mib / 20, host.memory_mib / 8);
    let alloc_mem = if allocated { host.memory_mib } else { 0 };
    let slurmd_start = node.booted_at + 60 + rng.range_i64(0, 120);
    let mut out = format!("NodeName={} Arch=x86_64 CoresPerSocket={}", node.hostname, host.cores_per_socket);
    if layout.first_line_space() {
        out.push(' ');
    }
    out += end;
    out += &format!("CPUAlloc={cpu_alloc} ");
    if layout.cpu_err() {
        out += "CPUErr=0 ";
    }
    if layout.cpu_efctv() {
        // No cores are set aside for the system (CoreSpecCount), so all count.
        out += &format!("CPUEfctv={cpus} ");
    }
    out += &format!("CPUTot={cpus} CPULoad={}.{:02}{end}", load / 100, load % 100);
    out += &format!("AvailableFeatures=(null){end}ActiveFeatures=(null){end}Gres=gpu:{gpus}{end}");
    out += &format!("NodeAddr={0} NodeHostName={0} Version={1}{end}", node.hostname, cluster.versions.slurm);
    // The OS field keeps a space after it, as do Partitions and the first line.
    out += &format!("OS=Linux {} {} {end}", crate::model::node::KERNEL_RELEASE, crate::model::node::KERNEL_VERSION);
    out += &format!("RealMemory={} AllocMem={alloc_mem} FreeMem={free_mb} Sockets={} Boards=1{end}", host.memory_mib, host.sockets);
    out += &format!("State={} ThreadsPerCore={} TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A{end}", scontrol_state(node, cluster.now), host.threads_per_core);
    out += &format!("Partitions={PARTITION} {end}");
    out += &format!("BootTime={} SlurmdStartTime={}{end}", timestamp(node.booted_at), timestamp(slurmd_start));
    if layout.last_busy() {
        out += &format!("LastBusyTime={}", timestamp(last_busy(cluster, node, slurmd_start)));
        if layout.resume_after() {
            // Set only by `scontrol update ... ResumeAfter=`, which is not emulated.
            out += " ResumeAfterTime=None";
        }
        out += end;
    }
    out += &format!("CfgTRES=cpu={cpus},mem={}M,billing={cpus},gres/gpu={gpus}{end}", host.memory_mib);
    if allocated {
        out += &format!("AllocTRES=cpu={cpus},mem={}M,gres/gpu={gpus}{end}", host.memory_mib);
    } else {
        out += &format!("AllocTRES={end}");
    }
    if layout.sensors() {
        out += &format!("CapWatts=n/a{end}");
    }
    // No energy plugin: slurmctld reports zeros.
    out += if layout.joules() { "CurrentWatts=0 LowestJoules=0 ConsumedJoules=0" } else { "CurrentWatts=0 AveWatts=0" };
    if layout.sensors() {
        let unset = layout.unset();
        out += &format!("{end}ExtSensorsJoules={unset} ExtSensorsWatts=0 ExtSensorsTemp={unset}");
    }
    if layout.dangling_line() {
        out += end;
    }
    if let Some(reason) = &node.scheduler_reason {
        if layout.release >= (21, 8) {
            out += end;
        }
        out += &format!("Reason={reason} [{}@{}]", reason_user(reason), timestamp(node.scheduler_reason_since));
    }
    out += if one_line { "\n" } else { "\n\n" };
    out
}

/// When slurmctld last saw the node idle: the end of the last job that ran
/// on it, or its registration when slurmd started (slurmctld sets the time
/// then) if none has ended since.
fn last_busy(cluster: &Cluster, node: &Node, slurmd_start: EpochSeconds) -> EpochSeconds {
    cluster
        .slurm_jobs()
        .iter()
        .filter(|job| job.nodelist.contains(&node.hostname))
        .filter_map(|job| job.ended_at(cluster.now))
        .fold(slurmd_start, EpochSeconds::max)
}

fn partition_lines(cluster: &Cluster) -> Vec<String> {
    let host = &cluster.preset.host;
    let names: Vec<&str> = cluster.nodes.iter().map(|n| n.hostname.as_str()).collect();
    let total_cpus = host.cpus() as usize * names.len();
    vec![
        format!("PartitionName={PARTITION}"),
        "AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL".to_string(),
        "AllocNodes=ALL Default=YES QoS=N/A".to_string(),
        "DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO".to_string(),
        "MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED".to_string(),
        format!("Nodes={}", hostlist::compress(&names)),
        "PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO".to_string(),
        "OverTimeLimit=NONE PreemptMode=OFF".to_string(),
        format!("State=UP TotalCPUs={total_cpus} TotalNodes={} SelectTypeParameters=NONE", names.len()),
        "JobDefaults=(null)".to_string(),
        "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED".to_string(),
    ]
}

/// A record: first line flush, the rest indented three spaces, then an
/// empty line; with `-o`, one line.
fn render(lines: &[String], one_line: bool) -> String {
    if one_line {
        let joined: Vec<&str> = lines.iter().map(|line| line.trim_end()).collect();
        return format!("{}\n", joined.join(" "));
    }
    let mut out = String::new();
    for (index, line) in lines.iter().enumerate() {
        if index > 0 {
            out.push_str("   ");
        }
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

impl Command for Scontrol {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut one_line = false;
        let mut words: Vec<&str> = Vec::new();
        for arg in invocation.args() {
            match arg.as_str() {
                "-o" | "--oneliner" => one_line = true,
                "-d" | "--details" => {}
                flag if flag.starts_with('-') && flag.len() > 1 => return super::bad_option("scontrol", flag),
                word => words.push(word),
            }
        }
        let cluster = invocation.cluster;
        let Some(&keyword) = words.first() else {
            // With no command scontrol reads commands from standard input; a lab pipes none.
            return Output::default();
        };
        match keyword.to_ascii_lowercase().as_str() {
            "show" => {}
            "update" => return update(cluster, &words[1..], crate::commands::is_root(invocation.env)),
            "reboot" => return reboot(cluster, &words[1..], crate::commands::is_root(invocation.env)),
            "hold" | "holdu" | "uhold" | "release" => return hold(invocation, &words),
            // The controller's own operations are SlurmUser's and root's alone.
            verb @ ("reconfigure" | "shutdown" | "takeover") if !crate::commands::is_root(invocation.env) => {
                return Output::error(format!("slurm_{verb} error: Invalid user id\n"), 1)
            }
            "suspend" | "resume" if !crate::commands::is_root(invocation.env) => return Output::error("slurm_suspend error: Access/permission denied\n", 1),
            "requeue" | "suspend" | "resume" => {
                return Output::error(format!("scontrol: {keyword} is not emulated; try scancel, then sbatch or srun again\n"), 1)
            }
            "create" | "delete" | "reconfigure" | "shutdown" | "takeover" | "cancel_reboot" => {
                return Output::error(
                    format!("scontrol: {keyword} is not emulated; try scontrol show node or scontrol show job to read the controller's state\n"),
                    1,
                )
            }
            "version" | "--version" | "-V" => return Output::ok(format!("slurm {}\n", cluster.versions.slurm)),
            other => return Output::error(format!("invalid keyword: {other}\n"), 1),
        }
        let Some(&entity) = words.get(1) else {
            return Output::error("too few arguments for keyword:show\n", 1);
        };
        let id = words.get(2).copied();
        match entity.to_ascii_lowercase().as_str() {
            "node" | "nodes" => {
                let selected: Vec<&Node> = match id {
                    None => cluster.nodes.iter().map(AsRef::as_ref).collect(),
                    Some(list) => {
                        let names = hostlist::expand(list).unwrap_or_else(|| vec![list.to_string()]);
                        let mut selected = Vec::new();
                        for name in &names {
                            match cluster.node(name) {
                                Some(node) => selected.push(node),
                                None => return Output::error(format!("Node {name} not found\n"), 1),
                            }
                        }
                        selected
                    }
                };
                let out: String = selected.iter().map(|node| node_record(cluster, node, one_line)).collect();
                Output::ok(out)
            }
            "partition" | "partitions" => match id {
                Some(name) if name != PARTITION => Output::error(format!("Partition {name} not found\n"), 1),
                _ => Output::ok(render(&partition_lines(cluster), one_line)),
            },
            "hostnames" => {
                let list = id.unwrap_or("");
                match hostlist::expand(list) {
                    Some(names) => Output::ok(names.iter().map(|n| format!("{n}\n")).collect::<String>()),
                    None => Output::error(format!("scontrol: error: Invalid hostlist: {list}\n"), 1),
                }
            }
            "hostlist" | "hostlistsorted" => {
                let list = id.unwrap_or("");
                match hostlist::expand(list) {
                    Some(mut names) => {
                        if entity.eq_ignore_ascii_case("hostlistsorted") {
                            crate::sort::sort(&mut names);
                        }
                        Output::ok(format!("{}\n", hostlist::compress(&names)))
                    }
                    None => Output::error(format!("scontrol: error: Invalid hostlist: {list}\n"), 1),
                }
            }
            "job" | "jobs" | "jobid" => show_jobs(cluster, id, one_line),
            other => Output::error(format!("invalid entity:{other} for keyword:show\n"), 1),
        }
    }
}

/// `scontrol show job [ID]`: the jobs Slurm still holds (every one here: no
/// MinJobAge purge), each as a record in 23.11's layout. A waiting job's
/// reason has its spaces as `_`, as scontrol prints it.
fn show_jobs(cluster: &Cluster, id: Option<&str>, one_line: bool) -> Output {
    let jobs = cluster.slurm_jobs();
    let chosen: Vec<&crate::model::job::Job> = match id {
        None => jobs.iter().collect(),
        Some(id) => match jobs.iter().find(|job| id.parse::<i64>().is_ok_and(|n| n == job.id)) {
            Some(job) => vec![job],
            None => return Output::error("slurm_load_jobs error: Invalid job id specified\n", 1),
        },
    };
    if chosen.is_empty() {
        return Output::ok("No jobs in the system\n");
    }
    let cpus = cluster.preset.host.cpus() as usize;
    let gpus = cluster.preset.gpu_buses.len();
    let mut out = String::new();
    for job in chosen {
        use crate::model::job::{sacct_elapsed, JobState};
        let state = job.state_at(cluster.now);
        let (reason, exit) = match state {
            JobState::Pending => (job.waits_for().replace(' ', "_"), "0:0".to_string()),
            JobState::Failed => ("NonZeroExitCode".to_string(), format!("{}:0", job.exit_code)),
            JobState::Cancelled => ("None".to_string(), "0:15".to_string()),
            _ => ("None".to_string(), format!("{}:0", job.exit_code)),
        };
        let nodes: Vec<&str> = job.nodelist.iter().map(String::as_str).collect();
        let time = |at: Option<EpochSeconds>| at.map_or_else(|| "Unknown".to_string(), timestamp);
        let workload = cluster.workloads.iter().find(|w| w.job_id == job.id);
        let script = workload.map_or_else(|| "(null)".to_string(), |w| w.spec.script_path());
        let log = crate::commands::files::generated::job_log_path(job.id);
        let (tasks, per_node) = workload.map_or((job.nodes, 1), |w| (w.spec.world() as usize, w.spec.gpus_per_node as usize));
        let ran = job.started.is_some();
        let alloc_cpus = if ran { cpus * job.nodes } else { 0 };
        let lines = vec![
            format!("JobId={} JobName={}", job.id, job.name),
            format!("UserId={user}(1000) GroupId={user}(1000) MCS_label=N/A", user = job.user),
            "Priority=1 Nice=0 Account=default QOS=normal".to_string(),
            format!("JobState={} Reason={reason} Dependency=(null)", state.long()),
            format!("Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode={exit}"),
            format!("RunTime={} TimeLimit=UNLIMITED TimeMin=N/A", sacct_elapsed(job.elapsed_at(cluster.now))),
            format!("SubmitTime={} EligibleTime={}", timestamp(job.submitted), timestamp(job.submitted)),
            format!("AccrueTime={}", timestamp(job.submitted)),
            format!("StartTime={} EndTime={} Deadline=N/A", time(job.started), time(job.ended_at(cluster.now))),
            format!("SuspendTime=None SecsPreSuspend=0 LastSchedEval={} Scheduler=Main", time(job.started.or(Some(job.submitted)))),
            format!("Partition={PARTITION} AllocNode:Sid={}:{}", nodes.first().copied().unwrap_or("gpu-001"), 4_000 + job.id % 60_000),
            "ReqNodeList=(null) ExcNodeList=(null)".to_string(),
            format!("NodeList={}", if ran { hostlist::compress(&nodes) } else { "(null)".to_string() }),
            format!("BatchHost={}", nodes.first().copied().unwrap_or("(null)")),
            format!("NumNodes={} NumCPUs={} NumTasks={tasks} CPUs/Task=1 ReqB:S:C:T=0:0:*:*", job.nodes, alloc_cpus.max(tasks)),
            format!("ReqTRES=cpu={tasks},node={},billing={tasks},gres/gpu={}", job.nodes, gpus * job.nodes),
            format!(
                "AllocTRES={}",
                if ran { format!("cpu={alloc_cpus},node={},billing={alloc_cpus},gres/gpu={}", job.nodes, gpus * job.nodes) } else { "(null)".to_string() }
            ),
            format!("Socks/Node=* NtasksPerN:B:S:C={per_node}:0:*:* CoreSpec=*"),
            format!("MinCPUsNode={per_node} MinMemoryNode=0 MinTmpDiskNode=0"),
            "Features=(null) DelayBoot=00:00:00".to_string(),
            "OverSubscribe=NO Contiguous=0 Licenses=(null) Network=(null)".to_string(),
            format!("Command={script}"),
            format!("WorkDir={}", crate::model::node::HOME),
            format!("StdErr={log}"),
            "StdIn=/dev/null".to_string(),
            format!("StdOut={log}"),
            format!("TresPerNode=gres/gpu:{gpus}"),
        ];
        out += &render(&lines, one_line);
    }
    Output::ok(out)
}

/// `scontrol hold|uhold|release JOBID...`: a waiting job is held (a user
/// hold, or an administrator's when root holds it with `hold`) or
/// released; anything else is refused as slurmctld refuses it, under
/// scontrol's `slurm_suspend error` prefix.
fn hold(invocation: &Invocation, words: &[&str]) -> Output {
    let keyword = words[0].to_ascii_lowercase();
    if words.len() < 2 {
        return Output::error(format!("too few arguments for keyword:{}\n", words[0]), 1);
    }
    let root = crate::commands::is_root(invocation.env);
    let held = match keyword.as_str() {
        "release" => None,
        "hold" if root => Some("JobHeldAdmin".to_string()),
        _ => Some("JobHeldUser".to_string()),
    };
    let jobs = invocation.cluster.slurm_jobs();
    let mut out = Output::default();
    for id in &words[1..] {
        let job = id.parse::<i64>().ok().and_then(|id| jobs.iter().find(|job| job.id == id));
        let refusal = match job {
            None => Some("Invalid job id specified"),
            Some(job) if job.started.is_some() || job.cancelled => Some("Job is no longer pending execution"),
            Some(job) if job.held.as_deref() == Some("JobHeldAdmin") && !root => Some("Access/permission denied"),
            Some(job) => {
                out.changes.push(Change::HoldJob { node: invocation.node.hostname.clone(), job: job.id, held: held.clone() });
                None
            }
        };
        if let Some(refusal) = refusal {
            out.stderr += &format!("slurm_suspend error: {refusal}\n");
            out.status = 1;
        }
    }
    out
}

/// `scontrol update NodeName=HOSTLIST State=... Reason=...`.
/// `scontrol reboot [ASAP] [nextstate=RESUME|DOWN] [reason=...] NODES|ALL`:
/// Slurm reboots the nodes itself, so it expects them back: each returns
/// in the state it had (with `nextstate`, that state) rather than down as
/// "unexpectedly rebooted". Only idle or drained nodes reboot here; a node
/// running a job would wait for it, which the lab does not model.
fn reboot(cluster: &Cluster, words: &[&str], root: bool) -> Output {
    const FAILED: &str = "scontrol_reboot_nodes error";
    if !root {
        return Output::error(format!("{FAILED}: Access/permission denied\n"), 1);
    }
    let mut next: Option<SchedulerState> = None;
    let mut reason: Option<String> = None;
    let mut list: Option<&str> = None;
    for word in words {
        let lower = word.to_ascii_lowercase();
        if lower == "asap" {
            continue;
        }
        match lower.split_once('=') {
            Some(("nextstate", value)) => match value {
                "resume" => next = Some(SchedulerState::Idle),
                "down" => next = Some(SchedulerState::Down),
                _ => return Output::error(format!("Invalid nextstate: {}\nValid states are: RESUME, DOWN\n", &word["nextstate=".len()..]), 1),
            },
            Some(("reason", _)) => reason = Some(word["reason=".len()..].to_string()),
            _ => list = Some(word),
        }
    }
    let Some(list) = list else {
        return Output::error("Missing node list. Specify ALL|<NodeList> to reboot all nodes or a subset.\n", 1);
    };
    let names: Vec<String> = if list.eq_ignore_ascii_case("all") {
        cluster.nodes.iter().map(|node| node.hostname.clone()).collect()
    } else {
        hostlist::expand(list).unwrap_or_else(|| vec![list.to_string()])
    };
    let mut changes = Vec::new();
    for name in &names {
        let Some(node) = cluster.node(name) else {
            return Output::error(format!("{FAILED}: Invalid node name specified\n"), 1);
        };
        if node.busy {
            return Output::error(format!("scontrol: {name} runs a job: in this lab, drain it and let the job end (or scancel it) before a reboot\n"), 1);
        }
        let state = next.unwrap_or(node.scheduler);
        let why = match state {
            SchedulerState::Idle | SchedulerState::Allocated => None,
            _ => reason.clone().or_else(|| node.scheduler_reason.clone()).or_else(|| Some("reboot requested".to_string())),
        };
        changes.push(Change::Reboot { node: name.clone(), power_cycle: false, by_slurm: true });
        changes.push(Change::SetScheduler { node: name.clone(), state, reason: why });
    }
    Output { changes, ..Output::default() }
}

fn update(cluster: &Cluster, words: &[&str], root: bool) -> Output {
    let key = |tag: &str, name: &str, min: usize| tag.len() >= min && name.starts_with(&tag.to_ascii_lowercase());
    let (mut names, mut state, mut reason) = (None, None, None);
    for word in words {
        let Some((tag, value)) = word.split_once('=') else {
            return Output::error(format!("scontrol: error: Invalid input: {word}  Request aborted\n"), 1);
        };
        if key(tag, "nodename", 1) {
            names = Some(value);
        } else if key(tag, "reason", 1) {
            let value = value.strip_prefix('"').unwrap_or(value);
            reason = Some(value.strip_suffix('"').unwrap_or(value).to_string());
        } else if key(tag, "state", 1) {
            let lower = value.to_ascii_lowercase();
            let is = |name: &str| lower.len() >= 3 && name.starts_with(&lower);
            state = Some(match () {
                _ if is("drain") => "DRAIN",
                _ if is("fail") => "FAIL",
                _ if is("resume") => "RESUME",
                _ if is("undrain") => "UNDRAIN",
                _ if is("down") => "DOWN",
                _ if is("idle") => "IDLE",
                _ => {
                    return Output::error(
                        format!("Invalid input: {word}\nRequest aborted\nValid states are: NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN\nNot all states are valid given a node's prior state\n"),
                        1,
                    )
                }
            });
        } else if names.is_none() {
            return Output::error("No valid entity in update command\nInput line must include \"NodeName\", \"PartitionName\", \"Reservation\", \"JobId\", \"SuspendExcTime\", \"SuspendExcNodes\", \"SuspendExcParts\" or \"FrontendName\"\n", 1);
        } else {
            return Output::error(format!("Update of this parameter is not supported: {word}\nRequest aborted\n"), 1);
        }
    }
    let Some(list) = names else {
        return Output::error("No valid entity in update command\nInput line must include \"NodeName\", \"PartitionName\", \"Reservation\", \"JobId\", \"SuspendExcTime\", \"SuspendExcNodes\", \"SuspendExcParts\" or \"FrontendName\"\n", 1);
    };
    let reason = reason.filter(|r| !r.is_empty());
    if matches!(state, Some("DRAIN" | "DOWN" | "FAIL")) && reason.is_none() {
        return Output::error("You must specify a reason when DOWNING or DRAINING a node. Request denied\n", 1);
    }
    if state.is_none() && reason.is_none() {
        return Output::error("No changes specified\n", 1);
    }
    let Some(targets) = hostlist::expand(list) else {
        return Output::error("slurm_update error: Invalid node name specified\n", 1);
    };
    // Only SlurmUser and root may change a node's state.
    if !root {
        return Output::error("slurm_update error: Access/permission denied\n", 1);
    }
    let mut changes = Vec::new();
    for name in &targets {
        let Some(node) = cluster.node(name) else {
            return Output::error("slurm_update error: Invalid node name specified\n", 1);
        };
        let (to, why) = match state.unwrap_or("") {
            // A reason alone replaces the node's reason.
            "" => (node.scheduler, reason.clone()),
            "DRAIN" | "FAIL" => (SchedulerState::Drained, reason.clone()),
            "DOWN" => (SchedulerState::Down, reason.clone()),
            "UNDRAIN" if node.scheduler != SchedulerState::Drained => return Output::error("slurm_update error: Invalid node state specified\n", 1),
            "RESUME" if !matches!(node.scheduler, SchedulerState::Drained | SchedulerState::Down) => {
                return Output::error("slurm_update error: Invalid node state specified\n", 1)
            }
            // slurmctld marks a node it cannot reach down again.
            _ if node.hangs() => (SchedulerState::Down, Some("Not responding".to_string())),
            _ => (SchedulerState::Idle, None),
        };
        changes.push(Change::SetScheduler { node: name.clone(), state: to, reason: why });
    }
    Output { changes, duration_ms: 30, ..Output::default() }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn controller_operations_are_refused_as_slurm_refuses_them() {
        assert_eq!(run_on_first_node("scontrol reconfigure").stderr, "slurm_reconfigure error: Invalid user id\n");
        assert_eq!(run_on_first_node("scontrol suspend 12").stderr, "slurm_suspend error: Access/permission denied\n");
        let requeue = run_on_first_node("scontrol requeue 12");
        assert_eq!((requeue.status, requeue.stderr.as_str()), (1, "scontrol: requeue is not emulated; try scancel, then sbatch or srun again\n"));
        assert!(run_on_first_node("sudo scontrol shutdown").stderr.starts_with("scontrol: shutdown is not emulated; try scontrol show node"));
    }

    #[test]
    fn shows_nodes() {
        let out = run_on_first_node("scontrol show node gpu-001");
        assert!(out.stdout.starts_with("NodeName=gpu-001 Arch=x86_64 CoresPerSocket=56 \n   CPUAlloc=0 CPUEfctv=224 CPUTot=224 "), "{}", out.stdout);
        assert!(out.stdout.contains("\n   State=IDLE ThreadsPerCore=2 "));
        assert!(out.stdout.contains("\n   Gres=gpu:8\n"));
        assert!(out.stdout.contains("\n   CfgTRES=cpu=224,mem=2063937M,billing=224,gres/gpu=8\n"));
        assert!(out.stdout.ends_with("\n   ExtSensorsJoules=n/a ExtSensorsWatts=0 ExtSensorsTemp=n/a\n\n"));
        assert_eq!(run_on_first_node("scontrol show node").stdout.matches("NodeName=").count(), 2);
        let missing = run_on_first_node("scontrol show node gpu-009");
        assert_eq!((missing.stderr.as_str(), missing.status), ("Node gpu-009 not found\n", 1));
        assert_eq!(run_on_first_node("scontrol show hostnames gpu-[001-002]").stdout, "gpu-001\ngpu-002\n");
        assert_eq!(run_on_first_node("scontrol show hostlist gpu-001,gpu-002").stdout, "gpu-[001-002]\n");
        assert_eq!(run_on_first_node("scontrol show -o node gpu-002").stdout.lines().count(), 1);
    }

    #[test]
    fn update_follows_slurms_rules() {
        let mut shell = crate::testing::session();
        // A plain user may look, not change.
        let out = shell.run("scontrol update NodeName=gpu-001 State=DRAIN Reason=x");
        assert_eq!((out.stderr().as_str(), out.status), ("slurm_update error: Access/permission denied\n", 1));
        let out = shell.run("sudo scontrol update NodeName=gpu-001 State=DRAIN");
        assert_eq!((out.stderr().as_str(), out.status), ("You must specify a reason when DOWNING or DRAINING a node. Request denied\n", 1));
        let out = shell.run("sudo scontrol update NodeName=gpu-001 State=RESUME");
        assert_eq!((out.stderr().as_str(), out.status), ("slurm_update error: Invalid node state specified\n", 1));
        assert_eq!(shell.run("sudo scontrol update NodeName=gpu-009 State=DOWN Reason=x").stderr(), "slurm_update error: Invalid node name specified\n");
        assert_eq!(shell.run("sudo scontrol update NodeName=gpu-001 State=bogus").status, 1);
        assert_eq!(shell.run("sudo scontrol update State=DRAIN Reason=x").status, 1);
        assert_eq!(shell.run("sudo scontrol update NodeName=gpu-[001-002] State=DRAIN Reason=\"xid 79\"").status, 0);
        assert!(shell.run("sinfo").stdout().contains("      2  drain gpu-[001-002]\n"));
        assert!(shell.run("scontrol show node gpu-002").stdout().contains("\n   Reason=xid 79 [root@"));

        assert_eq!(shell.run("sudo scontrol update nodename=gpu-002 state=resume").status, 0);
        assert_eq!(shell.changes().len(), 3);
        assert!(shell.run("sinfo -N").stdout().contains("gpu-002       1 gpu*      idle"), "{}", shell.run("sinfo -N").stdout());
        shell.cluster.node_mut("gpu-002").unwrap().hang();
        shell.run("sudo scontrol update NodeName=gpu-002 State=DOWN Reason=dead");
        shell.run("sudo scontrol update NodeName=gpu-002 State=RESUME");
        assert!(shell.run("scontrol show node gpu-002").stdout().contains("State=DOWN+NOT_RESPONDING "));
    }

    #[test]
    fn reboot_brings_nodes_back_in_the_state_asked() {
        let mut shell = crate::testing::session();
        assert_eq!(shell.run("scontrol reboot gpu-002").stderr(), "scontrol_reboot_nodes error: Access/permission denied\n");
        shell.run("sudo scontrol update nodename=gpu-002 state=drain reason=xid79");
        assert_eq!(shell.run("sudo scontrol reboot ASAP nextstate=resume reason=xid79 gpu-002").status, 0);
        assert_eq!(shell.run("ssh gpu-002 true").status, 255);
        // While it boots, Slurm shows the reboot it issued (slurm_protocol_defs.c).
        assert_eq!(shell.run("sinfo -n gpu-002 -h -o '%t %T'").stdout(), "boot^ reboot^\n");
        assert!(shell.run("scontrol show node gpu-002").stdout().contains("State=IDLE+REBOOT_ISSUED "));
        shell.run("sleep 300");
        assert!(shell.run("sinfo -n gpu-002 -h -o %T").stdout().starts_with("idle"));
        assert!(shell.run("scontrol show node gpu-002").stdout().contains("State=IDLE "));
        assert_eq!(shell.run("ssh gpu-002 true").status, 0);
        assert_eq!(shell.run("sudo scontrol reboot gpu-009").stderr(), "scontrol_reboot_nodes error: Invalid node name specified\n");
    }
}
