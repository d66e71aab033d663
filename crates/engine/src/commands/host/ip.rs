//! `ip [-br] link|addr [show]`: loopback, the front-end NIC and the HCAs'
//! netdevs (`Hca::netdev`), UP or DOWN from their ports. IPoIB netdevs carry
//! no address; RoCE netdevs get one per rail (`host::rail_ip`). The
//! front-end address is `host::frontend_ip`. Layout of iproute2's brief
//! mode (`%-16s %-14s`), and a compact form of the full view.

use crate::commands::{Command, Example, Invocation, Output, Signature};
use crate::model::change::Change;
use crate::model::fabric::{Hca, LinkLayer};
use crate::model::network::{frontend_ip, frontend_mac, rail_ip, FRONTEND_NIC};
use crate::model::Node;

pub struct Ip;

static SIGNATURE: Signature = Signature {
    name: "ip",
    summary: "show network interfaces and addresses",
    usage: "ip [-br] [-4] link|addr [show [DEV]]\n       ip link set [dev] DEV mtu MTU",
    flags: &[],
    examples: &[
        Example { command: "ip -br link", description: "every interface and whether its link is up" },
        Example { command: "ip -br addr", description: "every interface's addresses" },
        Example { command: "ip link | grep mtu", description: "each interface's MTU (RoCE's active MTU follows its netdev's)" },
    ],
};

pub(crate) struct Iface {
    pub name: String,
    pub up: bool,
    pub loopback: bool,
    pub mac: String,
    pub addrs: Vec<String>,
    pub mtu: u32,
}

fn hca_mac(hca: &Hca) -> String {
    let g = hca.port.guid;
    if hca.port.link_layer == LinkLayer::Ethernet {
        return crate::model::network::mac(g >> 40, g);
    }
    let guid: Vec<String> = (0..8).rev().map(|i| format!("{:02x}", (g >> (i * 8)) & 0xff)).collect();
    format!("00:00:10:49:fe:80:00:00:00:00:00:00:{}", guid.join(":"))
}

pub(crate) fn interfaces(node: &Node) -> Vec<Iface> {
    let mtu = |name: &str, default: u32| node.netdev_mtus.iter().find(|(set, _)| set == name).map_or(default, |(_, mtu)| *mtu);
    let mut list = vec![
        Iface { name: "lo".into(), up: true, loopback: true, mac: "00:00:00:00:00:00".into(), addrs: vec!["127.0.0.1/8".into()], mtu: mtu("lo", 65536) },
        Iface {
            name: FRONTEND_NIC.into(),
            up: true,
            loopback: false,
            mac: frontend_mac(node),
            addrs: vec![format!("{}/16", frontend_ip(&node.hostname))],
            mtu: mtu(FRONTEND_NIC, 1500),
        },
    ];
    for (rail, hca) in node.hcas.iter().enumerate() {
        let roce = hca.port.link_layer == LinkLayer::Ethernet;
        list.push(Iface {
            name: hca.netdev.clone(),
            up: hca.port.is_up(),
            loopback: false,
            mac: hca_mac(hca),
            addrs: if roce { vec![format!("{}/24", rail_ip(&node.hostname, rail))] } else { Vec::new() },
            mtu: hca.port.netdev_mtu,
        });
    }
    list
}

/// The MTUs each kind of netdev takes: mlx5's Ethernet ports (the RoCE
/// rails and the front-end NIC) up to 9978, IPoIB in datagram mode its
/// 4092, loopback up to 64 KiB; 68 is IPv4's minimum.
fn mtu_bounds(name: &str, hca: Option<&Hca>) -> (u32, u32) {
    match hca {
        Some(hca) if hca.port.link_layer == LinkLayer::InfiniBand => (68, crate::model::fabric::IPOIB_NETDEV_MTU),
        None if name == "lo" => (68, 65536),
        _ => (68, 9978),
    }
}

