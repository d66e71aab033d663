//! `ibnetdiscover`: the fabric's topology file as infiniband-diags writes
//! it (rdma-core `infiniband-diags/ibnetdiscover.c`): a header naming the
//! node the sweep started from, then every switch and every CA, each kind
//! in the reverse of the order the sweep found them (libibnetdisc puts each
//! new node at the head of its list), with one line per connected port.
//! `-l`, `-H` and `-S` list the nodes one line each. A topology-file
//! argument receives the output instead of the terminal.

use crate::commands::fabric::discovery::{neighbour, node_info, port_count, sweep_from_local, Found, NodeInfo, MELLANOX_VENDOR};
use crate::commands::fabric::ib_common::{common, diag_usage, pid};
use crate::commands::files::View;
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::fabric::LaneSpeed;
use crate::model::switches::Fabric;
use crate::model::time::ctime;
use crate::model::Cluster;

pub struct Ibnetdiscover;

static SIGNATURE: Signature = Signature {
    name: "ibnetdiscover",
    summary: "discover the InfiniBand fabric and print its topology: every switch and CA and what each port connects to",
    usage: "ibnetdiscover [options] [topology-file]",
    flags: &[
        Flag { short: Some('f'), long: Some("full"), value: None, help: "show full information (ports' speed and width, vlcap)" },
        Flag { short: Some('s'), long: Some("show"), value: None, help: "show more information" },
        Flag { short: Some('l'), long: Some("list"), value: None, help: "list of connected nodes" },
        Flag { short: Some('g'), long: Some("grouping"), value: None, help: "show grouping" },
        Flag { short: Some('H'), long: Some("Hca_list"), value: None, help: "list of connected CAs" },
        Flag { short: Some('S'), long: Some("Switch_list"), value: None, help: "list of connected switches" },
        Flag { short: Some('R'), long: Some("Router_list"), value: None, help: "list of connected routers" },
        Flag { short: None, long: Some("node-name-map"), value: Some("<file>"), help: "node name map file" },
        Flag { short: None, long: Some("cache"), value: Some("<file>"), help: "filename to cache ibnetdiscover data to" },
        Flag { short: None, long: Some("load-cache"), value: Some("<file>"), help: "filename of ibnetdiscover cache to load" },
        Flag { short: None, long: Some("diff"), value: Some("<file>"), help: "filename of ibnetdiscover cache to diff" },
        Flag { short: None, long: Some("diffcheck"), value: Some("<key(s)>"), help: "specify checks to execute for --diff" },
        Flag { short: Some('p'), long: Some("ports"), value: None, help: "obtain a ports report" },
        Flag { short: Some('m'), long: Some("max_hops"), value: None, help: "report max hops discovered by the library" },
        Flag {
            short: Some('o'),
            long: Some("outstanding_smps"),
            value: Some("<val>"),
            help: "specify the number of outstanding SMP's which should be issued during the scan",
        },
        common::CONFIG,
        common::CA,
        common::PORT,
        common::TIMEOUT,
        common::M_KEY,
        common::ERRORS,
        common::VERBOSE,
        common::DEBUG,
        common::HELP,
        common::VERSION,
    ],
    examples: &[
        Example { command: "sudo ibnetdiscover > fabric.topo", description: "save the fabric's topology to compare after a change" },
        Example { command: "sudo ibnetdiscover -S", description: "one line per switch: GUID, ports, device id and name" },
    ],
};

fn usage() -> String {
    diag_usage(&SIGNATURE, "[topology-file]", &[])
}

/// The `4xNDR` a topology line gives a link: its width and lane speed.
fn link_name(width: u8, speed: LaneSpeed) -> String {
    format!("{width}x{}", speed.name())
}

/// `"H-…"` or `"S-…"`, quoted: how the topology names a node.
fn topology_name(node: &NodeInfo) -> String {
    format!("\"{}-{:016x}\"", if node.is_switch { 'S' } else { 'H' }, node.node_guid)
}

/// The width and speed of the link between two nodes: a host link runs as
/// its HCA negotiated, a switch-to-switch link at the fabric's full rate.
fn link_of(cluster: &Cluster, fabric: &Fabric, a: Found, b: Found) -> String {
    match (a, b) {
        (Found::Ca { node, rail }, _) | (_, Found::Ca { node, rail }) => {
            let port = &cluster.nodes[node].hcas[rail].port;
            link_name(port.width, port.lane_speed)
        }
        _ => link_name(fabric.trunk.0, fabric.trunk.1),
    }
}

