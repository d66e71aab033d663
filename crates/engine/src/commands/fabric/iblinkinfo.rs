//! `iblinkinfo`: every link of the InfiniBand fabric, from both ends, as
//! infiniband-diags prints it (capture:
//! iblinkinfo_edr_sb7700_switch_ports_polling_truncated.txt; FACTS.md §4).
//!
//! The switches are `model::switches`' fat tree: rail leaves with the nodes
//! on ports 1-32 and uplinks to the spines above. Ports with no cable are
//! empty cages (`Down/ Polling`).

use crate::commands::fabric::ib_common::{common, diag_usage, pid};
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::fabric::{Hca, LaneSpeed, LinkLayer, PhysState, Port, PortState};
use crate::model::switches::{Fabric, Peer, LEAF_HOST_PORTS};

pub struct Iblinkinfo;

static SIGNATURE: Signature = Signature {
    name: "iblinkinfo",
    summary: "list every infiniband link of the fabric: width, speed and state from both ends",
    usage: "iblinkinfo [options]",
    flags: &[
        Flag { short: Some('d'), long: Some("down"), value: None, help: "print only nodes which have a port in the \"Down\" state" },
        Flag { short: None, long: Some("switches-only"), value: None, help: "Show only switches" },
        Flag { short: None, long: Some("cas-only"), value: None, help: "Show only CAs" },
        common::CONFIG,
        common::CA,
        common::PORT,
        common::TIMEOUT,
        common::ERRORS,
        common::VERBOSE,
        common::DEBUG,
        common::HELP,
        common::VERSION,
    ],
    examples: &[Example { command: "sudo iblinkinfo", description: "every link of the fabric with its width, per-lane speed and state" }],
};

const EXIT_FAILURE: i32 = 255;

fn lane_gbps(speed: LaneSpeed) -> &'static str {
    match speed {
        LaneSpeed::Edr => "25.78125",
        LaneSpeed::Hdr => "53.125",
        LaneSpeed::Ndr => "106.25",
        LaneSpeed::Xdr => "212.5",
    }
}

const NO_PEER: &str = "==(                Down/ Polling)==>             [  ] \"\" ( )";

/// The link from a port to its peer (`lid`, `port`, `name`), with the hints
/// for a link running below what both ends can do.
fn link(port: &Port, lid: u16, peer_port: usize, name: &str) -> String {
    if port.state == PortState::Down {
        return NO_PEER.replace("Polling", &format!("{:>7}", port.phys_state.label()));
    }
    let speed = format!("{} Gbps", lane_gbps(port.lane_speed));
    let mut hints = Vec::new();
    if port.width < port.max_width {
        hints.push(format!("Could be {}X", port.max_width));
    }
    if port.lane_speed < port.max_lane_speed {
        hints.push(format!("Could be {} Gbps", lane_gbps(port.max_lane_speed)));
    }
    let hints = if hints.is_empty() { " ".to_string() } else { hints.join(" ") };
    format!(
        "==({:>3} {speed:>18} {:>6}/{:>8})==>{lid:>8} {peer_port:>4}[  ] \"{name}\" ({hints})",
        format!("{}X", port.width),
        port.state.label(),
        port.phys_state.label()
    )
}

fn usage() -> String {
    diag_usage(&SIGNATURE, "", &[])
}

