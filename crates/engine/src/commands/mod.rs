//! Emulated commands.
//!
//! Each command declares itself once (a [`Signature`]: name, synopsis, flags,
//! examples) and runs as a pure function of the cluster model, the host it
//! runs on, its argv, its environment and its standard input. Help, manual
//! pages and tab completion are generated from the declarations, never from
//! copies. One module per command, as in uutils/coreutils.

pub mod collectives;
pub mod execution;
pub mod fabric;
pub mod files;
pub mod go_format;
pub mod gpu;
pub mod help;
pub mod host;
pub mod install;
pub mod monitoring;
pub mod options;
pub mod remote;
pub mod sampling;
pub mod scheduler;
pub mod text;

use std::collections::BTreeMap;

use crate::model::change::Change;
use crate::model::{Cluster, Node};

/// One flag a command accepts.
#[derive(Debug)]
pub struct Flag {
    pub short: Option<char>,
    pub long: Option<&'static str>,
    /// The value's placeholder (`ID`, `N`) when the flag takes one.
    pub value: Option<&'static str>,
    pub help: &'static str,
}

impl Flag {
    /// `-i, --id=ID` as a help line shows it.
    pub fn display(&self) -> String {
        let mut text = String::new();
        if let Some(short) = self.short {
            text.push('-');
            text.push(short);
        }
        if let Some(long) = self.long {
            if !text.is_empty() {
                text.push_str(", ");
            }
            text.push_str("--");
            text.push_str(long);
        }
        if let Some(value) = self.value {
            text.push(if self.long.is_some() { '=' } else { ' ' });
            text.push_str(value);
        }
        text
    }
}

#[derive(Debug)]
pub struct Example {
    pub command: &'static str,
    pub description: &'static str,
}

/// What a command declares about itself.
#[derive(Debug)]
pub struct Signature {
    pub name: &'static str,
    /// One line: what the command is for.
    pub summary: &'static str,
    /// The usage line, e.g. `nvidia-smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...`.
    pub usage: &'static str,
    pub flags: &'static [Flag],
    pub examples: &'static [Example],
}

/// The environment a command runs with.
pub type Env = BTreeMap<String, String>;

/// The GPUs a Slurm step's device cgroup lets it open (slurmstepd sets the
/// variable and the cgroup together; tools that enumerate GPUs through the
/// driver, as nvidia-smi does, see only these).
pub const STEP_GPUS: &str = "SLURM_STEP_GPUS";

impl Invocation<'_> {
    /// The node as this process sees it: inside a Slurm step with a device
    /// cgroup, only the GPUs it was given. None when it sees them all.
    pub fn constrained_node(&self) -> Option<Node> {
        let allowed: Vec<u32> = self.env.get(STEP_GPUS)?.split(',').filter_map(|id| id.trim().parse().ok()).collect();
        let mut node = self.node.clone();
        node.gpus.retain(|gpu| allowed.contains(&gpu.index));
        Some(node)
    }
}

/// Everything a command may read when it runs.
pub struct Invocation<'a> {
    pub cluster: &'a Cluster,
    /// The node the shell is on.
    pub node: &'a Node,
    /// argv[0] is the command name, as in C.
    pub argv: &'a [String],
    pub env: &'a Env,
    pub stdin: &'a str,
    /// How to run other command lines, for the commands that start them.
    pub runner: &'a dyn Runner,
    /// Standard output is the trainee's terminal (not a pipe, a file, a
    /// substitution or a remote command's channel): `ls` lays out columns.
    pub to_terminal: bool,
}

impl Invocation<'_> {
    pub fn args(&self) -> &[String] {
        self.argv.get(1..).unwrap_or(&[])
    }

    /// A nested call on `host`, over this invocation's view of the cluster.
    pub fn call_on<'a>(&'a self, host: &'a str, env: Option<&'a Env>) -> Call<'a> {
        Call { cluster: self.cluster, host, env, stdin: "" }
    }
}

/// Where a nested command line runs: over which view of the cluster, on
/// which host, with which environment and input.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    pub cluster: &'a Cluster,
    pub host: &'a str,
    /// None: the environment of a login shell on `host`, as `ssh` gives.
    pub env: Option<&'a Env>,
    pub stdin: &'a str,
}

