//! `iblinkinfo`: every link of the InfiniBand fabric, from both ends, as
//! infiniband-diags prints it (capture:
//! iblinkinfo_edr_sb7700_switch_ports_polling_truncated.txt; FACTS.md §4).
//!
//! The model holds only the nodes' HCAs, so the fabric is derived: a
//! rail-optimised leaf layer, one leaf switch per rail (rail i = HCA i of every
//! node) per 32 nodes, the nodes' ports on leaf ports 1-32 in node order.
//! Leaf ports with no node are empty cages (`Down/ Polling`).

use crate::commands::fabric::ib_common::{common_options, diag_usage, pid, DiagOption};
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::fabric::{Hca, LaneSpeed, LinkLayer, Port, PortState};
use crate::rng::Rng;

pub struct Iblinkinfo;

static SIGNATURE: Signature = Signature {
    name: "iblinkinfo",
    summary: "list every infiniband link of the fabric: width, speed and state from both ends",
    usage: "iblinkinfo [options]",
    flags: &[
        Flag { short: Some('d'), long: Some("down"), value: None, help: "print only nodes which have a port in the \"Down\" state" },
        Flag { short: None, long: Some("switches-only"), value: None, help: "Show only switches" },
        Flag { short: None, long: Some("cas-only"), value: None, help: "Show only CAs" },
        Flag { short: Some('C'), long: Some("Ca"), value: Some("<ca>"), help: "Ca name to use" },
        Flag { short: Some('P'), long: Some("Port"), value: Some("<port>"), help: "Ca port number to use" },
        Flag { short: Some('h'), long: Some("help"), value: None, help: "help message" },
    ],
    examples: &[Example { command: "sudo iblinkinfo", description: "every link of the fabric with its width, per-lane speed and state" }],
};

/// Host-facing ports of a leaf (a QM9700 has 64: half down, half up).
const LEAF_PORTS: usize = 32;
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
    let mut options = vec![
        DiagOption { long: "down", letter: Some('d'), value: None, description: "print only nodes which have a port in the \"Down\" state" },
        DiagOption { long: "switches-only", letter: None, value: None, description: "Show only switches" },
        DiagOption { long: "cas-only", letter: None, value: None, description: "Show only CAs" },
    ];
    options.extend(common_options("DGKLsy"));
    diag_usage("iblinkinfo", "", &options, &[])
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
        let rails = cluster.nodes.iter().map(|node| node.hcas.len()).max().unwrap_or(0);
        let groups = cluster.nodes.len().div_ceil(LEAF_PORTS);
        // A leaf's LID, GUID and name from its rail and group of nodes.
        let leaf = |rail: usize, group: usize| {
            let index = group * rails + rail;
            let lid = if index < 98 { 2 + index as u16 } else { 40_000 + index as u16 };
            let guid = (0x50_6b4b_u64 << 40) | (0x0300 << 24) | Rng::derive(cluster.seed, &["leaf", &index.to_string()]).range_u64(0, 0xff_ffff);
            let suffix = if group == 0 { String::new() } else { format!("-{group}") };
            (lid, guid, suffix)
        };
        let model = |hca: &Hca| if hca.port.max_lane_speed >= LaneSpeed::Ndr { "MQM9700" } else { "MQM8700" };
        let switch_name = |rail: usize, suffix: &str, hca: &Hca| format!("MF0;leaf-rail{rail}{suffix}:{}/U1", model(hca));
        let mut out = String::new();
        if cas {
            for (at, node) in cluster.nodes.iter().enumerate() {
                for (rail, hca) in node.hcas.iter().enumerate().filter(|(_, hca)| ib(hca)) {
                    if down_only && hca.port.state != PortState::Down {
                        continue;
                    }
                    let (lid, _, suffix) = leaf(rail, at / LEAF_PORTS);
                    out += &format!("CA: {} {}:\n", node.hostname, hca.name);
                    out += &format!(
                        "      0x{:016x} {:>6} {:>4}[  ] {}\n",
                        hca.port.guid,
                        hca.port.lid,
                        hca.port.number,
                        link(&hca.port, lid, at % LEAF_PORTS + 1, &switch_name(rail, &suffix, hca))
                    );
                }
            }
        }
        if switches {
            for group in 0..groups {
                for rail in 0..rails {
                    let members: Vec<(&str, &Hca)> = cluster.nodes[group * LEAF_PORTS..]
                        .iter()
                        .take(LEAF_PORTS)
                        .filter_map(|node| node.hcas.get(rail).filter(ib).map(|hca| (node.hostname.as_str(), hca)))
                        .collect();
                    let Some((_, first)) = members.first() else { continue };
                    if down_only && members.iter().all(|(_, hca)| hca.port.state != PortState::Down) {
                        continue;
                    }
                    let (lid, guid, suffix) = leaf(rail, group);
                    out += &format!("Switch: 0x{guid:016x} {}:\n", switch_name(rail, &suffix, first));
                    for number in 1..=LEAF_PORTS {
                        let line = match members.get(number - 1) {
                            Some((host, hca)) => link(&hca.port, hca.port.lid, usize::from(hca.port.number), &format!("{host} {}", hca.name)),
                            None => NO_PEER.to_string(),
                        };
                        out += &format!("{lid:>12} {number:>4}[  ] {line}\n");
                    }
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
    fn healthy_fabric_has_one_leaf_per_rail() {
        let out = run_on_first_node("sudo iblinkinfo").stdout;
        assert_eq!(out.matches("Switch: ").count(), 8);
        assert_eq!(out.matches("CA: ").count(), 16);
        assert!(out.contains("==( 4X        106.25 Gbps Active/  LinkUp)==>       2    1[  ] \"MF0;leaf-rail0:MQM9700/U1\" ( )\n"), "{out}");
        assert!(out.contains("\n           2    2[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>     108    1[  ] \"gpu-002 mlx5_0\" ( )\n"));
        assert!(out.contains("\n           2    3[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n"));
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
