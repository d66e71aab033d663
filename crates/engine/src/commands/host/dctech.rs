//! `dctech`: the site's request to a datacenter technician for hands-on
//! work (reseat a cable, replace an HCA or a GPU, power-cycle a node).
//! ClusterLab's own tool: labs declare which faults each action repairs, so
//! the trainee practises choosing the right physical fix and then proving it
//! worked from the terminal.

use crate::commands::{Command, Example, Invocation, Output, Signature};
use crate::model::change::{Change, RepairTarget, REPAIR_ACTIONS};
use crate::model::time::ctime;
use crate::rng::Rng;

pub struct Dctech;

static SIGNATURE: Signature = Signature {
    name: "dctech",
    summary: "ask a datacenter technician for hands-on work on a node (this site's tool)",
    usage: "dctech list | dctech ACTION NODE [HCA|GPU]   e.g. dctech reseat-cable gpu-001 mlx5_1",
    flags: &[],
    examples: &[Example { command: "dctech list", description: "the hands-on actions a technician can take" }],
};

/// A technician needs this long on the lab's clock.
const WORK_MS: u64 = 20 * 60 * 1000;

fn target_label(target: RepairTarget) -> &'static str {
    match target {
        RepairTarget::Hca => "HCA, e.g. mlx5_1",
        RepairTarget::Gpu => "GPU index, e.g. 3",
        RepairTarget::Node => "no target",
    }
}

impl Command for Dctech {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let args = invocation.args();
        let usage = || Output::error(format!("usage: {}\n", SIGNATURE.usage), 2);
        let Some(action) = args.first() else {
            return usage();
        };
        if action == "list" {
            let lines: String = REPAIR_ACTIONS
                .iter()
                .map(|(name, target)| format!("{name:<22}{}\n", target_label(*target)))
                .collect();
            return Output::ok(lines);
        }
        let Some((_, kind)) = REPAIR_ACTIONS.iter().find(|(name, _)| name == action) else {
            return Output::error(format!("dctech: unknown action '{action}'; see 'dctech list'\n"), 2);
        };
        let Some(host) = args.get(1) else {
            return usage();
        };
        let Some(node) = invocation.cluster.node(host) else {
            return Output::error(format!("dctech: no node '{host}' at this site\n"), 2);
        };
        let target = args.get(2).cloned().unwrap_or_default();
        let known = match kind {
            RepairTarget::Hca => node.hca(&target).is_some(),
            RepairTarget::Gpu => target.parse().ok().and_then(|index| node.gpu(index)).is_some(),
            RepairTarget::Node => target.is_empty(),
        };
        if !known {
            return Output::error(format!("dctech: {action} on {host} needs a {}\n", target_label(*kind)), 2);
        }
        let ticket = Rng::derive(invocation.cluster.seed, &["dctech", action, host, &target]).range_u64(1000, 9999);
        let done = invocation.cluster.now + (WORK_MS / 1000) as i64;
        let what = if target.is_empty() { host.clone() } else { format!("{host} {target}") };
        Output {
            stdout: format!(
                "Ticket DC-{ticket} opened: {action} on {what}.\nA technician did the work; closed at {} UTC.\n",
                ctime(done)
            ),
            duration_ms: WORK_MS,
            changes: vec![Change::Repair { node: host.clone(), action: action.clone(), target }],
            ..Output::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::session;

    #[test]
    fn requests_are_checked_and_ticketed() {
        let mut shell = session();
        assert!(shell.run("dctech list").stdout().starts_with("reseat-cable"));
        assert_eq!(shell.run("dctech reseat-cable gpu-001 mlx5_9").status, 2);
        assert_eq!(shell.run("dctech reseat-gpu gpu-009 1").status, 2);
        assert_eq!(shell.run("dctech fix-it gpu-001").status, 2);
        let out = shell.run("dctech reseat-cable gpu-002 mlx5_1");
        assert!(out.stdout().starts_with("Ticket DC-"), "{}", out.text());
        assert_eq!(shell.changes().len(), 1);
    }
}