/// The topology file of a sweep from `start` that found `order` (ibdiagnet
/// saves one with its reports).
pub fn topology(cluster: &Cluster, fabric: &Fabric, start: Found, order: &[Found]) -> String {
    let local = node_info(cluster, fabric, start);
    let mut out =
        format!("#\n# Topology file: generated on {}\n#\n# Initiated from node {:016x} port {:016x}\n", ctime(cluster.now), local.node_guid, local.port_guid);
    let switches = order.iter().rev().filter(|found| matches!(found, Found::Switch(_)));
    let cas = order.iter().rev().filter(|found| matches!(found, Found::Ca { .. }));
    for &at in switches.chain(cas) {
        let node = node_info(cluster, fabric, at);
        out += &format!("\nvendid=0x{MELLANOX_VENDOR:x}\ndevid=0x{:x}\nsysimgguid=0x{:x}\n", node.device_id, node.system_guid);
        let name = topology_name(&node);
        if node.is_switch {
            out += &format!("switchguid=0x{:x}({:x})\n", node.node_guid, node.port_guid);
            out += &format!("Switch\t{} {name}\t\t# \"{}\" enhanced port 0 lid {} lmc 0\n", node.ports, node.description, node.lid);
            for port in 1..=port_count(fabric, at) {
                let Some((peer, peer_port)) = neighbour(cluster, fabric, at, port) else { continue };
                let remote = node_info(cluster, fabric, peer);
                // A CA's port GUID follows its name; a switch's is its node's.
                let remote_guid = if remote.is_switch { String::new() } else { format!("({:x}) ", remote.port_guid) };
                out += &format!(
                    "[{port}]\t{}[{peer_port}]{remote_guid}\t\t# \"{}\" lid {} {}\n",
                    topology_name(&remote),
                    remote.description,
                    remote.lid,
                    link_of(cluster, fabric, at, peer)
                );
            }
        } else {
            out += &format!("caguid=0x{:x}\n", node.node_guid);
            out += &format!("Ca\t{} {name}\t\t# \"{}\"\n", node.ports, node.description);
            if let (Some((peer, peer_port)), Found::Ca { node: host, rail }) = (neighbour(cluster, fabric, at, 1), at) {
                let remote = node_info(cluster, fabric, peer);
                out += &format!(
                    "[{}]({:x}) \t{}[{peer_port}]\t\t# lid {} lmc 0 \"{}\" lid {} {}\n",
                    cluster.nodes[host].hcas[rail].port.number,
                    node.port_guid,
                    topology_name(&remote),
                    node.lid,
                    remote.description,
                    remote.lid,
                    link_of(cluster, fabric, at, peer)
                );
            }
        }
    }
    out
}

/// `-l`, `-H`, `-S`: one line per node, CAs before switches.
fn list(cluster: &Cluster, fabric: &Fabric, order: &[Found], cas: bool, switches: bool) -> String {
    let mut out = String::new();
    for (wanted, kind) in [(cas, "Ca"), (switches, "Switch")] {
        if !wanted {
            continue;
        }
        for &at in order.iter().rev().filter(|found| matches!(found, Found::Switch(_)) == (kind == "Switch")) {
            let node = node_info(cluster, fabric, at);
            out += &format!(
                "{kind}\t : 0x{:016x} ports {} devid 0x{:x} vendid 0x{MELLANOX_VENDOR:x} \"{}\"\n",
                node.node_guid, node.ports, node.device_id, node.description
            );
        }
    }
    out
}

/// The sweep from the local port, or the failure a tool built on
/// libibnetdisc prints when it cannot open the management port (root's
/// alone) or the local port is down.
pub fn discover(invocation: &Invocation, program: &str, ca: Option<&str>) -> Result<(Fabric, Found, Vec<Found>), Output> {
    let cluster = invocation.cluster;
    let local = ca.map(|name| invocation.node.hca(name).is_some()).unwrap_or(true);
    let found = Fabric::of(cluster).filter(|_| local && crate::commands::is_root(invocation.env)).and_then(|fabric| {
        let (start, order) = sweep_from_local(cluster, &fabric, &invocation.node.hostname, ca)?;
        Some((fabric, start, order))
    });
    found.ok_or_else(|| Output {
        stderr: format!("ibwarn: [{}] mad_rpc_open_port: can't open UMAD port ({}:0)\n", pid(invocation), ca.unwrap_or("(null)")),
        stdout: format!("{program}: iberror: failed: discover failed\n\n"),
        status: 255,
        ..Default::default()
    })
}