/// How commands that start others (`pdsh`, `clush`, `watch`, `sudo`, `env`,
/// `srun`, `mpirun`, `sbatch`) run them. The shell implements it; no module
/// under `commands` knows the shell. A nested line sees the whole cluster
/// as the call gives it, and what it changes comes back as
/// [`Output::changes`] for the caller to return in turn. Nesting is bounded
/// by [`crate::limits::MAX_NESTED_COMMANDS`].
pub trait Runner {
    /// Runs `line` as `bash -c LINE` would on `call.host`.
    fn run_line(&self, call: Call, line: &str) -> Output;
    /// Executes `argv` as `exec` does: a program, with no shell syntax and
    /// no builtins. None when there is no such program, so that each caller
    /// words that error as its real tool does.
    fn run_program(&self, call: Call, argv: &[String]) -> Option<Output>;
    /// The log of what runs, for a command that runs a program itself
    /// (a launcher spreading `all_reduce_perf` over nodes).
    fn executions(&self) -> &execution::ExecLog;
}

/// What a command produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub status: i32,
    /// How long the command takes on the simulated clock.
    pub duration_ms: u64,
    /// What the command changes in the cluster; the shell applies it.
    pub changes: Vec<Change>,
    /// What a background job (a perftest server, say) prints to the terminal
    /// because of this command: shown after its output, never piped.
    pub background: String,
    /// A pager's output: paged when it reaches the terminal.
    pub pager: Option<Pager>,
    /// What it printed on standard error as it started, before it waited
    /// (srun's "queued and waiting for resources"): kept when Ctrl-C stops it.
    pub started_stderr: String,
    /// What it prints on standard error when Ctrl-C stops it ("Job
    /// allocation N has been revoked").
    pub interrupt_stderr: String,
}

/// Where a command's effective user id travels: `sudo` puts `EUID=0` in
/// the environment of what it runs. The shell keeps `EUID` read-only, as
/// bash does, so only `sudo` makes a command root; `env` and `printenv`
/// do not list it.
pub const EUID: &str = "EUID";

/// Whether the command runs as root (under `sudo`).
pub fn is_root(env: &Env) -> bool {
    env.get(EUID).is_some_and(|uid| uid == "0")
}

/// Who runs the command: `USER`, the lab's operator account when unset.
pub fn user(env: &Env) -> &str {
    env.get("USER").map_or(crate::model::node::USER, String::as_str)
}

/// How a pager shows its text on a terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Pager {
    /// less: a screen at a time, back and forth; the screen is restored at
    /// `q`. With `-F`, text that fits one screen is just printed; `at_end`
    /// opens it at its last screen (`journalctl -e`).
    Less { quit_if_one_screen: bool, at_end: bool },
    /// more: forward a screen at a time, leaving the text on the terminal.
    More,
}

impl Output {
    pub fn ok(stdout: impl Into<String>) -> Output {
        Output { stdout: stdout.into(), ..Output::default() }
    }

    pub fn error(stderr: impl Into<String>, status: i32) -> Output {
        Output { stderr: stderr.into(), status, ..Output::default() }
    }

    /// Adds what a program this command ran printed, took and changed
    /// (`xargs`, `find -exec`); returns the program's status.
    pub fn absorb(&mut self, ran: Output) -> i32 {
        self.stdout.push_str(&ran.stdout);
        self.stderr.push_str(&ran.started_stderr);
        self.stderr.push_str(&ran.stderr);
        self.duration_ms = self.duration_ms.saturating_add(ran.duration_ms);
        self.changes.extend(ran.changes);
        ran.status
    }
}

pub trait Command: Sync {
    fn signature(&self) -> &'static Signature;
    fn run(&self, invocation: &Invocation) -> Output;
}

