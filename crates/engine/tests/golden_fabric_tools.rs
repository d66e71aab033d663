//! Golden tests: the emulated InfiniBand tools against real captures in
//! ../shared/reference/fabric. Each test builds a lab from a preset, then puts
//! the node's HCAs in the captured machine's state (names, part, firmware,
//! GUIDs, LIDs, port states, link layer, rate): the values a real machine
//! differs in. What the tool derives from them (placeholder rates of down
//! ports, RoCE port GUIDs, LIDs of disabled ports, layout, order) must then
//! match the capture line for line.
//!
//! The captured machines often have more HCAs than a preset (12 on the H100
//! RoCE boxes); the test adds HCAs to the node, which the model allows. What
//! the model cannot express is named where it is skipped.

mod common;

use clusterlab_engine::model::fabric::{Hca, LaneSpeed, LinkLayer, PhysState, PortState};
use clusterlab_engine::model::Cluster;
use clusterlab_engine::Session;
use common::expand_tabs;

fn reference(name: &str) -> String {
    common::reference("fabric", name)
}

fn cluster(preset: &str, fabric: &str) -> Cluster {
    common::lab_cluster(preset, &format!("fabric = \"{fabric}\""))
}

fn run(cluster: Cluster, line: &str) -> (String, String, i32) {
    let transcript = Session::new(cluster, "node").run(line);
    (transcript.stdout(), transcript.stderr(), transcript.status)
}

/// Compares line for line, except lines for which `skip` says the model cannot
/// express the captured value. Returns how many lines were skipped.
fn assert_same_lines_except(emulated: &str, captured: &str, skip: impl Fn(&str, &str) -> bool) -> usize {
    let emulated: Vec<&str> = emulated.lines().collect();
    let captured: Vec<&str> = captured.lines().collect();
    let mut skipped = 0;
    for (at, (e, c)) in emulated.iter().zip(&captured).enumerate() {
        if skip(e, c) {
            skipped += 1;
            continue;
        }
        assert_eq!(e, c, "line {} differs", at + 1);
    }
    assert_eq!(emulated.len(), captured.len(), "line counts differ");
    skipped
}

/// One CA as an ibstat capture shows it.
#[derive(Default, Debug)]
struct CapturedCa {
    name: String,
    ca_type: String,
    firmware: String,
    node_guid: u64,
    state: String,
    phys_state: String,
    rate: u32,
    lid: u16,
    sm_lid: u16,
    capability_mask: u32,
    port_guid: u64,
    link_layer: String,
}

fn hex(text: &str) -> u64 {
    u64::from_str_radix(text.trim().trim_start_matches("0x"), 16).expect("hex")
}

fn parse_ibstat(capture: &str) -> Vec<CapturedCa> {
    let mut cas: Vec<CapturedCa> = Vec::new();
    for line in capture.lines() {
        if let Some(name) = line.strip_prefix("CA '") {
            cas.push(CapturedCa { name: name.trim_end_matches('\'').to_string(), ..CapturedCa::default() });
            continue;
        }
        let Some(ca) = cas.last_mut() else { continue };
        let Some((label, value)) = line.trim().split_once(": ") else { continue };
        match label {
            "CA type" => ca.ca_type = value.to_string(),
            "Firmware version" => ca.firmware = value.to_string(),
            "Node GUID" => ca.node_guid = hex(value),
            "State" => ca.state = value.to_string(),
            "Physical state" => ca.phys_state = value.to_string(),
            "Rate" => ca.rate = value.parse().expect("rate"),
            "Base lid" => ca.lid = value.parse().expect("lid"),
            "SM lid" => ca.sm_lid = value.parse().expect("sm lid"),
            "Capability mask" => ca.capability_mask = hex(value) as u32,
            "Port GUID" => ca.port_guid = hex(value),
            "Link layer" => ca.link_layer = value.to_string(),
            _ => {}
        }
    }
    cas
}

