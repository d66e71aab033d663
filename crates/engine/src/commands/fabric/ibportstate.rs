//! `ibportstate LID PORT [query]`: one port's PortInfo as infiniband-diags
//! prints it (rdma-core `infiniband-diags/ibportstate.c`, libibmad's
//! `mad_dump_field`: the name, a colon and dots to column 33, the value).
//! A switch port that is Active is followed by its peer's PortInfo, reached
//! by a directed route from the local port. Only queries are emulated: the
//! set operations answer as a fabric whose switches refuse SMP sets.
//!
//! The ports are the model's: an HCA's own, a leaf's host port mirrors the
//! HCA it is cabled to, switch-to-switch links run at the fabric's full rate
//! and an empty cage polls (`model::switches`).

use crate::commands::fabric::ib_common::{base_lid, common, diag_usage, is_infiniband, open_umad_port, pid, sm_lid, strtol, Lane, Link};
use crate::commands::options::{scan, Arg};
use crate::commands::{Command, Example, Invocation, Output, Signature};
use crate::model::fabric::{LaneSpeed, PhysState, Port, PortState};
use crate::model::switches::{Fabric, Peer};
use crate::model::Cluster;

pub struct Ibportstate;

static SIGNATURE: Signature = Signature {
    name: "ibportstate",
    summary: "query an InfiniBand port's state, LID, width and speeds by LID and port number",
    usage: "ibportstate [options] <dest dr_path|lid|guid> <portnum> [<op>]",
    flags: &[
        common::CONFIG,
        common::CA,
        common::PORT,
        common::DIRECT,
        common::LID,
        common::GUID,
        common::TIMEOUT,
        common::SM_PORT,
        common::SHOW_KEYS,
        common::M_KEY,
        common::PKEY_INDEX,
        common::ERRORS,
        common::VERBOSE,
        common::DEBUG,
        common::HELP,
        common::VERSION,
    ],
    examples: &[
        Example { command: "sudo ibportstate 100 1", description: "the PortInfo of LID 100's port 1 (an HCA: ibstat's Base lid)" },
        Example { command: "sudo ibportstate 5 2", description: "a leaf switch's port 2 and, when it is up, the HCA port at its other end" },
    ],
};

fn usage() -> String {
    let usage = diag_usage(
        &SIGNATURE,
        "<dest dr_path|lid|guid> <portnum> [<op>]",
        &[
            "-C qib0 -P 1 3 1 disable     # by CA name, CA Port Number, lid, physical port number",
            "-C qib0 -P 1 3 1 enable      # by CA name, CA Port Number, lid, physical port number",
            "-D 0 1\t\t\t# (query) by direct route",
            "3 1 reset\t\t\t# by lid",
            "3 1 speed 1\t\t\t# by lid",
            "3 1 width 1\t\t\t# by lid",
            "-D 0 1 lid 0x1234 arm\t\t# by direct route",
        ],
    );
    usage.replacen(
        "\n\nOptions:",
        "\n\nSupported ops: enable, disable, on, off, reset, speed, espeed, fdr10,\n\twidth, query, down, arm, active, vls, mtu, lid, smlid, lmc,\n\tmkey, mkeylease, mkeyprot\n\n\nOptions:",
        1,
    )
}

/// The operations ibportstate knows: those that take no value, then those
/// that take one (`speed 1`).
const OPERATIONS: [&str; 9] = ["enable", "disable", "on", "off", "reset", "query", "down", "arm", "active"];
const WITH_VALUE: [&str; 12] = ["speed", "espeed", "fdr10", "width", "vls", "mtu", "lid", "smlid", "lmc", "mkey", "mkeylease", "mkeyprot"];

/// What answers at a LID: an HCA port (node index, rail) or a switch.
#[derive(Clone, Copy)]
enum Device {
    Ca { node: usize, rail: usize },
    Switch(usize),
}