static COMMANDS: &[&dyn Command] = &[
    &collectives::nccl_tests::ALL_GATHER,
    &collectives::nccl_tests::ALL_REDUCE,
    &collectives::nccl_tests::ALLTOALL,
    &text::awk::Awk,
    &text::basename::Basename,
    &collectives::nccl_tests::BROADCAST,
    &text::cat::Cat,
    &host::clear::Clear,
    &remote::clush::Clush,
    &text::column::Column,
    &host::curl::Curl,
    &text::cut::Cut,
    &host::date::Date,
    &gpu::dcgmi::Dcgmi,
    &host::dctech::Dctech,
    &host::df::Df,
    &text::diff::Diff,
    &text::basename::Dirname,
    &host::dmesg::Dmesg,
    &text::du::Du,
    &text::echo::Echo,
    &remote::env::Env,
    &host::ethtool::Ethtool,
    &text::truth::False,
    &text::stat::File,
    &text::find::Find,
    &host::free::Free,
    &host::fuser::Fuser,
    &text::grep::Grep,
    &host::identity::Groups,
    &text::head::Head,
    &host::hostname::Hostname,
    &fabric::perftest::READ_BW,
    &fabric::perftest::READ_LAT,
    &fabric::perftest::SEND_BW,
    &fabric::perftest::SEND_LAT,
    &fabric::perftest::WRITE_BW,
    &fabric::perftest::WRITE_LAT,
    &fabric::ibdev2netdev::Ibdev2netdev,
    &fabric::ibdiagnet::Ibdiagnet,
    &fabric::ibswitches::Ibhosts,
    &fabric::iblinkinfo::Iblinkinfo,
    &fabric::ibnetdiscover::Ibnetdiscover,
    &fabric::ibportstate::Ibportstate,
    &fabric::ibqueryerrors::Ibqueryerrors,
    &fabric::ibstat::Ibstat,
    &fabric::ibstatus::Ibstatus,
    &fabric::ibswitches::Ibswitches,
    &fabric::ibtracert::Ibtracert,
    &fabric::ibv_devices::IbvDevices,
    &fabric::ibv_devinfo::IbvDevinfo,
    &host::identity::Id,
    &host::ip::Ip,
    &host::ipmitool::Ipmitool,
    &host::journalctl::Journalctl,
    &host::kill::Kill,
    &scheduler::kubectl::Kubectl,
    &text::pager::Less,
    &text::ls::Ls,
    &host::lsblk::Lsblk,
    &host::lscpu::Lscpu,
    &host::lspci::Lspci,
    &host::man::Man,
    &fabric::mlnx_qos::MlnxQos,
    &fabric::mlxlink::Mlxlink,
    &text::pager::More,
    &host::mount::Mount,
    &collectives::launch::Mpirun,
    &host::netplan::Netplan,
    &host::nproc::Nproc,
    &host::numactl::Numactl,
    &gpu::nvidia_smi::NvidiaSmi,
    &remote::pdsh::Pdsh,
    &fabric::perfquery::Perfquery,
    &host::kill::Pgrep,
    &host::ping::Ping,
    &host::kill::Pkill,
    &remote::env::Printenv,
    &text::printf::Printf,
    &monitoring::promtool::Promtool,
    &host::ps::Ps,
    &fabric::rdma::Rdma,
    &host::reboot::Reboot,
    &collectives::nccl_tests::REDUCE,
    &collectives::nccl_tests::REDUCE_SCATTER,
    &scheduler::slurm::sacct::Sacct,
    &scheduler::slurm::unemulated::Salloc,
    &fabric::saquery::Saquery,
    &scheduler::slurm::sbatch::Sbatch,
    &scheduler::slurm::scancel::Scancel,
    &scheduler::slurm::scontrol::Scontrol,
    &text::sed::Sed,
    &collectives::nccl_tests::SENDRECV,
    &text::seq::Seq,
    &fabric::show_gids::ShowGids,
    &host::reboot::Shutdown,
    &scheduler::slurm::sinfo::Sinfo,
    &text::sleep::Sleep,
    &fabric::sminfo::Sminfo,
    &text::sort::Sort,
    &scheduler::slurm::squeue::Squeue,
    &collectives::launch::Srun,
    &scheduler::slurm::unemulated::Sstat,
    &text::stat::Stat,
    &remote::sudo::Sudo,
    &host::systemctl::Systemctl,
    &text::tail::Tail,
    &text::tee::Tee,
    &remote::timeout::Timeout,
    &text::tr::Tr,
    &text::truth::True,
    &host::uname::Uname,
    &text::uniq::Uniq,
    &host::uptime::Uptime,
    &remote::watch::Watch,
    &text::wc::Wc,
    &host::which::Which,
    &host::identity::Whoami,
    &remote::xargs::Xargs,
    &text::yes::Yes,
];

/// Every emulated command, sorted by name.
pub fn all() -> &'static [&'static dyn Command] {
    COMMANDS
}

pub fn find(name: &str) -> Option<&'static dyn Command> {
    COMMANDS.iter().copied().find(|command| command.signature().name == name)
}

/// Command names that start with `prefix`, for tab completion.
pub fn complete(prefix: &str) -> Vec<&'static str> {
    COMMANDS.iter().map(|command| command.signature().name).filter(|name| name.starts_with(prefix)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_sorted_and_unique() {
        let names: Vec<&str> = all().iter().map(|c| c.signature().name).collect();
        let mut sorted = names.clone();
        crate::sort::sort(&mut sorted);
        sorted.dedup();
        assert_eq!(names, sorted);
    }

    #[test]
    fn every_declared_flag_is_named() {
        for command in all() {
            for flag in command.signature().flags {
                assert!(flag.short.is_some() || flag.long.is_some(), "{}", command.signature().name);
                assert!(!flag.help.is_empty());
            }
        }
    }

    #[test]
    fn completion_finds_prefixes() {
        assert_eq!(complete("nv"), ["nvidia-smi"]);
        assert_eq!(complete("h"), ["head", "hostname"]);
        assert!(complete("zz").is_empty());
    }
}