/// Puts the node's HCAs in the captured state, adding HCAs when the captured
/// machine has more than the preset.
fn configure(cluster: &mut Cluster, cas: &[CapturedCa]) {
    let hcas = &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).hcas;
    let template = hcas[0].clone();
    hcas.clear();
    for ca in cas {
        let mut hca: Hca = template.clone();
        hca.name = ca.name.clone();
        hca.ca_type = ca.ca_type.clone();
        hca.part_id = ca.ca_type.trim_start_matches("MT").parse().expect("part id");
        hca.firmware = ca.firmware.clone();
        hca.node_guid = ca.node_guid;
        let port = &mut hca.port;
        port.link_layer = if ca.link_layer == "Ethernet" { LinkLayer::Ethernet } else { LinkLayer::InfiniBand };
        port.state = match ca.state.as_str() {
            "Active" => PortState::Active,
            "Down" => PortState::Down,
            "Initializing" => PortState::Initializing,
            other => panic!("state {other}"),
        };
        port.phys_state = match ca.phys_state.as_str() {
            "LinkUp" => PhysState::LinkUp,
            "Disabled" => PhysState::Disabled,
            "Polling" => PhysState::Polling,
            other => panic!("physical state {other}"),
        };
        if port.state == PortState::Active {
            port.width = 4;
            port.lane_speed = LaneSpeed::for_rate(ca.rate, 4).expect("a 4X rate");
        }
        // A disabled IB port shows 65535 and SM lid 0 whatever the model holds.
        let unconfigured = port.link_layer == LinkLayer::InfiniBand && port.phys_state == PhysState::Disabled;
        port.lid = if unconfigured { 7 } else { ca.lid };
        port.sm_lid = if unconfigured { 1 } else { ca.sm_lid };
        port.capability_mask = ca.capability_mask;
        // On RoCE the model holds the NIC's GUID and ibstat derives the
        // EUI-64 interface id; an empty GID (0) or a foreign id stays as is.
        let derived_from_node = {
            let mut probe = port.clone();
            probe.guid = ca.node_guid;
            clusterlab_engine_port_guid(&probe)
        };
        port.guid = if port.link_layer == LinkLayer::Ethernet && derived_from_node == ca.port_guid { ca.node_guid } else { ca.port_guid };
        hcas.push(hca);
    }
}

/// What ibstat prints as the port GUID, read back through the tool itself.
fn clusterlab_engine_port_guid(port: &clusterlab_engine::model::fabric::Port) -> u64 {
    let mut cluster = cluster("hgx-h100", "roce");
    std::rc::Rc::make_mut(&mut cluster.nodes[0]).hcas.truncate(1);
    std::rc::Rc::make_mut(&mut cluster.nodes[0]).hcas[0].port = port.clone();
    let (out, _, _) = run(cluster, "ibstat -p");
    out.lines().next().map_or(0, hex)
}

/// The model has no system image GUID apart from the node GUID; the second
/// function of a dual-port card shares the first one's (captures). Such a
/// line is skipped when both sides are that line.
fn shared_system_image_guid(emulated_line: &str, captured_line: &str) -> bool {
    let label = "System image GUID: ";
    emulated_line.trim_start().starts_with(label) && captured_line.trim_start().starts_with(label)
}

fn ibstat_golden(file: &str, preset: &str, fabric: &str, drop_prompt: bool, tabs_expanded: bool) -> usize {
    let mut captured = reference(file);
    if drop_prompt {
        captured = captured.split_once('\n').expect("a prompt line").1.to_string();
    }
    let cas = parse_ibstat(&captured);
    let mut cluster = cluster(preset, fabric);
    configure(&mut cluster, &cas);
    let (stdout, stderr, status) = run(cluster, "ibstat");
    assert_eq!((status, stderr.as_str()), (0, ""));
    let emulated = if tabs_expanded { expand_tabs(&stdout) } else { stdout };
    let mismatched = |e: &str, c: &str| shared_system_image_guid(e, c) && e != c;
    assert_same_lines_except(&emulated, &captured, mismatched)
}

#[test]
fn ibstat_matches_h100_roce_all_active() {
    // mlx5_2 and the other ConnectX-6 Dx second functions share a system image GUID.
    let skipped = ibstat_golden("ibstat_h100_roce_8x400_all_active.txt", "hgx-h100", "roce", false, false);
    assert!(skipped <= 2);
}