fn device_at(cluster: &Cluster, fabric: &Fabric, lid: u16) -> Option<Device> {
    let ca = cluster.nodes.iter().enumerate().filter(|(_, node)| node.up(cluster.now)).find_map(|(n, node)| {
        node.hcas.iter().position(|hca| is_infiniband(&hca.port) && hca.port.is_up() && base_lid(&hca.port) == lid).map(|rail| Device::Ca { node: n, rail })
    });
    ca.or_else(|| fabric.switch_with_lid(i64::from(lid)).map(Device::Switch))
}

/// The PortInfo fields ibportstate shows, as libibmad decodes them.
struct PortInfo {
    state: PortState,
    phys: PhysState,
    lid: u16,
    sm_lid: u16,
    width: u8,
    /// The lane as negotiated, or the placeholder a down port reports.
    lane: Lane,
    max_lane: LaneSpeed,
    is_switch: bool,
}

impl PortInfo {
    fn of_hca(port: &Port, link: Link, is_switch: bool, lid: u16, sm: u16) -> PortInfo {
        PortInfo { state: port.state, phys: port.phys_state, lid, sm_lid: sm, width: link.lanes, lane: link.lane, max_lane: port.max_lane_speed, is_switch }
    }

    fn field(name: &str, value: &str) -> String {
        format!("{name}:{}{value}\n", ".".repeat(32usize.saturating_sub(name.len())))
    }

    fn render(&self, show_keys: bool, port_zero: bool) -> String {
        const LANES: &str = "1X or 4X or 2X";
        const SPEEDS: &str = "2.5 Gbps or 5.0 Gbps or 10.0 Gbps";
        let extended = [LaneSpeed::Edr, LaneSpeed::Hdr, LaneSpeed::Ndr];
        let ext_supported: Vec<&str> =
            ["14.0625 Gbps"].into_iter().chain(extended.iter().filter(|speed| **speed <= self.max_lane).map(|speed| ext_name(*speed))).collect();
        let ext_supported = ext_supported.join(" or ");
        let (speed_active, ext_active) = match self.lane {
            Lane::Sdr => ("2.5 Gbps", "No Extended Speed"),
            Lane::Qdr => ("10.0 Gbps", "No Extended Speed"),
            Lane::Negotiated(LaneSpeed::Xdr) => ("10.0 Gbps", "No Extended Speed"),
            Lane::Negotiated(speed) => ("10.0 Gbps", ext_name(speed)),
        };
        let state = match self.state {
            PortState::Down => "Down",
            PortState::Initializing => "Initialize",
            PortState::Armed => "Armed",
            PortState::Active => "Active",
        };
        let mut out = Self::field("LinkState", state);
        out += &Self::field("PhysLinkState", self.phys.label());
        out += &Self::field("Lid", &self.lid.to_string());
        out += &Self::field("SMLid", &self.sm_lid.to_string());
        out += &Self::field("LMC", "0");
        out += &Self::field("LinkWidthSupported", LANES);
        out += &Self::field("LinkWidthEnabled", LANES);
        out += &Self::field("LinkWidthActive", &format!("{}X", self.width));
        out += &Self::field("LinkSpeedSupported", SPEEDS);
        out += &Self::field("LinkSpeedEnabled", SPEEDS);
        out += &Self::field("LinkSpeedActive", speed_active);
        out += &Self::field("LinkSpeedExtSupported", &ext_supported);
        out += &Self::field("LinkSpeedExtEnabled", &ext_supported);
        out += &Self::field("LinkSpeedExtActive", ext_active);
        // XDR ports advertise the second extended-speed field (CapMask2).
        if self.max_lane == LaneSpeed::Xdr {
            let active = if self.lane == Lane::Negotiated(LaneSpeed::Xdr) { "212.5 Gbps" } else { "No Extended Speed 2" };
            out += &Self::field("LinkSpeedExtSupported2", "212.5 Gbps");
            out += &Self::field("LinkSpeedExtEnabled2", "212.5 Gbps");
            out += &Self::field("LinkSpeedExtActive2", active);
        }
        if !self.is_switch || port_zero {
            out += &Self::field("Mkey", if show_keys { "0x0000000000000000" } else { "<not displayed>" });
            out += &Self::field("MkeyLeasePeriod", "0");
            out += &Self::field("ProtectBits", "0");
        }
        out
    }
}