/// `ip link set [dev] DEV mtu N`: root only, as the kernel's netlink is.
fn set_link(invocation: &Invocation, words: &[&str]) -> Output {
    let words: Vec<&str> = words.iter().copied().filter(|w| *w != "dev").collect();
    let Some((&name, settings)) = words.split_first() else {
        return Output::error("Not enough information: \"dev\" argument is required.\n", 255);
    };
    let node = invocation.node;
    if interfaces(node).iter().all(|iface| iface.name != name) {
        return Output::error(format!("Cannot find device \"{name}\"\n"), 1);
    }
    let mut mtu = None;
    let mut pairs = settings.iter();
    while let Some(&key) = pairs.next() {
        match key {
            "mtu" => match pairs.next() {
                Some(value) => match value.parse::<u32>() {
                    Ok(value) => mtu = Some(value),
                    Err(_) => return Output::error(format!("Error: argument \"{value}\" is wrong: Invalid \"mtu\" value\n\n"), 255),
                },
                None => return Output::error("Command line is not complete. Try option \"help\"\n", 255),
            },
            "up" | "down" => {}
            other => return Output::error(format!("Error: either \"dev\" is duplicate, or \"{other}\" is a garbage.\n"), 255),
        }
    }
    if !crate::commands::is_root(invocation.env) {
        return Output::error("RTNETLINK answers: Operation not permitted\n", 2);
    }
    let Some(mtu) = mtu else { return Output::ok("") };
    let hca = node.hcas.iter().find(|hca| hca.netdev == name);
    let (least, most) = mtu_bounds(name, hca);
    if mtu > most {
        return Output::error("Error: mtu greater than device maximum.\n", 2);
    }
    if mtu < least {
        return Output::error("Error: mtu less than device minimum.\n", 2);
    }
    Output { changes: vec![Change::SetNetdevMtu { node: node.hostname.clone(), netdev: name.to_string(), mtu }], ..Output::ok("") }
}

fn flags(iface: &Iface) -> &'static str {
    match (iface.loopback, iface.up) {
        (true, _) => "<LOOPBACK,UP,LOWER_UP>",
        (false, true) => "<BROADCAST,MULTICAST,UP,LOWER_UP>",
        (false, false) => "<NO-CARRIER,BROADCAST,MULTICAST,UP>",
    }
}

fn state(iface: &Iface) -> &'static str {
    match (iface.loopback, iface.up) {
        (true, _) => "UNKNOWN",
        (false, true) => "UP",
        (false, false) => "DOWN",
    }
}

impl Command for Ip {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let mut brief = false;
        let mut words: Vec<&str> = Vec::new();
        for arg in invocation.args() {
            match arg.as_str() {
                "-br" | "-brief" | "--brief" => brief = true,
                "-4" | "-6" | "-c" | "-color" | "--color" | "-d" | "-s" => {}
                flag if flag.starts_with('-') => return Output::error(format!("Option \"{flag}\" is unknown, try \"ip -help\".\n"), 255),
                word => words.push(word),
            }
        }
        let Some(&object) = words.first() else {
            return Output::error("Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\nwhere  OBJECT := { address | link | route | neigh | ... }\n", 255);
        };
        let is = |full: &str| !object.is_empty() && full.starts_with(object);
        let addresses = if is("address") || object == "addr" {
            true
        } else if is("link") {
            false
        } else {
            return Output::error(format!("Object \"{object}\" is unknown, try \"ip help\".\n"), 255);
        };
        let mut rest = &words[1..];
        if !addresses && rest.first() == Some(&"set") {
            return set_link(invocation, &rest[1..]);
        }
        if let Some((&verb, tail)) = rest.split_first() {
            if matches!(verb, "show" | "list" | "ls" | "sh") {
                rest = tail;
            } else if !matches!(verb, "dev") && !rest.is_empty() && interfaces(invocation.node).iter().all(|i| i.name != verb) {
                return Output::error(format!("Command \"{verb}\" is unknown, try \"ip {object} help\".\n"), 255);
            }
        }
        let wanted = rest.iter().rfind(|w| **w != "dev").copied();
        // The kernel's interface index: its place among all of them.
        let list: Vec<(usize, Iface)> = interfaces(invocation.node).into_iter().enumerate().filter(|(_, i)| wanted.is_none_or(|w| w == i.name)).collect();
        if let (Some(name), true) = (wanted, list.is_empty()) {
            return Output::error(format!("Device \"{name}\" does not exist.\n"), 1);
        }
        let mut out = String::new();
        for (index, iface) in &list {
            if brief {
                out += &format!("{:<16} {:<14} ", iface.name, state(iface));
                if addresses {
                    out += &iface.addrs.iter().map(|a| format!("{a} ")).collect::<String>();
                } else {
                    out += &format!("{:<17} {} ", iface.mac, flags(iface));
                }
                out.push('\n');
                continue;
            }
            let qdisc = if iface.loopback { "noqueue" } else { "mq" };
            // `ip link` says the link mode; `ip addr` does not.
            let mode = if addresses { "" } else { "mode DEFAULT " };
            out += &format!(
                "{}: {}: {} mtu {} qdisc {qdisc} state {} {mode}group default qlen 1000\n",
                index + 1,
                iface.name,
                flags(iface),
                iface.mtu,
                state(iface)
            );
            let kind = if iface.loopback {
                "loopback"
            } else if iface.mac.len() > 17 {
                "infiniband"
            } else {
                "ether"
            };
            let broadcast = if kind == "infiniband" {
                "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff"
            } else if iface.loopback {
                "00:00:00:00:00:00"
            } else {
                "ff:ff:ff:ff:ff:ff"
            };
            out += &format!("    link/{kind} {} brd {broadcast}\n", iface.mac);
            if addresses {
                for addr in &iface.addrs {
                    let scope = if iface.loopback { "host" } else { "global" };
                    out += &format!("    inet {addr} scope {scope} {}\n       valid_lft forever preferred_lft forever\n", iface.name);
                }
            }
        }
        Output::ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_on_first_node;