#[test]
fn ibstat_matches_h100_roce_with_two_disabled_ports() {
    let skipped = ibstat_golden("ibstat_h100_roce_2ports_down_disabled.txt", "hgx-h100", "roce", false, false);
    assert!(skipped <= 2);
}

#[test]
fn ibstat_matches_h100_ndr_with_ethernet_ports_down() {
    let skipped = ibstat_golden("ibstat_h100_ndr_ib_8x400_cx6dx_eth_down.txt", "hgx-h100", "infiniband", false, false);
    assert!(skipped <= 2);
}

#[test]
fn ibstat_matches_h100_ndr_with_bluefield3_layout() {
    // Tabs were expanded by the publisher. The BlueField-3 bond's hardware
    // version (1) and RoCE port GUID are derived from its part and GUID.
    ibstat_golden("ibstat_h100_ndr_ib_8x400_bf3.txt", "hgx-h100", "infiniband", false, true);
}

#[test]
fn ibstat_matches_b300_cx8_disabled_ports() {
    // ConnectX-8 down ports: Rate 10, Base lid 65535, SM lid 0. Dual-port
    // CX-7 functions share a system image GUID, which the model lacks.
    ibstat_golden("ibstat_b300_cx8_ports_down_disabled.txt", "hgx-h100", "infiniband", true, true);
}

#[test]
fn ibstat_matches_a100_vf_layout() {
    // mlx5 VFs (MT4126): node, system image and port GUIDs are unrelated on
    // a VF; the model holds one GUID per HCA, so the system image GUIDs are
    // not compared. Everything else is.
    let captured = reference("ibstat_a100_hdr_8x200_vf.txt");
    let cas = parse_ibstat(&captured);
    let mut cluster = cluster("hgx-a100", "infiniband");
    configure(&mut cluster, &cas);
    let (stdout, _, _) = run(cluster, "ibstat");
    let skipped = assert_same_lines_except(&stdout, &captured, |_, line| line.trim_start().starts_with("System image GUID: "));
    assert_eq!(skipped, cas.len());
}

#[test]
fn ibstat_missing_device_panics_like_the_a100_capture() {
    let captured = reference("ibstat_a100_azure_hdr_ibpanic_missing_mlx5_8.txt");
    let (blocks, panic_line) = captured.trim_end().rsplit_once('\n').expect("several lines");
    // The eight CAs that were still there.
    let cas = parse_ibstat(blocks);
    let mut cluster = cluster("hgx-a100", "infiniband");
    configure(&mut cluster, &cas);
    let (stdout, _, status) = run(cluster.clone(), "ibstat");
    assert_eq!(status, 0);
    assert_same_lines_except(&expand_tabs(&stdout), blocks, |_, line| line.trim_start().starts_with("System image GUID: "));
    // The capture's mlx5_8 vanished while ibstat ran; asking for it by name
    // fails the same way. The pid differs.
    let (stdout, stderr, status) = run(cluster, "ibstat mlx5_8");
    assert_eq!((stdout.as_str(), status), ("", 255));
    let shape = |line: &str| line.chars().map(|c| if c.is_ascii_digit() { '9' } else { c }).collect::<String>();
    let pid_free = |line: &str| {
        let (head, tail) = line.split_once("] ").expect("pid");
        format!("{}] {}", head.split('[').next().unwrap(), shape(tail))
    };
    assert_eq!(pid_free(stderr.trim_end()), pid_free(panic_line));
}