/// libibmad's name of an extended lane speed.
fn ext_name(speed: LaneSpeed) -> &'static str {
    match speed {
        LaneSpeed::Edr => "25.78125 Gbps",
        LaneSpeed::Hdr => "53.125 Gbps",
        LaneSpeed::Ndr | LaneSpeed::Xdr => "106.25 Gbps",
    }
}

/// A switch port up at the fabric's full rate (a link to another switch,
/// or port 0), on the switch with LID `lid`.
fn trunk_port(fabric: &Fabric, lid: u16) -> PortInfo {
    let (width, speed) = fabric.trunk;
    let sm_lid = fabric.subnet_manager().lid;
    PortInfo { state: PortState::Active, phys: PhysState::LinkUp, lid, sm_lid, width, lane: Lane::Negotiated(speed), max_lane: speed, is_switch: true }
}

/// A switch port's PortInfo and what it leads to: the HCA port at its
/// other end, another switch's port, or nothing.
fn switch_port(cluster: &Cluster, fabric: &Fabric, switch: usize, number: usize) -> (PortInfo, Option<(PortInfo, usize)>) {
    let lid = fabric.switches[switch].lid;
    let sm = fabric.subnet_manager().lid;
    let trunk_speed = fabric.trunk.1;
    match fabric.peer(switch, number, cluster.nodes.len()) {
        Peer::Host { node, rail } => match cluster.nodes[node].hcas.get(rail).filter(|hca| is_infiniband(&hca.port)) {
            Some(hca) => {
                let link = Link::of(hca);
                let port = &hca.port;
                let here = PortInfo::of_hca(port, link, true, lid, sm);
                let peer =
                    (port.state == PortState::Active).then(|| (PortInfo::of_hca(port, link, false, base_lid(port), sm_lid(port)), usize::from(port.number)));
                (here, peer)
            }
            None => (PortInfo { lid, ..empty_cage(sm, trunk_speed) }, None),
        },
        Peer::Switch { switch: other, port } => (trunk_port(fabric, lid), Some((trunk_port(fabric, fabric.switches[other].lid), port))),
        Peer::Empty => (PortInfo { lid, ..empty_cage(sm, trunk_speed) }, None),
    }
}

fn empty_cage(sm: u16, max_lane: LaneSpeed) -> PortInfo {
    PortInfo { state: PortState::Down, phys: PhysState::Polling, lid: 0, sm_lid: sm, width: 4, lane: Lane::Sdr, max_lane, is_switch: true }
}

