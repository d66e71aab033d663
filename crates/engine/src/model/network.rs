//! The node's deterministic network identities, part of the model so that
//! every view agrees (ip, ping, kubectl, /etc/hosts, NCCL's and the job's logs): front-end and rail addresses, MAC addresses.

use crate::model::Node;
use crate::rng::stable_hash;

/// A number that names the node: its hostname's trailing number, else a hash.
fn host_number(hostname: &str) -> u64 {
    let digits = hostname.len() - hostname.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    hostname[hostname.len() - digits..].parse::<u64>().ok().filter(|_| digits <= 6).unwrap_or_else(|| stable_hash(hostname.as_bytes()) % 60_000)
}

/// The front-end (management) address, `10.1.X.Y`, unique per node number.
/// The management host, on the front-end network: it runs the cluster's
/// Prometheus. Not a node: nothing but its services can be reached.
pub const MONITOR_HOST: &str = "mgmt-01";
pub const MONITOR_IP: &str = "10.1.255.10";

pub fn frontend_ip(hostname: &str) -> String {
    let n = host_number(hostname);
    format!("10.1.{}.{}", n / 250 % 256, n % 250 + 1)
}

/// The node's BMC on the out-of-band network, `10.2.X.Y`, named `NODE-bmc`.
pub fn bmc_ip(hostname: &str) -> String {
    let n = host_number(hostname);
    format!("10.2.{}.{}", n / 250 % 256, n % 250 + 1)
}

/// The BMC's host name for `hostname`.
pub fn bmc_name(hostname: &str) -> String {
    format!("{hostname}-bmc")
}

/// The front-end NIC, as `ip` names it.
pub const FRONTEND_NIC: &str = "enp170s0f0np0";

/// The address of RoCE netdev `rail` (one subnet per rail), as its four
/// bytes: a RoCE GID carries them.
pub fn rail_ipv4(hostname: &str, rail: usize) -> [u8; 4] {
    let n = host_number(hostname);
    [10, (100 + rail) as u8, (n / 250 % 256) as u8, (n % 250 + 1) as u8]
}

/// The address of RoCE netdev `rail`, dotted.
pub fn rail_ip(hostname: &str, rail: usize) -> String {
    let [a, b, c, d] = rail_ipv4(hostname, rail);
    format!("{a}.{b}.{c}.{d}")
}

/// A MAC address from a seed, with the vendor bytes given.
pub fn mac(oui: u64, low: u64) -> String {
    let value = (oui << 24) | (low & 0xff_ffff);
    let bytes: Vec<String> = (0..6).rev().map(|i| format!("{:02x}", (value >> (i * 8)) & 0xff)).collect();
    bytes.join(":")
}

/// The node's front-end MAC.
pub fn frontend_mac(node: &Node) -> String {
    mac(0x94_6d_ae, stable_hash(node.hostname.as_bytes()))
}

/// Where the node image keeps its network configuration: netplan, read
/// at every boot (and by `netplan apply`).
pub const NETPLAN_FILE: &str = "/etc/netplan/01-netcfg.yaml";

/// The netplan file the node was installed with: the front-end NIC and,
/// on RoCE, each rail with its address and jumbo frames, except a rail
/// whose lost MTU is a fault of the lab (`hca-mtu`): that one was
/// installed at 1500, so a runtime fix lasts only until the next boot.
pub fn netplan_installed(cluster: &super::Cluster, node: &super::Node) -> String {
    let mut out = format!(
        "# Installed by the node image; netplan applies it at boot.\nnetwork:\n  version: 2\n  renderer: networkd\n  ethernets:\n    {FRONTEND_NIC}:\n      addresses: [{}/16]\n",
        frontend_ip(&node.hostname)
    );
    for (rail, hca) in node.hcas.iter().enumerate().filter(|(_, hca)| hca.port.link_layer == super::fabric::LinkLayer::Ethernet) {
        let lost = cluster
            .injected
            .iter()
            .any(|injected| matches!(&injected.fault, super::fault::Fault::HcaMtu { node: on, hca: name, .. } if *on == node.hostname && *name == hca.name));
        let mtu = if lost { 1500 } else { super::fabric::ROCE_NETDEV_MTU };
        out += &format!("    {}:\n      mtu: {mtu}\n      addresses: [{}/24]\n", hca.netdev, rail_ip(&node.hostname, rail));
    }
    out
}

/// The netplan file as it is now: the trainee's, if root rewrote it.
pub fn netplan_text(cluster: &super::Cluster, node: &super::Node) -> String {
    node.files.get(NETPLAN_FILE).cloned().unwrap_or_else(|| netplan_installed(cluster, node))
}

/// The MTU the node's netplan sets on each interface it names, now.
pub fn configured_mtus(cluster: &super::Cluster, node: &super::Node) -> Vec<(String, u32)> {
    netplan_mtus(&netplan_text(cluster, node))
}

/// The MTU netplan sets on each interface it names (`mtu:` under an
/// interface of `ethernets:`); an interface without one keeps the
/// kernel's default, 1500. Lines it cannot read are skipped.
pub fn netplan_mtus(text: &str) -> Vec<(String, u32)> {
    let mut mtus: Vec<(String, u32)> = Vec::new();
    let mut interface: Option<(String, usize)> = None;
    let mut in_ethernets: Option<usize> = None;
    for line in text.lines() {
        let body = line.split('#').next().unwrap_or("").trim_end();
        let trimmed = body.trim_start();
        if trimmed.is_empty() {
            continue;
        }
        let indent = body.len() - trimmed.len();
        if trimmed == "ethernets:" {
            in_ethernets = Some(indent);
            interface = None;
            continue;
        }
        match in_ethernets {
            Some(level) if indent <= level => {
                in_ethernets = None;
                interface = None;
                continue;
            }
            Some(_) => {}
            None => continue,
        }
        if let Some(name) = trimmed.strip_suffix(':').filter(|name| !name.contains(' ')) {
            if interface.as_ref().is_none_or(|(_, level)| indent <= *level) {
                interface = Some((name.to_string(), indent));
                mtus.retain(|(n, _)| n != name);
                mtus.push((name.to_string(), 1500));
                continue;
            }
        }
        if let (Some((name, level)), Some(value)) = (&interface, trimmed.strip_prefix("mtu:")) {
            if indent > *level {
                if let Ok(mtu) = value.trim().parse::<u32>() {
                    if let Some(entry) = mtus.iter_mut().find(|(n, _)| n == name) {
                        entry.1 = mtu;
                    }
                }
            }
        }
    }
    mtus
}

#[cfg(test)]
mod netplan_tests {
    use super::netplan_mtus;

    #[test]
    fn reads_each_interfaces_mtu_and_defaults_to_1500() {
        let text = "network:\n  version: 2\n  ethernets:\n    a:\n      mtu: 9000 # jumbo\n      addresses: [1.2.3.4/24]\n    b:\n      dhcp4: true\n  vlans:\n    c:\n      mtu: 1\n";
        assert_eq!(netplan_mtus(text), vec![("a".to_string(), 9000), ("b".to_string(), 1500)]);
        assert!(netplan_mtus("\u{0}:::\n  mtu: x\nethernets:\nmtu: 5").is_empty());
    }
}