#[test]
fn ibstatus_matches_the_a100_azure_capture() {
    // The publisher expanded tabs. Azure VFs' port GUIDs and LIDs are set
    // from the capture; the format (hex LIDs, state codes, rate strings) is
    // the tool's.
    let captured = reference("ibstatus_a100_azure_hdr_8x200.txt");
    let mut cluster = cluster("hgx-a100", "infiniband");
    let mut cas = Vec::new();
    for block in captured.split("\n\n").filter(|block| !block.trim().is_empty()) {
        let mut ca = CapturedCa::default();
        for line in block.lines() {
            if let Some(rest) = line.strip_prefix("Infiniband device '") {
                ca.name = rest.split('\'').next().unwrap().to_string();
            }
            let Some((label, value)) = line.trim().split_once(':') else { continue };
            let value = value.trim();
            match label {
                "default gid" => ca.port_guid = if value == "unknown" { 0 } else { hex(&value[20..].replace(':', "")) },
                "base lid" => ca.lid = hex(value) as u16,
                "sm lid" => ca.sm_lid = hex(value) as u16,
                "rate" => ca.rate = value.split(' ').next().unwrap().parse().unwrap(),
                "link_layer" => ca.link_layer = value.to_string(),
                _ => {}
            }
        }
        ca.ca_type = "MT4124".into();
        ca.state = "Active".into();
        ca.phys_state = "LinkUp".into();
        ca.node_guid = ca.port_guid;
        ca.capability_mask = 0xa651ec48;
        cas.push(ca);
    }
    // The capture's mlx5_8 is an Ethernet VF reporting 40 Gb/sec (4X QDR)
    // while ACTIVE with no GID; the model cannot hold an active port at QDR.
    let qdr_vf = cas.iter().position(|ca| ca.rate == 40);
    let expressible: Vec<CapturedCa> = cas.into_iter().filter(|ca| ca.rate != 40).collect();
    configure(&mut cluster, &expressible);
    let (stdout, _, status) = run(cluster, "ibstatus");
    assert_eq!(status, 0);
    let blocks: Vec<&str> = captured.split_inclusive("\n\n").collect();
    let expected: String = blocks.iter().enumerate().filter(|(at, _)| Some(*at) != qdr_vf).map(|(_, b)| *b).collect();
    assert_same_lines_except(&expand_tabs(&stdout), &expected, |_, _| false);
    assert!(qdr_vf.is_some());
}

#[test]
fn ibv_devinfo_matches_the_cx7_roce_12_hca_capture() {
    let captured = reference("ibv_devinfo_cx7_roce_12hca_mtu1024_portdown.txt");
    let captured = captured.split_once('\n').expect("a prompt line").1;
    let mut cluster = cluster("hgx-h100", "roce");
    let template = cluster.nodes[0].hcas[0].clone();
    let hcas = &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).hcas;
    hcas.clear();
    for block in captured.split("\n\n").filter(|block| !block.trim().is_empty()) {
        let mut hca = template.clone();
        for line in block.lines() {
            let Some((label, value)) = line.trim().split_once(':') else { continue };
            let value = value.trim();
            match label {
                "hca_id" => hca.name = value.to_string(),
                "fw_ver" => hca.firmware = value.to_string(),
                "node_guid" => hca.node_guid = hex(&value.replace(':', "")),
                "vendor_part_id" => hca.part_id = value.parse().unwrap(),
                "board_id" => hca.board_id = value.to_string(),
                "state" if value.starts_with("PORT_DOWN") => {
                    hca.port.state = PortState::Down;
                    hca.port.phys_state = PhysState::Disabled;
                }
                "active_mtu" => hca.port.active_mtu = value.split(' ').next().unwrap().parse().unwrap(),
                _ => {}
            }
        }
        hcas.push(hca);
    }
    let (stdout, _, status) = run(cluster, "ibv_devinfo");
    assert_eq!(status, 0);
    // The four MT_0000000834 cards are dual-port boards whose functions share
    // a system image GUID; the model has none apart from the node GUID.
    let skipped =
        assert_same_lines_except(&stdout, captured, |e, c| e != c && e.starts_with("\tsys_image_guid:\t\t\t") && c.starts_with("\tsys_image_guid:\t\t\t"));
    assert!(skipped <= 4);
    assert!(stdout.ends_with("link_layer:\t\tEthernet\n\n") && captured.ends_with("link_layer:\t\tEthernet\n\n"));
}