impl Command for Ibnetdiscover {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut ca, mut file) = (None, None);
        let (mut cas, mut switches, mut listing) = (false, false, false);
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('l') => (listing, cas, switches) = (true, true, true),
                    Some('H') => (listing, cas) = (true, true),
                    Some('S') => (listing, switches) = (true, true),
                    Some('R') => listing = true,
                    Some('C') => ca = value,
                    Some('h') => return Output::error(usage(), 2),
                    _ => {}
                },
                Arg::Positional(path) if file.is_none() => file = Some(path),
                Arg::Positional(_) => {}
                other => return Output::error(crate::commands::options::complaint("ibnetdiscover", &other) + &usage(), 2),
            }
        }
        let view = View::for_command(invocation);
        let path = file.as_deref().map(|file| (file, view.resolve(file)));
        if let Some((file, path)) = &path {
            if view.check_writable(path).is_err() {
                return Output { stdout: format!("ibnetdiscover: iberror: failed: can't open file {file} for writing\n"), status: 255, ..Default::default() };
            }
        }
        let (fabric, start, order) = match discover(invocation, "ibnetdiscover", ca.as_deref()) {
            Ok(found) => found,
            Err(refused) => return refused,
        };
        let cluster = invocation.cluster;
        let text = if listing { list(cluster, &fabric, &order, cas, switches) } else { topology(cluster, &fabric, start, &order) };
        let duration_ms = 200 + 3 * order.len() as u64;
        match path {
            Some((_, path)) => Output {
                duration_ms,
                changes: vec![Change::WriteFile { node: invocation.node.hostname.clone(), path, text, append: false }],
                ..Output::default()
            },
            None => Output { duration_ms, ..Output::ok(text) },
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::fault::{Fault, PortDown};
    use crate::testing::{cluster, run_on_first_node, shell};

    #[test]
    fn the_topology_names_every_link_from_both_ends() {
        let out = run_on_first_node("sudo ibnetdiscover").stdout;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "#");
        assert!(lines[1].starts_with("# Topology file: generated on "), "{out}");
        assert!(lines[3].starts_with("# Initiated from node ") && lines[3].contains(" port "), "{out}");
        assert_eq!(out.matches("\nswitchguid=0x").count(), 12);
        assert_eq!(out.matches("\ncaguid=0x").count(), 16);
        // The first switch block is the last switch found: a spine.
        let first = out.split("\n\n").nth(1).unwrap();
        assert!(first.starts_with("vendid=0x2c9\ndevid=0xd2f2\nsysimgguid=0x"), "{first}");
        assert!(first.contains("\t\t# \"MF0;spine"), "{first}");
        // A leaf's host port and the HCA's own line.
        assert!(out.contains("[1](") && out.contains("\t\t# lid 100 lmc 0 \"MF0;leaf-rail0:MQM9700/U1\" lid 5 4xNDR\n"), "{out}");
        assert!(out.contains("\t\t# \"gpu-001 mlx5_0\" lid 100 4xNDR\n"), "{out}");
        assert!(out.contains("\"[1]\t\t# \"MF0;spine1:MQM9700/U1\" lid 1 4xNDR\n"), "{out}");
        // The local CA is found first, so it is printed last.
        assert!(out.trim_end().ends_with("lid 100 lmc 0 \"MF0;leaf-rail0:MQM9700/U1\" lid 5 4xNDR"), "{out}");
    }

    #[test]
    fn a_down_port_is_not_discovered_and_lists_are_one_line_a_node() {
        let mut cluster = cluster();
        Fault::HcaPortDown { node: "gpu-002".into(), hca: "mlx5_3".into(), state: PortDown::Down }.apply(&mut cluster).unwrap();
        Fault::HcaLinkDegraded { node: "gpu-002".into(), hca: "mlx5_1".into(), rate: None, width: Some(2) }.apply(&mut cluster).unwrap();
        let mut shell = shell(cluster);
        let out = shell.run("sudo ibnetdiscover").stdout();
        assert!(!out.contains("\"gpu-002 mlx5_3\"") && out.contains("\"gpu-002 mlx5_1\" lid 109 2xNDR\n"), "{out}");
        let cas = shell.run("sudo ibnetdiscover -H").stdout();
        assert_eq!(cas.lines().count(), 15);
        assert!(cas.lines().all(|line| line.starts_with("Ca\t : 0x") && line.contains(" ports 1 devid 0x1021 vendid 0x2c9 \"gpu-")), "{cas}");
        let all = shell.run("sudo ibnetdiscover -l").stdout();
        assert!(all.lines().nth(15).unwrap().starts_with("Switch\t : 0x") && all.contains(" ports 65 devid 0xd2f2 vendid 0x2c9 \"MF0;"), "{all}");
        shell.run("sudo ibnetdiscover /tmp/fabric.topo");
        assert!(shell.run("cat /tmp/fabric.topo").stdout().starts_with("#\n# Topology file"));
        let refused = shell.run("ibnetdiscover");
        assert_eq!((refused.status, refused.stdout()), (255, "ibnetdiscover: iberror: failed: discover failed\n\n".to_string()));
    }
}
