//! Read-only Slurm views of the cluster model: `sinfo`, `squeue`,
//! `scontrol show node`. The cluster is one partition, `gpu` (the default,
//! shown `gpu*`), holding every node, with no time limit. A node's state and
//! reason come from `Node::scheduler`, `scheduler_reason` and
//! `scheduler_reason_since`; a node that does not answer is "not responding" (`*`), or `boot^` while
//! Slurm reboots it (`scontrol reboot`).
//!
//! Jobs are what `sbatch` recorded in the cluster's history
//! (`model::job`): `squeue` shows those pending or running, `sacct` all.

pub mod format;
pub mod hostlist;
pub mod sacct;
pub mod sbatch;
pub mod scancel;
pub mod scontrol;
pub mod sinfo;
pub mod squeue;
pub mod unemulated;

use crate::model::node::SlurmShown;
use crate::model::service::slurmd_responds;
use crate::model::time::{civil, EpochSeconds};
use crate::model::Node;

pub const PARTITION: &str = "gpu";
pub const TIME_LIMIT: &str = "infinite";
/// Who set a node's reason: operators drain and down nodes as root; the
/// slurm-operator's own drains go through slurmrestd with its token, whose
/// user is `slurm` (slurmjwt's default; its pod's preStop hook runs
/// scontrol as root).
pub fn reason_user(reason: &str) -> &'static str {
    use crate::model::slurm_operator::{REASON_PREFIX, TERMINATING_REASON};
    if reason.starts_with(REASON_PREFIX) && reason != TERMINATING_REASON {
        "slurm"
    } else {
        "root"
    }
}

/// Whether Slurm rebooted the node (`scontrol reboot`) and waits for it to
/// boot: the REBOOT_ISSUED flag, which Slurm shows before any other for a
/// node running no job (slurm_protocol_defs.c, `node_state_string*`).
fn reboot_issued(node: &Node, now: EpochSeconds) -> bool {
    crate::model::service::slurm_reboot_pending(node, now) && SlurmShown::of(node) != SlurmShown::Allocated
}

/// `sinfo`'s compact state (`%t`): idle, alloc, drain, down, with `*` when
/// the node does not respond; `boot^` while Slurm reboots it.
pub fn compact_state(node: &Node, now: EpochSeconds) -> String {
    if reboot_issued(node, now) {
        return "boot^".to_string();
    }
    let base = match SlurmShown::of(node) {
        SlurmShown::Idle => "idle",
        SlurmShown::Allocated => "alloc",
        SlurmShown::Down => "down",
        SlurmShown::Drained => "drain",
        SlurmShown::Draining => "drng",
    };
    format!("{base}{}", if slurmd_responds(node, now) { "" } else { "*" })
}

/// `sinfo -l`'s long state (`%T`); `reboot^` while Slurm reboots the node.
pub fn long_state(node: &Node, now: EpochSeconds) -> String {
    if reboot_issued(node, now) {
        return "reboot^".to_string();
    }
    let base = SlurmShown::of(node).long();
    format!("{base}{}", if slurmd_responds(node, now) { "" } else { "*" })
}

/// `scontrol`'s state: `IDLE`, `ALLOCATED`, `DOWN+NOT_RESPONDING`,
/// `IDLE+DRAIN`, `IDLE+DRAIN+REBOOT_ISSUED` (the flags in Slurm's order).
pub fn scontrol_state(node: &Node, now: EpochSeconds) -> String {
    let mut state = match SlurmShown::of(node) {
        SlurmShown::Idle => "IDLE",
        SlurmShown::Allocated => "ALLOCATED",
        SlurmShown::Down => "DOWN",
        SlurmShown::Drained => "IDLE+DRAIN",
        SlurmShown::Draining => "ALLOCATED+DRAIN",
    }
    .to_string();
    if reboot_issued(node, now) {
        state.push_str("+REBOOT_ISSUED");
    } else if !slurmd_responds(node, now) {
        state.push_str("+NOT_RESPONDING");
    }
    state
}

/// Slurm's timestamp: `2026-03-09T08:40:00` (the lab's clock is UTC).
pub fn timestamp(at: EpochSeconds) -> String {
    let c = civil(at);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", c.year, c.month, c.day, c.hour, c.minute, c.second)
}

/// Pads or cuts `text` to `width` as Slurm's `%.N` (right) and `%N` (left)
/// field formats do for text: longer values are truncated, not widened
/// (the capture's `14-00:00:0`). Numbers are padded, never cut, by callers.
pub fn field(text: &str, width: usize, right: bool) -> String {
    let cut: String = text.chars().take(width).collect();
    if right {
        format!("{cut:>width$}")
    } else {
        format!("{cut:<width$}")
    }
}

/// The id the next job gets: job ids start at a seeded number and grow
/// with the simulated clock, one past the last job at least.
pub fn next_job_id(cluster: &crate::model::Cluster) -> i64 {
    let base = cluster.job_id_base();
    let last = cluster.slurm_jobs().iter().map(|job| job.id).max().unwrap_or(0);
    (base + (cluster.now - cluster.started_at()).max(0)).max(last + 1)
}

/// Slurm's answer to an option it does not know (getopt's message, then its hint).
pub fn bad_option(name: &str, flag: &str) -> crate::commands::Output {
    let message = crate::commands::options::unknown(name, flag);
    crate::commands::Output::error(format!("{message}Try \"{name} --help\" for more information\n"), 1)
}
