//! `sminfo`: which subnet manager masters the fabric, as infiniband-diags
//! prints it: `sminfo: sm lid 1 sm guid 0x..., activity count N priority 15
//! state 3 SMINFO_MASTER`. The SM is the first spine's (`model::switches`),
//! at the LID every HCA port reports as its `SM lid`; its activity count
//! grows as it sweeps.

use crate::commands::fabric::ib_common::{common, diag_usage, open_umad_port};
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Invocation, Output, Signature};
use crate::model::switches::Fabric;

pub struct Sminfo;

static SIGNATURE: Signature = Signature {
    name: "sminfo",
    summary: "query the InfiniBand subnet manager: its LID, GUID, priority and state",
    usage: "sminfo [options] <sm_lid|sm_dr_path> [modifier]",
    flags: &[
        common::CONFIG,
        common::CA,
        common::PORT,
        common::DIRECT,
        common::TIMEOUT,
        common::ERRORS,
        common::VERBOSE,
        common::DEBUG,
        common::HELP,
        common::VERSION,
    ],
    examples: &[Example { command: "sudo sminfo", description: "the master subnet manager's LID, GUID and state" }],
};

fn usage() -> String {
    diag_usage(
        &SIGNATURE,
        "<sm_lid|sm_dr_path> [modifier]",
        &["\t\t# local port's sminfo", "32\t\t# show sminfo of lid 32", "-G 0x8f1040023\t# same but using guid address"],
    )
}

/// The SM's priority (the highest, as a fabric's master usually has) and
/// how often it bumps its activity count (seconds).
pub const PRIORITY: u8 = 15;
const SECONDS_PER_ACTIVITY: i64 = 3;

/// The master SM's activity count now. It came up with the fabric, a day
/// before the oldest node's boot, and counts its sweeps since.
pub fn activity_count(cluster: &crate::model::Cluster) -> i64 {
    let since = cluster.nodes.iter().map(|node| node.booted_at).min().unwrap_or(cluster.now) - 86_400;
    (cluster.now - since).max(0) / SECONDS_PER_ACTIVITY
}

impl Command for Sminfo {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut ca = None;
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('C') => ca = value,
                    Some('h') => return Output::error(usage(), 2),
                    _ => {}
                },
                Arg::Positional(_) => {}
                other => return Output::error(crate::commands::options::complaint("sminfo", &other) + &usage(), 2),
            }
        }
        if let Err(refused) = open_umad_port(invocation, "sminfo", ca.as_deref()) {
            return refused;
        }
        let cluster = invocation.cluster;
        let Some(fabric) = Fabric::of(cluster) else { return Output::error("sminfo: iberror: failed: query\n", 255) };
        let sm = fabric.subnet_manager();
        let activity = activity_count(cluster);
        Output::ok(format!("sminfo: sm lid {} sm guid 0x{:x}, activity count {activity} priority {PRIORITY} state 3 SMINFO_MASTER\n", sm.lid, sm.guid))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn the_master_is_the_first_spine_at_the_ports_sm_lid() {
        let out = run_on_first_node("sudo sminfo").stdout;
        assert!(out.starts_with("sminfo: sm lid 1 sm guid 0x506b4b03"), "{out}");
        assert!(out.ends_with(" priority 15 state 3 SMINFO_MASTER\n"), "{out}");
        let sm_lid = run_on_first_node("ibstat mlx5_0").stdout;
        assert!(sm_lid.contains("SM lid: 1\n"), "{sm_lid}");
        let user = run_on_first_node("sminfo");
        assert_eq!((user.stdout.as_str(), user.status), ("sminfo: iberror: failed: Failed to open '(null)' port '0'\n", 255));
    }
}
