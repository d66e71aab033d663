//! `ethtool DEV`, `ethtool -i DEV` and `ethtool -S DEV`: a netdev's link
//! settings, its driver, and its driver's statistics. The HCAs' netdevs
//! are mlx5's: a RoCE port's statistics are its Ethernet, per-priority and
//! RDMA counters (`fabric::roce`), with pause counters only for the
//! priorities PFC is on for, as mlx5 lists them. Wake-on-LAN is root's to
//! read: for anyone else ethtool says so on stderr and goes on.
//!
//! `-m` reads the port's module EEPROM over netlink, root's alone. The
//! rails' modules are OSFP (SFF-8024 id 0x19), which ethtool 5.16 cannot
//! decode (OSFP came in 5.17): it prints the lower page as hex, as on
//! Ubuntu 22.04. The module is the passive copper OSFP `mlxlink -m` names:
//! CMIS 4.0, flat memory (no monitors), ModuleReady, one 400GAUI-8
//! application.

use crate::commands::fabric::roce::RoceCounters;
use crate::commands::host::ip::interfaces;
use crate::commands::{is_root, Command, Example, Flag, Invocation, Output, Signature};
use crate::model::fabric::{Hca, LinkLayer};

pub struct Ethtool;

static SIGNATURE: Signature = Signature {
    name: "ethtool",
    summary: "show a network interface's link settings, driver and statistics",
    usage: "ethtool [-i|-S|-m] DEVNAME",
    flags: &[
        Flag { short: Some('i'), long: Some("driver"), value: None, help: "Show driver information" },
        Flag { short: Some('S'), long: Some("statistics"), value: None, help: "Show adapter statistics" },
        Flag { short: Some('m'), long: Some("module-info"), value: None, help: "Query/Decode Module EEPROM information and optical diagnostics if available" },
        Flag { short: Some('h'), long: Some("help"), value: None, help: "Show this help" },
    ],
    examples: &[
        Example { command: "ethtool -S enp24s0np0 | grep -E 'prio3|discard'", description: "RoCE's priority: pause frames each way and drops" },
        Example { command: "ethtool enp24s0np0", description: "speed, duplex and whether the link is detected" },
        Example { command: "ethtool -i enp24s0np0", description: "the driver, its firmware and the PCI address" },
    ],
};

/// The link modes a ConnectX-7 Ethernet port lists, in the kernel's bit order.
const LINK_MODES: &[&str] = &[
    "100000baseKR/Full",
    "100000baseSR/Full",
    "100000baseLR_ER_FR/Full",
    "100000baseCR/Full",
    "100000baseDR/Full",
    "200000baseKR2/Full",
    "200000baseSR2/Full",
    "200000baseLR2_ER2_FR2/Full",
    "200000baseDR2/Full",
    "200000baseCR2/Full",
    "400000baseKR4/Full",
    "400000baseSR4/Full",
    "400000baseLR4_ER4_FR4/Full",
    "400000baseDR4/Full",
    "400000baseCR4/Full",
];

fn modes() -> String {
    LINK_MODES.join("\n\t                        ")
}

fn settings(name: &str, hca: Option<&Hca>, root: bool) -> (String, String) {
    let ipoib = hca.is_some_and(|hca| hca.port.link_layer == LinkLayer::InfiniBand);
    let (up, gbps) = match hca {
        Some(hca) => (hca.port.is_up(), hca.port.rate_gbps()),
        None => (true, 100),
    };
    let mut out = format!("Settings for {name}:\n");
    if ipoib {
        out += "\tSupported ports: [  ]\n\tSupported link modes:   Not reported\n\tSupported pause frame use: No\n\tSupports auto-negotiation: No\n\tSupported FEC modes: Not reported\n\tAdvertised link modes:  Not reported\n\tAdvertised pause frame use: No\n\tAdvertised auto-negotiation: No\n\tAdvertised FEC modes: Not reported\n";
    } else {
        let modes = modes();
        out += &format!("\tSupported ports: [ Backplane ]\n\tSupported link modes:   {modes}\n\tSupported pause frame use: Symmetric\n\tSupports auto-negotiation: Yes\n\tSupported FEC modes: None\t RS\t BASER\t LLRS\n\tAdvertised link modes:  {modes}\n\tAdvertised pause frame use: No\n\tAdvertised auto-negotiation: Yes\n\tAdvertised FEC modes: RS\n");
    }
    if up {
        out += &format!("\tSpeed: {}Mb/s\n\tDuplex: Full\n", gbps * 1000);
    } else {
        out += "\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n";
    }
    out += if ipoib { "\tAuto-negotiation: off\n\tPort: Other\n\tPHYAD: 255\n" } else { "\tAuto-negotiation: on\n\tPort: Direct Attach Copper\n\tPHYAD: 0\n" };
    out += "\tTransceiver: internal\n";
    let mut stderr = String::new();
    if root {
        out += "\tSupports Wake-on: d\n\tWake-on: d\n";
    } else {
        stderr = "netlink error: Operation not permitted\n".to_string();
    }
    out += "        Current message level: 0x00000004 (4)\n                               link\n";
    out += &format!("\tLink detected: {}\n", if up { "yes" } else { "no" });
    (out, stderr)
}