    #[test]
    fn brief_views() {
        let out = run_on_first_node("ip -br link").stdout;
        assert!(out.starts_with("lo               UNKNOWN        00:00:00:00:00:00 <LOOPBACK,UP,LOWER_UP> \n"), "{out}");
        assert!(out.contains("\nibp24s0          UP             00:00:10:49:fe:80:"));
        let addr = run_on_first_node("ip -br addr").stdout;
        assert!(addr.contains("lo               UNKNOWN        127.0.0.1/8 \n"), "{addr}");
        assert!(addr.contains("enp170s0f0np0    UP             10.1.0.2/16 \n"));
        assert_eq!(run_on_first_node("ip -br addr show dev ibp24s0").stdout.lines().count(), 1);
        assert_eq!(run_on_first_node("ip addr show nope").status, 1);
        assert_eq!(run_on_first_node("ip bogus").status, 255);
        assert!(run_on_first_node("ip a").stdout.contains("    inet 10.1.0.2/16 scope global enp170s0f0np0\n"));
    }

    #[test]
    fn setting_an_mtu_needs_root_and_a_value_the_device_takes() {
        assert_eq!(run_on_first_node("ip link set dev ibp24s0 mtu 2044").stderr, "RTNETLINK answers: Operation not permitted\n");
        assert_eq!(run_on_first_node("sudo ip link set dev ibp24s0 mtu 9000").stderr, "Error: mtu greater than device maximum.\n");
        assert_eq!(run_on_first_node("sudo ip link set nope mtu 9000").stderr, "Cannot find device \"nope\"\n");
        assert_eq!(run_on_first_node("sudo ip link set dev ibp24s0 mtu 2044").status, 0);
    }

    #[test]
    fn the_front_end_nic_and_loopback_take_their_new_mtu() {
        let mut shell = crate::testing::shell(crate::testing::cluster());
        assert_eq!(shell.run("sudo ip link set enp170s0f0np0 mtu 9000").status, 0);
        assert!(shell.run("ip link show enp170s0f0np0").stdout().contains(" mtu 9000 "));
        assert_eq!(shell.run("sudo ip link set lo mtu 70000").stderr(), "Error: mtu greater than device maximum.\n");
        assert_eq!(shell.run("sudo ip link set dev lo mtu 1500").status, 0);
        assert!(shell.run("ip link show lo").stdout().contains(" mtu 1500 "));
    }

    #[test]
    fn on_roce_the_active_mtu_follows_the_netdev() {
        let mut shell = crate::testing::roce_session("[[faults]]\nkind = \"hca-mtu\"\nnode = \"gpu-001\"\nhca = \"mlx5_2\"\nmtu = 1024\n");
        let netdev = shell.cluster.nodes[0].hcas[2].netdev.clone();
        assert!(shell.run(&format!("ip link show {netdev}")).stdout().contains(" mtu 1500 "));
        assert!(shell.run("ibv_devinfo -d mlx5_2").stdout().contains("active_mtu:\t\t1024 (3)"));
        assert_eq!(shell.run(&format!("sudo ip link set dev {netdev} mtu 9000")).status, 0);
        assert!(shell.run("ibv_devinfo -d mlx5_2").stdout().contains("active_mtu:\t\t4096 (5)"));
        assert!(shell.cluster.injected.iter().all(|injected| injected.repaired), "the lost setting is back");
    }
}
