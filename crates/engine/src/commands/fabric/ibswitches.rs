//! `ibswitches` and `ibhosts`: the fabric's switches and channel adapters
//! as infiniband-diags' scripts list them from a discovery, one line each
//! (`Switch\t: 0xGUID ports 65 "NAME" enhanced port 0 lid 1 lmc 0`,
//! `Ca\t: 0xGUID ports 1 "gpu-001 mlx5_0"`). A QM9700 reports 65 ports
//! and a QM8700 41: the physical ones and the aggregation node's.

use crate::commands::fabric::discovery::Found;
use crate::commands::fabric::ib_common::{common, diag_usage};
use crate::commands::fabric::ibnetdiscover::discover;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Invocation, Output, Signature};
use crate::model::switches::Fabric;

pub struct Ibswitches;
pub struct Ibhosts;

static SWITCHES: Signature = Signature {
    name: "ibswitches",
    summary: "list the InfiniBand fabric's switches: GUID, ports, name and LID",
    usage: "ibswitches [options] [<topology-file>]",
    flags: &[common::CONFIG, common::CA, common::PORT, common::ERRORS, common::VERBOSE, common::DEBUG, common::HELP, common::VERSION],
    examples: &[Example { command: "sudo ibswitches", description: "every switch of the fabric, with its LID" }],
};

static HOSTS: Signature = Signature {
    name: "ibhosts",
    summary: "list the InfiniBand fabric's channel adapters: GUID, ports and node description",
    usage: "ibhosts [options] [<topology-file>]",
    flags: SWITCHES.flags,
    examples: &[Example { command: "sudo ibhosts | grep -c mlx5", description: "how many HCA ports the fabric sees" }],
};

/// Reads the options and sweeps the fabric as the ibnetdiscover they run
/// does: what it found, newest first, or what to print instead.
fn discovered(signature: &'static Signature, invocation: &Invocation) -> Result<(Fabric, Vec<Found>), Output> {
    let mut ca = None;
    let usage = || diag_usage(signature, "[<topology-file>]", &[]);
    for arg in scan(signature, invocation.args()) {
        match arg {
            Arg::Flag(flag, value) => match flag.short {
                Some('C') => ca = value,
                Some('h') => return Err(Output::error(usage(), 2)),
                _ => {}
            },
            other => return Err(Output::error(crate::commands::options::complaint(signature.name, &other) + &usage(), 2)),
        }
    }
    let (fabric, _, mut order) = discover(invocation, "ibnetdiscover", ca.as_deref())?;
    order.reverse();
    Ok((fabric, order))
}

impl Command for Ibswitches {
    fn signature(&self) -> &'static Signature {
        &SWITCHES
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (fabric, order) = match discovered(&SWITCHES, invocation) {
            Ok(found) => found,
            Err(output) => return output,
        };
        let lines: String = order
            .iter()
            .filter_map(|found| match found {
                Found::Switch(index) => Some(&fabric.switches[*index]),
                Found::Ca { .. } => None,
            })
            .map(|switch| format!("Switch\t: 0x{:016x} ports {} \"{}\" enhanced port 0 lid {} lmc 0\n", switch.guid, switch.ports + 1, switch.name, switch.lid))
            .collect();
        Output { duration_ms: 300 + 4 * invocation.cluster.nodes.len() as u64, ..Output::ok(lines) }
    }
}

impl Command for Ibhosts {
    fn signature(&self) -> &'static Signature {
        &HOSTS
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (_, order) = match discovered(&HOSTS, invocation) {
            Ok(found) => found,
            Err(output) => return output,
        };
        let cluster = invocation.cluster;
        let lines: String = order
            .iter()
            .filter_map(|found| match found {
                Found::Ca { node, rail } => Some((&cluster.nodes[*node], &cluster.nodes[*node].hcas[*rail])),
                Found::Switch(_) => None,
            })
            .map(|(node, hca)| format!("Ca\t: 0x{:016x} ports 1 \"{} {}\"\n", hca.node_guid, node.hostname, hca.name))
            .collect();
        Output { duration_ms: 300 + 4 * cluster.nodes.len() as u64, ..Output::ok(lines) }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::fault::{Fault, PortDown};
    use crate::testing::{cluster, run_on_first_node, shell};

    #[test]
    fn the_switches_are_iblinkinfos_and_the_hosts_the_ports_that_answer() {
        let switches = run_on_first_node("sudo ibswitches").stdout;
        assert_eq!(switches.lines().count(), 12, "{switches}");
        assert!(switches.starts_with("Switch\t: 0x506b4b03"), "{switches}");
        assert!(switches.contains(" ports 65 \"MF0;spine1:MQM9700/U1\" enhanced port 0 lid 1 lmc 0\n"), "{switches}");
        assert!(switches.contains(" ports 65 \"MF0;leaf-rail7:MQM9700/U1\" enhanced port 0 lid 12 lmc 0\n"), "{switches}");
        let mut cluster = cluster();
        Fault::HcaPortDown { node: "gpu-002".into(), hca: "mlx5_3".into(), state: PortDown::Down }.apply(&mut cluster).unwrap();
        let hosts = shell(cluster).run("sudo ibhosts").stdout();
        assert_eq!(hosts.lines().count(), 15, "{hosts}");
        assert!(hosts.contains(" ports 1 \"gpu-002 mlx5_2\"\n") && !hosts.contains("\"gpu-002 mlx5_3\""), "{hosts}");
        assert_eq!(run_on_first_node("ibswitches").status, 255);
    }
}