impl Command for Ibportstate {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let (mut ca, mut show_keys, mut words) = (None, false, Vec::new());
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('C') => ca = value,
                    Some('K') => show_keys = true,
                    Some('h') => return Output::error(usage(), 2),
                    _ => {}
                },
                Arg::Positional(word) => words.push(word),
                other => return Output::error(crate::commands::options::complaint("ibportstate", &other) + &usage(), 2),
            }
        }
        if words.len() < 2 {
            return Output::error(usage(), 2);
        }
        let failed = |why: String| Output { stdout: format!("ibportstate: iberror: failed: {why}\n"), status: 255, ..Default::default() };
        if let Err(refused) = open_umad_port(invocation, "ibportstate", ca.as_deref()) {
            return refused;
        }
        let lid = strtol(&words[0]);
        if !(1..=0xbfff).contains(&lid) {
            return failed(format!("can't resolve destination port {}", words[0]));
        }
        let lid = lid as u16;
        let number = usize::try_from(strtol(&words[1])).unwrap_or(usize::MAX);
        // The operations: a query unless a set is asked for.
        let mut operations = words[2..].iter();
        let mut sets = false;
        while let Some(word) = operations.next() {
            if WITH_VALUE.contains(&word.as_str()) {
                if operations.next().is_none() {
                    return failed(format!("{word} requires an additional parameter"));
                }
                sets = true;
            } else if OPERATIONS.contains(&word.as_str()) {
                sets |= word != "query";
            } else {
                return failed(format!("invalid operation: {word}"));
            }
        }
        let cluster = invocation.cluster;
        let unreachable = || Output {
            stderr: format!("ibwarn: [{}] mad_rpc: _do_madrpc failed; dport (Lid {lid})\n", pid(invocation)),
            ..failed("smp query nodeinfo failed".into())
        };
        let Some(fabric) = Fabric::of(cluster) else { return unreachable() };
        let Some(device) = device_at(cluster, &fabric, lid) else { return unreachable() };
        let (is_switch, ports) = match device {
            Device::Ca { .. } => (false, 1),
            Device::Switch(index) => (true, fabric.switches[index].ports),
        };
        let mut out = format!("{}{} PortInfo:\n", if sets { "Initial " } else { "" }, if is_switch { "Switch" } else { "CA/RT" });
        if number > ports || (!is_switch && number == 0) {
            let refused = failed("smp query portinfo failed".into());
            return Output { stdout: out + &refused.stdout, ..refused };
        }
        let (here, peer) = match device {
            Device::Ca { node, rail } => {
                let hca = &cluster.nodes[node].hcas[rail];
                (PortInfo::of_hca(&hca.port, Link::of(hca), false, base_lid(&hca.port), sm_lid(&hca.port)), None)
            }
            Device::Switch(index) if number == 0 => (trunk_port(&fabric, fabric.switches[index].lid), None),
            Device::Switch(index) => switch_port(cluster, &fabric, index, number),
        };
        out += &format!("# Port info: Lid {lid} port {number}\n");
        out += &here.render(show_keys, number == 0);
        if sets {
            // The fabric's switches and HCAs are M_Key protected against
            // hosts: the set is refused after the initial state is shown.
            let refused = failed("smp set portinfo failed".into());
            return Output { stdout: out + &refused.stdout, ..refused };
        }
        if let (true, Some((peer, peer_port))) = (here.state == PortState::Active && is_switch && number > 0, peer) {
            let local = ca
                .as_deref()
                .and_then(|name| invocation.node.hca(name))
                .or_else(|| invocation.node.hcas.iter().find(|hca| is_infiniband(&hca.port) && hca.port.is_up()));
            let slid = local.map_or(0, |hca| base_lid(&hca.port));
            out += "Peer PortInfo:\n";
            out += &format!("# Port info: Lid {lid} DR path slid {slid}; dlid 65535; 0,{number} port {peer_port}\n");
            out += &peer.render(show_keys, false);
        }
        Output { duration_ms: 20, ..Output::ok(out) }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::fault::{Fault, PortDown};
    use crate::testing::{cluster, run_on_first_node, shell};

    #[test]
    fn an_hca_port_is_dumped_field_by_field() {
        let out = run_on_first_node("sudo ibportstate 100 1");
        assert_eq!(out.status, 0, "{}", out.stderr);
        let expected = "CA/RT PortInfo:\n# Port info: Lid 100 port 1\n\
            LinkState:.......................Active\n\
            PhysLinkState:...................LinkUp\n\
            Lid:.............................100\n\
            SMLid:...........................1\n\
            LMC:.............................0\n\
            LinkWidthSupported:..............1X or 4X or 2X\n\
            LinkWidthEnabled:................1X or 4X or 2X\n\
            LinkWidthActive:.................4X\n\
            LinkSpeedSupported:..............2.5 Gbps or 5.0 Gbps or 10.0 Gbps\n\
            LinkSpeedEnabled:................2.5 Gbps or 5.0 Gbps or 10.0 Gbps\n\
            LinkSpeedActive:.................10.0 Gbps\n\
            LinkSpeedExtSupported:...........14.0625 Gbps or 25.78125 Gbps or 53.125 Gbps or 106.25 Gbps\n\
            LinkSpeedExtEnabled:.............14.0625 Gbps or 25.78125 Gbps or 53.125 Gbps or 106.25 Gbps\n\
            LinkSpeedExtActive:..............106.25 Gbps\n\
            Mkey:............................<not displayed>\n\
            MkeyLeasePeriod:.................0\n\
            ProtectBits:.....................0\n";
        assert_eq!(out.stdout, expected);
    }

    #[test]
    fn a_leaf_port_shows_its_hca_peer_and_a_slow_link_shows_at_both_ends() {
        let mut cluster = cluster();
        Fault::HcaLinkDegraded { node: "gpu-002".into(), hca: "mlx5_0".into(), rate: Some(200), width: None }.apply(&mut cluster).unwrap();
        Fault::HcaPortDown { node: "gpu-002".into(), hca: "mlx5_1".into(), state: PortDown::Polling }.apply(&mut cluster).unwrap();
        let mut shell = shell(cluster);
        // gpu-002's mlx5_0 is on port 2 of rail 0's leaf (LID 5).
        let out = shell.run("sudo ibportstate 5 2").stdout();
        assert!(out.starts_with("Switch PortInfo:\n# Port info: Lid 5 port 2\nLinkState:.......................Active\n"), "{out}");
        assert!(!out.split("Peer PortInfo:").next().unwrap().contains("Mkey"), "a switch's external port has no M_Key fields: {out}");
        assert!(out.contains("Peer PortInfo:\n# Port info: Lid 5 DR path slid 100; dlid 65535; 0,2 port 1\n"), "{out}");
        assert_eq!(out.matches("LinkSpeedExtActive:..............53.125 Gbps\n").count(), 2, "{out}");
        assert!(out.contains("Lid:.............................108\n"), "{out}");
        let down = shell.run("sudo ibportstate 6 2").stdout();
        assert!(down.contains("LinkState:.......................Down\nPhysLinkState:...................Polling\n") && !down.contains("Peer"), "{down}");
        let uplink = shell.run("sudo ibportstate 5 33").stdout();
        assert!(
            uplink.contains("Peer PortInfo:\n# Port info: Lid 5 DR path slid 100; dlid 65535; 0,33 port 1\n")
                && uplink.contains("Lid:.............................1\n"),
            "{uplink}"
        );
    }

    #[test]
    fn bad_addresses_and_operations_fail_as_the_tool_does() {
        let lost = run_on_first_node("sudo ibportstate 999 1");
        assert_eq!((lost.status, lost.stdout.as_str()), (255, "ibportstate: iberror: failed: smp query nodeinfo failed\n"));
        assert!(lost.stderr.contains("_do_madrpc failed; dport (Lid 999)"));
        let no_port = run_on_first_node("sudo ibportstate 100 2");
        assert_eq!(no_port.stdout, "CA/RT PortInfo:\nibportstate: iberror: failed: smp query portinfo failed\n");
        assert_eq!(run_on_first_node("sudo ibportstate 100 1 bounce").stdout, "ibportstate: iberror: failed: invalid operation: bounce\n");
        assert_eq!(run_on_first_node("sudo ibportstate 100 1 speed").stdout, "ibportstate: iberror: failed: speed requires an additional parameter\n");
        let usage = run_on_first_node("sudo ibportstate 100");
        assert_eq!(usage.status, 2);
        assert!(usage.stderr.contains("\nSupported ops: enable, disable, on, off, reset, speed, espeed, fdr10,\n\twidth, query,"), "{}", usage.stderr);
        assert!(
            usage.stderr.contains("  --pkey-idx, -Y <idx>    P_Key table index for outgoing SA/GMP MADs \n                          (default 0)\n"),
            "{}",
            usage.stderr
        );
        assert_eq!(run_on_first_node("ibportstate 100 1").status, 255, "root's");
    }
}