impl Command for Iblinkinfo {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut down_only, mut switches, mut cas) = (false, true, true);
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, _) => match (flag.short, flag.long) {
                    (Some('d'), _) => down_only = true,
                    (_, Some("switches-only")) => cas = false,
                    (_, Some("cas-only")) => switches = false,
                    (Some('h'), _) => return Output::error(usage(), 2),
                    _ => {}
                },
                other => return Output::error(crate::commands::options::complaint("iblinkinfo", &other) + &usage(), 2),
            }
        }
        let cluster = invocation.cluster;
        let ib = |hca: &&Hca| hca.port.link_layer == LinkLayer::InfiniBand;
        // A plain user may not open /dev/infiniband/umad* (mode 0600).
        if !invocation.node.hcas.iter().filter(ib).any(|hca| hca.port.is_up()) || !crate::commands::is_root(invocation.env) {
            return Output {
                stderr: format!("ibwarn: [{}] mad_rpc_open_port: can't open UMAD port ((null):0)\n", pid(invocation)),
                stdout: "iblinkinfo: iberror: failed: discover failed\n".to_string(),
                status: EXIT_FAILURE,
                ..Output::default()
            };
        }
        let Some(fabric) = Fabric::of(cluster) else { return Output::ok(String::new()) };
        let nodes = cluster.nodes.len();
        let mut out = String::new();
        if cas {
            for (at, node) in cluster.nodes.iter().enumerate() {
                for (rail, hca) in node.hcas.iter().enumerate().filter(|(_, hca)| ib(hca)) {
                    if down_only && hca.port.state != PortState::Down {
                        continue;
                    }
                    let (leaf, leaf_port) = fabric.leaf_port(at, rail);
                    let leaf = &fabric.switches[leaf];
                    out += &format!("CA: {} {}:\n", node.hostname, hca.name);
                    out += &format!(
                        "      0x{:016x} {:>6} {:>4}[  ] {}\n",
                        hca.port.guid,
                        hca.port.lid,
                        hca.port.number,
                        link(&hca.port, leaf.lid, leaf_port, &leaf.name)
                    );
                }
            }
        }
        // Switch-to-switch links run at the fabric's full rate.
        let Some(trunk) = cluster.nodes.iter().flat_map(|node| &node.hcas).find(ib).map(|hca| Port {
            state: PortState::Active,
            phys_state: PhysState::LinkUp,
            width: fabric.trunk.0,
            lane_speed: fabric.trunk.1,
            ..hca.port.clone()
        }) else {
            return Output::ok(out);
        };
        if switches {
            for (at, switch) in fabric.switches.iter().enumerate() {
                let lines: Vec<(usize, Option<String>)> = (1..=switch.ports)
                    .map(|number| {
                        let line = match fabric.peer(at, number, nodes) {
                            Peer::Host { node, rail } => cluster.nodes[node].hcas.get(rail).filter(ib).map(|hca| {
                                link(&hca.port, hca.port.lid, usize::from(hca.port.number), &format!("{} {}", cluster.nodes[node].hostname, hca.name))
                            }),
                            Peer::Switch { switch: other, port } => Some(link(&trunk, fabric.switches[other].lid, port, &fabric.switches[other].name)),
                            Peer::Empty => None,
                        };
                        (number, line)
                    })
                    .collect();
                let down = |line: &Option<String>| line.as_ref().is_none_or(|line| line.contains("Down/"));
                if down_only && !lines.iter().any(|(number, line)| *number <= LEAF_HOST_PORTS && line.is_some() && down(line)) {
                    continue;
                }
                out += &format!("Switch: 0x{:016x} {}:\n", switch.guid, switch.name);
                for (number, line) in lines {
                    out += &format!("{:>12} {number:>4}[  ] {}\n", switch.lid, line.unwrap_or_else(|| NO_PEER.to_string()));
                }
            }
        }
        Output { duration_ms: 400 + 5 * cluster.nodes.len() as u64, ..Output::ok(out) }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::fault::{Fault, PortDown};
    use crate::testing::run_on_first_node;
    use crate::testing::{cluster, shell};

    #[test]
    fn healthy_fabric_has_one_leaf_per_rail_under_the_spines() {
        let out = run_on_first_node("sudo iblinkinfo").stdout;
        // Four spines (LIDs 1-4, the SM's first), then a leaf per rail.
        assert_eq!(out.matches("Switch: ").count(), 12);
        assert_eq!(out.matches("CA: ").count(), 16);
        assert!(out.contains("==( 4X        106.25 Gbps Active/  LinkUp)==>       5    1[  ] \"MF0;leaf-rail0:MQM9700/U1\" ( )\n"), "{out}");
        assert!(out.contains("\n           5    2[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>     108    1[  ] \"gpu-002 mlx5_0\" ( )\n"));
        assert!(out.contains("\n           5    3[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n"));
        // Each leaf's upper half goes to the spines, eight links to each.
        assert!(
            out.contains("\n           5   33[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>       1    1[  ] \"MF0;spine1:MQM9700/U1\" ( )\n"),
            "{out}"
        );
        assert!(
            out.contains("\n           4   64[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      12   64[  ] \"MF0;leaf-rail7:MQM9700/U1\" ( )\n"),
            "{out}"
        );
        assert_eq!(run_on_first_node("sudo iblinkinfo --bogus").status, 2);
        assert_eq!(run_on_first_node("sudo iblinkinfo --switches-only").stdout.matches("CA: ").count(), 0);
    }

    #[test]
    fn degraded_and_down_links_show() {
        let mut cluster = cluster();
        let node = "gpu-002".to_string();
        Fault::HcaLinkDegraded { node: node.clone(), hca: "mlx5_1".into(), rate: Some(200), width: None }.apply(&mut cluster).unwrap();
        Fault::HcaLinkDegraded { node: node.clone(), hca: "mlx5_2".into(), rate: None, width: Some(2) }.apply(&mut cluster).unwrap();
        Fault::HcaPortDown { node, hca: "mlx5_3".into(), state: PortDown::Polling }.apply(&mut cluster).unwrap();
        let out = shell(cluster).run("sudo iblinkinfo").stdout();
        assert!(out.contains("==( 4X        53.125 Gbps Active/  LinkUp)==>     109    1[  ] \"gpu-002 mlx5_1\" (Could be 106.25 Gbps)\n"), "{out}");
        assert!(out.contains("==( 2X        106.25 Gbps Active/  LinkUp)==>     110    1[  ] \"gpu-002 mlx5_2\" (Could be 4X)\n"));
        assert!(out.contains("CA: gpu-002 mlx5_3:\n      0x"));
        assert_eq!(out.matches("Down/ Polling").count(), 8 * 30 + 2);
    }
}
