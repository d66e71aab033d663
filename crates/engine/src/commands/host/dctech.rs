//! `dctech`: the site's request to a datacenter technician for hands-on
//! work (reseat a cable, replace an HCA or a GPU, power-cycle a node).
//! ClusterLab's own tool: labs declare which faults each action repairs, so
//! the trainee practises choosing the right physical fix and then proving it
//! worked from the terminal. The work is physical: a power cycle, or work
//! inside the chassis (GPU, HCA), reboots the node; a replaced part has a
//! new identity; cable work takes the link down and up (LinkDownedCounter).
//! The site's policy, in `dctech help`: no hands-on work on a node that
//! Slurm has not drained (or marked down).

use crate::commands::{Command, Example, Invocation, Output, Signature};
use crate::model::change::{Change, RepairTarget, REPAIR_ACTIONS};
use crate::model::node::SchedulerState;
use crate::model::time::ctime;
use crate::rng::Rng;

pub struct Dctech;

static SIGNATURE: Signature = Signature {
    name: "dctech",
    summary: "ask a datacenter technician for hands-on work on a node (this site's tool)",
    usage: "dctech list | dctech help | dctech ACTION NODE [HCA|GPU]   e.g. dctech reseat-cable gpu-001 mlx5_1",
    flags: &[],
    examples: &[Example { command: "dctech list", description: "the hands-on actions a technician can take" }],
};

const POLICY: &str = "Site policy: technicians work only on nodes that Slurm has drained (or marked down),\nso that no job runs where they work. Drain first, then open the ticket; resume the\nnode once you have proved the fix from the terminal.\n\nPower cycles and work inside the chassis (reseat-gpu, replace-gpu, replace-hca)\nreboot the node. Cable work (reseat-cable, replace-cable, replace-transceiver)\ntakes the link down and up again.\n";
const POLICY_SHORT: &str = "Site policy: drain a node in Slurm before hands-on work";

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
        if action == "help" {
            return Output::ok(format!("usage: {}\n\n{POLICY}", SIGNATURE.usage));
        }
        if action == "list" {
            let lines: String = REPAIR_ACTIONS.iter().map(|(name, target)| format!("{name:<22}{}\n", target_label(*target))).collect();
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
        if node.busy {
            return Output::error(format!("dctech: refused: a job still runs on {host}. Wait for it to end, or scancel it, then ask again.\n"), 1);
        }
        if !matches!(node.scheduler, SchedulerState::Drained | SchedulerState::Down) {
            return Output::error(
                format!("dctech: refused: {host} is not drained. {POLICY_SHORT} (sudo scontrol update NodeName={host} State=DRAIN Reason=\"...\")\n"),
                1,
            );
        }
        let ticket = Rng::derive(invocation.cluster.seed, &["dctech", action, host, &target]).range_u64(1000, 9999);
        let done = invocation.cluster.now + (WORK_MS / 1000) as i64;
        let what = if target.is_empty() { host.clone() } else { format!("{host} {target}") };
        Output {
            stdout: format!("Ticket DC-{ticket} opened: {action} on {what}.\nA technician did the work; closed at {} UTC.\n", ctime(done)),
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
        let refused = shell.run("dctech reseat-cable gpu-002 mlx5_1");
        assert_eq!(refused.status, 1);
        assert!(refused.stderr().starts_with("dctech: refused: gpu-002 is not drained."), "{}", refused.stderr());
        assert!(shell.run("dctech help").stdout().contains("Site policy: technicians work only on nodes that Slurm has drained"));
        shell.run("sudo scontrol update NodeName=gpu-002 State=DRAIN Reason=cable");
        let out = shell.run("dctech reseat-cable gpu-002 mlx5_1");
        assert!(out.stdout().starts_with("Ticket DC-"), "{}", out.text());
        assert_eq!(shell.changes().len(), 2);
    }
}