/// The module's lower page (bytes 0-127), CMIS 4.0: identifier, revision,
/// flat memory, ModuleReady; passive copper media; one application
/// (400GAUI-8 C2M host, copper media, 8 lanes each way), then the end mark.
fn lower_page() -> [u8; 128] {
    let mut page = [0u8; 128];
    page[..4].copy_from_slice(&[0x19, 0x40, 0x80, 0x06]);
    page[0x55..0x5b].copy_from_slice(&[0x03, 0x11, 0x01, 0x88, 0x01, 0xff]);
    page
}

/// `ethtool -m DEV`: netlink's answer (root's alone; an IPoIB netdev has no
/// module to read), then 5.16's hex dump of a module it cannot decode.
fn module_eeprom(hca: Option<&Hca>, root: bool) -> Output {
    if !root {
        return Output::error("netlink error: Operation not permitted\n", 1);
    }
    if !hca.is_some_and(|hca| hca.port.link_layer == LinkLayer::Ethernet) {
        return Output::error("netlink error: Operation not supported\n", 1);
    }
    let mut out = String::from("Offset\t\tValues\n------\t\t------\n");
    for (row, bytes) in lower_page().chunks(16).enumerate() {
        let hex: String = bytes.iter().map(|byte| format!("{byte:02x} ")).collect();
        out += &format!("0x{:04x}:\t\t{hex}\n", row * 16);
    }
    Output::ok(out)
}

