//! `ibtracert SRC-LID DEST-LID`: the path between two ports through the
//! fabric's switches (`model::switches`, its up/down routes), as
//! infiniband-diags prints it: the `From` end node (its node GUID), one
//! `[out] -> switch port {guid}[in] lid L-L "desc"` per switch, the last
//! hop to the CA (its port GUID) and the `To` end node; `-n` the bare
//! GUIDs and ports. A LID that no active port holds cannot be reached:
//! the MAD times out, the tool warns on stderr and fails on stdout (255).

use crate::commands::fabric::ib_common::{base_lid, common, diag_usage, is_infiniband, open_umad_port, pid, strtol};
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::switches::Fabric;
use crate::model::Cluster;

pub struct Ibtracert;

static SIGNATURE: Signature = Signature {
    name: "ibtracert",
    summary: "trace the InfiniBand path between two LIDs: each switch and port on the way",
    usage: "ibtracert [options] <src-addr> <dest-addr>",
    flags: &[
        Flag { short: Some('f'), long: Some("force"), value: None, help: "force" },
        Flag { short: Some('n'), long: Some("no_info"), value: None, help: "simple format" },
        Flag { short: Some('m'), long: Some("mlid"), value: Some("<mlid>"), help: "multicast trace of the mlid" },
        Flag { short: None, long: Some("node-name-map"), value: Some("<file>"), help: "node name map file" },
        Flag { short: None, long: Some("ports-file"), value: Some("<file>"), help: "port pairs file" },
        common::CONFIG,
        common::CA,
        common::PORT,
        common::LID,
        common::GUID,
        common::TIMEOUT,
        common::SM_PORT,
        common::M_KEY,
        common::ERRORS,
        common::VERBOSE,
        common::DEBUG,
        common::HELP,
        common::VERSION,
    ],
    examples: &[Example { command: "sudo ibtracert 100 108", description: "the switches between two HCA ports, by LID (ibstat's Base lid)" }],
};

fn usage() -> String {
    diag_usage(
        &SIGNATURE,
        "<src-addr> <dest-addr>",
        &[
            "- Unicast examples:",
            "4 16\t\t\t# show path between lids 4 and 16",
            "-n 4 16\t\t# same, but using simple output format",
            "-G 0x8f1040396522d 0x002c9000100d051\t# use guid addresses",
            " - Multicast examples:",
            "-m 0xc000 4 16\t# show multicast path of mlid 0xc000 between lids 4 and 16",
        ],
    )
}

/// An end of the path: node index, rail, its port's LID.
type End = (usize, usize, u16);

/// The active HCA port holding `lid`.
fn port_at(cluster: &Cluster, lid: u16) -> Option<End> {
    cluster.nodes.iter().enumerate().find_map(|(n, node)| {
        node.hcas.iter().position(|hca| is_infiniband(&hca.port) && hca.port.is_up() && base_lid(&hca.port) == lid).map(|rail| (n, rail, lid))
    })
}