#[test]
fn ibdev2netdev_matches_the_dgx_capture_with_two_ports_down() {
    let captured = reference("ibdev2netdev_dgx_10hca_ib_2down.txt");
    let captured = captured.split_once('\n').expect("a prompt line").1;
    let mut cluster = cluster("hgx-h100", "infiniband");
    let template = cluster.nodes[0].hcas[0].clone();
    let hcas = &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).hcas;
    hcas.clear();
    for line in captured.lines() {
        let (name, rest) = line.split_once(" port 1 ==> ").expect("a mapping");
        let (netdev, state) = rest.split_once(' ').expect("a state");
        let mut hca = template.clone();
        hca.name = name.to_string();
        hca.netdev = netdev.to_string();
        if state == "(Down)" {
            hca.port.state = PortState::Down;
            hca.port.phys_state = PhysState::Polling;
        }
        hcas.push(hca);
    }
    let (stdout, _, status) = run(cluster, "ibdev2netdev");
    assert_eq!(status, 0);
    assert_eq!(stdout, captured);
}

/// The counters a perfquery capture block holds, by label.
fn counter(block: &str, label: &str) -> u64 {
    let line = block.lines().find(|line| line.starts_with(&format!("{label}:"))).expect("label");
    line[33..].parse().expect("a number")
}

#[test]
fn perfquery_extended_layout_matches_the_switch_captures() {
    // The captures are switch ports (LID 2052, CapMask 0x5300 with
    // AllPortSelect). The model keeps counts on the HCA side (a leaf port's
    // follow its HCA's), so the HCA port gets the captured values: every
    // line must match except the header's capability masks and the counters
    // the model does not keep (unicast/multicast split, switch relay
    // errors). A leaf port's own header is the capture's, LID aside.
    let captured = reference("perfquery_x_edr_switch_port_xmitdiscards_linkdowned.txt");
    let mut cluster = cluster("hgx-h100", "infiniband");
    let port = &mut std::rc::Rc::make_mut(&mut cluster.nodes[0]).hcas[0].port;
    port.lid = 2052;
    let c = &mut port.counters;
    c.xmit_data = counter(&captured, "PortXmitData");
    c.rcv_data = counter(&captured, "PortRcvData");
    c.xmit_pkts = counter(&captured, "PortXmitPkts");
    c.rcv_pkts = counter(&captured, "PortRcvPkts");
    c.link_downed = counter(&captured, "LinkDownedCounter");
    c.xmit_discards = counter(&captured, "PortXmitDiscards");
    c.xmit_wait = counter(&captured, "PortXmitWait");
    let (stdout, _, status) = run(cluster, "sudo perfquery -x");
    assert_eq!(status, 0);
    let unexpressible = ["# Port extended counters", "PortUnicast", "PortMulticast", "PortRcvSwitchRelayErrors"];
    let skipped = assert_same_lines_except(&stdout, captured.trim_end(), |_, line| unexpressible.iter().any(|p| line.starts_with(p)));
    assert_eq!(skipped, 6);
    // The header differs only in the masks.
    let header = stdout.lines().next().unwrap();
    assert_eq!(header, "# Port extended counters: Lid 2052 port 1 (CapMask: 0x5A00 CapMask2: 0x0000002)");
    let real = captured.lines().next().unwrap();
    assert_eq!(header.replace("0x5A00", "0x5300"), real);
    // LID 5: the rail-0 leaf, behind the four spines.
    let (leaf, _, status) = run(crate::cluster("hgx-h100", "infiniband"), "sudo perfquery -x 5 1");
    assert_eq!(status, 0);
    assert_eq!(leaf.lines().next().unwrap().replace("Lid 5 ", "Lid 1719 "), reference("perfquery_x_edr_switch_2ports_clean.txt").lines().next().unwrap());
    assert_eq!(leaf.lines().count(), 26);
    // Each label is padded with dots to column 33, as in the other capture.
    let clean = reference("perfquery_x_edr_switch_2ports_clean.txt");
    let labels = |text: &str| text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).take(25).map(|l| l[..33].to_string()).collect::<Vec<_>>();
    assert_eq!(labels(&stdout), labels(&clean));
}