impl Command for Ethtool {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut mode = None;
        let mut name = None;
        for arg in invocation.args() {
            match arg.as_str() {
                "-i" | "--driver" => mode = Some('i'),
                "-S" | "--statistics" => mode = Some('S'),
                "-m" | "--module-info" | "--dump-module-eeprom" => mode = Some('m'),
                "-h" | "--help" => return Output::ok(format!("ethtool version 5.16\nUsage:\n        {}\n", SIGNATURE.usage)),
                flag if flag.starts_with('-') => return Output::error("ethtool: bad command line argument(s)\nFor more information run ethtool -h\n", 1),
                operand if name.is_none() => name = Some(operand.to_string()),
                _ => return Output::error("ethtool: bad command line argument(s)\nFor more information run ethtool -h\n", 1),
            }
        }
        let Some(name) = name else { return Output::error("ethtool: bad command line argument(s)\nFor more information run ethtool -h\n", 1) };
        let node = invocation.node;
        let Some(iface) = interfaces(node).into_iter().find(|iface| iface.name == name) else {
            return match mode {
                Some('i') => Output::error("Cannot get driver information: No such device\n", 71),
                Some(_) => Output::error("Cannot get stats strings information: No such device\n", 96),
                None => Output::error("netlink error: no device matches name (offset 24)\nnetlink error: No such device\n", 1),
            };
        };
        let hca = node.hcas.iter().find(|hca| hca.netdev == name);
        if mode == Some('m') {
            return module_eeprom(hca, is_root(invocation.env));
        }
        match mode {
            None if iface.loopback => Output::ok(format!("Settings for {name}:\n\tLink detected: yes\n")),
            None => {
                let (stdout, stderr) = settings(&name, hca, is_root(invocation.env));
                Output { stderr, ..Output::ok(stdout) }
            }
            Some('i') if iface.loopback => Output::error("Cannot get driver information: Operation not supported\n", 71),
            Some('i') => {
                let (firmware, board, bus) = match hca {
                    Some(hca) => (hca.firmware.clone(), hca.board_id.clone(), hca.bus_id.clone()),
                    None => ("22.39.1002".to_string(), "MT_0000000359".to_string(), "0000:aa:00.0".to_string()),
                };
                let driver = if hca.is_some_and(|hca| hca.port.link_layer == LinkLayer::InfiniBand) { "mlx5_core[ib_ipoib]" } else { "mlx5_core" };
                Output::ok(format!(
                    "driver: {driver}\nversion: {}\nfirmware-version: {firmware} ({board})\nexpansion-rom-version: \nbus-info: {bus}\nsupports-statistics: yes\nsupports-test: yes\nsupports-eeprom-access: no\nsupports-register-dump: no\nsupports-priv-flags: yes\n",
                    crate::model::node::KERNEL_RELEASE
                ))
            }
            Some(_) if iface.loopback => Output::error("no stats available\n", 94),
            Some(_) => {
                let (counters, pfc, mtu) = match hca {
                    Some(hca) => (RoceCounters::of(invocation.cluster, node, hca), hca.port.pfc_enabled, hca.port.active_mtu),
                    // The front-end NIC: the kernel's traffic only.
                    None => {
                        let up = (invocation.cluster.now - node.booted_at).max(0) as u64;
                        (RoceCounters { kernel_rx_packets: up * 40, kernel_tx_packets: up * 31, ..RoceCounters::default() }, 0, 1500)
                    }
                };
                let mut list = counters.ethtool(pfc, mtu);
                // IPoIB's netdev has mlx5's software and queue counters, no Ethernet port behind it.
                if hca.is_some_and(|hca| hca.port.link_layer == LinkLayer::InfiniBand) {
                    list.truncate(list.iter().position(|(name, _)| name == "rx_if_down_packets").map_or(list.len(), |at| at + 1));
                }
                let lines: String = list.into_iter().map(|(name, value)| format!("     {name}: {value}\n")).collect();
                Output::ok(format!("NIC statistics:\n{lines}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::roce_session;

    #[test]
    fn a_port_without_pfc_drops_and_never_pauses() {
        let mut shell = roce_session("[[faults]]\nkind = \"hca-pfc-off\"\nnode = \"gpu-001\"\nhca = \"mlx5_2\"\n");
        let bad = shell.cluster.nodes[0].hcas[2].netdev.clone();
        let good = shell.cluster.nodes[0].hcas[1].netdev.clone();
        shell.run("NCCL_DEBUG=WARN srun -N2 --ntasks-per-node=8 all_reduce_perf -b 1G -e 8G -f 2 -g 1 > /dev/null");
        let good_stats = shell.run(&format!("ethtool -S {good}")).stdout();
        let bad_stats = shell.run(&format!("ethtool -S {bad}")).stdout();
        assert!(good_stats.starts_with("NIC statistics:\n     rx_packets: "), "{good_stats}");
        assert!(good_stats.contains("     rx_discards_phy: 0\n"));
        assert!(good_stats.contains("     tx_prio3_pause: "));
        assert!(!bad_stats.contains("prio3_pause"), "no pause counters where PFC is off");
        let discards: u64 = bad_stats.lines().find_map(|l| l.strip_prefix("     rx_discards_phy: ")).unwrap().parse().unwrap();
        assert!(discards > 1000, "{discards}");
        let settings = shell.run(&format!("ethtool {good}"));
        assert!(settings.stdout().contains("\tSpeed: 400000Mb/s\n\tDuplex: Full\n"));
        assert_eq!(settings.stderr(), "netlink error: Operation not permitted\n");
        assert!(shell.run(&format!("ethtool -i {good}")).stdout().starts_with("driver: mlx5_core\nversion: "));
        let module = shell.run(&format!("sudo ethtool -m {good}")).stdout();
        assert!(module.starts_with("Offset\t\tValues\n------\t\t------\n0x0000:\t\t19 40 80 06 00 "), "{module}");
        assert!(module.contains("\n0x0050:\t\t00 00 00 00 00 03 11 01 88 01 ff 00 00 00 00 00 \n") && module.lines().count() == 10, "{module}");
        assert_eq!(shell.run(&format!("ethtool -m {good}")).stderr(), "netlink error: Operation not permitted\n");
        assert_eq!(crate::testing::run_on_first_node("sudo ethtool -m ibp24s0").stderr, "netlink error: Operation not supported\n");
        let ipoib = crate::testing::run_on_first_node("ethtool -S ibp24s0").stdout;
        assert!(ipoib.ends_with("     rx_if_down_packets: 0\n") && !ipoib.contains("_phy"), "{ipoib}");
    }
}