impl Command for Ibtracert {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut ca, mut simple, mut lids) = (None, false, Vec::new());
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('C') => ca = value,
                    Some('n') => simple = true,
                    Some('h') => return Output::error(usage(), 2),
                    _ => {}
                },
                Arg::Positional(word) => lids.push(word),
                other => return Output::error(crate::commands::options::complaint("ibtracert", &other) + &usage(), 2),
            }
        }
        let [source, destination] = &lids[..] else { return Output::error(usage(), 2) };
        if let Err(refused) = open_umad_port(invocation, "ibtracert", ca.as_deref()) {
            return refused;
        }
        let cluster = invocation.cluster;
        let process = pid(invocation);
        let fail = |warnings: String| Output {
            stdout: "ibtracert: iberror: failed: Failed to get route information\n".into(),
            stderr: warnings,
            status: 255,
            ..Default::default()
        };
        // infiniband-diags takes LIDs in C's strtol forms; valid unicast LIDs are 1..0xbfff.
        let parse = |text: &str| Some(strtol(text)).filter(|lid| (1..=0xbfff).contains(lid)).map(|lid| lid as u16);
        let Some(src) = parse(source) else { return fail(format!("ibwarn: [{process}] get_route: can't resolve source port {source}\n")) };
        let Some(dst) = parse(destination) else { return fail(format!("ibwarn: [{process}] get_route: can't resolve destination port {destination}\n")) };
        let fabric = Fabric::of(cluster);
        let unreachable = |lid: u16, which: &str| {
            fail(format!(
                "ibwarn: [{process}] mad_rpc: _do_madrpc failed; dport (Lid {lid})\nibwarn: [{process}] find_route: can't reach to/from ports\nibwarn: [{process}] get_route: {which}\n"
            ))
        };
        let (Some(fabric), Some(from)) = (fabric, port_at(cluster, src)) else { return unreachable(src, "can't find a route to the src port") };
        let Some(to) = port_at(cluster, dst) else { return unreachable(dst, "can't find a route from src to dest") };
        let end = |(node, rail, lid): End| {
            let hca = &cluster.nodes[node].hcas[rail];
            (hca.node_guid, hca.port.guid, hca.port.number, lid, format!("{} {}", cluster.nodes[node].hostname, hca.name))
        };
        let (from_node_guid, _, from_port, from_lid, from_desc) = end(from);
        let (to_node_guid, to_port_guid, to_port, to_lid, to_desc) = end(to);
        let mut out = if simple {
            format!("From ca {{0x{from_node_guid:016x}}}[{from_port}]\n")
        } else {
            format!("From ca {{0x{from_node_guid:016x}}} portnum {from_port} lid {from_lid}-{from_lid} \"{from_desc}\"\n")
        };
        if from.0 != to.0 || from.1 != to.1 {
            for (out_port, index, in_port) in fabric.route((from.0, from.1), (to.0, to.1), dst) {
                let switch = &fabric.switches[index];
                out += &if simple {
                    format!("[{out_port}] -> {{0x{:016x}}}[{in_port}]\n", switch.guid)
                } else {
                    format!("[{out_port}] -> switch port {{0x{:016x}}}[{in_port}] lid {}-{} \"{}\"\n", switch.guid, switch.lid, switch.lid, switch.name)
                };
            }
            let (_, host_port) = fabric.leaf_port(to.0, to.1);
            out += &if simple {
                format!("[{host_port}] -> {{0x{to_port_guid:016x}}}[{to_port}]\n")
            } else {
                format!("[{host_port}] -> ca port {{0x{to_port_guid:016x}}}[{to_port}] lid {to_lid}-{to_lid} \"{to_desc}\"\n")
            };
        }
        out += &if simple {
            format!("To ca {{0x{to_node_guid:016x}}}[{to_port}]\n")
        } else {
            format!("To ca {{0x{to_node_guid:016x}}} portnum {to_port} lid {to_lid}-{to_lid} \"{to_desc}\"\n")
        };
        Output { duration_ms: 40, ..Output::ok(out) }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn a_path_between_two_rails_crosses_a_spine() {
        let same_rail = run_on_first_node("sudo ibtracert 100 108").stdout;
        let lines: Vec<&str> = same_rail.lines().collect();
        assert!(lines[0].starts_with("From ca {0x") && lines[0].ends_with(" portnum 1 lid 100-100 \"gpu-001 mlx5_0\""), "{same_rail}");
        assert!(
            lines[1].starts_with("[1] -> switch port {0x") && lines[1].contains("}[1] lid ") && lines[1].contains("\"MF0;leaf-rail0:MQM9700/U1\""),
            "{same_rail}"
        );
        assert!(lines[2].starts_with("[2] -> ca port {0x") && lines[2].ends_with("}[1] lid 108-108 \"gpu-002 mlx5_0\""), "{same_rail}");
        assert!(lines[3].starts_with("To ca {0x"), "{same_rail}");
        let across = run_on_first_node("sudo ibtracert 100 109").stdout;
        assert_eq!(across.lines().count(), 6, "leaf, spine, leaf: {across}");
        assert!(across.contains("-> switch port {0x") && across.contains("spine"), "{across}");
        let lost = run_on_first_node("sudo ibtracert 100 999");
        assert_eq!((lost.status, lost.stdout.as_str()), (255, "ibtracert: iberror: failed: Failed to get route information\n"));
        assert!(lost.stderr.contains("mad_rpc: _do_madrpc failed; dport (Lid 999)"), "{}", lost.stderr);
        assert_eq!(run_on_first_node("ibtracert 100 108").status, 255, "root's");
        assert_eq!(run_on_first_node("sudo ibtracert 100").status, 2);
    }
}
